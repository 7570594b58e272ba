//! A sweep output folder: `replications.csv` grows row by row as units finish, in
//! a staging file of its own (`replications.partial.csv`, flushed at every finished
//! replication, so an interrupted run keeps them); the summary files
//! (`summary.csv`, `paired.csv`, `summary_wide.csv`, `pooled.csv`), `histograms.csv`,
//! the manifest and the page are rendered at the end, and the whole set is put in
//! place at once ([`crate::report::Folder`]), so a sweep that fails or is killed
//! leaves the folder's previous results as they were.

use super::manifest::Manifest;
use super::pooled::{Pooled, UnitCounts};
use super::summary::{Summarizer, Summary};
use crate::error::Error;
use crate::report::{Content, Folder};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const REPLICATIONS: &str = "replications.csv";

/// Where `replications.csv` grows while a sweep or merge runs; renamed to it when
/// the run completes, kept (with the rows finished before) when it stops.
pub const PARTIAL: &str = "replications.partial.csv";

/// Beside the staging file while a sweep runs: what a rerun of the same sweep
/// needs to go on after the rows finished ([`Replications::checkpoint`]): the
/// state (how many rows, the sweep's manifest), the pooled counts of those rows
/// and the values of metrics that had no column yet ([`Extras`]).
pub const STATE: &str = "replications.partial.state.toml";
pub const PARTIAL_HISTOGRAMS: &str = "replications.partial.histograms.csv";
pub const EXTRA: &str = "replications.partial.extra.csv";

/// How often (wall time) a sweep writes its resume state: often enough that a
/// killed sweep loses little, rarely enough to cost nothing measurable. The
/// environment variable `RESIM_CHECKPOINT_MS` sets another interval (0: after
/// every finished replication).
fn checkpoint_every() -> std::time::Duration {
    static EVERY: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *EVERY.get_or_init(|| {
        let ms = std::env::var("RESIM_CHECKPOINT_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(1000);
        std::time::Duration::from_millis(ms)
    })
}

/// What a sweep or merge owns in a folder without a record (written by an older
/// resim): the files it always removed before writing `replications.csv`.
const LEGACY: &[&str] = &[
    "summary.csv",
    "paired.csv",
    "summary_wide.csv",
    "pooled.csv",
    super::pooled::HISTOGRAMS,
    "thresholds.csv",
    crate::report::html::FILE,
];

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        context,
        source,
        user_path: true,
    }
}

/// The lock file that keeps two sweeps (or merges) out of one folder at once.
pub const LOCK: &str = ".resim.lock";

/// Held while a sweep or merge writes its folder; the operating system releases
/// the lock when the process ends, however it ends, so a killed run leaves no
/// stale lock (the empty file stays, which is harmless).
#[must_use = "the folder is only locked while this is alive"]
pub struct FolderLock {
    _file: File,
}

/// Locks `dir` (created if needed) for this process, or says who holds it.
pub fn lock(dir: &Path) -> Result<FolderLock, Error> {
    std::fs::create_dir_all(dir).map_err(io(format!(
        "cannot create the output folder {}",
        dir.display()
    )))?;
    let path = dir.join(LOCK);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io(format!("cannot open the lock file {}", path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(FolderLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(crate::error::ScenarioError::new(
            "",
            "another `resim sweep` or `resim merge` is writing into this folder now: wait for it to finish or pass another --out",
        )
        .in_file(dir)
        .into()),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(io(format!("cannot lock {}", path.display()))(e))
        }
    }
}

/// A sweep's or merge's output folder while it runs: locked, its staging file
/// claimed, its previous results untouched until [`Output::commit`].
pub struct Output {
    _lock: FolderLock,
    folder: Folder,
}

/// Locks `dir` (see [`lock`]) and records the staging file as resim's, so that a
/// later complete run removes it should this one stop.
pub fn prepare(dir: &Path) -> Result<Output, Error> {
    let lock = lock(dir)?;
    let mut folder = Folder::open(dir, LEGACY)?;
    folder.claim(&[PARTIAL, STATE, PARTIAL_HISTOGRAMS, EXTRA])?;
    Ok(Output {
        _lock: lock,
        folder,
    })
}

impl Output {
    /// The staging file of `replications.csv`.
    pub fn partial(&self) -> PathBuf {
        self.folder.dir().join(PARTIAL)
    }

    /// Puts `files` and the staged `replications.csv` in place as the folder's
    /// new set (the files of the previous one it does not hold are removed).
    pub fn commit(self, mut files: Vec<(String, Content)>) -> Result<(), Error> {
        files.push((REPLICATIONS.into(), Content::Staged(self.partial())));
        self.folder.replace(files)
    }
}

/// `summary.csv`, `paired.csv`, `summary_wide.csv` and (when there is one)
/// `pooled.csv`, rendered.
pub fn summary_files(summary: &Summary, windows: bool) -> Result<Vec<(String, Content)>, Error> {
    summary.tables(windows).iter().map(table_file).collect()
}

/// A table as the file `<name>.csv` of the set.
pub fn table_file(t: &crate::report::Table) -> Result<(String, Content), Error> {
    Ok((
        format!("{}.csv", t.name),
        Content::Bytes(crate::report::to_csv(t)?),
    ))
}

/// What a finished [`Replications`] gives: its summary (when summarizing), how
/// many metric columns later replications added, and the files to put in place
/// with the rows (`histograms.csv` when pooling; the summary files when
/// summarizing).
pub struct Finished {
    pub summary: Option<Summary>,
    pub added: usize,
    pub files: Vec<(String, Content)>,
}

/// The rows of `replications.csv`, in unit order, and the summary they feed.
pub struct Replications {
    /// Rows not yet handed to the file: written there whole by [`Self::flush`], so
    /// the file only ever grows by complete rows.
    csv: csv::Writer<Vec<u8>>,
    file: File,
    path: PathBuf,
    summarizer: Option<Summarizer>,
    /// Every replication's requests and answered times, per compare row.
    pooled: Option<Pooled>,
    /// Values of metrics `metrics` lacks, kept aside until the end.
    extras: Option<Extras>,
    metrics: Vec<String>,
    manifest: Manifest,
    axis_columns: Vec<String>,
    rows_written: u64,
    /// Rows in `csv`, not yet in the file.
    pending_rows: u64,
    /// Bytes of whole rows in the file: where a failed write is cut back to.
    committed: u64,
    /// FNV-1a 64 of those bytes, for the resume state.
    committed_fnv: u64,
    /// When the resume state was last written; `None` for a merge, which has
    /// no use for one (its shards hold the rows).
    checkpointed: Option<Option<std::time::Instant>>,
    /// The counts of the rows in `csv`, pooled when their rows reach the file:
    /// `pooled` always holds exactly the rows in the file, so a resume state
    /// written after any flush (even one after a failed write) is whole.
    pending_counts: Vec<(usize, UnitCounts)>,
}

/// The resume state ([`STATE`]): the rows of the staging file it covers and the
/// sweep they belong to.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct State {
    /// Whole rows of the staging file, and its length in bytes with them.
    rows: u64,
    bytes: u64,
    /// Length of [`EXTRA`] and its metrics in first-seen order.
    extra_bytes: u64,
    extra_names: Vec<String>,
    /// FNV-1a 64 of [`PARTIAL_HISTOGRAMS`] as written with this state.
    histograms_fnv1a64: String,
    /// FNV-1a 64 of the staging file's first `bytes` bytes: a row changed
    /// since is not kept.
    #[serde(default)]
    rows_fnv1a64: Option<String>,
    /// The sweep's manifest: a rerun resumes only the same sweep.
    manifest: Manifest,
}

/// What [`Replications::resume`] found.
pub enum Resume {
    /// The rows an earlier run of this sweep finished, ready to go on after.
    From(Box<Replications>, u64),
    /// Nothing to go on from; the text says why when there was something.
    Fresh(Option<String>),
}

impl Replications {
    /// Starts the file `path` (the staging file of `replications.csv`) with its
    /// header. With `summarize`, every row also feeds the summary (only a whole
    /// run or a merge has every row). The metric columns are `metrics` (the
    /// manifest's, or a merge's with the shards' later columns).
    pub fn create(
        path: &Path,
        axis_columns: &[String],
        metrics: &[String],
        manifest: &Manifest,
        summarize: bool,
    ) -> Result<Replications, Error> {
        let file = File::create(path).map_err(io(format!("cannot write {}", path.display())))?;
        let mut out =
            Replications::create_on(file, path, axis_columns, metrics, manifest, summarize);
        let header = axis_columns
            .iter()
            .map(String::as_str)
            .chain(["replication"])
            .chain(metrics.iter().map(String::as_str));
        out.csv
            .write_record(header)
            .map_err(|e| csv_error(path, e))?;
        out.flush()?;
        Ok(out)
    }

    /// Rows to be written to `file` (open at its end) at `path`, nothing yet.
    fn create_on(
        file: File,
        path: &Path,
        axis_columns: &[String],
        metrics: &[String],
        manifest: &Manifest,
        summarize: bool,
    ) -> Replications {
        Replications {
            summarizer: summarize.then(|| {
                Summarizer::new(
                    axis_columns.to_vec(),
                    metrics.to_vec(),
                    manifest.confidence,
                    &path.display().to_string(),
                )
                .with_baseline(manifest.baseline.clone())
                .with_proportions(&manifest.proportions)
            }),
            csv: csv::Writer::from_writer(Vec::new()),
            file,
            path: path.to_path_buf(),
            pooled: None,
            extras: None,
            metrics: metrics.to_vec(),
            manifest: manifest.clone(),
            axis_columns: axis_columns.to_vec(),
            rows_written: 0,
            pending_rows: 0,
            committed: 0,
            committed_fnv: super::kept::FNV_START,
            checkpointed: None,
            pending_counts: Vec::new(),
        }
    }

    /// One row: the metric cells as text, and the numbers that text parses to
    /// (`extract::parse_value`), which the summary takes.
    pub fn write<'t>(
        &mut self,
        labels: &'t [String],
        replication: &'t str,
        text: impl Iterator<Item = &'t str>,
        values: &[Option<f64>],
    ) -> Result<(), Error> {
        let record = labels
            .iter()
            .map(String::as_str)
            .chain([replication])
            .chain(text);
        self.csv
            .write_record(record)
            .map_err(|e| csv_error(&self.path, e))?;
        self.pending_rows += 1;
        if let Some(s) = &mut self.summarizer {
            s.push(labels, replication, values)?;
        }
        Ok(())
    }

    /// Makes this sweep resumable: [`Self::checkpoint`] writes the state a rerun
    /// goes on from.
    pub fn resumable(mut self) -> Replications {
        self.checkpointed = Some(None);
        self
    }

    /// Writes the resume state for the rows in the file (call after a flush):
    /// at most once per [`checkpoint_every`] unless `now`. The pooled counts and
    /// the extra values go first, the state (naming their hash and length) last,
    /// each whole: a run killed at any moment leaves a state that matches its
    /// files, or an older one that the files still hold (they only grow).
    pub fn checkpoint(&mut self, now: bool) -> Result<(), Error> {
        let Some(last) = self.checkpointed else {
            return Ok(());
        };
        if self.pending_rows > 0 || (!now && last.is_some_and(|t| t.elapsed() < checkpoint_every()))
        {
            return Ok(());
        }
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let histograms = match &self.pooled {
            Some(p) => crate::report::to_csv(&p.histograms(&self.axis_columns))?,
            None => Vec::new(),
        };
        crate::report::target::write_whole(&dir.join(PARTIAL_HISTOGRAMS), &histograms)?;
        let (extra_bytes, extra_names) = match &mut self.extras {
            Some(e) => (e.flushed_len()?, e.names.clone()),
            None => (0, Vec::new()),
        };
        let state = State {
            rows: self.rows_written,
            bytes: self.committed,
            extra_bytes,
            extra_names,
            histograms_fnv1a64: super::manifest::fnv1a64(&histograms),
            rows_fnv1a64: Some(format!("{:016x}", self.committed_fnv)),
            manifest: self.manifest.clone(),
        };
        let text = toml::to_string(&state)
            .map_err(|e| Error::Other(format!("cannot write {STATE}: {e}")))?;
        crate::report::target::write_whole(&dir.join(STATE), text.as_bytes())?;
        self.checkpointed = Some(Some(std::time::Instant::now()));
        Ok(())
    }

    /// The rows an earlier, stopped run of the same sweep (`manifest`, but for
    /// how it was invoked) left in the staging file `path`, with its pooled
    /// counts and extra values, ready to go on after them: every row is read
    /// back into the summary as a merge reads a shard's. Anything that does
    /// not match (another sweep, another resim version, files shorter than the
    /// state says) gives [`Resume::Fresh`] and the reason.
    pub fn resume(
        path: &Path,
        axis_columns: &[String],
        metrics: &[String],
        manifest: &Manifest,
        summarize: bool,
        labels: Vec<Vec<String>>,
    ) -> Result<Resume, Error> {
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let fresh = |why: String| {
            Ok(Resume::Fresh(Some(format!(
                "the rows an earlier sweep left in {} were not reused: {why}",
                path.display()
            ))))
        };
        let (state, histograms_path, histograms) = match earlier(path, &dir, manifest) {
            None => return Ok(Resume::Fresh(None)),
            Some(Err(why)) => return fresh(why),
            Some(Ok(found)) => found,
        };
        let file = cut_to(path, state.bytes)?;
        let mut out =
            Replications::create_on(file, path, axis_columns, metrics, manifest, summarize);
        // the rows back into the summary, as a merge reads them
        // flexible: a row of too few cells is named below, not a reader error
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .map_err(|e| csv_error(path, e))?;
        let header = reader.headers().map_err(|e| csv_error(path, e))?.clone();
        let expected = axis_columns
            .iter()
            .map(String::as_str)
            .chain(["replication"])
            .chain(metrics.iter().map(String::as_str));
        if !header.iter().eq(expected) {
            return fresh("its header is not this sweep's".into());
        }
        let axes = axis_columns.len();
        let expected = super::kept::Expected {
            first_unit: manifest.shard.as_ref().map_or(0, |s| s.first_unit),
            labels: &labels,
            axes,
            metrics,
        };
        let mut values = vec![None; metrics.len()];
        let mut rows = 0;
        for record in reader.records() {
            let record = match record {
                Ok(r) => r,
                Err(e) => return fresh(format!("row {} cannot be read ({e})", rows + 1)),
            };
            let line = record.position().map_or(0, |p| p.line());
            if let Some(problem) = expected.problem(rows, line, &record) {
                return fresh(problem);
            }
            if let Some(s) = &mut out.summarizer {
                for (v, text) in values.iter_mut().zip(record.iter().skip(axes + 1)) {
                    *v = super::extract::parse_value(text).ok().flatten();
                }
                let labels: Vec<String> = record.iter().take(axes).map(String::from).collect();
                s.push(&labels, &record[axes], &values)?;
            }
            rows += 1;
        }
        if rows != state.rows {
            return fresh(format!("{rows} rows where its state says {}", state.rows));
        }
        // every row reads right, yet a number in one may have been changed
        let fnv = super::manifest::fnv1a64_file(path)?;
        match &state.rows_fnv1a64 {
            None => return fresh(format!("{STATE} holds no checksum of its rows")),
            Some(h) if *h != fnv => {
                return fresh(format!(
                    "its rows are not the ones that sweep wrote (their FNV-1a 64 is {fnv}, its state says {h}): a row was changed since"
                ));
            }
            Some(_) => {}
        }
        if !histograms.is_empty() {
            out.pooled = Some(Pooled::read_bytes(
                &histograms_path,
                &histograms,
                axis_columns,
                &labels,
            )?);
        } else {
            out.pooled = Some(Pooled::new(labels));
        }
        if !state.extra_names.is_empty() {
            out.extras = Some(Extras::reopen(&dir, state.extra_bytes, state.extra_names)?);
        }
        out.rows_written = rows;
        out.committed = state.bytes;
        out.committed_fnv = u64::from_str_radix(&fnv, 16).unwrap_or(super::kept::FNV_START);
        Ok(Resume::From(Box::new(out), rows))
    }

    /// Pools the runs' requests ([`Self::pool`]) of the compare rows with these
    /// labels, for `histograms.csv` (and `pooled.csv` when summarizing).
    pub fn pooling(mut self, labels: Vec<Vec<String>>) -> Replications {
        self.pooled = Some(Pooled::new(labels));
        self
    }

    /// Adds one run of compare row `row` to the pooled counts.
    pub fn pool(&mut self, row: usize, counts: UnitCounts) {
        if self.pooled.is_some() {
            self.pending_counts.push((row, counts));
        }
    }

    /// Keeps the values of metrics that have no column (`name`, text) of the row
    /// written last, for the columns added at the end ([`Self::finish`]).
    pub fn extra(&mut self, values: &[(String, String)]) -> Result<(), Error> {
        if values.is_empty() {
            return Ok(());
        }
        let row = self.rows_written + self.pending_rows - 1;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        if self.extras.is_none() {
            self.extras = Some(Extras::create(dir)?);
        }
        if let Some(e) = &mut self.extras {
            e.push(row, values)?;
        }
        Ok(())
    }

    /// Hands the rows written so far to the operating system, in one write. A write
    /// that fails part-way (a full disk) is cut back to the last whole row, so the
    /// file never ends in a partial line.
    pub fn flush(&mut self) -> Result<(), Error> {
        let fail = || io(format!("cannot write {}", self.path.display()));
        let pending = std::mem::replace(&mut self.csv, csv::Writer::from_writer(Vec::new()))
            .into_inner()
            .map_err(|e| fail()(e.into_error()))?;
        if let Err(e) = self.file.write_all(&pending) {
            use std::io::{Seek, SeekFrom};
            // the rows of this write are lost with it: a later flush (the one
            // that reports what was kept) must not count them, nor pool them
            self.pending_rows = 0;
            self.pending_counts.clear();
            let cut = self
                .file
                .set_len(self.committed)
                .and_then(|()| self.file.seek(SeekFrom::Start(self.committed)));
            let e = match cut {
                Ok(_) => e,
                Err(cut) => std::io::Error::new(
                    e.kind(),
                    format!("{e}; cutting the file back to its last whole row failed too: {cut}"),
                ),
            };
            return Err(fail()(e));
        }
        self.committed += pending.len() as u64;
        self.committed_fnv = super::kept::fnv_update(self.committed_fnv, &pending);
        self.rows_written += std::mem::take(&mut self.pending_rows);
        if let Some(p) = &mut self.pooled {
            for (row, counts) in self.pending_counts.drain(..) {
                p.add(row, &counts);
            }
        }
        Ok(())
    }

    pub fn rows_written(&self) -> u64 {
        self.rows_written
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, adds the columns of metrics later replications had (rewriting
    /// the staging file once, see [`Extras`]) and renders `histograms.csv` when
    /// pooling and, when summarizing, `summary.csv`, `paired.csv`,
    /// `summary_wide.csv` and `pooled.csv`: nothing is put in place here.
    pub fn finish(mut self) -> Result<Finished, Error> {
        self.flush()?;
        let mut added = 0;
        if let Some(extras) = self.extras.take() {
            added = extras.names.len();
            let summarizer = self.summarizer.is_some().then(|| {
                let metrics = super::extract::place(&self.metrics, &extras.names);
                Summarizer::new(
                    self.axis_columns.clone(),
                    metrics,
                    self.manifest.confidence,
                    &self.path.display().to_string(),
                )
                .with_baseline(self.manifest.baseline.clone())
                .with_proportions(&self.manifest.proportions)
            });
            self.summarizer = extras.rewrite(&self.path, &self.metrics, summarizer)?;
        }
        let mut files = Vec::new();
        let summary = match self.summarizer {
            Some(s) => {
                let mut summary = s.finish()?;
                summary.pooled = self.pooled.as_ref().map(|p| p.table(&self.axis_columns));
                files = summary_files(&summary, self.manifest.windows)?;
                Some(summary)
            }
            None => None,
        };
        if let Some(p) = &self.pooled {
            files.push(table_file(&p.histograms(&self.axis_columns))?);
        }
        Ok(Finished {
            summary,
            added,
            files,
        })
    }
}

/// Values of metrics that replication 0 did not have (its compare row's tables
/// had fewer rows: a later replication's run lasted more windows, a member was
/// seen only sometimes). While the sweep runs they go to a file beside the
/// staging file ([`EXTRA`], `row,metric,value` in row order), so memory stays
/// bounded; at the end the staging file is rewritten once with their columns
/// ([`super::extract::place`]), rows that lack one having an empty cell, before
/// the set is put in place, and the file is removed. A sweep that stops keeps
/// it beside its rows, for a rerun to resume from ([`Replications::resume`]);
/// the next complete run in the folder removes it.
struct Extras {
    /// The metrics in first-seen order.
    names: Vec<String>,
    index: std::collections::HashMap<String, usize>,
    spill: csv::Writer<std::io::BufWriter<File>>,
    path: PathBuf,
}

impl Extras {
    fn create(dir: &Path) -> Result<Extras, Error> {
        let path = dir.join(EXTRA);
        let file = File::create(&path).map_err(io(format!("cannot write {}", path.display())))?;
        Ok(Extras {
            names: Vec::new(),
            index: std::collections::HashMap::new(),
            spill: csv::Writer::from_writer(std::io::BufWriter::new(file)),
            path,
        })
    }

    /// The values an earlier run of the sweep kept: the first `bytes` of
    /// [`EXTRA`] in `dir`, of the metrics `names`.
    fn reopen(dir: &Path, bytes: u64, names: Vec<String>) -> Result<Extras, Error> {
        use std::io::{Seek, SeekFrom};
        let path = dir.join(EXTRA);
        let fail = io(format!("cannot write {}", path.display()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(io(format!("cannot write {}", path.display())))?;
        file.set_len(bytes)
            .and_then(|()| file.seek(SeekFrom::End(0)))
            .map_err(fail)?;
        Ok(Extras {
            index: names.iter().cloned().zip(0..).collect(),
            names,
            spill: csv::Writer::from_writer(std::io::BufWriter::new(file)),
            path,
        })
    }

    /// Hands what is written to the file and says how long it is.
    fn flushed_len(&mut self) -> Result<u64, Error> {
        let fail = || io(format!("cannot write {}", self.path.display()));
        self.spill.flush().map_err(fail())?;
        let len = self.spill.get_ref().get_ref().metadata().map_err(fail())?;
        Ok(len.len())
    }

    fn push(&mut self, row: u64, values: &[(String, String)]) -> Result<(), Error> {
        for (name, text) in values {
            let k = match self.index.get(name) {
                Some(&k) => k,
                None => {
                    self.index.insert(name.clone(), self.names.len());
                    self.names.push(name.clone());
                    self.names.len() - 1
                }
            };
            self.spill
                .write_record([row.to_string(), k.to_string(), text.clone()])
                .map_err(|e| csv_error(&self.path, e))?;
        }
        Ok(())
    }

    /// Rewrites the rows at `target` (the staging file, metric columns `base`)
    /// with every metric's column (temporary file + rename), feeding `summarizer`
    /// (whose metrics are the new columns) every row; returns it.
    fn rewrite(
        mut self,
        target: &Path,
        base: &[String],
        mut summarizer: Option<Summarizer>,
    ) -> Result<Option<Summarizer>, Error> {
        let spill_error = |e: csv::Error| csv_error(&self.path, e);
        self.spill
            .flush()
            .map_err(|e| csv_error(&self.path, e.into()))?;
        let columns = super::extract::place(base, &self.names);
        let at: std::collections::HashMap<&str, usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        let base_at: Vec<usize> = base.iter().map(|m| at[m.as_str()]).collect();
        let extra_at: Vec<usize> = self.names.iter().map(|m| at[m.as_str()]).collect();
        let mut spill = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_path(&self.path)
            .map_err(spill_error)?
            .into_records()
            .peekable();
        let mut reader = csv::Reader::from_path(target).map_err(|e| csv_error(target, e))?;
        let header = reader.headers().map_err(|e| csv_error(target, e))?.clone();
        let axes = header.len() - base.len() - 1;
        let name = target
            .file_name()
            .map_or_else(|| PARTIAL.into(), |n| n.to_string_lossy().into_owned());
        let tmp = target.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let written = (|| -> Result<(), Error> {
            let file = File::create(&tmp).map_err(io(format!("cannot write {}", tmp.display())))?;
            let mut out = csv::Writer::from_writer(std::io::BufWriter::new(file));
            let fail = |e: csv::Error| csv_error(target, e);
            out.write_record(
                header
                    .iter()
                    .take(axes + 1)
                    .chain(columns.iter().map(String::as_str)),
            )
            .map_err(fail)?;
            let mut cells = vec![String::new(); columns.len()];
            let mut values = vec![None; columns.len()];
            for (row, record) in reader.records().enumerate() {
                let record = record.map_err(fail)?;
                cells.iter_mut().for_each(String::clear);
                for (i, text) in record.iter().skip(axes + 1).enumerate() {
                    cells[base_at[i]].push_str(text);
                }
                while let Some(Ok(e)) = spill.peek() {
                    if e.get(0).and_then(|r| r.parse::<usize>().ok()) != Some(row) {
                        break;
                    }
                    let k: usize = e.get(1).and_then(|k| k.parse().ok()).unwrap_or(usize::MAX);
                    if let (Some(&c), Some(text)) = (extra_at.get(k), e.get(2)) {
                        cells[c] = text.to_string();
                    }
                    spill.next();
                }
                if let Some(s) = &mut summarizer {
                    for (v, text) in values.iter_mut().zip(&cells) {
                        *v = super::extract::parse_value(text).ok().flatten();
                    }
                    let labels: Vec<String> = record.iter().take(axes).map(String::from).collect();
                    s.push(&labels, &record[axes], &values)?;
                }
                out.write_record(
                    record
                        .iter()
                        .take(axes + 1)
                        .chain(cells.iter().map(String::as_str)),
                )
                .map_err(fail)?;
            }
            out.into_inner()
                .map_err(|e| io(format!("cannot write {}", tmp.display()))(e.into_error()))?
                .into_inner()
                .map_err(|e| io(format!("cannot write {}", tmp.display()))(e.into_error()))?
                .sync_all()
                .map_err(io(format!("cannot write {}", tmp.display())))?;
            std::fs::rename(&tmp, target).map_err(io(format!("cannot write {}", target.display())))
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written?;
        // its values are in the rows now; on a failure before this point the
        // file stays for a rerun to resume from (the next complete run removes it)
        let _ = std::fs::remove_file(&self.path);
        Ok(summarizer)
    }
}

fn csv_error(path: &Path, e: csv::Error) -> Error {
    Error::Other(format!("{}: {e}", path.display()))
}

/// An earlier run's state, and the path and bytes of its partial histograms.
type Earlier = (State, PathBuf, Vec<u8>);

/// The staging file `path` opened for writing after its first `bytes` (what
/// the earlier run committed), the rest cut off.
fn cut_to(path: &Path, bytes: u64) -> Result<File, Error> {
    use std::io::{Seek, SeekFrom};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io(format!("cannot write {}", path.display())))?;
    let mut f = &file;
    f.set_len(bytes)
        .and_then(|()| f.seek(SeekFrom::End(0)))
        .map_err(io(format!("cannot write {}", path.display())))?;
    Ok(file)
}

/// The state an earlier, stopped run of a sweep left beside its staging file
/// `path` in `dir`, with the path and bytes of its partial histograms: None
/// when there is none, `Err(why)` when it is not that of this sweep
/// (`manifest`) or its files changed since.
fn earlier(path: &Path, dir: &Path, manifest: &Manifest) -> Option<Result<Earlier, String>> {
    let text = std::fs::read_to_string(dir.join(STATE)).ok()?;
    let Ok(state) = toml::from_str::<State>(&text) else {
        return Some(Err(format!("{STATE} cannot be read")));
    };
    let why = if state.manifest.resim_version != manifest.resim_version {
        format!(
            "they were written by resim {}",
            state.manifest.resim_version
        )
    } else if let Some((key, was, is)) = state.manifest.difference(manifest) {
        format!("that sweep had `{key}` = {was}, this one {is}")
    } else if state.manifest.shard != manifest.shard {
        "that sweep ran another shard".into()
    } else {
        let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let histograms_path = dir.join(PARTIAL_HISTOGRAMS);
        let histograms = std::fs::read(&histograms_path).unwrap_or_default();
        if len(path) >= state.bytes
            && len(&dir.join(EXTRA)) >= state.extra_bytes
            && super::manifest::fnv1a64(&histograms) == state.histograms_fnv1a64
        {
            return Some(Ok((state, histograms_path, histograms)));
        }
        "its files do not match its state (changed since?)".into()
    };
    Some(Err(why))
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

    /// Three replications of one compare row into `dir`'s staging file, the
    /// later two with a metric `b` replication 0 did not have.
    fn three_rows(dir: &Path, summarize: bool) -> Replications {
        let mut manifest = super::super::manifest::tests::manifest();
        manifest.proportions.clear();
        let labels = vec!["r".to_string()];
        let mut out = Replications::create(
            &dir.join(PARTIAL),
            &["x".to_string()],
            &["a".to_string()],
            &manifest,
            summarize,
        )
        .unwrap()
        .pooling(vec![labels.clone()]);
        for rep in 0..3 {
            let rep = rep.to_string();
            out.write(&labels, &rep, ["1"].into_iter(), &[Some(1.0)])
                .unwrap();
            if rep != "0" {
                out.extra(&[("b".to_string(), rep.clone())]).unwrap();
            }
            out.flush().unwrap();
        }
        out
    }

    fn spill(dir: &Path) -> bool {
        names(dir).iter().any(|n| n == EXTRA)
    }

    #[test]
    fn added_columns_rewrite_the_staging_file_and_leave_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let out = three_rows(d, true);
        assert!(spill(d), "the values of `b` wait in a temporary file");
        let done = out.finish().unwrap();
        assert_eq!(names(d), [PARTIAL], "only the staging file, rewritten");
        assert_eq!(
            std::fs::read_to_string(d.join(PARTIAL)).unwrap(),
            "x,replication,a,b\nr,0,1,\nr,1,1,1\nr,2,1,2\n"
        );
        assert_eq!(done.added, 1);
        let files: Vec<&str> = done.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            files,
            [
                "summary.csv",
                "paired.csv",
                "summary_wide.csv",
                "pooled.csv",
                super::super::pooled::HISTOGRAMS
            ]
        );
    }

    #[test]
    fn a_shard_puts_only_its_histograms_beside_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let done = three_rows(dir.path(), false).finish().unwrap();
        assert!(done.summary.is_none());
        let files: Vec<&str> = done.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(files, [super::super::pooled::HISTOGRAMS]);
        assert_eq!(names(dir.path()), [PARTIAL]);
    }

    #[test]
    fn a_sweep_that_stops_keeps_its_rows_and_their_extra_values() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let out = three_rows(d, true);
        assert!(spill(d));
        drop(out);
        assert_eq!(names(d), [PARTIAL, EXTRA]);
        assert_eq!(
            std::fs::read_to_string(d.join(PARTIAL)).unwrap(),
            "x,replication,a\nr,0,1\nr,1,1\nr,2,1\n"
        );
    }

    #[test]
    fn a_killed_sweeps_temporaries_are_recognized_as_resims() {
        // What the next run's `Folder::open` removes once the process is gone.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for name in [
            ".replications_extra.csv.999999999.tmp",
            ".replications.partial.csv.999999999.tmp",
        ] {
            std::fs::write(d.join(name), "x").unwrap();
        }
        crate::report::folder::remove_stale_temporaries(d);
        assert!(names(d).is_empty(), "{:?}", names(d));
    }
}
