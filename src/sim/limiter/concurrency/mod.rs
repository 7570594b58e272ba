//! Concurrency limits (`kind = "concurrency"`): a state per bucket key admits a
//! request while fewer than its limit are in flight and rejects it otherwise
//! (`Outcome::Rejected`, as a rate limiter's 429); it hears every admitted
//! request's end through [`Admission::on_done`], which frees its place and feeds
//! the algorithm a sample.
//!
//! What a request's end tells the algorithms ([`Sample::of`]): an answer is a
//! latency sample; a drop (`Dropped`, `TimedOut`: its client or caller gave up,
//! or its work was abandoned or cancelled; `Shed`: the service's slots and queue
//! were full) is a drop with its latency; an error, a refusal by a client
//! policy, a later limiter's rejection and a 404 are ignored (the request never
//! measured the protected work), as Netflix's `onIgnore`.
//!
//! One file per adaptive algorithm: [`aimd`], [`vegas`], [`gradient2`],
//! [`envoy`]; `fixed` needs none. [`track`] keeps a limiter's limit and
//! in-flight count over time for its tables.
//!
//! The in-flight count an algorithm is given with a sample is the count when the
//! request ends, itself included (Netflix's is the count when it started).

mod aimd;
mod envoy;
mod gradient2;
pub(super) mod track;
mod vegas;

use super::admission::{Admission, Decision};
use crate::engine::{Stream, Ticks};
use crate::model::{ConcurrencyAlgorithm, Limiter};
use crate::sim::vocab::Outcome;

/// What one request's end tells a concurrency algorithm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Sample {
    /// Answered, `latency` after it was let through.
    Answer(Ticks),
    /// Dropped, timed out or shed, after this latency.
    Drop(Ticks),
    /// Tells nothing about the protected work.
    Ignore,
}

impl Sample {
    /// The sample of a request that ended with `outcome` after `latency`.
    pub(super) fn of(outcome: Outcome, latency: Ticks) -> Sample {
        match outcome {
            Outcome::Answered => Sample::Answer(latency),
            Outcome::Dropped | Outcome::TimedOut | Outcome::Shed => Sample::Drop(latency),
            Outcome::Error | Outcome::Refused | Outcome::Rejected(_) | Outcome::NotFound => {
                Sample::Ignore
            }
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

fn algorithm(limiter: &Limiter) -> Option<&ConcurrencyAlgorithm> {
    limiter.concurrency.as_deref().map(|c| &c.algorithm)
}

impl Admission for ConcurrencyLimit {
    fn try_admit(&mut self, limiter: &Limiter, now: Ticks) -> Decision {
        if let Some(alg) = algorithm(limiter) {
            self.catch_up(alg, now);
        }
        if self.in_flight < self.limit() {
            self.in_flight += 1;
            Decision::Pass
        } else {
            Decision::Reject
        }
    }

    fn on_done(&mut self, limiter: &Limiter, now: Ticks, latency: Ticks, outcome: Outcome) {
        let Some(alg) = algorithm(limiter) else {
            return;
        };
        self.catch_up(alg, now);
        let in_flight = self.in_flight;
        self.in_flight = self.in_flight.saturating_sub(1);
        let sample = Sample::of(outcome, latency);
        if sample == Sample::Ignore {
            return;
        }
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
                e.sample(alg, limit, sample, now)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
