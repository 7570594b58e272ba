//! `empirical = { file = "latencies.csv", column = "ms" }`: measured latencies from
//! a CSV file (a header line, then one value per row, in milliseconds). The path is
//! relative to the scenario file. Every cell of the column must be a finite number
//! >= 0; a bad one is named by the file, its line and the column.

use crate::error::{ScenarioError, did_you_mean, list};
use std::path::{Path, PathBuf};

/// The values of `column` (or of the file's only column) in `file`, resolved
/// against `dir`. `key` is the scenario key path the errors are about.
pub fn read(
    key: &str,
    dir: &Path,
    file: &str,
    column: Option<&str>,
) -> Result<(PathBuf, Vec<f64>), ScenarioError> {
    let path = dir.join(file);
    let fail = |message: String| Err(ScenarioError::new(key, message));
    let shown = path.display().to_string();
    let mut reader = match csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_path(&path)
    {
        Ok(r) => r,
        Err(e) => {
            return fail(format!(
                "cannot read the latency file `{shown}` ({}; the path is relative to the scenario file)",
                io_reason(&e)
            ));
        }
    };
    let headers: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(|c| c.trim().to_string()).collect(),
        Err(e) => return fail(format!("`{shown}`: {}", io_reason(&e))),
    };
    let index = match column {
        Some(name) => match headers.iter().position(|h| h == name) {
            Some(i) => i,
            None => {
                return fail(format!(
                    "`{shown}` has no column `{name}` (its header line: {}){}",
                    list(headers.iter().map(String::as_str)),
                    did_you_mean(name, headers.iter().map(String::as_str))
                ));
            }
        },
        None if headers.len() == 1 => 0,
        None => {
            return fail(format!(
                "`{shown}` has {} columns ({}): say which with `column = \"...\"`",
                headers.len(),
                list(headers.iter().map(String::as_str))
            ));
        }
    };
    let name = &headers[index];
    let mut values = Vec::new();
    for (row, record) in reader.records().enumerate() {
        let record = match record {
            Ok(r) => r,
            Err(e) => return fail(format!("`{shown}`: {}", io_reason(&e))),
        };
        let line = record.position().map_or(0, csv::Position::line);
        let at = format!(
            "`{shown}` line {line} (data row {}), column `{name}`",
            row + 1
        );
        let Some(cell) = record.get(index) else {
            return fail(format!("{at}: the row has no such cell"));
        };
        let cell = cell.trim();
        match cell.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => values.push(v),
            Ok(v) if v.is_finite() => {
                return fail(format!("{at}: a latency is >= 0 ms (got {cell})"));
            }
            _ => {
                return fail(format!("{at}: not a number of milliseconds (got `{cell}`)"));
            }
        }
    }
    if values.is_empty() {
        return fail(format!("`{shown}` has no values under `{name}`"));
    }
    Ok((path, values))
}

/// The reason of a csv error, without its own position (ours is clearer).
fn io_reason(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Io(io) => io.to_string(),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("l.csv"), text).unwrap();
        let p = dir.path().to_path_buf();
        (dir, p)
    }

    #[test]
    fn reads_a_named_column_or_the_only_one() {
        let (_g, dir) = with("id,ms\na,6\nb, 7.5\n");
        let (_, v) = read("k", &dir, "l.csv", Some("ms")).unwrap();
        assert_eq!(v, [6.0, 7.5]);
        let (_g, dir) = with("ms\n6\n80\n");
        assert_eq!(read("k", &dir, "l.csv", None).unwrap().1, [6.0, 80.0]);
    }

    #[test]
    fn bad_cells_name_the_file_line_and_column() {
        let (_g, dir) = with("id,ms\na,6\nb,fast\n");
        let e = read("k", &dir, "l.csv", Some("ms")).unwrap_err();
        assert!(
            e.message
                .contains("line 3 (data row 2), column `ms`: not a number"),
            "{e}"
        );
        let (_g, dir) = with("ms\n-1\n");
        let e = read("k", &dir, "l.csv", Some("ms")).unwrap_err();
        assert!(
            e.message
                .contains("line 2 (data row 1), column `ms`: a latency is >= 0 ms (got -1)"),
            "{e}"
        );
        let e = read("k", &dir, "l.csv", Some("mss")).unwrap_err();
        assert!(
            e.message.contains("no column `mss`") && e.message.contains("did you mean `ms`"),
            "{e}"
        );
        let e = read("k", &dir, "missing.csv", None).unwrap_err();
        assert!(e.message.contains("cannot read the latency file"), "{e}");
    }
}
