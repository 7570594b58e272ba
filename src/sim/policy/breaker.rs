//! The circuit breaker of a policy state: counts the final outcomes of calls
//! through it over the last `count` calls or `ms`; once at least `min_calls` are
//! counted and the failure share is >= `failure_rate` it opens: calls fail at once
//! for `open_ms`, then `half_open_calls` trial calls go through: all `ok` closes
//! it, any failure reopens it. Its window is reset at every change of state; while
//! half-open, calls beyond the trials are refused.

use super::super::vocab::Outcome;
use crate::engine::Ticks;
use crate::model::{Breaker, BreakerWindow};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Closed,
    Open { until: Ticks },
    HalfOpen { sent: u32, ok: u32 },
}

/// What the breaker says to a new call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Closed: the call goes, and its outcome is counted.
    Pass,
    /// Half-open: the call goes as one of the trials.
    Trial,
    Refuse,
}

#[derive(Debug, Clone)]
pub(crate) struct BreakerState {
    cfg: Breaker,
    pub phase: Phase,
    /// (end time, failed) of the calls in the window.
    window: VecDeque<(Ticks, bool)>,
    failures: u32,
    /// Times it opened.
    pub opened: u64,
}

impl BreakerState {
    pub fn new(cfg: Breaker) -> BreakerState {
        BreakerState {
            cfg,
            phase: Phase::Closed,
            window: VecDeque::new(),
            failures: 0,
            opened: 0,
        }
    }

    /// A call wants to go now.
    pub fn admit(&mut self, now: Ticks) -> Admit {
        if let Phase::Open { until } = self.phase {
            if now < until {
                return Admit::Refuse;
            }
            self.phase = Phase::HalfOpen { sent: 0, ok: 0 };
            self.reset();
        }
        match &mut self.phase {
            Phase::Closed => Admit::Pass,
            Phase::HalfOpen { sent, .. } if *sent < self.cfg.half_open_calls => {
                *sent += 1;
                Admit::Trial
            }
            _ => Admit::Refuse,
        }
    }

    /// A call admitted as `how` ended now with `outcome`: timeouts, errors,
    /// sheds, refusals and drops count as failures.
    #[inline(always)]
    pub fn resolved(&mut self, now: Ticks, how: Admit, outcome: Outcome) {
        let failed = matches!(
            outcome,
            Outcome::Dropped
                | Outcome::Error
                | Outcome::Refused
                | Outcome::TimedOut
                | Outcome::Shed
                | Outcome::NotFound
        );
        self.record(now, how, failed);
    }

    /// A call admitted as `how` ended now, failed or not.
    fn record(&mut self, now: Ticks, how: Admit, failed: bool) {
        match (self.phase, how) {
            (Phase::Closed, Admit::Pass) => {
                self.window.push_back((now, failed));
                self.failures += failed as u32;
                self.trim(now);
                let n = self.window.len() as u32;
                if n >= self.cfg.min_calls
                    && self.failures as f64 >= self.cfg.failure_rate * n as f64
                {
                    self.open(now);
                }
            }
            (Phase::HalfOpen { sent, ok }, Admit::Trial) => {
                if failed {
                    self.open(now);
                } else if ok + 1 >= self.cfg.half_open_calls {
                    self.phase = Phase::Closed;
                    self.reset();
                } else {
                    self.phase = Phase::HalfOpen { sent, ok: ok + 1 };
                }
            }
            // a call from an earlier phase: not counted
            _ => {}
        }
    }

    /// A call admitted as `how` was given up from above (no outcome): a trial's
    /// place goes back, so the half-open state does not wait for it forever.
    pub fn forget(&mut self, how: Admit) {
        if how == Admit::Trial
            && let Phase::HalfOpen { sent, .. } = &mut self.phase
        {
            *sent = sent.saturating_sub(1);
        }
    }

    fn open(&mut self, now: Ticks) {
        self.phase = Phase::Open {
            until: now + self.cfg.open,
        };
        self.opened += 1;
        self.reset();
    }

    fn reset(&mut self) {
        self.window.clear();
        self.failures = 0;
    }

    /// Drops calls that left the window.
    fn trim(&mut self, now: Ticks) {
        loop {
            let drop = match (self.cfg.window, self.window.front()) {
                (BreakerWindow::Count(n), Some(_)) => self.window.len() > n as usize,
                (BreakerWindow::Time(span), Some(&(t, _))) => t + span <= now,
                (_, None) => false,
            };
            if !drop {
                return;
            }
            if let Some((_, failed)) = self.window.pop_front() {
                self.failures -= failed as u32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(window: BreakerWindow) -> Breaker {
        Breaker {
            window,
            min_calls: 4,
            failure_rate: 0.5,
            open: Ticks::from_ms(100.0),
            half_open_calls: 2,
        }
    }

    fn t(ms: f64) -> Ticks {
        Ticks::from_ms(ms)
    }

    #[test]
    fn closed_open_half_open_closed() {
        let mut b = BreakerState::new(cfg(BreakerWindow::Count(10)));
        // three calls, two failed: below min_calls, stays closed
        for failed in [true, false, true] {
            assert_eq!(b.admit(t(0.0)), Admit::Pass);
            b.record(t(0.0), Admit::Pass, failed);
        }
        assert_eq!(b.phase, Phase::Closed);
        // the fourth: 2 of 4 failed = 0.5 >= 0.5: opens
        b.record(t(1.0), Admit::Pass, false);
        assert_eq!(b.phase, Phase::Open { until: t(101.0) });
        assert_eq!(b.opened, 1);
        assert_eq!(b.admit(t(100.0)), Admit::Refuse);
        // after open_ms: two trials, the third refused
        assert_eq!(b.admit(t(101.0)), Admit::Trial);
        assert_eq!(b.admit(t(101.0)), Admit::Trial);
        assert_eq!(b.admit(t(101.0)), Admit::Refuse);
        // a call admitted while closed ends now: not a trial, not counted
        b.record(t(102.0), Admit::Pass, true);
        assert!(matches!(b.phase, Phase::HalfOpen { .. }));
        b.record(t(102.0), Admit::Trial, false);
        b.record(t(103.0), Admit::Trial, false);
        assert_eq!(b.phase, Phase::Closed);
        // the window was reset: three failures are again below min_calls
        for _ in 0..3 {
            b.record(t(104.0), Admit::Pass, true);
        }
        assert_eq!(b.phase, Phase::Closed);
    }

    #[test]
    fn a_trial_given_up_from_above_frees_its_place() {
        let mut b = BreakerState::new(cfg(BreakerWindow::Count(4)));
        for _ in 0..4 {
            b.record(t(0.0), Admit::Pass, true);
        }
        assert_eq!(b.admit(t(100.0)), Admit::Trial);
        assert_eq!(b.admit(t(100.0)), Admit::Trial);
        assert_eq!(b.admit(t(100.0)), Admit::Refuse);
        b.forget(Admit::Trial);
        assert_eq!(b.admit(t(100.0)), Admit::Trial);
    }

    #[test]
    fn a_failed_trial_reopens() {
        let mut b = BreakerState::new(cfg(BreakerWindow::Count(4)));
        for _ in 0..4 {
            b.record(t(0.0), Admit::Pass, true);
        }
        assert_eq!(b.admit(t(100.0)), Admit::Trial);
        b.record(t(100.0), Admit::Trial, true);
        assert_eq!(b.phase, Phase::Open { until: t(200.0) });
        assert_eq!(b.opened, 2);
    }

    #[test]
    fn windows_forget_old_calls() {
        // by count: the last 4 only
        let mut b = BreakerState::new(cfg(BreakerWindow::Count(4)));
        for failed in [false, false, false, false, true] {
            b.record(t(0.0), Admit::Pass, failed);
        }
        assert_eq!(b.phase, Phase::Closed, "1 of 4");
        // 2 of the last 4 (of 6 in all): the old successes left the window
        b.record(t(0.0), Admit::Pass, true);
        assert!(matches!(b.phase, Phase::Open { .. }));
        // by time: calls older than 50 ms are gone
        let mut b = BreakerState::new(cfg(BreakerWindow::Time(t(50.0))));
        b.record(t(0.0), Admit::Pass, true);
        b.record(t(0.0), Admit::Pass, true);
        b.record(t(60.0), Admit::Pass, false);
        b.record(t(60.0), Admit::Pass, false);
        b.record(t(60.0), Admit::Pass, true);
        assert_eq!(b.phase, Phase::Closed, "1 of 3 counted");
        b.record(t(61.0), Admit::Pass, true);
        assert!(matches!(b.phase, Phase::Open { .. }), "2 of 4");
    }
}
