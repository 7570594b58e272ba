//! `resim tune`: the search finds the optimum worked out by hand for the
//! deadline-retries example, gives the same bytes with any `--jobs`, says when
//! nothing is feasible, and refuses bad input before it runs.

use crate::common::*;
use std::path::Path;

const EXAMPLE: &str = "scenarios/examples/tune-deadline-retries.toml";

fn tune(out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    resim()
        .arg("tune")
        .arg(scenario(EXAMPLE))
        .args(["--vary", "policies.retry.timeout_ms=10..500"])
        .args(["--vary", "policies.retry.retry.max_attempts=1..10"])
        .args(["--maximize", "outcomes.answered_pct"])
        .args(extra)
        .arg("--out")
        .arg(out)
        .assert()
}

/// The derivation (in the example's comments): with a per-try timeout T >= 20
/// ms and at most K attempts, S = min(K, ceil(500 / T)) attempts can be sent
/// and A = min(K, floor(480 / T) + 1) can succeed; 1 - 0.2^A of the requests
/// are answered for 1 + 0.2 + ... + 0.2^(S - 1) attempts each. At most 1.22
/// attempts allow S = 2, so the best is A = S = 2: 96 % answered, 1.2
/// attempts.
#[test]
fn tune_finds_the_derived_optimum_of_the_deadline_retries_example() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = tune(
        dir.path(),
        &["--constraint", "calls.amplification <= 1.22", "--json"],
    )
    .success();
    let json: serde_json::Value =
        serde_json::from_slice(&out.get_output().stdout).expect("--json is JSON");
    assert_eq!(json["feasible"], true, "{json:#}");
    assert_eq!(
        json["edges"],
        serde_json::json!([]),
        "mid-range values: no note"
    );
    let pick = &json["recommendation"];
    let t = pick["policies.retry.timeout_ms"].as_f64().expect("T");
    let k = pick["policies.retry.retry.max_attempts"]
        .as_i64()
        .expect("a whole K");
    let sent = k.min((500.0 / t).ceil() as i64);
    let can_succeed = k.min((480.0 / t).floor() as i64 + 1);
    assert!(t >= 20.0, "T = {t}: every attempt would time out");
    assert_eq!((sent, can_succeed), (2, 2), "T = {t}, K = {k}");
    // the recommendation on fresh replications: 96 % and 1.2 in its intervals
    let row = &json["fresh"]["rows"][0];
    let answered = &row["objective"];
    let (lo, hi) = (
        answered["low"].as_f64().unwrap(),
        answered["high"].as_f64().unwrap(),
    );
    assert!(lo <= 96.0 && 96.0 <= hi, "answered {answered}");
    let amp = &row["constraints"][0]["estimate"];
    let (lo, hi) = (amp["low"].as_f64().unwrap(), amp["high"].as_f64().unwrap());
    assert!(lo <= 1.2 && 1.2 <= hi, "attempts {amp}");
    assert_eq!(row["constraints"][0]["met"], "yes");
    // the files: every candidate, the recommendation as --set lines and a tuned copy
    let cands = Csv::read(&dir.path().join("tune.csv"));
    assert!(cands.rows.len() >= 12, "{} candidates", cands.rows.len());
    let recommended = cands.select(&[("status", "recommended")]);
    assert_eq!(recommended.len(), 1);
    // the settings with S = 3 are infeasible: 1.24 attempts
    for c in cands.select(&[("status", "infeasible")]) {
        assert!(num(c, "calls.amplification") > 1.22, "{c:?}");
    }
    let lines = std::fs::read_to_string(dir.path().join("recommendation.txt")).unwrap();
    assert!(
        lines.contains("policies.retry.retry.max_attempts="),
        "{lines}"
    );
    let copy = std::fs::read_to_string(dir.path().join("tuned.toml")).unwrap();
    assert!(copy.contains(&format!("max_attempts = {k},")), "{copy}");
    assert!(
        copy.starts_with("# Per-try timeout and attempts"),
        "comments kept"
    );
    let pareto = Csv::read(&dir.path().join("pareto.csv"));
    assert!(!pareto.select(&[("front", "true")]).is_empty());
}

#[test]
fn a_tuning_gives_the_same_bytes_with_any_number_of_threads() {
    let one = tempfile::tempdir().expect("tempdir");
    let two = tempfile::tempdir().expect("tempdir");
    let args = [
        "--constraint",
        "calls.amplification <= 1.22",
        "--budget",
        "400",
        "-q",
    ];
    tune(one.path(), &[&args[..], &["-j", "1"]].concat()).success();
    tune(two.path(), &[&args[..], &["-j", "2"]].concat()).success();
    assert_eq!(folder_bytes(one.path()), folder_bytes(two.path()));
}

#[test]
fn constraints_no_candidate_meets_are_said_with_the_closest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = tune(
        dir.path(),
        &[
            "--constraint",
            "calls.amplification <= 0.5",
            "--budget",
            "300",
        ],
    )
    .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("No feasible setting"), "{text}");
    assert!(text.contains("The closest was candidate"), "{text}");
    assert!(!dir.path().join("recommendation.txt").exists());
}

#[test]
fn bad_tunings_are_refused_before_anything_runs() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--vary", "workload.type=1..2"],
            "not a numeric key: its value is the text \"open\"",
        ),
        (
            &["--vary", "policies.retry.jitter=1..2"],
            "the scenario does not set this key",
        ),
        (
            &["--vary", "policies.retry.timeout_ms=-5..100"],
            "is not a valid value of `policies.retry.timeout_ms`",
        ),
        (&["--vary", "workload.rate_rps=9..3"], "LO must be below HI"),
        (
            &[
                "--vary",
                "workload.rate_rps=1..3",
                "--constraint",
                "calls.amplification = 1",
            ],
            "expected METRIC OP LIMIT",
        ),
        (
            &[
                "--vary",
                "workload.rate_rps=1..3",
                "--constraint",
                "summary.x <= 1",
            ],
            "not a per-replication metric",
        ),
        (
            &[
                "--vary",
                "workload.rate_rps=1..3",
                "--constraint",
                "outcomes.answred_pct <= 1",
            ],
            "did you mean",
        ),
        (
            &["--vary", "workload.rate_rps=1..3", "--replications", "1"],
            "--replications must be >= 2",
        ),
    ];
    for (args, message) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = resim()
            .arg("tune")
            .arg(scenario(EXAMPLE))
            .args(*args)
            .args(["--maximize", "outcomes.answered_pct"])
            .arg("--out")
            .arg(dir.path().join("t"))
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!dir.path().join("t").exists(), "{args:?} wrote its folder");
    }
}

/// The figures README.md and docs/scenarios.md quote for the example: the
/// search as printed, and the file as set over 20 seeds.
#[test]
fn the_tuning_figures_the_docs_quote_hold() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = tune(dir.path(), &["--constraint", "calls.amplification <= 1.22"]).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for quoted in [
        "Searched: 30 candidates (10 infeasible, 11 beaten, 0 without a value, 9 kept), 770 runs of a budget of 3000; 42 more",
        "--set policies.retry.timeout_ms=300.9 --set policies.retry.retry.max_attempts=4",
        "outcomes.answered_pct 95.998071 [95.880371, 96.115771]",
        "calls.amplification 1.199524 [1.196522, 1.202526]",
    ] {
        assert!(text.contains(quoted), "{quoted} not in:\n{text}");
    }
    // at the limit the attempts tend to, the fresh run cannot show it met
    let at = tempfile::tempdir().expect("tempdir");
    let out = tune(at.path(), &["--constraint", "calls.amplification <= 1.25"]).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for quoted in [
        "--set policies.retry.timeout_ms=155.5 --set policies.retry.retry.max_attempts=8",
        "outcomes.answered_pct 99.8263 [",
        "calls.amplification 1.247138 [1.243777, 1.250499], margin",
        "(unsure)",
    ] {
        assert!(text.contains(quoted), "{quoted} not in:\n{text}");
    }
    let sweep = tempfile::tempdir().expect("tempdir");
    resim()
        .arg("sweep")
        .arg(scenario(EXAMPLE))
        .args(["-n", "20", "-q", "--out"])
        .arg(sweep.path())
        .assert()
        .success();
    let summary = Csv::read(&sweep.path().join("summary.csv"));
    let answered = summary.row(&[("metric", "outcomes.answered_pct")]);
    assert_rounded(answered, "mean", 99.15, 2);
    assert_rounded(answered, "ci_low", 99.04, 2);
    assert_rounded(answered, "ci_high", 99.27, 2);
    let attempts = summary.row(&[("metric", "calls.amplification")]);
    assert_rounded(attempts, "mean", 1.240, 3);
    assert_rounded(attempts, "ci_low", 1.236, 3);
    assert_rounded(attempts, "ci_high", 1.245, 3);
}

#[test]
fn the_files_tune_table_stands_for_the_flags_it_holds() {
    let flags = tempfile::tempdir().expect("tempdir");
    let table = tempfile::tempdir().expect("tempdir");
    tune(
        flags.path(),
        &[
            "--constraint",
            "calls.amplification <= 1.22",
            "--budget",
            "300",
            "-q",
        ],
    )
    .success();
    resim()
        .arg("tune")
        .arg(scenario(EXAMPLE))
        .args(["--budget", "300", "-q", "--out"])
        .arg(table.path())
        .assert()
        .success();
    assert_eq!(folder_bytes(flags.path()), folder_bytes(table.path()));
}

#[test]
fn a_wrong_tune_table_is_refused_naming_its_key_and_line() {
    let text = std::fs::read_to_string(scenario(EXAMPLE)).unwrap();
    let bad = text.replace(
        "constraints = [\"calls.amplification <= 1.22\"]",
        "constraints = [\"calls.amplification <= 1.22\"]\nover = \"median\"",
    );
    let (_dir, file) = file_with(&bad);
    let line = bad.lines().position(|l| l.starts_with("over = ")).unwrap() + 1;
    let out = resim().arg("tune").arg(&file).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains(&format!(":{line}:")) && err.contains("tune.over: \"median\" is not one of"),
        "{err}"
    );
    // a key [tune] does not have is refused by a run too
    let (_dir, file) = file_with(&text.replace("maximize =", "maximise ="));
    let out = resim().arg("run").arg(&file).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("maximise"), "{err}");
    let out = resim()
        .arg("tune")
        .arg(scenario(EXAMPLE))
        .args(["--vary", "nope", "--budget", "300"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("--vary nope: expected KEY=LO..HI"), "{err}");
}
