//! `breaker`: Brooker's retry breaker: no retries while failed attempts /
//! first tries so far exceed `threshold` (first tries still go out).

use super::{Kind, Rule};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::kinds::outcome::{AttemptOutcome, OutcomeSet};

/// No retries while failed attempts / first tries > `threshold`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Breaker {
    /// The failure share above which retries stop.
    pub threshold: f64,
}

impl Kind for Breaker {
    const DECL: Decl = Decl {
        name: "breaker",
        family: "budget",
        keys: &[Key::required("threshold", Range::NonNegative)],
        required_because: "",
    };
    type State = State;

    fn from_keys(k: &Keys) -> R<Breaker> {
        Ok(Breaker {
            threshold: k.num("threshold"),
        })
    }

    fn start(&self, _counted: OutcomeSet) -> State {
        State {
            threshold: self.threshold,
            first: 0,
            failed: 0,
        }
    }
}

/// First tries and failed attempts so far.
#[derive(Debug, Clone)]
pub struct State {
    threshold: f64,
    first: u64,
    failed: u64,
}

impl Rule for State {
    fn first_try(&mut self, _now: Ticks) {
        self.first += 1;
    }

    fn ended(&mut self, o: AttemptOutcome, _held: u32) {
        self.failed += (o != AttemptOutcome::Ok) as u64;
    }

    fn allow_retry(&mut self, _now: Ticks, _after: AttemptOutcome, _in_flight: u64) -> Option<u32> {
        let ok = self.first == 0 || (self.failed as f64 / self.first as f64) <= self.threshold;
        ok.then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(f64) -> Ticks = Ticks::from_ms;

    #[test]
    fn stops_retries_above_the_threshold_and_resumes_below() {
        let mut b = Breaker { threshold: 0.1 }.start(0);
        let allows = |b: &mut State| b.allow_retry(MS(0.0), AttemptOutcome::Error, 0).is_some();
        // cold start: no first try yet, nothing failed: allowed
        assert!(allows(&mut b));
        for _ in 0..10 {
            b.first_try(MS(0.0));
        }
        b.ended(AttemptOutcome::Error, 0);
        assert!(allows(&mut b), "1/10 does not exceed 0.1");
        b.ended(AttemptOutcome::Error, 0);
        assert!(!allows(&mut b), "2/10 does");
        for _ in 0..10 {
            b.first_try(MS(0.0));
        }
        assert!(allows(&mut b), "2/20 again");
    }
}
