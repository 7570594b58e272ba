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
        /// per compare row, one row per request
        #[arg(long, value_name = "N")]
        trace: Option<u32>,
        /// Draw each compare row's random latencies and arrival gaps ahead on a
        /// helper thread: `auto` when the rows leave a core spare for each
        /// helper. The output is the same byte for byte; only the time differs
        #[arg(long, value_name = "WHEN", default_value = "auto")]
        draw_ahead: crate::DrawAhead,
    },
    /// Monte-Carlo sweep: run every compare row over many seeded replications and
    /// write replications.csv, summary.csv, paired.csv and manifest.toml
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
        /// Run only the K-th of N disjoint slices (1 <= K <= N); combine with `resim merge`
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
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
    },
    /// Combine the folders of `resim sweep --shard K/N` runs into the whole run's
    /// replications.csv, summary.csv and paired.csv (byte for byte)
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
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "error: {e}");
            e.exit_code()
        }
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
            return Err(ScenarioError::new("", "no such file or folder")
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
            no_report,
            json,
            trace,
            draw_ahead,
        } => {
            let files = scenario_files(&paths)?;
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
            for s in &scenarios {
                crate::sweep::check_metric_names(s)?;
            }
            let progress = {
                use std::io::IsTerminal;
                !quiet && !json && std::io::stderr().is_terminal()
            };
            let mut failed = Vec::new();
            let mut documents = Vec::new();
            for s in &scenarios {
                let (output, trace_file) =
                    crate::run_scenario_traced(s, progress, trace, draw_ahead)?;
                for warning in crate::fault_warnings(s, &output.runs)
                    .iter()
                    .chain(&output.warnings)
                {
                    eprintln!("warning: {warning}");
                }
                let verdict = crate::thresholds::check_run(s, &output.runs)?;
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
                    written.push((crate::report::trace::FILE.into(), bytes));
                }
                // The folder's complete set: a file of an earlier run that this one
                // does not write again (report.html with --no-report, recovery.csv
                // without faults) is removed.
                crate::report::Folder::open(&dir, RUN_LEGACY)?.replace(
                    written
                        .into_iter()
                        .map(|(name, bytes)| (name, crate::report::Content::Bytes(bytes)))
                        .collect(),
                )?;
                if json {
                    documents.push(crate::report::json::scenario(
                        s,
                        output.all_tables(),
                        verdict.as_ref(),
                    ));
                } else if !quiet {
                    out_line(&crate::render_report(s, &output.tables))?;
                    if let Some(v) = &verdict {
                        out_line(&format!(
                            "\n{}Thresholds: {}",
                            v.table.render_text(),
                            v.summary()
                        ))?;
                    }
                    out_line(&format!("CSV: {}", dir.display()))?;
                }
                if let Some(e) = verdict.and_then(|v| v.error(&s.file.display().to_string())) {
                    failed.push(e.to_string());
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
            out,
            set,
            quiet,
            no_report,
        } => {
            use std::io::IsTerminal;
            let opts = crate::sweep::SweepOptions {
                file,
                overrides: overrides(&set)?,
                seed,
                replications,
                jobs,
                vary,
                baseline,
                shard: shard
                    .as_deref()
                    .map(crate::sweep::Shard::parse)
                    .transpose()?,
                out,
                progress: !quiet && std::io::stderr().is_terminal(),
                command: command_line(),
                report: !no_report,
            };
            let report = crate::sweep::sweep(&opts)?;
            if !quiet {
                out_text(&report.text)?;
            }
            report.thresholds_result()
        }
        Command::Merge {
            dirs,
            out,
            quiet,
            no_report,
        } => {
            let report = crate::sweep::merge(&crate::sweep::MergeOptions {
                dirs,
                out,
                command: command_line(),
                report: !no_report,
            })?;
            if !quiet {
                out_text(&report.text)?;
            }
            report.thresholds_result()
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
