//! sliding-counter: the fixed windows' counts ([`WindowCounts`]), with the
//! previous window's count weighed by its overlap with a window sliding up to
//! now.

use super::fixed_window::WindowCounts;
use super::{Kind, Rate, Rule, clamp_ticks};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};

/// `sliding-counter`: no keys of its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlidingCounter;

impl Kind for SlidingCounter {
    const DECL: Decl = Decl {
        name: "sliding-counter",
        family: "rate limiter",
        keys: &[],
        required_because: "",
    };
    type State = Counts;

    fn from_keys(_: &Keys) -> R<SlidingCounter> {
        Ok(SlidingCounter)
    }

    fn start(&self, _: &Rate) -> Counts {
        Counts::default()
    }
}

/// The counts of the current and the previous window.
#[derive(Debug, Clone, Default)]
pub struct Counts(WindowCounts);

impl Rule for Counts {
    /// Drops the windows before the previous one (it is still weighed).
    fn forget(&mut self, rate: &Rate, now: Ticks) {
        self.0
            .forget_before((now.0 / rate.window.0).saturating_sub(1));
    }

    /// A request may pass at `e` into window k when
    /// `prev x (W - e) / W + curr + 1 <= limit` (the previous window's count
    /// weighed by its overlap with the sliding window), computed in integers.
    fn earliest(&self, rate: &Rate, mut t0: Ticks) -> Ticks {
        let w = rate.window.0;
        let ws = &self.0;
        loop {
            let k = t0.0 / w;
            let prev = if k == 0 { 0 } else { ws.count_in(k - 1) };
            let curr = ws.count_in(k);
            if curr < rate.limit {
                let room = u128::from(rate.limit - curr - 1) * u128::from(w);
                let e_min = match prev {
                    0 => 0,
                    p => u128::from(w).saturating_sub(room / u128::from(p)),
                };
                let at = t0.max(clamp_ticks(u128::from(k) * u128::from(w) + e_min));
                if at.0 / w == k {
                    return at;
                }
            }
            t0 = clamp_ticks((u128::from(k) + 1) * u128::from(w));
        }
    }

    fn take(&mut self, rate: &Rate, at: Ticks) {
        self.0.take(rate, at);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{rate, run, throttled};

    #[test]
    fn sliding_counter_weighs_the_previous_window_by_overlap() {
        let l = rate("sliding-counter", 4, 100.0);
        // window 0 fills; in window 1 the estimate 4 x (100 - e)/100 + curr + 1 <= 4
        // first holds at e = 25, then 50, then 75
        assert_eq!(
            run(
                &l,
                &[
                    0., 10., 20., 30., 40., 110., 125., 130., 150., 160., 175., 180.
                ]
            ),
            ["P", "P", "P", "P", "R", "R", "P", "R", "P", "R", "P", "R"]
        );
        // throttled (30 ms): held requests leave at e = 25, 50, 75 in FIFO order; at
        // 175 the next room is at 200 (window 2, prev 3: 3 x 1 + 0 + 1 <= 4); after it
        // 3 x (100 - e)/100 + 1 + 1 <= 4 needs e >= 34 (234: 54 ms, too long)
        let t = throttled(l, 30.0);
        let got = run(
            &t,
            &[
                0., 10., 20., 30., 40., 110., 125., 130., 150., 160., 175., 180.,
            ],
        );
        assert_eq!(
            got,
            [
                "P", "P", "P", "P", "R", "D125", "D150", "R", "D175", "R", "D200", "R"
            ]
        );
    }
}
