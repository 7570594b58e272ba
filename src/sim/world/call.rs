//! A call's life put to the run: the call slab is the world's own, and each
//! step's change to the record is [`Calls`]'s; here the world checks the
//! target (a dependency down, no time left), lends the call its timers (its
//! timeout, its arrival), hands the call to the dependency or the service,
//! gives the notes and routes the answer to the caller's module.

use super::super::call::{Arrival, Finished, GiveUp};
use super::super::context::Timers;
use super::super::fast_paths;
use super::super::notes::Note;
use super::super::vocab::{CallId, Caller, Event, Outcome, POLICY_CALL};
use super::World;
use crate::engine::Ticks;
use crate::model::Target;

impl World<'_> {
    /// `caller` calls `target` and waits at most `cap` (None: no cap). A cap of
    /// zero fails the call at once without reaching the target (None); otherwise
    /// the call is open until it is resolved through `call_resolved`.
    #[inline(always)]
    pub(in crate::sim) fn call(
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
        let id = self.calls.open(caller, target, cancel, deadline);
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
                    let mut t = Timers::new(&mut self.queue, self.now);
                    self.calls.set_timeout(&mut t, id, deadline);
                }
            }
            Target::Service(_) => {
                if self.calls.keyed_arrivals() {
                    let mut t = Timers::new(&mut self.queue, self.now);
                    self.calls.on_the_way(&mut t, id);
                } else {
                    let seq = self.take_seq();
                    self.calls.arriving(id, seq);
                }
                if let Some(deadline) = deadline {
                    let mut t = Timers::new(&mut self.queue, self.now);
                    self.calls.set_timeout(&mut t, id, deadline);
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
        let (seq, call) = self.calls.next_arrival()?;
        if self.first_before(seq) {
            let mut arriving = self.calls.lend_arrivals();
            for (seq, call) in arriving.drain(..) {
                self.post_taken(seq, Event::CallArrive(call));
            }
            self.calls.arrivals_back(arriving);
            return None;
        }
        self.calls.arrival_delivered();
        self.delivered_by_owner();
        Some(call)
    }

    /// A call reaches the service it targets: it becomes a request there.
    pub(super) fn call_arrive(&mut self, call: CallId) {
        let Arrival::At {
            service,
            caller,
            deadline,
        } = self.calls.arrive(call)
        else {
            return;
        };
        match self.outer(caller) {
            Caller::Client { req: from } => {
                // a client's attempt: its request, as the client would send it
                let req = self.send_attempt(call, from, deadline);
                self.note(Note::CallRequestSent { req, call, service });
                self.calls.became(call, req);
                self.attempt_receive(req);
            }
            Caller::Branch { req: from, .. } => {
                let req = self.send_call(call, service, from, deadline);
                self.calls.became(call, req);
                self.at_service(req);
            }
            Caller::Policy { .. } => {}
        }
    }

    /// The dependency finished the work of `call` (begun at `work_start`), `ok`
    /// or failed (its `error_rate`, or a fault): the answer goes to its caller, or
    /// is work nobody waited for.
    #[inline]
    pub(in crate::sim) fn call_answered(&mut self, call: CallId, work_start: Ticks, ok: bool) {
        self.note(Note::CallEnded { call, ok });
        let c: Finished = self
            .calls
            .finish(&mut Timers::new(&mut self.queue, self.now), call);
        if c.waiting {
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
    pub(in crate::sim) fn call_failed_by_fault(&mut self, call: CallId, work_start: Ticks) {
        self.call_answered(call, work_start, false);
    }

    /// The service a call became a request at answers it with `outcome`.
    pub(super) fn call_answered_by_service(&mut self, call: CallId, outcome: Outcome) {
        self.note(Note::CallAnswered { call, outcome });
        let c = self
            .calls
            .finish(&mut Timers::new(&mut self.queue, self.now), call);
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
        let (caller, target) = self.calls.timed_out(call);
        if let Target::Dependency(dep) = target {
            self.dependency_call_failed(caller, dep);
        }
        self.give_up_call(call, now);
        self.call_resolved(caller, call, Outcome::TimedOut);
    }

    /// The caller gives up on an open call (its own caller went away): no answer
    /// will be delivered. `force` cancels the callee's work whatever the call's
    /// own `cancel` (a cancellation travelling down the tree).
    pub(in crate::sim) fn call_abandon(&mut self, call: CallId, force: bool) {
        if call & POLICY_CALL != 0 {
            return self.policy_abandon(call, force);
        }
        let mut t = Timers::new(&mut self.queue, self.now);
        self.calls.stop_waiting(&mut t, call, force.then_some(true));
        self.give_up_call(call, self.now());
    }

    /// A policy stops waiting for one of its attempts (a hedge loser, or its
    /// own caller went away): the callee's work stops with `cancel`, runs on
    /// (as waste) without it, whatever the call's own `cancel`.
    pub(super) fn call_drop(&mut self, call: CallId, cancel: bool) {
        let mut t = Timers::new(&mut self.queue, self.now);
        self.calls.stop_waiting(&mut t, call, Some(cancel));
        self.give_up_call(call, self.now());
    }

    /// The caller stops waiting for `call` at `now`: the callee's work is
    /// cancelled (with `cancel`) or runs on.
    fn give_up_call(&mut self, call: CallId, now: Ticks) {
        let cancel = self.calls.give_up(call, now);
        self.note(Note::CallGivenUp { call, cancel });
        match self
            .calls
            .below_given_up(&mut Timers::new(&mut self.queue, now), call)
        {
            GiveUp::Dependency { dep, cancel } => {
                if cancel {
                    self.dependency_cancel(dep, call);
                    self.calls.release(call);
                }
            }
            // still on its way: it never reaches the service
            GiveUp::OnTheWay => self.calls.release(call),
            // arriving without a key: its arrival still comes and frees the slot
            GiveUp::Arriving => {}
            GiveUp::Request { req, cancel } => {
                self.caller_gone(req, cancel);
                self.calls.release(call);
            }
            GiveUp::Nothing => self.calls.release(call),
        }
    }

    /// Call `call` is over for its caller with `outcome` (answered, or failed).
    #[inline(always)]
    fn call_resolved(&mut self, caller: Caller, call: CallId, outcome: Outcome) {
        match caller {
            Caller::Branch { req, branch } => {
                self.plan_call_resolved(req, branch as usize, outcome)
            }
            Caller::Policy { call: pc } => self.policy_attempt_ended(pc, call, outcome),
            Caller::Client { req } => self.client_call_over(req, outcome),
        }
    }

    /// The caller on whose behalf `call` was made (a policy call's own
    /// caller, for an attempt).
    pub(super) fn call_owner(&self, call: CallId) -> Caller {
        self.outer(self.calls.caller_of(call))
    }

    /// A policy call is over for its own caller (a branch or a client).
    pub(super) fn call_resolved_outer(&mut self, caller: Caller, outcome: Outcome) {
        match caller {
            Caller::Branch { req, branch } => {
                self.plan_call_resolved(req, branch as usize, outcome)
            }
            Caller::Client { req } => self.client_call_over(req, outcome),
            Caller::Policy { .. } => unreachable!("a policy call's caller is never a policy"),
        }
    }
}
