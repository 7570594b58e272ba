//! Hostile inputs to runs, sweeps, boundary searches, merges and shards: each
//! keeps what was computed, refuses naming the variable, key or row, or is
//! bounded in time and memory; none loses or silently changes a result.

use crate::common::{resim, scenario};

const MONTECARLO: &str = "scenarios/ay10-montecarlo.toml";

/// The Slurm array variables `--shard auto` reads.
const SLURM: [&str; 5] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
];

/// `resim sweep --shard auto` under the Slurm variables `env`: its exit code and stderr.
fn shard_auto(env: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = resim();
    cmd.arg("sweep")
        .arg(scenario(MONTECARLO))
        .args([
            "-n",
            "2",
            "--quiet",
            "--no-report",
            "--shard",
            "auto",
            "--out",
        ])
        .arg(dir.path().join("out"));
    for name in SLURM {
        cmd.env_remove(name);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn odd_slurm_array_variables_are_refused_naming_the_variable() {
    let base = [
        ("SLURM_ARRAY_TASK_ID", "0"),
        ("SLURM_ARRAY_TASK_COUNT", "4"),
        ("SLURM_ARRAY_TASK_MIN", "0"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut env: Vec<(&str, &str)> = base.to_vec();
        for (k, v) in extra {
            env.retain(|(n, _)| n != k);
            env.push((k, v));
        }
        shard_auto(&env)
    };
    // the plain array still works
    assert_eq!(with(&[]).0, 0);
    for (extra, names) in [
        (
            vec![("SLURM_ARRAY_TASK_STEP", "0")],
            vec!["SLURM_ARRAY_TASK_STEP", "`0`"],
        ),
        (
            vec![("SLURM_ARRAY_TASK_COUNT", "0")],
            vec!["SLURM_ARRAY_TASK_COUNT", "`0`"],
        ),
        // id 3 is not on the grid 0, 2, 4, 6: it would get id 2's slice
        (
            vec![("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_STEP", "2")],
            vec!["SLURM_ARRAY_TASK_ID", "`3`", "SLURM_ARRAY_TASK_STEP 2"],
        ),
        // --array=1,3,10: min 1, max 10, 3 jobs, step 1 is no grid of 3 jobs
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "10"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "10"),
            ],
            vec!["SLURM_ARRAY_TASK_COUNT", "`3`", "SLURM_ARRAY_TASK_MAX 10"],
        ),
        (
            vec![("SLURM_ARRAY_TASK_ID", "5"), ("SLURM_ARRAY_TASK_MAX", "3")],
            vec!["SLURM_ARRAY_TASK_ID", "`5`", "SLURM_ARRAY_TASK_MAX 3"],
        ),
    ] {
        let (code, err) = with(&extra);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{extra:?}: one line: {err}");
        for n in names {
            assert!(err.contains(n), "{extra:?}: names {n}: {err}");
        }
    }
}

const AY10: &str = "scenarios/ay10-montecarlo.toml";

/// A sweep of AY10 stopped by a full disk (a 16 KiB file size limit) in `out`:
/// its staging rows and resume state stay there.
fn stopped_sweep(out: &std::path::Path) {
    let r = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 16; exec \"$RESIM\" sweep --quiet -n 50 -j 1 --no-report --out '{}' '{}'",
            out.display(),
            scenario(AY10).display()
        ))
        .env("RESIM", assert_cmd::cargo::cargo_bin("resim"))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(2), "{r:?}");
    assert!(out.join("replications.partial.state.toml").exists());
}

/// `line` (0-based) of `text` with its cells mapped by `f` (cell index, text).
fn edit_line(text: &str, line: usize, f: impl Fn(usize, &str) -> String) -> String {
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    lines[line] = lines[line]
        .split(',')
        .enumerate()
        .map(|(i, c)| f(i, c))
        .collect::<Vec<_>>()
        .join(",");
    lines.join("\n")
}

#[test]
fn a_resumed_sweep_does_not_keep_a_corrupted_row() {
    let work = tempfile::tempdir().unwrap();
    let fresh = work.path().join("fresh");
    resim()
        .args(["sweep", "-q", "-n", "50", "-j", "1", "--no-report", "--out"])
        .arg(&fresh)
        .arg(scenario(AY10))
        .assert()
        .success();
    let stopped = work.path().join("stopped");
    stopped_sweep(&stopped);
    let partial = std::fs::read_to_string(stopped.join("replications.partial.csv")).unwrap();
    let header: Vec<&str> = partial.lines().next().unwrap().split(',').collect();
    let rep = header.iter().position(|c| *c == "replication").unwrap();
    // the first metric cell of row 2 that holds a digit
    let row2: Vec<&str> = partial.lines().nth(2).unwrap().split(',').collect();
    let cell = (rep + 1..row2.len())
        .find(|&i| row2[i].chars().any(|c| c.is_ascii_digit()))
        .unwrap();
    let digit = |c: &str| {
        let at = c.find(|ch: char| ch.is_ascii_digit()).unwrap();
        let d = c.as_bytes()[at] - b'0';
        format!("{}{}{}", &c[..at], (d + 1) % 10, &c[at + 1..])
    };
    let last = row2.len() - 1;
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "a changed number",
            edit_line(
                &partial,
                2,
                |i, c| if i == cell { digit(c) } else { c.into() },
            ),
            "changed since",
        ),
        (
            "a cell that is no number",
            edit_line(&partial, 2, |i, c| {
                if i == cell {
                    "x".repeat(c.len())
                } else {
                    c.into()
                }
            }),
            "row 2 (line 3)",
        ),
        (
            "another replication number",
            edit_line(
                &partial,
                2,
                |i, c| if i == rep { digit(c) } else { c.into() },
            ),
            "row 2 (line 3) is compare row",
        ),
        (
            // cut short, the file as long as before
            "a row cut short",
            {
                let cut = edit_line(&partial, 2, |i, c| {
                    if i == last { "\u{0}".into() } else { c.into() }
                })
                .replace(",\u{0}", "");
                let pad = partial.len() - cut.len();
                format!("{cut}{}", "9".repeat(pad))
            },
            "row 2 (line 3) has",
        ),
    ];
    for (what, text, says) in cases {
        let out = work.path().join(what.replace(' ', "-"));
        stopped_sweep(&out);
        std::fs::write(out.join("replications.partial.csv"), &text).unwrap();
        let r = resim()
            .args(["sweep", "-n", "50", "-j", "1", "--no-report", "--out"])
            .arg(&out)
            .arg(scenario(AY10))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&r.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(r.status.success(), "{what}: {r:?}");
        assert!(!stdout.contains("Resumed"), "{what}: kept: {stdout}");
        assert!(
            stdout.contains("were not reused") && stdout.contains(says),
            "{what}: says {says}: {stdout}"
        );
        assert!(
            std::fs::read(out.join("replications.csv")).unwrap()
                == std::fs::read(fresh.join("replications.csv")).unwrap(),
            "{what}: the rows differ from a fresh sweep's"
        );
    }
}

const BAND: &str = "scenarios/metastable-band.toml";

/// `resim boundary` on the metastable band (thresholds.pass over the rate),
/// into `out`, with `jobs` threads.
fn band_boundary(out: &std::path::Path, jobs: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("resim"));
    cmd.arg("boundary")
        .arg(scenario(BAND))
        .args(["--axis", "workload.rate_rps=10..40"])
        .args(["--metric", "thresholds.pass", "--target", "0.5"])
        .args(["--set", "workload.duration_ms=300000"])
        .args([
            "--set",
            r#"thresholds={ "outcomes.answered_pct" = ">= 90" }"#,
        ])
        .args(["-n", "4", "--tolerance", "2", "--jobs", jobs, "--out"])
        .arg(out);
    cmd
}

#[test]
fn an_interrupted_boundary_keeps_its_values_and_goes_on_from_them() {
    let work = tempfile::tempdir().unwrap();
    let whole = work.path().join("whole");
    let r = band_boundary(&whole, "2").output().unwrap();
    assert!(r.status.success(), "{r:?}");
    assert!(!whole.join("boundary.partial.csv").exists());
    // stopped once the first point's replications are evaluated: by SIGTERM,
    // which ends the process as Ctrl-C's SIGINT does; SIGINT itself is
    // ignored by every process of a test run started as a background job
    // (a shell without job control sets it so), and the search then ran on
    let cut = work.path().join("cut");
    let mut child = band_boundary(&cut, "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let partial = cut.join("boundary.partial.csv");
    let values = || {
        std::fs::read_to_string(&partial)
            .unwrap_or_default()
            .lines()
            .skip(2)
            .count()
    };
    let mut kept = 0;
    while child.try_wait().unwrap().is_none() {
        kept = values();
        if kept >= 4 {
            let kill = std::process::Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(kill.success());
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let status = child.wait().unwrap();
    assert!(kept >= 4, "the search ended before it could be interrupted");
    assert!(!status.success(), "{status:?}");
    assert!(values() >= kept, "the evaluated values are kept");
    // the same command goes on from them, to the bytes of a search never stopped
    let again = band_boundary(&cut, "1").output().unwrap();
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{again:?}");
    assert!(stdout.contains("Resumed: "), "{stdout}");
    for f in ["boundary.csv", "crossing.csv"] {
        assert!(
            std::fs::read(cut.join(f)).unwrap() == std::fs::read(whole.join(f)).unwrap(),
            "{f} differs from the uninterrupted search's"
        );
    }
    assert!(!partial.exists(), "a complete search removes it");
}

#[test]
fn a_boundary_on_a_metric_without_values_says_so_not_no_crossing() {
    // at a rate of one request in 1000 s, a 1 s run answers none: no p99
    let dir = tempfile::tempdir().unwrap();
    let r = resim()
        .arg("boundary")
        .arg(scenario(BAND))
        .args(["--axis", "workload.rate_rps=0.001..0.002"])
        .args(["--metric", "outcomes.p99_ms", "--target", "100"])
        .args(["--set", "workload.duration_ms=1000", "-n", "4", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(r.status.success(), "{r:?}");
    let stdout = String::from_utf8_lossy(&r.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(!stdout.contains("no crossing"), "{stdout}");
    assert!(
        stdout.contains("outcomes.p99_ms has no value at rate_rps = 0.001")
            && stdout.contains("undefined"),
        "{stdout}"
    );
    let crossing = std::fs::read_to_string(dir.path().join("crossing.csv")).unwrap();
    assert!(crossing.contains(",no_value,"), "{crossing}");
    let points = std::fs::read_to_string(dir.path().join("boundary.csv")).unwrap();
    assert!(
        points.lines().skip(1).all(|l| l.ends_with(",no_value")),
        "{points}"
    );
}

#[test]
fn a_boundary_grid_list_has_the_cap_of_grid() {
    let list: Vec<String> = (1..=101).map(|i| i.to_string()).collect();
    let dir = tempfile::tempdir().unwrap();
    let r = resim()
        .arg("boundary")
        .arg(scenario(BAND))
        .args(["--axis", "workload.rate_rps=10..40", "--axis"])
        .arg(format!("workload.duration_ms=[{}]", list.join(",")))
        .args(["--metric", "recovery.stuck", "--target", "0.5", "--out"])
        .arg(dir.path().join("o"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("workload.duration_ms: 101 values") && stderr.contains("at most 100"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("o").exists(),
        "refused before anything ran"
    );
}

#[test]
fn a_fixed_concurrency_limits_mean_is_its_limit_however_large() {
    for limit in ["1000000000000001", "333333333333333"] {
        let dir = crate::common::run_into(
            &scenario("scenarios/adaptive-limits.toml"),
            &[
                "--quiet",
                "--set",
                "compare={}",
                "--set",
                &format!("limiters.fixed.limit={limit}"),
            ],
        );
        for table in ["concurrency", "timeseries_concurrency"] {
            let csv = crate::common::Csv::read(&dir.path().join(format!("{table}.csv")));
            assert!(!csv.rows.is_empty());
            for row in &csv.rows {
                let (mean, min, max) = (
                    crate::common::num(row, "mean_limit"),
                    crate::common::num(row, "min_limit"),
                    crate::common::num(row, "max_limit"),
                );
                assert!(
                    min <= mean && mean <= max,
                    "{table}, limit {limit}: mean {} outside [{}, {}]",
                    row["mean_limit"],
                    row["min_limit"],
                    row["max_limit"]
                );
            }
        }
    }
}

#[test]
fn an_envoy_sweep_period_below_its_millisecond_is_refused_naming_the_field() {
    let yaml = std::fs::read_to_string(
        crate::common::root().join("tests/fixtures/configs/envoy-bootstrap.yaml"),
    )
    .unwrap();
    assert!(yaml.contains("interval: 5s"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("envoy.yaml");
    std::fs::write(&file, yaml.replace("interval: 5s", "interval: 0.0001s")).unwrap();
    let out = dir.path().join("envoy.toml");
    let r = resim()
        .arg("import")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("bug in resim import"), "{stderr}");
    assert!(
        stderr.contains("outlier_detection.interval: 0.1 ms is below Envoy's resolution of 1 ms"),
        "{stderr}"
    );
    assert!(!out.exists());
}

#[test]
fn a_merge_of_rows_times_replications_past_64_bits_is_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("s");
    resim()
        .args(["sweep", "-q", "-n", "2", "--no-report", "--out"])
        .arg(&sweep)
        .arg(scenario(AY10))
        .assert()
        .success();
    let path = sweep.join("manifest.toml");
    let text: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| {
            if l.starts_with("rows = ") {
                "rows = 4294967296".to_string()
            } else if l.starts_with("replications = ") {
                "replications = 4294967296".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&path, text).unwrap();
    let r = resim()
        .arg("merge")
        .arg(&sweep)
        .arg("--out")
        .arg(dir.path().join("m"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("manifest.toml")
            && stderr
                .contains("rows (4294967296) x replications (4294967296) does not fit in 64 bits"),
        "{stderr}"
    );
}

#[test]
fn an_overflowing_figures_empty_csv_cell_is_explained_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let r = resim()
        .current_dir(crate::common::root())
        .args(["run", "tests/bad/set-base.toml", "--quiet", "--out"])
        .arg(dir.path())
        .args(["--set", "slo.peak_read_rps=1.7e308"])
        .output()
        .unwrap();
    assert!(r.status.success(), "{r:?}");
    let csv = crate::common::Csv::read(&dir.path().join("outcomes.csv"));
    assert_eq!(csv.rows[0]["held_slots"], "");
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("outcomes.csv: empty where the figure is not a finite number")
            && stderr.contains("held_slots, total_slots"),
        "{stderr}"
    );
    // without the overflow, no such warning
    let r = resim()
        .current_dir(crate::common::root())
        .args(["run", "tests/bad/set-base.toml", "--quiet", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&r.stderr).contains("not a finite number"));
}

/// Two shards given one `--out`: the second would replace the first's
/// results, so it is refused naming the folder and the slice it holds, and
/// the folder keeps the first's bytes; the same shard again replaces itself,
/// and so does a whole sweep (every unit).
#[test]
fn a_shard_into_another_shards_folder_is_refused_and_leaves_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sw");
    let sweep = |shard: Option<&str>| {
        let mut cmd = resim();
        cmd.arg("sweep")
            .arg(scenario(MONTECARLO))
            .args(["-n", "4", "--quiet", "--no-report", "--out"])
            .arg(&out);
        if let Some(s) = shard {
            cmd.args(["--shard", s]);
        }
        let o = cmd.output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, err) = sweep(Some("1/2"));
    assert_eq!(code, 0, "{err}");
    let first = crate::common::folder_bytes(&out);
    let (code, err) = sweep(Some("2/2"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("holds the results of shard 1/2") && err.contains("shard 2/2 would replace"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        crate::common::folder_bytes(&out),
        first,
        "the first shard's files changed"
    );
    let (code, err) = sweep(Some("1/2"));
    assert_eq!(code, 0, "the same shard again replaces itself: {err}");
    // a whole sweep holds every unit: it replaces a shard as a rerun does
    let (code, err) = sweep(None);
    assert_eq!(code, 0, "{err}");
}

/// Outlier detection counts its picks per sweep interval and replica
/// (timeseries_replicas.csv): with a 1 ms sweep, 2 replicas and a run of
/// 6,000 s that is 12 million counts; the run stops on the limit of
/// 10 million (at 5,000 s), naming the detector's key, instead of holding
/// counts that grow with the run's length.
#[test]
fn outlier_counts_per_sweep_interval_stop_on_the_series_limit() {
    let (_dir, file) = crate::common::file_with(
        r#"[scenario]
name = "outlier-long"
seed = 1

[services.api]
routes = ["/api"]
replicas = 2

[services.api.outlier_detection]
interval_ms = 1

[services.api.handler]
type = "server"
slots = 1
queue = 10
service = { constant = 5 }

[workload]
type = "open"
rate_rps = 0.02
arrivals = "poisson"
duration_ms = 6000000
"#,
    );
    let out = tempfile::tempdir().unwrap();
    let o = resim()
        .args(["run", "-q", "--no-report", "--out"])
        .arg(out.path())
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "services.api.outlier_detection: the run passed 10000000 sweep intervals x replicas"
        ) && err.contains("raise services.api.outlier_detection.interval_ms"),
        "{err}"
    );
}
