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
use crate::report::{Cell, Table, format_number};
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

    /// The metrics of compare row `row` of a finished run (`resim run`), named as
    /// a sweep names them.
    pub fn metrics_of(&self, row: usize, run: crate::sim::RunResult) -> Named {
        let scenario = &self.rows[row];
        let mut results = Results {
            scenario,
            runs: vec![run],
        };
        let tables = analysis::analyse(&mut results);
        self.named(&tables)
    }

    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// Runs replication `replication` of compare row `row`: its report tables.
    pub fn tables(&self, row: usize, replication: u64) -> Result<Vec<Table>, Error> {
        let scenario = &self.rows[row];
        let run = crate::sim::run(&scenario.rows[0].model, replication)?;
        let mut results = Results {
            scenario,
            runs: vec![run],
        };
        Ok(analysis::analyse(&mut results))
    }

    /// The metrics of a run's tables, by name.
    pub fn named(&self, tables: &[Table]) -> Named {
        named(tables, self.axes())
    }

    /// Where row `row`'s metrics sit in tables shaped like `tables` (its replication 0).
    pub fn layout(&self, tables: &[Table], schema: &Schema) -> Layout {
        Layout::new(tables, self.axes(), schema)
    }

    /// Runs one unit and returns its values in schema order.
    pub fn measure(
        &self,
        row: usize,
        replication: u64,
        layout: &Layout,
        schema: &Schema,
    ) -> Result<Measured, Error> {
        let tables = self.tables(row, replication)?;
        let (cells, unknown) = cells_of(&tables, self.axes(), layout, schema);
        let text: Vec<String> = cells
            .iter()
            .map(|c| c.map(render_value).unwrap_or_default())
            .collect();
        let values = text.iter().map(|t| parse_value(t).ok().flatten()).collect();
        Ok(Measured {
            text,
            values,
            unknown,
        })
    }

    fn axes(&self) -> usize {
        self.rows.first().map_or(1, |s| s.axes.len())
    }
}

/// One unit's metrics in schema order: as written in `replications.csv`, and
/// parsed back from that text (what the summary uses, as a merge would).
#[derive(Debug, Clone)]
pub struct Measured {
    pub text: Vec<String>,
    pub values: Vec<Option<f64>>,
    /// Metric values the schema has no column for.
    pub unknown: usize,
}

/// A metric cell's text as a number: empty is missing (`Ok(None)`).
pub fn parse_value(text: &str) -> Result<Option<f64>, std::num::ParseFloatError> {
    if text.is_empty() {
        Ok(None)
    } else {
        text.parse().map(Some)
    }
}

/// One metric cell of a run's tables.
struct Entry {
    position: usize,
    row: usize,
    col: usize,
    name: String,
}

/// The shape of one per-row table: what must stay the same for a [`Layout`] to
/// apply to another run's tables.
struct Shape {
    position: usize,
    name: String,
    key_len: usize,
    /// The key cells of each of its rows.
    keys: Vec<Vec<Cell>>,
}

/// Where each metric of a compare row sits in its tables, learnt from replication 0,
/// so later runs fill their values without building names. A run whose tables have
/// another shape (a different key, more rows) falls back to names.
pub struct Layout {
    shapes: Vec<Shape>,
    /// (table position, table row, column, metric index)
    slots: Vec<(usize, usize, usize, usize)>,
}

impl Layout {
    fn new(tables: &[Table], axes: usize, schema: &Schema) -> Layout {
        let (entries, shapes) = walk(tables, axes);
        Layout {
            shapes,
            slots: entries
                .into_iter()
                .filter_map(|e| {
                    let metric = *schema.index.get(&e.name)?;
                    Some((e.position, e.row, e.col, metric))
                })
                .collect(),
        }
    }

    fn fits(&self, tables: &[Table], axes: usize) -> bool {
        let mut per_row = tables.iter().enumerate().filter(|(_, t)| is_per_row(t));
        let same = self.shapes.iter().all(|shape| {
            per_row.next().is_some_and(|(position, t)| {
                position == shape.position
                    && t.name == shape.name
                    && t.rows.len() == shape.keys.len()
                    && t.rows
                        .iter()
                        .zip(&shape.keys)
                        .all(|(r, k)| r[axes..axes + shape.key_len] == k[..])
            })
        });
        same && per_row.next().is_none()
    }
}

/// The metric cells of `tables` in schema order, and how many the schema lacks.
fn cells_of<'t>(
    tables: &'t [Table],
    axes: usize,
    layout: &Layout,
    schema: &Schema,
) -> (Vec<Option<&'t Cell>>, usize) {
    let mut cells = vec![None; schema.names.len()];
    let mut unknown = 0;
    if layout.fits(tables, axes) {
        for &(t, r, c, metric) in &layout.slots {
            cells[metric] = Some(&tables[t].rows[r][c]);
        }
    } else {
        for e in walk(tables, axes).0 {
            match schema.index.get(&e.name) {
                Some(&metric) => cells[metric] = Some(&tables[e.position].rows[e.row][e.col]),
                None => unknown += 1,
            }
        }
    }
    (cells, unknown)
}

fn named(tables: &[Table], axes: usize) -> Named {
    walk(tables, axes)
        .0
        .into_iter()
        .map(|e| (e.name, tables[e.position].rows[e.row][e.col].clone()))
        .collect()
}

fn is_per_row(t: &Table) -> bool {
    t.headers.first().map(String::as_str) == Some(ROW_MARK)
}

/// Every metric cell of the per-row tables, named, and the tables' shapes.
fn walk(tables: &[Table], axes: usize) -> (Vec<Entry>, Vec<Shape>) {
    let mut entries = Vec::new();
    let mut shapes = Vec::new();
    for (position, t) in tables.iter().enumerate().filter(|(_, t)| is_per_row(t)) {
        let key_len = if t.rows.len() <= 1 {
            0
        } else {
            key_length(&t.rows, axes)
        };
        for (r, row) in t.rows.iter().enumerate() {
            let key: Vec<String> = (axes..axes + key_len)
                .map(|c| key_part(&t.headers[c], &row[c]))
                .collect();
            let prefix = if key.is_empty() {
                t.name.clone()
            } else {
                format!("{}.{}", t.name, key.join("."))
            };
            for (c, (header, cell)) in t.headers.iter().zip(row).enumerate().skip(axes + key_len) {
                if !matches!(cell, Cell::Text(_)) {
                    entries.push(Entry {
                        position,
                        row: r,
                        col: c,
                        name: format!("{prefix}.{header}"),
                    });
                }
            }
        }
        shapes.push(Shape {
            position,
            name: t.name.clone(),
            key_len,
            keys: t
                .rows
                .iter()
                .map(|row| row[axes..axes + key_len].to_vec())
                .collect(),
        });
    }
    (entries, shapes)
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

    /// A per-row table as the sweep's analyses build it (mark column, one axis).
    fn table(name: &str, headers: &[&str], rows: Vec<Vec<Cell>>) -> Table {
        let mut t = Table::new(
            name,
            name,
            [ROW_MARK, "policy"]
                .iter()
                .chain(headers)
                .map(|h| h.to_string())
                .collect(),
        );
        for r in rows {
            t.push(
                [Cell::from(""), Cell::from("greedy")]
                    .into_iter()
                    .chain(r)
                    .collect(),
            );
        }
        t
    }

    fn run_tables(passed: i64, members: &[&str]) -> Vec<Table> {
        let outcomes = table(
            "outcomes",
            &["answered", "mean_ms", "note", "ok"],
            vec![vec![46i64.into(), 45.8.into(), "x".into(), true.into()]],
        );
        let members = table(
            "members",
            &["limiter", "member", "passed"],
            members
                .iter()
                .map(|m| vec!["edge".into(), (*m).into(), passed.into()])
                .collect(),
        );
        // a table across rows (no mark column) is not a metric source
        let across = Table::new("false_drops", "x", vec!["policy".into(), "extra".into()]);
        vec![outcomes, across, members]
    }

    #[test]
    fn metrics_are_named_by_table_key_and_column() {
        let names: Vec<String> = named(&run_tables(3, &["u1", "u2"]), 2)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            names,
            [
                "outcomes.answered",
                "outcomes.mean_ms",
                "outcomes.ok",
                "members.edge.u1.passed",
                "members.edge.u2.passed"
            ]
        );
    }

    #[test]
    fn layouts_fill_values_and_fall_back_to_names_when_tables_change_shape() {
        let probe = run_tables(3, &["u1", "u2"]);
        let schema = Schema::new(&[named(&probe, 2)]);
        let layout = Layout::new(&probe, 2, &schema);
        let render = |(cells, unknown): (Vec<Option<&Cell>>, usize)| {
            let text: Vec<String> = cells
                .iter()
                .map(|c| c.map(render_value).unwrap_or_default())
                .collect();
            (text.join(","), unknown)
        };
        let later = run_tables(5, &["u1", "u2"]);
        assert!(layout.fits(&later, 2));
        assert_eq!(
            render(cells_of(&later, 2, &layout, &schema)),
            ("46,45.80,1,5,5".into(), 0)
        );
        // u2 missing, u3 new: names decide, u3 has no column
        let other = run_tables(7, &["u1", "u3"]);
        assert!(!layout.fits(&other, 2));
        assert_eq!(
            render(cells_of(&other, 2, &layout, &schema)),
            ("46,45.80,1,7,".into(), 1)
        );
    }

    #[test]
    fn the_schema_is_the_union_in_first_seen_order() {
        let a: Named = vec![("t.x".into(), Cell::Int(1)), ("t.y".into(), Cell::Int(2))];
        let b: Named = vec![("t.z".into(), Cell::Int(3)), ("t.x".into(), Cell::Int(4))];
        let s = Schema::new(&[a, b]);
        assert_eq!(s.names, ["t.x", "t.y", "t.z"]);
        assert_eq!(parse_value(""), Ok(None));
        assert_eq!(parse_value("45.80"), Ok(Some(45.8)));
        assert!(parse_value("x").is_err());
    }
}
