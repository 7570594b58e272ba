//! What a metric's values are, by definition, never guessed from the values:
//! it decides which interval the summary gives the metric.
//!
//! - **Proportion**: a boolean cell of the run's tables (`recovery.stuck`), written
//!   1 / 0; its mean is a share of the replications. Wilson score interval (and
//!   Tango's for a paired difference), so the interval stays inside [0, 1] and is
//!   never of zero width at 0 of n or n of n. Which metrics are booleans is read
//!   from the cells of replication 0 of every row (their type, not their values)
//!   and kept in the manifest (`proportions`), since `replications.csv` writes
//!   them as plain 0 and 1.
//! - **Percent**: a column ending in `_pct`, a share of a whole in percent
//!   (`answered_pct`, `waited_pct`): Student t, intersected with [0, 100]
//!   ([-100, 100] for a paired difference). The true mean lies in that range, so
//!   cutting off the part outside loses no coverage.
//! - **Censored**: a time until something that may not happen before the run
//!   ends: `recovered_at_ms` and `recovery_ms` of the `recovery` table, empty
//!   when the same row's `stuck` is 1. A stuck replication counts as "beyond the
//!   run's end", not as missing (see `summary`).
//! - **Plain**: every other metric: Student t.

/// How a metric is summarized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Plain,
    Percent,
    Proportion,
    /// Censored by the metric at index `stuck` (its `stuck` column) being 1.
    Censored {
        stuck: usize,
    },
}

/// The columns of the `recovery` table that are empty when the run stayed stuck.
const CENSORED_COLUMNS: [&str; 2] = ["recovered_at_ms", "recovery_ms"];

/// The kind of every metric of `metrics`; `proportions` names the boolean ones.
pub fn kinds(metrics: &[String], proportions: &[String]) -> Vec<Kind> {
    metrics
        .iter()
        .map(|name| {
            if proportions.contains(name) {
                return Kind::Proportion;
            }
            if let Some(stuck) = censored_by(name, metrics) {
                return Kind::Censored { stuck };
            }
            let column = name.rsplit('.').next().unwrap_or(name);
            if column.ends_with("_pct") {
                Kind::Percent
            } else {
                Kind::Plain
            }
        })
        .collect()
}

/// For `recovery[.<fault>].recovery_ms` (or `recovered_at_ms`): the index of
/// `recovery[.<fault>].stuck` in `metrics`.
fn censored_by(name: &str, metrics: &[String]) -> Option<usize> {
    let (prefix, column) = name.rsplit_once('.')?;
    if !(prefix == "recovery" || prefix.starts_with("recovery.")) {
        return None;
    }
    if !CENSORED_COLUMNS.contains(&column) {
        return None;
    }
    let stuck = format!("{prefix}.stuck");
    metrics.iter().position(|m| *m == stuck)
}

impl Kind {
    /// The `interval` cell of a summary line of this kind (a censored metric
    /// with stuck replications has none: see `summary`).
    pub fn interval(self) -> &'static str {
        match self {
            Kind::Plain | Kind::Censored { .. } => "t",
            Kind::Percent => "t-clipped",
            Kind::Proportion => "wilson",
        }
    }

    /// The `interval` cell of a paired difference of this kind.
    pub fn paired_interval(self) -> &'static str {
        match self {
            Kind::Proportion => "tango",
            other => other.interval(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_names_and_the_booleans() {
        let metrics: Vec<String> = [
            "outcomes.answered",
            "outcomes.answered_pct",
            "recovery.recovered_at_ms",
            "recovery.recovery_ms",
            "recovery.stuck",
            "recovery.fault_1.recovery_ms",
            "recovery.fault_1.stuck",
            "recovery.fault_2.recovery_ms",
            "services.api.recovery_ms",
        ]
        .map(String::from)
        .to_vec();
        let proportions = [
            "recovery.stuck".to_string(),
            "recovery.fault_1.stuck".into(),
        ];
        assert_eq!(
            kinds(&metrics, &proportions),
            [
                Kind::Plain,
                Kind::Percent,
                Kind::Censored { stuck: 4 },
                Kind::Censored { stuck: 4 },
                Kind::Proportion,
                Kind::Censored { stuck: 6 },
                Kind::Proportion,
                // no stuck column beside it, or not the recovery table
                Kind::Plain,
                Kind::Plain,
            ]
        );
    }
}
