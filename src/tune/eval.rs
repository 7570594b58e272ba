//! A candidate's runs: the scenario with the candidate's values set (as
//! `--set` sets them, before variants and compare rows), every compare row,
//! replications with the streams of a sweep (one per seed, replication and
//! actor), on the sweep's worker pool. The metric values are read as a sweep
//! names them.

use super::race::{Evaluate, Runs};
use super::space::{Key, Point, show};
use crate::error::Error;
use crate::scenario::{self, LoadOptions, Override, Purpose, Scenario};
use crate::sweep::{Layout, RowRunner, Schema};
use std::collections::HashMap;
use std::path::PathBuf;

/// Everything fixed for every candidate.
pub struct Evaluator<'a> {
    pub file: PathBuf,
    pub text: String,
    pub overrides: Vec<Override>,
    pub seed: Option<u64>,
    pub keys: &'a [Key],
    /// The metrics read, in the race's order (objective, then constraints).
    pub metrics: Vec<String>,
    pub pool: rayon::ThreadPool,
    /// Each candidate's runner, kept while it races.
    loaded: HashMap<usize, Loaded>,
}

/// One candidate's runner and the layout of its metrics.
struct Loaded {
    runner: RowRunner,
    schema: Schema,
    layouts: Vec<Layout>,
    /// Replication 0's values per row, from the probe that fixed the layouts.
    first: Vec<Vec<Option<f64>>>,
}

impl<'a> Evaluator<'a> {
    pub fn new(
        file: PathBuf,
        text: String,
        (overrides, seed): (Vec<Override>, Option<u64>),
        keys: &'a [Key],
        metrics: Vec<String>,
        pool: rayon::ThreadPool,
    ) -> Evaluator<'a> {
        Evaluator {
            file,
            text,
            overrides,
            seed,
            keys,
            metrics,
            pool,
            loaded: HashMap::new(),
        }
    }

    /// The scenario at `point`, every compare row.
    pub fn load(&self, point: &Point) -> Result<Scenario, Error> {
        let mut overrides = self.overrides.clone();
        for (k, v) in self.keys.iter().zip(point) {
            overrides.push(Override {
                path: k.key.clone(),
                value: v.clone(),
                text: format!("{}={}", k.key, show(v)),
            });
        }
        let opts = LoadOptions {
            overrides,
            seed: self.seed,
            purpose: Purpose::Sweep,
            extra_axes: Vec::new(),
            max_rows: 0,
        };
        Ok(scenario::load_str(&self.text, &self.file, &opts)?)
    }

    /// Candidate `point` loaded, its replication 0 run in every row.
    fn prepare(&self, point: &Point) -> Result<Loaded, Error> {
        let scenario = self.load(point)?;
        let runner = RowRunner::new(&scenario);
        let probes = crate::sweep::runner::probe(&self.pool, &runner)?;
        let named: Vec<_> = probes.iter().map(|t| runner.named(t)).collect();
        let schema = Schema::new(&named);
        let layouts = probes.iter().map(|t| runner.layout(t, &schema)).collect();
        let first = named
            .iter()
            .map(|n| {
                self.metrics
                    .iter()
                    .map(|m| {
                        n.iter()
                            .find(|(name, _)| name == m)
                            .and_then(|(_, c)| c.metric())
                    })
                    .collect()
            })
            .collect();
        Ok(Loaded {
            runner,
            schema,
            layouts,
            first,
        })
    }
}

impl Evaluate for Evaluator<'_> {
    fn run(&mut self, index: usize, point: &Point, from: u64, to: u64) -> Result<Runs, Error> {
        if !self.loaded.contains_key(&index) {
            let l = self.prepare(point)?;
            self.loaded.insert(index, l);
        }
        let (loaded, pool, metrics) = (&self.loaded[&index], &self.pool, &self.metrics);
        let rows = loaded.runner.row_count();
        let mut out = vec![vec![Vec::new(); metrics.len()]; rows];
        if from == 0 && to > 0 {
            for (row, first) in loaded.first.iter().enumerate() {
                for (m, v) in first.iter().enumerate() {
                    out[row][m].push(*v);
                }
            }
        }
        let start = from.max(1);
        if start < to {
            let r = rows as u64;
            crate::sweep::runner::run(
                pool,
                &loaded.runner,
                &loaded.schema,
                &loaded.layouts,
                (start * r, to * r),
                false,
                |unit, m| {
                    let row = (unit % r) as usize;
                    for (k, name) in metrics.iter().enumerate() {
                        out[row][k].push(m.value(&loaded.schema, name));
                    }
                    Ok(())
                },
            )?;
        }
        Ok(out)
    }

    fn forget(&mut self, index: usize) {
        self.loaded.remove(&index);
    }
}
