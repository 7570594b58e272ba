//! Every request accounted for: `outcomes` counts each way a request fails, the
//! percentiles over every request see the failures, `failed_<dependency>`
//! counts calls (not attempts), a threshold on an empty percentile fails and says
//! why, the text report leaves out columns empty in every row, and the outcomes
//! chart stacks every way of ending.

use crate::common::{Csv, file_with, num, resim, root, run_into};
use std::collections::HashMap;

/// The ways of failing that, with `answered`, make up `requests`.
const KINDS: [&str; 7] = [
    "dropped",
    "timed_out",
    "shed",
    "rejected",
    "errors",
    "refused",
    "not_found",
];

/// Every `outcomes.csv` row of every bundled scenario: answered + failed =
/// requests, and failed is the sum of the ways of failing. Across the bundled
/// scenarios every way but `errors` and `not_found` happens somewhere (those
/// two have tests of their own below).
#[test]
fn every_request_of_every_bundled_scenario_is_accounted_for() {
    let out = tempfile::tempdir().unwrap();
    resim()
        .current_dir(root())
        .args([
            "run",
            "scenarios",
            "scenarios/examples",
            "--quiet",
            "--no-report",
        ])
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let mut totals: HashMap<&str, f64> = HashMap::new();
    let mut files = 0;
    for entry in std::fs::read_dir(out.path()).unwrap() {
        let folder = entry.unwrap().path();
        if !folder.is_dir() {
            // index.html, beside the scenarios' folders
            continue;
        }
        let path = folder.join("outcomes.csv");
        let csv = Csv::read(&path);
        files += 1;
        for row in &csv.rows {
            let (requests, answered, failed) = (
                num(row, "requests"),
                num(row, "answered"),
                num(row, "failed"),
            );
            assert_eq!(answered + failed, requests, "{}: {row:?}", path.display());
            let kinds: f64 = KINDS.iter().map(|k| num(row, k)).sum();
            assert_eq!(kinds, failed, "{}: {row:?}", path.display());
            for k in KINDS {
                *totals.entry(k).or_default() += num(row, k);
            }
        }
    }
    assert!(files >= 30, "every bundled scenario ran: {files}");
    for k in ["dropped", "timed_out", "shed", "rejected", "refused"] {
        assert!(
            totals[k] > 0.0,
            "no bundled scenario fails as `{k}`: {totals:?}"
        );
    }
}

/// A server too slow for its clients' 100 ms timeout: a sixth of the requests
/// time out (a few more are shed) and none is dropped in the seed's sense. The answered requests'
/// p99 looks fine; the p99 over every request does not exist, and a gate on it
/// fails (exit 3) saying why, while a gate on the answered p99 alone passes.
const CHECKOUT: &str = r#"
[scenario]
name = "checkout"
seed = 7

[services.checkout]
routes = ["/checkout"]
handler = { type = "server", slots = 2, queue = 50, service = { exponential = { mean_ms = 9 } } }

[workload]
type = "open"
rate_rps = 200
requests = 3000
arrivals = "poisson"
timeout_ms = 100
"#;

#[test]
fn a_timed_out_request_is_a_failure_and_the_percentiles_over_all_see_it() {
    let (_d, file) = file_with(CHECKOUT);
    let out = run_into(&file, &["--quiet"]);
    let csv = Csv::read(&out.path().join("outcomes.csv"));
    let row = &csv.rows[0];
    let (requests, answered, timed_out) = (
        num(row, "requests"),
        num(row, "answered"),
        num(row, "timed_out"),
    );
    assert_eq!(
        num(row, "dropped"),
        0.0,
        "nothing dropped in the seed's sense"
    );
    assert!(
        timed_out > 0.02 * requests,
        "the client gave up often: {timed_out} of {requests}"
    );
    assert_eq!(num(row, "failed"), timed_out + num(row, "shed"));
    assert_eq!(answered + num(row, "failed"), requests);
    // the answered requests' p99 is below the timeout; over every request there is
    // no time within which 99 % got an answer
    assert!(num(row, "p99_ms") < 100.0);
    assert_eq!(row["p99_all_ms"], "", "more than 1 % failed");
    assert_eq!(row["p999_all_ms"], "");
    assert!(num(row, "p50_all_ms") >= num(row, "p50_ms"));
}

#[test]
fn a_gate_on_p99_over_all_requests_fails_and_says_why() {
    let gate = |condition: &str| {
        let text = format!("{CHECKOUT}\n[thresholds]\n{condition}\n");
        let (d, file) = file_with(&text);
        let out = tempfile::tempdir().unwrap();
        let o = resim()
            .arg("run")
            .arg(&file)
            .arg("--out")
            .arg(out.path())
            .output()
            .unwrap();
        drop(d);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (code, _) = gate("\"outcomes.p99_ms\" = \"<= 250\"");
    assert_eq!(
        code,
        Some(0),
        "the answered p99 alone cannot see the timeouts"
    );
    let (code, stdout) = gate("\"outcomes.p99_all_ms\" = \"<= 250\"");
    assert_eq!(code, Some(3), "{stdout}");
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "`outcomes.p99_all_ms` is empty: fewer than 99 % of all requests were answered"
        ),
        "{stdout}"
    );
}

/// Eight of ten requests answered in 10..80 ms, two dropped at the budget:
/// the percentiles of every request are the answered times at the ranks of all
/// ten, empty past the answered share; the distribution stops there too.
#[test]
fn percentiles_over_every_request_are_nearest_ranks_of_all() {
    let text = r#"
[scenario]
name = "ranks"
seed = 1

[services.api]
routes = ["/x"]
handler = { type = "plan", budget = 200, branches = [{ name = "b", calls = ["store"] }] }

[dependencies.store]
latency = { cycle = [10, 20, 30, 40, 50, 60, 70, 80, 300, 300] }

[workload]
type = "sequence"
requests = 10
"#;
    let (_d, file) = file_with(text);
    let out = run_into(&file, &["--quiet"]);
    let csv = Csv::read(&out.path().join("outcomes.csv"));
    let row = &csv.rows[0];
    assert_eq!((num(row, "answered"), num(row, "dropped")), (8.0, 2.0));
    // of the answered: sorted[ceil(p 8) - 1]
    assert_eq!((num(row, "p50_ms"), num(row, "p90_ms")), (40.0, 80.0));
    // of all ten: sorted[ceil(p 10) - 1], the two drops last
    assert_eq!(num(row, "p50_all_ms"), 50.0);
    assert_eq!(row["p90_all_ms"], "", "the 9th of ten was dropped");
    let cdf = Csv::read(&out.path().join("latency_cdf.csv"));
    let at = |p: &str| {
        cdf.rows
            .iter()
            .find(|r| r["percentile"] == p)
            .map(|r| r["latency_ms"].clone())
            .unwrap_or_else(|| panic!("no row {p}"))
    };
    assert_eq!(at("0"), "10");
    assert_eq!(at("50"), "50");
    assert_eq!(at("80"), "80", "the curve stops at the answered share");
    assert_eq!(at("90"), "");
    assert_eq!(at("100"), "");
}

/// A store that always fails, called through three attempts: each of ten calls
/// fails once in `failed_store` (after its last attempt), while `calls.csv` has
/// its thirty attempts.
#[test]
fn failed_dependency_counts_calls_after_their_last_attempt() {
    let text = r#"
[scenario]
name = "attempts"
seed = 1

[policies.three]
retry = { max_attempts = 3, on = ["error"] }

[services.api]
routes = ["/x"]
handler = { type = "plan", budget = 200, branches = [{ name = "b", calls = [{ to = "store", call_policy = "three" }] }] }

[dependencies.store]
latency = { constant = 5 }
error_rate = 1.0

[workload]
type = "sequence"
requests = 10
"#;
    let (_d, file) = file_with(text);
    let out = run_into(&file, &["--quiet"]);
    let outcomes = Csv::read(&out.path().join("outcomes.csv"));
    assert_eq!(num(&outcomes.rows[0], "failed_store"), 10.0);
    assert_eq!(num(&outcomes.rows[0], "dropped"), 10.0);
    let calls = Csv::read(&out.path().join("calls.csv"));
    let row = calls.row(&[("target", "store")]);
    assert_eq!(num(row, "attempts"), 30.0);
}

/// A client's breaker in front of a server failing every request: the server's
/// error answers are `errors`, the calls the open breaker never sends are
/// `refused`, and nothing is `dropped` (no plan, no threshold).
#[test]
fn error_answers_and_refusals_have_columns_of_their_own() {
    let text = r#"
[scenario]
name = "errors and refusals"
seed = 1

[policies.guard]
breaker = { window = { count = 10 }, min_calls = 5, failure_rate = 0.5, open_ms = 1000, half_open_calls = 1 }

[services.api]
routes = ["/x"]
handler = { type = "server", slots = 4, queue = 10, service = { constant = 2 } }

[workload]
type = "open"
rate_rps = 100
requests = 200
arrivals = "uniform"
call_policy = "guard"

[[faults]]
target = "api"
kind = "error_rate"
value = 1.0
at_ms = 0
for_ms = 100000
"#;
    let (_d, file) = file_with(text);
    let out = run_into(&file, &["--quiet"]);
    let csv = Csv::read(&out.path().join("outcomes.csv"));
    let row = &csv.rows[0];
    let (errors, refused) = (num(row, "errors"), num(row, "refused"));
    assert!(
        errors >= 5.0,
        "the breaker needs its min_calls of failures: {row:?}"
    );
    assert!(refused > 100.0, "then it refuses most calls: {row:?}");
    assert_eq!(num(row, "dropped"), 0.0);
    assert_eq!(num(row, "answered"), 0.0);
    assert_eq!(errors + refused, 200.0);
}

/// The text report leaves out a column empty in every row and says so; the CSV
/// keeps it. The outcomes chart of `report.html` stacks every way of ending
/// that happened, and a second chart the ways of failing alone.
#[test]
fn empty_columns_stay_in_the_csv_and_the_chart_stacks_every_way() {
    let (_d, file) = file_with(CHECKOUT);
    let out = tempfile::tempdir().unwrap();
    let o = resim()
        .arg("run")
        .arg(&file)
        .arg("--tables")
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let header = stdout
        .lines()
        .find(|l| l.starts_with("requests "))
        .expect("the outcomes header");
    assert!(!header.contains("held_slots"), "{stdout}");
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("not shown, empty in every row (the CSV has them): held_slots, abandoned_slots, total_slots"),
        "{stdout}"
    );
    let csv = Csv::read(&out.path().join("outcomes.csv"));
    assert!(csv.headers.iter().any(|h| h == "held_slots"));
    let page = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    // (an SVG text is written on a line of its own; each piece of the split
    // is one chart up to the next, not the table after it)
    let chart = page
        .split("<svg")
        .find(|svg| svg.contains("Every request per row"))
        .expect("the outcomes chart");
    assert!(
        chart.contains("\ntimed_out\n"),
        "the timeouts are in the bar"
    );
    assert!(chart.contains("\nshed\n"), "so are the sheds");
    assert!(chart.contains("\nanswered\n"));
    // the failed requests again on their own scale, with their share written
    let failed = page
        .split("<svg")
        .find(|svg| svg.contains("Failed requests on their own scale"))
        .expect("the failure chart");
    assert!(failed.contains("\ntimed_out\n") && failed.contains("\nshed\n"));
    assert!(!failed.contains("\nanswered\n"), "failures only");
    let share = num(&csv.rows[0], "failed") / num(&csv.rows[0], "requests") * 100.0;
    assert!(failed.contains(&format!("{share:.2} %")), "{share}");
}
