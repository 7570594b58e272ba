//! token-bucket: `limit` tokens per window_ms, at most `limit` held, full at the
//! start; each pass takes one. Continuous refill counts in units of
//! 1/window_ticks of a token (refill: `limit` units per tick); discrete refill
//! counts whole tokens, one arriving at each multiple of window_ms / limit.

use super::{Kind, Rate, Rule, clamp_ticks};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};

/// How a token bucket refills (`refill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refill {
    /// Tokens flow in at `limit / window_ms`.
    Continuous,
    /// One whole token at every multiple of `window_ms / limit` from t = 0.
    Discrete,
}

/// `token-bucket`. How it refills (`refill`) is a key every rate limiter
/// may carry and only this algorithm reads ([`Rate::refill`]): a file that
/// varies `algorithm` keeps one table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket;

impl Kind for TokenBucket {
    const DECL: Decl = Decl {
        name: "token-bucket",
        family: "rate limiter",
        keys: &[],
        required_because: "",
    };
    type State = Level;

    fn from_keys(_: &Keys) -> R<TokenBucket> {
        Ok(TokenBucket)
    }

    /// A full bucket at t = 0.
    fn start(&self, rate: &Rate) -> Level {
        let w = u128::from(rate.window.0);
        let lim = u128::from(rate.limit);
        Level {
            refill: rate.refill,
            at: Ticks::ZERO,
            level: match rate.refill {
                Refill::Continuous => lim * w,
                Refill::Discrete => lim,
            },
        }
    }
}

/// The level at time `at` after the last take (continuous units or whole
/// tokens).
#[derive(Debug, Clone)]
pub struct Level {
    refill: Refill,
    at: Ticks,
    level: u128,
}

impl Level {
    /// Token level at `t` >= the last take (continuous units or whole tokens).
    fn tokens_at(&self, rate: &Rate, t: Ticks) -> u128 {
        let w = u128::from(rate.window.0);
        let lim = u128::from(rate.limit);
        let (at, level) = (self.at, self.level);
        match self.refill {
            Refill::Continuous => (level + u128::from((t - at).0) * lim).min(lim * w),
            Refill::Discrete => {
                let arrived = |x: Ticks| u128::from(x.0) * lim / w;
                (level + arrived(t) - arrived(at)).min(lim)
            }
        }
    }
}

impl Rule for Level {
    fn earliest(&self, rate: &Rate, t0: Ticks) -> Ticks {
        let w = u128::from(rate.window.0);
        let lim = u128::from(rate.limit);
        let have = self.tokens_at(rate, t0);
        match self.refill {
            Refill::Continuous if have >= w => t0,
            Refill::Continuous => t0 + clamp_ticks((w - have).div_ceil(lim)),
            Refill::Discrete if have >= 1 => t0,
            Refill::Discrete => {
                let next = u128::from(t0.0) * lim / w + 1;
                clamp_ticks((next * w).div_ceil(lim))
            }
        }
    }

    fn take(&mut self, rate: &Rate, at: Ticks) {
        let unit = match self.refill {
            Refill::Continuous => u128::from(rate.window.0),
            Refill::Discrete => 1,
        };
        self.level = self.tokens_at(rate, at) - unit;
        self.at = at;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{rate, run, throttled, with};
    use crate::engine::Ticks;

    #[test]
    fn token_bucket_refills_continuously_from_full() {
        let l = rate("token-bucket", 2, 100.0);
        // one token per 50 ms, two to start with, never more than two
        let seq = [0., 0., 0., 50., 60., 100., 200., 200., 200.];
        let want = ["P", "P", "R", "P", "R", "P", "P", "P", "R"];
        assert_eq!(run(&l, &seq), want);
        let t = throttled(l, 60.0);
        assert_eq!(
            run(&t, &[0., 0., 0., 0., 10., 45.]),
            ["P", "P", "D50", "R", "R", "D100"]
        );
    }

    #[test]
    fn token_bucket_discrete_adds_whole_tokens_at_aligned_instants() {
        let l = rate("token-bucket", 2, 100.0);
        let seq = [90., 90., 100., 140.];
        // continuous: empty at 90, the next whole token at 140
        assert_eq!(run(&l, &seq), ["P", "P", "R", "P"]);
        // discrete: a token lands at every multiple of 50 ms: 100 passes, 140 waits
        // for 150
        let l =
            with("algorithm = \"token-bucket\"\nlimit = 2\nwindow_ms = 100\nrefill = \"discrete\"");
        assert_eq!(run(&l, &seq), ["P", "P", "P", "R"]);
        let t = throttled(l, 20.0);
        assert_eq!(run(&t, &[90., 90., 100., 140.]), ["P", "P", "P", "D150"]);
    }

    #[test]
    fn window_and_emission_interval_need_not_divide_evenly() {
        // 3 per 100 ms: a held request waits 33.333... ms, rounded up to a tick
        let tb = throttled(rate("token-bucket", 3, 100.0), 1000.0);
        let got = run(&tb, &[0., 0., 0., 0.]);
        assert_eq!(got[3], format!("D{}", Ticks(33_333_334).as_ms()));
    }
}
