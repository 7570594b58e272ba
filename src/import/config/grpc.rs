//! gRPC service configs (gRFC A6; `grpc.service_config.ServiceConfig` in its
//! JSON form): per-method timeouts, retry and hedging policies, retry
//! throttling and the load-balancing policy.
//!
//! The scenario: one server per gRPC service named in `methodConfig`, a route
//! per method (`/pkg.Service/Method`; `/pkg.Service/*` for a whole service,
//! `/*` for the default config), and a client workload per route that calls it
//! through the method's policy. What a service config does not say (rates,
//! service times, slots) is a placeholder marked `# set me`.
//!
//! The fields and what becomes of each are the tables below ([`TABLES`]).
//! Keys bind as the clients read them: grpc-go's JSON decoding ignores case
//! (its own example writes `"MaxAttempts"`), and protobuf's JSON mapping also
//! takes the snake_case field names (`method_config`).

use super::draft::{
    Draft, Fate, Ledger, Tab, Val, name, placeholder_server, placeholder_workload, unique,
};
use super::duration::{Syntax, ms};
use super::spec::{Binding, Field, Read, Table, Unknown, read};
use super::tree::{Node, Source, relaxed};
use crate::error::Error;
use std::collections::{HashMap, HashSet};

/// How a gRPC client spreads its retry back-off (`resim import
/// --grpc-backoff`): the clients differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Backoff {
    /// gRFC A6 as amended in 2024 (grpc/proposal #452), as grpc-go
    /// (`stream.go`, `csAttempt.shouldRetry`), C-core (`BackOff` with jitter
    /// 0.2) and grpc-java from 1.80 (`RetriableStream.intervalWithJitter`)
    /// wait: min(initialBackoff x backoffMultiplier^(n-1), maxBackoff) x
    /// U(0.8, 1.2).
    #[default]
    A6,
    /// grpc-java before 1.80 (and with `GRPC_EXPERIMENTAL_XDS_RLS_LB=false`):
    /// U(0, min(initialBackoff x backoffMultiplier^(n-1), maxBackoff)), the
    /// rule A6 gave before its amendment.
    FullJitter,
}

const BACKOFF_RULE: &str = "retry n waits min(initialBackoff x backoffMultiplier^(n-1), maxBackoff) x U(0.8, 1.2): `kind = \"exponential\"`, `jitter_factor = 0.2` (gRFC A6 as amended in 2024; grpc-go, C-core, grpc-java 1.80+). With `--grpc-backoff full-jitter`: U(0, min(...)), `kind = \"full_jitter\"` (grpc-java before 1.80)";

static THROTTLE: Table = Table {
    at: "retryThrottling",
    binding: Binding::Relaxed,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "maxTokens",
            "the channel's token bucket size, in (0, 1000]",
            "policies.*.retry.budget.max_tokens",
            "the `grpc_throttle` budget of every retry and hedging policy",
        ),
        Field::maps(
            "tokenRatio",
            "tokens a successful attempt adds",
            "policies.*.retry.budget.token_ratio",
            "kept to three decimals, as gRPC keeps it",
        ),
    ],
};

static RETRY: Table = Table {
    at: "methodConfig[].retryPolicy",
    binding: Binding::Relaxed,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "maxAttempts",
            "attempts in all, the first included (>= 2)",
            "policies.{}.retry.max_attempts",
            "as written; above 5 it is 5, as every gRPC client clamps it",
        ),
        Field::maps(
            "initialBackoff",
            "the first retry's back-off",
            "policies.{}.retry.backoff.base_ms",
            BACKOFF_RULE,
        ),
        Field::maps(
            "maxBackoff",
            "the longest back-off",
            "policies.{}.retry.backoff.cap_ms",
            BACKOFF_RULE,
        ),
        Field::maps(
            "backoffMultiplier",
            "the back-off's growth per retry",
            "policies.{}.retry.backoff.multiplier",
            BACKOFF_RULE,
        ),
        Field::approx(
            "retryableStatusCodes",
            "the status codes that are retried",
            "policies.{}.retry.on",
            "resim's failures carry no status code. `UNAVAILABLE` -> `error`, `shed`, `rejected` (a failing or down server, a shed call, a 429 behind a proxy); `RESOURCE_EXHAUSTED` -> `rejected`; `DEADLINE_EXCEEDED` -> `timeout`; `INTERNAL`, `UNKNOWN`, `ABORTED`, `DATA_LOSS` -> `error`; other codes cannot happen in resim (named in the report). Names (any case) or numbers",
        ),
        Field::approx(
            "perAttemptRecvTimeout",
            "each attempt's timeout, to its first message received",
            "policies.{}.timeout_ms",
            "each attempt's own timeout, to the whole answer (resim's answers are one message)",
        ),
    ],
};

static HEDGE: Table = Table {
    at: "methodConfig[].hedgingPolicy",
    binding: Binding::Relaxed,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "maxAttempts",
            "copies in all, the first included (>= 2)",
            "policies.{}.hedge.max_attempts",
            "as written; above 5 it is 5, as every gRPC client clamps it",
        ),
        Field::maps(
            "hedgingDelay",
            "the wait before each further copy",
            "policies.{}.hedge.delay_ms",
            "another copy every delay while no answer has come; 0 (every copy at once) is 0.001 ms, as resim needs a delay above 0",
        )
        .or("0s", "every copy at once: 0.001 ms"),
        Field::code(
            "nonFatalStatusCodes",
            "the statuses of a copy that send the next copy at once; any other status ends the call",
            "policies.{}.hedge.non_fatal",
            "the codes as `retryableStatusCodes` maps them",
        )
        .or(
            "[]",
            "`non_fatal = []`: every status is fatal, a failed copy ends the call (grpc-java `RetriableStream.makeHedgingDecision`)",
        ),
    ],
};

static METHOD: Table = Table {
    at: "methodConfig[]",
    binding: Binding::Relaxed,
    unknown: Unknown::Refuse,
    fields: &[
        Field::code(
            "name",
            "the methods the config applies to: `{service, method}`, `{service}` or `{}`",
            "services.*.routes",
            "a route per name: `/pkg.Service/Method`, `/pkg.Service/*`, `/*`; a server per gRPC service; a client workload per route",
        ),
        Field::maps(
            "timeout",
            "the call's deadline",
            "workloads.*.timeout_ms",
            "the call's deadline, every attempt included (gRPC's timeout caps the whole call)",
        )
        .or(
            "(none)",
            "no deadline: a call waits for its answer as long as it takes",
        ),
        Field::ignored(
            "waitForReady",
            "wait for a ready channel instead of failing",
            "resim has no connections: a call never waits for a channel to be ready",
        ),
        Field::ignored(
            "maxRequestMessageBytes",
            "the largest request",
            "resim does not model message sizes",
        ),
        Field::ignored(
            "maxResponseMessageBytes",
            "the largest response",
            "resim does not model message sizes",
        ),
        Field::nested("retryPolicy", "retries (never with hedging)", &RETRY),
        Field::nested(
            "hedgingPolicy",
            "hedged copies (never with retries)",
            &HEDGE,
        ),
    ],
};

static TOP: Table = Table {
    at: "(top)",
    binding: Binding::Relaxed,
    unknown: Unknown::Refuse,
    fields: &[
        Field::items(
            "methodConfig",
            "per-method settings: each becomes a policy (`[policies.method-config-N]`) and its methods' routes and workloads",
            &METHOD,
        ),
        Field::nested(
            "retryThrottling",
            "one token bucket per channel shared by retries and hedges",
            &THROTTLE,
        )
        .or(
            "(none)",
            "no throttling: retries are bounded by maxAttempts alone",
        ),
        Field::code(
            "loadBalancingPolicy",
            "the balancer, by name (deprecated form)",
            "services.*.balancer",
            "`round_robin`: `replicas` (to set) and `balancer = \"round_robin\"`; `pick_first`: one instance; ignored when `loadBalancingConfig` is given (gRFC A24)",
        ),
        Field::code(
            "loadBalancingConfig",
            "the balancers in order of preference",
            "services.*.balancer",
            "the first policy of the list gRPC knows: `round_robin`; `pick_first` (one instance); `weighted_round_robin` and `least_request_experimental` approximated as round robin",
        ),
        Field::ignored(
            "healthCheckConfig",
            "client-side health checking",
            "resim has no health checks: an instance is up or down by `[[faults]]`",
        ),
    ],
};

/// The format's field tables, for the docs.
pub static TABLES: [&Table; 1] = [&TOP];

/// gRPC status codes by number (the order of `grpc::StatusCode`).
const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// Does this document look like a gRPC service config?
pub fn looks_like(v: &serde_json::Value) -> bool {
    v.as_object().is_some_and(|m| {
        !m.is_empty()
            && m.keys()
                .all(|k| TOP.fields.iter().any(|f| relaxed(f.name) == relaxed(k)))
    })
}

/// A status code (name or number), upper case.
fn code(node: &Node<'_>) -> Result<&'static str, Error> {
    let found = match node.v {
        serde_json::Value::Number(n) => n.as_u64().and_then(|i| CODES.get(i as usize)).copied(),
        serde_json::Value::String(s) => CODES.iter().find(|c| c.eq_ignore_ascii_case(s)).copied(),
        _ => None,
    };
    found.ok_or_else(|| {
        node.err(format!(
            "not a gRPC status code (a name such as UNAVAILABLE, or a number 0-16){}",
            match node.v.as_str() {
                Some(s) => crate::error::did_you_mean(&s.to_ascii_uppercase(), CODES),
                None => String::new(),
            }
        ))
    })
}

/// The codes of a list of status codes.
fn codes(node: &Node<'_>) -> Result<Vec<&'static str>, Error> {
    node.items()?.iter().map(code).collect()
}

/// The attempt outcomes of resim a set of status codes covers, and the codes
/// that cannot happen in resim.
fn outcomes(codes: &[&str]) -> (Vec<&'static str>, Vec<&'static str>) {
    let mut on = Vec::new();
    let mut none = Vec::new();
    for c in codes {
        let add: &[&str] = match *c {
            // what a client sees when the server is overloaded (503, a shed
            // request), down or failing, or rate limited behind a proxy (429)
            "UNAVAILABLE" => &["error", "shed", "rejected"],
            "RESOURCE_EXHAUSTED" => &["rejected"],
            "DEADLINE_EXCEEDED" => &["timeout"],
            "INTERNAL" | "UNKNOWN" | "ABORTED" | "DATA_LOSS" => &["error"],
            other => {
                none.extend(CODES.iter().find(|x| **x == other));
                &[]
            }
        };
        for a in add {
            if !on.contains(a) {
                on.push(*a);
            }
        }
    }
    // resim's order of outcomes, so that the file reads the same each time
    let order = ["timeout", "error", "shed", "rejected"];
    on.sort_by_key(|o| order.iter().position(|x| x == o));
    (on, none)
}

/// What a list of codes became, for the ledger.
fn codes_how(codes: &[&str], on: &[&str], none: &[&str]) -> String {
    format!(
        "{} -> {}: resim's errors carry no status code; UNAVAILABLE covers a failing or down server, a shed call and a 429 behind a proxy{}",
        if codes.is_empty() {
            "(none)".to_string()
        } else {
            codes.join(", ")
        },
        if on.is_empty() {
            "(none)".to_string()
        } else {
            on.join(", ")
        },
        if none.is_empty() {
            String::new()
        } else {
            format!("; {} cannot happen in resim", none.join(", "))
        }
    )
}

/// One method name entry: the route it becomes and the gRPC service.
fn route(node: &Node<'_>) -> Result<(String, String), Error> {
    let f = node.fields(&["service", "method"], true)?;
    let get = |k: &str| -> Result<String, Error> {
        match f.iter().find(|(n, _)| *n == k) {
            Some((_, n)) => Ok(n.str()?.to_string()),
            None => Ok(String::new()),
        }
    };
    let service = get("service")?;
    let method = get("method")?;
    if service.is_empty() && !method.is_empty() {
        return Err(node.err(
            "a `method` needs its `service` (gRPC refuses a name with a method and no service)",
        ));
    }
    Ok(match (service.is_empty(), method.is_empty()) {
        (true, _) => ("/*".into(), String::new()),
        (false, true) => (format!("/{service}/*"), service),
        (false, false) => (format!("/{service}/{method}"), service),
    })
}

/// The retry throttling of the config: (max tokens, ratio kept).
fn throttle(top: &Read<'_>, led: &mut Ledger) -> Result<Option<(f64, f64)>, Error> {
    let Some(t) = top.nested("retryThrottling", "*", led)? else {
        return Ok(None);
    };
    let (Some(mt), Some(tr)) = (t.get("maxTokens"), t.get("tokenRatio")) else {
        return Err(t
            .node
            .err("needs both `maxTokens` and `tokenRatio` (gRFC A6)"));
    };
    let max_tokens = mt.num()?;
    if !(max_tokens > 0.0 && max_tokens <= 1000.0) {
        return Err(mt.err("must be above 0 and at most 1000 (gRFC A6)"));
    }
    let ratio = tr.num()?;
    if ratio <= 0.0 {
        return Err(tr.err("must be above 0 (gRFC A6)"));
    }
    let milli = milli_ratio(ratio);
    if milli > f64::from(i32::MAX) {
        // gRPC core (src/core/client_channel/retry_service_config.cc,
        // RetryGlobalConfig::JsonPostLoad) reads the whole part as a uint32
        // and casts whole x 1000 + thousandths to an `int`
        // (milli_token_ratio_): past it the ratio wraps to another number
        return Err(tr.err(format!(
            "{} is {} thousandths, beyond the 32-bit whole number gRPC core keeps them in (at most {}): a budget that large never refuses a retry, so leave `retryThrottling` out",
            crate::error::num(ratio),
            crate::error::num(milli),
            i32::MAX
        )));
    }
    let kept = milli / 1000.0;
    if kept <= 0.0 {
        return Err(tr.err(format!(
            "{} keeps no token at gRPC's three decimals (0.000): gRPC refuses it (retry_service_config.cc, RetryGlobalConfig::JsonPostLoad: must be greater than 0); the least is 0.001",
            crate::error::num(ratio)
        )));
    }
    if kept != ratio {
        t.amend(
            led,
            "tokenRatio",
            Fate::Approximated,
            format!("{kept}: gRPC keeps three decimals"),
        );
    }
    Ok(Some((max_tokens, kept)))
}

/// The ratio in thousandths, as gRPC keeps it: its core reads the
/// digits of `tokenRatio` and drops those after the third decimal
/// (retry_service_config.cc, RetryGlobalConfig::JsonPostLoad). The product
/// is taken to its nearest whole first where it is one but for binary
/// rounding (4.35 * 1000 is 4349.999...), as the written digits are.
fn milli_ratio(ratio: f64) -> f64 {
    let scaled = ratio * 1000.0;
    let near = scaled.round();
    if (scaled - near).abs() <= 1e-9 * near.max(1.0) {
        near
    } else {
        scaled.floor()
    }
}

/// The balancer the config names: ("round_robin" | "pick_first" |
/// "approx", its node).
fn balancer<'a>(
    top: &Read<'a>,
    led: &mut Ledger,
) -> Result<Option<(&'static str, Node<'a>)>, Error> {
    let mut chosen: Option<(&'static str, Node<'a>)> = None;
    if let Some(l) = top.get("loadBalancingConfig") {
        for item in l.items()? {
            for (k, v) in item.named()? {
                let kind = match k.as_str() {
                    "round_robin" => Some("round_robin"),
                    "pick_first" => Some("pick_first"),
                    "weighted_round_robin" | "least_request_experimental" => Some("approx"),
                    _ => None,
                };
                match (kind, &chosen) {
                    (Some(kind), None) => chosen = Some((kind, v)),
                    _ => led.note(
                        &v,
                        Fate::Ignored,
                        "",
                        "a later choice of the list (gRPC uses the first it supports)",
                    ),
                }
            }
        }
    }
    if let Some(p) = top.get("loadBalancingPolicy") {
        let s = p.str()?;
        match (&chosen, s.to_ascii_lowercase().as_str()) {
            (None, "round_robin") => chosen = Some(("round_robin", p)),
            (None, "pick_first") => chosen = Some(("pick_first", p)),
            (None, _) => return Err(p.err("gRPC knows `round_robin` and `pick_first` here")),
            (Some(_), _) => led.note(
                &p,
                Fate::Ignored,
                "",
                "loadBalancingConfig is given and takes precedence (gRFC A24)",
            ),
        }
    }
    Ok(chosen)
}

/// What the config's methods became, gathered over its method configs.
#[derive(Default)]
struct Methods {
    /// (scenario name, gRPC service, its routes).
    services: Vec<(String, String, Vec<String>)>,
    /// Where each gRPC service and each scenario name is in `services`.
    at: HashMap<String, usize>,
    named: HashMap<String, usize>,
    workloads: Vec<Tab>,
    /// The workloads' names.
    wnames: HashSet<String>,
    policies: Vec<Tab>,
    routes_seen: HashSet<String>,
}

impl Methods {
    /// The scenario name of gRPC service `service` (`server` for the default
    /// config): two services whose names read alike (`shop_v1.Catalog`,
    /// `shop.v1.Catalog`) stay two servers.
    fn server(&mut self, service: &str) -> String {
        if let Some(&i) = self.at.get(service) {
            return self.services[i].0.clone();
        }
        let base = if service.is_empty() {
            "server".to_string()
        } else {
            name(service)
        };
        let n = unique(&base, |n| self.named.contains_key(n));
        self.at.insert(service.to_string(), self.services.len());
        self.named.insert(n.clone(), self.services.len());
        self.services
            .push((n.clone(), service.to_string(), Vec::new()));
        n
    }
}

/// Builds the scenario of one service config.
pub fn import(
    src: &Source,
    backoff: Backoff,
    draft: &mut Draft,
    led: &mut Ledger,
) -> Result<(), Error> {
    let root = src.root(0);
    let top = read(&root, &TOP, "*", led)?;
    let throttle = throttle(&top, led)?;
    let balancer = balancer(&top, led)?;
    let configs = top.items("methodConfig")?;
    if configs.is_empty() {
        return Err(root.err("no `methodConfig`: nothing to import (a service config with no method config sets no timeout, retry or hedge)"));
    }
    let mut m = Methods::default();
    for (i, mc) in configs.iter().enumerate() {
        let pname = format!("method-config-{}", i + 1);
        let f = top.item("methodConfig", mc, &pname, led)?;
        method(&f, i, throttle, backoff, &mut m, led)?;
    }
    draft.tabs.extend(m.policies);
    for (svc, _, routes) in &m.services {
        let mut s = Tab::new(format!("services.{svc}"));
        s.notes
            .push("the gRPC server: its routes are the methods the service config names".into());
        s.put("routes", Val::strs(routes.iter().map(String::as_str)));
        server_balancer(&mut s, svc, balancer.as_ref(), led);
        draft.tabs.push(s);
        draft.tabs.push(placeholder_server(
            svc,
            "calls the server handles at once",
            "calls",
            "the server's own time per call",
        ));
    }
    draft.tabs.extend(m.workloads);
    Ok(())
}

/// The service's `replicas` and `balancer` from the config's balancer.
fn server_balancer(
    s: &mut Tab,
    svc: &str,
    balancer: Option<&(&'static str, Node<'_>)>,
    led: &mut Ledger,
) {
    match balancer {
        Some(("pick_first", n)) => led.renote(
            n,
            Fate::Mapped,
            "",
            "one instance: pick_first sends every call to the first address",
        ),
        Some((kind, n)) => {
            s.set_me(
                "replicas",
                Val::n(3.0),
                "instances behind the channel; the service config does not say",
            );
            s.put("balancer", Val::s("round_robin"));
            let key = format!("services.{svc}.balancer");
            if *kind == "round_robin" {
                led.renote(n, Fate::Mapped, key, "round_robin over the replicas");
            } else {
                led.renote(
                    n,
                    Fate::Approximated,
                    key,
                    "round_robin: resim has no weights learnt from server load reports",
                );
            }
        }
        None => {}
    }
}

/// One method config: its routes, its policy and a workload per route.
fn method(
    f: &Read<'_>,
    i: usize,
    throttle: Option<(f64, f64)>,
    backoff: Backoff,
    m: &mut Methods,
    led: &mut Ledger,
) -> Result<(), Error> {
    let pname = format!("method-config-{}", i + 1);
    let mc = &f.node;
    let names = f.need("name", "the methods it applies to: gRFC A6")?;
    let mut routes = Vec::new();
    for n in names.items()? {
        let (r, service) = route(&n)?;
        if m.routes_seen.contains(&r) {
            return Err(n.err(format!(
                "names {r} again: gRPC refuses a service config that names a method twice"
            )));
        }
        m.routes_seen.insert(r.clone());
        let svc = m.server(&service);
        if let Some((_, _, rs)) = m.named.get(&svc).map(|&i| &mut m.services[i]) {
            rs.push(r.clone());
        }
        led.note(
            &n,
            Fate::Mapped,
            format!("services.{svc}.routes"),
            format!("route {r}"),
        );
        routes.push(r);
    }
    if routes.is_empty() {
        return Err(names.err("is empty: a method config applies to the methods it names"));
    }
    let mut pol = Tab::new(format!("policies.{pname}"));
    pol.notes
        .push(format!("methodConfig[{i}]: {}", routes.join(", ")));
    let timeout = match f.get("timeout") {
        Some(t) => {
            let v = ms(&t, Syntax::Protobuf)?;
            if v <= 0.0 {
                return Err(t.err("must be above 0"));
            }
            Some(v)
        }
        None => None,
    };
    if f.has("retryPolicy") && f.has("hedgingPolicy") {
        return Err(
            mc.err("has both `retryPolicy` and `hedgingPolicy`: gRPC refuses that (gRFC A6)")
        );
    }
    if let Some(r) = f.nested("retryPolicy", &pname, led)? {
        retry(&r, &mut pol, throttle, backoff, led)?;
    }
    if let Some(h) = f.nested("hedgingPolicy", &pname, led)? {
        hedge(&h, &mut pol, throttle, led)?;
    }
    let has_policy = !pol.items.is_empty();
    if has_policy {
        m.policies.push(pol);
    }
    for r in &routes {
        let base = match name(r.trim_start_matches('/')).as_str() {
            "" | "default" | "all" => "every-method".to_string(),
            w => w.to_string(),
        };
        let wname = unique(&base, |n| m.wnames.contains(n));
        m.wnames.insert(wname.clone());
        let mut w = placeholder_workload(
            &wname,
            r,
            "calls per second to this method; the service config does not say",
            "how long the clients send",
        );
        if let Some(t) = timeout {
            w.put_noted("timeout_ms", Val::n(t), "methodConfig timeout");
        }
        if has_policy {
            w.put("call_policy", Val::s(&pname));
        }
        m.workloads.push(w);
    }
    Ok(())
}

/// `maxAttempts` of a retry or hedging policy: >= 2, clamped to 5.
fn clamp_attempts(f: &Read<'_>, what: &str, led: &mut Ledger) -> Result<u64, Error> {
    let n = f.need("maxAttempts", "gRFC A6")?;
    let v = n.whole()?;
    if v < 2 {
        return Err(n.err(format!(
            "must be at least 2 ({what}: gRFC A6 refuses a smaller one)"
        )));
    }
    if v > 5 {
        f.amend(
            led,
            "maxAttempts",
            Fate::Approximated,
            "5: gRPC clamps maxAttempts to 5",
        );
        return Ok(5);
    }
    Ok(v)
}

/// The throttle as a budget table.
fn budget((max_tokens, ratio): (f64, f64)) -> Val {
    Val::table(&[
        ("kind", Val::s("grpc_throttle")),
        ("max_tokens", Val::n(max_tokens)),
        ("token_ratio", Val::n(ratio)),
    ])
}

const PER_CHANNEL: &str = "retryThrottling is per channel in gRPC; here each (client, policy, target) keeps its own tokens";

fn retry(
    f: &Read<'_>,
    pol: &mut Tab,
    throttle: Option<(f64, f64)>,
    rule: Backoff,
    led: &mut Ledger,
) -> Result<(), Error> {
    let attempts = clamp_attempts(f, "a first try and a retry", led)?;
    let positive = |k: &str| -> Result<f64, Error> {
        let n = f.need(k, "gRFC A6")?;
        let v = if k == "backoffMultiplier" {
            n.num()?
        } else {
            ms(&n, Syntax::Protobuf)?
        };
        if v <= 0.0 {
            return Err(n.err("must be above 0 (gRFC A6)"));
        }
        Ok(v)
    };
    let (initial, max, mult) = (
        positive("initialBackoff")?,
        positive("maxBackoff")?,
        positive("backoffMultiplier")?,
    );
    if max < initial {
        f.amend(
            led,
            "initialBackoff",
            Fate::Approximated,
            format!("{max}: maxBackoff is below it, and caps every wait"),
        );
    }
    let mut backoff = match rule {
        Backoff::A6 => vec![("kind", Val::s("exponential"))],
        Backoff::FullJitter => vec![("kind", Val::s("full_jitter"))],
    };
    backoff.push(("base_ms", Val::n(initial.min(max))));
    backoff.push(("cap_ms", Val::n(max)));
    if mult != 2.0 {
        backoff.push(("multiplier", Val::n(mult)));
    }
    if rule == Backoff::A6 {
        backoff.push(("jitter_factor", Val::n(0.2)));
    }
    let codes_node = f.need("retryableStatusCodes", "gRFC A6")?;
    let codes = codes(&codes_node)?;
    if codes.is_empty() {
        return Err(codes_node.err("must name at least one status code (gRFC A6)"));
    }
    let (on, none) = outcomes(&codes);
    if on.is_empty() {
        return Err(codes_node.err(format!(
            "none of {} is an outcome resim can give a call (timeout, error, shed, rejected): no retry would ever happen",
            codes.join(", ")
        )));
    }
    f.amend(
        led,
        "retryableStatusCodes",
        Fate::Approximated,
        codes_how(&codes, &on, &none),
    );
    let mut items = vec![
        ("max_attempts", Val::n(attempts as f64)),
        ("on", Val::strs(on.iter().copied())),
        ("backoff", Val::table(&backoff)),
    ];
    if let Some(t) = throttle {
        items.push(("budget", budget(t)));
        pol.notes.push(PER_CHANNEL.into());
    }
    if let Some(p) = f.get("perAttemptRecvTimeout") {
        let v = ms(&p, Syntax::Protobuf)?;
        if v <= 0.0 {
            return Err(p.err("must be above 0"));
        }
        pol.put_noted("timeout_ms", Val::n(v), "perAttemptRecvTimeout");
    }
    pol.put("retry", Val::table(&items));
    Ok(())
}

fn hedge(
    f: &Read<'_>,
    pol: &mut Tab,
    throttle: Option<(f64, f64)>,
    led: &mut Ledger,
) -> Result<(), Error> {
    let attempts = clamp_attempts(f, "a first copy and a hedge", led)?;
    let delay = match f.get("hedgingDelay") {
        Some(d) => {
            let v = ms(&d, Syntax::Protobuf)?;
            if v <= 0.0 {
                f.amend(
                    led,
                    "hedgingDelay",
                    Fate::Approximated,
                    "0.001 ms: gRPC sends every copy at once, resim needs a delay above 0",
                );
            }
            v.max(0.001)
        }
        None => 0.001,
    };
    let non_fatal = match f.get("nonFatalStatusCodes") {
        Some(c) => {
            let codes = codes(&c)?;
            let (on, none) = outcomes(&codes);
            f.note(
                led,
                "nonFatalStatusCodes",
                Fate::Approximated,
                codes_how(&codes, &on, &none),
            );
            on
        }
        None => Vec::new(),
    };
    let mut items = vec![
        ("delay_ms", Val::n(delay)),
        ("max_attempts", Val::n(attempts as f64)),
        ("cancel_losers", Val::b(true)),
        ("non_fatal", Val::strs(non_fatal.iter().copied())),
    ];
    if let Some(t) = throttle {
        items.push(("budget", budget(t)));
        pol.notes.push(PER_CHANNEL.into());
    }
    pol.put("hedge", Val::table(&items));
    Ok(())
}
