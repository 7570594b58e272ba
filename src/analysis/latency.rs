//! The response-time distribution of every compare row (`latency_cdf`): the table
//! behind the report's distribution chart. It is written as a CSV file and drawn in
//! `report.html`, not printed: a few lines per compare row would drown the text
//! report, and the sweep leaves it out (its rows are percentiles, not metrics).

use super::Results;
use super::asks::{Ask, Stat};
use crate::table::{Cell, Table};

/// The percentiles each compare row is given at: dense in the tail, where
/// timeouts and retries show.
pub const PERCENTILES: [f64; 19] = [
    0.0, 1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 97.5, 99.0, 99.5,
    99.9, 99.99, 100.0,
];

/// The quantiles of the answered requests' own count that `latency_cdf` asks of
/// a row with `requests` requests and `answered` answered ones: each of
/// [`PERCENTILES`] of every request that falls among the answered
/// (`budget::of_all`).
pub(super) fn cdf_quantiles(requests: u64, answered: u64) -> Vec<f64> {
    PERCENTILES
        .iter()
        .filter(|&&p| p > 0.0)
        .filter_map(|&p| super::budget::of_all(p / 100.0, requests, answered))
        .collect()
}

/// What `latency_cdf` reads: the answered requests' [`cdf_quantiles`].
pub(super) fn asks(run: &crate::sim::RunResult, out: &mut Vec<Ask>) {
    let answered = run.answered_response.count();
    out.push(Ask::new(
        Stat::Answered,
        &cdf_quantiles(run.outcomes.requests, answered),
        false,
    ));
}

/// `latency_cdf`: per compare row with requests, the time within which each of
/// [`PERCENTILES`] of ALL its requests were answered (nearest rank over every
/// request, a failed one never answered: empty above the answered share), 0 the
/// fastest answer; when some failed, one more row at the answered share itself
/// with the slowest answer, where the curve stops. `None` when no row answered
/// a request.
pub fn latency_cdf(results: &mut Results) -> Option<Table> {
    if results
        .runs
        .iter()
        .all(|r| r.answered_response.count() == 0)
    {
        return None;
    }
    let mut t = Table::new(
        "latency_cdf",
        "Response-time distribution per row: the time within which `percentile` % of ALL requests were answered (failed ones never are: the curve stops at the answered share)",
        results.headers(&["percentile", "latency_ms"]),
    );
    for i in 0..results.runs.len() {
        let requests = results.runs[i].outcomes.requests;
        if requests == 0 {
            continue;
        }
        let axis = results.axis_cells(i);
        let samples = &mut results.runs[i].answered_response;
        let answered = samples.count();
        samples.select_for(&cdf_quantiles(requests, answered), false);
        let share = answered as f64 / requests as f64 * 100.0;
        let mut row = |p: f64, ms: Cell| {
            let mut cells = axis.clone();
            cells.extend([Cell::Num(p), ms]);
            t.push(cells);
        };
        // the row at the answered share itself, when it is not one of PERCENTILES
        let mut end = (answered > 0 && answered < requests && !PERCENTILES.contains(&share))
            .then(|| samples.max_ms());
        for p in PERCENTILES {
            if p > share
                && let Some(slowest) = end.take()
            {
                row(share, slowest.into());
            }
            let ms = if p == 0.0 {
                (answered > 0).then(|| samples.min_ms()).into()
            } else {
                super::budget::of_all(p / 100.0, requests, answered)
                    .map(|q| samples.quantile_ms(q))
                    .into()
            };
            row(p, ms);
        }
    }
    if let Some(note) =
        crate::metrics::approximate_note(results.runs.iter().map(|r| &r.answered_response))
    {
        t.notes.push(note);
    }
    Some(t)
}
