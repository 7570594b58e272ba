//! `resim merge DIR...`: shard folders -> the folder the whole run would have made.
//!
//! Refuses shards of different sweeps (manifests that differ in anything but
//! `[shard]` and `[invocation]`), missing or duplicate shards, and shards whose
//! `replications.csv` is incomplete or not in unit order. The rows are copied in
//! shard order and summarized exactly as `resim sweep` summarizes its own, so
//! `replications.csv`, `summary.csv` and `paired.csv` come out byte for byte the same.

use super::extract::parse_value;
use super::manifest::{Invocation, Manifest, Shard};
use super::output::{self, REPLICATIONS, Replications};
use super::pooled::{self, Pooled};
use super::summary::{Summarizer, Summary};
use super::{SweepReport, report};
use crate::error::{Error, ScenarioError};
use crate::report::Content;
use std::path::{Path, PathBuf};

/// What `resim merge` was asked for (the command line, parsed).
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// The shard folders to merge.
    pub dirs: Vec<PathBuf>,
    /// Output folder (`--out`); `None`: `out/<scenario stem>-sweep`.
    pub out: Option<PathBuf>,
    /// The command line, for the manifest.
    pub command: String,
    /// Write `report.html` (the same bytes the unsharded sweep writes).
    pub report: bool,
    /// `--all-metrics`: print every metric that differs between compare rows.
    pub all_metrics: bool,
}

fn refuse(dir: &Path, message: String) -> Error {
    ScenarioError::new("", message).in_file(dir).into()
}

/// A shard folder, its manifest and which slice it is.
struct Part {
    dir: PathBuf,
    manifest: Manifest,
    shard: Shard,
    units: (u64, u64),
}

/// One shard folder's manifest and the units it holds, checked on its own.
fn read_part(dir: &Path) -> Result<Part, Error> {
    if !dir.join(super::manifest::FILE).exists() && dir.join(output::PARTIAL).exists() {
        return Err(refuse(
            dir,
            format!(
                "the shard is incomplete: its sweep stopped before the end and left only {} \
                 (run it again)",
                output::PARTIAL
            ),
        ));
    }
    let manifest = Manifest::read(dir)?;
    let total = manifest
        .rows
        .checked_mul(manifest.replications)
        .ok_or_else(|| {
            refuse(
                &dir.join(super::manifest::FILE),
                format!(
                    "rows ({}) x replications ({}) does not fit in 64 bits: not a manifest a sweep writes",
                    manifest.rows, manifest.replications
                ),
            )
        })?;
    let (shard, units) = match &manifest.shard {
        Some(s) => (
            Shard {
                index: s.index,
                count: s.count,
            },
            (s.first_unit, s.end_unit),
        ),
        None => (Shard { index: 1, count: 1 }, (0, total)),
    };
    if shard.index == 0 || shard.index > shard.count || shard.units(total) != units {
        return Err(refuse(
            dir,
            format!(
                "the manifest's [shard] is inconsistent (shard {}/{} of {total} units cannot hold units {}..{})",
                shard.index, shard.count, units.0, units.1
            ),
        ));
    }
    Ok(Part {
        dir: dir.to_path_buf(),
        manifest,
        shard,
        units,
    })
}

fn parts(dirs: &[PathBuf]) -> Result<Vec<Part>, Error> {
    let mut parts = dirs
        .iter()
        .map(|d| read_part(d))
        .collect::<Result<Vec<_>, _>>()?;
    if parts.is_empty() {
        return Err(ScenarioError::new("", "merge needs at least one shard folder").into());
    }
    let first = &parts[0];
    for p in &parts[1..] {
        if let Some((key, a, b)) = first.manifest.difference(&p.manifest) {
            return Err(refuse(
                &p.dir,
                format!(
                    "not a shard of the same sweep as {}: `{key}` is {b} here and {a} there",
                    first.dir.display()
                ),
            ));
        }
        if p.shard.count != first.shard.count {
            return Err(refuse(
                &p.dir,
                format!(
                    "is shard {}/{} but {} is shard {}/{}: all shards must split the run the same way",
                    p.shard.index,
                    p.shard.count,
                    first.dir.display(),
                    first.shard.index,
                    first.shard.count
                ),
            ));
        }
    }
    parts.sort_by_key(|p| p.shard.index);
    for w in parts.windows(2) {
        if w[0].shard.index == w[1].shard.index {
            return Err(refuse(
                &w[1].dir,
                format!(
                    "shard {}/{} is given twice (also {})",
                    w[1].shard.index,
                    w[1].shard.count,
                    w[0].dir.display()
                ),
            ));
        }
    }
    let count = parts[0].shard.count;
    let missing: Vec<String> = (1..=count)
        .filter(|k| !parts.iter().any(|p| p.shard.index == *k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(ScenarioError::new(
            "",
            format!(
                "missing shard(s) {}: merge needs all {count}",
                missing.join(", ")
            ),
        )
        .into());
    }
    Ok(parts)
}

/// The thresholds of the sweep, as the first shard's manifest holds them.
fn thresholds(first: &Part) -> Result<Vec<crate::model::Threshold>, Error> {
    first
        .manifest
        .thresholds
        .iter()
        .map(|(metric, condition)| {
            crate::model::Threshold::parse(metric, condition).map_err(|m| {
                refuse(
                    &first.dir.join(super::manifest::FILE),
                    format!("thresholds: {m}"),
                )
            })
        })
        .collect()
}

/// Runs `resim merge`.
pub fn merge(opts: &MergeOptions) -> Result<SweepReport, Error> {
    let parts = parts(&opts.dirs)?;
    let first = &parts[0].manifest;
    let stem = Path::new(&first.invocation.scenario_file)
        .file_stem()
        .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    let dir = opts
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(format!("{stem}-sweep")));
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if let Some(p) = parts.iter().find(|p| same(&p.dir, &dir)) {
        return Err(refuse(
            &p.dir,
            "is both a shard and the merge's output folder: pass --out DIR".into(),
        ));
    }

    let mut manifest = Manifest {
        shard: None,
        written: Vec::new(),
        invocation: Invocation {
            command: opts.command.clone(),
            scenario_file: first.invocation.scenario_file.clone(),
            jobs: 0,
        },
        ..first.clone()
    };
    // Everything is checked (and summarized) before the output folder is touched:
    // a bad shard must not destroy an earlier good merge.
    let columns = columns(&parts, first)?;
    let axis_columns = columns.axes.clone();
    let mut summary = check_shards(&parts, first, &columns)?;
    // after the rows' own checks, which say more about a file cut short or out
    // of order: any other change to what a sweep wrote is caught here
    for p in &parts {
        p.manifest.check_written(&p.dir)?;
    }
    let pooled = pooled_counts(&parts, first, &axis_columns, &summary)?;
    summary.pooled = pooled.as_ref().map(|p| p.table(&axis_columns));
    let thresholds = thresholds(&parts[0])?;
    let folder = output::prepare(&dir)?;
    let partial = folder.partial();
    // A merge's partial rows are of no use (the shards hold them): on a failure
    // the staging file goes, and the folder keeps its previous files.
    if let Err(e) = copy_rows(&parts, &partial, &columns, first) {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    // pooled.csv with the summary files, and the shards' histograms added up so
    // that the merged folder can itself be merged or read again.
    let mut files = output::summary_files(&summary, first.windows)?;
    if let Some(p) = &pooled {
        files.push(output::table_file(&p.histograms(&axis_columns))?);
    }
    manifest.written = super::written(&partial, &files)?;
    files.push((
        super::manifest::FILE.into(),
        Content::Bytes(manifest.to_toml()?.into_bytes()),
    ));
    let mut text = format!(
        "== {} (merged {} shard(s) of {} replications x {} compare rows, seed {})\n",
        first.scenario_name,
        parts.len(),
        first.replications,
        first.rows,
        first.seed
    );
    text.push_str(&report::added_columns(
        columns.metrics.len() - first.metrics.len(),
    ));
    text.push_str(&report::render(&summary, &manifest, opts.all_metrics));
    if summary.pooled.is_none() {
        text.push_str(&crate::report::wrap(
            "No pooled.csv: the shards were written by a resim version without histograms.csv \
             (run them again for percentiles of every replication's requests together).",
            crate::report::WIDTH,
        ));
    }
    let thresholds_failed = super::finish_report(
        &dir,
        &manifest,
        &summary,
        &thresholds,
        opts.report,
        &mut text,
        &mut files,
    )?;
    folder.commit(files)?;
    text.push_str(&report::footer(&dir));
    Ok(SweepReport {
        dir,
        text,
        thresholds_failed,
    })
}

/// Copies the shards' rows, in shard order, into `partial` (the merged
/// `replications.csv` to be), each shard's metric columns in their places in
/// `columns`.
fn copy_rows(
    parts: &[Part],
    partial: &Path,
    columns: &Columns,
    first: &Manifest,
) -> Result<(), Error> {
    let mut out = Replications::create(partial, &columns.axes, &columns.metrics, first, false)?;
    let axes = columns.axes.len();
    let mut cells = vec![String::new(); columns.metrics.len()];
    for (part, at) in parts.iter().zip(&columns.of_part) {
        let path = part.dir.join(REPLICATIONS);
        let mut reader = csv::Reader::from_path(&path)
            .map_err(|e| refuse(&path, format!("cannot read: {e}")))?;
        for record in reader.records() {
            let record = record.map_err(|e| refuse(&path, format!("{e}")))?;
            let fields: Vec<String> = record.iter().map(String::from).collect();
            cells.iter_mut().for_each(String::clear);
            for (i, text) in fields[axes + 1..].iter().enumerate() {
                cells[at[i]].push_str(text);
            }
            let text = cells.iter().map(String::as_str);
            out.write(&fields[..axes], &fields[axes], text, &[])?;
        }
    }
    out.finish().map(|_| ())
}

/// The columns of the merged `replications.csv`: the axis columns, and the
/// manifest's metrics with the columns every shard added at its end (metrics of
/// later replications, see `output`), placed as the unsharded run places them.
struct Columns {
    axes: Vec<String>,
    metrics: Vec<String>,
    /// Per shard: where each of its metric columns goes in `metrics`.
    of_part: Vec<Vec<usize>>,
}

/// Reads every shard's header: the axis columns (before `replication`), the
/// same in every shard, then the manifest's metrics with any added columns in
/// their places. Errors name the shard's file.
fn columns(parts: &[Part], first: &Manifest) -> Result<Columns, Error> {
    let base = &first.metrics;
    let known: std::collections::HashSet<&str> = base.iter().map(String::as_str).collect();
    let mut axes: Option<Vec<String>> = None;
    let mut added: Vec<String> = Vec::new();
    let mut headers = Vec::new();
    for part in parts {
        let path = part.dir.join(REPLICATIONS);
        let mut reader = csv::Reader::from_path(&path)
            .map_err(|e| refuse(&path, format!("cannot read: {e}")))?;
        let h = reader
            .headers()
            .map_err(|e| refuse(&path, format!("cannot read the header: {e}")))?
            .clone();
        let mismatch = || {
            refuse(
                &path,
                "its header does not match the manifest's metrics or the other shards".into(),
            )
        };
        let at = h
            .iter()
            .position(|c| c == "replication")
            .ok_or_else(mismatch)?;
        let own_axes: Vec<String> = h.iter().take(at).map(String::from).collect();
        let metrics: Vec<String> = h.iter().skip(at + 1).map(String::from).collect();
        let extras: Vec<String> = metrics
            .iter()
            .filter(|m| !known.contains(m.as_str()))
            .cloned()
            .collect();
        let distinct: std::collections::HashSet<&String> = extras.iter().collect();
        if distinct.len() != extras.len()
            || super::extract::place(base, &extras) != metrics
            || axes.as_ref().is_some_and(|a| *a != own_axes)
        {
            return Err(mismatch());
        }
        for e in extras {
            if !added.contains(&e) {
                added.push(e);
            }
        }
        axes = Some(own_axes);
        headers.push(metrics);
    }
    let metrics = super::extract::place(base, &added);
    let index: std::collections::HashMap<&str, usize> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let of_part = headers
        .iter()
        .map(|h| h.iter().map(|m| index[m.as_str()]).collect())
        .collect();
    Ok(Columns {
        axes: axes.unwrap_or_default(),
        metrics,
        of_part,
    })
}

/// Reads every shard's `replications.csv` through: rows in unit order, whole
/// replications, numbers. Returns the summary the merged file gives. Errors
/// name the shard's file.
fn check_shards(parts: &[Part], first: &Manifest, columns: &Columns) -> Result<Summary, Error> {
    let axes = columns.axes.len();
    let mut summarizer: Option<Summarizer> = None;
    for (part, at) in parts.iter().zip(&columns.of_part) {
        let path = part.dir.join(REPLICATIONS);
        let mut reader = csv::Reader::from_path(&path)
            .map_err(|e| refuse(&path, format!("cannot read: {e}")))?;
        let shown = path.display().to_string();
        let s = summarizer.get_or_insert_with(|| {
            Summarizer::new(
                columns.axes.clone(),
                columns.metrics.clone(),
                first.confidence,
                &shown,
            )
            .with_baseline(first.baseline.clone())
            .with_proportions(&first.proportions)
        });
        // Messages about a row name the shard file it is in, and its line there.
        s.set_source(&shown, 0);
        let mut unit = part.units.0;
        let mut values = vec![None; columns.metrics.len()];
        for record in reader.records() {
            let record = record.map_err(|e| refuse(&path, format!("{e}")))?;
            let line = unit - part.units.0 + 2;
            if unit >= part.units.1 {
                return Err(refuse(
                    &path,
                    format!(
                        "holds more rows than its units {}..{}",
                        part.units.0, part.units.1
                    ),
                ));
            }
            if record.len() != axes + 1 + at.len() {
                return Err(refuse(
                    &path,
                    format!("line {line}: wrong number of columns"),
                ));
            }
            let fields: Vec<String> = record.iter().map(String::from).collect();
            let rep = &fields[axes];
            if *rep != (unit / first.rows).to_string() {
                return Err(refuse(
                    &path,
                    format!(
                        "line {line}: replication {rep} where unit {unit} needs {}: the file is not in sweep order",
                        unit / first.rows
                    ),
                ));
            }
            values.iter_mut().for_each(|v| *v = None);
            for (i, t) in fields[axes + 1..].iter().enumerate() {
                let m = at[i];
                values[m] = parse_value(t).map_err(|_| {
                    refuse(
                        &path,
                        format!("line {line}: {}: `{t}` is not a number", columns.metrics[m]),
                    )
                })?;
            }
            s.push(&fields[..axes], rep, &values).map_err(as_input)?;
            unit += 1;
        }
        if unit != part.units.1 {
            return Err(refuse(
                &path,
                format!(
                    "shard {}/{} is incomplete: {} of its {} rows (was it interrupted? run it again)",
                    part.shard.index,
                    part.shard.count,
                    unit - part.units.0,
                    part.units.1 - part.units.0
                ),
            ));
        }
    }
    let Some(s) = summarizer else {
        return Err(ScenarioError::new("", "merge needs at least one shard folder").into());
    };
    s.finish().map_err(as_input)
}

/// The shards' `histograms.csv` added up, when their manifests say they have
/// one (folders of resim versions before it have none: no `pooled.csv` then).
fn pooled_counts(
    parts: &[Part],
    first: &Manifest,
    axis_columns: &[String],
    summary: &Summary,
) -> Result<Option<Pooled>, Error> {
    if first.histograms.is_empty() {
        return Ok(None);
    }
    if first.histograms != pooled::SCHEME {
        return Err(refuse(
            &parts[0].dir.join(super::manifest::FILE),
            format!(
                "histograms: `{}` is not a bucket scheme this resim knows (`{}`)",
                first.histograms,
                pooled::SCHEME
            ),
        ));
    }
    let axes = axis_columns.len();
    let labels: Vec<Vec<String>> = summary
        .wide
        .rows
        .iter()
        .map(|r| r[..axes].iter().map(crate::report::Cell::render).collect())
        .collect();
    let dirs: Vec<&Path> = parts.iter().map(|p| p.dir.as_path()).collect();
    Pooled::read_all(&dirs, axis_columns, &labels).map(Some)
}

/// A shard whose rows do not add up is bad input (exit 2), not a failure of resim.
fn as_input(e: Error) -> Error {
    match e {
        Error::Other(m) => ScenarioError::new("", m).into(),
        e => e,
    }
}
