//! `[limiters.NAME]`: rate and concurrency limiters, their algorithms and keys.

use crate::engine::Ticks;

pub use crate::kinds::concurrency::{Concurrency, ConcurrencyAlgorithm, Samples};
pub use crate::kinds::rate::{LimiterMode, Overflow, Rate, RateAlgorithm, Refill};

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
    /// Request fields that make the bucket key; empty: one global bucket.
    pub key: Vec<Field>,
    /// How it decides: a rate or a concurrency limit.
    pub rule: LimiterRule,
    /// One state per replica or one per service (`scope`): `Service` for a
    /// limiter a gateway rule lists.
    pub scope: Scope,
}

/// A limiter's rule (`kind`).
#[derive(Debug, Clone, PartialEq)]
pub enum LimiterRule {
    /// `kind = "rate"`: requests let through per window.
    Rate(Rate),
    /// `kind = "concurrency"`: a limit on the requests in flight, fixed or
    /// adapted to the latencies and drops the limiter hears.
    Concurrency(Concurrency),
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

    /// A rate limiter's rule (None: a concurrency limiter).
    pub fn rate(&self) -> Option<&Rate> {
        match &self.rule {
            LimiterRule::Rate(r) => Some(r),
            LimiterRule::Concurrency(_) => None,
        }
    }

    /// A concurrency limiter's rule (None: a rate limiter).
    pub fn concurrency(&self) -> Option<&Concurrency> {
        match &self.rule {
            LimiterRule::Concurrency(c) => Some(c),
            LimiterRule::Rate(_) => None,
        }
    }

    /// The limit as one number: a rate limiter's per window, a concurrency
    /// limiter's highest.
    pub fn limit(&self) -> u64 {
        match &self.rule {
            LimiterRule::Rate(r) => r.limit,
            LimiterRule::Concurrency(c) => c.algorithm.max_limit(),
        }
    }

    /// The window of the bursts table's peak of requests let through: a
    /// rate limiter's own, one second for a concurrency limiter.
    pub fn peak_window(&self) -> Ticks {
        match &self.rule {
            LimiterRule::Rate(r) => r.window,
            LimiterRule::Concurrency(_) => Ticks::from_ms(1000.0),
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
