//! sliding-log: every pass within the last window_ms is kept; a request may pass
//! once fewer than `limit` of them are left.

use crate::engine::Ticks;
use crate::model::Limiter;
use std::collections::VecDeque;

/// The times requests were let through, oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct SlidingLog(VecDeque<Ticks>);

impl SlidingLog {
    /// Drops the passes that left the window by `now`.
    pub(super) fn forget(&mut self, l: &Limiter, now: Ticks) {
        while self.0.front().is_some_and(|x| *x + l.window <= now) {
            self.0.pop_front();
        }
    }

    pub(super) fn earliest(&self, l: &Limiter, t0: Ticks) -> Ticks {
        let log = &self.0;
        let n = log.len();
        let limit = usize::try_from(l.limit).unwrap_or(usize::MAX);
        if n < limit {
            t0
        } else {
            // the limit-th most recent pass must have left the window
            t0.max(log[n - limit] + l.window)
        }
    }

    pub(super) fn take(&mut self, at: Ticks) {
        self.0.push_back(at);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{limiter, run, throttled};
    use crate::model::Algorithm;

    #[test]
    fn sliding_log_keeps_every_pass_for_a_window() {
        let l = limiter(Algorithm::SlidingLog, 2, 100.0);
        assert_eq!(
            run(&l, &[0., 50., 99., 100., 120., 150., 199.]),
            ["P", "P", "R", "P", "R", "P", "R"]
        );
        assert_eq!(run(&l, &[90., 95., 100., 105.]), ["P", "P", "R", "R"]);
        let t = throttled(l, 60.0);
        // 20 would wait until 100 (80 ms); 50 waits 50 ms; 60 queues behind it and
        // leaves when the pass at 10 has left the window (110)
        assert_eq!(
            run(&t, &[0., 10., 20., 50., 60.]),
            ["P", "P", "R", "D100", "D110"]
        );
    }
}
