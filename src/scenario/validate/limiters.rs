//! `[limiters]`: each limiter's kind (`rate` or `concurrency`), its key and
//! its scope; the algorithm and its keys are read by the kinds' declarations
//! ([`crate::kinds::rate`], [`crate::kinds::concurrency`]).

use super::*;
use crate::kinds::keys::{Decl, invalid, text};
use crate::kinds::{concurrency, rate};

/// The keys every limiter reads, whatever its kind.
const PASSED: [&str; 3] = ["kind", "key", "scope"];

/// Every `[limiters.NAME]`, in declaration order.
pub(super) fn limiters(raw: &RawScenario, limits: &RunLimits) -> R<Vec<Limiter>> {
    raw.limiters
        .iter()
        .map(|(name, l)| limiter(&format!("limiters.{name}"), name, &l.0, limits))
        .collect()
}

fn limiter(path: &str, name: &str, t: &toml::Table, limits: &RunLimits) -> R<Limiter> {
    let kind = text(path, t, "kind")?;
    let concurrent = one_of(
        &format!("{path}.kind"),
        kind,
        &[("rate", false), ("concurrency", true)],
    )?;
    other_kinds_keys(path, t, concurrent)?;
    let rule = if concurrent {
        LimiterRule::Concurrency(concurrency::Concurrency::read(path, t, &PASSED)?)
    } else {
        let r = rate::Rate::read(path, t, &PASSED)?;
        if matches!(r.algorithm, RateAlgorithm::SlidingLog(_)) && r.limit > limits.max_in_flight {
            // the log keeps one entry per request let through within the
            // window, per bucket: the limit is what bounds its memory
            return err_vs(
                format!("{path}.limit"),
                "scenario.max_in_flight",
                format!(
                    "a sliding-log limiter keeps one entry per request let through within window_ms, so its limit must be <= scenario.max_in_flight = {} (got {}); raise scenario.max_in_flight, or use sliding-counter, which keeps two counts per bucket",
                    limits.max_in_flight, r.limit
                ),
            );
        }
        LimiterRule::Rate(r)
    };
    Ok(Limiter {
        name: name.to_string(),
        key: key(path, t.get("key"))?,
        rule,
        scope: Scope::Replica,
    })
}

/// The keys of `decls` (each once, in order).
fn keys_of<'a>(decls: impl IntoIterator<Item = &'a &'static Decl>) -> Vec<&'static str> {
    let mut keys: Vec<&str> = Vec::new();
    for k in decls.into_iter().flat_map(|d| d.keys) {
        if !keys.contains(&k.name) {
            keys.push(k.name);
        }
    }
    keys
}

/// A key only the other kind of limiter reads is an error that says so.
fn other_kinds_keys(path: &str, t: &toml::Table, concurrent: bool) -> R<()> {
    let rate_keys = keys_of(std::iter::once(&&rate::SHARED).chain(rate::KINDS));
    let concurrency_keys = keys_of(concurrency::KINDS);
    for key in t.keys().map(String::as_str) {
        if concurrent && rate_keys.contains(&key) && !concurrency_keys.contains(&key) {
            return err(
                format!("{path}.{key}"),
                format!(
                    "`{key}` is a key of a rate limiter: a concurrency limiter (kind = \"concurrency\") admits a request while fewer than its limit are in flight and rejects it otherwise"
                ),
            );
        }
        if !concurrent && concurrency_keys.contains(&key) && !rate_keys.contains(&key) {
            let owners = concurrency::KINDS
                .iter()
                .filter(|d| d.key(key).is_some())
                .map(|d| d.name);
            return err(
                format!("{path}.{key}"),
                format!(
                    "`{key}` is a key of a concurrency limiter (algorithm {}): add kind = \"concurrency\", or remove it",
                    list(owners)
                ),
            );
        }
    }
    Ok(())
}

/// The fields of a limiter's `key`, each once (`[]` when left out).
fn key(path: &str, v: Option<&toml::Value>) -> R<Vec<Field>> {
    let items = match v {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(items)) => items,
        Some(other) => return err(format!("{path}.key"), invalid(other, "a sequence")),
    };
    let mut key: Vec<Field> = Vec::with_capacity(items.len());
    for (i, f) in items.iter().enumerate() {
        let fp = format!("{path}.key.{i}");
        let toml::Value::String(f) = f else {
            return err(fp, invalid(f, "a string"));
        };
        let field = one_of(
            &fp,
            Some(f),
            &[
                ("client", Field::Client),
                ("member", Field::Member),
                ("route", Field::Route),
                ("access", Field::Access),
            ],
        )?;
        if key.contains(&field) {
            return err(fp, format!("`{}` is already in the key", field.name()));
        }
        key.push(field);
    }
    Ok(key)
}

/// Each limiter's `scope` once the gateway and the services are known: a
/// limiter a gateway rule lists is one shared state (`service`; `replica`
/// written there is refused: the gateway is one proxy in front of every
/// replica, so it has no replica to keep a state for); otherwise `replica`
/// unless `scope = "service"` is written. A limiter kept per replica may be
/// in the middleware of at most one replicated service (its rows per replica
/// name that service's replicas), and not in front of a queue before the
/// replicas (`balancer.max_conn`: the proxy's queue, not the replica, holds
/// a request until a replica has room).
pub(super) fn scopes(
    raw: &RawScenario,
    limiters: &mut [Limiter],
    gateway: Option<&Gateway>,
    services: &[Service],
) -> R<()> {
    for (id, (l, (name, rl))) in limiters.iter_mut().zip(&raw.limiters).enumerate() {
        let path = format!("limiters.{name}.scope");
        let written = match rl.0.get("scope") {
            None => None,
            Some(toml::Value::String(v)) => Some(one_of(
                &path,
                Some(v),
                &[("replica", Scope::Replica), ("service", Scope::Service)],
            )?),
            Some(v) => return err(path, invalid(v, "a string")),
        };
        let at_gateway = gateway.is_some_and(|g| g.rules.iter().any(|r| r.limiters.contains(&id)));
        if at_gateway && written == Some(Scope::Replica) {
            return err(
                path,
                format!(
                    "`{name}` is listed by a gateway rule: a gateway is one proxy in front of every replica, so its limiter is one shared state; remove `scope` (a gateway's limiter is `service`), or list a limiter of its own in the service's middleware"
                ),
            );
        }
        l.scope = if at_gateway {
            Scope::Service
        } else {
            written.unwrap_or(Scope::Replica)
        };
        if l.scope != Scope::Replica {
            continue;
        }
        let replicated: Vec<&Service> = services
            .iter()
            .filter(|s| s.replicas > 1 && s.middleware.contains(&id))
            .collect();
        if let Some(s) = replicated.iter().find(|s| s.balance.conn_limit.is_some()) {
            return err(
                path,
                format!(
                    "`{name}` is kept per replica (scope = \"replica\", the default in middleware) in the middleware of `{}`, whose replicas have a queue in front (balancer.max_conn): write scope = \"service\", the limit in front of that queue",
                    s.name
                ),
            );
        }
        if let [a, b, ..] = replicated.as_slice() {
            return err(
                path,
                format!(
                    "`{name}` is kept per replica (scope = \"replica\", the default in middleware) in the middleware of two replicated services, `{}` and `{}`: give each service a limiter of its own, or write scope = \"service\" for one state they share",
                    a.name, b.name
                ),
            );
        }
    }
    Ok(())
}
