//! One call from a caller to a callee: the abstraction every hop between actors
//! uses. A caller (today a plan's branch) calls a target (today a dependency)
//! with a cap on its time; the call ends once for the caller, answered or failed
//! (no time left, or the caller's timeout). When the caller gives up, the callee's
//! work is cancelled (`cancel`) or runs on, and what it does after the give-up is
//! counted as wasted work.
//!
//! A client's request to a service is the same hop without a call record: the
//! request itself is the attempt, and its answer returns through
//! `World::respond` to the workload. Calls from a service to another service, and
//! client policies (retries, hedging, breakers), plug in here: `World::call` is
//! the one place a call begins and `call_answered` / `call_timeout` the places an
//! attempt ends, so a policy decides there whether to try again or resolve the
//! call for its caller, while callers and callees stay as they are.

use super::{CallId, Event, ReqId, World};
use crate::engine::{EventKey, Lane, Ticks};
use crate::model::DependencyId;

/// Who waits for a call's answer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Caller {
    /// Branch `branch` of request `req`'s plan.
    Branch { req: ReqId, branch: u32 },
}

/// Who answers a call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Dependency(DependencyId),
}

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
}

/// The call slab: ids are reused once a call is over for caller and callee.
#[derive(Default)]
pub(crate) struct Calls {
    slab: Vec<CallRun>,
    free: Vec<CallId>,
}

impl Calls {
    /// Entries in use (requests or calls not yet released).
    #[inline]
    pub fn held(&self) -> u64 {
        (self.slab.len() - self.free.len()) as u64
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
    /// `caller` calls `target` and waits at most `cap`. A cap of zero fails the
    /// call at once without reaching the target (None); otherwise the call is
    /// open until it is resolved through `call_resolved`.
    pub(super) fn call(
        &mut self,
        caller: Caller,
        target: Target,
        cap: Ticks,
        cancel: bool,
    ) -> Option<CallId> {
        let Target::Dependency(dep) = target;
        self.obs.call_made(dep);
        if cap == Ticks::ZERO {
            self.obs.call_failed(dep);
            return None;
        }
        let id = self.calls.take(CallRun {
            caller,
            target,
            waiting: true,
            cancel,
            timeout_key: None,
            gave_up: Ticks::ZERO,
        });
        let deadline = self.now + cap;
        // A timer that cannot fire is not scheduled: a completion at or before
        // the deadline runs first (deadlines run last in their tick) and would
        // cancel it. Skipping it changes no event's order, only the cost.
        let cancelled_at = cancel.then_some(deadline);
        let done = self.dependency_request(dep, id, cancelled_at);
        if done.is_none_or(|t| t > deadline) {
            let key = self.schedule(deadline, Lane::Deadline, Event::CallTimeout(id));
            self.calls.slab[id as usize].timeout_key = Some(key);
        }
        Some(id)
    }

    /// The target finished the work of `call` (begun at `work_start`): the answer
    /// goes to its caller, or is work nobody waited for.
    pub(super) fn call_answered(&mut self, call: CallId, work_start: Ticks) {
        let c = self.calls.slab[call as usize];
        self.calls.free.push(call);
        let Target::Dependency(dep) = c.target;
        if c.waiting {
            if let Some(key) = c.timeout_key {
                self.queue.cancel(key);
            }
            self.call_resolved(c.caller, true);
        } else {
            self.obs.wasted(dep, self.now - c.gave_up.max(work_start));
        }
    }

    /// The call's timeout: its caller gives up on it.
    pub(super) fn call_timeout(&mut self, call: CallId) {
        let now = self.now;
        let c = &mut self.calls.slab[call as usize];
        c.timeout_key = None;
        c.waiting = false;
        c.gave_up = now;
        let (caller, Target::Dependency(dep), cancel) = (c.caller, c.target, c.cancel);
        self.obs.call_failed(dep);
        if cancel {
            self.dependency_cancel(dep, call);
            self.calls.free.push(call);
        }
        self.call_resolved(caller, false);
    }

    /// The caller gives up on an open call (its own caller went away): no answer
    /// will be delivered.
    pub(super) fn call_abandon(&mut self, call: CallId) {
        let now = self.now;
        let c = &mut self.calls.slab[call as usize];
        c.waiting = false;
        c.gave_up = now;
        let (Target::Dependency(dep), cancel) = (c.target, c.cancel);
        if let Some(key) = c.timeout_key.take() {
            self.queue.cancel(key);
        }
        if cancel {
            self.dependency_cancel(dep, call);
            self.calls.free.push(call);
        }
    }

    /// The call is over for its caller: `ok` or failed.
    #[inline(always)]
    fn call_resolved(&mut self, caller: Caller, ok: bool) {
        match caller {
            Caller::Branch { req, branch } => self.plan_call_resolved(req, branch as usize, ok),
        }
    }
}
