//! The rate algorithms, pure functions of (time, bucket state): fixed-window,
//! sliding-counter, sliding-log, token-bucket and GCRA all answer
//! [`Bucket::earliest`], and [`decide`] turns that instant into a decision.
//!
//! One file per algorithm: [`fixed_window`] (its per-window counts are also
//! sliding-counter's state), [`sliding_counter`], [`sliding_log`],
//! [`token_bucket`] and [`gcra`]. Each holds its state, its `earliest` and its
//! `take` (and `forget` where old passes stop mattering); [`Bucket`] here
//! dispatches to them, and its [`Admission`] impl is the rate limiters' side of
//! the admission seam (they never need to hear when a request is done).

mod fixed_window;
mod gcra;
mod sliding_counter;
mod sliding_log;
mod token_bucket;

use super::admission::{Admission, Decision};
use crate::engine::Ticks;
use crate::model::{Algorithm, Limiter, LimiterMode};
use crate::sim::vocab::Outcome;
use fixed_window::WindowCounts;
use gcra::Gcra;
use sliding_log::SlidingLog;
use token_bucket::TokenBucket;

/// One bucket's algorithm state. Token and GCRA levels are exact integers (no
/// floats), so a decision never depends on rounding.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// The latest time a request was let through or is held to: held requests
    /// leave in FIFO order, never before it.
    last: Ticks,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    /// fixed-window, sliding-counter: requests let through per aligned window.
    Windows(WindowCounts),
    /// sliding-log: the times requests were let through.
    Log(SlidingLog),
    /// token-bucket: the level after the last take.
    Tokens(TokenBucket),
    /// gcra: the theoretical arrival time.
    Gcra(Gcra),
}

fn clamp_ticks(v: u128) -> Ticks {
    Ticks(u64::try_from(v).unwrap_or(u64::MAX))
}

impl Bucket {
    /// A fresh bucket: empty windows and log, a full token bucket.
    pub fn new(l: &Limiter) -> Bucket {
        let state = match l.algorithm {
            Algorithm::FixedWindow | Algorithm::SlidingCounter => {
                State::Windows(WindowCounts::default())
            }
            Algorithm::SlidingLog => State::Log(SlidingLog::default()),
            Algorithm::TokenBucket => State::Tokens(TokenBucket::full(l)),
            Algorithm::Gcra => State::Gcra(Gcra::default()),
        };
        Bucket {
            last: Ticks::ZERO,
            state,
        }
    }

    /// Drops what can no longer matter at or after `now`.
    fn forget(&mut self, l: &Limiter, now: Ticks) {
        match &mut self.state {
            State::Windows(ws) => ws.forget(l, now),
            State::Log(log) => log.forget(l, now),
            State::Tokens(_) | State::Gcra(_) => {}
        }
    }

    /// The first instant at or after `t` (and after every request already let
    /// through or held) when one more request may pass.
    pub fn earliest(&self, l: &Limiter, t: Ticks) -> Ticks {
        let t0 = t.max(self.last);
        match &self.state {
            State::Windows(ws) => match l.algorithm {
                Algorithm::SlidingCounter => sliding_counter::earliest(ws, l, t0),
                _ => ws.earliest(l, t0),
            },
            State::Log(log) => log.earliest(l, t0),
            State::Tokens(tokens) => tokens.earliest(l, t0),
            State::Gcra(gcra) => gcra.earliest(l, t0),
        }
    }

    /// Records a request let through at `at` (a value `earliest` returned).
    fn take(&mut self, l: &Limiter, at: Ticks) {
        match &mut self.state {
            State::Windows(ws) => ws.take(l, at),
            State::Log(log) => log.take(at),
            State::Tokens(tokens) => tokens.take(l, at),
            State::Gcra(gcra) => gcra.take(l, at),
        }
        self.last = at;
    }
}

/// Decides one request arriving at `now` and updates the bucket.
pub fn decide(l: &Limiter, b: &mut Bucket, now: Ticks) -> Decision {
    b.forget(l, now);
    let at = b.earliest(l, now);
    let decision = if at == now {
        Decision::Pass
    } else if l.mode == LimiterMode::Throttle && at - now <= l.max_delay {
        Decision::Delay(at)
    } else {
        return Decision::Reject;
    };
    b.take(l, at);
    decision
}

/// A rate limiter admits by its bucket alone: [`decide`]. Its state depends on
/// the times requests were let through, never on how they ended, so a done
/// request changes nothing.
impl Admission for Bucket {
    #[inline]
    fn try_admit(&mut self, limiter: &Limiter, now: Ticks) -> Decision {
        decide(limiter, self, now)
    }

    #[inline]
    fn on_done(&mut self, _: &Limiter, _: Ticks, _: Ticks, _: Outcome, _: u32) {}
}

#[cfg(test)]
pub(super) mod testing {
    //! A limiter of each kind and a bucket's decisions for a list of arrivals,
    //! for the algorithms' tests.
    use super::*;
    use crate::model::{Overflow, Refill};

    pub fn limiter(algorithm: Algorithm, limit: u64, window_ms: f64) -> Limiter {
        Limiter {
            name: "l".into(),
            algorithm,
            key: vec![],
            limit,
            window: Ticks::from_ms(window_ms),
            mode: LimiterMode::Reject,
            max_delay: Ticks::ZERO,
            refill: Refill::Continuous,
            overflow: Overflow::Hold,
            concurrency: None,
            scope: crate::model::Scope::Replica,
        }
    }

    pub fn throttled(mut l: Limiter, max_delay_ms: f64) -> Limiter {
        l.mode = LimiterMode::Throttle;
        l.max_delay = Ticks::from_ms(max_delay_ms);
        l
    }

    /// Decisions for arrivals at `times_ms` on one bucket: "P", "R" or "D<ms>"
    /// (held, let through at that time).
    pub fn run(l: &Limiter, times_ms: &[f64]) -> Vec<String> {
        let mut b = Bucket::new(l);
        times_ms
            .iter()
            .map(|t| match decide(l, &mut b, Ticks::from_ms(*t)) {
                Decision::Pass => "P".to_string(),
                Decision::Reject => "R".to_string(),
                Decision::Delay(at) => format!("D{}", at.as_ms()),
            })
            .collect()
    }
}
