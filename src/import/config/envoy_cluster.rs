//! Envoy clusters (`envoy.config.cluster.v3.Cluster`): their hosts, balancer,
//! circuit-breaker thresholds, retry budget and outlier detection, read
//! through the tables below, and the scenario tables a cluster becomes.
//!
//! Envoy's defaults quoted here are its code's: thresholds of 1024 requests
//! and 3 retries in flight (`ResourceManagerImpl` as `ClusterInfoImpl` builds
//! it), a retry budget of 20 % and 3 (`ClusterInfoImpl::getRetryBudgetParams`),
//! outlier detection of 5 consecutive 5xx, 10 s, 30 s, 10 %, 300 s
//! (`source/common/upstream/outlier_detection_impl.cc`, `DetectorConfig`).

use super::draft::{Fate, Ledger, Tab, Val, placeholder_server};
use super::duration::{Syntax, ms};
use super::spec::{Binding, Field, Read, Table, Unknown, read};
use super::tree::Node;
use crate::error::Error;

const NOT_MODELLED: &str =
    "a cluster setting resim does not model (discovery, TLS, health checks, protocols, ...)";

static LB_ENDPOINT: Table = Table {
    at: "load_assignment.endpoints[].lb_endpoints[]",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted("an endpoint setting resim does not model"),
    fields: &[
        Field::code(
            "endpoint",
            "the host's address",
            "services.{}.replicas",
            "one replica per endpoint (its address is not modelled)",
        ),
        Field::maps(
            "load_balancing_weight",
            "the host's weight in the balancer",
            "services.{}.balancer.weights",
            "the replica's weight (round robin becomes `weighted_round_robin`, least request takes `weights`)",
        ),
        Field::ignored(
            "health_status",
            "the host's health as the control plane says",
            "resim's hosts are up or down by `[[faults]]`",
        ),
        Field::ignored("metadata", "the host's metadata", "no behaviour"),
    ],
};

static LOCALITY: Table = Table {
    at: "load_assignment.endpoints[]",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted("a locality setting resim does not model"),
    fields: &[
        Field::items("lb_endpoints", "the locality's hosts", &LB_ENDPOINT),
        Field::ignored(
            "locality",
            "where the hosts run",
            "localities: resim balances over all the hosts",
        ),
        Field::ignored(
            "load_balancing_weight",
            "the locality's weight",
            "localities: resim balances over all the hosts",
        ),
        Field::ignored(
            "priority",
            "the locality's priority (failover order)",
            "priorities: resim balances over all the hosts",
        ),
    ],
};

static LOAD_ASSIGNMENT: Table = Table {
    at: "load_assignment",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted("not a resilience setting resim models"),
    fields: &[
        Field::ignored(
            "cluster_name",
            "the cluster the hosts are for",
            "the cluster's `name` names the server",
        ),
        Field::items("endpoints", "the hosts, by locality", &LOCALITY),
        Field::ignored(
            "policy",
            "overprovisioning and drop settings",
            "not modelled",
        ),
    ],
};

static LEAST_REQUEST: Table = Table {
    at: "least_request_lb_config",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "choice_count",
            "hosts drawn per pick",
            "services.{}.balancer.choice_count",
            "the least loaded of this many hosts, each drawn from all of them (with replacement, as Envoy's `unweightedHostPickNChoices`)",
        )
        .or("2", "2"),
        Field::maps(
            "active_request_bias",
            "how much the requests in flight weigh against a host's weight",
            "services.{}.balancer.active_request_bias",
            "weight / (active + 1)^bias, written when the hosts' weights differ (Envoy uses it only then)",
        ),
        Field::ignored(
            "slow_start_config",
            "a new host's weight ramp",
            "resim's hosts are all there from the start",
        ),
        Field::ignored(
            "locality_lb_config",
            "locality weighting",
            "localities: resim balances over all the hosts",
        ),
        Field::ignored(
            "enable_full_scan",
            "scan every host instead of drawing",
            "not modelled: resim draws choice_count hosts",
        ),
        Field::ignored(
            "selection_method",
            "how the choices are made",
            "not modelled: resim draws choice_count hosts",
        ),
    ],
};

static RETRY_BUDGET: Table = Table {
    at: "circuit_breakers.thresholds[].retry_budget",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "budget_percent",
            "retries in flight allowed, as a share of the requests in flight",
            "policies.*.retry.budget.percent",
            "the `envoy` budget of every route's policy to the cluster: retries in flight < max(min_retry_concurrency, percent of the requests in flight)",
        )
        .or("20", "20 %"),
        Field::maps(
            "min_retry_concurrency",
            "retries in flight allowed whatever the share",
            "policies.*.retry.budget.min_retry_concurrency",
            "the `envoy` budget's floor",
        )
        .or("3", "3"),
    ],
};

static THRESHOLDS: Table = Table {
    at: "circuit_breakers.thresholds[]",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::ignored(
            "priority",
            "the routing priority these thresholds are for",
            "DEFAULT: every request of resim (HIGH thresholds are ignored whole)",
        ),
        Field::approx(
            "max_requests",
            "requests in flight to the cluster",
            "limiters.{}-max-requests.limit",
            "a fixed concurrency limit at the server's entrance (its `middleware`); Envoy holds it per proxy: the same with one client proxy",
        )
        .or("1024", "a limit of 1024 requests in flight"),
        Field::code(
            "max_retries",
            "retries in flight to the cluster",
            "policies.*.retry.budget",
            "`{ kind = \"envoy\", percent = 0, min_retry_concurrency = N }`: fewer than N retries in flight; ignored when a `retry_budget` is set, as Envoy reads one or the other",
        )
        .or("3", "at most 3 retries in flight"),
        Field::nested(
            "retry_budget",
            "retries in flight as a share of the requests in flight",
            &RETRY_BUDGET,
        ),
        Field::ignored(
            "max_connections",
            "connections to the cluster",
            "resim has no connections",
        ),
        Field::ignored(
            "max_pending_requests",
            "requests waiting for a connection",
            "requests waiting for a connection (HTTP/1): resim has no connection pool",
        ),
        Field::ignored(
            "max_connection_pools",
            "connection pools of the cluster",
            "resim has no connections",
        ),
        Field::ignored(
            "track_remaining",
            "publish the remaining resources as stats",
            "monitoring, no behaviour",
        ),
    ],
};

static CIRCUIT_BREAKERS: Table = Table {
    at: "circuit_breakers",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::items("thresholds", "the limits per routing priority", &THRESHOLDS),
        Field::ignored(
            "per_host_thresholds",
            "limits per host (max_connections only)",
            "resim has no connections",
        ),
    ],
};

const LOCAL_ORIGIN: &str = "read only with split_external_local_origin_errors";
const FAILURE_PCT: &str =
    "failure-percentage detection (off by default: enforcing_failure_percentage 0) is not modelled";
const SUCCESS_RATE: &str = "success-rate detection is not modelled (it needs success_rate_minimum_hosts hosts with success_rate_request_volume requests each per interval)";

static OUTLIER: Table = Table {
    at: "outlier_detection",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "consecutive_5xx",
            "5xx answers in a row (local failures too, unless split) that eject a host",
            "services.{}.outlier_detection.consecutive_failures",
            "errors, sheds and timeouts in a row; 0: no run ever reaches it, no ejection (no outlier table)",
        )
        .or("5", "5"),
        Field::maps(
            "interval",
            "the sweep period",
            "services.{}.outlier_detection.interval_ms",
            "ejections that are over end at a sweep",
        )
        .or("10s", "10000 ms"),
        Field::maps(
            "base_ejection_time",
            "the first ejection's length; the k-th lasts k times it",
            "services.{}.outlier_detection.base_ejection_ms",
            "as Envoy",
        )
        .or("30s", "30000 ms"),
        Field::maps(
            "max_ejection_percent",
            "the most hosts ejected at once, as a share",
            "services.{}.outlier_detection.max_ejection_pct",
            "an ejection is refused when (ejected + 1) / hosts would pass it (DetectorImpl::ejectHost); above 100: as 100",
        )
        .or("10", "10 %"),
        Field::maps(
            "max_ejection_time",
            "the longest ejection",
            "services.{}.outlier_detection.max_ejection_ms",
            "k x base stops growing past it; written only when the file gives it",
        )
        .or("300s", "resim's own default, 300 s"),
        Field::maps(
            "always_eject_one_host",
            "eject one host even when the share rule refuses it",
            "services.{}.outlier_detection.always_eject_one_host",
            "the share rule is waived while no host is ejected; written only when the file gives it",
        )
        .or("false", "resim's own default, false"),
        Field::code(
            "enforcing_consecutive_5xx",
            "the chance, in %, that a run of consecutive 5xx ejects",
            "services.{}.outlier_detection",
            "100: every run ejects; 0: consecutive-5xx ejection is off (no outlier table); between: approximated as 100",
        )
        .or("100", "every run ejects"),
        Field::code(
            "split_external_local_origin_errors",
            "count local failures (timeouts, resets) apart from 5xx answers",
            "services.{}.outlier_detection.consecutive_failures",
            "false: timeouts count with the errors, as resim counts them; true: approximated (resim still counts them together)",
        )
        .or("false", "timeouts and resets count as 5xx"),
        Field::ignored("max_ejection_time_jitter", "a random addition to each ejection", "resim's ejections are not jittered (the default adds none)"),
        Field::ignored("consecutive_gateway_failure", "502, 503, 504 in a row that eject", "enforced at 0 % by default (enforcing_consecutive_gateway_failure); the consecutive 5xx count covers these failures"),
        Field::ignored("enforcing_consecutive_gateway_failure", "the chance that a gateway-failure run ejects", "see consecutive_gateway_failure"),
        Field::ignored("consecutive_local_origin_failure", "local failures in a row that eject", LOCAL_ORIGIN),
        Field::ignored("enforcing_consecutive_local_origin_failure", "its chance to eject", LOCAL_ORIGIN),
        Field::ignored("enforcing_local_origin_success_rate", "its chance to eject", LOCAL_ORIGIN),
        Field::ignored("enforcing_success_rate", "the chance that success-rate detection ejects", SUCCESS_RATE),
        Field::ignored("success_rate_minimum_hosts", "hosts needed for success-rate detection", SUCCESS_RATE),
        Field::ignored("success_rate_request_volume", "requests per host needed", SUCCESS_RATE),
        Field::ignored("success_rate_stdev_factor", "how far below the mean ejects", SUCCESS_RATE),
        Field::ignored("failure_percentage_threshold", "the failure share that ejects", FAILURE_PCT),
        Field::ignored("enforcing_failure_percentage", "its chance to eject", FAILURE_PCT),
        Field::ignored("enforcing_failure_percentage_local_origin", "its chance to eject", FAILURE_PCT),
        Field::ignored("failure_percentage_minimum_hosts", "hosts needed", FAILURE_PCT),
        Field::ignored("failure_percentage_request_volume", "requests per host needed", FAILURE_PCT),
        Field::ignored("successful_active_health_check_uneject_host", "a passing health check returns the host", "resim has no health checks"),
        Field::ignored("monitors", "extension monitors", "not modelled"),
    ],
};

/// The fields of a cluster.
pub(super) static CLUSTER: Table = Table {
    at: "Cluster",
    binding: Binding::Exact,
    unknown: Unknown::Unlisted(NOT_MODELLED),
    fields: &[
        Field::code(
            "name",
            "the cluster's name, which routes use",
            "services.*",
            "a server named after it",
        ),
        Field::code(
            "type",
            "how the hosts are found",
            "services.{}.replicas",
            "STATIC: one replica per endpoint; STRICT_DNS: each endpoint's name resolves to its addresses at run time, each address a host (`replicas` to set); LOGICAL_DNS: one endpoint (Envoy refuses more), one logical host at the first address DNS answers (`replicas = 1` to check; source/extensions/clusters/logical_dns); EDS and others: hosts from discovery (`replicas` to set)",
        )
        .or("STATIC", "one replica per endpoint"),
        Field::nested("load_assignment", "the hosts", &LOAD_ASSIGNMENT),
        Field::code(
            "lb_policy",
            "the balancer",
            "services.{}.balancer",
            "ROUND_ROBIN: `round_robin` (`weighted_round_robin` when weights differ); LEAST_REQUEST: `{ kind = \"least_request\", view = \"caller\" }` (each proxy counts its own requests); RANDOM: `random`; RING_HASH, MAGLEV: approximated as `random` (resim's requests carry no hash key)",
        )
        .or("ROUND_ROBIN", "round_robin"),
        Field::nested(
            "least_request_lb_config",
            "least-request settings",
            &LEAST_REQUEST,
        ),
        Field::nested(
            "circuit_breakers",
            "limits on requests and retries in flight",
            &CIRCUIT_BREAKERS,
        )
        .or(
            "max_requests 1024, max_retries 3",
            "a limit of 1024 requests in flight; fewer than 3 retries in flight",
        ),
        Field::nested(
            "outlier_detection",
            "ejecting failing hosts",
            &OUTLIER,
        )
        .or("(none)", "no outlier detection"),
        Field::ignored(
            "connect_timeout",
            "the time to connect",
            "resim has no connections",
        ),
    ],
};

/// How a cluster's hosts are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hosts {
    /// STATIC: these endpoints.
    Static(usize),
    /// STRICT_DNS: these names, each resolving to its addresses.
    StrictDns(usize),
    /// LOGICAL_DNS: one logical host.
    LogicalDns,
    /// EDS and the other kinds: from discovery.
    Discovered,
}

/// A cluster, as read.
pub(super) struct Cluster {
    /// Its name in the file.
    pub name: String,
    /// Its server's name in the scenario.
    pub svc: String,
    hosts: Hosts,
    balancer: Val,
    max_requests: u64,
    /// The retry budget of every route's policy to it.
    pub retry_budget: Val,
    outlier: Option<Tab>,
}

/// Envoy's default thresholds as a budget: fewer than 3 retries in flight.
pub(super) fn default_budget() -> Val {
    envoy_budget(0.0, 3.0)
}

fn envoy_budget(percent: f64, min: f64) -> Val {
    Val::table(&[
        ("kind", Val::s("envoy")),
        ("percent", Val::n(percent)),
        ("min_retry_concurrency", Val::n(min)),
    ])
}

/// A protobuf wrapper or a plain value: `{ "value": 20 }` or `20`.
pub(super) fn wrapped<'a>(n: &Node<'a>) -> Result<Node<'a>, Error> {
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

/// An endpoint's `load_balancing_weight`: Envoy's proto (`UInt32Value`,
/// `gte: 1`) refuses 0 and anything beyond 32 bits.
fn endpoint_weight(w: &Node<'_>) -> Result<f64, Error> {
    let v = w.u32()?;
    if v == 0 {
        return Err(w.err(
            "must be at least 1: Envoy refuses a weight of 0 (LbEndpoint's load_balancing_weight, gte 1)",
        ));
    }
    Ok(v as f64)
}

/// Reads a cluster; `svc` is its server's name.
pub(super) fn cluster(c: &Node<'_>, svc: &str, led: &mut Ledger) -> Result<Cluster, Error> {
    let r = read(c, &CLUSTER, svc, led)?;
    let name = r.need("name", "Envoy refuses a cluster without one")?;
    r.note(led, "name", Fate::Mapped, format!("the server `{svc}`"));
    let (hosts, weights) = hosts(&r, svc, led)?;
    let balancer = balancer(&r, svc, &weights, led)?;
    let (max_requests, retry_budget) = thresholds(&r, svc, led)?;
    let outlier = match r.get("outlier_detection") {
        Some(o) if matches!(hosts, Hosts::Static(1) | Hosts::LogicalDns) => {
            led.note(&o, Fate::Ignored, "", "one host: resim's outlier detection needs 2 replicas or more, and Envoy ejects a cluster's only host only with max_ejection_percent 100 or always_eject_one_host");
            None
        }
        Some(_) => match r.nested("outlier_detection", svc, led)? {
            Some(o) => outlier(&o, led)?,
            None => None,
        },
        None => None,
    };
    Ok(Cluster {
        name: name.str()?.to_string(),
        svc: svc.to_string(),
        hosts,
        balancer,
        max_requests,
        retry_budget,
        outlier,
    })
}

/// The cluster's hosts, from its `type` and `load_assignment`, and their
/// weights.
fn hosts(r: &Read<'_>, svc: &str, led: &mut Ledger) -> Result<(Hosts, Vec<f64>), Error> {
    let mut weights = Vec::new();
    let mut endpoints = Vec::new();
    if let Some(la) = r.nested("load_assignment", svc, led)? {
        for loc in la.items("endpoints")? {
            let l = la.item("endpoints", &loc, svc, led)?;
            for ep in l.items("lb_endpoints")? {
                let e = l.item("lb_endpoints", &ep, svc, led)?;
                weights.push(match e.get("load_balancing_weight") {
                    Some(w) => endpoint_weight(&wrapped(&w)?)?,
                    None => 1.0,
                });
                endpoints.push(e);
            }
        }
    }
    let kind = match r.get("type") {
        Some(t) => t.str()?.to_ascii_uppercase(),
        None => "STATIC".into(),
    };
    let n = endpoints.len();
    let hosts = match kind.as_str() {
        "STATIC" => Hosts::Static(n),
        "STRICT_DNS" => Hosts::StrictDns(n),
        "LOGICAL_DNS" if n != 1 => {
            return Err(r.node.err(format!(
                "is LOGICAL_DNS with {n} endpoints: Envoy refuses it (LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint)"
            )));
        }
        "LOGICAL_DNS" => Hosts::LogicalDns,
        _ => Hosts::Discovered,
    };
    let how = match hosts {
        Hosts::Static(_) => "one replica per endpoint",
        Hosts::StrictDns(_) => {
            "each endpoint's name resolves to its addresses at run time, each address a host: `replicas` to set"
        }
        Hosts::LogicalDns => {
            "one logical host, at the first address DNS answers for its one endpoint: `replicas = 1` to check"
        }
        Hosts::Discovered => "hosts from discovery: `replicas` to set",
    };
    r.note(led, "type", Fate::Mapped, format!("{kind}: {how}"));
    for e in &endpoints {
        e.note(led, "endpoint", Fate::Mapped, how);
    }
    Ok((hosts, weights))
}

/// The balancer a cluster's `lb_policy` names.
fn balancer(r: &Read<'_>, svc: &str, weights: &[f64], led: &mut Ledger) -> Result<Val, Error> {
    let kind = match r.get("lb_policy") {
        Some(n) => n.str()?.to_ascii_uppercase(),
        None => "ROUND_ROBIN".into(),
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
    let (val, fate, how) = match kind.as_str() {
        "ROUND_ROBIN" if equal => (Val::s("round_robin"), Fate::Mapped, "round_robin"),
        "ROUND_ROBIN" => (
            Val::table(&[("kind", Val::s("weighted_round_robin")), ("weights", wv)]),
            Fate::Mapped,
            "weighted_round_robin: the endpoints' weights differ",
        ),
        "LEAST_REQUEST" => (
            least_request(r, svc, equal, wv, led)?,
            Fate::Mapped,
            "least_request on each proxy's own counts (view = \"caller\")",
        ),
        "RANDOM" => (Val::s("random"), Fate::Mapped, "random"),
        "RING_HASH" | "MAGLEV" => (
            Val::s("random"),
            Fate::Approximated,
            "random: resim's requests carry no hash key, and a hash of keys spread evenly sends each request to a host as a uniform draw would",
        ),
        other => {
            let at = r.get("lb_policy").unwrap_or_else(|| r.node.clone());
            return Err(at.err(format!(
                "`{other}` is not an lb_policy resim can run (ROUND_ROBIN, LEAST_REQUEST, RANDOM, RING_HASH, MAGLEV)"
            )));
        }
    };
    r.note(led, "lb_policy", fate, how);
    Ok(val)
}

fn least_request(
    r: &Read<'_>,
    svc: &str,
    equal: bool,
    weights: Val,
    led: &mut Ledger,
) -> Result<Val, Error> {
    let (mut choice, mut bias) = (2.0, None);
    if let Some(l) = r.nested("least_request_lb_config", svc, led)? {
        if let Some(c) = l.get("choice_count") {
            let v = wrapped(&c)?;
            choice = v.u32()? as f64;
            // LeastRequest's proto: `choice_count` gte 2
            if choice < 2.0 {
                return Err(v.err("must be at least 2 (Envoy refuses a smaller choice_count)"));
            }
            if choice > 1000.0 {
                return Err(v.err("is above 1000, the most resim draws per pick"));
            }
        }
        if let Some(b) = l.get("active_request_bias") {
            bias = Some(wrapped(&b)?.num()?);
        }
    }
    let mut items = vec![
        ("kind", Val::s("least_request")),
        ("view", Val::s("caller")),
        // drawn with replacement, as Envoy does: more draws than hosts is fine
        ("choice_count", Val::n(choice)),
    ];
    if !equal {
        items.push(("weights", weights));
        if let Some(b) = bias {
            items.push(("active_request_bias", Val::n(b)));
        }
    }
    Ok(Val::table(&items))
}

/// The DEFAULT priority thresholds: (max_requests, the retry budget).
fn thresholds(r: &Read<'_>, svc: &str, led: &mut Ledger) -> Result<(u64, Val), Error> {
    let mut out = (1024, default_budget());
    let Some(cb) = r.nested("circuit_breakers", svc, led)? else {
        return Ok(out);
    };
    for t in cb.items("thresholds")? {
        if t.v.get("priority").and_then(|p| p.as_str()) == Some("HIGH") {
            led.note(
                &t,
                Fate::Ignored,
                "",
                "HIGH priority thresholds: resim's requests are all of DEFAULT priority",
            );
            continue;
        }
        let th = cb.item("thresholds", &t, svc, led)?;
        if let Some(m) = th.get("max_requests") {
            out.0 = wrapped(&m)?.u32()?;
        }
        let max_retries = match th.get("max_retries") {
            Some(m) => wrapped(&m)?.u32()? as f64,
            None => 3.0,
        };
        match th.nested("retry_budget", svc, led)? {
            Some(b) => {
                let pct = match b.get("budget_percent") {
                    Some(p) => {
                        let x = wrapped(&p)?.num()?;
                        if !(0.0..=100.0).contains(&x) {
                            return Err(p.err("must be between 0 and 100"));
                        }
                        x
                    }
                    None => 20.0,
                };
                let min = match b.get("min_retry_concurrency") {
                    Some(m) => wrapped(&m)?.u32()? as f64,
                    None => 3.0,
                };
                out.1 = envoy_budget(pct, min);
                th.note(
                    led,
                    "max_retries",
                    Fate::Ignored,
                    "a retry_budget is set: Envoy ignores max_retries",
                );
            }
            None => {
                out.1 = envoy_budget(0.0, max_retries);
                th.note(
                    led,
                    "max_retries",
                    Fate::Mapped,
                    "the envoy budget with percent 0: fewer than this many retries in flight",
                );
            }
        }
    }
    Ok(out)
}

/// The outlier detection table (None: Envoy's consecutive-5xx ejection is
/// off).
fn outlier(o: &Read<'_>, led: &mut Ledger) -> Result<Option<Tab>, Error> {
    let mut t = Tab::new("outlier");
    t.notes.push(
        "outlier_detection: consecutive 5xx (errors, sheds and timeouts here) eject a host".into(),
    );
    // every number here is a protobuf UInt32Value
    let num = |k: &str, def: f64| -> Result<f64, Error> {
        match o.get(k) {
            Some(n) => Ok(wrapped(&n)?.u32()? as f64),
            None => Ok(def),
        }
    };
    let dur = |k: &str, def: f64| -> Result<f64, Error> {
        match o.get(k) {
            Some(n) => ms(&n, Syntax::Protobuf),
            None => Ok(def),
        }
    };
    let enforcing = num("enforcing_consecutive_5xx", 100.0)?;
    if o.has("enforcing_consecutive_5xx") {
        let (fate, how) = if enforcing <= 0.0 {
            (
                Fate::Mapped,
                "0: Envoy never ejects on consecutive 5xx, so no outlier table is written",
            )
        } else if enforcing >= 100.0 {
            (Fate::Mapped, "100: every run of failures ejects")
        } else {
            (
                Fate::Approximated,
                "every run of failures ejects here; Envoy ejects with this chance",
            )
        };
        o.note(led, "enforcing_consecutive_5xx", fate, how);
    }
    if o.get("split_external_local_origin_errors").is_some() {
        let split = o
            .get("split_external_local_origin_errors")
            .map(|n| n.bool())
            .transpose()?
            .unwrap_or(false);
        let (fate, how) = if split {
            (
                Fate::Approximated,
                "true: Envoy counts timeouts and resets apart from 5xx answers; resim counts them together",
            )
        } else {
            (
                Fate::Mapped,
                "false: timeouts and resets count as 5xx, as resim counts them",
            )
        };
        o.note(led, "split_external_local_origin_errors", fate, how);
    }
    if enforcing <= 0.0 {
        return Ok(None);
    }
    let consecutive = num("consecutive_5xx", 5.0)?;
    if consecutive == 0.0 {
        // Envoy (outlier_detection_impl.cc, DetectorHostMonitorImpl::
        // putHttpResponseCode) ejects when `++consecutive_5xx_` equals the
        // setting: a count of 1 or more never equals 0, so none is ejected
        o.note(
            led,
            "consecutive_5xx",
            Fate::Mapped,
            "0: Envoy ejects when a host's run of 5xx reaches this count, which a run of one or more never equals: no ejection, so no outlier table is written",
        );
        return Ok(None);
    }
    t.put("consecutive_failures", Val::n(consecutive));
    t.put(
        "interval_ms",
        Val::n(super::sweep_period::interval(o, Syntax::Protobuf)?),
    );
    t.put(
        "base_ejection_ms",
        Val::n(dur("base_ejection_time", 30_000.0)?),
    );
    let pct = ejection_percent(o, num("max_ejection_percent", 10.0)?, led);
    t.put("max_ejection_pct", Val::n(pct));
    // written only when the file gives them: Envoy's defaults are resim's
    if o.has("max_ejection_time") {
        t.put(
            "max_ejection_ms",
            Val::n(dur("max_ejection_time", 300_000.0)?),
        );
    }
    if let Some(a) = o.get("always_eject_one_host") {
        t.put("always_eject_one_host", Val::b(a.bool()?));
    }
    Ok(Some(t))
}

/// `max_ejection_percent` as Envoy reads it: DetectorImpl::ejectHost ejects
/// while the ejected share stays at or under the setting, and a share is
/// never above 100, so a setting above 100 acts as 100.
fn ejection_percent(o: &Read<'_>, pct: f64, led: &mut Ledger) -> f64 {
    if pct > 100.0 {
        o.note(
            led,
            "max_ejection_percent",
            Fate::Mapped,
            "100: Envoy ejects while the ejected share stays at or under this percent, and every share is under a value above 100, as under 100",
        );
    }
    pct.min(100.0)
}

impl Cluster {
    /// The cluster's scenario tables: its server (and its outlier
    /// detection and handler) and its max_requests limiter.
    pub(super) fn tabs(&self, routes: &[String]) -> (Vec<Tab>, Tab) {
        let svc = &self.svc;
        let mut s = Tab::new(format!("services.{svc}"));
        s.notes.push(format!("the cluster `{}`", self.name));
        s.put("routes", Val::strs(routes.iter().map(String::as_str)));
        let one = match self.hosts {
            Hosts::Static(1) => true,
            Hosts::Static(0) => {
                s.set_me(
                    "replicas",
                    Val::n(3.0),
                    "the cluster's hosts: the file lists no endpoint",
                );
                false
            }
            Hosts::Static(n) => {
                s.put_noted("replicas", Val::n(n as f64), "the cluster's endpoints");
                false
            }
            Hosts::StrictDns(n) => {
                s.set_me("replicas", Val::n(n.max(1) as f64), format!("STRICT_DNS: the addresses its {n} endpoint name(s) resolve to at run time, each a host (one each here)"));
                false
            }
            Hosts::LogicalDns => {
                s.set_me("replicas", Val::n(1.0), "LOGICAL_DNS: Envoy sees one logical host, at the first address DNS answers for its name; more replicas here would be balanced by resim, not by Envoy");
                true
            }
            Hosts::Discovered => {
                s.set_me(
                    "replicas",
                    Val::n(3.0),
                    "the cluster's hosts (its endpoints come from discovery)",
                );
                false
            }
        };
        if !one {
            s.put("balancer", self.balancer.clone());
        }
        let lname = format!("{svc}-max-requests");
        let mut l = Tab::new(format!("limiters.{lname}"));
        l.notes.push(format!("cluster `{}`: circuit_breakers max_requests, a cap on requests in flight held by each proxy", self.name));
        l.put("kind", Val::s("concurrency"));
        l.put("algorithm", Val::s("fixed"));
        l.put("limit", Val::n(self.max_requests as f64));
        s.put_noted(
            "middleware",
            Val::strs([lname.as_str()]),
            "the proxy's max_requests, at the cluster's entrance",
        );
        let mut tabs = vec![s];
        if let Some(o) = &self.outlier {
            let mut o = o.clone();
            o.header = format!("services.{svc}.outlier_detection");
            tabs.push(o);
        }
        tabs.push(placeholder_server(
            svc,
            "requests each host handles at once",
            "requests",
            "a host's own time per request",
        ));
        (tabs, l)
    }
}

/// The server of a cluster the routes name and the file does not define:
/// every number of it is a placeholder.
pub(super) fn unknown_cluster(svc: &str, cluster: &str, routes: &[String]) -> Vec<Tab> {
    let mut s = Tab::new(format!("services.{svc}"));
    s.notes.push(format!(
        "the cluster `{cluster}`, which the routes name and the file does not define: its hosts, balancer and limits are unknown"
    ));
    s.put("routes", Val::strs(routes.iter().map(String::as_str)));
    s.set_me(
        "replicas",
        Val::n(1.0),
        format!("the hosts of cluster `{cluster}`, not in this file"),
    );
    vec![
        s,
        placeholder_server(
            svc,
            "requests each host handles at once",
            "requests",
            "a host's own time per request",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::tree::Source;
    use super::*;

    fn src(v: serde_json::Value) -> Source {
        Source::new(std::path::Path::new("c.json"), vec![v], false, 0, "")
    }

    fn outlier_keys(outlier: serde_json::Value) -> Vec<(String, String)> {
        let s = src(serde_json::json!({
            "name": "search",
            "load_assignment": {"endpoints": [{"lb_endpoints": [{"endpoint": {}}, {"endpoint": {}}]}]},
            "outlier_detection": outlier,
        }));
        let mut led = Ledger::default();
        let c = cluster(&s.root(0), "search", &mut led).expect("a cluster");
        let (tabs, _) = c.tabs(&["/search".into()]);
        let o = tabs
            .iter()
            .find(|t| t.header == "services.search.outlier_detection")
            .expect("an outlier table");
        o.items
            .iter()
            .map(|i| (i.key.clone(), i.value.0.clone()))
            .collect()
    }

    /// Envoy's `always_eject_one_host` and `max_ejection_time` go to their
    /// scenario keys when the file gives them, and are not written otherwise
    /// (Envoy's defaults, false and 300 s, are the simulator's).
    #[test]
    fn outlier_ejection_limits_are_written_only_when_given() {
        let given = outlier_keys(serde_json::json!({
            "always_eject_one_host": true,
            "max_ejection_time": "60s",
        }));
        assert!(
            given.contains(&("always_eject_one_host".into(), "true".into())),
            "{given:?}"
        );
        assert!(
            given.contains(&("max_ejection_ms".into(), "60000".into())),
            "{given:?}"
        );
        let absent = outlier_keys(serde_json::json!({"consecutive_5xx": 3}));
        assert!(
            absent
                .iter()
                .all(|(k, _)| k != "always_eject_one_host" && k != "max_ejection_ms"),
            "{absent:?}"
        );
    }
}
