//! A fitted tail for measured values (`fit_tail_above` of an empirical file):
//! the values above a quantile u of the file are replaced by a generalized
//! Pareto distribution (GPD) of the exceedances over u,
//! F(y) = 1 - (1 + shape y / scale)^(-1 / shape) (1 - exp(-y / scale) at
//! shape 0), fitted by probability-weighted moments (Hosking and Wallis,
//! "Parameter and quantile estimation for the generalized Pareto
//! distribution", Technometrics 29, 1987): with the exceedances sorted,
//! a0 their mean and a1 = mean of (1 - (j - 0.35) / m) y_j, shape =
//! 2 - a0 / (a0 - 2 a1) and scale = 2 a0 a1 / (a0 - 2 a1). Its goodness of
//! fit is the Kolmogorov-Smirnov distance D between the exceedances and the
//! fitted distribution, with a p-value by parametric bootstrap (200 samples
//! of the fitted GPD, each refitted: the share whose D is at least this one's),
//! since D's own table does not hold for parameters fitted to the same data.

use rand::RngExt;

/// The fewest values above the quantile a tail is fitted to.
pub const MIN_EXCEEDANCES: usize = 10;

/// Samples of the bootstrap.
const BOOTSTRAP: usize = 200;

/// A fitted tail.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// The values at or below the quantile (by nearest rank) kept as measured.
    pub keep: usize,
    /// The quantile's value, ms: where the tail starts.
    pub threshold_ms: f64,
    /// The GPD's shape (xi) and scale (sigma, ms).
    pub shape: f64,
    /// See `shape`.
    pub scale_ms: f64,
    /// The values above the threshold it was fitted to.
    pub exceedances: usize,
    /// Kolmogorov-Smirnov distance to them.
    pub ks: f64,
}

/// The values of `sorted` above its `q` quantile by nearest rank.
pub fn above(n: usize, q: f64) -> usize {
    n - ((q * n as f64).ceil() as usize).clamp(1, n.max(1))
}

/// The PWM fit of exceedances `y` (sorted): (shape, scale), or None when
/// they do not make one (all equal; a shape of 1 or more has no mean).
fn pwm(y: &[f64]) -> Option<(f64, f64)> {
    let m = y.len() as f64;
    let a0 = y.iter().sum::<f64>() / m;
    let a1 = y
        .iter()
        .enumerate()
        .map(|(j, v)| (1.0 - (j as f64 + 0.65) / m) * v)
        .sum::<f64>()
        / m;
    let d = a0 - 2.0 * a1;
    let (shape, scale) = (2.0 - a0 / d, 2.0 * a0 * a1 / d);
    (d > 0.0 && scale > 0.0 && shape < 1.0 && shape.is_finite()).then_some((shape, scale))
}

/// The fitted GPD's distribution function at `y` >= 0.
fn cdf(y: f64, shape: f64, scale: f64) -> f64 {
    if shape.abs() < 1e-12 {
        return 1.0 - (-y / scale).exp();
    }
    let z = 1.0 + shape * y / scale;
    if z <= 0.0 {
        1.0
    } else {
        1.0 - z.powf(-1.0 / shape)
    }
}

/// The GPD's quantile at `v` in [0, 1), capped at 1 - 1e-9.
pub fn quantile(v: f64, shape: f64, scale: f64) -> f64 {
    let v = v.min(1.0 - 1e-9);
    if shape.abs() < 1e-12 {
        -scale * (1.0 - v).ln()
    } else {
        scale / shape * ((1.0 - v).powf(-shape) - 1.0)
    }
}

/// Kolmogorov-Smirnov distance of sorted `y` to the fitted GPD.
fn ks(y: &[f64], shape: f64, scale: f64) -> f64 {
    let m = y.len() as f64;
    y.iter().enumerate().fold(0.0, |d: f64, (j, &v)| {
        let f = cdf(v, shape, scale);
        d.max((j as f64 + 1.0) / m - f).max(f - j as f64 / m)
    })
}

/// Fits a tail to `values` above their `q` quantile (0 < q < 1); Err says
/// why not.
pub fn fit(values: &[f64], q: f64) -> Result<Fit, String> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let m = above(v.len(), q);
    if m < MIN_EXCEEDANCES {
        return Err(format!(
            "{m} of its {} values are above its {} quantile: a tail is fitted to at least {MIN_EXCEEDANCES}",
            v.len(),
            crate::error::num(q)
        ));
    }
    let keep = v.len() - m;
    let threshold_ms = v[keep - 1];
    let y: Vec<f64> = v[keep..].iter().map(|x| x - threshold_ms).collect();
    let Some((shape, scale_ms)) = pwm(&y) else {
        return Err(format!(
            "its {m} values above the {} quantile make no generalized Pareto tail with a mean (all equal, or a shape of 1 or more)",
            crate::error::num(q)
        ));
    };
    Ok(Fit {
        keep,
        threshold_ms,
        shape,
        scale_ms,
        exceedances: m,
        ks: ks(&y, shape, scale_ms),
    })
}

impl Fit {
    /// The p-value of its distance `ks`: the share of samples of the fitted
    /// tail (as many values, each refitted) at least that far from their own
    /// fit (a parametric bootstrap of 200, from a fixed stream).
    pub fn p_value(&self) -> f64 {
        let mut rng = crate::engine::stream(0, 0, "tail-fit");
        let mut at_least = 0;
        for _ in 0..BOOTSTRAP {
            let mut s: Vec<f64> = (0..self.exceedances)
                .map(|_| quantile(rng.random::<f64>(), self.shape, self.scale_ms))
                .collect();
            s.sort_by(f64::total_cmp);
            let d = pwm(&s).map_or(1.0, |(a, b)| ks(&s, a, b));
            at_least += usize::from(d >= self.ks);
        }
        (at_least + 1) as f64 / (BOOTSTRAP + 1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` draws of a GPD (shape, scale) above 10 ms, below it uniform.
    fn sample(n: usize, shape: f64, scale: f64, seed: u64) -> Vec<f64> {
        let mut rng = crate::engine::stream(seed, 0, "t");
        (0..n)
            .map(|i| {
                let u: f64 = rng.random();
                if i % 10 == 0 {
                    10.0 + quantile(u, shape, scale)
                } else {
                    10.0 * u
                }
            })
            .collect()
    }

    #[test]
    fn pwm_finds_the_shape_and_scale_of_a_pareto_tail() {
        for (shape, scale) in [(0.0, 5.0), (0.25, 8.0), (-0.2, 3.0)] {
            let f = fit(&sample(20_000, shape, scale, 3), 0.9).unwrap();
            assert!((f.shape - shape).abs() < 0.06, "{shape}: {f:?}");
            assert!((f.scale_ms / scale - 1.0).abs() < 0.08, "{scale}: {f:?}");
            assert!(f.p_value() > 0.05, "a GPD fits its own draws: {f:?}");
        }
    }

    #[test]
    fn a_tail_that_is_no_pareto_is_told_by_its_p_value() {
        // exceedances at two values only: a step, no GPD
        let mut v: Vec<f64> = (0..900).map(|i| i as f64 / 100.0).collect();
        v.extend((0..100).map(|i| if i % 2 == 0 { 10.0 } else { 50.0 }));
        let f = fit(&v, 0.9).unwrap();
        assert!(f.p_value() < 0.05, "{f:?}");
    }

    #[test]
    fn too_few_values_above_the_quantile_make_no_fit() {
        let v: Vec<f64> = (0..50).map(f64::from).collect();
        assert_eq!(above(50, 0.9), 5);
        assert!(fit(&v, 0.9).unwrap_err().starts_with("5 of its 50 values"));
        assert_eq!(above(200, 0.99), 2);
        assert_eq!(above(200, 0.999), 0);
    }
}
