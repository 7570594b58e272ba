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
            self.requests[req as usize].branches[b].call = Some(id);
            let deadline = now + timeout;
            // A timer that cannot fire is not scheduled: a completion at or before
            // the deadline runs first (deadlines run last in their tick) and would
            // cancel it. Skipping it changes no event's order, only the cost.
            let cancelled_at = plan.cancellation.then_some(deadline);
            let done = self.dependency_request(call.dependency, id, cancelled_at);
            if done.is_none_or(|t| t > deadline) {
                let key = self.schedule(deadline, Lane::Deadline, Event::CallTimeout(id));
                self.calls[id as usize].timeout_key = Some(key);
            }
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

#[cfg(test)]
mod tests {
    use crate::scenario::{LoadOptions, load_str};
    use crate::sim::{RunResult, run};
    use std::path::Path;

    /// One service with a plan over `deps`, `branches` as TOML, run `requests` times.
    fn run_plan(deps: &str, handler: &str, requests: u64) -> RunResult {
        let text = format!(
            r#"
[scenario]
name = "plan test"
[slo]
threshold_ms = 100
[services.s]
routes = ["/x"]
handler = {{ type = "plan", budget = 100, {handler} }}
{deps}
[workload]
type = "sequence"
requests = {requests}
"#
        );
        let s = load_str(&text, Path::new("test.toml"), &LoadOptions::default())
            .expect("valid scenario");
        run(&s.rows[0].model, 0).expect("run")
    }

    #[test]
    fn a_reply_exactly_at_the_deadline_is_in_time() {
        let r = run_plan(
            "[dependencies.a]\nlatency = { constant = 100 }",
            r#"branches = [{ name = "b", calls = ["a"] }]"#,
            1,
        );
        assert_eq!((r.answered, r.dropped), (1, 0));
        assert_eq!(r.dependencies[0].failed, 0);
        // one nanosecond later it is not
        let r = run_plan(
            "[dependencies.a]\nlatency = { constant = 100.000001 }",
            r#"branches = [{ name = "b", calls = ["a"] }]"#,
            1,
        );
        assert_eq!((r.answered, r.dropped), (0, 1));
        assert_eq!(r.dependencies[0].failed, 1);
    }

    #[test]
    fn a_call_with_no_time_left_fails_at_once_and_draws_no_latency() {
        // `a` eats the whole budget; `b` gets timeout min(100, 100 - 100) = 0.
        let r = run_plan(
            "[dependencies.a]\nlatency = { constant = 100 }\n[dependencies.b]\nlatency = { cycle = [1, 50] }",
            r#"branches = [{ name = "p", calls = ["a", "b"] }]"#,
            2,
        );
        assert_eq!(r.dependencies[1].calls, 2);
        assert_eq!(r.dependencies[1].failed, 2);
        assert_eq!(r.dependencies[1].work_started, 0, "no call reached b");
        assert_eq!(r.response.max_ms(), 100.0, "no latency consumed");
    }

    #[test]
    fn cancellation_removes_the_pending_completion() {
        let deps = "[dependencies.a]\nlatency = { constant = 300 }";
        let branches = r#"branches = [{ name = "b", calls = ["a"] }]"#;
        let kept = run_plan(deps, &format!("cancellation = false, {branches}"), 3);
        let cancelled = run_plan(deps, &format!("cancellation = true, {branches}"), 3);
        // Without cancellation the store works to the end: 200 ms wasted per call,
        // and its completion events still run.
        assert_eq!(kept.wasted_ms, 600.0);
        assert_eq!(kept.dependencies[0].work_ms, 900.0);
        // With it, the completion is removed from the queue: no waste, fewer events.
        assert_eq!(cancelled.wasted_ms, 0.0);
        assert_eq!(cancelled.dependencies[0].work_ms, 300.0);
        assert_eq!(
            kept.events - cancelled.events,
            3,
            "one completion per call never ran"
        );
        assert_eq!(cancelled.response.max_ms(), 100.0);
    }

    #[test]
    fn abort_skips_the_rest_of_the_branch_and_continue_does_not() {
        let deps = "[dependencies.a]\nlatency = { constant = 60 }\n[dependencies.b]\nlatency = { constant = 10 }";
        let branches = r#"branches = [{ name = "p", calls = ["a", "b"] }]"#;
        let cont = run_plan(
            deps,
            &format!(r#"policy = "equal", on_failure = "continue", {branches}"#),
            1,
        );
        let abort = run_plan(
            deps,
            &format!(r#"policy = "equal", on_failure = "abort", {branches}"#),
            1,
        );
        // equal split: 50 ms each; `a` times out at 50, then `b` has 50 left.
        assert_eq!(cont.dependencies[1].calls, 1);
        assert_eq!(cont.response.max_ms(), 60.0);
        assert_eq!(abort.dependencies[1].calls, 0);
        assert_eq!(abort.response.max_ms(), 50.0);
    }

    #[test]
    fn dependency_slots_queue_calls_fifo() {
        // Two parallel branches call a one-slot store: the second waits 30 ms.
        let r = run_plan(
            "[dependencies.a]\nslots = 1\nlatency = { constant = 30 }",
            r#"branches = [{ name = "x", calls = ["a"] }, { name = "y", calls = ["a"] }]"#,
            1,
        );
        assert_eq!(r.answered, 1);
        assert_eq!(r.response.max_ms(), 60.0);
    }
}
