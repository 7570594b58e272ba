//! Concurrency limits (`kind = "concurrency"`): a state per bucket key admits a
//! request while fewer than its limit are in flight and rejects it otherwise
//! (`Outcome::Rejected`, as a rate limiter's 429); it hears every admitted
//! request's end through [`Admission::on_done`], which frees its place and feeds
//! the algorithm a sample.
//!
//! What a request's end tells the algorithms ([`sample_of`]) is the
//! limiter's `samples` rule, as the integration that feeds each library:
//!
//! - `grpc_server` (Netflix's algorithms by default), Netflix's
//!   `ConcurrencyLimitServerInterceptor.interceptCall`: a call closed with
//!   `DEADLINE_EXCEEDED` or cancelled by its client is `onDropped`, a call
//!   closed with any other status (OK, errors, UNAVAILABLE) `onSuccess`.
//!   Here: `TimedOut` (its client or caller gave up, or its work was
//!   abandoned or cancelled) and `Dropped` (a plan's failed call or missed
//!   deadline) are drops; every other end (answered, an error, shed, a later
//!   limiter's rejection) is a latency sample.
//! - `grpc_client`, Netflix's `ConcurrencyLimitClientInterceptor`: a call
//!   closed OK is `onSuccess`, one closed `UNAVAILABLE` `onDropped`, any
//!   other status or a cancel `onIgnore`. Here: an answer is a latency
//!   sample; a shed (the server's 503) and a later limiter's rejection are
//!   drops; every other end (an error answer, given up, a plan's drop) tells
//!   nothing.
//! - `envoy_filter` (`envoy_gradient` by default), Envoy's
//!   `AdaptiveConcurrencyFilter`: every response whose encoding completes is
//!   a sample (`recordLatencySample`, errors included); a stream reset before
//!   it is cancelled (`cancelLatencySample`). Here: `TimedOut` tells nothing;
//!   every other end is a latency sample.
//!
//! The algorithms themselves are kinds (`crate::kinds::concurrency`, one
//! module each); this module is their side of the admission seam. [`track`]
//! keeps a limiter's limit and in-flight count over time for its tables.
//!
//! The in-flight count an algorithm is given with a sample is the count when the
//! request was let through, itself included, as Netflix's `AbstractLimiter`
//! takes it (`createListener`: `inFlight.incrementAndGet()` at acquire, passed
//! to `onSample` when the request ends). Envoy's controller is also given the
//! instant the request was let through, to leave out the requests let through
//! before its min RTT measurement began.

pub(super) mod track;

use super::admission::{Admission, Decision};
use crate::engine::{Stream, Ticks};
use crate::kinds::concurrency::{AlgorithmState, Done, Sample};
use crate::model::{ConcurrencyAlgorithm, Limiter, Samples};
use crate::sim::vocab::Outcome;

/// The sample of a request that ended with `outcome` after `latency`, under
/// the limiter's `samples` rule (see the module docs).
pub(super) fn sample_of(outcome: Outcome, latency: Ticks, rule: Samples) -> Sample {
    match (rule, outcome) {
        (Samples::GrpcClient, Outcome::Answered) => Sample::Answer(latency),
        (Samples::GrpcClient, Outcome::Shed | Outcome::Rejected(_)) => Sample::Drop(latency),
        (Samples::GrpcClient, _) => Sample::Ignore,
        (Samples::GrpcServer, Outcome::TimedOut | Outcome::Dropped) => Sample::Drop(latency),
        (Samples::EnvoyFilter, Outcome::TimedOut) => Sample::Ignore,
        (
            _,
            Outcome::Answered
            | Outcome::Dropped
            | Outcome::Error
            | Outcome::Shed
            | Outcome::Rejected(_)
            | Outcome::Refused
            | Outcome::NotFound,
        ) => Sample::Answer(latency),
    }
}

/// One bucket key's concurrency limit.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit {
    in_flight: u64,
    /// The estimated limit; the limit in force is its whole part (Netflix's
    /// `(int) estimatedLimit`).
    limit: f64,
    state: AlgorithmState,
}

impl ConcurrencyLimit {
    /// A fresh state for `alg`; `rng` gives the random stream of the algorithms
    /// that draw (vegas, envoy_gradient).
    pub(super) fn new(alg: &ConcurrencyAlgorithm, rng: impl FnOnce() -> Stream) -> Self {
        let (limit, state) = AlgorithmState::new(alg, rng);
        ConcurrencyLimit {
            in_flight: 0,
            limit: limit as f64,
            state,
        }
    }

    /// The limit in force.
    pub fn limit(&self) -> u64 {
        self.limit as u64
    }

    /// Requests let through and not yet done.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The algorithm's own state, for tests.
    #[cfg(test)]
    pub(super) fn state(&self) -> &AlgorithmState {
        &self.state
    }
}

impl Admission for ConcurrencyLimit {
    fn try_admit(&mut self, _limiter: &Limiter, now: Ticks) -> Decision {
        self.state.catch_up(&mut self.limit, now);
        if self.in_flight < self.limit() {
            self.in_flight += 1;
            Decision::Pass
        } else {
            Decision::Reject
        }
    }

    fn on_done(
        &mut self,
        limiter: &Limiter,
        now: Ticks,
        latency: Ticks,
        outcome: Outcome,
        started_with: u32,
    ) {
        let Some(c) = limiter.concurrency() else {
            return;
        };
        self.state.catch_up(&mut self.limit, now);
        self.in_flight = self.in_flight.saturating_sub(1);
        let sample = sample_of(outcome, latency, c.samples);
        if sample == Sample::Ignore {
            return;
        }
        // Netflix's listener passes the count taken when the request was let
        // through (AbstractLimiter.createListener)
        let done = Done {
            in_flight: u64::from(started_with),
            started: now.saturating_sub(latency),
            now,
        };
        self.state.sample(&mut self.limit, sample, done);
    }
}

#[cfg(test)]
mod tests;
