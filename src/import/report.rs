//! The import report: what every `resim import` reads and infers, whatever
//! the format, with its counts. It is written beside the scenario as
//! `SCENARIO.import.md` (every section, every table) and summed up on stderr
//! (what was read, what was built, and every warning: what could not be used
//! or was changed on the way). A format adds sections; nothing read is left
//! out of it without a line saying so.

use crate::error::printable;
use std::fmt::Write as _;

/// One input file and what came of it.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file, as given, its format (as its content said), and its size.
    pub file: String,
    /// See `file`.
    pub format: String,
    /// See `file`.
    pub bytes: u64,
    /// What was read from it ("12,345 spans").
    pub read: String,
    /// Anything to say about it (where it was cut off).
    pub note: Option<String>,
}

/// A table of the report.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// A table with the columns named in `header`, separated by `|`.
    pub fn of(header: &str) -> Table {
        Table::new(&header.split('|').collect::<Vec<_>>())
    }

    /// Adds a row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    fn markdown(&self, out: &mut String) {
        let row = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells
                    .iter()
                    .map(|c| cell(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        };
        out.push_str(&row(&self.header));
        writeln!(out, "|{}", "---|".repeat(self.header.len())).ok();
        self.rows.iter().for_each(|r| out.push_str(&row(r)));
        if self.rows.is_empty() {
            writeln!(
                out,
                "| (none){} |",
                " |".repeat(self.header.len().saturating_sub(1))
            )
            .ok();
        }
    }
}

/// A section: a heading, paragraphs and tables.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// Its heading.
    pub heading: String,
    /// Paragraphs before its table.
    pub text: Vec<String>,
    /// Its table, if any.
    pub table: Option<Table>,
}

/// What one `resim import` did.
#[derive(Debug, Clone, Default)]
pub struct ImportReport {
    /// The scenario written.
    pub scenario: String,
    /// The inputs.
    pub sources: Vec<Source>,
    /// One line each: what was built (printed on stderr too).
    pub summary: Vec<String>,
    /// What could not be used, was left out or was changed (printed on
    /// stderr too, as warnings).
    pub warnings: Vec<String>,
    /// The sections of the report file.
    pub sections: Vec<Section>,
}

/// Escapes a cell for a Markdown table.
fn cell(s: &str) -> String {
    printable(s).replace('|', "\\|").replace('\n', " ")
}

impl ImportReport {
    /// The report file (Markdown).
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "# Import report: {}\n\n## What was read\n\n",
            cell(&self.scenario)
        );
        let mut t = Table::of("file|format|bytes|read|note");
        for s in &self.sources {
            let note = s.note.clone().unwrap_or_default();
            t.push(vec![
                s.file.clone(),
                s.format.clone(),
                s.bytes.to_string(),
                s.read.clone(),
                note,
            ]);
        }
        t.markdown(&mut out);
        out.push_str("\n## What was built\n\n");
        for l in &self.summary {
            writeln!(out, "- {}", printable(l)).ok();
        }
        out.push_str("\n## Warnings\n\n");
        if self.warnings.is_empty() {
            out.push_str("None: every span was used as it was.\n");
        }
        for w in &self.warnings {
            writeln!(out, "- {}", printable(w)).ok();
        }
        for s in &self.sections {
            write!(out, "\n## {}\n\n", cell(&s.heading)).ok();
            for p in &s.text {
                write!(out, "{}\n\n", printable(p)).ok();
            }
            if let Some(t) = &s.table {
                t.markdown(&mut out);
            }
        }
        out
    }

    /// What stderr gets before the warnings: the sources and the summary.
    pub fn short(&self) -> String {
        let mut out = String::new();
        for s in &self.sources {
            let note = s
                .note
                .as_ref()
                .map(|n| format!("; {n}"))
                .unwrap_or_default();
            writeln!(out, "read {} ({}): {}{note}", s.file, s.format, s.read).ok();
        }
        for l in &self.summary {
            writeln!(out, "{l}").ok();
        }
        printable(&out).into_owned()
    }
}
