//! Monte-Carlo sweeps: every compare row x replication, in parallel, with streams
//! derived from (seed, replication, actor), so rows share random numbers and the
//! output depends neither on the thread count nor on sharding.
//!
//! ```text
//! scenario + --vary axes -> rows --(row, replication) units on a rayon pool-->
//!   metrics (extract) -> replications.csv in unit order (output) -> summary.csv,
//!   paired.csv (summary, stats); manifest.toml (manifest); resim merge (merge)
//! ```
//!
//! Units are numbered replication-major: unit `u` is replication `u / rows` of row
//! `u % rows`. A shard is a contiguous range of units, so concatenating the shards'
//! `replications.csv` rows in shard order gives the whole run's file, and the summary
//! (computed from the file's text alone) comes out byte for byte the same.

mod extract;
mod headline;
mod kept;
mod kinds;
mod manifest;
mod merge;
pub(crate) mod output;
mod pooled;
mod report;
pub(crate) mod runner;
pub mod stats;
pub(crate) mod summary;

pub use crate::table::{metric_parts, quote_part};
pub use extract::{Named, RowRunner, Shapes};
pub use manifest::{HashedFile, Manifest, Shard};
pub use merge::{MergeOptions, merge};

use crate::error::{Error, ScenarioError, did_you_mean};
use crate::report::Content;
use crate::scenario::{self, LoadOptions, Override, Scenario};
pub(crate) use extract::{Layout, Schema};
use manifest::{Invocation, ShardInfo};
use output::Replications;
use std::path::{Path, PathBuf};

/// Replications when neither `--replications` nor `[montecarlo] replications` says.
pub const DEFAULT_REPLICATIONS: u64 = 100;

/// The most worker threads `--jobs` may ask for.
pub const MAX_JOBS: usize = 1024;

/// Everything `resim sweep` was asked for (the command line, parsed).
#[derive(Debug, Clone, Default)]
pub struct SweepOptions {
    /// The scenario file.
    pub file: PathBuf,
    /// `--set` overrides, in order.
    pub overrides: Vec<Override>,
    /// `--seed`: beats every seed the file gives.
    pub seed: Option<u64>,
    /// `--replications`; `None`: `[montecarlo] replications`, else 100.
    pub replications: Option<u64>,
    /// Worker threads; `None`: one per core.
    pub jobs: Option<usize>,
    /// `--vary key.path=[v1, v2]`, as written.
    pub vary: Vec<String>,
    /// `--baseline axis=value`, as written (empty: `[montecarlo] baseline`).
    pub baseline: Vec<String>,
    /// `--shard K/N`: run only this slice of the units.
    pub shard: Option<Shard>,
    /// Output folder (`--out`); `None`: `out/<scenario stem>-sweep`, with
    /// `shard-K-of-N` below it for a shard of several.
    pub out: Option<PathBuf>,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// The command line, for the manifest.
    pub command: String,
    /// Write `report.html` (with the summary: a whole run, not a shard).
    pub report: bool,
    /// `--all-metrics`: print every metric that differs between compare rows
    /// instead of the headline (without `[montecarlo] report`).
    pub all_metrics: bool,
}

/// What a sweep or merge leaves for the user: its folder and the printed report.
#[derive(Debug, Clone)]
pub struct SweepReport {
    /// The folder the results were written to.
    pub dir: PathBuf,
    /// The printed report.
    pub text: String,
    /// Why `[thresholds]` failed (exit status 3), when one did.
    pub thresholds_failed: Option<String>,
}

impl SweepReport {
    /// `Err` (exit status 3) when a threshold failed.
    pub fn thresholds_result(&self) -> Result<(), Error> {
        match &self.thresholds_failed {
            Some(m) => Err(Error::Thresholds(m.clone())),
            None => Ok(()),
        }
    }
}

/// The thresholds as the manifest keeps them (a merge checks them again).
fn manifest_thresholds(t: &[crate::model::Threshold]) -> Vec<(String, String)> {
    t.iter()
        .map(|t| (t.metric.clone(), t.condition()))
        .collect()
}

/// Checks `thresholds` against the summary, adds the table to `text` and, with
/// `report.html` when asked, to `files`; returns why a threshold failed.
fn finish_report(
    dir: &Path,
    manifest: &Manifest,
    summary: &summary::Summary,
    thresholds: &[crate::model::Threshold],
    html: bool,
    text: &mut String,
    files: &mut Vec<(String, Content)>,
) -> Result<Option<String>, Error> {
    let verdict = crate::thresholds::check_sweep(
        thresholds,
        &summary.summary,
        &crate::format::percent(manifest.confidence),
    );
    if let Some(v) = &verdict {
        text.push('\n');
        text.push_str(&v.table.render_text());
        text.push_str(&format!("Thresholds: {}\n", v.summary()));
        files.push((
            format!("{}.csv", v.table.name),
            Content::Bytes(crate::report::to_csv(&v.table)?),
        ));
    }
    if html {
        let page = report::html_page(
            manifest,
            summary,
            verdict.as_ref().map(crate::thresholds::html_view),
        )?;
        files.push((crate::report::html::FILE.into(), Content::Bytes(page)));
    }
    Ok(verdict
        .and_then(|v| v.error(&dir.display().to_string()))
        .map(|e| e.to_string()))
}

/// Parses `--vary key.path=[v1, v2, ...]` into an axis.
pub fn parse_vary(text: &str) -> Result<(String, Vec<toml::Value>), ScenarioError> {
    let o = Override::parse(text).map_err(|_| {
        ScenarioError::new(
            "",
            format!("`--vary {text}`: expected key.path=[v1, v2, ...]"),
        )
    })?;
    match o.value {
        toml::Value::Array(values) => Ok((o.path, values)),
        _ => Err(ScenarioError::new(
            o.path,
            format!(
                "`--vary {text}`: the values are a TOML list, e.g. [1, 2, 3] or [\"greedy\", \"equal\"]"
            ),
        )),
    }
}

/// The default output folder: `out/<stem>-sweep`, a shard in `shard-K-of-N` below it
/// (so `resim merge out/<stem>-sweep/shard-*` lands in `out/<stem>-sweep`).
fn default_dir(stem: &str, shard: Option<Shard>) -> PathBuf {
    let dir = Path::new("out").join(format!("{stem}-sweep"));
    match shard {
        Some(s) if s.count > 1 => dir.join(format!("shard-{}-of-{}", s.index, s.count)),
        _ => dir,
    }
}

/// The compare row the sweep compares the others with (`--baseline`, or
/// `montecarlo.baseline`), each of its labels checked against its axis.
fn baseline(opts: &SweepOptions, scenario: &Scenario, text: &str) -> Result<Vec<String>, Error> {
    let in_file = |e: ScenarioError| Error::from(e.in_file(&opts.file));
    let baseline = if opts.baseline.is_empty() {
        scenario.base().montecarlo.baseline.clone()
    } else {
        opts.baseline.clone()
    };
    let reference =
        summary::reference_labels(&scenario.columns(), &scenario.rows[0].labels, &baseline)
            .map_err(|message| {
                let key = if opts.baseline.is_empty() {
                    "montecarlo.baseline"
                } else {
                    ""
                };
                let pos = scenario::paths::locate(text, key);
                in_file(ScenarioError::new(key, message).at(pos))
            })?;
    for (i, label) in reference.iter().enumerate() {
        if !scenario.rows.iter().any(|r| r.labels[i] == *label) {
            let axis = &scenario.axes[i];
            let known: Vec<String> = axis.values.iter().map(scenario::label).collect();
            let key = if opts.baseline.is_empty() {
                "montecarlo.baseline"
            } else {
                ""
            };
            return Err(in_file(
                ScenarioError::new(
                    key,
                    format!(
                        "baseline: the axis `{}` has no value `{label}` (its values: {}){}",
                        axis.column,
                        crate::error::list(known.iter().map(String::as_str)),
                        crate::error::did_you_mean(label, known.iter().map(String::as_str))
                    ),
                )
                .at(scenario::paths::locate(text, key)),
            ));
        }
    }
    Ok(baseline)
}

/// The text's first lines: the scenario, the runs, what was resumed.
fn header(
    opts: &SweepOptions,
    manifest: &Manifest,
    jobs: usize,
    run_units: (u64, u64),
    resumed: u64,
    resume_note: &Option<String>,
) -> String {
    let (replications, rows, seed) = (manifest.replications, manifest.rows, manifest.seed);
    let mut text = format!("== {} ({})\n", manifest.scenario_name, opts.file.display());
    text.push_str(&format!(
        "Monte-Carlo sweep: {replications} replication(s) x {rows} compare row(s), seed {}, {} thread(s)\n",
        seed, jobs
    ));
    if resumed > 0 {
        text.push_str(&format!(
            "Resumed: {resumed} rows an earlier run of this sweep finished before it stopped were kept; \
             units {}..{} ran now.\n",
            run_units.0, run_units.1
        ));
    }
    if let Some(note) = resume_note {
        text.push_str(&crate::report::wrap(
            &format!("Note: {note}."),
            crate::report::WIDTH,
        ));
    }
    text
}

/// The sweep's manifest before it runs: what it runs, on which file, with
/// which metrics (`written` is filled in at the end).
fn manifest_of(
    opts: &SweepOptions,
    (scenario, text, bytes): (&Scenario, &str, &[u8]),
    schema: &Schema,
    named: &[Vec<(String, crate::table::Cell)>],
    (replications, jobs): (u64, usize),
    baseline: Vec<String>,
    units: (u64, u64),
) -> Result<Manifest, Error> {
    let base = scenario.base();
    let mc = &base.montecarlo;
    Ok(Manifest {
        resim_version: env!("CARGO_PKG_VERSION").into(),
        scenario_name: base.name.clone(),
        scenario_fnv1a64: manifest::fnv1a64(bytes),
        // every row's model holds its seed (scenario::seed decided it)
        seed: base.seed,
        replications,
        confidence: mc.confidence,
        rows: scenario.rows.len() as u64,
        overrides: opts.overrides.iter().map(|o| o.text.clone()).collect(),
        vary: opts.vary.clone(),
        metrics: schema.names.clone(),
        report: mc.report.clone(),
        headline: if mc.report.is_empty() {
            let workloads: Vec<String> = base.workloads.iter().map(|w| w.name.clone()).collect();
            headline::candidates(&schema.names, &workloads, &axis_paths(scenario, text))
        } else {
            Vec::new()
        },
        windows: mc.windows,
        proportions: proportions(named),
        histograms: pooled::SCHEME.into(),
        baseline,
        latency_files: latency_files(scenario)?,
        thresholds: manifest_thresholds(&base.thresholds),
        timelines: crate::series_times(scenario),
        written: Vec::new(),
        shard: opts.shard.map(|s| ShardInfo {
            index: s.index,
            count: s.count,
            first_unit: units.0,
            end_unit: units.1,
        }),
        invocation: Invocation {
            command: opts.command.clone(),
            scenario_file: opts.file.display().to_string(),
            jobs: jobs as u64,
        },
    })
}

/// The rows file: the one an earlier run of this very sweep left when it
/// stopped (killed, a full disk, an error), whose rows are kept and the run
/// goes on after them, or a new one. Returns it, the rows kept, and why an
/// earlier one could not be kept.
fn open_rows(
    partial: &Path,
    scenario: &Scenario,
    schema: &Schema,
    manifest: &Manifest,
    whole: bool,
) -> Result<(Replications, u64, Option<String>), Error> {
    let labels: Vec<Vec<String>> = scenario.rows.iter().map(|r| r.labels.clone()).collect();
    Ok(
        match Replications::resume(
            partial,
            &scenario.columns(),
            &schema.names,
            manifest,
            whole,
            labels.clone(),
        )? {
            output::Resume::From(out, rows) => (*out, rows, None),
            output::Resume::Fresh(note) => {
                let out = Replications::create(
                    partial,
                    &scenario.columns(),
                    &schema.names,
                    manifest,
                    whole,
                )?
                .pooling(labels);
                (out, 0, note)
            }
        },
    )
}

/// An error that stopped the sweep, with the rows it kept and where.
fn stopped(e: Error, out: &mut Replications, dir: &Path) -> Error {
    let _ = out.flush().and_then(|()| out.checkpoint(true));
    let kept = out.rows_written();
    let path = out.path().display().to_string();
    let note = format!(
        "\n(the sweep stopped; the {kept} rows finished before it are kept in {path}; \
         no other file in {} was changed; run the same command again to go on after them)",
        dir.display()
    );
    with_note(e, &note)
}

/// What a shard's text says in place of the summary.
fn shard_text(s: Shard, units: (u64, u64), total: u64, rows: u64) -> String {
    format!(
        "Shard {}/{}: units {}..{} of {total} (unit u = replication u / {rows}, row u % {rows}).\n\
         Combine the shards with `resim merge DIR...` for summary.csv, paired.csv and pooled.csv.\n",
        s.index, s.count, units.0, units.1
    )
}

/// The scenario file's bytes, its text, and the scenario with `--set` and
/// `--vary` applied.
fn load(opts: &SweepOptions) -> Result<(Vec<u8>, String, Scenario), Error> {
    let in_file = |e: ScenarioError| Error::from(e.in_file(&opts.file));
    let extra_axes = opts
        .vary
        .iter()
        .map(|v| parse_vary(v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(in_file)?;
    let bytes = scenario::read_input(&opts.file, "scenario file")?;
    let text = scenario::decode_text(bytes.clone(), "scenario file").map_err(in_file)?;
    let scenario = scenario::load_str(
        &text,
        &opts.file,
        &LoadOptions {
            overrides: opts.overrides.clone(),
            seed: opts.seed,
            purpose: scenario::Purpose::Sweep,
            extra_axes,
            max_rows: 0,
        },
    )?;
    Ok((bytes, text, scenario))
}

/// What every row's replication 0 measures: its metrics by name, the
/// columns of them all, and each row's place in those columns.
#[allow(clippy::type_complexity)]
fn schema(
    pool: &rayon::ThreadPool,
    runner: &RowRunner,
) -> Result<
    (
        Vec<Vec<(String, crate::table::Cell)>>,
        Schema,
        Vec<extract::Layout>,
    ),
    Error,
> {
    let probes = runner::probe(pool, runner)?;
    let named: Vec<_> = probes.iter().map(|t| runner.named(t)).collect();
    let schema = Schema::new(&named);
    let layouts: Vec<_> = probes.iter().map(|t| runner.layout(t, &schema)).collect();
    Ok((named, schema, layouts))
}

/// Writes unit `unit`'s figures (replication unit / rows, row unit % rows)
/// to the rows file and the pooled counts; after each replication's last
/// row, a checkpoint a stopped run can resume from.
fn keep_unit(
    out: &mut Replications,
    scenario: &Scenario,
    unit: u64,
    measured: &extract::Measured,
) -> Result<(), Error> {
    let rows = scenario.rows.len() as u64;
    let (rep, row) = (unit / rows, (unit % rows) as usize);
    out.write(
        &scenario.rows[row].labels,
        &rep.to_string(),
        measured.text(),
        &measured.values,
    )?;
    out.extra(&measured.extras)?;
    out.pool(row, measured.counts.clone());
    if row as u64 == rows - 1 {
        out.flush()?;
        out.checkpoint(false)?;
    }
    Ok(())
}

/// Runs `resim sweep`.
pub fn sweep(opts: &SweepOptions) -> Result<SweepReport, Error> {
    let in_file = |e: ScenarioError| Error::from(e.in_file(&opts.file));
    let (bytes, text, scenario) = load(opts)?;
    let base = scenario.base();
    let mc = &base.montecarlo;
    check_metric_names(&scenario)?;
    let Settings {
        replications,
        jobs,
        rows,
        total,
        units,
    } = settings(opts, &scenario)?;

    let runner = RowRunner::new(&scenario);
    let pool = runner::pool(jobs)?;
    let (named, schema, layouts) = schema(&pool, &runner)?;
    check_report_metrics(&mc.report, &schema).map_err(|e| {
        let pos = scenario::paths::locate(&text, &e.path);
        in_file(e.at(pos))
    })?;
    crate::thresholds::check_names(&opts.file, &base.thresholds, &schema.names)?;

    let baseline = baseline(opts, &scenario, &text)?;
    let dir = opts
        .out
        .clone()
        .unwrap_or_else(|| default_dir(&scenario.stem(), opts.shard));
    let mut manifest = manifest_of(
        opts,
        (&scenario, &text, &bytes),
        &schema,
        &named,
        (replications, jobs),
        baseline.clone(),
        units,
    )?;
    manifest::check_slice(&dir, manifest.shard.as_ref())?;
    let folder = output::prepare(&dir)?;
    let whole = units == (0, total);
    let (out, resumed, resume_note) =
        open_rows(&folder.partial(), &scenario, &schema, &manifest, whole)?;
    let mut out = out.resumable();
    let run_units = (units.0 + resumed, units.1);

    let result = runner::run(
        &pool,
        &runner,
        &schema,
        &layouts,
        run_units,
        opts.progress,
        |unit, measured| keep_unit(&mut out, &scenario, unit, measured),
    );
    if let Err(e) = result {
        return Err(stopped(e, &mut out, &dir));
    }
    let output::Finished {
        summary,
        added,
        mut files,
    } = out.finish()?;
    manifest.written = written(&folder.partial(), &files)?;
    files.push((
        manifest::FILE.into(),
        Content::Bytes(manifest.to_toml()?.into_bytes()),
    ));

    let mut text = header(opts, &manifest, jobs, run_units, resumed, &resume_note);
    text.push_str(&report::added_columns(added));
    match (&summary, opts.shard) {
        (Some(s), _) => text.push_str(&report::render(s, &manifest, opts.all_metrics)),
        (None, Some(s)) => text.push_str(&shard_text(s, units, total, rows)),
        (None, None) => {}
    }
    let thresholds_failed = match &summary {
        Some(s) => finish_report(
            &dir,
            &manifest,
            s,
            &base.thresholds,
            opts.report,
            &mut text,
            &mut files,
        )?,
        None => None,
    };
    folder.commit(files)?;
    text.push_str(&report::footer(&dir));
    Ok(SweepReport {
        dir,
        text,
        thresholds_failed,
    })
}

/// The key paths the compare axes set: an axis's own path, or for a
/// `variant` axis every key its variants set (`[variants.NAME]` of the file).
fn axis_paths(scenario: &Scenario, text: &str) -> Vec<String> {
    fn flatten(prefix: &str, value: &toml::Value, out: &mut Vec<String>) {
        match value {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    flatten(&path, v, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }
    let file: Option<toml::Table> = toml::from_str(text).ok();
    let variants = file.as_ref().and_then(|f| f.get("variants"));
    let mut out = Vec::new();
    for axis in &scenario.axes {
        if axis.path != "variant" {
            out.push(axis.path.clone());
            continue;
        }
        for value in &axis.values {
            let name = scenario::label(value);
            if let Some(set) = variants.and_then(|v| v.get(&name)) {
                flatten("", set, &mut out);
            }
        }
    }
    out
}

/// The hashes of the files a merge reads, as this sweep or merge wrote them:
/// the staged rows (`replications.csv` to be) and `histograms.csv`.
fn written(
    partial: &Path,
    files: &[(String, Content)],
) -> Result<Vec<manifest::HashedFile>, Error> {
    let mut out = vec![manifest::HashedFile {
        file: output::REPLICATIONS.into(),
        fnv1a64: manifest::fnv1a64_file(partial)?,
    }];
    for (name, content) in files {
        if name == pooled::HISTOGRAMS
            && let Content::Bytes(bytes) = content
        {
            out.push(manifest::HashedFile {
                file: name.clone(),
                fnv1a64: manifest::fnv1a64(bytes),
            });
        }
    }
    Ok(out)
}

/// The metrics whose cells are booleans in any row's replication 0, in first-seen
/// order: 0/1 by definition (the manifest's `proportions`).
fn proportions(named: &[Named]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (name, cell) in named.iter().flatten() {
        if matches!(cell, crate::report::Cell::Bool(_)) && !out.contains(name) {
            out.push(name.clone());
        }
    }
    out
}

/// Every file a compare row's latency models read, once each, with its hash.
fn latency_files(scenario: &Scenario) -> Result<Vec<manifest::HashedFile>, Error> {
    let mut out: Vec<manifest::HashedFile> = Vec::new();
    let mut seen = Vec::new();
    for f in scenario.rows.iter().flat_map(|r| &r.model.latency_files) {
        if seen.contains(&f.path) {
            continue;
        }
        seen.push(f.path.clone());
        let bytes = std::fs::read(&f.path).map_err(|source| Error::Io {
            context: format!("cannot read the latency file {}", f.path.display()),
            source,
            user_path: true,
        })?;
        out.push(manifest::HashedFile {
            file: f.written.clone(),
            fnv1a64: manifest::fnv1a64(&bytes),
        });
    }
    Ok(out)
}

/// How many replications, on how many threads; the units (replication x
/// row) in all and the ones this run (or shard) runs.
struct Settings {
    replications: u64,
    jobs: usize,
    rows: u64,
    total: u64,
    units: (u64, u64),
}

fn settings(opts: &SweepOptions, scenario: &Scenario) -> Result<Settings, Error> {
    let replications = match opts
        .replications
        .or(scenario.base().montecarlo.replications)
    {
        Some(0) => {
            return Err(ScenarioError::new("", "--replications must be >= 1").into());
        }
        Some(n) => n,
        None => DEFAULT_REPLICATIONS,
    };
    if opts.jobs == Some(0) {
        return Err(ScenarioError::new("", "--jobs must be >= 1").into());
    }
    if let Some(j) = opts.jobs.filter(|&j| j > MAX_JOBS) {
        return Err(ScenarioError::new(
            "",
            format!(
                "--jobs must be <= {MAX_JOBS} (got {j}): each worker is an operating-system thread"
            ),
        )
        .into());
    }
    let jobs = opts.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let rows = scenario.rows.len() as u64;
    let total = rows
        .checked_mul(replications)
        .ok_or_else(|| ScenarioError::new("", "rows x replications does not fit in 64 bits"))?;
    Ok(Settings {
        replications,
        jobs,
        rows,
        total,
        units: opts.shard.map_or((0, total), |s| s.units(total)),
    })
}

/// `e` with `note` added to its message, keeping its kind (and exit code).
pub(crate) fn with_note(e: Error, note: &str) -> Error {
    match e {
        Error::Scenario(mut se) => {
            se.message.push_str(note);
            Error::Scenario(se)
        }
        Error::Limit(m) => Error::Limit(m + note),
        Error::Io {
            context,
            source,
            user_path,
        } => Error::Io {
            context: context + note,
            source,
            user_path,
        },
        Error::Other(m) => Error::Other(m + note),
        Error::Thresholds(m) => Error::Thresholds(m + note),
    }
}

/// Every metric `[thresholds]` and `[montecarlo] report` name can be one of the
/// scenario's, as far as the scenario alone tells (see [`Shapes`]): a table
/// and a column it has. Run by `resim check`, and by `run` and `sweep` before
/// they run anything (their runs then check each name whole), so that a typo
/// costs no run.
pub fn check_metric_names(scenario: &Scenario) -> Result<(), Error> {
    let base = scenario.base();
    let report = &base.montecarlo.report;
    if base.thresholds.is_empty() && report.is_empty() {
        return Ok(());
    }
    let shapes = Shapes::of(scenario);
    let named = base
        .thresholds
        .iter()
        .map(|t| (format!("thresholds.\"{}\"", t.metric), &t.metric))
        .chain(
            report
                .iter()
                .enumerate()
                .map(|(i, m)| (format!("montecarlo.report.{i}"), m)),
        );
    for (path, metric) in named {
        if let Some(problem) = shapes.problem(metric) {
            let position = std::fs::read_to_string(&scenario.file)
                .ok()
                .and_then(|text| scenario::paths::locate(&text, &path));
            return Err(ScenarioError::new(path, problem)
                .in_file(&scenario.file)
                .at(position)
                .into());
        }
    }
    Ok(())
}

/// Every name in `[montecarlo] report` is a metric of the run.
fn check_report_metrics(report: &[String], schema: &Schema) -> Result<(), ScenarioError> {
    for (i, name) in report.iter().enumerate() {
        if !schema.names.contains(name) {
            return Err(ScenarioError::new(
                format!("montecarlo.report.{i}"),
                format!(
                    "no metric named `{name}`{}; the metrics of this scenario: {}",
                    did_you_mean(name, schema.names.iter().map(String::as_str)),
                    schema.names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}
