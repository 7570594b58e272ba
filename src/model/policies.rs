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

pub use crate::kinds::budget::RetryBudget;
pub use crate::kinds::outcome::{AttemptOutcome, OutcomeSet};

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
