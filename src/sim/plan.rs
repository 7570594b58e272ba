//! Plan handler: a deadline-budgeted fan-out (the AY10 chain). Branches run in
//! parallel, calls inside a branch in order. Call k may take
//! `min(share_k, R - time already spent in the branch)`; a call with no time left
//! fails at once without reaching its dependency. A call slower than its timeout
//! fails at the timeout; the dependency's work is cancelled (`cancellation = true`)
//! or goes on and is counted as wasted work.

use super::{CallId, Event, Outcome, ReqId, World};
use crate::engine::{EventKey, Lane, Ticks};
use crate::model::{Handler, OnFailure, Plan};

/// Progress of one branch of one request.
#[derive(Debug, Clone, Default)]
pub(crate) struct BranchRun {
    next: usize,
    start: Ticks,
    ok: bool,
    call: Option<CallId>,
}

/// One call from a plan to a dependency.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallRun {
    req: ReqId,
    branch: usize,
    dep: usize,
    /// The caller still waits for the answer.
    caller_waiting: bool,
    timeout_key: Option<EventKey>,
    pub done_key: Option<EventKey>,
    pub work_start: Option<Ticks>,
    gave_up: Ticks,
}

impl<'m> World<'m> {
    fn plan_of(&self, req: ReqId) -> &'m Plan {
        let model: &'m crate::model::Model = self.model;
        match &model.services[self.requests[req as usize].service].handler {
            Handler::Plan(p) => p,
            _ => unreachable!("plan events only reach plan services"),
        }
    }

    pub(super) fn plan_start(&mut self, req: ReqId) {
        let plan = self.plan_of(req);
        let now = self.now;
        let r = &mut self.requests[req as usize];
        r.branches.clear();
        r.branches.resize(
            plan.branches.len(),
            BranchRun {
                next: 0,
                start: now,
                ok: true,
                call: None,
            },
        );
        r.branches_left = plan.branches.len() as u32;
        for b in 0..plan.branches.len() {
            self.call_next(req, b);
        }
    }

    /// Starts the branch's next call, failing at once those that have no time left.
    fn call_next(&mut self, req: ReqId, b: usize) {
        let plan = self.plan_of(req);
        let calls = &plan.branches[b].calls;
        let now = self.now;
        loop {
            let br = &mut self.requests[req as usize].branches[b];
            let Some(call) = calls.get(br.next) else {
                return self.branch_end(req);
            };
            let spent = now - br.start;
            let timeout = call.share.min(plan.budget.saturating_sub(spent));
            self.result.dependencies[call.dependency].calls += 1;
            if timeout == Ticks::ZERO {
                self.result.dependencies[call.dependency].failed += 1;
                br.ok = false;
                br.next = if plan.on_failure == OnFailure::Abort {
                    calls.len()
                } else {
                    br.next + 1
                };
                continue;
            }
            let id = self.new_call(CallRun {
                req,
                branch: b,
                dep: call.dependency,
                caller_waiting: true,
                ..CallRun::default()
            });
            let key = self.schedule(now + timeout, Lane::Deadline, Event::CallTimeout(id));
            self.calls[id as usize].timeout_key = Some(key);
            self.requests[req as usize].branches[b].call = Some(id);
            self.dependency_request(call.dependency, id);
            return;
        }
    }

    fn new_call(&mut self, call: CallRun) -> CallId {
        match self.free_calls.pop() {
            Some(id) => {
                self.calls[id as usize] = call;
                id
            }
            None => {
                self.calls.push(call);
                (self.calls.len() - 1) as CallId
            }
        }
    }

    /// The call is resolved for its caller: move the branch on.
    fn call_resolved(&mut self, req: ReqId, b: usize, ok: bool) {
        let plan = self.plan_of(req);
        let br = &mut self.requests[req as usize].branches[b];
        br.call = None;
        br.ok &= ok;
        br.next = if !ok && plan.on_failure == OnFailure::Abort {
            plan.branches[b].calls.len()
        } else {
            br.next + 1
        };
        self.call_next(req, b);
    }

    pub(super) fn dependency_done(&mut self, call: CallId) {
        let now = self.now;
        let c = self.calls[call as usize].clone();
        let work_start = c.work_start.unwrap_or(now);
        self.dependency_end(c.dep, call);
        self.free_calls.push(call);
        if c.caller_waiting {
            if let Some(key) = c.timeout_key {
                self.queue.cancel(key);
            }
            self.call_resolved(c.req, c.branch, true);
        } else {
            // Work nobody waits for any more.
            let wasted = now - c.gave_up.max(work_start);
            self.result.dependencies[c.dep].wasted_ms += wasted.as_ms();
        }
    }

    pub(super) fn call_timeout(&mut self, call: CallId) {
        let plan = self.plan_of(self.calls[call as usize].req);
        let c = &mut self.calls[call as usize];
        c.timeout_key = None;
        c.caller_waiting = false;
        c.gave_up = self.now;
        let (req, b, dep) = (c.req, c.branch, c.dep);
        self.result.dependencies[dep].failed += 1;
        if plan.cancellation {
            self.dependency_cancel(dep, call);
            self.free_calls.push(call);
        }
        self.call_resolved(req, b, false);
    }

    fn branch_end(&mut self, req: ReqId) {
        let r = &mut self.requests[req as usize];
        r.branches_left -= 1;
        if r.branches_left > 0 {
            return;
        }
        let ok = r.branches.iter().all(|b| b.ok);
        let response = self.now - r.sent;
        let in_time = self
            .model
            .slo
            .threshold_ms
            .is_none_or(|th| response <= Ticks::from_ms(th));
        self.respond(
            req,
            if ok && in_time {
                Outcome::Answered
            } else {
                Outcome::Dropped
            },
        );
    }

    /// The client gave up on a request inside a plan: its open calls are given up
    /// too (cancelled with `cancellation = true`, left running otherwise).
    pub(super) fn plan_abandon(&mut self, req: ReqId) {
        let r = &self.requests[req as usize];
        if !r.in_handler || !matches!(self.model.services[r.service].handler, Handler::Plan(_)) {
            return;
        }
        if r.branches.is_empty() {
            // Still on its way (in the gateway): the plan has not started, and the
            // request stays held until it arrives and finds its client gone.
            return;
        }
        let plan = self.plan_of(req);
        let open: Vec<CallId> = r.branches.iter().filter_map(|b| b.call).collect();
        for call in open {
            let c = &mut self.calls[call as usize];
            c.caller_waiting = false;
            c.gave_up = self.now;
            let dep = c.dep;
            if let Some(key) = c.timeout_key.take() {
                self.queue.cancel(key);
            }
            if plan.cancellation {
                self.dependency_cancel(dep, call);
                self.free_calls.push(call);
            }
        }
        let r = &mut self.requests[req as usize];
        r.branches.clear();
        r.branches_left = 0;
        r.in_handler = false;
    }
}
