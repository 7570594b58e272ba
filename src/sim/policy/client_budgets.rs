//! The retry budgets real clients ship, one type per kind, each held in a
//! [`BudgetState`](super::budget::BudgetState) per policy state:
//!
//! - [`GrpcThrottle`]: gRPC's retry throttling (gRFC A6 `retryThrottling`).
//! - [`Finagle`]: Finagle's `RetryBudget` (a token bucket over a windowed counter).
//! - [`AwsStandard`]: the AWS SDKs' standard-mode retry quota.
//! - [`Envoy`]: Envoy's cluster `retry_budget` (a cap on retries in flight).
//!
//! What each counts, and where resim's model differs from the client's, is in
//! docs/scenarios.md (`retry.budget`).

use crate::engine::Ticks;
use crate::model::{AttemptOutcome, OutcomeSet};

/// gRPC retry throttling, in thousandths of a token as gRPC keeps them: full at
/// start; an attempt that fails with a counted outcome takes 1000 (down to 0),
/// one answered ok adds the ratio (up to the maximum); no retry or hedge goes
/// while the tokens are at or below half the maximum.
#[derive(Debug, Clone)]
pub(crate) struct GrpcThrottle {
    max: u64,
    threshold: u64,
    ratio: u64,
    tokens: u64,
    /// The failed outcomes that take a token (the policy's retried or, for a
    /// hedge, non-fatal ones).
    counted: OutcomeSet,
}

impl GrpcThrottle {
    pub fn new(max_milli: u32, ratio_milli: u32, counted: OutcomeSet) -> GrpcThrottle {
        let max = u64::from(max_milli);
        GrpcThrottle {
            max,
            threshold: max / 2,
            ratio: u64::from(ratio_milli),
            tokens: max,
            counted,
        }
    }

    /// An attempt ended with `o`.
    pub fn ended(&mut self, o: AttemptOutcome) {
        if o == AttemptOutcome::Ok {
            self.tokens = (self.tokens + self.ratio).min(self.max);
        } else if self.counted & o.bit() != 0 {
            self.tokens = self.tokens.saturating_sub(1000);
        }
    }

    /// May a retry or a further hedge go now?
    pub fn allows(&self) -> bool {
        self.tokens > self.threshold
    }
}

/// Slices of Finagle's windowed counter (its `WindowedAdder` has 10).
const SLICES: u64 = 10;

/// Finagle's `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)` in its own
/// integer units: each call deposits 1000, a retry withdraws 1000 / share
/// (share = percent / 100) when the counter's sum plus the reserve (min
/// retries per second x ttl seconds x the withdrawal) covers it. Deposits and
/// withdrawals are added to the current slice of ttl / 10 and forgotten once
/// ten slices have passed. Finagle starts a slice at the first touch after the
/// previous one ended; here slices are fixed from time 0.
#[derive(Debug, Clone)]
pub(crate) struct Finagle {
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

impl Finagle {
    pub fn new(percent: f64, min_retries_per_s: u32, ttl: Ticks, ttl_s: u32) -> Finagle {
        let share = percent / 100.0;
        let (deposit, withdrawal) = if share == 0.0 {
            (0, 1)
        } else {
            // Finagle's `(ScaleFactor / percentCanRetry).toInt`, at least 1
            (1000, ((1000.0 / share) as i64).max(1))
        };
        Finagle {
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

    /// A call makes its first try now.
    pub fn deposit(&mut self, now: Ticks) {
        self.roll(now);
        let d = self.deposit;
        *self.current() += d;
    }

    /// May a retry go now? When it may, it is withdrawn.
    pub fn withdraw(&mut self, now: Ticks) -> bool {
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

/// The AWS SDKs' standard retry quota: full at start; a retry needs and spends
/// its cost (`timeout_cost` after an attempt that timed out, `retry_cost`
/// otherwise); a call answered ok refunds the cost of the retry that answered,
/// or adds `no_retry_increment` when its first try answered (never past the
/// quota).
#[derive(Debug, Clone)]
pub(crate) struct AwsStandard {
    quota: u32,
    retry_cost: u32,
    timeout_cost: u32,
    increment: u32,
    tokens: u32,
}

impl AwsStandard {
    pub fn new(quota: u32, retry_cost: u32, timeout_cost: u32, increment: u32) -> AwsStandard {
        AwsStandard {
            quota,
            retry_cost,
            timeout_cost,
            increment,
            tokens: quota,
        }
    }

    /// A retry after an attempt that ended with `after`: its cost, spent, or
    /// None when the quota cannot pay it.
    pub fn acquire(&mut self, after: AttemptOutcome) -> Option<u32> {
        let cost = if after == AttemptOutcome::Timeout {
            self.timeout_cost
        } else {
            self.retry_cost
        };
        (self.tokens >= cost).then(|| {
            self.tokens -= cost;
            cost
        })
    }

    /// An attempt ended with `o`; `held` is what its retry cost (0: a first try).
    pub fn ended(&mut self, o: AttemptOutcome, held: u32) {
        if o == AttemptOutcome::Ok {
            let back = if held > 0 { held } else { self.increment };
            self.tokens = self.tokens.saturating_add(back).min(self.quota);
        }
    }
}

/// Envoy's `retry_budget`: a retry may start while the retries open (from the
/// decision to retry until that retry's answer) are fewer than
/// max(`min_retry_concurrency`, `percent` % of the attempts in flight), the
/// share rounded down as Envoy's integer cast does.
#[derive(Debug, Clone)]
pub(crate) struct Envoy {
    share: f64,
    min: u64,
    /// Retries open.
    open: u64,
    /// The most retries open at once (a check).
    pub most_open: u64,
}

impl Envoy {
    pub fn new(percent: f64, min_retry_concurrency: u32) -> Envoy {
        Envoy {
            share: percent / 100.0,
            min: u64::from(min_retry_concurrency),
            open: 0,
            most_open: 0,
        }
    }

    /// The cap on retries open with `active` attempts in flight.
    pub fn cap(&self, active: u64) -> u64 {
        ((self.share * active as f64) as u64).max(self.min)
    }

    /// May a retry open now, with `active` attempts in flight? When it may,
    /// it is open until [`Envoy::release`].
    pub fn acquire(&mut self, active: u64) -> bool {
        let ok = self.open < self.cap(active);
        if ok {
            self.open += 1;
            self.most_open = self.most_open.max(self.open);
        }
        ok
    }

    pub fn release(&mut self) {
        self.open = self.open.saturating_sub(1);
    }

    /// Releases the retry held as `held` (1), if any.
    pub fn release_held(&mut self, held: u32) {
        if held > 0 {
            self.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(f64) -> Ticks = Ticks::from_ms;
    const FAIL: AttemptOutcome = AttemptOutcome::Error;

    #[test]
    fn grpc_throttle_stops_at_half_and_resumes_after_successes() {
        // max 10 tokens, ratio 0.1: threshold 5 tokens
        let mut g = GrpcThrottle::new(10_000, 100, FAIL.bit());
        for _ in 0..4 {
            g.ended(FAIL);
        }
        assert!(g.allows(), "6 tokens > 5");
        g.ended(FAIL);
        assert!(!g.allows(), "5 tokens is not above 5");
        // an outcome the policy does not retry takes nothing
        g.ended(AttemptOutcome::Timeout);
        g.ended(AttemptOutcome::Ok);
        assert!(g.allows(), "5.1 tokens");
        // never below 0, never above the maximum
        for _ in 0..100 {
            g.ended(FAIL);
        }
        assert_eq!(g.tokens, 0);
        for _ in 0..1000 {
            g.ended(AttemptOutcome::Ok);
        }
        assert_eq!(g.tokens, 10_000);
    }

    #[test]
    fn finagle_allows_the_reserve_then_a_fifth_of_the_calls_per_ttl() {
        // 20 %, 10 retries/s, ttl 10 s: the reserve is 100 retries
        let mut f = Finagle::new(20.0, 10, MS(10_000.0), 10);
        let n = (0..1000).filter(|_| f.withdraw(MS(0.0))).count();
        assert_eq!(n, 100, "the reserve alone");
        for _ in 0..50 {
            f.deposit(MS(1.0));
        }
        assert_eq!((0..100).filter(|_| f.withdraw(MS(1.0))).count(), 10);
        // the slice of time 0 and 1 ms is forgotten after ten slices (10 s)
        assert!(!f.withdraw(MS(9_999.0)));
        assert_eq!((0..1000).filter(|_| f.withdraw(MS(10_000.0))).count(), 100);
        // Finagle's Empty: no share, no reserve
        let mut e = Finagle::new(0.0, 0, MS(10_000.0), 10);
        e.deposit(MS(0.0));
        assert!(!e.withdraw(MS(0.0)));
        // no share: only the reserve, 1 a withdrawal
        let mut r = Finagle::new(0.0, 2, MS(1_000.0), 1);
        assert_eq!((0..10).filter(|_| r.withdraw(MS(0.0))).count(), 2);
    }

    #[test]
    fn aws_standard_spends_costs_and_refunds_a_successful_retry() {
        let mut a = AwsStandard::new(500, 5, 10, 1);
        let n = (0..1000).filter_map(|_| a.acquire(FAIL)).count();
        assert_eq!(n, 100, "500 / 5");
        a.ended(AttemptOutcome::Ok, 0);
        a.ended(AttemptOutcome::Ok, 0);
        a.ended(AttemptOutcome::Ok, 0);
        a.ended(AttemptOutcome::Ok, 0);
        assert_eq!(a.acquire(AttemptOutcome::Timeout), None, "4 < 10");
        assert_eq!(a.acquire(FAIL), None, "4 < 5");
        a.ended(AttemptOutcome::Ok, 10);
        assert_eq!(a.acquire(AttemptOutcome::Timeout), Some(10), "14 >= 10");
        a.ended(FAIL, 10);
        assert_eq!(a.tokens, 4, "a failed retry refunds nothing");
        for _ in 0..1000 {
            a.ended(AttemptOutcome::Ok, 5);
        }
        assert_eq!(a.tokens, 500, "capped at the quota");
    }

    #[test]
    fn envoy_caps_open_retries_at_the_larger_of_min_and_percent_of_active() {
        let mut e = Envoy::new(20.0, 3);
        // 20 % of 10 is 2: the minimum, 3, holds
        assert_eq!((0..10).filter(|_| e.acquire(10)).count(), 3);
        // 20 % of 40 is 8: five more
        assert_eq!((0..10).filter(|_| e.acquire(40)).count(), 5);
        e.release();
        assert!(e.acquire(40));
        assert!(!e.acquire(40));
        // 20 % of 44 = 8.8 is 8 (rounded down)
        assert!(!e.acquire(44));
        assert!(e.acquire(45), "20 % of 45 is 9");
        assert_eq!(e.most_open, 9);
    }
}
