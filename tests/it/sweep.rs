//! `resim sweep` and `resim merge`: output independent of threads and shards, the
//! seed numbers in every replication of the fixed cycles, common random numbers,
//! interrupted sweeps, and merge refusing what does not belong together.

use crate::common::*;
use predicates::prelude::*;
use std::path::Path;
use std::process::Command as Process;

const MC: &str = "scenarios/ay10-montecarlo.toml";
const AY10: &str = "scenarios/ay10-tariff-slowdown.toml";
const FILES: [&str; 5] = [
    "replications.csv",
    "summary.csv",
    "paired.csv",
    "summary_wide.csv",
    "report.html",
];

/// Runs `resim sweep FILE --out DIR --quiet ARGS` and returns DIR.
fn sweep(rel: &str, args: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    resim()
        .arg("sweep")
        .arg(scenario(rel))
        .arg("--out")
        .arg(dir.path())
        .arg("--quiet")
        .args(args)
        .assert()
        .success();
    dir
}

fn bytes(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

fn assert_same_files(a: &Path, b: &Path) {
    for f in FILES {
        assert!(
            bytes(a, f) == bytes(b, f),
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn the_thread_count_does_not_change_a_byte() {
    let one = sweep(MC, &["-n", "4", "--jobs", "1"]);
    let two = sweep(MC, &["-n", "4", "--jobs", "2"]);
    assert_same_files(one.path(), two.path());
    // and the runs are random: the slow tariff's wasted work varies
    let reps = Csv::read(&one.path().join("replications.csv"));
    assert_eq!(reps.rows.len(), 18 * 4);
    let wasted: std::collections::BTreeSet<&str> = reps
        .select(&[("variant", "tariff-slow"), ("policy", "greedy")])
        .iter()
        .map(|r| r["outcomes.wasted_ms"].as_str())
        .collect();
    assert!(wasted.len() > 1, "no randomness: {wasted:?}");
}

#[test]
fn four_shards_merged_equal_the_whole_run() {
    let whole = sweep(MC, &["-n", "3", "--jobs", "2"]);
    let work = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("resim");
    let file = scenario(MC);
    // The shards run as separate processes, four at a time, as a cluster would.
    let script = format!(
        "printf '1\\n2\\n3\\n4\\n' | xargs -P 4 -I {{}} '{}' sweep '{}' -n 3 --jobs 1 --quiet --shard {{}}/4 --out '{}/shard-{{}}'",
        bin.display(),
        file.display(),
        work.path().display()
    );
    let status = Process::new("sh").arg("-c").arg(&script).status().unwrap();
    assert!(status.success(), "{script}");
    let shard_rows: Vec<usize> = (1..=4)
        .map(|k| {
            Csv::read(&work.path().join(format!("shard-{k}/replications.csv")))
                .rows
                .len()
        })
        .collect();
    assert_eq!(shard_rows.iter().sum::<usize>(), 18 * 3);
    assert!(shard_rows.iter().all(|n| *n > 0), "{shard_rows:?}");
    assert!(!work.path().join("shard-1/summary.csv").exists());

    let merged = work.path().join("merged");
    let mut merge = resim();
    merge.arg("merge").arg("--quiet").arg("--out").arg(&merged);
    for k in [3, 1, 4, 2] {
        merge.arg(work.path().join(format!("shard-{k}")));
    }
    merge.assert().success();
    assert_same_files(whole.path(), &merged);
    let manifest = std::fs::read_to_string(merged.join("manifest.toml")).unwrap();
    assert!(!manifest.lines().any(|l| l == "[shard]"), "{manifest}");
    assert!(manifest.contains(" merge --quiet --out "), "{manifest}");
}

/// (variant, policy, answered, dropped, failed_tariff, failed_measure, median_ms,
///  worst_ms, mean_ms (1 decimal), held_slots (1 decimal), wasted_ms without
///  cancellation): the AY10 seed table.
type SeedLine = (&'static str, &'static str, [f64; 9]);
const SEED: [SeedLine; 6] = [
    (
        "baseline",
        "greedy",
        [48., 0., 0., 0., 40., 200., 46.2, 19.2, 0.],
    ),
    (
        "baseline",
        "equal",
        [46., 2., 0., 2., 40., 190., 45.8, 19.1, 20.],
    ),
    (
        "baseline",
        "weighted",
        [46., 2., 2., 0., 40., 180., 45.3, 18.9, 40.],
    ),
    (
        "tariff-slow",
        "greedy",
        [6., 42., 36., 42., 200., 200., 197.8, 82.4, 5540.],
    ),
    (
        "tariff-slow",
        "equal",
        [0., 48., 48., 2., 123., 200., 126.0, 52.5, 9700.],
    ),
    (
        "tariff-slow",
        "weighted",
        [0., 48., 48., 0., 93., 180., 96.4, 40.2, 11120.],
    ),
];
const COLUMNS: [(&str, i32); 9] = [
    ("outcomes.answered", 0),
    ("outcomes.dropped", 0),
    ("outcomes.failed_tariff", 0),
    ("outcomes.failed_measure", 0),
    ("outcomes.median_ms", 0),
    ("outcomes.worst_ms", 0),
    ("outcomes.mean_ms", 1),
    ("outcomes.held_slots", 1),
    ("outcomes.wasted_ms", 0),
];

#[test]
fn fixed_cycles_give_the_seed_numbers_in_every_replication() {
    let dir = sweep(AY10, &["-n", "3"]);
    let reps = Csv::read(&dir.path().join("replications.csv"));
    let summary = Csv::read(&dir.path().join("summary.csv"));
    for (variant, policy, seed) in SEED {
        for cancellation in ["false", "true"] {
            let row = [
                ("variant", variant),
                ("policy", policy),
                ("cancellation", cancellation),
            ];
            for r in ["0", "1", "2"] {
                let mut filter = row.to_vec();
                filter.push(("replication", r));
                let line = reps.row(&filter);
                for ((col, decimals), want) in COLUMNS.iter().zip(seed) {
                    // cancellation stops the stores: no wasted work
                    let want = if *col == "outcomes.wasted_ms" && cancellation == "true" {
                        0.0
                    } else {
                        want
                    };
                    assert_rounded(line, col, want, *decimals);
                }
            }
            let mut filter = row.to_vec();
            filter.push(("metric", "outcomes.answered"));
            let s = summary.row(&filter);
            assert_eq!(num(s, "mean"), seed[0]);
            assert_eq!(num(s, "sd"), 0.0);
            assert_eq!((num(s, "ci_low"), num(s, "ci_high")), (seed[0], seed[0]));
            assert_eq!(num(s, "n"), 3.0);
            assert_eq!(num(s, "confidence"), 0.95);
            // the wide summary holds the same mean, one column per metric
            let wide = Csv::read(&dir.path().join("summary_wide.csv"));
            assert_eq!(num(wide.row(&row), "outcomes.answered"), seed[0]);
            assert_eq!(wide.rows.len(), 12, "one line per compare row");
        }
    }
}

#[test]
fn all_metrics_shows_what_varies_and_lists_the_rest_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = resim()
        .arg("sweep")
        .arg(scenario("scenarios/io22-queue-length.toml"))
        .arg("--out")
        .arg(dir.path())
        .args(["-n", "2", "--all-metrics"])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    let squeeze = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let lines: Vec<String> = text.lines().map(squeeze).collect();
    assert!(lines.contains(&"metric 16 64".to_string()), "{text}");
    assert!(
        lines.contains(&"services.shed 60.00 +/- 0.00 0.00 +/- 0.00".to_string()),
        "{text}"
    );
    // arrivals are the same in both rows: named once, not tabled (the list of
    // metrics that are the same may wrap a line at it)
    assert!(
        !lines
            .iter()
            .take_while(|l| !l.starts_with("The same in every compare row"))
            .any(|l| l.starts_with("services.arrived ")),
        "{text}"
    );
    // (the list wraps wherever its metrics fall: read it as one line)
    let joined = squeeze(&text);
    assert!(
        joined.contains("The same in every compare row (")
            && joined.contains("services.arrived 160.00 +/- 0.00;"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
}

#[test]
fn the_report_shows_means_with_intervals_and_paired_differences() {
    let dir = tempfile::tempdir().unwrap();
    let out = resim()
        .arg("sweep")
        .arg(scenario(AY10))
        .arg("--out")
        .arg(dir.path())
        .args(["-n", "2", "--set"])
        .arg(r#"montecarlo.report=["outcomes.answered", "outcomes.wasted_ms"]"#)
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = |start: &str| {
        text.lines()
            .find(|l| {
                l.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .starts_with(start)
            })
            .unwrap_or_else(|| panic!("no line starting {start:?} in\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        line("variant policy cancellation outcomes"),
        "variant policy cancellation outcomes.answered outcomes.wasted_ms"
    );
    assert_eq!(
        line("tariff-slow greedy false 6.00"),
        "tariff-slow greedy false 6.00 +/- 0.00 5540.00 +/- 0.00"
    );
    // weighted vs greedy under the slow tariff: 6 fewer answered, 5580 ms more waste
    assert_eq!(
        line("tariff-slow weighted false policy=greedy"),
        "tariff-slow weighted false policy=greedy -6.00 +/- 0.00 5580.00 +/- 0.00"
    );
    assert!(text.contains("an interrupted sweep keeps every finished replication"));
}

#[test]
fn rows_share_random_numbers_and_replication_0_is_the_run() {
    let dir = sweep(
        MC,
        &[
            "-n",
            "6",
            "--seed",
            "1",
            "--set",
            r#"compare.variant=["tariff-slow"]"#,
            "--vary",
            "services.tracking.handler.cancellation=[false, true]",
        ],
    );
    let summary = Csv::read(&dir.path().join("summary.csv"));
    let paired = Csv::read(&dir.path().join("paired.csv"));
    assert_eq!(
        &summary.headers[..3],
        ["variant", "policy", "cancellation"],
        "--vary adds its axis after [compare]'s"
    );
    let greedy = |c: &'static str, metric: &'static str| {
        vec![
            ("variant", "tariff-slow"),
            ("policy", "greedy"),
            ("cancellation", c),
            ("metric", metric),
        ]
    };
    // answered varies between replications ...
    assert!(num(summary.row(&greedy("false", "outcomes.answered")), "sd") > 0.0);
    // ... but cancellation draws the same latencies, so it answers exactly the same
    let mut same = greedy("true", "outcomes.answered");
    same.push(("axis", "cancellation"));
    let p = paired.row(&same);
    assert_eq!(p["versus"], "false");
    assert_eq!((num(p, "mean"), num(p, "sd"), num(p, "n")), (0.0, 0.0, 6.0));
    // and saves exactly the wasted work
    let mut saved = greedy("true", "outcomes.wasted_ms");
    saved.push(("axis", "cancellation"));
    let wasted = num(summary.row(&greedy("false", "outcomes.wasted_ms")), "mean");
    assert!((num(paired.row(&saved), "mean") + wasted).abs() < 1e-6);

    // replication 0 with the run's seed is what `resim run` computes
    let run = run_into(
        &scenario(MC),
        &[
            "--quiet",
            "--seed",
            "1",
            "--set",
            r#"compare.variant=["tariff-slow"]"#,
        ],
    );
    let outcomes = Csv::read(&run.path().join("outcomes.csv"));
    let reps = Csv::read(&dir.path().join("replications.csv"));
    for policy in ["greedy", "equal", "weighted"] {
        let a = outcomes.row(&[("policy", policy)]);
        let b = reps.row(&[
            ("policy", policy),
            ("cancellation", "false"),
            ("replication", "0"),
        ]);
        for col in ["answered", "dropped", "wasted_ms", "mean_ms"] {
            assert_eq!(a[col], b[&format!("outcomes.{col}")], "{policy} {col}");
        }
    }
}

#[test]
fn an_interrupted_sweep_keeps_its_finished_replications() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("resim");
    let mut child = Process::new(&bin)
        .args(["sweep", "--quiet", "--jobs", "1", "-n", "1000000", "--out"])
        .arg(dir.path())
        .arg(scenario(MC))
        .spawn()
        .unwrap();
    let file = dir.path().join("replications.partial.csv");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&file).map_or(0, |t| t.lines().count()) < 1 + 18 * 3 {
        assert!(std::time::Instant::now() < deadline, "no progress in 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with('\n'), "a partial line was left");
    let reps = Csv::read(&file);
    assert_eq!(
        reps.rows.len() % 18,
        0,
        "only whole replications are written"
    );
    for (i, row) in reps.rows.iter().enumerate() {
        assert_eq!(row["replication"], (i / 18).to_string());
    }
    for f in ["replications.csv", "summary.csv", "manifest.toml"] {
        assert!(
            !dir.path().join(f).exists(),
            "{f}: the sweep did not complete"
        );
    }
    // merge says what is wrong rather than summarizing a part
    resim()
        .arg("merge")
        .arg(dir.path())
        .arg("--out")
        .arg(dir.path().join("merged"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("incomplete"));
}

/// A sweep of the slow-tariff rows of AY10 into `dir`; with `cap_ms` a time cap
/// that fails it part-way (returned: its stderr).
fn slow_tariff_sweep(dir: &Path, replications: &str, cap_ms: Option<&str>) -> String {
    let mut cmd = resim();
    cmd.arg("sweep")
        .arg(scenario(MC))
        .arg("--out")
        .arg(dir)
        .args(["-n", replications, "--jobs", "2", "--quiet"])
        .args(["--set", r#"compare.variant=["tariff-slow"]"#]);
    if let Some(cap) = cap_ms {
        cmd.args(["--set", &format!("scenario.max_sim_time_ms={cap}")]);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let code = if cap_ms.is_some() { 2 } else { 0 };
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    stderr
}

/// The rows a failed sweep says it kept.
fn kept_rows(stderr: &str) -> usize {
    stderr
        .split("the sweep stopped; the ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of kept rows in: {stderr}"))
}

#[test]
fn a_sweep_that_fails_midway_keeps_its_rows_apart_and_the_previous_sweep_whole() {
    // 48 requests of about 200 ms under the slow tariff store: a 9.6 s cap passes
    // replication 0 of every row (checked before anything is written) but not every
    // later replication.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stderr = slow_tariff_sweep(d, "50", Some("9600"));
    assert!(
        stderr.contains("scenario.max_sim_time_ms = 9600"),
        "{stderr}"
    );
    let kept = kept_rows(&stderr);
    assert!((3..3 * 50).contains(&kept), "{kept}");
    let partial = d.join("replications.partial.csv");
    assert_eq!(Csv::read(&partial).rows.len(), kept);
    for f in ["replications.csv", "summary.csv", "manifest.toml"] {
        assert!(!d.join(f).exists(), "{f}: the sweep did not complete");
    }

    // A complete sweep takes the folder over, the staging file included; then a
    // note of the user's, and a sweep that fails again.
    slow_tariff_sweep(d, "4", None);
    assert!(
        !partial.exists(),
        "the complete sweep left the staging file"
    );
    std::fs::write(d.join("notes.txt"), "mine").unwrap();
    let before = folder_bytes(d);
    assert!(before.contains_key("summary.csv") && before.contains_key("report.html"));
    let stderr = slow_tariff_sweep(d, "50", Some("9600"));
    assert!(stderr.contains("no other file"), "{stderr}");
    let after = folder_bytes(d);
    for (name, bytes) in &before {
        if name != ".resim-files" {
            assert!(after.get(name) == Some(bytes), "{name} changed");
        }
    }
    let added: Vec<&String> = after.keys().filter(|n| !before.contains_key(*n)).collect();
    // the rows, and what a rerun of that same sweep would go on from
    assert_eq!(
        added,
        [
            "replications.partial.csv",
            "replications.partial.histograms.csv",
            "replications.partial.state.toml"
        ]
    );
    assert_eq!(Csv::read(&partial).rows.len(), kept_rows(&stderr));

    // The same complete sweep again: the folder exactly as it was before the
    // failure, its staging file gone.
    slow_tariff_sweep(d, "4", None);
    assert!(
        folder_bytes(d) == before,
        "the folder differs from the first sweep's"
    );
}

#[test]
fn merge_refuses_shards_that_do_not_belong_together() {
    let work = tempfile::tempdir().unwrap();
    let shard = |k: u32, extra: &[&str]| {
        let out = work.path().join(format!("s{k}{}", extra.join("")));
        resim()
            .args(["sweep", "--quiet", "-n", "2", "--shard"])
            .arg(format!("{k}/2"))
            .arg("--out")
            .arg(&out)
            .args(extra)
            .arg(scenario(AY10))
            .assert()
            .success();
        out
    };
    let (s1, s2, s2_seed) = (shard(1, &[]), shard(2, &[]), shard(2, &["--seed", "7"]));
    let merge = |dirs: &[&Path]| {
        let mut c = resim();
        c.arg("merge").arg("--out").arg(work.path().join("m"));
        for d in dirs {
            c.arg(d);
        }
        c.assert()
    };
    merge(&[&s1, &s2]).success();
    merge(&[&s1, &s2_seed])
        .code(2)
        .stderr(predicate::str::contains("`seed` is 7 here and 1 there"));
    merge(&[&s1])
        .code(2)
        .stderr(predicate::str::contains("missing shard(s) 2/2"));
    merge(&[&s1, &s2, &s1])
        .code(2)
        .stderr(predicate::str::contains("given twice"));
    // a shard cut short (one row lost)
    let path = s2.join("replications.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let cut = text.trim_end().rsplit_once('\n').unwrap().0.to_string() + "\n";
    std::fs::write(&path, cut).unwrap();
    merge(&[&s1, &s2])
        .code(2)
        .stderr(predicate::str::contains("shard 2/2 is incomplete"));
}

#[test]
fn bad_sweep_arguments_are_errors_with_exit_code_2() {
    let cases: [(&[&str], &str); 7] = [
        (&["--shard", "5/4"], "expected K/N with 1 <= K <= N"),
        (
            &["--vary", "services.tracking.handler.policy=greedy"],
            "TOML list",
        ),
        (
            &["--set", "compare={}", "--vary", r#"variant=["tarif-slow"]"#],
            "did you mean `tariff-slow`?",
        ),
        (
            &["--vary", r#"services.tracking.handler.policy=["equal"]"#],
            "already a comparison axis",
        ),
        (&["--replications", "0"], "--replications must be >= 1"),
        (
            &["--set", "montecarlo.replications=0"],
            "montecarlo.replications: must be >= 1",
        ),
        (
            &["--set", r#"montecarlo.report=["outcomes.answerd"]"#],
            "montecarlo.report.0: no metric named `outcomes.answerd` (did you mean `outcomes.answered`?)",
        ),
    ];
    for (args, message) in cases {
        let dir = tempfile::tempdir().unwrap();
        resim()
            .arg("sweep")
            .arg(scenario(AY10))
            .arg("--out")
            .arg(dir.path())
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message))
            .stderr(predicate::str::contains("panicked").not());
    }
    // the grid cap: 12 rows x 1000 request counts
    let values: Vec<String> = (1..=1000).map(|n| n.to_string()).collect();
    resim()
        .arg("sweep")
        .arg(scenario(AY10))
        .arg("--vary")
        .arg(format!("workload.requests=[{}]", values.join(", ")))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the grid has 2 x 3 x 2 x 1000 = 12000 rows, more than the limit of 10000",
        ));
}

/// The IO22 Monte-Carlo file: its baseline row keeps the seed's constant 40 ms
/// round, and a jitter of 10 ms stays inside the first round, so every replication
/// of that row repeats the seed's findings; the random-service rows vary.
#[test]
fn io22_montecarlo_baseline_repeats_the_seed_findings_in_every_replication() {
    let dir = sweep("scenarios/io22-montecarlo.toml", &["-n", "4"]);
    let reps = Csv::read(&dir.path().join("replications.csv"));
    for r in ["0", "1", "2", "3"] {
        let line = reps.row(&[("variant", "baseline"), ("replication", r)]);
        assert_eq!(num(line, "findings.true_limit"), 8.0);
        assert_eq!(num(line, "findings.knee_concurrency"), 12.0);
        assert_eq!(num(line, "findings.saturation_concurrency"), 24.0);
        assert_eq!(num(line, "totals.sent"), 595.0);
        assert_eq!(num(line, "totals.rejected"), 80.0);
        assert_eq!(num(line, "totals.timed_out"), 240.0);
    }
    let successful: std::collections::BTreeSet<String> = reps
        .select(&[("variant", "exponential-service")])
        .iter()
        .map(|l| l["totals.successful"].clone())
        .collect();
    assert!(
        successful.len() > 1,
        "random service times vary: {successful:?}"
    );
}

/// The limiter Monte-Carlo file: under random arrivals the sliding log never lets
/// more than its limit through within a window; the fixed window does.
#[test]
fn dy13_montecarlo_sliding_log_never_exceeds_its_limit() {
    let dir = sweep("scenarios/dy13-montecarlo.toml", &["-n", "5"]);
    let reps = Csv::read(&dir.path().join("replications.csv"));
    for line in reps.select(&[("variant", "sliding-log")]) {
        assert_eq!(num(line, "bursts.peak_to_limit"), 1.0);
    }
    let fixed = reps.select(&[("variant", "fixed-window")]);
    assert_eq!(fixed.len(), 5);
    assert!(fixed.iter().all(|l| num(l, "bursts.peak_to_limit") > 1.0));
}

#[test]
fn paired_differences_can_be_taken_against_a_named_baseline_row() {
    let dir = sweep(MC, &["-n", "4", "--baseline", "policy=equal"]);
    let summary = Csv::read(&dir.path().join("summary.csv"));
    let paired = Csv::read(&dir.path().join("paired.csv"));
    let mean = |policy: &str| {
        num(
            summary.row(&[
                ("variant", "tariff-slow"),
                ("policy", policy),
                ("metric", "outcomes.answered"),
            ]),
            "mean",
        )
    };
    let p = paired.row(&[
        ("variant", "tariff-slow"),
        ("policy", "greedy"),
        ("axis", "policy"),
        ("metric", "outcomes.answered"),
    ]);
    assert_eq!(p["versus"], "equal");
    assert!((num(p, "mean") - (mean("greedy") - mean("equal"))).abs() < 1e-9);
    // the baseline row itself has no pair on that axis; the default one does
    assert!(
        paired
            .select(&[("policy", "equal"), ("axis", "policy")])
            .is_empty()
    );
    assert!(
        !paired
            .select(&[("policy", "greedy"), ("axis", "policy")])
            .is_empty()
    );
    let manifest = std::fs::read_to_string(dir.path().join("manifest.toml")).unwrap();
    assert!(
        manifest.contains("baseline = [\"policy=equal\"]"),
        "{manifest}"
    );
}

const MAXCONN: &str = "scenarios/balancers-haproxy-maxconn.toml";

/// The per-replication differences `row - round-robin` of `metric` in
/// `replications.csv`, replications where either is empty left out.
fn differences(reps: &Csv, row: &str, metric: &str) -> Vec<f64> {
    let value = |variant: &str, r: usize| -> Option<f64> {
        let line = reps.row(&[("variant", variant), ("replication", &r.to_string())]);
        line[metric].parse().ok()
    };
    (0..20)
        .filter_map(|r| Some(value(row, r)? - value("round-robin", r)?))
        .collect()
}

/// Mean and 95 % Student t interval of 20 values (t(0.975, 19) = 2.093024,
/// from a published table, not from resim).
fn t_interval(d: &[f64]) -> (f64, f64, f64) {
    assert_eq!(d.len(), 20);
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = 2.093024 * sd / n.sqrt();
    (mean, mean - half, mean + half)
}

#[test]
fn the_default_report_states_the_answer_as_the_docs_show_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = resim()
        .current_dir(root())
        .args(["sweep", MAXCONN, "-n", "20", "-j", "2", "--out"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap().replace(
        &dir.path().display().to_string(),
        "out/balancers-haproxy-maxconn-sweep",
    );
    assert!(text.lines().count() <= 40, "one screen:\n{text}");

    // docs/scenarios.md quotes this very output
    let docs = std::fs::read_to_string(root().join("docs/scenarios.md")).unwrap();
    let intro = "For example, `resim sweep scenarios/balancers-haproxy-maxconn.toml -n 20 -j 2`";
    let at = docs.find(intro).expect("the docs quote the maxconn sweep");
    let block = &docs[at..];
    let start = block.find("```text\n").unwrap() + "```text\n".len();
    let end = start + block[start..].find("```").unwrap();
    assert_eq!(
        &block[start..end],
        text,
        "docs/scenarios.md quotes another output"
    );

    // the headline: what was asked about, failure kinds that happened
    let squeeze = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    // the table, before the sentences
    let lines: Vec<String> = text
        .lines()
        .map(squeeze)
        .take_while(|l| !l.starts_with("Paired differences"))
        .collect();
    assert!(lines.contains(&"metric round-robin maxconn maxconn-near-capacity".into()));
    for m in [
        "answered_pct ",
        "p50_all_ms ",
        "p99_all_ms",
        "timed_out ",
        "shed ",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(m)), "{m}\n{text}");
    }
    for m in ["rejected ", "errors ", "requests ", "outcomes."] {
        assert!(!lines.iter().any(|l| l.starts_with(m)), "{m}\n{text}");
    }

    // the verdict, recomputed from replications.csv: maxconn answers more and
    // its median over all requests is lower, both intervals excluding 0
    let reps = Csv::read(&dir.path().join("replications.csv"));
    let (a, a_low, a_high) = t_interval(&differences(&reps, "maxconn", "outcomes.answered_pct"));
    assert!(a_low > 0.0, "higher answered share, interval above 0");
    let (p, p_low, p_high) = t_interval(&differences(&reps, "maxconn", "outcomes.p50_all_ms"));
    assert!(p_high < 0.0, "lower median, interval below 0");
    let sentence = squeeze(&text);
    let expected = format!(
        "- maxconn is better than round-robin: answers {a:.2} points more (95 % CI {a_low:.2} to \
         {a_high:.2}, excludes 0); p50 over all requests {:.2} ms lower (CI {:.2} to {:.2} ms, excludes 0);",
        -p, -p_high, -p_low
    );
    assert!(sentence.contains(&expected), "{expected}\n{text}");
    // near capacity its median is higher than round robin's: a mixed verdict
    let (q, _, q_high) = t_interval(&differences(
        &reps,
        "maxconn-near-capacity",
        "outcomes.p50_all_ms",
    ));
    assert!(q > 0.0 && q - (q_high - q) > 0.0);
    assert!(
        sentence.contains(
            "- maxconn-near-capacity against round-robin is better on answered share, timeouts and sheds, \
             worse on p50 over all requests: answers"
        ),
        "{text}"
    );

    // the summary files hold no per-window metric; replications.csv does
    for file in ["summary.csv", "paired.csv"] {
        let csv = Csv::read(&dir.path().join(file));
        assert!(!csv.rows.is_empty());
        assert!(
            !csv.rows
                .iter()
                .any(|r| r["metric"].contains("window_start_ms_")),
            "{file}"
        );
    }
    let header = std::fs::read_to_string(dir.path().join("replications.csv")).unwrap();
    let header = header.lines().next().unwrap();
    assert!(header.contains("timeseries.window_start_ms_0.answered"));
    let wide = std::fs::read_to_string(dir.path().join("summary_wide.csv")).unwrap();
    assert!(!wide.contains("window_start_ms_"));
}

#[test]
fn a_row_named_as_the_baseline_and_an_unknown_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = resim()
        .current_dir(root())
        .args([
            "sweep",
            MAXCONN,
            "-n",
            "3",
            "--baseline",
            "maxconn",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Paired differences against variant=maxconn"),
        "{text}"
    );
    assert!(
        text.contains("- round-robin is worse than maxconn: answers"),
        "{text}"
    );
    let paired = Csv::read(&dir.path().join("paired.csv"));
    assert!(paired.rows.iter().all(|r| r["versus"] == "maxconn"));
    // the page charts the headline, the paired forest against the same row
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("outcomes.answered_pct: paired difference to the reference row"));
    assert!(html.contains("outcomes.shed: mean per row"));
    assert!(!html.contains("outcomes.requests: mean per row"));
    assert!(
        !html.contains("outcomes.rejected: mean per row"),
        "never happened"
    );

    resim()
        .current_dir(root())
        .args([
            "sweep",
            MAXCONN,
            "-n",
            "1",
            "--baseline",
            "max-conn",
            "--out",
        ])
        .arg(dir.path().join("x"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the axis `variant` has no value `max-conn` (its values: `round-robin`, `maxconn`, \
             `maxconn-near-capacity`)",
        ));
}
