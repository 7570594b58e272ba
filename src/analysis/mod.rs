//! Analyses: turn the run results of every compare row into report tables. Each
//! module adds the tables of one concern; a table appears only when the scenario
//! has what it describes.

mod asks;
mod budget;
mod calls;
mod concurrency;
mod dependency_replicas;
mod ejections;
mod ladder;
mod latency;
mod limiters;
mod run;
mod services;
pub mod timeseries;

use crate::model::Model;
use crate::scenario::Scenario;
use crate::sim::RunResult;
use crate::table::{Cell, Table};

/// The results of one scenario: one run result per compare row.
pub struct Results<'a> {
    pub scenario: &'a Scenario,
    pub runs: Vec<RunResult>,
    /// Tables get blank headers and no title (see [`analyse_cells`]).
    blank: bool,
}

impl<'a> Results<'a> {
    pub fn new(scenario: &'a Scenario, runs: Vec<RunResult>) -> Results<'a> {
        Results {
            scenario,
            runs,
            blank: false,
        }
    }
}

impl Results<'_> {
    /// Every compare row's model, in row order. Tables are built from these, never
    /// from the first row's alone: a variant may add, drop or reorder what a row has.
    pub fn models(&self) -> impl Iterator<Item = &Model> {
        self.scenario.rows.iter().map(|r| &r.model)
    }

    /// Whether some compare row's model has what `f` looks for.
    pub fn any(&self, f: impl Fn(&Model) -> bool) -> bool {
        self.models().any(f)
    }

    /// The names `f` gives for each row's model, in first-seen order, once each:
    /// the columns of a table with one column per named thing.
    pub fn names<'m>(&'m self, f: impl Fn(&'m Model) -> Vec<&'m str>) -> Vec<&'m str> {
        // hashed, not searched: thousands of names made a search quadratic
        let mut seen = std::collections::HashSet::new();
        self.models()
            .flat_map(f)
            .filter(|name| seen.insert(*name))
            .collect()
    }

    /// Headers: the axis columns, then `rest`.
    pub fn headers(&self, rest: &[&str]) -> Vec<String> {
        self.scenario
            .columns()
            .into_iter()
            .chain(rest.iter().map(|s| s.to_string()))
            .collect()
    }

    /// A table of figures per compare row: the axis columns, then the `key` columns
    /// that tell the rows of one compare row apart (none when it has one row per
    /// compare row), then `rest`.
    ///
    /// An axis column that would collide with one of the table's own columns is
    /// named by the shortest dotted suffix of its key path that does not (section 7
    /// of the format): `x.balancer` next to a `balancer` column.
    pub fn table(&self, name: &str, title: &str, key: &[&str], rest: &[&str]) -> Table {
        let axes = self.scenario.axes.len();
        if self.blank {
            let headers = vec![String::new(); axes + key.len() + rest.len()];
            return Table::per_compare_row(name, "", headers, axes, key.len());
        }
        let own: Vec<&str> = key.iter().chain(rest).copied().collect();
        let mut headers: Vec<String> = self
            .scenario
            .axes
            .iter()
            .map(|a| {
                if own.contains(&a.column.as_str()) && a.path != "variant" {
                    let others: Vec<&str> = self
                        .scenario
                        .axes
                        .iter()
                        .filter(|b| b.path != a.path && b.path != "variant")
                        .map(|b| b.path.as_str())
                        .collect();
                    crate::scenario::column_for(&a.path, &others, &own)
                } else {
                    a.column.clone()
                }
            })
            .collect();
        headers.extend(own.iter().map(|s| s.to_string()));
        Table::per_compare_row(name, title, headers, axes, key.len())
    }

    /// Cells of row `i`'s axis labels.
    pub fn axis_cells(&self, i: usize) -> Vec<Cell> {
        self.scenario.rows[i]
            .labels
            .iter()
            .map(|l| Cell::Text(l.clone()))
            .collect()
    }
}

/// Below this many values a sample's percentiles are left to the table that asks
/// them: handing so small a selection to another core gains nothing.
const AHEAD_MIN: u64 = 1 << 16;

/// Selects, on every core at once, the percentiles that [`analyse`] and
/// [`chart_tables`] will ask of the large exact samples of every compare row, so
/// that the tables find each in place. Only the work moves: every value is an
/// order statistic, the same whichever core selects it and in whatever order
/// (see [`crate::metrics::Samples::select_for`]). The simulation of one row
/// uses one core, and a row's percentiles (a few selections over up to 2^20
/// values per statistic) were, with the second core idle, the largest part
/// of the time after it. Statistics that hold the same values (M1's every
/// response, answered responses and server responses: its rejections take no
/// time) are one job, whose ranks are selected once.
///
/// What is selected is derived from the tables' own declarations
/// ([`asks`]: each table module says which percentiles of which statistic it
/// reads), never listed here.
pub fn select_ahead(results: &mut Results) {
    use crate::metrics::Samples;
    use rayon::prelude::*;
    // `outcomes` has a row per workload only when some row has several
    let several = results.any(|m| m.workloads.len() > 1);
    let asks: Vec<Vec<asks::Ask>> = (results.runs.iter())
        .map(|r| asks_of_run(r, several))
        .collect();
    let mut jobs: Vec<(&mut Samples, &[f64], bool)> = Vec::new();
    for (r, run_asks) in results.runs.iter_mut().zip(&asks) {
        for (stat, samples) in asks::stats_mut(r) {
            if let Some(ask) = run_asks.iter().find(|a| a.stat == stat) {
                jobs.push((samples, &ask.quantiles, ask.median));
            }
        }
    }
    jobs.retain(|(s, ..)| s.count() >= AHEAD_MIN && s.is_exact());
    // statistics that hold the same values (see `Samples::select_together`)
    // are selected once, as one job
    let mut groups: Vec<Vec<(&mut Samples, &[f64], bool)>> = Vec::new();
    for job in jobs {
        match groups.iter_mut().find(|g| g[0].0.holds_as(job.0)) {
            Some(g) => g.push(job),
            None => groups.push(vec![job]),
        }
    }
    // the largest first, so that the last job to start is a short one
    let cost = |g: &Vec<(&mut Samples, &[f64], bool)>| {
        g[0].0.count() * g.iter().map(|(_, qs, _)| qs.len() as u64 + 1).sum::<u64>()
    };
    groups.sort_by_cached_key(|g| std::cmp::Reverse(cost(g)));
    groups
        .into_par_iter()
        .with_max_len(1)
        .for_each(|mut g| Samples::select_together(&mut g));
}

/// What every table asks of `run` (`several`: the run's `outcomes` has a row
/// per workload), one entry per statistic: the asks of several tables of one
/// statistic joined.
fn asks_of_run(run: &RunResult, several: bool) -> Vec<asks::Ask> {
    let mut all = Vec::new();
    budget::asks(run, several, &mut all);
    latency::asks(run, &mut all);
    services::asks(run, &mut all);
    let mut joined: Vec<asks::Ask> = Vec::with_capacity(all.len());
    for ask in all {
        match joined.iter_mut().find(|j| j.stat == ask.stat) {
            Some(j) => {
                j.quantiles.extend(ask.quantiles);
                j.median |= ask.median;
            }
            None => joined.push(ask),
        }
    }
    joined
}

/// Every table the scenario calls for, in report order.
pub fn analyse(results: &mut Results) -> Vec<Table> {
    build(results, Tables::All)
}

/// The tables of [`analyse`] whose scope is [`crate::table::Scope::PerCompareRow`],
/// in the same order and with the same contents: the only ones a sweep reads
/// metrics from. The tables across rows (`deadline_cost`, `false_drops`,
/// `error_budget`, `ladder_ratios`) are not built: `false_drops` alone cloned and
/// compared the model about 30 times per sweep replication.
pub fn analyse_per_row(results: &mut Results) -> Vec<Table> {
    build(results, Tables::PerCompareRow)
}

/// The tables of [`analyse_per_row`] with their cells alone: every header blank
/// (as many as the table has columns) and no title. A sweep reads each
/// replication's metric cells by position, from a layout learnt from the named
/// tables of replication 0, and so skips some 30 header strings per run.
pub fn analyse_cells(results: &mut Results) -> Vec<Table> {
    build(results, Tables::Cells)
}

/// Which of a scenario's tables to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tables {
    All,
    PerCompareRow,
    /// Per compare row, cells only.
    Cells,
}

impl Tables {
    /// Whether tables across compare rows are wanted.
    fn across_rows(self) -> bool {
        self == Tables::All
    }
}

fn build(results: &mut Results, wanted: Tables) -> Vec<Table> {
    results.blank = wanted == Tables::Cells;
    let mut tables = Vec::new();
    budget::tables(results, &mut tables, wanted);
    limiters::tables(results, &mut tables);
    concurrency::tables(results, &mut tables);
    run::tables(results, &mut tables);
    services::tables(results, &mut tables);
    dependency_replicas::tables(results, &mut tables);
    calls::tables(results, &mut tables);
    ladder::tables(results, &mut tables, wanted);
    timeseries::tables(results, &mut tables);
    tables
}

/// Tables written as CSV and drawn in `report.html` but not printed (and not sweep
/// metrics): the response-time distribution.
pub fn chart_tables(results: &mut Results) -> Vec<Table> {
    latency::latency_cdf(results).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    /// The percentiles [`select_ahead`] selects are those the tables and the
    /// chart ask: after it, building them selects nothing more in the large
    /// samples (a table that came to ask another percentile without
    /// `select_ahead` asking it too would select it alone, after the others).
    #[test]
    fn the_tables_find_every_percentile_select_ahead_selected() {
        // two workloads (so `outcomes` has a row each) and two replicas, each
        // statistic past AHEAD_MIN values
        let text = r#"
[scenario]
name = "ahead"
seed = 3
[services.s]
routes = ["/a"]
replicas = 2
balancer = "round_robin"
handler = { type = "server", slots = 4, queue = 100, service = { exponential = { mean_ms = 1.5 } } }
[workloads.one]
type = "open"
client = "one"
rate_rps = 2000
requests = 70000
arrivals = "poisson"
[workloads.two]
type = "open"
client = "two"
rate_rps = 2000
requests = 70000
arrivals = "poisson"
"#;
        let scenario =
            load_str(text, Path::new("ahead.toml"), &LoadOptions::default()).expect("loads");
        let runs = scenario
            .rows
            .iter()
            .map(|r| crate::sim::run(&r.model, 0).expect("runs"))
            .collect();
        let mut results = Results::new(&scenario, runs);
        select_ahead(&mut results);
        // every statistic a table may read, with the ranks selected in it
        let fixed = |r: &mut Results| -> Vec<(asks::Stat, usize)> {
            asks::stats_mut(&mut r.runs[0])
                .into_iter()
                .map(|(stat, s)| (stat, s.selected()))
                .collect()
        };
        let before = fixed(&mut results);
        assert_eq!(before.len(), 2 + 2 * 2 + 2 + 2, "{before:?}");
        assert!(
            before.iter().all(|&(_, n)| n > 0),
            "every large sample was selected ahead: {before:?}"
        );
        analyse(&mut results);
        chart_tables(&mut results);
        assert_eq!(
            fixed(&mut results),
            before,
            "no selection after select_ahead"
        );
    }
}
