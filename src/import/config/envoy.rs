//! Envoy configurations (v3 API, JSON or YAML): a bootstrap
//! (`static_resources`) or an admin config dump (`configs[]`). Envoy's schema
//! is large: the importer finds every route configuration (`virtual_hosts`)
//! and every cluster wherever they sit, reads their resilience settings field
//! by field (an unknown field there is an error, as Envoy refuses one), and
//! reports the rest of the file (listeners' addresses, filters, admin, TLS)
//! as ignored, a subtree at a time.
//!
//! The scenario: a cluster is a server (`[services.NAME]`, one replica per
//! endpoint), a route to it is a client workload sending through the proxy's
//! policy: the route's timeout caps the call, its retry policy and the
//! cluster's retry limits become the policy, the cluster's `max_requests` a
//! concurrency limit at its entrance, its `lb_policy` the balancer (each proxy
//! balancing on its own counts: `view = "caller"`), its `outlier_detection`
//! the same in resim.

use super::draft::{Draft, Fate, Ledger, Tab, Val, name, placeholder_server, placeholder_workload};
use super::duration::{Syntax, ms};
use super::tree::{Node, Source};
use crate::error::Error;
use serde_json::Value;

const RETRY: [&str; 13] = [
    "retry_on",
    "num_retries",
    "per_try_timeout",
    "per_try_idle_timeout",
    "retry_priority",
    "retry_host_predicate",
    "retry_options_predicates",
    "host_selection_retry_max_attempts",
    "retriable_status_codes",
    "retry_back_off",
    "rate_limited_retry_back_off",
    "retriable_headers",
    "retriable_request_headers",
];
const HEDGE: [&str; 3] = [
    "initial_requests",
    "additional_request_chance",
    "hedge_on_per_try_timeout",
];
const THRESHOLDS: [&str; 8] = [
    "priority",
    "max_connections",
    "max_pending_requests",
    "max_requests",
    "max_retries",
    "retry_budget",
    "track_remaining",
    "max_connection_pools",
];
const OUTLIER: [&str; 25] = [
    "consecutive_5xx",
    "interval",
    "base_ejection_time",
    "max_ejection_percent",
    "enforcing_consecutive_5xx",
    "enforcing_success_rate",
    "success_rate_minimum_hosts",
    "success_rate_request_volume",
    "success_rate_stdev_factor",
    "consecutive_gateway_failure",
    "enforcing_consecutive_gateway_failure",
    "split_external_local_origin_errors",
    "consecutive_local_origin_failure",
    "enforcing_consecutive_local_origin_failure",
    "enforcing_local_origin_success_rate",
    "failure_percentage_threshold",
    "enforcing_failure_percentage",
    "enforcing_failure_percentage_local_origin",
    "failure_percentage_minimum_hosts",
    "failure_percentage_request_volume",
    "max_ejection_time",
    "max_ejection_time_jitter",
    "successful_active_health_check_uneject_host",
    "monitors",
    "always_eject_one_host",
];
const LEAST_REQUEST: [&str; 6] = [
    "choice_count",
    "active_request_bias",
    "slow_start_config",
    "locality_lb_config",
    "enable_full_scan",
    "selection_method",
];

/// Does this document look like an Envoy configuration?
pub fn looks_like(v: &Value) -> bool {
    let Some(m) = v.as_object() else {
        return false;
    };
    if m.contains_key("static_resources") {
        return true;
    }
    m.get("configs").and_then(Value::as_array).is_some_and(|a| {
        a.iter().any(|c| {
            c.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.contains("envoy.admin"))
        })
    })
}

/// A protobuf wrapper or a plain value: `{ "value": 20 }` or `20`.
fn wrapped<'a>(n: &Node<'a>) -> Result<Node<'a>, Error> {
    if n.v.is_object() {
        let f = n.fields(&["value"], false)?;
        match f.into_iter().next() {
            Some((_, v)) => Ok(v),
            None => Err(n.err("needs `value`")),
        }
    } else {
        Ok(n.clone())
    }
}

/// What holds route configurations or clusters, found anywhere in the file.
fn holds(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            m.contains_key("virtual_hosts") || is_cluster(v) || m.values().any(holds)
        }
        Value::Array(a) => a.iter().any(holds),
        _ => false,
    }
}

fn is_cluster(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.contains_key("name")
            && (m.contains_key("connect_timeout")
                || m.contains_key("load_assignment")
                || m.contains_key("lb_policy")
                || m.contains_key("circuit_breakers")
                || m.contains_key("outlier_detection"))
            && !m.contains_key("virtual_hosts")
    })
}

/// Walks the file: route configurations and clusters are read, every other
/// subtree without them is reported ignored.
fn walk<'a>(
    n: &Node<'a>,
    routes: &mut Vec<(Node<'a>, String)>,
    clusters: &mut Vec<Node<'a>>,
    led: &mut Ledger,
) -> Result<(), Error> {
    if n.v.get("virtual_hosts").is_some() {
        routes.push((n.clone(), String::new()));
        return Ok(());
    }
    if is_cluster(n.v) {
        clusters.push(n.clone());
        return Ok(());
    }
    let children: Vec<Node<'a>> = match n.v {
        Value::Object(_) => n.named()?.into_iter().map(|(_, c)| c).collect(),
        Value::Array(_) => n.items()?,
        _ => Vec::new(),
    };
    for c in children {
        if holds(c.v) {
            walk(&c, routes, clusters, led)?;
        } else {
            led.note(&c, Fate::Ignored, "", "not a resilience setting resim models (addresses, filters, TLS, admin, stats, ...)");
        }
    }
    Ok(())
}

/// The outcomes of resim a `retry_on` list and `retriable_status_codes` cover.
pub(super) fn retry_on(
    n: &Node<'_>,
    codes: &[u64],
    numbers_ok: bool,
    led: &mut Ledger,
    key: &str,
) -> Result<Vec<&'static str>, Error> {
    const KNOWN: [&str; 17] = [
        "5xx",
        "gateway-error",
        "reset",
        "reset-before-request",
        "connect-failure",
        "envoy-ratelimited",
        "retriable-4xx",
        "refused-stream",
        "retriable-status-codes",
        "retriable-headers",
        "http3-post-connect-failure",
        "cancelled",
        "deadline-exceeded",
        "internal",
        "resource-exhausted",
        "unavailable",
        "",
    ];
    let mut on: Vec<&'static str> = Vec::new();
    let mut none = Vec::new();
    let mut codes = codes.to_vec();
    let mut parts = Vec::new();
    let mut listed = false;
    for part in n.str()?.split(',').map(str::trim) {
        // Istio takes HTTP status codes in the list itself
        match part.parse::<u64>() {
            Ok(c) if numbers_ok => {
                codes.push(c);
                listed = true;
            }
            _ => parts.push(part),
        }
    }
    if listed && !parts.contains(&"retriable-status-codes") {
        parts.push("retriable-status-codes");
    }
    for part in parts {
        if !KNOWN.contains(&part) {
            return Err(n.err(format!(
                "`{part}` is not a retry condition Envoy knows{}",
                crate::error::did_you_mean(part, KNOWN.iter().copied())
            )));
        }
        let add: &[&str] = match part {
            "5xx" => &["timeout", "error", "shed"],
            "gateway-error" => &["timeout", "error", "shed"],
            "reset" | "reset-before-request" | "connect-failure" | "internal" => &["error"],
            "refused-stream" | "unavailable" => &["shed", "error"],
            "envoy-ratelimited" | "resource-exhausted" => &["rejected"],
            "deadline-exceeded" | "cancelled" => &["timeout"],
            "retriable-status-codes" => {
                let mut v: Vec<&str> = Vec::new();
                for c in &codes {
                    match c {
                        503 => v.extend(["shed", "error"]),
                        429 => v.push("rejected"),
                        504 | 408 => v.push("timeout"),
                        500..=599 => v.push("error"),
                        _ => {}
                    }
                }
                for x in v {
                    if !on.contains(&x) {
                        on.push(x);
                    }
                }
                &[]
            }
            "" => &[],
            other => {
                none.push(other.to_string());
                &[]
            }
        };
        for a in add {
            if !on.contains(a) {
                on.push(a);
            }
        }
    }
    let order = ["timeout", "error", "shed", "rejected"];
    on.sort_by_key(|o| order.iter().position(|x| x == o));
    led.note(
        n,
        Fate::Approximated,
        key,
        format!(
            "-> {}: resim's failures are timeouts, errors (a failing or down server), sheds (503) and rejections (429), without headers or status codes{}",
            if on.is_empty() { "nothing".to_string() } else { on.join(", ") },
            if none.is_empty() { String::new() } else { format!("; {} cannot happen in resim", none.join(", ")) }
        ),
    );
    Ok(on)
}

/// Builds the scenario of one Envoy configuration.
pub fn import(src: &Source, draft: &mut Draft, led: &mut Ledger) -> Result<(), Error> {
    let root = src.root(0);
    let mut route_configs = Vec::new();
    let mut cluster_nodes = Vec::new();
    walk(&root, &mut route_configs, &mut cluster_nodes, led)?;
    if cluster_nodes.is_empty() && route_configs.is_empty() {
        return Err(root.err("no route configuration and no cluster: nothing to import"));
    }

    // clusters first: their settings shape the policies of the routes to them
    let mut clusters: Vec<Cluster> = Vec::new();
    for c in &cluster_nodes {
        clusters.push(cluster(c, led)?);
    }
    let mut policies = Vec::new();
    let mut workloads = Vec::new();
    let mut routes_of: Vec<(String, Vec<String>)> = Vec::new();
    for (rc, _) in &route_configs {
        for (k, v) in rc.named()? {
            if k != "virtual_hosts" {
                led.note(
                    &v,
                    Fate::Ignored,
                    "",
                    "route configuration settings other than its virtual hosts: not modelled",
                );
            }
        }
        let vhosts = rc
            .named()?
            .into_iter()
            .find(|(k, _)| k == "virtual_hosts")
            .map(|(_, v)| v)
            .unwrap();
        for vh in vhosts.items()? {
            let mut vh_retry = None;
            let mut vh_hedge = None;
            let mut routes = None;
            for (k, v) in vh.named()? {
                match k.as_str() {
                    "routes" => routes = Some(v),
                    "retry_policy" => vh_retry = Some(v),
                    "hedge_policy" => vh_hedge = Some(v),
                    "name" | "domains" => led.note(
                        &v,
                        Fate::Ignored,
                        "",
                        "names the virtual host: the routes below are what resim runs",
                    ),
                    _ => led.note(
                        &v,
                        Fate::Ignored,
                        "",
                        "a virtual host setting resim does not model",
                    ),
                }
            }
            let Some(routes) = routes else { continue };
            for r in routes.items()? {
                let mut path = None;
                let mut action = None;
                for (k, v) in r.named()? {
                    match k.as_str() {
                        "match" => path = Some(v),
                        "route" => action = Some(v),
                        _ => led.note(&v, Fate::Ignored, "", "a route setting resim does not model (names, headers, direct responses, redirects)"),
                    }
                }
                let Some(action) = action else { continue };
                let p = match &path {
                    Some(m) => {
                        let mut p = None;
                        for (k, v) in m.named()? {
                            match k.as_str() {
                                "prefix" | "path" => {
                                    p = Some(v.str()?.to_string());
                                    led.note(&v, Fate::Mapped, "services.*.routes", "the route the workload sends to");
                                }
                                _ => led.note(&v, Fate::Approximated, "services.*.routes", "resim routes are names, not matchers: the route is named after its cluster"),
                            }
                        }
                        p
                    }
                    None => None,
                };
                let mut cl = None;
                let mut timeout = None;
                let mut retry = vh_retry.clone();
                let mut hedge = vh_hedge.clone();
                for (k, v) in action.named()? {
                    match k.as_str() {
                        "cluster" => {
                            cl = Some(v.str()?.to_string());
                            led.note(&v, Fate::Mapped, "workloads.*.route", "the cluster the route sends to");
                        }
                        "timeout" => {
                            let t = ms(&v, Syntax::Protobuf)?;
                            led.note(&v, Fate::Mapped, "workloads.*.timeout_ms", if t == 0.0 { "0: no timeout" } else { "the call's deadline, every retry included" });
                            timeout = Some(t);
                        }
                        "retry_policy" => retry = Some(v),
                        "hedge_policy" => hedge = Some(v),
                        _ => led.note(&v, Fate::Ignored, "", "a route action setting resim does not model (rewrites, weighted clusters, mirrors, hash policies, ...)"),
                    }
                }
                let Some(cl) = cl else { continue };
                let route = p.unwrap_or_else(|| format!("/{}", name(&cl)));
                let pname = name(&format!("{cl}{}", route.replace('/', "-")));
                let c = clusters.iter().find(|c| c.name == cl);
                let mut pol = Tab::new(format!("policies.{pname}"));
                pol.notes
                    .push(format!("the route {route} to cluster `{cl}`"));
                let has = policy(&mut pol, &pname, retry.as_ref(), hedge.as_ref(), c, led)?;
                let svc = name(&cl);
                match routes_of.iter_mut().find(|(s, _)| *s == svc) {
                    Some((_, rs)) => {
                        if !rs.contains(&route) {
                            rs.push(route.clone())
                        }
                    }
                    None => routes_of.push((svc.clone(), vec![route.clone()])),
                }
                let mut w = placeholder_workload(
                    &pname,
                    &route,
                    "requests per second on this route; the configuration does not say",
                    "how long the clients send",
                );
                w.notes
                    .push(format!("clients sending to {route} through the proxy"));
                match timeout {
                    Some(t) if t > 0.0 => {
                        w.put_noted("timeout_ms", Val::n(t), "the route's timeout");
                    }
                    Some(_) => {}
                    None => {
                        led.absent(
                            &action,
                            "timeout",
                            "15s",
                            "workloads.*.timeout_ms",
                            "Envoy's default route timeout",
                        );
                        w.put_noted(
                            "timeout_ms",
                            Val::n(15_000.0),
                            "Envoy's default route timeout",
                        );
                    }
                }
                if has {
                    w.put("call_policy", Val::s(&pname));
                    policies.push(pol);
                }
                workloads.push(w);
            }
        }
    }
    let mut limiters = Vec::new();
    let mut services = Vec::new();
    for c in &clusters {
        let svc = name(&c.name);
        let routes = routes_of
            .iter()
            .find(|(s, _)| *s == svc)
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| vec![format!("/{svc}")]);
        let mut s = Tab::new(format!("services.{svc}"));
        s.notes.push(format!("the cluster `{}`", c.name));
        s.put("routes", Val::strs(routes.iter().map(String::as_str)));
        if c.endpoints > 1 {
            s.put_noted(
                "replicas",
                Val::n(c.endpoints as f64),
                "the cluster's endpoints",
            );
        } else if c.endpoints == 0 {
            s.set_me(
                "replicas",
                Val::n(3.0),
                "the cluster's hosts (its endpoints come from discovery)",
            );
        }
        if c.endpoints != 1 {
            s.put("balancer", c.balancer.clone());
        }
        if let Some(limit) = c.max_requests {
            let lname = format!("{svc}-max-requests");
            let mut l = Tab::new(format!("limiters.{lname}"));
            l.notes.push(format!("cluster `{}`: circuit_breakers max_requests, a cap on requests in flight held by each proxy", c.name));
            l.put("kind", Val::s("concurrency"));
            l.put("algorithm", Val::s("fixed"));
            l.put("limit", Val::n(limit as f64));
            limiters.push(l);
            s.put_noted(
                "middleware",
                Val::strs([lname.as_str()]),
                "the proxy's max_requests, at the cluster's entrance",
            );
        }
        services.push(s);
        if let Some(o) = &c.outlier {
            services.push(
                o.clone()
                    .with_header(format!("services.{svc}.outlier_detection")),
            );
        }
        services.push(placeholder_server(
            &svc,
            "requests each host handles at once",
            "requests",
            "a host's own time per request",
        ));
    }
    // routes to clusters the file does not define still get a server
    for (svc, routes) in &routes_of {
        if clusters.iter().any(|c| name(&c.name) == *svc) {
            continue;
        }
        let mut s = Tab::new(format!("services.{svc}"));
        s.notes
            .push("a cluster the routes name but the file does not define".into());
        s.put("routes", Val::strs(routes.iter().map(String::as_str)));
        services.push(s);
        let mut h = Tab::new(format!("services.{svc}.handler"));
        h.put("type", Val::s("server"));
        h.set_me("slots", Val::n(8.0), "requests the cluster handles at once");
        h.set_me("queue", Val::n(64.0), "requests waiting beyond the slots");
        h.set_me(
            "service",
            Val::table(&[(
                "lognormal",
                Val::table(&[("p50_ms", Val::n(20.0)), ("p99_ms", Val::n(100.0))]),
            )]),
            "its own time per request",
        );
        services.push(h);
    }
    if workloads.is_empty() {
        // clusters alone: one client per cluster
        for c in &clusters {
            let svc = name(&c.name);
            let mut w = placeholder_workload(
                &svc,
                &format!("/{svc}"),
                "requests per second; the configuration does not say",
                "how long the clients send",
            );
            w.notes
                .push("no route names this cluster: a client sending to it directly".into());
            workloads.push(w);
        }
    }
    draft.tabs.extend(policies);
    draft.tabs.extend(limiters);
    draft.tabs.extend(services);
    draft.tabs.extend(workloads);
    Ok(())
}

impl Tab {
    fn with_header(mut self, h: String) -> Tab {
        self.header = h;
        self
    }
}

/// A cluster, as read.
struct Cluster {
    name: String,
    endpoints: usize,
    balancer: Val,
    max_requests: Option<u64>,
    /// `max_retries` (3) or the retry budget: the policy's budget.
    retry_budget: Val,
    outlier: Option<Tab>,
}

fn cluster(c: &Node<'_>, led: &mut Ledger) -> Result<Cluster, Error> {
    let mut out = Cluster {
        name: String::new(),
        endpoints: 0,
        balancer: Val::s("round_robin"),
        max_requests: Some(1024),
        retry_budget: Val::table(&[
            ("kind", Val::s("envoy")),
            ("percent", Val::n(0.0)),
            ("min_retry_concurrency", Val::n(3.0)),
        ]),
        outlier: None,
    };
    let mut lb = None;
    let mut lr = None;
    let mut weights: Vec<f64> = Vec::new();
    let mut thresholds_seen = false;
    for (k, v) in c.named()? {
        match k.as_str() {
            "name" => {
                out.name = v.str()?.to_string();
                led.note(&v, Fate::Mapped, "services.*", "the cluster's server");
            }
            "load_assignment" => {
                for (k2, v2) in v.named()? {
                    if k2 != "endpoints" {
                        led.note(&v2, Fate::Ignored, "", "not a resilience setting resim models");
                        continue;
                    }
                    for locality in v2.items()? {
                        for (k3, v3) in locality.named()? {
                            if k3 != "lb_endpoints" {
                                led.note(&v3, Fate::Ignored, "", "localities and priorities: resim balances over all hosts");
                                continue;
                            }
                            for ep in v3.items()? {
                                out.endpoints += 1;
                                let mut w = 1.0;
                                for (k4, v4) in ep.named()? {
                                    if k4 == "load_balancing_weight" {
                                        w = wrapped(&v4)?.num()?;
                                        led.note(&v4, Fate::Mapped, "services.*.balancer.weights", "the host's weight");
                                    } else {
                                        led.note(&v4, Fate::Mapped, "services.*.replicas", "one replica per endpoint (its address is not modelled)");
                                    }
                                }
                                weights.push(w);
                            }
                        }
                    }
                }
            }
            "lb_policy" => lb = Some(v),
            "least_request_lb_config" => lr = Some(v),
            "circuit_breakers" => {
                for (k2, v2) in v.fields(&["thresholds", "per_host_thresholds"], false)? {
                    if k2 == "per_host_thresholds" {
                        led.note(&v2, Fate::Ignored, "", "per-host limits (only max_connections there): resim has no connections");
                        continue;
                    }
                    for t in v2.items()? {
                        let f = t.fields(&THRESHOLDS, false)?;
                        let high = f.iter().any(|(k, x)| *k == "priority" && x.v.as_str() == Some("HIGH"));
                        if high {
                            led.note(&t, Fate::Ignored, "", "HIGH priority thresholds: resim's requests are all of DEFAULT priority");
                            continue;
                        }
                        thresholds_seen = true;
                        let mut budget = None;
                        let mut max_retries = None;
                        for (k3, x) in &f {
                            match *k3 {
                                "priority" => led.note(x, Fate::Mapped, "", "DEFAULT: every request of resim"),
                                "max_requests" => {
                                    let n = wrapped(x)?.whole()?;
                                    out.max_requests = Some(n);
                                    led.note(x, Fate::Approximated, "limiters.*-max-requests.limit", "a concurrency limit at the cluster's entrance; in Envoy each proxy holds its own (the same with one proxy)");
                                }
                                "max_retries" => {
                                    max_retries = Some((wrapped(x)?.whole()?, x.clone()));
                                }
                                "retry_budget" => budget = Some(x.clone()),
                                "max_connections" | "max_connection_pools" => led.note(x, Fate::Ignored, "", "resim has no connections"),
                                "max_pending_requests" => led.note(x, Fate::Ignored, "", "requests waiting for a connection (HTTP/1): resim has no connection pool"),
                                _ => led.note(x, Fate::Ignored, "", "monitoring, no behaviour"),
                            }
                        }
                        match budget {
                            Some(b) => {
                                let mut pct = 20.0;
                                let mut min = 3.0;
                                for (k4, y) in b.fields(&["budget_percent", "min_retry_concurrency"], false)? {
                                    if k4 == "budget_percent" {
                                        pct = wrapped(&y)?.num()?;
                                        if !(0.0..=100.0).contains(&pct) {
                                            return Err(y.err("must be between 0 and 100"));
                                        }
                                    } else {
                                        min = wrapped(&y)?.whole()? as f64;
                                    }
                                    led.note(&y, Fate::Mapped, "policies.*.retry.budget", "the envoy budget: retries in flight <= max(min_retry_concurrency, percent of the requests in flight)");
                                }
                                out.retry_budget = Val::table(&[("kind", Val::s("envoy")), ("percent", Val::n(pct)), ("min_retry_concurrency", Val::n(min))]);
                                if let Some((_, x)) = max_retries {
                                    led.note(&x, Fate::Ignored, "", "a retry_budget is set: Envoy ignores max_retries");
                                }
                            }
                            None => {
                                let n = match max_retries {
                                    Some((n, x)) => {
                                        led.note(&x, Fate::Mapped, "policies.*.retry.budget", "the envoy budget with percent 0: at most this many retries in flight");
                                        n
                                    }
                                    None => {
                                        led.absent(&t, "max_retries", "3", "policies.*.retry.budget", "Envoy's default: at most 3 retries in flight");
                                        3
                                    }
                                };
                                out.retry_budget = Val::table(&[("kind", Val::s("envoy")), ("percent", Val::n(0.0)), ("min_retry_concurrency", Val::n(n as f64))]);
                            }
                        }
                    }
                }
            }
            "outlier_detection" => out.outlier = Some(outlier(&v, led)?),
            _ => led.note(&v, Fate::Ignored, "", "a cluster setting resim does not model (discovery, timeouts to connect, TLS, health checks, ...)"),
        }
    }
    if !thresholds_seen {
        led.absent(
            c,
            "circuit_breakers",
            "max_requests 1024, max_retries 3",
            "limiters.*-max-requests, policies.*.retry.budget",
            "Envoy's default thresholds",
        );
    }
    if out.name.is_empty() {
        return Err(c.err("a cluster needs its `name`"));
    }
    let kind = match &lb {
        Some(n) => n.str()?.to_ascii_uppercase(),
        None => {
            led.absent(
                c,
                "lb_policy",
                "ROUND_ROBIN",
                "services.*.balancer",
                "Envoy's default",
            );
            "ROUND_ROBIN".into()
        }
    };
    let equal = weights.windows(2).all(|w| w[0] == w[1]);
    let wv = Val(format!(
        "[{}]",
        weights
            .iter()
            .map(|w| Val::n(*w).0)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.balancer = match kind.as_str() {
        "ROUND_ROBIN" => {
            if let Some(n) = &lb {
                led.note(n, Fate::Mapped, "services.*.balancer", "round_robin");
            }
            if equal {
                Val::s("round_robin")
            } else {
                Val::table(&[("kind", Val::s("weighted_round_robin")), ("weights", wv)])
            }
        }
        "LEAST_REQUEST" => {
            let mut choice = 2.0;
            let mut bias = None;
            if let Some(l) = &lr {
                for (k, v) in l.fields(&LEAST_REQUEST, false)? {
                    match k {
                        "choice_count" => {
                            choice = wrapped(&v)?.whole()? as f64;
                            led.note(
                                &v,
                                Fate::Mapped,
                                "services.*.balancer.choice_count",
                                "hosts drawn per pick",
                            );
                        }
                        "active_request_bias" => {
                            bias = Some(wrapped(&v)?.num()?);
                            led.note(
                                &v,
                                Fate::Mapped,
                                "services.*.balancer.active_request_bias",
                                "weight / (active + 1)^bias",
                            );
                        }
                        _ => led.note(
                            &v,
                            Fate::Ignored,
                            "",
                            "slow start, locality and full scans: not modelled",
                        ),
                    }
                }
            }
            led.note(
                lb.as_ref().unwrap(),
                Fate::Mapped,
                "services.*.balancer",
                "least_request on each proxy's own counts (view = \"caller\")",
            );
            let n = out.endpoints.max(1) as f64;
            let mut items = vec![
                ("kind", Val::s("least_request")),
                ("view", Val::s("caller")),
                ("choice_count", Val::n(choice.min(n.max(2.0)))),
            ];
            if !equal {
                items.push(("weights", wv));
                if let Some(b) = bias {
                    items.push(("active_request_bias", Val::n(b)));
                }
            }
            Val::table(&items)
        }
        "RANDOM" => {
            led.note(
                lb.as_ref().unwrap(),
                Fate::Mapped,
                "services.*.balancer",
                "random",
            );
            Val::s("random")
        }
        "RING_HASH" | "MAGLEV" => {
            led.note(lb.as_ref().unwrap(), Fate::Approximated, "services.*.balancer", "random: resim's requests carry no hash key, and a hash of keys spread evenly sends each request to a host as a uniform draw would");
            Val::s("random")
        }
        other => {
            return Err(lb.as_ref().unwrap().err(format!(
                "`{other}` is not an lb_policy resim can run (ROUND_ROBIN, LEAST_REQUEST, RANDOM, RING_HASH, MAGLEV)"
            )));
        }
    };
    Ok(out)
}

fn outlier(o: &Node<'_>, led: &mut Ledger) -> Result<Tab, Error> {
    let at = |k: &str| format!("services.*.outlier_detection.{k}");
    let mut t = Tab::new("outlier");
    let f = o.fields(&OUTLIER, false)?;
    let get = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, n)| n.clone());
    let mut put =
        |key: &str, field: &str, def: f64, dur: bool, led: &mut Ledger| -> Result<(), Error> {
            let v = match get(field) {
                Some(n) => {
                    let x = if dur {
                        ms(&n, Syntax::Protobuf)?
                    } else {
                        wrapped(&n)?.num()?
                    };
                    led.note(&n, Fate::Mapped, at(key), "Envoy's rule");
                    x
                }
                None => {
                    led.absent(
                        o,
                        field,
                        &if dur {
                            format!("{}s", def / 1000.0)
                        } else {
                            Val::n(def).0
                        },
                        at(key),
                        "Envoy's default",
                    );
                    def
                }
            };
            t.put(key, Val::n(v));
            Ok(())
        };
    put("consecutive_failures", "consecutive_5xx", 5.0, false, led)?;
    put("interval_ms", "interval", 10_000.0, true, led)?;
    put(
        "base_ejection_ms",
        "base_ejection_time",
        30_000.0,
        true,
        led,
    )?;
    put("max_ejection_pct", "max_ejection_percent", 10.0, false, led)?;
    // max_ejection_time: by default the larger of 300 s and the base, as
    // resim's own default, so only a written one is put
    match get("max_ejection_time") {
        Some(n) => {
            let v = ms(&n, Syntax::Protobuf)?;
            led.note(&n, Fate::Mapped, at("max_ejection_ms"), "Envoy's rule");
            t.put("max_ejection_ms", Val::n(v));
        }
        None => led.absent(
            o,
            "max_ejection_time",
            "300s, or base_ejection_time if longer",
            at("max_ejection_ms"),
            "Envoy's default",
        ),
    }
    let one = match get("always_eject_one_host") {
        Some(n) => {
            let b = wrapped(&n)?.bool()?;
            led.note(
                &n,
                Fate::Mapped,
                at("always_eject_one_host"),
                "Envoy's rule",
            );
            b
        }
        None => {
            led.absent(
                o,
                "always_eject_one_host",
                "false",
                at("always_eject_one_host"),
                "Envoy's default",
            );
            false
        }
    };
    t.put("always_eject_one_host", Val::b(one));
    for (k, n) in &f {
        if ![
            "consecutive_5xx",
            "interval",
            "base_ejection_time",
            "max_ejection_percent",
            "max_ejection_time",
            "always_eject_one_host",
        ]
        .contains(k)
        {
            led.note(n, Fate::Ignored, "", "resim ejects on consecutive failures (error answers and timeouts) only: success-rate, failure-percentage and local-origin detection are not modelled");
        }
    }
    t.notes
        .push("outlier_detection: consecutive 5xx (errors and timeouts here) eject a host".into());
    Ok(t)
}

/// The policy of a route: its retry (or hedge) policy and the cluster's
/// retry limit. Returns whether the route has one.
fn policy(
    pol: &mut Tab,
    pname: &str,
    retry: Option<&Node<'_>>,
    hedge: Option<&Node<'_>>,
    c: Option<&Cluster>,
    led: &mut Ledger,
) -> Result<bool, Error> {
    let Some(r) = retry else {
        if let Some(h) = hedge {
            led.note(
                h,
                Fate::Ignored,
                "",
                "Envoy hedges on a per-try timeout of the retry policy, and this route has none",
            );
        }
        return Ok(false);
    };
    let at = |k: &str| format!("policies.{pname}.retry.{k}");
    let f = r.fields(&RETRY, false)?;
    let get = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, n)| n.clone());
    let codes: Vec<u64> = match get("retriable_status_codes") {
        Some(n) => {
            let mut v = Vec::new();
            for x in n.items()? {
                v.push(x.whole()?);
            }
            led.note(&n, Fate::Approximated, at("on"), "503 -> shed and error, 429 -> rejected, 504 and 408 -> timeout, other 5xx -> error");
            v
        }
        None => Vec::new(),
    };
    let on = match get("retry_on") {
        Some(n) => retry_on(&n, &codes, false, led, &at("on"))?,
        None => {
            return Err(r.err("needs `retry_on`: Envoy retries on nothing without it"));
        }
    };
    let retries = match get("num_retries") {
        Some(n) => {
            let v = wrapped(&n)?.whole()?;
            led.note(
                &n,
                Fate::Mapped,
                at("max_attempts"),
                "num_retries + 1 (the first try)",
            );
            v
        }
        None => {
            led.absent(
                r,
                "num_retries",
                "1",
                at("max_attempts"),
                "Envoy's default: one retry, two attempts",
            );
            1
        }
    };
    let (mut base, mut cap) = (25.0, 250.0);
    match get("retry_back_off") {
        Some(b) => {
            let bf = b.fields(&["base_interval", "max_interval"], false)?;
            let mut max_given = false;
            for (k, x) in &bf {
                let v = ms(x, Syntax::Protobuf)?;
                if *k == "base_interval" {
                    if v <= 0.0 {
                        return Err(x.err("must be above 0 (Envoy's rule)"));
                    }
                    base = v;
                    led.note(
                        x,
                        Fate::Mapped,
                        at("backoff.base_ms"),
                        "U(0, (2^k - 1) x base): Envoy's rule",
                    );
                } else {
                    cap = v;
                    max_given = true;
                    led.note(x, Fate::Mapped, at("backoff.cap_ms"), "the longest wait");
                }
            }
            if !max_given {
                cap = 10.0 * base;
                led.absent(
                    &b,
                    "max_interval",
                    "10 x base_interval",
                    at("backoff.cap_ms"),
                    "Envoy's default",
                );
            }
            if cap < base {
                return Err(b.err("max_interval is below base_interval (Envoy refuses it)"));
            }
        }
        None => led.absent(
            r,
            "retry_back_off",
            "base 25ms, max 250ms",
            at("backoff"),
            "Envoy's default: U(0, 25 ms), then U(0, 75 ms), ... up to 250 ms",
        ),
    }
    let per_try = match get("per_try_timeout") {
        Some(n) => {
            let v = ms(&n, Syntax::Protobuf)?;
            led.note(
                &n,
                Fate::Mapped,
                format!("policies.{pname}.timeout_ms"),
                "each attempt's own timeout",
            );
            (v > 0.0).then_some(v)
        }
        None => None,
    };
    for k in RETRY {
        if [
            "retry_on",
            "num_retries",
            "per_try_timeout",
            "retry_back_off",
            "retriable_status_codes",
        ]
        .contains(&k)
        {
            continue;
        }
        if let Some(n) = get(k) {
            led.note(
                &n,
                Fate::Ignored,
                "",
                "host selection, headers, idle timeouts and rate-limited back-off: not modelled",
            );
        }
    }
    let budget = c.map(|c| c.retry_budget.clone()).unwrap_or_else(|| {
        Val::table(&[
            ("kind", Val::s("envoy")),
            ("percent", Val::n(0.0)),
            ("min_retry_concurrency", Val::n(3.0)),
        ])
    });
    if let Some(t) = per_try {
        pol.put_noted("timeout_ms", Val::n(t), "per_try_timeout");
    }
    // hedging on a per-try timeout replaces the plain retry
    let mut hedged = false;
    if let Some(h) = hedge {
        let hf = h.fields(&HEDGE, false)?;
        for (k, x) in &hf {
            match *k {
                "hedge_on_per_try_timeout" => {
                    hedged = x.bool()? && per_try.is_some();
                    led.note(x, if hedged { Fate::Approximated } else { Fate::Ignored }, format!("policies.{pname}.hedge"), if hedged { "a copy after each per-try timeout, the earlier copies kept running (resim's hedge: another copy every delay_ms, the first ok wins)" } else { "no per-try timeout: nothing to hedge on" });
                }
                _ => led.note(x, Fate::Ignored, "", "Envoy's initial requests and request chance are not modelled (their defaults, 1 and 0, send one copy)"),
            }
        }
    }
    if hedged {
        pol.put(
            "hedge",
            Val::table(&[
                ("delay_ms", Val::n(per_try.unwrap())),
                ("max_attempts", Val::n((retries + 1) as f64)),
                ("cancel_losers", Val::b(true)),
            ]),
        );
        pol.items.retain(|i| i.key != "timeout_ms");
        return Ok(true);
    }
    if on.is_empty() {
        return Ok(per_try.is_some());
    }
    pol.put(
        "retry",
        Val::table(&[
            ("max_attempts", Val::n((retries + 1) as f64)),
            ("on", Val::strs(on.iter().copied())),
            (
                "backoff",
                Val::table(&[
                    ("kind", Val::s("envoy")),
                    ("base_ms", Val::n(base)),
                    ("cap_ms", Val::n(cap)),
                ]),
            ),
            ("budget", budget),
        ]),
    );
    Ok(true)
}
