//! `resim run --spans FILE`: the recorded requests as OpenTelemetry OTLP JSON
//! (the form the collector's file exporter writes and Jaeger's UI, Tempo and
//! `resim import` read), one resource per service and dependency.
//!
//! Each request is a trace. What it holds, from the tracer's tree (see
//! [`sim::trace`](crate::sim::trace)):
//!
//! | span | kind | resource | from -> to |
//! |---|---|---|---|
//! | a request at a service (a client's, or a call's) | server (2) | the service | arrival -> answer (or drop, or cancellation) |
//! | its queue wait and service (a `server` handler) | internal (1) | the service | as in `trace.json` |
//! | a call, or one attempt of a call through a policy | client (3) | the caller | sent -> answered or given up |
//! | a call holding attempts | internal (1) | the caller | its first attempt -> the policy's last word |
//! | a dependency's work | server (2) | the dependency | work starts -> ends |
//! | a workload's request sent through its own policy (`call_policy`) | client (3) | `client` | sent -> the client's answer, its attempts below it |
//!
//! A client's request without a policy of its own is its server span at the
//! entry service, the root of its trace (sent at the instant it arrives: the
//! gateway's share, if any, is in it). The internal `service` span of a
//! request that never queued is left out (it is as long as the server span).
//! A span's parent is the span it belongs under, even when it outlives it
//! (work that ran on after its caller gave up). Times are virtual time from
//! 2024-01-01T00:00:00Z; a span that is not `ok` has status 2 (error) and its
//! outcome as the message (`timeout`, `shed`, `cancelled`...); a client span
//! names its callee (`peer.service`), an entry's server span its route
//! (`http.route`).
//! With `--spans-sample R` below 1, every span carries the trace state
//! `ot=th:...` of probability R, which `resim import` reads back.

use crate::sim::trace::{Arg, At, Trace};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Virtual time 0, in nanoseconds since the Unix epoch: 2024-01-01T00:00:00Z.
pub const EPOCH_NS: u64 = 1_704_067_200_000_000_000;

/// Server spans' ids: apart from the tracer's span ids.
const SERVER_ID_BIT: u64 = 1 << 62;

/// OTLP's span kinds.
const INTERNAL: u8 = 1;
const SERVER: u8 = 2;
const CLIENT: u8 = 3;

/// The service name of a workload's client.
pub const CLIENT_SERVICE: &str = "client";

/// One span to write.
struct Out {
    track: u32,
    id: u64,
    parent: Option<u64>,
    name: String,
    kind: u8,
    start: u64,
    end: u64,
    outcome: Option<String>,
    peer: Option<String>,
    route: Option<String>,
}

fn outcome(args: &[(&'static str, Arg)]) -> Option<String> {
    args.iter().find_map(|(k, v)| match (k, v) {
        (&"outcome", Arg::Text(t)) => Some(t.clone()),
        _ => None,
    })
}

/// The resource a span belongs to: 0.. services, then dependencies, then the
/// client.
fn resource(at: At, services: usize, dependencies: usize) -> usize {
    match at {
        At::Service(s) => s,
        At::Dependency(d) => services + d,
        At::Client => services + dependencies,
    }
}

/// The file of one compare row's recorded requests (`row`: its index, which
/// the trace ids carry); `sample`: the share of requests recorded.
pub fn render(trace: &Trace, row: usize, sample: f64) -> Vec<u8> {
    let (ns, nd) = (trace.services.len(), trace.dependencies.len());
    let in_spans = |track: u32| trace.selected.get(track as usize).is_some_and(|s| s.spans);
    let hanging = Hanging::of(trace, &in_spans);
    let mut by_resource: Vec<Vec<Out>> = (0..ns + nd + 1).map(|_| Vec::new()).collect();
    tracer_spans(trace, &hanging, &in_spans, &mut by_resource);
    server_spans(trace, &hanging, &in_spans, &mut by_resource);
    write(trace, by_resource, row, sample)
}

/// Where the tracer's spans hang in the file.
struct Hanging {
    /// The request spans, and whether each is drawn: those with attempts
    /// right under them (a workload's policy); the others are their entry
    /// server span.
    shown_request: HashMap<u64, bool>,
    /// Server spans (their index) by the tracer span their request hangs under.
    server_under: HashMap<u64, usize>,
    /// `service` spans as long as their request's server span, left out, with
    /// that server span's id.
    same_as_server: HashMap<u64, u64>,
}

impl Hanging {
    fn of(trace: &Trace, in_spans: &dyn Fn(u32) -> bool) -> Hanging {
        // the request spans drawn: those with attempts right under them (a
        // workload's policy); the others are their entry server span
        let mut shown_request: HashMap<u64, bool> = HashMap::new();
        for s in &trace.spans {
            if s.cat == "request" {
                shown_request.entry(s.id).or_insert(false);
            }
        }
        for s in &trace.spans {
            let natural = s.outlived.or(s.parent);
            if s.cat == "attempt"
                && let Some(p) = natural
                && let Some(v) = shown_request.get_mut(&p)
            {
                *v = true;
            }
        }
        // server spans by the tracer span their request hangs under
        let mut server_under: HashMap<u64, usize> = HashMap::new();
        for (i, s) in trace.servers.iter().enumerate() {
            if in_spans(s.track) {
                server_under.insert(s.under, i);
            }
        }
        // a `service` span as long as its request's server span (it never
        // queued) says nothing more: left out, what hangs under it goes under the
        // server span
        let mut same_as_server: HashMap<u64, u64> = HashMap::new();
        for s in trace.spans.iter().filter(|s| s.cat == "service") {
            if let Some(p) = s.outlived.or(s.parent)
                && let Some(&i) = server_under.get(&p)
                && trace.servers[i].start == s.start
                && trace.servers[i].end == s.end
            {
                same_as_server.insert(s.id, trace.servers[i].id | SERVER_ID_BIT);
            }
        }
        Hanging {
            shown_request,
            server_under,
            same_as_server,
        }
    }

    /// A tracer span's parent as written: the server span of its own request
    /// when there is one, else its tracer parent (a request span not drawn
    /// stands for nothing above it).
    fn parent_of(&self, trace: &Trace, natural: Option<u64>, at: At) -> Option<u64> {
        let p = natural?;
        if let Some(&server) = self.same_as_server.get(&p) {
            return Some(server);
        }
        if let Some(&i) = self.server_under.get(&p)
            && at == At::Service(trace.servers[i].service)
        {
            return Some(trace.servers[i].id | SERVER_ID_BIT);
        }
        self.request_parent(Some(p))
    }

    /// `p`, unless it is a request span not drawn.
    fn request_parent(&self, p: Option<u64>) -> Option<u64> {
        p.and_then(|p| match self.shown_request.get(&p) {
            Some(false) => None,
            _ => Some(p),
        })
    }
}

/// The tracer's spans (queue waits, service time, calls, attempts, dependency
/// work) as OTLP spans, by resource.
fn tracer_spans(
    trace: &Trace,
    hanging: &Hanging,
    in_spans: &dyn Fn(u32) -> bool,
    by_resource: &mut [Vec<Out>],
) {
    let (ns, nd) = (trace.services.len(), trace.dependencies.len());
    let failed: std::collections::HashSet<u64> = trace.failed_work.iter().copied().collect();
    for s in trace.spans.iter().filter(|s| in_spans(s.track)) {
        let natural = s.outlived.or(s.parent);
        if hanging.same_as_server.contains_key(&s.id) {
            continue;
        }
        let kind = match s.cat {
            "request" if hanging.shown_request.get(&s.id) == Some(&true) => CLIENT,
            "request" => continue,
            "queue" if matches!(s.at, At::Dependency(_)) => continue,
            "queue" | "service" => INTERNAL,
            "work" => SERVER,
            "call" if s.args.iter().any(|(k, _)| *k == "attempts") => INTERNAL,
            "call" | "attempt" => CLIENT,
            _ => INTERNAL,
        };
        // "call TARGET", "attempt N TARGET"
        let peer = match s.cat {
            "call" => s.name.split_once(' ').map(|(_, t)| t.to_string()),
            "attempt" => s.name.splitn(3, ' ').nth(2).map(str::to_string),
            _ => None,
        }
        .filter(|_| kind == CLIENT);
        let at = if s.cat == "request" { At::Client } else { s.at };
        by_resource[resource(at, ns, nd)].push(Out {
            track: s.track,
            id: s.id,
            parent: hanging.parent_of(trace, natural, s.at),
            name: s.name.clone(),
            kind,
            start: s.start.0,
            end: s.end.0,
            outcome: if failed.contains(&s.id) {
                Some("error".into())
            } else if s.cat == "work" {
                Some("ok".into())
            } else {
                outcome(&s.args)
            },
            peer,
            route: None,
        });
    }
}

/// A server span per request at a service, by resource.
fn server_spans(
    trace: &Trace,
    hanging: &Hanging,
    in_spans: &dyn Fn(u32) -> bool,
    by_resource: &mut [Vec<Out>],
) {
    for s in trace.servers.iter().filter(|s| in_spans(s.track)) {
        let route = trace.routes.get(s.service).cloned().flatten();
        let name = route
            .clone()
            .unwrap_or_else(|| trace.services[s.service].clone());
        let parent = hanging.request_parent(s.parent);
        by_resource[s.service].push(Out {
            track: s.track,
            id: s.id | SERVER_ID_BIT,
            parent,
            name,
            kind: SERVER,
            start: s.start.0,
            end: s.end.0,
            outcome: Some(s.outcome.to_string()),
            peer: None,
            route: if s.entry { route } else { None },
        });
    }
}

/// The file: a resource per service, dependency and the clients, each with
/// its spans in order.
fn write(trace: &Trace, mut by_resource: Vec<Vec<Out>>, row: usize, sample: f64) -> Vec<u8> {
    let (ns, nd) = (trace.services.len(), trace.dependencies.len());
    let state = (sample < 1.0).then(|| trace_state_for(sample));
    let mut out = String::with_capacity(trace.spans.len() * 320 + 1024);
    out.push_str("{\"resourceSpans\":[");
    let mut first_resource = true;
    for (r, spans) in by_resource.iter_mut().enumerate() {
        if spans.is_empty() {
            continue;
        }
        // a request's spans by start, the outer first (a server span before
        // the internal ones it holds)
        spans.sort_by_key(|o| {
            let rank = match o.kind {
                SERVER => 0,
                INTERNAL => 1,
                _ => 2,
            };
            (o.track, o.start, std::cmp::Reverse(o.end), rank, o.id)
        });
        let service = if r < ns {
            trace.services[r].as_str()
        } else if r < ns + nd {
            trace.dependencies[r - ns].as_str()
        } else {
            CLIENT_SERVICE
        };
        if !first_resource {
            out.push(',');
        }
        first_resource = false;
        out.push_str("\n{\"resource\":{\"attributes\":[");
        attribute(&mut out, "service.name", service);
        out.push_str("]},\"scopeSpans\":[{\"scope\":{\"name\":\"resim\",\"version\":");
        string(&mut out, env!("CARGO_PKG_VERSION"));
        out.push_str("},\"spans\":[");
        for (i, o) in spans.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('\n');
            span(&mut out, o, trace, row, state.as_deref());
        }
        out.push_str("\n]}]}");
    }
    out.push_str("\n]}\n");
    out.into_bytes()
}

fn string(out: &mut String, s: &str) {
    // serde_json escapes what JSON needs
    out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()));
}

fn attribute(out: &mut String, key: &str, value: &str) {
    out.push_str("{\"key\":");
    string(out, key);
    out.push_str(",\"value\":{\"stringValue\":");
    string(out, value);
    out.push_str("}}");
}

fn span(out: &mut String, o: &Out, trace: &Trace, row: usize, state: Option<&str>) {
    let index = trace
        .selected
        .get(o.track as usize)
        .map_or(u64::from(o.track), |s| s.index);
    let _ = write!(
        out,
        "{{\"traceId\":\"{:016x}{:016x}\",\"spanId\":\"{:016x}\"",
        row as u64 + 1,
        index + 1,
        o.id
    );
    if let Some(p) = o.parent {
        let _ = write!(out, ",\"parentSpanId\":\"{p:016x}\"");
    }
    if let Some(s) = state {
        out.push_str(",\"traceState\":");
        string(out, s);
    }
    out.push_str(",\"name\":");
    string(out, &o.name);
    let _ = write!(
        out,
        ",\"kind\":{},\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\"",
        o.kind,
        EPOCH_NS + o.start,
        EPOCH_NS + o.end.max(o.start)
    );
    let mut attrs = Vec::new();
    if let Some(r) = &o.route {
        attrs.push(("http.route", r.as_str()));
    }
    if let Some(p) = &o.peer {
        attrs.push(("peer.service", p.as_str()));
    }
    if !attrs.is_empty() {
        out.push_str(",\"attributes\":[");
        for (i, (k, v)) in attrs.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            attribute(out, k, v);
        }
        out.push(']');
    }
    match o.outcome.as_deref() {
        Some("ok") | None => out.push_str(",\"status\":{}"),
        Some(oc) => {
            out.push_str(",\"status\":{\"code\":2,\"message\":");
            string(out, oc);
            out.push('}');
        }
    }
    out.push('}');
}

/// The `ot=th:` trace state for sampling probability `p` (0 < p <= 1): the
/// threshold's hex digits with trailing zeros left out (`th:0` for 1).
pub fn trace_state_for(p: f64) -> String {
    let t = ((1.0 - p) * (1u64 << 56) as f64).round() as u64;
    let t = t.min((1u64 << 56) - 1);
    let hex = format!("{t:014x}");
    let trimmed = hex.trim_end_matches('0');
    format!("ot=th:{}", if trimmed.is_empty() { "0" } else { trimmed })
}
