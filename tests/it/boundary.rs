//! `resim boundary`: the bisection on real scenarios (the metastable band's lower
//! edge, the drain time beside it), its determinism, its files and its answers
//! to bad input; the fan-out tail.

use crate::common::*;
use std::path::Path;

const BAND: &str = "scenarios/metastable-band.toml";

fn stuck_boundary(out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    resim()
        .arg("boundary")
        .arg(scenario(BAND))
        .args(["--axis", "workload.rate_rps=10..40"])
        .args(["--metric", "recovery.stuck", "--target", "0.5"])
        .args(extra)
        .arg("--out")
        .arg(out)
        .assert()
}

/// The model: without cancellation, a server of capacity mu whose clients try
/// R + 1 times is bistable for mu / (R + 1) < lambda < mu. Here mu = 100 req/s
/// and R = 3: the lower edge is 25 req/s. A run of finite length calls a drain
/// that outlasts it stuck, so the share of stuck runs crosses 1/2 a little
/// below the edge: by about backlog / (mu x run) (a few hundred attempts over
/// 100/s x 290 s: 1 to 2 %), with the randomness of Poisson arrivals spreading
/// the step over about 2 / sqrt(mu x run) = 1.2 %. 3 % holds both.
#[test]
fn the_boundary_finder_places_the_lower_edge_of_the_metastable_band() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = stuck_boundary(dir.path(), &["--json", "--once"]).success();
    let json: serde_json::Value =
        serde_json::from_slice(&out.get_output().stdout).expect("--json is JSON");
    let crossing = Csv::read(&dir.path().join("crossing.csv"));
    assert_eq!(crossing.rows.len(), 1);
    let row = &crossing.rows[0];
    let edge = 100.0 / (3.0 + 1.0);
    let found = num(row, "boundary");
    assert!(
        (found - edge).abs() / edge <= 0.03,
        "the boundary {found} is not within 3 % of mu / (R + 1) = {edge}"
    );
    let points = num(row, "points");
    assert!(points <= 12.0, "{points} evaluation points");
    let (lo, hi) = (num(row, "bracket_low"), num(row, "bracket_high"));
    assert!(lo <= found && found <= hi);
    // every point is in boundary.csv, in the order evaluated
    let all = Csv::read(&dir.path().join("boundary.csv"));
    assert_eq!(all.rows.len() as f64, points);
    assert_eq!(all.rows[0]["rate_rps"], "10");
    assert_eq!(all.rows[1]["rate_rps"], "40");
    assert_eq!(all.rows[0]["side"], "below");
    assert_eq!(all.rows[1]["side"], "above");
    assert!(all.rows.iter().all(|r| r["interval"] == "wilson"));
    // the JSON says the same
    assert_eq!(json["curves"][0]["boundary"].as_f64(), Some(found));
    assert_eq!(
        json["curves"][0]["points"].as_array().map(Vec::len),
        Some(points as usize)
    );
    let page = std::fs::read_to_string(dir.path().join("report.html")).expect("report.html");
    // the points, and those near the boundary
    assert_eq!(page.matches("<svg").count(), 2);
    assert!(page.contains("near the boundary"));
    assert!(page.contains("target: 0.50"));
    assert!(page.contains("\nrecovery.stuck (share of replications)\n</text>"));
}

/// Just inside the recovering side (20 req/s, 80 % of the edge) the backlog the
/// spike leaves drains at mu - lambda (R + 1) = 100 - 80 = 20 attempts per
/// second. Predicted per replication from the queue it holds 2.5 s after the
/// spike (the middle of the window starting 2 s after it: past the spike's last
/// retries), less the mu x timeout = 20 attempts a queue holds without timing
/// out: 2.5 s + (queue - 20) / 20. Recovery is read in whole 1 s windows,
/// which adds half a window (+3 %) on average; a replication's own drain varies
/// by about 25 % around its prediction (the arrivals' randomness over a drain
/// of about 15 s), the mean of 40 by about 4 %: 10 % holds the half window and
/// about two of those.
#[test]
fn the_drain_time_after_a_trigger_is_backlog_over_headroom() {
    let dir = tempfile::tempdir().expect("tempdir");
    resim()
        .args(["sweep", "-n", "40", "--quiet", "--no-report"])
        .args(["--set", "workload.duration_ms=90000"])
        .arg(scenario(BAND))
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    let reps = Csv::read(&dir.path().join("replications.csv"));
    assert_eq!(reps.rows.len(), 40);
    let (mu, lambda, attempts, timeout_s) = (100.0, 20.0, 4.0, 0.2);
    let (mut predicted, mut measured) = (0.0, 0.0);
    for r in &reps.rows {
        assert_eq!(r["recovery.stuck"], "0", "20 req/s always recovers");
        let queue = num(
            r,
            "timeseries_services.window_start_ms_13000.api.mean_queue",
        );
        predicted += 2.5 + (queue - mu * timeout_s) / (mu - lambda * attempts);
        measured += num(r, "recovery.recovery_ms") / 1000.0;
    }
    let ratio = measured / predicted;
    assert!(
        (ratio - 1.0).abs() <= 0.10,
        "mean drain {:.2} s against backlog / (mu - lambda (R + 1)) = {:.2} s",
        measured / 40.0,
        predicted / 40.0
    );
    // the spike did leave a backlog worth draining
    assert!(predicted / 40.0 > 5.0, "{}", predicted / 40.0);
}

/// The same inputs give the same points and bytes with one thread or two, and
/// `thresholds.pass` searches on whether every threshold holds.
#[test]
fn a_boundary_is_the_same_bytes_with_any_jobs() {
    let run = |jobs: &str| {
        let dir = tempfile::tempdir().expect("tempdir");
        resim()
            .arg("boundary")
            .arg(scenario(BAND))
            .args(["--axis", "workload.rate_rps=10..40"])
            .args(["--metric", "thresholds.pass", "--target", "0.5"])
            .args(["--set", "workload.duration_ms=60000"])
            .args([
                "--set",
                r#"thresholds={ "outcomes.answered_pct" = ">= 90" }"#,
            ])
            .args(["-n", "4", "--tolerance", "2", "--jobs", jobs, "--quiet"])
            .arg("--out")
            .arg(dir.path())
            .assert()
            .success();
        let read = |f: &str| std::fs::read(dir.path().join(f)).expect(f);
        (
            read("boundary.csv"),
            read("crossing.csv"),
            read("report.html"),
        )
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    let text = String::from_utf8_lossy(&one.1).to_string();
    assert!(text.starts_with("metric,target,boundary"), "{text}");
    assert!(text.contains("thresholds.pass"), "{text}");
}

/// `recovery.stuck` means not recovered while the workloads still sent: a
/// longer run gives the system longer to drain, so the share of stuck runs
/// crosses 1/2 closer to the band's edge (25 req/s). The search runs again at
/// twice the run's length, and every output says both; `--once` runs the
/// first alone, and a run bounded by requests says why there is no second.
#[test]
fn a_recovery_boundary_is_searched_again_at_twice_the_runs_length() {
    let dir = tempfile::tempdir().expect("tempdir");
    let extra = [
        "--set",
        "workload.duration_ms=60000",
        "-n",
        "4",
        "--tolerance",
        "5%",
    ];
    let out = stuck_boundary(dir.path(), &extra).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    // the lines wrap: read the words
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("while the workloads still sent"), "{text}");
    assert!(
        text.contains("At twice the run's length (workload.duration_ms = 120000): rate_rps = "),
        "{text}"
    );
    let crossing = Csv::read(&dir.path().join("crossing.csv"));
    let at = |k: &str| num(crossing.row(&[("run_length", k)]), "boundary");
    let (once, twice) = (at("1"), at("2"));
    assert!(once < twice && twice <= 25.0 * 1.05, "{once} {twice}");
    let points = Csv::read(&dir.path().join("boundary.csv"));
    let n = |k: &str| points.select(&[("run_length", k)]).len() as f64;
    assert_eq!(n("1"), num(crossing.row(&[("run_length", "1")]), "points"));
    assert_eq!(n("2"), num(crossing.row(&[("run_length", "2")]), "points"));
    let page = std::fs::read_to_string(dir.path().join("report.html")).expect("page");
    assert!(page.contains("at twice the run&apos;s length (workload.duration_ms = 120000)"));

    // --once: the first search alone, as files without the column
    let again = tempfile::tempdir().expect("tempdir");
    let mut extra = extra.to_vec();
    extra.extend(["--once", "--json"]);
    let out = stuck_boundary(again.path(), &extra).success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["twice_the_run"], serde_json::Value::Null);
    let crossing = Csv::read(&again.path().join("crossing.csv"));
    assert!(!crossing.headers.contains(&"run_length".to_string()));
    assert_eq!(num(&crossing.rows[0], "boundary"), once);

    // a run bounded by requests: why not
    let counted = tempfile::tempdir().expect("tempdir");
    let extra = [
        "--set",
        "workload.duration_ms=60000",
        "--set",
        "workload.requests=1000",
        "-n",
        "2",
        "--tolerance",
        "20%",
        "--json",
    ];
    let out = stuck_boundary(counted.path(), &extra).success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let why = json["twice_the_run"]["skipped"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("`workload` is bounded by `requests`"),
        "{json}"
    );
}

/// A second axis traces the boundary over its values: one search each, a curve
/// and a heatmap of every point on the page.
#[test]
fn a_second_axis_traces_the_boundary_as_a_curve() {
    let dir = tempfile::tempdir().expect("tempdir");
    resim()
        .arg("boundary")
        .arg(scenario(BAND))
        .args(["--axis", "workload.rate_rps=5..60"])
        .args(["--axis", "services.api.handler.slots=[1, 3]"])
        .args(["--metric", "recovery.stuck", "--target", "0.5"])
        .args(["--set", "workload.duration_ms=60000"])
        .args(["-n", "4", "--tolerance", "10%", "--quiet", "--once"])
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    let crossing = Csv::read(&dir.path().join("crossing.csv"));
    assert_eq!(crossing.headers[0], "slots");
    let at = |slots: &str| num(crossing.row(&[("slots", slots)]), "boundary");
    // capacity 50 and 150 req/s: edges at 12.5 and 37.5, found below them (60 s runs)
    let (one, three) = (at("1"), at("3"));
    assert!(one < three, "{one} {three}");
    assert!((8.0..=14.0).contains(&one), "{one}");
    assert!((28.0..=40.0).contains(&three), "{three}");
    let points = Csv::read(&dir.path().join("boundary.csv"));
    assert_eq!(points.headers[..3], ["slots", "point", "rate_rps"]);
    let page = std::fs::read_to_string(dir.path().join("report.html")).expect("page");
    // the curve, the heatmap, and the points of each search
    assert_eq!(page.matches("<svg").count(), 4);
    assert!(page.contains("rate_rps against slots"));
}

/// A target the metric never reaches in the range is said, with the values seen,
/// and is no error: the files are written, exit code 0.
#[test]
fn a_target_never_reached_is_no_crossing_with_the_values_seen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = resim()
        .arg("boundary")
        .arg(scenario(BAND))
        .args(["--axis", "workload.rate_rps=10..15"])
        .args(["--metric", "recovery.stuck", "--target", "0.5"])
        .args(["--set", "workload.duration_ms=60000", "-n", "4", "--once"])
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("no crossing in [10, 15]"), "{text}");
    assert!(text.contains("stays below 0.50 at both ends"), "{text}");
    assert!(
        text.contains("values seen: 10 (0.000 [0.000, 0.490])"),
        "{text}"
    );
    let crossing = Csv::read(&dir.path().join("crossing.csv"));
    assert_eq!(crossing.rows[0]["status"], "no_crossing");
    assert_eq!(crossing.rows[0]["boundary"], "");
}

fn refused(args: &[&str], file: &str, expected: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = resim()
        .arg("boundary")
        .arg(scenario(file))
        .args(args)
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for e in expected {
        assert!(err.contains(e), "{e} in: {err}");
    }
    assert!(!dir.path().join("out").join("crossing.csv").exists());
}

#[test]
fn bad_input_gets_one_line_and_exit_code_2() {
    let base = ["--metric", "recovery.stuck", "--target", "0.5"];
    let with = |axis: &'static str| {
        let mut v = vec!["--axis", axis];
        v.extend(base);
        v
    };
    // a range outside the key's valid values
    refused(
        &with("workload.rate_rps=-5..40"),
        BAND,
        &[
            "workload.rate_rps",
            "must be > 0",
            "--axis workload.rate_rps=-5..40: LO = -5",
        ],
    );
    // a key that is no number
    refused(
        &with("workload.arrivals=1..2"),
        BAND,
        &["workload.arrivals", "not a numeric key", "\"poisson\""],
    );
    // a second axis's invalid value is blamed on it, not on the range's ends
    let mut grid = with("workload.rate_rps=10..40");
    grid.extend(["--axis", "services.api.handler.slots=[0, 2]"]);
    refused(
        &grid,
        BAND,
        &[
            "must be >= 1",
            "(--axis services.api.handler.slots=[0, 2]: 0 is not a valid value of `services.api.handler.slots`)",
        ],
    );
    refused(
        &with("workload.rate_rps=40..10"),
        BAND,
        &["LO must be below HI"],
    );
    refused(
        &with("workload.rate_rps=ten..40"),
        BAND,
        &["`ten` is not a number"],
    );
    // a metric that is not per replication, one that does not exist, one censored
    let by = |m: &'static str| {
        vec![
            "--axis",
            "workload.rate_rps=10..40",
            "--target",
            "1",
            "--metric",
            m,
        ]
    };
    refused(
        &by("pooled.p99_ms"),
        BAND,
        &["not a per-replication metric", "outcomes.answered_pct"],
    );
    refused(
        &by("recovery.stuk"),
        BAND,
        &[
            "no metric named `recovery.stuk`",
            "did you mean `recovery.stuck`",
        ],
    );
    refused(
        &by("recovery.recovery_ms"),
        BAND,
        &["a recovery time", "search on `recovery.stuck`"],
    );
    // several compare rows: which one is not guessed
    refused(
        &with("workload.rate_rps=50..100"),
        "scenarios/retry-storm.toml",
        &["15 compare rows", "--set 'compare={}'"],
    );
}

/// The Tail at Scale: 100 leaves, each slow 1 % of the time. 20,000 requests
/// give the slow share 1 - 0.99^100 = 63.40 % with a binomial standard error
/// of 0.34 pp, so 1 pp is three of them; hedged, both copies of a leaf call are
/// slow with probability 10^-4: 1 - 0.9999^100 = 0.995 % (standard error 0.07
/// pp; 0.3 pp allowed), for 1 % more leaf calls (a copy for each call still
/// waiting at 20 ms: 2,000,000 calls, standard error 0.00007; 0.001 allowed).
#[test]
fn a_fanout_to_100_leaves_is_slow_63_percent_of_the_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    resim()
        .args(["run", "--quiet", "--no-report"])
        .arg(scenario("scenarios/fanout-tail.toml"))
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    let slow = |variant: &str| 100.0 - num(outcomes.row(&[("variant", variant)]), "answered_pct");
    let expected = 100.0 * (1.0 - 0.99f64.powi(100));
    assert!(
        (slow("baseline") - expected).abs() <= 1.0,
        "{}",
        slow("baseline")
    );
    let hedged = 100.0 * (1.0 - 0.9999f64.powi(100));
    assert!((slow("hedged") - hedged).abs() <= 0.3, "{}", slow("hedged"));
    let calls = Csv::read(&dir.path().join("calls.csv"));
    let leaf = |variant: &str| {
        calls
            .row(&[("variant", variant), ("target", "leaf")])
            .clone()
    };
    assert_eq!(num(&leaf("baseline"), "amplification"), 1.0);
    let amp = num(&leaf("hedged"), "amplification");
    assert!((amp - 1.01).abs() <= 0.001, "{amp}");
}

/// A metric that falls along the key (the answered share as the rate grows) is
/// found as well as one that rises; a number's interval is Student t, cut to
/// [0, 100] for a `_pct`; the points outside the bracket lie on the side their
/// place says.
#[test]
fn a_falling_percentage_is_bisected_with_t_intervals() {
    let dir = tempfile::tempdir().expect("tempdir");
    resim()
        .arg("boundary")
        .arg(scenario(BAND))
        .args(["--axis", "workload.rate_rps=10..40"])
        .args(["--metric", "outcomes.answered_pct", "--target", "90"])
        .args(["--set", "workload.duration_ms=60000"])
        .args(["-n", "4", "--tolerance", "2%", "--quiet"])
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    let crossing = Csv::read(&dir.path().join("crossing.csv"));
    let row = &crossing.rows[0];
    assert_ne!(row["status"], "no_crossing");
    let (lo, hi, found) = (
        num(row, "bracket_low"),
        num(row, "bracket_high"),
        num(row, "boundary"),
    );
    assert!(
        10.0 < lo && lo <= found && found <= hi && hi < 40.0,
        "{row:?}"
    );
    let points = Csv::read(&dir.path().join("boundary.csv"));
    assert_eq!(points.rows[0]["side"], "above", "answered at 10 req/s");
    assert_eq!(points.rows[1]["side"], "below", "answered at 40 req/s");
    for p in &points.rows {
        assert_eq!(p["interval"], "t-clipped");
        let (x, low, mean, high) = (
            num(p, "rate_rps"),
            num(p, "ci_low"),
            num(p, "estimate"),
            num(p, "ci_high"),
        );
        assert!(
            0.0 <= low && low <= mean && mean <= high && high <= 100.0,
            "{p:?}"
        );
        if x <= lo {
            assert_ne!(p["side"], "below", "{p:?}");
        }
        if x >= hi {
            assert_ne!(p["side"], "above", "{p:?}");
        }
    }
}
