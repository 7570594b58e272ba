//! Retry budgets, one per policy state: `ratio` (SRE book: retries / first tries
//! over the last `window_ms` below `max`), `token_bucket` (Brooker: `capacity`
//! tokens, full at start, `deposit` per first try, a retry needs and spends
//! `cost`) and `breaker` (Brooker's retry breaker: no retries while failed
//! attempts / first tries so far exceed `threshold`), and the kinds real
//! clients ship (`grpc_throttle`, `finagle`, `aws_standard`, `envoy`), whose
//! rules are in [`client_budgets`](super::client_budgets).
//!
//! A budget that holds something for a retry it allows (the AWS quota its
//! cost, Envoy a place among the retries open) says what with a number the
//! policy call keeps until that retry's attempt ends or the call is over.

use super::client_budgets::{AwsStandard, Envoy, Finagle, GrpcThrottle};
use crate::engine::Ticks;
use crate::model::{AttemptOutcome, OutcomeSet, RetryBudget};
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
    Grpc(GrpcThrottle),
    Finagle(Box<Finagle>),
    Aws(AwsStandard),
    Envoy(Envoy),
}

impl BudgetState {
    /// The state of budget `b`; `counted` are the failed outcomes gRPC's
    /// throttle counts (the policy's retried ones, or a hedge's non-fatal ones).
    pub fn new(b: Option<&RetryBudget>, counted: OutcomeSet) -> BudgetState {
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
            Some(&RetryBudget::GrpcThrottle {
                max_milli,
                ratio_milli,
            }) => BudgetState::Grpc(GrpcThrottle::new(max_milli, ratio_milli, counted)),
            Some(&RetryBudget::Finagle {
                percent,
                min_retries_per_s,
                ttl,
                ttl_s,
            }) => BudgetState::Finagle(Box::new(Finagle::new(
                percent,
                min_retries_per_s,
                ttl,
                ttl_s,
            ))),
            Some(&RetryBudget::AwsStandard {
                quota,
                retry_cost,
                timeout_cost,
                no_retry_increment,
            }) => BudgetState::Aws(AwsStandard::new(
                quota,
                retry_cost,
                timeout_cost,
                no_retry_increment,
            )),
            Some(&RetryBudget::Envoy {
                percent,
                min_retry_concurrency,
            }) => BudgetState::Envoy(Envoy::new(percent, min_retry_concurrency)),
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
            BudgetState::Finagle(f) => f.deposit(now),
            BudgetState::Grpc(_) | BudgetState::Aws(_) | BudgetState::Envoy(_) => {}
        }
    }

    /// Whether [`BudgetState::ended`] does anything (the policy skips it, and
    /// what it would read, without a budget).
    #[inline(always)]
    pub fn hears_attempts(&self) -> bool {
        !matches!(self, BudgetState::Unlimited)
    }

    /// An attempt ended with `o`; `held` is what the budget held for it (a
    /// retry's), and is given back here.
    #[inline(never)]
    pub fn ended(&mut self, o: AttemptOutcome, held: u32) {
        match self {
            BudgetState::Breaker { failed, .. } => *failed += (o != AttemptOutcome::Ok) as u64,
            BudgetState::Grpc(g) => g.ended(o),
            BudgetState::Aws(a) => a.ended(o, held),
            BudgetState::Envoy(e) => e.release_held(held),
            _ => {}
        }
    }

    /// A call over before its retry's attempt ended gives back what the budget
    /// held for it.
    pub fn release(&mut self, held: u32) {
        if let BudgetState::Envoy(e) = self {
            e.release_held(held);
        }
    }

    /// The most retries open at once (Envoy's budget; 0 for the others).
    pub fn most_open(&self) -> u64 {
        match self {
            BudgetState::Envoy(e) => e.most_open,
            _ => 0,
        }
    }

    /// May a retry (or a further hedge) go now, after an attempt that ended
    /// with `after`, with `in_flight` attempts of the policy state in flight?
    /// When it may, it is counted (ratio, finagle), paid (tokens) or held (the
    /// AWS quota, Envoy): Some(what the budget holds for it, 0 for nothing);
    /// None when the budget refuses it.
    pub fn allow_retry(
        &mut self,
        now: Ticks,
        after: AttemptOutcome,
        in_flight: u64,
    ) -> Option<u32> {
        let ok = match self {
            BudgetState::Unlimited => true,
            BudgetState::Grpc(g) => g.allows(),
            BudgetState::Finagle(f) => f.withdraw(now),
            BudgetState::Aws(a) => return a.acquire(after),
            BudgetState::Envoy(e) => return e.acquire(in_flight).then_some(1),
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
        };
        ok.then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(f64) -> Ticks = Ticks::from_ms;

    impl BudgetState {
        fn allows(&mut self, now: Ticks) -> bool {
            self.allow_retry(now, AttemptOutcome::Error, 0).is_some()
        }

        fn failed(&mut self) {
            self.ended(AttemptOutcome::Error, 0);
        }
    }

    #[test]
    fn ratio_allows_retries_below_max_of_first_tries_in_the_window() {
        let mut b = BudgetState::new(
            Some(&RetryBudget::Ratio {
                max: 0.1,
                window: MS(1000.0),
            }),
            0,
        );
        // cold start: nothing in the window, no retry
        assert!(!b.allows(MS(0.0)));
        for i in 0..20 {
            b.first_try(MS(i as f64));
        }
        // 0/20, 1/20 < 0.1: two retries; 2/20 = 0.1 is not below: refused
        assert!(b.allows(MS(20.0)));
        assert!(b.allows(MS(20.0)));
        assert!(!b.allows(MS(20.0)));
        // a second later the window has forgotten all of it: no first tries
        assert!(!b.allows(MS(1020.0)));
        b.first_try(MS(1020.0));
        assert!(b.allows(MS(1020.0)), "0 / 1 < 0.1");
        assert!(!b.allows(MS(1020.0)), "1 / 1");
    }

    #[test]
    fn token_bucket_starts_full_deposits_per_first_try_and_caps() {
        let mut b = BudgetState::new(
            Some(&RetryBudget::TokenBucket {
                capacity: 5.0,
                deposit: 0.1,
                cost: 1.0,
            }),
            0,
        );
        // cold start: full, 5 retries at once, then none
        for _ in 0..5 {
            assert!(b.allows(MS(0.0)));
        }
        assert!(!b.allows(MS(0.0)));
        // 10 first tries earn one retry (0.1 x 10, up to rounding: 11 to be sure)
        for _ in 0..11 {
            b.first_try(MS(1.0));
        }
        assert!(b.allows(MS(1.0)));
        assert!(!b.allows(MS(1.0)));
        // deposits never pass the capacity
        for _ in 0..1000 {
            b.first_try(MS(2.0));
        }
        let n = (0..100).filter(|_| b.allows(MS(2.0))).count();
        assert_eq!(n, 5);
    }

    #[test]
    fn retry_breaker_stops_retries_above_the_threshold_and_resumes_below() {
        let mut b = BudgetState::new(Some(&RetryBudget::Breaker { threshold: 0.1 }), 0);
        // cold start: no first try yet, nothing failed: allowed
        assert!(b.allows(MS(0.0)));
        for _ in 0..10 {
            b.first_try(MS(0.0));
        }
        b.failed();
        assert!(b.allows(MS(0.0)), "1/10 does not exceed 0.1");
        b.failed();
        assert!(!b.allows(MS(0.0)), "2/10 does");
        for _ in 0..10 {
            b.first_try(MS(0.0));
        }
        assert!(b.allows(MS(0.0)), "2/20 again");
    }
}
