//! Output safety through the real binary: a failure part-way through writing or
//! running leaves only complete files (the previous or the new version, never a
//! truncated one) and no temporary files.
//!
//! Tests run as root on CI, where a read-only folder is still writable, so the
//! failures are made with things root cannot write through: a folder where a CSV
//! file should go, and a run that stops on its event limit.

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

fn assert_whole_csv(name: &str, bytes: &[u8]) {
    let mut r = csv::Reader::from_reader(bytes);
    let width = r.headers().expect("headers").len();
    let rows: Vec<_> = r.records().map(|x| x.expect("record")).collect();
    assert!(!rows.is_empty(), "{name} has no rows");
    assert!(
        rows.iter().all(|x| x.len() == width),
        "{name} has a short row"
    );
    assert!(bytes.ends_with(b"\n"), "{name} does not end with a newline");
}

#[test]
fn a_blocked_csv_leaves_every_other_file_whole_and_no_temporaries() {
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

    // Rerun the changed scenario over the old output, with a folder where one of
    // the middle CSV files should go.
    let names: Vec<&String> = old.keys().collect();
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

    let after = contents(old_dir.path());
    let left: Vec<&String> = after
        .keys()
        .filter(|n| !n.ends_with(".csv") && *n != "report.html")
        .collect();
    assert!(left.is_empty(), "temporaries left behind: {left:?}");
    let mut changed = 0;
    for (name, bytes) in &after {
        if name.ends_with(".csv") {
            assert_whole_csv(name, bytes);
        }
        assert!(
            bytes == &old[name] || bytes == &new[name],
            "{name} is neither the previous nor the new version"
        );
        changed += usize::from(old[name] != new[name]);
    }
    assert_eq!(
        after.len(),
        old.len() - 1,
        "every other file is still there"
    );
    assert!(
        changed > 0,
        "the rerun must change some file for this test to bite"
    );
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
