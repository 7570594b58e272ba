//! Report tables: one [`Table`] renders both as an aligned text table (stdout) and
//! as a CSV file, so the two always show the same figures.

mod csv_out;

pub use crate::format::format_number;
pub use csv_out::{to_csv, write_tables};

/// One cell of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    Int(i64),
    Num(f64),
    Bool(bool),
    /// A figure that does not exist (e.g. no saturation step).
    Empty,
}

impl Cell {
    pub fn render(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Num(x) => format_number(*x),
            Cell::Bool(b) => b.to_string(),
            Cell::Empty => String::new(),
        }
    }

    fn is_numeric(&self) -> bool {
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
    PerCompareRow { axes: usize, key: usize },
    /// Figures across compare rows (one against another) or of the scenario as a
    /// whole: not the figures of any single run.
    AcrossRows,
}

/// A named table: `name` is the CSV file stem, `title` the report heading.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Lines printed under the table in the report (not in the CSV).
    pub notes: Vec<String>,
    /// What its rows stand for.
    pub scope: Scope,
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

    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(
            row.len(),
            self.headers.len(),
            "row width of table {}",
            self.name
        );
        self.rows.push(row);
    }

    /// The column index of `header`.
    pub fn column(&self, header: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == header)
    }

    /// Aligned text: numbers right-aligned, text left-aligned.
    pub fn render_text(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(Cell::render).collect())
            .collect();
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                cells
                    .iter()
                    .map(|r| r[c].len())
                    .chain([self.headers[c].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = format!("{}\n", self.title);
        let header: Vec<String> = self
            .headers
            .iter()
            .zip(&widths)
            .map(|(h, w)| format!("{h:<w$}"))
            .collect();
        out.push_str(header.join("  ").trim_end());
        out.push('\n');
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for (row, rendered) in self.rows.iter().zip(&cells) {
            let line: Vec<String> = rendered
                .iter()
                .zip(&widths)
                .zip(row)
                .map(|((s, w), cell)| {
                    if cell.is_numeric() {
                        format!("{s:>w$}")
                    } else {
                        format!("{s:<w$}")
                    }
                })
                .collect();
            out.push_str(line.join("  ").trim_end());
            out.push('\n');
        }
        for n in &self.notes {
            out.push_str(n);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
