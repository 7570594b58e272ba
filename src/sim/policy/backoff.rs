//! The wait before a retry. With k the failed attempts so far and
//! `expo = min(cap, base * m^(k-1))` (m = `multiplier`, 2 unless given): `none` 0, `constant` base, `exponential`
//! expo, `full_jitter` U(0, expo), `equal_jitter` expo/2 + U(0, expo/2),
//! `decorrelated` min(cap, U(base, 3 * previous sleep)), starting from previous =
//! base (the AWS Architecture Blog's "Exponential Backoff and Jitter"). With
//! `jitter_factor` f > 0, `constant` and `exponential` draw the wait w from
//! U(w (1 - f), w (1 + f)) (resilience4j's randomized wait). `envoy` is
//! Envoy's `retry_back_off`: U(0, min((2^k - 1) x base, cap)).

use crate::engine::Stream;
use crate::model::{Backoff, BackoffKind};
use rand::RngExt;

/// `min(cap, base * multiplier^(k-1))`, k >= 1 (no overflow for any k: a
/// power past f64's range is infinite, and the cap holds it).
pub(crate) fn expo(b: &Backoff, k: u32) -> f64 {
    let steps = k.saturating_sub(1).min(1023) as i32;
    (b.base_ms * b.multiplier.powi(steps)).min(b.cap_ms)
}

/// `w` spread over U(w (1 - f), w (1 + f)); no draw when f = 0.
fn spread(b: &Backoff, w: f64, rng: &mut Stream) -> f64 {
    if b.jitter_factor == 0.0 {
        return w;
    }
    let u: f64 = rng.random();
    w * (1.0 - b.jitter_factor + 2.0 * b.jitter_factor * u)
}

/// The sleep in milliseconds before the retry that follows failed attempt `k`;
/// `prev` is the previous sleep (decorrelated jitter), base before the first.
/// Kinds without jitter draw nothing.
pub(crate) fn sleep_ms(b: &Backoff, k: u32, prev: f64, rng: &mut Stream) -> f64 {
    match b.kind {
        BackoffKind::None => 0.0,
        BackoffKind::Constant => spread(b, b.base_ms, rng),
        BackoffKind::Exponential => spread(b, expo(b, k), rng),
        BackoffKind::FullJitter => {
            let u: f64 = rng.random();
            u * expo(b, k)
        }
        BackoffKind::EqualJitter => {
            let e = expo(b, k) / 2.0;
            let u: f64 = rng.random();
            e + u * e
        }
        BackoffKind::Envoy => {
            let steps = k.min(1023) as i32;
            let hi = (b.base_ms * (2f64.powi(steps) - 1.0)).min(b.cap_ms);
            let u: f64 = rng.random();
            u * hi
        }
        BackoffKind::Decorrelated => {
            let hi = (3.0 * prev).max(b.base_ms);
            let u: f64 = rng.random();
            (b.base_ms + u * (hi - b.base_ms)).min(b.cap_ms)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn b(kind: BackoffKind) -> Backoff {
        Backoff {
            kind,
            base_ms: 10.0,
            cap_ms: 100.0,
            multiplier: 2.0,
            jitter_factor: 0.0,
        }
    }

    #[test]
    fn fixed_kinds_are_exact_and_draw_nothing() {
        let mut rng = stream(1, 0, "t");
        let before = rng.clone();
        assert_eq!(sleep_ms(&b(BackoffKind::None), 3, 10.0, &mut rng), 0.0);
        assert_eq!(sleep_ms(&b(BackoffKind::Constant), 3, 10.0, &mut rng), 10.0);
        let e: Vec<f64> = (1..=6)
            .map(|k| sleep_ms(&b(BackoffKind::Exponential), k, 10.0, &mut rng))
            .collect();
        assert_eq!(e, [10.0, 20.0, 40.0, 80.0, 100.0, 100.0]);
        assert_eq!(rng, before, "no draw");
        // a huge k neither overflows nor passes the cap
        assert_eq!(expo(&b(BackoffKind::Exponential), u32::MAX), 100.0);
    }

    #[test]
    fn full_jitter_stays_in_0_expo_with_mean_expo_over_2() {
        let mut rng = stream(2, 0, "t");
        let n = 200_000;
        for k in [1, 3, 5] {
            let e = expo(&b(BackoffKind::FullJitter), k);
            let mut sum = 0.0;
            for _ in 0..n {
                let s = sleep_ms(&b(BackoffKind::FullJitter), k, 10.0, &mut rng);
                assert!((0.0..=e).contains(&s));
                sum += s;
            }
            // U(0, e) has sd e / sqrt(12): the mean of n within 5 standard errors
            let mean = sum / n as f64;
            let tol = 5.0 * e / 12f64.sqrt() / (n as f64).sqrt();
            assert!((mean - e / 2.0).abs() < tol, "k {k}: {mean} vs {}", e / 2.0);
        }
    }

    #[test]
    fn equal_jitter_stays_in_half_expo_to_expo() {
        let mut rng = stream(3, 0, "t");
        for k in 1..8 {
            let e = expo(&b(BackoffKind::EqualJitter), k);
            for _ in 0..1000 {
                let s = sleep_ms(&b(BackoffKind::EqualJitter), k, 10.0, &mut rng);
                assert!(s >= e / 2.0 && s <= e, "{s} outside [{}, {e}]", e / 2.0);
            }
        }
    }

    #[test]
    fn decorrelated_stays_between_base_and_cap_and_three_times_the_previous() {
        let mut rng = stream(4, 0, "t");
        let mut prev = 10.0;
        for k in 1..1000 {
            let s = sleep_ms(&b(BackoffKind::Decorrelated), k, prev, &mut rng);
            assert!(
                (10.0..=100.0).contains(&s) && s <= 3.0 * prev,
                "{s} after {prev}"
            );
            prev = s;
        }
    }

    #[test]
    fn a_multiplier_grows_the_wait_by_its_factor() {
        let mut rng = stream(5, 0, "t");
        let mut g = b(BackoffKind::Exponential);
        g.multiplier = 1.5;
        g.cap_ms = 1000.0;
        let e: Vec<f64> = (1..=4).map(|k| sleep_ms(&g, k, 10.0, &mut rng)).collect();
        assert_eq!(e, [10.0, 15.0, 22.5, 33.75]);
        // gRPC's rule: attempt n waits U(0, min(initial x m^(n-1), max))
        let mut f = g;
        f.kind = BackoffKind::FullJitter;
        f.multiplier = 3.0;
        f.cap_ms = 50.0;
        assert_eq!(expo(&f, 2), 30.0);
        assert_eq!(expo(&f, 3), 50.0);
    }

    #[test]
    fn a_jitter_factor_spreads_the_wait_evenly_around_it() {
        let mut rng = stream(6, 0, "t");
        let mut c = b(BackoffKind::Constant);
        c.base_ms = 500.0;
        c.jitter_factor = 0.5;
        let n = 100_000;
        let (mut lo, mut hi, mut sum) = (f64::MAX, 0.0f64, 0.0);
        for _ in 0..n {
            let s = sleep_ms(&c, 1, 0.0, &mut rng);
            assert!((250.0..=750.0).contains(&s), "{s}");
            lo = lo.min(s);
            hi = hi.max(s);
            sum += s;
        }
        // U(250, 750): mean 500, sd 144 / sqrt(n) = 0.46
        assert!((sum / n as f64 - 500.0).abs() < 3.0, "{}", sum / n as f64);
        assert!(lo < 255.0 && hi > 745.0, "{lo} {hi}");
    }

    #[test]
    fn envoy_draws_below_2_to_the_k_minus_1_times_base() {
        let mut rng = stream(7, 0, "t");
        let mut e = b(BackoffKind::Envoy);
        e.base_ms = 25.0;
        e.cap_ms = 250.0;
        // retry 1: [0, 25), retry 2: [0, 75), retry 3: [0, 175), then the cap
        for (k, hi) in [(1, 25.0), (2, 75.0), (3, 175.0), (4, 250.0), (9, 250.0)] {
            let mut top: f64 = 0.0;
            for _ in 0..20_000 {
                let s = sleep_ms(&e, k, 0.0, &mut rng);
                assert!((0.0..hi).contains(&s), "k {k}: {s}");
                top = top.max(s);
            }
            assert!(top > 0.99 * hi, "k {k}: the draws reach near {hi} ({top})");
        }
    }
}
