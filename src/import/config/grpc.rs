//! gRPC service configs (gRFC A6; `grpc.service_config.ServiceConfig` in its
//! JSON form): per-method timeouts, retry and hedging policies, retry
//! throttling and the load-balancing policy.
//!
//! The scenario: one server per gRPC service named in `methodConfig`, a route
//! per method (`/pkg.Service/Method`; `/pkg.Service/*` for a whole service,
//! `/*` for the default config), and a client workload per route that calls it
//! through the method's policy. What a service config does not say (rates,
//! service times, slots) is a placeholder marked `# set me`.

use super::draft::{Draft, Fate, Ledger, Tab, Val, name, placeholder_workload};
use super::duration::{Syntax, ms};
use super::tree::{Node, Source};
use crate::error::Error;

const TOP: [&str; 5] = [
    "methodConfig",
    "retryThrottling",
    "loadBalancingPolicy",
    "loadBalancingConfig",
    "healthCheckConfig",
];
const METHOD: [&str; 7] = [
    "name",
    "waitForReady",
    "timeout",
    "maxRequestMessageBytes",
    "maxResponseMessageBytes",
    "retryPolicy",
    "hedgingPolicy",
];
const RETRY: [&str; 6] = [
    "maxAttempts",
    "initialBackoff",
    "maxBackoff",
    "backoffMultiplier",
    "retryableStatusCodes",
    "perAttemptRecvTimeout",
];
const HEDGE: [&str; 3] = ["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"];

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
            && m.keys().all(|k| {
                TOP.iter()
                    .any(|t| super::tree::relaxed(t) == super::tree::relaxed(k))
            })
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

/// The attempt outcomes of resim a set of status codes covers, and what the
/// mapping left out.
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
                none.push(match CODES.iter().find(|x| **x == other) {
                    Some(x) => *x,
                    None => "?",
                });
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

/// Builds the scenario of one service config.
pub fn import(src: &Source, draft: &mut Draft, led: &mut Ledger) -> Result<(), Error> {
    let root = src.root(0);
    let top = root.fields(&TOP, true)?;
    let get = |k: &str| top.iter().find(|(n, _)| *n == k).map(|(_, n)| n.clone());

    // retryThrottling: one budget shared by the channel's retries and hedges
    let mut throttle = None;
    if let Some(t) = get("retryThrottling") {
        let f = t.fields(&["maxTokens", "tokenRatio"], true)?;
        let field = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, n)| n.clone());
        let (Some(mt), Some(tr)) = (field("maxTokens"), field("tokenRatio")) else {
            return Err(t.err("needs both `maxTokens` and `tokenRatio` (gRFC A6)"));
        };
        let max_tokens = mt.num()?;
        if !(max_tokens > 0.0 && max_tokens <= 1000.0) {
            return Err(mt.err("must be above 0 and at most 1000 (gRFC A6)"));
        }
        let ratio = tr.num()?;
        if ratio <= 0.0 {
            return Err(tr.err("must be above 0 (gRFC A6)"));
        }
        // gRPC keeps three decimals of the ratio
        let kept = (ratio * 1000.0).trunc() / 1000.0;
        led.note(
            &mt,
            Fate::Mapped,
            "policies.*.retry.budget.max_tokens",
            "the grpc_throttle budget of every retry policy",
        );
        if kept == ratio {
            led.note(
                &tr,
                Fate::Mapped,
                "policies.*.retry.budget.token_ratio",
                "as written",
            );
        } else {
            led.note(
                &tr,
                Fate::Approximated,
                "policies.*.retry.budget.token_ratio",
                format!("{kept}: gRPC keeps three decimals"),
            );
        }
        throttle = Some((max_tokens, kept));
    } else {
        led.absent(
            &root,
            "retryThrottling",
            "(none)",
            "",
            "no throttling: retries are bounded by maxAttempts alone",
        );
    }

    // the load-balancing policy: of the list, the first one gRPC knows
    let mut balancer: Option<(&str, Node<'_>)> = None;
    if let Some(l) = get("loadBalancingConfig") {
        for item in l.items()? {
            for (k, v) in item.named()? {
                let kind = match k.as_str() {
                    "round_robin" => Some("round_robin"),
                    "pick_first" => Some("pick_first"),
                    "weighted_round_robin" | "least_request_experimental" => Some("approx"),
                    _ => None,
                };
                match (kind, &balancer) {
                    (Some(kind), None) => balancer = Some((kind, v)),
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
    if let Some(p) = get("loadBalancingPolicy") {
        let s = p.str()?;
        match (&balancer, s.to_ascii_lowercase().as_str()) {
            (None, "round_robin") => balancer = Some(("round_robin", p)),
            (None, "pick_first") => balancer = Some(("pick_first", p)),
            (None, _) => return Err(p.err("gRPC knows `round_robin` and `pick_first` here")),
            (Some(_), _) => led.note(
                &p,
                Fate::Ignored,
                "",
                "loadBalancingConfig is given and takes precedence (gRFC A24)",
            ),
        }
    }
    if let Some(h) = get("healthCheckConfig") {
        led.note(
            &h,
            Fate::Ignored,
            "",
            "resim has no health checks: an instance is up or down by `[[faults]]`",
        );
    }

    // methods: a route each, grouped by gRPC service
    let mut services: Vec<(String, Vec<String>)> = Vec::new();
    let mut workloads: Vec<Tab> = Vec::new();
    let mut policies: Vec<Tab> = Vec::new();
    let configs = match get("methodConfig") {
        Some(m) => m.items()?,
        None => Vec::new(),
    };
    if configs.is_empty() {
        return Err(root.err("no `methodConfig`: nothing to import (a service config with no method config sets no timeout, retry or hedge)"));
    }
    let mut routes_seen: Vec<String> = Vec::new();
    for (i, mc) in configs.iter().enumerate() {
        let f = mc.fields(&METHOD, true)?;
        let field = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, n)| n.clone());
        let Some(names) = field("name") else {
            return Err(mc.err("needs `name`: the methods it applies to (gRFC A6)"));
        };
        let mut routes = Vec::new();
        for n in names.items()? {
            let (r, service) = route(&n)?;
            if routes_seen.contains(&r) {
                return Err(n.err(format!(
                    "names {r} again: gRPC refuses a service config that names a method twice"
                )));
            }
            routes_seen.push(r.clone());
            let svc = if service.is_empty() {
                "server".to_string()
            } else {
                name(&service)
            };
            match services.iter_mut().find(|(s, _)| *s == svc) {
                Some((_, rs)) => rs.push(r.clone()),
                None => services.push((svc.clone(), vec![r.clone()])),
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
        let pname = format!("method-config-{}", i + 1);
        let mut pol = Tab::new(format!("policies.{pname}"));
        pol.notes
            .push(format!("methodConfig[{i}]: {}", routes.join(", ")));
        let mut has_policy = false;
        let timeout = match field("timeout") {
            Some(t) => {
                let v = ms(&t, Syntax::Protobuf)?;
                if v <= 0.0 {
                    return Err(t.err("must be above 0"));
                }
                led.note(&t, Fate::Mapped, "workloads.*.timeout_ms", "the call's deadline, every attempt included (gRPC's timeout caps the whole call)");
                Some(v)
            }
            None => {
                led.absent(
                    mc,
                    "timeout",
                    "(none)",
                    "",
                    "no deadline: a call waits for its answer as long as it takes",
                );
                None
            }
        };
        for k in [
            "waitForReady",
            "maxRequestMessageBytes",
            "maxResponseMessageBytes",
        ] {
            if let Some(n) = field(k) {
                let why = if k == "waitForReady" {
                    "resim has no connections: a call never waits for a channel to be ready"
                } else {
                    "resim does not model message sizes"
                };
                led.note(&n, Fate::Ignored, "", why);
            }
        }
        if field("retryPolicy").is_some() && field("hedgingPolicy").is_some() {
            return Err(
                mc.err("has both `retryPolicy` and `hedgingPolicy`: gRPC refuses that (gRFC A6)")
            );
        }
        if let Some(r) = field("retryPolicy") {
            has_policy = true;
            retry(&r, &pname, &mut pol, throttle, led)?;
        }
        if let Some(h) = field("hedgingPolicy") {
            has_policy = true;
            hedge(&h, &pname, &mut pol, throttle, led)?;
        }
        if has_policy {
            policies.push(pol);
        }
        for r in &routes {
            let wname = name(r.trim_start_matches('/'));
            let wname = if wname.is_empty() || wname == "default" {
                "all".to_string()
            } else {
                wname
            };
            let wname = if wname == "all" {
                "every-method".to_string()
            } else {
                wname
            };
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
            workloads.push(w);
        }
    }

    draft.tabs.extend(policies);
    for (svc, routes) in &services {
        let mut s = Tab::new(format!("services.{svc}"));
        s.notes
            .push("the gRPC server: its routes are the methods the service config names".into());
        s.put("routes", Val::strs(routes.iter().map(String::as_str)));
        match &balancer {
            Some(("pick_first", n)) => {
                led.note(
                    n,
                    Fate::Mapped,
                    "",
                    "one instance: pick_first sends every call to the first address",
                );
            }
            Some((kind, n)) => {
                s.set_me(
                    "replicas",
                    Val::n(3.0),
                    "instances behind the channel; the service config does not say",
                );
                s.put("balancer", Val::s("round_robin"));
                if *kind == "round_robin" {
                    led.note(
                        n,
                        Fate::Mapped,
                        format!("services.{svc}.balancer"),
                        "round_robin over the replicas",
                    );
                } else {
                    led.note(
                        n,
                        Fate::Approximated,
                        format!("services.{svc}.balancer"),
                        "round_robin: resim has no weights learnt from server load reports",
                    );
                }
            }
            None => {}
        }
        draft.tabs.push(s);
        let mut h = Tab::new(format!("services.{svc}.handler"));
        h.put("type", Val::s("server"));
        h.set_me("slots", Val::n(8.0), "calls the server handles at once");
        h.set_me(
            "queue",
            Val::n(64.0),
            "calls waiting beyond the slots; more are shed (UNAVAILABLE)",
        );
        h.set_me(
            "service",
            Val::table(&[(
                "lognormal",
                Val::table(&[("p50_ms", Val::n(20.0)), ("p99_ms", Val::n(100.0))]),
            )]),
            "the server's own time per call",
        );
        draft.tabs.push(h);
    }
    draft.tabs.extend(workloads);
    Ok(())
}

fn clamp_attempts(n: &Node<'_>, what: &str, key: String, led: &mut Ledger) -> Result<u64, Error> {
    let v = n.whole()?;
    if v < 2 {
        return Err(n.err(format!(
            "must be at least 2 ({what}: gRFC A6 refuses a smaller one)"
        )));
    }
    if v > 5 {
        led.note(
            n,
            Fate::Approximated,
            key,
            "5: gRPC clamps maxAttempts to 5",
        );
        Ok(5)
    } else {
        led.note(n, Fate::Mapped, key, "attempts in all, the first included");
        Ok(v)
    }
}

fn retry(
    r: &Node<'_>,
    pname: &str,
    pol: &mut Tab,
    throttle: Option<(f64, f64)>,
    led: &mut Ledger,
) -> Result<(), Error> {
    let f = r.fields(&RETRY, true)?;
    let field = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, n)| n.clone());
    let need = |k: &str| field(k).ok_or_else(|| r.err(format!("needs `{k}` (gRFC A6)")));
    let at = |k: &str| format!("policies.{pname}.retry.{k}");
    let attempts = clamp_attempts(
        &need("maxAttempts")?,
        "a first try and a retry",
        at("max_attempts"),
        led,
    )?;
    let ib = need("initialBackoff")?;
    let initial = ms(&ib, Syntax::Protobuf)?;
    let mb = need("maxBackoff")?;
    let max = ms(&mb, Syntax::Protobuf)?;
    let bm = need("backoffMultiplier")?;
    let mult = bm.num()?;
    if initial <= 0.0 {
        return Err(ib.err("must be above 0 (gRFC A6)"));
    }
    if max <= 0.0 {
        return Err(mb.err("must be above 0 (gRFC A6)"));
    }
    if mult <= 0.0 {
        return Err(bm.err("must be above 0 (gRFC A6)"));
    }
    // gRPC: retry n waits U(0, min(initial x multiplier^(n-1), max))
    let (base, cap) = if max < initial {
        (max, max)
    } else {
        (initial, max)
    };
    let rule = "full_jitter: U(0, min(base x multiplier^(n-1), cap)), gRPC's rule";
    if max < initial {
        led.note(
            &ib,
            Fate::Approximated,
            at("backoff.base_ms"),
            format!("{}: maxBackoff is below it, and caps every wait", max),
        );
    } else {
        led.note(&ib, Fate::Mapped, at("backoff.base_ms"), rule);
    }
    led.note(&mb, Fate::Mapped, at("backoff.cap_ms"), rule);
    let mut backoff = vec![
        ("kind", Val::s("full_jitter")),
        ("base_ms", Val::n(base)),
        ("cap_ms", Val::n(cap)),
    ];
    if mult == 2.0 {
        led.note(
            &bm,
            Fate::Mapped,
            at("backoff.multiplier"),
            "2, resim's default",
        );
    } else {
        backoff.push(("multiplier", Val::n(mult)));
        led.note(&bm, Fate::Mapped, at("backoff.multiplier"), rule);
    }
    let codes_node = need("retryableStatusCodes")?;
    let mut codes = Vec::new();
    for c in codes_node.items()? {
        codes.push(code(&c)?);
    }
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
    let how = format!(
        "{} -> {}: resim's errors carry no status code; UNAVAILABLE covers a failing or down server, a shed call and a 429 behind a proxy{}",
        codes.join(", "),
        on.join(", "),
        if none.is_empty() {
            String::new()
        } else {
            format!("; {} cannot happen in resim", none.join(", "))
        }
    );
    led.note(&codes_node, Fate::Approximated, at("on"), how);
    let mut items = vec![
        ("max_attempts", Val::n(attempts as f64)),
        ("on", Val::strs(on.iter().copied())),
        ("backoff", Val::table(&backoff)),
    ];
    if let Some((max_tokens, ratio)) = throttle {
        items.push((
            "budget",
            Val::table(&[
                ("kind", Val::s("grpc_throttle")),
                ("max_tokens", Val::n(max_tokens)),
                ("token_ratio", Val::n(ratio)),
            ]),
        ));
    }
    if let Some(p) = field("perAttemptRecvTimeout") {
        let v = ms(&p, Syntax::Protobuf)?;
        if v <= 0.0 {
            return Err(p.err("must be above 0"));
        }
        pol.put_noted("timeout_ms", Val::n(v), "perAttemptRecvTimeout");
        led.note(&p, Fate::Approximated, format!("policies.{pname}.timeout_ms"), "each attempt's own timeout, to the whole answer (gRPC measures to the first message received)");
    }
    pol.put("retry", Val::table(&items));
    if throttle.is_some() {
        pol.notes.push("retryThrottling is per channel in gRPC; here each (client, policy, target) keeps its own tokens".into());
    }
    Ok(())
}

fn hedge(
    h: &Node<'_>,
    pname: &str,
    pol: &mut Tab,
    throttle: Option<(f64, f64)>,
    led: &mut Ledger,
) -> Result<(), Error> {
    let f = h.fields(&HEDGE, true)?;
    let field = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, n)| n.clone());
    let at = |k: &str| format!("policies.{pname}.hedge.{k}");
    let n = field("maxAttempts").ok_or_else(|| h.err("needs `maxAttempts` (gRFC A6)"))?;
    let attempts = clamp_attempts(&n, "a first copy and a hedge", at("max_attempts"), led)?;
    let delay = match field("hedgingDelay") {
        Some(d) => {
            let v = ms(&d, Syntax::Protobuf)?;
            if v > 0.0 {
                led.note(
                    &d,
                    Fate::Mapped,
                    at("delay_ms"),
                    "another copy every delay while no answer has come",
                );
                v
            } else {
                led.note(
                    &d,
                    Fate::Approximated,
                    at("delay_ms"),
                    "0.001 ms: gRPC sends every copy at once, resim needs a delay above 0",
                );
                0.001
            }
        }
        None => {
            led.absent(
                h,
                "hedgingDelay",
                "0s",
                at("delay_ms"),
                "0.001 ms: gRPC's default 0 sends every copy at once, resim needs a delay above 0",
            );
            0.001
        }
    };
    match field("nonFatalStatusCodes") {
        Some(c) => {
            let mut codes = Vec::new();
            for x in c.items()? {
                codes.push(code(&x)?);
            }
            led.note(&c, Fate::Approximated, "", "resim sends the next copy after any failed copy: every failure is non-fatal");
        }
        None => led.absent(h, "nonFatalStatusCodes", "[]", "", "approximated: in gRPC every status is then fatal (a failed copy ends the call); resim sends the next copy after any failed copy"),
    }
    let mut items = vec![
        ("delay_ms", Val::n(delay)),
        ("max_attempts", Val::n(attempts as f64)),
        ("cancel_losers", Val::b(true)),
    ];
    if let Some((max_tokens, ratio)) = throttle {
        items.push((
            "budget",
            Val::table(&[
                ("kind", Val::s("grpc_throttle")),
                ("max_tokens", Val::n(max_tokens)),
                ("token_ratio", Val::n(ratio)),
            ]),
        ));
        pol.notes.push("retryThrottling is per channel in gRPC; here each (client, policy, target) keeps its own tokens".into());
    }
    pol.put("hedge", Val::table(&items));
    Ok(())
}
