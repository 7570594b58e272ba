//! An instance's retry, circuit breaker and time limiter, as the backend's
//! policy, by resilience4j's rules (each cited where it is followed).

use super::exceptions::{self, ORDER};
use super::{Order, note_code};
use crate::error::Error;
use crate::import::config::draft::{Fate, Ledger, Tab, Val};
use crate::import::config::duration::{Syntax, ms};
use crate::import::config::spec::Read;
use crate::import::config::tree::{Node, relaxed};

/// No cap on an exponential wait, in resim's terms: longer than any run.
const NO_CAP_MS: f64 = 3_600_000.0;

/// The wait fields other than `waitDuration`.
const WAIT_FIELDS: [&str; 5] = [
    "enableExponentialBackoff",
    "exponentialBackoffMultiplier",
    "exponentialMaxWaitDuration",
    "enableRandomizedWait",
    "randomizedWaitFactor",
];

/// An enum value as Spring binds it (case, `-` and `_` ignored).
pub fn choice(node: &Node<'_>, allowed: &[&'static str]) -> Result<&'static str, Error> {
    let s = node.str()?;
    allowed
        .iter()
        .find(|a| relaxed(a) == relaxed(s))
        .copied()
        .ok_or_else(|| {
            node.err(format!(
                "must be one of {}{}",
                allowed.join(", "),
                crate::error::did_you_mean(&s.to_ascii_uppercase(), allowed.iter().copied())
            ))
        })
}

/// A list of class names: a list, or one string of names separated by
/// commas (Spring converts a string to an array at its commas).
fn classes(node: &Node<'_>) -> Result<Vec<String>, Error> {
    match node.v {
        serde_json::Value::String(s) => Ok(s
            .split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()),
        serde_json::Value::Null => Ok(Vec::new()),
        _ => node
            .items()?
            .iter()
            .map(|n| n.str().map(|s| s.trim().to_string()))
            .collect(),
    }
}

/// Checks every value of the wait fields at every level, as Spring's
/// setters do when they bind them (used or not).
fn check_values(r: &Read<'_>, names: &[(&str, &str)]) -> Result<(), Error> {
    for (f, rule) in names {
        for (_, n) in r.all(f) {
            match *rule {
                "bool" => {
                    n.bool()?;
                }
                "positive" => {
                    if n.num()? <= 0.0 {
                        return Err(n.err("must be above 0 (resilience4j's rule)"));
                    }
                }
                "factor" => {
                    let v = n.num()?;
                    if !(0.0..1.0).contains(&v) {
                        return Err(n.err("must be at least 0 and below 1 (resilience4j's rule)"));
                    }
                }
                _ => {
                    ms(&n, Syntax::Spring)?;
                }
            }
        }
    }
    Ok(())
}

/// `retry`: attempts, the wait and the outcomes retried.
pub fn retry(r: &Read<'_>, pol: &mut Tab, led: &mut Ledger) -> Result<(), Error> {
    let attempts = match r.get("maxAttempts") {
        Some(n) => {
            let v = n.i32("a Java int")?;
            if v < 1 {
                return Err(n.err("must be at least 1 (the first call counts)"));
            }
            v
        }
        None => 3,
    };
    let backoff = wait(r, led)?;
    let on = outcomes(r, led)?;
    pol.put(
        "retry",
        Val::table(&[
            ("max_attempts", Val::n(attempts as f64)),
            ("on", Val::strs(on.iter().copied())),
            ("backoff", backoff),
        ]),
    );
    Ok(())
}

/// The outcomes retried: the exception lists in effect
/// ([`exceptions::retried`]).
fn outcomes(r: &Read<'_>, led: &mut Ledger) -> Result<Vec<&'static str>, Error> {
    let list = |f: &str| -> Result<Vec<String>, Error> {
        r.get(f).map_or(Ok(Vec::new()), |n| classes(&n))
    };
    let (retry, ignore) = (list("retryExceptions")?, list("ignoreExceptions")?);
    if !r.has("retryExceptions") && !r.has("ignoreExceptions") {
        return Ok(ORDER.to_vec());
    }
    let got = exceptions::retried(&retry, &ignore);
    let key = r.scoped("policies.{}.retry.on");
    for f in ["retryExceptions", "ignoreExceptions"] {
        note_code(r, f, Fate::Approximated, &key, got.how.clone(), led);
    }
    Ok(got.on)
}

/// A flag in effect from `level` on: (its level, its node, its value).
fn flag<'a>(
    r: &Read<'a>,
    name: &str,
    level: usize,
) -> Result<Option<(usize, Node<'a>, bool)>, Error> {
    match r.from_level(name, level) {
        Some((l, n)) => {
            let v = n.bool()?;
            Ok(Some((l, n, v)))
        }
        None => Ok(None),
    }
}

/// The retry's `backoff`: CommonRetryConfigurationProperties
/// `configureRetryIntervalFunction` builds the wait only at a level that
/// sets `waitDuration` (the nearest wins: the instance's, else its configs'
/// in turn), from that level's flags, multiplier and cap or those it
/// inherits (ConfigUtils.mergePropertiesIfAny carries them over), and its
/// own `randomizedWaitFactor` only. IntervalFunction: exponential waits
/// wait x multiplier^(n-1) (multiplier 1.5 unless given), capped at
/// `exponentialMaxWaitDuration`; randomized ones are drawn from
/// U(w (1 - f), w (1 + f)) (0.5 unless given).
fn wait(r: &Read<'_>, led: &mut Ledger) -> Result<Val, Error> {
    check_values(
        r,
        &[
            ("enableExponentialBackoff", "bool"),
            ("enableRandomizedWait", "bool"),
            ("exponentialBackoffMultiplier", "positive"),
            ("randomizedWaitFactor", "factor"),
            ("exponentialMaxWaitDuration", "duration"),
        ],
    )?;
    let key = |k: &str| r.scoped(&format!("policies.{{}}.retry.backoff.{k}"));
    let Some((w, wnode)) = r.from_level("waitDuration", 0) else {
        return Ok(no_wait(r, led));
    };
    let base = ms(&wnode, Syntax::Spring)?;
    for f in WAIT_FIELDS {
        for (l, n) in r.all(f) {
            if l < w {
                led.note(&n, Fate::Ignored, "", format!("does not act: the wait is built at `{}`, which sets waitDuration, from its own wait fields and those it inherits (configureRetryIntervalFunction)", wnode.path()));
                led.warn_last();
            }
        }
    }
    let expo = flag(r, "enableExponentialBackoff", w)?;
    let random = flag(r, "enableRandomizedWait", w)?;
    let (expo_on, random_on) = (
        expo.as_ref().is_some_and(|x| x.2),
        random.as_ref().is_some_and(|x| x.2),
    );
    if (expo_on || random_on) && base < 1.0 {
        return Err(wnode.err("must be at least 1 ms with an exponential or randomized wait (IntervalFunction.checkInterval)"));
    }
    note_from(
        r,
        "waitDuration",
        w,
        Fate::Mapped,
        &key("base_ms"),
        "the wait before the first retry (every retry's, when constant)",
        led,
    );
    note_flags(r, w, expo_on, random_on, led);
    let mut backoff = Vec::new();
    if !expo_on {
        for f in ["exponentialBackoffMultiplier", "exponentialMaxWaitDuration"] {
            note_from(
                r,
                f,
                w,
                Fate::Ignored,
                "",
                "enableExponentialBackoff is not on: resilience4j does not use it",
                led,
            );
        }
        if base == 0.0 && !random_on {
            backoff.push(("kind", Val::s("none")));
        } else {
            backoff.push(("kind", Val::s("constant")));
            backoff.push(("base_ms", Val::n(base)));
        }
    } else {
        exponential(r, w, base, random_on, &mut backoff, led)?;
    }
    let factor = random_factor(r, w, &wnode, random_on, led)?;
    if random_on && factor > 0.0 {
        backoff.push(("jitter_factor", Val::n(factor)));
    }
    Ok(Val::table(&backoff))
}

/// The wait when no level sets `waitDuration`: RetryConfig's constant
/// 500 ms, whatever the other wait fields say (they do not act).
fn no_wait(r: &Read<'_>, led: &mut Ledger) -> Val {
    for f in WAIT_FIELDS {
        for (_, n) in r.all(f) {
            led.note(&n, Fate::Ignored, "", "no waitDuration here or in the configs inherited: resilience4j keeps its constant 500 ms and this does not act (configureRetryIntervalFunction builds the wait only where waitDuration is set)");
            led.warn_last();
        }
    }
    Val::table(&[("kind", Val::s("constant")), ("base_ms", Val::n(500.0))])
}

/// Notes the exponential and randomized flags in effect from level `w`.
fn note_flags(r: &Read<'_>, w: usize, expo_on: bool, random_on: bool, led: &mut Ledger) {
    let key = |k: &str| r.scoped(&format!("policies.{{}}.retry.backoff.{k}"));
    let how = |on: bool, yes: &'static str, no: &'static str| if on { yes } else { no };
    note_from(
        r,
        "enableExponentialBackoff",
        w,
        Fate::Mapped,
        &key("kind"),
        how(
            expo_on,
            "on: the wait grows, `kind = \"exponential\"`",
            "off: the wait does not grow",
        ),
        led,
    );
    note_from(
        r,
        "enableRandomizedWait",
        w,
        Fate::Mapped,
        &key("jitter_factor"),
        how(
            random_on,
            "on: each wait drawn around its value, `jitter_factor`",
            "off: the wait is not drawn",
        ),
        led,
    );
}

/// `randomizedWaitFactor`: the level that builds the wait (`w`) reads only
/// its own; a config's is not carried over (ConfigUtils.mergePropertiesIfAny
/// leaves it), and 0.5 applies.
fn random_factor(
    r: &Read<'_>,
    w: usize,
    wnode: &Node<'_>,
    random_on: bool,
    led: &mut Ledger,
) -> Result<f64, Error> {
    let key = r.scoped("policies.{}.retry.backoff.jitter_factor");
    match r.from_level("randomizedWaitFactor", w) {
        Some((l, n)) if l == w => {
            let (fate, how) = if random_on {
                (Fate::Mapped, "as written")
            } else {
                (
                    Fate::Ignored,
                    "enableRandomizedWait is not on: resilience4j does not use it",
                )
            };
            note_from(r, "randomizedWaitFactor", w, fate, &key, how, led);
            n.num()
        }
        Some(_) => {
            for (_, n) in r.all("randomizedWaitFactor").iter().filter(|(l, _)| *l > w) {
                led.note(n, Fate::Ignored, "", format!("not carried over from a config to `{}`, which builds the wait (ConfigUtils.mergePropertiesIfAny leaves it): 0.5 applies", wnode.path()));
                led.warn_last();
            }
            Ok(0.5)
        }
        None => Ok(0.5),
    }
}

/// An exponential wait's keys.
fn exponential(
    r: &Read<'_>,
    w: usize,
    base: f64,
    random_on: bool,
    backoff: &mut Vec<(&'static str, Val)>,
    led: &mut Ledger,
) -> Result<(), Error> {
    let key = |k: &str| r.scoped(&format!("policies.{{}}.retry.backoff.{k}"));
    let mult = match r.from_level("exponentialBackoffMultiplier", w) {
        Some((_, n)) => n.num()?,
        None => 1.5,
    };
    note_from(
        r,
        "exponentialBackoffMultiplier",
        w,
        Fate::Mapped,
        &key("multiplier"),
        "wait x multiplier^(n-1) before retry n",
        led,
    );
    let cap = match r.from_level("exponentialMaxWaitDuration", w) {
        Some((_, n)) => {
            let v = ms(&n, Syntax::Spring)?;
            if v < 1.0 {
                return Err(n.err("must be at least 1 ms (IntervalFunction.checkInterval)"));
            }
            let how = match (v < base, random_on) {
                (true, _) => "below waitDuration: every wait is this cap".to_string(),
                (false, true) => "the longest wait; approximated: resilience4j caps the drawn wait, min(U(w (1 - f), w (1 + f)), cap), resim draws around the capped wait".to_string(),
                (false, false) => "the longest wait".to_string(),
            };
            let fate = if v < base || random_on {
                Fate::Approximated
            } else {
                Fate::Mapped
            };
            note_from(
                r,
                "exponentialMaxWaitDuration",
                w,
                fate,
                &key("cap_ms"),
                &how,
                led,
            );
            Some(v)
        }
        None => None,
    };
    let cap = cap.unwrap_or(NO_CAP_MS);
    backoff.push(("kind", Val::s("exponential")));
    backoff.push(("base_ms", Val::n(base.min(cap))));
    backoff.push(("cap_ms", Val::n(cap)));
    backoff.push(("multiplier", Val::n(mult)));
    Ok(())
}

/// Notes the field `name` as in effect from `level` on: the nearest there
/// with `fate`, `key` and `how`, the farther ones as overridden by it.
fn note_from(
    r: &Read<'_>,
    name: &str,
    level: usize,
    fate: Fate,
    key: &str,
    how: &str,
    led: &mut Ledger,
) {
    let all: Vec<_> = r
        .all(name)
        .into_iter()
        .filter(|(l, _)| *l >= level)
        .collect();
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

/// `breaker`; false when the breaker never opens (DISABLED, METRICS_ONLY)
/// and the scenario has none.
pub fn breaker(r: &Read<'_>, pol: &mut Tab, led: &mut Ledger) -> Result<bool, Error> {
    if !initial_state(r, led)? {
        return Ok(false);
    }
    let count_based = match r.get("slidingWindowType") {
        Some(n) => choice(&n, &["COUNT_BASED", "TIME_BASED"])? == "COUNT_BASED",
        None => true,
    };
    let whole = |f: &str, default: u64, low: u64| -> Result<u64, Error> {
        match r.get(f) {
            Some(n) => {
                let v = n.i32("a Java int")?;
                if v < low {
                    return Err(n.err(format!("must be at least {low} (resilience4j's rule)")));
                }
                Ok(v)
            }
            None => Ok(default),
        }
    };
    let size = whole("slidingWindowSize", 100, 1)?;
    let min = whole("minimumNumberOfCalls", 100, 1)?;
    let half = whole("permittedNumberOfCallsInHalfOpenState", 10, 1)?;
    let rate = match r.get("failureRateThreshold") {
        Some(n) => {
            let v = n.num()?;
            if !(1.0..=100.0).contains(&v) {
                return Err(n.err("must be between 1 and 100 (a percentage; resilience4j's rule)"));
            }
            v
        }
        None => 50.0,
    };
    let window = if count_based {
        Val::table(&[("count", Val::n(size as f64))])
    } else {
        Val::table(&[("ms", Val::n(size as f64 * 1000.0))])
    };
    let shape = if count_based {
        "COUNT_BASED: the last N calls, `window = { count = N }`"
    } else {
        "TIME_BASED: the calls of the last N seconds, `window = { ms = N x 1000 }`, where resilience4j counts whole epoch seconds (the current one and the N - 1 before: SlidingTimeWindowMetrics)"
    };
    let fate = if count_based {
        Fate::Mapped
    } else {
        Fate::Approximated
    };
    let key = r.scoped("policies.{}.breaker.window");
    note_code(r, "slidingWindowType", fate, &key, shape, led);
    note_code(r, "slidingWindowSize", fate, &key, shape, led);
    let min_calls = min_calls(r, count_based, size, min, led);
    recorded(r, led)?;
    let open = open_ms(r, led)?;
    half_open(r, led)?;
    pol.put(
        "breaker",
        Val::table(&[
            ("window", window),
            ("min_calls", Val::n(min_calls as f64)),
            ("failure_rate", Val::n(rate / 100.0)),
            ("open_ms", Val::n(open)),
            ("half_open_calls", Val::n(half as f64)),
        ]),
    );
    Ok(true)
}

/// The breaker's exception lists: resim's breaker has no outcome filter (it
/// counts timeouts, errors and sheds as failures), so they are ignored; where
/// they would count other outcomes in resilience4j (a class covers its
/// subclasses, CircuitBreakerConfig's record and ignore predicates), the
/// report says which, with a warning.
fn recorded(r: &Read<'_>, led: &mut Ledger) -> Result<(), Error> {
    if !r.has("recordExceptions") && !r.has("ignoreExceptions") {
        return Ok(());
    }
    let list = |f: &str| -> Result<Vec<String>, Error> {
        r.get(f).map_or(Ok(Vec::new()), |n| classes(&n))
    };
    let counted = exceptions::covered(
        &list("recordExceptions")?,
        &list("ignoreExceptions")?,
        "recorded",
        "ignored",
    );
    let ours = ["timeout", "error", "shed"];
    if counted.on == ours {
        return Ok(());
    }
    let how = format!(
        "resim's breaker has no outcome filter: it counts timeouts, errors and sheds as failures; these lists would count {} ({})",
        if counted.on.is_empty() {
            "none".to_string()
        } else {
            counted.on.join(", ")
        },
        counted.how
    );
    for f in ["recordExceptions", "ignoreExceptions"] {
        if let Some(n) = r.get(f) {
            led.renote(&n, Fate::Ignored, "", how.clone());
            led.warn_on(&n);
        }
    }
    Ok(())
}

/// `initialState`; false when the breaker never opens (DISABLED,
/// METRICS_ONLY).
fn initial_state(r: &Read<'_>, led: &mut Ledger) -> Result<bool, Error> {
    let key = r.scoped("policies.{}.breaker");
    let Some(n) = r.get("initialState") else {
        return Ok(true);
    };
    let s = choice(
        &n,
        &[
            "CLOSED",
            "OPEN",
            "HALF_OPEN",
            "DISABLED",
            "METRICS_ONLY",
            "FORCED_OPEN",
        ],
    )?;
    match s {
        "CLOSED" => note_code(
            r,
            "initialState",
            Fate::Mapped,
            &key,
            "closed, as resim's breaker starts",
            led,
        ),
        "DISABLED" | "METRICS_ONLY" => {
            note_code(
                r,
                "initialState",
                Fate::Mapped,
                "",
                format!("{s}: it never opens, so the scenario has no breaker"),
                led,
            );
            return Ok(false);
        }
        _ => note_code(
            r,
            "initialState",
            Fate::Approximated,
            &key,
            format!("{s}: resim's breaker starts closed"),
            led,
        ),
    }
    Ok(true)
}

/// `min_calls`: for a COUNT_BASED window, min(minimumNumberOfCalls,
/// slidingWindowSize), the minimum resilience4j applies (the
/// CircuitBreakerMetrics constructor: a count window never holds more calls
/// than its size, so a larger minimum would never be reached); for a
/// TIME_BASED one, minimumNumberOfCalls.
fn min_calls(r: &Read<'_>, count_based: bool, size: u64, min: u64, led: &mut Ledger) -> u64 {
    let key = r.scoped("policies.{}.breaker.min_calls");
    let (v, how) = if count_based {
        let v = min.min(size);
        (
            v,
            format!(
                "{v}: min(minimumNumberOfCalls {min}, slidingWindowSize {size}), the minimum resilience4j applies to a COUNT_BASED window (CircuitBreakerMetrics: the window never holds more than its size)"
            ),
        )
    } else {
        (
            min,
            format!("{min}: calls within the time window before it may open"),
        )
    };
    note_code(
        r,
        "minimumNumberOfCalls",
        Fate::Mapped,
        &key,
        how.clone(),
        led,
    );
    r.amend_absent(led, "minimumNumberOfCalls", key, how);
    v
}

/// `open_ms`: the open state's wait, built at the nearest level that sets
/// `waitDurationInOpenState` from that level's own flags
/// (configureCircuitBreakerOpenStateIntervalFunction; no config's flags
/// carry over). A level with both flags on is refused, as buildConfig does.
fn open_ms(r: &Read<'_>, led: &mut Ledger) -> Result<f64, Error> {
    const OPEN_FIELDS: [&str; 5] = [
        "enableExponentialBackoff",
        "exponentialBackoffMultiplier",
        "exponentialMaxWaitDurationInOpenState",
        "enableRandomizedWait",
        "randomizedWaitFactor",
    ];
    check_values(
        r,
        &[
            ("enableExponentialBackoff", "bool"),
            ("enableRandomizedWait", "bool"),
            ("exponentialBackoffMultiplier", "positive"),
            ("randomizedWaitFactor", "factor"),
            ("exponentialMaxWaitDurationInOpenState", "duration"),
        ],
    )?;
    let on = |f: &str, l: usize| -> Result<bool, Error> {
        r.all(f)
            .iter()
            .find(|(x, _)| *x == l)
            .map_or(Ok(false), |(_, n)| n.bool())
    };
    for (l, n) in r.all("enableRandomizedWait") {
        if on("enableExponentialBackoff", l)? && n.bool()? {
            return Err(n.err("is on with enableExponentialBackoff: resilience4j refuses both at once (CommonCircuitBreakerConfigurationProperties.buildConfig)"));
        }
    }
    let key = r.scoped("policies.{}.breaker.open_ms");
    let at = r.from_level("waitDurationInOpenState", 0);
    let open = match &at {
        Some((_, n)) => {
            let v = ms(n, Syntax::Spring)?;
            if v < 1.0 {
                return Err(n.err("must be at least 1 ms (resilience4j's rule)"));
            }
            v
        }
        None => 60_000.0,
    };
    let w = at.as_ref().map(|(l, _)| *l);
    let (expo, random) = match w {
        Some(l) => (
            on("enableExponentialBackoff", l)?,
            on("enableRandomizedWait", l)?,
        ),
        None => (false, false),
    };
    let how = match (expo, random) {
        (true, _) => {
            "the first opening's wait; approximated: resilience4j's grows x multiplier (1.5 unless given) each time it reopens, up to exponentialMaxWaitDurationInOpenState; resim's stays"
        }
        (_, true) => {
            "approximated: resilience4j draws each open state from U(w (1 - f), w (1 + f)); resim's lasts w"
        }
        _ => "how long it stays open",
    };
    let fate = if expo || random {
        Fate::Approximated
    } else {
        Fate::Mapped
    };
    note_code(r, "waitDurationInOpenState", fate, &key, how, led);
    for f in OPEN_FIELDS {
        for (l, n) in r.all(f) {
            if Some(l) == w {
                led.note(&n, fate, &key, how);
            } else {
                led.note(&n, Fate::Ignored, "", "does not act: only the level that sets waitDurationInOpenState builds the open state's wait, from its own fields (configureCircuitBreakerOpenStateIntervalFunction)");
                led.warn_last();
            }
        }
    }
    Ok(open)
}

/// `maxWaitDurationInHalfOpenState`: 0 (no limit) is resim's rule.
fn half_open(r: &Read<'_>, led: &mut Ledger) -> Result<(), Error> {
    let Some(n) = r.get("maxWaitDurationInHalfOpenState") else {
        return Ok(());
    };
    let v = ms(&n, Syntax::Spring)?;
    if v == 0.0 {
        note_code(
            r,
            "maxWaitDurationInHalfOpenState",
            Fate::Mapped,
            "",
            "0: the half-open state lasts until its trials end, as resim's",
            led,
        );
    } else {
        note_code(
            r,
            "maxWaitDurationInHalfOpenState",
            Fate::Approximated,
            "",
            "resilience4j leaves the half-open state after this long (to transitionToStateAfterWaitDuration, OPEN by default); resim's lasts until its trials end",
            led,
        );
    }
    Ok(())
}

/// What the breaker counts, given the aspects' order: resim's breaker
/// counts calls after their retries.
pub fn breaker_counts(inst: &Node<'_>, bn: &str, order: &Order, led: &mut Ledger) {
    let key = format!("policies.{bn}.breaker");
    if order.breaker_outside_retry {
        led.note(inst, Fate::Mapped, key, format!("outside the retry ({}): it counts calls after their retries, as resim's breaker does", order.text));
    } else {
        led.note(inst, Fate::Approximated, key, format!("inside the retry ({}): resilience4j's breaker counts every attempt, and while open refuses each attempt (a refusal the retry may retry); resim's counts calls after their retries and refuses the call", order.text));
    }
}

/// The time limiter's `timeoutDuration`: each attempt's timeout, or the
/// call's deadline when its aspect runs outside the retry.
pub fn time_limit(
    r: &Read<'_>,
    order: &Order,
    pol: &mut Tab,
    w: &mut Tab,
    led: &mut Ledger,
) -> Result<(), Error> {
    let t = match r.get("timeoutDuration") {
        Some(n) => {
            let v = ms(&n, Syntax::Spring)?;
            if v <= 0.0 {
                return Err(n.err("must be above 0 (resim needs a time limit above 0)"));
            }
            v
        }
        None => 1000.0,
    };
    if order.time_outside_retry {
        let key = format!("{}.timeout_ms", w.header);
        let how = format!(
            "the whole call's deadline: the time limiter runs outside the retry ({})",
            order.text
        );
        note_code(r, "timeoutDuration", Fate::Mapped, &key, how.clone(), led);
        r.amend_absent(led, "timeoutDuration", key, format!("1000: {how}"));
        w.put_noted(
            "timeout_ms",
            Val::n(t),
            "timelimiter timeoutDuration (outside the retry)",
        );
    } else {
        let key = r.scoped("policies.{}.timeout_ms");
        note_code(
            r,
            "timeoutDuration",
            Fate::Mapped,
            &key,
            format!(
                "each attempt's own timeout: the time limiter runs inside the retry ({})",
                order.text
            ),
            led,
        );
        pol.put_noted(
            "timeout_ms",
            Val::n(t),
            "timelimiter timeoutDuration, per attempt",
        );
    }
    Ok(())
}
