//! Output safety through the real binary: a failure part-way through writing or
//! running leaves only complete files (the previous or the new version, never a
//! truncated one) and no temporary files.
//!
//! Tests run as root on CI, where a read-only folder is still writable, so the
//! failures are made with things root cannot write through: a folder where a CSV
//! file should go, and a run that stops on its event limit. A rerun also owns its
//! folder: the previous run's files it does not write again are removed, and
//! nothing else.

use crate::common::{resim, scenario};
use std::collections::BTreeMap;
use std::path::Path;

const AY10: &str = "scenarios/ay10-tariff-slowdown.toml";

fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("output folder")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).expect("readable"))
        })
        .collect()
}

fn run(out: &Path, extra: &[&str]) -> std::process::Output {
    resim()
        .arg("run")
        .arg(scenario(AY10))
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .args(extra)
        .output()
        .expect("resim runs")
}

#[test]
fn a_blocked_file_leaves_the_previous_run_exactly_as_it_was() {
    let old_dir = tempfile::tempdir().expect("temp");
    assert!(run(old_dir.path(), &[]).status.success());
    let old = contents(old_dir.path());
    let new_dir = tempfile::tempdir().expect("temp");
    assert!(
        run(new_dir.path(), &["--set", "workload.requests=24"])
            .status
            .success()
    );
    let new = contents(new_dir.path());
    assert_eq!(
        old.keys().collect::<Vec<_>>(),
        new.keys().collect::<Vec<_>>()
    );
    assert!(
        old.iter().filter(|(n, b)| new[*n] != **b).count() > 1,
        "the rerun must change several files for this test to bite"
    );

    // Rerun the changed scenario over the old output, with a folder where one of
    // the middle files should go: files before it and after it would be renamed.
    let names: Vec<&String> = old.keys().filter(|n| n.ends_with(".csv")).collect();
    let blocked = names[names.len() / 2].clone();
    std::fs::remove_file(old_dir.path().join(&blocked)).expect("remove");
    std::fs::create_dir(old_dir.path().join(&blocked)).expect("block");
    let out = run(old_dir.path(), &["--set", "workload.requests=24"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&blocked),
        "the error names the file: {stderr}"
    );

    // Every other file (the record of resim's files too) is the previous run's,
    // byte for byte, and no temporary is left.
    let mut expected = old.clone();
    expected.remove(&blocked);
    let after = contents(old_dir.path());
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "temporaries left behind, or files lost"
    );
    for (name, bytes) in &after {
        assert!(bytes == &old[name], "{name} is not the previous run's");
    }

    // Once the way is clear, the rerun writes the new set whole.
    std::fs::remove_dir(old_dir.path().join(&blocked)).expect("unblock");
    assert!(
        run(old_dir.path(), &["--set", "workload.requests=24"])
            .status
            .success()
    );
    assert!(contents(old_dir.path()) == new, "not the new run's files");
}

#[test]
fn a_rerun_removes_the_files_of_the_last_run_it_does_not_write_and_nothing_else() {
    let shards = scenario("scenarios/breaker-shards.toml");
    let run_shards = |out: &Path, extra: &[&str]| {
        resim()
            .arg("run")
            .arg(&shards)
            .arg("--out")
            .arg(out)
            .arg("--quiet")
            .args(extra)
            .assert()
            .success();
    };
    let dir = tempfile::tempdir().expect("temp");
    let d = dir.path();
    // The user's own files: notes, and a sheet under a name resim writes in sweeps.
    let mine = [("notes.txt", "mine"), ("summary.csv", "my,sheet\n")];
    for (name, text) in mine {
        std::fs::write(d.join(name), text).expect("write");
    }
    run_shards(d, &["--trace", "2"]);
    let first = contents(d);
    for f in [
        "recovery.csv",
        "timeseries.csv",
        "timeseries_services.csv",
        "trace.json",
    ] {
        assert!(first.contains_key(f), "the first run writes {f}");
    }

    // Without faults (nor --trace) those files are not written: the rerun removes
    // the first run's copies and leaves the folder as a fresh run's plus the user's.
    run_shards(d, &["--set", "faults=[]"]);
    let fresh = tempfile::tempdir().expect("temp");
    run_shards(fresh.path(), &["--set", "faults=[]"]);
    let mut expected = contents(fresh.path());
    for (name, text) in mine {
        expected.insert(name.to_string(), text.as_bytes().to_vec());
    }
    let after = contents(d);
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &after {
        assert!(
            bytes == &expected[name],
            "{name} differs from a fresh run's"
        );
    }
}

#[test]
fn a_run_that_fails_part_way_keeps_the_finished_scenarios_output() {
    let dir = tempfile::tempdir().expect("temp");
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).expect("mkdir");
    std::fs::copy(scenario(AY10), scenarios.join("a-ay10.toml")).expect("copy");
    std::fs::copy(
        scenario("tests/bad/runaway-zero-time-loop.toml"),
        scenarios.join("b-runaway.toml"),
    )
    .expect("copy");
    let out_dir = dir.path().join("out");
    // the failing scenario's previous output must survive its failed run
    std::fs::create_dir_all(out_dir.join("b-runaway")).expect("mkdir");
    std::fs::write(out_dir.join("b-runaway/previous.csv"), "a\n1\n").expect("write");

    let out = resim()
        .arg("run")
        .arg(&scenarios)
        .arg("--out")
        .arg(&out_dir)
        .arg("--quiet")
        .output()
        .expect("resim runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("scenario.max_events"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let single = tempfile::tempdir().expect("temp");
    assert!(run(single.path(), &[]).status.success());
    assert_eq!(
        contents(&out_dir.join("a-ay10")),
        contents(single.path()),
        "the scenario that finished has its whole output"
    );
    assert_eq!(
        contents(&out_dir.join("b-runaway")),
        BTreeMap::from([("previous.csv".to_string(), b"a\n1\n".to_vec())]),
        "the failed scenario left its folder as it was"
    );
}
