//! The response-time distribution of every compare row (`latency_cdf`): the table
//! behind the report's distribution chart. It is written as a CSV file and drawn in
//! `report.html`, not printed: a few lines per compare row would drown the text
//! report, and the sweep leaves it out (its rows are percentiles, not metrics).

use super::Results;
use crate::report::{Cell, Table};

/// The percentiles each compare row is given at: dense in the tail, where
/// timeouts and retries show.
pub const PERCENTILES: [f64; 19] = [
    0.0, 1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 97.5, 99.0, 99.5,
    99.9, 99.99, 100.0,
];

/// [`PERCENTILES`] as quantiles (0 to 1).
pub(super) fn cdf_quantiles() -> [f64; 19] {
    PERCENTILES.map(|p| p / 100.0)
}

/// `latency_cdf`: per compare row with responses, the response time at each of
/// [`PERCENTILES`] (nearest rank; 0 is the fastest response, 100 the slowest).
/// `None` when no row got a response.
pub fn latency_cdf(results: &mut Results) -> Option<Table> {
    if results.runs.iter().all(|r| r.response.count() == 0) {
        return None;
    }
    let mut t = Table::new(
        "latency_cdf",
        "Response-time distribution per row: the time within which `percentile` % of the responses came",
        results.headers(&["percentile", "latency_ms"]),
    );
    for i in 0..results.runs.len() {
        if results.runs[i].response.count() == 0 {
            continue;
        }
        let axis = results.axis_cells(i);
        let samples = &mut results.runs[i].response;
        let quantiles = samples.quantiles_ms(&cdf_quantiles());
        for (p, q) in PERCENTILES.into_iter().zip(quantiles) {
            let ms = if p == 0.0 { samples.min_ms() } else { q };
            let mut cells = axis.clone();
            cells.extend([Cell::Num(p), Cell::Num(ms)]);
            t.push(cells);
        }
    }
    if let Some(note) = crate::metrics::approximate_note(results.runs.iter().map(|r| &r.response)) {
        t.notes.push(note);
    }
    Some(t)
}
