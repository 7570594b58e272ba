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

/// A batch's first unit and its units' results, up to and including the first
/// failure (the units before it still count).
type Batch = (u64, Vec<Result<Measured, Error>>);

/// Runs units `[start, end)` and calls `sink(unit, measured)` for each, in unit
/// order. `layouts[row]` places row `row`'s metrics.
pub fn run(
    pool: &ThreadPool,
    runner: &RowRunner,
    schema: &Schema,
    layouts: &[Layout],
    (start, end): (u64, u64),
    progress: bool,
    mut sink: impl FnMut(u64, &Measured) -> Result<(), Error>,
) -> Result<(), Error> {
    let rows = runner.row_count() as u64;
    let batch = batch_size(end - start, pool.current_num_threads() as u64);
    let next = AtomicU64::new(start);
    let written = AtomicU64::new(start);
    let stop = AtomicBool::new(false);
    let bar = progress_bar(end - start, progress);
    let (tx, rx) = mpsc::channel::<Batch>();

    let work = |tx: mpsc::Sender<Batch>| {
        loop {
            let first = next.fetch_add(batch, Ordering::Relaxed);
            if first >= end || stop.load(Ordering::Relaxed) {
                break;
            }
            while first >= written.load(Ordering::Acquire) + WINDOW && !stop.load(Ordering::Relaxed)
            {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            let mut results = Vec::new();
            for unit in first..end.min(first + batch) {
                let row = (unit % rows) as usize;
                let result = runner.measure(row, unit / rows, &layouts[row], schema);
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
        bar.finish_and_clear();
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
