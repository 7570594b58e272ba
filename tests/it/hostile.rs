//! Hostile input, round 2 (issue 18): what an outside attack found beyond the
//! tests/bad battery. Each test fails on the code before its fix.

use crate::common::{folder_bytes, scenario};
use std::process::{Command, Stdio};

const AY10: &str = "scenarios/ay10-tariff-slowdown.toml";

/// Runs the real binary with `args`, its stdout closed at once (`| true`).
fn with_closed_stdout(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_resim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("resim starts");
    drop(child.stdout.take());
    child.wait_with_output().expect("resim ends")
}

/// Runs the real binary with `args` and its stdout on /dev/full (a full disk).
fn with_full_stdout(args: &[&std::ffi::OsStr]) -> Option<std::process::Output> {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .ok()?;
    Some(
        Command::new(env!("CARGO_BIN_EXE_resim"))
            .args(args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .expect("resim runs"),
    )
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

#[test]
fn sweep_and_merge_cope_with_a_closed_or_full_stdout() {
    let work = tempfile::tempdir().unwrap();
    let ay10 = scenario(AY10);
    let shard = |k: u32| work.path().join(format!("s{k}"));
    for k in [1, 2] {
        let out = shard(k);
        let spec = format!("{k}/2");
        let args = [
            os("sweep"),
            os("-n"),
            os("2"),
            os("--shard"),
            os(&spec),
            os("--out"),
            out.as_os_str(),
            ay10.as_os_str(),
        ];
        let r = with_closed_stdout(&args);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "sweep | true: {:?} {stderr}", r.status);
        assert!(!stderr.contains("panicked"), "{stderr}");
        if let Some(r) = with_full_stdout(&args) {
            let stderr = String::from_utf8_lossy(&r.stderr);
            assert_eq!(r.status.code(), Some(1), "sweep >/dev/full: {stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
            assert!(
                stderr.contains("cannot write the report to stdout"),
                "{stderr}"
            );
        }
    }
    let merged = work.path().join("m");
    let (s1, s2) = (shard(1), shard(2));
    let args = [
        os("merge"),
        os("--out"),
        merged.as_os_str(),
        s1.as_os_str(),
        s2.as_os_str(),
    ];
    let r = with_closed_stdout(&args);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "merge | true: {:?} {stderr}", r.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(merged.join("summary.csv").is_file());
    if let Some(r) = with_full_stdout(&args) {
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "merge >/dev/full: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

fn shell(script: &str) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("RESIM", env!("CARGO_BIN_EXE_resim"))
        .output()
        .expect("bash runs")
}

#[test]
fn a_named_pipe_as_scenario_is_refused_at_once() {
    let work = tempfile::tempdir().unwrap();
    let fifo = work.path().join("x.toml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo here: skipped");
        return;
    }
    for command in ["run", "check", "sweep"] {
        let out = crate::common::resim()
            .arg(command)
            .arg(&fifo)
            .timeout(std::time::Duration::from_secs(10))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.contains("not a regular file"), "{command}: {stderr}");
    }
}

#[test]
fn an_input_file_beyond_16_mib_is_refused_with_its_name() {
    let (_dir, file) = crate::common::file_with("[scenario]\nname = \"big\"\n");
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(17 * 1024 * 1024).unwrap(); // sparse: no disk used
    for command in ["run", "check", "sweep"] {
        let out = crate::common::resim()
            .arg(command)
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        assert!(
            stderr.contains(&file.display().to_string()) && stderr.contains("16 MiB"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn a_full_disk_mid_sweep_leaves_only_whole_rows() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("o");
    // File size limit 16 KiB (bash counts ulimit -f in KiB): writes past it fail
    // as on a full disk; SIGXFSZ ignored so the write returns the error.
    let r = shell(&format!(
        "trap '' XFSZ; ulimit -f 16; exec \"$RESIM\" sweep --quiet -n 50 -j 1 --out '{}' '{}'",
        out.display(),
        scenario(AY10).display()
    ));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // the rows stay in the staging file: the sweep did not complete
    assert!(!out.join("replications.csv").exists());
    let text = std::fs::read_to_string(out.join("replications.partial.csv")).unwrap();
    assert!(text.len() > 1000 && text.len() <= 16384, "{}", text.len());
    assert!(
        text.ends_with('\n'),
        "partial last line: {:?}",
        &text[text.len() - 80..]
    );
    let widths: std::collections::BTreeSet<usize> = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().len())
        .collect();
    assert_eq!(widths.len(), 1, "rows of different widths: {widths:?}");
    // the count the message gives is the count of whole rows in the file
    let rows = text.lines().count() - 1;
    assert!(
        stderr.contains(&format!("the {rows} rows finished before it are kept")),
        "{rows} rows in the file: {stderr}"
    );
}

/// Two shards of a small AY10 sweep and a good merge of them in `m`.
fn shards_and_merge(work: &std::path::Path) -> [std::path::PathBuf; 3] {
    let [s1, s2, m] = ["s1", "s2", "m"].map(|d| work.join(d));
    for (k, out) in [(1, &s1), (2, &s2)] {
        crate::common::resim()
            .args(["sweep", "--quiet", "-n", "2", "--shard"])
            .arg(format!("{k}/2"))
            .arg("--out")
            .arg(out)
            .arg(scenario(AY10))
            .assert()
            .success();
    }
    merge(&m, &s1, &s2).success();
    [s1, s2, m]
}

fn merge(
    m: &std::path::Path,
    s1: &std::path::Path,
    s2: &std::path::Path,
) -> assert_cmd::assert::Assert {
    crate::common::resim()
        .args(["merge", "--quiet", "--out"])
        .arg(m)
        .arg(s1)
        .arg(s2)
        .assert()
}

#[test]
fn merge_checks_every_shard_before_touching_its_output_and_blames_the_shard() {
    let work = tempfile::tempdir().unwrap();
    let [s1, s2, m] = shards_and_merge(work.path());
    let before = folder_bytes(&m);
    // swap two rows of one replication in shard 2
    let path = s2.join("replications.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(1, 2);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = merge(&m, &s1, &s2).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&path.display().to_string()) && stderr.contains("in order"),
        "{stderr}"
    );
    assert!(folder_bytes(&m) == before, "the earlier merge was changed");
}

#[test]
fn merge_refuses_a_shard_whose_numbers_were_altered_after_its_sweep() {
    let work = tempfile::tempdir().unwrap();
    let [s1, s2, m] = shards_and_merge(work.path());
    let before = folder_bytes(&m);
    for file in ["replications.csv", "histograms.csv"] {
        let path = s2.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        // one digit of the last line changed: still a well-formed file
        let at = text
            .trim_end()
            .rfind(|c: char| c.is_ascii_digit() && c != '9')
            .unwrap();
        let mut bytes = text.clone().into_bytes();
        bytes[at] += 1;
        std::fs::write(&path, &bytes).unwrap();
        let out = merge(&m, &s1, &s2).code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            stderr.contains(&path.display().to_string())
                && stderr.contains("was changed after the sweep wrote it"),
            "{file}: {stderr}"
        );
        assert!(folder_bytes(&m) == before, "the earlier merge was changed");
        std::fs::write(&path, text).unwrap();
    }
    // restored, the shards merge again, to the same bytes
    merge(&m, &s1, &s2).success();
    assert!(folder_bytes(&m) == before);
}

#[test]
fn merge_refuses_a_manifest_confidence_out_of_range() {
    let work = tempfile::tempdir().unwrap();
    let [s1, s2, m] = shards_and_merge(work.path());
    for s in [&s1, &s2] {
        let path = s.join("manifest.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("confidence = 0.95"), "{text}");
        std::fs::write(&path, text.replace("confidence = 0.95", "confidence = 1.5")).unwrap();
    }
    let out = merge(&m, &s1, &s2).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("manifest.toml:") && stderr.contains("confidence: must be in (0, 1)"),
        "{stderr}"
    );
}

#[test]
fn a_second_sweep_into_a_locked_folder_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("o");
    std::fs::create_dir(&out).unwrap();
    // Hold the lock the way a running sweep does.
    let held = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(out.join(".resim.lock"))
        .unwrap();
    held.try_lock().unwrap();
    let r = crate::common::resim()
        .args(["sweep", "--quiet", "-n", "1", "--out"])
        .arg(&out)
        .arg(scenario(AY10))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("another `resim sweep`"), "{stderr}");
    assert!(!out.join("replications.csv").exists());
    drop(held);
    crate::common::resim()
        .args(["sweep", "--quiet", "-n", "1", "--out"])
        .arg(&out)
        .arg(scenario(AY10))
        .assert()
        .success();
}

#[test]
fn two_scenarios_with_one_file_name_are_refused_before_running() {
    let work = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(scenario(AY10)).unwrap();
    for d in ["a", "b"] {
        std::fs::create_dir(work.path().join(d)).unwrap();
        std::fs::write(work.path().join(d).join("x.toml"), &text).unwrap();
    }
    let out = work.path().join("out");
    let r = crate::common::resim()
        .current_dir(work.path())
        .args(["run", "--quiet", "a/x.toml", "b/x.toml", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("b/x.toml") && stderr.contains("a/x.toml"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn temporaries_of_a_killed_run_are_cleaned_by_the_next_run() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("o");
    std::fs::create_dir(&out).unwrap();
    // pid 4194304 is above Linux's pid_max: surely no live process
    let stale = out.join(".outcomes.csv.4194304.tmp");
    let other = out.join(".notes.4194304.tmp"); // not our pattern: kept
    let backup = out.join(".report.html.4194304.old"); // a killed run's backup
    std::fs::write(&stale, "half a tab").unwrap();
    std::fs::write(&backup, "an old page").unwrap();
    std::fs::write(&other, "user file").unwrap();
    crate::common::resim()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(scenario(AY10))
        .assert()
        .success();
    assert!(!stale.exists(), "the stale temporary is still there");
    assert!(!backup.exists(), "the stale backup is still there");
    assert!(other.exists(), "a file of another pattern was removed");
}

/// Runs `resim check` on generated text; fails if it takes longer than `limit`.
fn check_within(text: &str, limit_s: u64) -> std::process::Output {
    let (_dir, file) = crate::common::file_with(text);
    let start = std::time::Instant::now();
    let out = crate::common::resim()
        .arg("check")
        .arg(&file)
        .timeout(std::time::Duration::from_secs(limit_s))
        .output()
        .unwrap();
    assert!(
        start.elapsed().as_secs() < limit_s,
        "took {:?}",
        start.elapsed()
    );
    out
}

#[test]
fn a_misspelt_30_kb_name_is_answered_at_once() {
    // The suggestion search was length x length per candidate: 4-11 s (release).
    let name = "a".repeat(30_000);
    let text = format!(
        "[scenario]\nname = \"t\"\n[services.s]\nroutes = [\"/x\"]\nhandler = {{ type = \"plan\", budget = 100, branches = [{{ name = \"b\", calls = [\"{name}x\"] }}] }}\n[dependencies.{name}]\nlatency = {{ constant = 1 }}\n[workload]\ntype = \"sequence\"\nrequests = 1\n"
    );
    let out = check_within(&text, 5);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no service or dependency named"));
}

#[test]
fn check_on_20000_services_and_a_2000_value_axis_is_near_linear() {
    // Routes were searched linearly per route and per service (quadratic), and
    // every compare row copied and searched the whole file.
    let mut text = String::from("[scenario]\nname = \"many\"\n");
    for i in 0..20_000 {
        text.push_str(&format!("[services.s{i}]\nroutes = [\"/r{i}\"]\n"));
    }
    text.push_str("[workload]\ntype = \"sequence\"\nrequests = 1\nroute = \"/r0\"\n");
    let out = check_within(&text, 20);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let values: Vec<String> = (0..2000).map(|i| i.to_string()).collect();
    let text = format!(
        "[scenario]\nname = \"axis\"\n[services.s]\nroutes = [\"/x\"]\nhandler = {{ type = \"server\", slots = 1, queue = 0, service = {{ constant = 1 }} }}\n[workload]\ntype = \"sequence\"\nrequests = 1\n[compare]\n\"services.s.handler.queue\" = [{}]\n",
        values.join(", ")
    );
    let out = check_within(&text, 20);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
