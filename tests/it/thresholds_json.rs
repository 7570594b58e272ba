//! `[thresholds]` (exit status 3 on a failed check, 2 on an unknown metric, the
//! whole interval in a sweep) and `--json` (one parseable document on stdout).

use crate::common::{resim, scenario};
use std::path::{Path, PathBuf};

/// The IO22 ladder with `thresholds` appended, written into `dir`.
fn with_thresholds(dir: &Path, source: &str, thresholds: &str) -> PathBuf {
    let text = std::fs::read_to_string(scenario(source)).unwrap();
    let file = dir.join("t.toml");
    std::fs::write(&file, format!("{text}\n[thresholds]\n{thresholds}\n")).unwrap();
    file
}

#[test]
fn a_failed_threshold_exits_3_after_writing_everything() {
    let dir = tempfile::tempdir().unwrap();
    // totals: 275 successful, 240 timed out
    let file = with_thresholds(
        dir.path(),
        "scenarios/io22-capacity-ladder.toml",
        "\"totals.successful\" = \">= 200\"\n\"totals.timed_out\" = \"< 100\"",
    );
    let out = resim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("o"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("1 of 2 threshold checks failed"),
        "{stderr}"
    );
    assert!(stdout.contains("Thresholds: 1 of 2 hold"), "{stdout}");
    let csv = std::fs::read_to_string(dir.path().join("o/thresholds.csv")).unwrap();
    assert_eq!(
        csv,
        "metric,condition,value,result\ntotals.successful,>= 200,275,pass\ntotals.timed_out,< 100,240,fail\n"
    );
    let html = std::fs::read_to_string(dir.path().join("o/report.html")).unwrap();
    assert!(html.contains("Thresholds: 1 of 2 hold"));
    assert!(html.contains("<td class=\"fail\">fail</td>"));

    // the same with a condition that holds: exit 0
    let file = with_thresholds(
        dir.path(),
        "scenarios/io22-capacity-ladder.toml",
        "\"totals.timed_out\" = \"<= 240\"",
    );
    resim()
        .arg("run")
        .arg(&file)
        .arg("--quiet")
        .arg("--out")
        .arg(dir.path().join("o"))
        .assert()
        .success();
}

#[test]
fn an_unknown_metric_exits_2_with_a_suggestion_and_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let file = with_thresholds(
        dir.path(),
        "scenarios/io22-capacity-ladder.toml",
        "\"totals.timed_ot\" = \"< 100\"",
    );
    let out = resim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("o"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("t.toml:42:21: thresholds.\"totals.timed_ot\": no metric named `totals.timed_ot` (did you mean `totals.timed_out`?)"),
        "{stderr}"
    );
    assert!(!dir.path().join("o").exists(), "nothing written");
    // a bad condition is caught when the file is read
    let file = with_thresholds(
        dir.path(),
        "scenarios/io22-capacity-ladder.toml",
        "\"totals.timed_out\" = \"about 100\"",
    );
    let out = resim().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected a comparison and a number"));
}

#[test]
fn a_sweep_threshold_holds_only_when_its_whole_interval_does_and_merge_agrees() {
    let dir = tempfile::tempdir().unwrap();
    // answered (of 48): healthy rows near 44-48, slow rows 0-6: ">= 40" fails on
    // the slow rows, "<= 60" holds everywhere (an interval may reach past 48)
    let file = with_thresholds(
        dir.path(),
        "scenarios/ay10-montecarlo.toml",
        "\"outcomes.answered\" = \"<= 60\"",
    );
    resim()
        .arg("sweep")
        .arg(&file)
        .args(["-n", "4", "--quiet", "--out"])
        .arg(dir.path().join("ok"))
        .assert()
        .success();
    let file = with_thresholds(
        dir.path(),
        "scenarios/ay10-montecarlo.toml",
        "\"outcomes.answered\" = \">= 40\"",
    );
    let whole = dir.path().join("whole");
    resim()
        .arg("sweep")
        .arg(&file)
        .args(["-n", "4", "--quiet", "--out"])
        .arg(&whole)
        .assert()
        .code(3);
    let csv = std::fs::read_to_string(whole.join("thresholds.csv")).unwrap();
    assert!(csv.starts_with("variant,policy,metric,condition,mean,ci_low,ci_high,result\n"));
    assert!(
        csv.contains("baseline,greedy,outcomes.answered,>= 40,48,48,48,pass"),
        "{csv}"
    );
    assert!(csv.contains(",fail\n"));
    for k in 1..=2 {
        resim()
            .arg("sweep")
            .arg(&file)
            .args(["-n", "4", "--quiet", "--shard", &format!("{k}/2"), "--out"])
            .arg(dir.path().join(format!("s{k}")))
            .assert()
            .success();
    }
    let merged = dir.path().join("m");
    resim()
        .arg("merge")
        .arg("--quiet")
        .arg("--out")
        .arg(&merged)
        .arg(dir.path().join("s1"))
        .arg(dir.path().join("s2"))
        .assert()
        .code(3);
    for f in ["thresholds.csv", "report.html"] {
        assert_eq!(
            std::fs::read(whole.join(f)).unwrap(),
            std::fs::read(merged.join(f)).unwrap(),
            "{f}"
        );
    }
    // unknown metric in a sweep: exit 2 before any replication runs
    let file = with_thresholds(
        dir.path(),
        "scenarios/ay10-montecarlo.toml",
        "\"outcomes.answerd\" = \">= 40\"",
    );
    let out = resim()
        .arg("sweep")
        .arg(&file)
        .args(["-n", "2", "--out"])
        .arg(dir.path().join("bad"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `outcomes.answered`?"));
}

#[test]
fn json_prints_every_table_as_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let out = resim()
        .arg("run")
        .arg(scenario("scenarios/ay10-tariff-slowdown.toml"))
        .arg(scenario("scenarios/io22-capacity-ladder.toml"))
        .arg("--json")
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let scenarios = doc["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    let ay10 = &scenarios[0];
    let keys: Vec<&String> = ay10.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "file",
            "name",
            "seed",
            "compare_rows",
            "tables",
            "thresholds"
        ]
    );
    let tables: Vec<&String> = ay10["tables"].as_object().unwrap().keys().collect();
    assert_eq!(
        tables,
        [
            "shares",
            "outcomes",
            "deadline_cost",
            "false_drops",
            "error_budget",
            "latency_cdf"
        ]
    );
    let outcomes = &ay10["tables"]["outcomes"]["rows"];
    assert_eq!(outcomes.as_array().unwrap().len(), 12);
    let slow_greedy = &outcomes[6];
    assert_eq!(slow_greedy["variant"], "tariff-slow");
    assert_eq!(slow_greedy["policy"], "greedy");
    assert_eq!(slow_greedy["answered"], 6);
    assert_eq!(slow_greedy["cancellation"], "false");
    let totals = &scenarios[1]["tables"]["totals"]["rows"][0];
    assert_eq!(totals["sent"], 595);
    assert_eq!(totals["timed_out"], 240);
    // an empty cell is null, not ""
    let findings = &scenarios[1]["tables"]["findings"]["rows"][0];
    assert_eq!(findings["saturation_concurrency"], 24);
    assert!(ay10["thresholds"].is_null());
}
