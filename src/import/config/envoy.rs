//! Envoy configurations (v3 API, JSON or YAML): a bootstrap
//! (`static_resources`) or an admin config dump (`configs[]`). Envoy's schema
//! is large: the importer finds every route configuration (`virtual_hosts`)
//! and every cluster wherever they sit, reads them through the tables below
//! and [`super::envoy_cluster`] (an unknown field inside a resilience table
//! is an error, as Envoy refuses one), and reports the rest of the file
//! (listeners' addresses, filters, admin, TLS) as ignored, a subtree at a
//! time.
//!
//! The scenario: a cluster is a server (`[services.NAME]`), a route to it a
//! client workload sending through the proxy's policy: the route's timeout
//! caps the call, its retry policy and the cluster's retry limits become the
//! policy, the cluster's `max_requests` a concurrency limit at its entrance,
//! its `lb_policy` the balancer (each proxy balancing on its own counts:
//! `view = "caller"`), its `outlier_detection` the same in resim. A route
//! configuration, virtual host or route that two listeners share is read
//! once; two routes that differ but read alike are named apart.

use super::draft::{Draft, Fate, Ledger, Tab, Val, name, placeholder_workload, unique};
use super::duration::{Syntax, ms};
use super::envoy_cluster::{CLUSTER, Cluster, cluster, default_budget, unknown_cluster, wrapped};
use super::envoy_retry::{HEDGE, Hedge, RETRY, Retry, policy, read_hedge, read_retry};
use super::spec::{Binding, Field, Read, Table, Unknown, read};
use super::tree::{Node, Source, Step};
use crate::error::Error;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

static MATCH: Table = Table {
    at: "routes[].match",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted("matching on request attributes: resim's requests carry none"),
    fields: &[
        Field::code(
            "prefix",
            "a path prefix",
            "services.*.routes",
            "the route the workload sends to",
        ),
        Field::code(
            "path",
            "an exact path",
            "services.*.routes",
            "the route the workload sends to",
        ),
        Field::code(
            "path_separated_prefix",
            "a path prefix ending at a `/`",
            "services.*.routes",
            "the route the workload sends to",
        ),
        Field::approx(
            "safe_regex",
            "a path pattern",
            "services.*.routes",
            "resim's routes are names, not patterns: the route is named after its cluster",
        ),
        Field::ignored(
            "headers",
            "header matchers",
            "resim's requests carry no headers",
        ),
        Field::ignored(
            "query_parameters",
            "query matchers",
            "resim's requests carry no query",
        ),
        Field::ignored(
            "case_sensitive",
            "how paths compare",
            "resim's routes are names",
        ),
        Field::ignored(
            "runtime_fraction",
            "a share of the requests",
            "every request of the workload takes the route",
        ),
    ],
};

static ACTION: Table = Table {
    at: "routes[].route",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted("a route action setting resim does not model (rewrites, mirrors, hash policies, ...)"),
    fields: &[
        Field::code("cluster", "the cluster the route sends to", "workloads.{}.route", "the route of that cluster's server; a cluster the file does not define is an error in a bootstrap's inline route_config (Envoy refuses it: `route: unknown cluster`, RouteEntryImplBase::validateClusters, unless validate_clusters is false), else a placeholder server and a warning"),
        Field::maps("timeout", "the whole call's deadline, every retry included", "workloads.{}.timeout_ms", "the call's deadline, retries included; 0: none; never retried (Filter::onResponseTimeout)")
            .or("15s", "15000 ms (DEFAULT_ROUTE_TIMEOUT_MS)"),
        Field::nested("retry_policy", "retries (the virtual host's when absent)", &RETRY),
        Field::nested("hedge_policy", "hedging (the virtual host's when absent)", &HEDGE),
        Field::ignored("weighted_clusters", "a split over clusters", "resim sends a route to one cluster: a route without `cluster` is not imported"),
        Field::ignored("idle_timeout", "the stream's idle limit", "resim's answers are one message"),
        Field::ignored("max_stream_duration", "the stream's longest life", "not modelled"),
    ],
};

static ROUTE: Table = Table {
    at: "virtual_hosts[].routes[]",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted("a route setting resim does not model (headers, metadata, ...)"),
    fields: &[
        Field::nested("match", "which requests take the route", &MATCH),
        Field::nested(
            "route",
            "where they go and how (a route without it, a redirect or direct response, is not imported)",
            &ACTION,
        ),
        Field::ignored(
            "name",
            "the route's name",
            "the workload is named after its cluster and path",
        ),
    ],
};

static VHOST: Table = Table {
    at: "virtual_hosts[]",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted("a virtual host setting resim does not model"),
    fields: &[
        Field::ignored(
            "name",
            "the virtual host's name",
            "the routes below are what resim runs",
        ),
        Field::ignored(
            "domains",
            "the hosts it answers",
            "the routes below are what resim runs",
        ),
        Field::items("routes", "its routes, each a client workload", &ROUTE),
        Field::nested(
            "retry_policy",
            "retries of the routes without their own",
            &RETRY,
        ),
        Field::nested(
            "hedge_policy",
            "hedging of the routes without their own",
            &HEDGE,
        ),
    ],
};

/// The fields of a route configuration.
static ROUTE_CONFIG: Table = Table {
    at: "RouteConfiguration",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted(
        "route configuration settings other than its virtual hosts: not modelled",
    ),
    fields: &[
        Field::ignored(
            "name",
            "the route configuration's name",
            "names it: one of the same name and content met again (two listeners naming it) is read once",
        ),
        Field::items("virtual_hosts", "the virtual hosts", &VHOST),
        Field::code(
            "validate_clusters",
            "refuse a route to a cluster Envoy does not have",
            "",
            "true by default for a bootstrap's inline route_config: a route to a cluster the file does not define is then an error, as Envoy refuses it; false (the default for RDS): a placeholder server and a warning",
        ),
    ],
};

/// The format's field tables, for the docs.
pub static TABLES: [&Table; 2] = [&ROUTE_CONFIG, &CLUSTER];

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

/// Walks the file: route configurations and clusters are gathered, every
/// other subtree without them is reported ignored.
fn walk<'a>(
    n: &Node<'a>,
    routes: &mut Vec<Node<'a>>,
    clusters: &mut Vec<Node<'a>>,
    led: &mut Ledger,
) -> Result<(), Error> {
    if n.v.get("virtual_hosts").is_some() {
        routes.push(n.clone());
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

/// The policies a virtual host gives its routes.
#[derive(Clone, Default)]
struct Vhost<'a> {
    retry: Option<Retry>,
    hedge: Option<Hedge<'a>>,
    /// The raw policies, to tell two routes apart.
    raw: (Option<&'a Value>, Option<&'a Value>),
}

/// The routes, gathered over the file's route configurations.
struct Routes<'c> {
    clusters: &'c [Cluster],
    bootstrap: bool,
    /// The route configurations read: (name, content).
    configs: Vec<(String, Value)>,
    /// The routes read: their identity (canonical JSON) and the workload's
    /// name.
    seen: HashMap<String, String>,
    /// The servers: (cluster, server name, routes, defined in the file).
    servers: Vec<(String, String, Vec<String>, bool)>,
    /// Where each cluster's server is in `servers`.
    server_at: HashMap<String, usize>,
    /// The server each route is of.
    route_owner: HashMap<String, String>,
    /// The workloads' names.
    wnames: HashSet<String>,
    policies: Vec<Tab>,
    workloads: Vec<Tab>,
}

/// `v` as JSON text with each mapping's keys sorted: two values that are
/// equal give one text, whatever the order of their keys.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

impl<'c> Routes<'c> {
    /// The server of `cluster`: its own, or a new one for a cluster the
    /// file does not define.
    fn server(&mut self, cluster: &str) -> (String, bool) {
        if let Some(&at) = self.server_at.get(cluster) {
            let (_, s, _, defined) = &self.servers[at];
            return (s.clone(), *defined);
        }
        let defined = self.clusters.iter().find(|c| c.name == cluster);
        let svc = match defined {
            Some(c) => c.svc.clone(),
            None => unique(&name(cluster), |n| {
                self.clusters.iter().any(|c| c.svc == n)
                    || self.servers.iter().any(|(_, s, ..)| s == n)
            }),
        };
        self.server_at
            .insert(cluster.to_string(), self.servers.len());
        self.servers.push((
            cluster.to_string(),
            svc.clone(),
            Vec::new(),
            defined.is_some(),
        ));
        (svc, defined.is_some())
    }

    /// The route `path` of server `svc`, named apart when another server
    /// has it.
    fn path(&mut self, svc: &str, path: &str) -> String {
        let owners = &self.route_owner;
        let taken = |p: &str| owners.get(p).is_some_and(|s| s != svc);
        let route = if taken(path) {
            unique(&format!("/{svc}{}", path.trim_end_matches('/')), taken)
        } else {
            path.to_string()
        };
        if !self.route_owner.contains_key(&route) {
            self.route_owner.insert(route.clone(), svc.to_string());
            if let Some((_, _, rs, _)) = self.servers.iter_mut().find(|(_, s, ..)| s == svc) {
                rs.push(route.clone());
            }
        }
        route
    }

    fn route_config(&mut self, rc: &Node<'_>, led: &mut Ledger) -> Result<(), Error> {
        let rc_name =
            rc.v.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
        if let Some((n, _)) = self
            .configs
            .iter()
            .find(|(n, v)| *n == rc_name && v == rc.v)
        {
            led.note(rc, Fate::Ignored, "", format!("the route configuration `{n}` again (another listener names it too): its routes are read once"));
            return Ok(());
        }
        self.configs.push((rc_name, rc.v.clone()));
        let r = read(rc, &ROUTE_CONFIG, "*", led)?;
        let inline = rc.steps.last() == Some(&Step::Key("route_config".into()));
        let validate = match r.get("validate_clusters") {
            Some(v) => {
                let b = wrapped(&v)?.bool()?;
                r.note(led, "validate_clusters", Fate::Mapped, if b { "true: a route to a cluster the file does not define is an error, as Envoy refuses it" } else { "false: a route to a cluster the file does not define gets a placeholder server" });
                b
            }
            None => self.bootstrap && inline,
        };
        for vh in r.items("virtual_hosts")? {
            let v = r.item("virtual_hosts", &vh, "*", led)?;
            let mut host = Vhost::default();
            if let Some(n) = v.get("retry_policy") {
                host.retry = Some(read_retry(&n, "*", led)?);
                host.raw.0 = Some(n.v);
            }
            if let Some(n) = v.get("hedge_policy") {
                host.hedge = Some(read_hedge(&n, "*", led)?);
                host.raw.1 = Some(n.v);
            }
            let mut earlier: Vec<(usize, &str, &str)> = Vec::new();
            for (i, rt) in v.items("routes")?.into_iter().enumerate() {
                if let Some((k, kind, p)) = shadowed(&rt, &earlier) {
                    led.note(&rt, Fate::Ignored, "", format!("never matched: routes[{k}] ({kind} \"{p}\") matches every request this route does, and Envoy sends a request by the first route of the virtual host that matches it (VirtualHostImpl::getRouteFromEntries)"));
                    led.warn_last();
                    continue;
                }
                if let Some((kind, p)) = whole_match(rt.v) {
                    earlier.push((i, kind, p));
                }
                self.route(&rt, &host, validate, led)?;
            }
        }
        Ok(())
    }

    /// One route: a workload and its policy, unless the same route was read
    /// already.
    fn route<'a>(
        &mut self,
        rt: &Node<'a>,
        host: &Vhost<'a>,
        validate: bool,
        led: &mut Ledger,
    ) -> Result<(), Error> {
        let action = rt.v.get("route");
        let Some(cl) = action
            .and_then(|a| a.get("cluster"))
            .and_then(Value::as_str)
        else {
            led.note(rt, Fate::Ignored, "", "a route without a `cluster` (a redirect, a direct response, weighted clusters, a cluster header): resim sends a route to one named cluster");
            return Ok(());
        };
        let identity = canonical(&serde_json::json!([rt.v, host.raw.0, host.raw.1]));
        if let Some(w) = self.seen.get(&identity) {
            led.note(rt, Fate::Ignored, "", format!("the same route as workload `{w}` (another listener or virtual host has it too): one workload"));
            return Ok(());
        }
        let m = rt.v.get("match");
        let path = ["prefix", "path", "path_separated_prefix"]
            .iter()
            .find_map(|k| m.and_then(|m| m.get(*k)).and_then(Value::as_str));
        let (svc, defined) = self.server(cl);
        let route = self.path(&svc, path.unwrap_or(&format!("/{svc}")));
        let pname = unique(&name(&format!("{cl}{}", route.replace('/', "-"))), |n| {
            self.wnames.contains(n)
        });
        self.wnames.insert(pname.clone());
        self.seen.insert(identity, pname.clone());
        let r = read(rt, &ROUTE, &pname, led)?;
        if let Some(mr) = r.nested("match", &pname, led)? {
            for k in ["prefix", "path", "path_separated_prefix"] {
                mr.note(led, k, Fate::Mapped, format!("the route {route}"));
            }
        }
        let Some(a) = r.nested("route", &pname, led)? else {
            return Ok(());
        };
        let cnode = a.need("cluster", "the cluster it sends to")?;
        if !defined && validate {
            return Err(cnode.err(format!("names cluster `{cl}`, which the file does not define: Envoy refuses this route configuration (`route: unknown cluster '{cl}'`, RouteEntryImplBase::validateClusters) unless its validate_clusters is false")));
        }
        if defined {
            a.note(
                led,
                "cluster",
                Fate::Mapped,
                format!("the server `{svc}`, route {route}"),
            );
        } else {
            a.note(led, "cluster", Fate::Approximated, format!("cluster `{cl}` is not defined in this file: the server `{svc}` is a placeholder (`# set me`), and the policy takes Envoy's default thresholds (fewer than 3 retries in flight)"));
        }
        let retry = match a.get("retry_policy") {
            Some(n) => Some(read_retry(&n, &pname, led)?),
            None => host.retry.clone(),
        };
        let hedge = match a.get("hedge_policy") {
            Some(n) => Some(read_hedge(&n, &pname, led)?),
            None => host.hedge.clone(),
        };
        let budget = self
            .clusters
            .iter()
            .find(|c| c.name == cl)
            .map(|c| c.retry_budget.clone())
            .unwrap_or_else(default_budget);
        let mut w = workload(&a, &pname, &route, led)?;
        let mut pol = Tab::new(format!("policies.{pname}"));
        pol.notes
            .push(format!("the route {route} to cluster `{cl}`"));
        if policy(&mut pol, retry.as_ref(), hedge.as_ref(), budget, led) {
            w.put("call_policy", Val::s(&pname));
            self.policies.push(pol);
        }
        self.workloads.push(w);
        Ok(())
    }
}

/// A route's match when it is a bare `prefix` or `path` (no headers, query
/// parameters, case rule or other condition): (which, the value).
fn whole_match(rt: &Value) -> Option<(&'static str, &str)> {
    let m = rt.get("match")?.as_object()?;
    if m.len() != 1 {
        return None;
    }
    ["prefix", "path"]
        .into_iter()
        .find_map(|k| Some((k, m.get(k)?.as_str()?)))
}

/// The earlier route of the virtual host (its index, `prefix` or `path`,
/// its value) that matches every request `rt` matches: a bare prefix that
/// starts `rt`'s path or prefix, or a bare path equal to `rt`'s path (and
/// `rt` not `case_sensitive: false`).
fn shadowed<'e>(
    rt: &Node<'_>,
    earlier: &[(usize, &'e str, &'e str)],
) -> Option<(usize, &'e str, &'e str)> {
    let m = rt.v.get("match")?;
    if m.get("case_sensitive").and_then(Value::as_bool) == Some(false) {
        // it matches paths in any case, which the earlier one may not
        return None;
    }
    let get = |k: &str| m.get(k).and_then(Value::as_str);
    earlier.iter().copied().find(|(_, kind, p)| match *kind {
        "prefix" => ["prefix", "path", "path_separated_prefix"]
            .into_iter()
            .any(|k| get(k).is_some_and(|x| x.starts_with(p))),
        _ => get("path") == Some(p),
    })
}

/// The workload of a route, from its action `a`: its timeout (Envoy's 15 s
/// when absent).
fn workload(a: &Read<'_>, pname: &str, route: &str, led: &mut Ledger) -> Result<Tab, Error> {
    let mut w = placeholder_workload(
        pname,
        route,
        "requests per second on this route; the configuration does not say",
        "how long the clients send",
    );
    w.notes
        .push(format!("clients sending to {route} through the proxy"));
    match a.get("timeout") {
        Some(t) => {
            let v = ms(&t, Syntax::Protobuf)?;
            if v > 0.0 {
                w.put_noted("timeout_ms", Val::n(v), "the route's timeout");
            } else {
                a.amend(led, "timeout", Fate::Mapped, "0: no timeout");
            }
        }
        None => {
            w.put_noted(
                "timeout_ms",
                Val::n(15_000.0),
                "Envoy's default route timeout",
            );
        }
    }
    Ok(w)
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
        let cname = c.v.get("name").and_then(Value::as_str).unwrap_or("");
        if !cname.is_empty() && clusters.iter().any(|x| x.name == cname) {
            led.note(c, Fate::Ignored, "", format!("another cluster named `{cname}`: the first one read is used (Envoy refuses two clusters of one name; a config dump lists a warming cluster beside its active one)"));
            led.warn_last();
            continue;
        }
        let svc = unique(&name(cname), |n| clusters.iter().any(|x| x.svc == n));
        clusters.push(cluster(c, &svc, led)?);
    }
    let mut routes = Routes {
        clusters: &clusters,
        bootstrap: root.v.get("static_resources").is_some(),
        configs: Vec::new(),
        seen: HashMap::new(),
        servers: Vec::new(),
        server_at: HashMap::new(),
        route_owner: HashMap::new(),
        wnames: HashSet::new(),
        policies: Vec::new(),
        workloads: Vec::new(),
    };
    for rc in &route_configs {
        routes.route_config(rc, led)?;
    }
    let mut limiters = Vec::new();
    let mut services = Vec::new();
    for c in &clusters {
        let rs = routes
            .servers
            .iter()
            .find(|(n, ..)| *n == c.name)
            .map(|(_, _, r, _)| r.clone())
            .unwrap_or_else(|| vec![format!("/{}", c.svc)]);
        let (tabs, limiter) = c.tabs(&rs);
        services.extend(tabs);
        limiters.push(limiter);
    }
    for (cl, svc, rs, defined) in &routes.servers {
        if !defined {
            services.extend(unknown_cluster(svc, cl, rs));
        }
    }
    if routes.workloads.is_empty() {
        // clusters alone: one client per cluster
        for c in &clusters {
            let mut w = placeholder_workload(
                &c.svc,
                &format!("/{}", c.svc),
                "requests per second; the configuration does not say",
                "how long the clients send",
            );
            w.notes
                .push("no route names this cluster: a client sending to it directly".into());
            routes.workloads.push(w);
        }
    }
    draft.tabs.extend(routes.policies);
    draft.tabs.extend(limiters);
    draft.tabs.extend(services);
    draft.tabs.extend(routes.workloads);
    Ok(())
}
