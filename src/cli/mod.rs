//! The command line. Only this module knows clap: arguments are turned into plain
//! option structs and handed to the library.

use crate::error::{Error, ScenarioError};
use crate::scenario::{self, LoadOptions, Override};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "resim",
    version,
    about = "Discrete-event simulator for deadline budgets, cancellation, rate limiters, bounded queues and load ladders",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run scenario files (or every *.toml in a folder): print the report and write
    /// one CSV per table to out/<file stem>/
    Run {
        /// Scenario files or folders of scenarios
        #[arg(required = true, value_name = "FILE|DIR")]
        paths: Vec<PathBuf>,
        /// Write the CSV files into DIR (for several scenarios, DIR/<file stem>/)
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Override a value: key.path=VALUE (VALUE in TOML syntax; a bare word is a string)
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Master seed for every random stream (overrides scenario.seed)
        #[arg(long)]
        seed: Option<u64>,
        /// Print nothing on stdout (the CSV files are still written)
        #[arg(long, short)]
        quiet: bool,
        /// Print every table in full instead of the digest (the outcome per
        /// compare row and the tables that answer the scenario's question)
        #[arg(long, short = 'v')]
        tables: bool,
        /// Do not write report.html (the CSV files are still written)
        #[arg(long)]
        no_report: bool,
        /// Print the tables as one JSON document on stdout instead of text
        #[arg(long)]
        json: bool,
        /// Also write trace.json (Chrome trace-event format: open it in
        /// https://ui.perfetto.dev or chrome://tracing): the queue waits, services,
        /// calls (with their retries and hedges as attempts), dependency work and
        /// cancellations of the first N requests the workloads send, one process
        /// per compare row, one row per request (at most about 100,000 bars in
        /// all: past that no further request is traced, with a warning)
        #[arg(long, value_name = "N")]
        trace: Option<u32>,
        /// Also write the simulated requests as OpenTelemetry OTLP JSON spans
        /// (which Jaeger, Tempo and `resim import` open): a server span per
        /// request at a service, a client span per call, each request a trace.
        /// With several compare rows, one file per row: FILE's name with
        /// -row1, -row2... before its extension
        #[arg(long, value_name = "FILE")]
        spans: Option<PathBuf>,
        /// With --spans: write only this share of the requests (0 < R <= 1),
        /// every 1/R-th in send order (default 1: all)
        #[arg(long, value_name = "R", requires = "spans")]
        spans_sample: Option<f64>,
        /// Draw each compare row's costly random latencies (lognormal, gamma,
        /// Weibull, Pareto) ahead on a helper thread: `auto` when the rows leave
        /// a core spare for each helper. The output is the same byte for byte;
        /// only the time differs
        #[arg(long, value_name = "WHEN", default_value = "auto")]
        draw_ahead: crate::DrawAhead,
    },
    /// Monte-Carlo sweep: run every compare row over many seeded replications and
    /// write replications.csv, summary.csv, paired.csv, pooled.csv (percentiles of
    /// all replications' requests together), histograms.csv and manifest.toml
    Sweep {
        /// The scenario file
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Replications per compare row (overrides [montecarlo] replications; default 100)
        #[arg(long, short = 'n', value_name = "N")]
        replications: Option<u64>,
        /// Master seed (overrides [montecarlo] seed and scenario.seed)
        #[arg(long, value_name = "S")]
        seed: Option<u64>,
        /// Worker threads (default: one per core); the output does not depend on it
        #[arg(long, short = 'j', value_name = "J")]
        jobs: Option<usize>,
        /// Add a grid axis: key.path=[v1, v2, ...] (after the [compare] axes)
        #[arg(long, value_name = "KEY=[..]")]
        vary: Vec<String>,
        /// Paired differences against this row: column=value (default: each axis's
        /// first value; overrides [montecarlo] baseline)
        #[arg(long, value_name = "AXIS=VALUE")]
        baseline: Vec<String>,
        /// Run only the K-th of N disjoint slices (1 <= K <= N); combine with `resim
        /// merge`. `auto`: K (and N) from the array job this runs in (Slurm, GitLab
        /// CI, Kubernetes Indexed Jobs, AWS Batch, GNU parallel; see docs/cluster.md)
        #[arg(long, value_name = "K/N|auto")]
        shard: Option<String>,
        /// With --shard auto: the number of slices, for schedulers that do not tell
        /// their jobs how many there are (Kubernetes, AWS Batch, GNU parallel)
        #[arg(long, value_name = "N")]
        shards: Option<u64>,
        /// Output folder (default out/<file stem>-sweep, shards in shard-K-of-N below it)
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Override a value: key.path=VALUE (VALUE in TOML syntax; a bare word is a string)
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// No report on stdout and no progress bar (the files are still written)
        #[arg(long, short)]
        quiet: bool,
        /// Do not write report.html (the CSV files are still written)
        #[arg(long)]
        no_report: bool,
        /// Print every metric that differs between compare rows, not only the
        /// headline (without [montecarlo] report)
        #[arg(long)]
        all_metrics: bool,
    },
    /// Find where a per-replication metric crosses a target along a numeric key:
    /// bisection with replications at each point. Writes boundary.csv (every point
    /// evaluated), crossing.csv (the estimate and its bracket) and report.html
    Boundary {
        /// The scenario file (one compare row: pin others with --set)
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The key to bisect, KEY=LO..HI (e.g. workload.rate_rps=10..40); a second
        /// --axis KEY=LO..HI (see --grid) or KEY=[v1, v2, ...] traces the boundary
        /// over its values
        #[arg(long, value_name = "KEY=LO..HI", required = true)]
        axis: Vec<String>,
        /// The metric, named as a sweep names it (recovery.stuck,
        /// outcomes.answered_pct, ...), or thresholds.pass: 1 when every
        /// [thresholds] line holds
        #[arg(long, value_name = "NAME")]
        metric: String,
        /// The value whose crossing is sought (0.5: half the replications, for a 0/1 metric)
        #[arg(long, value_name = "P", allow_negative_numbers = true)]
        target: f64,
        /// Replications per point (default 20)
        #[arg(long, short = 'n', value_name = "N")]
        replications: Option<u64>,
        /// While a point's interval holds the target, its replications are doubled up
        /// to this many (default 4 x --replications)
        #[arg(long, value_name = "N")]
        max_replications: Option<u64>,
        /// Stop when the bracket is this narrow: in the key's units (0.5) or
        /// relative to its middle (1%, the default)
        #[arg(long, value_name = "T")]
        tolerance: Option<String>,
        /// The most points per search (default 20)
        #[arg(long, value_name = "N")]
        max_points: Option<u64>,
        /// Values of a second --axis given as LO..HI, evenly spaced (default 5)
        #[arg(long, value_name = "N")]
        grid: Option<u64>,
        /// Master seed (overrides [montecarlo] seed and scenario.seed)
        #[arg(long, value_name = "S")]
        seed: Option<u64>,
        /// Worker threads (default: one per core); the output does not depend on it
        #[arg(long, short = 'j', value_name = "J")]
        jobs: Option<usize>,
        /// Output folder (default out/<file stem>-boundary)
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Override a value: key.path=VALUE (VALUE in TOML syntax; a bare word is a string)
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print the result as one JSON document on stdout instead of text
        #[arg(long)]
        json: bool,
        /// Print nothing on stdout (the files are still written)
        #[arg(long, short)]
        quiet: bool,
        /// Do not write report.html
        #[arg(long)]
        no_report: bool,
        /// A recovery metric depends on how long the run sends after the fault:
        /// by default the search runs again with every workload's duration_ms
        /// doubled and reports both crossings; --once runs the first only
        #[arg(long)]
        once: bool,
    },
    /// Combine the folders of `resim sweep --shard K/N` runs into the whole run's
    /// replications.csv, summary.csv, paired.csv and pooled.csv (byte for byte)
    Merge {
        /// The shard folders (of `resim sweep --shard K/N`), in any order
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Output folder (default out/<file stem>-sweep)
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Print nothing on stdout
        #[arg(long, short)]
        quiet: bool,
        /// Do not write report.html
        #[arg(long)]
        no_report: bool,
        /// Print every metric that differs between compare rows, not only the
        /// headline (without [montecarlo] report)
        #[arg(long)]
        all_metrics: bool,
    },
    /// Start a scenario file from a bundled one, comments and all
    New {
        /// The new file: NAME.toml (`.toml` is added when missing); never overwritten
        #[arg(value_name = "NAME", required_unless_present = "list")]
        name: Option<PathBuf>,
        /// The bundled scenario to start from (`retry-storm`,
        /// `examples/starter`; see --list), or a scenario file
        #[arg(long, value_name = "SCENARIO", default_value = "examples/starter")]
        from: String,
        /// List the bundled scenarios with their titles, and write nothing
        #[arg(long)]
        list: bool,
    },
    /// Build a scenario from recorded traces (OpenTelemetry OTLP JSON, Jaeger
    /// JSON or Zipkin v2 JSON): the call graph, each service's own time (as a
    /// CSV of measured milliseconds beside the scenario), error shares and
    /// arrival rates; or from the resilience settings a system runs with (a
    /// gRPC service config, an Envoy configuration, Istio resources, a
    /// resilience4j configuration; JSON or YAML):
    /// timeouts, retries, hedging, budgets, breakers and limiters, with
    /// placeholders marked `# set me` for what the files do not say. Formats
    /// are told apart by their content. A report says what was inferred, or
    /// what became of every field (SCENARIO.import.md, and a summary on stderr)
    Import {
        /// Trace files (all of one system), or configuration files
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// The scenario to write (SCENARIO.toml); its report goes into
        /// SCENARIO.import.md beside it, and a trace import's data into
        /// SCENARIO-data/
        #[arg(long, value_name = "SCENARIO.toml")]
        out: PathBuf,
        /// The format of every file (default: told by each file's content)
        #[arg(long, value_name = "FORMAT")]
        from: Option<crate::import::Format>,
        /// The share of requests the traces hold (0 < R <= 1): arrival rates
        /// are divided by it (default: the sampling each trace says, else 1)
        #[arg(long, value_name = "R")]
        sample_rate: Option<f64>,
        /// The tails of the measured own times and latencies: `empirical`, the
        /// values as measured; `fit`, the values above each file's 0.9
        /// quantile drawn from a generalized Pareto tail fitted to them
        /// (`fit_tail_above = 0.9`; the report gives each fit's goodness)
        #[arg(long, value_name = "TAIL", default_value = "empirical")]
        tail: crate::import::Tail,
        /// How the gRPC clients spread their retry back-off: `a6`, as gRFC A6
        /// since 2024, grpc-go, C-core and grpc-java 1.80 on do (the capped
        /// exponential back-off x U(0.8, 1.2)); `full-jitter`, as grpc-java
        /// before 1.80 does (U(0, the capped exponential back-off))
        #[arg(long, value_name = "RULE", default_value = "a6")]
        grpc_backoff: crate::import::config::grpc::Backoff,
        /// Replace the scenario, its report and its data written before
        #[arg(long)]
        force: bool,
        /// Print nothing but warnings on stderr
        #[arg(long, short)]
        quiet: bool,
    },
    /// Validate scenario files without running them
    Check {
        #[arg(required = true, value_name = "FILE|DIR")]
        paths: Vec<PathBuf>,
        /// Override a value before checking: key.path=VALUE
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

/// Parses the process arguments, runs, prints errors; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 2,
            };
        }
    };
    match dispatch(cli.command) {
        Ok(()) => 0,
        Err(e) => {
            // Not eprintln!: a closed stderr must not turn an error into a panic.
            // Paths and values quoted from files reach the terminal escaped.
            use std::io::Write;
            let text = e.to_string();
            let _ = writeln!(
                std::io::stderr().lock(),
                "error: {}",
                crate::error::printable(&text)
            );
            e.exit_code()
        }
    }
}

/// A run that stopped on a limit (`scenario.max_sim_time_ms = 0.5`) whose value a
/// `--set` gave says so, as a load error does: `(from --set KEY=VALUE)`.
fn limit_origin(e: Error, overrides: &[Override]) -> Error {
    let Error::Limit(message) = e else {
        return e;
    };
    let names = |o: &&Override| {
        message.match_indices(o.path.as_str()).any(|(at, p)| {
            let next = message[at + p.len()..].chars().next();
            !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
    };
    match overrides.iter().rev().find(names) {
        Some(o) => Error::Limit(format!(
            "{message} (from --set {})",
            crate::scenario::shorten(&o.text)
        )),
        None => Error::Limit(message),
    }
}

fn overrides(set: &[String]) -> Result<Vec<Override>, Error> {
    Ok(set
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>, _>>()?)
}

/// Expands folders into their *.toml files (sorted), keeping files as given.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let entries = std::fs::read_dir(p).map_err(|e| Error::Io {
                context: format!("cannot read the folder {}", p.display()),
                source: e,
                user_path: true,
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "toml"))
                .collect();
            if found.is_empty() {
                return Err(
                    ScenarioError::new("", "the folder holds no scenario files (*.toml)")
                        .in_file(p)
                        .into(),
                );
            }
            found.sort();
            files.extend(found);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(ScenarioError::new("", crate::scenario::missing_reason(p))
                .in_file(p)
                .into());
        }
    }
    Ok(files)
}

fn dispatch(command: Command) -> Result<(), Error> {
    match command {
        Command::Run {
            paths,
            out,
            set,
            seed,
            quiet,
            tables,
            no_report,
            json,
            trace,
            spans,
            spans_sample,
            draw_ahead,
        } => {
            let files = scenario_files(&paths)?;
            if let Some(r) = spans_sample
                && !(r > 0.0 && r <= 1.0)
            {
                return Err(ScenarioError::new(
                    "",
                    format!(
                        "--spans-sample: the share of requests to write, above 0 and at most 1 (got {})",
                        crate::error::num(r)
                    ),
                )
                .into());
            }
            let record = crate::Record {
                trace,
                spans: spans.as_ref().map(|_| spans_sample.unwrap_or(1.0)),
            };
            let opts = LoadOptions {
                overrides: overrides(&set)?,
                seed,
                ..LoadOptions::default()
            };
            // Load everything first: a bad file stops the run before any output.
            let scenarios = files
                .iter()
                .map(|f| scenario::load(f, &opts))
                .collect::<Result<Vec<_>, _>>()?;
            let several = scenarios.len() > 1;
            check_distinct_outputs(&scenarios, out.as_deref(), several)?;
            if let Some(path) = &spans {
                check_spans_path(path, several)?;
            }
            for s in &scenarios {
                crate::sweep::check_metric_names(s)?;
            }
            let progress = {
                use std::io::IsTerminal;
                !quiet && !json && std::io::stderr().is_terminal()
            };
            let mut failed = Vec::new();
            let mut documents = Vec::new();
            let mut index = Vec::new();
            for s in &scenarios {
                let (output, trace_file, span_files) =
                    crate::run_scenario_recorded(s, progress, record, draw_ahead)
                        .map_err(|e| limit_origin(e, &opts.overrides))?;
                for warning in crate::fault_warnings(s, &output.runs)
                    .iter()
                    .chain(&output.warnings)
                {
                    warn(warning);
                }
                let verdict = crate::thresholds::check_run(s, || {
                    let runner = crate::sweep::RowRunner::new(s);
                    let runs = output.runs.iter().enumerate();
                    runs.map(|(i, run)| runner.metrics_of(i, run.clone()))
                        .collect()
                })?;
                let dir = output_dir(out.as_deref(), &s.stem(), several);
                let mut written = crate::run_files(
                    s,
                    &output,
                    verdict.as_ref().map(crate::thresholds::html_view),
                    !no_report,
                )?;
                if let Some(v) = &verdict {
                    written.push(("thresholds.csv".into(), crate::report::to_csv(&v.table)?));
                }
                if let Some(bytes) = trace_file {
                    written.push((crate::traces::chrome::FILE.into(), bytes));
                }
                let csv_files = written.iter().filter(|(n, _)| n.ends_with(".csv")).count();
                let where_files = if no_report {
                    format!("Files: {} ({csv_files} CSV files)", dir.display())
                } else {
                    format!(
                        "Files: {} ({csv_files} CSV files); report: {}",
                        dir.display(),
                        dir.join(crate::report::html::FILE).display()
                    )
                };
                // The folder's complete set: a file of an earlier run that this one
                // does not write again (report.html with --no-report, recovery.csv
                // without faults) is removed.
                crate::report::Folder::open(&dir, RUN_LEGACY)?.replace(
                    written
                        .into_iter()
                        .map(|(name, bytes)| (name, crate::report::Content::Bytes(bytes)))
                        .collect(),
                )?;
                if let Some(path) = &spans {
                    for (path, bytes) in span_paths(path, span_files.len()).iter().zip(&span_files)
                    {
                        crate::import::write_whole(path, bytes)?;
                        if !quiet && !json {
                            note(&format!("spans: {}", path.display()));
                        }
                    }
                }
                if several {
                    index.push(crate::report::html::IndexEntry {
                        title: s.base().name.clone(),
                        folder: s.stem(),
                        report: !no_report,
                        headline: crate::report::digest::headline(&output.tables),
                        about: s.base().about.clone(),
                    });
                }
                if json {
                    let entry = crate::report::json::Entry {
                        file: s.file.display().to_string(),
                        name: &s.base().name,
                        seed: s.base().seed,
                        compare_rows: s.rows.len(),
                        thresholds: verdict.as_ref().map(|v| (&v.table, v.failed)),
                    };
                    documents.push(crate::report::json::scenario(&entry, output.all_tables()));
                } else if !quiet {
                    if tables {
                        out_line(&crate::render_report(s, &output.tables))?;
                    } else {
                        out_text(&crate::render_digest(s, &output.tables, &where_files))?;
                    }
                    if let Some(v) = &verdict {
                        out_line(&format!(
                            "\n{}Thresholds: {}",
                            v.table.render_text(),
                            v.summary()
                        ))?;
                    }
                    if tables {
                        out_line(&crate::error::printable(&where_files))?;
                    }
                }
                if let Some(e) = verdict.and_then(|v| v.error(&s.file.display().to_string())) {
                    failed.push(e.to_string());
                }
            }
            if several {
                // every scenario's report, one link each, beside their folders
                let base = out.as_deref().unwrap_or(Path::new("out"));
                let page = crate::report::html::index_page(&index);
                crate::report::Folder::open(base, &[])?.replace(vec![(
                    crate::report::html::INDEX.into(),
                    crate::report::Content::Bytes(page.into_bytes()),
                )])?;
                if !quiet && !json {
                    out_line(&format!(
                        "\nIndex of every scenario's report: {}",
                        base.join(crate::report::html::INDEX).display()
                    ))?;
                }
            }
            if json {
                out_line(&crate::report::json::document(documents)?)?;
            }
            match failed.is_empty() {
                true => Ok(()),
                false => Err(Error::Thresholds(failed.join("\n"))),
            }
        }
        Command::Sweep {
            file,
            replications,
            seed,
            jobs,
            vary,
            baseline,
            shard,
            shards,
            out,
            set,
            quiet,
            no_report,
            all_metrics,
        } => {
            use std::io::IsTerminal;
            if shards.is_some() && shard.as_deref() != Some("auto") {
                return Err(crate::error::ScenarioError::new(
                    "",
                    "--shards N goes with --shard auto (with --shard K/N the count is N)",
                )
                .into());
            }
            let shard = match shard.as_deref() {
                None => None,
                Some("auto") => {
                    let (slice, from) =
                        crate::sweep::Shard::from_env(|name| std::env::var(name).ok(), shards)?;
                    if !quiet {
                        note(&format!(
                            "--shard auto: {}/{} from {from}",
                            slice.index, slice.count
                        ));
                    }
                    Some(slice)
                }
                Some(text) => Some(crate::sweep::Shard::parse(text)?),
            };
            let opts = crate::sweep::SweepOptions {
                file,
                overrides: overrides(&set)?,
                seed,
                replications,
                jobs,
                vary,
                baseline,
                shard,
                out,
                progress: !quiet && std::io::stderr().is_terminal(),
                command: command_line(),
                report: !no_report,
                all_metrics,
            };
            let report =
                crate::sweep::sweep(&opts).map_err(|e| limit_origin(e, &opts.overrides))?;
            if !quiet {
                out_text(&report.text)?;
            }
            report.thresholds_result()
        }
        Command::Boundary {
            file,
            axis,
            metric,
            target,
            replications,
            max_replications,
            tolerance,
            max_points,
            grid,
            seed,
            jobs,
            out,
            set,
            json,
            quiet,
            no_report,
            once,
        } => {
            let opts = crate::boundary::BoundaryOptions {
                file,
                overrides: overrides(&set)?,
                seed,
                axes: axis,
                metric,
                target,
                replications,
                max_replications,
                tolerance,
                max_points,
                grid,
                jobs,
                out,
                report: !no_report,
                once,
            };
            let report =
                crate::boundary::boundary(&opts).map_err(|e| limit_origin(e, &opts.overrides))?;
            if json {
                out_text(&report.json)?;
            } else if !quiet {
                out_text(&report.text)?;
            }
            Ok(())
        }
        Command::Merge {
            dirs,
            out,
            quiet,
            no_report,
            all_metrics,
        } => {
            let report = crate::sweep::merge(&crate::sweep::MergeOptions {
                dirs,
                out,
                command: command_line(),
                report: !no_report,
                all_metrics,
            })?;
            if !quiet {
                out_text(&report.text)?;
            }
            report.thresholds_result()
        }
        Command::New { name, from, list } => match name {
            Some(name) if !list => new_scenario(&name, &from),
            _ => {
                for n in scenario::bundled::names() {
                    let title = scenario::bundled::scenario(n)
                        .and_then(|(_, text)| text.parse::<toml::Table>().ok())
                        .and_then(|t| t.get("scenario")?.get("name")?.as_str().map(String::from))
                        .unwrap_or_default();
                    out_line(&format!("{n:<36} {title}"))?;
                }
                Ok(())
            }
        },
        Command::Import {
            files,
            out,
            from,
            sample_rate,
            tail,
            grpc_backoff,
            force,
            quiet,
        } => {
            let done = crate::import::import(&crate::import::ImportOptions {
                files,
                out,
                from,
                sample_rate,
                tail,
                force,
                choices: crate::import::config::Choices { grpc_backoff },
            })?;
            if quiet {
                for w in &done.report.warnings {
                    warn(w);
                }
            } else {
                note(done.report.short().trim_end());
                match &done.data_dir {
                    Some(d) => note(&format!(
                        "wrote {}, {} and {}/",
                        done.scenario.display(),
                        done.report_file.display(),
                        d.display()
                    )),
                    None => note(&format!(
                        "wrote {} and {}",
                        done.scenario.display(),
                        done.report_file.display()
                    )),
                }
                note(&format!(
                    "next: resim run {} (and read {})",
                    done.scenario.display(),
                    done.report_file.display()
                ));
            }
            Ok(())
        }
        Command::Check { paths, set } => {
            let files = scenario_files(&paths)?;
            let opts = LoadOptions {
                overrides: overrides(&set)?,
                ..LoadOptions::default()
            };
            for f in &files {
                let s = scenario::load(f, &opts)?;
                crate::sweep::check_metric_names(&s)?;
                for w in scenario::warnings(&s) {
                    warn(&format!("{}: {w}", f.display()));
                }
                out_line(&format!(
                    "ok: {} ({} compare rows)",
                    f.display(),
                    s.rows.len()
                ))?;
            }
            Ok(())
        }
    }
}

/// What a run owns in a folder without a record (written by an older resim): the
/// page `--no-report` always removed.
const RUN_LEGACY: &[&str] = &[crate::report::html::FILE];

/// Reads a data file a scenario names (relative to its folder).
type DataFiles = Box<dyn Fn(&str) -> Option<Vec<u8>>>;

/// `resim new NAME --from SCENARIO`: writes NAME.toml from a bundled scenario
/// (or a scenario file), with the data files it reads beside it; refuses to
/// overwrite anything, and checks the result loads.
fn new_scenario(name: &Path, from: &str) -> Result<(), Error> {
    let target = if name.extension().is_some_and(|e| e == "toml") {
        name.to_path_buf()
    } else {
        let mut t = name.as_os_str().to_owned();
        t.push(".toml");
        PathBuf::from(t)
    };
    let usage = |message: String| Error::from(crate::error::ScenarioError::new("", message));
    // a bundled scenario by name, else a file; its data files come from beside it
    let (text, origin, data): (String, String, DataFiles) = match scenario::bundled::scenario(from)
    {
        Some((path, text)) => {
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            let data = move |rel: &str| {
                let at = if dir.is_empty() {
                    rel.to_string()
                } else {
                    format!("{dir}/{rel}")
                };
                scenario::bundled::file(&at).map(|t| t.as_bytes().to_vec())
            };
            (
                text.to_string(),
                format!("the bundled scenario scenarios/{path}"),
                Box::new(data),
            )
        }
        None if Path::new(from).is_file() => {
            let text = std::fs::read_to_string(from).map_err(|e| Error::Io {
                context: format!("cannot read {from}"),
                source: e,
                user_path: true,
            })?;
            let dir = Path::new(from)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            (
                text,
                from.to_string(),
                Box::new(move |rel: &str| std::fs::read(dir.join(rel)).ok()),
            )
        }
        None => {
            let names = scenario::bundled::names();
            return Err(usage(format!(
                "--from {from}: no bundled scenario or file of that name{}; `resim new --list` lists them",
                crate::error::did_you_mean(from, names.iter().copied())
            )));
        }
    };
    let stem = target
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (text, files) = scenario::starting_point(&text, &stem, &origin).map_err(usage)?;
    let dir = target.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut writes = vec![(target.clone(), text.into_bytes())];
    for rel in files {
        let bytes = data(&rel).ok_or_else(|| {
            usage(format!(
                "{origin} reads {rel}, which is not beside it: copy it by hand"
            ))
        })?;
        writes.push((dir.join(&rel), bytes));
    }
    for (path, _) in &writes {
        if path.exists() {
            return Err(usage(format!(
                "{} exists already: choose another name (resim new never overwrites)",
                path.display()
            )));
        }
    }
    for (path, bytes) in &writes {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::Io {
                context: format!("cannot create {}", parent.display()),
                source: e,
                user_path: true,
            })?;
        }
        std::fs::write(path, bytes).map_err(|e| Error::Io {
            context: format!("cannot write {}", path.display()),
            source: e,
            user_path: true,
        })?;
    }
    // what it wrote must load
    scenario::load(&target, &LoadOptions::default())?;
    for (path, _) in &writes {
        out_line(&format!("wrote {}", path.display()))?;
    }
    out_line(&format!(
        "next: resim run {} (then open the report it names)",
        target.display()
    ))
}

/// A warning on stderr, `warning: ` first, escaped like errors; a closed stderr
/// is not an error (nor a panic, as with `eprintln!`).
fn warn(text: &str) {
    note(&format!("warning: {text}"));
}

/// A line on stderr, escaped like errors, never a panic.
fn note(text: &str) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        crate::error::printable(text)
    );
}

/// Prints a line on stdout (see [`out_text`]).
fn out_line(text: &str) -> Result<(), Error> {
    out_text(&format!("{text}\n"))
}

/// Prints text on stdout. A reader that went away (`resim run ... | head`) is not
/// an error: the rest of the report is simply not printed (the files are written
/// already). Any other failure (a full disk behind `>file`) is exit code 1 with a
/// message, never a panic as `print!` would give.
fn out_text(text: &str) -> Result<(), Error> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            context: "cannot write the report to stdout".into(),
            source: e,
            user_path: false,
        }),
        _ => Ok(()),
    }
}

/// Two scenarios whose files share a name (`a/x.toml b/x.toml`) would write into
/// the same folder, the second silently replacing the first: refused before
/// anything runs.
fn check_distinct_outputs(
    scenarios: &[scenario::Scenario],
    out: Option<&Path>,
    several: bool,
) -> Result<(), Error> {
    let mut seen: std::collections::HashMap<PathBuf, &Path> = std::collections::HashMap::new();
    for s in scenarios {
        let dir = output_dir(out, &s.stem(), several);
        if let Some(first) = seen.insert(dir.clone(), &s.file) {
            return Err(ScenarioError::new(
                "",
                format!(
                    "writes its CSV files into {}, as {} does: run them separately with their own --out, or rename one",
                    dir.display(),
                    first.display()
                ),
            )
            .in_file(&s.file)
            .into());
        }
    }
    Ok(())
}

/// `--spans FILE` can be written once the run is done: one scenario, and FILE
/// a file in a folder that exists (checked before the run, so that a run is
/// not lost to a mistyped path).
fn check_spans_path(path: &Path, several: bool) -> Result<(), Error> {
    let bad = |message: String| Error::from(ScenarioError::new("", message));
    if several {
        return Err(bad(
            "--spans writes the requests of one scenario: run the others separately".into(),
        ));
    }
    if path.is_dir() {
        return Err(bad(format!(
            "--spans {}: is a folder; name the file to write",
            path.display()
        )));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(bad(format!(
            "--spans {}: the folder {} does not exist",
            path.display(),
            parent.display()
        )));
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

/// `out/<stem>` by default; `--out DIR` itself for one scenario, `DIR/<stem>` for several.
fn output_dir(out: Option<&Path>, stem: &str, several: bool) -> PathBuf {
    match out {
        None => Path::new("out").join(stem),
        Some(d) if several => d.join(stem),
        Some(d) => d.to_path_buf(),
    }
}

/// The process's command line, each argument quoted for a POSIX shell when needed.
fn command_line() -> String {
    std::env::args()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
