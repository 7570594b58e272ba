//! Plan handler: a deadline-budgeted fan-out (the AY10 chain), also run by a
//! `server` with `branches` after its service time. Branches run in parallel,
//! calls inside a branch in order. Call k may take
//! `min(share_k, R - time already spent in the branch)`, and at most its own
//! `timeout_ms`; a call with no time left fails at once without reaching its
//! target. A call slower than its cap fails at the cap; the callee's work is
//! cancelled (`cancellation = true`) or goes on and is counted as wasted work. The
//! calls themselves go through [`call`](super::call); the plan only keeps each
//! branch's progress, and knows nothing of the world: [`Plans::next_call`] says
//! which call a branch makes next and with what cap, and the world makes it
//! and hands its answer back (`world/plan.rs`).
//!
//! The budget R: a fixed number (`slo` or milliseconds); `deadline`, the request's
//! absolute deadline minus now when the branches start (queue wait and service
//! time have used up the rest: gRPC deadline propagation); `none`, no budget. The
//! default is `slo` for a request from a workload and `deadline` for one that came
//! through a call. With a budget known only at run time, call k's share is R times
//! its fraction (greedy 1, equal 1/k, weighted by medians).
//!
//! A call with a `probability` below 1 is made only when a draw from its
//! service's stream (`service:NAME:calls`) says so; otherwise the branch moves
//! on to its next call as if it were not there (the split still counts it).
//! A call with `wait = false` is made and the branch moves on at once, as a
//! fire-and-forget call: its cap is its own `timeout_ms` only, its answer
//! changes nothing for the request, and the request's record is held until
//! that answer comes (so that the call's books find it). A branch with
//! `after` starts when the branches it names have ended (its clock, for the
//! budget, runs from the plan's start); a call with `if_ok` is made only when
//! the branch it names succeeded so far, and is passed over otherwise.

use super::vocab::{CallId, Outcome, ReqId, slot_of};
use crate::engine::{Stream, Ticks, stream};
use crate::model::{
    BudgetKind, Call as PlanCall, Handler, LimiterId, Model, OnFailure, Plan, ServiceId,
};
use rand::RngExt;

/// Progress of one branch of one request.
#[derive(Debug, Clone, Default)]
struct BranchRun {
    next: usize,
    start: Ticks,
    ok: bool,
    call: Option<CallId>,
    /// Branches it waits for (`after`) still running.
    waiting: u32,
}

/// Plan progress of one request: one entry per branch (empty: not started).
#[derive(Debug, Clone, Default)]
struct PlanRun {
    branches: Vec<BranchRun>,
    left: u32,
    /// Calls made with `wait = false` whose answer has not come yet.
    detached: u32,
    /// The budget R of this request: `Fixed` uses the model's precomputed shares.
    budget: Budget,
    /// The first limiter that refused one of its calls (a 429 from the
    /// callee's middleware), if any: the request, if it fails, is rejected by it.
    rejected: Option<LimiterId>,
}

/// A request's budget R.
#[derive(Debug, Clone, Copy, Default)]
enum Budget {
    /// The plan's fixed budget and shares.
    #[default]
    Fixed,
    /// R known at run time.
    Dynamic(Ticks),
    /// No budget: each call limited only by its own cap.
    Unlimited,
}

/// The plan progress of every request, by request id.
#[derive(Default)]
pub(crate) struct Plans {
    runs: Vec<PlanRun>,
    /// Per service, the stream that decides whether a call with a
    /// `probability` below 1 is made (`service:NAME:calls`); empty when no call
    /// has one, so a scenario without them draws exactly what it drew before.
    chances: Vec<Option<Stream>>,
}

impl Plans {
    pub fn new(model: &Model, replication: u64) -> Plans {
        let maybe = |h: &Handler| {
            let plan = match h {
                Handler::Plan(p) => Some(p),
                Handler::Server(s) => s.plan.as_ref(),
                Handler::Respond => None,
            };
            plan.is_some_and(|p| p.sometimes)
        };
        let chances = if model.services.iter().any(|s| maybe(&s.handler)) {
            model
                .services
                .iter()
                .map(|s| {
                    maybe(&s.handler).then(|| {
                        stream(
                            model.seed,
                            replication,
                            &format!("service:{}:calls", s.name),
                        )
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        Plans {
            runs: Vec::new(),
            chances,
        }
    }
}

impl Plans {
    /// Room for `more` requests' progress, made now (see `World::reserve_ahead`).
    pub fn reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.runs.try_reserve(more)
    }
}

/// The plan that handles a request at `service`: its own (a `plan` handler)
/// or the calls a `server` makes after its service time.
#[inline(always)]
pub(crate) fn plan_of(model: &Model, service: ServiceId) -> &Plan {
    match &model.services[service].handler {
        Handler::Plan(p) => p,
        Handler::Server(s) => s
            .plan
            .as_ref()
            .expect("plan events reach servers with calls"),
        Handler::Respond => unreachable!("plan events only reach plans"),
    }
}

/// What a branch does next ([`Plans::next_call`]).
pub(crate) enum Next<'p> {
    /// Make `call` with at most `cap` (None: no cap).
    Call {
        call: &'p PlanCall,
        cap: Option<Ticks>,
    },
    /// The branch has no call left.
    End,
    /// The branch waits for others (`after`).
    Waiting,
}

impl Plans {
    /// Request `req` starts `plan` at `now`: every branch at its first call.
    /// `deadline` is the request's absolute deadline, if any; `called`, whether
    /// it came through a call (its budget is then its deadline by default).
    pub(super) fn start(
        &mut self,
        plan: &Plan,
        req: ReqId,
        now: Ticks,
        deadline: Option<Ticks>,
        called: bool,
    ) {
        let deadline_budget = || match deadline {
            Some(d) => Budget::Dynamic(d.saturating_sub(now)),
            None => Budget::Unlimited,
        };
        let budget = match plan.budget_kind {
            BudgetKind::Fixed => Budget::Fixed,
            BudgetKind::SloOrDeadline if !called => Budget::Fixed,
            BudgetKind::SloOrDeadline | BudgetKind::Deadline => deadline_budget(),
            BudgetKind::None => Budget::Unlimited,
        };
        let run = slot_of(&mut self.runs, req, PlanRun::default);
        run.branches.clear();
        run.branches.resize(
            plan.branches.len(),
            BranchRun {
                next: 0,
                start: now,
                ok: true,
                call: None,
                waiting: 0,
            },
        );
        if plan.joins {
            for (br, b) in run.branches.iter_mut().zip(&plan.branches) {
                br.waiting = b.after.len() as u32;
            }
        }
        run.left = plan.branches.len() as u32;
        run.budget = budget;
        run.rejected = None;
    }

    /// The next call branch `b` of `req`'s `plan` makes at `now`, and its cap;
    /// a call made only sometimes that is not made this time (a draw from
    /// `service`'s stream) is passed over. `SOMETIMES`: the plan has such
    /// calls.
    #[inline(always)]
    pub(super) fn next_call<'p, const SOMETIMES: bool>(
        &mut self,
        plan: &'p Plan,
        req: ReqId,
        b: usize,
        now: Ticks,
        service: ServiceId,
    ) -> Next<'p> {
        let calls = &plan.branches[b].calls;
        if SOMETIMES && self.runs[req as usize].branches[b].waiting > 0 {
            return Next::Waiting;
        }
        loop {
            let run = &mut self.runs[req as usize];
            let budget = run.budget;
            let br = &mut run.branches[b];
            let Some(call) = calls.get(br.next) else {
                return Next::End;
            };
            let spent = now - br.start;
            // made only when a branch succeeded so far (no draw otherwise)
            let failed = |x: usize| !run.branches[x].ok;
            if SOMETIMES && call.if_ok.is_some_and(failed) {
                self.runs[req as usize].branches[b].next += 1;
                continue;
            }
            if SOMETIMES && call.probability < 1.0 && !self.chance(service, call.probability) {
                // not made this time: the branch goes on to its next call
                self.runs[req as usize].branches[b].next += 1;
                continue;
            }
            let cap = match budget {
                Budget::Fixed => Some(call.share.min(plan.budget.saturating_sub(spent))),
                Budget::Dynamic(r) => {
                    let share = Ticks((r.0 as f64 * call.fraction) as u64);
                    Some(share.min(r.saturating_sub(spent)))
                }
                Budget::Unlimited => None,
            };
            let cap = match (cap, call.timeout) {
                (Some(c), Some(t)) => Some(c.min(t)),
                (c, t) => c.or(t),
            };
            return Next::Call { call, cap };
        }
    }

    /// Branch `b` goes on to its next call without waiting for the one it
    /// made (`wait = false`): neither a success nor a failure for it.
    pub(super) fn passed(&mut self, req: ReqId, b: usize) {
        self.runs[req as usize].branches[b].next += 1;
    }

    /// Branch `b` (of a plan with `after`) ended: the branches that waited
    /// for it and may start now.
    pub(super) fn ended(&mut self, plan: &Plan, req: ReqId, b: usize) -> Vec<usize> {
        let run = &mut self.runs[req as usize];
        let mut ready = Vec::new();
        for &t in &plan.branches[b].then {
            let w = &mut run.branches[t].waiting;
            *w -= 1;
            if *w == 0 {
                ready.push(t);
            }
        }
        ready
    }

    /// A call nobody waits for was made (`opened`) or was answered: the number
    /// of them still out.
    pub(super) fn detached(&mut self, req: ReqId, opened: bool) -> u32 {
        let run = &mut self.runs[req as usize];
        if opened {
            run.detached += 1;
        } else {
            run.detached -= 1;
        }
        run.detached
    }

    /// Branch `b`'s call is open as `call`.
    #[inline(always)]
    pub(super) fn called(&mut self, req: ReqId, b: usize, call: CallId) {
        self.runs[req as usize].branches[b].call = Some(call);
    }

    /// Branch `b`'s call failed at once (it had no time left): the branch
    /// moves on, or to its end with `on_failure = "abort"`.
    #[inline(always)]
    pub(super) fn failed_at_once(&mut self, plan: &Plan, req: ReqId, b: usize) {
        let br = &mut self.runs[req as usize].branches[b];
        br.ok = false;
        br.next = if plan.on_failure == OnFailure::Abort {
            plan.branches[b].calls.len()
        } else {
            br.next + 1
        };
    }

    /// Whether a call made with `probability` is made now: a draw from
    /// `service`'s stream.
    #[cold]
    #[inline(never)]
    fn chance(&mut self, service: ServiceId, probability: f64) -> bool {
        match self.chances.get_mut(service) {
            Some(Some(rng)) => rng.random::<f64>() < probability,
            _ => true,
        }
    }

    /// A call of `req` was refused by limiter `l` of its callee: the first
    /// such limiter is the request's reason if it fails.
    #[cold]
    #[inline(never)]
    pub(super) fn call_rejected(&mut self, req: ReqId, l: LimiterId) {
        let run = &mut self.runs[req as usize];
        run.rejected = run.rejected.or(Some(l));
    }

    /// The first limiter that refused a call of `req`, if any.
    pub(super) fn rejected(&self, req: ReqId) -> Option<LimiterId> {
        self.runs.get(req as usize).and_then(|r| r.rejected)
    }

    /// Branch `b`'s open call is resolved for it (`ok`: answered): the branch
    /// moves on.
    #[inline(always)]
    pub(super) fn resolved(&mut self, plan: &Plan, req: ReqId, b: usize, ok: bool) {
        let br = &mut self.runs[req as usize].branches[b];
        br.call = None;
        br.ok &= ok;
        br.next = if !ok && plan.on_failure == OnFailure::Abort {
            plan.branches[b].calls.len()
        } else {
            br.next + 1
        };
    }

    /// A branch of `req` ended: Some(every branch succeeded) when it was the
    /// last, None while others still run.
    pub(super) fn branch_end(&mut self, req: ReqId) -> Option<bool> {
        let run = &mut self.runs[req as usize];
        run.left -= 1;
        if run.left > 0 {
            return None;
        }
        let ok = run.branches.iter().all(|b| b.ok);
        run.branches.clear();
        Some(ok)
    }

    /// Whether `req`'s branches are running (its calls started, not all done).
    pub(super) fn running(&self, req: ReqId) -> bool {
        self.runs
            .get(req as usize)
            .is_some_and(|r| !r.branches.is_empty())
    }

    /// Stops `req`'s branches and returns their open calls, for the caller to
    /// give up; None if they had not started.
    pub(super) fn stop(&mut self, req: ReqId) -> Option<Vec<CallId>> {
        let run = self.runs.get_mut(req as usize)?;
        if run.branches.is_empty() {
            // Still on its way (in the gateway): the plan has not started, and the
            // request stays held until it arrives and finds its client gone.
            return None;
        }
        let open: Vec<CallId> = run.branches.iter().filter_map(|b| b.call).collect();
        run.branches.clear();
        run.left = 0;
        Some(open)
    }
}

/// How a request whose branches all ended is answered: answered when every
/// branch succeeded and, for a client's request (not `called`), within the
/// SLO threshold `slo_ms` of its sending, which judges it end to end (a call
/// is judged by its caller's cap); a branch failed and a limiter of a callee
/// refused one of its calls (`rejected`, the first): rejected by that limiter,
/// as the callee's 429 travels back up; dropped otherwise.
pub(crate) fn outcome(
    ok: bool,
    called: bool,
    took: Ticks,
    slo_ms: Option<f64>,
    rejected: Option<LimiterId>,
) -> Outcome {
    let in_time = called || slo_ms.is_none_or(|th| took <= Ticks::from_ms(th));
    match rejected {
        _ if ok && in_time => Outcome::Answered,
        Some(l) if !ok => Outcome::Rejected(l),
        _ => Outcome::Dropped,
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{LoadOptions, load_str};
    use crate::sim::result::RunResult;
    use crate::sim::run;
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
        assert_eq!((r.outcomes.answered, r.outcomes.dropped), (1, 0));
        assert_eq!(r.dependencies[0].failed, 0);
        // one nanosecond later it is not
        let r = run_plan(
            "[dependencies.a]\nlatency = { constant = 100.000001 }",
            r#"branches = [{ name = "b", calls = ["a"] }]"#,
            1,
        );
        assert_eq!((r.outcomes.answered, r.outcomes.dropped), (0, 1));
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
    fn a_call_with_a_probability_is_made_that_often_and_skipped_otherwise() {
        let deps = "[dependencies.a]\nlatency = { constant = 10 }\n[dependencies.b]\nlatency = { constant = 20 }";
        let r = run_plan(
            deps,
            r#"branches = [{ name = "p", calls = [{ to = "a", probability = 0.25 }, "b"] }]"#,
            4000,
        );
        // 1000 expected, a standard deviation of 27
        let made = r.dependencies[0].calls;
        assert!((900..=1100).contains(&made), "{made} of 4000");
        // a call not made is no failure: every request answered, b always called
        assert_eq!((r.outcomes.answered, r.dependencies[1].calls), (4000, 4000));
        assert_eq!(r.response.max_ms(), 30.0);
        assert_eq!(r.response.min_ms(), 20.0);
        // probability 1 is every time, and draws nothing
        let r = run_plan(
            deps,
            r#"branches = [{ name = "p", calls = [{ to = "a", probability = 1 }, "b"] }]"#,
            10,
        );
        assert_eq!(r.dependencies[0].calls, 10);
    }

    #[test]
    fn a_call_not_waited_for_is_made_and_the_branch_goes_on_at_once() {
        let deps = "[dependencies.a]\nlatency = { constant = 30 }\nerror_rate = 1\n[dependencies.b]\nlatency = { constant = 10 }";
        let calls = |wait: &str| {
            format!(
                r#"branches = [{{ name = "p", calls = [{{ to = "a", wait = {wait} }}, "b"] }}]"#
            )
        };
        let r = run_plan(deps, &calls("false"), 5);
        // the answer waits for b only; a is called every time, and its
        // failures fail nothing
        assert_eq!(r.response.max_ms(), 10.0);
        assert_eq!((r.outcomes.answered, r.outcomes.dropped), (5, 0));
        assert_eq!((r.dependencies[0].calls, r.dependencies[1].calls), (5, 5));
        assert_eq!(r.dependencies[0].work_ms, 150.0, "a works to its end");
        assert_eq!(r.wasted_ms, 0.0);
        assert_eq!(r.leaked, 0, "every record let go once a's answer came");
        // waited for (the default): 40 ms, and a's failure fails the request
        let r = run_plan(deps, &calls("true"), 5);
        assert_eq!(r.response.max_ms(), 40.0);
        assert_eq!((r.outcomes.answered, r.outcomes.dropped), (0, 5));
    }

    #[test]
    fn a_service_called_without_waiting_works_after_its_caller_answered() {
        let text = r#"
[scenario]
name = "fire and forget"
[services.front]
routes = ["/x"]
handler = { type = "server", slots = 1, queue = 10, service = { constant = 1 }, budget = "none", branches = [{ name = "p", calls = [{ to = "audit", wait = false }] }] }
[services.audit]
handler = { type = "server", slots = 1, queue = 100, service = { constant = 50 } }
[workload]
type = "sequence"
requests = 4
"#;
        let s = load_str(text, Path::new("t.toml"), &LoadOptions::default()).expect("valid");
        let r = run(&s.rows[0].model, 0).expect("run");
        // front answers after its own 1 ms; audit's 50 ms each queue behind it
        assert_eq!(r.outcomes.answered, 4);
        assert_eq!(r.response.max_ms(), 1.0);
        assert_eq!(r.servers[1].processed, 4);
        assert_eq!(r.servers[1].late_work_ms, 0.0, "nobody gave up on audit");
        assert_eq!(r.leaked, 0);
    }

    #[test]
    fn a_branch_after_others_starts_when_they_have_all_ended() {
        let deps = "[dependencies.a]\nlatency = { constant = 30 }\n[dependencies.b]\nlatency = { constant = 10 }\n[dependencies.c]\nlatency = { constant = 5 }";
        let r = run_plan(
            deps,
            r#"branches = [{ name = "p", calls = ["a"] }, { name = "q", calls = ["b"] }, { name = "r", after = ["p", "q"], calls = ["c"] }]"#,
            3,
        );
        // (a || b) then c: 30 + 5, where c after b alone would end at 30
        assert_eq!(r.response.max_ms(), 35.0);
        assert_eq!(r.response.min_ms(), 35.0);
        assert_eq!((r.outcomes.answered, r.dependencies[2].calls), (3, 3));
        assert_eq!(r.leaked, 0);
    }

    #[test]
    fn a_call_if_ok_is_made_only_when_its_branch_succeeded() {
        let deps = |rate: f64| {
            format!(
                "[dependencies.pay]\nlatency = {{ constant = 10 }}\nerror_rate = {rate}\n[dependencies.stock]\nlatency = {{ constant = 20 }}\n[dependencies.db]\nlatency = {{ constant = 5 }}"
            )
        };
        let plan = r#"branches = [{ name = "p", calls = ["pay"] }, { name = "s", calls = ["stock"] }, { name = "w", after = ["p", "s"], calls = [{ to = "db", if_ok = "p" }] }]"#;
        let ok = run_plan(&deps(0.0), plan, 4);
        assert_eq!((ok.dependencies[2].calls, ok.response.max_ms()), (4, 25.0));
        let failing = run_plan(&deps(1.0), plan, 4);
        assert_eq!(
            failing.dependencies[2].calls, 0,
            "db is never called after pay failed"
        );
        assert_eq!(failing.response.max_ms(), 20.0);
        assert_eq!(failing.outcomes.dropped, 4);
        // in its own branch: the calls before it
        let own = r#"branches = [{ name = "p", calls = ["pay", { to = "db", if_ok = "p" }] }]"#;
        assert_eq!(run_plan(&deps(1.0), own, 4).dependencies[2].calls, 0);
        assert_eq!(run_plan(&deps(0.0), own, 4).dependencies[2].calls, 4);
    }

    #[test]
    fn after_and_if_ok_name_branches_it_can_wait_for() {
        let text = |handler: &str| {
            format!(
                "[scenario]\nname = \"p\"\n[services.s]\nroutes = [\"/x\"]\nhandler = {{ type = \"plan\", budget = 100, {handler} }}\n[dependencies.a]\nlatency = {{ constant = 1 }}\n[workload]\ntype = \"sequence\"\nrequests = 1\n"
            )
        };
        let e = |handler: &str| {
            load_str(&text(handler), Path::new("p.toml"), &LoadOptions::default()).unwrap_err()
        };
        let later = e(
            r#"branches = [{ name = "x", after = ["y"], calls = ["a"] }, { name = "y", calls = ["a"] }]"#,
        );
        assert_eq!(later.path, "services.s.handler.branches.0.after.0");
        assert!(
            later.message.contains("listed before it"),
            "{}",
            later.message
        );
        let sideways = e(
            r#"branches = [{ name = "x", calls = ["a"] }, { name = "y", calls = [{ to = "a", if_ok = "x" }] }]"#,
        );
        assert_eq!(sideways.path, "services.s.handler.branches.1.calls.0.if_ok");
        assert!(
            sideways.message.contains("nor one it waits for"),
            "{}",
            sideways.message
        );
        let unknown = e(r#"branches = [{ name = "x", calls = [{ to = "a", if_ok = "z" }] }]"#);
        assert!(
            unknown.message.starts_with("no branch `z` in this plan"),
            "{}",
            unknown.message
        );
    }

    #[test]
    fn a_probability_outside_0_to_1_is_refused_at_its_key() {
        let text = r#"
[scenario]
name = "p"
[services.s]
routes = ["/x"]
handler = { type = "plan", budget = 100, branches = [{ name = "b", calls = [{ to = "a", probability = 0 }] }] }
[dependencies.a]
latency = { constant = 1 }
[workload]
type = "sequence"
requests = 1
"#;
        let e = load_str(text, Path::new("p.toml"), &LoadOptions::default()).unwrap_err();
        assert_eq!(e.path, "services.s.handler.branches.0.calls.0.probability");
        assert!(
            e.message
                .starts_with("must be above 0 and at most 1 (got 0)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn dependency_slots_queue_calls_fifo() {
        // Two parallel branches call a one-slot store: the second waits 30 ms.
        let r = run_plan(
            "[dependencies.a]\nslots = 1\nlatency = { constant = 30 }",
            r#"branches = [{ name = "x", calls = ["a"] }, { name = "y", calls = ["a"] }]"#,
            1,
        );
        assert_eq!(r.outcomes.answered, 1);
        assert_eq!(r.response.max_ms(), 60.0);
    }
}
