//! Retry budgets, one per policy state: `ratio` (SRE book: retries / first tries
//! over the last `window_ms` below `max`), `token_bucket` (Brooker: `capacity`
//! tokens, full at start, `deposit` per first try, a retry needs and spends
//! `cost`) and `breaker` (Brooker's retry breaker: no retries while failed
//! attempts / first tries so far exceed `threshold`).

use crate::engine::Ticks;
use crate::model::RetryBudget;
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub(crate) enum BudgetState {
    /// No budget: every retry is allowed.
    Unlimited,
    Ratio {
        max: f64,
        window: Ticks,
        first: VecDeque<Ticks>,
        retries: VecDeque<Ticks>,
    },
    TokenBucket {
        capacity: f64,
        deposit: f64,
        cost: f64,
        tokens: f64,
    },
    Breaker {
        threshold: f64,
        first: u64,
        failed: u64,
    },
}

impl BudgetState {
    pub fn new(b: Option<&RetryBudget>) -> BudgetState {
        match b {
            None => BudgetState::Unlimited,
            Some(&RetryBudget::Ratio { max, window }) => BudgetState::Ratio {
                max,
                window,
                first: VecDeque::new(),
                retries: VecDeque::new(),
            },
            Some(&RetryBudget::TokenBucket {
                capacity,
                deposit,
                cost,
            }) => BudgetState::TokenBucket {
                capacity,
                deposit,
                cost,
                tokens: capacity,
            },
            Some(&RetryBudget::Breaker { threshold }) => BudgetState::Breaker {
                threshold,
                first: 0,
                failed: 0,
            },
        }
    }

    /// A call makes its first try now.
    pub fn first_try(&mut self, now: Ticks) {
        match self {
            BudgetState::Unlimited => {}
            BudgetState::Ratio { first, .. } => first.push_back(now),
            BudgetState::TokenBucket {
                capacity,
                deposit,
                tokens,
                ..
            } => *tokens = (*tokens + *deposit).min(*capacity),
            BudgetState::Breaker { first, .. } => *first += 1,
        }
    }

    /// An attempt failed.
    pub fn failed(&mut self) {
        if let BudgetState::Breaker { failed, .. } = self {
            *failed += 1;
        }
    }

    /// May a retry go now? When it may, it is counted (ratio) or paid (tokens).
    pub fn allow_retry(&mut self, now: Ticks) -> bool {
        match self {
            BudgetState::Unlimited => true,
            BudgetState::Ratio {
                max,
                window,
                first,
                retries,
            } => {
                let since = now.saturating_sub(*window);
                // a time exactly `window` ago is outside the last window
                while first.front().is_some_and(|&t| t <= since && now >= *window) {
                    first.pop_front();
                }
                while retries
                    .front()
                    .is_some_and(|&t| t <= since && now >= *window)
                {
                    retries.pop_front();
                }
                let ratio = if first.is_empty() {
                    f64::INFINITY
                } else {
                    retries.len() as f64 / first.len() as f64
                };
                let ok = ratio < *max;
                if ok {
                    retries.push_back(now);
                }
                ok
            }
            BudgetState::TokenBucket { cost, tokens, .. } => {
                let ok = *tokens >= *cost;
                if ok {
                    *tokens -= *cost;
                }
                ok
            }
            BudgetState::Breaker {
                threshold,
                first,
                failed,
            } => *first == 0 || (*failed as f64 / *first as f64) <= *threshold,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(f64) -> Ticks = Ticks::from_ms;

    #[test]
    fn ratio_allows_retries_below_max_of_first_tries_in_the_window() {
        let mut b = BudgetState::new(Some(&RetryBudget::Ratio {
            max: 0.1,
            window: MS(1000.0),
        }));
        // cold start: nothing in the window, no retry
        assert!(!b.allow_retry(MS(0.0)));
        for i in 0..20 {
            b.first_try(MS(i as f64));
        }
        // 0/20, 1/20 < 0.1: two retries; 2/20 = 0.1 is not below: refused
        assert!(b.allow_retry(MS(20.0)));
        assert!(b.allow_retry(MS(20.0)));
        assert!(!b.allow_retry(MS(20.0)));
        // a second later the window has forgotten all of it: no first tries
        assert!(!b.allow_retry(MS(1020.0)));
        b.first_try(MS(1020.0));
        assert!(b.allow_retry(MS(1020.0)), "0 / 1 < 0.1");
        assert!(!b.allow_retry(MS(1020.0)), "1 / 1");
    }

    #[test]
    fn token_bucket_starts_full_deposits_per_first_try_and_caps() {
        let mut b = BudgetState::new(Some(&RetryBudget::TokenBucket {
            capacity: 5.0,
            deposit: 0.1,
            cost: 1.0,
        }));
        // cold start: full, 5 retries at once, then none
        for _ in 0..5 {
            assert!(b.allow_retry(MS(0.0)));
        }
        assert!(!b.allow_retry(MS(0.0)));
        // 10 first tries earn one retry (0.1 x 10, up to rounding: 11 to be sure)
        for _ in 0..11 {
            b.first_try(MS(1.0));
        }
        assert!(b.allow_retry(MS(1.0)));
        assert!(!b.allow_retry(MS(1.0)));
        // deposits never pass the capacity
        for _ in 0..1000 {
            b.first_try(MS(2.0));
        }
        let n = (0..100).filter(|_| b.allow_retry(MS(2.0))).count();
        assert_eq!(n, 5);
    }

    #[test]
    fn retry_breaker_stops_retries_above_the_threshold_and_resumes_below() {
        let mut b = BudgetState::new(Some(&RetryBudget::Breaker { threshold: 0.1 }));
        // cold start: no first try yet, nothing failed: allowed
        assert!(b.allow_retry(MS(0.0)));
        for _ in 0..10 {
            b.first_try(MS(0.0));
        }
        b.failed();
        assert!(b.allow_retry(MS(0.0)), "1/10 does not exceed 0.1");
        b.failed();
        assert!(!b.allow_retry(MS(0.0)), "2/10 does");
        for _ in 0..10 {
            b.first_try(MS(0.0));
        }
        assert!(b.allow_retry(MS(0.0)), "2/20 again");
    }
}
