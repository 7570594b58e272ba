//! The worker pool. Workers take batches of units in order from a shared counter,
//! so they finish roughly in order; the calling thread puts finished units back in order
//! (buffering the few that finish early) and hands each to the sink. A worker waits
//! when it runs too far ahead of the sink, which keeps the buffer, and the memory,
//! bounded whatever the number of replications.

use super::extract::{Layout, Measured, RowRunner, Schema};
use crate::error::Error;
use crate::report::Table;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

/// How far (in units) a worker may run ahead of the last unit written.
const WINDOW: u64 = 8192;

/// Units per message from a worker: enough to make the hand-over cheap (one
/// wake-up of the writer per batch), few enough to share the work evenly.
fn batch_size(units: u64, jobs: u64) -> u64 {
    (units / (jobs.max(1) * 32)).clamp(1, 64)
}

/// `--jobs` checked (1 to [`super::MAX_JOBS`]), or one per core.
pub fn jobs(asked: Option<usize>) -> Result<usize, Error> {
    if let Some(j) = asked
        && !(1..=super::MAX_JOBS).contains(&j)
    {
        return Err(crate::error::ScenarioError::new(
            "",
            format!("--jobs must be 1 to {} (got {j})", super::MAX_JOBS),
        )
        .into());
    }
    Ok(asked.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    }))
}

pub fn pool(jobs: usize) -> Result<ThreadPool, Error> {
    ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("resim-sweep-{i}"))
        .build()
        .map_err(|e| Error::Other(format!("cannot start {jobs} worker threads: {e}")))
}

/// The report tables of replication 0 of every row: what fixes the metric columns.
pub fn probe(pool: &ThreadPool, runner: &RowRunner) -> Result<Vec<Vec<Table>>, Error> {
    pool.install(|| {
        (0..runner.row_count())
            .into_par_iter()
            .map(|row| runner.tables(row, 0))
            .collect()
    })
}

/// Runs units `[start, end)` and calls `sink(unit, measured)` for each, in unit
/// order. `layouts[row]` places row `row`'s metrics.
pub fn run(
    pool: &ThreadPool,
    runner: &RowRunner,
    schema: &Schema,
    layouts: &[Layout],
    (start, end): (u64, u64),
    progress: bool,
    sink: impl FnMut(u64, &Measured) -> Result<(), Error>,
) -> Result<(), Error> {
    let rows = runner.row_count() as u64;
    let batch = batch_size(end - start, pool.current_num_threads() as u64);
    let bar = progress_bar(end - start, progress);
    let measure = |unit: u64| {
        let row = (unit % rows) as usize;
        runner.measure(row, unit / rows, &layouts[row], schema)
    };
    let result = in_order(pool, (start, end), (batch, WINDOW), measure, &bar, sink);
    bar.finish_and_clear();
    result
}

/// A batch's first unit and its units' results, up to and including the first
/// failure (the units before it still count).
type Batch<M> = (u64, Vec<Result<M, Error>>);

/// The units `[start, end)` measured by the pool's workers in batches of
/// `batch`, none more than `window` units ahead of the last one handed to
/// `sink`, and handed to `sink` in unit order. A failed unit stops the run
/// (the units before it still reach the sink).
fn in_order<M: Send>(
    pool: &ThreadPool,
    (start, end): (u64, u64),
    (batch, window): (u64, u64),
    measure: impl Fn(u64) -> Result<M, Error> + Sync,
    bar: &ProgressBar,
    mut sink: impl FnMut(u64, &M) -> Result<(), Error>,
) -> Result<(), Error> {
    let next = AtomicU64::new(start);
    let written = AtomicU64::new(start);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Batch<M>>();

    let work = |tx: mpsc::Sender<Batch<M>>| {
        loop {
            let first = next.fetch_add(batch, Ordering::Relaxed);
            if first >= end || stop.load(Ordering::Relaxed) {
                break;
            }
            while first >= written.load(Ordering::Acquire) + window && !stop.load(Ordering::Relaxed)
            {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            let mut results = Vec::new();
            for unit in first..end.min(first + batch) {
                let result = measure(unit);
                let failed = result.is_err();
                results.push(result);
                if failed {
                    break;
                }
            }
            if tx.send((first, results)).is_err() {
                break;
            }
        }
    };

    std::thread::scope(|scope| {
        scope.spawn(move || {
            pool.broadcast(|_| work(tx.clone()));
        });
        let mut pending = BTreeMap::new();
        let mut at = start;
        let mut failure = None;
        'receive: for (first, result) in rx {
            pending.insert(first, result);
            while let Some(results) = pending.remove(&at) {
                for result in results {
                    let done = result.and_then(|m| sink(at, &m));
                    if let Err(e) = done {
                        failure = Some(e);
                        break 'receive;
                    }
                    at += 1;
                    bar.inc(1);
                }
                written.store(at, Ordering::Release);
            }
        }
        if failure.is_some() {
            stop.store(true, Ordering::Relaxed);
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}

fn progress_bar(len: u64, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    // the ETA from the average rate since the start, once 2 % is done (indicatif's
    // own {eta} extrapolates the first, slow units: "hours" for a 21-second sweep)
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} runs ({per_sec}, {steady_eta})",
    ) {
        bar.set_style(style.with_key("steady_eta", crate::progress::steady_eta));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three workers measure 20,000 units in batches of 7 with a window of 64;
    /// every 500th unit is slow, so the others run on until the window stops
    /// them. Every unit reaches the sink once, in order, and no unit is
    /// measured more than the window and a batch ahead of the sink.
    #[test]
    fn units_reach_the_sink_in_order_and_the_window_holds_the_workers() {
        let pool = pool(3).expect("three workers");
        let (window, batch) = (64, 7);
        let handed = AtomicU64::new(10);
        let ahead = AtomicU64::new(0);
        let measure = |unit: u64| {
            if unit.is_multiple_of(500) {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            ahead.fetch_max(unit - handed.load(Ordering::Acquire), Ordering::Relaxed);
            Ok::<u64, Error>(unit * 3)
        };
        let mut seen = Vec::new();
        in_order(
            &pool,
            (10, 20_010),
            (batch, window),
            measure,
            &ProgressBar::hidden(),
            |unit, m| {
                assert_eq!(*m, unit * 3, "unit {unit}'s own result");
                seen.push(unit);
                handed.store(unit + 1, Ordering::Release);
                Ok(())
            },
        )
        .expect("no unit fails");
        assert!(
            seen.iter().copied().eq(10..20_010),
            "every unit once, in order"
        );
        let ahead = ahead.load(Ordering::Relaxed);
        assert!(
            (window..window + batch).contains(&ahead),
            "the furthest unit measured ahead of the sink: {ahead}"
        );
    }

    /// A failed unit stops the run with its error; the units before it reach
    /// the sink, none after it.
    #[test]
    fn a_failed_unit_stops_the_run_after_the_units_before_it() {
        let pool = pool(2).expect("two workers");
        let mut seen = Vec::new();
        let result = in_order(
            &pool,
            (0, 5_000),
            (5, 64),
            |unit| match unit {
                1_234 => Err(Error::Other("unit 1234 failed".into())),
                u => Ok(u),
            },
            &ProgressBar::hidden(),
            |unit, _| {
                seen.push(unit);
                Ok(())
            },
        );
        assert!(matches!(result, Err(Error::Other(m)) if m == "unit 1234 failed"));
        assert!(
            seen.iter().copied().eq(0..1_234),
            "{} units reached the sink",
            seen.len()
        );
    }
}
