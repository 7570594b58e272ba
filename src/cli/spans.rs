//! Where `resim run --spans FILE` writes, checked before the run starts so
//! that a run is not lost to a path it cannot write.

use crate::error::{Error, ScenarioError};
use crate::report::target::{Target, check_file_name, shown, target};
use crate::scenario::Scenario;
use std::path::{Path, PathBuf};

fn usage(message: String) -> Error {
    Error::from(ScenarioError::new("", message))
}

/// The files `--spans FILE` writes, one per compare row of the one scenario
/// run: FILE a file (a regular file replaced whole, a device or a pipe written
/// into, see [`crate::report::target`]) in a folder that exists, neither in the
/// run's output folder (whose files the run replaces, and whose record a
/// later run trusts) nor the scenario file itself.
pub(crate) fn targets(
    file: &Path,
    scenarios: &[Scenario],
    out: Option<&Path>,
    prints: bool,
) -> Result<Vec<Target>, Error> {
    let [s] = scenarios else {
        return Err(usage(
            "--spans writes the requests of one scenario: run the others separately".into(),
        ));
    };
    if !file.is_dir() {
        check_file_name("--spans", file)?;
    }
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(usage(format!(
            "--spans {}: the folder {} does not exist",
            shown(file),
            shown(parent)
        )));
    }
    let first = target("--spans", file)?;
    let rows = s.rows.len();
    if rows > 1 && matches!(first, Target::Into(_)) {
        return Err(usage(format!(
            "--spans {}: is not a regular file, and the scenario's {rows} compare rows are written to files of their own beside it ({}): name a regular file",
            shown(file),
            shown(&span_paths(file, rows)[0])
        )));
    }
    if prints && is_stdout(file) {
        return Err(usage(format!(
            "--spans {}: is standard output, where the report is printed too: add -q (and leave out --json) to have the spans alone there",
            shown(file)
        )));
    }
    let run_dir = super::output_dir(out, &s.stem(), false);
    let paths = span_paths(file, rows);
    let mut targets = Vec::with_capacity(paths.len());
    for path in &paths {
        let t = if rows > 1 {
            target("--spans", path)?
        } else {
            first.clone()
        };
        if let Target::Whole(real) = &t {
            check_apart(file, real, &run_dir, s)?;
        }
        targets.push(t);
    }
    Ok(targets)
}

/// `file` is the file, pipe or terminal standard output writes to (Linux:
/// `/proc/self/fd/1` tells; elsewhere none is found).
fn is_stdout(file: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(a), Ok(b)) = (
        std::fs::metadata(file),
        std::fs::metadata("/proc/self/fd/1"),
    ) else {
        return false;
    };
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// A regular file `real` that `--spans FILE` writes must be neither in the
/// run's output folder nor the scenario file, nor a data file it reads.
fn check_apart(file: &Path, real: &Path, run_dir: &Path, s: &Scenario) -> Result<(), Error> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let folder = real
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if canon(folder).is_some_and(|f| Some(f) == canon(run_dir)) {
        return Err(usage(format!(
            "--spans {}: is in the run's output folder {}, whose files the run replaces: name a file outside it",
            shown(file),
            shown(run_dir)
        )));
    }
    if canon(real).is_some_and(|f| Some(f) == canon(&s.file)) {
        return Err(usage(format!(
            "--spans {}: is the scenario file itself: name another file",
            shown(file)
        )));
    }
    let data = s.rows.iter().flat_map(|r| &r.model.latency_files);
    for d in data {
        if canon(real).is_some_and(|f| Some(f) == canon(&d.path)) {
            return Err(usage(format!(
                "--spans {}: is {}, a data file the scenario reads: name another file",
                shown(file),
                shown(&d.path)
            )));
        }
    }
    Ok(())
}

/// The files `--spans FILE` writes for `rows` compare rows: FILE itself for
/// one, `STEM-rowK.EXT` beside it for several.
fn span_paths(file: &Path, rows: usize) -> Vec<PathBuf> {
    if rows <= 1 {
        return vec![file.to_path_buf()];
    }
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = file
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (1..=rows)
        .map(|k| file.with_file_name(format!("{stem}-row{k}{ext}")))
        .collect()
}
