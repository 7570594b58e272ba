//! `[limiters.NAME]`: rate and concurrency limiters, their algorithms and keys.

use crate::engine::Ticks;

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

/// Where a limiter keeps its state (`scope`): one per replica of the service
/// whose middleware lists it, or one for the whole service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One state per replica, met after the balancer picked the replica (a
    /// sidecar's filter, a server interceptor, a per-pod bulkhead).
    Replica,
    /// One state shared by every replica, met before the pick (a gateway).
    Service,
}

impl Scope {
    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Replica => "replica",
            Scope::Service => "service",
        }
    }
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
    /// `kind = "concurrency"`: a limit on the requests in flight (`None`: a rate
    /// limiter, `algorithm` above).
    pub concurrency: Option<Box<Concurrency>>,
    /// One state per replica or one per service (`scope`): `Service` for a
    /// limiter a gateway rule lists.
    pub scope: Scope,
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

/// `kind = "concurrency"`: a limit on the requests in flight, fixed or adapted to
/// the latencies and drops the limiter hears (`algorithm`).
#[derive(Debug, Clone, PartialEq)]
pub struct Concurrency {
    /// The algorithm and its parameters.
    pub algorithm: ConcurrencyAlgorithm,
    /// Which ends of a request are latency samples and which are drops
    /// (`samples`; by default the integration of the algorithm's library).
    pub samples: Samples,
}

/// Which ends of a request a concurrency algorithm learns from (`samples`),
/// as the integration that feeds the algorithm in its own library does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Samples {
    /// Netflix's gRPC server interceptor (`ConcurrencyLimitServerInterceptor`):
    /// a request given up on (the call cancelled, `DEADLINE_EXCEEDED`) is a
    /// drop, every other end (any status, errors included) a sample.
    GrpcServer,
    /// Netflix's gRPC client interceptor (`ConcurrencyLimitClientInterceptor`):
    /// an OK answer is a sample, `UNAVAILABLE` (a shed, a limiter's
    /// rejection) a drop, any other end nothing.
    GrpcClient,
    /// Envoy's adaptive concurrency filter: every response is a sample
    /// (errors included); a request given up on before its response is none.
    EnvoyFilter,
}

impl Samples {
    /// Names as written in scenario files.
    pub const NAMES: [(&'static str, Samples); 3] = [
        ("grpc_server", Samples::GrpcServer),
        ("grpc_client", Samples::GrpcClient),
        ("envoy_filter", Samples::EnvoyFilter),
    ];

    /// The default of `algorithm`: Envoy's filter for Envoy's controller, the
    /// gRPC server interceptor for Netflix's algorithms.
    pub fn default_for(algorithm: &ConcurrencyAlgorithm) -> Samples {
        match algorithm {
            ConcurrencyAlgorithm::EnvoyGradient { .. } => Samples::EnvoyFilter,
            _ => Samples::GrpcServer,
        }
    }
}

/// A concurrency limiter's algorithm, with its library's parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum ConcurrencyAlgorithm {
    /// `fixed`: at most `limit` in flight.
    Fixed {
        /// Requests in flight at most.
        limit: u64,
    },
    /// `aimd` (Netflix AIMDLimit): +1 per answer in time while at least half the
    /// limit is in flight, x `backoff_ratio` on a drop or an answer slower than
    /// `timeout`.
    Aimd {
        /// The starting limit.
        initial: u64,
        /// The lowest limit.
        min: u64,
        /// The highest limit.
        max: u64,
        /// The factor on a drop or timeout.
        backoff_ratio: f64,
        /// An answer slower than this counts as a drop.
        timeout: crate::engine::Ticks,
    },
    /// `vegas` (Netflix VegasLimit): the queue estimate L x (1 - rtt_noload / rtt)
    /// against thresholds of log10 L.
    Vegas {
        /// The starting limit.
        initial: u64,
        /// The highest limit.
        max: u64,
        /// The new limit's weight against the old.
        smoothing: f64,
        /// Samples between resets of the no-load RTT, per unit of limit (x a random 0.5..1).
        probe_multiplier: u64,
    },
    /// `gradient2` (Netflix Gradient2Limit): a short RTT against a long
    /// exponential average.
    Gradient2 {
        /// The starting limit.
        initial: u64,
        /// The lowest limit.
        min: u64,
        /// The highest limit.
        max: u64,
        /// The new limit's weight against the old.
        smoothing: f64,
        /// How much slower than the long RTT the short one may be before the limit falls.
        tolerance: f64,
        /// Added to the limit per update.
        queue_size: u64,
        /// Samples of the long RTT's exponential average.
        long_window: u64,
    },
    /// `envoy_gradient` (Envoy's adaptive concurrency filter): min RTT x (1 +
    /// buffer) / the window's p50, per update interval.
    EnvoyGradient {
        /// The sample window (`concurrency_update_interval_ms`).
        update_interval: crate::engine::Ticks,
        /// Time between min RTT measurements (`min_rtt_calc_interval_ms`).
        min_rtt_interval: crate::engine::Ticks,
        /// Samples of a min RTT measurement.
        request_count: u64,
        /// The limit while the min RTT is measured, and the lowest.
        min_concurrency: u64,
        /// The random extra on the min RTT interval, a share of it (0.15).
        jitter: f64,
        /// The min RTT's buffer, a share of it (0.25).
        buffer: f64,
        /// The highest limit.
        max: u64,
    },
}

impl ConcurrencyAlgorithm {
    /// Names as written in scenario files.
    pub const NAMES: [&'static str; 5] = ["fixed", "aimd", "vegas", "gradient2", "envoy_gradient"];

    /// The name as written in scenario files.
    pub fn name(&self) -> &'static str {
        Self::NAMES[match self {
            ConcurrencyAlgorithm::Fixed { .. } => 0,
            ConcurrencyAlgorithm::Aimd { .. } => 1,
            ConcurrencyAlgorithm::Vegas { .. } => 2,
            ConcurrencyAlgorithm::Gradient2 { .. } => 3,
            ConcurrencyAlgorithm::EnvoyGradient { .. } => 4,
        }]
    }

    /// The highest limit it can reach (fixed: its limit).
    pub fn max_limit(&self) -> u64 {
        match *self {
            ConcurrencyAlgorithm::Fixed { limit } => limit,
            ConcurrencyAlgorithm::Aimd { max, .. }
            | ConcurrencyAlgorithm::Vegas { max, .. }
            | ConcurrencyAlgorithm::Gradient2 { max, .. }
            | ConcurrencyAlgorithm::EnvoyGradient { max, .. } => max,
        }
    }
}
