//! The worker pool. Workers take units in order from a shared counter, so they
//! finish roughly in order; the calling thread puts finished units back in order
//! (buffering the few that finish early) and hands each to the sink. A worker waits
//! when it runs too far ahead of the sink, which keeps the buffer, and the memory,
//! bounded whatever the number of replications.

use super::extract::{Named, RowRunner, Schema};
use crate::error::Error;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

/// How far (in units) a worker may run ahead of the last unit written.
const WINDOW: u64 = 4096;

pub fn pool(jobs: usize) -> Result<ThreadPool, Error> {
    ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("resim-sweep-{i}"))
        .build()
        .map_err(|e| Error::Other(format!("cannot start {jobs} worker threads: {e}")))
}

/// Replication 0 of every row: what fixes the metric columns.
pub fn probe(pool: &ThreadPool, runner: &RowRunner) -> Result<Vec<Named>, Error> {
    pool.install(|| {
        (0..runner.row_count())
            .into_par_iter()
            .map(|row| runner.run(row, 0))
            .collect()
    })
}

/// Runs units `[start, end)` and calls `sink(unit, values)` for each, in unit order.
/// Returns how many metric values had no column in the schema.
pub fn run(
    pool: &ThreadPool,
    runner: &RowRunner,
    schema: &Schema,
    (start, end): (u64, u64),
    progress: bool,
    mut sink: impl FnMut(u64, &[String]) -> Result<(), Error>,
) -> Result<u64, Error> {
    let rows = runner.row_count() as u64;
    let next = AtomicU64::new(start);
    let written = AtomicU64::new(start);
    let stop = AtomicBool::new(false);
    let bar = progress_bar(end - start, progress);
    let (tx, rx) = mpsc::channel::<(u64, Result<(Vec<String>, usize), Error>)>();

    let work = |tx: mpsc::Sender<_>| {
        loop {
            let unit = next.fetch_add(1, Ordering::Relaxed);
            if unit >= end || stop.load(Ordering::Relaxed) {
                break;
            }
            while unit >= written.load(Ordering::Acquire) + WINDOW && !stop.load(Ordering::Relaxed)
            {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            let result = runner
                .run((unit % rows) as usize, unit / rows)
                .map(|metrics| schema.place(&metrics));
            if tx.send((unit, result)).is_err() {
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
        let mut unknown = 0u64;
        let mut failure = None;
        for (unit, result) in rx {
            pending.insert(unit, result);
            while let Some(result) = pending.remove(&at) {
                let done = result.and_then(|(values, missing)| {
                    unknown += missing as u64;
                    sink(at, &values)
                });
                if let Err(e) = done {
                    failure = Some(e);
                    break;
                }
                at += 1;
                written.store(at, Ordering::Release);
                bar.inc(1);
            }
            if failure.is_some() {
                stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        bar.finish_and_clear();
        match failure {
            Some(e) => Err(e),
            None => Ok(unknown),
        }
    })
}

fn progress_bar(len: u64, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} runs ({per_sec}, eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar
}
