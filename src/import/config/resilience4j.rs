//! resilience4j's Spring Boot configuration (`resilience4j.<module>.configs`
//! and `.instances`, YAML or JSON): retry, circuit breaker, time limiter and
//! rate limiter instances, per backend.
//!
//! The scenario: a backend (an instance name) is a server with a route of its
//! own, and a client workload calls it through one policy that combines the
//! backend's retry, circuit breaker and time limiter, in resilience4j's
//! default order (Retry around CircuitBreaker around TimeLimiter: the time
//! limit is per attempt, the breaker counts every attempt's call). A rate
//! limiter becomes a limiter at the backend's entrance. What the file does not
//! say (rates, service times, slots) is a placeholder marked `# set me`.
//! An instance takes its `baseConfig` (or the config named `default`), then its
//! own keys; keys are bound as Spring Boot binds them (`max-attempts` is
//! `maxAttempts`); absent keys take resilience4j's documented defaults.

use super::draft::{Draft, Fate, Ledger, Tab, Val, name, placeholder_server, placeholder_workload};
use super::duration::{Syntax, ms};
use super::tree::{Node, Source, relaxed};
use crate::error::Error;

const MODULES: [&str; 6] = [
    "retry",
    "circuitbreaker",
    "timelimiter",
    "ratelimiter",
    "bulkhead",
    "thread-pool-bulkhead",
];
const MODULE_KEYS: [&str; 8] = [
    "configs",
    "instances",
    "retryAspectOrder",
    "circuitBreakerAspectOrder",
    "rateLimiterAspectOrder",
    "bulkheadAspectOrder",
    "timeLimiterAspectOrder",
    "metrics",
];
const RETRY: [&str; 15] = [
    "baseConfig",
    "maxAttempts",
    "waitDuration",
    "enableExponentialBackoff",
    "exponentialBackoffMultiplier",
    "exponentialMaxWaitDuration",
    "enableRandomizedWait",
    "randomizedWaitFactor",
    "retryExceptions",
    "ignoreExceptions",
    "retryExceptionPredicate",
    "resultPredicate",
    "failAfterMaxAttempts",
    "eventConsumerBufferSize",
    "writableStackTraceEnabled",
];
const BREAKER: [&str; 24] = [
    "baseConfig",
    "failureRateThreshold",
    "slowCallRateThreshold",
    "slowCallDurationThreshold",
    "permittedNumberOfCallsInHalfOpenState",
    "maxWaitDurationInHalfOpenState",
    "slidingWindowType",
    "slidingWindowSize",
    "minimumNumberOfCalls",
    "waitDurationInOpenState",
    "automaticTransitionFromOpenToHalfOpenEnabled",
    "recordExceptions",
    "ignoreExceptions",
    "recordFailurePredicate",
    "ignoreExceptionPredicate",
    "recordResultPredicate",
    "registerHealthIndicator",
    "allowHealthIndicatorToFail",
    "eventConsumerBufferSize",
    "writableStackTraceEnabled",
    "enableExponentialBackoff",
    "exponentialBackoffMultiplier",
    "exponentialMaxWaitDurationInOpenState",
    "initialState",
];
const LIMITER: [&str; 9] = [
    "baseConfig",
    "limitForPeriod",
    "limitRefreshPeriod",
    "timeoutDuration",
    "registerHealthIndicator",
    "allowHealthIndicatorToFail",
    "eventConsumerBufferSize",
    "subscribeForEvents",
    "writableStackTraceEnabled",
];
const TIME: [&str; 4] = [
    "baseConfig",
    "timeoutDuration",
    "cancelRunningFuture",
    "eventConsumerBufferSize",
];
const BULKHEAD: [&str; 6] = [
    "baseConfig",
    "maxConcurrentCalls",
    "maxWaitDuration",
    "fairCallHandlingStrategyEnabled",
    "eventConsumerBufferSize",
    "writableStackTraceEnabled",
];

/// Keys that change no behaviour resim models, and why.
fn ignored_why(key: &str) -> Option<&'static str> {
    Some(match key {
        "eventConsumerBufferSize" | "subscribeForEvents" => {
            "event buffers: monitoring, no behaviour"
        }
        "registerHealthIndicator" | "allowHealthIndicatorToFail" => {
            "Spring health endpoints: monitoring, no behaviour"
        }
        "writableStackTraceEnabled" => "Java stack traces: no behaviour resim models",
        "fairCallHandlingStrategyEnabled" => "Java semaphore fairness: not modelled",
        "baseConfig" => "",
        _ => return None,
    })
}

/// Does this document look like a resilience4j configuration?
pub fn looks_like(v: &serde_json::Value) -> bool {
    v.as_object()
        .is_some_and(|m| m.keys().any(|k| relaxed(k) == "resilience4j"))
}

/// One instance's effective fields: (key, node), the instance's own over its
/// base config's.
type Fields<'a> = Vec<(&'static str, Node<'a>)>;

fn effective<'a>(
    inst: &Node<'a>,
    configs: &[(String, Node<'a>)],
    known: &[&'static str],
    led: &mut Ledger,
) -> Result<Fields<'a>, Error> {
    let own = inst.fields(known, true)?;
    let base_name = match own.iter().find(|(k, _)| *k == "baseConfig") {
        Some((_, b)) => {
            let n = b.str()?.to_string();
            led.note(
                b,
                Fate::Mapped,
                "",
                format!("the instance starts from config `{n}`"),
            );
            Some((n, true))
        }
        None => Some(("default".to_string(), false)),
    };
    let mut out: Fields<'a> = Vec::new();
    if let Some((bn, named)) = base_name {
        match configs.iter().find(|(n, _)| *n == bn) {
            Some((_, c)) => {
                for (k, v) in c.fields(known, true)? {
                    if k != "baseConfig" {
                        out.push((k, v));
                    }
                }
            }
            None if named => {
                let b = own
                    .iter()
                    .find(|(k, _)| *k == "baseConfig")
                    .map(|(_, b)| b)
                    .unwrap();
                return Err(b.err(format!(
                    "no config `{bn}` under `configs`{}",
                    crate::error::did_you_mean(&bn, configs.iter().map(|(n, _)| n.as_str()))
                )));
            }
            None => {}
        }
    }
    for (k, v) in own {
        if k == "baseConfig" {
            continue;
        }
        out.retain(|(x, _)| *x != k);
        out.push((k, v));
    }
    Ok(out)
}

fn find<'a, 'b>(f: &'b Fields<'a>, k: &str) -> Option<&'b Node<'a>> {
    f.iter().find(|(n, _)| *n == k).map(|(_, n)| n)
}

/// The modules of the file: name -> (configs, instances).
struct Module<'a> {
    configs: Vec<(String, Node<'a>)>,
    instances: Vec<(String, Node<'a>)>,
}

/// Builds the scenario of one resilience4j configuration.
pub fn import(src: &Source, draft: &mut Draft, led: &mut Ledger) -> Result<(), Error> {
    let root = src.root(0);
    let mut r4j = None;
    for (k, v) in root.named()? {
        if relaxed(&k) == "resilience4j" {
            r4j = Some(v);
        } else {
            led.note(&v, Fate::Ignored, "", "not under `resilience4j`");
        }
    }
    let r4j = r4j.ok_or_else(|| root.err("no `resilience4j` key"))?;
    let mut modules: Vec<(&'static str, Module<'_>)> = Vec::new();
    for (m, node) in r4j.fields(&MODULES, true)? {
        let mut module = Module {
            configs: Vec::new(),
            instances: Vec::new(),
        };
        for (k, v) in node.fields(&MODULE_KEYS, true)? {
            match k {
                "configs" => module.configs = v.named()?,
                "instances" => module.instances = v.named()?,
                _ => led.note(&v, Fate::Ignored, "", "Spring wiring (aspect order, metrics): resim applies the default order, Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))"),
            }
        }
        if m == "thread-pool-bulkhead" {
            led.note(&node, Fate::Ignored, "", "a thread pool bulkhead runs calls on a pool of threads: resim has no client thread pools (a server's slots and queue are the nearest)");
            continue;
        }
        modules.push((m, module));
    }
    let module = |m: &str| modules.iter().find(|(n, _)| *n == m).map(|(_, x)| x);
    // the backends: every instance name, in the order first met
    let mut backends: Vec<String> = Vec::new();
    for (_, m) in &modules {
        for (n, _) in &m.instances {
            if !backends.contains(n) {
                backends.push(n.clone());
            }
        }
    }
    if backends.is_empty() {
        return Err(r4j.err(
            "no `instances`: nothing to import (configs apply to the instances that use them)",
        ));
    }
    // configs no instance uses are read and said to be unused
    for (_, m) in &modules {
        for (cn, c) in &m.configs {
            let used = cn == "default"
                || m.instances.iter().any(|(_, i)| {
                    i.v.as_object().is_some_and(|o| {
                        o.iter()
                            .any(|(k, v)| relaxed(k) == "baseconfig" && v.as_str() == Some(cn))
                    })
                });
            if !used {
                led.note(c, Fate::Ignored, "", "a config no instance uses");
            }
        }
    }
    let mut limiters = Vec::new();
    let mut services = Vec::new();
    let mut policies = Vec::new();
    let mut workloads = Vec::new();
    for b in &backends {
        let bn = name(b);
        let inst = |m: &str| {
            module(m).and_then(|x| {
                x.instances
                    .iter()
                    .find(|(n, _)| n == b)
                    .map(|(_, i)| (x, i.clone()))
            })
        };
        let mut pol = Tab::new(format!("policies.{bn}"));
        pol.notes
            .push(format!("the resilience4j instances named `{b}`"));
        let mut has_policy = false;
        if let Some((m, i)) = inst("timelimiter") {
            let f = effective(&i, &m.configs, &TIME, led)?;
            let t = match find(&f, "timeoutDuration") {
                Some(n) => {
                    let v = ms(n, Syntax::Spring)?;
                    if v <= 0.0 {
                        return Err(n.err("must be above 0"));
                    }
                    led.note(
                        n,
                        Fate::Mapped,
                        format!("policies.{bn}.timeout_ms"),
                        "each attempt's own timeout (the time limiter sits inside the retry)",
                    );
                    v
                }
                None => {
                    led.absent(
                        &i,
                        "timeoutDuration",
                        "1s",
                        format!("policies.{bn}.timeout_ms"),
                        "resilience4j's default",
                    );
                    1000.0
                }
            };
            pol.put_noted("timeout_ms", Val::n(t), "timelimiter timeoutDuration");
            has_policy = true;
            if let Some(n) = find(&f, "cancelRunningFuture") {
                if n.bool()? {
                    led.note(n, Fate::Approximated, "", "the attempt's work goes on at the server after the client gives up unless the server has `abandon = true` (set in the scenario)");
                } else {
                    led.note(
                        n,
                        Fate::Mapped,
                        "",
                        "the work goes on after the time limit, as a server without `abandon` does",
                    );
                }
            }
            rest(&f, &["timeoutDuration", "cancelRunningFuture"], led);
        }
        if let Some((m, i)) = inst("retry") {
            let f = effective(&i, &m.configs, &RETRY, led)?;
            retry(&f, &i, &bn, &mut pol, led)?;
            has_policy = true;
        }
        if let Some((m, i)) = inst("circuitbreaker") {
            let f = effective(&i, &m.configs, &BREAKER, led)?;
            breaker(&f, &i, &bn, &mut pol, led)?;
            has_policy = true;
        }
        let mut middleware = Vec::new();
        if let Some((m, i)) = inst("ratelimiter") {
            let f = effective(&i, &m.configs, &LIMITER, led)?;
            limiters.push(limiter(&f, &i, &bn, led)?);
            middleware.push(bn.clone());
        }
        if let Some((m, i)) = inst("bulkhead") {
            let f = effective(&i, &m.configs, &BULKHEAD, led)?;
            let limit = match find(&f, "maxConcurrentCalls") {
                Some(n) => {
                    let v = n.whole()?;
                    if v < 1 {
                        return Err(n.err("must be at least 1"));
                    }
                    led.note(n, Fate::Approximated, format!("limiters.{bn}-bulkhead.limit"), "a fixed concurrency limit at the backend's entrance: calls past it are refused (in resilience4j, in the client; the same for one client)");
                    v
                }
                None => {
                    led.absent(
                        &i,
                        "maxConcurrentCalls",
                        "25",
                        format!("limiters.{bn}-bulkhead.limit"),
                        "resilience4j's default",
                    );
                    25
                }
            };
            if let Some(n) = find(&f, "maxWaitDuration") {
                let w = ms(n, Syntax::Spring)?;
                if w > 0.0 {
                    led.note(n, Fate::Approximated, "", "resim's concurrency limits refuse at once: a call does not wait for a place");
                } else {
                    led.note(n, Fate::Mapped, "", "0: a call past the limit is refused at once, as resim's concurrency limit does");
                }
            } else {
                led.absent(
                    &i,
                    "maxWaitDuration",
                    "0",
                    "",
                    "resilience4j's default: refused at once, as resim's concurrency limit does",
                );
            }
            let lname = format!("{bn}-bulkhead");
            let mut t = Tab::new(format!("limiters.{lname}"));
            t.notes.push(format!(
                "resilience4j's bulkhead `{b}`: at most this many calls in flight"
            ));
            t.put("kind", Val::s("concurrency"));
            t.put("algorithm", Val::s("fixed"));
            t.put("limit", Val::n(limit as f64));
            limiters.push(t);
            middleware.push(lname);
            rest(&f, &["maxConcurrentCalls", "maxWaitDuration"], led);
        }
        if has_policy {
            policies.push(pol);
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
        services.push(s);
        services.push(placeholder_server(
            &bn,
            "calls the backend handles at once",
            "calls",
            "the backend's own time per call",
        ));
        let mut w = placeholder_workload(
            &bn,
            &format!("/{bn}"),
            "calls per second to this backend; the configuration does not say",
            "how long the application sends",
        );
        w.notes.push(format!("the application's calls to `{b}`"));
        if has_policy {
            w.put("call_policy", Val::s(&bn));
        }
        workloads.push(w);
    }
    draft.tabs.extend(policies);
    draft.tabs.extend(limiters);
    draft.tabs.extend(services);
    draft.tabs.extend(workloads);
    Ok(())
}

/// The keys no rule above read: ignored, each with its reason.
fn rest(f: &Fields<'_>, used: &[&str], led: &mut Ledger) {
    for (k, n) in f {
        if used.contains(k) {
            continue;
        }
        match ignored_why(k) {
            Some("") => {}
            Some(why) => led.note(n, Fate::Ignored, "", why),
            None => {}
        }
    }
}

fn retry(
    f: &Fields<'_>,
    inst: &Node<'_>,
    bn: &str,
    pol: &mut Tab,
    led: &mut Ledger,
) -> Result<(), Error> {
    let at = |k: &str| format!("policies.{bn}.retry.{k}");
    let attempts = match find(f, "maxAttempts") {
        Some(n) => {
            let v = n.whole()?;
            if v < 1 {
                return Err(n.err("must be at least 1 (the first call counts)"));
            }
            led.note(
                n,
                Fate::Mapped,
                at("max_attempts"),
                "attempts in all, the first call included",
            );
            v
        }
        None => {
            led.absent(
                inst,
                "maxAttempts",
                "3",
                at("max_attempts"),
                "resilience4j's default",
            );
            3
        }
    };
    let wait = match find(f, "waitDuration") {
        Some(n) => {
            let v = ms(n, Syntax::Spring)?;
            led.note(
                n,
                Fate::Mapped,
                at("backoff.base_ms"),
                "the wait before the first retry",
            );
            v
        }
        None => {
            led.absent(
                inst,
                "waitDuration",
                "500ms",
                at("backoff.base_ms"),
                "resilience4j's default",
            );
            500.0
        }
    };
    let flag =
        |k: &str| -> Result<Option<bool>, Error> { find(f, k).map(|n| n.bool()).transpose() };
    let expo = flag("enableExponentialBackoff")?.unwrap_or(false);
    let random = flag("enableRandomizedWait")?.unwrap_or(false);
    for k in ["enableExponentialBackoff", "enableRandomizedWait"] {
        if let Some(n) = find(f, k) {
            led.note(
                n,
                Fate::Mapped,
                at("backoff.kind"),
                if k.contains("Exp") {
                    "exponential when true"
                } else {
                    "jitter_factor when true"
                },
            );
        }
    }
    let mut backoff = Vec::new();
    if wait == 0.0 && !expo {
        backoff.push(("kind", Val::s("none")));
    } else {
        backoff.push((
            "kind",
            Val::s(if expo { "exponential" } else { "constant" }),
        ));
        backoff.push(("base_ms", Val::n(wait)));
    }
    if expo {
        let m = match find(f, "exponentialBackoffMultiplier") {
            Some(n) => {
                let v = n.num()?;
                if v <= 0.0 {
                    return Err(n.err("must be above 0"));
                }
                led.note(
                    n,
                    Fate::Mapped,
                    at("backoff.multiplier"),
                    "wait x multiplier^(n-1)",
                );
                v
            }
            None => {
                led.absent(
                    inst,
                    "exponentialBackoffMultiplier",
                    "2",
                    at("backoff.multiplier"),
                    "resilience4j's documented default",
                );
                2.0
            }
        };
        let cap = match find(f, "exponentialMaxWaitDuration") {
            Some(n) => {
                let v = ms(n, Syntax::Spring)?;
                if v < wait {
                    return Err(n.err(format!(
                        "is below waitDuration ({} ms): the first wait would pass the cap",
                        crate::error::num(wait)
                    )));
                }
                led.note(n, Fate::Mapped, at("backoff.cap_ms"), "the longest wait");
                v
            }
            None => {
                led.absent(inst, "exponentialMaxWaitDuration", "(none)", at("backoff.cap_ms"), "approximated: resilience4j's waits grow without a cap; capped at 1 hour, longer than any run");
                3_600_000.0
            }
        };
        backoff.push(("cap_ms", Val::n(cap)));
        backoff.push(("multiplier", Val::n(m)));
    } else {
        for k in ["exponentialBackoffMultiplier", "exponentialMaxWaitDuration"] {
            if let Some(n) = find(f, k) {
                led.note(
                    n,
                    Fate::Ignored,
                    "",
                    "enableExponentialBackoff is false: resilience4j does not use it",
                );
            }
        }
    }
    if random && wait > 0.0 {
        let fct = match find(f, "randomizedWaitFactor") {
            Some(n) => {
                let v = n.num()?;
                if !(0.0..1.0).contains(&v) {
                    return Err(n.err("must be at least 0 and below 1 (resilience4j's rule)"));
                }
                led.note(
                    n,
                    Fate::Mapped,
                    at("backoff.jitter_factor"),
                    "the wait w drawn from U(w (1 - f), w (1 + f))",
                );
                v
            }
            None => {
                led.absent(
                    inst,
                    "randomizedWaitFactor",
                    "0.5",
                    at("backoff.jitter_factor"),
                    "resilience4j's default",
                );
                0.5
            }
        };
        if fct > 0.0 {
            backoff.push(("jitter_factor", Val::n(fct)));
        }
    } else if let Some(n) = find(f, "randomizedWaitFactor") {
        led.note(
            n,
            Fate::Ignored,
            "",
            "enableRandomizedWait is false: resilience4j does not use it",
        );
    }
    for k in [
        "retryExceptions",
        "ignoreExceptions",
        "retryExceptionPredicate",
        "resultPredicate",
    ] {
        if let Some(n) = find(f, k) {
            led.note(n, Fate::Approximated, at("on"), "resim's failures are timeouts, errors, sheds and rejections, not Java exceptions: every one is retried");
        }
    }
    if let Some(n) = find(f, "failAfterMaxAttempts") {
        led.note(
            n,
            Fate::Ignored,
            "",
            "about results retried on a predicate: resim retries failures only",
        );
    }
    pol.put(
        "retry",
        Val::table(&[
            ("max_attempts", Val::n(attempts as f64)),
            ("on", Val::strs(["timeout", "error", "shed", "rejected"])),
            ("backoff", Val::table(&backoff)),
        ]),
    );
    rest(f, &[], led);
    Ok(())
}

fn breaker(
    f: &Fields<'_>,
    inst: &Node<'_>,
    bn: &str,
    pol: &mut Tab,
    led: &mut Ledger,
) -> Result<(), Error> {
    let at = |k: &str| format!("policies.{bn}.breaker.{k}");
    let count_based = match find(f, "slidingWindowType") {
        Some(n) => match n.str()?.to_ascii_uppercase().as_str() {
            "COUNT_BASED" => true,
            "TIME_BASED" => false,
            _ => return Err(n.err("must be COUNT_BASED or TIME_BASED")),
        },
        None => true,
    };
    let size = match find(f, "slidingWindowSize") {
        Some(n) => {
            let v = n.whole()?;
            if v < 1 {
                return Err(n.err("must be at least 1"));
            }
            v
        }
        None => {
            led.absent(
                inst,
                "slidingWindowSize",
                "100",
                at("window"),
                "resilience4j's default",
            );
            100
        }
    };
    let window = if count_based {
        Val::table(&[("count", Val::n(size as f64))])
    } else {
        Val::table(&[("ms", Val::n(size as f64 * 1000.0))])
    };
    if let Some(n) = find(f, "slidingWindowType") {
        led.note(
            n,
            Fate::Mapped,
            at("window"),
            "COUNT_BASED: the last N calls; TIME_BASED: the calls of the last N seconds",
        );
    } else {
        led.absent(
            inst,
            "slidingWindowType",
            "COUNT_BASED",
            at("window"),
            "resilience4j's default",
        );
    }
    if let Some(n) = find(f, "slidingWindowSize") {
        led.note(
            n,
            Fate::Mapped,
            at("window"),
            if count_based {
                "count"
            } else {
                "seconds, as ms"
            },
        );
    }
    let rate = match find(f, "failureRateThreshold") {
        Some(n) => {
            let v = n.num()?;
            if !(v > 0.0 && v <= 100.0) {
                return Err(n.err("must be above 0 and at most 100 (a percentage)"));
            }
            led.note(n, Fate::Mapped, at("failure_rate"), "percent, as a share");
            v / 100.0
        }
        None => {
            led.absent(
                inst,
                "failureRateThreshold",
                "50",
                at("failure_rate"),
                "resilience4j's default",
            );
            0.5
        }
    };
    let min_calls = match find(f, "minimumNumberOfCalls") {
        Some(n) => {
            let v = n.whole()?.max(1);
            led.note(
                n,
                Fate::Mapped,
                at("min_calls"),
                "calls counted before it may open",
            );
            v
        }
        None => {
            led.absent(
                inst,
                "minimumNumberOfCalls",
                "100",
                at("min_calls"),
                "resilience4j's default",
            );
            100
        }
    };
    let open = match find(f, "waitDurationInOpenState") {
        Some(n) => {
            let v = ms(n, Syntax::Spring)?;
            if v <= 0.0 {
                return Err(n.err("must be above 0"));
            }
            led.note(n, Fate::Mapped, at("open_ms"), "how long it stays open");
            v
        }
        None => {
            led.absent(
                inst,
                "waitDurationInOpenState",
                "60s",
                at("open_ms"),
                "resilience4j's default",
            );
            60_000.0
        }
    };
    let half = match find(f, "permittedNumberOfCallsInHalfOpenState") {
        Some(n) => {
            let v = n.whole()?.max(1);
            led.note(n, Fate::Approximated, at("half_open_calls"), "trial calls; resim closes when all succeed and reopens on any failure, where resilience4j compares their failure rate with the threshold");
            v
        }
        None => {
            led.absent(
                inst,
                "permittedNumberOfCallsInHalfOpenState",
                "10",
                at("half_open_calls"),
                "resilience4j's default; approximated: resim closes when all trials succeed",
            );
            10
        }
    };
    for (k, why) in [
        (
            "slowCallRateThreshold",
            "resim's breaker counts failures, not slow calls",
        ),
        (
            "slowCallDurationThreshold",
            "resim's breaker counts failures, not slow calls",
        ),
        (
            "maxWaitDurationInHalfOpenState",
            "resim's half-open state lasts until its trials end",
        ),
        (
            "automaticTransitionFromOpenToHalfOpenEnabled",
            "resim moves to half-open when open_ms ends either way",
        ),
        (
            "recordExceptions",
            "resim's failures are timeouts, errors and sheds: all are recorded",
        ),
        (
            "ignoreExceptions",
            "resim's failures are timeouts, errors and sheds: all are recorded",
        ),
        (
            "recordFailurePredicate",
            "resim's failures are timeouts, errors and sheds: all are recorded",
        ),
        (
            "ignoreExceptionPredicate",
            "resim's failures are timeouts, errors and sheds: all are recorded",
        ),
        (
            "recordResultPredicate",
            "resim records failures, not results",
        ),
        (
            "enableExponentialBackoff",
            "resim's open state lasts open_ms each time",
        ),
        (
            "exponentialBackoffMultiplier",
            "resim's open state lasts open_ms each time",
        ),
        (
            "exponentialMaxWaitDurationInOpenState",
            "resim's open state lasts open_ms each time",
        ),
        ("initialState", "resim's breaker starts closed"),
    ] {
        if let Some(n) = find(f, k) {
            led.note(n, Fate::Ignored, "", why);
        }
    }
    pol.put(
        "breaker",
        Val::table(&[
            ("window", window),
            ("min_calls", Val::n(min_calls as f64)),
            ("failure_rate", Val::n(rate)),
            ("open_ms", Val::n(open)),
            ("half_open_calls", Val::n(half as f64)),
        ]),
    );
    rest(f, &[], led);
    Ok(())
}

fn limiter(f: &Fields<'_>, inst: &Node<'_>, bn: &str, led: &mut Ledger) -> Result<Tab, Error> {
    let at = |k: &str| format!("limiters.{bn}.{k}");
    let limit = match find(f, "limitForPeriod") {
        Some(n) => {
            let v = n.whole()?;
            if v < 1 {
                return Err(n.err("must be at least 1"));
            }
            led.note(n, Fate::Mapped, at("limit"), "permits per refresh period");
            v
        }
        None => {
            led.absent(
                inst,
                "limitForPeriod",
                "50",
                at("limit"),
                "resilience4j's default",
            );
            50
        }
    };
    let period = match find(f, "limitRefreshPeriod") {
        Some(n) => {
            let v = ms(n, Syntax::Spring)?;
            if v <= 0.0 {
                return Err(n.err("must be above 0"));
            }
            led.note(
                n,
                Fate::Mapped,
                at("window_ms"),
                "the period after which the permits are refilled (a fixed window from the start)",
            );
            v
        }
        None => {
            led.absent(
                inst,
                "limitRefreshPeriod",
                "500ns",
                at("window_ms"),
                "resilience4j's default",
            );
            0.0005
        }
    };
    let wait = match find(f, "timeoutDuration") {
        Some(n) => {
            let v = ms(n, Syntax::Spring)?;
            led.note(
                n,
                Fate::Mapped,
                at("max_delay_ms"),
                "the longest a call waits for a permit",
            );
            v
        }
        None => {
            led.absent(
                inst,
                "timeoutDuration",
                "5s",
                at("max_delay_ms"),
                "resilience4j's default",
            );
            5000.0
        }
    };
    rest(f, &[], led);
    let mut t = Tab::new(format!("limiters.{bn}"));
    t.notes.push(format!("resilience4j's rate limiter `{}`: in the client there, at the backend's entrance here (the same decisions for one client)", inst.steps.last().map(|s| match s { super::tree::Step::Key(k) => k.clone(), _ => String::new() }).unwrap_or_default()));
    t.put("algorithm", Val::s("fixed-window"));
    t.put("limit", Val::n(limit as f64));
    t.put("window_ms", Val::n(period));
    if wait > 0.0 {
        t.put("mode", Val::s("throttle"));
        t.put("max_delay_ms", Val::n(wait));
        t.put_noted(
            "overflow",
            Val::s("hold"),
            "a call that cannot get a permit in time waits timeoutDuration, then fails",
        );
    }
    Ok(t)
}
