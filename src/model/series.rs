//! The time series' size: its window, and the rows a run may write per window
//! and in all. The validation refuses a scenario whose time series would pass
//! the limit before it runs, and the run stops when it would; both count here.

use super::{Limiter, Model, Target, Workload};
use crate::engine::Ticks;

/// The most time-series rows one run may write (a runaway limit).
pub const MAX_SERIES_ROWS: u64 = 10_000_000;

/// The time series' window when a scenario has faults but no `[output] window_ms`.
pub const DEFAULT_WINDOW_MS: f64 = 1000.0;

/// Bucket keys a limiter counts per window, at most.
pub const KEYED_WINDOWS_MAX: usize = 16;

/// The time series' window of a run of `model`: `[output] window_ms`, else
/// [`DEFAULT_WINDOW_MS`] when it has faults, else none (no time series).
pub fn window_of(model: &Model) -> Option<Ticks> {
    model
        .window
        .or_else(|| (!model.faults.is_empty()).then(|| Ticks::from_ms(DEFAULT_WINDOW_MS)))
}

/// Rows `limiter` adds to `timeseries_limiters.csv` per window, at most: its own
/// (`key = all`), and one per bucket key up to [`KEYED_WINDOWS_MAX`] when it has a
/// key. The runaway limit counts them (a bound: keys appear as the run meets them).
pub fn rows_per_window(limiter: &Limiter) -> u64 {
    1 + if limiter.key.is_empty() {
        0
    } else {
        KEYED_WINDOWS_MAX as u64
    }
}

/// Rows per window of the time series' tables besides the services and call
/// sites rows, at most: `timeseries.csv`'s (one, or one per workload and `all`
/// with several) and `timeseries_limiters.csv`'s. With the services rows and
/// the call sites rows (see [`call_site_rows`]) they make what
/// [`MAX_SERIES_ROWS`] bounds.
pub fn client_and_limiter_rows(workloads: usize, limiters: &[Limiter]) -> u64 {
    let clients = if workloads > 1 {
        workloads as u64 + 1
    } else {
        1
    };
    clients + limiters.iter().map(rows_per_window).sum::<u64>()
}

/// Rows per window of `timeseries_replicas.csv`: one per replica of each
/// server with replicas.
pub fn replica_rows(services: &[super::Service]) -> u64 {
    services
        .iter()
        .filter(|s| matches!(s.handler, super::Handler::Server(_)) && s.replicas > 1)
        .map(|s| u64::from(s.replicas))
        .sum()
}

/// Rows per window of `timeseries_calls.csv`: one per call site of `model`, a
/// distinct (caller, target) pair: a workload and the service owning each
/// route it sends to (or no service), a service and each target of its plan's
/// calls. The run numbers the same sites (`sim::call_sites`).
pub fn call_site_rows(model: &Model) -> u64 {
    let mut sites: Vec<Site> = Vec::new();
    for (w, named) in model.workloads.iter().enumerate() {
        let routes: Vec<usize> = match &named.workload {
            Workload::Sequence { template, .. }
            | Workload::Open { template, .. }
            | Workload::Closed { template, .. } => vec![template.route],
            Workload::Ladder(l) => vec![l.template.route],
            Workload::Script { groups, .. } => {
                groups.iter().flat_map(|g| g.routes.clone()).collect()
            }
            Workload::Probe { routes, .. } => (0..*routes).collect(),
        };
        for r in routes {
            sites.push((0, w, model.routes[r].service.map(|s| (0, s))));
        }
    }
    for (s, service) in model.services.iter().enumerate() {
        let Some(plan) = service.handler.plan() else {
            continue;
        };
        for call in plan.branches.iter().flat_map(|b| &b.calls) {
            sites.push((1, s, Some(target_key(call.target))));
        }
    }
    sites.sort_unstable();
    sites.dedup();
    sites.len() as u64
}

/// A call site: who calls (0 a workload, 1 a service) and its index, and the
/// target ([`target_key`]; `None`: a route no service owns).
type Site = (u8, usize, Option<(u8, usize)>);

/// A call's target as a site's key: a service or a dependency, by index.
fn target_key(t: Target) -> (u8, usize) {
    match t {
        Target::Service(s) => (0, s),
        Target::Dependency(d) => (1, d),
    }
}
