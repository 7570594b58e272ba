//! fixed-window: at most `limit` requests let through per window, the windows
//! aligned to multiples of window_ms from t = 0. Its per-window counts are also
//! sliding-counter's state ([`super::sliding_counter`]).

use super::{Kind, Rate, Rule, clamp_ticks};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};
use std::collections::VecDeque;

/// `fixed-window`: no keys of its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedWindow;

impl Kind for FixedWindow {
    const DECL: Decl = Decl {
        name: "fixed-window",
        family: "rate limiter",
        keys: &[],
        required_because: "",
    };
    type State = WindowCounts;

    fn from_keys(_: &Keys) -> R<FixedWindow> {
        Ok(FixedWindow)
    }

    fn start(&self, _: &Rate) -> WindowCounts {
        WindowCounts::default()
    }
}

/// Requests let through per aligned window, as (window index, count), oldest
/// first.
#[derive(Debug, Clone, Default)]
pub struct WindowCounts(VecDeque<(u64, u64)>);

impl WindowCounts {
    /// The count of window `k` (0 when it holds none).
    pub(super) fn count_in(&self, k: u64) -> u64 {
        self.0.iter().find(|(i, _)| *i == k).map_or(0, |(_, n)| *n)
    }

    /// Drops the windows before window `keep`.
    pub(super) fn forget_before(&mut self, keep: u64) {
        while self.0.front().is_some_and(|(k, _)| *k < keep) {
            self.0.pop_front();
        }
    }
}

impl Rule for WindowCounts {
    /// Drops the windows before the current one.
    fn forget(&mut self, rate: &Rate, now: Ticks) {
        self.forget_before(now.0 / rate.window.0);
    }

    /// The start of the first window at or after `t0` with room, or `t0`.
    fn earliest(&self, rate: &Rate, t0: Ticks) -> Ticks {
        let w = u128::from(rate.window.0);
        let mut k = t0.0 / rate.window.0;
        while self.count_in(k) >= rate.limit {
            k += 1;
        }
        t0.max(clamp_ticks(u128::from(k) * w))
    }

    /// Counts a request let through at `at` in its window.
    fn take(&mut self, rate: &Rate, at: Ticks) {
        let k = at.0 / rate.window.0;
        match self.0.back_mut() {
            Some((last, n)) if *last == k => *n += 1,
            _ => self.0.push_back((k, 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{rate, run, throttled};

    #[test]
    fn fixed_window_counts_per_aligned_window() {
        let l = rate("fixed-window", 2, 100.0);
        assert_eq!(
            run(&l, &[0., 10., 20., 99., 100., 150., 199., 200.]),
            ["P", "P", "R", "R", "P", "P", "R", "P"]
        );
        // the boundary burst: twice the limit within 15 ms
        assert_eq!(run(&l, &[90., 95., 100., 105.]), ["P", "P", "P", "P"]);
    }

    #[test]
    fn fixed_window_throttle_holds_to_the_next_free_window() {
        let l = throttled(rate("fixed-window", 2, 100.0), 100.0);
        assert_eq!(
            run(&l, &[0., 0., 0., 0., 0., 50., 150.]),
            // 3rd and 4th wait for window [100, 200); the 5th would wait 200 ms;
            // at 50 the next free window starts at 200 (150 ms > 100); at 150, 50 ms
            ["P", "P", "D100", "D100", "R", "R", "D200"]
        );
    }
}
