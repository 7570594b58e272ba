//! Hostile input, round 2 (issue 18): what an outside attack found beyond the
//! tests/bad battery. Each test fails on the code before its fix.

use crate::common::scenario;
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
