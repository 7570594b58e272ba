//! Each algorithm's rule on hand-made samples.

use super::*;
use crate::model::{Concurrency, LimiterMode, Overflow, Refill};

fn limiter(algorithm: ConcurrencyAlgorithm) -> Limiter {
    Limiter {
        name: "c".into(),
        algorithm: crate::model::Algorithm::FixedWindow,
        key: vec![],
        limit: algorithm.max_limit(),
        window: Ticks::from_ms(1000.0),
        mode: LimiterMode::Reject,
        max_delay: Ticks::ZERO,
        refill: Refill::Continuous,
        overflow: Overflow::RejectNow,
        concurrency: Some(Box::new(Concurrency { algorithm })),
    }
}

fn fresh(l: &Limiter) -> ConcurrencyLimit {
    let alg = &l.concurrency.as_ref().unwrap().algorithm;
    ConcurrencyLimit::new(alg, || crate::engine::stream(1, 0, "limiter:c:0"))
}

const MS: fn(f64) -> Ticks = Ticks::from_ms;

/// Admits `n` at `now`; returns how many passed.
fn admit(c: &mut ConcurrencyLimit, l: &Limiter, n: u64, now: Ticks) -> u64 {
    (0..n)
        .filter(|_| c.try_admit(l, now) == Decision::Pass)
        .count() as u64
}

#[test]
fn fixed_admits_up_to_its_limit_and_a_done_frees_a_place() {
    let l = limiter(ConcurrencyAlgorithm::Fixed { limit: 2 });
    let mut c = fresh(&l);
    assert_eq!(admit(&mut c, &l, 3, MS(0.0)), 2);
    c.on_done(&l, MS(5.0), MS(5.0), Outcome::Answered);
    assert_eq!((c.in_flight(), c.limit()), (1, 2));
    assert_eq!(admit(&mut c, &l, 2, MS(5.0)), 1);
}

fn aimd() -> Limiter {
    limiter(ConcurrencyAlgorithm::Aimd {
        initial: 20,
        min: 20,
        max: 200,
        backoff_ratio: 0.9,
        timeout: MS(5000.0),
    })
}

#[test]
fn aimd_adds_one_per_answer_in_time_and_backs_off_on_a_drop_or_a_slow_answer() {
    let l = aimd();
    let mut c = fresh(&l);
    assert_eq!(admit(&mut c, &l, 25, MS(0.0)), 20);
    // 20 in flight >= 20 / 2: +1
    c.on_done(&l, MS(10.0), MS(10.0), Outcome::Answered);
    assert_eq!(c.limit(), 21);
    assert_eq!(admit(&mut c, &l, 10, MS(10.0)), 2);
    // 21 in flight: up to 30 by answers
    for _ in 0..9 {
        c.on_done(&l, MS(10.0), MS(10.0), Outcome::Answered);
        admit(&mut c, &l, 1, MS(10.0));
    }
    assert_eq!(c.limit(), 30);
    // a shed: 30 x 0.9 = 27
    c.on_done(&l, MS(11.0), MS(0.0), Outcome::Shed);
    assert_eq!(c.limit(), 27);
    // slower than timeout_ms: floor(27 x 0.9) = 24
    c.on_done(&l, MS(6000.0), MS(5001.0), Outcome::Answered);
    assert_eq!(c.limit(), 24);
    // an error tells nothing
    c.on_done(&l, MS(6000.0), MS(1.0), Outcome::Error);
    assert_eq!(c.limit(), 24);
    // never below min_limit
    for _ in 0..5 {
        c.on_done(&l, MS(6000.0), MS(1.0), Outcome::TimedOut);
    }
    assert_eq!(c.limit(), 20);
}

#[test]
fn aimd_does_not_grow_while_less_than_half_the_limit_is_in_flight() {
    let l = aimd();
    let mut c = fresh(&l);
    assert_eq!(admit(&mut c, &l, 9, MS(0.0)), 9);
    // 9 in flight x 2 < 20
    c.on_done(&l, MS(10.0), MS(10.0), Outcome::Answered);
    assert_eq!(c.limit(), 20);
}

#[test]
fn vegas_grows_by_six_log10_without_a_queue_and_shrinks_with_one() {
    let l = limiter(ConcurrencyAlgorithm::Vegas {
        initial: 20,
        max: 1000,
        smoothing: 1.0,
        probe_multiplier: 30,
    });
    let mut c = fresh(&l);
    admit(&mut c, &l, 20, MS(0.0));
    // the first sample only sets the no-load RTT
    c.on_done(&l, MS(10.0), MS(10.0), Outcome::Answered);
    assert_eq!(c.limit(), 20);
    admit(&mut c, &l, 1, MS(10.0));
    // no queue: queue 0 <= log10 = 1: + 6
    c.on_done(&l, MS(20.0), MS(10.0), Outcome::Answered);
    assert_eq!(c.limit(), 26);
    admit(&mut c, &l, 6, MS(20.0));
    // rtt 20 against 10: queue = ceil(26 x 0.5) = 13 > 6: - 1
    c.on_done(&l, MS(40.0), MS(20.0), Outcome::Answered);
    assert_eq!(c.limit(), 25);
    // rtt 11: queue = ceil(25 x 1/11) = 3, in [3, 6]: no change
    c.on_done(&l, MS(40.0), MS(11.0), Outcome::Answered);
    assert_eq!(c.limit(), 25);
    // a drop: - 1
    c.on_done(&l, MS(40.0), MS(0.0), Outcome::Shed);
    assert_eq!(c.limit(), 24);
}

#[test]
fn gradient2_grows_by_smoothing_times_queue_size_at_a_steady_latency() {
    let l = limiter(ConcurrencyAlgorithm::Gradient2 {
        initial: 20,
        min: 20,
        max: 200,
        smoothing: 0.2,
        tolerance: 1.5,
        queue_size: 4,
        long_window: 600,
    });
    let mut c = fresh(&l);
    admit(&mut c, &l, 20, MS(0.0));
    // gradient min(1, 1.5) = 1: L + 0.2 x 4 = 20.8 per answer
    for k in 1..=5 {
        c.on_done(&l, MS(10.0), MS(10.0), Outcome::Answered);
        admit(&mut c, &l, 1, MS(10.0));
        assert!(
            (c.limit - (20.0 + 0.8 * k as f64)).abs() < 1e-9,
            "{}",
            c.limit
        );
    }
    // a 100 ms sample: long RTT (5 x 10 + 100) / 6 = 25 (the warm-up mean),
    // 1.5 x 25 / 100 -> gradient 0.5 (clamped), new = L/2 + 4, smoothed:
    // 0.8 L + 0.2 (L/2 + 4) = 0.9 L + 0.8
    let before = c.limit;
    c.on_done(&l, MS(110.0), MS(100.0), Outcome::Answered);
    assert!((c.limit - (0.9 * before + 0.8)).abs() < 1e-9);
}

fn envoy() -> Limiter {
    limiter(ConcurrencyAlgorithm::EnvoyGradient {
        update_interval: MS(100.0),
        min_rtt_interval: MS(60_000.0),
        request_count: 4,
        min_concurrency: 3,
        jitter: 0.15,
        buffer: 0.25,
        max: 1000,
    })
}

/// One request admitted at `at` and answered `rtt_ms` later.
fn answer(c: &mut ConcurrencyLimit, l: &Limiter, at: f64, rtt_ms: f64) {
    assert_eq!(c.try_admit(l, MS(at)), Decision::Pass);
    c.on_done(l, MS(at + rtt_ms), MS(rtt_ms), Outcome::Answered);
}

#[test]
fn envoy_measures_the_min_rtt_at_three_then_applies_the_gradient_per_window() {
    let l = envoy();
    let mut c = fresh(&l);
    assert_eq!(
        admit(&mut c, &l, 4, MS(0.0)),
        3,
        "pinned at min_concurrency"
    );
    for _ in 0..3 {
        c.on_done(&l, MS(10.0), MS(10.0), Outcome::Answered);
    }
    answer(&mut c, &l, 10.0, 10.0);
    // 4 samples: min RTT 10 ms, the limit back to its value before (3); the
    // first window ends at 120 ms
    assert_eq!(c.limit(), 3);
    answer(&mut c, &l, 50.0, 10.0);
    answer(&mut c, &l, 60.0, 10.0);
    // window of p50 10 ms: g = 1.25, 3.75 + sqrt(3.75) = 5.68 -> 5
    answer(&mut c, &l, 130.0, 10.0);
    assert_eq!(c.limit(), 5);
    // a window of p50 40 ms: g = 12.5 / 40 -> 0.5: 2.5 + 1.58 -> 4
    answer(&mut c, &l, 150.0, 40.0);
    answer(&mut c, &l, 160.0, 40.0);
    answer(&mut c, &l, 230.0, 1.0);
    assert_eq!(c.limit(), 4);
    // the 1 ms answer's window: g = 12.5 -> 2: 8 + sqrt(8) -> 10; the empty
    // windows after it change nothing
    answer(&mut c, &l, 1000.0, 1.0);
    assert_eq!(c.limit(), 10);
}

#[test]
fn envoy_measures_again_after_five_windows_at_the_minimum() {
    let l = envoy();
    let mut c = fresh(&l);
    for k in 0..4 {
        answer(&mut c, &l, k as f64, 10.0);
    }
    // min RTT 10; windows of 100 ms RTT: g = 0.5 -> 3 (the minimum) each time
    let mut t = 14.0;
    for _ in 0..5 {
        answer(&mut c, &l, t, 100.0);
        t += 100.0;
    }
    assert_eq!(c.limit(), 3);
    // the fifth window at 3 started a measurement: 4 samples of 100 ms make
    // it the min RTT, and a 100 ms window is then a gradient of 1.25
    t += 100.0;
    for _ in 0..4 {
        answer(&mut c, &l, t, 100.0);
    }
    t += 100.0;
    answer(&mut c, &l, t, 100.0);
    t += 200.0;
    answer(&mut c, &l, t, 100.0);
    assert_eq!(c.limit(), 5);
}
