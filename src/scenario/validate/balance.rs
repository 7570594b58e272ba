//! `services.NAME.balancer`: a kind's name, or a table of the kind and the
//! keys it reads.

use super::*;

/// The keys each kind reads besides `kind` and `view`.
fn keys_of(kind: Balancer) -> &'static [&'static str] {
    match kind {
        Balancer::LeastRequest => &["choice_count", "active_request_bias", "weights"],
        Balancer::PeakEwma => &["decay_ms"],
        Balancer::WeightedRoundRobin => &["weights"],
        Balancer::RoundRobin
        | Balancer::Random
        | Balancer::LeastOutstanding
        | Balancer::TwoChoices => &[],
    }
}

/// The balancer at `path` of a service with `replicas` instances: its kind and
/// keys (defaults for a bare name).
pub(super) fn balancer(
    path: &str,
    raw: Option<&RawBalancer>,
    replicas: u32,
) -> R<(Balancer, BalanceKeys)> {
    let mut keys = BalanceKeys::default();
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
    let set = [
        ("choice_count", t.choice_count.is_some()),
        ("active_request_bias", t.active_request_bias.is_some()),
        ("decay_ms", t.decay_ms.is_some()),
        ("weights", t.weights.is_some()),
    ];
    let own = keys_of(kind);
    if let Some((key, _)) = set.iter().find(|(k, on)| *on && !own.contains(k)) {
        let reads = if own.is_empty() {
            "no key but `kind`, `view` and `release`".to_string()
        } else {
            format!(
                "`kind`, `view`, `release` and {}",
                list(own.iter().copied())
            )
        };
        return err(
            format!("{path}.{key}"),
            format!("`{}` does not read `{key}`: it reads {reads}", t.kind),
        );
    }
    keys.view = one_of(
        &format!("{path}.view"),
        t.view.as_deref(),
        &[
            ("global", BalanceView::Global),
            ("caller", BalanceView::Caller),
        ],
    )?;
    keys.release = one_of(
        &format!("{path}.release"),
        t.release.as_deref(),
        &[
            ("caller", BalanceRelease::Caller),
            ("replica", BalanceRelease::Replica),
        ],
    )?;
    if let Some(c) = t.choice_count {
        let at = format!("{path}.choice_count");
        let c = count_u32(&at, c, 2)?;
        if c > replicas {
            return err(
                at,
                format!(
                    "draws {c} distinct replicas of {replicas}: must be at most its `replicas`"
                ),
            );
        }
        keys.choice_count = c;
    }
    if let Some(b) = t.active_request_bias {
        keys.active_request_bias = non_negative(&format!("{path}.active_request_bias"), b)?;
    }
    if let Some(d) = t.decay_ms {
        keys.decay = positive_ticks(&format!("{path}.decay_ms"), d)?;
    }
    if let Some(w) = &t.weights {
        let at = format!("{path}.weights");
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
            positive(&format!("{at}.{i}"), x)?;
        }
        keys.weights = w.clone();
    }
    if kind == Balancer::WeightedRoundRobin && keys.weights.is_empty() {
        return err(
            format!("{path}.weights"),
            "missing: `weighted_round_robin` needs one positive weight per replica",
        );
    }
    Ok((kind, keys))
}
