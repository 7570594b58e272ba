//! The peer benchmarks M1, M2 and M3 (`scenarios/bench/`) against the peers' answers:
//! every statistic resim prints must lie within sampling error of the 30-seed
//! reference bands in `shared/peers/README.md` (mean and sd over 30 seeds of the
//! hand-written Rust loop; SimPy, Ciw and nexosim all fall within +-1.8 sd). The
//! runs use the full N of the peers (M1 1,000,000 arrivals, M2 200,000 requests,
//! M3 1,000,000 first tries), which takes a few seconds (M3: about 20) in a debug
//! build, so the bands apply as printed.
//!
//! RNG families differ (resim draws from per-actor ChaCha8 streams), so no number is
//! expected to match a peer's digit for digit: each must lie within `MAX_Z` sd of
//! the band's mean. Structural facts (conservation, the 200 ms worst case, no waste
//! under cancellation) are checked exactly.

use crate::common::*;
use std::collections::HashMap;

const M1: &str = "scenarios/bench/m1-ladder-server.toml";
const M2: &str = "scenarios/bench/m2-budget-chain.toml";
const M3: &str = "scenarios/bench/m3-retry-chain.toml";

/// A seed-1 answer may stray this many standard deviations from the 30-seed mean
/// (the peers' own answers stray up to 1.8).
const MAX_Z: f64 = 3.0;

/// M3 checks 17 statistics, most of them moved together by one retry storm: the
/// issue allows 3.5 sd (the loop's own 30 seeds stray up to 3.15 sd from their
/// mean on some statistic; its seed 1 up to 1.36, resim's seed 1 up to 1.93).
const MAX_Z_M3: f64 = 3.5;

/// Asserts `got` lies within `MAX_Z` sd of a reference band.
fn in_band(what: &str, got: f64, mean: f64, sd: f64) {
    in_band_z(what, got, mean, sd, MAX_Z);
}

/// Asserts `got` lies within `max_z` sd of a reference band.
fn in_band_z(what: &str, got: f64, mean: f64, sd: f64, max_z: f64) {
    let z = (got - mean) / sd;
    assert!(
        z.abs() <= max_z,
        "{what}: resim {got}, peers {mean} +- {sd} (z = {z:.2}, allowed +-{max_z})"
    );
}

#[test]
fn m1_ladder_server_agrees_with_the_peers() {
    let dir = run_into(&scenario(M1), &["--quiet"]);
    let services = Csv::read(&dir.path().join("services.csv"));
    let s = services.row(&[("service", "loan")]);
    let (arrived, processed, shed) = (num(s, "arrived"), num(s, "processed"), num(s, "shed"));
    assert_eq!(arrived, 1_000_000.0, "every arrival reaches the server");
    assert_eq!(
        processed + shed,
        arrived,
        "run until drained: admitted = processed"
    );
    assert_eq!(num(s, "abandoned"), 0.0);
    in_band("M1 rejected", shed, 3277.6, 148.1);
    in_band("M1 mean wait ms", num(s, "mean_wait_ms"), 34.562, 0.253);
    in_band("M1 p95 wait ms", num(s, "p95_wait_ms"), 113.222, 0.801);
    // A constant 40 ms service: response = wait + 40 for every processed request.
    assert!((num(s, "mean_response_ms") - num(s, "mean_wait_ms") - 40.0).abs() < 1e-6);

    // Model events as the peers count them: arrivals + service completions.
    let run = Csv::read(&dir.path().join("run.csv"));
    let r = &run.rows[0];
    assert_eq!(num(r, "events"), arrived + processed);
}

/// The outcomes row of one (variant, cancellation) combination.
fn outcome<'a>(csv: &'a Csv, variant: &str, cancel: &str) -> &'a HashMap<String, String> {
    csv.row(&[("variant", variant), ("cancellation", cancel)])
}

#[test]
fn m2_budget_chain_agrees_with_the_peers() {
    let csv = run_csv(M2, "outcomes");
    for row in &csv.rows {
        assert_eq!(num(row, "requests"), 200_000.0);
        assert_eq!(num(row, "answered") + num(row, "dropped"), 200_000.0);
    }

    for cancel in ["false", "true"] {
        let normal = outcome(&csv, "baseline", cancel);
        in_band("M2 normal dropped", num(normal, "dropped"), 5.83, 2.32);
        in_band(
            "M2 normal median e2e",
            num(normal, "median_ms"),
            39.279,
            0.021,
        );
        in_band("M2 normal mean e2e", num(normal, "mean_ms"), 40.778, 0.018);
        in_band("M2 normal worst e2e", num(normal, "worst_ms"), 123.0, 5.1);

        let slow = outcome(&csv, "slow", cancel);
        in_band("M2 slow answered", num(slow, "answered"), 4115.8, 71.7);
        in_band("M2 slow median e2e", num(slow, "median_ms"), 121.895, 0.013);
        in_band("M2 slow mean e2e", num(slow, "mean_ms"), 123.314, 0.017);
        // tariff 90 + measure 90 + gateway 20, exactly
        assert_eq!(num(slow, "worst_ms"), 200.0);
    }

    let normal = outcome(&csv, "baseline", "false");
    in_band("M2 normal wasted ms", num(normal, "wasted_ms"), 59.7, 37.5);
    let slow = outcome(&csv, "slow", "false");
    in_band(
        "M2 slow wasted ms",
        num(slow, "wasted_ms"),
        38_746_235.0,
        51_852.0,
    );

    // Cancellation stops the waste but not a single outcome: the same latencies are
    // drawn either way (common random numbers).
    for variant in ["baseline", "slow"] {
        let (kept, cancelled) = (
            outcome(&csv, variant, "false"),
            outcome(&csv, variant, "true"),
        );
        assert_eq!(num(cancelled, "wasted_ms"), 0.0);
        for col in ["answered", "dropped", "median_ms", "worst_ms", "mean_ms"] {
            assert_eq!(kept[col], cancelled[col], "{variant}: {col}");
        }
    }
}

#[test]
fn m3_retry_chain_agrees_with_the_peers() {
    let dir = run_into(&scenario(M3), &["--quiet"]);
    let read = |table: &str| Csv::read(&dir.path().join(format!("{table}.csv")));
    let (outcomes, calls, services, work) = (
        read("outcomes"),
        read("calls"),
        read("services"),
        read("server_work"),
    );
    let o = &outcomes.rows[0];
    let client = calls.row(&[("caller", "main"), ("target", "frontend")]);
    let backend_call = calls.row(&[("caller", "frontend"), ("target", "backend")]);
    let frontend = services.row(&[("service", "frontend")]);
    let backend = services.row(&[("service", "backend")]);
    let late = |service: &str| num(work.row(&[("service", service)]), "late_work_ms");

    // Rust band, N = 1,000,000, seeds 1..30 (shared/peers/results/m3-agreement.md)
    let band = |what: &str, got: f64, mean: f64, sd: f64| {
        in_band_z(&format!("M3 {what}"), got, mean, sd, MAX_Z_M3)
    };
    let first_tries = num(o, "requests");
    assert_eq!(first_tries, 1_000_000.0);
    assert_eq!(num(client, "first_tries"), first_tries);
    let answered = num(o, "answered");
    band("answered", answered, 995_078.8, 70.25);
    band("failed", first_tries - answered, 4_921.2, 70.25);
    let attempts_client = num(client, "attempts");
    band("attempts_client", attempts_client, 1_009_913.9, 144.26);
    let attempts_backend = num(backend_call, "attempts");
    band("attempts_backend", attempts_backend, 1_000_866.4, 88.79);
    band("p50_e2e_ms", num(o, "p50_ms"), 4.2224, 0.0072);
    band("p99_e2e_ms", num(o, "p99_ms"), 20.30, 0.0685);
    band("mean_e2e_ms", num(o, "answered_mean_ms"), 5.3640, 0.0092);
    band("backend_wasted_ms", late("backend"), 93_060.6, 1_732.1);
    band("frontend_wasted_ms", late("frontend"), 79_255.8, 315.50);
    let (timeouts, shed, errors) = (
        num(client, "timeout"),
        num(client, "shed"),
        num(client, "error"),
    );
    band("client_timeouts", timeouts, 5_301.7, 23.10);
    band("client_shed", shed, 9_524.6, 209.84);
    band("client_errors", errors, 8.7667, 3.7571);
    band(
        "frontend_cancelled",
        num(frontend, "abandoned"),
        2_896.0,
        38.31,
    );
    let backend_timeouts = num(backend_call, "timeout");
    band("backend_timeouts", backend_timeouts, 4_047.5, 79.69);
    band(
        "backend_cancelled",
        num(backend, "abandoned"),
        281.90,
        21.84,
    );
    // at most 8 backend attempts are ever queued (one per frontend slot) of 16
    assert_eq!(num(backend, "shed"), 0.0, "backend_shed");
    assert_eq!(num(backend_call, "shed"), 0.0);

    // The peers' model events, from the counters: first tries + retries + client
    // timers that fired + frontend and backend service completions + backend timers
    // that fired.
    let model_events = attempts_client
        + timeouts
        + num(frontend, "processed")
        + num(backend, "processed")
        + backend_timeouts;
    band("model_events", model_events, 3_017_340.9, 127.49);

    // Structure, exactly: every attempt ends once; the frontend sees every client
    // attempt and the backend every backend attempt; a first try is answered
    // exactly when one of its attempts was; nothing is cancelled in service.
    assert_eq!(attempts_client, answered + timeouts + shed + errors);
    assert_eq!(num(client, "ok"), answered);
    assert_eq!(num(client, "retries"), attempts_client - first_tries);
    assert_eq!(num(frontend, "arrived"), attempts_client);
    assert_eq!(num(frontend, "shed"), shed);
    assert_eq!(
        num(frontend, "processed"),
        attempts_client - shed - num(frontend, "abandoned")
    );
    assert_eq!(num(backend, "arrived"), attempts_backend);
    assert_eq!(
        num(backend_call, "first_tries"),
        num(frontend, "processed"),
        "every frontend service is followed by one backend call"
    );
    assert_eq!(
        num(backend, "processed"),
        attempts_backend - num(backend, "abandoned")
    );
    assert_eq!(num(frontend, "cancelled") + num(backend, "cancelled"), 0.0);
    // a frontend request answers `error` exactly when its backend call failed
    // (both attempts); the client sees the errors of the attempts it still waited for
    let backend_failed = num(backend_call, "first_tries") - num(backend_call, "ok");
    assert!(errors <= backend_failed, "{errors} > {backend_failed}");
}
