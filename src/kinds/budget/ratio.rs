//! `ratio`: retries / first tries over the last `window_ms` below `max` (the
//! SRE book's per-client retry budget, 10 %).

use super::{Kind, Rule};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::kinds::outcome::{AttemptOutcome, OutcomeSet};
use std::collections::VecDeque;

/// Retries / first tries over the last `window` below `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// In [0, 1].
    pub max: f64,
    /// The span the counts cover.
    pub window: Ticks,
}

impl Kind for Ratio {
    const DECL: Decl = Decl {
        name: "ratio",
        family: "budget",
        keys: &[
            Key::with("max", 0.1, Range::Fraction),
            Key::with("window_ms", 10_000.0, Range::PositiveMs),
        ],
        required_because: "",
    };
    type State = State;

    fn from_keys(k: &Keys) -> R<Ratio> {
        Ok(Ratio {
            max: k.num("max"),
            window: k.ticks("window_ms")?,
        })
    }

    fn start(&self, _counted: OutcomeSet) -> State {
        State {
            max: self.max,
            window: self.window,
            first: VecDeque::new(),
            retries: VecDeque::new(),
        }
    }
}

/// The first tries and the retries of the last window.
#[derive(Debug, Clone)]
pub struct State {
    max: f64,
    window: Ticks,
    first: VecDeque<Ticks>,
    retries: VecDeque<Ticks>,
}

impl Rule for State {
    fn first_try(&mut self, now: Ticks) {
        self.first.push_back(now);
    }

    fn allow_retry(&mut self, now: Ticks, _after: AttemptOutcome, _in_flight: u64) -> Option<u32> {
        let window = self.window;
        let since = now.saturating_sub(window);
        // a time exactly `window` ago is outside the last window
        while self
            .first
            .front()
            .is_some_and(|&t| t <= since && now >= window)
        {
            self.first.pop_front();
        }
        while self
            .retries
            .front()
            .is_some_and(|&t| t <= since && now >= window)
        {
            self.retries.pop_front();
        }
        let ratio = if self.first.is_empty() {
            f64::INFINITY
        } else {
            self.retries.len() as f64 / self.first.len() as f64
        };
        let ok = ratio < self.max;
        if ok {
            self.retries.push_back(now);
        }
        ok.then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(f64) -> Ticks = Ticks::from_ms;

    #[test]
    fn allows_retries_below_max_of_first_tries_in_the_window() {
        let mut b = Ratio {
            max: 0.1,
            window: MS(1000.0),
        }
        .start(0);
        let allows = |b: &mut State, t| b.allow_retry(MS(t), AttemptOutcome::Error, 0).is_some();
        // cold start: nothing in the window, no retry
        assert!(!allows(&mut b, 0.0));
        for i in 0..20 {
            b.first_try(MS(i as f64));
        }
        // 0/20, 1/20 < 0.1: two retries; 2/20 = 0.1 is not below: refused
        assert!(allows(&mut b, 20.0));
        assert!(allows(&mut b, 20.0));
        assert!(!allows(&mut b, 20.0));
        // a second later the window has forgotten all of it: no first tries
        assert!(!allows(&mut b, 1020.0));
        b.first_try(MS(1020.0));
        assert!(allows(&mut b, 1020.0), "0 / 1 < 0.1");
        assert!(!allows(&mut b, 1020.0), "1 / 1");
    }
}
