//! `envoy`: Envoy's cluster `retry_budget {budget_percent,
//! min_retry_concurrency}`, a cap on the retries open at once.

use super::{Kind, Rule};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::kinds::outcome::{AttemptOutcome, OutcomeSet};

/// Envoy's `retry_budget`: retries in flight at once at most
/// max(`min_retry_concurrency`, `percent` % of the attempts in flight).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Envoy {
    /// Percent of the attempts in flight, in [0, 100].
    pub percent: f64,
    /// Retries in flight always allowed.
    pub min_retry_concurrency: u32,
}

impl Kind for Envoy {
    const DECL: Decl = Decl {
        name: "envoy",
        family: "budget",
        keys: &[
            Key::with("percent", 20.0, Range::between(0.0, 100.0, "")),
            Key::with("min_retry_concurrency", 3.0, Range::Whole(0)),
        ],
        required_because: "",
    };
    type State = State;

    fn from_keys(k: &Keys) -> R<Envoy> {
        Ok(Envoy {
            percent: k.num("percent"),
            min_retry_concurrency: k.whole("min_retry_concurrency"),
        })
    }

    fn start(&self, _counted: OutcomeSet) -> State {
        State {
            share: self.percent / 100.0,
            min: u64::from(self.min_retry_concurrency),
            open: 0,
            most_open: 0,
        }
    }
}

/// A retry may start while the retries open (from the decision to retry
/// until that retry's answer) are fewer than max(`min_retry_concurrency`,
/// `percent` % of the attempts in flight), the share rounded down as Envoy's
/// integer cast does.
#[derive(Debug, Clone)]
pub struct State {
    share: f64,
    min: u64,
    /// Retries open.
    open: u64,
    /// The most retries open at once (a check).
    most_open: u64,
}

impl State {
    /// The cap on retries open with `active` attempts in flight.
    fn cap(&self, active: u64) -> u64 {
        ((self.share * active as f64) as u64).max(self.min)
    }
}

impl Rule for State {
    fn ended(&mut self, _o: AttemptOutcome, held: u32) {
        self.release(held);
    }

    /// Releases the retry held as `held` (1), if any.
    fn release(&mut self, held: u32) {
        if held > 0 {
            self.open = self.open.saturating_sub(1);
        }
    }

    fn most_open(&self) -> u64 {
        self.most_open
    }

    /// When a retry may open now, with `in_flight` attempts in flight, it
    /// is open until it is released.
    fn allow_retry(&mut self, _now: Ticks, _after: AttemptOutcome, in_flight: u64) -> Option<u32> {
        let ok = self.open < self.cap(in_flight);
        if ok {
            self.open += 1;
            self.most_open = self.most_open.max(self.open);
        }
        ok.then_some(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_open_retries_at_the_larger_of_min_and_percent_of_active() {
        let mut e = Envoy {
            percent: 20.0,
            min_retry_concurrency: 3,
        }
        .start(0);
        let acquire = |e: &mut State, active| {
            e.allow_retry(Ticks::ZERO, AttemptOutcome::Error, active)
                .is_some()
        };
        // 20 % of 10 is 2: the minimum, 3, holds
        assert_eq!((0..10).filter(|_| acquire(&mut e, 10)).count(), 3);
        // 20 % of 40 is 8: five more
        assert_eq!((0..10).filter(|_| acquire(&mut e, 40)).count(), 5);
        e.release(1);
        assert!(acquire(&mut e, 40));
        assert!(!acquire(&mut e, 40));
        // 20 % of 44 = 8.8 is 8 (rounded down)
        assert!(!acquire(&mut e, 44));
        assert!(acquire(&mut e, 45), "20 % of 45 is 9");
        assert_eq!(e.most_open(), 9);
    }
}
