//! Plans: a handler's branches of calls and how they share their deadline budget.

use super::{DependencyId, PolicyId, ServiceId};
use crate::engine::Ticks;

/// How a plan splits its budget R among a branch's calls (`policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Each call may use all of R.
    Greedy,
    /// R/K each, K calls in the branch.
    Equal,
    /// R x median_k / sum of the branch's medians.
    Weighted,
}

impl Policy {
    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Greedy => "greedy",
            Policy::Equal => "equal",
            Policy::Weighted => "weighted",
        }
    }
}

/// What a branch does after a failed call (`on_failure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    /// Later calls of the branch are still made.
    Continue,
    /// Later calls of the branch are skipped.
    Abort,
}

/// A `plan` handler (or a server's calls): branches of calls under a budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What the budget R is: fixed (`slo` or a number: `budget` below), the
    /// request's deadline, or none.
    pub budget_kind: BudgetKind,
    /// A fixed budget (`slo` or a number); 0 for the other kinds.
    pub budget: Ticks,
    /// `budget` in milliseconds; 0 for `deadline` and `none`.
    pub budget_ms: f64,
    /// How R is split among a branch's calls.
    pub policy: Policy,
    /// Whether a call's timeout (or the request given up) stops the callee's work at once.
    pub cancellation: bool,
    /// What a branch does after a failed call.
    pub on_failure: OnFailure,
    /// Branches, run in parallel; calls within a branch in order.
    pub branches: Vec<Branch>,
    /// Some call has a `probability` below 1 (the run draws for those only).
    pub sometimes: bool,
    /// Some call has a `probability` below 1, is not waited for (`wait =
    /// false`) or made only when a branch succeeded (`if_ok`), or some branch
    /// waits for others (`after`): the plan's calls take the general loop,
    /// every other plan the plain one.
    pub special: bool,
    /// Some branch waits for others (`after`).
    pub joins: bool,
}

impl Plan {
    /// Hops a propagated deadline travels on: one per branch plus one per call.
    pub fn subcalls(&self) -> usize {
        self.branches.len() + self.branches.iter().map(|b| b.calls.len()).sum::<usize>()
    }
}

/// One branch of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    /// Its `name`.
    pub name: String,
    /// Its calls, made in order.
    pub calls: Vec<Call>,
    /// The branches (indices, all before it) it waits for: it starts when
    /// every one of them has ended (`after`; empty: at once).
    pub after: Vec<usize>,
    /// The branches that wait for it (the reverse of `after`).
    pub then: Vec<usize>,
}

/// One call of a branch.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The service or dependency called.
    pub target: Target,
    /// The most this call may take, from the split policy (before the
    /// `R - time spent` cap applied at run time), for a fixed budget.
    pub share: Ticks,
    /// `share` in milliseconds.
    pub share_ms: f64,
    /// This call's part of the budget (greedy 1, equal 1/k, weighted by medians):
    /// the share of a budget known only at run time (`deadline`).
    pub fraction: f64,
    /// The call's own cap (`timeout_ms` of an inline call), retries included.
    pub timeout: Option<Ticks>,
    /// The client policy named by `call_policy` (None: no `[policies]` in the
    /// scenario; with policies, a call without one uses the `none` policy).
    pub call_policy: Option<PolicyId>,
    /// The chance, in (0, 1], that the call is made when its branch reaches it
    /// (1: always); a call not made is skipped, neither a success nor a failure.
    pub probability: f64,
    /// The caller waits for the answer (`wait`, default true). A call not
    /// waited for is made and the branch goes on at once: its answer, or its
    /// failure, changes nothing for the request (fire and forget).
    pub wait: bool,
    /// Made only when this branch (index) succeeded so far: every call it
    /// made was answered (`if_ok`: this call's own branch, its calls before
    /// this one, or a branch it waits for); skipped otherwise, as a call not
    /// made.
    pub if_ok: Option<usize>,
}

/// What a call is made to: one namespace of services and dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// A `[dependencies.NAME]`.
    Dependency(DependencyId),
    /// A `[services.NAME]`.
    Service(ServiceId),
}

/// Where a plan's budget R comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetKind {
    /// `slo` or a number of milliseconds: `Plan::budget`.
    Fixed,
    /// The default: fixed (`slo`) for a request from a workload, the request's
    /// deadline for one that came through a call.
    SloOrDeadline,
    /// `deadline`: the request's absolute deadline minus now when the branches
    /// start (no deadline: no budget).
    Deadline,
    /// `none`: each call limited only by its own `timeout_ms`.
    None,
}
