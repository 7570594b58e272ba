//! Metric names that cannot collide: a name holding the separator `.` is quoted,
//! so two call-table rows never share a metric, and a client policy varied by a
//! compare axis keys its metrics by the call site, the same in every row.

use crate::common::{Csv, file_with, resim};

/// Runs `resim sweep FILE -n 2` and reads its summary.
fn sweep_summary(text: &str) -> Csv {
    let (_d, file) = file_with(text);
    let out = tempfile::tempdir().unwrap();
    resim()
        .arg("sweep")
        .arg(&file)
        .args(["-n", "2", "--quiet", "--no-report"])
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    Csv::read(&out.path().join("summary.csv"))
}

fn mean_of(csv: &Csv, filter: &[(&str, &str)]) -> f64 {
    crate::common::num(csv.row(filter), "mean")
}

/// `x.y` calling `z` and `x` calling `y.z`: joined by dots both read
/// `calls.x.y.z`. Each keeps its own metric, with its own value, and a
/// threshold on one sees that one.
#[test]
fn names_with_the_separator_are_quoted_and_never_shared() {
    let text = r#"
[scenario]
name = "dotted names"
seed = 1

[policies.p]
retry = { max_attempts = 3, on = ["error"] }

[services.front]
routes = ["/f"]
handler = { type = "plan", budget = 1000, branches = [{ name = "a", calls = [{ to = "x.y", call_policy = "p" }] }, { name = "b", calls = [{ to = "x", call_policy = "p" }] }] }

[services."x.y"]
routes = ["/xy"]
handler = { type = "plan", budget = 500, branches = [{ name = "c", calls = [{ to = "z", call_policy = "p" }] }] }

[services.x]
routes = ["/x"]
handler = { type = "plan", budget = 500, branches = [{ name = "d", calls = [{ to = "y.z", call_policy = "p" }] }] }

[dependencies.z]
latency = { constant = 5 }

[dependencies."y.z"]
latency = { constant = 5 }
error_rate = 1.0

[workload]
type = "sequence"
requests = 10
route = "/f"
"#;
    let summary = sweep_summary(text);
    // x.y -> z answers every first try; x -> y.z fails every attempt of three
    assert_eq!(
        mean_of(&summary, &[("metric", r#"calls."x.y".z.attempts"#)]),
        10.0
    );
    assert_eq!(
        mean_of(&summary, &[("metric", r#"calls.x."y.z".attempts"#)]),
        90.0
    );
    // a run's threshold names the same metric as the sweep
    let gated = format!("{text}\n[thresholds]\n'calls.x.\"y.z\".attempts' = \"< 50\"\n");
    let (_d, file) = file_with(&gated);
    let out = tempfile::tempdir().unwrap();
    let o = resim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "90 attempts fail `< 50`");
    let thresholds = Csv::read(&out.path().join("thresholds.csv"));
    assert_eq!(thresholds.rows[0]["value"], "90");
}

/// The workload's policy is a compare axis: the call sites are the same in both
/// rows, and so are their metric names, so the summary has both rows of each
/// and the paired differences exist.
#[test]
fn a_policy_axis_keeps_the_call_metrics_of_every_row_under_one_name() {
    let text = r#"
[scenario]
name = "policy axis"
seed = 1

[policies.two]
retry = { max_attempts = 2, on = ["error"] }
[policies.four]
retry = { max_attempts = 4, on = ["error"] }

[services.api]
routes = ["/x"]
handler = { type = "plan", budget = 500, branches = [{ name = "b", calls = [{ to = "store", call_policy = "two" }] }] }

[dependencies.store]
latency = { constant = 5 }
error_rate = 0.5

[workload]
type = "open"
rate_rps = 50
requests = 200
call_policy = "two"

[compare]
"workload.call_policy" = ["two", "four"]
"#;
    let summary = sweep_summary(text);
    let axis = summary.headers[0].clone();
    let two = mean_of(
        &summary,
        &[
            (axis.as_str(), "two"),
            ("metric", "calls.main.api.attempts"),
        ],
    );
    let four = mean_of(
        &summary,
        &[
            (axis.as_str(), "four"),
            ("metric", "calls.main.api.attempts"),
        ],
    );
    assert!(
        four > two,
        "four attempts send more than two: {four} vs {two}"
    );
    assert!(
        !summary
            .rows
            .iter()
            .any(|r| r["metric"].contains(".two.") || r["metric"].contains(".four.")),
        "no metric renamed per policy"
    );
}
