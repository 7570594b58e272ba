//! `resim tune --shard K/N`: shards running at once share each step's runs
//! through the output folder and give the bytes one process gives; a shard
//! left alone makes the others' runs itself; runs of another tuning are
//! refused.

use crate::common::*;
use std::path::Path;
use std::process::Stdio;

const EXAMPLE: &str = "scenarios/examples/tune-deadline-retries.toml";

/// The example's tuning (its `[tune]` table, a smaller budget) into `out`.
fn args(out: &Path) -> Vec<String> {
    vec![
        "tune".into(),
        scenario(EXAMPLE).display().to_string(),
        "--budget".into(),
        "400".into(),
        "-q".into(),
        "--out".into(),
        out.display().to_string(),
    ]
}

#[test]
fn shards_running_at_once_give_the_bytes_of_one_process() {
    let whole = tempfile::tempdir().expect("tempdir");
    resim().args(args(whole.path())).assert().success();
    let sharded = tempfile::tempdir().expect("tempdir");
    let bin = assert_cmd::cargo::cargo_bin("resim");
    let children: Vec<_> = (1..=3)
        .map(|k| {
            std::process::Command::new(&bin)
                .args(args(sharded.path()))
                .args(["--shard", &format!("{k}/3"), "-j", "1"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("a shard starts")
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().expect("a shard ends");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (a, b) = (folder_bytes(whole.path()), folder_bytes(sharded.path()));
    assert!(a.contains_key("tune.csv") && a.contains_key("report.html"));
    assert_eq!(a, b, "the same files, byte for byte");
    // every shard wrote runs of its own
    let runs: Vec<String> = std::fs::read_dir(sharded.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for k in 1..=3 {
        let mine = format!("-shard-{k}-of-3.csv");
        assert!(runs.iter().any(|n| n.ends_with(&mine)), "{runs:?}");
    }
}

#[test]
fn a_shard_left_alone_ends_and_runs_of_another_tuning_are_refused() {
    let whole = tempfile::tempdir().expect("tempdir");
    resim().args(args(whole.path())).assert().success();
    // shard 1 of 4 with no other shard running makes every slice itself
    let alone = tempfile::tempdir().expect("tempdir");
    resim()
        .args(args(alone.path()))
        .args(["--shard", "1/4"])
        .assert()
        .success();
    assert_eq!(folder_bytes(whole.path()), folder_bytes(alone.path()));
    // a shard started after the search ended finds every run there
    let late = resim()
        .args(args(alone.path()))
        .args(["--shard", "3/4"])
        .arg("--no-report")
        .assert()
        .success();
    assert!(late.get_output().stdout.is_empty(), "--quiet");
    assert_eq!(
        folder_bytes(whole.path()),
        folder_bytes(alone.path()),
        "only shard 1 writes the results"
    );
    // the same folder for another scenario's tuning: refused, nothing run
    let out = resim()
        .args(args(alone.path()))
        .args(["--shard", "2/4", "--set", "scenario.seed=7"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("holds the runs of another tuning"), "{err}");
    let out = resim()
        .args(args(alone.path()))
        .args(["--shard", "5/4"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("--shard 5/4"), "{err}");
}

#[test]
fn a_slice_claimed_by_a_shard_that_stopped_is_made_by_another() {
    // the steps' names, from a tuning by one shard alone
    let first = tempfile::tempdir().expect("tempdir");
    resim()
        .args(args(first.path()))
        .args(["--shard", "1/2"])
        .assert()
        .success();
    let claims: Vec<String> = std::fs::read_dir(first.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-shard-2-of-2.claim"))
        .collect();
    assert!(claims.len() >= 3, "{claims:?}");
    // a folder where shard 2 claimed every slice and stopped: shard 1 makes
    // them once it has waited --shard-wait seconds
    let stale = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(stale.path().join("runs")).unwrap();
    for c in &claims {
        std::fs::write(stale.path().join("runs").join(c), "").unwrap();
    }
    let out = resim()
        .args(args(stale.path()))
        .args(["--shard", "1/2", "--shard-wait", "0"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("making them here"), "{err}");
    assert_eq!(folder_bytes(first.path()), folder_bytes(stale.path()));
}
