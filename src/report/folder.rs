//! A run owns its output folder, and nothing else.
//!
//! `resim run`, `resim sweep` and `resim merge` put their files in place as one set
//! with [`Folder::replace`], and keep a record of the set in the folder
//! ([`RECORD`], `.resim-files`, one file name a line). The rules it enforces:
//!
//! - **Nothing of the old set is lost or mixed on a failure.** Every new file is
//!   first written under a temporary name beside its target (`.<name>.<pid>.tmp`;
//!   a sweep's rows stream into a staging file of their own). Only when all of
//!   them are written are they renamed over their targets, each old target kept
//!   as a hard link (`.<name>.<pid>.old`) until the last rename has succeeded. A
//!   rename that fails part-way puts the old files back: the folder holds the old
//!   set or the new one, never a mix of both and never a truncated file.
//! - **A complete run leaves only its own files.** The files the record lists that
//!   the new set does not hold (a previous run's `recovery.csv` after a rerun
//!   without faults) are removed once the new set is in place.
//! - **Files resim did not write are never touched**: a name not in the record (a
//!   user's notes, a spreadsheet) is left alone, and so is anything under a listed
//!   name that is no longer a regular file (a folder, a link the user made).
//! - **The record is written last, and first.** Before anything is renamed it
//!   lists the old and the new names together, so a process killed half-way still
//!   owns everything it may have put there; after the set is in place it lists
//!   exactly the new set.
//!
//! In a folder without a record (written by an older resim) resim owns only the
//! files its command always replaced or removed there (`report.html` for a run,
//! the summary files of a sweep), as before the record existed.
//!
//! The renames themselves take a few microseconds, not the minutes a sweep runs;
//! a process killed (SIGKILL) within them can leave some files new and some old.
//! Its record then lists both sets, and the next complete run puts the folder
//! right.

use crate::error::Error;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The record of the files resim owns in a folder.
pub const RECORD: &str = ".resim-files";

const RECORD_HEADER: &str = "\
# The files resim wrote in this folder at its last complete run, sweep or merge.
# The next one removes those it does not write again; files not listed here
# are never touched. See docs/scenarios.md, \"The output folder\".
";

/// A file of the new set.
pub enum Content {
    /// Bytes in memory, written to a temporary file when the set is put in place.
    Bytes(Vec<u8>),
    /// A file written already, under a staging name in the folder (a sweep's
    /// rows): renamed into place with the others, after them. On a failure it
    /// stays where it is, under its staging name.
    Staged(PathBuf),
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        context,
        source,
        user_path: true,
    }
}

/// An output folder and the names resim owns in it.
pub struct Folder {
    dir: PathBuf,
    /// The names the record lists (or, without a record, the command's legacy
    /// names), in order.
    owned: BTreeSet<String>,
    /// The record's bytes as read (`None`: there was none), restored when a
    /// [`Folder::replace`] fails and has put the old files back.
    record: Option<Vec<u8>>,
}

impl Folder {
    /// Creates `dir` if needed, removes the temporaries a killed resim left there
    /// and reads its record. `legacy`: the names owned, when they are there, if
    /// there is no record.
    pub fn open(dir: &Path, legacy: &[&str]) -> Result<Folder, Error> {
        std::fs::create_dir_all(dir).map_err(io(format!(
            "cannot create the output folder {}",
            dir.display()
        )))?;
        remove_stale_temporaries(dir);
        let path = dir.join(RECORD);
        let record = match std::fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(format!("cannot read {}", path.display()))(e)),
        };
        let owned = match &record {
            Some(bytes) => parse_record(&String::from_utf8_lossy(bytes)),
            None => legacy
                .iter()
                .filter(|n| regular_file(&dir.join(n)))
                .map(|s| s.to_string())
                .collect(),
        };
        Ok(Folder {
            dir: dir.to_path_buf(),
            owned,
            record,
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Records `names` as owned before they are written (a staging file that
    /// stays when the run fails or is killed), so the next complete run removes
    /// them.
    pub fn claim(&mut self, names: &[&str]) -> Result<(), Error> {
        let before = self.owned.len();
        self.owned.extend(names.iter().map(|s| s.to_string()));
        if self.owned.len() == before && self.record.is_some() {
            return Ok(());
        }
        let bytes = write_record(&self.dir, &self.owned)?;
        self.record = Some(bytes);
        Ok(())
    }

    /// Puts `files` (name, content) in place as the folder's complete set, removes
    /// the owned files it does not hold and records it. On an error before the
    /// set is in place, the folder's files are as they were (see the module doc);
    /// a [`Content::Staged`] file then keeps its staging name.
    pub fn replace(self, files: Vec<(String, Content)>) -> Result<(), Error> {
        let pid = std::process::id();
        let new: BTreeSet<String> = files.iter().map(|(n, _)| n.clone()).collect();
        debug_assert_eq!(new.len(), files.len(), "a file name given twice");
        // In-memory files first: the staged ones, renamed last, never need undoing
        // unless one of them fails.
        let mut order: Vec<(String, Content)> = files;
        order.sort_by_key(|(_, c)| matches!(c, Content::Staged(_)));
        let mut plan: Vec<Step> = Vec::with_capacity(order.len());
        for (name, content) in order {
            let target = self.dir.join(&name);
            let (from, temporary) = match content {
                Content::Bytes(bytes) => {
                    let tmp = self.dir.join(format!(".{name}.{pid}.tmp"));
                    if let Err(e) = std::fs::write(&tmp, bytes) {
                        let _ = std::fs::remove_file(&tmp);
                        discard(&plan);
                        return Err(io(format!("cannot write {}", target.display()))(e));
                    }
                    (tmp, true)
                }
                Content::Staged(path) => (path, false),
            };
            plan.push(Step {
                backup: None,
                from,
                temporary,
                target,
            });
        }
        let claim: BTreeSet<String> = self.owned.union(&new).cloned().collect();
        if let Err(e) = write_record(&self.dir, &claim) {
            discard(&plan);
            return Err(e);
        }
        for i in 0..plan.len() {
            match backup(&plan[i].target, pid) {
                Ok(b) => plan[i].backup = b,
                Err(e) => {
                    discard(&plan);
                    self.restore_record();
                    return Err(e);
                }
            }
        }
        for i in 0..plan.len() {
            if let Err(e) = std::fs::rename(&plan[i].from, &plan[i].target) {
                let undone = undo(&plan[..i]);
                discard(&plan[i..]);
                let mut context = format!("cannot write {}", plan[i].target.display());
                match undone {
                    Ok(()) => {
                        self.restore_record();
                        context.push_str(" (the folder's previous files are back in place)");
                    }
                    Err(not_restored) => context.push_str(&format!(
                        " (putting the previous files back failed too, these are from the new run: {not_restored})"
                    )),
                }
                return Err(io(context)(e));
            }
        }
        for step in &plan {
            if let Some(b) = &step.backup {
                let _ = std::fs::remove_file(b);
            }
        }
        let stale: Vec<&String> = self.owned.difference(&new).collect();
        let mut kept = new.clone();
        let mut failure = None;
        for name in stale {
            let path = self.dir.join(name);
            if !regular_file(&path) {
                continue;
            }
            if let Err(e) = std::fs::remove_file(&path) {
                kept.insert(name.clone());
                failure.get_or_insert_with(|| {
                    io(format!(
                        "cannot remove {}, left by an earlier run (the new files are in place)",
                        path.display()
                    ))(e)
                });
            }
        }
        write_record(&self.dir, &kept)?;
        failure.map_or(Ok(()), Err)
    }

    /// Writes the record back as it was (or removes it when there was none).
    /// Best effort: it only ever lists more names than the folder's files.
    fn restore_record(&self) {
        let path = self.dir.join(RECORD);
        match &self.record {
            Some(bytes) => {
                let _ = write_atomic(&self.dir, RECORD, bytes);
            }
            None => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// One file of the set on its way into place.
struct Step {
    /// Its temporary or staging file.
    from: PathBuf,
    /// `from` is a temporary of this replace (removed on failure), not a staging file.
    temporary: bool,
    target: PathBuf,
    /// A hard link to the old target, while the set is being put in place.
    backup: Option<PathBuf>,
}

/// Removes the temporaries and backups of `steps` (not their staging files).
fn discard(steps: &[Step]) {
    for s in steps {
        if s.temporary {
            let _ = std::fs::remove_file(&s.from);
        }
        if let Some(b) = &s.backup {
            let _ = std::fs::remove_file(b);
        }
    }
}

/// Puts back the old targets of `steps`, renamed already: each backup over its
/// target, a target that did not exist removed, a staged file back to its staging
/// name. Returns the targets that could not be put back.
fn undo(steps: &[Step]) -> Result<(), String> {
    let mut failed = Vec::new();
    for s in steps.iter().rev() {
        let moved_back = if s.temporary {
            Ok(())
        } else {
            std::fs::rename(&s.target, &s.from)
        };
        let restored = moved_back.and_then(|()| match &s.backup {
            Some(b) => std::fs::rename(b, &s.target),
            None if s.temporary => std::fs::remove_file(&s.target),
            None => Ok(()),
        });
        if let Err(e) = restored {
            failed.push(format!("{} ({e})", s.target.display()));
        }
    }
    match failed.is_empty() {
        true => Ok(()),
        false => Err(failed.join(", ")),
    }
}

/// Keeps `target`'s current file as `.<name>.<pid>.old` (a hard link, else a
/// copy), or `None` when there is none. A folder in its place is an error: it
/// cannot be replaced, and no file of the set must be renamed before that is known.
fn backup(target: &Path, pid: u32) -> Result<Option<PathBuf>, Error> {
    let fail = || io(format!("cannot write {}", target.display()));
    let meta = match std::fs::symlink_metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fail()(e)),
    };
    if meta.is_dir() {
        return Err(fail()(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "a folder of that name is in the way",
        )));
    }
    let name = target
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let old = target.with_file_name(format!(".{name}.{pid}.old"));
    let _ = std::fs::remove_file(&old);
    if std::fs::hard_link(target, &old).is_err() {
        std::fs::copy(target, &old).map_err(fail())?;
    }
    Ok(Some(old))
}

/// A regular file (not a folder, not a link), as resim writes them.
fn regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// The names a record lists: one a line, `#` comments and blank lines skipped,
/// and anything that is not a plain file name in the folder itself (a path, a
/// hidden name) ignored, so an edited record can never reach outside the folder.
fn parse_record(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.is_empty() && !l.starts_with('#') && plain_name(l))
        .map(String::from)
        .collect()
}

fn plain_name(name: &str) -> bool {
    !name.starts_with('.') && !name.contains(['/', '\\']) && !name.chars().any(char::is_control)
}

/// Writes the record listing `names` (sorted); returns its bytes.
fn write_record(dir: &Path, names: &BTreeSet<String>) -> Result<Vec<u8>, Error> {
    let mut text = String::from(RECORD_HEADER);
    for name in names.iter().filter(|n| plain_name(n)) {
        text.push_str(name);
        text.push('\n');
    }
    write_atomic(dir, RECORD, text.as_bytes())?;
    Ok(text.into_bytes())
}

/// Writes `dir/name` whole or not at all.
fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Error> {
    super::target::write_whole(&dir.join(name), bytes)
}

/// Removes the temporaries and backups (`.<name>.<pid>.tmp`, `.<name>.<pid>.old`)
/// a killed resim left in `dir`: only names of exactly that pattern for a file
/// resim writes (`.csv`, `.html`, `.json`, `.toml`, the record), and only when
/// process `pid` is gone (a run writing the same folder now keeps its own). Best
/// effort: a file that cannot be removed stays, as before.
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

/// The process id in a temporary's or backup's name `.<name>.<pid>.tmp` or
/// `.<name>.<pid>.old`, `<name>` a file resim writes; None for any other name.
fn temporary_pid(file: &str) -> Option<u32> {
    let rest = file.strip_prefix('.')?;
    let rest = rest
        .strip_suffix(".tmp")
        .or_else(|| rest.strip_suffix(".old"))?;
    let (name, pid) = rest.rsplit_once('.')?;
    let ours = name == RECORD
        || [".csv", ".html", ".json", ".toml"]
            .iter()
            .any(|x| name.len() > x.len() && name.ends_with(x));
    if !ours || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn put(dir: &Path, files: &[(&str, &str)]) -> Result<(), Error> {
        Folder::open(dir, &[])?.replace(
            files
                .iter()
                .map(|(n, b)| (n.to_string(), Content::Bytes(b.as_bytes().to_vec())))
                .collect(),
        )
    }

    fn read(dir: &Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    #[test]
    fn a_complete_run_removes_the_files_of_the_last_one_it_does_not_write() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        put(d, &[("a.csv", "1"), ("b.csv", "2"), ("report.html", "p")]).unwrap();
        put(d, &[("a.csv", "10")]).unwrap();
        assert_eq!(names(d), [RECORD, "a.csv", "notes.txt"]);
        assert_eq!(read(d, "a.csv"), "10");
        assert_eq!(read(d, "notes.txt"), "mine");
        assert_eq!(
            parse_record(&read(d, RECORD)),
            BTreeSet::from(["a.csv".to_string()])
        );
    }

    #[test]
    fn without_a_record_only_the_legacy_names_are_owned() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["old.csv", "report.html"] {
            std::fs::write(d.join(f), "before the record").unwrap();
        }
        let folder = Folder::open(d, &["report.html"]).unwrap();
        folder
            .replace(vec![("a.csv".into(), Content::Bytes(b"1".to_vec()))])
            .unwrap();
        assert_eq!(names(d), [RECORD, "a.csv", "old.csv"]);
    }

    #[test]
    fn a_failed_write_midway_keeps_every_previous_file_and_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        put(d, &[("one.csv", "1"), ("two.csv", "2")]).unwrap();
        let record = read(d, RECORD);
        // The third file cannot be written (its folder does not exist).
        let err = put(
            d,
            &[
                ("one.csv", "10"),
                ("two.csv", "20"),
                ("missing/three.csv", "3"),
            ],
        )
        .unwrap_err();
        assert!(err.to_string().contains("three.csv"), "{err}");
        assert_eq!(names(d), [RECORD, "one.csv", "two.csv"], "no temporaries");
        assert_eq!(
            (read(d, "one.csv"), read(d, "two.csv")),
            ("1".into(), "2".into())
        );
        assert_eq!(read(d, RECORD), record);
    }

    #[test]
    fn a_failed_rename_puts_every_previous_file_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        put(d, &[("one.csv", "1"), ("three.csv", "3")]).unwrap();
        let record = read(d, RECORD);
        // The last rename fails (its staging file is missing) after one.csv
        // and new.csv were renamed: both must be undone.
        let folder = Folder::open(d, &[]).unwrap();
        let err = folder
            .replace(vec![
                ("one.csv".into(), Content::Bytes(b"10".to_vec())),
                ("new.csv".into(), Content::Bytes(b"n".to_vec())),
                ("three.csv".into(), Content::Staged(d.join("gone.partial"))),
            ])
            .unwrap_err();
        assert!(err.to_string().contains("three.csv"), "{err}");
        assert!(err.to_string().contains("back in place"), "{err}");
        assert_eq!(names(d), [RECORD, "one.csv", "three.csv"]);
        assert_eq!(
            (read(d, "one.csv"), read(d, "three.csv")),
            ("1".into(), "3".into())
        );
        assert_eq!(read(d, RECORD), record, "the record as it was");
    }

    #[test]
    fn a_folder_in_the_way_stops_the_run_before_any_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        put(d, &[("one.csv", "1"), ("three.csv", "3")]).unwrap();
        std::fs::create_dir(d.join("two.csv")).unwrap();
        let err = put(
            d,
            &[("one.csv", "10"), ("two.csv", "2"), ("three.csv", "30")],
        )
        .unwrap_err();
        assert!(err.to_string().contains("two.csv"), "{err}");
        assert_eq!(names(d), [RECORD, "one.csv", "three.csv", "two.csv"]);
        assert_eq!(
            (read(d, "one.csv"), read(d, "three.csv")),
            ("1".into(), "3".into())
        );
    }

    #[test]
    fn a_staged_file_is_renamed_into_place_and_kept_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("rows.partial"), "rows").unwrap();
        let mut folder = Folder::open(d, &[]).unwrap();
        folder.claim(&["rows.partial"]).unwrap();
        std::fs::create_dir(d.join("blocked.csv")).unwrap();
        let err = folder
            .replace(vec![
                ("rows.csv".into(), Content::Staged(d.join("rows.partial"))),
                ("blocked.csv".into(), Content::Bytes(b"x".to_vec())),
            ])
            .unwrap_err();
        assert!(err.to_string().contains("blocked.csv"), "{err}");
        assert_eq!(read(d, "rows.partial"), "rows", "the staged rows stay");
        assert!(!d.join("rows.csv").exists());
        std::fs::remove_dir(d.join("blocked.csv")).unwrap();
        let folder = Folder::open(d, &[]).unwrap();
        assert!(folder.owned.contains("rows.partial"), "claimed");
        folder
            .replace(vec![(
                "rows.csv".into(),
                Content::Staged(d.join("rows.partial")),
            )])
            .unwrap();
        assert_eq!(names(d), [RECORD, "rows.csv"]);
        assert_eq!(read(d, "rows.csv"), "rows");
    }

    #[test]
    fn a_record_cannot_reach_outside_its_folder() {
        let set =
            parse_record("# c\n\nok.csv\n../x.csv\n/etc/passwd\n.hidden\nsub/a.csv\nb.csv\r\n");
        assert_eq!(set, BTreeSet::from(["b.csv".into(), "ok.csv".into()]));
    }

    #[test]
    fn only_temporaries_and_backups_of_resim_files_are_recognized() {
        assert_eq!(temporary_pid(".outcomes.csv.12.tmp"), Some(12));
        assert_eq!(temporary_pid(".report.html.12.old"), Some(12));
        assert_eq!(temporary_pid("..resim-files.7.tmp"), Some(7));
        for other in [
            ".notes.12.tmp",
            ".csv.12.tmp",
            "outcomes.csv.12.tmp",
            ".a.csv.x.tmp",
        ] {
            assert_eq!(temporary_pid(other), None, "{other}");
        }
    }
}
