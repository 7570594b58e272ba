//! `services.NAME.balancer`: a kind's name, or a table of the kind and the
//! keys it reads.

use super::*;

/// The keys each kind reads besides `kind`, `view`, `release` and the
/// connection limit's ([`LIMIT_KEYS`]).
fn keys_of(kind: Balancer) -> &'static [&'static str] {
    match kind {
        Balancer::LeastRequest => &["choice_count", "active_request_bias", "weights"],
        Balancer::PeakEwma => &["decay_ms"],
        Balancer::WeightedRoundRobin => &["weights"],
        Balancer::LeastOutstanding => &["tie_break"],
        Balancer::HaproxyRandom => &["draws", "weights"],
        Balancer::RoundRobin | Balancer::Random | Balancer::TwoChoices => &[],
    }
}

/// The connection limit's keys, read by every kind.
const LIMIT_KEYS: [&str; 3] = ["max_conn", "max_queue", "queue_timeout_ms"];

/// The most draws a pick may make (`choice_count`, `draws`): Envoy and
/// HAProxy set no bound, but past a few dozen more draws change nothing but
/// the run's time.
const MAX_DRAWS: i64 = 1000;

/// HAProxy's largest server `weight`.
const HAPROXY_MAX_WEIGHT: f64 = 256.0;

/// The balancer at `path` of a service with `replicas` instances: its kind and
/// keys (defaults for a bare name).
pub(super) fn balancer(
    path: &str,
    raw: Option<&RawBalancer>,
    replicas: u32,
) -> R<(Balancer, BalanceKeys)> {
    let keys = BalanceKeys::default();
    let t = match raw {
        None => return Ok((Balancer::default(), keys)),
        Some(RawBalancer::Kind(name)) => {
            let kind = one_of(path, Some(name), &Balancer::NAMES)?;
            if kind == Balancer::WeightedRoundRobin {
                return err(
                    path,
                    "`weighted_round_robin` needs its `weights`: write `{ kind = \"weighted_round_robin\", weights = [...] }`",
                );
            }
            return Ok((kind, keys));
        }
        Some(RawBalancer::Table(t)) => t,
    };
    let kind = one_of(&format!("{path}.kind"), Some(&t.kind), &Balancer::NAMES)?;
    only_its_keys(path, t, kind)?;
    let keys = table_keys(path, t, kind, replicas)?;
    if kind == Balancer::WeightedRoundRobin && keys.weights.is_empty() {
        return err(
            format!("{path}.weights"),
            "missing: `weighted_round_robin` needs one positive weight per replica",
        );
    }
    Ok((kind, keys))
}

/// A key set that `kind` does not read is an error naming it.
fn only_its_keys(path: &str, t: &RawBalancerTable, kind: Balancer) -> R<()> {
    let set = [
        ("choice_count", t.choice_count.is_some()),
        ("active_request_bias", t.active_request_bias.is_some()),
        ("decay_ms", t.decay_ms.is_some()),
        ("weights", t.weights.is_some()),
        ("tie_break", t.tie_break.is_some()),
        ("draws", t.draws.is_some()),
    ];
    let own = keys_of(kind);
    let Some((key, _)) = set.iter().find(|(k, on)| *on && !own.contains(k)) else {
        return Ok(());
    };
    let mut reads: Vec<&str> = vec!["kind", "view", "release"];
    reads.extend(LIMIT_KEYS);
    reads.extend(own.iter().copied());
    let last = reads.pop().unwrap_or("kind");
    let reads = format!("{} and `{last}`", list(reads));
    err(
        format!("{path}.{key}"),
        format!("`{}` does not read `{key}`: it reads {reads}", t.kind),
    )
}

/// The table's keys, each checked, over the defaults.
fn table_keys(path: &str, t: &RawBalancerTable, kind: Balancer, replicas: u32) -> R<BalanceKeys> {
    let mut keys = BalanceKeys {
        view: one_of(
            &format!("{path}.view"),
            t.view.as_deref(),
            &[
                ("global", BalanceView::Global),
                ("caller", BalanceView::Caller),
            ],
        )?,
        release: one_of(
            &format!("{path}.release"),
            t.release.as_deref(),
            &[
                ("caller", BalanceRelease::Caller),
                ("replica", BalanceRelease::Replica),
            ],
        )?,
        tie_break: one_of(
            &format!("{path}.tie_break"),
            t.tie_break.as_deref(),
            &TieBreak::NAMES,
        )?,
        ..BalanceKeys::default()
    };
    if let Some(c) = t.choice_count {
        keys.choice_count = draws(&format!("{path}.choice_count"), c, 2)?;
    }
    if let Some(d) = t.draws {
        keys.draws = draws(&format!("{path}.draws"), d, 1)?;
    }
    if let Some(b) = t.active_request_bias {
        keys.active_request_bias = non_negative(&format!("{path}.active_request_bias"), b)?;
    }
    if let Some(d) = t.decay_ms {
        keys.decay = positive_ticks(&format!("{path}.decay_ms"), d)?;
    }
    if let Some(w) = &t.weights {
        keys.weights = weights(&format!("{path}.weights"), w, kind, replicas)?;
    }
    keys.conn_limit = conn_limit(path, t)?;
    if keys.conn_limit.is_some() && keys.view == BalanceView::Caller {
        return err(
            format!("{path}.max_conn"),
            "a connection limit is one proxy's, in front of every caller: it needs `view = \"global\"`",
        );
    }
    Ok(keys)
}

/// A number of draws per pick (`choice_count`, `draws`): `min` to
/// [`MAX_DRAWS`], with replacement, so it may exceed the replicas.
fn draws(path: &str, v: i64, min: i64) -> R<u32> {
    let n = count_u32(path, v, min)?;
    if i64::from(n) > MAX_DRAWS {
        return err(
            path,
            format!(
                "{n} draws per pick: must be at most {MAX_DRAWS} (draws are with replacement; a few dozen already find the least loaded of any few replicas)"
            ),
        );
    }
    Ok(n)
}

/// One positive weight per replica; `haproxy_random`'s are HAProxy's
/// server weights, whole numbers from 1 to 256 (its ring holds 16 points
/// per unit).
fn weights(at: &str, w: &[f64], kind: Balancer, replicas: u32) -> R<Vec<f64>> {
    if w.len() != replicas as usize {
        return err(
            at,
            format!(
                "{} weights for {replicas} replicas: one weight per replica",
                w.len()
            ),
        );
    }
    for (i, &x) in w.iter().enumerate() {
        let p = format!("{at}.{i}");
        positive(&p, x)?;
        if kind == Balancer::HaproxyRandom && (x.fract() != 0.0 || x > HAPROXY_MAX_WEIGHT) {
            return err(
                p,
                format!(
                    "{}: HAProxy's weights are whole numbers from 1 to 256",
                    num(x)
                ),
            );
        }
    }
    // nginx's smooth weighted round robin (src/http/ngx_http_upstream_round_robin.c,
    // ngx_http_upstream_get_peer) takes the sum of the weights off the picked
    // peer: a sum past the largest double is infinite, and every pick then
    // went to the first replica. Only ratios count, so the bound holds for
    // every kind that takes weights.
    if !w.iter().sum::<f64>().is_finite() {
        return err(
            at,
            format!(
                "the weights add up to more than {}: only their ratios count, so divide them all by the same number",
                num(f64::MAX)
            ),
        );
    }
    Ok(w.to_vec())
}

/// `max_conn`, `max_queue`, `queue_timeout_ms`: the connection limit per
/// replica and its queue (None without `max_conn`).
fn conn_limit(path: &str, t: &RawBalancerTable) -> R<Option<ConnLimit>> {
    let Some(m) = t.max_conn else {
        let other = [
            ("max_queue", t.max_queue.is_some()),
            ("queue_timeout_ms", t.queue_timeout_ms.is_some()),
        ];
        if let Some((key, _)) = other.iter().find(|(_, on)| *on) {
            return err(
                format!("{path}.{key}"),
                format!(
                    "`{key}` is the queue in front of replicas with a connection limit: set `max_conn` beside it"
                ),
            );
        }
        return Ok(None);
    };
    Ok(Some(ConnLimit {
        max_conn: count_u32(&format!("{path}.max_conn"), m, 1)?,
        max_queue: t
            .max_queue
            .map(|q| count_u32(&format!("{path}.max_queue"), q, 0))
            .transpose()?,
        queue_timeout: t
            .queue_timeout_ms
            .map(|ms| positive_ticks(&format!("{path}.queue_timeout_ms"), ms))
            .transpose()?,
    }))
}
