//! Runaway protection: scenarios that would never end or would explode stop with
//! an error naming the limit they hit, and quickly: 10^15 requests and 10^12
//! arrivals a second are refused before the run (each request costs at least one
//! event, so they cannot fit scenario.max_events); zero-time work, floods of
//! simultaneous requests and far-future events stop on the run's own caps.

use crate::common::{resim, root};
use std::time::{Duration, Instant};

/// Well above a debug build's start-up, far below what a runaway would take.
const QUICK: Duration = Duration::from_secs(5);

fn stops(case: &str, command: &str, limit: &str) {
    let tmp = tempfile::tempdir().expect("temp");
    let started = Instant::now();
    let out = resim()
        .current_dir(root())
        .arg(command)
        .arg(format!("tests/bad/{case}.toml"))
        .args(if command == "run" {
            vec!["--out".to_string(), tmp.path().display().to_string()]
        } else {
            vec![]
        })
        .timeout(Duration::from_secs(60))
        .output()
        .expect("resim runs");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
    assert!(
        stderr.contains(limit),
        "{case}: `{limit}` not named in {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{case}: {stderr}");
    assert!(took < QUICK, "{case} took {took:?}");
}

#[test]
fn huge_workloads_are_refused_before_the_run() {
    // `check` only validates: the refusal happens there, with the default limit.
    stops(
        "runaway-requests",
        "check",
        "scenario.max_events = 1000000000",
    );
    stops("runaway-rate", "check", "scenario.max_events = 1000000000");
}

#[test]
fn zero_time_loops_stop_on_max_events() {
    // Valid (40000 requests fit 50000 events) until the run counts its events.
    resim()
        .current_dir(root())
        .args(["check", "tests/bad/runaway-zero-time-loop.toml"])
        .assert()
        .success();
    stops(
        "runaway-zero-time-loop",
        "run",
        "the run passed scenario.max_events = 50000",
    );
}

#[test]
fn a_flood_of_simultaneous_requests_stops_on_max_in_flight() {
    // Fits max_events, but at 10^12 a second every request is in flight at once:
    // without the cap its memory grows past the machine's (2 GB in 4 s measured).
    stops(
        "runaway-flood",
        "run",
        "more than scenario.max_in_flight = 20000 requests in flight",
    );
}

#[test]
fn far_future_events_stop_on_max_sim_time() {
    stops(
        "runaway-sim-time",
        "run",
        "the run passed scenario.max_sim_time_ms",
    );
}

/// A sliding-log limiter's log holds one entry per request let through within its
/// window, per bucket, so its limit is capped by scenario.max_in_flight: at the cap
/// (or with the cap raised, as the error advises) the scenario runs.
#[test]
fn a_sliding_log_limit_is_capped_by_max_in_flight() {
    let case = "tests/bad/sliding-log-limit-above-in-flight.toml";
    let check = |set: &[&str]| {
        let mut cmd = resim();
        cmd.current_dir(root()).arg("check").arg(case);
        for s in set {
            cmd.args(["--set", s]);
        }
        let out = cmd.output().expect("resim runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = check(&[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("limiters.log.limit"), "{stderr}");
    assert!(stderr.contains("scenario.max_in_flight = 1000"), "{stderr}");
    assert_eq!(check(&["limiters.log.limit=1000"]).0, Some(0));
    assert_eq!(check(&["scenario.max_in_flight=1001"]).0, Some(0));
    // other algorithms keep no per-pass log: no cap
    assert_eq!(
        check(&["limiters.log.algorithm=\"sliding-counter\""]).0,
        Some(0)
    );
}

#[test]
fn time_series_rows_count_the_limiter_windows() {
    // 1 ms windows over a 4000 s run: 2 rows a window without the keyed limiter's
    // 1 + 16 fit 10^7 rows; with them the run stops (it used to run out of memory).
    stops("runaway-series-limiter-rows", "run", "output.window_ms");
    // and the load-time check counts them too (4 x 10^6 windows x 19 rows)
    stops("window-limiter-rows", "check", "output.window_ms");
}
