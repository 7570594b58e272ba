//! token-bucket: `limit` tokens per window_ms, at most `limit` held, full at the
//! start; each pass takes one. Continuous refill counts in units of
//! 1/window_ticks of a token (refill: `limit` units per tick); discrete refill
//! counts whole tokens, one arriving at each multiple of window_ms / limit.

use super::clamp_ticks;
use crate::engine::Ticks;
use crate::model::{Limiter, Refill};

/// The level at time `at` after the last take (continuous units or whole
/// tokens).
#[derive(Debug, Clone)]
pub(super) struct TokenBucket {
    at: Ticks,
    level: u128,
}

impl TokenBucket {
    /// A full bucket at t = 0.
    pub(super) fn full(l: &Limiter) -> TokenBucket {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        TokenBucket {
            at: Ticks::ZERO,
            level: match l.refill {
                Refill::Continuous => lim * w,
                Refill::Discrete => lim,
            },
        }
    }

    /// Token level at `t` >= the last take (continuous units or whole tokens).
    fn tokens_at(&self, l: &Limiter, t: Ticks) -> u128 {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        let (at, level) = (self.at, self.level);
        match l.refill {
            Refill::Continuous => (level + u128::from((t - at).0) * lim).min(lim * w),
            Refill::Discrete => {
                let arrived = |x: Ticks| u128::from(x.0) * lim / w;
                (level + arrived(t) - arrived(at)).min(lim)
            }
        }
    }

    pub(super) fn earliest(&self, l: &Limiter, t0: Ticks) -> Ticks {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        let have = self.tokens_at(l, t0);
        match l.refill {
            Refill::Continuous if have >= w => t0,
            Refill::Continuous => t0 + clamp_ticks((w - have).div_ceil(lim)),
            Refill::Discrete if have >= 1 => t0,
            Refill::Discrete => {
                let next = u128::from(t0.0) * lim / w + 1;
                clamp_ticks((next * w).div_ceil(lim))
            }
        }
    }

    pub(super) fn take(&mut self, l: &Limiter, at: Ticks) {
        let unit = match l.refill {
            Refill::Continuous => u128::from(l.window.0),
            Refill::Discrete => 1,
        };
        self.level = self.tokens_at(l, at) - unit;
        self.at = at;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{limiter, run, throttled};
    use crate::engine::Ticks;
    use crate::model::{Algorithm, Refill};

    #[test]
    fn token_bucket_refills_continuously_from_full() {
        let l = limiter(Algorithm::TokenBucket, 2, 100.0);
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
        let mut l = limiter(Algorithm::TokenBucket, 2, 100.0);
        let seq = [90., 90., 100., 140.];
        // continuous: empty at 90, the next whole token at 140
        assert_eq!(run(&l, &seq), ["P", "P", "R", "P"]);
        // discrete: a token lands at every multiple of 50 ms: 100 passes, 140 waits
        // for 150
        l.refill = Refill::Discrete;
        assert_eq!(run(&l, &seq), ["P", "P", "P", "R"]);
        let t = throttled(l, 20.0);
        assert_eq!(run(&t, &[90., 90., 100., 140.]), ["P", "P", "P", "D150"]);
    }

    #[test]
    fn window_and_emission_interval_need_not_divide_evenly() {
        // 3 per 100 ms: a held request waits 33.333... ms, rounded up to a tick
        let tb = throttled(limiter(Algorithm::TokenBucket, 3, 100.0), 1000.0);
        let got = run(&tb, &[0., 0., 0., 0.]);
        assert_eq!(got[3], format!("D{}", Ticks(33_333_334).as_ms()));
    }
}
