//! The command line on real files: exit codes, messages, overrides.

use crate::common::*;
use predicates::prelude::*;

const AY10: &str = "scenarios/ay10-tariff-slowdown.toml";

/// The AY10 file with `from` replaced by `to`.
fn ay10_with(from: &str, to: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let text = std::fs::read_to_string(scenario(AY10)).unwrap();
    assert!(
        text.contains(from),
        "the AY10 file no longer contains {from:?}"
    );
    file_with(&text.replacen(from, to, 1))
}

#[test]
fn malformed_toml_names_file_and_position() {
    let (_d, path) = file_with("[scenario]\nname = \"x\n");
    resim()
        .arg("check")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("case.toml:2:"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn unknown_key_is_an_error_with_a_suggestion() {
    let (_d, path) = ay10_with("policy = \"greedy\"", "polcy = \"greedy\"");
    resim()
        .arg("run")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("case.toml:"))
        .stderr(predicate::str::contains("services.tracking.handler.polcy"))
        .stderr(predicate::str::contains("did you mean `policy`?"));
}

#[test]
fn unknown_top_level_key_has_exact_position() {
    let (_d, path) = ay10_with("[slo]\n", "[sol]\n");
    resim().arg("check").arg(&path).assert().code(2).stderr(
        predicate::str::is_match(r"case\.toml:\d+:\d+: sol: unknown key \(did you mean `slo`\?\)")
            .unwrap(),
    );
}

#[test]
fn wrong_type_names_the_key_path() {
    let (_d, path) = ay10_with("requests = 48", "requests = \"many\"");
    resim()
        .arg("check")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("case.toml:"))
        .stderr(predicate::str::contains("workload"))
        .stderr(predicate::str::contains("invalid type"));
}

#[test]
fn impossible_value_names_key_and_position() {
    let (_d, path) = ay10_with("median_ms = 6", "median_ms = -6");
    resim().arg("check").arg(&path).assert().code(2).stderr(
        predicate::str::is_match(
            r"case\.toml:\d+:\d+: dependencies\.tariff\.median_ms: must be > 0",
        )
        .unwrap(),
    );
}

#[test]
fn missing_file_exits_2_and_writes_nothing() {
    let out = tempfile::tempdir().unwrap();
    resim()
        .args(["run", "no/such/file.toml", "--out"])
        .arg(out.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/file.toml"));
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

#[test]
fn set_override_changes_a_result() {
    // Pin the compare grid to greedy/no cancellation, then slow the tariff store.
    let dir = run_into(
        &scenario(AY10),
        &[
            "--quiet",
            "--set",
            "compare.variant=[\"baseline\"]",
            "--set",
            "compare.\"services.tracking.handler.policy\"=[\"greedy\"]",
            "--set",
            "compare.\"services.tracking.handler.cancellation\"=[false]",
        ],
    );
    let base = Csv::read(&dir.path().join("outcomes.csv"));
    assert_eq!(num(&base.rows[0], "answered"), 48.0);
    let dir = run_into(
        &scenario(AY10),
        &[
            "--quiet",
            "--set",
            "compare.variant=[\"baseline\"]",
            "--set",
            "compare.\"services.tracking.handler.policy\"=[\"greedy\"]",
            "--set",
            "compare.\"services.tracking.handler.cancellation\"=[false]",
            "--set",
            "dependencies.tariff.latency={ constant = 190 }",
        ],
    );
    let slow = Csv::read(&dir.path().join("outcomes.csv"));
    assert_eq!(slow.rows.len(), 1);
    assert_eq!(num(&slow.rows[0], "answered"), 0.0);
    assert_eq!(num(&slow.rows[0], "failed_tariff"), 48.0);
}

#[test]
fn set_on_an_unknown_path_suggests_the_closest_key() {
    resim()
        .arg("check")
        .arg(scenario(AY10))
        .args(["--set", "dependencies.tariff.medianms=7"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("dependencies.tariff.medianms"))
        .stderr(predicate::str::contains("did you mean `median_ms`?"));
}

#[test]
fn help_is_available_on_every_command() {
    for cmd in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["check", "--help"],
    ] {
        resim()
            .args(&cmd)
            .assert()
            .success()
            .stdout(predicate::str::contains("Usage"));
    }
}

#[test]
fn run_prints_a_digest_and_every_table_with_tables() {
    let out = tempfile::tempdir().unwrap();
    let digest = resim()
        .arg("run")
        .arg(scenario(AY10))
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&digest.stdout);
    // the outcome per row and the answering table, not every table
    assert!(text.contains("tariff-slow  weighted  true"), "{text}");
    assert!(text.contains("dropped 48"), "{text}");
    assert!(
        text.contains("extra_drop_pct"),
        "false_drops answers AY10: {text}"
    );
    assert!(
        !text.contains("failed_measure"),
        "outcomes in full is not printed: {text}"
    );
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "Not shown here: outcomes in full, shares, deadline_cost, error_budget (add --tables"
        ),
        "{text}"
    );
    assert!(flat.contains(&format!(
        "report: {}",
        out.path().join("report.html").display()
    )));
    let page = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert!(
        page.contains("<h2>At a glance</h2>"),
        "the page opens with the digest"
    );
}

#[test]
fn run_prints_the_report_and_names_the_csv_folder() {
    let out = tempfile::tempdir().unwrap();
    resim()
        .arg("run")
        .arg(scenario(AY10))
        .arg("--tables")
        .arg("--out")
        .arg(out.path())
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "AY10: the tariff store slows down",
        ))
        .stdout(predicate::str::contains("failed_measure"));
    for f in [
        "shares",
        "outcomes",
        "deadline_cost",
        "false_drops",
        "error_budget",
    ] {
        assert!(out.path().join(format!("{f}.csv")).is_file(), "{f}.csv");
    }
}

#[test]
fn a_closed_stdout_is_not_a_panic_and_the_csv_is_still_written() {
    use std::process::{Command, Stdio};
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_resim"))
        .arg("run")
        .arg(scenario(AY10))
        .arg("--out")
        .arg(out.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // like `resim run ... | head -0`
    let result = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        result.status.success(),
        "exit {:?}: {stderr}",
        result.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.path().join("outcomes.csv").is_file());
}

/// Drawing ahead changes when a draw is made, never its value: the bundled
/// scenarios whose servers, dependencies and open workloads draw from
/// distributions, and a closed population's think times, write the same bytes
/// with `--draw-ahead on` as with `off`.
#[test]
fn drawing_ahead_writes_the_same_bytes() {
    let (_dir, closed) = file_with(
        r#"
[scenario]
name = "closed, thinking"
seed = 5

[services.s]
routes = ["/x"]
handler = { type = "server", slots = 2, queue = 20, service = { lognormal = { p50_ms = 8, sigma = 0.6 } } }

[workload]
type = "closed"
users = 6
think_ms = { exponential = { mean_ms = 30 } }
duration_ms = 60000
"#,
    );
    let mut files: Vec<std::path::PathBuf> = [
        "retry-storm.toml",
        "hedging.toml",
        "replicas.toml",
        "lifo-after-spike.toml",
        "noisy-neighbour.toml",
        "goodput-collapse.toml",
        "warmup.toml",
        "examples/measured-latencies.toml",
    ]
    .iter()
    .map(|f| scenario(&format!("scenarios/{f}")))
    .collect();
    files.push(closed);
    for file in &files {
        let on = run_into(file, &["--quiet", "--draw-ahead", "on"]);
        let off = run_into(file, &["--quiet", "--draw-ahead", "off"]);
        let (on, off) = (folder_bytes(on.path()), folder_bytes(off.path()));
        assert!(on.len() > 2, "{}: {:?}", file.display(), on.keys());
        assert_eq!(
            on.keys().collect::<Vec<_>>(),
            off.keys().collect::<Vec<_>>(),
            "{}",
            file.display()
        );
        for (name, bytes) in &on {
            assert!(
                *bytes == off[name],
                "{}: {name} differs between --draw-ahead on and off",
                file.display()
            );
        }
    }
}

/// A run of several scenarios writes `index.html` beside their folders: a link
/// to each report, with its title and headline.
#[test]
fn a_run_of_several_scenarios_writes_an_index_of_their_reports() {
    let out = tempfile::tempdir().unwrap();
    resim()
        .arg("run")
        .arg(scenario("scenarios/dy13-limiter-keys.toml"))
        .arg(scenario("scenarios/io22-capacity-ladder.toml"))
        .arg("--quiet")
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let index = std::fs::read_to_string(out.path().join("index.html")).unwrap();
    for (link, title, headline) in [
        (
            "dy13-limiter-keys/report.html",
            "DY13: the key decides whom a limiter limits",
            "4 rows; answered 28.6 % to 71.4 %; failed: rejected",
        ),
        (
            "io22-capacity-ladder/report.html",
            "IO22-IO25: capacity ladder",
            "1 row; answered 86.6 %; failed: shed",
        ),
    ] {
        assert!(index.contains(&format!("href=\"{link}\"")), "{index}");
        assert!(out.path().join(link).is_file());
        assert!(index.contains(title), "{index}");
        assert!(index.contains(headline), "{index}");
    }
}

/// The scenarios built into the binary are the `scenarios/` folder, byte for
/// byte: a file added there and not to the list (or changed since the build)
/// fails here.
#[test]
fn the_bundled_scenarios_are_the_scenarios_folder() {
    let mut on_disk = Vec::new();
    for sub in ["", "examples", "bench"] {
        let dir = crate::common::root().join("scenarios").join(sub);
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_file() && (name.ends_with(".toml") || name.ends_with(".csv")) {
                let rel = if sub.is_empty() {
                    name
                } else {
                    format!("{sub}/{name}")
                };
                on_disk.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    on_disk.sort();
    let mut built: Vec<(String, String)> = resim::scenario::bundled::FILES
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    built.sort();
    assert_eq!(
        built.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        on_disk.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    assert!(built == on_disk, "a bundled file differs from scenarios/");
}

/// `resim new` writes a runnable copy of a bundled scenario, comments kept, with
/// the data files it reads, and never overwrites.
#[test]
fn new_starts_a_scenario_from_a_bundled_one() {
    let dir = tempfile::tempdir().unwrap();
    resim()
        .current_dir(dir.path())
        .args(["new", "mine", "--from", "examples/measured-latencies"])
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote mine.toml"));
    let text = std::fs::read_to_string(dir.path().join("mine.toml")).unwrap();
    assert!(text.starts_with(
        "# Started from the bundled scenario scenarios/examples/measured-latencies.toml"
    ));
    assert!(text.contains("name = \"mine\""), "{text}");
    assert!(
        text.contains("# Measured latencies from a file"),
        "comments kept"
    );
    assert!(
        dir.path().join("tariff-latencies.csv").is_file(),
        "its data file beside it"
    );
    resim()
        .current_dir(dir.path())
        .args(["run", "mine.toml", "--quiet"])
        .assert()
        .success();
    // the default is the starter, and nothing is overwritten
    resim()
        .current_dir(dir.path())
        .args(["new", "mine"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("mine.toml exists already"));
    resim()
        .current_dir(dir.path())
        .args(["new", "starter"])
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(dir.path().join("starter.toml"))
            .unwrap()
            .contains("scenarios/examples/starter.toml")
    );
    resim()
        .current_dir(dir.path())
        .args(["new", "x", "--from", "retry-strom"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `retry-storm`?"));
}
