//! The import report: what every `resim import` reads and infers, whatever
//! the format, with its counts. It is written beside the scenario as
//! `SCENARIO.import.md` (every section, every table) and summed up on stderr
//! (what was read, what was built, and every warning: what could not be used
//! or was changed on the way). A format adds sections; nothing read is left
//! out of it without a line saying so.

use crate::error::printable;

/// One input file and what came of it.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file, as given.
    pub file: String,
    /// Its format, as its content said.
    pub format: String,
    /// Its size in bytes.
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

    /// Adds a row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
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
        let mut out = format!("# Import report: {}\n\n", cell(&self.scenario));
        out.push_str("## What was read\n\n");
        let mut t = Table::new(&["file", "format", "bytes", "read", "note"]);
        for s in &self.sources {
            t.push(vec![
                s.file.clone(),
                s.format.clone(),
                s.bytes.to_string(),
                s.read.clone(),
                s.note.clone().unwrap_or_default(),
            ]);
        }
        push_table(&mut out, &t);
        out.push_str("\n## What was built\n\n");
        for line in &self.summary {
            out.push_str(&format!("- {}\n", printable(line)));
        }
        out.push_str("\n## Warnings\n\n");
        if self.warnings.is_empty() {
            out.push_str("None: every span was used as it was.\n");
        }
        for w in &self.warnings {
            out.push_str(&format!("- {}\n", printable(w)));
        }
        for s in &self.sections {
            out.push_str(&format!("\n## {}\n\n", cell(&s.heading)));
            for p in &s.text {
                out.push_str(&printable(p));
                out.push_str("\n\n");
            }
            if let Some(t) = &s.table {
                push_table(&mut out, t);
            }
        }
        out
    }

    /// What stderr gets: the sources, the summary and the warnings.
    pub fn short(&self) -> String {
        let mut out = String::new();
        for s in &self.sources {
            out.push_str(&format!("read {} ({}): {}", s.file, s.format, s.read));
            if let Some(n) = &s.note {
                out.push_str(&format!("; {n}"));
            }
            out.push('\n');
        }
        for line in &self.summary {
            out.push_str(line);
            out.push('\n');
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        printable(&out).into_owned()
    }
}

fn push_table(out: &mut String, t: &Table) {
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
    out.push_str(&row(&t.header));
    out.push_str(&format!(
        "|{}\n",
        t.header.iter().map(|_| "---|").collect::<String>()
    ));
    for r in &t.rows {
        out.push_str(&row(r));
    }
    if t.rows.is_empty() {
        out.push_str(&format!(
            "| (none){} |\n",
            " |".repeat(t.header.len().saturating_sub(1))
        ));
    }
}
