//! Open-workload run figures: measured time-average concurrency next to what
//! Little's law predicts from the arrival rate and the mean times.

use super::Results;
use crate::model::{Model, Workload};
use crate::table::Table;

/// The arrival rate of a model whose workloads are all open: their sum.
fn open_rate(model: &Model) -> Option<f64> {
    model
        .workloads
        .iter()
        .map(|w| match w.workload {
            Workload::Open { rate_rps, .. } => Some(rate_rps),
            _ => None,
        })
        .sum()
}

pub fn tables(results: &mut Results, out: &mut Vec<Table>) {
    if !results.any(|m| open_rate(m).is_some()) {
        return;
    }
    let mut t = results.table(
        "run",
        "Open arrivals: measured time-average concurrency vs Little's law (L = lambda x W)",
        &[],
        &[
            "requests",
            "sim_time_ms",
            "events",
            "mean_in_flight",
            "littles_law_in_flight",
            "mean_dependency_work",
            "littles_law_dependency_work",
        ],
    );
    for i in 0..results.runs.len() {
        let Some(rate_rps) = open_rate(&results.scenario.rows[i].model) else {
            continue;
        };
        let mut cells = results.axis_cells(i);
        let r = &results.runs[i];
        let per_ms = rate_rps / 1000.0;
        // per request: no figure without a request (empty, never 0)
        let n = (r.outcomes.requests > 0).then_some(r.outcomes.requests as f64);
        let work_ms: f64 = r.dependencies.iter().map(|d| d.work_ms).sum();
        cells.extend([
            r.outcomes.requests.into(),
            r.sim_time_ms.into(),
            r.events.into(),
            r.mean_in_flight.into(),
            n.map(|n| per_ms * r.in_system_ms / n).into(),
            r.mean_dependency_work.into(),
            n.map(|n| per_ms * work_ms / n).into(),
        ]);
        t.push(cells);
    }
    t.notes.push(
        "mean_in_flight: requests sent and not yet answered or given up, averaged until the last one left; \
         littles_law_in_flight = rate x mean time in the system (timed-out requests until their timeout). \
         mean_dependency_work counts calls a dependency is working on, abandoned ones included; \
         littles_law_dependency_work = rate x dependency work per request"
            .into(),
    );
    out.push(t);
}
