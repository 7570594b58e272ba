//! Each algorithm's rule on hand-made samples.

use super::*;
use crate::kinds::concurrency::testing::concurrency;
use crate::model::{LimiterRule, Scope};

/// The concurrency limiter of `text` (its `algorithm` and keys).
fn limiter(text: &str) -> Limiter {
    Limiter {
        name: "c".into(),
        key: vec![],
        rule: LimiterRule::Concurrency(concurrency(text)),
        scope: Scope::Replica,
    }
}

fn fresh(l: &Limiter) -> ConcurrencyLimit {
    let alg = &l.concurrency().expect("a concurrency limiter").algorithm;
    ConcurrencyLimit::new(alg, || crate::engine::stream(1, 0, "limiter:c:0"))
}

const MS: fn(f64) -> Ticks = Ticks::from_ms;

/// Admits `n` at `now`; returns how many passed.
fn admit(c: &mut ConcurrencyLimit, l: &Limiter, n: u64, now: Ticks) -> u64 {
    (0..n)
        .filter(|_| c.try_admit(l, now) == Decision::Pass)
        .count() as u64
}

/// A request let through when `started_with` were in flight (itself
/// included) ends at `now_ms`, `latency_ms` after it was let through.
fn end(
    c: &mut ConcurrencyLimit,
    l: &Limiter,
    (now_ms, latency_ms): (f64, f64),
    outcome: Outcome,
    started_with: u32,
) {
    c.on_done(l, MS(now_ms), MS(latency_ms), outcome, started_with);
}

#[test]
fn fixed_admits_up_to_its_limit_and_a_done_frees_a_place() {
    let l = limiter("algorithm = \"fixed\"\nlimit = 2");
    let mut c = fresh(&l);
    assert_eq!(admit(&mut c, &l, 3, MS(0.0)), 2);
    end(&mut c, &l, (5.0, 5.0), Outcome::Answered, 1);
    assert_eq!((c.in_flight(), c.limit()), (1, 2));
    assert_eq!(admit(&mut c, &l, 2, MS(5.0)), 1);
}

const AIMD: &str = "algorithm = \"aimd\"
initial_limit = 20
min_limit = 20
max_limit = 200
backoff_ratio = 0.9
timeout_ms = 5000";

fn aimd() -> Limiter {
    limiter(AIMD)
}

#[test]
fn aimd_adds_one_per_sample_in_time_and_backs_off_on_a_drop_or_a_slow_one() {
    let l = aimd();
    let mut c = fresh(&l);
    assert_eq!(admit(&mut c, &l, 25, MS(0.0)), 20);
    // let through as the 20th in flight: 20 x 2 >= 20, +1
    end(&mut c, &l, (10.0, 10.0), Outcome::Answered, 20);
    assert_eq!(c.limit(), 21);
    assert_eq!(admit(&mut c, &l, 10, MS(10.0)), 2);
    // up to 30 by answers
    for _ in 0..9 {
        end(&mut c, &l, (10.0, 10.0), Outcome::Answered, 21);
        admit(&mut c, &l, 1, MS(10.0));
    }
    assert_eq!(c.limit(), 30);
    // a client that gave up (DEADLINE_EXCEEDED, cancelled): a drop, 30 x 0.9
    end(&mut c, &l, (11.0, 11.0), Outcome::TimedOut, 21);
    assert_eq!(c.limit(), 27);
    // slower than timeout_ms: floor(27 x 0.9) = 24
    end(&mut c, &l, (6000.0, 5001.0), Outcome::Answered, 21);
    assert_eq!(c.limit(), 24);
    // an error, a shed and a later limiter's rejection are closed calls:
    // samples (onSuccess), +1 each
    for outcome in [Outcome::Error, Outcome::Shed, Outcome::Rejected(0)] {
        end(&mut c, &l, (6000.0, 1.0), outcome, 21);
    }
    assert_eq!(c.limit(), 27);
    // never below min_limit
    for _ in 0..5 {
        end(&mut c, &l, (6000.0, 1.0), Outcome::Dropped, 21);
    }
    assert_eq!(c.limit(), 20);
}

/// The in-flight count is the one when the request was let through: a
/// request let in as the 10th of a limit of 20 grows it even if it ends
/// alone, and one let in alone does not, however many are in flight when it
/// ends.
#[test]
fn aimd_grows_on_the_count_when_the_request_was_let_through() {
    let l = aimd();
    let mut c = fresh(&l);
    assert_eq!(admit(&mut c, &l, 10, MS(0.0)), 10);
    for _ in 0..9 {
        end(&mut c, &l, (10.0, 10.0), Outcome::Answered, 1);
    }
    assert_eq!((c.in_flight(), c.limit()), (1, 20), "let in with 1..9");
    // the last one, let in as the 10th: 10 x 2 >= 20, +1, though it ends alone
    end(&mut c, &l, (10.0, 10.0), Outcome::Answered, 10);
    assert_eq!((c.in_flight(), c.limit()), (0, 21));
}

#[test]
fn vegas_grows_by_six_log10_without_a_queue_and_shrinks_with_one() {
    let l = limiter(
        "algorithm = \"vegas\"
initial_limit = 20
max_limit = 1000
smoothing = 1.0
probe_multiplier = 30",
    );
    let mut c = fresh(&l);
    admit(&mut c, &l, 20, MS(0.0));
    // the first sample only sets the no-load RTT
    end(&mut c, &l, (10.0, 10.0), Outcome::Answered, 20);
    assert_eq!(c.limit(), 20);
    admit(&mut c, &l, 1, MS(10.0));
    // no queue: queue 0 <= log10 = 1: + 6
    end(&mut c, &l, (20.0, 10.0), Outcome::Answered, 20);
    assert_eq!(c.limit(), 26);
    admit(&mut c, &l, 6, MS(20.0));
    // rtt 20 against 10: queue = ceil(26 x 0.5) = 13 > 6: - 1
    end(&mut c, &l, (40.0, 20.0), Outcome::Answered, 26);
    assert_eq!(c.limit(), 25);
    // rtt 11: queue = ceil(25 x 1/11) = 3, in [3, 6]: no change
    end(&mut c, &l, (40.0, 11.0), Outcome::Answered, 25);
    assert_eq!(c.limit(), 25);
    // let in with fewer than half the limit in flight: no change
    end(&mut c, &l, (40.0, 10.0), Outcome::Answered, 12);
    assert_eq!(c.limit(), 25);
    // a drop: - 1
    end(&mut c, &l, (40.0, 0.0), Outcome::TimedOut, 25);
    assert_eq!(c.limit(), 24);
}

#[test]
fn gradient2_grows_by_smoothing_times_queue_size_at_a_steady_latency() {
    let l = limiter(
        "algorithm = \"gradient2\"
initial_limit = 20
min_limit = 20
max_limit = 200
smoothing = 0.2
tolerance = 1.5
queue_size = 4
long_window = 600",
    );
    let mut c = fresh(&l);
    admit(&mut c, &l, 20, MS(0.0));
    // gradient min(1, 1.5) = 1: L + 0.2 x 4 = 20.8 per answer
    for k in 1..=5 {
        end(&mut c, &l, (10.0, 10.0), Outcome::Answered, 20);
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
    end(&mut c, &l, (110.0, 100.0), Outcome::Answered, 20);
    assert!((c.limit - (0.9 * before + 0.8)).abs() < 1e-9);
    // let in with fewer than half the limit in flight: no change
    let before = c.limit;
    end(&mut c, &l, (110.0, 10.0), Outcome::Answered, 5);
    assert_eq!(c.limit, before);
}

/// Which ends are samples, per rule: the gRPC server interceptor drops a
/// request given up on and a plan's drop and samples every closed call; the
/// client interceptor samples OK answers and drops UNAVAILABLE ones; Envoy's
/// filter samples every response and nothing for a request given up on.
#[test]
fn each_rule_reads_the_ends_as_its_integration_does() {
    let t = MS(7.0);
    let grpc = |o| sample_of(o, t, Samples::GrpcServer);
    let filter = |o| sample_of(o, t, Samples::EnvoyFilter);
    for o in [
        Outcome::Answered,
        Outcome::Error,
        Outcome::Shed,
        Outcome::Rejected(0),
        Outcome::NotFound,
        Outcome::Refused,
    ] {
        assert_eq!(grpc(o), Sample::Answer(t), "{o:?}");
        assert_eq!(filter(o), Sample::Answer(t), "{o:?}");
    }
    assert_eq!(grpc(Outcome::TimedOut), Sample::Drop(t));
    assert_eq!(grpc(Outcome::Dropped), Sample::Drop(t));
    assert_eq!(filter(Outcome::TimedOut), Sample::Ignore);
    assert_eq!(filter(Outcome::Dropped), Sample::Answer(t));
    // the client interceptor: OK a sample, UNAVAILABLE a drop, else nothing
    let client = |o| sample_of(o, t, Samples::GrpcClient);
    assert_eq!(client(Outcome::Answered), Sample::Answer(t));
    assert_eq!(client(Outcome::Shed), Sample::Drop(t));
    assert_eq!(client(Outcome::Rejected(0)), Sample::Drop(t));
    for o in [
        Outcome::Error,
        Outcome::TimedOut,
        Outcome::Dropped,
        Outcome::NotFound,
        Outcome::Refused,
    ] {
        assert_eq!(client(o), Sample::Ignore, "{o:?}");
    }
    // each library's own by default
    let samples = |l: Limiter| l.concurrency().map(|c| c.samples);
    assert_eq!(samples(aimd()), Some(Samples::GrpcServer));
    assert_eq!(samples(envoy()), Some(Samples::EnvoyFilter));
    // AIMD under Envoy's rule: a given-up request frees its place, no backoff
    let l = limiter(&format!("{AIMD}\nsamples = \"envoy_filter\""));
    assert_eq!(samples(l.clone()), Some(Samples::EnvoyFilter));
    let mut c = fresh(&l);
    admit(&mut c, &l, 1, MS(0.0));
    end(&mut c, &l, (10.0, 10.0), Outcome::TimedOut, 1);
    assert_eq!((c.in_flight(), c.limit()), (0, 20));
}

fn envoy() -> Limiter {
    limiter(
        "algorithm = \"envoy_gradient\"
concurrency_update_interval_ms = 100
min_rtt_calc_interval_ms = 60000
request_count = 4
min_concurrency = 3
jitter_percent = 15
buffer_percent = 25
max_limit = 1000",
    )
}

/// One request admitted at `at` and answered `rtt_ms` later.
fn answer(c: &mut ConcurrencyLimit, l: &Limiter, at: f64, rtt_ms: f64) {
    assert_eq!(c.try_admit(l, MS(at)), Decision::Pass);
    let n = c.in_flight() as u32;
    end(c, l, (at + rtt_ms, rtt_ms), Outcome::Answered, n);
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
    for k in 1..=3 {
        end(&mut c, &l, (10.0, 10.0), Outcome::Answered, k);
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

/// Envoy's updateConcurrencyLimit counts a window only when it found the
/// limit at min_concurrency and left it there: the window that brings the
/// limit down to the minimum does not count, so from above it takes six
/// windows ending at the minimum to start a measurement, not five.
#[test]
fn envoy_measures_again_after_five_windows_that_stay_at_the_minimum() {
    let l = envoy();
    let mut c = fresh(&l);
    for k in 0..4 {
        answer(&mut c, &l, k as f64, 10.0);
    }
    // min RTT 10 ms (measured by 13 ms; windows end at 113, 213, ...). A
    // window of 10 ms answers: 3 -> floor(3.75 + 1.94) = 5
    answer(&mut c, &l, 20.0, 10.0);
    answer(&mut c, &l, 120.0, 100.0);
    assert_eq!(c.limit(), 5);
    // windows of 100 ms RTT: g = 0.5: 5 -> floor(2.5 + 1.58) = 4, then 4 ->
    // floor(2 + 1.41) = 3 (the minimum; not counted: it came from 4), then 3
    // -> 3 five times (counted 1..5)
    let mut t = 220.0;
    let mut limits = Vec::new();
    for _ in 0..7 {
        answer(&mut c, &l, t, 100.0);
        limits.push(c.limit());
        t += 100.0;
    }
    assert_eq!(limits, [4, 3, 3, 3, 3, 3, 3]);
    // the window ending at 813 was the fifth that stayed at 3: a measurement
    // began there, so only requests let through from then on are samples.
    // Four 100 ms answers make it the min RTT, and a window of 100 ms is then
    // a gradient of 1.25: 3 -> 5
    for _ in 0..4 {
        answer(&mut c, &l, t, 100.0);
    }
    t += 100.0;
    answer(&mut c, &l, t, 100.0);
    t += 200.0;
    answer(&mut c, &l, t, 100.0);
    assert_eq!(c.limit(), 5);
}

/// Envoy's recordLatencySample leaves out a request let through before the
/// latest min RTT measurement began (its epoch): under load the requests
/// queued under the old limit end slowly during the measurement, and counting
/// them would set the min RTT to the loaded latency.
#[test]
fn envoy_leaves_out_requests_let_through_before_the_measurement() {
    let l = envoy();
    let mut c = fresh(&l);
    for k in 0..4 {
        answer(&mut c, &l, k as f64, 10.0);
    }
    // min RTT 10 ms at 13 ms; windows of 10 ms answers raise the limit
    let mut t = 20.0;
    while c.limit() < 20 {
        answer(&mut c, &l, t, 10.0);
        t += 100.0;
    }
    // 20 requests let through at t, in flight when the next measurement
    // begins (the min RTT timer, 60 s + jitter after 13 ms)
    let at = t;
    let n = admit(&mut c, &l, 20, MS(at));
    assert_eq!(n, 20);
    let after = 70_000.0;
    // they end slowly (500 ms each) during the measurement: no samples
    for k in 0..20 {
        end(
            &mut c,
            &l,
            (after + f64::from(k), after + f64::from(k) - at),
            Outcome::Answered,
            k + 1,
        );
    }
    assert_eq!(c.limit(), 3, "still measuring: pinned at the minimum");
    // four requests let through in the measurement, 10 ms each: min RTT 10
    for k in 0..4 {
        answer(&mut c, &l, after + 100.0 + f64::from(k), 10.0);
    }
    assert!(c.limit() >= 20, "back to the limit before: {}", c.limit());
    let AlgorithmState::EnvoyGradient(e) = c.state() else {
        unreachable!()
    };
    assert_eq!(e.min_rtt(), MS(10.0));
}
