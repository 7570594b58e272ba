//! resilience4j's Spring Boot configuration (`resilience4j.<module>.configs`
//! and `.instances`, in YAML, JSON or a `.properties` file): retry, circuit
//! breaker, time limiter, rate limiter and bulkhead instances, per backend.
//!
//! The scenario: a backend (an instance name) is a server with a route of its
//! own, and a client workload calls it through one policy that combines the
//! backend's retry, circuit breaker and time limiter, in Spring's aspect
//! order (by default Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(
//! call)))))); a rate limiter and a bulkhead become limiters at the backend's
//! entrance. What the file does not say (rates, service times, slots) is a
//! placeholder marked `# set me`.
//!
//! Keys are bound as Spring Boot binds them: relaxed (`max-attempts` is
//! `maxAttempts`), dotted keys as paths ([`crate::import::config::spring`]),
//! unknown keys ignored with a warning. An instance inherits its
//! `baseConfig` (a config may name its own), or the config named `default`,
//! as resilience4j-framework-common's `Common*ConfigurationProperties`
//! resolve them ([`chain`]). The fields and what becomes of each are the
//! tables in [`tables`].

mod exceptions;
mod limits;
mod policy;
pub mod tables;

use super::draft::{
    Draft, Fate, Ledger, Tab, Val, name, placeholder_server, placeholder_workload, unique,
};
use super::spec::{Read, Table, read, read_chain};
use super::tree::{Node, Source, relaxed};
use crate::error::Error;
pub use tables::TABLES;

/// The format's field tables and the exceptions each outcome stands for,
/// as the docs show them.
pub fn docs() -> String {
    let mut out: String = TABLES.iter().map(|t| t.markdown()).collect();
    out.push_str(&format!(
        "The exceptions each outcome stands for (`retryExceptions`, `ignoreExceptions`; a class covers its subclasses, as the classes above them in Java do; Spring's classes without their packages `org.springframework.web.client` and `org.springframework.web.reactive.function.client`): {}.\n",
        exceptions::table()
    ));
    out
}

/// Whether Spring's dotted keys under a top-level key that starts with
/// `first` are read as paths: those of resilience4j.
pub fn wanted(first: &str) -> bool {
    relaxed(first) == "resilience4j"
}

/// Does this document look like a resilience4j configuration?
pub fn looks_like(v: &serde_json::Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.keys()
            .any(|k| wanted(k.split(['.', '[']).next().unwrap_or("")))
    })
}

/// A resilience4j module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `retry`.
    Retry,
    /// `circuitbreaker`.
    Breaker,
    /// `timelimiter`.
    Time,
    /// `ratelimiter`.
    Limiter,
    /// `bulkhead`.
    Bulkhead,
}

/// The modules: their key, kind, instance table, the older name of their
/// `instances`, their aspect order's key and its default (Spring's
/// `Ordered.LOWEST_PRECEDENCE` less 5 ... 1: RetryConfigurationProperties
/// and the others in resilience4j-spring6).
const MODULES: [(&str, Kind, &Table, &str, &str, i64); 5] = [
    (
        "retry",
        Kind::Retry,
        &tables::RETRY,
        "backends",
        "retryAspectOrder",
        5,
    ),
    (
        "circuitbreaker",
        Kind::Breaker,
        &tables::BREAKER,
        "backends",
        "circuitBreakerAspectOrder",
        4,
    ),
    (
        "ratelimiter",
        Kind::Limiter,
        &tables::LIMITER,
        "limiters",
        "rateLimiterAspectOrder",
        3,
    ),
    (
        "timelimiter",
        Kind::Time,
        &tables::TIME,
        "",
        "timeLimiterAspectOrder",
        2,
    ),
    (
        "bulkhead",
        Kind::Bulkhead,
        &tables::BULKHEAD,
        "backends",
        "bulkheadAspectOrder",
        1,
    ),
];

/// One module of the file.
struct Module<'a> {
    kind: Kind,
    table: &'static Table,
    instances: Vec<(String, Node<'a>)>,
    configs: Vec<(String, Node<'a>)>,
    /// The configs some instance inherits.
    used: Vec<String>,
    /// Its aspect order (lower runs outside).
    order: i64,
}

/// A map key as a name: `[a.b]` (a key holding dots) is `a.b`.
fn key_name(k: &str) -> &str {
    k.strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(k)
}

/// The document to read: the first with resilience4j keys and no profile
/// (Spring applies a profile document only when its profile is active); the
/// others are noted, each with why.
fn document(src: &Source, led: &mut Ledger) -> usize {
    let has = |d: &serde_json::Value| looks_like(d);
    let chosen = (0..src.docs.len())
        .find(|&i| has(&src.docs[i]) && profile(&src.docs[i]).is_none())
        .or_else(|| (0..src.docs.len()).find(|&i| has(&src.docs[i])))
        .unwrap_or(0);
    for i in (0..src.docs.len()).filter(|&i| i != chosen) {
        let n = src.root(i);
        match profile(&src.docs[i]) {
            Some(p) => led.note(
                &n,
                Fate::Ignored,
                "",
                format!("a profile document: Spring applies it only with profile `{p}` active; import a file holding it alone to see it"),
            ),
            None if has(&src.docs[i]) => {
                led.note(
                    &n,
                    Fate::Ignored,
                    "",
                    format!("a further document: Spring applies it over document {}; the import reads one", chosen + 1),
                );
                led.warn_last();
            }
            None => led.note(&n, Fate::Ignored, "", "no resilience4j keys in it"),
        }
    }
    chosen
}

/// The profile a document applies under: `spring.config.activate.on-profile`
/// (or the older `spring.profiles`), nested or dotted.
fn profile(doc: &serde_json::Value) -> Option<String> {
    for name in [
        ["spring", "config", "activate", "on-profile"].as_slice(),
        ["spring", "profiles"].as_slice(),
    ] {
        if let Some(v) = property(doc, name) {
            return Some(match v {
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            });
        }
    }
    None
}

/// The value of a property in a tree whose keys may be dotted.
fn property<'v>(v: &'v serde_json::Value, name: &[&str]) -> Option<&'v serde_json::Value> {
    if name.is_empty() {
        return Some(v);
    }
    let m = v.as_object()?;
    m.iter().find_map(|(k, x)| {
        let parts: Vec<&str> = k.split('.').collect();
        let n = parts.len();
        (n <= name.len()
            && parts
                .iter()
                .zip(name)
                .all(|(a, b)| relaxed(a) == relaxed(b)))
        .then(|| property(x, &name[n..]))
        .flatten()
    })
}

/// Builds the scenario of one resilience4j configuration.
pub fn import(src: &Source, draft: &mut Draft, led: &mut Ledger) -> Result<(), Error> {
    let root = src.root(document(src, led));
    let mut r4j = None;
    for (k, v) in root.named()? {
        if wanted(&k) && r4j.is_some() {
            return Err(v.err(
                "is a second `resilience4j` key (Spring binds both spellings into one): write it once",
            ));
        } else if wanted(&k) {
            r4j = Some(v);
        } else {
            led.note(
                &v,
                Fate::Ignored,
                "",
                "not under `resilience4j`: another part of the application's configuration",
            );
        }
    }
    let r4j = r4j.ok_or_else(|| root.err("no `resilience4j` key"))?;
    let top = read(&r4j, &tables::TOP, "*", led)?;
    let mut modules = Vec::new();
    for (key, kind, table, old, order_key, below) in MODULES {
        let Some(m) = top.nested(key, "*", led)? else {
            continue;
        };
        modules.push(module(&m, kind, table, old, order_key, below)?);
    }
    let backends = backends(&modules);
    if backends.is_empty() {
        return Err(r4j.err(
            "no `instances`: nothing to import (configs apply to the instances that use them)",
        ));
    }
    let order = Order::of(&modules);
    note_orders(&top, &order, led)?;
    let mut out = Built::default();
    let mut names: Vec<String> = Vec::new();
    for b in &backends {
        // one name per backend: `shop.v1` and `shop_v1` read alike, and a
        // backend's limiters are NAME and NAME-bulkhead, so `a-bulkhead`
        // stays apart from `a`'s bulkhead
        let bn = unique(&name(b), |n| {
            names
                .iter()
                .any(|o| o == n || format!("{o}-bulkhead") == n || format!("{n}-bulkhead") == *o)
        });
        names.push(bn.clone());
        backend(b, &bn, &mut modules, &order, &mut out, led)?;
    }
    for m in &modules {
        for (cn, c) in &m.configs {
            if !m.used.contains(cn) {
                led.note(c, Fate::Ignored, "", "a config no instance inherits");
            }
        }
    }
    draft.tabs.extend(out.policies);
    draft.tabs.extend(out.limiters);
    draft.tabs.extend(out.services);
    draft.tabs.extend(out.workloads);
    Ok(())
}

/// A module's instances (with those under its older name) and configs.
fn module<'a>(
    m: &Read<'a>,
    kind: Kind,
    table: &'static Table,
    old: &str,
    order_key: &str,
    below: i64,
) -> Result<Module<'a>, Error> {
    let mut instances = m.named("instances")?;
    if !old.is_empty() {
        for (n, node) in m.named(old)? {
            if instances.iter().any(|(x, _)| key_name(x) == key_name(&n)) {
                return Err(node.err(format!(
                    "is also under `instances`: Spring binds `{old}` and `instances` into one map, the later over the earlier; write it once"
                )));
            }
            instances.push((n, node));
        }
    }
    let order = match m.get(order_key) {
        Some(n) => {
            let v = n.num()?;
            if v.fract() != 0.0 || v.abs() > i32::MAX as f64 + 1.0 {
                return Err(n.err("must be a whole number (a Spring `Ordered` order)"));
            }
            v as i64
        }
        None => i32::MAX as i64 - below,
    };
    Ok(Module {
        kind,
        table,
        instances,
        configs: m.named("configs")?,
        used: Vec::new(),
        order,
    })
}

/// Every instance name, in the order first met.
fn backends(modules: &[Module<'_>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in modules {
        for (n, _) in &m.instances {
            let n = key_name(n).to_string();
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// How the aspects nest, from their orders.
pub struct Order {
    /// The circuit breaker runs outside the retry (it counts calls after
    /// their retries, as resim's breaker does).
    pub breaker_outside_retry: bool,
    /// The time limiter runs outside the retry (it bounds the whole call).
    pub time_outside_retry: bool,
    /// The rate limiter or the bulkhead runs outside the retry.
    pub limits_outside_retry: bool,
    /// The nesting, as text.
    pub text: String,
}

impl Order {
    fn of(modules: &[Module<'_>]) -> Order {
        let order = |k: Kind| {
            modules.iter().find(|m| m.kind == k).map_or_else(
                || {
                    let below = MODULES.iter().find(|x| x.1 == k).map_or(0, |x| x.5);
                    i32::MAX as i64 - below
                },
                |m| m.order,
            )
        };
        let retry = order(Kind::Retry);
        let mut all: Vec<(i64, &str)> = [
            (Kind::Retry, "Retry"),
            (Kind::Breaker, "CircuitBreaker"),
            (Kind::Limiter, "RateLimiter"),
            (Kind::Time, "TimeLimiter"),
            (Kind::Bulkhead, "Bulkhead"),
        ]
        .iter()
        .map(|(k, n)| (order(*k), *n))
        .collect();
        all.sort_by_key(|(o, _)| *o);
        let text = all
            .iter()
            .rev()
            .fold("call".to_string(), |inner, (_, n)| format!("{n}({inner})"));
        Order {
            breaker_outside_retry: order(Kind::Breaker) < retry,
            time_outside_retry: order(Kind::Time) < retry,
            limits_outside_retry: order(Kind::Limiter) < retry || order(Kind::Bulkhead) < retry,
            text,
        }
    }
}

/// Notes the aspect orders the file sets.
fn note_orders(top: &Read<'_>, order: &Order, led: &mut Ledger) -> Result<(), Error> {
    for (key, _, _, _, order_key, _) in MODULES {
        let Some(m) = top.get(key) else { continue };
        let Some((_, n)) = m
            .named()?
            .into_iter()
            .find(|(k, _)| relaxed(k) == relaxed(order_key))
        else {
            continue;
        };
        let (fate, how) = if order.limits_outside_retry {
            (
                Fate::Approximated,
                format!(
                    "the aspects run as {}: the rate limiter or bulkhead outside the retry takes one place per call; resim's limiters at the backend's entrance see every attempt",
                    order.text
                ),
            )
        } else {
            (Fate::Mapped, format!("the aspects run as {}", order.text))
        };
        led.note(&n, fate, "", how);
    }
    Ok(())
}

/// What the backends become.
#[derive(Default)]
struct Built {
    policies: Vec<Tab>,
    limiters: Vec<Tab>,
    services: Vec<Tab>,
    workloads: Vec<Tab>,
}

/// The mappings an instance inherits from, nearest first, the instance
/// itself first: resilience4j-framework-common's rules.
///
/// Retry, time limiter, rate limiter, bulkhead (`Common*ConfigurationProperties
/// .create*Config`): the `baseConfig` named, and its own, and so on; a
/// mapping naming none inherits `default` unless it is `default` (or an
/// instance named so). Circuit breaker
/// (`CommonCircuitBreakerConfigurationProperties.createCircuitBreakerConfig`):
/// the `baseConfig` chain, which ends at a config naming none (it does not
/// inherit `default`); an instance naming none takes the config of its own
/// name (alone: `createDirectConfig` reads no further), else `default` and
/// its chain. A chain that comes back to a config is refused: resilience4j
/// recurses without end there (and refuses a circuit breaker naming itself).
pub fn chain<'a>(
    kind: Kind,
    name: &str,
    inst: &Node<'a>,
    configs: &[(String, Node<'a>)],
    led: &mut Ledger,
) -> Result<Vec<Node<'a>>, Error> {
    let config = |n: &str| {
        configs
            .iter()
            .find(|(k, _)| key_name(k) == n)
            .map(|(k, v)| (key_name(k).to_string(), v.clone()))
    };
    let mut levels = vec![inst.clone()];
    let mut names: Vec<String> = Vec::new();
    // the mapping whose base is sought: its name, its node, the instance?
    let (mut cur_name, mut cur, mut is_inst) = (name.to_string(), inst.clone(), true);
    loop {
        let next = match base_of(&cur)? {
            Some((bc, bnode)) => {
                if kind == Kind::Breaker && bc == cur_name {
                    return Err(bnode.err(format!(
                        "names its own name `{bc}`: resilience4j refuses a circuit breaker inheriting itself (circular reference)"
                    )));
                }
                let Some(c) = config(&bc) else {
                    return Err(bnode.err(format!(
                        "no config `{bc}` under `configs`{}",
                        crate::error::did_you_mean(&bc, configs.iter().map(|(n, _)| key_name(n)))
                    )));
                };
                note_base(&bnode, &bc, led);
                c
            }
            // a circuit breaker config naming no base is built from the defaults
            None if kind == Kind::Breaker && !is_inst => break,
            None if kind == Kind::Breaker => match (config(name), config("default")) {
                (Some(own), _) => {
                    levels.push(own.1.clone());
                    if let Some((_, b)) = base_of(&own.1)?
                        && !led.noted(&b)
                    {
                        led.note(&b, Fate::Ignored, "", "a circuit breaker config taken by the instance of its name is read alone: its baseConfig is not followed (createDirectConfig)");
                    }
                    break;
                }
                (None, Some(d)) => d,
                (None, None) => break,
            },
            None if cur_name == "default" => break,
            None => match config("default") {
                Some(d) => d,
                None => break,
            },
        };
        if names.contains(&next.0) {
            names.push(next.0.clone());
            return Err(next.1.err(format!(
                "is inherited in a circle: {name} -> {}; resilience4j would recurse without end",
                names.join(" -> ")
            )));
        }
        names.push(next.0.clone());
        levels.push(next.1.clone());
        (cur_name, cur, is_inst) = (next.0, next.1, false);
    }
    Ok(levels)
}

/// The `baseConfig` a mapping names, and its node.
fn base_of<'a>(node: &Node<'a>) -> Result<Option<(String, Node<'a>)>, Error> {
    if node.v.is_null() {
        return Ok(None);
    }
    for (k, v) in node.named()? {
        if relaxed(&k) == "baseconfig" {
            let s = v.str()?.trim().to_string();
            if s.is_empty() {
                return Ok(None);
            }
            return Ok(Some((s, v)));
        }
    }
    Ok(None)
}

fn note_base(node: &Node<'_>, base: &str, led: &mut Ledger) {
    if !led.noted(node) {
        led.note(
            node,
            Fate::Mapped,
            "",
            format!("starts from config `{base}`: its fields, then its own"),
        );
    }
}

/// One backend: its instances in every module, read with the configs they
/// inherit, become its policy, limiters, server and workload.
fn backend(
    b: &str,
    bn: &str,
    modules: &mut [Module<'_>],
    order: &Order,
    out: &mut Built,
    led: &mut Ledger,
) -> Result<(), Error> {
    let bn = bn.to_string();
    let mut pol = Tab::new(format!("policies.{bn}"));
    pol.notes.push(format!(
        "the resilience4j instances named `{b}`: {}",
        order.text
    ));
    let mut w = placeholder_workload(
        &bn,
        &format!("/{bn}"),
        "calls per second to this backend; the configuration does not say",
        "how long the application sends",
    );
    w.notes.push(format!("the application's calls to `{b}`"));
    let mut middleware = Vec::new();
    let mut has_retry = false;
    let mut breaker = None;
    for m in modules.iter_mut() {
        let Some((_, inst)) = m.instances.iter().find(|(n, _)| key_name(n) == b) else {
            continue;
        };
        let inst = inst.clone();
        let levels = chain(m.kind, b, &inst, &m.configs, led)?;
        for l in &levels[1..] {
            if let Some((n, _)) = m.configs.iter().find(|(_, c)| c.steps == l.steps) {
                m.used.push(n.clone());
            }
        }
        let r = read_chain(&levels, m.table, &bn, led)?;
        for l in &levels {
            let empty = l.v.is_null() || l.v.as_object().is_some_and(|o| o.is_empty());
            if empty && !led.noted(l) {
                led.note(
                    l,
                    Fate::Mapped,
                    "",
                    "no fields of its own: what it inherits, else resilience4j's defaults",
                );
            }
        }
        match m.kind {
            Kind::Retry => {
                policy::retry(&r, &mut pol, led)?;
                has_retry = true;
            }
            Kind::Breaker => {
                if policy::breaker(&r, &mut pol, led)? {
                    breaker = Some(inst.clone());
                }
            }
            Kind::Time => policy::time_limit(&r, order, &mut pol, &mut w, led)?,
            Kind::Limiter => {
                out.limiters.push(limits::rate(&r, b, &bn, led)?);
                middleware.push(bn.clone());
            }
            Kind::Bulkhead => {
                out.limiters.push(limits::bulkhead(&r, b, &bn, led)?);
                middleware.push(format!("{bn}-bulkhead"));
            }
        }
    }
    if let Some(inst) = breaker.filter(|_| has_retry) {
        policy::breaker_counts(&inst, &bn, order, led);
    }
    if !pol.items.is_empty() {
        w.put("call_policy", Val::s(&bn));
        out.policies.push(pol);
    }
    let mut s = Tab::new(format!("services.{bn}"));
    s.notes.push(format!("the backend `{b}`"));
    s.put("routes", Val::strs([format!("/{bn}").as_str()]));
    if !middleware.is_empty() {
        s.put_noted(
            "middleware",
            Val::strs(middleware.iter().map(String::as_str)),
            "resilience4j's rate limiter and bulkhead, at the backend's entrance",
        );
    }
    out.services.push(s);
    out.services.push(placeholder_server(
        &bn,
        "calls the backend handles at once",
        "calls",
        "the backend's own time per call",
    ));
    out.workloads.push(w);
    Ok(())
}

/// Notes the `Code` field `name` of an instance read with its configs: the
/// node in effect with `fate`, `key` and `how`; the same field in a farther
/// config as overridden by it.
pub fn note_code(
    r: &Read<'_>,
    name: &str,
    fate: Fate,
    key: &str,
    how: impl Into<String>,
    led: &mut Ledger,
) {
    let all = r.all(name);
    let Some((_, first)) = all.first() else {
        return;
    };
    led.note(first, fate, key, how);
    for (_, n) in &all[1..] {
        led.note(
            n,
            Fate::Ignored,
            "",
            format!("overridden by `{}`", first.path()),
        );
    }
}
