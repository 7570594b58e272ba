//! sliding-log: every pass within the last window_ms is kept; a request may pass
//! once fewer than `limit` of them are left.

use super::{Kind, Rate, Rule};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};
use std::collections::VecDeque;

/// `sliding-log`: no keys of its own (its `limit` bounds its memory: the
/// limiter's validation holds it to `scenario.max_in_flight`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlidingLog;

impl Kind for SlidingLog {
    const DECL: Decl = Decl {
        name: "sliding-log",
        family: "rate limiter",
        keys: &[],
        required_because: "",
    };
    type State = Log;

    fn from_keys(_: &Keys) -> R<SlidingLog> {
        Ok(SlidingLog)
    }

    fn start(&self, _: &Rate) -> Log {
        Log::default()
    }
}

/// The times requests were let through, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Log(VecDeque<Ticks>);

impl Rule for Log {
    /// Drops the passes that left the window by `now`.
    fn forget(&mut self, rate: &Rate, now: Ticks) {
        while self.0.front().is_some_and(|x| *x + rate.window <= now) {
            self.0.pop_front();
        }
    }

    fn earliest(&self, rate: &Rate, t0: Ticks) -> Ticks {
        let log = &self.0;
        let n = log.len();
        let limit = usize::try_from(rate.limit).unwrap_or(usize::MAX);
        if n < limit {
            t0
        } else {
            // the limit-th most recent pass must have left the window
            t0.max(log[n - limit] + rate.window)
        }
    }

    fn take(&mut self, _: &Rate, at: Ticks) {
        self.0.push_back(at);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{rate, run, throttled};

    #[test]
    fn sliding_log_keeps_every_pass_for_a_window() {
        let l = rate("sliding-log", 2, 100.0);
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
