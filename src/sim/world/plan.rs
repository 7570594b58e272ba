//! The plans put to the run: the only way to [`Plans`], whose state the world
//! keeps private. The plan says which call a branch makes next and with what
//! cap; the world makes it through the call module, hands each answer back,
//! and answers the request when its last branch ends.

use super::super::plan::{self, Next};
use super::super::vocab::{Caller, Outcome, ReqId};
use super::World;
use crate::model::{Handler, Plan};

/// The branch a call made with `wait = false` answers to: none (its answer
/// only lets the request's record go).
const DETACHED: u32 = u32::MAX;

impl<'m> World<'m> {
    #[inline(always)]
    fn plan_of(&self, req: ReqId) -> &'m Plan {
        let model: &'m crate::model::Model = self.model();
        plan::plan_of(model, self.requests[req].service)
    }

    /// A request arrives at a plan (or a server finished its service and has
    /// calls to make): every branch starts its first call.
    pub(in crate::sim) fn plan_start(&mut self, req: ReqId) {
        let plan = self.plan_of(req);
        let now = self.now();
        let r = &self.requests[req];
        let (deadline, called) = (r.deadline, r.caller.is_some());
        self.plans.start(plan, req, now, deadline, called);
        for b in 0..plan.branches.len() {
            self.call_next(plan, req, b);
        }
    }

    /// Starts the next call of branch `b` of `req`'s `plan`, failing at once those
    /// that have no time left. (The plan is passed in: its callers have it.
    /// Inlined into both: once per call on the plan's path.)
    #[inline(always)]
    fn call_next(&mut self, plan: &'m Plan, req: ReqId, b: usize) {
        // a plan with a call made only sometimes (or not waited for) takes the
        // loop that draws for it, out of line; every other plan the plain loop
        if plan.special {
            self.call_next_sometimes(plan, req, b)
        } else {
            self.call_next_in::<false>(plan, req, b)
        }
    }

    /// [`Self::call_next`] of a plan with a call made only sometimes.
    #[inline(never)]
    fn call_next_sometimes(&mut self, plan: &'m Plan, req: ReqId, b: usize) {
        self.call_next_in::<true>(plan, req, b)
    }

    /// The loop of [`Self::call_next`]; `SOMETIMES`: the plan has calls with a
    /// `probability` below 1 or calls it does not wait for.
    #[inline(always)]
    fn call_next_in<const SOMETIMES: bool>(&mut self, plan: &'m Plan, req: ReqId, b: usize) {
        let now = self.now();
        let service = self.requests[req].service;
        loop {
            let (call, cap) = match self
                .plans
                .next_call::<SOMETIMES>(plan, req, b, now, service)
            {
                Next::Call { call, cap } => (call, cap),
                Next::End => return self.branch_end(plan, req, b),
                // it starts when the branches it waits for have ended
                Next::Waiting => return,
            };
            if SOMETIMES && !call.wait {
                // fire and forget: the branch goes on at once
                let caller = Caller::Branch {
                    req,
                    branch: DETACHED,
                };
                let cancel = plan.cancellation;
                if self
                    .call_via(call.call_policy, caller, call.target, call.timeout, cancel)
                    .is_some()
                {
                    self.plans.detached(req, true);
                    self.requests[req].held = true;
                }
                self.plans.passed(req, b);
                continue;
            }
            let caller = Caller::Branch {
                req,
                branch: b as u32,
            };
            match self.call_via(
                call.call_policy,
                caller,
                call.target,
                cap,
                plan.cancellation,
            ) {
                Some(id) => return self.plans.called(req, b, id),
                None => self.plans.failed_at_once(plan, req, b),
            }
        }
    }

    /// A call of branch `b` is resolved for its caller with `outcome`: move
    /// the branch on. (Inlined into the call's answer: one step of the
    /// per-call path.)
    #[inline(always)]
    pub(in crate::sim) fn plan_call_resolved(&mut self, req: ReqId, b: usize, outcome: Outcome) {
        let ok = outcome == Outcome::Answered;
        if let Outcome::Rejected(l) = outcome
            && b != DETACHED as usize
        {
            self.plans.call_rejected(req, l);
        }
        let plan = self.plan_of(req);
        if plan.special {
            return self.plan_call_resolved_special(plan, req, b, ok);
        }
        self.plans.resolved(plan, req, b, ok);
        self.call_next_in::<false>(plan, req, b);
    }

    /// [`Self::plan_call_resolved`] of a plan with calls made sometimes or not
    /// waited for: the answer to a call nobody waited for only lets the
    /// request go once none is out.
    #[inline(never)]
    fn plan_call_resolved_special(&mut self, plan: &'m Plan, req: ReqId, b: usize, ok: bool) {
        if b == DETACHED as usize {
            if self.plans.detached(req, false) == 0 {
                self.requests[req].held = false;
                self.release(req);
            }
            return;
        }
        self.plans.resolved(plan, req, b, ok);
        self.call_next_in::<true>(plan, req, b);
    }

    /// Branch `b` of `req` ended: the branches that waited for it start;
    /// after the last, the request is answered.
    fn branch_end(&mut self, plan: &'m Plan, req: ReqId, b: usize) {
        let Some(ok) = self.plans.branch_end(req) else {
            if plan.joins {
                self.plan_joins(plan, req, b);
            }
            return;
        };
        let r = &self.requests[req];
        let took = self.now() - r.sent;
        let rejected = if ok { None } else { self.plans.rejected(req) };
        let slo = self.model().slo.threshold_ms;
        let outcome = plan::outcome(ok, r.caller.is_some(), took, slo, rejected);
        match &self.model().services[r.service].handler {
            Handler::Server(_) => self.server_calls_done(req, outcome),
            _ => self.respond(req, outcome),
        }
    }

    /// Branch `b` of `req` ended: the branches that waited for it and no
    /// other start.
    #[cold]
    #[inline(never)]
    fn plan_joins(&mut self, plan: &'m Plan, req: ReqId, b: usize) {
        for t in self.plans.ended(plan, req, b) {
            self.call_next(plan, req, t);
        }
    }

    /// Whether `req`'s branches are running (its calls started, not all done).
    pub(in crate::sim) fn plan_running(&self, req: ReqId) -> bool {
        self.plans.running(req)
    }

    /// The client gave up on a request inside a plan: its open calls are given up
    /// too (cancelled with `cancellation = true`, left running otherwise).
    pub(in crate::sim) fn plan_abandon(&mut self, req: ReqId) {
        if self.plan_stop(req, false) {
            self.handler_released(req);
        }
    }

    /// The request's caller cancelled it: every open call is cancelled, whatever
    /// the plan's own `cancellation` (the caller's cancellation travels down).
    /// Returns false if they had not started.
    pub(in crate::sim) fn plan_cancel(&mut self, req: ReqId) -> bool {
        self.plan_stop(req, true)
    }

    /// Gives up the open calls of `req`'s branches; false if they had not started.
    fn plan_stop(&mut self, req: ReqId, force: bool) -> bool {
        let Some(open) = self.plans.stop(req) else {
            return false;
        };
        for call in open {
            self.call_abandon(call, force);
        }
        true
    }
}
