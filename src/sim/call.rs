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
//! the world's `respond` to the workload. Client policies (retries, hedging, breakers;
//! [`policy`](super::policy)) plug in here: a call made through a policy is a
//! policy call whose attempts are calls with `Caller::Policy`; when an attempt
//! ends, `call_resolved` hands it to the policy, which sends another or resolves
//! the call for its own caller (`call_resolved_outer`). A workload with a
//! `call_policy` makes its requests this way too (`Caller::Client`): each attempt
//! is a request at the service carrying the client's route and access.
//!
//! Here is the call slab and each step's change to a call's record ([`Calls`]),
//! with a call's own timers (its timeout, its arrival at a service), set and
//! cancelled through the [`Timers`] the world lends for the step; the world
//! checks the target, gives the notes and routes the answer (`world/call.rs`).

use super::context::Timers;
use super::vocab::{CallId, Caller, Event, ReqId};
use crate::engine::{EventKey, Ticks};
use crate::model::{DependencyId, ServiceId, Target};
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

    #[inline]
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

/// A call that is over for its caller, or whose work ended with no caller
/// waiting ([`Calls::finish`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finished {
    pub(in crate::sim) caller: Caller,
    pub(in crate::sim) target: Target,
    /// Its caller still waited for it.
    pub(in crate::sim) waiting: bool,
    /// When its caller gave up on it (if it did).
    pub(in crate::sim) gave_up: Ticks,
}

/// A call's arrival at the service it targets ([`Calls::arrive`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arrival {
    /// It was given up on its way: its slot is free, nothing arrives.
    GivenUp,
    /// It arrives at `service`, from `caller`, with its deadline.
    At {
        service: ServiceId,
        caller: Caller,
        deadline: Option<Ticks>,
    },
    /// Not a call to a service.
    Nothing,
}

/// What giving up a call means below it ([`Calls::give_up`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum GiveUp {
    /// A dependency's work: it stops with `cancel` (the call's slot is then
    /// free), runs on without.
    Dependency { dep: DependencyId, cancel: bool },
    /// A call on its way to a service, by its `CallArrive` event: the event
    /// is cancelled; its slot is to be freed.
    OnTheWay,
    /// A call on its way without a key: its arrival still comes and frees the
    /// slot.
    Arriving,
    /// The request it became: its caller is gone (with `cancel`); the slot
    /// is free.
    Request { req: ReqId, cancel: bool },
    /// Nothing below it: the slot is free.
    Nothing,
}

/// A call's life as the call slab keeps it. The world carries out what each
/// step says (`world/call.rs`).
impl Calls {
    /// Opens a call of `caller` to `target` (with `cancel`, ending at
    /// `deadline`): its id.
    #[inline(always)]
    pub(in crate::sim) fn open(
        &mut self,
        caller: Caller,
        target: Target,
        cancel: bool,
        deadline: Option<Ticks>,
    ) -> CallId {
        self.take(CallRun {
            caller,
            target,
            waiting: true,
            cancel,
            timeout_key: None,
            gave_up: Ticks::ZERO,
            deadline,
            below: Below::Nothing,
        })
    }

    /// `call` times out at `deadline` unless it is over before.
    #[inline(always)]
    pub(in crate::sim) fn set_timeout(&mut self, t: &mut Timers, call: CallId, deadline: Ticks) {
        let key = t.deadline(deadline, Event::CallTimeout(call));
        self.slab[call as usize].timeout_key = Some(key);
    }

    /// Whether a call into a service keeps a key to its `CallArrive`.
    #[inline(always)]
    pub(in crate::sim) fn keyed_arrivals(&self) -> bool {
        self.keyed_arrivals
    }

    /// `call` is on its way to its service: it arrives by an event now,
    /// whose key it keeps (giving the call up on its way cancels it).
    #[inline(always)]
    pub(in crate::sim) fn on_the_way(&mut self, t: &mut Timers, call: CallId) {
        let key = t.at(t.now(), Event::CallArrive(call));
        self.slab[call as usize].below = Below::OnTheWay(key);
    }

    /// `call` is on its way to its service without a key: its arrival waits
    /// with the sequence number `seq` the queue gave it.
    #[inline(always)]
    pub(in crate::sim) fn arriving(&mut self, call: CallId, seq: u64) {
        self.arriving.push_back((seq, call));
        self.slab[call as usize].below = Below::Arriving;
    }

    /// The oldest arrival waiting without a key: its sequence number and call.
    #[inline(always)]
    pub(in crate::sim) fn next_arrival(&self) -> Option<(u64, CallId)> {
        self.arriving.front().copied()
    }

    /// The oldest arrival waiting without a key is delivered now.
    #[inline(always)]
    pub(in crate::sim) fn arrival_delivered(&mut self) {
        self.arriving.pop_front();
    }

    /// Every arrival waiting without a key, oldest first, lent out (give the
    /// deque back, emptied, with [`Calls::arrivals_back`]: it keeps its
    /// memory for the next).
    pub(in crate::sim) fn lend_arrivals(&mut self) -> VecDeque<(u64, CallId)> {
        std::mem::take(&mut self.arriving)
    }

    /// The deque [`Calls::lend_arrivals`] lent, back and empty.
    pub(in crate::sim) fn arrivals_back(&mut self, arriving: VecDeque<(u64, CallId)>) {
        debug_assert!(arriving.is_empty());
        self.arriving = arriving;
    }

    /// `call` reaches the service it targets.
    #[inline(always)]
    pub(in crate::sim) fn arrive(&mut self, call: CallId) -> Arrival {
        let c = &mut self.slab[call as usize];
        if matches!(
            std::mem::replace(&mut c.below, Below::Nothing),
            Below::GivenUp
        ) {
            // given up on its way: nothing reaches the service
            self.free.push(call);
            return Arrival::GivenUp;
        }
        let Target::Service(service) = c.target else {
            return Arrival::Nothing;
        };
        Arrival::At {
            service,
            caller: c.caller,
            deadline: c.deadline,
        }
    }

    /// `call` became the request `req` at its service.
    #[inline(always)]
    pub(in crate::sim) fn became(&mut self, call: CallId, req: ReqId) {
        self.slab[call as usize].below = Below::Request(req);
    }

    /// `call` is over for caller and callee alike: its record, its timeout
    /// cancelled, and its slot free.
    #[inline(always)]
    pub(in crate::sim) fn finish(&mut self, t: &mut Timers, call: CallId) -> Finished {
        let c = self.slab[call as usize];
        self.free.push(call);
        t.cancel(c.timeout_key);
        Finished {
            caller: c.caller,
            target: c.target,
            waiting: c.waiting,
            gave_up: c.gave_up,
        }
    }

    /// `call`'s timeout fired: its caller and target.
    pub(in crate::sim) fn timed_out(&mut self, call: CallId) -> (Caller, Target) {
        let c = &mut self.slab[call as usize];
        c.timeout_key = None;
        (c.caller, c.target)
    }

    /// The caller stops waiting for `call`; its work below stops with
    /// `cancel` (None: the call's own `cancel`). Its timeout is cancelled.
    pub(in crate::sim) fn stop_waiting(
        &mut self,
        t: &mut Timers,
        call: CallId,
        cancel: Option<bool>,
    ) {
        let c = &mut self.slab[call as usize];
        t.cancel(c.timeout_key.take());
        if let Some(cancel) = cancel {
            c.cancel = cancel;
        }
    }

    /// The caller gave up on `call` at `now`: whether its work below stops.
    pub(in crate::sim) fn give_up(&mut self, call: CallId, now: Ticks) -> bool {
        let c = &mut self.slab[call as usize];
        c.waiting = false;
        c.gave_up = now;
        c.cancel
    }

    /// What giving up `call` means below it (after [`Calls::give_up`]); a
    /// call on its way has its arrival cancelled.
    pub(in crate::sim) fn below_given_up(&mut self, t: &mut Timers, call: CallId) -> GiveUp {
        let c = &mut self.slab[call as usize];
        let cancel = c.cancel;
        match c.target {
            Target::Dependency(dep) => GiveUp::Dependency { dep, cancel },
            Target::Service(_) => match std::mem::replace(&mut c.below, Below::Nothing) {
                Below::OnTheWay(key) => {
                    t.cancel(Some(key));
                    GiveUp::OnTheWay
                }
                Below::Arriving | Below::GivenUp => {
                    debug_assert!(
                        false,
                        "a call given up on its way in a model without hedges or cancellation"
                    );
                    c.below = Below::GivenUp;
                    GiveUp::Arriving
                }
                Below::Request(req) => GiveUp::Request { req, cancel },
                Below::Nothing => GiveUp::Nothing,
            },
        }
    }

    /// `call`'s slot is free.
    #[inline(always)]
    pub(in crate::sim) fn release(&mut self, call: CallId) {
        self.free.push(call);
    }

    /// The caller that made `call`.
    pub(in crate::sim) fn caller_of(&self, call: CallId) -> Caller {
        self.slab[call as usize].caller
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
