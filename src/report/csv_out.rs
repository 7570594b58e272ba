//! CSV export. Every table of a scenario is rendered in memory first; files are then
//! written to temporary names and renamed, so a failure never leaves a truncated CSV.

use super::Table;
use crate::error::Error;
use std::path::Path;

fn io(context: String, user_path: bool) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        context,
        source,
        user_path,
    }
}

/// Renders one table as CSV bytes.
pub fn to_csv(table: &Table) -> Result<Vec<u8>, Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| Error::Other(format!("{}.csv: {e}", table.name));
    w.write_record(&table.headers).map_err(fail)?;
    for row in &table.rows {
        w.write_record(row.iter().map(|c| c.render()))
            .map_err(fail)?;
    }
    w.into_inner()
        .map_err(|e| Error::Other(format!("{}.csv: {e}", table.name)))
}

/// Writes `tables` as `<dir>/<name>.csv`, each whole or not at all.
pub fn write_tables(dir: &Path, tables: &[Table]) -> Result<(), Error> {
    let rendered = tables
        .iter()
        .map(|t| Ok((format!("{}.csv", t.name), to_csv(t)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    write_files(dir, &rendered)
}

/// Writes `files` (file name, bytes) into `dir`, each whole or not at all.
///
/// Two phases, so a failure leaves complete files only: first every file goes to a
/// temporary file beside its target (`.<name>.<pid>.tmp`); if any of those
/// writes fails, the temporaries are removed and every previous file is untouched.
/// Then each temporary is renamed over its target (atomic on one file system); if
/// a rename fails, the rest are removed: each file is then the old or the new
/// version, never a truncated one, and no temporary is left behind.
pub fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(io(
        format!("cannot create the output folder {}", dir.display()),
        true,
    ))?;
    remove_stale_temporaries(dir);
    let pid = std::process::id();
    let mut staged = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        let target = dir.join(name);
        let tmp = dir.join(format!(".{name}.{pid}.tmp"));
        staged.push((tmp.clone(), target.clone()));
        if let Err(e) = std::fs::write(&tmp, bytes) {
            remove_all(&staged);
            return Err(io(format!("cannot write {}", target.display()), true)(e));
        }
    }
    for (i, (tmp, target)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(tmp, target) {
            remove_all(&staged[i..]);
            return Err(io(format!("cannot write {}", target.display()), true)(e));
        }
    }
    Ok(())
}

/// Removes the temporaries (`.<name>.csv.<pid>.tmp`) a killed run left in `dir`:
/// only files of exactly that pattern, and only when process `pid` is gone (a run
/// writing the same folder now keeps its own). Best effort: a file that cannot be
/// removed stays, as before.
pub fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let alive = |pid: u32| {
        pid == std::process::id()
            || !Path::new("/proc/self").exists()
            || Path::new("/proc").join(pid.to_string()).exists()
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temporary_pid) else {
            continue;
        };
        if !alive(pid) && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The process id in a temporary's name `.<name>.csv.<pid>.tmp`, None for any
/// other name.
fn temporary_pid(file: &str) -> Option<u32> {
    let rest = file.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, pid) = rest.rsplit_once('.')?;
    let name = stem.strip_suffix(".csv")?;
    if name.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

fn remove_all(staged: &[(std::path::PathBuf, std::path::PathBuf)]) {
    for (tmp, _) in staged {
        let _ = std::fs::remove_file(tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Cell;

    fn table(name: &str, value: i64) -> Table {
        let mut t = Table::new(name, "t", vec!["a".into(), "b".into()]);
        t.push(vec![Cell::Int(value), Cell::Text("x,y".into())]);
        t
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_write_midway_keeps_every_previous_file() {
        let dir = tempfile::tempdir().unwrap();
        write_tables(dir.path(), &[table("one", 1), table("two", 2)]).unwrap();
        let before: Vec<Vec<u8>> = ["one.csv", "two.csv"]
            .iter()
            .map(|f| std::fs::read(dir.path().join(f)).unwrap())
            .collect();
        // The third table cannot be written (its folder does not exist): the first
        // two were already staged when it fails.
        let err = write_tables(
            dir.path(),
            &[
                table("one", 10),
                table("two", 20),
                table("missing/three", 30),
            ],
        )
        .unwrap_err();
        assert!(err.to_string().contains("three.csv"), "{err}");
        assert_eq!(
            files(dir.path()),
            ["one.csv", "two.csv"],
            "no temporaries left"
        );
        for (f, old) in ["one.csv", "two.csv"].iter().zip(&before) {
            assert_eq!(
                &std::fs::read(dir.path().join(f)).unwrap(),
                old,
                "{f} changed"
            );
        }
    }

    #[test]
    fn a_failed_rename_leaves_whole_files_and_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        write_tables(dir.path(), &[table("one", 1), table("three", 3)]).unwrap();
        let old_three = std::fs::read(dir.path().join("three.csv")).unwrap();
        // A folder where two.csv should go: its rename fails.
        std::fs::create_dir(dir.path().join("two.csv")).unwrap();
        let new = [table("one", 10), table("two", 20), table("three", 30)];
        assert!(write_tables(dir.path(), &new).is_err());
        assert_eq!(files(dir.path()), ["one.csv", "three.csv", "two.csv"]);
        // one.csv was renamed before the failure (new), three.csv after (old).
        let one = std::fs::read(dir.path().join("one.csv")).unwrap();
        assert_eq!(one, to_csv(&new[0]).unwrap());
        assert_eq!(
            std::fs::read(dir.path().join("three.csv")).unwrap(),
            old_three
        );
    }
}
