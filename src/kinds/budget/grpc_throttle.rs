//! `grpc_throttle`: gRPC's retry throttling (gRFC A6 `retryThrottling
//! {maxTokens, tokenRatio}`), which throttles hedges too.

use super::{Kind, Rule};
use crate::engine::Ticks;
use crate::error::num;
use crate::kinds::check::{R, err};
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::kinds::outcome::{AttemptOutcome, OutcomeSet};

/// gRPC retry throttling, in thousandths of a token as gRPC keeps them: full
/// at start, a counted failed attempt takes 1000, a success adds
/// `ratio_milli`; no retry or hedge while the tokens are at or below half of
/// `max_milli`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrpcThrottle {
    /// `max_tokens` x 1000, in (0, 10^6].
    pub max_milli: u32,
    /// `token_ratio` x 1000 (decimals past the third dropped), >= 1.
    pub ratio_milli: u32,
}

impl Kind for GrpcThrottle {
    const DECL: Decl = Decl {
        name: "grpc_throttle",
        family: "budget",
        keys: &[
            Key::required("max_tokens", Range::Own("in (0, 1000]")),
            Key::required("token_ratio", Range::Positive),
        ],
        required_because: "gRPC's retryThrottling has no defaults",
    };
    const HEDGES: Option<&'static str> = Some("gRPC throttles hedges too");
    type State = State;

    /// Kept in thousandths of a token as gRPC does (decimals past the third
    /// are dropped).
    fn from_keys(k: &Keys) -> R<GrpcThrottle> {
        let max = k.num("max_tokens");
        if !(max > 0.0 && max <= 1000.0) {
            return err(
                k.at("max_tokens"),
                format!(
                    "must be in (0, 1000]: above 0 and at most 1000 (gRPC's rule; got {})",
                    num(max)
                ),
            );
        }
        let ratio = k.num("token_ratio");
        let ratio_milli = (ratio * 1000.0).floor();
        if ratio_milli < 1.0 {
            return err(
                k.at("token_ratio"),
                format!(
                    "must be at least 0.001: gRPC keeps three decimals, and {} would keep 0",
                    num(ratio)
                ),
            );
        }
        // gRPC core keeps the ratio in an int of thousandths
        if ratio_milli > f64::from(u32::MAX) {
            return err(
                k.at("token_ratio"),
                format!("must be <= 4294967 (got {})", num(ratio)),
            );
        }
        Ok(GrpcThrottle {
            max_milli: ((max * 1000.0).floor() as u32).max(1),
            ratio_milli: ratio_milli as u32,
        })
    }

    fn start(&self, counted: OutcomeSet) -> State {
        let max = u64::from(self.max_milli);
        State {
            max,
            threshold: max / 2,
            ratio: u64::from(self.ratio_milli),
            tokens: max,
            counted,
        }
    }
}

/// The tokens, in thousandths: an attempt that fails with a counted outcome
/// takes 1000 (down to 0), one answered ok adds the ratio (up to the maximum);
/// no retry or hedge goes while the tokens are at or below half the maximum.
#[derive(Debug, Clone)]
pub struct State {
    max: u64,
    threshold: u64,
    ratio: u64,
    tokens: u64,
    /// The failed outcomes that take a token (the policy's retried or, for a
    /// hedge, non-fatal ones).
    counted: OutcomeSet,
}

impl Rule for State {
    fn ended(&mut self, o: AttemptOutcome, _held: u32) {
        if o == AttemptOutcome::Ok {
            self.tokens = (self.tokens + self.ratio).min(self.max);
        } else if self.counted & o.bit() != 0 {
            self.tokens = self.tokens.saturating_sub(1000);
        }
    }

    fn allow_retry(&mut self, _now: Ticks, _after: AttemptOutcome, _in_flight: u64) -> Option<u32> {
        (self.tokens > self.threshold).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAIL: AttemptOutcome = AttemptOutcome::Error;

    #[test]
    fn stops_at_half_and_resumes_after_successes() {
        // max 10 tokens, ratio 0.1: threshold 5 tokens
        let mut g = GrpcThrottle {
            max_milli: 10_000,
            ratio_milli: 100,
        }
        .start(FAIL.bit());
        let allows = |g: &mut State| g.allow_retry(Ticks::ZERO, FAIL, 0).is_some();
        for _ in 0..4 {
            g.ended(FAIL, 0);
        }
        assert!(allows(&mut g), "6 tokens > 5");
        g.ended(FAIL, 0);
        assert!(!allows(&mut g), "5 tokens is not above 5");
        // an outcome the policy does not retry takes nothing
        g.ended(AttemptOutcome::Timeout, 0);
        g.ended(AttemptOutcome::Ok, 0);
        assert!(allows(&mut g), "5.1 tokens");
        // never below 0, never above the maximum
        for _ in 0..100 {
            g.ended(FAIL, 0);
        }
        assert_eq!(g.tokens, 0);
        for _ in 0..1000 {
            g.ended(AttemptOutcome::Ok, 0);
        }
        assert_eq!(g.tokens, 10_000);
    }
}
