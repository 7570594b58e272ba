//! Report tables: one [`Table`] renders both as an aligned text table (stdout) and
//! as a CSV file, so the two always show the same figures.

mod csv_out;

pub use csv_out::{remove_stale_temporaries, to_csv, write_tables};

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

/// Whole numbers without decimals; others with at least two and at most six,
/// trailing zeros trimmed.
pub fn format_number(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    let rounded = format!("{x:.6}");
    let trimmed = rounded.trim_end_matches('0');
    let (int, frac) = trimmed.split_once('.').unwrap_or((trimmed, ""));
    // "-0" only when nothing is left of the number (-0.0000001); -0.5 keeps its sign
    let int = if int == "-0" && frac.is_empty() {
        "0"
    } else {
        int
    };
    match frac.len() {
        0 => int.to_string(),
        1 => format!("{int}.{frac}0"),
        _ => format!("{int}.{frac}"),
    }
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
}

impl Table {
    pub fn new(name: &str, title: &str, headers: Vec<String>) -> Table {
        Table {
            name: name.into(),
            title: title.into(),
            headers,
            rows: Vec::new(),
            notes: Vec::new(),
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
    fn numbers_are_whole_or_have_at_least_two_decimals() {
        assert_eq!(format_number(48.0), "48");
        assert_eq!(format_number(46.1875), "46.1875");
        assert_eq!(format_number(45.8), "45.80");
        assert_eq!(format_number(68.571_428_571), "68.571429");
        assert_eq!(format_number(-0.000_000_1), "0");
        assert_eq!(format_number(-0.554_26), "-0.55426");
        assert_eq!(format_number(-0.5), "-0.50");
        assert_eq!(format_number(-2.0), "-2");
        assert_eq!(format_number(20555.6), "20555.60");
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
