//! `scenarios/adaptive-limits.toml`: each concurrency algorithm's limit before
//! the latency fault, derived from its rule (docs/scenarios.md, "Concurrency
//! limiters"), AIMD's saw-tooth through the fault, Envoy's fixed point with a
//! queue, and every request accounted for, asserted from the CSV files the
//! scenario writes.
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
    // (variant, answered, timed out, shed, rejected) of 27,000 requests
    let want = [
        ("none", 18200, 2300, 6500, 0),
        ("fixed", 20400, 0, 0, 6600),
        ("aimd", 18206, 2281, 139, 6374),
        ("vegas", 19367, 308, 81, 7244),
        ("gradient2", 19037, 1214, 2807, 3942),
        ("envoy", 17974, 286, 361, 8379),
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
    // a limiter that met no request has no line
    assert_eq!(conc.rows.len(), 5);
}

#[test]
fn aimd_saw_tooths_from_the_slots_to_twice_them_without_a_queue() {
    // Without a queue, an arrival that finds the 40 slots busy is shed at
    // once: a drop, x 0.9. While the limit is above 40 every arrival in a gap
    // between answers is shed, so the limit falls in a run of x 0.9 steps
    // (80, 72, 64, 57, 51, 45, 40: 6 steps) to the first value <= 40; then
    // each of the 40 slots answers once per 100 ms (+1 each): back to 80.
    let dir = run(&[
        "services.backend.handler.queue=0",
        r#"compare.variant=["aimd"]"#,
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
    assert_eq!(shed, 358.0);
}

#[test]
fn envoy_with_a_queue_cycles_around_its_fixed_point() {
    // 3000/s into the 40 slots of 20 ms with a queue of 1000 and no fault: the
    // limit binds, a queue of L - 40 forms, and a request's latency is L x 20
    // / 40 ms (Little). The min RTT, measured at 3 in flight, is 20 ms, so g L
    // = 1.25 x 20 / (L x 20 / 40) x L = 50 whatever L, and L' = floor(50 +
    // sqrt(50)) = 57: the fixed point, where sample RTT / min RTT = 57 / 40 =
    // 1.425 (the reference's 1.25 / (1 - 1/sqrt L) = 1.44 leaves g out of the
    // square root). A window's p50 is the latency of requests let in under the
    // limits before, so the limit cycles around 57 with a period of 4 windows.
    let dir = run(&[
        r#"compare.variant=["envoy"]"#,
        "workload.rate_rps=3000",
        "services.backend.handler.queue=1000",
        "workload.timeout_ms=5000",
        "faults=[]",
        "workload.duration_ms=6000",
    ]);
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
