//! `[limiters]`: algorithm, limit, window, key and mode of each rate limiter
//! (a concurrency limiter's keys: [`super::concurrency`]).

use super::*;

/// Every `[limiters.NAME]`, in declaration order.
pub(super) fn limiters(raw: &RawScenario, limits: &RunLimits) -> R<Vec<Limiter>> {
    raw.limiters
        .iter()
        .map(|(name, l)| limiter(&format!("limiters.{name}"), name, l, limits))
        .collect()
}

fn limiter(path: &str, name: &str, l: &RawLimiter, limits: &RunLimits) -> R<Limiter> {
    let concurrent = one_of(
        &format!("{path}.kind"),
        l.kind.as_deref(),
        &[("rate", false), ("concurrency", true)],
    )?;
    if concurrent {
        return super::concurrency::limiter(path, name, l);
    }
    super::concurrency::no_concurrency_keys(path, l)?;
    let algorithm = one_of(
        &format!("{path}.algorithm"),
        l.algorithm.as_deref(),
        &[
            ("fixed-window", Algorithm::FixedWindow),
            ("sliding-log", Algorithm::SlidingLog),
            ("sliding-counter", Algorithm::SlidingCounter),
            ("token-bucket", Algorithm::TokenBucket),
            ("gcra", Algorithm::Gcra),
        ],
    )?;
    let key = super::limiter_key::key(path, &l.key)?;
    let mode = one_of(
        &format!("{path}.mode"),
        l.mode.as_deref(),
        &[
            ("reject", LimiterMode::Reject),
            ("throttle", LimiterMode::Throttle),
        ],
    )?;
    let refill = one_of(
        &format!("{path}.refill"),
        l.refill.as_deref(),
        &[
            ("continuous", Refill::Continuous),
            ("discrete", Refill::Discrete),
        ],
    )?;
    let overflow = one_of(
        &format!("{path}.overflow"),
        l.overflow.as_deref(),
        &[
            ("hold", Overflow::Hold),
            ("reject-now", Overflow::RejectNow),
        ],
    )?;
    let required =
        |key: &str| ScenarioError::new(format!("{path}.{key}"), "missing: this key is required");
    let limit = count(
        &format!("{path}.limit"),
        l.limit.ok_or_else(|| required("limit"))?,
        1,
    )?;
    let window_ms = l.window_ms.ok_or_else(|| required("window_ms"))?;
    if algorithm == Algorithm::SlidingLog && limit > limits.max_in_flight {
        // the log keeps one entry per request let through within the window, per
        // bucket: the limit is what bounds its memory
        return err_vs(
            format!("{path}.limit"),
            "scenario.max_in_flight",
            format!(
                "a sliding-log limiter keeps one entry per request let through within window_ms, so its limit must be <= scenario.max_in_flight = {} (got {limit}); raise scenario.max_in_flight, or use sliding-counter, which keeps two counts per bucket",
                limits.max_in_flight
            ),
        );
    }
    Ok(Limiter {
        name: name.to_string(),
        algorithm,
        key,
        limit,
        window: positive_ticks(&format!("{path}.window_ms"), window_ms)?,
        mode,
        max_delay: ticks(
            &format!("{path}.max_delay_ms"),
            l.max_delay_ms.unwrap_or(0.0),
        )?,
        refill,
        overflow,
        concurrency: None,
        scope: crate::model::Scope::Replica,
    })
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
        let written = match rl.scope.as_deref() {
            None => None,
            Some(v) => Some(one_of(
                &path,
                Some(v),
                &[("replica", Scope::Replica), ("service", Scope::Service)],
            )?),
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
