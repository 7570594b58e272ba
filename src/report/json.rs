//! `resim run --json`: every table of the run as one JSON document on stdout.
//!
//! ```json
//! {"resim_version": "0.1.0",
//!  "scenarios": [{"file": "...", "name": "...", "seed": 1,
//!                 "tables": {"outcomes": {"title": "...", "columns": [...],
//!                                         "rows": [{"variant": "baseline", ...}],
//!                                         "notes": [...]}, ...},
//!                 "thresholds": {"passed": true, "failed": 0, "checks": [...]}}]}
//! ```
//!
//! Keys keep their order (tables in report order, row keys in column order); a
//! number is a JSON number, an empty cell `null`, a boolean a boolean.

use super::{Cell, Table};
use crate::error::Error;
use serde_json::{Map, Value, json};

fn cell(c: &Cell) -> Value {
    match c {
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Int(i) => json!(i),
        Cell::Num(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
        Cell::Bool(b) => Value::Bool(*b),
        Cell::Empty => Value::Null,
    }
}

fn rows(t: &Table) -> Value {
    Value::Array(
        t.rows
            .iter()
            .map(|r| {
                Value::Object(
                    t.headers
                        .iter()
                        .zip(r)
                        .map(|(h, c)| (h.clone(), cell(c)))
                        .collect(),
                )
            })
            .collect(),
    )
}

fn table(t: &Table) -> Value {
    json!({
        "title": t.title,
        "columns": t.headers,
        "rows": rows(t),
        "notes": t.all_notes(),
    })
}

/// What a scenario's entry says besides its tables.
pub struct Entry<'a> {
    /// The scenario file, as given.
    pub file: String,
    /// The scenario's name.
    pub name: &'a str,
    /// Its seed.
    pub seed: u64,
    /// How many compare rows it ran.
    pub compare_rows: usize,
    /// Its thresholds' pass/fail table and how many of its lines failed
    /// (`None`: no thresholds).
    pub thresholds: Option<(&'a Table, usize)>,
}

/// One scenario's entry: its tables by name and its thresholds (or `null`).
pub fn scenario<'a>(entry: &Entry<'_>, tables: impl Iterator<Item = &'a Table>) -> Value {
    let tables: Map<String, Value> = tables.map(|t| (t.name.clone(), table(t))).collect();
    json!({
        "file": entry.file,
        "name": entry.name,
        "seed": entry.seed,
        "compare_rows": entry.compare_rows,
        "tables": tables,
        "thresholds": entry.thresholds.map(|(checks, failed)| json!({
            "passed": failed == 0,
            "failed": failed,
            "checks": rows(checks),
        })),
    })
}

/// The whole document, pretty-printed.
pub fn document(scenarios: Vec<Value>) -> Result<String, Error> {
    serde_json::to_string_pretty(&json!({
        "resim_version": env!("CARGO_PKG_VERSION"),
        "scenarios": scenarios,
    }))
    .map_err(|e| Error::Other(format!("cannot write the JSON document: {e}")))
}
