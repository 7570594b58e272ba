//! `scenarios/gc-pauses.toml`: one pod of six with stop-the-world pauses.
//! The sweep's figures are `doc_figures.rs`'s; here, the independent bound
//! of docs/scenarios.md ("gc-pauses.toml") on each of three seeds, the
//! rows' order, and the paused pod in the per-replica time series.

use crate::common::{Csv, num, run_into, scenario};

/// Round robin sends pod 1 every sixth request (100 req/s, 200 per 2 s
/// period). Without pauses nothing fails; with them, every request in
/// service at a pause's start (2 on average) and every arrival of its first
/// 50 ms (5) fails, and at most its 15 arrivals and those 2 do. The bound
/// holds for each run up to its noise: about 12 failures per period and pod
/// over 30 periods, a standard deviation near 0.1 percentage point of the
/// share, so each seed's share must lie within 0.58 - 0.2 and 1.42 + 0.2 %.
#[test]
fn round_robins_failures_lie_within_the_pauses_bound_and_the_others_fail_less() {
    for seed in ["1", "2", "3"] {
        let dir = run_into(
            &scenario("scenarios/gc-pauses.toml"),
            &["--quiet", "--set", &format!("scenario.seed={seed}")],
        );
        let out = Csv::read(&dir.path().join("outcomes.csv"));
        let failed = |b: &str| 100.0 - num(out.row(&[("balancer", b)]), "answered_pct");
        let rr = failed("round_robin");
        assert!(
            (0.58 - 0.2..=1.42 + 0.2).contains(&rr),
            "seed {seed}: round robin fails {rr} %"
        );
        let (lr, ewma) = (failed("least_request"), failed("peak_ewma"));
        assert!(lr < 0.7 * rr && ewma < lr, "seed {seed}: {rr} {lr} {ewma}");
        let p99 = |b: &str| num(out.row(&[("balancer", b)]), "p99_all_ms");
        assert!(
            p99("round_robin") > 1.4 * p99("least_request"),
            "seed {seed}"
        );
        // the paused pod's queue stands above every other pod's
        let series = Csv::read(&dir.path().join("timeseries_services_replicas.csv"));
        let queue = |k: &str| -> f64 {
            series
                .select(&[("balancer", "round_robin"), ("replica", k)])
                .iter()
                .map(|r| num(r, "mean_queue"))
                .sum()
        };
        for k in ["2", "3", "4", "5", "6"] {
            assert!(queue("1") > 10.0 * queue(k), "seed {seed}: pod {k}");
        }
    }
}

/// The same scenario without pauses: nothing fails, and the balancers are
/// alike; so the failures above are the pauses'.
#[test]
fn without_the_pauses_nothing_fails() {
    let dir = run_into(
        &scenario("scenarios/gc-pauses.toml"),
        &["--quiet", "--set", "faults.0.for_ms=0"],
    );
    let out = Csv::read(&dir.path().join("outcomes.csv"));
    for b in ["round_robin", "least_request", "peak_ewma"] {
        assert_eq!(
            num(out.row(&[("balancer", b)]), "answered_pct"),
            100.0,
            "{b}"
        );
    }
}

/// The page names the paused pod as the fault's target is written and as the
/// tables count replicas (from 1): `checkout#1`, never a replica 0.
#[test]
fn the_page_names_the_paused_pod_as_the_target_is_written() {
    let dir = run_into(
        &scenario("scenarios/gc-pauses.toml"),
        &[
            "--quiet",
            "--set",
            "workload.duration_ms=5000",
            "--set",
            "scenario.warmup_ms=1000",
        ],
    );
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        page.contains("on checkout#1"),
        "no fault legend on checkout#1"
    );
    assert!(!page.contains("replica 0"), "a replica numbered from 0");
    // the per-replica lines are named as the fault names the pod
    let replicas = page
        .split("<section id=\"timeseries_services_replicas\">")
        .nth(1)
        .expect("the per-replica time series");
    assert!(
        replicas.contains("\ncheckout#1\n"),
        "a line named checkout#1"
    );
    assert!(
        !replicas.contains("checkout -&gt; 1"),
        "a replica named as a call"
    );
}
