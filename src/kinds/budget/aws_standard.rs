//! `aws_standard`: the AWS SDKs' standard-mode retry quota.

use super::{Kind, Rule};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::kinds::outcome::{AttemptOutcome, OutcomeSet};

/// The AWS SDKs' standard retry quota: a retry needs and spends its cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AwsStandard {
    /// Tokens at most (and at start).
    pub quota: u32,
    /// What a retry costs.
    pub retry_cost: u32,
    /// What a retry after a timed-out attempt costs.
    pub timeout_cost: u32,
    /// What a call's first try answered ok adds back.
    pub no_retry_increment: u32,
}

impl Kind for AwsStandard {
    const DECL: Decl = Decl {
        name: "aws_standard",
        family: "budget",
        keys: &[
            Key::with("quota", 500.0, Range::Whole(1)),
            Key::with("retry_cost", 5.0, Range::Whole(1)),
            Key::with("timeout_cost", 10.0, Range::Whole(1)),
            Key::with("no_retry_increment", 1.0, Range::Whole(0)),
        ],
        required_because: "",
    };
    type State = State;

    fn from_keys(k: &Keys) -> R<AwsStandard> {
        Ok(AwsStandard {
            quota: k.whole("quota"),
            retry_cost: k.whole("retry_cost"),
            timeout_cost: k.whole("timeout_cost"),
            no_retry_increment: k.whole("no_retry_increment"),
        })
    }

    fn start(&self, _counted: OutcomeSet) -> State {
        State {
            keys: *self,
            tokens: self.quota,
        }
    }
}

/// The quota: full at start; a retry needs and spends its cost
/// (`timeout_cost` after an attempt that timed out, `retry_cost`
/// otherwise); a call answered ok refunds the cost of the retry that
/// answered, or adds `no_retry_increment` when its first try answered (never
/// past the quota).
#[derive(Debug, Clone)]
pub struct State {
    keys: AwsStandard,
    tokens: u32,
}

impl Rule for State {
    /// `held` is what the attempt's retry cost (0: a first try).
    fn ended(&mut self, o: AttemptOutcome, held: u32) {
        if o == AttemptOutcome::Ok {
            let back = if held > 0 {
                held
            } else {
                self.keys.no_retry_increment
            };
            self.tokens = self.tokens.saturating_add(back).min(self.keys.quota);
        }
    }

    /// The retry's cost, spent, or None when the quota cannot pay it.
    fn allow_retry(&mut self, _now: Ticks, after: AttemptOutcome, _in_flight: u64) -> Option<u32> {
        let cost = if after == AttemptOutcome::Timeout {
            self.keys.timeout_cost
        } else {
            self.keys.retry_cost
        };
        (self.tokens >= cost).then(|| {
            self.tokens -= cost;
            cost
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAIL: AttemptOutcome = AttemptOutcome::Error;

    #[test]
    fn spends_costs_and_refunds_a_successful_retry() {
        let mut a = AwsStandard {
            quota: 500,
            retry_cost: 5,
            timeout_cost: 10,
            no_retry_increment: 1,
        }
        .start(0);
        let acquire = |a: &mut State, after| a.allow_retry(Ticks::ZERO, after, 0);
        let n = (0..1000).filter_map(|_| acquire(&mut a, FAIL)).count();
        assert_eq!(n, 100, "500 / 5");
        for _ in 0..4 {
            a.ended(AttemptOutcome::Ok, 0);
        }
        assert_eq!(acquire(&mut a, AttemptOutcome::Timeout), None, "4 < 10");
        assert_eq!(acquire(&mut a, FAIL), None, "4 < 5");
        a.ended(AttemptOutcome::Ok, 10);
        assert_eq!(acquire(&mut a, AttemptOutcome::Timeout), Some(10), "14 >= 10");
        a.ended(FAIL, 10);
        assert_eq!(a.tokens, 4, "a failed retry refunds nothing");
        for _ in 0..1000 {
            a.ended(AttemptOutcome::Ok, 5);
        }
        assert_eq!(a.tokens, 500, "capped at the quota");
    }
}
