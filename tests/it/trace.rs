//! `resim run --trace N`: trace.json parses as Chrome's trace-event format and
//! holds what a reader needs to follow each of the first N requests.

use crate::common::{resim, scenario};
use serde_json::Value;

/// Runs `file` with `--trace n` and returns trace.json's events.
fn trace(file: &str, n: u32) -> Vec<Value> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    resim()
        .args(["run", "-q", "--trace", &n.to_string(), "--out"])
        .arg(dir.path())
        .arg(scenario(file))
        .assert()
        .success();
    let text = std::fs::read_to_string(dir.path().join("trace.json")).expect("trace.json");
    let doc: Value = serde_json::from_str(&text).expect("trace.json is JSON");
    doc["traceEvents"].as_array().expect("traceEvents").clone()
}

/// Every event has the fields its phase needs; durations are >= 0.
fn check_fields(events: &[Value]) {
    for e in events {
        let has = |k: &str| e.get(k).is_some();
        assert!(has("name") && has("ph") && has("pid") && has("tid"), "{e}");
        match e["ph"].as_str() {
            Some("X") => {
                assert!(has("cat"), "{e}");
                assert!(e["ts"].as_f64().is_some_and(|t| t >= 0.0), "{e}");
                assert!(e["dur"].as_f64().is_some_and(|d| d >= 0.0), "{e}");
            }
            Some("i") => assert!(has("cat") && e["ts"].as_f64().is_some(), "{e}"),
            Some("M") => assert!(has("args"), "{e}"),
            other => panic!("unexpected phase {other:?} in {e}"),
        }
    }
}

/// The events of compare row `pid` with phase `ph` and category `cat`.
fn of<'a>(events: &'a [Value], pid: u64, ph: &str, cat: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["pid"] == pid && e["ph"] == ph && e["cat"] == cat)
        .collect()
}

/// Complete events on one thread must nest (Perfetto refuses overlapping ones).
fn check_nesting(events: &[Value]) {
    let mut by_tid: std::collections::BTreeMap<(u64, u64), Vec<(f64, f64)>> = Default::default();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        by_tid.entry(key).or_default().push((ts, ts + dur));
    }
    for spans in by_tid.values() {
        for a in spans {
            for b in spans {
                let disjoint = a.1 <= b.0 || b.1 <= a.0;
                let nested = (a.0 <= b.0 && b.1 <= a.1) || (b.0 <= a.0 && a.1 <= b.1);
                assert!(disjoint || nested, "{a:?} and {b:?} overlap on one thread");
            }
        }
    }
}

#[test]
fn three_tier_trace_shows_calls_at_two_depths_and_the_cancellation() {
    let events = trace("scenarios/three-tier-deadline.toml", 5);
    check_fields(&events);
    check_nesting(&events);
    // rows: cancellation = false, then true
    for pid in [1, 2] {
        let requests = of(&events, pid, "X", "request");
        assert_eq!(requests.len(), 5, "row {pid}");
        for k in 1..=5 {
            let name = format!("request #{k} /checkout");
            assert!(
                requests.iter().any(|e| e["name"] == name),
                "row {pid}: {name}"
            );
        }
        let calls = of(&events, pid, "X", "call");
        for depth in [1, 2] {
            assert!(
                calls.iter().any(|e| e["args"]["depth"] == depth),
                "row {pid}: no call at depth {depth}"
            );
        }
        assert!(!of(&events, pid, "X", "service").is_empty());
        assert!(!of(&events, pid, "X", "work").is_empty());
    }
    let process = |pid: u64| {
        events
            .iter()
            .find(|e| e["pid"] == pid && e["name"] == "process_name")
            .map(|e| e["args"]["name"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default()
    };
    assert!(process(1).contains("cancellation = false"));
    assert!(process(2).contains("cancellation = true"));
    // with cancellation the front's give-up cancels the call below it
    assert!(of(&events, 1, "i", "cancel").is_empty());
    assert!(!of(&events, 2, "i", "cancel").is_empty());
    let cancelled = of(&events, 2, "X", "call");
    assert!(
        cancelled
            .iter()
            .any(|e| e["args"]["outcome"] == "cancelled")
    );
}

#[test]
fn ladder_trace_has_each_request_and_its_service() {
    let events = trace("scenarios/io22-capacity-ladder.toml", 5);
    check_fields(&events);
    check_nesting(&events);
    let requests = of(&events, 1, "X", "request");
    assert_eq!(requests.len(), 5);
    assert_eq!(of(&events, 1, "X", "service").len(), 5);
    for e in &requests {
        assert!(e["args"]["outcome"].is_string(), "{e}");
    }
}

#[test]
fn no_trace_without_the_flag_and_the_csv_files_do_not_change_with_it() {
    let plain = tempfile::tempdir().expect("a temporary folder");
    let traced = tempfile::tempdir().expect("a temporary folder");
    let file = scenario("scenarios/three-tier-deadline.toml");
    resim()
        .args(["run", "-q", "--out"])
        .arg(plain.path())
        .arg(&file)
        .assert()
        .success();
    resim()
        .args(["run", "-q", "--trace", "3", "--out"])
        .arg(traced.path())
        .arg(&file)
        .assert()
        .success();
    assert!(!plain.path().join("trace.json").exists());
    for name in ["outcomes.csv", "services.csv"] {
        let a = std::fs::read(plain.path().join(name)).expect("csv");
        let b = std::fs::read(traced.path().join(name)).expect("csv");
        assert_eq!(a, b, "{name} changed with --trace");
    }
}
