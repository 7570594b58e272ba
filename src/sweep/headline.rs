//! What a sweep reports when `[montecarlo] report` names nothing: the metrics
//! that answer "which row is better", and which way each one is better.
//!
//! The headline is chosen from the metric names alone (and, for the metrics a
//! compare axis varies, from the key paths the axes set), once, when the sweep
//! starts; the manifest keeps it (`headline`), so a merge shows the same. At
//! display time the failure kinds that never happened in any row are left out.
//!
//! - the answered share, and the times within which 50 % and 99 % of ALL
//!   requests got an answer (a failure counting as never answered):
//!   `outcomes.answered_pct`, `outcomes.p50_all_ms`, `outcomes.p99_all_ms`
//!   (`outcomes.all.*` with several workloads);
//! - each way of failing: `dropped`, `timed_out`, `shed`, `rejected`, `errors`,
//!   `refused`, `not_found`;
//! - the amplification of the workloads' calls (attempts per first try);
//! - for an axis that sets a limiter (`limiters.NAME....`), that limiter's
//!   rejects; for one that sets a breaker, a retry budget or a throttle, the
//!   workloads' calls it refused; for one that sets a fault, whether the run
//!   stayed stuck and its recovery time.

use crate::report::{Cell, Table};
use crate::table::metric_parts;

/// Which way a metric is better, by what it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// More is better (answered requests).
    Higher,
    /// Less is better (failures, latency, amplification).
    Lower,
}

/// The outcomes columns that count requests that failed, one per way.
pub const FAILURES: [&str; 7] = [
    "dropped",
    "timed_out",
    "shed",
    "rejected",
    "errors",
    "refused",
    "not_found",
];

/// Which way metric `name` is better, from its column (the name's last part);
/// `None` for a metric that is neither (a count of arrivals, a limit, a time
/// of the run).
pub fn better(name: &str) -> Option<Better> {
    let parts = metric_parts(name);
    let column = parts.last().map_or(name, String::as_str);
    const HIGHER: [&str; 4] = ["answered", "answered_pct", "ok", "successful"];
    const LOWER: [&str; 19] = [
        "failed",
        "dropped",
        "timed_out",
        "shed",
        "rejected",
        "errors",
        "refused",
        "not_found",
        "wasted_ms",
        "late_work_ms",
        "late_work_pct",
        "amplification",
        "retries",
        "budget_refused",
        "breaker_refused",
        "throttled",
        "recovery_ms",
        "recovered_at_ms",
        "stuck",
    ];
    if HIGHER.contains(&column) {
        return Some(Better::Higher);
    }
    if LOWER.contains(&column) || is_latency(column) {
        return Some(Better::Lower);
    }
    None
}

/// A request's time: a percentile, median, mean or worst of a response or
/// wait time (`p99_all_ms`, `mean_ms`, `p95_wait_ms`, `median_ms`).
fn is_latency(column: &str) -> bool {
    let Some(stem) = column.strip_suffix("_ms") else {
        return false;
    };
    let stem = stem
        .strip_suffix("_all")
        .or_else(|| stem.strip_suffix("_response"))
        .or_else(|| stem.strip_suffix("_wait"))
        .unwrap_or(stem);
    let percentile = stem
        .strip_prefix('p')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    percentile || matches!(stem, "median" | "mean" | "worst" | "answered_mean")
}

pub use crate::table::per_window;

/// The headline metrics of a sweep whose metrics are `metrics`, whose
/// workloads are `workloads` and whose compare axes set the key paths
/// `axis_paths` (see the module docs), in the order they are shown.
pub fn candidates(metrics: &[String], workloads: &[String], axis_paths: &[String]) -> Vec<String> {
    let has = |n: &str| metrics.iter().any(|m| m == n);
    let mut out: Vec<String> = Vec::new();
    let push = |n: String, out: &mut Vec<String>| {
        if has(&n) && !out.contains(&n) {
            out.push(n);
        }
    };
    let prefix = ["outcomes.", "outcomes.all."]
        .into_iter()
        .find(|p| has(&format!("{p}answered_pct")));
    if let Some(p) = prefix {
        for column in ["answered_pct", "p50_all_ms", "p99_all_ms"]
            .into_iter()
            .chain(FAILURES)
        {
            push(format!("{p}{column}"), &mut out);
        }
    }
    // a workload's call sites: `calls.<workload>....<column>` (one call site
    // in the run: `calls.<column>`)
    let sites = |column: &str| -> Vec<String> {
        if has(&format!("calls.{column}")) {
            return vec![format!("calls.{column}")];
        }
        metrics
            .iter()
            .filter(|m| {
                let parts = metric_parts(m);
                parts.len() > 2
                    && parts[0] == "calls"
                    && parts.last().is_some_and(|c| c == column)
                    && workloads.contains(&parts[1])
            })
            .take(3)
            .cloned()
            .collect()
    };
    for m in sites("amplification") {
        push(m, &mut out);
    }
    for path in axis_paths {
        let parts: Vec<&str> = path.split('.').collect();
        if parts.first() == Some(&"limiters") {
            if let Some(name) = parts.get(1) {
                let name = crate::table::quote_part(name.trim_matches('"'));
                push(format!("limiters.{name}.rejected"), &mut out);
            }
            push("limiters.rejected".into(), &mut out);
        }
        if parts.first() == Some(&"faults") {
            // how the run came back from the fault: stuck, and the recovery time
            for m in metrics.iter().filter(|m| {
                m.starts_with("recovery.") && (m.ends_with(".stuck") || m.ends_with(".recovery_ms"))
            }) {
                push(m.clone(), &mut out);
            }
        }
        for (word, column) in [
            ("breaker", "breaker_refused"),
            ("budget", "budget_refused"),
            ("throttle", "throttled"),
        ] {
            if path.contains(word) {
                for m in sites(column) {
                    push(m, &mut out);
                }
            }
        }
    }
    out
}

/// The `candidates` a summary shows: those it has, without a failure kind
/// whose mean is zero (or empty) in every compare row.
pub fn shown(candidates: &[String], summary: &Table) -> Vec<String> {
    let (Some(metric), Some(mean)) = (summary.column("metric"), summary.column("mean")) else {
        return Vec::new();
    };
    candidates
        .iter()
        .filter(|name| {
            let mut lines = summary
                .rows
                .iter()
                .filter(|r| r[metric].render() == name.as_str())
                .peekable();
            if lines.peek().is_none() {
                return false;
            }
            let failure = metric_parts(name)
                .last()
                .is_some_and(|c| FAILURES.contains(&c.as_str()));
            !failure
                || lines.any(|r| {
                    !matches!(r[mean], Cell::Empty | Cell::Int(0)) && r[mean] != Cell::Num(0.0)
                })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_direction_comes_from_what_the_metric_counts() {
        for (name, want) in [
            ("outcomes.answered_pct", Some(Better::Higher)),
            ("outcomes.all.answered", Some(Better::Higher)),
            ("outcomes.p99_all_ms", Some(Better::Lower)),
            ("outcomes.p50_all_ms", Some(Better::Lower)),
            ("outcomes.timed_out", Some(Better::Lower)),
            ("services.api.p95_wait_ms", Some(Better::Lower)),
            ("calls.main.api.amplification", Some(Better::Lower)),
            ("limiters.edge.rejected", Some(Better::Lower)),
            ("outcomes.requests", None),
            ("run.sim_time_ms", None),
            ("limiters.edge.passed", None),
            ("replicas.api.replica_1.arrived", None),
        ] {
            assert_eq!(better(name), want, "{name}");
        }
    }

    #[test]
    fn windows_are_told_by_their_key() {
        assert!(per_window("timeseries.window_start_ms_1000.answered"));
        assert!(per_window(
            "timeseries_services.window_start_ms_0.api.arrived"
        ));
        assert!(per_window("timeseries.\"window_start_ms_0.50\".answered"));
        assert!(!per_window("outcomes.answered"));
        assert!(!per_window("services.api.window_ms"));
    }

    #[test]
    fn the_headline_holds_outcomes_amplification_and_what_the_axes_set() {
        let metrics = names(&[
            "outcomes.requests",
            "outcomes.answered_pct",
            "outcomes.timed_out",
            "outcomes.shed",
            "outcomes.p50_all_ms",
            "outcomes.p99_all_ms",
            "calls.main.api.amplification",
            "calls.api.db.amplification",
            "calls.main.api.breaker_refused",
            "limiters.edge.rejected",
            "limiters.other.rejected",
        ]);
        let got = candidates(
            &metrics,
            &names(&["main"]),
            &names(&["limiters.edge.rate", "policies.p.breaker.failures"]),
        );
        assert_eq!(
            got,
            names(&[
                "outcomes.answered_pct",
                "outcomes.p50_all_ms",
                "outcomes.p99_all_ms",
                "outcomes.timed_out",
                "outcomes.shed",
                "calls.main.api.amplification",
                "limiters.edge.rejected",
                "calls.main.api.breaker_refused",
            ])
        );
        // several workloads: the row of them all
        let metrics = names(&["outcomes.all.answered_pct", "outcomes.a.answered_pct"]);
        assert_eq!(
            candidates(&metrics, &[], &[]),
            names(&["outcomes.all.answered_pct"])
        );
    }

    #[test]
    fn failure_kinds_that_never_happened_are_not_shown() {
        let mut t = Table::new("summary", "", names(&["variant", "metric", "mean"]));
        for (row, metric, mean) in [
            ("a", "outcomes.timed_out", Cell::Int(0)),
            ("b", "outcomes.timed_out", Cell::Num(2.5)),
            ("a", "outcomes.shed", Cell::Int(0)),
            ("b", "outcomes.shed", Cell::Num(0.0)),
            ("a", "outcomes.p99_all_ms", Cell::Empty),
        ] {
            t.push(vec![row.into(), metric.into(), mean]);
        }
        let all = names(&[
            "outcomes.p99_all_ms",
            "outcomes.timed_out",
            "outcomes.shed",
            "outcomes.rejected",
        ]);
        assert_eq!(
            shown(&all, &t),
            names(&["outcomes.p99_all_ms", "outcomes.timed_out"])
        );
    }
}
