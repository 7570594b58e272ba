//! Faults over time, queue order, time series and recovery: the bundled scenarios'
//! figures, and properties of the time series (per-window counts add up to the
//! whole run's; Little's law holds window by window).

use crate::common::{Csv, resim, scenario};
use proptest::prelude::*;
use resim::scenario::{LoadOptions, load_str};
use std::path::Path;

/// Runs a bundled scenario into a temporary folder; the folder stays while the
/// returned guard lives.
fn run(rel: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    resim()
        .args(["run", "--no-report", "--quiet"])
        .arg(scenario(rel))
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    dir
}

fn num(row: &std::collections::HashMap<String, String>, col: &str) -> f64 {
    row[col]
        .parse()
        .unwrap_or_else(|e| panic!("{col} = `{}`: {e}", row[col]))
}

#[test]
fn goodput_collapse_recovers_only_when_stale_work_is_abandoned() {
    let dir = run("scenarios/goodput-collapse.toml");
    let rec = Csv::read(&dir.path().join("recovery.csv"));
    let kept = rec.row(&[("abandon", "false"), ("fault", "0")]);
    let dropped = rec.row(&[("abandon", "true"), ("fault", "0")]);
    // both start from the offered 90/s
    for r in [kept, dropped] {
        let before = num(r, "before_goodput_per_s");
        assert!((80.0..100.0).contains(&before), "before {before}");
        assert_eq!(num(r, "min_goodput_per_s"), 0.0, "goodput collapses");
    }
    // ~450 stale requests drained at the 10/s headroom: about 45 s
    assert_eq!(kept["stuck"], "false");
    let slow = num(kept, "recovery_ms");
    assert!((35_000.0..=55_000.0).contains(&slow), "recovery {slow} ms");
    // abandon: back within a few seconds of the fault's end
    assert_eq!(dropped["stuck"], "false");
    let fast = num(dropped, "recovery_ms");
    assert!(fast <= 3_000.0, "recovery {fast} ms");

    // the timeline shows it: goodput near zero in the middle of the drain
    let ts = Csv::read(&dir.path().join("timeseries.csv"));
    let at = |abandon: &str, ms: &str| {
        num(
            ts.row(&[("abandon", abandon), ("window_start_ms", ms)]),
            "answered",
        )
    };
    assert_eq!(at("false", "30000"), 0.0);
    assert!(at("true", "30000") > 70.0);
    // and the services table the backlog: a long queue during the drain
    let sv = Csv::read(&dir.path().join("timeseries_services.csv"));
    let q = num(
        sv.row(&[
            ("abandon", "false"),
            ("window_start_ms", "20000"),
            ("service", "backend"),
        ]),
        "mean_queue",
    );
    assert!(q > 300.0, "queue {q}");
}

#[test]
fn lifo_fails_fewer_requests_than_fifo_after_a_spike() {
    let dir = run("scenarios/lifo-after-spike.toml");
    // a server-only scenario has no outcomes table: the windows add up to the run
    let ts = Csv::read(&dir.path().join("timeseries.csv"));
    let failed_pct = |order: &str| {
        let rows = ts.select(&[("order", order)]);
        let sum = |col: &str| rows.iter().map(|r| num(r, col)).sum::<f64>();
        let n = sum("first_tries");
        (n - sum("answered")) / n * 100.0
    };
    let (fifo, lifo) = (failed_pct("fifo"), failed_pct("lifo"));
    // seed 1: fifo 6.12 %, lifo 1.12 %, adaptive_lifo 1.13 %
    // our figures (seed 1): documented in the scenario's comments
    assert!(fifo > 4.0 * lifo, "fifo {fifo:.2} % vs lifo {lifo:.2} %");
    assert!(
        (5.0..8.0).contains(&fifo) && lifo < 2.0,
        "fifo {fifo:.2} % lifo {lifo:.2} %"
    );
    assert!(failed_pct("adaptive_lifo") < fifo);
}

#[test]
fn warmup_leaves_the_empty_start_out_of_the_whole_run_figures() {
    let dir = run("scenarios/warmup.toml");
    let out = Csv::read(&dir.path().join("outcomes.csv"));
    let ts = Csv::read(&dir.path().join("timeseries.csv"));
    let cold = out.row(&[("warmup_ms", "0")]);
    let warm = out.row(&[("warmup_ms", "20000")]);
    // the time series still shows every request; the whole-run figures leave out
    // exactly those sent in the first 20 s
    let sent = |filter: &dyn Fn(f64) -> bool| -> f64 {
        ts.select(&[("warmup_ms", "20000")])
            .iter()
            .filter(|r| filter(num(r, "window_start_ms")))
            .map(|r| num(r, "first_tries"))
            .sum()
    };
    assert_eq!(sent(&|_| true), num(cold, "requests"));
    assert_eq!(sent(&|w| w >= 20_000.0), num(warm, "requests"));
    assert!(num(warm, "requests") < num(cold, "requests"));
}

#[test]
fn the_first_windows_of_an_empty_start_are_biased_low_over_replications() {
    // a sweep gives every window its mean and interval: the queue of the first
    // window (started empty) is clearly shorter than the steady state's
    let dir = tempfile::tempdir().expect("tempdir");
    resim()
        .args([
            "sweep",
            "-n",
            "40",
            "--quiet",
            "--no-report",
            "--set",
            "montecarlo.windows=true",
        ])
        .args(["--set", "workload.duration_ms=60000"])
        .arg(scenario("scenarios/warmup.toml"))
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    let summary = Csv::read(&dir.path().join("summary.csv"));
    let queue = |w: u64| {
        summary
            .row(&[
                ("warmup_ms", "0"),
                (
                    "metric",
                    &format!("timeseries_services.window_start_ms_{w}.store.mean_queue"),
                ),
            ])
            .clone()
    };
    let first = queue(0);
    let steady: f64 = (20..60).map(|k| num(&queue(k * 1000), "mean")).sum::<f64>() / 40.0;
    assert!(
        num(&first, "ci_high") < 0.75 * steady,
        "first window {} (ci_high {}) vs steady {steady}",
        num(&first, "mean"),
        num(&first, "ci_high")
    );
}

#[test]
fn balancers_that_see_load_avoid_the_slow_replica() {
    let dir = run("scenarios/replicas.toml");
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    let services = Csv::read(&dir.path().join("services.csv"));
    let pct = |b: &str, r: &str| num(reps.row(&[("balancer", b), ("replica", r)]), "arrived_pct");
    let p99 = |b: &str| {
        num(
            services.row(&[("balancer", b), ("service", "api")]),
            "p99_response_ms",
        )
    };
    for r in ["1", "2", "3", "4"] {
        assert!((pct("round_robin", r) - 25.0).abs() < 0.1, "replica {r}");
    }
    for b in ["least_outstanding", "two_choices"] {
        assert!(
            pct(b, "2") < 20.0,
            "{b}: slow replica got {} %",
            pct(b, "2")
        );
        assert!(
            p99(b) < p99("round_robin"),
            "{b}: p99 {} vs {}",
            p99(b),
            p99("round_robin")
        );
    }
}

/// One server under open load, with an optional fault, as TOML.
#[allow(clippy::too_many_arguments)] // one knob per property-test input
fn server_scenario(
    slots: u32,
    queue: u32,
    service_ms: f64,
    rate: f64,
    timeout: Option<f64>,
    abandon: bool,
    window: f64,
    fault: Option<(&str, f64, f64, f64)>,
) -> String {
    let mut t = format!(
        "[scenario]\nname = \"p\"\nseed = 3\n[services.s]\nroutes = [\"/s\"]\n\
         [services.s.handler]\ntype = \"server\"\nslots = {slots}\nqueue = {queue}\n\
         service = {{ constant = {service_ms} }}\nabandon = {abandon}\n\
         [dependencies.unused]\nlatency = {{ constant = 1 }}\n\
         [workload]\ntype = \"open\"\nrate_rps = {rate}\nduration_ms = 5000\n"
    );
    if let Some(ms) = timeout {
        t.push_str(&format!("timeout_ms = {ms}\n"));
    }
    t.push_str(&format!("[output]\nwindow_ms = {window}\n"));
    if let Some((kind, at, len, value)) = fault {
        let value = if kind == "down" {
            String::new()
        } else {
            format!("value = {value}\n")
        };
        t.push_str(&format!(
            "[[faults]]\ntarget = \"s\"\nkind = \"{kind}\"\nat_ms = {at}\nfor_ms = {len}\n{value}"
        ));
    }
    t
}

fn fault_strategy() -> impl Strategy<Value = Option<(&'static str, f64, f64, f64)>> {
    prop_oneof![
        Just(None),
        (0.0..4000.0f64, 0.0..2000.0f64, 1.0..4.0f64).prop_map(|(a, l, v)| Some((
            "latency_factor",
            a.round(),
            l.round(),
            v
        ))),
        (0.0..4000.0f64, 0.0..2000.0f64, 0u32..4).prop_map(|(a, l, v)| Some((
            "slots",
            a.round(),
            l.round(),
            f64::from(v)
        ))),
        (0.0..4000.0f64, 0.0..2000.0f64, 0.0..1.0f64).prop_map(|(a, l, v)| Some((
            "error_rate",
            a.round(),
            l.round(),
            v
        ))),
        (0.0..4000.0f64, 0.0..2000.0f64).prop_map(|(a, l)| Some((
            "down",
            a.round(),
            l.round(),
            0.0
        ))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn per_window_counts_add_up_to_the_whole_run(
        slots in 1u32..5,
        queue in 0u32..30,
        service_ms in 1.0..60.0f64,
        rate in 10.0..300.0f64,
        timeout in prop::option::of(20.0..400.0f64),
        abandon in any::<bool>(),
        window in prop_oneof![Just(100.0), Just(250.0), Just(1000.0), Just(333.0)],
        fault in fault_strategy(),
    ) {
        let text = server_scenario(slots, queue, service_ms.round(), rate, timeout, abandon, window, fault);
        let s = load_str(&text, Path::new("p.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let r = resim::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let ts = r.timeseries.as_ref().expect("a time series");
        let sum = |f: fn(&resim::sim::timeseries::WindowStats) -> u64| -> u64 {
            ts.windows.iter().map(f).sum()
        };
        prop_assert_eq!(sum(|w| w.first_tries), r.outcomes.requests, "{}", text);
        prop_assert_eq!(sum(|w| w.answered), r.outcomes.answered, "{}", text);
        prop_assert_eq!(sum(|w| w.failed), r.outcomes.dropped + r.outcomes.errors + r.outcomes.refused + r.outcomes.not_found, "{}", text);
        prop_assert_eq!(sum(|w| w.timed_out), r.outcomes.timed_out, "{}", text);
        prop_assert_eq!(sum(|w| w.shed), r.outcomes.shed, "{}", text);
        let n = ts.names.len();
        prop_assert_eq!(n, 2);
        let server = &r.servers[0];
        let per = |k: usize, f: fn(&resim::sim::timeseries::ServiceWindow) -> u64| -> u64 {
            (0..ts.windows.len()).map(|w| f(&ts.services[w * n + k])).sum()
        };
        prop_assert_eq!(per(0, |w| w.arrivals), server.arrived, "{}", text);
        prop_assert_eq!(per(0, |w| w.processed), server.processed, "{}", text);
        prop_assert_eq!(per(0, |w| w.shed), server.shed, "{}", text);
        let wasted: f64 = (0..ts.windows.len()).map(|w| ts.services[w * n].wasted_ms).sum();
        prop_assert!((wasted - server.late_work_ms).abs() < 1e-6, "{} vs {}", wasted, server.late_work_ms);
        // the time averages over the windows are the whole run's
        let end = r.sim_time_ms;
        let busy: f64 = (0..ts.windows.len())
            .map(|w| {
                let len = (end - w as f64 * window).min(window);
                ts.services[w * n].mean_busy * len
            })
            .sum();
        prop_assert!((busy / end - server.mean_busy_slots).abs() < 1e-6 * (1.0 + server.mean_busy_slots),
            "{} vs {}", busy / end, server.mean_busy_slots);
    }

    #[test]
    fn littles_law_holds_per_window(
        slots in 1u32..5,
        queue in 0u32..30,
        service_ms in 1.0..40.0f64,
        rate in 10.0..300.0f64,
        window in prop_oneof![Just(250.0), Just(1000.0)],
    ) {
        // busy slots = throughput x service time, window by window: each window's
        // busy area differs from processed x S only by the requests in service at
        // its two edges (at most `slots` each, S each)
        let s_ms = service_ms.round();
        let text = server_scenario(slots, queue, s_ms, rate, None, false, window, None);
        let s = load_str(&text, Path::new("p.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let r = resim::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let ts = r.timeseries.as_ref().expect("a time series");
        let n = ts.names.len();
        for k in 0..ts.windows.len() {
            let w = &ts.services[k * n];
            let len = (r.sim_time_ms - k as f64 * window).min(window);
            let l = w.mean_busy * len;
            let lambda_w = w.processed as f64 * s_ms;
            prop_assert!((l - lambda_w).abs() <= 2.0 * f64::from(slots) * s_ms + 1e-6,
                "window {}: busy area {} vs processed x S {}\n{}", k, l, lambda_w, text);
        }
    }
}

/// Runs a scenario given as text; returns its folder (kept alive) and the output
/// folder inside it.
fn run_text(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, file) = crate::common::file_with(text);
    let out = dir.path().join("out");
    resim()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&file)
        .assert()
        .success();
    (dir, out)
}

/// A client's retries are attempts of the time series, counted by send time: the
/// windows' attempts add up to the calls table's, and the retries fall in the
/// windows of the fault that made the first tries fail.
#[test]
fn client_retries_count_as_attempts_in_the_time_series() {
    let text = r#"
[scenario]
name = "retries in the series"
seed = 3
[policies.retry3]
retry = { max_attempts = 3, on = ["error"], backoff = { kind = "none" } }
[services.api]
routes = ["/x"]
[services.api.handler]
type = "server"
slots = 50
queue = 0
service = { constant = 1 }
[[faults]]
target = "api"
kind = "error_rate"
at_ms = 2000
for_ms = 2000
value = 1.0
[workload]
type = "open"
rate_rps = 100
arrivals = "uniform"
duration_ms = 6000
call_policy = "retry3"
[output]
window_ms = 1000
"#;
    let (_dir, out) = run_text(text);
    let series = Csv::read(&out.join("timeseries.csv"));
    let calls = Csv::read(&out.join("calls.csv"));
    let total = |c: &str| -> f64 { series.rows.iter().map(|r| num(r, c)).sum() };
    let attempts: f64 = calls.rows.iter().map(|r| num(r, "attempts")).sum();
    assert_eq!(total("attempts"), attempts, "every attempt in some window");
    assert_eq!(total("first_tries"), 600.0);
    // 2 s of failing first tries at 100/s, each tried 3 times
    assert_eq!(attempts - 600.0, 400.0);
    let w = |start: &str| series.row(&[("window_start_ms", start)]).clone();
    assert_eq!(num(&w("1000"), "attempts"), num(&w("1000"), "first_tries"));
    assert_eq!(
        num(&w("2000"), "attempts"),
        3.0 * num(&w("2000"), "first_tries")
    );
}

/// retry-storm.toml: the boundary between a slowdown that recovers and one that
/// retries keep alive, and which mitigation brings it back (recovery.csv).
#[test]
fn a_retry_storm_outlives_a_long_slowdown_unless_mitigated() {
    let dir = run("scenarios/retry-storm.toml");
    let rec = Csv::read(&dir.path().join("recovery.csv"));
    let row = |v: &str, f: &str| rec.row(&[("variant", v), ("for_ms", f)]).clone();
    let stuck = |v: &str, f: &str| row(v, f)["stuck"] == "true";
    // no mitigation: a short slowdown recovers, longer ones stay stuck
    assert!(!stuck("baseline", "500"));
    assert!(stuck("baseline", "2000") && stuck("baseline", "10000"));
    // the retries amplify the load about 3x while stuck
    assert!(num(&row("baseline", "2000"), "peak_amplification") > 2.5);
    // a 10 % retry budget recovers from 2 s (6 s after its end), not from 10 s
    assert_eq!(num(&row("retry-budget", "2000"), "recovery_ms"), 6000.0);
    assert!(stuck("retry-budget", "10000"));
    // dropping abandoned attempts alone does not: FIFO still serves the oldest
    assert!(stuck("abandon", "2000") && stuck("abandon", "10000"));
    // CoDel and adaptive LIFO are back within two windows of the slowdown's end
    // (a window holds about 90 answers, Poisson: +-10 by chance alone, so five
    // windows' mean can miss the 90 % bar by a little right after a short blip)
    for v in ["codel", "adaptive-lifo"] {
        for f in ["500", "2000", "10000"] {
            assert!(!stuck(v, f), "{v} {f}");
            assert!(num(&row(v, f), "recovery_ms") <= 1500.0, "{v} {f}");
        }
    }
}

/// breaker-recovery.toml: a store down from 10 s to 15 s. The breaker opens in
/// the first second of the outage, its half-open trials fail while the store is
/// down, and the first trial after it closes the breaker: the store's arrivals
/// stop during the outage and resume after it (timeseries_services.csv).
#[test]
fn a_breaker_opens_in_an_outage_and_its_trials_close_it_after() {
    let dir = run("scenarios/breaker-recovery.toml");
    let calls = Csv::read(&dir.path().join("calls.csv"));
    let c = calls.row(&[("caller", "api"), ("target", "store")]);
    assert!(
        num(c, "breaker_opened") >= 2.0,
        "opened again after a failed trial"
    );
    assert!(
        num(c, "breaker_refused") > 400.0,
        "calls stopped while open"
    );
    assert!(num(c, "error") < 50.0, "few calls reach the down store");
    let series = Csv::read(&dir.path().join("timeseries_services.csv"));
    let arrivals = |start: &str| {
        num(
            series.row(&[("window_start_ms", start), ("service", "store")]),
            "arrivals",
        )
    };
    assert_eq!(arrivals("9000"), 100.0, "before the outage");
    for w in ["11000", "12000", "13000", "14000", "15000"] {
        assert!(arrivals(w) <= 5.0, "only trials during the outage ({w})");
    }
    assert!(
        arrivals("16000") > 50.0,
        "calls resume once a trial succeeds"
    );
    assert_eq!(arrivals("20000"), 100.0);
}

/// A policy's attempt at a down dependency fails at once with an error the
/// policy counts (it was lost before, so retries and breakers never saw it).
#[test]
fn an_attempt_at_a_down_dependency_is_an_error_for_the_policy() {
    let text = r#"
[scenario]
name = "down attempts"
[policies.retry2]
retry = { max_attempts = 2, on = ["error"], backoff = { kind = "none" } }
[services.api]
routes = ["/x"]
[services.api.handler]
type = "plan"
budget = "none"
branches = [{ name = "b", calls = [{ to = "store", call_policy = "retry2" }] }]
[dependencies.store]
latency = { constant = 1 }
[[faults]]
target = "store"
kind = "down"
at_ms = 0
for_ms = 100000
[workload]
type = "sequence"
requests = 10
"#;
    let (_dir, out) = run_text(text);
    let calls = Csv::read(&out.join("calls.csv"));
    let c = calls.row(&[("caller", "api"), ("target", "store")]);
    assert_eq!(num(c, "attempts"), 20.0);
    assert_eq!(num(c, "retries"), 10.0);
    assert_eq!(num(c, "error"), 20.0);
    let outcomes = Csv::read(&out.join("outcomes.csv"));
    assert_eq!(num(&outcomes.rows[0], "dropped"), 10.0);
}

/// `scenario.warmup_ms` starts the server and dependency books again at its end:
/// `services.csv`, `server_work.csv` and the run's dependency work count exactly
/// what the (unfiltered) time series shows from the warm-up's window on, and
/// their time averages are the time series' averaged over the same span.
#[test]
fn warmup_cuts_the_server_and_dependency_tables_at_its_end() {
    let text = |warmup: u32| {
        format!(
            r#"
[scenario]
name = "warm-up cuts the server and dependency books"
seed = 4
warmup_ms = {warmup}

[services.api]
routes = ["/api"]

[services.api.handler]
type = "server"
slots = 1
queue = 1000
service = {{ exponential = {{ mean_ms = 8 }} }}
budget = "none"
branches = [ {{ name = "s", calls = ["store"] }} ]

[dependencies.store]
slots = 2
latency = {{ exponential = {{ mean_ms = 5 }} }}

[workload]
type = "open"
rate_rps = 70
arrivals = "poisson"
duration_ms = 20000
timeout_ms = 150

[output]
window_ms = 1000
"#
        )
    };
    let (_d, warm) = run_text(&text(7000));
    let (_d0, cold) = run_text(&text(0));
    let read = |dir: &Path, t: &str| Csv::read(&dir.join(format!("{t}.csv")));
    let services = read(&warm, "services");
    let work = read(&warm, "server_work");
    let run = read(&warm, "run");
    let ts = read(&warm, "timeseries_services");
    let end = num(&run.rows[0], "sim_time_ms");
    // the time series of one row from 7 s on: sums, and length-weighted means
    let after = |service: &str| -> Vec<_> {
        ts.select(&[("service", service)])
            .into_iter()
            .filter(|r| num(r, "window_start_ms") >= 7000.0)
            .cloned()
            .collect()
    };
    let sum = |rows: &[std::collections::HashMap<String, String>], col: &str| -> f64 {
        rows.iter().map(|r| num(r, col)).sum()
    };
    let mean = |rows: &[std::collections::HashMap<String, String>], col: &str| -> f64 {
        let len = |r: &std::collections::HashMap<String, String>| {
            let start = num(r, "window_start_ms");
            (end - start).min(1000.0)
        };
        rows.iter().map(|r| num(r, col) * len(r)).sum::<f64>() / (end - 7000.0)
    };
    let close = |a: f64, b: f64, what: &str| {
        assert!(
            (a - b).abs() <= 1e-4 * b.abs().max(1.0),
            "{what}: {a} vs {b}"
        );
    };
    let api = after("api");
    let s = &services.rows[0];
    assert_eq!(num(s, "arrived"), sum(&api, "arrivals"));
    assert_eq!(num(s, "processed"), sum(&api, "processed"));
    close(num(s, "mean_busy_slots"), mean(&api, "mean_busy"), "busy");
    close(num(s, "mean_queue"), mean(&api, "mean_queue"), "queue");
    close(
        num(&work.rows[0], "late_work_ms"),
        sum(&api, "wasted_ms"),
        "late work",
    );
    close(
        num(&run.rows[0], "mean_dependency_work"),
        mean(&after("store"), "mean_busy"),
        "dependency work",
    );
    // and the cut is real: the whole run's books hold more
    let all = &read(&cold, "services").rows[0];
    assert!(num(all, "arrived") > num(s, "arrived") + 300.0);
    assert_eq!(
        num(all, "arrived"),
        sum(
            &ts.select(&[("service", "api")])
                .into_iter()
                .cloned()
                .collect::<Vec<_>>(),
            "arrivals"
        )
    );
}

/// The warm-up removes the empty start's bias from the server table: M/M/1 at
/// load 0.9 (steady-state mean queue rho^2 / (1 - rho) = 8.1, mean wait
/// rho / (mu - lambda) = 90 ms) over 400 runs of 6 s. Without a warm-up the
/// whole-run mean queue's interval lies below 8.1; after a 3 s warm-up it holds
/// 8.1, and the paired difference is clearly positive.
#[test]
fn warmup_removes_the_empty_start_bias_from_the_server_table() {
    let (dir, file) = crate::common::file_with(
        r#"
[scenario]
name = "M/M/1 warm-up"
seed = 1

[services.api]
routes = ["/api"]

[services.api.handler]
type = "server"
slots = 1
queue = 100000
service = { exponential = { mean_ms = 10 } }

[workload]
type = "open"
rate_rps = 90
arrivals = "poisson"
duration_ms = 6000

[compare]
"scenario.warmup_ms" = [0, 3000]
"#,
    );
    let out = dir.path().join("out");
    resim()
        .args([
            "sweep",
            "-n",
            "400",
            "--quiet",
            "--no-report",
            "--set",
            "montecarlo.windows=true",
            "--out",
        ])
        .arg(&out)
        .arg(&file)
        .assert()
        .success();
    let summary = Csv::read(&out.join("summary.csv"));
    let paired = Csv::read(&out.join("paired.csv"));
    for (metric, steady) in [
        ("services.mean_queue", 8.1),
        ("services.mean_wait_ms", 90.0),
    ] {
        let cold = summary.row(&[("warmup_ms", "0"), ("metric", metric)]);
        let warm = summary.row(&[("warmup_ms", "3000"), ("metric", metric)]);
        assert!(num(cold, "ci_high") < steady, "{metric} without: {cold:?}");
        assert!(
            num(warm, "ci_low") <= steady && steady <= num(warm, "ci_high"),
            "{metric} with: {warm:?}"
        );
        let d = paired.row(&[("warmup_ms", "3000"), ("metric", metric)]);
        assert!(num(d, "ci_low") > 0.05 * steady, "{metric} paired: {d:?}");
    }
}

/// retry-storm.toml's boundary, drawn by a sweep over the fault's duration
/// (`--set` on the compare axis) and magnitude (`--vary faults.0.value`): short,
/// shallow slowdowns recover in every replication, long ones stay stuck in every
/// replication (docs/scenarios.md has the whole grid: from about 4 s of extra
/// work, duration x (factor - 1), every replication of 10 stays stuck).
#[test]
fn a_sweep_over_the_fault_draws_the_retry_storm_boundary() {
    let dir = tempfile::tempdir().expect("tempdir");
    resim()
        .args([
            "sweep",
            "-n",
            "3",
            "--quiet",
            "--no-report",
            "--set",
            "montecarlo.windows=true",
        ])
        .args(["--set", r#"compare.variant=["baseline"]"#])
        .args(["--set", r#"compare."faults.0.for_ms"=[250, 8000]"#])
        .args(["--vary", "faults.0.value=[1.5, 3]"])
        .args(["--set", "workload.duration_ms=40000"])
        .arg(scenario("scenarios/retry-storm.toml"))
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    let summary = Csv::read(&dir.path().join("summary.csv"));
    let stuck = |for_ms: &str, value: &str| {
        let r = summary.row(&[
            ("for_ms", for_ms),
            ("value", value),
            ("metric", "recovery.stuck"),
        ]);
        assert_eq!(num(r, "n"), 3.0);
        num(r, "mean")
    };
    for value in ["1.50", "3"] {
        assert_eq!(stuck("250", value), 0.0, "250 ms at x{value} recovers");
        assert_eq!(stuck("8000", value), 1.0, "8 s at x{value} stays stuck");
    }
}
