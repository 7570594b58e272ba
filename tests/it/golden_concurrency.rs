//! `scenarios/adaptive-limits.toml`: each concurrency algorithm's limit before
//! the latency fault, derived from its rule (docs/scenarios.md, "Concurrency
//! limiters"), AIMD without a queue under the gRPC server and client
//! interceptors' readings of a shed, Envoy's fixed point with a queue and its
//! min RTT measured again under load, and every request accounted for,
//! asserted from the CSV files the scenario writes.
//!
//! The arrivals are uniform and the service time constant, so a run is exact:
//! every figure is asserted to the digit (Vegas's probe and Envoy's jitter draw
//! from the seed, and do not move the figures asserted here).

use crate::common::*;

const FILE: &str = "scenarios/adaptive-limits.toml";

fn run(sets: &[&str]) -> tempfile::TempDir {
    let mut args = vec!["--quiet", "--no-report"];
    for s in sets {
        args.extend(["--set", s]);
    }
    run_into(&scenario(FILE), &args)
}

fn read(dir: &tempfile::TempDir, table: &str) -> Csv {
    Csv::read(&dir.path().join(format!("{table}.csv")))
}

/// The window rows of limiter `l` from `from_ms` to `to_ms` (both included).
fn windows<'a>(
    csv: &'a Csv,
    l: &str,
    from_ms: f64,
    to_ms: f64,
) -> Vec<&'a std::collections::HashMap<String, String>> {
    let rows: Vec<_> = csv
        .select(&[("limiter", l)])
        .into_iter()
        .filter(|r| (from_ms..=to_ms).contains(&num(r, "window_start_ms")))
        .collect();
    assert_eq!(rows.len(), ((to_ms - from_ms) / 100.0) as usize + 1, "{l}");
    rows
}

/// Envoy's gradient controller at a constant latency: sample RTT = min RTT,
/// gradient 1.25, L' = floor(1.25 L + sqrt(1.25 L)), up to 1000.
fn envoy_steps(from: u64, max: u64) -> Vec<u64> {
    let mut out = vec![from];
    while *out.last().unwrap() < max {
        let l = *out.last().unwrap() as f64 * 1.25;
        out.push(((l + l.sqrt()).floor() as u64).min(max));
    }
    out
}

#[test]
fn before_the_fault_each_limit_settles_where_its_rule_says() {
    let dir = run(&[]);
    let ts = read(&dir, "timeseries_concurrency");
    // 1500/s x 20 ms: 30 in flight, whatever the limit above it.
    // fixed: 40. AIMD: +1 per answer while 2 x 30 >= L: stops at 61.
    // Vegas: no queue (rtt = rtt_noload), so + 6 log10 L = + 6 per answer
    // while 2 x 30 >= L: 20, 26, ..., 62. Gradient2: gradient min(1, 1.5) =
    // 1, + 0.2 x 4 = 0.8 per answer while 30 >= L / 2: the first 20 + 0.8 k
    // above 60 is 60.8, whole part 60. Envoy: at its max, 1000 (from 2.04 s).
    for (l, limit) in [
        ("fixed", 40.0),
        ("aimd", 61.0),
        ("vegas", 62.0),
        ("gradient2", 60.0),
        ("envoy", 1000.0),
    ] {
        for r in windows(&ts, l, 2100.0, 5900.0) {
            for col in ["min_limit", "max_limit", "end_limit"] {
                assert_eq!(num(r, col), limit, "{l} {col} {r:?}");
            }
            assert_eq!(num(r, "mean_in_flight"), 30.0, "{l} {r:?}");
            assert_eq!(num(r, "decreases"), 0.0, "{l} {r:?}");
        }
    }
    // Envoy: pinned at min_concurrency 3 for the first 50 answers (3 at a
    // time, 20 ms each: until 340.7 ms), then one gradient step per 100 ms
    // window: 5 at the end of window 400, 8, 13, ... 1000 at window 2000.
    let ends: Vec<u64> = windows(&ts, "envoy", 0.0, 2000.0)
        .iter()
        .map(|r| num(r, "end_limit") as u64)
        .collect();
    let mut want = vec![3, 3, 3, 3];
    want.extend(envoy_steps(5, 1000));
    assert_eq!(ends, want);
    assert_eq!(&want[4..12], [5, 8, 13, 20, 30, 43, 61, 84]);
}

#[test]
fn every_request_is_answered_or_ends_one_way_and_the_figures_hold() {
    let dir = run(&[]);
    let outcomes = read(&dir, "outcomes");
    let conc = read(&dir, "concurrency");
    // (variant, answered, timed out, shed, rejected) of 27,000 requests. A
    // shed (the server's 503, at once) is a sample to each library's default
    // integration, not a drop: AIMD (+1 per sample in time) and Envoy (a
    // 0 ms sample pulls the window's p50 down, a gradient of 2) never back
    // off on the fault's sheds, so they shed and time out nearly as `none`;
    // Vegas and Gradient2 skip a sample of no latency.
    let want = [
        ("none", 18200, 2300, 6500, 0),
        ("fixed", 20400, 0, 0, 6600),
        ("aimd", 18239, 2251, 6241, 269),
        ("vegas", 19844, 27, 0, 7129),
        ("gradient2", 19022, 1306, 3031, 3641),
        ("envoy", 17236, 2300, 6500, 964),
    ];
    for (v, answered, timed_out, shed, rejected) in want {
        let r = outcomes.row(&[("variant", v)]);
        let got = [
            num(r, "answered"),
            num(r, "timed_out"),
            num(r, "shed"),
            num(r, "rejected"),
        ];
        assert_eq!(
            got,
            [answered, timed_out, shed, rejected].map(f64::from),
            "{v}"
        );
        assert_eq!(got.iter().sum::<f64>(), num(r, "requests"), "{v}");
        assert_eq!(num(r, "requests"), 27000.0);
        if v != "none" {
            // the limiter's passes and rejects are every request
            let c = conc.row(&[("variant", v), ("limiter", v)]);
            assert_eq!(num(c, "passed") + num(c, "rejected"), 27000.0, "{v}");
            assert_eq!(num(c, "rejected"), f64::from(rejected), "{v}");
        }
    }
    // AIMD hears no drop at all: no server here abandons a request whose
    // client left, so every request ends answered or shed, each a sample in
    // time (within 5 s)
    let aimd = conc.row(&[("variant", "aimd"), ("limiter", "aimd")]);
    assert_eq!(num(aimd, "decreases"), 0.0);
    assert_eq!(num(aimd, "end_limit"), 200.0, "its max_limit");
    // Envoy stays at its maximum through the fault, the 503s' 0 ms samples
    // the window's p50
    let envoy = conc.row(&[("variant", "envoy"), ("limiter", "envoy")]);
    assert_eq!(num(envoy, "end_limit"), 1000.0);
    // a limiter that met no request has no line
    assert_eq!(conc.rows.len(), 5);
}

#[test]
fn aimd_without_a_queue_backs_off_on_sheds_only_as_a_client_reads_them() {
    // Without a queue, an arrival that finds the 40 slots busy is shed at
    // once. The gRPC server interceptor (the default) closes it UNAVAILABLE
    // and calls onSuccess: a sample in time, +1 while 2 x the count in flight
    // when it was let through >= L. A shed request was let through as the
    // 41st (40 in the slots), so the limit climbs to 2 x 41 + 1 = 83 and
    // stays there: no decrease, every arrival above the slots shed.
    let dir = run(&[
        "services.backend.handler.queue=0",
        r#"compare.variant=["aimd"]"#,
    ]);
    let c = read(&dir, "concurrency");
    let row = c.row(&[("limiter", "aimd")]);
    assert_eq!(num(row, "max_in_flight"), 41.0);
    assert_eq!(
        [
            num(row, "max_limit"),
            num(row, "end_limit"),
            num(row, "decreases")
        ],
        [83.0, 83.0, 0.0]
    );
    let ts = read(&dir, "timeseries_concurrency");
    for r in windows(&ts, "aimd", 7000.0, 17900.0) {
        assert_eq!([num(r, "min_limit"), num(r, "max_limit")], [83.0, 83.0]);
    }
    // The client interceptor (`samples = "grpc_client"`) reads the 503 as
    // UNAVAILABLE: onDropped, x 0.9. While the limit is above 40 every arrival
    // in a gap between answers is shed, so the limit falls in a run of x 0.9
    // steps (80, 72, 64, 57, 51, 45, 40: 6 steps) to the first value <= 40;
    // then each of the 40 slots answers once per 100 ms (+1 each): back to 80.
    let dir = run(&[
        "services.backend.handler.queue=0",
        r#"compare.variant=["aimd"]"#,
        "limiters.aimd.samples=grpc_client",
    ]);
    let ts = read(&dir, "timeseries_concurrency");
    for r in windows(&ts, "aimd", 6200.0, 11900.0) {
        assert_eq!(
            [
                num(r, "min_limit"),
                num(r, "max_limit"),
                num(r, "decreases")
            ],
            [40.0, 80.0, 6.0],
            "{r:?}"
        );
    }
    let mut l = 80.0_f64;
    let mut steps = 0;
    while l > 40.0 {
        l = (l * 0.9).floor();
        steps += 1;
    }
    assert_eq!((l, steps), (40.0, 6));
    // every shed is one decrease (the limit is above its minimum 20)
    let shed = num(read(&dir, "outcomes").row(&[("variant", "aimd")]), "shed");
    let c = read(&dir, "concurrency");
    assert_eq!(num(c.row(&[("limiter", "aimd")]), "decreases"), shed);
    assert_eq!(shed, 357.0);
}

/// Envoy with a queue: 3000/s into the 40 slots of 20 ms with a queue of
/// 1000 and no fault.
const ENVOY_QUEUE: [&str; 6] = [
    r#"compare.variant=["envoy"]"#,
    "workload.rate_rps=3000",
    "services.backend.handler.queue=1000",
    "workload.timeout_ms=5000",
    "faults=[]",
    "workload.duration_ms=6000",
];

#[test]
fn envoy_with_a_queue_cycles_around_its_fixed_point() {
    // The limit binds, a queue of L - 40 forms, and a request's latency is L
    // x 20 / 40 ms (Little). The min RTT, measured at 3 in flight, is 20 ms,
    // so g L = 1.25 x 20 / (L x 20 / 40) x L = 50 whatever L, and L' =
    // floor(50 + sqrt(50)) = 57: the fixed point, where sample RTT / min RTT
    // = 57 / 40 = 1.425 (the reference's 1.25 / (1 - 1/sqrt L) = 1.44 leaves
    // g out of the square root). A window's p50 is the latency of requests
    // let in under the limits before, so the limit cycles around 57 with a
    // period of 4 windows.
    let dir = run(&ENVOY_QUEUE);
    let ts = read(&dir, "timeseries_concurrency");
    let rows = windows(&ts, "envoy", 1500.0, 5800.0);
    let ends: Vec<u64> = rows.iter().map(|r| num(r, "end_limit") as u64).collect();
    assert_eq!(ends, [64, 53, 54, 62].repeat(11));
    let fixed = (50.0_f64 + 50.0_f64.sqrt()).floor();
    assert_eq!(fixed, 57.0);
    let mean = rows.iter().map(|r| num(r, "mean_limit")).sum::<f64>() / rows.len() as f64;
    assert!((mean - 58.25).abs() < 1e-9, "{mean}");
    assert!((mean - fixed).abs() / fixed < 0.025, "{mean}");
}

#[test]
fn envoy_measures_the_min_rtt_again_under_load_without_ratcheting() {
    // The same queue for 12 s, the min RTT measured again every 2 s (+ up to
    // 15 %). A measurement pins the limit at 3, but the 53 to 64 requests
    // let in before it are still in flight, answering L x 20 / 40 = 27 to
    // 32 ms after they were let in, not 20 ms. Envoy's recordLatencySample
    // leaves out every request let through before the measurement began, so
    // the min RTT is the p50 of requests let in at 3 (20 ms: only the first
    // few wait behind the old ones), and the limit returns to its cycle (53
    // to 64) after each measurement. Counting the old requests made the min
    // RTT the loaded latency: each measurement raised the limit further, up
    // to 1000 within 12 s.
    let mut sets = ENVOY_QUEUE.to_vec();
    sets[5] = "workload.duration_ms=12000";
    sets.push("limiters.envoy.min_rtt_calc_interval_ms=2000");
    let dir = run(&sets);
    let ts = read(&dir, "timeseries_concurrency");
    let rows = windows(&ts, "envoy", 1500.0, 11900.0);
    let measuring = rows.iter().filter(|r| num(r, "min_limit") == 3.0).count();
    assert!(
        measuring >= 8,
        "measured again at least 4 times: {measuring}"
    );
    let top = rows.iter().map(|r| num(r, "max_limit")).fold(0.0, f64::max);
    // the cycle's top (64), or the limit a measurement ends on plus one step
    assert!(top <= 67.0, "{top}");
    let c = read(&dir, "concurrency");
    assert!(num(c.row(&[("limiter", "envoy")]), "max_limit") <= 67.0);
}
