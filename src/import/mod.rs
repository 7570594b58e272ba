//! `resim import`: a scenario from what a running system recorded.
//!
//! ```text
//! files -> read (one module per format, told by content) -> spans::SpanStore
//!       -> infer (trace by trace: tree, then accumulators) -> infer::System
//!       -> write (scenario TOML, data CSVs, report sections) -> report::ImportReport
//! ```
//!
//! The formats are the three JSON forms distributed traces are exported in:
//! OpenTelemetry's OTLP JSON ([`otlp`]), Jaeger's ([`jaeger`]) and Zipkin's v2
//! ([`zipkin`]); [`read`] tells them apart by their content and streams
//! through a file without holding it (a span is about 56 bytes once read).
//! What the traces say is in [`infer`], how it becomes a scenario in
//! [`write`], and every input, inference and repair goes into the
//! [`report::ImportReport`], which any other kind of import adds to the same
//! way.

pub mod config;
pub mod infer;
pub mod jaeger;
pub mod layout;
pub mod otlp;
pub mod read;
pub mod report;
pub mod spans;
pub mod tree;
pub mod write;
pub mod zipkin;

use crate::error::{Error, ScenarioError};
use std::path::{Path, PathBuf};

/// A format `resim import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// OpenTelemetry OTLP JSON.
    Otlp,
    /// Jaeger JSON.
    Jaeger,
    /// Zipkin v2 JSON.
    Zipkin,
    /// A gRPC service config (JSON).
    Grpc,
    /// An Envoy bootstrap or config dump (JSON or YAML).
    Envoy,
    /// Istio VirtualService and DestinationRule resources (YAML or JSON).
    Istio,
    /// A resilience4j configuration (Spring Boot YAML or JSON).
    Resilience4j,
}

impl Format {
    /// Its `--from` value.
    pub fn flag(self) -> &'static str {
        match self {
            Format::Otlp => "otlp",
            Format::Jaeger => "jaeger",
            Format::Zipkin => "zipkin",
            Format::Grpc => "grpc",
            Format::Envoy => "envoy",
            Format::Istio => "istio",
            Format::Resilience4j => "resilience4j",
        }
    }

    /// Its name in messages and the report.
    pub fn title(self) -> &'static str {
        match self {
            Format::Otlp => "OTLP JSON",
            Format::Jaeger => "Jaeger JSON",
            Format::Zipkin => "Zipkin v2 JSON",
            Format::Grpc => "gRPC service config",
            Format::Envoy => "Envoy configuration",
            Format::Istio => "Istio resources",
            Format::Resilience4j => "resilience4j configuration",
        }
    }

    /// A configuration (not traces)?
    pub fn is_config(self) -> bool {
        matches!(
            self,
            Format::Grpc | Format::Envoy | Format::Istio | Format::Resilience4j
        )
    }
}

/// How an imported scenario draws the tails of the values measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Tail {
    /// As measured.
    #[default]
    Empirical,
    /// Above the 0.9 quantile, from a fitted generalized Pareto tail.
    Fit,
}

/// The quantile above which `--tail fit` fits a tail.
pub const FIT_ABOVE: f64 = 0.9;

/// What `resim import` is asked to do.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The trace files.
    pub files: Vec<PathBuf>,
    /// The scenario to write (`.toml` added when missing).
    pub out: PathBuf,
    /// The format every file must have (`--from`); None: told by content.
    pub from: Option<Format>,
    /// The share of requests the traces hold (`--sample-rate`).
    pub sample_rate: Option<f64>,
    /// How the measured values' tails are drawn (`--tail`).
    pub tail: Tail,
    /// Replace a scenario (and its report and data) written before.
    pub force: bool,
    /// Choices where the real systems differ (configuration imports).
    pub choices: config::Choices,
}

/// What an import wrote.
#[derive(Debug)]
pub struct Imported {
    /// The report (its short form goes to stderr).
    pub report: report::ImportReport,
    /// The scenario file.
    pub scenario: PathBuf,
    /// The report file.
    pub report_file: PathBuf,
    /// The data folder (traces only: a configuration has no data).
    pub data_dir: Option<PathBuf>,
}

fn usage(message: String) -> Error {
    Error::from(ScenarioError::new("", message))
}

/// Reads the trace files, infers the system and writes the scenario, its
/// data files and its report (nothing is written when any step fails).
pub fn import(opts: &ImportOptions) -> Result<Imported, Error> {
    if let Some(r) = opts.sample_rate
        && !(r > 0.0 && r <= 1.0)
    {
        return Err(usage(format!(
            "--sample-rate: the share of requests the traces hold, above 0 and at most 1 (got {})",
            crate::error::num(r)
        )));
    }
    let scenario = if opts.out.extension().is_some_and(|e| e == "toml") {
        opts.out.clone()
    } else {
        let mut t = opts.out.as_os_str().to_owned();
        t.push(".toml");
        PathBuf::from(t)
    };
    let stem = scenario
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".into());
    let dir = scenario.parent().map(Path::to_path_buf).unwrap_or_default();
    let data_name = format!("{stem}-data");
    let data_dir = dir.join(&data_name);
    let report_file = dir.join(format!("{stem}.import.md"));
    if !opts.force {
        for p in [&scenario, &report_file] {
            if p.exists() {
                return Err(usage(format!(
                    "{} exists already: choose another --out, or give --force to replace it (with its report and data folder)",
                    p.display()
                )));
            }
        }
    }

    let configs = match opts.from {
        Some(f) => f.is_config(),
        None => {
            let sniffed: Vec<bool> = opts.files.iter().map(|f| config::sniff(f)).collect();
            if sniffed.iter().any(|c| *c) && !sniffed.iter().all(|c| *c) {
                let (c, t): (Vec<_>, Vec<_>) =
                    opts.files.iter().zip(&sniffed).partition(|(_, c)| **c);
                return Err(usage(format!(
                    "configuration files ({}) and trace files ({}) cannot be imported together: import each kind on its own",
                    c.iter()
                        .map(|(f, _)| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    t.iter()
                        .map(|(f, _)| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            sniffed.iter().all(|c| *c)
        }
    };
    if configs {
        if opts.sample_rate.is_some() {
            return Err(usage(
                "--sample-rate is for traces: a configuration file holds no requests to sample"
                    .into(),
            ));
        }
        if opts.tail == Tail::Fit {
            return Err(usage(
                "--tail is for traces: a configuration file holds no measured values".into(),
            ));
        }
        let (toml, report) = config::build(&opts.files, opts.from, opts.choices, &scenario)?;
        crate::scenario::load_str(&toml, &scenario, &crate::scenario::LoadOptions::default())
            .map_err(|e| {
                Error::Other(format!(
                    "the imported scenario does not load, which is a bug in resim import: {e}"
                ))
            })?;
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
                context: format!("cannot create {}", dir.display()),
                source: e,
                user_path: true,
            })?;
        }
        write_whole(&report_file, report.markdown().as_bytes())?;
        write_whole(&scenario, toml.as_bytes())?;
        return Ok(Imported {
            report,
            scenario,
            report_file,
            data_dir: None,
        });
    }

    let mut store = spans::SpanStore::default();
    let mut sources = Vec::new();
    let mut reads = Vec::new();
    for f in &opts.files {
        let r = read::read_file(f, opts.from, &mut store)?;
        sources.push(report::Source {
            file: f.display().to_string(),
            format: r.format.title().into(),
            bytes: r.bytes,
            read: format!("{} spans", r.spans),
            note: r
                .truncated
                .as_ref()
                .map(|at| format!("cut off at {at}: the spans before it are used")),
        });
        reads.push(r);
    }
    if store.spans.is_empty() {
        let skipped = &store.skipped;
        return Err(usage(format!(
            "{}: no span to import ({} without usable ids, {} without a start)",
            opts.files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            skipped.bad_ids,
            skipped.no_times
        )));
    }
    let traces = infer::gather(&store, opts.sample_rate);
    let probabilities = traces.probabilities();
    let (system, broken, counts) = layout::system(traces, &store.strings);
    if system.entries.is_empty() {
        return Err(usage(format!(
            "{}: no request arrives in these traces: no span is a root or a server or consumer span whose parent is outside the file ({} orphans, whose parents are missing), so there is no entry point to send requests to",
            opts.files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            broken.orphans
        )));
    }
    let inputs = opts
        .files
        .iter()
        .map(|f| {
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(", ");
    let cx = write::Context {
        strings: &store.strings,
        stem: &stem,
        data_dir: &data_name,
        inputs: &inputs,
        traces: counts.traces,
        spans: counts.spans,
        sample_rate: opts.sample_rate,
        tail: opts.tail,
    };
    let written = write::write(&system, &cx);

    let mut report = report::ImportReport {
        scenario: scenario.display().to_string(),
        sources,
        ..Default::default()
    };
    report.summary.push(format!(
        "{} traces, {} spans: {} handling spans, {} calls, {} arrivals{}",
        counts.traces,
        counts.spans,
        counts.handling,
        counts.calls,
        counts.arrivals,
        if counts.entered > 0 {
            format!(
                " ({} at server or consumer spans whose parent is not in the file: requests entered there)",
                counts.entered
            )
        } else {
            String::new()
        }
    ));
    report.summary.extend(written.summary.iter().cloned());
    report.warnings = broken_warnings(&store.skipped, &broken, &counts, &reads);
    if opts.sample_rate.is_none() {
        match probabilities.as_slice() {
            [] => report.warnings.push(
                "no trace says how it was sampled: each stands for one request (give --sample-rate R if only a share R of the requests was traced)".into(),
            ),
            ps => {
                let said: Vec<String> = ps
                    .iter()
                    .map(|(p, n)| format!("{} ({n} traces)", crate::error::num(*p)))
                    .collect();
                let unsaid = counts.traces - counts.sampled_traces;
                report.summary.push(format!(
                    "sampling probabilities the traces say: {}{}",
                    said.join(", "),
                    if unsaid > 0 {
                        format!("; {unsaid} traces say none (each stands for one request)")
                    } else {
                        String::new()
                    }
                ));
            }
        }
    }
    report.warnings.extend(written.warnings.iter().cloned());
    report
        .sections
        .push(broken_section(&store.skipped, &broken, &counts));
    report.sections.extend(written.sections);

    // the data first, then the scenario that reads it must load
    let files = written
        .files
        .into_iter()
        .map(|(n, b)| (n, crate::report::Content::Bytes(b)))
        .collect();
    crate::report::Folder::open(&data_dir, &[])?.replace(files)?;
    crate::scenario::load_str(
        &written.toml,
        &scenario,
        &crate::scenario::LoadOptions::default(),
    )
    .map_err(|e| {
        Error::Other(format!(
            "the imported scenario does not load, which is a bug in resim import: {e}"
        ))
    })?;
    write_whole(&report_file, report.markdown().as_bytes())?;
    write_whole(&scenario, written.toml.as_bytes())?;
    Ok(Imported {
        report,
        scenario,
        report_file,
        data_dir: Some(data_dir),
    })
}

/// Writes `bytes` to `path` whole or not at all (a temporary beside it,
/// renamed over it).
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let io = |e: std::io::Error| Error::Io {
        context: format!("cannot write {}", path.display()),
        source: e,
        user_path: true,
    };
    std::fs::write(&tmp, bytes).map_err(|e| {
        // a full disk: no half-written temporary left behind
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

/// The warnings of what was broken in the traces.
fn broken_warnings(
    skipped: &spans::Skipped,
    b: &tree::Broken,
    c: &infer::Counts,
    reads: &[read::FileRead],
) -> Vec<String> {
    let mut w = Vec::new();
    for r in reads {
        if let Some(at) = &r.truncated {
            w.push(format!(
                "{} is cut off at {at}: the {} spans before it are used, the rest is lost",
                r.path.display(),
                r.spans
            ));
        }
    }
    let lines: [(u64, &str); 14] = [
        (
            skipped.bad_ids,
            "spans without a usable trace or span id were left out",
        ),
        (
            skipped.no_times,
            "spans without a start were left out",
        ),
        (
            skipped.no_end,
            "spans have no end and no duration: kept in place (with the spans below them; each ends with the last of those), no time measured from them",
        ),
        (
            skipped.negative,
            "spans ended before they started: their end was set to their start",
        ),
        (
            b.duplicates,
            "spans repeat another span's id in their trace: left out",
        ),
        (
            b.unknown_service,
            "spans name no service: left out, their children hung under the span above",
        ),
        (
            b.orphans,
            "spans name a parent that is not in their trace (orphans): kept; those of a server or consumer are arrivals (requests entered there), the others are not",
        ),
        (
            b.cycles,
            "parent links loop: cut at the span where the loop closes (that span is no arrival)",
        ),
        (
            b.skew,
            "spans of another service started outside their parent (clock skew): moved into it, with everything below them",
        ),
        (
            c.unowned_calls,
            "client spans have no handling span of their service above them: their calls are not counted",
        ),
        (
            c.named_for_callee,
            "client spans name another service than the handling span above them: calls of that span to the service they name (as Zipkin's dependency linker takes them)",
        ),
        (
            c.unnamed_callees,
            "client spans have no callee below them and name none (peer.service, server.address, db.system...): the callee is named after the span",
        ),
        (
            c.outside_repeats,
            "root client spans had more than one handling span below them: the first is the arrival, the others (a client's retries) are not modelled",
        ),
        (
            c.unowned_handling,
            "handling spans sit under a span whose service has no handling span above it: their caller is unknown, no call is counted",
        ),
    ];
    for (n, what) in lines {
        if n > 0 {
            w.push(format!("{n} {what}"));
        }
    }
    w
}

/// The report's section on broken traces: every count, zero or not.
fn broken_section(
    skipped: &spans::Skipped,
    b: &tree::Broken,
    c: &infer::Counts,
) -> report::Section {
    let mut t = report::Table::new(&["what", "count", "what resim import did"]);
    let rows: [(&str, u64, &str); 15] = [
        ("traces", c.traces, "read"),
        ("spans in traces", c.spans, "used"),
        ("spans without usable ids", skipped.bad_ids, "left out"),
        ("spans without a start", skipped.no_times, "left out"),
        (
            "spans without an end or a duration",
            skipped.no_end,
            "kept in place; no time measured from them",
        ),
        (
            "spans ending before they start",
            skipped.negative,
            "end set to the start",
        ),
        ("duplicate span ids", b.duplicates, "left out"),
        (
            "spans of no known service",
            b.unknown_service,
            "left out; children hung under the span above",
        ),
        (
            "orphans (parent missing)",
            b.orphans,
            "kept; a server or consumer span is an arrival, others not",
        ),
        ("parent cycles", b.cycles, "cut"),
        ("clock-skew repairs", b.skew, "moved into the parent"),
        (
            "spans ending after their parent",
            b.outlived,
            "kept (a caller that gave up, or did not wait)",
        ),
        (
            "client spans with no handling span of their service above",
            c.unowned_calls,
            "their calls not counted",
        ),
        (
            "client spans naming no callee",
            c.unnamed_callees,
            "callee named after the span",
        ),
        (
            "client spans named for their callee",
            c.named_for_callee,
            "a call of the handling span above to it",
        ),
    ];
    for (what, n, did) in rows {
        t.push(vec![what.into(), n.to_string(), did.into()]);
    }
    report::Section {
        heading: "Broken traces".into(),
        text: vec!["What was wrong in the traces, and what was done about it; nothing is dropped without a count here.".into()],
        table: Some(t),
    }
}
