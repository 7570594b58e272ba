//! Helpers shared by the integration tests: run the real binary on a scenario
//! file into a temporary folder and read its CSV output back.

#![allow(dead_code)]

use assert_cmd::Command;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The repository root (where Cargo.toml is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scenario file of the repository, by relative path.
pub fn scenario(rel: &str) -> PathBuf {
    root().join(rel)
}

/// The resim binary.
pub fn resim() -> Command {
    Command::cargo_bin("resim").expect("the resim binary is built")
}

/// A CSV file read as rows of header -> value.
#[derive(Debug, Clone)]
pub struct Csv {
    pub headers: Vec<String>,
    pub rows: Vec<HashMap<String, String>>,
}

impl Csv {
    pub fn read(path: &Path) -> Csv {
        let mut r =
            csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let headers: Vec<String> = r
            .headers()
            .expect("headers")
            .iter()
            .map(String::from)
            .collect();
        let rows = r
            .records()
            .map(|rec| {
                let rec = rec.expect("record");
                headers
                    .iter()
                    .cloned()
                    .zip(rec.iter().map(String::from))
                    .collect()
            })
            .collect();
        Csv { headers, rows }
    }

    /// The rows whose columns equal every (column, value) pair given.
    pub fn select(&self, filter: &[(&str, &str)]) -> Vec<&HashMap<String, String>> {
        self.rows
            .iter()
            .filter(|r| {
                filter
                    .iter()
                    .all(|(k, v)| r.get(*k).map(String::as_str) == Some(*v))
            })
            .collect()
    }

    /// The one row matching `filter`.
    pub fn row(&self, filter: &[(&str, &str)]) -> &HashMap<String, String> {
        let found = self.select(filter);
        assert_eq!(
            found.len(),
            1,
            "expected exactly one row for {filter:?}, found {}",
            found.len()
        );
        found[0]
    }
}

/// A cell as a number.
pub fn num(row: &HashMap<String, String>, col: &str) -> f64 {
    let v = row
        .get(col)
        .unwrap_or_else(|| panic!("no column {col} in {row:?}"));
    v.parse()
        .unwrap_or_else(|_| panic!("column {col}: `{v}` is not a number"))
}

/// Asserts `row[col]` rounds to `expected` at `decimals` decimals (as the seed prints).
pub fn assert_rounded(row: &HashMap<String, String>, col: &str, expected: f64, decimals: i32) {
    let got = num(row, col);
    let scale = 10f64.powi(decimals);
    assert_eq!(
        (got * scale).round() / scale,
        expected,
        "column {col}: got {got}, expected {expected} at {decimals} decimals (row {row:?})"
    );
}

/// Runs `resim run FILE --out DIR` (plus `extra` args) and returns the folder.
pub fn run_into(file: &Path, extra: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    resim()
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg(dir.path())
        .args(extra)
        .assert()
        .success();
    dir
}

/// Runs a bundled scenario and reads one of its CSV files.
pub fn run_csv(rel: &str, table: &str) -> Csv {
    let dir = run_into(&scenario(rel), &["--quiet"]);
    Csv::read(&dir.path().join(format!("{table}.csv")))
}

/// A scenario file with `text` in a temp dir (kept alive by the returned guard).
pub fn file_with(text: &str) -> (tempfile::TempDir, PathBuf) {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("case.toml");
    std::fs::File::create(&path)
        .expect("create the scenario file")
        .write_all(text.as_bytes())
        .expect("write the scenario file");
    (dir, path)
}

/// Every file of a folder (not its subfolders' files), by name, as bytes.
pub fn folder_bytes(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("the folder")
        .map(|e| e.expect("a folder entry"))
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).expect("a file"))
        })
        .collect()
}
