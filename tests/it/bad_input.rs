//! The bad-input battery (tests/bad/, described in its README): every hostile file
//! or command line gets exit code 2 and its exact message, never a panic and never
//! a file in the output folder.

use crate::common::{resim, root};
use std::path::Path;

struct Case {
    name: String,
    args: Vec<String>,
    expected: String,
}

fn cases() -> Vec<Case> {
    let dir = root().join("tests/bad");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/bad exists")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".expected").map(String::from)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(format!("{name}.expected")))
                .expect("readable .expected");
            let (args, expected) = match text.strip_prefix("args: ") {
                Some(rest) => {
                    let (line, msg) = rest.split_once('\n').unwrap_or((rest, ""));
                    (line.to_string(), msg.to_string())
                }
                None => ("run {file} --out {tmp}".to_string(), text),
            };
            Case {
                args: args.split_whitespace().map(String::from).collect(),
                expected: expected.trim_end().to_string(),
                name,
            }
        })
        .collect()
}

/// Runs one case; returns what went wrong, if anything.
fn check(case: &Case) -> Option<String> {
    let tmp = tempfile::tempdir().expect("temp dir");
    let file = format!("tests/bad/{}.toml", case.name);
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| {
            a.replace("{file}", &file)
                .replace("{tmp}", &tmp.path().display().to_string())
        })
        .collect();
    let out = resim()
        .current_dir(root())
        .args(&args)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .expect("resim runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut problems = Vec::new();
    if out.status.code() != Some(2) {
        problems.push(format!("exit code {:?}, expected 2", out.status.code()));
    }
    if stderr.contains("panicked") {
        problems.push("panicked".to_string());
    }
    let got = stderr.trim_end().strip_prefix("error: ").unwrap_or(&stderr);
    if got != case.expected {
        problems.push(format!(
            "message differs\n   got: {got}\n  want: {}",
            case.expected
        ));
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    if !left.is_empty() {
        problems.push(format!("left files in --out: {left:?}"));
    }
    (!problems.is_empty()).then(|| {
        format!(
            "{} ({}): {}",
            case.name,
            args.join(" "),
            problems.join("; ")
        )
    })
}

#[test]
fn every_bad_input_exits_2_with_its_message() {
    let cases = cases();
    assert!(cases.len() >= 40, "the battery lost cases: {}", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(check).collect();
    assert!(
        failures.is_empty(),
        "{} of {} bad-input cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_bad_file_has_its_case() {
    let dir = root().join("tests/bad");
    let cases = cases();
    let used = |stem: &str| {
        cases
            .iter()
            .any(|c| c.name == stem || c.args.iter().any(|a| a.contains(&format!("{stem}.toml"))))
    };
    for e in std::fs::read_dir(&dir)
        .expect("tests/bad")
        .filter_map(|e| e.ok())
    {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "toml") {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            assert!(used(&stem), "{} is used by no case", path.display());
        }
    }
}

#[test]
fn messages_name_file_position_and_key_path() {
    // Every case about a value inside a file points at its line and column.
    for case in cases() {
        if !Path::new(&root().join(format!("tests/bad/{}.toml", case.name))).exists()
            || case.args.iter().any(|a| a.starts_with("--set"))
        {
            continue;
        }
        let exempt = [
            "bad-utf8",
            "unwritable-out",
            "runaway-zero-time-loop",
            "runaway-flood",
            "runaway-abandoned-calls",
            "runaway-limiter-window",
            "runaway-sim-time",
            "runaway-series-limiter-rows",
        ];
        if exempt.contains(&case.name.as_str()) {
            continue;
        }
        let prefix = format!("tests/bad/{}.toml", case.name);
        let rest = case
            .expected
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{}: the message does not start with the file", case.name));
        let pos: Vec<&str> = rest.splitn(4, ':').collect();
        assert!(
            pos.len() == 4 && pos[1].parse::<u32>().is_ok() && pos[2].parse::<u32>().is_ok(),
            "{}: no line:column in `{}`",
            case.name,
            case.expected
        );
    }
}
