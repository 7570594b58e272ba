//! The metrics of one run, derived from the report tables `resim run` writes.
//!
//! A sweep knows no table by name: it runs one compare row, asks the analyses for
//! their tables and keeps every numeric cell of the tables whose scope is
//! [`Scope::PerCompareRow`]: each such table says how many axis columns it starts
//! with and which key columns tell its rows apart. Tables across rows
//! (`deadline_cost`, `false_drops`, ...) are left out. Names:
//!
//! - a table with one row (for the run): `<table>.<column>` (`outcomes.answered`,
//!   and `limiters.passed` when there is one limiter);
//! - a table with several rows: `<table>.<key>.<column>`, the key being the table's
//!   key columns, text written as is and numbers as `<column>_<value>`
//!   (`members.edge.u1.passed`, `ladder.concurrency_8.successful`); key columns are
//!   not metrics themselves.
//!
//! Booleans become 1 / 0 (their mean is a share); an empty cell is a missing value.

use super::pooled::UnitCounts;
use crate::analysis::{self, Results};
use crate::error::Error;
use crate::format::push_number;
use crate::report::{Cell, Table};
use crate::scenario::Scenario;
use crate::table::{metric_parts, quote_part};
use std::collections::HashMap;
use std::ops::Range;

pub use crate::thresholds::Named;

/// Runs single compare rows of a scenario and names their metrics.
pub struct RowRunner {
    /// One scenario per compare row, holding only that row.
    rows: Vec<Scenario>,
}

impl RowRunner {
    /// Each row runs with its model's seed.
    pub fn new(scenario: &Scenario) -> RowRunner {
        // A row's tables name the axes (path and column) and need none of
        // their values: with them, each of 10,000 rows held a copy of an
        // axis's 10,000 values (10^8 copies, 27 s before a sweep began).
        let axes: Vec<crate::scenario::Axis> = scenario
            .axes
            .iter()
            .map(|a| crate::scenario::Axis {
                path: a.path.clone(),
                column: a.column.clone(),
                values: Vec::new(),
            })
            .collect();
        let rows = scenario
            .rows
            .iter()
            .map(|row| Scenario {
                file: scenario.file.clone(),
                axes: axes.clone(),
                rows: vec![row.clone()],
            })
            .collect();
        RowRunner { rows }
    }

    /// The metrics of compare row `row` of a finished run (`resim run`), named as
    /// a sweep names them.
    pub fn metrics_of(&self, row: usize, run: crate::sim::RunResult) -> Named {
        let scenario = &self.rows[row];
        let mut results = Results::new(scenario, vec![run]);
        let tables = analysis::analyse_per_row(&mut results);
        self.named(&tables)
    }

    /// The per-row tables of compare row `row` before any event ([`crate::sim::shape`]).
    pub fn shape_tables(&self, row: usize) -> Vec<Table> {
        let scenario = &self.rows[row];
        let run = crate::sim::shape(&scenario.rows[0].model);
        analysis::analyse_per_row(&mut Results::new(scenario, vec![run]))
    }

    /// Compare rows it runs.
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// Runs replication `replication` of compare row `row`: its report tables
    /// per compare row (those across rows hold no metrics of the run).
    pub fn tables(&self, row: usize, replication: u64) -> Result<Vec<Table>, Error> {
        self.run_tables(row, replication, analysis::analyse_per_row)
    }

    fn run_tables(
        &self,
        row: usize,
        replication: u64,
        analyse: fn(&mut Results) -> Vec<Table>,
    ) -> Result<Vec<Table>, Error> {
        Ok(self.run_counted(row, replication, analyse)?.0)
    }

    /// [`Self::run_tables`], and what the run adds to `pooled.csv`.
    fn run_counted(
        &self,
        row: usize,
        replication: u64,
        analyse: fn(&mut Results) -> Vec<Table>,
    ) -> Result<(Vec<Table>, UnitCounts), Error> {
        let scenario = &self.rows[row];
        // a run limit names the file and the row, as `resim run` does, and
        // the replication that passed it
        let run =
            crate::sim::run(&scenario.rows[0].model, replication).map_err(
                |e| match crate::in_row(e, scenario, &scenario.rows[0]) {
                    Error::Limit(m) => Error::Limit(format!("{m} (replication {replication})")),
                    e => e,
                },
            )?;
        let counts = UnitCounts::of(&run);
        Ok((analyse(&mut Results::new(scenario, vec![run])), counts))
    }

    /// The metrics of a run's tables, by name.
    pub fn named(&self, tables: &[Table]) -> Named {
        named(tables)
    }

    /// Where row `row`'s metrics sit in tables shaped like `tables` (its replication 0).
    pub fn layout(&self, tables: &[Table], schema: &Schema) -> Layout {
        Layout::new(tables, schema)
    }

    /// Runs one unit and returns its values in schema order.
    pub fn measure(
        &self,
        row: usize,
        replication: u64,
        layout: &Layout,
        schema: &Schema,
    ) -> Result<Measured, Error> {
        // the tables' cells alone when they have the layout's shape (nearly
        // always); else the named tables, from the same run made again
        let (cells_only, counts) = self.run_counted(row, replication, analysis::analyse_cells)?;
        let named;
        let (tables, fits) = if layout.fits(&cells_only) {
            (&cells_only, true)
        } else {
            named = self.tables(row, replication)?;
            let fits = layout.fits(&named);
            (&named, fits)
        };
        let (cells, extras) = cells_of(tables, layout, schema, fits);
        // one string for the unit's cells, written by this worker and freed by
        // the writer thread: two allocations per unit instead of one per cell
        let mut text = String::with_capacity(cells.len() * 8);
        let mut values = Vec::with_capacity(cells.len());
        for (i, cell) in cells.into_iter().enumerate() {
            if i > 0 {
                text.push(SEPARATOR);
            }
            let start = text.len();
            if let Some(cell) = cell {
                push_value(&mut text, cell);
            }
            values.push(
                cell.and_then(exact_value)
                    .unwrap_or_else(|| parse_value(&text[start..]).ok().flatten()),
            );
        }
        let extras = extras
            .into_iter()
            .filter_map(|(name, cell)| {
                let mut text = String::new();
                push_value(&mut text, cell);
                (!text.is_empty()).then_some((name, text))
            })
            .collect();
        Ok(Measured {
            text,
            values,
            extras,
            counts,
        })
    }
}

/// What can be told of a scenario's metric names without running it: the
/// per-row tables its compare rows make, with their metric columns, and the
/// names a run with no request already has. A name passes when it is one of
/// those, or names such a table and one of its columns: the rows a run finds
/// (members, keys, ladder steps with traffic) are checked once it has them.
pub struct Shapes {
    tables: Vec<(String, Vec<String>)>,
    names: Vec<String>,
}

impl Shapes {
    /// The shapes of every compare row of `scenario` (no event is run).
    pub fn of(scenario: &Scenario) -> Shapes {
        let runner = RowRunner::new(scenario);
        let mut shapes = Shapes {
            tables: Vec::new(),
            names: Vec::new(),
        };
        for row in 0..runner.row_count() {
            let tables = runner.shape_tables(row);
            for (name, _) in named(&tables) {
                if !shapes.names.contains(&name) {
                    shapes.names.push(name);
                }
            }
            for t in per_row(&tables).map(|(_, t, _)| t) {
                let skip = t.key_columns().map_or(0, |k| k.end);
                let columns = t.headers[skip..].to_vec();
                match shapes.tables.iter_mut().find(|(n, _)| *n == t.name) {
                    Some((_, known)) => {
                        for c in columns {
                            if !known.contains(&c) {
                                known.push(c);
                            }
                        }
                    }
                    None => shapes.tables.push((t.name.clone(), columns)),
                }
            }
        }
        shapes
    }

    /// Why `metric` cannot be a metric of the scenario, or None when it can be.
    pub fn problem(&self, metric: &str) -> Option<String> {
        if self.names.iter().any(|n| n == metric) {
            return None;
        }
        let parts = metric_parts(metric);
        let table = parts[0].as_str();
        // the name with another table, or another column (the column, last, is
        // never quoted: a header has no dot)
        let rest = metric.split_once('.').map_or("", |(_, r)| r);
        let Some((_, columns)) = self.tables.iter().find(|(n, _)| n == table) else {
            let names: Vec<&str> = self.tables.iter().map(|(n, _)| n.as_str()).collect();
            let candidates: Vec<String> = names.iter().map(|t| format!("{t}.{rest}")).collect();
            return Some(format!(
                "no metric named `{metric}`{}: this scenario has no table `{table}`; its tables: {}",
                crate::error::did_you_mean(metric, candidates.iter().map(String::as_str)),
                names.join(", ")
            ));
        };
        let column = parts.last().map(String::as_str).unwrap_or_default();
        if parts.len() < 2 || !columns.iter().any(|c| c == column) {
            let head = metric.rsplit_once('.').map_or(metric, |(h, _)| h);
            let candidates: Vec<String> = columns.iter().map(|c| format!("{head}.{c}")).collect();
            return Some(format!(
                "no metric named `{metric}`{}: table `{table}` has no column `{column}`; its columns: {}",
                crate::error::did_you_mean(metric, candidates.iter().map(String::as_str)),
                columns.join(", ")
            ));
        }
        None
    }
}

/// One unit's metrics in schema order: as written in `replications.csv`, and
/// parsed back from that text (what the summary uses, as a merge would).
#[derive(Debug, Clone)]
pub struct Measured {
    /// The cells' text, joined by [`SEPARATOR`] (see [`Measured::text`]).
    text: String,
    pub values: Vec<Option<f64>>,
    /// Metric values the schema has no column for (rows of a table that
    /// replication 0 did not have, such as the later windows of a longer run),
    /// named, as text: `replications.csv` gets columns for them at the end.
    pub extras: Vec<(String, String)>,
    /// The run's requests and answered times, for `pooled.csv`.
    pub counts: UnitCounts,
}

/// Between two cells of [`Measured`]'s text: a metric's text is a number or
/// empty, never a comma.
const SEPARATOR: char = ',';

impl Measured {
    /// The value of metric `name`: its column in `schema`, else one of the
    /// extras (a row replication 0 did not have).
    pub fn value(&self, schema: &Schema, name: &str) -> Option<f64> {
        match schema.names.iter().position(|n| n == name) {
            Some(i) => self.values[i],
            None => self
                .extras
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, t)| t.parse().ok()),
        }
    }

    /// Each metric's text, in schema order (one per value).
    pub fn text(&self) -> impl Iterator<Item = &str> {
        // a one-char set, not the char: a plain scan, cheaper than memchr for
        // cells of a few bytes
        self.text.split([SEPARATOR]).take(self.values.len())
    }
}

/// A metric cell's text as a number: empty is missing (`Ok(None)`).
pub fn parse_value(text: &str) -> Result<Option<f64>, std::num::ParseFloatError> {
    if text.is_empty() {
        Ok(None)
    } else {
        text.parse().map(Some)
    }
}

/// What [`parse_value`] reads back from [`render_value`]'s text of `cell`, when
/// that is known without the text: an integer (a count, a boolean, a whole
/// number below 10^15, written with all its digits) parses to the nearest `f64`,
/// which is what `as f64` gives. `None`: parse the text.
fn exact_value(cell: &Cell) -> Option<Option<f64>> {
    match *cell {
        Cell::Int(i) => Some(Some(i as f64)),
        Cell::Bool(b) => Some(Some(f64::from(u8::from(b)))),
        // the whole-number case of format_number; -0.0 is written "0"
        Cell::Num(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 => {
            Some(Some(x as i64 as f64))
        }
        Cell::Text(_) | Cell::Empty => Some(None),
        Cell::Num(_) => None,
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
    /// The columns naming its rows (see `per_row`).
    key: Range<usize>,
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
    fn new(tables: &[Table], schema: &Schema) -> Layout {
        let (entries, shapes) = walk(tables);
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

    fn fits(&self, tables: &[Table]) -> bool {
        let mut per_row = per_row(tables);
        let same = self.shapes.iter().all(|shape| {
            per_row.next().is_some_and(|(position, t, key)| {
                position == shape.position
                    && t.name == shape.name
                    && key == shape.key
                    && t.rows.len() == shape.keys.len()
                    && t.rows
                        .iter()
                        .zip(&shape.keys)
                        .all(|(r, k)| r[key.clone()] == k[..])
            })
        });
        same && per_row.next().is_none()
    }
}

/// The metric cells of `tables` in schema order, and those the schema lacks,
/// named; `fits`: whether `layout` fits `tables` (else their names decide).
fn cells_of<'t>(
    tables: &'t [Table],
    layout: &Layout,
    schema: &Schema,
    fits: bool,
) -> (Vec<Option<&'t Cell>>, Vec<(String, &'t Cell)>) {
    let mut cells = vec![None; schema.names.len()];
    let mut extras = Vec::new();
    if fits {
        for &(t, r, c, metric) in &layout.slots {
            cells[metric] = Some(&tables[t].rows[r][c]);
        }
    } else {
        for e in walk(tables).0 {
            let cell = &tables[e.position].rows[e.row][e.col];
            match schema.index.get(&e.name) {
                Some(&metric) => cells[metric] = Some(cell),
                None => extras.push((e.name, cell)),
            }
        }
    }
    (cells, extras)
}

/// The metric columns of `replications.csv` when later replications had metrics
/// the schema (`base`, from replication 0) lacks: `base`, each metric of
/// `extras` (in first-seen order) placed after the last metric of its table
/// (the name's part before the first `.`), the tables `base` has none of at the
/// end. Only each table's own order of `extras`, and the order in which the new
/// tables first appear, matter, so shards that each place their own extras give
/// the same columns when merged.
pub fn place(base: &[String], extras: &[String]) -> Vec<String> {
    let table = |name: &str| name.split('.').next().unwrap_or(name).to_string();
    let mut out: Vec<String> = Vec::with_capacity(base.len() + extras.len());
    let mut placed = vec![false; extras.len()];
    for (i, name) in base.iter().enumerate() {
        out.push(name.clone());
        let t = table(name);
        let last_of_table = base[i + 1..].iter().all(|n| table(n) != t);
        if last_of_table {
            for (j, e) in extras.iter().enumerate() {
                if !placed[j] && table(e) == t {
                    out.push(e.clone());
                    placed[j] = true;
                }
            }
        }
    }
    // new tables, in the order they first appear, each whole
    for j in 0..extras.len() {
        if placed[j] {
            continue;
        }
        let t = table(&extras[j]);
        for (k, e) in extras.iter().enumerate().skip(j) {
            if !placed[k] && table(e) == t {
                out.push(e.clone());
                placed[k] = true;
            }
        }
    }
    out
}

fn named(tables: &[Table]) -> Named {
    walk(tables)
        .0
        .into_iter()
        .map(|e| (e.name, tables[e.position].rows[e.row][e.col].clone()))
        .collect()
}

/// The tables computed per compare row, with their positions and the columns that
/// name their rows in a run: the table's key columns when the run gave it several
/// rows, none for a single row (named by the table alone).
fn per_row(tables: &[Table]) -> impl Iterator<Item = (usize, &Table, Range<usize>)> {
    tables.iter().enumerate().filter_map(|(position, t)| {
        let key = t.key_columns()?;
        let key = if t.rows.len() <= 1 {
            key.start..key.start
        } else {
            key
        };
        Some((position, t, key))
    })
}

/// Every metric cell of the per-row tables, named, and the tables' shapes.
fn walk(tables: &[Table]) -> (Vec<Entry>, Vec<Shape>) {
    let mut entries = Vec::new();
    let mut shapes = Vec::new();
    for (position, t, key_range) in per_row(tables) {
        for (r, row) in t.rows.iter().enumerate() {
            let key: Vec<String> = key_range
                .clone()
                .map(|c| key_part(&t.headers[c], &row[c]))
                .collect();
            let prefix = if key.is_empty() {
                t.name.clone()
            } else {
                format!("{}.{}", t.name, key.join("."))
            };
            let skip = t.key_columns().map_or(0, |k| k.end);
            for (c, (header, cell)) in t.headers.iter().zip(row).enumerate().skip(skip) {
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
            keys: t
                .rows
                .iter()
                .map(|row| row[key_range.clone()].to_vec())
                .collect(),
            key: key_range,
        });
    }
    (entries, shapes)
}

fn key_part(header: &str, cell: &Cell) -> String {
    let part = match cell {
        Cell::Text(s) => s.clone(),
        other => format!("{header}_{}", other.render()),
    };
    quote_part(&part)
}

/// A metric value as [`push_value`] writes it, as a `String` of its own.
#[cfg(test)]
fn render_value(cell: &Cell) -> String {
    let mut text = String::new();
    push_value(&mut text, cell);
    text
}

/// Appends how a metric value is written in `replications.csv` to `out`: numbers
/// as in the report CSVs, booleans as 1 / 0, anything else (missing) as an empty
/// cell.
fn push_value(out: &mut String, cell: &Cell) {
    use std::fmt::Write;
    match cell {
        // writing to a String cannot fail
        Cell::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Cell::Num(x) => push_number(out, *x),
        Cell::Bool(b) => out.push(if *b { '1' } else { '0' }),
        Cell::Text(_) | Cell::Empty => {}
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
    fn a_rows_runner_holds_no_copy_of_the_axes_values() {
        let values: Vec<String> = (0..2000).map(|i| format!("{}", 10 + i)).collect();
        let text = format!(
            "[scenario]\nname = \"wide\"\n[services.a]\nroutes = [\"/a\"]\n\
             [services.a.handler]\ntype = \"server\"\nslots = 1\nqueue = 1\n\
             service = {{ constant = 5 }}\n[workload]\ntype = \"open\"\nrate_rps = 10\n\
             requests = 1\nroute = \"/a\"\n[compare]\n\"workload.rate_rps\" = [{}]\n",
            values.join(", ")
        );
        let s = crate::scenario::load_str(
            &text,
            std::path::Path::new("wide.toml"),
            &crate::scenario::LoadOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.rows.len(), 2000);
        let runner = RowRunner::new(&s);
        // each row names the axis (its tables' columns) without its 2000 values:
        // copies of them made a 10,000-value axis cost 10^8 copies
        for row in &runner.rows {
            assert_eq!(row.columns(), s.columns());
            assert!(row.axes.iter().all(|a| a.values.is_empty()));
        }
    }

    #[test]
    fn key_parts_are_text_or_column_and_number() {
        assert_eq!(key_part("concurrency", &Cell::Int(8)), "concurrency_8");
        assert_eq!(key_part("limiter", &"edge".into()), "edge");
        // the separator in a name is quoted: the name cannot be another's
        assert_eq!(key_part("caller", &"x.y".into()), "\"x.y\"");
        assert_eq!(
            key_part("caller", &"say \"hi\"".into()),
            "\"say \"\"hi\"\"\""
        );
        assert_eq!(
            key_part("window_start_ms", &Cell::Num(0.5)),
            "\"window_start_ms_0.50\""
        );
    }

    #[test]
    fn metric_names_split_back_into_their_parts() {
        let name = format!(
            "calls.{}.{}.attempts",
            quote_part("x.y"),
            quote_part("z \"q\"")
        );
        assert_eq!(name, "calls.\"x.y\".\"z \"\"q\"\"\".attempts");
        assert_eq!(metric_parts(&name), ["calls", "x.y", "z \"q\"", "attempts"]);
        // two rows that joined by dots would read the same stay apart
        let a = format!("calls.{}.{}.p", quote_part("x.y"), quote_part("z"));
        let b = format!("calls.{}.{}.p", quote_part("x"), quote_part("y.z"));
        assert_ne!(a, b);
        assert_eq!(metric_parts("outcomes.answered"), ["outcomes", "answered"]);
    }

    #[test]
    fn values_are_rendered_like_the_report_csvs() {
        assert_eq!(render_value(&Cell::Int(48)), "48");
        assert_eq!(render_value(&Cell::Num(45.8)), "45.80");
        assert_eq!(render_value(&Cell::Bool(true)), "1");
        assert_eq!(render_value(&Cell::Empty), "");
    }

    /// A per-row table as the sweep's analyses build it (one axis, `key` key columns).
    fn table(name: &str, key: usize, headers: &[&str], rows: Vec<Vec<Cell>>) -> Table {
        let headers = ["policy"].iter().chain(headers).map(|h| h.to_string());
        let mut t = Table::per_compare_row(name, name, headers.collect(), 1, key);
        for r in rows {
            t.push(std::iter::once(Cell::from("greedy")).chain(r).collect());
        }
        t
    }

    fn run_tables(passed: i64, members: &[&str]) -> Vec<Table> {
        let outcomes = table(
            "outcomes",
            0,
            &["answered", "mean_ms", "note", "ok"],
            vec![vec![46i64.into(), 45.8.into(), "x".into(), true.into()]],
        );
        let members = table(
            "members",
            2,
            &["limiter", "member", "passed"],
            members
                .iter()
                .map(|m| vec!["edge".into(), (*m).into(), passed.into()])
                .collect(),
        );
        // a table across rows is not a metric source
        let across = Table::new("false_drops", "x", vec!["policy".into(), "extra".into()]);
        vec![outcomes, across, members]
    }

    #[test]
    fn metrics_are_named_by_table_key_and_column() {
        let names: Vec<String> = named(&run_tables(3, &["u1", "u2"]))
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
    fn rows_are_named_by_the_declared_key_columns() {
        // the limiter alone tells these rows apart, but the table's key is
        // (limiter, member): names do not depend on which rows a run happens to have
        let members = table(
            "members",
            2,
            &["limiter", "member", "passed"],
            vec![
                vec!["edge".into(), "u1".into(), 1i64.into()],
                vec!["core".into(), "u1".into(), 2i64.into()],
            ],
        );
        let names: Vec<String> = named(&[members]).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["members.edge.u1.passed", "members.core.u1.passed"]);
    }

    #[test]
    fn layouts_fill_values_and_fall_back_to_names_when_tables_change_shape() {
        let probe = run_tables(3, &["u1", "u2"]);
        let schema = Schema::new(&[named(&probe)]);
        let layout = Layout::new(&probe, &schema);
        let render = |(cells, extras): (Vec<Option<&Cell>>, Vec<(String, &Cell)>)| {
            let text: Vec<String> = cells
                .iter()
                .map(|c| c.map(render_value).unwrap_or_default())
                .collect();
            (text.join(","), extras.len())
        };
        let later = run_tables(5, &["u1", "u2"]);
        assert!(layout.fits(&later));
        assert_eq!(
            render(cells_of(&later, &layout, &schema, true)),
            ("46,45.80,1,5,5".into(), 0)
        );
        // u2 missing, u3 new: names decide, u3 has no column
        let other = run_tables(7, &["u1", "u3"]);
        assert!(!layout.fits(&other));
        assert_eq!(
            render(cells_of(&other, &layout, &schema, false)),
            ("46,45.80,1,7,".into(), 1)
        );
    }

    #[test]
    fn a_units_text_splits_into_one_cell_per_value() {
        let m = Measured {
            text: "1,,2.50".into(),
            values: vec![Some(1.0), None, Some(2.5)],
            extras: vec![],
            counts: UnitCounts::default(),
        };
        assert_eq!(m.text().collect::<Vec<_>>(), ["1", "", "2.50"]);
        let empty = Measured {
            text: String::new(),
            values: vec![],
            extras: vec![],
            counts: UnitCounts::default(),
        };
        assert_eq!(empty.text().count(), 0);
        let one_missing = Measured {
            text: String::new(),
            values: vec![None],
            extras: vec![],
            counts: UnitCounts::default(),
        };
        assert_eq!(one_missing.text().collect::<Vec<_>>(), [""]);
    }

    /// `exact_value` is what the text round trip gives, bit for bit.
    #[test]
    fn exact_values_are_the_parsed_text() {
        let mut cells = vec![
            Cell::Empty,
            Cell::Text("x".into()),
            Cell::Bool(true),
            Cell::Bool(false),
            Cell::Num(0.0),
            Cell::Num(-0.0),
            Cell::Num(-3.0),
            Cell::Num(999_999_999_999_999.0),
            Cell::Num(1e15),
            Cell::Num(f64::NAN),
            Cell::Num(f64::INFINITY),
            Cell::Num(2.5),
        ];
        for i in [
            0,
            1,
            -1,
            48,
            i64::MAX,
            i64::MIN,
            (1 << 53) + 1,
            -(1 << 53) - 3,
        ] {
            cells.push(Cell::Int(i));
        }
        for cell in &cells {
            let parsed = parse_value(&render_value(cell)).ok().flatten();
            if let Some(exact) = exact_value(cell) {
                assert_eq!(
                    exact.map(f64::to_bits),
                    parsed.map(f64::to_bits),
                    "{cell:?}"
                );
            } else {
                assert!(matches!(cell, Cell::Num(_)), "{cell:?}");
            }
        }
    }

    /// The sweep builds only the tables per compare row: the same tables, in the
    /// same order, as the full analysis has, for scenarios with tables across rows
    /// (deadline_cost, error_budget, false_drops), limiters and a ladder.
    #[test]
    fn sweeps_build_the_per_row_tables_of_the_full_analysis() {
        use crate::scenario::{LoadOptions, Purpose};
        for file in [
            "ay10-tariff-slowdown",
            "dy13-two-limiters",
            "io22-capacity-ladder",
        ] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(format!("{file}.toml"));
            let opts = LoadOptions {
                purpose: Purpose::Sweep,
                ..LoadOptions::default()
            };
            let scenario = crate::scenario::load(&path, &opts).expect(file);
            let runner = RowRunner::new(&scenario);
            let mut across = 0;
            for row in 0..runner.row_count() {
                let scenario = &runner.rows[row];
                let run = crate::sim::run(&scenario.rows[0].model, 1).expect(file);
                let mut results = Results::new(scenario, vec![run]);
                let all = analysis::analyse(&mut results);
                let per_row = analysis::analyse_per_row(&mut results);
                let kept: Vec<&Table> = all.iter().filter(|t| t.key_columns().is_some()).collect();
                across += all.len() - kept.len();
                assert_eq!(per_row.iter().collect::<Vec<_>>(), kept, "{file} row {row}");
                // the cells alone: the same tables with blank headers and no title
                let cells = analysis::analyse_cells(&mut results);
                assert_eq!(cells.len(), per_row.len(), "{file} row {row}");
                for (c, t) in cells.iter().zip(&per_row) {
                    assert_eq!(
                        (&c.name, &c.rows, c.key_columns(), c.headers.len()),
                        (&t.name, &t.rows, t.key_columns(), t.headers.len()),
                        "{file} row {row}"
                    );
                    assert!(c.title.is_empty() && c.headers.iter().all(String::is_empty));
                }
                // a layout that does not fit takes the named tables: the same values
                let probe = runner.tables(row, 0).expect(file);
                let schema = Schema::new(&[named(&probe)]);
                let layout = Layout::new(&probe, &schema);
                let misfit = Layout::new(&[], &schema);
                for replication in [0, 3] {
                    let fast = runner
                        .measure(row, replication, &layout, &schema)
                        .expect(file);
                    let slow = runner
                        .measure(row, replication, &misfit, &schema)
                        .expect(file);
                    assert_eq!(fast.text, slow.text, "{file} row {row}");
                    assert_eq!(fast.extras, slow.extras, "{file} row {row}");
                    assert!(!fast.text.is_empty(), "{file} row {row}");
                }
            }
            assert!(across > 0 || file != "ay10-tariff-slowdown", "{file}");
        }
    }

    #[test]
    fn later_metrics_join_their_table() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let base = s(&["ts.w_0.a", "ts.w_1.a", "svc.w_0.b", "rec.x"]);
        let extras = s(&[
            "ts.w_2.a",
            "svc.w_1.b",
            "new.y",
            "ts.w_3.a",
            "other.z",
            "new.q",
        ]);
        assert_eq!(
            place(&base, &extras),
            s(&[
                "ts.w_0.a",
                "ts.w_1.a",
                "ts.w_2.a",
                "ts.w_3.a",
                "svc.w_0.b",
                "svc.w_1.b",
                "rec.x",
                "new.y",
                "new.q",
                "other.z"
            ])
        );
        // each table's order and the new tables' first appearance are all that count
        let shuffled = s(&[
            "svc.w_1.b",
            "new.y",
            "ts.w_2.a",
            "other.z",
            "ts.w_3.a",
            "new.q",
        ]);
        assert_eq!(place(&base, &shuffled), place(&base, &extras));
        assert_eq!(place(&base, &[]), base);
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
