//! The validated model: names resolved to indices, times in ticks, every value
//! checked. The engine and the analyses read only this.

use crate::engine::Ticks;

pub type ServiceId = usize;
pub type DependencyId = usize;
pub type LimiterId = usize;
pub type RouteId = usize;

#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub name: String,
    pub about: Option<String>,
    /// The master seed of every random stream of a run, as decided by
    /// [`crate::scenario::seed`]: the only seed anything downstream reads.
    pub seed: u64,
    pub limits: RunLimits,
    pub slo: Slo,
    pub gateway: Option<Gateway>,
    pub services: Vec<Service>,
    /// Every route in declaration order, with the service that owns it.
    pub routes: Vec<Route>,
    pub dependencies: Vec<Dependency>,
    pub limiters: Vec<Limiter>,
    pub workload: Workload,
    pub analysis: Analysis,
    pub montecarlo: MonteCarlo,
    /// Files the latency models were read from (`empirical = { file = .. }`), as
    /// written (relative to the scenario file), each once, in the order read.
    pub latency_files: Vec<LatencyFile>,
    /// `[thresholds]`, in file order; metric names are checked by whoever knows
    /// the metrics (the run or the sweep).
    pub thresholds: Vec<Threshold>,
    /// `[[faults]]`, in file order (index = the `faults.N` of key paths).
    pub faults: Vec<Fault>,
    /// `scenario.warmup_ms`: requests sent before it are left out of whole-run
    /// statistics (the time series still shows them).
    pub warmup: Ticks,
    /// `[output] window_ms`: the time series' window (None: no time series).
    pub window: Option<Ticks>,
}

impl Model {
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
    pub metric: String,
    pub op: Comparison,
    pub value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

impl Comparison {
    pub const ALL: [(&'static str, Comparison); 4] = [
        ("<=", Comparison::LessOrEqual),
        (">=", Comparison::GreaterOrEqual),
        ("<", Comparison::Less),
        (">", Comparison::Greater),
    ];

    pub fn symbol(self) -> &'static str {
        Comparison::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("?", |(s, _)| s)
    }

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
            crate::report::format_number(self.value)
        )
    }
}

/// `[montecarlo]`: the defaults `resim sweep` runs with (its flags override them).
#[derive(Debug, Clone, PartialEq)]
pub struct MonteCarlo {
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
    pub max_events: u64,
    pub max_sim_time: Ticks,
    /// Requests in flight at once: bounds the memory of a flood.
    pub max_in_flight: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Slo {
    pub threshold_ms: Option<f64>,
    pub peak_read_rps: Option<f64>,
    pub peak_edge_rps: Option<f64>,
    pub response_bytes: Option<f64>,
    pub deadline_field_bytes: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Gateway {
    pub share: Ticks,
    pub share_ms: f64,
    pub rules: Vec<GatewayRule>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GatewayRule {
    pub prefix: String,
    pub limiters: Vec<LimiterId>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub path: String,
    /// The service that owns the route; `None` for a route a workload names on
    /// purpose that no service owns (answered 404, counted by no limiter).
    pub service: Option<ServiceId>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    pub name: String,
    pub routes: Vec<RouteId>,
    pub middleware: Vec<LimiterId>,
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

#[derive(Debug, Clone, PartialEq)]
pub enum Handler {
    /// Answers at once.
    Respond,
    Server(Server),
    Plan(Plan),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub slots: u32,
    pub queue: u32,
    pub service: Latency,
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
    pub target: Ticks,
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
        service: ServiceId,
        replica: Option<u32>,
    },
    Dependency(DependencyId),
    /// The (open) workload.
    Workload,
}

/// One `[[faults]]` entry: active on the half-open window `[at, until)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fault {
    pub kind: FaultKind,
    pub target: FaultTarget,
    pub at: Ticks,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Greedy,
    Equal,
    Weighted,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Greedy => "greedy",
            Policy::Equal => "equal",
            Policy::Weighted => "weighted",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailure {
    Continue,
    Abort,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What the budget R is: fixed (`slo` or a number: `budget` below), the
    /// request's deadline, or none.
    pub budget_kind: BudgetKind,
    /// A fixed budget (`slo` or a number); 0 for the other kinds.
    pub budget: Ticks,
    pub budget_ms: f64,
    pub policy: Policy,
    pub cancellation: bool,
    pub on_failure: OnFailure,
    pub branches: Vec<Branch>,
}

impl Plan {
    /// Hops a propagated deadline travels on: one per branch plus one per call.
    pub fn subcalls(&self) -> usize {
        self.branches.len() + self.branches.iter().map(|b| b.calls.len()).sum::<usize>()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    pub name: String,
    pub calls: Vec<Call>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub target: Target,
    /// The most this call may take, from the split policy (before the
    /// `R - time spent` cap applied at run time), for a fixed budget.
    pub share: Ticks,
    pub share_ms: f64,
    /// This call's part of the budget (greedy 1, equal 1/k, weighted by medians):
    /// the share of a budget known only at run time (`deadline`).
    pub fraction: f64,
    /// The call's own cap (`timeout_ms` of an inline call), retries included.
    pub timeout: Option<Ticks>,
    /// The client policy named by `call_policy` (None: no policy, or `"none"`).
    pub call_policy: Option<String>,
}

/// What a call is made to: one namespace of services and dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Dependency(DependencyId),
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

#[derive(Debug, Clone, PartialEq)]
pub struct Dependency {
    pub name: String,
    pub median_ms: Option<f64>,
    pub latency: Latency,
    /// Concurrent calls it works on; 0 = unlimited. Beyond it calls wait FIFO.
    pub slots: u32,
}

/// A latency model; values in ticks, distributions in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Latency {
    Constant(Ticks),
    Cycle {
        values: Vec<Ticks>,
        random_start: bool,
    },
    Empirical(Vec<Ticks>),
    Exponential {
        mean_ms: f64,
    },
    Uniform {
        min_ms: f64,
        max_ms: f64,
    },
    /// exp(mu + sigma Z), in milliseconds.
    LogNormal {
        mu: f64,
        sigma: f64,
    },
    /// Parts with cumulative weights normalised to end at 1.
    Mixture(Vec<(f64, Latency)>),
    /// Gamma with shape k and scale theta (ms): mean k theta. Erlang-k is an
    /// integer shape.
    Gamma {
        shape: f64,
        scale_ms: f64,
    },
    /// Weibull with shape k and scale lambda (ms).
    Weibull {
        shape: f64,
        scale_ms: f64,
    },
    /// Pareto type I with shape alpha > 1 and minimum x_m (ms).
    Pareto {
        shape: f64,
        min_ms: f64,
    },
}

impl Latency {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    FixedWindow,
    SlidingLog,
    SlidingCounter,
    TokenBucket,
    Gcra,
}

impl Algorithm {
    pub const NAMES: [&'static str; 5] = [
        "fixed-window",
        "sliding-log",
        "sliding-counter",
        "token-bucket",
        "gcra",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimiterMode {
    Reject,
    Throttle,
}

impl LimiterMode {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refill {
    Continuous,
    Discrete,
}

/// A request field a limiter key can be made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Client,
    Member,
    Route,
    Access,
}

impl Field {
    pub const NAMES: [&'static str; 4] = ["client", "member", "route", "access"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Limiter {
    pub name: String,
    pub algorithm: Algorithm,
    pub key: Vec<Field>,
    pub limit: u64,
    pub window: Ticks,
    pub mode: LimiterMode,
    pub max_delay: Ticks,
    pub refill: Refill,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Gateway,
    Direct,
}

impl Access {
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
    pub route: RouteId,
    pub access: Access,
    pub client: String,
    pub member: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    Poisson,
    Uniform,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// One request at a time; the next when the previous has its answer.
    Sequence {
        requests: u64,
        template: RequestTemplate,
    },
    /// Open-loop arrivals at a rate.
    Open {
        rate_rps: f64,
        requests: Option<u64>,
        duration: Option<Ticks>,
        arrivals: Arrivals,
        timeout: Option<Ticks>,
        template: RequestTemplate,
    },
    Ladder(Ladder),
    Script {
        groups: Vec<ScriptGroup>,
        access: Access,
    },
    /// One request for every (route, access) pair, routes in declaration order.
    Probe {
        access: Vec<Access>,
        client: String,
        member: String,
        /// Routes probed: ids 0..routes (every route of the model, owned first).
        routes: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    pub steps: Vec<u64>,
    pub waves: u64,
    pub timeout: Ticks,
    pub timeout_ms: f64,
    /// `None`: closed waves. `Some`: open arrivals at step x rate for hold.
    pub open: Option<OpenLadder>,
    /// Closed waves: requests leave at uniform random offsets in [0, jitter).
    pub jitter: Ticks,
    pub template: RequestTemplate,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenLadder {
    pub rate_per_step_rps: f64,
    pub hold: Ticks,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScriptGroup {
    pub client: String,
    pub member: String,
    pub count: u64,
    pub routes: Vec<RouteId>,
    pub gap: Ticks,
    /// Not before this time (the group's first request).
    pub at: Option<Ticks>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Analysis {
    pub error_budget: Option<ErrorBudget>,
    pub active_members: Option<u64>,
    pub acceptance: Option<f64>,
    pub p95_rules_rounds: Vec<f64>,
    pub throughput_rule: bool,
    /// Recovery: windows whose mean goodput must reach the fraction (default 5).
    pub recovery_windows: u32,
    /// Recovery: the share of the goodput before the fault (default 0.9).
    pub recovery_fraction: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ErrorBudget {
    pub budget_minutes: f64,
    /// (minutes, times per month)
    pub incidents: Vec<(f64, f64)>,
}
