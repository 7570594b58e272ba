//! `finagle`: Finagle's `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)`
//! (a token bucket over a windowed counter).

use super::{Kind, Rule};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::kinds::outcome::{AttemptOutcome, OutcomeSet};

/// Finagle's budget: a windowed counter of deposits (one per call) and
/// withdrawals (one per retry) over `ttl`, plus a fixed reserve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finagle {
    /// `percent` of the calls may be retried, in [0, 100000].
    pub percent: f64,
    /// Retries per second the reserve allows on top.
    pub min_retries_per_s: u32,
    /// How long a deposit or a withdrawal counts, 1 to 60 s.
    pub ttl: Ticks,
    /// `ttl` in whole seconds (the reserve's multiplier, as Finagle's `inSeconds`).
    pub ttl_s: u32,
}

/// Whose bound `percent`'s is.
const PERCENT_BOUND: &str = "Finagle's percentCanRetry is at most 1000, that is 100000 %";

impl Kind for Finagle {
    const DECL: Decl = Decl {
        name: "finagle",
        family: "budget",
        keys: &[
            Key::with(
                "percent",
                20.0,
                Range::between(0.0, 100_000.0, PERCENT_BOUND),
            ),
            Key::with("min_retries_per_s", 10.0, Range::Whole(0)),
            Key::with(
                "ttl_ms",
                10_000.0,
                Range::between(1000.0, 60_000.0, "Finagle's ttl is 1 to 60 seconds"),
            ),
        ],
        required_because: "",
    };
    type State = Box<State>;

    fn from_keys(k: &Keys) -> R<Finagle> {
        let ttl_ms = k.num("ttl_ms");
        Ok(Finagle {
            percent: k.num("percent"),
            min_retries_per_s: k.whole("min_retries_per_s"),
            ttl: k.ticks("ttl_ms")?,
            ttl_s: (ttl_ms / 1000.0).floor() as u32,
        })
    }

    fn start(&self, _counted: OutcomeSet) -> Box<State> {
        Box::new(State::new(
            self.percent,
            self.min_retries_per_s,
            self.ttl,
            self.ttl_s,
        ))
    }
}

/// Slices of Finagle's windowed counter (its `WindowedAdder` has 10).
const SLICES: u64 = 10;

/// Finagle's budget in its own integer units: each call deposits 1000, a
/// retry withdraws 1000 / share (share = percent / 100) when the counter's
/// sum plus the reserve (min retries per second x ttl seconds x the
/// withdrawal) covers it. Deposits and withdrawals are added to the current
/// slice of ttl / 10 and forgotten once ten slices have passed. Finagle
/// starts a slice at the first touch after the previous one ended; here
/// slices are fixed from time 0.
#[derive(Debug, Clone)]
pub struct State {
    slice: u64,
    sums: [i64; SLICES as usize],
    /// The index (time / slice) of the current slice.
    at: u64,
    deposit: i64,
    withdrawal: i64,
    reserve: i64,
    /// Both the share and the reserve are 0: Finagle's `Empty`, no retry ever.
    empty: bool,
}

impl State {
    fn new(percent: f64, min_retries_per_s: u32, ttl: Ticks, ttl_s: u32) -> State {
        let share = percent / 100.0;
        let (deposit, withdrawal) = if share == 0.0 {
            (0, 1)
        } else {
            // Finagle's `(ScaleFactor / percentCanRetry).toInt`, at least 1
            (1000, ((1000.0 / share) as i64).max(1))
        };
        State {
            slice: (ttl.0 / SLICES).max(1),
            sums: [0; SLICES as usize],
            at: 0,
            deposit,
            withdrawal,
            reserve: i64::from(min_retries_per_s)
                .saturating_mul(i64::from(ttl_s))
                .saturating_mul(withdrawal),
            empty: share == 0.0 && min_retries_per_s == 0,
        }
    }

    /// Moves the current slice to `now`'s, clearing the slices passed.
    fn roll(&mut self, now: Ticks) {
        let k = now.0 / self.slice;
        if k > self.at {
            for i in 1..=(k - self.at).min(SLICES) {
                self.sums[((self.at + i) % SLICES) as usize] = 0;
            }
            self.at = k;
        }
    }

    fn current(&mut self) -> &mut i64 {
        &mut self.sums[(self.at % SLICES) as usize]
    }

    /// May a retry go now? When it may, it is withdrawn.
    fn withdraw(&mut self, now: Ticks) -> bool {
        if self.empty {
            return false;
        }
        self.roll(now);
        let balance = self.sums.iter().sum::<i64>() + self.reserve;
        let ok = balance >= self.withdrawal;
        if ok {
            let w = self.withdrawal;
            *self.current() -= w;
        }
        ok
    }
}

impl Rule for State {
    /// A call deposits.
    fn first_try(&mut self, now: Ticks) {
        self.roll(now);
        let d = self.deposit;
        *self.current() += d;
    }

    fn allow_retry(&mut self, now: Ticks, _after: AttemptOutcome, _in_flight: u64) -> Option<u32> {
        self.withdraw(now).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(f64) -> Ticks = Ticks::from_ms;

    #[test]
    fn allows_the_reserve_then_a_fifth_of_the_calls_per_ttl() {
        // 20 %, 10 retries/s, ttl 10 s: the reserve is 100 retries
        let mut f = State::new(20.0, 10, MS(10_000.0), 10);
        let n = (0..1000).filter(|_| f.withdraw(MS(0.0))).count();
        assert_eq!(n, 100, "the reserve alone");
        for _ in 0..50 {
            f.first_try(MS(1.0));
        }
        assert_eq!((0..100).filter(|_| f.withdraw(MS(1.0))).count(), 10);
        // the slice of time 0 and 1 ms is forgotten after ten slices (10 s)
        assert!(!f.withdraw(MS(9_999.0)));
        assert_eq!((0..1000).filter(|_| f.withdraw(MS(10_000.0))).count(), 100);
        // Finagle's Empty: no share, no reserve
        let mut e = State::new(0.0, 0, MS(10_000.0), 10);
        e.first_try(MS(0.0));
        assert!(!e.withdraw(MS(0.0)));
        // no share: only the reserve, 1 a withdrawal
        let mut r = State::new(0.0, 2, MS(1_000.0), 1);
        assert_eq!((0..10).filter(|_| r.withdraw(MS(0.0))).count(), 2);
    }
}
