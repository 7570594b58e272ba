//! Messages for input a file cannot express in `tests/bad/`: a loop of symbolic
//! links, a link to nothing, UTF-16 files with and without a byte order mark, and
//! a UTF-8 byte order mark (accepted).

use crate::common::{resim, root};
use std::path::Path;

/// Runs `resim ARGS` in `dir`; returns (exit code, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = resim()
        .current_dir(dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .expect("resim runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
    )
}

fn base_text() -> String {
    std::fs::read_to_string(root().join("tests/bad/set-base.toml")).expect("set-base.toml")
}

#[cfg(unix)]
#[test]
fn a_loop_of_symbolic_links_is_called_a_loop() {
    let tmp = tempfile::tempdir().expect("temp dir");
    std::os::unix::fs::symlink("b.toml", tmp.path().join("a.toml")).expect("link a");
    std::os::unix::fs::symlink("a.toml", tmp.path().join("b.toml")).expect("link b");
    let loop_msg = "too many levels of symbolic links (the path is a loop of symbolic links)";
    for command in ["run", "check"] {
        let (code, err) = run_in(tmp.path(), &[command, "a.toml"]);
        assert_eq!(code, Some(2), "{command}: {err}");
        assert_eq!(err, format!("error: a.toml: {loop_msg}"), "{command}");
    }
    let (code, err) = run_in(tmp.path(), &["sweep", "a.toml", "--out", "o"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err,
        format!("error: a.toml: cannot read the scenario file: {loop_msg}")
    );
    std::os::unix::fs::symlink("gone.toml", tmp.path().join("c.toml")).expect("link c");
    let (code, err) = run_in(tmp.path(), &["run", "c.toml"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err,
        "error: c.toml: a symbolic link to gone.toml, which does not exist"
    );
}

#[test]
fn utf16_files_are_called_utf16() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let text = base_text();
    let units: Vec<u16> = text.encode_utf16().collect();
    let le: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
    let be: Vec<u8> = units.iter().flat_map(|u| u.to_be_bytes()).collect();
    let files: [(&str, Vec<u8>, &str); 3] = [
        (
            "bom-le.toml",
            [vec![0xFF, 0xFE], le.clone()].concat(),
            "it starts with a UTF-16 byte order mark",
        ),
        (
            "bom-be.toml",
            [vec![0xFE, 0xFF], be.clone()].concat(),
            "it starts with a UTF-16 byte order mark",
        ),
        ("le.toml", le, "every other byte is 0"),
    ];
    for (name, bytes, why) in files {
        std::fs::write(tmp.path().join(name), bytes).expect("write");
        for args in [
            vec!["run", name, "--out", "o"],
            vec!["sweep", name, "--out", "o"],
        ] {
            let (code, err) = run_in(tmp.path(), &args);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            let kind = if why.contains("mark") {
                format!("the file is UTF-16 ({why})")
            } else {
                format!("the file is UTF-16 without a byte order mark ({why})")
            };
            assert_eq!(
                err,
                format!(
                    "error: {name}: cannot read the scenario file: {kind}: save it as UTF-8 (most editors offer the encoding under \"Save as\")"
                ),
                "{args:?}"
            );
        }
        assert!(!tmp.path().join("o").exists(), "{name}: no output");
    }
    std::fs::write(tmp.path().join("be.toml"), be).expect("write");
    let (code, err) = run_in(tmp.path(), &["check", "be.toml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("UTF-16 without a byte order mark"), "{err}");
}

#[test]
fn a_utf8_byte_order_mark_is_accepted() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend(base_text().bytes());
    std::fs::write(tmp.path().join("bom.toml"), bytes).expect("write");
    let (code, err) = run_in(tmp.path(), &["check", "bom.toml"]);
    assert_eq!(code, Some(0), "{err}");
    // positions on the first line are counted without the mark
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend(b"[scenario]\nname = 5\n");
    std::fs::write(tmp.path().join("bad.toml"), bytes).expect("write");
    let (code, err) = run_in(tmp.path(), &["check", "bad.toml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with("error: bad.toml:2:8: scenario.name: "),
        "{err}"
    );
}

/// A figure that overflows (peak_read_rps x mean_ms past 1.8e308) is an empty CSV
/// cell, and the report says why under its table, naming the column.
#[test]
fn an_overflowing_figure_is_named_under_its_table() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = tmp.path().join("o");
    let run = resim()
        .current_dir(root())
        .args(["run", "tests/bad/set-base.toml", "--tables", "--out"])
        .arg(&out)
        .args(["--set", "slo.peak_read_rps=1.7e308"])
        .output()
        .expect("resim runs");
    assert_eq!(run.status.code(), Some(0));
    let csv = crate::common::Csv::read(&out.join("outcomes.csv"));
    assert_eq!(csv.rows[0]["held_slots"], "");
    let stdout = String::from_utf8_lossy(&run.stdout).replace("\n  ", " ");
    let note = "empty where the figure is not a finite number (it overflowed past 1.8e308, or is 0/0; check the inputs it is computed from): held_slots, total_slots";
    assert!(stdout.contains(note), "{stdout}");
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(
        html.contains("held_slots, total_slots"),
        "the page names them"
    );
    // without the overflow, no such note
    let run = resim()
        .current_dir(root())
        .args(["run", "tests/bad/set-base.toml", "--out"])
        .arg(&out)
        .args(["--set", "slo.peak_read_rps=100"])
        .output()
        .expect("resim runs");
    assert!(!String::from_utf8_lossy(&run.stdout).contains("not a finite number"));
}
