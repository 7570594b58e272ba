//! Lifecycle notes: the one way an actor tells the rest of the run that a step
//! of a request's or a call's life happened.
//!
//! An actor does its own work, then calls
//! [`World::note`](super::world::World::note) (`world/fanout.rs`) with a
//! [`Note`], which hands it to every listener that hears that step, in a fixed
//! order. The listeners are the books ([`observe::Observers`](super::observe::Observers):
//! outcome counts, ladder steps, dependencies), the time series (through the
//! books' `series()`), the request tracer (`--trace`, `--spans`:
//! [`trace::Tracer`](super::trace::Tracer)), the limiters' admissions (they hear
//! when a request they let in is done: [`limiter`](super::limiter)) and the
//! client policies' tracer notes. A listener only reads what the note carries
//! and what the world holds at that instant: a note about a request is given
//! before its slot is freed.
//!
//! | note | a step of | the books | the time series | the tracer | the limiters |
//! |---|---|---|---|---|---|
//! | `Sent` | a client's request leaves | sent, in flight | sent per workload, route | `request` span opens | |
//! | `Departed` | a client's request heads for its service (or its policy) | | | | member and pair tallies |
//! | `StepSent` | a ladder request leaves | step's sent | | | |
//! | `CallRequestSent` | a call becomes a request at its service | | | call's request | |
//! | `Responded` | the handler is done with a request | step's processed | | `responded` | admissions done; member outcome |
//! | `Answered` | the client gets its answer | outcome, response, left | ended | | |
//! | `GaveUp` | the client's own timeout | timed out, left | ended | `gave_up` | |
//! | `ClientCallOver` | a client's policy call is over | outcome or timed out, left | ended | `client_call_over` | member outcome (not on a timeout) |
//! | `CallerGone` | a call's caller gave up on its request | | | `caller_gone` | |
//! | `Done` | the answer reaches whoever sent it | step's successful or rejected; workload's books | per workload | | |
//! | `HandlerLeft` | the handler gave a request's work up | | | | admissions done, as timed out |
//! | `Started` | a request takes a server slot after waiting | step's waits | | | |
//! | `Served` | a server slot ends (done, or stopped) | | | `queue`/`service` spans | |
//! | `Unqueued` | a waiter leaves a server queue | step's abandoned | | `queue` span ends | |
//! | `LateWork` | a server ends work nobody waited for | | wasted | | |
//! | `CallMade` | a call to a dependency is made | calls | | | |
//! | `AtDependency` | a call reaches a dependency (slow path) | | arrival | | |
//! | `CallAtSite` | a plan's call without a policy is made (slow path) | | call made at its site | | |
//! | `CallFailed` | a dependency call failed for its caller | failed | | | |
//! | `FailedAtOnce` | a call fails before it opens | | | `call_failed_at_once` | |
//! | `CallOpened` | a call opens | | | `call` span opens | |
//! | `CallEnded` | a dependency answers a call | | | `call_ended` | |
//! | `CallTimedOut` | a call's timeout: its caller gives up | | | `call_ended` | |
//! | `CallAnswered` | the service a call became answers it | | | `call_answered` | |
//! | `CallGivenUp` | the caller stops waiting for a call | | | `call_given_up` | |
//! | `Wasted` | a dependency ends work nobody waited for | wasted | wasted | | |
//! | `WorkStarted` | a dependency starts work on a call | work started | | | |
//! | `WorkEnded` | a dependency stops work on a call | work time | processed | `work` span | |
//! | `DependencyLevels` | a dependency's calls at work and waiting change (slow path) | | levels | | |
//! | `AtReplica` | a replicated dependency's replica is sent a call, ends work, or its levels change (slow path) | | replica row | | |
//! | `AttemptSent` | a client's policy sends a retry or a hedge | | attempt per workload | | |
//! | `PolicyOpened` | a policy call opens | | | `call` span opens | |
//! | `PolicyRefused` | a policy refuses to send a call | | | `policy_refused` | |
//! | `RetryRefused` | a retry budget refuses a retry | | | `retry_refused` | |
//! | `PolicyResolved` | a policy call is over for its caller | | | `policy_resolved` | |
//! | `PolicyEnded` | a policy call is abandoned or cancelled | | | `policy_ended` | |
//!
//! Within a note the listeners hear it in the order of the row (books, time
//! series, tracer, limiters), except where an arm says otherwise.
//!
//! The balancers hear `Responded`, `GaveUp` and `CallerGone` last, when one
//! of the run listens (`peak_ewma`, or a `view = "caller"`: the servers'
//! `listening` flag): the request's pick is over for its caller
//! (`World::balance_over`). With `outlier_detection` they hear whether it
//! failed: an error, shed or dropped answer, or given up on (`GaveUp`,
//! `CallerGone`). With `release = "replica"` a pick given up on stays
//! counted until the replica is done with it: `Responded`, or `HandlerLeft`
//! for work it drops (a waiter leaving its queue, cancelled work). With a replicated dependency, its replicas' books and
//! balancers hear `CallEnded`, `CallTimedOut` and `CallGivenUp` last: the
//! first of them ends a call's pick (`World::dependency_pick_over`).

use super::timeseries::AtReplica;
use super::vocab::{CallId, Caller, Outcome, ReqId};
use crate::engine::Ticks;
use crate::model::{DependencyId, PolicyId, RouteId, ServiceId, Target};

/// One step of a request's or a call's life, with what its listeners need.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Note {
    /// A client's request `req` of the current workload sender leaves now on
    /// `route`, owned by `owner` (None: no service owns it).
    Sent {
        req: ReqId,
        route: RouteId,
        owner: Option<ServiceId>,
    },
    /// A client's request `req` departs for its service, its client timeout
    /// set (or its client's policy call about to open).
    Departed { req: ReqId },
    /// A ladder request of `step` leaves its client.
    StepSent { step: usize },
    /// Call `call` became request `req` at `service`.
    CallRequestSent {
        req: ReqId,
        call: CallId,
        service: ServiceId,
    },
    /// The handler is done with `req` (its client may have gone already).
    Responded { req: ReqId, outcome: Outcome },
    /// The client of a request gets `outcome`, `response` after sending it.
    Answered { outcome: Outcome, response: Ticks },
    /// The client of `req` gave up on it, `waited` after sending it.
    GaveUp { req: ReqId, waited: Ticks },
    /// The client's call `req` through its policy is over with `outcome`,
    /// `in_system` after sending it (a timeout is the client giving up).
    ClientCallOver {
        req: ReqId,
        outcome: Outcome,
        in_system: Ticks,
    },
    /// The caller of call-request `req` gave up on it (with `cancel`: its work
    /// stops).
    CallerGone { req: ReqId, cancel: bool },
    /// The answer (or the client's timeout) reached workload sender `source`
    /// for a request of ladder `step`: `outcome` after `response`, `in_time`
    /// within its deadline.
    Done {
        step: Option<u32>,
        source: u32,
        outcome: Outcome,
        in_time: bool,
        response: Ticks,
    },
    /// The handler no longer holds work for `req` (it left a queue, or its
    /// calls were given up).
    HandlerLeft { req: ReqId },
    /// `req` starts service at a server after waiting `waited` in its queue.
    Started { req: ReqId, waited: Ticks },
    /// A server slot stopped serving `req` (arrived, started): `outcome`, or
    /// None when its work was stopped.
    Served {
        req: ReqId,
        outcome: Option<Outcome>,
        arrived: Ticks,
        started: Ticks,
    },
    /// `req` (arrived at `arrived`) left a server queue unserved.
    Unqueued { req: ReqId, arrived: Ticks },
    /// A server (time series row `row`) ended `worked` of work nobody waited
    /// for.
    LateWork { row: usize, worked: Ticks },
    /// A call to `dep` is made.
    CallMade { dep: DependencyId },
    /// A call reaches `dep` (the time series' part of `CallMade`).
    AtDependency { dep: DependencyId },
    /// A call from `service` to `target` without a policy is made (the time
    /// series' call site).
    CallAtSite { service: ServiceId, target: Target },
    /// A call to `dep` failed for its caller.
    CallFailed { dep: DependencyId },
    /// `caller`'s call to `target` failed before it opened: no time left
    /// (`no_time`), or its dependency is down.
    FailedAtOnce {
        caller: Caller,
        target: Target,
        no_time: bool,
    },
    /// Call `call` of `caller` to `target` opens.
    CallOpened {
        call: CallId,
        caller: Caller,
        target: Target,
    },
    /// The dependency working on call `call` answered it (`ok`, or an error).
    CallEnded { call: CallId, ok: bool },
    /// Call `call` timed out: its caller gives up on it.
    CallTimedOut { call: CallId },
    /// The service call `call` became answers it with `outcome`.
    CallAnswered { call: CallId, outcome: Outcome },
    /// The caller stops waiting for `call` (with `cancel`: its work stops).
    CallGivenUp { call: CallId, cancel: bool },
    /// `dep` finished work nobody waited for: `wasted` of it after the caller
    /// gave up.
    Wasted { dep: DependencyId, wasted: Ticks },
    /// `dep` started work on a call.
    WorkStarted { dep: DependencyId },
    /// `dep` stopped work on `call` (done or cancelled), begun at `start`.
    WorkEnded {
        call: CallId,
        dep: DependencyId,
        start: Ticks,
    },
    /// `dep` has `busy` calls at work and `waiting` in its queue now.
    DependencyLevels {
        dep: DependencyId,
        busy: u64,
        waiting: u64,
    },
    /// Something changed at replica `replica` (0-based) of `dep`, one with
    /// replicas (the time series' replica rows).
    AtReplica {
        dep: DependencyId,
        replica: u32,
        change: AtReplica,
    },
    /// A client of `workload` has its policy send another attempt now.
    AttemptSent { workload: Option<u32> },
    /// Policy call `pc` of `caller` to `target` under `policy` opens.
    PolicyOpened {
        pc: u32,
        caller: Caller,
        target: Target,
        policy: PolicyId,
    },
    /// `caller`'s call to `target` was refused by `policy` (`why`).
    PolicyRefused {
        caller: Caller,
        target: Target,
        policy: PolicyId,
        why: &'static str,
    },
    /// The retry budget refused policy call `pc` a retry.
    RetryRefused { pc: u32 },
    /// Policy call `pc` is over for its caller with `outcome`.
    PolicyResolved { pc: u32, outcome: Outcome },
    /// Policy call `pc` was given up by its caller (with `cancel`: its
    /// attempts' work stopped).
    PolicyEnded { pc: u32, cancel: bool },
}

/// How a pick ended for its caller.
#[derive(Debug, Clone, Copy)]
pub(super) enum Over {
    /// The dependency answered, `ok` or an error.
    Answered {
        ok: bool,
    },
    TimedOut,
    GivenUp,
}
