//! Concurrency limits (`kind = "concurrency"`): a state per bucket key admits a
//! request while fewer than its limit are in flight and rejects it otherwise
//! (`Outcome::Rejected`, as a rate limiter's 429); it hears every admitted
//! request's end through [`Admission::on_done`], which frees its place and feeds
//! the algorithm a sample.
//!
//! What a request's end tells the algorithms ([`Sample::of`]) is the
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
//! One file per adaptive algorithm: [`aimd`], [`vegas`], [`gradient2`],
//! [`envoy`]; `fixed` needs none. [`track`] keeps a limiter's limit and
//! in-flight count over time for its tables.
//!
//! The in-flight count an algorithm is given with a sample is the count when the
//! request was let through, itself included, as Netflix's `AbstractLimiter`
//! takes it (`createListener`: `inFlight.incrementAndGet()` at acquire, passed
//! to `onSample` when the request ends). Envoy's controller is also given the
//! instant the request was let through, to leave out the requests let through
//! before its min RTT measurement began.

mod aimd;
mod envoy;
mod gradient2;
pub(super) mod track;
mod vegas;

use super::admission::{Admission, Decision};
use crate::engine::{Stream, Ticks};
use crate::model::{Concurrency, ConcurrencyAlgorithm, Limiter, Samples};
use crate::sim::vocab::Outcome;

/// What one request's end tells a concurrency algorithm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Sample {
    /// A latency sample (Netflix's `onSuccess`, Envoy's
    /// `recordLatencySample`), `latency` after it was let through.
    Answer(Ticks),
    /// A drop (Netflix's `onDropped`), after this latency.
    Drop(Ticks),
    /// Tells nothing (Envoy's `cancelLatencySample`).
    Ignore,
}

impl Sample {
    /// The sample of a request that ended with `outcome` after `latency`,
    /// under the limiter's `samples` rule (see the module docs).
    pub(super) fn of(outcome: Outcome, latency: Ticks, rule: Samples) -> Sample {
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
}

/// The algorithm's own state.
#[derive(Debug, Clone)]
enum State {
    Fixed,
    Aimd,
    Vegas(Box<vegas::Vegas>),
    Gradient2(gradient2::Gradient2),
    Envoy(Box<envoy::Envoy>),
}

/// One bucket key's concurrency limit.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit {
    in_flight: u64,
    /// The estimated limit; the limit in force is its whole part (Netflix's
    /// `(int) estimatedLimit`).
    limit: f64,
    state: State,
}

impl ConcurrencyLimit {
    /// A fresh state for `alg`; `rng` gives the random stream of the algorithms
    /// that draw (vegas, envoy_gradient).
    pub(super) fn new(alg: &ConcurrencyAlgorithm, rng: impl FnOnce() -> Stream) -> Self {
        let (limit, state) = match *alg {
            ConcurrencyAlgorithm::Fixed { limit } => (limit, State::Fixed),
            ConcurrencyAlgorithm::Aimd { initial, .. } => (initial, State::Aimd),
            ConcurrencyAlgorithm::Vegas { initial, .. } => {
                (initial, State::Vegas(Box::new(vegas::Vegas::new(rng()))))
            }
            ConcurrencyAlgorithm::Gradient2 { initial, .. } => {
                (initial, State::Gradient2(gradient2::Gradient2::default()))
            }
            ConcurrencyAlgorithm::EnvoyGradient {
                min_concurrency, ..
            } => (
                min_concurrency,
                State::Envoy(Box::new(envoy::Envoy::new(min_concurrency, rng()))),
            ),
        };
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

    /// Time-driven updates due by `now` (envoy_gradient's windows).
    fn catch_up(&mut self, alg: &ConcurrencyAlgorithm, now: Ticks) {
        if let (State::Envoy(e), ConcurrencyAlgorithm::EnvoyGradient { .. }) =
            (&mut self.state, alg)
        {
            e.catch_up(alg, &mut self.limit, now);
        }
    }
}

fn concurrency(limiter: &Limiter) -> Option<&Concurrency> {
    limiter.concurrency.as_deref()
}

impl Admission for ConcurrencyLimit {
    fn try_admit(&mut self, limiter: &Limiter, now: Ticks) -> Decision {
        if let Some(c) = concurrency(limiter) {
            self.catch_up(&c.algorithm, now);
        }
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
        let Some(c) = concurrency(limiter) else {
            return;
        };
        let alg = &c.algorithm;
        self.catch_up(alg, now);
        self.in_flight = self.in_flight.saturating_sub(1);
        let sample = Sample::of(outcome, latency, c.samples);
        if sample == Sample::Ignore {
            return;
        }
        // Netflix's listener passes the count taken when the request was let
        // through (AbstractLimiter.createListener)
        let in_flight = u64::from(started_with);
        let limit = &mut self.limit;
        match (&mut self.state, alg) {
            (State::Fixed, _) => {}
            (State::Aimd, ConcurrencyAlgorithm::Aimd { .. }) => {
                aimd::sample(alg, limit, sample, in_flight)
            }
            (State::Vegas(v), ConcurrencyAlgorithm::Vegas { .. }) => {
                v.sample(alg, limit, sample, in_flight)
            }
            (State::Gradient2(g), ConcurrencyAlgorithm::Gradient2 { .. }) => {
                g.sample(alg, limit, sample, in_flight)
            }
            (State::Envoy(e), ConcurrencyAlgorithm::EnvoyGradient { .. }) => {
                let started = now.saturating_sub(latency);
                e.sample(alg, limit, sample, (started, now))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
