//! resim: a discrete-event simulator for the resilience patterns that protect
//! service chains: deadline budgets, cancellation, rate limiters, service slots with
//! bounded queues, and load ladders.
//!
//! Data flows one way, one module per arrow:
//!
//! ```text
//! scenario file -> scenario::raw -> scenario::validate -> model
//!              -> sim (on engine) -> metrics -> analysis -> report (text + CSV)
//! ```
//!
//! `format` (how numbers are written) and `table` (the tables analysis fills and
//! report writes) sit beside them, used by every layer.
//!
//! `sweep` runs every compare row over many seeded replications (in parallel, or
//! sharded across machines) and summarizes the report tables' figures.
//!
//! Imports go one way: a module uses only the ones below it in `kinds` < `model` <
//! `scenario` < `metrics` < `sim` < `traces` < `analysis` < `report` <
//! `thresholds` < this file's run functions < `sweep` < `boundary` < `import` <
//! `cli` (and the leaves `engine`, `error`, `format`, `memory`, `progress`,
//! `table`). Validation builds the model, so `model` comes before `scenario`;
//! `report` renders view structs the owners of the data fill in.

#![warn(missing_docs)]

pub(crate) mod analysis;
pub(crate) mod boundary;
pub mod cli;
pub mod engine;
pub mod error;
pub(crate) mod format;
pub mod import;
pub mod kinds;
pub mod memory;
pub mod metrics;
pub mod model;
pub(crate) mod progress;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub(crate) mod table;
pub(crate) mod thresholds;
pub mod traces;
pub(crate) mod tune;

use error::Error;
use rayon::prelude::*;
use report::Table;
use scenario::Scenario;

/// Runs every compare row of `scenario` (in parallel; results keep row order) and
/// returns its report tables.
pub fn run_scenario(scenario: &Scenario) -> Result<Vec<Table>, Error> {
    Ok(run_scenario_output(scenario, false)?.tables)
}

/// What `resim run` makes of one scenario.
pub struct RunOutput {
    /// The report tables, printed and written as CSV.
    pub tables: Vec<Table>,
    /// Tables behind charts, written as CSV and drawn, not printed (`latency_cdf`).
    pub chart_tables: Vec<Table>,
    /// The run of each compare row, in row order.
    pub runs: Vec<sim::RunResult>,
    /// What the user should know of the output (printed on stderr as warnings):
    /// a trace that stopped at its limit.
    pub warnings: Vec<String>,
}

impl RunOutput {
    /// Every table, in the order the files and the JSON document list them.
    pub fn all_tables(&self) -> impl Iterator<Item = &Table> {
        self.tables.iter().chain(&self.chart_tables)
    }
}

/// Runs every compare row of `scenario` and returns its tables and runs, with a
/// bar on stderr (compare rows done) when `progress` and the run takes more than a
/// second.
pub fn run_scenario_output(scenario: &Scenario, progress: bool) -> Result<RunOutput, Error> {
    Ok(run_scenario_traced(scenario, progress, None, DrawAhead::Off)?.0)
}

/// Whether a run's random streams are drawn ahead on a spare core
/// (`resim run --draw-ahead`). The results are the same whichever is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DrawAhead {
    /// When every compare row running at once can have a core of its own for
    /// its helper: twice the rows running at once fit in the cores.
    #[default]
    Auto,
    /// Always (each compare row gets a helper thread).
    On,
    /// Never: every draw is made where it is used.
    Off,
}

impl DrawAhead {
    /// Whether `rows` compare rows, run in parallel on the thread pool, draw ahead.
    fn for_rows(self, rows: usize) -> bool {
        match self {
            DrawAhead::On => true,
            DrawAhead::Off => false,
            DrawAhead::Auto => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                2 * rows.min(rayon::current_num_threads()) <= cores
            }
        }
    }
}

/// [`run_scenario_output`], and with `trace = Some(n)` the life of the first `n`
/// requests of each compare row as `trace.json` bytes (one process per row);
/// `draw_ahead` says whether the rows draw their random streams ahead on spare
/// cores (the same results either way).
pub fn run_scenario_traced(
    scenario: &Scenario,
    progress: bool,
    trace: Option<u32>,
    draw_ahead: DrawAhead,
) -> Result<(RunOutput, Option<Vec<u8>>), Error> {
    let record = Record { trace, spans: None };
    let (output, trace_file, _) = run_scenario_recorded(scenario, progress, record, draw_ahead)?;
    Ok((output, trace_file))
}

/// What a run records of its requests besides its tables.
#[derive(Debug, Clone, Copy, Default)]
pub struct Record {
    /// `--trace N`: the first N requests of each compare row, as `trace.json`.
    pub trace: Option<u32>,
    /// `--spans` with `--spans-sample R` (1 without it): that share of every
    /// request, as OTLP JSON.
    pub spans: Option<f64>,
}

/// What [`run_scenario_recorded`] gives: the run's output, `trace.json`'s
/// bytes (with `--trace`) and one OTLP JSON file's bytes per compare row (with
/// `--spans`).
pub type Recorded = (RunOutput, Option<Vec<u8>>, Vec<Vec<u8>>);

/// What `--spans` left out at its limit ([`sim::trace::MAX_SPAN_EVENTS`]), one
/// warning per compare row that reached it.
fn spans_warnings(scenario: &Scenario, traces: &[Option<sim::trace::Trace>]) -> Vec<String> {
    let columns = scenario.columns();
    let rows = scenario.rows.len();
    let mut out = Vec::new();
    for (i, (row, t)) in scenario.rows.iter().zip(traces).enumerate() {
        let Some(t) = t.as_ref().filter(|t| t.spans_left_out > 0) else {
            continue;
        };
        let (who, share) = if rows == 1 {
            ("the run".to_string(), String::new())
        } else {
            (
                row_label(i, &columns, &row.labels),
                format!(", this row's share of {}", sim::trace::MAX_SPAN_EVENTS),
            )
        };
        out.push(format!(
            "{}: --spans: {who} wrote the spans of its first {} sampled requests only and left out {} more: their spans reached the limit of --spans ({}{share}); --spans-sample R writes a share of all the requests",
            scenario.file.display(),
            t.selected.iter().filter(|s| s.spans).count(),
            t.spans_left_out,
            (sim::trace::MAX_SPAN_EVENTS / rows.max(1) as u64).max(1),
        ));
    }
    out
}

/// [`run_scenario_traced`], and with `record.spans = Some(r)` a share r of
/// every request of each compare row as OTLP JSON bytes (one file per row,
/// in row order).
pub fn run_scenario_recorded(
    scenario: &Scenario,
    progress: bool,
    record: Record,
    draw_ahead: DrawAhead,
) -> Result<Recorded, Error> {
    let trace = record.trace;
    let recorded = record.trace.is_some() || record.spans.is_some();
    let select = sim::trace::Selection {
        first: record.trace.unwrap_or(0),
        sample: record.spans,
        max_spans: (sim::trace::MAX_SPAN_EVENTS / scenario.rows.len().max(1) as u64).max(1),
    };
    let ahead = draw_ahead.for_rows(scenario.rows.len());
    // trace.json's spans, shared evenly by the compare rows
    let trace_share = (sim::trace::MAX_TRACE_EVENTS / scenario.rows.len().max(1) as u64).max(1);
    let bar = progress::Delayed::new(
        scenario.rows.len() as u64,
        progress,
        &format!(
            "{{spinner}} {} {{elapsed_precise}} [{{wide_bar}}] {{pos}}/{{len}} compare rows ({{steady_eta}})",
            scenario.stem()
        ),
    );
    let runs = scenario
        .rows
        .par_iter()
        .map(|row| {
            let run = if recorded {
                sim::run_recorded(&row.model, 0, select, trace_share, ahead)
                    .map(|(r, t)| (r, Some(t)))
            } else {
                sim::run_with(&row.model, 0, ahead).map(|r| (r, None))
            };
            bar.inc(1);
            run.map_err(|e| in_row(e, scenario, row))
        })
        .collect::<Result<Vec<_>, Error>>();
    bar.finish();
    let (runs, traces): (Vec<_>, Vec<_>) = runs?.into_iter().unzip();
    let span_files: Vec<Vec<u8>> = match record.spans {
        None => Vec::new(),
        Some(r) => traces
            .iter()
            .enumerate()
            .map(|(i, t)| match t {
                Some(t) => traces::otlp::render(t, i, r),
                None => Vec::new(),
            })
            .collect(),
    };
    let mut warnings = spans_warnings(scenario, &traces);
    if let Some(n) = trace {
        warnings.extend(trace_warnings(scenario, n, &traces));
    }
    let trace_file = match trace {
        None => None,
        Some(_) => {
            let columns = scenario.columns();
            let rows: Vec<(String, sim::trace::Trace)> = scenario
                .rows
                .iter()
                .zip(traces)
                .enumerate()
                .map(|(i, (row, t))| (row_label(i, &columns, &row.labels), t.unwrap_or_default()))
                .collect();
            Some(traces::chrome::render(&rows)?)
        }
    };
    let mut results = analysis::Results::new(scenario, runs);
    analysis::select_ahead(&mut results);
    let tables = analysis::analyse(&mut results);
    let chart_tables = analysis::chart_tables(&mut results);
    // the CSV files hold an empty cell for such a figure and no note: say so
    // whatever the report shows
    for t in tables.iter().chain(&chart_tables) {
        if let Some(note) = t.overflow_note() {
            warnings.push(format!(
                "{}: {}.csv: {note}",
                scenario.file.display(),
                t.name
            ));
        }
    }
    let output = RunOutput {
        tables,
        chart_tables,
        runs: results.runs,
        warnings,
    };
    Ok((output, trace_file, span_files))
}

/// `--trace N`: a warning per compare row whose trace stopped at the limit
/// of trace.json before its first N requests were traced.
fn trace_warnings(
    scenario: &Scenario,
    n: u32,
    traces: &[Option<sim::trace::Trace>],
) -> Vec<String> {
    let mut out = Vec::new();
    let columns = scenario.columns();
    for (i, (row, t)) in scenario.rows.iter().zip(traces).enumerate() {
        if let Some(t) = t.as_ref().filter(|t| t.stopped) {
            let (who, share) = if scenario.rows.len() == 1 {
                ("the run".to_string(), String::new())
            } else {
                (
                    row_label(i, &columns, &row.labels),
                    format!(", its share of {}", sim::trace::MAX_TRACE_EVENTS),
                )
            };
            out.push(format!(
                "{}: --trace {n}: {who} traced the first {} requests only: their spans and instants reached the limit of trace.json ({}{share})",
                scenario.file.display(),
                t.tracks.len(),
                t.max_events,
            ));
        }
    }
    out
}

/// A compare row's name in the trace: `row 2: variant = slow, cancellation = true`.
fn row_label(i: usize, columns: &[String], labels: &[String]) -> String {
    let cells: Vec<String> = columns
        .iter()
        .zip(labels)
        .map(|(c, l)| format!("{c} = {l}"))
        .collect();
    if cells.is_empty() {
        format!("row {}", i + 1)
    } else {
        format!("row {}: {}", i + 1, cells.join(", "))
    }
}

/// Faults that start after their run's last request left: they never acted
/// (a warning, not an error: a compare row may move the fault on purpose).
pub fn fault_warnings(scenario: &Scenario, runs: &[sim::RunResult]) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (row, run) in scenario.rows.iter().zip(runs) {
        for (i, f) in row.model.faults.iter().enumerate() {
            let at = f.at.as_ms();
            if at > run.last_exit_ms {
                let line = format!(
                    "{}: faults.{i} starts at {} ms, after the run's last request left ({} ms): it never acts, \
                     and its row of recovery.csv has nothing to judge; start it earlier (faults.{i}.at_ms) \
                     or make the workload run longer (its duration_ms or requests)",
                    scenario.file.display(),
                    format::format_number(at),
                    format::format_number(run.last_exit_ms)
                );
                if seen.insert(line.clone()) {
                    out.push(line);
                }
            }
        }
    }
    out
}

/// Names the file (and the compare row) in a runaway-limit error.
pub(crate) fn in_row(e: Error, scenario: &Scenario, row: &scenario::Row) -> Error {
    match e {
        Error::Limit(message) => {
            let columns = scenario.columns();
            let row = if columns.is_empty() {
                String::new()
            } else {
                let cells: Vec<String> = columns
                    .iter()
                    .zip(&row.labels)
                    .map(|(c, l)| format!("{c} = {l}"))
                    .collect();
                format!(" (compare row {})", cells.join(", "))
            };
            Error::Limit(format!("{}: {message}{row}", scenario.file.display()))
        }
        e => e,
    }
}

/// The report header: the scenario's name, file and `about`.
fn render_header(scenario: &Scenario) -> String {
    let base = scenario.base();
    let mut out = format!("== {} ({})\n", base.name, scenario.file.display());
    if let Some(about) = &base.about {
        out.push_str(about.trim());
        out.push('\n');
    }
    out
}

/// The report header and the digest (see [`report::digest`]): what `resim
/// run` prints by default. `files` says where the files are.
pub fn render_digest(scenario: &Scenario, tables: &[Table], files: &str) -> String {
    render_header(scenario) + &report::digest::text(tables, &error::printable(files))
}

/// The report header and every table as text (`resim run --tables`).
pub fn render_report(scenario: &Scenario, tables: &[Table]) -> String {
    let mut out = render_header(scenario);
    for t in tables {
        out.push('\n');
        if t.printed {
            out.push_str(&t.render_text());
        } else {
            out.push_str(&format!(
                "{}\n  {} rows: see {}.csv\n",
                t.title,
                t.rows.len(),
                t.name
            ));
        }
    }
    out
}

/// The files `resim run` writes for one scenario: one CSV per table and, with
/// `report`, `report.html`.
pub fn run_files(
    scenario: &Scenario,
    output: &RunOutput,
    thresholds: Option<report::html::Thresholds>,
    report: bool,
) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut files = output
        .all_tables()
        .map(|t| Ok((format!("{}.csv", t.name), report::to_csv(t)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    if report {
        let all: Vec<&Table> = output.all_tables().collect();
        let page = report::html::run_page(
            run_heading(scenario),
            &all,
            scenario.columns().len(),
            &row_times(scenario),
            thresholds,
        )?;
        files.push((report::html::FILE.to_string(), page.into_bytes()));
    }
    Ok(files)
}

/// The warm-up and fault windows of the compare rows with a time series, as a
/// sweep's manifest keeps them (`[[timelines]]`).
pub(crate) fn series_times(scenario: &Scenario) -> Vec<report::html::RowTimes> {
    row_times(scenario)
        .into_iter()
        .zip(&scenario.rows)
        .filter(|(_, row)| model::series::window_of(&row.model).is_some())
        .map(|(times, _)| times)
        .collect()
}

/// Each compare row's warm-up and fault windows, for the time-series charts.
fn row_times(scenario: &Scenario) -> Vec<report::html::RowTimes> {
    scenario
        .rows
        .iter()
        .map(|row| {
            let m = &row.model;
            report::html::RowTimes {
                labels: row.labels.clone(),
                warmup_ms: m.warmup.as_ms(),
                faults: m
                    .faults
                    .iter()
                    .map(|f| report::html::FaultWindow {
                        what: f.label(m),
                        from_ms: f.at.as_ms(),
                        to_ms: f.until.as_ms(),
                    })
                    .collect(),
            }
        })
        .collect()
}

fn run_heading(scenario: &Scenario) -> report::html::Heading {
    let base = scenario.base();
    report::html::Heading {
        title: base.name.clone(),
        // not the file's path: the page depends on the scenario, not where it lies
        subtitle: format!(
            "resim run: {} compare row(s), seed {}",
            scenario.rows.len(),
            base.seed
        ),
        about: base.about.clone(),
    }
}
