//! The metrics of one run, derived from the report tables `resim run` writes.
//!
//! A sweep knows no table by name: it runs one compare row, asks the analyses for
//! their tables and keeps every numeric cell of the tables computed per compare row
//! (the ones that start with the axis columns, built with `Results::headers`).
//! Tables that summarise across rows (`deadline_cost`, `false_drops`, ...) are left
//! out. Names:
//!
//! - a table with one row per compare row: `<table>.<column>` (`outcomes.answered`);
//! - a table with several rows per compare row: `<table>.<key>.<column>`, where the
//!   key is the shortest run of leading columns that tells its rows apart, text
//!   written as is and numbers as `<column>_<value>` (`limiters.edge.passed`,
//!   `ladder.concurrency_8.successful`); key columns are not metrics themselves.
//!
//! Booleans become 1 / 0 (their mean is a share); an empty cell is a missing value.

use crate::analysis::{self, Results};
use crate::error::Error;
use crate::report::{Cell, format_number};
use crate::scenario::{Axis, Row, Scenario};
use std::collections::HashMap;

/// The column that marks a table as computed per compare row: the sweep gives each
/// row's analysis an extra first axis with this (unwritable) name.
const ROW_MARK: &str = "\u{0}row";

/// One run's metrics by name, in table order.
pub type Named = Vec<(String, Cell)>;

/// Runs single compare rows of a scenario and names their metrics.
pub struct RowRunner {
    /// One scenario per compare row, holding only that row (plus the row mark axis).
    rows: Vec<Scenario>,
}

impl RowRunner {
    /// `seeds[i]` is the master seed row `i` runs with.
    pub fn new(scenario: &Scenario, seeds: &[u64]) -> RowRunner {
        let mark = Axis {
            path: ROW_MARK.into(),
            column: ROW_MARK.into(),
            values: vec![toml::Value::String(String::new())],
        };
        let axes: Vec<Axis> = std::iter::once(mark).chain(scenario.axes.clone()).collect();
        let rows = scenario
            .rows
            .iter()
            .zip(seeds)
            .map(|(row, seed)| {
                let mut model = row.model.clone();
                model.seed = *seed;
                let labels = std::iter::once(String::new())
                    .chain(row.labels.iter().cloned())
                    .collect();
                Scenario {
                    file: scenario.file.clone(),
                    axes: axes.clone(),
                    rows: vec![Row { labels, model }],
                }
            })
            .collect();
        RowRunner { rows }
    }

    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// Runs replication `replication` of compare row `row` and names its metrics.
    pub fn run(&self, row: usize, replication: u64) -> Result<Named, Error> {
        let scenario = &self.rows[row];
        let run = crate::sim::run(&scenario.rows[0].model, replication)?;
        let mut results = Results {
            scenario,
            runs: vec![run],
        };
        let tables = analysis::analyse(&mut results);
        let axes = scenario.axes.len();
        let mut out = Vec::new();
        for t in tables
            .iter()
            .filter(|t| t.headers.first().map(String::as_str) == Some(ROW_MARK))
        {
            let key_len = if t.rows.len() <= 1 {
                0
            } else {
                key_length(&t.rows, axes)
            };
            for row in &t.rows {
                let key: Vec<String> = (axes..axes + key_len)
                    .map(|c| key_part(&t.headers[c], &row[c]))
                    .collect();
                let prefix = if key.is_empty() {
                    t.name.clone()
                } else {
                    format!("{}.{}", t.name, key.join("."))
                };
                let skip = axes + key_len;
                for (header, cell) in t.headers.iter().zip(row).skip(skip) {
                    if !matches!(cell, Cell::Text(_)) {
                        out.push((format!("{prefix}.{header}"), cell.clone()));
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The fewest leading columns after `axes` whose cells tell `rows` apart (all
/// columns when nothing does).
fn key_length(rows: &[Vec<Cell>], axes: usize) -> usize {
    let width = rows.first().map_or(axes, Vec::len);
    for len in 1..width - axes {
        let mut seen: Vec<&[Cell]> = rows.iter().map(|r| &r[axes..axes + len]).collect();
        seen.sort_by_key(|cells| cells.iter().map(Cell::render).collect::<Vec<_>>());
        let before = seen.len();
        seen.dedup();
        if seen.len() == before {
            return len;
        }
    }
    width - axes
}

fn key_part(header: &str, cell: &Cell) -> String {
    match cell {
        Cell::Text(s) => s.clone(),
        other => format!("{header}_{}", other.render()),
    }
}

/// How a metric value is written in `replications.csv`: numbers as in the report
/// CSVs, booleans as 1 / 0, anything else (missing) as an empty cell.
pub fn render_value(cell: &Cell) -> String {
    match cell {
        Cell::Int(i) => i.to_string(),
        Cell::Num(x) => format_number(*x),
        Cell::Bool(b) => u8::from(*b).to_string(),
        Cell::Text(_) | Cell::Empty => String::new(),
    }
}

/// The metric columns of a sweep, fixed before it starts: the union, in first-seen
/// order, of the metrics of replication 0 of every compare row.
#[derive(Debug, Clone)]
pub struct Schema {
    pub names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Schema {
    pub fn new(probes: &[Named]) -> Schema {
        let mut names = Vec::new();
        let mut index = HashMap::new();
        for (name, _) in probes.iter().flatten() {
            if !index.contains_key(name) {
                index.insert(name.clone(), names.len());
                names.push(name.clone());
            }
        }
        Schema { names, index }
    }

    /// The run's values in schema order (missing ones empty), and how many of its
    /// metrics the schema does not know (a table row that replication 0 did not have).
    pub fn place(&self, metrics: &Named) -> (Vec<String>, usize) {
        let mut values = vec![String::new(); self.names.len()];
        let mut unknown = 0;
        for (name, cell) in metrics {
            match self.index.get(name) {
                Some(&i) => values[i] = render_value(cell),
                None => unknown += 1,
            }
        }
        (values, unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_use_the_fewest_leading_columns_that_tell_rows_apart() {
        let t = |a: &str, b: &str, n: i64| vec![Cell::from(""), a.into(), b.into(), n.into()];
        let rows = vec![t("edge", "u1", 1), t("edge", "u2", 2), t("core", "u1", 3)];
        assert_eq!(key_length(&rows, 1), 2);
        let rows = vec![t("edge", "member", 1), t("core", "member", 2)];
        assert_eq!(key_length(&rows, 1), 1);
        assert_eq!(key_part("concurrency", &Cell::Int(8)), "concurrency_8");
        assert_eq!(key_part("limiter", &"edge".into()), "edge");
    }

    #[test]
    fn values_are_rendered_like_the_report_csvs() {
        assert_eq!(render_value(&Cell::Int(48)), "48");
        assert_eq!(render_value(&Cell::Num(45.8)), "45.80");
        assert_eq!(render_value(&Cell::Bool(true)), "1");
        assert_eq!(render_value(&Cell::Empty), "");
    }

    #[test]
    fn the_schema_is_the_union_in_first_seen_order() {
        let a: Named = vec![("t.x".into(), Cell::Int(1)), ("t.y".into(), Cell::Int(2))];
        let b: Named = vec![("t.z".into(), Cell::Int(3)), ("t.x".into(), Cell::Int(4))];
        let s = Schema::new(&[a, b.clone()]);
        assert_eq!(s.names, ["t.x", "t.y", "t.z"]);
        let extra: Named = vec![("t.w".into(), Cell::Int(5))];
        assert_eq!(
            s.place(&b),
            (vec!["4".into(), String::new(), "3".into()], 0)
        );
        assert_eq!(s.place(&extra).1, 1);
    }
}
