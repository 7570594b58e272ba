//! Istio's traffic resources (YAML or JSON, one document or several):
//! `VirtualService` (routes' timeouts and retries) and `DestinationRule`
//! (load balancing, connection pool limits, outlier detection, retry budget:
//! [`super::istio_rule`]). Istio programs Envoy with them, so their rules are
//! Envoy's ([`super::envoy`]); what Istio writes when a field is absent or 0
//! is Istio's code's: a route without `retries` gets `retry.DefaultPolicy`
//! (2 retries on `connect-failure,refused-stream,unavailable,cancelled,
//! retriable-status-codes` with 503, Envoy's 25 ms back-off), a `retries`
//! without attempts gets none (`ConvertPolicy`, pilot/pkg/networking/core/
//! route/retry/retry.go), and the rest as [`super::istio_rule`] says.
//!
//! The scenario: a destination host is a server (`[services.NAME]`, NAME the
//! host's first label; `replicas` to set), each HTTP route of a virtual
//! service a client workload sending through the route's policy; a host with
//! a DestinationRule and no route gets a workload under Istio's default
//! retry policy.

use super::draft::{
    Draft, Fate, Ledger, Tab, Val, name, placeholder_server, placeholder_workload, unique,
};
use super::duration::{Syntax, ms};
use super::envoy_retry::outcomes;
use super::istio_rule::{DR, Names, Rule, destination_rule, fqdn, least_request};
use super::spec::{Binding, Field, Read, Table, Unknown, read};
use super::tree::{Node, Source};
use crate::error::Error;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Istio's default `retryOn` (retry.go `defaultPolicy`), with its
/// `RetriableStatusCodes` 503.
const DEFAULT_RETRY_ON: [&str; 5] = [
    "connect-failure",
    "refused-stream",
    "unavailable",
    "cancelled",
    "retriable-status-codes",
];

static RETRIES: Table = Table {
    at: "http[].retries",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "attempts",
            "retries after the first try",
            "policies.{}.retry.max_attempts",
            "attempts + 1 (Istio's attempts are retries); 0: no retry policy at all (ConvertPolicy returns none)",
        )
        .or("0", "no retry policy (ConvertPolicy); Istio refuses a `retries` that sets perTryTimeout, retryOn or retryRemoteLocalities without attempts"),
        Field::maps(
            "perTryTimeout",
            "each attempt's timeout",
            "policies.{}.timeout_ms",
            "each attempt's own timeout; a timed-out attempt is retried only when retryOn names 5xx, gateway-error or reset (Envoy resets it: RetryStateImpl::wouldRetryFromReset)",
        )
        .or("(none)", "no per-try timeout"),
        Field::code(
            "retryOn",
            "the conditions retried, comma separated, HTTP status codes among them",
            "policies.{}.retry.on",
            "as Envoy's retry_on (numbers become retriable_status_codes, and retriable-status-codes is added: retry.go parseRetryOn); empty: Istio's default",
        )
        .or(
            "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes (503)",
            "`on = [\"error\", \"shed\"]`: a down pod, a 503, a gRPC UNAVAILABLE; not a per-try timeout",
        ),
        Field::maps(
            "backoff",
            "the back-off's base interval",
            "policies.{}.retry.backoff.base_ms",
            "Envoy's base_interval, max 10 x base: retry k waits U(0, min((2^k - 1) x base, 10 x base))",
        )
        .or("25ms", "`backoff = { kind = \"envoy\", base_ms = 25, cap_ms = 250 }`"),
        Field::ignored("retryRemoteLocalities", "retry in other localities", "localities: resim balances over all the pods"),
        Field::ignored("retryIgnorePreviousHosts", "avoid the hosts tried", "resim's balancer picks each attempt anew"),
    ],
};

static HTTP: Table = Table {
    at: "spec.http[]",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted("rewrites, headers, mirrors and CORS: not modelled"),
    fields: &[
        Field::code("name", "the route's name", "workloads.*", "names the route's workload and policy"),
        Field::code("match", "which requests take the route", "services.*.routes", "the first match's uri `prefix` or `exact`: the route the workload sends to"),
        Field::code("route", "the destinations", "services.*", "the first destination's host is the server; a weighted split is approximated as all to the first"),
        Field::maps("timeout", "the whole call's deadline, every retry included", "workloads.{}.timeout_ms", "the call's deadline, retries included; 0: none")
            .or("(none)", "no route timeout: Istio sets Envoy's to 0"),
        Field::nested("retries", "the retry policy", &RETRIES).or(
            "attempts 2 on connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes (503)",
            "Istio's default policy (retry.DefaultPolicy): `max_attempts = 3`, `on = [\"error\", \"shed\"]`, Envoy's 25 ms back-off",
        ),
        Field::ignored("fault", "fault injection", "resim's faults are `[[faults]]`"),
    ],
};

static VS_SPEC: Table = Table {
    at: "spec",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::items("http", "the HTTP routes, each a client workload", &HTTP),
        Field::ignored(
            "hosts",
            "the hosts it routes",
            "the destinations name the servers",
        ),
        Field::ignored("gateways", "the gateways it applies to", "not modelled"),
        Field::ignored("tcp", "TCP routes", "resim models the HTTP routes"),
        Field::ignored("tls", "TLS routes", "resim models the HTTP routes"),
        Field::ignored("exportTo", "visibility", "not modelled"),
    ],
};

static VS: Table = Table {
    at: "VirtualService",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::ignored("apiVersion", "the API", "the resource's identity"),
        Field::ignored("kind", "the kind", "the resource's identity"),
        Field::ignored(
            "metadata",
            "its name and namespace",
            "the resource's identity: names the workloads",
        ),
        Field::ignored("status", "its status", "not configuration"),
        Field::nested("spec", "the routes", &VS_SPEC),
    ],
};

/// The format's field tables, for the docs.
pub static TABLES: [&Table; 2] = [&VS, &DR];

fn istio_kind(v: &Value) -> Option<&str> {
    let api = v.get("apiVersion")?.as_str()?;
    if !api.starts_with("networking.istio.io/") {
        return None;
    }
    v.get("kind")?.as_str()
}

/// Does this document look like an Istio resource?
pub fn looks_like(v: &Value) -> bool {
    istio_kind(v).is_some()
}

/// A route's retry policy as Istio writes Envoy's.
#[derive(Debug, Clone)]
struct Retry {
    retries: u64,
    on: Vec<&'static str>,
    per_try: Option<f64>,
    base: f64,
}

/// Istio's default policy (retry.go `DefaultPolicy`), its outcomes by the
/// rules of Envoy's `retry_on`.
fn default_retry(at: &Node<'_>) -> Result<Retry, Error> {
    let (on, _) = outcomes(&DEFAULT_RETRY_ON, &[503], at)?;
    Ok(Retry {
        retries: 2,
        on,
        per_try: None,
        base: 25.0,
    })
}

/// Go's `http.StatusText(i) != ""`: the codes Istio takes in `retryOn`.
fn status_code(i: u64) -> bool {
    matches!(i, 100..=103 | 200..=208 | 226 | 300..=308 | 400..=418 | 421..=426 | 428 | 429 | 431 | 451 | 500..=508 | 510 | 511)
}

/// The route's retry policy: None when Istio writes none.
fn retries(h: &Read<'_>, scope: &str, led: &mut Ledger) -> Result<Option<Retry>, Error> {
    let Some(r) = h.nested("retries", scope, led)? else {
        return default_retry(&h.node).map(Some);
    };
    let attempts = match r.get("attempts") {
        Some(a) => a.i32("a protobuf int32")?,
        None => 0,
    };
    if attempts == 0 {
        if let Some(k) = ["perTryTimeout", "retryOn", "retryRemoteLocalities"]
            .into_iter()
            .find(|k| r.has(k))
        {
            return Err(r.node.err(format!("sets `{k}` without attempts: Istio refuses it (http retry policy configured when attempts are set to 0)")));
        }
        r.amend(
            led,
            "attempts",
            Fate::Mapped,
            "0: no retry policy (ConvertPolicy returns none)",
        );
        return Ok(None);
    }
    let mut retry = default_retry(&r.node)?;
    retry.retries = attempts;
    if let Some(o) = r.get("retryOn") {
        let s = o.str()?;
        if s.trim().is_empty() {
            r.note(led, "retryOn", Fate::Mapped, format!("empty: Istio keeps its default (ConvertPolicy reads retryOn only when not empty) -> {}", retry.on.join(", ")));
        } else {
            let mut parts = Vec::new();
            let mut codes = Vec::new();
            for p in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                match p.parse::<u64>() {
                    Ok(c) if status_code(c) => codes.push(c),
                    _ => parts.push(p),
                }
            }
            if !codes.is_empty() && !parts.contains(&"retriable-status-codes") {
                parts.push("retriable-status-codes");
            }
            let (on, how) = outcomes(&parts, &codes, &o)?;
            r.note(led, "retryOn", Fate::Approximated, how);
            retry.on = on;
        }
    }
    if let Some(p) = r.get("perTryTimeout") {
        let v = ms(&p, Syntax::Go)?;
        retry.per_try = (v > 0.0).then_some(v);
    }
    if let Some(b) = r.get("backoff") {
        let v = ms(&b, Syntax::Go)?;
        if v <= 0.0 {
            return Err(b.err("must be above 0 (Envoy refuses a base_interval of 0)"));
        }
        retry.base = v;
    }
    Ok(Some(retry))
}

/// The policy table of a retry policy and the host's budget: None when it
/// sets nothing.
fn policy(pname: &str, note: String, retry: Option<&Retry>, budget: Option<&Val>) -> Option<Tab> {
    let r = retry?;
    let mut pol = Tab::new(format!("policies.{pname}"));
    pol.notes.push(note);
    if let Some(t) = r.per_try {
        pol.put_noted("timeout_ms", Val::n(t), "perTryTimeout");
    }
    if !r.on.is_empty() {
        let mut items = vec![
            ("max_attempts", Val::n((r.retries + 1) as f64)),
            ("on", Val::strs(r.on.iter().copied())),
            (
                "backoff",
                Val::table(&[
                    ("kind", Val::s("envoy")),
                    ("base_ms", Val::n(r.base)),
                    ("cap_ms", Val::n(10.0 * r.base)),
                ]),
            ),
        ];
        if let Some(b) = budget {
            items.push(("budget", b.clone()));
        }
        pol.put("retry", Val::table(&items));
    }
    (!pol.items.is_empty()).then_some(pol)
}

/// The scenario, gathered over the resources.
#[derive(Default)]
struct Build {
    /// (server, routes).
    services: Vec<(String, Vec<String>)>,
    /// Where each server is in `services`.
    svc_at: HashMap<String, usize>,
    /// The routes the workloads send to.
    routes: HashSet<String>,
    /// The workloads' names.
    wnames: HashSet<String>,
    /// The server of each host.
    names: Names,
    policies: Vec<Tab>,
    workloads: Vec<Tab>,
}

impl Build {
    fn virtual_service(
        &mut self,
        doc: &Node<'_>,
        rules: &HashMap<&str, &Rule>,
        led: &mut Ledger,
    ) -> Result<(), Error> {
        let vs_name = doc
            .v
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("vs")
            .to_string();
        let d = read(doc, &VS, "*", led)?;
        let spec = d
            .nested("spec", "*", led)?
            .ok_or_else(|| doc.err("a VirtualService needs `spec`"))?;
        for (i, h) in spec.items("http")?.into_iter().enumerate() {
            self.http(&spec, &h, i, &vs_name, rules, led)?;
        }
        Ok(())
    }

    /// One HTTP route: a workload and its policy.
    fn http(
        &mut self,
        spec: &Read<'_>,
        h: &Node<'_>,
        i: usize,
        vs_name: &str,
        rules: &HashMap<&str, &Rule>,
        led: &mut Ledger,
    ) -> Result<(), Error> {
        let Some(first) = h.v.get("route").and_then(|r| r.get(0)) else {
            led.note(
                h,
                Fate::Ignored,
                "",
                "a route without destinations (redirect, direct response, delegate)",
            );
            return Ok(());
        };
        let base = name(&format!(
            "{vs_name}-{}",
            h.v.get("name")
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_else(|| i.to_string())
        ));
        let wname = self.workload_name(&base);
        let r = spec.item("http", h, &wname, led)?;
        let host = first
            .get("destination")
            .and_then(|d| d.get("host"))
            .and_then(Value::as_str)
            .ok_or_else(|| h.err("route[0] needs `destination.host`"))?
            .to_string();
        let svc = self.names.of(&fqdn(&host, h));
        note_destinations(&r, &svc, led)?;
        r.note(
            led,
            "name",
            Fate::Mapped,
            format!("the workload and policy `{wname}`"),
        );
        let path =
            h.v.get("match")
                .and_then(|m| m.get(0))
                .and_then(|x| x.get("uri"))
                .and_then(|u| u.get("prefix").or_else(|| u.get("exact")))
                .and_then(Value::as_str);
        let route = self.route(&svc, path, i);
        let fate = if path.is_some() {
            Fate::Mapped
        } else {
            Fate::Approximated
        };
        r.note(
            led,
            "match",
            fate,
            format!("the route {route} (the first match's uri)"),
        );
        let mut w = placeholder_workload(
            &wname,
            &route,
            "requests per second on this route; the resources do not say",
            "how long the clients send",
        );
        w.notes.push(format!(
            "clients of VirtualService `{vs_name}`, http[{i}], to {host}"
        ));
        if let Some(t) = r.get("timeout") {
            let v = ms(&t, Syntax::Go)?;
            if v > 0.0 {
                w.put_noted("timeout_ms", Val::n(v), "http timeout");
            } else {
                r.amend(led, "timeout", Fate::Mapped, "0: no timeout");
            }
        }
        let retry = retries(&r, &wname, led)?;
        let budget = rules.get(svc.as_str()).and_then(|x| x.budget.as_ref());
        if let Some(pol) = policy(
            &wname,
            format!("VirtualService `{vs_name}`, http[{i}]"),
            retry.as_ref(),
            budget,
        ) {
            w.put("call_policy", Val::s(&wname));
            self.policies.push(pol);
        }
        self.workloads.push(w);
        Ok(())
    }

    /// The route of server `svc` for `path` (its own when none), named apart
    /// when another route has it.
    fn route(&mut self, svc: &str, path: Option<&str>, i: usize) -> String {
        let mut route = path.map(String::from).unwrap_or_else(|| format!("/{svc}"));
        // every route read so far is a workload's: another one is apart
        if self.routes.contains(&route) {
            route = unique(&format!("/{svc}/{i}"), |r| self.routes.contains(r));
        }
        self.routes.insert(route.clone());
        match self.svc_at.get(svc) {
            Some(&at) => self.services[at].1.push(route.clone()),
            None => {
                self.svc_at.insert(svc.to_string(), self.services.len());
                self.services.push((svc.to_string(), vec![route.clone()]));
            }
        }
        route
    }

    /// `base`, or a name like it that no workload has yet, now taken.
    fn workload_name(&mut self, base: &str) -> String {
        let n = unique(base, |n| self.wnames.contains(n));
        self.wnames.insert(n.clone());
        n
    }

    /// A host with a DestinationRule and no route: clients sending to it
    /// directly, under Istio's default retry policy and the host's budget.
    fn default_route(&mut self, rule: &Rule, at: &Node<'_>) -> Result<(), Error> {
        let svc = &rule.svc;
        let route = self.route(svc, None, 0);
        // the workload and policy take the server's name, unless a route's
        // workload has it (VirtualService `a`, route `b` and the host `a-b`)
        let wname = self.workload_name(svc);
        let mut w = placeholder_workload(
            &wname,
            &route,
            "requests per second; the resources do not say",
            "how long the clients send",
        );
        w.notes.push(format!(
            "no VirtualService routes to {}: clients sending to it directly",
            rule.host
        ));
        let retry = default_retry(at)?;
        if let Some(pol) = policy(&wname, "Istio's default retry policy for mesh traffic (retry.DefaultPolicy), with the host's retry limit".into(), Some(&retry), rule.budget.as_ref()) {
            w.put("call_policy", Val::s(&wname));
            self.policies.push(pol);
        }
        self.workloads.push(w);
        Ok(())
    }
}

/// Notes the route's destinations: every request goes to the first.
fn note_destinations(r: &Read<'_>, svc: &str, led: &mut Ledger) -> Result<(), Error> {
    if let Some(route) = r.get("route") {
        let dests = route.items()?;
        let (fate, how) = if dests.len() == 1 {
            (
                Fate::Mapped,
                format!("the route's destination: the server `{svc}`"),
            )
        } else {
            (
                Fate::Approximated,
                format!(
                    "every request to the first destination, the server `{svc}`: weighted splits and subsets are not modelled"
                ),
            )
        };
        r.note(led, "route", fate, how);
    }
    Ok(())
}

/// The tables of one server: itself, its limiter, its outlier detection and
/// its handler.
fn server(svc: &str, routes: &[String], rule: Option<&Rule>, limiters: &mut Vec<Tab>) -> Vec<Tab> {
    let mut s = Tab::new(format!("services.{svc}"));
    s.notes.push(format!("the host `{svc}`"));
    s.put("routes", Val::strs(routes.iter().map(String::as_str)));
    s.set_me(
        "replicas",
        Val::n(3.0),
        "the host's pods; the resources do not say",
    );
    s.put(
        "balancer",
        rule.map(|r| r.balancer.clone())
            .unwrap_or_else(least_request),
    );
    if let Some(limit) = rule.and_then(|r| r.max_requests) {
        let lname = format!("{svc}-max-requests");
        let mut l = Tab::new(format!("limiters.{lname}"));
        l.notes.push(
            "connectionPool.http.http2MaxRequests: a cap on requests in flight held by each proxy"
                .into(),
        );
        l.put("kind", Val::s("concurrency"));
        l.put("algorithm", Val::s("fixed"));
        l.put("limit", Val::n(limit as f64));
        limiters.push(l);
        s.put_noted(
            "middleware",
            Val::strs([lname.as_str()]),
            "the proxy's http2MaxRequests, at the host's entrance",
        );
    }
    let mut tabs = vec![s];
    if let Some(mut o) = rule.and_then(|r| r.outlier.clone()) {
        o.header = format!("services.{svc}.outlier_detection");
        tabs.push(o);
    }
    tabs.push(placeholder_server(
        svc,
        "requests each pod handles at once",
        "requests",
        "a pod's own time per request",
    ));
    tabs
}

/// Builds the scenario of the Istio resources of one or more files.
pub fn import(srcs: &[&Source], draft: &mut Draft, led: &mut Ledger) -> Result<(), Error> {
    let mut rules: Vec<(Rule, Node<'_>)> = Vec::new();
    let mut rule_svcs = HashSet::new();
    let mut names = Names::default();
    let mut vss = Vec::new();
    for src in srcs {
        for d in 0..src.docs.len() {
            let doc = src.root(d);
            match istio_kind(doc.v) {
                Some("DestinationRule") => {
                    let rule = destination_rule(&doc, &mut names, led)?;
                    if !rule_svcs.insert(rule.svc.clone()) {
                        led.note(
                            &doc,
                            Fate::Ignored,
                            "",
                            format!(
                                "a second DestinationRule for `{}`: the first one read is used",
                                rule.svc
                            ),
                        );
                        led.warn_last();
                    } else {
                        rules.push((rule, doc));
                    }
                }
                Some("VirtualService") => vss.push(doc),
                Some(other) => led.note(
                    &doc,
                    Fate::Ignored,
                    "",
                    format!("an Istio {other}: not a resilience setting resim models"),
                ),
                None => led.note(&doc, Fate::Ignored, "", "not an Istio networking resource"),
            }
        }
    }
    let mut b = Build {
        names,
        ..Build::default()
    };
    let plain: HashMap<&str, &Rule> = rules.iter().map(|(r, _)| (r.svc.as_str(), r)).collect();
    for doc in &vss {
        b.virtual_service(doc, &plain, led)?;
    }
    for (rule, doc) in &rules {
        if !b.svc_at.contains_key(&rule.svc) {
            b.default_route(rule, doc)?;
        }
    }
    if b.services.is_empty() {
        return Err(srcs[0].root(0).err(
            "no VirtualService with an HTTP route and no DestinationRule: nothing to import",
        ));
    }
    let mut limiters = Vec::new();
    let mut svc_tabs = Vec::new();
    for (svc, routes) in &b.services {
        let rule = plain.get(svc.as_str()).copied();
        svc_tabs.extend(server(svc, routes, rule, &mut limiters));
    }
    draft.tabs.extend(b.policies);
    draft.tabs.extend(limiters);
    draft.tabs.extend(svc_tabs);
    draft.tabs.extend(b.workloads);
    Ok(())
}
