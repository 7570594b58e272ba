//! The validated model: names resolved to indices, times in ticks, every value
//! checked. The engine and the analyses read only this.

use crate::engine::Ticks;

/// Index into [`Model::services`].
pub type ServiceId = usize;
/// Index into [`Model::dependencies`].
pub type DependencyId = usize;
/// Index into [`Model::limiters`].
pub type LimiterId = usize;
/// Index into [`Model::routes`].
pub type RouteId = usize;
/// Index into [`Model::policies`].
pub type PolicyId = usize;

/// A whole scenario (one compare row), validated: what a run simulates.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// `scenario.name`: shown in the report header.
    pub name: String,
    /// `scenario.about`: free text printed under the header.
    pub about: Option<String>,
    /// The master seed of every random stream of a run, as decided by
    /// `scenario::seed`: the only seed anything downstream reads.
    pub seed: u64,
    /// Runaway protection (`max_events`, `max_sim_time_ms`, `max_in_flight`,
    /// `max_events_per_instant`).
    pub limits: RunLimits,
    /// `[slo]`: figures the analyses convert with.
    pub slo: Slo,
    /// `[gateway]`, when the file has one.
    pub gateway: Option<Gateway>,
    /// `[services.*]`, in declaration order.
    pub services: Vec<Service>,
    /// Every route in declaration order, with the service that owns it.
    pub routes: Vec<Route>,
    /// `[dependencies.*]`, in declaration order.
    pub dependencies: Vec<Dependency>,
    /// `[limiters.*]`, in declaration order.
    pub limiters: Vec<Limiter>,
    /// The first workload (`workloads[0].workload`).
    pub workload: Workload,
    /// `[analysis]`: options of the analyses.
    pub analysis: Analysis,
    /// `[montecarlo]`: sweep defaults.
    pub montecarlo: MonteCarlo,
    /// Files the latency models were read from (`empirical = { file = .. }`), as
    /// written (relative to the scenario file), each once, in the order read.
    pub latency_files: Vec<LatencyFile>,
    /// `[thresholds]`, in file order; metric names are checked by whoever knows
    /// the metrics (the run or the sweep).
    pub thresholds: Vec<Threshold>,
    /// `[policies]` in declaration order; when any is defined, one more named
    /// `none` (no policy) that calls without one use, so that they are counted too.
    pub policies: Vec<ClientPolicy>,
    /// `[[faults]]`, in file order (index = the `faults.N` of key paths).
    pub faults: Vec<Fault>,
    /// `scenario.warmup_ms`: requests sent before it are left out of whole-run
    /// statistics (the time series still shows them).
    pub warmup: Ticks,
    /// `[output] window_ms`: the time series' window (None: no time series).
    pub window: Option<Ticks>,
    /// Every workload, all on one clock, in declaration order: `[workload]` is
    /// the one workload named `main`. `workload` above is the first of them (what
    /// the analyses of a single ladder or probe read).
    pub workloads: Vec<NamedWorkload>,
}

/// One of the scenario's workloads: `[workloads.NAME]` (or `[workload]`, named `main`).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedWorkload {
    /// `NAME` of `[workloads.NAME]`, or `main` for `[workload]`.
    pub name: String,
    /// When it starts sending (`start_ms`).
    pub start: Ticks,
    /// The name its random streams derive from: `workload` for `main` (the
    /// streams a single `[workload]` always drew from), `workloads.NAME` otherwise.
    pub stream: String,
    /// What it sends, and when.
    pub workload: Workload,
    /// Its `call_policy` (None: its requests are sent as they are, with no call
    /// record).
    pub call_policy: Option<PolicyId>,
}

impl Model {
    /// Whether anything can stop work before it ends: a call with
    /// `cancellation = true` (a plan's, or a server's calls), a hedge that
    /// cancels its losers, or a `down` fault. Every cancellation starts at one
    /// of them (a cancelled request cancels its own calls in turn): without any,
    /// a server's or a dependency's completion is never cancelled, and the
    /// engine posts it without a key to cancel it by.
    pub fn cancels_work(&self) -> bool {
        self.services
            .iter()
            .filter_map(|s| s.handler.plan())
            .any(|p| p.cancellation)
            || self
                .policies
                .iter()
                .any(|p| p.hedge.is_some_and(|h| h.cancel_losers))
            || self.faults.iter().any(|f| f.kind == FaultKind::Down)
    }

    /// Whether some service's calls go to another service (not only to
    /// dependencies).
    pub fn calls_a_service(&self) -> bool {
        self.services
            .iter()
            .filter_map(|s| s.handler.plan())
            .flat_map(|p| &p.branches)
            .flat_map(|b| &b.calls)
            .any(|c| matches!(c.target, Target::Service(_)))
    }

    /// The name of a call's target (a service or a dependency).
    pub fn target_name(&self, t: Target) -> &str {
        match t {
            Target::Dependency(d) => &self.dependencies[d].name,
            Target::Service(s) => &self.services[s].name,
        }
    }
}

/// A file a latency model was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyFile {
    /// As written in the scenario.
    pub written: String,
    /// Resolved against the scenario file's folder.
    pub path: std::path::PathBuf,
}

/// One `[thresholds]` entry: `metric` must satisfy `op value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The metric, named as the sweep names it (`<table>.<column>`, ...).
    pub metric: String,
    /// The comparison the metric must satisfy.
    pub op: Comparison,
    /// The limit it is compared with.
    pub value: f64,
}

/// A threshold's comparison: `<`, `<=`, `>` or `>=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterOrEqual,
}

impl Comparison {
    /// Each comparison with its symbol, two-character symbols first (parsed in this order).
    pub const ALL: [(&'static str, Comparison); 4] = [
        ("<=", Comparison::LessOrEqual),
        (">=", Comparison::GreaterOrEqual),
        ("<", Comparison::Less),
        (">", Comparison::Greater),
    ];

    /// The symbol as written (`<=`).
    pub fn symbol(self) -> &'static str {
        Comparison::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("?", |(s, _)| s)
    }

    /// Whether `x` compared with `limit` satisfies this comparison.
    pub fn holds(self, x: f64, limit: f64) -> bool {
        match self {
            Comparison::Less => x < limit,
            Comparison::LessOrEqual => x <= limit,
            Comparison::Greater => x > limit,
            Comparison::GreaterOrEqual => x >= limit,
        }
    }
}

impl Threshold {
    /// Parses a condition such as `< 300` or `>=99.5`.
    pub fn parse(metric: &str, condition: &str) -> Result<Threshold, String> {
        let c = condition.trim();
        let (op, rest) = Comparison::ALL
            .iter()
            .find_map(|(sym, op)| c.strip_prefix(sym).map(|rest| (*op, rest)))
            .ok_or_else(|| {
                format!("expected a comparison and a number, e.g. \"< 300\" or \">= 99\" (got \"{condition}\"); comparisons: `<`, `<=`, `>`, `>=`")
            })?;
        let value: f64 = rest
            .trim()
            .parse()
            .map_err(|_| format!("`{}` is not a number (in \"{condition}\")", rest.trim()))?;
        if !value.is_finite() {
            return Err(format!(
                "the limit must be a finite number (got \"{condition}\")"
            ));
        }
        Ok(Threshold {
            metric: metric.to_string(),
            op,
            value,
        })
    }

    /// `< 300`, as written back.
    pub fn condition(&self) -> String {
        format!(
            "{} {}",
            self.op.symbol(),
            crate::format::format_number(self.value)
        )
    }
}

/// `[montecarlo]`: the defaults `resim sweep` runs with (its flags override them).
#[derive(Debug, Clone, PartialEq)]
pub struct MonteCarlo {
    /// `replications`: the default for `--replications` (None: 100).
    pub replications: Option<u64>,
    /// Two-sided confidence level of the intervals, in (0, 1).
    pub confidence: f64,
    /// Metrics shown in the printed sweep report (every metric is in the CSV files).
    pub report: Vec<String>,
    /// `axis=value` entries naming the row paired differences are taken against.
    pub baseline: Vec<String>,
}

/// Runaway protection: a run stops with an error when it passes either bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunLimits {
    /// Events a run may process (`max_events`).
    pub max_events: u64,
    /// Virtual time a run may reach (`max_sim_time_ms`).
    pub max_sim_time: Ticks,
    /// Requests in flight at once: bounds the memory of a flood.
    pub max_in_flight: u64,
    /// Events one instant of virtual time may hold (`max_events_per_instant`):
    /// more means the run loops without its clock moving.
    pub max_events_per_instant: u64,
    /// Time-series rows this run may write: `sim::MAX_SERIES_ROWS`, shared
    /// evenly by the compare rows that keep a time series (no key: set when the
    /// scenario's rows are known).
    pub max_series_rows: u64,
}

/// `[slo]`: figures the analyses convert with; all optional.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Slo {
    /// End-to-end threshold in ms: a plan's answer counts only within it.
    pub threshold_ms: Option<f64>,
    /// Peak read requests per second, for Little's law (held slots = rps x mean latency).
    pub peak_read_rps: Option<f64>,
    /// Peak requests per second at the edge, for the deadline field's bytes per second.
    pub peak_edge_rps: Option<f64>,
    /// Response size in bytes, the deadline field's bytes are compared with.
    pub response_bytes: Option<f64>,
    /// Bytes a propagated deadline adds to each sub-call.
    pub deadline_field_bytes: Option<f64>,
}

/// `[gateway]`: the edge in front of the services.
#[derive(Debug, Clone, PartialEq)]
pub struct Gateway {
    /// Latency the gateway consumes (`share_ms`), in ticks.
    pub share: Ticks,
    /// The same latency in milliseconds.
    pub share_ms: f64,
    /// Limiters for gateway requests, by route prefix.
    pub rules: Vec<GatewayRule>,
}

/// One `gateway.rules` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayRule {
    /// Routes starting with this prefix are matched.
    pub prefix: String,
    /// Limiters applied to matched gateway requests, in order.
    pub limiters: Vec<LimiterId>,
}

/// A route a workload can send to.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// The route as written (starts with `/`).
    pub path: String,
    /// The service that owns the route; `None` for a route a workload names on
    /// purpose that no service owns (answered 404, counted by no limiter).
    pub service: Option<ServiceId>,
}

/// One `[services.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// `NAME`.
    pub name: String,
    /// The routes it owns.
    pub routes: Vec<RouteId>,
    /// Limiters applied to every request it gets (`middleware`), in order.
    pub middleware: Vec<LimiterId>,
    /// What it does with a request.
    pub handler: Handler,
    /// Typical time of a call into it, for a caller's `weighted` split.
    pub median_ms: Option<f64>,
    /// Instances, each with its own slots and queue (servers); 1 for others.
    pub replicas: u32,
    /// How a request picks its replica.
    pub balancer: Balancer,
}

/// How a request to a replicated service picks its replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Balancer {
    /// Replicas in turn.
    #[default]
    RoundRobin,
    /// Uniformly at random.
    Random,
    /// The replica with the fewest requests (in slots and queue); ties: the first.
    LeastOutstanding,
    /// Two replicas drawn at random, the one with fewer requests (ties: the first drawn).
    TwoChoices,
}

impl Balancer {
    /// Names as written in scenario files.
    pub const NAMES: [(&'static str, Balancer); 4] = [
        ("round_robin", Balancer::RoundRobin),
        ("random", Balancer::Random),
        ("least_outstanding", Balancer::LeastOutstanding),
        ("two_choices", Balancer::TwoChoices),
    ];

    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize].0
    }
}

/// What a service does with a request (`handler.type`).
#[derive(Debug, Clone, PartialEq)]
pub enum Handler {
    /// Answers at once.
    Respond,
    /// Slots and a FIFO queue, then optional calls (`server`).
    Server(Server),
    /// A deadline-budgeted fan-out of calls (`plan`).
    Plan(Plan),
}

impl Handler {
    /// The calls it makes, if any: a plan handler's plan, or a server's.
    pub fn plan(&self) -> Option<&Plan> {
        match self {
            Handler::Plan(p) => Some(p),
            Handler::Server(server) => server.plan.as_ref(),
            Handler::Respond => None,
        }
    }
}

/// A `server` handler.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    /// Requests served at once, per replica.
    pub slots: u32,
    /// FIFO places beyond the slots; a request arriving when both are full is shed.
    pub queue: u32,
    /// Service time model, drawn when a request is admitted.
    pub service: Latency,
    /// When its client gives up, drop a request still in the queue.
    pub abandon: bool,
    /// Calls made after the service time, while the request still holds its slot.
    pub plan: Option<Plan>,
    /// Which queued request a freed slot takes.
    pub order: QueueOrder,
    /// CoDel queue timeouts (Facebook "Fail at Scale").
    pub codel: Option<Codel>,
}

/// Which queued request a freed slot takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueOrder {
    /// The oldest (first in, first out).
    #[default]
    Fifo,
    /// The newest (last in, first out).
    Lifo,
    /// LIFO while the queue has not been empty within the last
    /// `codel.interval_ms` (100 ms without `codel`), else FIFO.
    AdaptiveLifo,
}

impl QueueOrder {
    /// Names as written in scenario files.
    pub const NAMES: [(&'static str, QueueOrder); 3] = [
        ("fifo", QueueOrder::Fifo),
        ("lifo", QueueOrder::Lifo),
        ("adaptive_lifo", QueueOrder::AdaptiveLifo),
    ];
}

/// CoDel as Facebook's "Fail at Scale" describes it: a queued request's queue
/// timeout is `target` while the queue has not been empty within the last
/// `interval`, else `interval`; past it the request is shed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codel {
    /// The queue timeout while the queue stands (`target_ms`).
    pub target: Ticks,
    /// How far back an empty queue counts, and the timeout then (`interval_ms`).
    pub interval: Ticks,
}

/// What a fault does to its target while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Work that starts in the window takes `value` times its drawn length.
    LatencyFactor,
    /// The target has `value` slots (running work finishes).
    Slots,
    /// Calls (or a server's requests, after their service time) fail with
    /// probability `value`.
    ErrorRate,
    /// Every call fails at once; queued and running work fails at the start.
    Down,
    /// An open workload's rate is multiplied by `value`.
    ArrivalFactor,
}

impl FaultKind {
    /// Names as written in scenario files.
    pub const NAMES: [(&'static str, FaultKind); 5] = [
        ("latency_factor", FaultKind::LatencyFactor),
        ("slots", FaultKind::Slots),
        ("error_rate", FaultKind::ErrorRate),
        ("down", FaultKind::Down),
        ("arrival_factor", FaultKind::ArrivalFactor),
    ];
}

/// What a fault acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTarget {
    /// A server service: every replica (`replica` None) or one (0-based).
    Server {
        /// The service.
        service: ServiceId,
        /// One replica (0-based), or every one.
        replica: Option<u32>,
    },
    /// A dependency.
    Dependency(DependencyId),
    /// An open workload, by index into `Model::workloads`.
    Workload(usize),
}

/// One `[[faults]]` entry: active on the half-open window `[at, until)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fault {
    /// What it does.
    pub kind: FaultKind,
    /// What it acts on.
    pub target: FaultTarget,
    /// Its start (`at_ms`).
    pub at: Ticks,
    /// Its end (`at_ms + for_ms`), not included.
    pub until: Ticks,
    /// The factor, slot count or probability (0 for `down`).
    pub value: f64,
}

impl Fault {
    /// Whether the fault acts at `now`: `at <= now < until`, so a fault with
    /// `for_ms = 0` never acts.
    #[inline]
    pub fn active(&self, now: Ticks) -> bool {
        self.at <= now && now < self.until
    }
}

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

/// One `[dependencies.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dependency {
    /// `NAME`.
    pub name: String,
    /// Typical latency in ms, for a caller's `weighted` split.
    pub median_ms: Option<f64>,
    /// Latency model of a call.
    pub latency: Latency,
    /// Concurrent calls it works on; 0 = unlimited. Beyond it calls wait FIFO.
    pub slots: u32,
    /// The probability that a call fails with `error` after its drawn latency.
    pub error_rate: f64,
}

/// A latency model; values in ticks, distributions in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Latency {
    /// `constant`: always this value.
    Constant(Ticks),
    /// `cycle`: the values in order, wrapping.
    Cycle {
        /// The values, in order.
        values: Vec<Ticks>,
        /// `start = "random"`: each replication starts at a random position.
        random_start: bool,
    },
    /// `empirical`: independent draws from these values.
    Empirical(Vec<Ticks>),
    /// `exponential`.
    Exponential {
        /// Mean, in ms.
        mean_ms: f64,
    },
    /// `uniform` between two bounds.
    Uniform {
        /// Lower bound, in ms.
        min_ms: f64,
        /// Upper bound, in ms.
        max_ms: f64,
    },
    /// exp(mu + sigma Z), in milliseconds.
    LogNormal {
        /// Mean of ln(ms).
        mu: f64,
        /// Standard deviation of ln(ms).
        sigma: f64,
    },
    /// Parts with cumulative weights normalised to end at 1.
    Mixture(Vec<(f64, Latency)>),
    /// Gamma with shape k and scale theta (ms): mean k theta. Erlang-k is an
    /// integer shape.
    Gamma {
        /// k.
        shape: f64,
        /// theta, in ms.
        scale_ms: f64,
    },
    /// Weibull with shape k and scale lambda (ms).
    Weibull {
        /// k.
        shape: f64,
        /// lambda, in ms.
        scale_ms: f64,
    },
    /// Pareto type I with shape alpha > 1 and minimum x_m (ms).
    Pareto {
        /// alpha.
        shape: f64,
        /// x_m, in ms.
        min_ms: f64,
    },
}

impl Latency {
    /// Whether every value it gives is 0 (a constant 0, a cycle or list of
    /// zeros, a mixture of such).
    pub fn always_zero(&self) -> bool {
        match self {
            Latency::Constant(t) => *t == Ticks::ZERO,
            Latency::Cycle { values, .. } | Latency::Empirical(values) => {
                values.iter().all(|t| *t == Ticks::ZERO)
            }
            Latency::Mixture(parts) => parts.iter().all(|(_, l)| l.always_zero()),
            _ => false,
        }
    }

    /// Whether it gives exactly 0 now and then (a constant 0, a cycle or list
    /// holding a 0, a mixture with such a part): a continuous model does not.
    pub fn can_be_zero(&self) -> bool {
        match self {
            Latency::Constant(t) => *t == Ticks::ZERO,
            Latency::Cycle { values, .. } | Latency::Empirical(values) => {
                values.contains(&Ticks::ZERO)
            }
            Latency::Mixture(parts) => parts.iter().any(|(_, l)| l.can_be_zero()),
            _ => false,
        }
    }

    /// The mean in milliseconds (used to express waits in rounds of service).
    pub fn mean_ms(&self) -> f64 {
        fn avg(v: &[Ticks]) -> f64 {
            v.iter().map(|t| t.as_ms()).sum::<f64>() / v.len() as f64
        }
        match self {
            Latency::Constant(t) => t.as_ms(),
            Latency::Cycle { values, .. } | Latency::Empirical(values) => avg(values),
            Latency::Exponential { mean_ms } => *mean_ms,
            Latency::Uniform { min_ms, max_ms } => (min_ms + max_ms) / 2.0,
            Latency::LogNormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Latency::Gamma { shape, scale_ms } => shape * scale_ms,
            Latency::Weibull { shape, scale_ms } => scale_ms * libm::tgamma(1.0 + 1.0 / shape),
            Latency::Pareto { shape, min_ms } => shape * min_ms / (shape - 1.0),
            Latency::Mixture(parts) => {
                let mut prev = 0.0;
                parts
                    .iter()
                    .map(|(cum, m)| {
                        let w = cum - prev;
                        prev = *cum;
                        w * m.mean_ms()
                    })
                    .sum()
            }
        }
    }
}

/// A rate limiter's algorithm (`algorithm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// `fixed-window`: windows aligned to t = 0.
    FixedWindow,
    /// `sliding-log`: at most `limit` passed in (t - W, t].
    SlidingLog,
    /// `sliding-counter`: the previous window's count weighed by its overlap.
    SlidingCounter,
    /// `token-bucket`: `limit` tokens at most, one per request.
    TokenBucket,
    /// `gcra`: the generic cell rate algorithm (as a continuous token bucket).
    Gcra,
}

impl Algorithm {
    /// Names as written in scenario files, in variant order.
    pub const NAMES: [&'static str; 5] = [
        "fixed-window",
        "sliding-log",
        "sliding-counter",
        "token-bucket",
        "gcra",
    ];

    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// What a limiter does with a request over the limit (`mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimiterMode {
    /// 429 at once.
    Reject,
    /// Held until it may pass within `max_delay_ms`, else rejected (see [`Overflow`]).
    Throttle,
}

impl LimiterMode {
    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            LimiterMode::Reject => "reject",
            LimiterMode::Throttle => "throttle",
        }
    }
}

/// Throttle mode: what happens to a request whose wait would pass max_delay_ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Held max_delay_ms, then rejected (Resilience4j's RateLimiter).
    Hold,
    /// Rejected at once (nginx `limit_req`, Guava `tryAcquire(timeout)`).
    RejectNow,
}

/// How a token bucket refills (`refill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refill {
    /// Tokens flow in at `limit / window_ms`.
    Continuous,
    /// One whole token at every multiple of `window_ms / limit` from t = 0.
    Discrete,
}

/// A request field a limiter key can be made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The request's `client` label.
    Client,
    /// The request's `member` label.
    Member,
    /// The request's route.
    Route,
    /// The request's access path (gateway or direct).
    Access,
}

impl Field {
    /// Names as written in scenario files, in variant order.
    pub const NAMES: [&'static str; 4] = ["client", "member", "route", "access"];

    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// One `[limiters.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Limiter {
    /// `NAME`.
    pub name: String,
    /// How it decides.
    pub algorithm: Algorithm,
    /// Request fields that make the bucket key; empty: one global bucket.
    pub key: Vec<Field>,
    /// Requests per bucket per window (token bucket and GCRA: the burst).
    pub limit: u64,
    /// The window (`window_ms`), in ticks.
    pub window: Ticks,
    /// Reject or throttle.
    pub mode: LimiterMode,
    /// Throttle: the longest hold (`max_delay_ms`), in ticks.
    pub max_delay: Ticks,
    /// Token bucket: how tokens come back.
    pub refill: Refill,
    /// Throttle: what happens to a request that cannot pass within `max_delay`.
    pub overflow: Overflow,
}

impl Limiter {
    /// The key as written in tables: fields joined by `+`, `constant` for `[]`.
    pub fn key_label(&self) -> String {
        if self.key.is_empty() {
            "constant".into()
        } else {
            self.key
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join("+")
        }
    }
}

/// How a request reaches its service (`access`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Through the gateway (its share and rules apply).
    Gateway,
    /// Straight to the service.
    Direct,
}

impl Access {
    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Access::Gateway => "gateway",
            Access::Direct => "direct",
        }
    }
}

/// The fields one request carries (limiter keys are made of them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestTemplate {
    /// The route it is sent to.
    pub route: RouteId,
    /// Gateway or direct.
    pub access: Access,
    /// The `client` label.
    pub client: String,
    /// The `member` label.
    pub member: String,
}

/// How an open workload spaces its arrivals (`arrivals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process), starting one gap after the start.
    Poisson,
    /// Evenly spaced, the first at the start.
    Uniform,
}

/// What a workload sends, and when (`type`).
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// One request at a time; the next when the previous has its answer.
    Sequence {
        /// Requests sent in all.
        requests: u64,
        /// The fields of every request.
        template: RequestTemplate,
    },
    /// Open-loop arrivals at a rate.
    Open {
        /// Independent clients splitting the rate and `requests` (`clients`).
        clients: u64,
        /// Arrival rate, in requests per second (all clients together).
        rate_rps: f64,
        /// Requests sent in all (split among the clients), if bounded.
        requests: Option<u64>,
        /// Arrivals stop this long after the start (`duration_ms`), if bounded.
        duration: Option<Ticks>,
        /// Poisson or evenly spaced.
        arrivals: Arrivals,
        /// The client gives up this long after sending (`timeout_ms`).
        timeout: Option<Ticks>,
        /// The fields of every request.
        template: RequestTemplate,
    },
    /// A closed population: `users` each send, wait for the answer, think, send
    /// again, until `requests` are sent or `duration` has passed.
    Closed {
        /// Users in the population.
        users: u64,
        /// Think time between an answer and the next send.
        think: Latency,
        /// Requests sent in all, if bounded.
        requests: Option<u64>,
        /// Sending stops this long after the start (`duration_ms`), if bounded.
        duration: Option<Ticks>,
        /// A user gives up this long after sending (`timeout_ms`).
        timeout: Option<Ticks>,
        /// The fields of every request.
        template: RequestTemplate,
    },
    /// Steps of rising concurrency, closed waves or open arrivals (IO22).
    Ladder(Ladder),
    /// Groups of requests sent one after another, each when the previous has its answer.
    Script {
        /// The groups, in order.
        groups: Vec<ScriptGroup>,
        /// The access path of every request.
        access: Access,
    },
    /// One request for every (route, access) pair, routes in declaration order.
    Probe {
        /// Access paths each route is probed through, in order.
        access: Vec<Access>,
        /// The `client` label of every probe request.
        client: String,
        /// The `member` label of every probe request.
        member: String,
        /// Routes probed: ids 0..routes (every route of the model, owned first).
        routes: usize,
    },
}

/// The `ladder` workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    /// Concurrency of each step: requests per wave, or the multiple of `rate_per_step_rps`.
    pub steps: Vec<u64>,
    /// Closed ladder: waves per step.
    pub waves: u64,
    /// A request succeeds when answered within this (`timeout_ms`), in ticks.
    pub timeout: Ticks,
    /// The same timeout in milliseconds.
    pub timeout_ms: f64,
    /// `None`: closed waves. `Some`: open arrivals at step x rate for hold.
    pub open: Option<OpenLadder>,
    /// Closed waves: requests leave at uniform random offsets in [0, jitter).
    pub jitter: Ticks,
    /// The fields of every request.
    pub template: RequestTemplate,
}

/// An open ladder's arrivals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenLadder {
    /// Step c sends c x this many requests per second.
    pub rate_per_step_rps: f64,
    /// How long each step lasts (`hold_ms`).
    pub hold: Ticks,
}

/// One group of a `script` workload.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptGroup {
    /// The `client` label of its requests.
    pub client: String,
    /// The `member` label of its requests.
    pub member: String,
    /// Requests in the group.
    pub count: u64,
    /// Request i goes to `routes[i % len]`.
    pub routes: Vec<RouteId>,
    /// Pause after each answer before the group's next request (`gap_ms`).
    pub gap: Ticks,
    /// Not before this time (the group's first request).
    pub at: Option<Ticks>,
}

/// `[analysis]`: options of the analyses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Analysis {
    /// The monthly error budget and the incidents that use it.
    pub error_budget: Option<ErrorBudget>,
    /// Members active in production: adds `projected_ceiling` to `limiters.csv`.
    pub active_members: Option<u64>,
    /// A ladder step is truly acceptable when successful / sent >= this.
    pub acceptance: Option<f64>,
    /// One rule `p95<=t` per value: accepts ladder steps whose p95 wait <= t rounds.
    pub p95_rules_rounds: Vec<f64>,
    /// Adds the rule `throughput`: accepts the ladder steps before saturation.
    pub throughput_rule: bool,
    /// Recovery: windows whose mean goodput must reach the fraction (default 5).
    pub recovery_windows: u32,
    /// Recovery: the share of the goodput before the fault (default 0.9).
    pub recovery_fraction: f64,
}

/// `[analysis] error_budget`.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorBudget {
    /// The monthly error budget, in minutes.
    pub budget_minutes: f64,
    /// (minutes, times per month)
    pub incidents: Vec<(f64, f64)>,
}

/// `[policies.NAME]`: what a client does around each call it makes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientPolicy {
    /// The table's name (`none` for the built-in no-policy).
    pub name: String,
    /// Per attempt (the call's own cap still applies).
    pub timeout: Option<Ticks>,
    /// `retry`: attempts after a failure.
    pub retry: Option<Retry>,
    /// `hedge`: copies while no answer has come (never with `retry`).
    pub hedge: Option<Hedge>,
    /// `breaker`: a circuit breaker per policy state.
    pub breaker: Option<Breaker>,
    /// `throttle`: client-side adaptive throttling per policy state.
    pub throttle: Option<Throttle>,
}

/// Attempt outcomes a retry may follow, as a bit set of [`AttemptOutcome`]s.
pub type OutcomeSet = u8;

/// How one attempt ended (the `calls` table counts attempts by these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Answered successfully.
    Ok,
    /// Answered with a failure (a dependency's error, a service's dropped request).
    Error,
    /// No answer within the attempt's deadline.
    Timeout,
    /// Refused by a full server (503).
    Shed,
    /// Refused by a limiter (429).
    Rejected,
    /// Given up by the policy (a hedge loser) or from above.
    Cancelled,
}

impl AttemptOutcome {
    /// Names as written in `retry.on` and in the `calls` table's columns.
    pub const NAMES: [(&'static str, AttemptOutcome); 6] = [
        ("ok", AttemptOutcome::Ok),
        ("error", AttemptOutcome::Error),
        ("timeout", AttemptOutcome::Timeout),
        ("shed", AttemptOutcome::Shed),
        ("rejected", AttemptOutcome::Rejected),
        ("cancelled", AttemptOutcome::Cancelled),
    ];

    /// This outcome's bit in an [`OutcomeSet`].
    pub fn bit(self) -> OutcomeSet {
        1 << (self as u8)
    }
}

/// `retry = { max_attempts, on, backoff, budget }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    /// Attempts in all, the first included (gRPC maxAttempts), >= 1.
    pub max_attempts: u32,
    /// The attempt outcomes that are retried.
    pub on: OutcomeSet,
    /// The wait before each retry.
    pub backoff: Backoff,
    /// What may refuse a retry (None: nothing).
    pub budget: Option<RetryBudget>,
}

/// `backoff.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackoffKind {
    /// No wait.
    None,
    /// `base_ms` every time.
    Constant,
    /// `min(cap, base x 2^(k-1))`.
    Exponential,
    /// U(0, exponential).
    FullJitter,
    /// exponential / 2 + U(0, exponential / 2).
    EqualJitter,
    /// min(cap, U(base, 3 x previous sleep)).
    Decorrelated,
}

impl BackoffKind {
    /// Names as written in scenario files.
    pub const NAMES: [(&'static str, BackoffKind); 6] = [
        ("none", BackoffKind::None),
        ("constant", BackoffKind::Constant),
        ("exponential", BackoffKind::Exponential),
        ("full_jitter", BackoffKind::FullJitter),
        ("equal_jitter", BackoffKind::EqualJitter),
        ("decorrelated", BackoffKind::Decorrelated),
    ];
}

/// The wait before a retry; milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// How the wait is computed.
    pub kind: BackoffKind,
    /// `base_ms`, >= 0.
    pub base_ms: f64,
    /// `cap_ms`, >= `base_ms`.
    pub cap_ms: f64,
}

/// A retry budget, one per policy state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RetryBudget {
    /// Retries / first tries over the last `window` below `max`.
    Ratio {
        /// In [0, 1].
        max: f64,
        /// The span the counts cover.
        window: Ticks,
    },
    /// Tokens: full at start, `deposit` per first try, a retry needs and spends `cost`.
    TokenBucket {
        /// Tokens at most (and at start).
        capacity: f64,
        /// Tokens each first try adds.
        deposit: f64,
        /// Tokens a retry needs and spends.
        cost: f64,
    },
    /// Brooker's retry breaker: no retries while failed attempts / first tries > threshold.
    Breaker {
        /// The failure share above which retries stop.
        threshold: f64,
    },
}

/// `hedge = { delay_ms, max_attempts, cancel_losers }`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hedge {
    /// The wait before each further copy.
    pub delay: Ticks,
    /// Copies in all, the first included.
    pub max_attempts: u32,
    /// Whether the copies that lose are cancelled (else they run on as waste).
    pub cancel_losers: bool,
}

/// What a breaker counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BreakerWindow {
    /// The last `n` calls.
    Count(u32),
    /// Calls that ended within the last span.
    Time(Ticks),
}

/// `breaker = { window, min_calls, failure_rate, open_ms, half_open_calls }`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Breaker {
    /// The calls counted.
    pub window: BreakerWindow,
    /// Calls counted before it may open.
    pub min_calls: u32,
    /// The failure share at which it opens, in (0, 1].
    pub failure_rate: f64,
    /// How long it stays open.
    pub open: Ticks,
    /// Trial calls once `open` has passed.
    pub half_open_calls: u32,
}

/// `throttle = { k, window_ms }` (SRE book, "Handling Overload").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throttle {
    /// The multiplier K of the accepts.
    pub k: f64,
    /// The span the counts cover.
    pub window: Ticks,
}

#[cfg(test)]
mod tests {
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    /// A one-service model: a plan calling a store, with `extra` TOML.
    fn model(cancellation: bool, extra: &str, policy: &str) -> crate::model::Model {
        let text = format!(
            r#"
[scenario]
name = "cancels work"
[services.api]
routes = ["/x"]
handler = {{ type = "plan", budget = 100, cancellation = {cancellation}, branches = [{{ name = "b", calls = [{{ to = "store"{policy} }}] }}] }}
[dependencies.store]
latency = {{ constant = 10 }}
[workload]
type = "sequence"
requests = 1
{extra}
"#
        );
        let s = load_str(&text, Path::new("test.toml"), &LoadOptions::default())
            .expect("valid scenario");
        s.rows[0].model.clone()
    }

    /// Each root of a cancellation makes the model one that cancels work, and
    /// a model with none of them is not (its completions are posted unkeyed).
    #[test]
    fn cancels_work_names_every_root_of_a_cancellation() {
        assert!(!model(false, "", "").cancels_work());
        assert!(model(true, "", "").cancels_work());
        let down = "[[faults]]\ntarget = \"store\"\nkind = \"down\"\nat_ms = 5\nfor_ms = 5";
        assert!(model(false, down, "").cancels_work());
        let slow = "[[faults]]\ntarget = \"store\"\nkind = \"latency_factor\"\nat_ms = 5\nfor_ms = 5\nvalue = 2.0";
        assert!(!model(false, slow, "").cancels_work());
        let hedge = |cancel: bool| {
            format!(
                "[policies.h]\nhedge = {{ delay_ms = 5, max_attempts = 2, cancel_losers = {cancel} }}"
            )
        };
        let uses = r#", call_policy = "h""#;
        assert!(model(false, &hedge(true), uses).cancels_work());
        assert!(!model(false, &hedge(false), uses).cancels_work());
    }
}
