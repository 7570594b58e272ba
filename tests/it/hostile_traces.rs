//! `resim import` of traces under attack: times beyond 64-bit nanoseconds,
//! names the scenario cannot hold, a sampling that makes each trace stand for
//! astronomically many requests, call chains deeper than a scenario may nest,
//! repeated JSON keys, and very wide or deep traces. Each input is refused
//! with exit code 2 naming the file and the JSON pointer (or the flag), or
//! imported into a scenario that loads; never exit code 1 ("a bug in resim
//! import"), never a silent other meaning, and in time linear in the spans.

use crate::common::resim;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The start of the traces, in microseconds since 1970.
const BASE_US: i64 = 1_700_000_000_000_000;

/// A Zipkin v2 span of trace 1.
fn zipkin(id: u64, parent: Option<u64>, service: &str, ts: Value, dur: Value) -> Value {
    let mut s = json!({
        "traceId": "00000000000000a1",
        "id": format!("{id:x}"),
        "name": "op",
        "kind": "SERVER",
        "timestamp": ts,
        "duration": dur,
        "localEndpoint": { "serviceName": service }
    });
    if let Some(p) = parent {
        s["parentId"] = json!(format!("{p:x}"));
    }
    s
}

/// An OTLP document of one span of service `front`.
fn otlp(start: Value, end: Value) -> Value {
    json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "front"}}]},
        "scopeSpans": [{"spans": [{
            "traceId": "5b8efff798038103d269b633813fc60c",
            "spanId": "eee19b7ec3c1b174",
            "name": "op",
            "kind": 2,
            "startTimeUnixNano": start,
            "endTimeUnixNano": end
        }]}]
    }]})
}

/// `text` written as `name` in a new folder.
fn file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("written");
    (dir, path)
}

/// `resim import FILE --out DIR/s.toml ARGS`: (exit code, stderr, time).
fn import(dir: &Path, file: &Path, args: &[&str]) -> (i32, String, Duration) {
    let t = Instant::now();
    let out = resim()
        .arg("import")
        .arg(file)
        .arg("--out")
        .arg(dir.join("s.toml"))
        .args(args)
        .output()
        .expect("resim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

/// Imports `doc` (as `name`): (exit code, stderr, the scenario written).
fn import_doc(name: &str, doc: &Value, args: &[&str]) -> (i32, String, String) {
    let (dir, path) = file(name, &doc.to_string());
    let (code, err, _) = import(dir.path(), &path, args);
    let toml = std::fs::read_to_string(dir.path().join("s.toml")).unwrap_or_default();
    (code, err, toml)
}

fn refused(code: i32, err: &str, wanted: &[&str]) {
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("bug in resim import"), "{err}");
    for w in wanted {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
}

#[test]
fn a_span_time_beyond_64_bit_nanoseconds_is_refused_naming_its_field() {
    let end = "/resourceSpans/0/scopeSpans/0/spans/0/endTimeUnixNano";
    // a 64-bit string OTLP allows (fixed64), but beyond a signed count: once
    // read as "no end", silently
    let big = otlp(
        json!("1700000000000000000"),
        json!("99999999999999999999999"),
    );
    let (code, err, _) = import_doc("t.otlp.json", &big, &[]);
    refused(
        code,
        &err,
        &["t.otlp.json:", end, "99999999999999999999999 ns"],
    );
    let number = otlp(json!("1700000000000000000"), json!(1e30));
    let (code, err, _) = import_doc("t.otlp.json", &number, &[]);
    refused(code, &err, &[end, "1e30 ns"]);
    let before_1970 = otlp(json!("-9000000000000000000"), json!("9000000000000000000"));
    let (code, err, _) = import_doc("t.otlp.json", &before_1970, &[]);
    refused(code, &err, &["startTimeUnixNano", "before 1970"]);
    // microseconds that overflow once made nanoseconds: once saturated
    let ts = json!([zipkin(
        1,
        None,
        "front",
        json!(100_000_000_000_000_000i64),
        json!(1000)
    )]);
    let (code, err, _) = import_doc("t.json", &ts, &[]);
    refused(
        code,
        &err,
        &["t.json:", "/0/timestamp", "100000000000000000 µs"],
    );
    let dur = json!([zipkin(
        1,
        None,
        "front",
        json!(BASE_US),
        json!(100_000_000_000_000_000i64)
    )]);
    let (code, err, _) = import_doc("t.json", &dur, &[]);
    refused(code, &err, &["/0/duration", "not a span's duration"]);
    // each fits, their sum does not
    let sum = json!([zipkin(
        1,
        None,
        "front",
        json!(9_000_000_000_000_000i64),
        json!(1_000_000_000_000_000i64)
    )]);
    let (code, err, _) = import_doc("t.json", &sum, &[]);
    refused(code, &err, &["/0/duration", "ends beyond"]);
    let jaeger = json!({"data": [{"traceID": "a1", "spans": [
        {"traceID": "a1", "spanID": "b1", "operationName": "op", "startTime": BASE_US,
         "duration": 1e20, "processID": "p1"}],
        "processes": {"p1": {"serviceName": "front"}}}]});
    let (code, err, _) = import_doc("t.json", &jaeger, &[]);
    refused(code, &err, &["/data/0/spans/0/duration", "1e20 µs"]);
}

#[test]
fn service_names_holding_a_replica_or_stream_separator_are_renamed_and_said() {
    let mut client = zipkin(2, Some(1), "front#2", json!(BASE_US + 10), json!(100));
    client["kind"] = json!("CLIENT");
    client["remoteEndpoint"] = json!({"serviceName": "db:5432"});
    let doc = json!([
        zipkin(1, None, "front#2", json!(BASE_US), json!(1000)),
        client,
        // a service already named like the renamed one stays apart
        zipkin(3, None, "front_2", json!(BASE_US + 5), json!(1000)),
    ]);
    let (code, err, toml) = import_doc("t.json", &doc, &[]);
    assert_eq!(code, 0, "{err}");
    for name in [
        "[services.front_2-2]",
        "[services.front_2]",
        "[dependencies.db_5432]",
    ] {
        assert!(toml.contains(name), "{name} not in:\n{toml}");
    }
    let headers = toml.lines().filter(|l| l.starts_with('['));
    headers.for_each(|h| assert!(!h.contains('#') && !h.contains(':'), "{h}"));
    assert!(err.contains("`front#2` is written `front_2"), "{err}");
    assert!(err.contains("`db:5432` is written `db_5432`"), "{err}");
}

/// 30 traces of one span each, 100 ms apart: a rate can be measured.
fn thirty_arrivals(tags: Value) -> Value {
    let spans: Vec<Value> = (0..30)
        .map(|i| {
            let mut s = zipkin(1, None, "front", json!(BASE_US + i * 100_000), json!(1000));
            s["traceId"] = json!(format!("{:016x}", i + 1));
            s["tags"] = tags.clone();
            s
        })
        .collect();
    Value::Array(spans)
}

#[test]
fn a_sampling_that_makes_a_trace_stand_for_too_many_requests_is_refused() {
    let doc = thirty_arrivals(json!({}));
    for rate in ["1e-300", "1e-12", "5e-324"] {
        let (code, err, _) = import_doc("t.json", &doc, &["--sample-rate", rate]);
        refused(
            code,
            &err,
            &[&format!("--sample-rate {rate}"), "scenario.max_events"],
        );
    }
    // the rate the traces say themselves
    let said = thirty_arrivals(json!({"sampler.type": "probabilistic", "sampler.param": "1e-300"}));
    let (code, err, _) = import_doc("t.json", &said, &[]);
    refused(
        code,
        &err,
        &["t.json", "sampling probabilities the traces say"],
    );
    let (code, err, toml) = import_doc("t.json", &doc, &["--sample-rate", "0.001"]);
    assert_eq!(code, 0, "{err}");
    assert!(toml.contains("rate_rps = 10000"), "{toml}");
}

/// A trace whose spans each call the next, each of a service of its own.
fn chain(depth: u64) -> String {
    let spans: Vec<Value> = (1..=depth)
        .map(|i| {
            let parent = (i > 1).then(|| i - 1);
            let dur = 10_000_000 - 2 * i as i64;
            zipkin(
                i,
                parent,
                &format!("s{i}"),
                json!(BASE_US + i as i64),
                json!(dur),
            )
        })
        .collect();
    Value::Array(spans).to_string()
}

#[test]
fn a_call_chain_deeper_than_a_scenario_may_nest_is_refused_naming_it() {
    // the last span's service calls none: a dependency, not a service
    let (dir, path) = file("deep.json", &chain(1002));
    let (code, err, _) = import(dir.path(), &path, &[]);
    refused(
        code,
        &err,
        &[
            "deep.json",
            "nest 1001 services deep",
            "s1 -> s2 -> ... -> s1001",
        ],
    );
    assert!(!dir.path().join("s.toml").exists());
    let (dir, path) = file("deep.json", &chain(1001));
    let (code, err, _) = import(dir.path(), &path, &[]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_deep_chain_is_refused_in_linear_time() {
    // 20,000 services deep: once over 5 s and 600 MB in a release build,
    // quadratic (each edge looked its caller up among all services)
    let (dir, path) = file("deep.json", &chain(20_000));
    let (code, err, took) = import(dir.path(), &path, &[]);
    refused(code, &err, &["nest 19999 services deep"]);
    assert!(took < Duration::from_secs(60), "{took:?}");
}

/// One span of `front` calling `n` callees of their own, at once.
fn fan_out(n: u64) -> String {
    let mut spans = vec![zipkin(1, None, "front", json!(BASE_US), json!(10_000_000))];
    for i in 2..n + 2 {
        let mut s = zipkin(i, Some(1), "front", json!(BASE_US + 1), json!(10));
        s["kind"] = json!("CLIENT");
        s["remoteEndpoint"] = json!({"serviceName": format!("db{i}")});
        spans.push(s);
    }
    Value::Array(spans).to_string()
}

#[test]
fn a_wide_fan_out_to_distinct_callees_imports_in_time() {
    // 3,000 callees: once 14 s in a release build (cubic: the plan's branch
    // order scanned every branch for each), and 10,000 over 5 minutes
    let (dir, path) = file("wide.json", &fan_out(3000));
    let (code, err, took) = import(dir.path(), &path, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    let toml = std::fs::read_to_string(dir.path().join("s.toml")).expect("written");
    assert!(toml.contains("[dependencies.db3001]"), "{toml}");
    // beyond what one plan is laid out from: refused at once, naming it
    let (dir, path) = file("wide.json", &fan_out(5001));
    let (code, err, took) = import(dir.path(), &path, &[]);
    refused(
        code,
        &err,
        &["wide.json", "front makes 5001 distinct calls", "5000"],
    );
    assert!(took < Duration::from_secs(60), "{took:?}");
}

#[test]
fn a_repeated_json_key_is_refused_naming_it_and_its_object() {
    let one = r#"{"traceId":"00000000000000a1","id":"a1","name":"op","kind":"SERVER","timestamp":1700000000000000,"duration":1000,"localEndpoint":{"serviceName":"front"}}"#;
    let cases = [
        // the first span of a list was read into a map that kept the last
        (
            format!(
                "[{}]",
                one.replace(r#""duration":1000"#, r#""duration":1000,"duration":5"#)
            ),
            "/0: the key `duration` appears twice",
        ),
        (
            format!(
                "[{one},{}]",
                one.replace(r#""name":"op""#, r#""tags":{"error":"x","error":"y"},"name":"op""#)
            ),
            "/1/tags: the key `error` appears twice",
        ),
        (
            r#"{"data":[{"traceID":"a1","spans":[{"traceID":"a1","spanID":"b1","startTime":1700000000000000,"duration":5,"processID":"p1"}],"processes":{"p1":{"serviceName":"a"},"p1":{"serviceName":"b"}}}]}"#.into(),
            "/data/0/processes: the key `p1` appears twice",
        ),
        (
            r#"{"traceID":"a1","spans":[{"traceID":"a1","spanID":"b1","startTime":1700000000000000,"duration":5,"processID":"p1"}],"processes":{"p1":{"serviceName":"a"}},"spans":[]}"#.into(),
            "the key `spans` appears twice",
        ),
        (
            serde_json::to_string(&otlp(json!("1700000000000000000"), json!("1700000000100000000")))
                .expect("json")
                .replacen(r#""resource":"#, r#""resource":{},"resource":"#, 1),
            "/resourceSpans/0: the key `resource` appears twice",
        ),
        // an OTLP attribute list holding one key twice (OTLP requires each once)
        (
            serde_json::to_string(&otlp(json!("1700000000000000000"), json!("1700000000100000000")))
                .expect("json")
                .replacen(
                    r#"{"key":"service.name","value":{"stringValue":"front"}}"#,
                    r#"{"key":"service.name","value":{"stringValue":"front"}},{"key":"service.name","value":{"stringValue":"back"}}"#,
                    1,
                ),
            "the attribute `service.name` is given twice in one attribute list",
        ),
    ];
    for (text, wanted) in cases {
        let (dir, path) = file("t.json", &text);
        let (code, err, _) = import(dir.path(), &path, &[]);
        refused(code, &err, &["t.json:", wanted]);
    }
}

#[test]
fn a_span_calling_one_callee_more_than_65535_times_is_counted_not_wrapped() {
    // the k-th call to a callee was counted in 16 bits: the 65,536th wrapped
    // (a panic in a debug build, calls counted again from the first in a
    // release build)
    let mut spans = vec![zipkin(1, None, "front", json!(BASE_US), json!(10_000_000))];
    for i in 2..70_002u64 {
        let mut s = zipkin(i, Some(1), "front", json!(BASE_US + 1), json!(10));
        s["kind"] = json!("CLIENT");
        s["remoteEndpoint"] = json!({"serviceName": "db"});
        spans.push(s);
    }
    let (dir, path) = file("many.json", &Value::Array(spans).to_string());
    let (code, err, _) = import(dir.path(), &path, &[]);
    assert_eq!(code, 0, "{err}");
    let toml = std::fs::read_to_string(dir.path().join("s.toml")).expect("written");
    assert!(toml.contains("[dependencies.db]"), "{toml}");
}

#[test]
fn a_route_holding_a_stream_separator_names_its_workload_safely() {
    // several entry points: a workload each, named after service and route;
    // `:` in a workload's name was refused by the loader (exit 1)
    let spans: Vec<Value> = ["/a:b", "/c"]
        .iter()
        .enumerate()
        .map(|(i, route)| {
            let mut s = zipkin(1, None, "front", json!(BASE_US + i as i64), json!(1000));
            s["traceId"] = json!(format!("{:016x}", i + 1));
            s["tags"] = json!({ "http.route": route });
            s
        })
        .collect();
    let (code, err, toml) = import_doc("t.json", &Value::Array(spans), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(toml.contains("[workloads.front-a_b]"), "{toml}");
    assert!(toml.contains("route = \"/a:b\""), "{toml}");
}

#[test]
fn a_placeholder_rate_over_traces_spanning_decades_keeps_a_placeholder_duration() {
    // found by the import fuzz target: one arrival near 1970 made the traced
    // interval 54 years, and `rate_rps = 1 # set me` over it more requests
    // than a run may send (exit 1, "a bug in resim import")
    let mut late = zipkin(2, None, "front", json!(BASE_US), json!(1000));
    late["traceId"] = json!("00000000000000a2");
    let doc = json!([zipkin(1, None, "front", json!(380_731), json!(1000)), late]);
    let (code, err, toml) = import_doc("t.json", &doc, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(toml.contains("duration_ms = 1000 # set me"), "{toml}");
}
