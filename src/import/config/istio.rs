//! Istio's traffic resources (YAML or JSON, one document or several):
//! `VirtualService` (routes' timeouts and retries) and `DestinationRule`
//! (load balancing, connection pool limits, outlier detection, retry budget).
//! Istio programs Envoy with them, so their rules are Envoy's
//! ([`super::envoy`]); what Istio sets when a field is absent is Istio's:
//! 2 retries on `connect-failure,refused-stream,unavailable,cancelled,503`
//! with Envoy's 25 ms back-off, no route timeout, `LEAST_REQUEST` balancing,
//! no limit on pending requests, requests or retries.
//!
//! The scenario: a destination host is a server (`[services.NAME]`, NAME the
//! host's first label; `replicas` to set), each HTTP route of a virtual
//! service a client workload sending through the route's policy.

use super::draft::{Draft, Fate, Ledger, Tab, Val, name, placeholder_server, placeholder_workload};
use super::duration::{Syntax, ms};
use super::tree::{Node, Source};
use crate::error::Error;
use serde_json::Value;

const VS_SPEC: [&str; 6] = ["hosts", "gateways", "http", "tcp", "tls", "exportTo"];
const HTTP: [&str; 16] = [
    "name",
    "match",
    "route",
    "redirect",
    "directResponse",
    "delegate",
    "rewrite",
    "timeout",
    "retries",
    "fault",
    "mirror",
    "mirrors",
    "mirrorPercentage",
    "corsPolicy",
    "headers",
    "mirror_percent",
];
const RETRIES: [&str; 6] = [
    "attempts",
    "perTryTimeout",
    "retryOn",
    "retryRemoteLocalities",
    "retryIgnorePreviousHosts",
    "backoff",
];
const DR_SPEC: [&str; 5] = [
    "host",
    "trafficPolicy",
    "subsets",
    "exportTo",
    "workloadSelector",
];
const POLICY: [&str; 8] = [
    "loadBalancer",
    "retryBudget",
    "connectionPool",
    "outlierDetection",
    "tls",
    "portLevelSettings",
    "tunnel",
    "proxyProtocol",
];
const OUTLIER: [&str; 9] = [
    "consecutive5xxErrors",
    "consecutiveGatewayErrors",
    "consecutiveErrors",
    "interval",
    "baseEjectionTime",
    "maxEjectionPercent",
    "minHealthPercent",
    "splitExternalLocalOriginErrors",
    "consecutiveLocalOriginFailures",
];
const HTTP_POOL: [&str; 8] = [
    "http1MaxPendingRequests",
    "http2MaxRequests",
    "maxRequestsPerConnection",
    "maxRetries",
    "idleTimeout",
    "h2UpgradePolicy",
    "useClientProtocol",
    "maxConcurrentStreams",
];

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

/// The service a host names: its first label (`reviews.prod.svc.cluster.local`
/// is `reviews`).
fn host_name(h: &str) -> String {
    name(h.split('.').next().unwrap_or(h))
}

/// A destination rule's settings for one host.
struct Rule {
    balancer: Val,
    max_requests: Option<u64>,
    budget: Option<Val>,
    outlier: Option<Tab>,
}

fn child<'a>(n: &Node<'a>, f: &[(&'static str, Node<'a>)], k: &str) -> Option<Node<'a>> {
    let _ = n;
    f.iter().find(|(x, _)| *x == k).map(|(_, v)| v.clone())
}

/// Builds the scenario of the Istio resources of one or more files.
pub fn import(srcs: &[&Source], draft: &mut Draft, led: &mut Ledger) -> Result<(), Error> {
    let mut rules: Vec<(String, Rule)> = Vec::new();
    let mut services: Vec<(String, Vec<String>)> = Vec::new();
    let mut policies = Vec::new();
    let mut workloads = Vec::new();
    let mut vss = Vec::new();
    for src in srcs {
        for d in 0..src.docs.len() {
            let doc = src.root(d);
            match istio_kind(doc.v) {
                Some("DestinationRule") => {
                    let (host, rule) = destination_rule(&doc, led)?;
                    rules.push((host, rule));
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
    for doc in &vss {
        let mut spec = None;
        for (k, v) in doc.named()? {
            match k.as_str() {
                "spec" => spec = Some(v),
                "metadata" | "apiVersion" | "kind" | "status" => led.note(
                    &v,
                    Fate::Ignored,
                    "",
                    "the resource's identity: names the policies below",
                ),
                _ => return Err(v.err(
                    "not a field of a VirtualService (apiVersion, kind, metadata, spec, status)",
                )),
            }
        }
        let spec = spec.ok_or_else(|| doc.err("a VirtualService needs `spec`"))?;
        let vs_name = doc
            .v
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("vs")
            .to_string();
        let f = spec.fields(&VS_SPEC, false)?;
        for (k, v) in &f {
            if *k != "http" {
                led.note(
                    v,
                    Fate::Ignored,
                    "",
                    "hosts, gateways, TCP and TLS routes: resim models the HTTP routes",
                );
            }
        }
        let Some(http) = child(&spec, &f, "http") else {
            continue;
        };
        for (i, h) in http.items()?.into_iter().enumerate() {
            let hf = h.fields(&HTTP, false)?;
            let Some(route) = child(&h, &hf, "route") else {
                led.note(
                    &h,
                    Fate::Ignored,
                    "",
                    "a route without destinations (redirect, direct response, delegate)",
                );
                continue;
            };
            let dests = route.items()?;
            let Some(first) = dests.first() else { continue };
            let host = first
                .v
                .get("destination")
                .and_then(|d| d.get("host"))
                .and_then(Value::as_str)
                .ok_or_else(|| first.err("needs `destination.host`"))?
                .to_string();
            for (j, d) in dests.iter().enumerate() {
                led.note(d, if j == 0 && dests.len() == 1 { Fate::Mapped } else if j == 0 { Fate::Approximated } else { Fate::Ignored }, "services.*", if dests.len() == 1 { "the route's destination" } else if j == 0 { "resim sends the route's requests to its first destination; weighted splits and subsets are not modelled" } else { "a further weighted destination: not modelled" });
            }
            let svc = host_name(&host);
            let path = match child(&h, &hf, "match") {
                Some(m) => {
                    let p =
                        m.v.get(0)
                            .and_then(|x| x.get("uri"))
                            .and_then(|u| u.get("prefix").or_else(|| u.get("exact")))
                            .and_then(Value::as_str)
                            .map(String::from);
                    led.note(
                        &m,
                        if p.is_some() {
                            Fate::Mapped
                        } else {
                            Fate::Approximated
                        },
                        "services.*.routes",
                        "the route the workload sends to (the first match's uri)",
                    );
                    p
                }
                None => None,
            };
            let mut route_path = path.unwrap_or_else(|| format!("/{svc}"));
            if services
                .iter()
                .any(|(s, r)| *s != svc && r.contains(&route_path))
                || workloads.iter().any(|w: &Tab| {
                    w.items
                        .iter()
                        .any(|it| it.key == "route" && it.value.0 == Val::s(&route_path).0)
                })
            {
                route_path = format!("/{svc}/{i}");
            }
            match services.iter_mut().find(|(s, _)| *s == svc) {
                Some((_, r)) => r.push(route_path.clone()),
                None => services.push((svc.clone(), vec![route_path.clone()])),
            }
            for (k, v) in &hf {
                if *k == "name" {
                    led.note(
                        v,
                        Fate::Mapped,
                        "workloads.*",
                        "names the route's workload and policy",
                    );
                } else if !["route", "match", "timeout", "retries"].contains(k) {
                    led.note(v, Fate::Ignored, "", "rewrites, headers, mirrors, CORS and fault injection: not modelled (resim's faults are `[[faults]]`)");
                }
            }
            let wname = name(&format!(
                "{vs_name}-{}",
                h.v.get("name")
                    .and_then(Value::as_str)
                    .map(String::from)
                    .unwrap_or_else(|| i.to_string())
            ));
            let mut w = placeholder_workload(
                &wname,
                &route_path,
                "requests per second on this route; the resources do not say",
                "how long the clients send",
            );
            w.notes.push(format!(
                "clients of VirtualService `{vs_name}`, http[{i}], to {host}"
            ));
            match child(&h, &hf, "timeout") {
                Some(t) => {
                    let v = ms(&t, Syntax::Go)?;
                    led.note(
                        &t,
                        Fate::Mapped,
                        format!("workloads.{wname}.timeout_ms"),
                        "the call's deadline, every retry included",
                    );
                    if v > 0.0 {
                        w.put_noted("timeout_ms", Val::n(v), "http timeout");
                    }
                }
                None => led.absent(
                    &h,
                    "timeout",
                    "(none)",
                    "",
                    "Istio's default: no route timeout",
                ),
            }
            let pname = wname.clone();
            let mut pol = Tab::new(format!("policies.{pname}"));
            pol.notes
                .push(format!("VirtualService `{vs_name}`, http[{i}]"));
            let rule = rules
                .iter()
                .find(|(hh, _)| host_name(hh) == svc)
                .map(|(_, r)| r);
            let at = |k: &str| format!("policies.{pname}.retry.{k}");
            let (attempts, on, per_try) = match child(&h, &hf, "retries") {
                Some(r) => {
                    let rf = r.fields(&RETRIES, false)?;
                    let attempts = match child(&r, &rf, "attempts") {
                        Some(a) => {
                            let n = a.whole()?;
                            led.note(
                                &a,
                                Fate::Mapped,
                                at("max_attempts"),
                                "attempts + 1 (Istio's attempts are retries)",
                            );
                            n
                        }
                        None => {
                            led.absent(&r, "attempts", "2", at("max_attempts"), "Istio's default");
                            2
                        }
                    };
                    let on = match child(&r, &rf, "retryOn") {
                        Some(o) => super::envoy::retry_on(&o, &[], true, led, &at("on"))?,
                        None => {
                            led.absent(
                                &r,
                                "retryOn",
                                "connect-failure,refused-stream,unavailable,cancelled,503",
                                at("on"),
                                "Istio's default: -> error, shed, timeout",
                            );
                            vec!["timeout", "error", "shed"]
                        }
                    };
                    let per_try = match child(&r, &rf, "perTryTimeout") {
                        Some(p) => {
                            let v = ms(&p, Syntax::Go)?;
                            led.note(
                                &p,
                                Fate::Mapped,
                                format!("policies.{pname}.timeout_ms"),
                                "each attempt's own timeout",
                            );
                            (v > 0.0).then_some(v)
                        }
                        None => None,
                    };
                    for (k, v) in &rf {
                        if !["attempts", "retryOn", "perTryTimeout"].contains(k) {
                            led.note(v, Fate::Ignored, "", "localities, host choice and back-off tuning: resim uses Envoy's 25 ms back-off");
                        }
                    }
                    (attempts, on, per_try)
                }
                None => {
                    led.absent(
                        &h,
                        "retries",
                        "attempts 2 on connect-failure,refused-stream,unavailable,cancelled,503",
                        at("max_attempts"),
                        "Istio's default retry policy",
                    );
                    (2, vec!["timeout", "error", "shed"], None)
                }
            };
            if let Some(t) = per_try {
                pol.put_noted("timeout_ms", Val::n(t), "perTryTimeout");
            }
            if attempts > 0 && !on.is_empty() {
                let mut items = vec![
                    ("max_attempts", Val::n((attempts + 1) as f64)),
                    ("on", Val::strs(on.iter().copied())),
                    (
                        "backoff",
                        Val::table(&[
                            ("kind", Val::s("envoy")),
                            ("base_ms", Val::n(25.0)),
                            ("cap_ms", Val::n(250.0)),
                        ]),
                    ),
                ];
                if let Some(b) = rule.and_then(|r| r.budget.clone()) {
                    items.push(("budget", b));
                }
                pol.put("retry", Val::table(&items));
            }
            if !pol.items.is_empty() {
                w.put("call_policy", Val::s(&pname));
                policies.push(pol);
            }
            workloads.push(w);
        }
    }
    // destination rules of hosts no route sends to still get their server
    for (h, _) in &rules {
        let svc = host_name(h);
        if !services.iter().any(|(s, _)| *s == svc) {
            services.push((svc.clone(), vec![format!("/{svc}")]));
            let mut w = placeholder_workload(
                &svc,
                &format!("/{svc}"),
                "requests per second; the resources do not say",
                "how long the clients send",
            );
            w.notes.push(format!(
                "no VirtualService routes to {h}: clients sending to it directly"
            ));
            // Istio's default retries apply to plain mesh traffic too
            let mut pol = Tab::new(format!("policies.{svc}"));
            pol.notes
                .push("Istio's default retry policy for mesh traffic".into());
            pol.put(
                "retry",
                Val::table(&[
                    ("max_attempts", Val::n(3.0)),
                    ("on", Val::strs(["timeout", "error", "shed"])),
                    (
                        "backoff",
                        Val::table(&[
                            ("kind", Val::s("envoy")),
                            ("base_ms", Val::n(25.0)),
                            ("cap_ms", Val::n(250.0)),
                        ]),
                    ),
                ]),
            );
            w.put("call_policy", Val::s(&svc));
            policies.push(pol);
            workloads.push(w);
        }
    }
    if services.is_empty() {
        let src = srcs[0];
        return Err(src.root(0).err(
            "no VirtualService with an HTTP route and no DestinationRule: nothing to import",
        ));
    }
    let mut limiters = Vec::new();
    let mut svc_tabs = Vec::new();
    for (svc, routes) in &services {
        let rule = rules
            .iter()
            .find(|(h, _)| host_name(h) == *svc)
            .map(|(_, r)| r);
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
            rule.map(|r| r.balancer.clone()).unwrap_or_else(|| {
                Val::table(&[
                    ("kind", Val::s("least_request")),
                    ("view", Val::s("caller")),
                ])
            }),
        );
        if let Some(limit) = rule.and_then(|r| r.max_requests) {
            let lname = format!("{svc}-max-requests");
            let mut l = Tab::new(format!("limiters.{lname}"));
            l.notes.push("connectionPool.http.http2MaxRequests: a cap on requests in flight held by each proxy".into());
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
        svc_tabs.push(s);
        if let Some(o) = rule.and_then(|r| r.outlier.clone()) {
            let mut o = o;
            o.header = format!("services.{svc}.outlier_detection");
            svc_tabs.push(o);
        }
        svc_tabs.push(placeholder_server(
            svc,
            "requests each pod handles at once",
            "requests",
            "a pod's own time per request",
        ));
    }
    draft.tabs.extend(policies);
    draft.tabs.extend(limiters);
    draft.tabs.extend(svc_tabs);
    draft.tabs.extend(workloads);
    Ok(())
}

fn destination_rule(doc: &Node<'_>, led: &mut Ledger) -> Result<(String, Rule), Error> {
    let mut spec = None;
    for (k, v) in doc.named()? {
        match k.as_str() {
            "spec" => spec = Some(v),
            "metadata" | "apiVersion" | "kind" | "status" => {
                led.note(&v, Fate::Ignored, "", "the resource's identity")
            }
            _ => {
                return Err(v.err(
                    "not a field of a DestinationRule (apiVersion, kind, metadata, spec, status)",
                ));
            }
        }
    }
    let spec = spec.ok_or_else(|| doc.err("a DestinationRule needs `spec`"))?;
    let f = spec.fields(&DR_SPEC, false)?;
    let host = child(&spec, &f, "host").ok_or_else(|| spec.err("needs `host`"))?;
    let host_s = host.str()?.to_string();
    led.note(
        &host,
        Fate::Mapped,
        format!("services.{}", host_name(&host_s)),
        "the host's server",
    );
    let mut rule = Rule {
        balancer: Val::table(&[
            ("kind", Val::s("least_request")),
            ("view", Val::s("caller")),
        ]),
        max_requests: None,
        budget: None,
        outlier: None,
    };
    for (k, v) in &f {
        match *k {
            "host" => {}
            "subsets" => led.note(v, Fate::Ignored, "", "subsets: resim sends a host's requests to all its replicas under the host's policy"),
            "trafficPolicy" => {}
            _ => led.note(v, Fate::Ignored, "", "visibility and workload selection: not modelled"),
        }
    }
    let svc = host_name(&host_s);
    let Some(tp) = child(&spec, &f, "trafficPolicy") else {
        led.absent(
            &spec,
            "trafficPolicy",
            "LEAST_REQUEST, no limits",
            format!("services.{svc}.balancer"),
            "Istio's defaults",
        );
        return Ok((host_s, rule));
    };
    let pf = tp.fields(&POLICY, false)?;
    let mut lb_seen = false;
    let mut pool_retries = None;
    let mut budget = None;
    for (k, v) in &pf {
        match *k {
            "loadBalancer" => {
                lb_seen = true;
                for (k2, x) in v.named()? {
                    match k2.as_str() {
                        "simple" => {
                            let s = x.str()?.to_ascii_uppercase();
                            rule.balancer = match s.as_str() {
                                "ROUND_ROBIN" => Val::s("round_robin"),
                                "LEAST_REQUEST" | "LEAST_CONN" => Val::table(&[("kind", Val::s("least_request")), ("view", Val::s("caller"))]),
                                "RANDOM" => Val::s("random"),
                                "PASSTHROUGH" | "UNSPECIFIED" => {
                                    led.note(&x, Fate::Approximated, format!("services.{svc}.balancer"), "round_robin: PASSTHROUGH leaves the choice to the caller's address");
                                    Val::s("round_robin")
                                }
                                other => return Err(x.err(format!("`{other}` is not a simple load balancer (ROUND_ROBIN, LEAST_REQUEST, RANDOM, PASSTHROUGH){}", crate::error::did_you_mean(other, ["ROUND_ROBIN", "LEAST_REQUEST", "RANDOM", "PASSTHROUGH"])))),
                            };
                            if !matches!(s.as_str(), "PASSTHROUGH" | "UNSPECIFIED") {
                                led.note(
                                    &x,
                                    Fate::Mapped,
                                    format!("services.{svc}.balancer"),
                                    "each proxy balancing on its own counts",
                                );
                            }
                        }
                        "consistentHash" => {
                            rule.balancer = Val::s("random");
                            led.note(&x, Fate::Approximated, format!("services.{svc}.balancer"), "random: resim's requests carry no hash key, and evenly spread keys reach hosts as uniform draws do");
                        }
                        _ => led.note(
                            &x,
                            Fate::Ignored,
                            "",
                            "locality and warm-up settings: not modelled",
                        ),
                    }
                }
            }
            "connectionPool" => {
                for (k2, x) in v.fields(&["tcp", "http"], false)? {
                    if k2 == "tcp" {
                        led.note(
                            &x,
                            Fate::Ignored,
                            "",
                            "TCP connection limits: resim has no connections",
                        );
                        continue;
                    }
                    for (k3, y) in x.fields(&HTTP_POOL, false)? {
                        match k3 {
                            "http2MaxRequests" => {
                                rule.max_requests = Some(y.whole()?);
                                led.note(&y, Fate::Approximated, format!("limiters.{svc}-max-requests.limit"), "a concurrency limit at the host's entrance; in Istio each proxy holds its own (the same with one client proxy)");
                            }
                            "maxRetries" => {
                                pool_retries = Some((y.whole()?, y.clone()));
                            }
                            "http1MaxPendingRequests" => led.note(&y, Fate::Ignored, "", "requests waiting for a connection (HTTP/1): resim has no connection pool"),
                            _ => led.note(&y, Fate::Ignored, "", "connection reuse and protocol settings: resim has no connections"),
                        }
                    }
                }
            }
            "outlierDetection" => rule.outlier = Some(outlier(v, &svc, led)?),
            "retryBudget" => budget = Some(v.clone()),
            _ => led.note(
                v,
                Fate::Ignored,
                "",
                "TLS, tunnels, proxy protocol and per-port settings: not modelled",
            ),
        }
    }
    if !lb_seen {
        led.absent(
            &tp,
            "loadBalancer",
            "LEAST_REQUEST",
            format!("services.{svc}.balancer"),
            "Istio's default since 1.14",
        );
    }
    if let Some(b) = budget {
        let (mut pct, mut min) = (20.0, 3.0);
        for (k, y) in b.fields(&["percent", "minRetryConcurrency"], false)? {
            if k == "percent" {
                let v = y.v.get("value").map(|_| y.v["value"].clone());
                pct = match v {
                    Some(Value::Number(n)) => n.as_f64().unwrap_or(20.0),
                    _ => y.num()?,
                };
                if !(0.0..=100.0).contains(&pct) {
                    return Err(y.err("must be between 0 and 100"));
                }
            } else {
                min = y.whole()? as f64;
            }
            led.note(&y, Fate::Mapped, "policies.*.retry.budget", "the envoy budget: retries in flight <= max(minRetryConcurrency, percent of the requests in flight)");
        }
        rule.budget = Some(Val::table(&[
            ("kind", Val::s("envoy")),
            ("percent", Val::n(pct)),
            ("min_retry_concurrency", Val::n(min)),
        ]));
        if let Some((_, y)) = &pool_retries {
            led.note(
                y,
                Fate::Ignored,
                "",
                "a retry budget is set: the proxy ignores maxRetries",
            );
        }
    } else if let Some((n, y)) = pool_retries {
        rule.budget = Some(Val::table(&[
            ("kind", Val::s("envoy")),
            ("percent", Val::n(0.0)),
            ("min_retry_concurrency", Val::n(n as f64)),
        ]));
        led.note(
            &y,
            Fate::Mapped,
            "policies.*.retry.budget",
            "the envoy budget with percent 0: at most this many retries in flight",
        );
    }
    Ok((host_s, rule))
}

fn outlier(o: &Node<'_>, svc: &str, led: &mut Ledger) -> Result<Tab, Error> {
    let at = |k: &str| format!("services.{svc}.outlier_detection.{k}");
    let f = o.fields(&OUTLIER, false)?;
    let mut t = Tab::new("outlier");
    t.notes
        .push("outlierDetection: consecutive 5xx (errors and timeouts here) eject a pod".into());
    let get = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, n)| n.clone());
    let consecutive = match get("consecutive5xxErrors").or_else(|| get("consecutiveErrors")) {
        Some(n) => {
            let v = n.whole()?;
            led.note(
                &n,
                Fate::Mapped,
                at("consecutive_failures"),
                "consecutive errors and timeouts",
            );
            v as f64
        }
        None => {
            led.absent(
                o,
                "consecutive5xxErrors",
                "5",
                at("consecutive_failures"),
                "Istio's default",
            );
            5.0
        }
    };
    t.put("consecutive_failures", Val::n(consecutive));
    for (key, field, def) in [
        ("interval_ms", "interval", 10_000.0),
        ("base_ejection_ms", "baseEjectionTime", 30_000.0),
    ] {
        let v = match get(field) {
            Some(n) => {
                led.note(&n, Fate::Mapped, at(key), "Envoy's rule");
                ms(&n, Syntax::Go)?
            }
            None => {
                led.absent(
                    o,
                    field,
                    &format!("{}s", def / 1000.0),
                    at(key),
                    "Istio's default",
                );
                def
            }
        };
        t.put(key, Val::n(v));
    }
    let pct = match get("maxEjectionPercent") {
        Some(n) => {
            led.note(
                &n,
                Fate::Mapped,
                at("max_ejection_pct"),
                "at most this share of the pods ejected at once",
            );
            n.num()?
        }
        None => {
            led.absent(
                o,
                "maxEjectionPercent",
                "10",
                at("max_ejection_pct"),
                "Istio's default",
            );
            10.0
        }
    };
    t.put("max_ejection_pct", Val::n(pct));
    for (k, n) in &f {
        if ![
            "consecutive5xxErrors",
            "consecutiveErrors",
            "interval",
            "baseEjectionTime",
            "maxEjectionPercent",
        ]
        .contains(k)
        {
            led.note(
                n,
                Fate::Ignored,
                "",
                "gateway-only and local-origin counts, and the minimum healthy share: not modelled",
            );
        }
    }
    Ok(t)
}
