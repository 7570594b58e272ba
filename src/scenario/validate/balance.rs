//! `services.NAME.balancer`: a kind's name, or a table of the kind and the
//! keys it reads. The keys every kind takes (`view`, `release`, the
//! connection limit's) are read here; the kind's own are read from its
//! declaration (`kinds::balance`).

use super::*;
use crate::kinds::balance::KINDS;
use crate::kinds::keys::{invalid, number, text};
use toml::Value;

/// The balancer at `path` of a service with `replicas` instances: its kind and
/// keys (defaults for a bare name).
pub(super) fn balancer(
    path: &str,
    raw: Option<&RawBalancer>,
    replicas: u32,
) -> R<(Balancer, BalanceKeys)> {
    let t = match raw {
        None => return Ok((Balancer::default(), BalanceKeys::default())),
        Some(RawBalancer::Kind(name)) => {
            let names: Vec<&str> = KINDS.iter().map(|d| d.name).collect();
            let kind = choice(path, name, &names)?;
            let decl = KINDS
                .iter()
                .find(|d| d.name == kind)
                .expect("a listed kind");
            if let Some(key) = decl.keys.iter().find(|k| k.default.is_none()) {
                return err(
                    path,
                    format!(
                        "`{kind}` needs its `{0}`: write `{{ kind = \"{kind}\", {0} = [...] }}`",
                        key.name
                    ),
                );
            }
            let mut t = toml::Table::new();
            t.insert("kind".into(), Value::String(kind.into()));
            return Ok((Balancer::read(path, &t, replicas)?, BalanceKeys::default()));
        }
        Some(RawBalancer::Table(t)) => t,
    };
    let kind = Balancer::read(path, t, replicas)?;
    let keys = BalanceKeys {
        view: one_of(
            &format!("{path}.view"),
            text(path, t, "view")?,
            &[
                ("global", BalanceView::Global),
                ("caller", BalanceView::Caller),
            ],
        )?,
        release: one_of(
            &format!("{path}.release"),
            text(path, t, "release")?,
            &[
                ("caller", BalanceRelease::Caller),
                ("replica", BalanceRelease::Replica),
            ],
        )?,
        conn_limit: conn_limit(path, t)?,
        outlier: None,
    };
    if keys.conn_limit.is_some() && keys.view == BalanceView::Caller {
        return err(
            format!("{path}.max_conn"),
            "a connection limit is one proxy's, in front of every caller: it needs `view = \"global\"`",
        );
    }
    Ok((kind, keys))
}

/// A whole-number key of the table, if given.
fn integer(path: &str, t: &toml::Table, key: &str) -> R<Option<i64>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Integer(i)) => Ok(Some(*i)),
        Some(v) => err(format!("{path}.{key}"), invalid(v, "an integer")),
    }
}

/// `max_conn`, `max_queue`, `queue_timeout_ms`: the connection limit per
/// replica and its queue (None without `max_conn`).
fn conn_limit(path: &str, t: &toml::Table) -> R<Option<ConnLimit>> {
    let timeout = t
        .get("queue_timeout_ms")
        .map(|v| number(&format!("{path}.queue_timeout_ms"), v))
        .transpose()?;
    let max_queue = integer(path, t, "max_queue")?;
    let Some(m) = integer(path, t, "max_conn")? else {
        let other = [
            ("max_queue", max_queue.is_some()),
            ("queue_timeout_ms", timeout.is_some()),
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
        max_queue: max_queue
            .map(|q| count_u32(&format!("{path}.max_queue"), q, 0))
            .transpose()?,
        queue_timeout: timeout
            .map(|ms| positive_ticks(&format!("{path}.queue_timeout_ms"), ms))
            .transpose()?,
    }))
}
