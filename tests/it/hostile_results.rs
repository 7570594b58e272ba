//! Hostile input that gave wrong or lost results, crashed or hung: each test
//! builds its input (big ones generated here, small), runs the real binary or
//! the library, and checks the honest answer or a clean, quick refusal. The
//! refusals that need no generated input are in `tests/bad/` (names, warm-up,
//! huge populations, an arrival_factor past max_events, a zero-time loop).

use crate::common::{Csv, file_with, resim, root};
use std::time::{Duration, Instant};

/// Well above a debug build's run of these inputs, far below a runaway's.
const QUICK: Duration = Duration::from_secs(5);

/// `resim ARGS FILE [--out TMP]`: the exit code, stderr, and the time it took.
fn resim_on(
    command: &str,
    file: &std::path::Path,
    extra: &[&str],
) -> (Option<i32>, String, Duration) {
    let tmp = tempfile::tempdir().expect("temp");
    let started = Instant::now();
    let mut cmd = resim();
    cmd.current_dir(root()).arg(command).arg(file).args(extra);
    if command == "run" {
        cmd.arg("--out").arg(tmp.path()).arg("--quiet");
    }
    let out = cmd
        .timeout(Duration::from_secs(60))
        .output()
        .expect("resim runs");
    let took = started.elapsed();
    if out.status.code() != Some(0) {
        let left = std::fs::read_dir(tmp.path()).map_or(0, |d| d.count());
        assert_eq!(left, 0, "a failed run left files in its --out folder");
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code(), stderr, took)
}

/// Runs `text` into a folder and reads `table`.csv.
fn table_of(text: &str, table: &str) -> Csv {
    let (_keep, path) = file_with(text);
    let dir = crate::common::run_into(&path, &["--quiet"]);
    Csv::read(&dir.path().join(format!("{table}.csv")))
}

#[test]
fn a_fault_that_never_acted_has_no_recovery_verdict() {
    // faults.1 starts at 60 s, long after the last request left (about 5 s)
    let text = r#"
[scenario]
name = "late-fault"
seed = 1

[services.api]
routes = ["/x"]
handler = { type = "plan", budget = 1000, branches = [{ name = "main", calls = ["store"] }] }

[dependencies.store]
latency = { constant = 5 }

[workload]
type = "open"
rate_rps = 100
duration_ms = 5000

[output]
window_ms = 100

[[faults]]
target = "store"
kind = "latency_factor"
at_ms = 1000
for_ms = 1000
value = 3

[[faults]]
target = "store"
kind = "latency_factor"
at_ms = 60000
for_ms = 1000
value = 3
"#;
    let r = table_of(text, "recovery");
    let acted = r.row(&[("fault", "0")]);
    assert_eq!(acted["stuck"], "false", "{acted:?}");
    assert!(!acted["recovery_ms"].is_empty(), "{acted:?}");
    let idle = r.row(&[("fault", "1")]);
    for col in [
        "min_goodput_per_s",
        "recovered_at_ms",
        "recovery_ms",
        "stuck",
    ] {
        assert_eq!(idle[col], "", "{col} of a fault that never acted: {idle:?}");
    }
}

#[test]
fn a_warm_up_past_every_send_fails_the_run_naming_the_key() {
    // a sequence's end is not known up front: the run finds that nothing was
    // sent after the warm-up and fails, where it wrote all-zero outcomes
    let text = r#"
[scenario]
name = "late-warm-up"
seed = 1
warmup_ms = 60000

[services.api]
routes = ["/x"]
handler = { type = "plan", budget = 1000, branches = [{ name = "main", calls = ["store"] }] }

[dependencies.store]
latency = { constant = 5 }

[workload]
type = "sequence"
requests = 10
"#;
    let (_keep, path) = file_with(text);
    let (code, stderr, _) = resim_on("run", &path, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("scenario.warmup_ms = 60000 ms"), "{stderr}");
    assert!(stderr.contains("no request was sent"), "{stderr}");
}

#[test]
fn statistics_of_no_response_are_empty_not_zero() {
    // every request is given up on by its client after 10 ms: no response at all
    let text = r#"
[scenario]
name = "no-response"
seed = 1

[services.api]
routes = ["/x"]
handler = { type = "plan", budget = 1000, branches = [{ name = "main", calls = ["store"] }] }

[dependencies.store]
latency = { constant = 500 }

[workload]
type = "open"
rate_rps = 10
requests = 5
timeout_ms = 10
"#;
    let o = table_of(text, "outcomes");
    let row = o.row(&[]);
    assert_eq!(row["timed_out"], "5", "{row:?}");
    for col in ["median_ms", "worst_ms", "mean_ms", "held_slots"] {
        assert_eq!(row[col], "", "{col} with no response: {row:?}");
    }
}

#[test]
fn evenly_spaced_arrivals_send_rate_times_duration() {
    // a gap of 11.111... ms rounded to whole nanoseconds and added up sent one
    // request too many (13,501 at 90/s for 150 s)
    for (rate, clients, want) in [(90, 1, "13500"), (7, 1, "1050"), (90, 3, "13500")] {
        let text = format!(
            r#"
[scenario]
name = "uniform"
seed = 1

[services.api]
routes = ["/x"]
handler = {{ type = "respond" }}

[workload]
type = "open"
rate_rps = {rate}
clients = {clients}
arrivals = "uniform"
duration_ms = 150000
"#
        );
        let o = table_of(&text, "outcomes");
        assert_eq!(
            o.row(&[])["requests"],
            want,
            "{rate}/s from {clients} clients"
        );
    }
}

/// A chain of `n` plan services, each calling the next, the last a dependency.
fn chain(n: usize, extra: &str) -> String {
    let mut t = String::from("[scenario]\nname = \"chain\"\nseed = 1\n\n");
    for i in 0..n {
        let (route, budget) = if i == 0 {
            ("routes = [\"/x\"]\n", "budget = 1000, ")
        } else {
            ("", "")
        };
        let next = if i + 1 < n {
            format!("s{}", i + 1)
        } else {
            "store".into()
        };
        t += &format!(
            "[services.s{i}]\n{route}handler = {{ type = \"plan\", {budget}cancellation = true, branches = [{{ name = \"b\", calls = [\"{next}\"] }}] }}\n\n"
        );
    }
    t + "[dependencies.store]\nlatency = { constant = 50 }\n\n[workload]\ntype = \"open\"\nrate_rps = 100\nrequests = 20\ntimeout_ms = 2\n"
        + extra
}

#[test]
fn a_call_chain_past_the_depth_limit_is_refused_by_check_and_run() {
    // 50,000 services overflowed the stack of `check` (a recursive walk); the
    // walk is iterative now, and a chain deeper than 1000 is refused
    let (_keep, path) = file_with(&chain(2000, ""));
    for command in ["check", "run"] {
        let (code, stderr, took) = resim_on(command, &path, &[]);
        assert_eq!(code, Some(2), "{command}: {stderr}");
        assert!(
            stderr.contains("calls nest 1001 services deep")
                && stderr.contains("more than the limit of 1000"),
            "{command}: {stderr}"
        );
        assert!(took < QUICK, "{command} took {took:?}");
    }
    // a chain at the limit runs, its timeouts cancelling all the way down, in
    // compare rows on worker threads (smaller stacks) too
    let (_keep, path) = file_with(&chain(
        1000,
        "\n[compare]\n\"workload.rate_rps\" = [100, 200]\n",
    ));
    let (code, stderr, _) = resim_on("run", &path, &[]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// The number after `what` in `text` (up to the next non-digit).
fn number_after(text: &str, what: &str) -> u64 {
    let at = text
        .find(what)
        .unwrap_or_else(|| panic!("`{what}` in {text}"))
        + what.len();
    text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("a number after `{what}` in {text}"))
}

#[test]
fn a_wide_plan_stops_near_max_in_flight_and_says_the_calls_are_awaited() {
    // one event starts a call per branch: checked every 1024 events, 2,000
    // branches held about 2 million calls against a limit of 20,000, and the
    // message said callers gave up when none did
    let branches: Vec<String> = (0..2000)
        .map(|i| format!("{{ name = \"b{i}\", calls = [\"store\"] }}"))
        .collect();
    let text = format!(
        r#"
[scenario]
name = "wide"
seed = 1
max_in_flight = 20000

[services.api]
routes = ["/x"]
handler = {{ type = "plan", budget = 100000, branches = [{}] }}

[dependencies.store]
latency = {{ constant = 1000 }}

[workload]
type = "open"
rate_rps = 1000
duration_ms = 10000
"#,
        branches.join(", ")
    );
    let (_keep, path) = file_with(&text);
    let (code, stderr, took) = resim_on("run", &path, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    let held = number_after(&stderr, "calls open at once (");
    assert!(
        (20_000..=20_000 + 2 * 2000).contains(&held),
        "held {held}: {stderr}"
    );
    assert!(
        stderr.contains(&format!("{held} awaited by their callers, 0 given up on")),
        "{stderr}"
    );
    assert!(took < QUICK, "took {took:?}");
}

#[test]
fn compare_rows_share_the_time_series_row_limit() {
    // each row alone stays under 10^7 rows; four rows together ran out of memory
    let base = |workload: &str| {
        format!(
            r#"
[scenario]
name = "windows"
seed = 1

[services.api]
routes = ["/x"]
handler = {{ type = "plan", budget = 1000, branches = [{{ name = "main", calls = ["store"] }}] }}

[dependencies.store]
latency = {{ constant = 5 }}

[workload]
{workload}

[output]
window_ms = 0.0005

[compare]
"dependencies.store.latency.constant" = [1, 2, 3, 4]
"#
        )
    };
    // known up front: refused before any run
    let (_keep, path) = file_with(&base("type = \"open\"\nrate_rps = 10\nduration_ms = 1000"));
    let (code, stderr, _) = resim_on("check", &path, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("output.window_ms: the 4 compare rows' time series make about"),
        "{stderr}"
    );
    // known only by running: each row stops at its share
    let (_keep, path) = file_with(&base("type = \"sequence\"\nrequests = 1000"));
    let (code, stderr, took) = resim_on("run", &path, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "would write more than 2500000 rows (its share of the 10000000 the compare rows may write together)"
        ),
        "{stderr}"
    );
    assert!(took < QUICK, "took {took:?}");
}

#[test]
fn a_trace_stops_taking_requests_at_its_span_budget() {
    // 200 calls a request: 1000 traced requests make about 200,000 spans
    let branches: Vec<String> = (0..200)
        .map(|i| format!("{{ name = \"b{i}\", calls = [\"store\"] }}"))
        .collect();
    let text = format!(
        r#"
[scenario]
name = "wide-trace"
seed = 1

[services.api]
routes = ["/x"]
handler = {{ type = "plan", budget = 1000, branches = [{}] }}

[dependencies.store]
latency = {{ constant = 5 }}

[workload]
type = "open"
rate_rps = 100
requests = 1000
"#,
        branches.join(", ")
    );
    let s = resim::scenario::load_str(
        &text,
        std::path::Path::new("t.toml"),
        &resim::scenario::LoadOptions::default(),
    )
    .expect("loads");
    let model = &s.rows[0].model;
    let (run, trace) = resim::sim::run_traced(model, 0, 1000, 5000, false).expect("runs");
    assert_eq!(run.outcomes.requests, 1000);
    assert!(trace.stopped, "the trace says it stopped");
    let traced = trace.tracks.len();
    assert!((10..1000).contains(&traced), "{traced} requests traced");
    // the requests it took run to their end: at most one request's spans over
    let events = (trace.spans.len() + trace.instants.len()) as u64;
    assert!(events <= 5000 + 2 * 202, "{events} spans and instants");
    // within the budget, nothing is cut
    let (_, trace) = resim::sim::run_traced(model, 0, 10, 5000, false).expect("runs");
    assert!(!trace.stopped);
    assert_eq!(trace.tracks.len(), 10);
}

#[test]
fn huge_populations_are_refused_by_check_as_by_run() {
    // check accepted 10^8 users, clients or replicas; the run aborted on one
    // huge allocation
    for (case, limit) in [
        ("huge-users", "more than scenario.max_in_flight = 1000000"),
        ("huge-clients", "more than the limit of 1000000"),
        ("huge-replicas", "more than the limit of 1000000"),
    ] {
        let path = root().join(format!("tests/bad/{case}.toml"));
        for command in ["check", "run"] {
            let (code, stderr, took) = resim_on(command, &path, &[]);
            assert_eq!(code, Some(2), "{case} {command}: {stderr}");
            assert!(stderr.contains(limit), "{case} {command}: {stderr}");
            assert!(took < QUICK, "{case} {command} took {took:?}");
        }
    }
}

#[test]
fn running_out_of_memory_is_a_clean_error() {
    // max_in_flight raised far beyond the memory given (ulimit -v): the run
    // aborted when an allocation failed; now it names the limit to lower
    if !std::path::Path::new("/bin/sh").exists() {
        return;
    }
    let branches: Vec<String> = (0..10000)
        .map(|i| format!("{{ name = \"b{i}\", calls = [\"store\"] }}"))
        .collect();
    let text = format!(
        r#"
[scenario]
name = "oom"
seed = 1
max_in_flight = 100000000

[services.api]
routes = ["/x"]
handler = {{ type = "plan", budget = 100000, branches = [{}] }}

[dependencies.store]
latency = {{ constant = 1000 }}

[workload]
type = "open"
rate_rps = 1000
duration_ms = 10000
"#,
        branches.join(", ")
    );
    let (_keep, path) = file_with(&text);
    let out_dir = tempfile::tempdir().expect("temp");
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg("ulimit -v 400000 && exec \"$0\" run \"$1\" --quiet --out \"$2\"")
        .arg(env!("CARGO_BIN_EXE_resim"))
        .arg(&path)
        .arg(out_dir.path())
        .output()
        .expect("sh runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("out of memory") && stderr.contains("scenario.max_in_flight"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(out_dir.path()).unwrap().count(), 0);
}

#[test]
fn retries_at_one_instant_stop_on_max_events_per_instant() {
    // every attempt is rejected at once and retried at once, 10^9 times: the
    // clock never moved and the run went on for 100 s
    let text = r#"
[scenario]
name = "retry-loop"
seed = 1
max_events_per_instant = 100000

[policies.hammer]
retry = { max_attempts = 1000000000, on = ["rejected"] }

[services.api]
routes = ["/x"]
middleware = ["tight"]
handler = { type = "respond" }

[limiters.tight]
limit = 1
window_ms = 1000

[workload]
type = "open"
rate_rps = 10
requests = 5
call_policy = "hammer"
"#;
    let (_keep, path) = file_with(text);
    let (code, stderr, took) = resim_on("run", &path, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("passed scenario.max_events_per_instant = 100000")
            && stderr.contains("policy `hammer` retries at once"),
        "{stderr}"
    );
    assert!(took < QUICK, "took {took:?}");
}

#[test]
fn a_closed_zero_time_loop_is_refused_by_check() {
    // one user thinking 0 ms against a 0 ms service ran 38 s to max_events
    let path = root().join("tests/bad/closed-zero-time-loop.toml");
    let (code, stderr, took) = resim_on("check", &path, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("workload.think_ms"), "{stderr}");
    assert!(took < QUICK, "took {took:?}");
}

#[test]
fn an_arrival_factor_past_max_events_is_refused_by_check() {
    let path = root().join("tests/bad/fault-arrival-factor-events.toml");
    let (code, stderr, took) = resim_on("check", &path, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("faults.0.value") && stderr.contains("scenario.max_events"),
        "{stderr}"
    );
    assert!(took < QUICK, "took {took:?}");
}

#[test]
fn many_plan_services_run_in_linear_time() {
    // analyses searched every row's services and dependencies by name, per
    // column: 4,000 plan services took 35 s (release), 2,000 took 8 s
    let n = 2000;
    let mut fan = String::from("[scenario]\nname = \"fan\"\nseed = 1\n\n");
    let branches: Vec<String> = (0..n)
        .map(|i| format!("{{ name = \"b{i}\", calls = [\"s{i}\"] }}"))
        .collect();
    fan += &format!(
        "[services.api]\nroutes = [\"/x\"]\nhandler = {{ type = \"plan\", budget = 1000, branches = [{}] }}\n\n",
        branches.join(", ")
    );
    let mut apart = String::from("[scenario]\nname = \"apart\"\nseed = 1\n\n");
    for i in 0..n {
        fan += &format!(
            "[services.s{i}]\nhandler = {{ type = \"plan\", branches = [{{ name = \"b\", calls = [\"store\"] }}] }}\n\n"
        );
        apart += &format!(
            "[services.s{i}]\nroutes = [\"/r{i}\"]\nhandler = {{ type = \"plan\", budget = 1000, branches = [{{ name = \"b\", calls = [\"d{i}\"] }}] }}\n\n[dependencies.d{i}]\nlatency = {{ constant = 5 }}\n\n"
        );
    }
    fan += "[dependencies.store]\nlatency = { constant = 5 }\n\n[workload]\ntype = \"open\"\nrate_rps = 10\nrequests = 10\n";
    apart += "[workload]\ntype = \"open\"\nrate_rps = 10\nrequests = 10\nroute = \"/r0\"\n";
    for text in [fan, apart] {
        let (_keep, path) = file_with(&text);
        let (code, stderr, took) = resim_on("run", &path, &[]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(took < QUICK, "{n} plan services took {took:?}");
    }
}
