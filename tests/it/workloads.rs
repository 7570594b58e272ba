//! Several workloads on one clock, clients, closed user populations and the
//! first Poisson gap: checked against what queueing laws and the limiter say.

use crate::common::*;

/// An open Poisson workload's first request comes one gap after the start: over
/// 1 s at 10 req/s a run sends Poisson(10) requests, 10 on average (it sent
/// 1 + Poisson(10), 11 on average, when the first left at t = 0).
#[test]
fn a_poisson_second_at_ten_per_second_sends_ten_on_average() {
    let seeds: Vec<String> = (1..=400).map(|s| s.to_string()).collect();
    let (_dir, file) = file_with(&format!(
        r#"
[scenario]
name = "first gap"

[services.s]
routes = ["/x"]

[workload]
type = "open"
rate_rps = 10
duration_ms = 1000
arrivals = "poisson"

[compare]
"scenario.seed" = [{}]
"#,
        seeds.join(", ")
    ));
    let out = run_into(&file, &["--quiet"]);
    let csv = Csv::read(&out.path().join("outcomes.csv"));
    assert_eq!(csv.rows.len(), 400);
    let counts: Vec<f64> = csv.rows.iter().map(|r| num(r, "requests")).collect();
    let mean = counts.iter().sum::<f64>() / counts.len() as f64;
    // the mean of 400 Poisson(10) counts: sd sqrt(10 / 400) = 0.158; 11 is 6 sd off
    assert!((mean - 10.0).abs() < 0.5, "mean count {mean}");
    assert!(counts.contains(&0.0) || counts.iter().any(|&c| c < 5.0));
}

/// The noisy neighbour: two small clients pass everything while the large one,
/// at the same time, is held to its own bucket.
#[test]
fn a_per_client_limiter_holds_the_noisy_neighbour_and_spares_the_others() {
    let csv = run_csv("scenarios/noisy-neighbour.toml", "outcomes");
    assert_eq!(csv.headers[0], "workload");
    for small in ["small-a", "small-b"] {
        let r = csv.row(&[("workload", small)]);
        let n = num(r, "requests");
        // 50 req/s for 10 s
        assert!((n - 500.0).abs() < 100.0, "{small} sent {n}");
        assert_eq!(num(r, "answered"), n, "{small} passes everything");
        assert_eq!(num(r, "answered_pct"), 100.0);
    }
    let large = csv.row(&[("workload", "large")]);
    let (sent, answered) = (num(large, "requests"), num(large, "answered"));
    assert!((sent - 5000.0).abs() < 300.0, "large sent {sent}");
    // 100 per second for 10 s plus a full bucket of 100 at the start
    assert!(
        (answered - 1100.0).abs() <= 30.0,
        "the large client is held to its limit: {answered}"
    );
    let all = csv.row(&[("workload", "all")]);
    let sum = |col: &str| {
        ["small-a", "small-b", "large"]
            .iter()
            .map(|w| num(csv.row(&[("workload", w)]), col))
            .sum::<f64>()
    };
    assert_eq!(num(all, "requests"), sum("requests"));
    assert_eq!(num(all, "answered"), sum("answered"));
}

/// A closed population of N users thinking Z between requests: the interactive
/// response-time law R = N / X - Z, X the throughput.
#[test]
fn a_closed_population_obeys_the_response_time_law() {
    let (n, z_ms, duration_s) = (10.0, 50.0, 200.0);
    let (_dir, file) = file_with(&format!(
        r#"
[scenario]
name = "closed"
seed = 3

[services.s]
routes = ["/x"]

[services.s.handler]
type = "server"
slots = 2
queue = 20
service = {{ exponential = {{ mean_ms = 10 }} }}

[workload]
type = "closed"
users = {n}
think_ms = {{ exponential = {{ mean_ms = {z_ms} }} }}
duration_ms = {}
"#,
        duration_s * 1000.0
    ));
    let out = run_into(&file, &["--quiet"]);
    let csv = Csv::read(&out.path().join("outcomes.csv"));
    let r = &csv.rows[0];
    let done = num(r, "requests");
    assert_eq!(
        num(r, "answered"),
        done,
        "nothing is shed: the queue holds N"
    );
    let x_per_ms = done / (duration_s * 1000.0);
    let law = n / x_per_ms - z_ms;
    let measured = num(r, "mean_ms");
    assert!(
        (measured - law).abs() / law < 0.05,
        "R = {measured} ms, N/X - Z = {law} ms (X = {} req/s)",
        x_per_ms * 1000.0
    );
    // far from both bounds: it is a real check of the loop, not of a constant
    assert!(measured > 12.0 && measured < n * 10.0, "{measured}");
}

/// `[workload]` and a single `[workloads.main]` are the same workload: same
/// streams, same bytes.
#[test]
fn the_shorthand_is_the_workload_named_main() {
    let text = |section: &str| {
        format!(
            r#"
[scenario]
name = "same"

[services.s]
routes = ["/x"]

[{section}]
type = "open"
rate_rps = 100
duration_ms = 2000
"#
        )
    };
    let (_a, short) = file_with(&text("workload"));
    let (_b, long) = file_with(&text("workloads.main"));
    let (x, y) = (
        run_into(&short, &["--quiet"]),
        run_into(&long, &["--quiet"]),
    );
    let read = |d: &tempfile::TempDir| std::fs::read(d.path().join("outcomes.csv")).unwrap();
    assert_eq!(read(&x), read(&y));
}

/// `clients = N` splits the rate and the requests (the remainder to the first
/// clients), and each client carries `LABEL-i`, so a limiter keyed on the client
/// gives each its own bucket: 10 requests over 3 clients are 4, 3 and 3, and a
/// limit of 3 per client refuses exactly one.
#[test]
fn clients_split_the_requests_and_carry_their_own_label() {
    let (_dir, file) = file_with(
        r#"
[scenario]
name = "clients"

[services.s]
routes = ["/x"]
middleware = ["per-client"]

[limiters.per-client]
algorithm = "fixed-window"
key = ["client"]
limit = 3
window_ms = 100000

[workloads.api]
type = "open"
rate_rps = 100
requests = 10
clients = 3
"#,
    );
    let out = run_into(&file, &["--quiet"]);
    let limiters = Csv::read(&out.path().join("limiters.csv"));
    let l = limiters.row(&[("limiter", "per-client")]);
    assert_eq!(num(l, "buckets"), 3.0, "one bucket per client label");
    assert_eq!((num(l, "passed"), num(l, "rejected")), (9.0, 1.0));
}

/// Sums column `col` of the `timeseries` rows of `workload`.
fn series_total(csv: &Csv, workload: &str, col: &str) -> f64 {
    csv.select(&[("workload", workload)])
        .iter()
        .map(|r| num(r, col))
        .sum()
}

/// With several workloads the time series has one row per (window, workload)
/// and one `all` row per window: each window's workload rows add up to its `all`
/// row, each workload's windows to its `outcomes` row, and the limiter's
/// rejections land on the large key alone, in every window.
#[test]
fn noisy_neighbour_windows_per_workload_add_up_to_the_whole() {
    let out = run_into(&scenario("scenarios/noisy-neighbour.toml"), &["--quiet"]);
    let series = Csv::read(&out.path().join("timeseries.csv"));
    let outcomes = Csv::read(&out.path().join("outcomes.csv"));
    assert_eq!(series.headers[..2], ["window_start_ms", "workload"]);
    let workloads = ["small-a", "small-b", "large"];
    let windows: Vec<&String> = series
        .select(&[("workload", "all")])
        .iter()
        .map(|r| &r["window_start_ms"])
        .collect();
    // 10 s of traffic in 1 s windows, and the window holding the last answers
    assert_eq!(windows.len(), 11);
    assert_eq!(series.rows.len(), 4 * windows.len());
    let counts = [
        "first_tries",
        "attempts",
        "answered",
        "failed",
        "timed_out",
        "shed",
        "rejected",
    ];
    for start in &windows {
        let all = series.row(&[("window_start_ms", start), ("workload", "all")]);
        for col in counts {
            let sum: f64 = workloads
                .iter()
                .map(|w| {
                    num(
                        series.row(&[("window_start_ms", start), ("workload", w)]),
                        col,
                    )
                })
                .sum();
            assert_eq!(sum, num(all, col), "window {start}, {col}");
        }
        for small in ["small-a", "small-b"] {
            let r = series.row(&[("window_start_ms", start), ("workload", small)]);
            assert_eq!(num(r, "rejected"), 0.0, "{small} in window {start}");
        }
    }
    // the large key is cut to ~100/s in every full window after the first
    for start in &windows[1..10] {
        let r = series.row(&[("window_start_ms", start), ("workload", "large")]);
        let (answered, rejected) = (num(r, "answered"), num(r, "rejected"));
        assert!((90.0..=110.0).contains(&answered), "{start}: {answered}");
        assert!(rejected > 300.0, "{start}: {rejected}");
    }
    for w in workloads.iter().chain(&["all"]) {
        let o = outcomes.row(&[("workload", w)]);
        assert_eq!(
            series_total(&series, w, "first_tries"),
            num(o, "requests"),
            "{w}"
        );
        assert_eq!(
            series_total(&series, w, "answered"),
            num(o, "answered"),
            "{w}"
        );
        assert_eq!(
            series_total(&series, w, "rejected"),
            num(o, "requests") - num(o, "answered"),
            "{w}"
        );
    }
}

/// A retrying workload's retries count in its own windows (by send time), not in
/// its neighbour's; one workload keeps the time series as it was (no column).
#[test]
fn retries_count_in_the_windows_of_their_own_workload() {
    let text = |second: &str| {
        format!(
            r#"
[scenario]
name = "retries per workload"
seed = 5

[services.s]
routes = ["/x"]

[services.s.handler]
type = "server"
slots = 1
queue = 2
service = {{ exponential = {{ mean_ms = 20 }} }}

[policies.retry3]
retry = {{ max_attempts = 3, backoff = {{ kind = "constant", base_ms = 5 }} }}

[workloads.retrying]
type = "open"
rate_rps = 40
duration_ms = 5000
call_policy = "retry3"
{second}
[output]
window_ms = 500
"#
        )
    };
    let (_d, file) = file_with(&text(
        r#"
[workloads.plain]
type = "open"
rate_rps = 20
duration_ms = 5000
"#,
    ));
    let out = run_into(&file, &["--quiet"]);
    let series = Csv::read(&out.path().join("timeseries.csv"));
    let total = |w: &str, col: &str| series_total(&series, w, col);
    assert_eq!(total("plain", "attempts"), total("plain", "first_tries"));
    let retries = total("retrying", "attempts") - total("retrying", "first_tries");
    assert!(
        retries > 50.0,
        "the overloaded server sheds: {retries} retries"
    );
    assert_eq!(
        total("all", "attempts"),
        total("plain", "attempts") + total("retrying", "attempts")
    );
    // calls.csv has one row per calling workload (caller = its name; `none`
    // for the one without a policy), matching its time-series rows
    let calls = Csv::read(&out.path().join("calls.csv"));
    assert_eq!(calls.rows.len(), 2);
    for (w, policy) in [("plain", "none"), ("retrying", "retry3")] {
        let row = calls.row(&[("caller", w), ("call_policy", policy)]);
        assert_eq!(num(row, "attempts"), total(w, "attempts"), "{w}");
        assert_eq!(num(row, "first_tries"), total(w, "first_tries"), "{w}");
    }
    let (_d1, file) = file_with(&text(""));
    let out = run_into(&file, &["--quiet"]);
    let one = Csv::read(&out.path().join("timeseries.csv"));
    assert_eq!(one.headers[0], "window_start_ms");
    assert!(!one.headers.iter().any(|h| h == "workload"));
}

/// With several workloads, calls.csv gains a `workload` column: a client's
/// row is its own workload's, and a service's calls are split by the workload
/// of the request they serve (its breaker and budget stay shared), so the
/// service's rows add up to its whole and each matches its workload's traffic.
#[test]
fn a_services_calls_are_split_by_the_workload_they_serve() {
    let text = r#"
[scenario]
name = "calls per workload"
seed = 3

[policies.retry2]
timeout_ms = 30
retry = { max_attempts = 2, backoff = { kind = "none" } }

[services.front]
routes = ["/x"]

[services.front.handler]
type = "server"
slots = 50
queue = 0
service = { constant = 1 }
budget = "none"
branches = [{ name = "store", calls = [{ to = "store", call_policy = "retry2" }] }]

[services.store]
routes = ["/store"]

[services.store.handler]
type = "server"
slots = 2
queue = 10
service = { exponential = { mean_ms = 15 } }

[workloads.small]
type = "open"
route = "/x"
rate_rps = 20
duration_ms = 4000

[workloads.large]
type = "open"
route = "/x"
rate_rps = 90
duration_ms = 4000
"#;
    let (_d, file) = file_with(text);
    let out = run_into(&file, &["--quiet"]);
    let calls = Csv::read(&out.path().join("calls.csv"));
    let outcomes = Csv::read(&out.path().join("outcomes.csv"));
    let mut sum = 0.0;
    for w in ["small", "large"] {
        let row = calls.row(&[("caller", "front"), ("workload", w), ("target", "store")]);
        // one call per request that reached the front's slot (nothing is shed there)
        let requests = num(outcomes.row(&[("workload", w)]), "requests");
        assert_eq!(num(row, "first_tries"), requests, "{w}");
        assert!(num(row, "retries") > 0.0, "{w}: the store is overloaded");
        sum += num(row, "attempts");
        // the client rows carry their own workload
        let client = calls.row(&[("caller", w)]);
        assert_eq!(client.get("workload").map(String::as_str), Some(w));
    }
    let large = calls.row(&[("caller", "front"), ("workload", "large")]);
    let small = calls.row(&[("caller", "front"), ("workload", "small")]);
    assert!(num(large, "first_tries") > 3.0 * num(small, "first_tries"));
    assert!(sum > 0.0);
    // one workload: no column
    let one = text.replace(
        "[workloads.small]\ntype = \"open\"\nroute = \"/x\"\nrate_rps = 20\nduration_ms = 4000\n",
        "",
    );
    let (_d1, file1) = file_with(&one);
    let out1 = run_into(&file1, &["--quiet"]);
    let calls1 = std::fs::read_to_string(out1.path().join("calls.csv")).unwrap();
    assert!(calls1.starts_with("caller,target,call_policy,"), "{calls1}");
}
