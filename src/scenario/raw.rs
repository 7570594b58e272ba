//! The scenario file exactly as written: serde structs, every table closed to
//! unknown keys. Nothing is checked here beyond types; `validate` turns these into
//! the model.

use indexmap::IndexMap;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub scenario: RawMeta,
    #[serde(default)]
    pub slo: RawSlo,
    pub gateway: Option<RawGateway>,
    #[serde(default)]
    pub services: IndexMap<String, RawService>,
    #[serde(default)]
    pub dependencies: IndexMap<String, RawDependency>,
    #[serde(default)]
    pub limiters: IndexMap<String, RawLimiter>,
    /// The shorthand for one workload named `main`.
    pub workload: Option<RawWorkload>,
    /// Several workloads on one clock (not together with `workload`).
    #[serde(default)]
    pub workloads: IndexMap<String, RawWorkload>,
    #[serde(default)]
    pub variants: IndexMap<String, toml::Table>,
    #[serde(default)]
    pub compare: IndexMap<String, toml::Value>,
    #[serde(default)]
    pub analysis: RawAnalysis,
    pub montecarlo: Option<RawMonteCarlo>,
    /// `"table.column" = "< 300"`: conditions that make the run a CI check.
    #[serde(default)]
    pub thresholds: IndexMap<String, String>,
    /// `[policies.NAME]`: client policies that calls and workloads name.
    #[serde(default)]
    pub policies: IndexMap<String, RawPolicy>,
    /// `[[faults]]`: changes to a target over a window of time.
    #[serde(default)]
    pub faults: Vec<RawFault>,
    /// `[output]`: extra result files (the time series).
    pub output: Option<RawOutput>,
    /// `[tune]`: what `resim tune` searches when its flags do not say. Here
    /// for its keys and types to be checked with the file's; the tune command
    /// reads the table itself, after `--set`.
    #[allow(dead_code)]
    pub tune: Option<RawTune>,
}

/// `[tune]`: the defaults of `resim tune`'s flags, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTune {
    /// `--vary` lines: `KEY=LO..HI` or `KEY=[v1, v2]`.
    #[serde(default)]
    pub vary: Vec<String>,
    pub maximize: Option<String>,
    pub minimize: Option<String>,
    /// `--constraint` lines: `METRIC OP LIMIT`.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// `"worst"` or `"mean"`.
    pub over: Option<String>,
    pub replications: Option<u64>,
    pub max_replications: Option<u64>,
    pub budget: Option<u64>,
    /// `--write-back` files, relative to the scenario's folder.
    #[serde(default)]
    pub write_back: Vec<String>,
}

/// One `[[faults]]` entry: the table itself, read against the fault kinds'
/// declarations (`crate::kinds::fault`).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct RawFault(pub toml::Table);

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutput {
    pub window_ms: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCodel {
    /// Both are required: checked in validation, which names the missing key
    /// (serde names only the handler around it).
    pub target_ms: Option<f64>,
    pub interval_ms: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMeta {
    pub name: String,
    pub about: Option<String>,
    pub seed: Option<u64>,
    /// Runaway protection: the most events one run may process.
    pub max_events: Option<u64>,
    /// Runaway protection: the latest virtual time one run may reach.
    pub max_sim_time_ms: Option<f64>,
    /// Runaway protection: the most requests in flight at once (memory).
    pub max_in_flight: Option<u64>,
    /// Runaway protection: the most events at one instant of virtual time.
    pub max_events_per_instant: Option<u64>,
    /// Requests sent before this are left out of whole-run statistics.
    pub warmup_ms: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlo {
    pub threshold_ms: Option<f64>,
    pub peak_read_rps: Option<f64>,
    pub peak_edge_rps: Option<f64>,
    pub response_bytes: Option<f64>,
    pub deadline_field_bytes: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGateway {
    pub share_ms: Option<f64>,
    #[serde(default)]
    pub rules: Vec<RawRule>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub prefix: String,
    #[serde(default)]
    pub limiters: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawService {
    #[serde(default)]
    pub routes: Vec<String>,
    #[serde(default)]
    pub middleware: Vec<String>,
    pub handler: Option<RawHandler>,
    /// Typical time of a call into the service, for a caller's weighted split.
    pub median_ms: Option<f64>,
    pub replicas: Option<i64>,
    pub balancer: Option<RawBalancer>,
    pub outlier_detection: Option<RawOutlier>,
    /// `[services.NAME.replica.K]`: one replica's own settings, K from 1.
    #[serde(default)]
    pub replica: IndexMap<String, RawReplica>,
}

/// `[services.NAME.replica.K]`: what replica K does unlike the others.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReplica {
    pub latency_factor: Option<f64>,
    pub latency_add_ms: Option<f64>,
    pub service: Option<RawLatency>,
    pub slots: Option<i64>,
}

/// `[services.NAME.outlier_detection]`: Envoy's consecutive-failure ejection.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutlier {
    pub consecutive_failures: Option<i64>,
    pub interval_ms: Option<f64>,
    pub base_ejection_ms: Option<f64>,
    pub max_ejection_pct: Option<f64>,
    pub max_ejection_ms: Option<f64>,
    pub always_eject_one_host: Option<bool>,
}

/// `balancer = "KIND"` or `balancer = { kind, ... }`: the shared keys
/// (`kinds::balance::SHARED`) and the kind's own, read against the kinds'
/// declarations in validation.
#[derive(Debug, Clone)]
pub enum RawBalancer {
    Kind(String),
    Table(toml::Table),
}

impl<'de> Deserialize<'de> for RawBalancer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawBalancer, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawBalancer;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                use crate::kinds::balance::{KINDS, SHARED};
                let mut keys: Vec<&str> = vec!["kind"];
                keys.extend(SHARED);
                for k in KINDS.iter().flat_map(|d| d.keys) {
                    if !keys.contains(&k.name) {
                        keys.push(k.name);
                    }
                }
                write!(f, "a balancer's kind, or a table {{ {} }}", keys.join(", "))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawBalancer, E> {
                Ok(RawBalancer::Kind(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<RawBalancer, A::Error> {
                toml::Table::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(RawBalancer::Table)
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(clippy::large_enum_variant)] // one per service, read once
pub enum RawHandler {
    Respond {},
    Server {
        slots: i64,
        queue: i64,
        service: RawLatency,
        #[serde(default)]
        abandon: bool,
        /// The plan keys: calls made after the service time, holding the slot.
        budget: Option<RawBudget>,
        policy: Option<String>,
        #[serde(default)]
        cancellation: bool,
        on_failure: Option<String>,
        branches: Option<Vec<RawBranch>>,
        /// "fifo" (default), "lifo" or "adaptive_lifo".
        order: Option<String>,
        codel: Option<RawCodel>,
    },
    Plan {
        budget: Option<RawBudget>,
        policy: Option<String>,
        #[serde(default)]
        cancellation: bool,
        on_failure: Option<String>,
        branches: Vec<RawBranch>,
    },
}

/// `budget = "slo" | "deadline" | "none"` or a number of milliseconds.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawBudget {
    Ms(f64),
    Named(String),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBranch {
    pub name: String,
    pub calls: Vec<RawCall>,
    /// Branches (by name, listed before it) it waits for.
    pub after: Option<Vec<String>>,
}

/// One call of a branch: a target's name, or `{ to, call_policy, timeout_ms,
/// probability }`.
#[derive(Debug, Clone)]
pub enum RawCall {
    Name(String),
    Table(RawCallTable),
}

impl RawCall {
    /// The name of the service or dependency called.
    pub fn to(&self) -> &str {
        match self {
            RawCall::Name(n) => n,
            RawCall::Table(t) => &t.to,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCallTable {
    pub to: String,
    pub call_policy: Option<String>,
    pub timeout_ms: Option<f64>,
    /// The chance that the call is made at all when its branch reaches it.
    pub probability: Option<f64>,
    /// false: the caller does not wait for the answer.
    pub wait: Option<bool>,
    /// Made only when this branch succeeded so far.
    pub if_ok: Option<String>,
}

/// A string or a table, so that an inline table keeps its own unknown-key errors
/// (an untagged enum would only say that nothing matched).
impl<'de> Deserialize<'de> for RawCall {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawCall, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawCall;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a service or dependency name, or a table { to, call_policy, timeout_ms, probability, wait, if_ok }",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawCall, E> {
                Ok(RawCall::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RawCall, A::Error> {
                RawCallTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(RawCall::Table)
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDependency {
    pub median_ms: Option<f64>,
    pub latency: RawLatency,
    pub slots: Option<i64>,
    /// The probability that a call fails with `error` after its latency.
    pub error_rate: Option<f64>,
    /// Instances, each with its own slots, latency draws and faults.
    pub replicas: Option<i64>,
    /// How a call picks its replica, as a service's `balancer`.
    pub balancer: Option<RawBalancer>,
    /// Ejection of failing replicas, as a service's `outlier_detection`.
    pub outlier_detection: Option<RawOutlier>,
}

/// A latency model: exactly one of the model keys is set (checked in validation).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLatency {
    pub constant: Option<f64>,
    pub cycle: Option<Vec<f64>>,
    /// For `cycle`: "first" (default) or "random".
    pub start: Option<String>,
    pub empirical: Option<RawEmpirical>,
    pub exponential: Option<RawExponential>,
    pub uniform: Option<RawUniform>,
    pub lognormal: Option<RawLogNormal>,
    pub mixture: Option<Vec<RawMixturePart>>,
    // boxed: rarely set, and they would double the size of every latency
    pub gamma: Option<Box<RawGamma>>,
    pub erlang: Option<Box<RawErlang>>,
    pub weibull: Option<Box<RawWeibull>>,
    pub pareto: Option<Box<RawPareto>>,
}

/// `empirical = [6, 7, 80]` or `empirical = { file = "x.csv", column = "ms" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a list of milliseconds, e.g. [6, 7, 80], or a file: { file = \"latencies.csv\", column = \"ms\" } (keys `file`, `column`, `fit_tail_above`)"
)]
pub enum RawEmpirical {
    Values(Vec<f64>),
    File(RawEmpiricalFile),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEmpiricalFile {
    /// A CSV file with a header line, relative to the scenario file.
    pub file: String,
    /// The column of milliseconds (default: the file's only column).
    pub column: Option<String>,
    /// Values above this quantile are drawn from a fitted tail.
    pub fit_tail_above: Option<f64>,
}

/// Gamma by its shape and either its mean or its scale.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGamma {
    pub shape: f64,
    pub mean_ms: Option<f64>,
    pub scale_ms: Option<f64>,
}

/// Erlang-k: the sum of k exponential phases, by the mean of the sum.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawErlang {
    pub k: i64,
    pub mean_ms: f64,
}

/// Weibull by shape and scale, or by two percentiles.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWeibull {
    pub shape: Option<f64>,
    pub scale_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

/// Pareto (type I) by shape and minimum, or by two percentiles.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPareto {
    pub shape: Option<f64>,
    pub min_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExponential {
    pub mean_ms: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUniform {
    pub min_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLogNormal {
    pub p50_ms: f64,
    pub p99_ms: Option<f64>,
    pub sigma: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMixturePart {
    pub weight: f64,
    pub model: RawLatency,
}

/// `[limiters.NAME]`: read by its kind's declarations
/// (`crate::kinds::rate`, `crate::kinds::concurrency`).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct RawLimiter(pub toml::Table);

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(clippy::large_enum_variant)] // a few per file, read once
pub enum RawWorkload {
    Sequence {
        requests: i64,
        start_ms: Option<f64>,
        route: Option<String>,
        access: Option<String>,
        client: Option<String>,
        member: Option<String>,
        call_policy: Option<String>,
    },
    Open {
        rate_rps: f64,
        requests: Option<i64>,
        duration_ms: Option<f64>,
        arrivals: Option<String>,
        timeout_ms: Option<f64>,
        /// Independent clients splitting the rate (default 1).
        clients: Option<i64>,
        start_ms: Option<f64>,
        route: Option<String>,
        access: Option<String>,
        client: Option<String>,
        member: Option<String>,
        call_policy: Option<String>,
    },
    /// A closed user population: each user sends, waits, thinks, sends again.
    Closed {
        users: i64,
        think_ms: Option<RawLatency>,
        requests: Option<i64>,
        duration_ms: Option<f64>,
        timeout_ms: Option<f64>,
        start_ms: Option<f64>,
        route: Option<String>,
        access: Option<String>,
        client: Option<String>,
        member: Option<String>,
        call_policy: Option<String>,
    },
    Ladder {
        steps: Vec<i64>,
        waves: Option<i64>,
        timeout_ms: f64,
        /// "closed" (default: waves) or "open" (a rate per step).
        arrivals: Option<String>,
        /// Open ladder: requests per second at each step is `step x rate_per_step_rps`.
        rate_per_step_rps: Option<f64>,
        /// Open ladder: how long each step holds its rate.
        hold_ms: Option<f64>,
        /// Closed ladder: each request of a wave leaves at a uniform random offset
        /// in [0, jitter_ms) after the wave starts (default 0: all at once).
        jitter_ms: Option<f64>,
        route: Option<String>,
        access: Option<String>,
        client: Option<String>,
        member: Option<String>,
    },
    Script {
        groups: Vec<RawGroup>,
        route: Option<String>,
        access: Option<String>,
        client: Option<String>,
        member: Option<String>,
        /// Routes no service owns that the groups may name (answered 404).
        unowned_routes: Option<Vec<String>>,
    },
    Probe {
        access: Option<Vec<String>>,
        client: Option<String>,
        member: Option<String>,
        /// Routes no service owns, probed after the owned ones (answered 404).
        unowned_routes: Option<Vec<String>>,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGroup {
    pub client: Option<String>,
    pub member: Option<String>,
    pub count: i64,
    /// Default: the workload's `route` (or the only route).
    #[serde(default)]
    pub routes: Vec<String>,
    /// Milliseconds between two requests of the group (default 0: back to back).
    pub gap_ms: Option<f64>,
    /// The group's first request is sent at this virtual time, or when the previous
    /// group is done if that is later (default: at once).
    pub at_ms: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAnalysis {
    pub error_budget: Option<RawErrorBudget>,
    pub active_members: Option<i64>,
    pub acceptance: Option<f64>,
    pub p95_rules_rounds: Option<Vec<f64>>,
    pub throughput_rule: Option<bool>,
    pub recovery_windows: Option<i64>,
    pub recovery_fraction: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawErrorBudget {
    pub budget_minutes: f64,
    pub incidents: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMonteCarlo {
    pub replications: Option<i64>,
    pub seed: Option<u64>,
    pub confidence: Option<f64>,
    /// Metric names (`outcomes.answered`) the printed sweep report shows.
    pub report: Option<Vec<String>>,
    /// `["policy=equal"]`: paired differences against these axis values.
    pub baseline: Option<Vec<String>>,
    /// The per-window metrics of the time series in the summary files too.
    pub windows: Option<bool>,
}

/// `[policies.NAME]`, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    pub timeout_ms: Option<f64>,
    pub retry: Option<RawRetry>,
    pub hedge: Option<RawHedge>,
    pub breaker: Option<RawBreaker>,
    pub throttle: Option<RawThrottle>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRetry {
    pub max_attempts: i64,
    pub on: Option<Vec<String>>,
    pub backoff: Option<RawBackoff>,
    pub budget: Option<RawRetryBudget>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBackoff {
    pub kind: String,
    pub base_ms: Option<f64>,
    pub cap_ms: Option<f64>,
    pub multiplier: Option<f64>,
    pub jitter_factor: Option<f64>,
}

/// A budget table as written: its kind and keys are read against the
/// kinds' declarations in validation (so that a misplaced key names the kind
/// it belongs to).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct RawRetryBudget(pub toml::Table);

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHedge {
    pub delay_ms: f64,
    pub max_attempts: Option<i64>,
    pub cancel_losers: Option<bool>,
    pub non_fatal: Option<Vec<String>>,
    pub budget: Option<RawRetryBudget>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBreaker {
    pub window: Option<RawBreakerWindow>,
    pub min_calls: Option<i64>,
    pub failure_rate: Option<f64>,
    pub open_ms: Option<f64>,
    pub half_open_calls: Option<i64>,
}

/// `{ count = 100 }` or `{ ms = 10000 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBreakerWindow {
    pub count: Option<i64>,
    pub ms: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawThrottle {
    pub k: Option<f64>,
    pub window_ms: Option<f64>,
}
