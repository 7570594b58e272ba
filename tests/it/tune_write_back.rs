//! `resim tune --write-back`: the tuned values go into the configuration
//! files the scenario was imported from, each field in its own notation, the
//! rest of each file byte for byte; a key no field gave, or a value the
//! system would read otherwise, is refused.

use crate::common::*;
use std::path::{Path, PathBuf};

/// A copy of fixture `name` in a fresh folder, imported there as `imp.toml`
/// with the clients sending for 3 s; the folder and the copy's path.
fn imported(name: &str) -> (tempfile::TempDir, PathBuf) {
    let fixture = root().join("tests/fixtures/configs").join(name);
    imported_as(name, &std::fs::read_to_string(fixture).expect("fixture"))
}

/// [`imported`] of a file `name` holding `text`.
fn imported_as(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(name);
    std::fs::write(&file, text).expect("copy");
    let scen = dir.path().join("imp.toml");
    resim()
        .arg("import")
        .arg(&file)
        .arg("--out")
        .arg(&scen)
        .arg("-q")
        .assert()
        .success();
    let text = std::fs::read_to_string(&scen).expect("scenario");
    let text = text.replace("duration_ms = 60000 ", "duration_ms = 3000 ");
    std::fs::write(&scen, text).expect("write");
    (dir, file)
}

/// `resim tune` of `dir/imp.toml` over `vary` (lists, so the answer is known)
/// writing back into `file`, output in `dir/out`.
fn tune_back(dir: &Path, file: &Path, metric: &str, vary: &[&str]) -> assert_cmd::assert::Assert {
    let mut cmd = resim();
    cmd.arg("tune").arg(dir.join("imp.toml"));
    for v in vary {
        cmd.args(["--vary", v]);
    }
    cmd.args(["--maximize", metric])
        .args(["-n", "2", "--max-replications", "2", "--no-report"])
        .arg("--write-back")
        .arg(file)
        .arg("--out")
        .arg(dir.join("out"))
        .assert()
}

/// `text` with each `(old, new)` line replaced once (each must be there).
fn with_lines(text: &str, edits: &[(&str, &str)]) -> String {
    let mut t = text.to_string();
    for (old, new) in edits {
        assert_eq!(t.matches(old).count(), 1, "{old} once in the fixture");
        t = t.replace(old, new);
    }
    t
}

#[test]
fn istio_fields_are_written_back_in_their_own_notation_and_nothing_else_changes() {
    let (dir, file) = imported("istio-reviews.yaml");
    let out = tune_back(
        dir.path(),
        &file,
        "outcomes.answered_pct",
        &[
            "policies.reviews-main.retry.max_attempts=[3]",
            "policies.reviews-main.timeout_ms=[333.3]",
            "services.reviews.outlier_detection.interval_ms=[5000]",
        ],
    )
    .success();
    let original = std::fs::read_to_string(&file).unwrap();
    let want = with_lines(
        &original,
        &[
            // the key counts attempts, Istio's field counts retries
            ("attempts: 3\n", "attempts: 2\n"),
            ("perTryTimeout: 300ms", "perTryTimeout: 333.3ms"),
            ("interval: 10s", "interval: 5s"),
        ],
    );
    let got = std::fs::read_to_string(dir.path().join("out/tuned-istio-reviews.yaml")).unwrap();
    assert_eq!(got, want);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original,
        "the user's file is not touched"
    );
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let diff = std::fs::read_to_string(dir.path().join("out/write-back.diff")).unwrap();
    assert!(stdout.contains(&diff), "the diff is printed: {stdout}");
    for line in [
        "-      attempts: 3",
        "+      attempts: 2",
        "+      interval: 5s",
    ] {
        assert!(diff.lines().any(|l| l == line), "{line} in\n{diff}");
    }
    assert_eq!(
        diff.lines().filter(|l| l.starts_with(['-', '+'])).count(),
        2 + 6,
        "two headers and three lines changed:\n{diff}"
    );
}

/// Fixture `name` imported, tuned over `vary` with `--write-back`: its tuned
/// copy is the fixture with each `(old, new)` of `edits` made, nothing else.
fn written_back(name: &str, metric: &str, vary: &[&str], edits: &[(&str, &str)]) {
    let (dir, file) = imported(name);
    tune_back(dir.path(), &file, metric, vary).success();
    let want = with_lines(&std::fs::read_to_string(&file).unwrap(), edits);
    let got = std::fs::read_to_string(dir.path().join(format!("out/tuned-{name}")));
    assert_eq!(got.unwrap(), want, "{name}");
}

#[test]
fn properties_grpc_json_and_spring_yaml_are_written_back() {
    written_back(
        "resilience4j.properties",
        "outcomes.answered_pct",
        &[
            "policies.stock.retry.max_attempts=[3]",
            "policies.stock.retry.backoff.base_ms=[300]",
            "limiters.stock.max_delay_ms=[150]",
        ],
        &[
            ("default.max-attempts=4", "default.max-attempts=3"),
            ("slow.waitDuration 200ms", "slow.waitDuration 300ms"),
            ("timeoutDuration=100ms", "timeoutDuration=150ms"),
        ],
    );
    // protobuf durations keep their quotes
    written_back(
        "grpc-retry-throttling.json",
        "outcomes.all.answered_pct",
        &[
            "policies.method-config-1.retry.max_attempts=[2]",
            "policies.method-config-2.hedge.delay_ms=[75.5]",
        ],
        &[
            ("\"maxAttempts\": 4", "\"maxAttempts\": 2"),
            (
                "\"hedgingDelay\": \"0.05s\"",
                "\"hedgingDelay\": \"0.0755s\"",
            ),
        ],
    );
    // an ISO-8601 duration stays one
    written_back(
        "resilience4j.yaml",
        "outcomes.all.answered_pct",
        &["policies.payments.retry.backoff.base_ms=[300]"],
        &[("waitDuration: PT0.2S", "waitDuration: PT0.3S")],
    );
    // a key written with dots in Spring YAML
    written_back(
        "resilience4j-dotted.yml",
        "outcomes.all.answered_pct",
        &["policies.pricing.timeout_ms=[450]"],
        &[(
            "pricing.timeoutDuration: 300ms",
            "pricing.timeoutDuration: 450ms",
        )],
    );
}

/// Spring reads a bare number of milliseconds whole only: a tuned time
/// that is not whole is written with a finer unit, a whole one stays bare.
#[test]
fn spring_bare_milliseconds_are_written_as_spring_reads_them() {
    let fixture = root().join("tests/fixtures/configs/resilience4j.yaml");
    let text = std::fs::read_to_string(fixture).unwrap();
    let text = with_lines(&text, &[("timeoutDuration: 800ms", "timeoutDuration: 800")]);
    for (tuned, written) in [("333.3", "333300us"), ("450", "450")] {
        let (dir, file) = imported_as("bare.yaml", &text);
        let vary = format!("policies.payments.timeout_ms=[{tuned}]");
        tune_back(dir.path(), &file, "outcomes.all.answered_pct", &[&vary]).success();
        let want = with_lines(
            &text,
            &[(
                "timeoutDuration: 800",
                &format!("timeoutDuration: {written}"),
            )],
        );
        let got = std::fs::read_to_string(dir.path().join("out/tuned-bare.yaml"));
        assert_eq!(got.unwrap(), want, "{tuned} ms");
    }
}

#[test]
fn a_key_no_field_gave_is_refused_before_anything_runs() {
    let (dir, file) = imported("istio-reviews.yaml");
    let out = tune_back(
        dir.path(),
        &file,
        "outcomes.answered_pct",
        &["workloads.reviews-main.rate_rps=[50, 100]"],
    )
    .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("`workloads.reviews-main.rate_rps` is not set from a field of"),
        "{err}"
    );
    assert!(
        !dir.path().join("out").exists(),
        "nothing ran, nothing written"
    );
    // a field the import approximated
    let out = tune_back(
        dir.path(),
        &file,
        "outcomes.answered_pct",
        &["limiters.reviews-max-requests.limit=[400]"],
    )
    .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("http2MaxRequests, approximated"), "{err}");
}

#[test]
fn a_value_the_system_reads_otherwise_is_not_written_back() {
    // one attempt is Istio's `attempts: 0`, which drops the whole retry
    // policy (and Istio refuses it beside a perTryTimeout)
    let (dir, file) = imported("istio-reviews.yaml");
    let out = tune_back(
        dir.path(),
        &file,
        "outcomes.answered_pct",
        &["policies.reviews-main.retry.max_attempts=[1]"],
    )
    .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("do not import"), "{err}");
    assert!(err.contains("nothing was written back"), "{err}");
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("Nothing written back"), "{stdout}");
    let out_dir = dir.path().join("out");
    assert!(
        out_dir.join("tune.csv").exists(),
        "the tuning's files are kept"
    );
    assert!(!out_dir.join("tuned-istio-reviews.yaml").exists());
    assert!(!out_dir.join("write-back.diff").exists());
}

#[test]
fn the_tune_table_names_the_files_to_write_back_beside_the_scenario() {
    let (dir, _) = imported("istio-reviews.yaml");
    let scen = dir.path().join("imp.toml");
    let mut text = std::fs::read_to_string(&scen).unwrap();
    text.push_str(
        "\n[tune]\nvary = [\"policies.reviews-main.timeout_ms=[250]\"]\nmaximize = \"outcomes.answered_pct\"\nreplications = 2\nmax_replications = 2\nwrite_back = [\"istio-reviews.yaml\"]\n",
    );
    std::fs::write(&scen, text).unwrap();
    // run from elsewhere: the file is found beside the scenario
    let out = resim()
        .current_dir(root())
        .arg("tune")
        .arg(&scen)
        .args(["--json", "--no-report", "--out"])
        .arg(dir.path().join("out"))
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let back = &json["write_back"];
    assert_eq!(back["refused"], serde_json::Value::Null, "{json:#}");
    assert!(
        back["diff"]
            .as_str()
            .unwrap()
            .contains("+      perTryTimeout: 250ms"),
        "{back:#}"
    );
    let written = back["files"][0]["written"].as_str().unwrap();
    assert!(written.ends_with("tuned-istio-reviews.yaml"), "{written}");
    assert!(Path::new(written).exists());
}
