//! Concurrency limiters: their limit and requests in flight over the run
//! (`concurrency`) and per time-series window (`timeseries_concurrency`).
//! Both tables exist only when a row has a concurrency limiter, so a run
//! without one writes the files it always wrote.
//!
//! Each figure is the sum over the limiter's bucket keys (one key: its own
//! limit), time-weighted from the first request the limiter met to the end
//! of the run (of the window). A limiter that met no request in a row has no
//! line.

use super::Results;
use crate::sim::limiter::{ConcurrencyRun, Gauges, LimiterRun};
use crate::table::{Cell, Table};

pub fn tables(results: &mut Results, out: &mut Vec<Table>) {
    if !results.any(|m| m.limiters.iter().any(|l| l.concurrency().is_some())) {
        return;
    }
    out.push(concurrency(results));
    if results.runs.iter().any(|r| r.timeseries.is_some()) {
        out.push(windows(results));
    }
}

/// The gauges' cells, in the tables' column order.
fn gauge_cells(g: &Gauges) -> [Cell; 7] {
    [
        g.mean_in_flight().into(),
        g.in_flight_max.into(),
        g.mean_limit().into(),
        g.limit_min.into(),
        g.limit_max.into(),
        g.limit_end.into(),
        g.decreases.into(),
    ]
}

const GAUGES: [&str; 7] = [
    "mean_in_flight",
    "max_in_flight",
    "mean_limit",
    "min_limit",
    "max_limit",
    "end_limit",
    "decreases",
];

/// One state of a concurrency limiter, as its rows show it.
struct State<'a> {
    /// The replica, from 1, of a limiter kept per replica; empty for one
    /// state of the whole service.
    replica: Cell,
    passed: u64,
    rejected: u64,
    run: &'a Gauges,
    windows: &'a [Option<Gauges>],
}

/// A concurrency limiter's states: one per replica that met a request when it
/// is kept per replica, else its one state.
fn states<'a>(run: &'a LimiterRun, c: &'a ConcurrencyRun) -> Vec<State<'a>> {
    if c.replicas.is_empty() {
        return vec![State {
            replica: Cell::Empty,
            passed: run.passed,
            rejected: run.rejected,
            run: &c.run,
            windows: &c.windows,
        }];
    }
    (c.replicas.iter().enumerate())
        .filter(|(_, r)| r.passed + r.rejected > 0)
        .map(|(k, r)| State {
            replica: Cell::Num((k + 1) as f64),
            passed: r.passed,
            rejected: r.rejected,
            run: &r.run,
            windows: &r.windows,
        })
        .collect()
}

fn concurrency(results: &Results) -> Table {
    let scoped = super::limiters::scoped(results);
    let mut head = vec!["algorithm", "passed", "rejected"];
    head.extend(GAUGES);
    let key: &[&str] = if scoped {
        &["limiter", "replica"]
    } else {
        &["limiter"]
    };
    let mut t = results.table(
        "concurrency",
        "Concurrency limiters: requests in flight and the limit over the run (time-weighted means)",
        key,
        &head,
    );
    for (i, row) in results.scenario.rows.iter().enumerate() {
        for (limiter, run) in row
            .model
            .limiters
            .iter()
            .zip(&results.runs[i].limiters.limiters)
        {
            let Some(c) = &run.concurrency else { continue };
            if run.seen == 0 {
                continue;
            }
            for st in states(run, c) {
                let mut cells = results.axis_cells(i);
                cells.push(limiter.name.as_str().into());
                if scoped {
                    cells.push(st.replica);
                }
                cells.extend([c.algorithm.into(), st.passed.into(), st.rejected.into()]);
                cells.extend(gauge_cells(st.run));
                t.push(cells);
            }
        }
    }
    if scoped {
        t.notes.push(
            "replica: a limiter kept per replica (scope = \"replica\") has a row per replica, numbered from 1 as NAME#K; \
             empty for one state of the whole service."
                .into(),
        );
    }
    t.notes.push(
        "Sums over each limiter's bucket keys, time-weighted from its first request to the run's end; \
         end_limit: the limit in force at the end; decreases: times the limit fell."
            .into(),
    );
    t
}

fn windows(results: &Results) -> Table {
    let scoped = super::limiters::scoped(results);
    let key: &[&str] = if scoped {
        &["window_start_ms", "limiter", "replica"]
    } else {
        &["window_start_ms", "limiter"]
    };
    let mut t = results.table(
        "timeseries_concurrency",
        "Per window and concurrency limiter: requests in flight and the limit (time-weighted means, extremes, the limit at the window's end)",
        key,
        &GAUGES,
    );
    t.printed = false;
    for (i, run) in results.runs.iter().enumerate() {
        let Some(s) = &run.timeseries else { continue };
        let model = &results.scenario.rows[i].model;
        for k in 0..s.windows.len() {
            for (limiter, l) in model.limiters.iter().zip(&run.limiters.limiters) {
                let Some(c) = &l.concurrency else { continue };
                for st in states(l, c) {
                    let Some(Some(g)) = st.windows.get(k) else {
                        continue;
                    };
                    let mut cells = results.axis_cells(i);
                    cells.extend([
                        Cell::Num(k as f64 * s.window_ms),
                        limiter.name.as_str().into(),
                    ]);
                    if scoped {
                        cells.push(st.replica);
                    }
                    cells.extend(gauge_cells(g));
                    t.push(cells);
                }
            }
        }
    }
    t
}
