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
            "offered_rps",
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
        let model = &results.scenario.rows[i].model;
        let mut cells = results.axis_cells(i);
        let r = &results.runs[i];
        // the rate offered: the requests sent over the span the means cover,
        // as faults' arrival_factor and the drain left it (the written rate
        // when nothing was sent)
        let span_ms = r.last_exit_ms - model.warmup.as_ms().min(r.last_exit_ms);
        let per_ms = if r.outcomes.requests > 0 && span_ms > 0.0 {
            r.outcomes.requests as f64 / span_ms
        } else {
            rate_rps / 1000.0
        };
        // per request: no figure without a request (empty, never 0)
        let n = (r.outcomes.requests > 0).then_some(r.outcomes.requests as f64);
        let work_ms: f64 = r.dependencies.iter().map(|d| d.work_ms).sum();
        cells.extend([
            r.outcomes.requests.into(),
            r.sim_time_ms.into(),
            r.events.into(),
            (per_ms * 1000.0).into(),
            r.mean_in_flight.into(),
            n.map(|n| per_ms * r.in_system_ms / n).into(),
            r.mean_dependency_work.into(),
            n.map(|n| per_ms * work_ms / n).into(),
        ]);
        t.push(cells);
    }
    t.notes.push(
        "offered_rps: the requests sent per second over the span the means cover (from the warm-up's end until the last \
         request left): the rate the workloads offered, arrival_factor faults and the drain after the last send included, \
         not the rate written; \
         mean_in_flight: requests sent and not yet answered or given up, averaged over that span; \
         littles_law_in_flight = offered_rps x mean time in the system (timed-out requests until their timeout). \
         mean_dependency_work counts calls a dependency is working on, abandoned ones included; \
         littles_law_dependency_work = offered_rps x dependency work per request"
            .into(),
    );
    out.push(t);
}
