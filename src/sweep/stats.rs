//! Streaming statistics for sweeps: running mean and variance (Welford), the
//! Student t quantile for confidence intervals, score intervals for shares (Wilson
//! for one share, Tango for the difference of two paired shares), and a median
//! store whose memory is bounded whatever the number of replications.
//!
//! Everything here is deterministic given the order of the values, so a sweep and a
//! merge of its shards (which feed the same values in the same order) print the same
//! bytes.

use std::collections::BTreeMap;

/// Mean, variance, min and max of a stream of values, in O(1) memory.
#[derive(Debug, Clone, Default)]
pub struct Running {
    n: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Running {
    /// Adds a value.
    pub fn push(&mut self, x: f64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Values added.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Mean of the values; `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Smallest value; `None` when empty.
    pub fn min(&self) -> Option<f64> {
        (self.n > 0).then_some(self.min)
    }

    /// Largest value; `None` when empty.
    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }

    /// The sample standard deviation (n - 1 in the denominator); needs two values.
    pub fn sd(&self) -> Option<f64> {
        (self.n > 1).then(|| (self.m2.max(0.0) / (self.n - 1) as f64).sqrt())
    }

    /// The Student t interval of the mean at two-sided level `confidence`.
    pub fn interval(&self, confidence: f64) -> Option<(f64, f64)> {
        let n = self.n.max(2) as f64;
        self.interval_with(t_quantile(0.5 + confidence / 2.0, n - 1.0))
    }

    /// The interval mean +/- t sd / sqrt(n), `t` the quantile for n - 1 degrees of
    /// freedom (computed once per n by callers with many series).
    pub fn interval_with(&self, t: f64) -> Option<(f64, f64)> {
        let sd = self.sd()?;
        let half = t * sd / (self.n as f64).sqrt();
        Some((self.mean - half, self.mean + half))
    }
}

/// The upper median `sorted[n / 2]` (the seed's definition of a median) of a stream.
///
/// Values are kept exactly up to `cap`; past it every value goes into a log-linear
/// histogram of the f64 bit pattern (10 mantissa bits: relative error below 0.1 %,
/// integers below 2048 still exact), each bucket remembering its smallest value, so
/// the reported median is always a value that occurred. Memory is bounded by `cap`
/// plus the buckets in use, and the result does not depend on the order of values.
#[derive(Debug, Clone)]
pub struct Median {
    exact: Vec<f64>,
    cap: usize,
    /// bucket -> (count, smallest value seen in it)
    buckets: BTreeMap<u64, (u64, f64)>,
    n: u64,
}

/// Keeps the sign, the 11 exponent bits and the top 10 mantissa bits.
const BUCKET_SHIFT: u32 = 42;

/// Maps an f64 to an integer with the same order (negative values below positive).
fn ordered_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

impl Median {
    /// An empty stream keeping at most `cap` (at least 1) values exactly.
    pub fn with_cap(cap: usize) -> Median {
        Median {
            exact: Vec::new(),
            cap: cap.max(1),
            buckets: BTreeMap::new(),
            n: 0,
        }
    }

    /// Adds a value.
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        if self.buckets.is_empty() && self.exact.len() < self.cap {
            self.exact.push(x);
            return;
        }
        for v in std::mem::take(&mut self.exact) {
            self.bin(v);
        }
        self.bin(x);
    }

    fn bin(&mut self, x: f64) {
        let e = self
            .buckets
            .entry(ordered_bits(x) >> BUCKET_SHIFT)
            .or_insert((0, x));
        e.0 += 1;
        e.1 = e.1.min(x);
    }

    /// True while the median is exact.
    pub fn is_exact(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Values added.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The upper median `sorted[n / 2]` (exact, or a binned value that occurred);
    /// `None` when empty.
    pub fn median(&mut self) -> Option<f64> {
        self.at_rank(self.n / 2)
    }

    /// The value of 0-based rank `rank` in sorted order (exact, or the smallest
    /// value of its bucket); `None` past the last value.
    pub fn at_rank(&mut self, rank: u64) -> Option<f64> {
        if rank >= self.n {
            return None;
        }
        if self.buckets.is_empty() {
            let (_, v, _) = self
                .exact
                .select_nth_unstable_by(rank as usize, f64::total_cmp);
            return Some(*v);
        }
        let mut seen = 0;
        for (count, smallest) in self.buckets.values() {
            seen += count;
            if seen > rank {
                return Some(*smallest);
            }
        }
        None
    }
}

/// The `p` quantile of the standard normal distribution (`p` in (0, 1)):
/// bisection on its CDF (through `erfc`, accurate in both tails), to about 1e-15.
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || p <= 0.0 || p >= 1.0 {
        return f64::NAN;
    }
    if p < 0.5 {
        return -normal_quantile(1.0 - p);
    }
    if p == 0.5 {
        return 0.0;
    }
    let cdf = |x: f64| 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
    let (mut lo, mut hi) = (0.0, 40.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-15 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The Wilson score interval of a share: `ones` successes in `n` trials, `z` the
/// normal quantile of the two-sided level (`normal_quantile(0.5 + c / 2)`).
///
/// It is the set of shares p whose score test (p's own standard error) does not
/// reject `ones / n`: always inside [0, 1], never of zero width, exactly 0 below at
/// 0 of n and exactly 1 above at n of n (0 of 20 at 95 %: [0, 0.1611]). Chosen over
/// Clopper-Pearson, whose "exact" interval holds at least the level for every p
/// and is therefore wider than it needs to be (at 0 of 20: [0, 0.168]; more so
/// in the middle), because Wilson's coverage is close to the level on average
/// over p even for small n (Brown, Cai and DasGupta, 2001). `None` when `n` is 0.
pub fn wilson(ones: u64, n: u64, z: f64) -> Option<(f64, f64)> {
    if n == 0 || ones > n {
        return None;
    }
    let nf = n as f64;
    let p = ones as f64 / nf;
    let z2 = z * z;
    let denom = 1.0 + z2 / nf;
    let center = (p + z2 / (2.0 * nf)) / denom;
    let half = z / denom * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    let low = if ones == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let high = if ones == n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    Some((low, high))
}

/// Tango's score interval (1998) for the difference of two shares measured on
/// the same units (paired 0/1 values): `up` pairs where the first is 1 and the
/// second 0, `down` pairs the other way round, `n` pairs in all, `z` as for
/// [`wilson`]. The difference is `(up - down) / n`; pairs that agree only count in
/// `n`. The interval is the set of differences d whose score statistic
/// `(up - down - n d) / sqrt(n (2 q(d) + d (1 - d)))` (q(d): the restricted
/// maximum-likelihood share of `down` pairs) lies within +/- z: always inside
/// [-1, 1], and never of zero width (20 pairs that all agree at 95 %:
/// [-0.1611, 0.1611], as Wilson's 0 of 20). `None` when `n` is 0.
pub fn tango(up: u64, down: u64, n: u64, z: f64) -> Option<(f64, f64)> {
    if n == 0 || up + down > n {
        return None;
    }
    let (b, c, nf) = (up as f64, down as f64, n as f64);
    let score = |d: f64| -> f64 {
        // q solves 2n q^2 + (-(b + c) + (2n - b + c) d) q - c d (1 - d) = 0
        let (qa, qb, qc) = (
            2.0 * nf,
            -(b + c) + (2.0 * nf - b + c) * d,
            -c * d * (1.0 - d),
        );
        let q = ((-qb + (qb * qb - 4.0 * qa * qc).max(0.0).sqrt()) / (2.0 * qa)).max(0.0);
        let num = b - c - nf * d;
        let var = nf * (2.0 * q + d * (1.0 - d));
        if var <= 0.0 {
            return if num > 0.0 {
                f64::INFINITY
            } else if num < 0.0 {
                f64::NEG_INFINITY
            } else {
                0.0
            };
        }
        num / var.sqrt()
    };
    let estimate = (b - c) / nf;
    // the score falls as d rises: bisect for score = +z below the estimate and
    // -z above it
    let bisect = |mut lo: f64, mut hi: f64, target: f64| -> f64 {
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if score(mid) > target {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo <= 1e-15 {
                break;
            }
        }
        0.5 * (lo + hi)
    };
    let low = if score(-1.0) <= z {
        -1.0
    } else {
        bisect(-1.0, estimate, z)
    };
    let high = if score(1.0) >= -z {
        1.0
    } else {
        bisect(estimate, 1.0, -z)
    };
    Some((low.max(-1.0), high.min(1.0)))
}

/// The `p` quantile of Student's t distribution with `df` degrees of freedom
/// (`p` in (0, 1), `df` > 0): the t of a two-sided interval at level c is
/// `t_quantile(0.5 + c / 2, n - 1)`. Bisection on the CDF, to about 1e-12.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || df.is_nan() || df <= 0.0 || p <= 0.0 || p >= 1.0 {
        return f64::NAN;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    if p == 0.5 {
        return 0.0;
    }
    let mut hi = 1.0;
    while t_cdf(hi, df) < p {
        hi *= 2.0;
        if hi > 1e300 {
            return f64::INFINITY;
        }
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// P(T <= t) for Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, x);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The regularized incomplete beta function I_x(a, b) (Numerical Recipes `betai`).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    // Converges in O(sqrt(max(a, b))) steps: a few thousand even for df = 1e7.
    for m in 1..200_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// ln Gamma(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error about 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tol: f64) {
        assert!(
            (got - want).abs() <= tol * want.abs().max(1.0),
            "got {got}, want {want}"
        );
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        // (p, df, t) from standard t tables (R: qt(p, df)).
        let known = [
            (0.975, 1.0, 12.706_204_736),
            (0.975, 2.0, 4.302_652_730),
            (0.975, 3.0, 3.182_446_305),
            (0.975, 5.0, 2.570_581_836),
            (0.975, 10.0, 2.228_138_852),
            (0.975, 30.0, 2.042_272_456),
            (0.975, 100.0, 1.983_971_519),
            (0.975, 1000.0, 1.962_339_081),
            (0.95, 20.0, 1.724_718_243),
            (0.995, 1.0, 63.656_741_163),
            (0.995, 5.0, 4.032_142_984),
            (0.9, 3.0, 1.637_744_354),
            (0.999, 9.0, 4.296_805_663),
        ];
        for (p, df, t) in known {
            close(t_quantile(p, df), t, 1e-8);
            close(t_quantile(1.0 - p, df), -t, 1e-8);
        }
        // large df tends to the normal quantile 1.959964
        close(t_quantile(0.975, 1e6), 1.959_966_357, 1e-8);
        close(t_quantile(0.5, 7.0), 0.0, 0.0);
        assert!(t_quantile(1.0, 3.0).is_nan());
        assert!(t_quantile(0.9, 0.0).is_nan());
    }

    #[test]
    fn t_cdf_is_symmetric_and_matches_cauchy_at_one_df() {
        // df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/pi
        for t in [-3.0, -0.5, 0.0, 0.7, 10.0] {
            close(
                t_cdf(t, 1.0),
                0.5 + f64::atan(t) / std::f64::consts::PI,
                1e-12,
            );
            close(t_cdf(t, 4.0) + t_cdf(-t, 4.0), 1.0, 1e-12);
        }
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        close(ln_gamma(1.0), 0.0, 1e-14);
        close(ln_gamma(5.0), 24f64.ln(), 1e-13);
        close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-13);
        close(
            ln_gamma(101.0),
            (1..=100).map(|k| f64::from(k).ln()).sum(),
            1e-12,
        );
    }

    #[test]
    fn running_gives_mean_sd_and_a_t_interval() {
        let mut r = Running::default();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            r.push(x);
        }
        assert_eq!(r.n(), 8);
        assert_eq!(r.mean(), Some(5.0));
        close(r.sd().unwrap(), (32.0f64 / 7.0).sqrt(), 1e-14);
        let (lo, hi) = r.interval(0.95).unwrap();
        let half = 2.364_624_252 * (32.0f64 / 7.0).sqrt() / 8f64.sqrt();
        close(lo, 5.0 - half, 1e-8);
        close(hi, 5.0 + half, 1e-8);
        assert_eq!((r.min(), r.max()), (Some(2.0), Some(9.0)));

        let mut one = Running::default();
        one.push(3.0);
        assert_eq!(one.sd(), None, "one value has no spread");
        assert_eq!(one.interval(0.95), None);
        assert_eq!(Running::default().mean(), None);
    }

    #[test]
    fn median_is_the_upper_median_exact_then_bounded() {
        let mut m = Median::with_cap(100);
        for x in [5.0, 1.0, 4.0, 2.0, 3.0, 6.0] {
            m.push(x);
        }
        assert_eq!(m.median(), Some(4.0), "sorted[n/2]");
        assert!(m.is_exact());
        assert_eq!(Median::with_cap(4).median(), None);

        // Past the cap: integers stay exact, other values within 0.1 %.
        let mut small = Median::with_cap(10);
        let mut exact = Median::with_cap(10_000);
        for i in 0..5001 {
            let x = f64::from((i * 7919) % 5001) * 0.37 - 300.0;
            small.push(x);
            exact.push(x);
        }
        assert!(!small.is_exact());
        let (a, b) = (small.median().unwrap(), exact.median().unwrap());
        assert!((a - b).abs() <= b.abs() / 1000.0 + 1e-9, "{a} vs {b}");

        let mut ints = Median::with_cap(3);
        for x in [40.0, 46.0, 47.0, 46.0, 48.0, 45.0, 46.0] {
            ints.push(x);
        }
        assert_eq!(ints.median(), Some(46.0));
    }

    #[test]
    fn normal_quantiles_match_published_tables() {
        close(normal_quantile(0.975), 1.959_963_984_540_054, 1e-12);
        close(normal_quantile(0.95), 1.644_853_626_951_472, 1e-12);
        close(normal_quantile(0.995), 2.575_829_303_548_901, 1e-12);
        close(normal_quantile(0.025), -1.959_963_984_540_054, 1e-12);
        close(normal_quantile(0.5), 0.0, 0.0);
        assert!(normal_quantile(1.0).is_nan() && normal_quantile(0.0).is_nan());
    }

    #[test]
    fn wilson_intervals_match_known_values_and_stay_in_0_1() {
        let z = normal_quantile(0.975);
        // textbook values (Wilson 1927; Newcombe 1998, table I: 1 of 10)
        let (lo, hi) = wilson(0, 20, z).unwrap();
        assert_eq!(lo, 0.0);
        close(hi, 0.161_125_158, 1e-8);
        let (lo, hi) = wilson(20, 20, z).unwrap();
        close(lo, 0.838_874_842, 1e-8);
        assert_eq!(hi, 1.0);
        let (lo, hi) = wilson(10, 20, z).unwrap();
        close(lo, 0.299_298_008, 1e-8);
        close(hi, 0.700_701_992, 1e-8);
        let (lo, hi) = wilson(1, 10, z).unwrap();
        close(lo, 0.017_876_213, 1e-8);
        close(hi, 0.404_150_027, 1e-8);
        assert_eq!(wilson(0, 0, z), None);
        assert_eq!(wilson(3, 2, z), None);
        for n in 1..40 {
            for k in 0..=n {
                let (lo, hi) = wilson(k, n, z).unwrap();
                let p = k as f64 / n as f64;
                assert!((0.0..=p).contains(&lo) && (p..=1.0).contains(&hi) && hi > lo);
            }
        }
    }

    #[test]
    fn tango_intervals_bound_the_score_and_mirror() {
        let z = normal_quantile(0.975);
        // pairs that all agree: as wide as Wilson's 0 of n on either side
        let (lo, hi) = tango(0, 0, 20, z).unwrap();
        close(lo, -0.161_125_158, 1e-8);
        close(hi, 0.161_125_158, 1e-8);
        // every pair up: the difference is 1, the upper end exactly 1
        let (lo, hi) = tango(20, 0, 20, z).unwrap();
        assert_eq!(hi, 1.0);
        close(lo, 16.158_541 / 23.841_459, 1e-6);
        // Fagerland, Lydersen and Laake (2014), airway hyper-responsiveness
        // (n12 = 1, n21 = 7 of 21 pairs): Tango's interval -0.517 to -0.026
        let (lo, hi) = tango(1, 7, 21, z).unwrap();
        assert!((lo + 0.517).abs() < 5e-4, "{lo}");
        assert!((hi + 0.026).abs() < 5e-4, "{hi}");
        // swapping the rows mirrors the interval
        let (a, b) = tango(7, 1, 21, z).unwrap();
        close(a, -hi, 1e-9);
        close(b, -lo, 1e-9);
        for n in 1..25 {
            for up in 0..=n {
                for down in 0..=n - up {
                    let (lo, hi) = tango(up, down, n, z).unwrap();
                    let d = (up as f64 - down as f64) / n as f64;
                    assert!(-1.0 <= lo && lo <= d && d <= hi && hi <= 1.0 && hi > lo);
                }
            }
        }
    }

    #[test]
    fn ordered_bits_keep_the_order_of_values() {
        let xs = [-1e9, -2.5, -0.0, 0.0, 1e-9, 3.0, 1e300];
        for w in xs.windows(2) {
            assert!(ordered_bits(w[0]) <= ordered_bits(w[1]), "{w:?}");
        }
    }
}
