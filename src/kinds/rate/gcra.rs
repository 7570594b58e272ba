//! gcra (the generic cell rate algorithm): one theoretical arrival time instead
//! of a token level; it decides as the continuous token bucket does.

use super::{Kind, Rate, Rule, clamp_ticks};
use crate::engine::Ticks;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};

/// `gcra`: no keys of its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gcra;

impl Kind for Gcra {
    const DECL: Decl = Decl {
        name: "gcra",
        family: "rate limiter",
        keys: &[],
        required_because: "",
    };
    type State = Tat;

    fn from_keys(_: &Keys) -> R<Gcra> {
        Ok(Gcra)
    }

    fn start(&self, _: &Rate) -> Tat {
        Tat::default()
    }
}

/// The theoretical arrival time in ticks x limit (so the emission interval
/// window_ms / limit is exactly window_ticks).
#[derive(Debug, Clone, Default)]
pub struct Tat {
    tat: u128,
}

impl Rule for Tat {
    fn earliest(&self, rate: &Rate, t0: Ticks) -> Ticks {
        let w = u128::from(rate.window.0);
        let lim = u128::from(rate.limit);
        let tau = (lim - 1) * w;
        t0.max(clamp_ticks(self.tat.saturating_sub(tau).div_ceil(lim)))
    }

    fn take(&mut self, rate: &Rate, at: Ticks) {
        let lim = u128::from(rate.limit);
        self.tat = self.tat.max(u128::from(at.0) * lim) + u128::from(rate.window.0);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{rate, run, throttled};

    #[test]
    fn gcra_matches_the_continuous_token_bucket() {
        let seq = [0., 0., 0., 50., 60., 100., 200., 200., 200., 230., 260.];
        let g = rate("gcra", 2, 100.0);
        let tb = rate("token-bucket", 2, 100.0);
        assert_eq!(
            run(&g, &seq),
            ["P", "P", "R", "P", "R", "P", "P", "P", "R", "R", "P"]
        );
        assert_eq!(run(&g, &seq), run(&tb, &seq));
        let gt = throttled(g, 60.0);
        let tbt = throttled(tb, 60.0);
        let seq = [0., 0., 0., 0., 10., 45.];
        assert_eq!(run(&gt, &seq), ["P", "P", "D50", "R", "R", "D100"]);
        assert_eq!(run(&gt, &seq), run(&tbt, &seq));
    }

    #[test]
    fn emission_interval_need_not_divide_the_window() {
        // 3 per 100 ms: GCRA's interval is 33.333... ms; no rounding drift
        let g = rate("gcra", 3, 100.0);
        let seq: Vec<f64> = (0..7).map(|i| 100.0 * i as f64).collect();
        assert!(run(&g, &seq).iter().all(|d| d == "P"));
    }
}
