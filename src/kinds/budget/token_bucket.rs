//! `token_bucket`: Brooker's retry token bucket: `capacity` tokens, full at
//! start, `deposit` per first try; a retry needs and spends `cost`.

use super::{Kind, Rule};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::kinds::outcome::{AttemptOutcome, OutcomeSet};

/// Tokens: full at start, `deposit` per first try, a retry needs and spends `cost`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket {
    /// Tokens at most (and at start).
    pub capacity: f64,
    /// Tokens each first try adds.
    pub deposit: f64,
    /// Tokens a retry needs and spends.
    pub cost: f64,
}

impl Kind for TokenBucket {
    const DECL: Decl = Decl {
        name: "token_bucket",
        family: "budget",
        keys: &[
            Key::with("capacity", 10.0, Range::NonNegative),
            Key::with("deposit", 0.1, Range::NonNegative),
            Key::with("cost", 1.0, Range::Positive),
        ],
        required_because: "",
    };
    type State = State;

    fn from_keys(k: &Keys) -> R<TokenBucket> {
        Ok(TokenBucket {
            capacity: k.num("capacity"),
            deposit: k.num("deposit"),
            cost: k.num("cost"),
        })
    }

    fn start(&self, _counted: OutcomeSet) -> State {
        State {
            keys: *self,
            tokens: self.capacity,
        }
    }
}

/// The tokens in the bucket.
#[derive(Debug, Clone)]
pub struct State {
    keys: TokenBucket,
    tokens: f64,
}

impl Rule for State {
    fn first_try(&mut self, _now: Ticks) {
        self.tokens = (self.tokens + self.keys.deposit).min(self.keys.capacity);
    }

    fn allow_retry(&mut self, _now: Ticks, _after: AttemptOutcome, _in_flight: u64) -> Option<u32> {
        let ok = self.tokens >= self.keys.cost;
        if ok {
            self.tokens -= self.keys.cost;
        }
        ok.then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(f64) -> Ticks = Ticks::from_ms;

    #[test]
    fn starts_full_deposits_per_first_try_and_caps() {
        let mut b = TokenBucket {
            capacity: 5.0,
            deposit: 0.1,
            cost: 1.0,
        }
        .start(0);
        let allows = |b: &mut State| b.allow_retry(MS(0.0), AttemptOutcome::Error, 0).is_some();
        // cold start: full, 5 retries at once, then none
        for _ in 0..5 {
            assert!(allows(&mut b));
        }
        assert!(!allows(&mut b));
        // 10 first tries earn one retry (0.1 x 10, up to rounding: 11 to be sure)
        for _ in 0..11 {
            b.first_try(MS(1.0));
        }
        assert!(allows(&mut b));
        assert!(!allows(&mut b));
        // deposits never pass the capacity
        for _ in 0..1000 {
            b.first_try(MS(2.0));
        }
        let n = (0..100).filter(|_| allows(&mut b)).count();
        assert_eq!(n, 5);
    }
}
