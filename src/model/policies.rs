//! Client policies (`[policies.NAME]`): retries, backoff, retry budgets, hedging,
//! circuit breakers and throttles.

use crate::engine::Ticks;

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
    pub const fn bit(self) -> OutcomeSet {
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
    /// Envoy's `retry_back_off`: U(0, min((2^k - 1) x base, cap)).
    Envoy,
}

impl BackoffKind {
    /// Names as written in scenario files.
    pub const NAMES: [(&'static str, BackoffKind); 7] = [
        ("none", BackoffKind::None),
        ("constant", BackoffKind::Constant),
        ("exponential", BackoffKind::Exponential),
        ("full_jitter", BackoffKind::FullJitter),
        ("equal_jitter", BackoffKind::EqualJitter),
        ("decorrelated", BackoffKind::Decorrelated),
        ("envoy", BackoffKind::Envoy),
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
    /// `multiplier` (> 0; 2 unless given): expo = min(cap, base x multiplier^(k-1)).
    pub multiplier: f64,
    /// `jitter_factor` in [0, 1) (0 unless given; `constant` and `exponential`
    /// only): the wait w is drawn from U(w (1 - f), w (1 + f)).
    pub jitter_factor: f64,
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
    /// gRPC retry throttling (gRFC A6 `retryThrottling`), in thousandths of a
    /// token as gRPC keeps them: full at start, a counted failed attempt takes
    /// 1000, a success adds `ratio_milli`; no retry or hedge while the tokens
    /// are at or below half of `max_milli`.
    GrpcThrottle {
        /// `max_tokens` x 1000, in (0, 10^6].
        max_milli: u32,
        /// `token_ratio` x 1000 (decimals past the third dropped), >= 1.
        ratio_milli: u32,
    },
    /// Finagle's `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)`: a
    /// windowed counter of deposits (one per call) and withdrawals (one per
    /// retry) over `ttl`, plus a fixed reserve.
    Finagle {
        /// `percent` of the calls may be retried, in [0, 100000].
        percent: f64,
        /// Retries per second the reserve allows on top.
        min_retries_per_s: u32,
        /// How long a deposit or a withdrawal counts, 1 to 60 s.
        ttl: Ticks,
        /// `ttl` in whole seconds (the reserve's multiplier, as Finagle's `inSeconds`).
        ttl_s: u32,
    },
    /// The AWS SDKs' standard retry quota: a retry needs and spends its cost.
    AwsStandard {
        /// Tokens at most (and at start).
        quota: u32,
        /// What a retry costs.
        retry_cost: u32,
        /// What a retry after a timed-out attempt costs.
        timeout_cost: u32,
        /// What a call's first try answered ok adds back.
        no_retry_increment: u32,
    },
    /// Envoy's `retry_budget`: retries in flight at once at most
    /// max(`min_retry_concurrency`, `percent` % of the attempts in flight).
    Envoy {
        /// Percent of the attempts in flight, in [0, 100].
        percent: f64,
        /// Retries in flight always allowed.
        min_retry_concurrency: u32,
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
    /// The failures of a copy that send the next copy at once (gRPC's
    /// `nonFatalStatusCodes`); any other failure of a copy ends the call with
    /// it, the other copies stopped.
    pub non_fatal: OutcomeSet,
    /// What may refuse a further copy (gRPC retry throttling only).
    pub budget: Option<RetryBudget>,
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
