//! One call from a caller to a callee: the abstraction every hop between actors
//! uses. A caller (a plan's branch, in a plan handler or a server) calls a target
//! (a dependency, or a service through its middleware and handler) with a cap on
//! its time; the call ends once for the caller, answered or failed (no time left,
//! a failure below, or the caller's timeout). When the caller gives up, the
//! callee's work is cancelled (`cancel`) or runs on, and what it does after the
//! give-up is counted as wasted work (at a dependency) or late work (at a server).
//!
//! A call into a service becomes a request at that service (see
//! [`request`](super::request)): it carries the caller's client and member, the
//! callee's first route, `access = "direct"`, and the call's deadline. It reaches
//! the service one event later at the same instant (`CallArrive`), so that an
//! answer given at once (a 429, a 503) never re-enters the caller while it is still
//! making the call. Cancelling such a call cancels the request below it and,
//! recursively, every call it still has open, whatever the callees' own
//! `cancellation` (a cancelled request context, as in gRPC).
//!
//! A client's request to a service is the same hop without a call record: the
//! request itself is the attempt, and its answer returns through
//! `World::respond` to the workload. Client policies (retries, hedging, breakers;
//! [`policy`](super::policy)) plug in here: a call made through a policy is a
//! policy call whose attempts are calls with `Caller::Policy`; when an attempt
//! ends, `call_resolved` hands it to the policy, which sends another or resolves
//! the call for its own caller (`call_resolved_outer`). A workload with a
//! `call_policy` makes its requests this way too (`Caller::Client`): each attempt
//! is a request at the service carrying the client's route and access.

use super::fast_paths;
use super::notes::Note;
use super::vocab::{CallId, Caller, Event, Outcome, POLICY_CALL, ReqId, World};
use crate::engine::{EventKey, Lane, Ticks};
use crate::model::Target;
use std::collections::VecDeque;

/// One open call.
#[derive(Debug, Clone, Copy)]
struct CallRun {
    caller: Caller,
    target: Target,
    /// The caller still waits for the answer.
    waiting: bool,
    /// The callee's work stops when the caller gives up.
    cancel: bool,
    timeout_key: Option<EventKey>,
    gave_up: Ticks,
    /// The call's absolute deadline (None: no cap).
    deadline: Option<Ticks>,
    /// A call to a service: on its way, then the request it became.
    below: Below,
}

/// Where a call to a service is below its caller (the two are never live at
/// once, so one field holds either).
#[derive(Debug, Clone, Copy)]
enum Below {
    /// A call to a dependency, one that never reached its service, or one whose
    /// request was let go.
    Nothing,
    /// On its way: its `CallArrive` event.
    OnTheWay(EventKey),
    /// On its way without a key, waiting in `Calls::arriving` (see
    /// `Calls::keyed_arrivals`).
    Arriving,
    /// Given up while on its way without a key: its `CallArrive` still comes,
    /// finds this and frees the call's slot (held until then, so that no
    /// other call takes it first).
    GivenUp,
    /// The request it became at the callee.
    Request(ReqId),
}

/// The call slab: ids are reused once a call is over for caller and callee.
pub(crate) struct Calls {
    slab: Vec<CallRun>,
    free: Vec<CallId>,
    /// Whether a call into a service keeps a key to its `CallArrive`. The
    /// arrival runs at the instant of the call, in the normal lane, so only an
    /// event of that instant's normal lane that ran first can give the call up
    /// before it arrives: a hedge's winner dropping a loser, or a
    /// cancellation from above (`Model::cancels_work`; timeouts run in the
    /// deadline lane, after every normal event of their instant). Without
    /// either, an arrival waits in `arriving` without a key; should a give-up
    /// come first all the same, the arrival still runs and does nothing.
    keyed_arrivals: bool,
    /// Arrivals of this instant made without a key, with the sequence
    /// numbers the queue gave them, oldest first: the run loop runs each
    /// itself when nothing in the queue comes first (`World::arrival_due`),
    /// as the queue would have, without the queue's round trip.
    arriving: VecDeque<(u64, CallId)>,
}

impl Calls {
    pub fn new(model: &crate::model::Model) -> Calls {
        Calls {
            slab: Vec::new(),
            free: Vec::new(),
            keyed_arrivals: model.cancels_work()
                || model.policies.iter().any(|p| p.hedge.is_some()),
            arriving: VecDeque::new(),
        }
    }

    /// Entries in use (requests or calls not yet released).
    #[inline]
    pub fn held(&self) -> u64 {
        (self.slab.len() - self.free.len()) as u64
    }

    /// Of the calls held, how many their caller still waits for (the rest were
    /// given up on, and a dependency or server still holds them). Walks the
    /// slab: for an error message only.
    #[cold]
    pub fn awaited(&self) -> u64 {
        let mut free = vec![false; self.slab.len()];
        for &id in &self.free {
            free[id as usize] = true;
        }
        self.slab
            .iter()
            .zip(free)
            .filter(|(c, free)| !free && c.waiting)
            .count() as u64
    }

    /// Room for `more` calls beyond those held, made now (see
    /// `World::reserve_ahead`).
    pub fn reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.slab.try_reserve(more)?;
        self.free.try_reserve(more)?;
        self.arriving.try_reserve(more)
    }

    fn take(&mut self, call: CallRun) -> CallId {
        match self.free.pop() {
            Some(id) => {
                self.slab[id as usize] = call;
                id
            }
            None => {
                self.slab.push(call);
                (self.slab.len() - 1) as CallId
            }
        }
    }
}

impl World<'_> {
    /// `caller` calls `target` and waits at most `cap` (None: no cap). A cap of
    /// zero fails the call at once without reaching the target (None); otherwise
    /// the call is open until it is resolved through `call_resolved`.
    #[inline(always)]
    pub(super) fn call(
        &mut self,
        caller: Caller,
        target: Target,
        cap: Option<Ticks>,
        cancel: bool,
    ) -> Option<CallId> {
        // the time series' part: a dependency's arrival, and the site of a
        // call without a policy (a policy's are counted by its state)
        let noted = match target {
            Target::Dependency(_) => true,
            Target::Service(_) => matches!(caller, Caller::Branch { .. }),
        };
        if noted && self.books_slow_path() {
            self.call_noted(caller, target);
        }
        if let Target::Dependency(dep) = target {
            self.note(Note::CallMade { dep });
            // a `down` dependency (or the replica picked for the call) fails
            // every call at once
            if cap == Some(Ticks::ZERO) || (!self.plain() && self.dependency_refuses(caller, dep)) {
                if cap == Some(Ticks::ZERO) && !self.plain() {
                    self.dependency_no_time(dep);
                }
                self.dependency_call_failed(caller, dep);
                self.note(Note::FailedAtOnce {
                    caller,
                    target,
                    no_time: cap == Some(Ticks::ZERO),
                });
                return None;
            }
        } else if cap == Some(Ticks::ZERO) {
            self.note(Note::FailedAtOnce {
                caller,
                target,
                no_time: true,
            });
            return None;
        }
        let deadline = cap.map(|c| self.now() + c);
        let id = self.calls.take(CallRun {
            caller,
            target,
            waiting: true,
            cancel,
            timeout_key: None,
            gave_up: Ticks::ZERO,
            deadline,
            below: Below::Nothing,
        });
        self.note(Note::CallOpened {
            call: id,
            caller,
            target,
        });
        match target {
            Target::Dependency(dep) => {
                // A timer that cannot fire is not scheduled: a completion at or
                // before the deadline runs first (deadlines run last in their tick)
                // and would cancel it. Skipping it changes no event's order.
                // (A hedge that keeps its losers may drop an attempt without
                // cancelling it: its completion must stay scheduled.)
                let cancelled_at = if cancel && !self.keeps_losers(caller) && fast_paths::on() {
                    deadline
                } else {
                    None
                };
                let done = self.dependency_request(dep, id, cancelled_at);
                if let Some(deadline) = deadline
                    && (done.is_none_or(|t| t > deadline) || !fast_paths::on())
                {
                    let key = self.schedule(deadline, Lane::Deadline, Event::CallTimeout(id));
                    self.calls.slab[id as usize].timeout_key = Some(key);
                }
            }
            Target::Service(_) => {
                let below = if self.calls.keyed_arrivals {
                    Below::OnTheWay(self.schedule(self.now(), Lane::Normal, Event::CallArrive(id)))
                } else {
                    let seq = self.take_seq();
                    self.calls.arriving.push_back((seq, id));
                    Below::Arriving
                };
                let c = &mut self.calls.slab[id as usize];
                c.below = below;
                if let Some(deadline) = deadline {
                    let key = self.schedule(deadline, Lane::Deadline, Event::CallTimeout(id));
                    self.calls.slab[id as usize].timeout_key = Some(key);
                }
            }
        }
        Some(id)
    }

    /// A call from `caller` to `target` is made now, on the books' slow path
    /// (a warm-up or a time series): a dependency's row counts its arrival,
    /// and a plan's call without a policy its site's first try and attempt.
    /// (With policies every call is a policy call, counted by its policy
    /// state: its attempts, and a call with no time left at all, which comes
    /// here with its own caller.)
    #[cold]
    #[inline(never)]
    fn call_noted(&mut self, caller: Caller, target: Target) {
        if let Target::Dependency(dep) = target {
            self.note(Note::AtDependency { dep });
        }
        if let Caller::Branch { req, .. } = caller
            && self.model().policies.is_empty()
        {
            let service = self.requests[req].service;
            self.note(Note::CallAtSite { service, target });
        }
    }

    /// The call whose arrival is due now, before anything in the queue,
    /// counted as a delivered event; None when no arrival waits or an event
    /// of this instant comes first (every waiting arrival then goes into the
    /// queue, each where a post would have put it).
    #[inline]
    pub(super) fn arrival_due(&mut self) -> Option<CallId> {
        let &(seq, call) = self.calls.arriving.front()?;
        if self.first_before(seq) {
            // (lent out while the queue takes them, then put back empty: the
            // deque keeps its memory for the next)
            let mut arriving = std::mem::take(&mut self.calls.arriving);
            for (seq, call) in arriving.drain(..) {
                self.post_taken(seq, Event::CallArrive(call));
            }
            self.calls.arriving = arriving;
            return None;
        }
        self.calls.arriving.pop_front();
        self.delivered_by_owner();
        Some(call)
    }

    /// A call reaches the service it targets: it becomes a request there.
    pub(super) fn call_arrive(&mut self, call: CallId) {
        let c = &mut self.calls.slab[call as usize];
        if matches!(
            std::mem::replace(&mut c.below, Below::Nothing),
            Below::GivenUp
        ) {
            // given up on its way: nothing reaches the service
            self.calls.free.push(call);
            return;
        }
        let Target::Service(service) = c.target else {
            return;
        };
        let (caller, deadline) = (c.caller, c.deadline);
        match self.outer(caller) {
            Caller::Client { req: from } => {
                // a client's attempt: its request, as the client would send it
                let req = self.send_attempt(call, from, deadline);
                self.note(Note::CallRequestSent { req, call, service });
                self.calls.slab[call as usize].below = Below::Request(req);
                self.attempt_receive(req);
            }
            Caller::Branch { req: from, .. } => {
                let req = self.send_call(call, service, from, deadline);
                self.calls.slab[call as usize].below = Below::Request(req);
                self.at_service(req);
            }
            Caller::Policy { .. } => {}
        }
    }

    /// The dependency finished the work of `call` (begun at `work_start`), `ok`
    /// or failed (its `error_rate`, or a fault): the answer goes to its caller, or
    /// is work nobody waited for.
    #[inline]
    pub(super) fn call_answered(&mut self, call: CallId, work_start: Ticks, ok: bool) {
        self.note(Note::CallEnded { call, ok });
        let c = self.calls.slab[call as usize];
        self.calls.free.push(call);
        if c.waiting {
            if let Some(key) = c.timeout_key {
                self.cancel(key);
            }
            if !ok && let Target::Dependency(dep) = c.target {
                self.dependency_call_failed(c.caller, dep);
            }
            let outcome = if ok {
                Outcome::Answered
            } else {
                Outcome::Error
            };
            self.call_resolved(c.caller, call, outcome);
        } else if let Target::Dependency(dep) = c.target {
            let wasted = self.now() - c.gave_up.max(work_start);
            self.note(Note::Wasted { dep, wasted });
        }
    }

    /// The dependency of `call` went down (a fault): the call fails now, or its
    /// work (begun at `work_start`) was wasted. Kept apart from `call_answered`
    /// so that the one hot call site keeps it inlined.
    #[cold]
    #[inline(never)]
    pub(super) fn call_failed_by_fault(&mut self, call: CallId, work_start: Ticks) {
        self.call_answered(call, work_start, false);
    }

    /// The service a call became a request at answers it with `outcome`.
    pub(super) fn call_answered_by_service(&mut self, call: CallId, outcome: Outcome) {
        self.note(Note::CallAnswered { call, outcome });
        let c = self.calls.slab[call as usize];
        self.calls.free.push(call);
        if let Some(key) = c.timeout_key {
            self.cancel(key);
        }
        self.call_resolved(c.caller, call, outcome);
    }

    /// A call of `caller` to `dep` failed. An attempt of a policy call is not
    /// counted here: the policy call counts once, when it fails after its last
    /// attempt (`failed_<dependency>` is one per call; attempts are in `calls`).
    #[inline]
    fn dependency_call_failed(&mut self, caller: Caller, dep: crate::model::DependencyId) {
        if !matches!(caller, Caller::Policy { .. }) {
            self.note(Note::CallFailed { dep });
        }
    }

    /// The call's timeout: its caller gives up on it.
    pub(super) fn call_timeout(&mut self, call: CallId) {
        let now = self.now();
        self.note(Note::CallTimedOut { call });
        let c = &mut self.calls.slab[call as usize];
        c.timeout_key = None;
        let caller = c.caller;
        if let Target::Dependency(dep) = c.target {
            self.dependency_call_failed(caller, dep);
        }
        self.give_up_call(call, now);
        self.call_resolved(caller, call, Outcome::TimedOut);
    }

    /// The caller gives up on an open call (its own caller went away): no answer
    /// will be delivered. `force` cancels the callee's work whatever the call's
    /// own `cancel` (a cancellation travelling down the tree).
    pub(super) fn call_abandon(&mut self, call: CallId, force: bool) {
        if call & POLICY_CALL != 0 {
            return self.policy_abandon(call, force);
        }
        let c = &mut self.calls.slab[call as usize];
        let timeout = c.timeout_key.take();
        if force {
            c.cancel = true;
        }
        if let Some(key) = timeout {
            self.cancel(key);
        }
        self.give_up_call(call, self.now());
    }

    /// A policy stops waiting for one of its attempts (a hedge loser, or its
    /// own caller went away): the callee's work stops with `cancel`, runs on
    /// (as waste) without it, whatever the call's own `cancel`.
    pub(super) fn call_drop(&mut self, call: CallId, cancel: bool) {
        let c = &mut self.calls.slab[call as usize];
        let timeout = c.timeout_key.take();
        c.cancel = cancel;
        if let Some(key) = timeout {
            self.cancel(key);
        }
        self.give_up_call(call, self.now());
    }

    /// The caller stops waiting for `call` at `now`: the callee's work is
    /// cancelled (with `cancel`) or runs on.
    fn give_up_call(&mut self, call: CallId, now: Ticks) {
        let c = &mut self.calls.slab[call as usize];
        c.waiting = false;
        c.gave_up = now;
        let (target, cancel) = (c.target, c.cancel);
        self.note(Note::CallGivenUp { call, cancel });
        match target {
            Target::Dependency(dep) => {
                if cancel {
                    self.dependency_cancel(dep, call);
                    self.calls.free.push(call);
                }
            }
            Target::Service(_) => {
                let below = &mut self.calls.slab[call as usize].below;
                match std::mem::replace(below, Below::Nothing) {
                    // still on its way: it never reaches the service
                    Below::OnTheWay(key) => {
                        self.cancel(key);
                    }
                    // arriving without a key (given up before, or not): its
                    // arrival still comes and frees the slot
                    Below::Arriving | Below::GivenUp => {
                        debug_assert!(
                            false,
                            "a call given up on its way in a model without hedges or cancellation"
                        );
                        self.calls.slab[call as usize].below = Below::GivenUp;
                        return;
                    }
                    Below::Request(req) => self.caller_gone(req, cancel),
                    Below::Nothing => {}
                }
                self.calls.free.push(call);
            }
        }
    }

    /// Call `call` is over for its caller with `outcome` (answered, or failed).
    #[inline(always)]
    fn call_resolved(&mut self, caller: Caller, call: CallId, outcome: Outcome) {
        match caller {
            Caller::Branch { req, branch } => {
                self.plan_call_resolved(req, branch as usize, outcome == Outcome::Answered)
            }
            Caller::Policy { call: pc } => self.policy_attempt_ended(pc, call, outcome),
            Caller::Client { req } => self.client_call_over(req, outcome),
        }
    }

    /// The caller on whose behalf `call` was made (a policy call's own
    /// caller, for an attempt).
    pub(super) fn call_owner(&self, call: CallId) -> Caller {
        self.outer(self.calls.slab[call as usize].caller)
    }

    /// A policy call is over for its own caller (a branch or a client).
    pub(super) fn call_resolved_outer(&mut self, caller: Caller, outcome: Outcome) {
        match caller {
            Caller::Branch { req, branch } => {
                self.plan_call_resolved(req, branch as usize, outcome == Outcome::Answered)
            }
            Caller::Client { req } => self.client_call_over(req, outcome),
            Caller::Policy { .. } => unreachable!("a policy call's caller is never a policy"),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    /// A call's arrival runs where its event would: after every event of its
    /// instant that was scheduled before the call was made. Two workloads
    /// send at the same instants, `via` first (declared first); its request
    /// calls `x` (one slot, no queue), the other's reaches `x` directly. The
    /// direct request was due before the call was made, so it takes the slot
    /// and the call finds none.
    #[test]
    fn a_call_arrives_after_the_events_of_its_instant_scheduled_before_it() {
        let text = r#"
[scenario]
name = "ties"
[services.front]
routes = ["/front"]
handler = { type = "plan", budget = 100, branches = [{ name = "b", calls = [{ to = "x" }] }] }
[services.x]
routes = ["/x"]
handler = { type = "server", slots = 1, queue = 0, service = { constant = 5 } }
[workloads.via]
type = "open"
rate_rps = 10
requests = 20
arrivals = "uniform"
route = "/front"
[workloads.direct]
type = "open"
rate_rps = 10
requests = 20
arrivals = "uniform"
route = "/x"
"#;
        let s = load_str(text, Path::new("ties.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let r = crate::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"));
        let answered: Vec<u64> = r.workloads.iter().map(|w| w.outcomes.answered).collect();
        assert_eq!(answered, [0, 20], "via, direct");
    }
}
