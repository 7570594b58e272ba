//! fixed-window: at most `limit` requests let through per window, the windows
//! aligned to multiples of window_ms from t = 0. Its per-window counts are also
//! sliding-counter's state ([`super::sliding_counter`]).

use super::clamp_ticks;
use crate::engine::Ticks;
use crate::model::{Algorithm, Limiter};
use std::collections::VecDeque;

/// Requests let through per aligned window, as (window index, count), oldest
/// first.
#[derive(Debug, Clone, Default)]
pub(super) struct WindowCounts(VecDeque<(u64, u64)>);

impl WindowCounts {
    /// The count of window `k` (0 when it holds none).
    pub(super) fn count_in(&self, k: u64) -> u64 {
        self.0.iter().find(|(i, _)| *i == k).map_or(0, |(_, n)| *n)
    }

    /// Drops the windows before the current one (sliding-counter keeps the
    /// previous window too: it still weighs it).
    pub(super) fn forget(&mut self, l: &Limiter, now: Ticks) {
        let current = now.0 / l.window.0;
        let keep = match l.algorithm {
            Algorithm::SlidingCounter => current.saturating_sub(1),
            _ => current,
        };
        while self.0.front().is_some_and(|(k, _)| *k < keep) {
            self.0.pop_front();
        }
    }

    /// The start of the first window at or after `t0` with room, or `t0`.
    pub(super) fn earliest(&self, l: &Limiter, t0: Ticks) -> Ticks {
        let w = u128::from(l.window.0);
        let mut k = t0.0 / l.window.0;
        while self.count_in(k) >= l.limit {
            k += 1;
        }
        t0.max(clamp_ticks(u128::from(k) * w))
    }

    /// Counts a request let through at `at` in its window.
    pub(super) fn take(&mut self, l: &Limiter, at: Ticks) {
        let k = at.0 / l.window.0;
        match self.0.back_mut() {
            Some((last, n)) if *last == k => *n += 1,
            _ => self.0.push_back((k, 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{limiter, run, throttled};
    use crate::model::Algorithm;

    #[test]
    fn fixed_window_counts_per_aligned_window() {
        let l = limiter(Algorithm::FixedWindow, 2, 100.0);
        assert_eq!(
            run(&l, &[0., 10., 20., 99., 100., 150., 199., 200.]),
            ["P", "P", "R", "R", "P", "P", "R", "P"]
        );
        // the boundary burst: twice the limit within 15 ms
        assert_eq!(run(&l, &[90., 95., 100., 105.]), ["P", "P", "P", "P"]);
    }

    #[test]
    fn fixed_window_throttle_holds_to_the_next_free_window() {
        let l = throttled(limiter(Algorithm::FixedWindow, 2, 100.0), 100.0);
        assert_eq!(
            run(&l, &[0., 0., 0., 0., 0., 50., 150.]),
            // 3rd and 4th wait for window [100, 200); the 5th would wait 200 ms;
            // at 50 the next free window starts at 200 (150 ms > 100); at 150, 50 ms
            ["P", "P", "D100", "D100", "R", "R", "D200"]
        );
    }
}
