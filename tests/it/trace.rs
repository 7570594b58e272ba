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
    // in whole nanoseconds: ts + dur in floating point may pass an equal end
    let mut by_tid: std::collections::BTreeMap<(u64, u64), Vec<(i64, i64)>> = Default::default();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let (ts, dur) = (ns(&e["ts"]).unwrap(), ns(&e["dur"]).unwrap());
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

/// Nanoseconds from a trace time in microseconds (three decimals: exact).
fn ns(v: &Value) -> Option<i64> {
    v.as_f64().map(|us| (us * 1000.0).round() as i64)
}

/// A span of trace.json, as the tree checks read it.
struct Node<'a> {
    /// The traced request it belongs to (`#k`), whichever of its rows.
    request: &'a str,
    start: i64,
    end: i64,
    event: &'a Value,
}

/// The tree of a trace holds, in each compare row `pid` = i + 1 with
/// `requests[i]` traced requests: span ids are unique; every traced request has
/// exactly one `request` span, a root on its first row; every span's parent
/// exists on the same request and holds it in time (equal ends allowed); a span
/// without a parent is a request or work that outlived the span it would hang
/// under (which exists, is on the same request and ended first); every instant
/// lies in its parent; a `call` span that counts `attempts` holds that many
/// `attempt` spans (or instants, for those that failed at once).
pub(crate) fn check_tree(events: &[Value], requests: &[usize]) -> Result<(), String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut request_of: BTreeMap<(u64, u64), &str> = BTreeMap::new();
    let mut tracks: BTreeMap<u64, BTreeSet<&str>> = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
    {
        let (pid, tid) = (
            e["pid"].as_u64().unwrap_or(0),
            e["tid"].as_u64().unwrap_or(0),
        );
        let name = e["args"]["name"].as_str().ok_or(format!("row name: {e}"))?;
        let k = name.split(' ').next().unwrap_or_default();
        request_of.insert((pid, tid), k);
        tracks.entry(pid).or_default().insert(k);
    }
    // each traced request's span first (ids aside: the bug this guards
    // against left requests without one)
    for (i, &n) in requests.iter().enumerate() {
        let pid = i as u64 + 1;
        let traced = tracks.get(&pid).map_or(0, BTreeSet::len);
        if traced != n {
            return Err(format!("row {pid}: {traced} traced requests, expected {n}"));
        }
        for k in tracks.get(&pid).into_iter().flatten() {
            let own: Vec<&Value> = events
                .iter()
                .filter(|e| e["pid"] == pid && e["ph"] == "X" && e["cat"] == "request")
                .filter(|e| request_of.get(&(pid, e["tid"].as_u64().unwrap_or(0))) == Some(k))
                .collect();
            if own.len() != 1 {
                return Err(format!(
                    "row {pid}: request {k} has {} request spans",
                    own.len()
                ));
            }
            let e = own[0];
            let row_name = events.iter().find(|m| {
                m["ph"] == "M"
                    && m["pid"] == pid
                    && m["tid"] == e["tid"]
                    && m["name"] == "thread_name"
            });
            if row_name
                .is_some_and(|m| m["args"]["name"].as_str().is_some_and(|n| n.contains(" (")))
            {
                return Err(format!(
                    "row {pid}: request {k}'s span is not on its first row"
                ));
            }
            if e["args"].get("parent_id").is_some() {
                return Err(format!("row {pid}: request {k}'s span is not a root: {e}"));
            }
        }
    }
    let mut spans: BTreeMap<(u64, u64), Node> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let (pid, tid) = (
            e["pid"].as_u64().unwrap_or(0),
            e["tid"].as_u64().unwrap_or(0),
        );
        let id = e["args"]["span_id"]
            .as_u64()
            .ok_or(format!("no span_id: {e}"))?;
        let request = *request_of
            .get(&(pid, tid))
            .ok_or(format!("unnamed row: {e}"))?;
        let (start, dur) = (ns(&e["ts"]), ns(&e["dur"]));
        let (Some(start), Some(dur)) = (start, dur) else {
            return Err(format!("no times: {e}"));
        };
        let node = Node {
            request,
            start,
            end: start + dur,
            event: e,
        };
        if spans.insert((pid, id), node).is_some() {
            return Err(format!("span_id {id} twice in row {pid}"));
        }
    }
    let mut attempts: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for (&(pid, _), s) in &spans {
        let e = s.event;
        let get = |key: &str| -> Result<Option<&Node>, String> {
            match e["args"].get(key) {
                None => Ok(None),
                Some(id) => {
                    let id = id.as_u64().ok_or(format!("{key} not a number: {e}"))?;
                    let q = spans
                        .get(&(pid, id))
                        .ok_or(format!("{key} {id} missing: {e}"))?;
                    if q.request != s.request {
                        return Err(format!("{key} {id} on another request: {e}\n{}", q.event));
                    }
                    Ok(Some(q))
                }
            }
        };
        match get("parent_id")? {
            Some(q) => {
                if q.start > s.start || s.end > q.end {
                    return Err(format!("outside its parent: {e}\n{}", q.event));
                }
                if e["cat"] == "attempt" {
                    let id = q.event["args"]["span_id"].as_u64().unwrap_or(0);
                    *attempts.entry((pid, id)).or_default() += 1;
                }
            }
            None if e["cat"] == "request" => {}
            None if e["args"].get("outlived_id").is_some() => {}
            None => return Err(format!("a root that is no request: {e}")),
        }
        if let Some(q) = get("outlived_id")?
            && (q.end >= s.end || q.start > s.start)
        {
            return Err(format!("did not outlive {}: {e}", q.event));
        }
    }
    // an attempt that failed at once (its dependency down) is an instant
    for e in events.iter().filter(|e| e["ph"] == "i") {
        if e["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("attempt "))
            && let (Some(pid), Some(p)) = (e["pid"].as_u64(), e["args"]["parent_id"].as_u64())
        {
            *attempts.entry((pid, p)).or_default() += 1;
        }
    }
    for (&(pid, id), s) in &spans {
        let e = s.event;
        if e["cat"] == "call"
            && let Some(n) = e["args"]["attempts"].as_u64()
        {
            let held = attempts.get(&(pid, id)).copied().unwrap_or(0);
            if held != n {
                return Err(format!("{n} attempts, {held} attempt spans: {e}"));
            }
        }
    }
    for e in events.iter().filter(|e| e["ph"] == "i") {
        let pid = e["pid"].as_u64().unwrap_or(0);
        let request = request_of.get(&(pid, e["tid"].as_u64().unwrap_or(0)));
        let at = ns(&e["ts"]).ok_or(format!("no time: {e}"))?;
        if let Some(p) = e["args"]["parent_id"].as_u64() {
            let q = spans
                .get(&(pid, p))
                .ok_or(format!("parent {p} missing: {e}"))?;
            if Some(&q.request) != request || at < q.start || at > q.end {
                return Err(format!("instant outside its parent: {e}\n{}", q.event));
            }
        }
    }
    Ok(())
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

/// The scenario of the regression below: a front server calls a mid server
/// that calls a store; 40 requests, a `[policies]` table when `policies`.
fn chain(policies: bool) -> String {
    let table = if policies {
        "[policies.spare]\nretry = { max_attempts = 3, on = [\"error\"] }\n"
    } else {
        ""
    };
    format!(
        r#"[scenario]
name = "chain"
seed = 5
{table}[services.front]
routes = ["/x"]
[services.front.handler]
type = "server"
slots = 2
queue = 8
service = {{ constant = 5 }}
budget = "none"
branches = [{{ name = "mid", calls = ["mid"] }}]
[services.mid.handler]
type = "server"
slots = 2
queue = 8
service = {{ constant = 2 }}
budget = "none"
branches = [{{ name = "store", calls = ["store"] }}]
[dependencies.store]
slots = 2
latency = {{ exponential = {{ mean_ms = 20 }} }}
[workload]
type = "open"
rate_rps = 50
requests = 40
route = "/x"
"#
    )
}

/// trace.json (bytes) of scenario `text` run with `--trace n`.
fn trace_bytes(text: &str, n: u32) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join("chain.toml");
    std::fs::write(&file, text).expect("the scenario is written");
    let out = dir.path().join("out");
    resim()
        .args(["run", "-q", "--trace", &n.to_string(), "--out"])
        .arg(&out)
        .arg(&file)
        .assert()
        .success();
    std::fs::read(out.join("trace.json")).expect("trace.json")
}

fn events_of(bytes: &[u8]) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(bytes).expect("trace.json is JSON");
    doc["traceEvents"].as_array().expect("traceEvents").clone()
}

/// A `[policies]` table that nothing uses puts every call through the `none`
/// policy: the trace once lost most request spans and hung calls on requests
/// long over (a client's attempt took a request slot the tracer did not map
/// again). All 20 requests keep their span and their calls, and the trace is
/// the one without the table.
#[test]
fn an_unused_policies_table_changes_nothing_in_the_trace() {
    let with = trace_bytes(&chain(true), 20);
    let events = events_of(&with);
    check_fields(&events);
    check_nesting(&events);
    let requests = of(&events, 1, "X", "request");
    assert_eq!(requests.len(), 20, "every traced request has its span");
    for k in 1..=20 {
        let name = format!("request #{k} /x");
        assert!(requests.iter().any(|e| e["name"] == name), "{name}");
    }
    // each request's own calls, at both depths, and the store's work
    for depth in [1, 2] {
        let calls = of(&events, 1, "X", "call");
        let n = calls.iter().filter(|e| e["args"]["depth"] == depth).count();
        assert_eq!(n, 20, "one call at depth {depth} per request");
    }
    assert_eq!(of(&events, 1, "X", "work").len(), 20);
    check_tree(&events, &[20]).unwrap_or_else(|e| panic!("{e}"));
    let without = trace_bytes(&chain(false), 20);
    assert!(with == without, "the unused table changed the trace");
}

/// The span with `span_id` `id` in row `pid`.
fn span<'a>(events: &'a [Value], pid: u64, id: &Value) -> &'a Value {
    events
        .iter()
        .find(|e| e["pid"] == pid && e["ph"] == "X" && e["args"]["span_id"] == *id)
        .unwrap_or_else(|| panic!("span {id} in row {pid}"))
}

/// A workload's retries: one `attempt` span per attempt, straight under the
/// request (the request is the call), and the store's calls under each.
#[test]
fn a_workloads_retries_show_as_attempts_of_its_request() {
    let events = trace("scenarios/retry-policies.toml", 30);
    check_nesting(&events);
    check_tree(&events, &[30, 30, 30, 30]).unwrap_or_else(|e| panic!("{e}"));
    // row 1: no policy, no attempts; row 2: retry3
    assert!(of(&events, 1, "X", "attempt").is_empty());
    let attempts = of(&events, 2, "X", "attempt");
    let retries: Vec<_> = attempts
        .iter()
        .filter(|e| e["args"]["kind"] == "retry")
        .collect();
    assert!(!retries.is_empty(), "half the first tries fail: some retry");
    for a in &attempts {
        assert_eq!(a["args"]["call_policy"], "retry3", "{a}");
        let parent = span(&events, 2, &a["args"]["parent_id"]);
        assert_eq!(parent["cat"], "request", "{a}");
    }
    for c in of(&events, 2, "X", "call") {
        let parent = span(&events, 2, &c["args"]["parent_id"]);
        assert_eq!(parent["cat"], "attempt", "{c}");
    }
}

/// A plan's hedged call: a `call` span holding its two copies as `attempt`
/// spans; a loser kept running (`cancel_losers = false`) outlives the call.
#[test]
fn a_hedged_call_holds_its_copies() {
    let events = trace("scenarios/hedging.toml", 200);
    check_nesting(&events);
    check_tree(&events, &[200; 5]).unwrap_or_else(|e| panic!("{e}"));
    for pid in 2..=5 {
        let hedges: Vec<_> = of(&events, pid, "X", "attempt")
            .into_iter()
            .filter(|e| e["args"]["kind"] == "hedge")
            .collect();
        assert!(!hedges.is_empty(), "row {pid}: a slow first copy is hedged");
        for h in hedges {
            let call = span(&events, pid, &h["args"]["parent_id"]);
            assert_eq!(call["cat"], "call", "{h}");
            assert_eq!(call["args"]["attempts"], 2, "{call}");
        }
    }
    // the kept loser's work runs on past its call: it outlived its attempt
    let kept = of(&events, 5, "X", "work");
    assert!(
        kept.iter()
            .any(|w| w["args"]["caller_waiting"] == "false"
                && w["args"].get("outlived_id").is_some())
    );
}
