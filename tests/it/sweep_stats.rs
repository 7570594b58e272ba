//! Sweep statistics that fit the data: Wilson intervals for 0/1 metrics, recovery
//! times censored by the run's end, percentiles of every replication's requests
//! pooled (`pooled.csv`) the same for any thread count and shards, and the
//! time-series windows of replications that ran longer than replication 0.
//!
//! Most tests sweep `retry-storm.toml` shortened to 20 s and its baseline
//! variant: a 500 ms slowdown always recovers, 750 ms and 1 s ones recover in
//! some replications only, 1.75 s ones never do, and the stuck runs last longer
//! than replication 0 of their row (more windows).

use crate::common::*;
use resim::scenario::{LoadOptions, Override, Purpose};
use std::collections::HashMap;
use std::path::Path;

const STORM: &str = "scenarios/retry-storm.toml";

/// The `--set`s of the shortened retry storm, with the fault durations `for_ms`.
fn storm_sets(for_ms: &str) -> Vec<String> {
    vec![
        r#"compare.variant=["baseline"]"#.to_string(),
        format!(r#"compare."faults.0.for_ms"={for_ms}"#),
        "workload.duration_ms=20000".to_string(),
    ]
}

/// `resim sweep` of the shortened storm into `out` with `extra` arguments; its
/// stdout and stderr.
fn sweep_storm(for_ms: &str, out: &Path, extra: &[&str]) -> (String, String) {
    let mut cmd = resim();
    cmd.arg("sweep").arg(scenario(STORM)).arg("--out").arg(out);
    cmd.arg("--no-report");
    for s in storm_sets(for_ms) {
        cmd.arg("--set").arg(s);
    }
    let done = cmd.args(extra).assert().success();
    let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
    (
        text(&done.get_output().stdout),
        text(&done.get_output().stderr),
    )
}

/// The scenario's compare rows as the sweep runs them.
fn storm_rows(for_ms: &str) -> resim::scenario::Scenario {
    let opts = LoadOptions {
        overrides: storm_sets(for_ms)
            .iter()
            .map(|s| Override::parse(s).expect("override"))
            .collect(),
        purpose: Purpose::Sweep,
        ..LoadOptions::default()
    };
    resim::scenario::load(&scenario(STORM), &opts).expect("retry-storm loads")
}

/// The Wilson score interval (95 %) of k in n, written out independently of resim's.
fn wilson95(k: f64, n: f64) -> (f64, f64) {
    let z = 1.959_963_984_540_054_f64;
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z / d * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((c - h).max(0.0), (c + h).min(1.0))
}

fn close(got: &str, want: f64, what: &str) {
    let g: f64 = got
        .parse()
        .unwrap_or_else(|_| panic!("{what}: `{got}` is no number"));
    assert!((g - want).abs() < 1e-6, "{what}: {got} vs {want}");
}

/// Per `for_ms` row of `replications.csv`: (stuck, recovery_ms) of each replication.
fn recoveries(dir: &Path) -> HashMap<String, Vec<(bool, Option<f64>)>> {
    let reps = Csv::read(&dir.join("replications.csv"));
    let mut out: HashMap<String, Vec<(bool, Option<f64>)>> = HashMap::new();
    for r in &reps.rows {
        let stuck = r["recovery.stuck"] == "1";
        let ms = r["recovery.recovery_ms"].parse().ok();
        out.entry(r["for_ms"].clone())
            .or_default()
            .push((stuck, ms));
    }
    out
}

#[test]
fn zero_one_metrics_get_wilson_intervals_inside_0_1() {
    let dir = tempfile::tempdir().unwrap();
    sweep_storm("[500, 750, 1000, 1750]", dir.path(), &["-n", "10", "-q"]);
    let summary = Csv::read(&dir.path().join("summary.csv"));
    let runs = recoveries(dir.path());
    let mut seen = Vec::new();
    for (for_ms, runs) in &runs {
        let line = summary.row(&[("for_ms", for_ms), ("metric", "recovery.stuck")]);
        let k = runs.iter().filter(|r| r.0).count() as f64;
        let n = runs.len() as f64;
        assert_eq!(line["interval"], "wilson");
        let (lo, hi) = wilson95(k, n);
        close(&line["ci_low"], lo, "ci_low");
        close(&line["ci_high"], hi, "ci_high");
        seen.push(k);
    }
    seen.sort_by(f64::total_cmp);
    // 0 of 10, some of 10, and 10 of 10, against the textbook values
    assert_eq!((seen[0], seen[3]), (0.0, 10.0), "{seen:?}");
    assert!(seen[1] > 0.0 && seen[2] < 10.0, "{seen:?}");
    let never = summary.row(&[("for_ms", "500"), ("metric", "recovery.stuck")]);
    assert_eq!(
        (&never["ci_low"][..], &never["ci_high"][..]),
        ("0", "0.277533")
    );
    let always = summary.row(&[("for_ms", "1750"), ("metric", "recovery.stuck")]);
    assert_eq!(
        (&always["ci_low"][..], &always["ci_high"][..]),
        ("0.722467", "1")
    );
    // the other metrics keep their t interval, percentages cut to [0, 100]
    let pct = summary.row(&[("for_ms", "500"), ("metric", "outcomes.answered_pct")]);
    assert_eq!(pct["interval"], "t-clipped");
    assert!(pct["ci_high"].parse::<f64>().unwrap() <= 100.0, "{pct:?}");
    let t = summary.row(&[("for_ms", "500"), ("metric", "outcomes.answered")]);
    assert_eq!(t["interval"], "t");
    let manifest = std::fs::read_to_string(dir.path().join("manifest.toml")).unwrap();
    assert!(
        manifest.contains("proportions = [\"recovery.stuck\"]"),
        "{manifest}"
    );
    // paired: Tango's interval, inside [-1, 1], not zero wide where all agree
    let paired = Csv::read(&dir.path().join("paired.csv"));
    for line in paired.select(&[("metric", "recovery.stuck")]) {
        assert_eq!(line["interval"], "tango");
        let (lo, hi) = (num(line, "ci_low"), num(line, "ci_high"));
        assert!(
            (-1.0..=1.0).contains(&lo) && (-1.0..=1.0).contains(&hi) && hi > lo,
            "{line:?}"
        );
    }
}

#[test]
fn a_threshold_on_a_0_1_metric_holds_only_when_its_wilson_interval_does() {
    let (dir, file) = file_with(&format!(
        "{}\n[thresholds]\n\"recovery.stuck\" = \"< 0.2\"\n",
        std::fs::read_to_string(scenario(STORM)).unwrap()
    ));
    let out = dir.path().join("out");
    // never stuck in 10: the mean 0 and a t interval [0, 0] would pass; Wilson's
    // [0, 0.278] does not
    let done = resim()
        .args(["sweep", "-q", "--no-report", "-n", "10", "--out"])
        .arg(&out)
        .arg(&file)
        .args(["--set", r#"compare.variant=["baseline"]"#])
        .args(["--set", r#"compare."faults.0.for_ms"=[500]"#])
        .args(["--set", "workload.duration_ms=20000"])
        .assert()
        .code(3);
    let stderr = String::from_utf8_lossy(&done.get_output().stderr);
    assert!(
        stderr.contains("1 of 1 threshold checks failed"),
        "{stderr}"
    );
    let t = Csv::read(&out.join("thresholds.csv"));
    let line = t.row(&[("metric", "recovery.stuck")]);
    assert_eq!(
        (&line["ci_high"][..], &line["result"][..]),
        ("0.277533", "fail")
    );
}

#[test]
fn recovery_times_count_stuck_runs_as_beyond_the_runs_end() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = sweep_storm("[500, 750, 1000, 1750]", dir.path(), &["-n", "10"]);
    let summary = Csv::read(&dir.path().join("summary.csv"));
    let mut defined = 0;
    let mut beyond = 0;
    for (for_ms, runs) in recoveries(dir.path()) {
        let line = summary.row(&[("for_ms", &for_ms), ("metric", "recovery.recovery_ms")]);
        let n = runs.len();
        let recovered: Vec<f64> = runs.iter().filter_map(|r| r.1).collect();
        assert_eq!(recovered.len(), runs.iter().filter(|r| !r.0).count());
        let mut sorted: Vec<f64> = runs.iter().map(|r| r.1.unwrap_or(f64::INFINITY)).collect();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[n / 2];
        assert_eq!(line["n"], n.to_string(), "{line:?}");
        assert_eq!(line["recovered"], recovered.len().to_string(), "{line:?}");
        let shown = if median.is_finite() {
            defined += 1;
            close(&line["p50"], median, "p50");
            format!("median {median:.2}, {}/{n} recovered", recovered.len())
        } else {
            beyond += 1;
            assert_eq!(line["p50"], "", "{line:?}");
            format!(
                "median beyond the run's end, {}/{n} recovered",
                recovered.len()
            )
        };
        assert!(stdout.contains(&shown), "`{shown}` not in\n{stdout}");
        if recovered.len() < n {
            // no mean of the recovered ones passed off as the recovery time
            assert_eq!(
                [
                    &line["mean"],
                    &line["ci_low"],
                    &line["max"],
                    &line["interval"]
                ],
                ["", "", "", "censored"],
                "{line:?}"
            );
        } else {
            let mean = recovered.iter().sum::<f64>() / n as f64;
            close(&line["mean"], mean, "mean");
            assert_eq!(line["interval"], "t");
        }
    }
    // a median among the recovered with some stuck, and one beyond the end
    assert!(defined >= 2 && beyond >= 2, "{defined} {beyond}");
    let wide = Csv::read(&dir.path().join("summary_wide.csv"));
    assert_eq!(wide.row(&[("for_ms", "1750")])["recovery.recovery_ms"], "");
}

/// Every file of a sweep folder that a thread count or a merge must not change.
const SAME: [&str; 6] = [
    "replications.csv",
    "summary.csv",
    "paired.csv",
    "summary_wide.csv",
    "pooled.csv",
    "histograms.csv",
];

/// The names `.resim-files` lists in `dir`.
fn record(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(".resim-files"))
        .expect("the record")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

/// The files of `dir`, and that none of them is a temporary (the values of
/// added columns, a staging file's rewrite) or the staging file.
fn files_without_temporaries(dir: &Path) -> Vec<String> {
    let names: Vec<String> = folder_bytes(dir).into_keys().collect();
    for n in &names {
        assert!(
            n == ".resim-files" || n == ".resim.lock" || !n.starts_with('.'),
            "{n} left in {}",
            dir.display()
        );
        assert_ne!(n, "replications.partial.csv", "in {}", dir.display());
    }
    names
}

fn assert_same(a: &Path, b: &Path) {
    for f in SAME {
        let (x, y) = (std::fs::read(a.join(f)), std::fs::read(b.join(f)));
        assert!(
            x.is_ok() && x.as_ref().ok() == y.as_ref().ok(),
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn a_killed_sweep_goes_on_from_its_finished_rows_to_the_same_bytes() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let rows = "[500, 2000, 10000]";
    let args = ["-n", "24", "--jobs", "1"];
    sweep_storm(rows, &w.join("whole"), &[&args[..], &["-q"]].concat());
    // killed (SIGKILL, nothing cleaned up) once its state holds 3 replications
    // and values of metrics replication 0 lacked (later replications' longer
    // runs), which wait beside the rows
    let cut = w.join("cut");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("resim"));
    cmd.arg("sweep").arg(scenario(STORM)).arg("--out").arg(&cut);
    cmd.args(["--no-report", "-q"]).args(args);
    // a resume state after every finished replication, so that the kill below
    // finds one after the third whatever the machine's speed
    cmd.env("RESIM_CHECKPOINT_MS", "0");
    for s in storm_sets(rows) {
        cmd.arg("--set").arg(s);
    }
    let mut child = cmd.spawn().unwrap();
    let state = cut.join("replications.partial.state.toml");
    let held = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("rows = "))
            .and_then(|n| n.parse::<u64>().ok())
    };
    let mut kept = 0;
    while child.try_wait().unwrap().is_none() {
        let text = std::fs::read_to_string(&state).unwrap_or_default();
        if let Some(n) = held(&text)
            && n >= 9
            && text.contains("extra_names = [\"")
        {
            child.kill().unwrap();
            kept = n;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.wait();
    assert!(kept >= 9, "the sweep ended before it could be killed");
    assert!(!cut.join("replications.csv").exists());
    let (stdout, _) = sweep_storm(rows, &cut, &args);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Resumed: "))
        .unwrap_or_else(|| panic!("not resumed: {stdout}"));
    let resumed: u64 = line["Resumed: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(resumed >= kept, "{line}");
    assert!(stdout.contains("come from later replications"), "{stdout}");
    assert_same(&w.join("whole"), &cut);
    files_without_temporaries(&cut);
}

#[test]
fn a_stopped_sweep_of_other_settings_is_not_resumed() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("o");
    let rows = "[500, 2000]";
    sweep_storm(rows, &out, &["-n", "2", "-q"]);
    // a stopped sweep's staging files, left as a killed one leaves them
    let state = "replications.partial.state.toml";
    std::fs::copy(
        out.join("replications.csv"),
        out.join("replications.partial.csv"),
    )
    .unwrap();
    let (stdout, _) = sweep_storm(rows, &out, &["-n", "3"]);
    assert!(!stdout.contains("Resumed"), "{stdout}");
    assert!(!out.join(state).exists());
    // with a state of another sweep beside them, a note says why they were not used
    std::fs::copy(
        out.join("replications.csv"),
        out.join("replications.partial.csv"),
    )
    .unwrap();
    std::fs::write(
        out.join(state),
        "rows = 1\nbytes = 10\nextra_bytes = 0\nextra_names = []\nhistograms_fnv1a64 = \"0\"\n",
    )
    .unwrap();
    let (stdout, _) = sweep_storm(rows, &out, &["-n", "3"]);
    assert!(
        stdout.contains("were not reused") && stdout.contains("cannot be read"),
        "{stdout}"
    );
    let again = work.path().join("again");
    sweep_storm(rows, &again, &["-n", "3", "-q"]);
    assert_same(&again, &out);
}

#[test]
fn pooled_percentiles_and_added_columns_do_not_depend_on_threads_or_shards() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let rows = "[500, 2000, 10000]";
    sweep_storm(rows, &w.join("one"), &["-n", "6", "-q", "--jobs", "1"]);
    sweep_storm(rows, &w.join("two"), &["-n", "6", "-q", "--jobs", "2"]);
    assert_same(&w.join("one"), &w.join("two"));
    for k in 1..=3 {
        let shard = format!("{k}/3");
        sweep_storm(
            rows,
            &w.join(format!("s{k}")),
            &["-n", "6", "-q", "--jobs", "1", "--shard", &shard],
        );
        assert!(w.join(format!("s{k}/histograms.csv")).exists());
        assert!(!w.join(format!("s{k}/pooled.csv")).exists());
        // a shard's histograms are part of its set
        let shard = w.join(format!("s{k}"));
        assert_eq!(
            record(&shard),
            ["histograms.csv", "manifest.toml", "replications.csv"]
        );
        files_without_temporaries(&shard);
    }
    let merged = w.join("merged");
    resim()
        .args(["merge", "-q", "--no-report", "--out"])
        .arg(&merged)
        .args([w.join("s3"), w.join("s1"), w.join("s2")])
        .assert()
        .success();
    assert_same(&w.join("one"), &merged);
    for d in [w.join("one"), merged.clone()] {
        let owned = record(&d);
        for f in SAME {
            assert!(
                owned.iter().any(|n| n == f),
                "{f} not recorded in {owned:?}"
            );
        }
        files_without_temporaries(&d);
    }
    // the shards did add columns (the windows of stuck runs that ran longer),
    // not all the same ones
    let width = |d: &Path| Csv::read(&d.join("replications.csv")).headers.len();
    let manifest = std::fs::read_to_string(w.join("one/manifest.toml")).unwrap();
    let base = manifest
        .lines()
        .find(|l| l.starts_with("metrics = "))
        .map_or(0, |l| l.matches("\",").count() + 1);
    assert!(width(&merged) > base + 3, "{} vs {base}", width(&merged));
    let shards: Vec<usize> = (1..=3).map(|k| width(&w.join(format!("s{k}")))).collect();
    assert!(shards.iter().any(|&s| s != shards[0]), "{shards:?}");
}

#[test]
fn pooled_percentiles_are_those_of_every_request_together() {
    let dir = tempfile::tempdir().unwrap();
    let reps = 3u64;
    sweep_storm("[500, 2000]", dir.path(), &["-n", "3", "-q"]);
    let pooled = Csv::read(&dir.path().join("pooled.csv"));
    assert_eq!(
        pooled.headers,
        [
            "variant",
            "for_ms",
            "replications",
            "requests",
            "answered",
            "p50_ms",
            "p90_ms",
            "p99_ms",
            "p999_ms",
            "p50_all_ms",
            "p90_all_ms",
            "p99_all_ms",
            "p999_all_ms"
        ]
    );
    let s = storm_rows("[500, 2000]");
    let mut empties = 0;
    for row in &s.rows {
        let mut all = resim::metrics::Samples::default();
        let mut requests = 0u64;
        for r in 0..reps {
            let run = resim::sim::run(&row.model, r).expect("run");
            requests += run.outcomes.requests;
            all.absorb(&run.answered_response);
        }
        assert!(all.is_exact());
        let answered = all.count();
        let line = pooled.row(&[("for_ms", &row.labels[1])]);
        assert_eq!(
            [&line["replications"], &line["requests"], &line["answered"]],
            [
                &reps.to_string(),
                &requests.to_string(),
                &answered.to_string()
            ]
        );
        // the value of 0-based rank k among the answered, exactly
        let mut at = |k: u64| all.quantile_ms((k as f64 + 0.5) / answered as f64);
        for (name, num, den) in [
            ("p50", 1, 2),
            ("p90", 9, 10),
            ("p99", 99, 100),
            ("p999", 999, 1000),
        ] {
            let rank = |n: u64| (n * num).div_ceil(den).max(1) - 1;
            let within = |got: &str, exact: f64, what: &str| {
                let g: f64 = got.parse().unwrap_or_else(|_| panic!("{what}: `{got}`"));
                assert!(
                    g >= exact - 1e-6 && g <= exact * (1.0 + 1.0 / 1024.0) + 1e-6,
                    "{what}: pooled {g}, exact {exact}"
                );
            };
            within(&line[&format!("{name}_ms")], at(rank(answered)), name);
            let all_rank = rank(requests);
            let cell = &line[&format!("{name}_all_ms")];
            if all_rank < answered {
                within(cell, at(all_rank), &format!("{name}_all"));
            } else {
                assert_eq!(
                    cell, "",
                    "{name}_all_ms with {answered} of {requests} answered"
                );
                empties += 1;
            }
        }
    }
    // the stuck row leaves most requests unanswered
    assert!(empties > 0);
}

#[test]
fn time_series_windows_of_every_replication_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = sweep_storm(
        "[500, 10000]",
        dir.path(),
        &["-n", "4", "--set", "montecarlo.windows=true"],
    );
    let reps = Csv::read(&dir.path().join("replications.csv"));
    let summary = Csv::read(&dir.path().join("summary.csv"));
    let s = storm_rows("[500, 10000]");
    let mut longer = 0;
    for row in &s.rows {
        let mut last_windows = Vec::new();
        for r in 0..4u64 {
            let run = resim::sim::run(&row.model, r).expect("run");
            let windows = run.timeseries.expect("a time series").windows;
            let line = reps.row(&[("for_ms", &row.labels[1]), ("replication", &r.to_string())]);
            for (k, w) in windows.iter().enumerate() {
                let name = format!("timeseries.window_start_ms_{}.answered", k * 1000);
                let cell = line
                    .get(&name)
                    .unwrap_or_else(|| panic!("no column {name} (replication {r})"));
                assert_eq!(*cell, w.answered.to_string(), "{name} of replication {r}");
            }
            let after = format!(
                "timeseries.window_start_ms_{}.answered",
                windows.len() * 1000
            );
            assert!(line.get(&after).is_none_or(String::is_empty), "{after}");
            last_windows.push(windows.len());
        }
        longer += usize::from(last_windows.iter().any(|&n| n > last_windows[0]));
        // a window's n: the replications that reached it
        let most = *last_windows.iter().max().unwrap();
        let name = format!("timeseries.window_start_ms_{}.answered", (most - 1) * 1000);
        let line = summary.row(&[("for_ms", &row.labels[1]), ("metric", &name)]);
        let reached = last_windows.iter().filter(|&&n| n == most).count();
        assert_eq!(line["n"], reached.to_string(), "{line:?}");
    }
    assert!(longer > 0, "no replication ran longer than replication 0");
    // said as it is, no warning of values dropped
    assert!(stdout.contains("come from later replications"), "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");
    // the values waited in a temporary file, gone with the staging file
    files_without_temporaries(dir.path());
}

#[test]
fn a_later_sweep_that_does_not_pool_removes_the_pooled_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("notes.txt"), "mine").unwrap();
    sweep_storm("[500, 10000]", d, &["-n", "3", "-q"]);
    assert!(d.join("pooled.csv").exists() && d.join("histograms.csv").exists());
    // A shard into the same folder: its set has no summary and no pooled.csv.
    sweep_storm("[500, 10000]", d, &["-n", "3", "-q", "--shard", "1/2"]);
    let names = files_without_temporaries(d);
    assert_eq!(
        names,
        [
            ".resim-files",
            ".resim.lock",
            "histograms.csv",
            "manifest.toml",
            "notes.txt",
            "replications.csv",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_folder_of_an_older_sweep_gives_up_its_pooled_files_too() {
    // Written by a resim before `.resim-files`: a sweep owns there the files an
    // older sweep always replaced, pooled.csv and histograms.csv among them.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in [
        "summary.csv",
        "pooled.csv",
        "histograms.csv",
        "thresholds.csv",
        "mine.csv",
    ] {
        std::fs::write(d.join(f), "old").unwrap();
    }
    sweep_storm("[500]", d, &["-n", "2", "-q", "--shard", "1/2"]);
    let names = files_without_temporaries(d);
    assert_eq!(
        names,
        [
            ".resim-files",
            ".resim.lock",
            "histograms.csv",
            "manifest.toml",
            "mine.csv",
            "replications.csv",
        ]
    );
    assert_ne!(std::fs::read(d.join("histograms.csv")).unwrap(), b"old");
    assert_eq!(std::fs::read(d.join("mine.csv")).unwrap(), b"old");
}
