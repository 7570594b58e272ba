//! `resim import`: a scenario from what a running system recorded.
//!
//! ```text
//! files -> read (one module per format, told by content) -> spans::SpanStore
//!       -> infer (trace by trace: tree, then accumulators) -> infer::Traces
//!       -> layout (graph, plans, rates) -> layout::System
//!       -> write (scenario TOML, data CSVs, report sections) -> report::ImportReport
//! ```
//!
//! The formats are the three JSON forms distributed traces are exported in:
//! OpenTelemetry's OTLP JSON (`otlp`), Jaeger's (`jaeger`) and Zipkin's v2
//! (`zipkin`); `read` tells them apart by their content and streams
//! through a file without holding it (a span is about 56 bytes once read).
//! What the traces say is in `infer`, how it is laid out in `layout`, how
//! it becomes a scenario in `write`, and every input, inference and repair goes into the
//! [`report::ImportReport`], which any other kind of import adds to the same
//! way.

pub mod config;
mod infer;
mod jaeger;
pub(crate) mod json_keys;
mod layout;
mod otlp;
mod read;
pub mod report;
mod spans;
mod stream;
mod tree;
mod write;
mod zipkin;

use crate::error::{Error, ScenarioError};
use crate::report::target::shown;
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
    /// Its `--from` value, and its name in messages and the report.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Format::Otlp => ("otlp", "OTLP JSON"),
            Format::Jaeger => ("jaeger", "Jaeger JSON"),
            Format::Zipkin => ("zipkin", "Zipkin v2 JSON"),
            Format::Grpc => ("grpc", "gRPC service config"),
            Format::Envoy => ("envoy", "Envoy configuration"),
            Format::Istio => ("istio", "Istio resources"),
            Format::Resilience4j => ("resilience4j", "resilience4j configuration"),
        }
    }

    /// Its `--from` value.
    pub fn flag(self) -> &'static str {
        self.names().0
    }

    /// Its name in messages and the report.
    pub fn title(self) -> &'static str {
        self.names().1
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

/// Reads the files, infers the system and writes the scenario, its data
/// files and its report (nothing is written when any step fails).
pub fn import(opts: &ImportOptions) -> Result<Imported, Error> {
    if let Some(r) = opts.sample_rate
        && !(r > 0.0 && r <= 1.0)
    {
        let r = crate::error::num(r);
        return Err(usage(format!(
            "--sample-rate: the share of requests the traces hold, above 0 and at most 1 (got {r})"
        )));
    }
    crate::report::target::check_file_name("--out", &opts.out)?;
    let scenario = if opts.out.extension().is_some_and(|e| e == "toml") {
        opts.out.clone()
    } else {
        let mut t = opts.out.as_os_str().to_owned();
        t.push(".toml");
        PathBuf::from(t)
    };
    let stem = scenario
        .file_stem()
        .map_or("imported".into(), |s| s.to_string_lossy().into_owned());
    let dir = scenario.parent().map(Path::to_path_buf).unwrap_or_default();
    let report_file = dir.join(format!("{stem}.import.md"));
    let shown = |files: &mut dyn Iterator<Item = &PathBuf>| {
        files
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let configs = match opts.from {
        Some(f) => f.is_config(),
        None => {
            let sniffed: Vec<bool> = opts.files.iter().map(|f| config::sniff(f)).collect();
            if sniffed.iter().any(|c| *c) && !sniffed.iter().all(|c| *c) {
                let kind = |c: bool| {
                    shown(
                        &mut opts
                            .files
                            .iter()
                            .zip(&sniffed)
                            .filter(|f| *f.1 == c)
                            .map(|f| f.0),
                    )
                };
                return Err(usage(format!(
                    "configuration files ({}) and trace files ({}) cannot be imported together: import each kind on its own",
                    kind(true),
                    kind(false)
                )));
            }
            sniffed.iter().all(|c| *c)
        }
    };
    let data_dir = dir.join(format!("{stem}-data"));
    check_replaced(
        opts,
        &scenario,
        &report_file,
        (!configs).then_some(&*data_dir),
    )?;
    if !configs {
        return traces(opts, scenario, report_file, &stem);
    }
    if opts.sample_rate.is_some() {
        return Err(usage(
            "--sample-rate is for traces: a configuration file holds no requests to sample".into(),
        ));
    }
    if opts.tail == Tail::Fit {
        return Err(usage(
            "--tail is for traces: a configuration file holds no measured values".into(),
        ));
    }
    let (toml, mut report) = config::build(&opts.files, opts.from, opts.choices, &scenario)?;
    let loaded = loads(&toml, &scenario)?;
    // what `resim check` would warn of: settings that do not do what they
    // seem to (a per-try timeout never retried, as the proxy runs it)
    report.warnings.extend(
        crate::scenario::warnings(&loaded)
            .into_iter()
            .map(|w| format!("the scenario: {w}")),
    );
    if !dir.as_os_str().is_empty() {
        std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
            context: format!("cannot create {}", dir.display()),
            source: e,
            user_path: true,
        })?;
    }
    write_out(&report_file, report.markdown().as_bytes())?;
    write_out(&scenario, toml.as_bytes())?;
    Ok(Imported {
        report,
        scenario,
        report_file,
        data_dir: None,
    })
}

/// What an import writes (the scenario, its report, its data folder) replaces
/// nothing written before without `--force`: a data folder of the same name
/// counts too, though no scenario reads it (files of the user's may be in it).
/// Even with `--force`, a folder where a file goes, or a file or link where
/// the data folder goes, is refused: resim import replaces what it wrote, no
/// more.
fn check_replaced(
    opts: &ImportOptions,
    scenario: &Path,
    report_file: &Path,
    data: Option<&Path>,
) -> Result<(), Error> {
    for file in [scenario, report_file] {
        if file.is_dir() {
            return Err(usage(format!(
                "--out {}: {} is a folder; choose another --out",
                shown(&opts.out),
                shown(file)
            )));
        }
        // a broken link, before anything is written
        crate::report::target::target("--out", file)?;
    }
    if let Some(data) = data
        && std::fs::symlink_metadata(data).is_ok_and(|m| !m.is_dir())
    {
        return Err(usage(format!(
            "--out {}: {} (where the data folder goes) is not a folder; choose another --out",
            shown(&opts.out),
            shown(data)
        )));
    }
    if let Some(p) = [Some(scenario), Some(report_file), data]
        .into_iter()
        .flatten()
        .find(|p| !opts.force && std::fs::symlink_metadata(p).is_ok())
    {
        return Err(usage(format!(
            "{} exists already: choose another --out, or give --force to replace it (with its report and data folder)",
            shown(p)
        )));
    }
    Ok(())
}

/// Writes a file of the import as [`crate::report::target`] says: a link
/// replaces the file it points to, a pipe or a device is written into.
fn write_out(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    crate::report::target::write(&crate::report::target::target("--out", path)?, bytes)
}

/// The imported scenario must load: anything else is a bug of the import.
fn loads(toml: &str, scenario: &Path) -> Result<crate::scenario::Scenario, Error> {
    crate::scenario::load_str(toml, scenario, &crate::scenario::LoadOptions::default()).map_err(
        |e| {
            Error::Other(format!(
                "the imported scenario does not load, which is a bug in resim import: {e}"
            ))
        },
    )
}

/// The trace import: read, infer, lay out, write.
fn traces(
    opts: &ImportOptions,
    scenario: PathBuf,
    report_file: PathBuf,
    stem: &str,
) -> Result<Imported, Error> {
    let files = || {
        opts.files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut store = spans::SpanStore::default();
    let mut report = report::ImportReport {
        scenario: scenario.display().to_string(),
        ..Default::default()
    };
    let cut = read_all(opts, &mut store, &mut report)?;
    if store.spans.is_empty() {
        let s = &store.skipped;
        return Err(usage(format!(
            "{}: no span to import ({} without usable ids, {} without a start)",
            files(),
            s.bad_ids,
            s.no_times
        )));
    }
    let traces = infer::gather(&store, opts.sample_rate);
    let probabilities = traces.probabilities();
    let (system, broken, c) = layout::system(traces, &store.strings);
    if system.entries.is_empty() {
        return Err(usage(format!(
            "{}: no request arrives in these traces: no span is a root or a server or consumer span whose parent is outside the file ({} orphans, whose parents are missing), so there is no entry point to send requests to",
            files(),
            broken.orphans
        )));
    }
    too_many_requests(&system, &store.strings, opts.sample_rate, &files())?;
    too_wide_or_deep(&system, &store.strings, &files())?;
    let inputs: Vec<String> = opts
        .files
        .iter()
        .filter_map(|f| f.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    let data_name = format!("{stem}-data");
    let cx = write::Context {
        strings: &store.strings,
        stem,
        data_dir: &data_name,
        inputs: &inputs.join(", "),
        traces: c.traces,
        spans: c.spans,
        sample_rate: opts.sample_rate,
        tail: opts.tail,
    };
    let written = write::write(&system, &cx);
    let entered = match c.entered {
        0 => String::new(),
        n => format!(
            " ({n} at server or consumer spans whose parent is not in the file: requests entered there)"
        ),
    };
    report.summary.push(format!(
        "{} traces, {} spans: {} handling spans, {} calls, {} arrivals{entered}",
        c.traces, c.spans, c.handling, c.calls, c.arrivals
    ));
    report.summary.extend(written.summary);
    let (warnings, section) = broken_traces(&store.skipped, &broken, &c);
    report.warnings = cut.into_iter().chain(warnings).collect();
    if opts.sample_rate.is_none() {
        sampling(&probabilities, c.traces - c.sampled_traces, &mut report);
    }
    report.warnings.extend(written.warnings);
    report.sections.push(section);
    report.sections.extend(written.sections);
    // the data first, then the scenario that reads it must load
    let data_dir = scenario
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join(&data_name);
    let data = written
        .files
        .into_iter()
        .map(|(n, b)| (n, crate::report::Content::Bytes(b)))
        .collect();
    crate::report::Folder::open(&data_dir, &[])?.replace(data)?;
    loads(&written.toml, &scenario)?;
    write_out(&report_file, report.markdown().as_bytes())?;
    write_out(&scenario, written.toml.as_bytes())?;
    Ok(Imported {
        report,
        scenario,
        report_file,
        data_dir: Some(data_dir),
    })
}

/// A call graph a scenario cannot hold: a service that makes more distinct
/// calls than its plan is laid out from, or calls nested deeper than a
/// scenario may nest.
fn too_wide_or_deep(
    system: &layout::System,
    strings: &spans::Interner,
    files: &str,
) -> Result<(), Error> {
    if let Some((s, n)) = system.too_wide {
        return Err(usage(format!(
            "{}: {} makes {n} distinct calls in the traces (callees, and the first, second... call to each), more than the {} one service's plan is laid out from (their order is inferred pair by pair): import traces of fewer callees",
            files,
            strings.name(s),
            layout::MAX_PLAN_CALLS
        )));
    }
    if let Some(chain) = &system.too_deep {
        let name = |s: &spans::Sym| strings.name(*s);
        return Err(usage(format!(
            "{}: calls in the traces nest {} services deep ({} -> {} -> ... -> {}), more than the {} a scenario may nest (a run follows an answer or a cancellation one nested step per service): import fewer or shorter traces",
            files,
            chain.len(),
            name(&chain[0]),
            name(&chain[1]),
            name(&chain[chain.len() - 1]),
            crate::scenario::validate::MAX_CALL_DEPTH
        )));
    }
    Ok(())
}

/// The workloads must send no more requests than a run may hold: a tiny
/// `--sample-rate` (or sampling probability a trace says) makes each traced
/// arrival stand for astronomically many.
fn too_many_requests(
    system: &layout::System,
    strings: &spans::Interner,
    sample_rate: Option<f64>,
    files: &str,
) -> Result<(), Error> {
    let max = crate::scenario::validate::DEFAULT_MAX_EVENTS as f64;
    let seconds = system.interval_ns as f64 / 1e9;
    for e in &system.entries {
        let Some(rate) = e.rate_rps else { continue };
        // the loader multiplies the rate and duration as written (six
        // significant digits each)
        let requests = rate * seconds * (1.0 + 1e-5);
        if requests <= max {
            continue;
        }
        let num = crate::error::num;
        let (cause, fix) = match sample_rate {
            Some(r) => (
                format!("--sample-rate {}", num(r)),
                "give the share of requests the traces really hold",
            ),
            None => (
                format!("{files}: the sampling probabilities the traces say"),
                "give --sample-rate R (the share of requests the traces hold) to override them",
            ),
        };
        return Err(usage(format!(
            "{cause}: the {} arrivals at {} {} stand for {} requests over the traced {} ms ({} rps), more than the {} a run may send (scenario.max_events): {fix}",
            e.arrivals,
            strings.name(e.service),
            strings.name(e.route),
            num(requests),
            num(system.interval_ns as f64 / 1e6),
            num(rate),
            num(max)
        )));
    }
    Ok(())
}

/// Reads every file into `store`, each a source of `report`; the warnings of
/// those cut off.
fn read_all(
    opts: &ImportOptions,
    store: &mut spans::SpanStore,
    report: &mut report::ImportReport,
) -> Result<Vec<String>, Error> {
    let mut cut = Vec::new();
    for f in &opts.files {
        let r = read::read_file(f, opts.from, store)?;
        if let Some(at) = &r.truncated {
            cut.push(format!(
                "{} is cut off at {at}: the {} spans before it are used, the rest is lost",
                f.display(),
                r.spans
            ));
        }
        report.sources.push(report::Source {
            file: f.display().to_string(),
            format: r.format.title().into(),
            bytes: r.bytes,
            read: format!("{} spans", r.spans),
            note: r
                .truncated
                .map(|at| format!("cut off at {at}: the spans before it are used")),
        });
    }
    Ok(cut)
}

/// What the traces said of their sampling (`unsaid`: traces that said none).
fn sampling(probabilities: &[(f64, u64)], unsaid: u64, report: &mut report::ImportReport) {
    if probabilities.is_empty() {
        return report.warnings.push("no trace says how it was sampled: each stands for one request (give --sample-rate R if only a share R of the requests was traced)".into());
    }
    let said: Vec<String> = probabilities
        .iter()
        .map(|(p, n)| format!("{} ({n} traces)", crate::error::num(*p)))
        .collect();
    let unsaid = match unsaid {
        0 => String::new(),
        n => format!("; {n} traces say none (each stands for one request)"),
    };
    report.summary.push(format!(
        "sampling probabilities the traces say: {}{unsaid}",
        said.join(", ")
    ));
}

/// The broken-trace rows: what, what resim import did, and the warning when
/// the count (in the order of [`broken_traces`]'s) is above 0 (none: no
/// warning).
const BROKEN: &str = "\
traces|read|
spans in traces|used|
spans without usable ids|left out|spans without a usable trace or span id were left out
spans without a start|left out|spans without a start were left out
spans without an end or a duration|kept in place; no time measured from them|spans have no end and no duration: kept in place (with the spans below them; each ends with the last of those), no time measured from them
spans ending before they start|end set to the start|spans ended before they started: their end was set to their start
duplicate span ids|left out|spans repeat another span's id in their trace: left out
spans of no known service|left out; children hung under the span above|spans name no service: left out, their children hung under the span above
orphans (parent missing)|kept; a server or consumer span is an arrival, others not|spans name a parent that is not in their trace (orphans): kept; those of a server or consumer are arrivals (requests entered there), the others are not
parent cycles|cut|parent links loop: cut at the span where the loop closes (that span is no arrival)
clock-skew repairs|moved into the parent|spans of another service started outside their parent (clock skew): moved into it, with everything below them
spans ending after their parent|kept (a caller that gave up, or did not wait)|
client spans with no handling span of their service above|their calls not counted|client spans have no handling span of their service above them: their calls are not counted
client spans named for their callee|a call of the handling span above to it|client spans name another service than the handling span above them: calls of that span to the service they name (as Zipkin's dependency linker takes them)
client spans naming no callee|callee named after the span|client spans have no callee below them and name none (peer.service, server.address, db.system...): the callee is named after the span
root client spans with more than one handling span below|the first is the arrival|root client spans had more than one handling span below them: the first is the arrival, the others (a client's retries) are not modelled
handling spans under a span of a service with none above|no call counted|handling spans sit under a span whose service has no handling span above it: their caller is unknown, no call is counted
asynchronous calls (messages, FOLLOWS_FROM, links)|workloads of their own|";

/// What was broken in the traces: a warning for each count above 0, and the
/// report's section with every count, zero or not.
fn broken_traces(
    s: &spans::Skipped,
    b: &tree::Broken,
    c: &infer::Counts,
) -> (Vec<String>, report::Section) {
    let counts = [
        c.traces,
        c.spans,
        s.bad_ids,
        s.no_times,
        s.no_end,
        s.negative,
        b.duplicates,
        b.unknown_service,
        b.orphans,
        b.cycles,
        b.skew,
        b.outlived,
        c.unowned_calls,
        c.named_for_callee,
        c.unnamed_callees,
        c.outside_repeats,
        c.unowned_handling,
        c.async_calls,
    ];
    let mut t = report::Table::of("what|count|what resim import did");
    let mut warnings = Vec::new();
    for (n, line) in counts.into_iter().zip(BROKEN.lines()) {
        let mut cells = line.split('|');
        let (what, did, warning) = (cells.next(), cells.next(), cells.next().unwrap_or(""));
        t.push(vec![
            what.unwrap_or("").into(),
            n.to_string(),
            did.unwrap_or("").into(),
        ]);
        if n > 0 && !warning.is_empty() {
            warnings.push(format!("{n} {warning}"));
        }
    }
    let text = "What was wrong in the traces, and what was done about it; nothing is dropped without a count here.";
    (
        warnings,
        report::Section {
            heading: "Broken traces".into(),
            text: vec![text.into()],
            table: Some(t),
        },
    )
}
