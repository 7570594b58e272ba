//! The peer benchmarks M1 and M2 (`scenarios/bench/`) against the peers' answers:
//! every statistic resim prints must lie within sampling error of the 30-seed
//! reference bands in `shared/peers/README.md` (mean and sd over 30 seeds of the
//! hand-written Rust loop; SimPy, Ciw and nexosim all fall within +-1.8 sd). The
//! runs use the full N of the peers (M1 1,000,000 arrivals, M2 200,000 requests),
//! which takes a few seconds in a debug build, so the bands apply as printed.
//!
//! RNG families differ (resim draws from per-actor ChaCha8 streams), so no number is
//! expected to match a peer's digit for digit: each must lie within `MAX_Z` sd of
//! the band's mean. Structural facts (conservation, the 200 ms worst case, no waste
//! under cancellation) are checked exactly.

use crate::common::*;
use std::collections::HashMap;

const M1: &str = "scenarios/bench/m1-ladder-server.toml";
const M2: &str = "scenarios/bench/m2-budget-chain.toml";

/// A seed-1 answer may stray this many standard deviations from the 30-seed mean
/// (the peers' own answers stray up to 1.8).
const MAX_Z: f64 = 3.0;

/// Asserts `got` lies within `MAX_Z` sd of a reference band.
fn in_band(what: &str, got: f64, mean: f64, sd: f64) {
    let z = (got - mean) / sd;
    assert!(
        z.abs() <= MAX_Z,
        "{what}: resim {got}, peers {mean} +- {sd} (z = {z:.2}, allowed +-{MAX_Z})"
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
