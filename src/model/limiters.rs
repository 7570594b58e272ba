//! `[limiters.NAME]`: rate limiters, their algorithms and keys.

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
