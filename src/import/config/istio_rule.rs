//! Istio's `DestinationRule`: a host's load balancing, connection pool
//! limits, retry budget and outlier detection, read through the tables below
//! as Istio turns them into Envoy's cluster (pilot/pkg/networking/core/
//! cluster_traffic_policy.go: `applyConnectionPool`, `applyRetryBudget`,
//! `applyOutlierDetection`, `applyLoadBalancer`). Istio cannot tell an unset
//! number from 0, so it reads most numbers only above 0: 0 is "unset".

use super::draft::{Fate, Ledger, Tab, Val, name};
use super::duration::{Syntax, ms};
use super::envoy_cluster::wrapped;
use super::spec::{Binding, Field, Read, Table, Unknown, read};
use super::tree::Node;
use crate::error::Error;

static LB: Table = Table {
    at: "trafficPolicy.loadBalancer",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::code(
            "simple",
            "the balancer, by name",
            "services.{}.balancer",
            "ROUND_ROBIN: `round_robin`; LEAST_REQUEST, LEAST_CONN, UNSPECIFIED: `{ kind = \"least_request\", view = \"caller\" }` (each proxy counts its own requests); RANDOM: `random`; PASSTHROUGH: approximated as `round_robin` (it sends each request to the address the caller asked for)",
        ),
        Field::approx(
            "consistentHash",
            "hash-based balancing",
            "services.{}.balancer",
            "`random`: resim's requests carry no hash key, and evenly spread keys reach hosts as uniform draws do",
        ),
        Field::ignored(
            "localityLbSetting",
            "locality balancing",
            "localities: resim balances over all the pods",
        ),
        Field::ignored(
            "warmupDurationSecs",
            "a new pod's warm-up",
            "resim's pods are all there from the start",
        ),
        Field::ignored(
            "warmup",
            "a new pod's warm-up",
            "resim's pods are all there from the start",
        ),
    ],
};

static HTTP_POOL: Table = Table {
    at: "trafficPolicy.connectionPool.http",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::code(
            "http2MaxRequests",
            "requests in flight to the host (Envoy's max_requests)",
            "limiters.{}-max-requests.limit",
            "above 0: a fixed concurrency limit at the host's entrance, approximated (each proxy holds its own; the same with one client proxy); 0: unset, no limit (applyConnectionPool reads it only above 0)",
        )
        .or("(none)", "no limit: Istio sets max_requests to 2^32 - 1"),
        Field::code(
            "maxRetries",
            "retries in flight to the host (Envoy's max_retries)",
            "policies.*.retry.budget",
            "above 0: `{ kind = \"envoy\", percent = 0, min_retry_concurrency = N }` on every retry policy to the host, Istio's default policy included; 0: unset, no limit; ignored under a retryBudget, as Envoy reads one or the other",
        )
        .or("(none)", "no limit: Istio sets max_retries to 2^32 - 1"),
        Field::ignored("http1MaxPendingRequests", "requests waiting for a connection", "requests waiting for a connection (HTTP/1): resim has no connection pool"),
        Field::ignored("maxRequestsPerConnection", "connection reuse", "resim has no connections"),
        Field::ignored("idleTimeout", "a connection's idle limit", "resim has no connections"),
        Field::ignored("h2UpgradePolicy", "HTTP/2 upgrade", "resim has no protocols"),
        Field::ignored("useClientProtocol", "the caller's protocol upstream", "resim has no protocols"),
        Field::ignored("maxConcurrentStreams", "streams per connection", "resim has no connections"),
    ],
};

static POOL: Table = Table {
    at: "trafficPolicy.connectionPool",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::ignored("tcp", "TCP connection limits", "resim has no connections"),
        Field::nested("http", "HTTP limits", &HTTP_POOL),
    ],
};

static BUDGET: Table = Table {
    at: "trafficPolicy.retryBudget",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "percent",
            "retries in flight allowed, as a share (%) of the requests in flight",
            "policies.*.retry.budget.percent",
            "Envoy's budget_percent: retries in flight < max(minRetryConcurrency, percent of the requests in flight), on every retry policy to the host",
        )
        .or("0.2", "0.2 %: applyRetryBudget writes Percent{Value: 0.2}, which Envoy reads as 0.2 % (its comment says 20 %)"),
        Field::maps(
            "minRetryConcurrency",
            "retries in flight allowed whatever the share",
            "policies.*.retry.budget.min_retry_concurrency",
            "Envoy's min_retry_concurrency; 0: unset, 3",
        )
        .or("3", "3"),
    ],
};

static OUTLIER: Table = Table {
    at: "trafficPolicy.outlierDetection",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::code(
            "consecutive5xxErrors",
            "5xx answers (local failures too) in a row that eject a pod",
            "services.{}.outlier_detection.consecutive_failures",
            "above 0: errors, sheds and timeouts in a row; 0: Envoy's consecutive-5xx ejection is off (enforcing 0): no outlier table",
        )
        .or("(unset)", "5, Envoy's default"),
        Field::ignored(
            "consecutiveErrors",
            "deprecated: the old name of consecutive5xxErrors",
            "not read by Istio (applyOutlierDetection reads consecutive5xxErrors only): Envoy's default 5 applies unless consecutive5xxErrors is given",
        ),
        Field::ignored(
            "consecutiveGatewayErrors",
            "502, 503, 504 in a row that eject",
            "the consecutive 5xx count covers these failures",
        ),
        Field::maps("interval", "the sweep period", "services.{}.outlier_detection.interval_ms", "as Envoy's interval")
            .or("10s", "10000 ms, Envoy's default"),
        Field::maps("baseEjectionTime", "the first ejection's length", "services.{}.outlier_detection.base_ejection_ms", "as Envoy's base_ejection_time")
            .or("30s", "30000 ms, Envoy's default"),
        Field::code(
            "maxEjectionPercent",
            "the most pods ejected at once, as a share",
            "services.{}.outlier_detection.max_ejection_pct",
            "above 0: as Envoy's max_ejection_percent; 0: unset, Envoy's 10 %",
        )
        .or("10", "10 %, Envoy's default"),
        Field::ignored("minHealthPercent", "Envoy's panic threshold", "resim has no panic mode: ejected pods stay out"),
        Field::ignored("splitExternalLocalOriginErrors", "count local failures apart", "resim counts timeouts with the errors, as Envoy does unless split"),
        Field::ignored("consecutiveLocalOriginFailures", "local failures in a row that eject", "read only with splitExternalLocalOriginErrors"),
    ],
};

static POLICY: Table = Table {
    at: "spec.trafficPolicy",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::nested("loadBalancer", "the balancer", &LB).or(
            "LEAST_REQUEST",
            "`{ kind = \"least_request\", view = \"caller\" }` (defaultLBAlgorithm, since Istio 1.14)",
        ),
        Field::nested("connectionPool", "limits on requests and retries", &POOL),
        Field::nested("outlierDetection", "ejecting failing pods", &OUTLIER)
            .or("(none)", "no outlier detection"),
        Field::nested("retryBudget", "retries in flight as a share of the requests", &BUDGET),
        Field::ignored("tls", "TLS to the host", "not modelled"),
        Field::ignored("portLevelSettings", "settings per port", "resim's services have one port"),
        Field::ignored("tunnel", "tunnelling", "not modelled"),
        Field::ignored("proxyProtocol", "the PROXY protocol", "not modelled"),
    ],
};

static DR_SPEC: Table = Table {
    at: "spec",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::code("host", "the host the rule is for", "services.*", "the server named after its first label"),
        Field::nested("trafficPolicy", "the host's policies", &POLICY).or(
            "(none)",
            "Istio's defaults: LEAST_REQUEST, no limits (max_requests and max_retries 2^32 - 1), no outlier detection",
        ),
        Field::ignored("subsets", "named versions of the host", "resim sends a host's requests to all its pods under the host's policy"),
        Field::ignored("exportTo", "visibility", "not modelled"),
        Field::ignored("workloadSelector", "the workloads it applies to", "not modelled"),
    ],
};

/// The fields of a DestinationRule.
pub(super) static DR: Table = Table {
    at: "DestinationRule",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::ignored("apiVersion", "the API", "the resource's identity"),
        Field::ignored("kind", "the kind", "the resource's identity"),
        Field::ignored(
            "metadata",
            "its name and namespace",
            "the resource's identity",
        ),
        Field::ignored("status", "its status", "not configuration"),
        Field::nested("spec", "the rule", &DR_SPEC),
    ],
};

/// The host a resource names, as Istio resolves it: a short name (no dot)
/// is in the resource's namespace (`reviews` in `prod` is
/// `reviews.prod.svc.cluster.local`); a name with a dot, an address or `*`
/// is taken as written (pilot's model.ResolveShortnameToFQDN). A resource
/// without a namespace is in the one it is applied to, the same for all.
/// `at` is any node of the resource.
pub(super) fn fqdn(host: &str, at: &Node<'_>) -> String {
    if host.contains('.') || host.contains(':') || host == "*" {
        return host.to_string();
    }
    let ns = at.src.docs[at.doc]
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(|n| n.as_str())
        .unwrap_or("default");
    format!("{host}.{ns}.svc.cluster.local")
}

/// The servers' names, one per host: a host's first label
/// (`reviews.prod.svc.cluster.local` is `reviews`), and where another host
/// has that label, its first two (`reviews-other`), so that two hosts never
/// share a server.
#[derive(Default)]
pub(super) struct Names {
    /// The server of each host.
    of: std::collections::HashMap<String, String>,
    /// The servers named.
    taken: std::collections::HashSet<String>,
}

impl Names {
    /// The server of the host `fqdn` (see [`fqdn`]).
    pub(super) fn of(&mut self, fqdn: &str) -> String {
        if let Some(s) = self.of.get(fqdn) {
            return s.clone();
        }
        let labels: Vec<&str> = fqdn.split('.').collect();
        let taken = |n: &str| self.taken.contains(n);
        let mut base = name(labels[0]);
        if taken(&base) && labels.len() > 1 {
            base = name(&format!("{}-{}", labels[0], labels[1]));
        }
        let svc = super::draft::unique(&base, taken);
        self.of.insert(fqdn.to_string(), svc.clone());
        self.taken.insert(svc.clone());
        svc
    }
}

/// A destination rule's settings for one host.
pub(super) struct Rule {
    /// The host as written.
    pub host: String,
    /// Its server's name.
    pub svc: String,
    /// The balancer.
    pub balancer: Val,
    /// http2MaxRequests, when above 0.
    pub max_requests: Option<u64>,
    /// maxRetries (above 0) or the retry budget.
    pub budget: Option<Val>,
    /// The outlier detection table.
    pub outlier: Option<Tab>,
}

/// Istio's default balancer.
pub(super) fn least_request() -> Val {
    Val::table(&[
        ("kind", Val::s("least_request")),
        ("view", Val::s("caller")),
    ])
}

/// Reads a DestinationRule.
pub(super) fn destination_rule(
    doc: &Node<'_>,
    names: &mut Names,
    led: &mut Ledger,
) -> Result<Rule, Error> {
    let host_raw = doc
        .v
        .get("spec")
        .and_then(|s| s.get("host"))
        .and_then(|h| h.as_str())
        .unwrap_or("");
    let svc = names.of(&fqdn(host_raw, doc));
    let d = read(doc, &DR, &svc, led)?;
    let spec = d
        .nested("spec", &svc, led)?
        .ok_or_else(|| doc.err("a DestinationRule needs `spec`"))?;
    let host = spec.need("host", "the host the rule is for")?;
    let host = host.str()?.to_string();
    spec.note(led, "host", Fate::Mapped, format!("the server `{svc}`"));
    let mut rule = Rule {
        host,
        svc: svc.clone(),
        balancer: least_request(),
        max_requests: None,
        budget: None,
        outlier: None,
    };
    let Some(tp) = spec.nested("trafficPolicy", &svc, led)? else {
        return Ok(rule);
    };
    if let Some(lb) = tp.nested("loadBalancer", &svc, led)? {
        rule.balancer = balancer(&lb, led)?;
    }
    let mut max_retries = None;
    if let Some(pool) = tp.nested("connectionPool", &svc, led)?
        && let Some(http) = pool.nested("http", &svc, led)?
    {
        if let Some(m) = http.get("http2MaxRequests") {
            let n = m.i32("a protobuf int32")?;
            if n > 0 {
                rule.max_requests = Some(n);
                http.note(led, "http2MaxRequests", Fate::Approximated, "a fixed concurrency limit at the host's entrance; Istio's proxies each hold their own (the same with one client proxy)");
            } else {
                http.note(
                    led,
                    "http2MaxRequests",
                    Fate::Mapped,
                    "0: unset, no limit (applyConnectionPool reads it only above 0)",
                );
            }
        }
        if let Some(m) = http.get("maxRetries") {
            let n = m.i32("a protobuf int32")?;
            if n > 0 {
                max_retries = Some(n);
                http.note(led, "maxRetries", Fate::Mapped, "the envoy budget with percent 0: fewer than this many retries in flight, on every retry policy to the host");
            } else {
                http.note(
                    led,
                    "maxRetries",
                    Fate::Mapped,
                    "0: unset, no limit (applyConnectionPool reads it only above 0)",
                );
            }
            if tp.has("retryBudget") {
                http.note(
                    led,
                    "maxRetries",
                    Fate::Ignored,
                    "a retryBudget is set: Envoy ignores max_retries",
                );
            }
        }
    }
    rule.budget = match tp.nested("retryBudget", &svc, led)? {
        Some(b) => Some(retry_budget(&b)?),
        None => max_retries.map(|n| envoy_budget(0.0, n as f64)),
    };
    if let Some(o) = tp.nested("outlierDetection", &svc, led)? {
        rule.outlier = outlier(&o, led)?;
    }
    Ok(rule)
}

fn envoy_budget(percent: f64, min: f64) -> Val {
    Val::table(&[
        ("kind", Val::s("envoy")),
        ("percent", Val::n(percent)),
        ("min_retry_concurrency", Val::n(min)),
    ])
}

fn retry_budget(b: &Read<'_>) -> Result<Val, Error> {
    let pct = match b.get("percent") {
        Some(p) => {
            let x = wrapped(&p)?.num()?;
            if !(0.0..=100.0).contains(&x) {
                return Err(p.err("must be between 0 and 100"));
            }
            x
        }
        None => 0.2,
    };
    let min = match b.get("minRetryConcurrency") {
        Some(m) if m.u32()? > 0 => m.u32()? as f64,
        _ => 3.0,
    };
    Ok(envoy_budget(pct, min))
}

fn balancer(lb: &Read<'_>, led: &mut Ledger) -> Result<Val, Error> {
    if lb.has("consistentHash") {
        return Ok(Val::s("random"));
    }
    let Some(x) = lb.get("simple") else {
        return Ok(least_request());
    };
    const KNOWN: [&str; 6] = [
        "ROUND_ROBIN",
        "LEAST_REQUEST",
        "LEAST_CONN",
        "RANDOM",
        "PASSTHROUGH",
        "UNSPECIFIED",
    ];
    let s = x.str()?.to_ascii_uppercase();
    let (val, fate, how) = match s.as_str() {
        "ROUND_ROBIN" => (Val::s("round_robin"), Fate::Mapped, "round_robin"),
        "LEAST_REQUEST" | "LEAST_CONN" => (
            least_request(),
            Fate::Mapped,
            "least_request, each proxy balancing on its own counts",
        ),
        "UNSPECIFIED" => (
            least_request(),
            Fate::Mapped,
            "Istio's default, LEAST_REQUEST (applySimpleDefaultLoadBalancer)",
        ),
        "RANDOM" => (Val::s("random"), Fate::Mapped, "random"),
        "PASSTHROUGH" => (
            Val::s("round_robin"),
            Fate::Approximated,
            "round_robin: PASSTHROUGH sends each request to the address the caller asked for",
        ),
        other => {
            return Err(x.err(format!(
                "`{other}` is not a simple load balancer ({}){}",
                KNOWN.join(", "),
                crate::error::did_you_mean(other, KNOWN)
            )));
        }
    };
    lb.note(led, "simple", fate, how);
    Ok(val)
}

/// The outlier detection table, as Istio writes Envoy's (None: consecutive
/// 5xx ejection is off).
fn outlier(o: &Read<'_>, led: &mut Ledger) -> Result<Option<Tab>, Error> {
    let consecutive = match o.get("consecutive5xxErrors") {
        Some(n) => {
            let v = wrapped(&n)?.u32()?;
            let how = if v > 0 {
                "errors, sheds and timeouts in a row"
            } else {
                "0: Istio sets enforcing_consecutive_5xx to 0, so Envoy never ejects on consecutive 5xx: no outlier table"
            };
            o.note(led, "consecutive5xxErrors", Fate::Mapped, how);
            v
        }
        None => 5,
    };
    let pct = match o.get("maxEjectionPercent") {
        Some(n) => {
            let v = n.num()?;
            // Istio's validation (validateOutlierDetection) refuses a
            // DestinationRule whose maxEjectionPercent is outside [0, 100]
            if !(0.0..=100.0).contains(&v) {
                return Err(n.err(format!(
                    "{} is not a percentage: Istio refuses a maxEjectionPercent outside 0 to 100",
                    crate::error::num(v)
                )));
            }
            let how = if v > 0.0 {
                "at most this share of the pods ejected at once"
            } else {
                "0: unset, Envoy's 10 % (applyOutlierDetection reads it only above 0)"
            };
            o.note(led, "maxEjectionPercent", Fate::Mapped, how);
            if v > 0.0 { v } else { 10.0 }
        }
        None => 10.0,
    };
    if consecutive == 0 {
        return Ok(None);
    }
    let dur = |k: &str, def: f64| -> Result<f64, Error> {
        match o.get(k) {
            Some(n) => ms(&n, Syntax::Go),
            None => Ok(def),
        }
    };
    let mut t = Tab::new("outlier");
    t.notes.push(
        "outlierDetection: consecutive 5xx (errors, sheds and timeouts here) eject a pod".into(),
    );
    t.notes.push("Istio has no always_eject_one_host or max_ejection_time: Envoy's defaults apply (false, 300 s). An ejection needs (ejected + 1) / pods <= maxEjectionPercent, so with 3 pods at Istio's default 10 % Envoy ejects none".into());
    t.put("consecutive_failures", Val::n(consecutive as f64));
    t.put(
        "interval_ms",
        Val::n(super::sweep_period::interval(o, Syntax::Go)?),
    );
    t.put(
        "base_ejection_ms",
        Val::n(dur("baseEjectionTime", 30_000.0)?),
    );
    t.put("max_ejection_pct", Val::n(pct));
    Ok(Some(t))
}
