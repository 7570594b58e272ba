//! Tables: one [`Table`] renders both as an aligned text table (stdout) and,
//! through `report`, as a CSV file, so the two always show the same figures.
//! A leaf module, so that the modules that fill tables (`analysis`) and the one
//! that writes them (`report`) both use it without one reaching into the other.
//! Metric names (`table.key.column`) are made of a table's parts, so their
//! quoting lives here too.

use crate::format::format_number;

/// One cell of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text, written as is.
    Text(String),
    /// A whole number.
    Int(i64),
    /// A number, written by [`format_number`].
    Num(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A figure that does not exist (e.g. no saturation step).
    Empty,
}

impl Cell {
    /// The cell as written in the text report and the CSV (`Empty` as "").
    pub fn render(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Num(x) => format_number(*x),
            Cell::Bool(b) => b.to_string(),
            Cell::Empty => String::new(),
        }
    }

    /// The cell's number, when it is a finite one (`Int` or `Num`).
    pub fn number(&self) -> Option<f64> {
        match self {
            Cell::Int(i) => Some(*i as f64),
            Cell::Num(x) if x.is_finite() => Some(*x),
            _ => None,
        }
    }

    /// The cell as a metric's value: its finite number, or 1 and 0 for
    /// `true` and `false` (a threshold or a search may ask for a flag).
    pub fn metric(&self) -> Option<f64> {
        match self {
            Cell::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => self.number(),
        }
    }

    /// True for `Int` and `Num`.
    pub fn is_numeric(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::Num(_))
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.to_string())
    }
}
impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}
impl From<u64> for Cell {
    fn from(v: u64) -> Cell {
        Cell::Int(v as i64)
    }
}
impl From<usize> for Cell {
    fn from(v: usize) -> Cell {
        Cell::Int(v as i64)
    }
}
impl From<i64> for Cell {
    fn from(v: i64) -> Cell {
        Cell::Int(v)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Cell {
        Cell::Num(v)
    }
}
impl From<bool> for Cell {
    fn from(v: bool) -> Cell {
        Cell::Bool(v)
    }
}
impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Cell {
        v.map_or(Cell::Empty, Into::into)
    }
}

/// What a table's rows stand for: the table says it, so that a reader (the sweep)
/// never has to guess from the headers or the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Each row belongs to one compare row and its figures come from that row's run
    /// alone. A row starts with `axes` axis columns, then `key` columns that tell
    /// the rows of one compare row apart (0: one row per compare row).
    PerCompareRow {
        /// Axis columns at the start of each row.
        axes: usize,
        /// Key columns after them (0: one row per compare row).
        key: usize,
    },
    /// Figures across compare rows (one against another) or of the scenario as a
    /// whole: not the figures of any single run.
    AcrossRows,
}

/// The widest a line of the text report should be.
pub const WIDTH: usize = 120;

/// `text` broken at spaces into lines of at most `width` characters (a word
/// longer than that gets a line of its own), each ending in a newline; later lines
/// indented by two spaces.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = "  ".into();
        }
        if !line.is_empty() && line != "  " {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.trim().is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A named table: `name` is the CSV file stem, `title` the report heading.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The CSV file stem (`outcomes` for `outcomes.csv`).
    pub name: String,
    /// The heading in the text report.
    pub title: String,
    /// Column names: the CSV header.
    pub headers: Vec<String>,
    /// The rows, each as wide as `headers`.
    pub rows: Vec<Vec<Cell>>,
    /// Lines printed under the table in the report (not in the CSV).
    pub notes: Vec<String>,
    /// What its rows stand for.
    pub scope: Scope,
    /// Printed in full in the text report; a long table (a time series) is only
    /// named there, with its row count, and read from its CSV.
    pub printed: bool,
}

impl Table {
    /// A table across compare rows (see [`Scope::AcrossRows`]).
    pub fn new(name: &str, title: &str, headers: Vec<String>) -> Table {
        Table {
            name: name.into(),
            title: title.into(),
            headers,
            rows: Vec::new(),
            notes: Vec::new(),
            scope: Scope::AcrossRows,
            printed: true,
        }
    }

    /// A table of figures per compare row: `axes` axis columns, then `key` columns
    /// naming a row within its compare row, then the figures.
    pub fn per_compare_row(
        name: &str,
        title: &str,
        headers: Vec<String>,
        axes: usize,
        key: usize,
    ) -> Table {
        debug_assert!(axes + key <= headers.len(), "key of table {name}");
        Table {
            scope: Scope::PerCompareRow { axes, key },
            ..Table::new(name, title, headers)
        }
    }

    /// The columns that identify a row within its compare row (axes, then key),
    /// when the table is per compare row.
    pub fn key_columns(&self) -> Option<std::ops::Range<usize>> {
        match self.scope {
            Scope::PerCompareRow { axes, key } => Some(axes..axes + key),
            Scope::AcrossRows => None,
        }
    }

    /// Appends a row (as wide as `headers`).
    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(
            row.len(),
            self.headers.len(),
            "row width of table {}",
            self.name
        );
        self.rows.push(row);
    }

    /// A note naming the columns with a figure that is not a finite number (a
    /// product that overflowed past 1.8e308, or 0/0): such a figure is an empty
    /// cell, and an empty cell must not pass for a figure that does not exist.
    pub fn overflow_note(&self) -> Option<String> {
        let columns: Vec<&str> = (0..self.headers.len())
            .filter(|&c| {
                self.rows
                    .iter()
                    .any(|r| matches!(r[c], Cell::Num(x) if !x.is_finite()))
            })
            .map(|c| self.headers[c].as_str())
            .collect();
        (!columns.is_empty()).then(|| {
            format!(
                "empty where the figure is not a finite number (it overflowed past 1.8e308, or is 0/0; check the inputs it is computed from): {}",
                columns.join(", ")
            )
        })
    }

    /// The table's notes, with [`Self::overflow_note`] last when there is one.
    pub fn all_notes(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        notes.extend(self.overflow_note());
        notes
    }

    /// The column index of `header`.
    pub fn column(&self, header: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == header)
    }

    /// Aligned text: numbers right-aligned, text left-aligned, the fractional
    /// numbers of a column with one number of decimals (at most
    /// [`TEXT_DECIMALS`]; the CSV keeps every digit). A table wider than
    /// [`WIDTH`] is cut into blocks of columns, each repeating the leading text
    /// columns (the row's key); the title and notes are wrapped at [`WIDTH`].
    ///
    /// Columns empty in every row are left out (the CSV keeps them), named in
    /// a line under the table.
    pub fn render_text(&self) -> String {
        let empty: Vec<usize> = (0..self.headers.len())
            .filter(|&c| !self.rows.is_empty() && self.rows.iter().all(|r| r[c] == Cell::Empty))
            .collect();
        if empty.is_empty() || empty.len() == self.headers.len() {
            return Table {
                notes: self.all_notes(),
                ..self.clone()
            }
            .render_all_columns();
        }
        let kept = |c: &usize| !empty.contains(c);
        let names: Vec<&str> = empty.iter().map(|&c| self.headers[c].as_str()).collect();
        let mut notes = self.all_notes();
        notes.push(format!(
            "not shown, empty in every row (the CSV has them): {}",
            names.join(", ")
        ));
        let shown = Table {
            headers: (0..self.headers.len())
                .filter(kept)
                .map(|c| self.headers[c].clone())
                .collect(),
            rows: self
                .rows
                .iter()
                .map(|r| (0..r.len()).filter(kept).map(|c| r[c].clone()).collect())
                .collect(),
            notes,
            ..self.clone()
        };
        shown.render_all_columns()
    }

    /// [`Self::render_text`] with every column, empty or not.
    fn render_all_columns(&self) -> String {
        let decimals: Vec<Option<usize>> = (0..self.headers.len())
            .map(|c| column_decimals(self.rows.iter().map(|r| &r[c])))
            .collect();
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .zip(&decimals)
                    .map(|(cell, d)| match (cell, d) {
                        // 10^15 and more: scientific, as format_number writes it
                        (Cell::Num(x), Some(d)) if x.is_finite() && x.abs() < 1e15 => {
                            format!("{x:.d$}")
                        }
                        _ => cell.render(),
                    })
                    .collect()
            })
            .collect();
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                cells
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.headers[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = wrap(&self.title, WIDTH);
        for (i, block) in self.blocks(&widths).iter().enumerate() {
            if i > 0 {
                out.push_str("(continued)\n");
            }
            let header: Vec<String> = block
                .iter()
                .map(|&c| format!("{:<w$}", self.headers[c], w = widths[c]))
                .collect();
            out.push_str(header.join("  ").trim_end());
            out.push('\n');
            let rule: Vec<String> = block.iter().map(|&c| "-".repeat(widths[c])).collect();
            out.push_str(&rule.join("  "));
            out.push('\n');
            for (row, rendered) in self.rows.iter().zip(&cells) {
                let line: Vec<String> = block
                    .iter()
                    .map(|&c| {
                        let (s, w) = (&rendered[c], widths[c]);
                        if row[c].is_numeric() {
                            format!("{s:>w$}")
                        } else {
                            format!("{s:<w$}")
                        }
                    })
                    .collect();
                out.push_str(line.join("  ").trim_end());
                out.push('\n');
            }
        }
        for n in &self.notes {
            out.push_str(&wrap(n, WIDTH));
        }
        out
    }

    /// The columns of each block of the text table: all of them when they fit in
    /// [`WIDTH`]; else the key (the leading columns without numbers, while they
    /// take at most half the width) followed by as many others as fit.
    fn blocks(&self, widths: &[usize]) -> Vec<Vec<usize>> {
        let all: Vec<usize> = (0..widths.len()).collect();
        let span = |cols: &[usize]| -> usize {
            cols.iter().map(|&c| widths[c]).sum::<usize>() + 2 * cols.len().saturating_sub(1)
        };
        if span(&all) <= WIDTH {
            return vec![all];
        }
        let mut key = Vec::new();
        for c in 0..widths.len() {
            let textual = self.rows.iter().all(|r| !r[c].is_numeric());
            key.push(c);
            if !textual || span(&key) > WIDTH / 2 {
                key.pop();
                break;
            }
        }
        let mut blocks = Vec::new();
        let mut block = key.clone();
        for c in key.len()..widths.len() {
            block.push(c);
            if block.len() > key.len() + 1 && span(&block) > WIDTH {
                block.pop();
                blocks.push(std::mem::replace(&mut block, key.clone()));
                block.push(c);
            }
        }
        if block.len() > key.len() {
            blocks.push(block);
        }
        blocks
    }
}

/// Decimals shown in the text report for the numbers of a column: `None` when
/// none has a fraction (whole numbers stay bare); else the most any of them
/// needs (as [`format_number`] writes it), capped at [`TEXT_DECIMALS`].
fn column_decimals<'a>(cells: impl Iterator<Item = &'a Cell>) -> Option<usize> {
    cells
        .filter_map(|c| match c {
            Cell::Num(x) if x.is_finite() && x.abs() < 1e15 => {
                let s = format_number(*x);
                s.split_once('.').map(|(_, f)| f.len())
            }
            _ => None,
        })
        .max()
        .map(|d| d.min(TEXT_DECIMALS))
}

/// The most decimals a number gets in the text report.
pub const TEXT_DECIMALS: usize = 3;

/// A part of a metric name as written: as is, or, when it holds the separator
/// `.` or a quote (or is empty), between double quotes with its quotes doubled
/// (`calls."x.y".z.attempts`), so that no two rows' names can be the same.
pub fn quote_part(part: &str) -> String {
    if part.is_empty() || part.contains(['.', '"']) {
        format!("\"{}\"", part.replace('"', "\"\""))
    } else {
        part.to_string()
    }
}

/// Whether metric `name` is one per window of a time series
/// (`timeseries.window_start_ms_1000.answered`): `summary.csv` and
/// `paired.csv` hold those only with `[montecarlo] windows = true`.
pub fn per_window(name: &str) -> bool {
    name.contains("window_start_ms_")
        && metric_parts(name)
            .iter()
            .any(|p| p.starts_with("window_start_ms_"))
}

/// The parts of a metric name (`<table>.<key>....<column>`), quotes undone:
/// `calls."x.y".z.attempts` is `calls`, `x.y`, `z`, `attempts`.
pub fn metric_parts(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut chars = name.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                part.push('"');
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut part)),
            c => part.push(c),
        }
    }
    parts.push(part);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_columns_share_their_decimals_and_wide_tables_are_cut_into_blocks() {
        let mut t = Table::new("x", "T", vec!["k".into(), "a".into(), "b".into()]);
        t.push(vec!["r1".into(), 1.5.into(), 2u64.into()]);
        t.push(vec!["r2".into(), 2.0.into(), 3u64.into()]);
        t.push(vec!["r3".into(), 0.123_456.into(), 4u64.into()]);
        assert_eq!(
            t.render_text(),
            "T\nk   a      b\n--  -----  -\nr1  1.500  2\nr2  2.000  3\nr3  0.123  4\n"
        );
        let headers = std::iter::once("key".to_string())
            .chain((0..30).map(|i| format!("column_{i:02}")))
            .collect();
        let mut t = Table::new("x", "T", headers);
        let mut row: Vec<Cell> = vec!["row".into()];
        row.extend((0..30).map(|i| Cell::from(i as u64)));
        t.push(row);
        let text = t.render_text();
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        assert_eq!(text.matches("(continued)").count(), 2, "{text}");
        assert_eq!(
            text.lines().filter(|l| l.starts_with("row ")).count(),
            3,
            "the key repeats in every block: {text}"
        );
        assert!(text.contains("column_29"));
    }

    #[test]
    fn long_lines_wrap_at_spaces() {
        assert_eq!(wrap("aa bb cc", 5), "aa bb\n  cc\n");
        assert_eq!(wrap("short", 120), "short\n");
    }

    #[test]
    fn text_tables_align_columns() {
        let mut t = Table::new("x", "Title", vec!["name".into(), "n".into()]);
        t.push(vec!["a".into(), 10u64.into()]);
        t.push(vec!["long".into(), 2u64.into()]);
        assert_eq!(
            t.render_text(),
            "Title\nname  n\n----  --\na     10\nlong   2\n"
        );
    }
}
