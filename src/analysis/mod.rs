//! Analyses: turn the run results of every compare row into report tables. Each
//! module adds the tables of one concern; a table appears only when the scenario
//! has what it describes.

mod budget;
mod ladder;
mod latency;
mod limiters;
mod run;
mod services;

use crate::report::{Cell, Table};
use crate::scenario::Scenario;
use crate::sim::RunResult;

/// The results of one scenario: one run result per compare row.
pub struct Results<'a> {
    pub scenario: &'a Scenario,
    pub runs: Vec<RunResult>,
}

impl Results<'_> {
    /// Headers: the axis columns, then `rest`.
    pub fn headers(&self, rest: &[&str]) -> Vec<String> {
        self.scenario
            .columns()
            .into_iter()
            .chain(rest.iter().map(|s| s.to_string()))
            .collect()
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

/// Every table the scenario calls for, in report order.
pub fn analyse(results: &mut Results) -> Vec<Table> {
    let mut tables = Vec::new();
    budget::tables(results, &mut tables);
    limiters::tables(results, &mut tables);
    run::tables(results, &mut tables);
    services::tables(results, &mut tables);
    ladder::tables(results, &mut tables);
    tables
}

/// Tables written as CSV and drawn in `report.html` but not printed (and not sweep
/// metrics): the response-time distribution.
pub fn chart_tables(results: &mut Results) -> Vec<Table> {
    latency::latency_cdf(results).into_iter().collect()
}
