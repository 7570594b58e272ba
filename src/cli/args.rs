//! The command line's definition: every subcommand, its arguments and their
//! help text, as clap reads them. What each command does is in the parent
//! module.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "resim",
    version,
    about = "Discrete-event simulator for deadline budgets, cancellation, rate limiters, bounded queues and load ladders",
    long_about = None
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
    /// Run scenario files (or every *.toml in a folder): print the report and write
    /// one CSV per table to out/<file stem>/
    Run(RunArgs),
    /// Monte-Carlo sweep: run every compare row over many seeded replications and
    /// write replications.csv, summary.csv, paired.csv, pooled.csv (percentiles of
    /// all replications' requests together), histograms.csv and manifest.toml
    Sweep(SweepArgs),
    /// Find where a per-replication metric crosses a target along a numeric key:
    /// bisection with replications at each point. Writes boundary.csv (every point
    /// evaluated), crossing.csv (the estimate and its bracket) and report.html
    Boundary(BoundaryArgs),
    /// Search the settings to run with: the values of --vary keys that optimise a
    /// metric while every compare row meets the constraints. Writes tune.csv
    /// (every candidate), pareto.csv, fresh.csv, recommendation.txt, tuned.toml
    /// and report.html
    Tune(TuneArgs),
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
    Import(ImportArgs),
    /// Validate scenario files without running them
    Check {
        #[arg(required = true, value_name = "FILE|DIR")]
        paths: Vec<PathBuf>,
        /// Override a value before checking: key.path=VALUE
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

/// `resim run`'s arguments.
#[derive(Args, Debug)]
pub(super) struct RunArgs {
    /// Scenario files or folders of scenarios
    #[arg(required = true, value_name = "FILE|DIR")]
    pub(super) paths: Vec<PathBuf>,
    /// Write the CSV files into DIR (for several scenarios, DIR/<file stem>/)
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
    /// Override a value: key.path=VALUE (VALUE in TOML syntax; a bare word is a string)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(super) set: Vec<String>,
    /// Master seed for every random stream (overrides scenario.seed)
    #[arg(long)]
    pub(super) seed: Option<u64>,
    /// Print nothing on stdout (the CSV files are still written)
    #[arg(long, short)]
    pub(super) quiet: bool,
    /// Print every table in full instead of the digest (the outcome per
    /// compare row and the tables that answer the scenario's question)
    #[arg(long, short = 'v')]
    pub(super) tables: bool,
    /// Do not write report.html (the CSV files are still written)
    #[arg(long)]
    pub(super) no_report: bool,
    /// Print the tables as one JSON document on stdout instead of text
    #[arg(long)]
    pub(super) json: bool,
    /// Also write trace.json (Chrome trace-event format: open it in
    /// https://ui.perfetto.dev or chrome://tracing): the queue waits, services,
    /// calls (with their retries and hedges as attempts), dependency work and
    /// cancellations of the first N requests the workloads send, one process
    /// per compare row, one row per request (at most about 100,000 bars in
    /// all: past that no further request is traced, with a warning)
    #[arg(long, value_name = "N")]
    pub(super) trace: Option<u32>,
    /// Also write the simulated requests as OpenTelemetry OTLP JSON spans
    /// (which Jaeger, Tempo and `resim import` open): a server span per
    /// request at a service, a client span per call, each request a trace.
    /// With several compare rows, one file per row: FILE's name with
    /// -row1, -row2... before its extension
    #[arg(long, value_name = "FILE")]
    pub(super) spans: Option<PathBuf>,
    /// With --spans: write only this share of the requests (0 < R <= 1),
    /// every 1/R-th in send order (default 1: all)
    #[arg(long, value_name = "R", requires = "spans")]
    pub(super) spans_sample: Option<f64>,
    /// Draw each compare row's costly random latencies (lognormal, gamma,
    /// Weibull, Pareto) ahead on a helper thread: `auto` when the rows leave
    /// a core spare for each helper. The output is the same byte for byte;
    /// only the time differs
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub(super) draw_ahead: crate::DrawAhead,
}

/// `resim sweep`'s arguments.
#[derive(Args, Debug)]
pub(super) struct SweepArgs {
    /// The scenario file
    #[arg(value_name = "FILE")]
    pub(super) file: PathBuf,
    /// Replications per compare row (overrides [montecarlo] replications; default 100)
    #[arg(long, short = 'n', value_name = "N")]
    pub(super) replications: Option<u64>,
    /// Master seed (overrides [montecarlo] seed and scenario.seed)
    #[arg(long, value_name = "S")]
    pub(super) seed: Option<u64>,
    /// Worker threads (default: one per core); the output does not depend on it
    #[arg(long, short = 'j', value_name = "J")]
    pub(super) jobs: Option<usize>,
    /// Add a grid axis: key.path=[v1, v2, ...] (after the [compare] axes)
    #[arg(long, value_name = "KEY=[..]")]
    pub(super) vary: Vec<String>,
    /// Paired differences against this row: column=value (default: each axis's
    /// first value; overrides [montecarlo] baseline)
    #[arg(long, value_name = "AXIS=VALUE")]
    pub(super) baseline: Vec<String>,
    /// Run only the K-th of N disjoint slices (1 <= K <= N); combine with `resim
    /// merge`. `auto`: K (and N) from the array job this runs in (Slurm, GitLab
    /// CI, Kubernetes Indexed Jobs, AWS Batch, GNU parallel; see docs/cluster.md)
    #[arg(long, value_name = "K/N|auto")]
    pub(super) shard: Option<String>,
    /// With --shard auto: the number of slices, for schedulers that do not tell
    /// their jobs how many there are (Kubernetes, AWS Batch, GNU parallel)
    #[arg(long, value_name = "N")]
    pub(super) shards: Option<u64>,
    /// Output folder (default out/<file stem>-sweep, shards in shard-K-of-N below it)
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
    /// Override a value: key.path=VALUE (VALUE in TOML syntax; a bare word is a string)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(super) set: Vec<String>,
    /// No report on stdout and no progress bar (the files are still written)
    #[arg(long, short)]
    pub(super) quiet: bool,
    /// Do not write report.html (the CSV files are still written)
    #[arg(long)]
    pub(super) no_report: bool,
    /// Print every metric that differs between compare rows, not only the
    /// headline (without [montecarlo] report)
    #[arg(long)]
    pub(super) all_metrics: bool,
}

/// The flags `resim boundary` and `resim tune` share.
#[derive(Args, Debug)]
pub(super) struct SearchFlags {
    /// Master seed (overrides [montecarlo] seed and scenario.seed)
    #[arg(long, value_name = "S")]
    pub(super) seed: Option<u64>,
    /// Worker threads (default: one per core); the output does not depend on it
    #[arg(long, short = 'j', value_name = "J")]
    pub(super) jobs: Option<usize>,
    /// Override a value: key.path=VALUE (VALUE in TOML syntax; a bare word is a string)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(super) set: Vec<String>,
    /// Print the result as one JSON document on stdout instead of text
    #[arg(long)]
    pub(super) json: bool,
    /// Print nothing on stdout (the files are still written)
    #[arg(long, short)]
    pub(super) quiet: bool,
    /// Do not write report.html
    #[arg(long)]
    pub(super) no_report: bool,
}

/// `resim boundary`'s arguments.
#[derive(Args, Debug)]
pub(super) struct BoundaryArgs {
    /// The scenario file (one compare row: pin others with --set)
    #[arg(value_name = "FILE")]
    pub(super) file: PathBuf,
    /// The key to bisect, KEY=LO..HI (e.g. workload.rate_rps=10..40); a second
    /// --axis KEY=LO..HI (see --grid) or KEY=[v1, v2, ...] traces the boundary
    /// over its values
    #[arg(long, value_name = "KEY=LO..HI", required = true)]
    pub(super) axis: Vec<String>,
    /// The metric, named as a sweep names it (recovery.stuck,
    /// outcomes.answered_pct, ...), or thresholds.pass: 1 when every
    /// [thresholds] line holds
    #[arg(long, value_name = "NAME")]
    pub(super) metric: String,
    /// The value whose crossing is sought (0.5: half the replications, for a 0/1 metric)
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub(super) target: f64,
    /// Replications per point (default 20)
    #[arg(long, short = 'n', value_name = "N")]
    pub(super) replications: Option<u64>,
    /// While a point's interval holds the target, its replications are doubled up
    /// to this many (default 4 x --replications)
    #[arg(long, value_name = "N")]
    pub(super) max_replications: Option<u64>,
    /// Stop when the bracket is this narrow: in the key's units (0.5) or
    /// relative to its middle (1%, the default)
    #[arg(long, value_name = "T")]
    pub(super) tolerance: Option<String>,
    /// The most points per search (default 20)
    #[arg(long, value_name = "N")]
    pub(super) max_points: Option<u64>,
    /// Values of a second --axis given as LO..HI, evenly spaced (default 5)
    #[arg(long, value_name = "N")]
    pub(super) grid: Option<u64>,
    /// Output folder (default out/<file stem>-boundary)
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
    #[command(flatten)]
    pub(super) common: SearchFlags,
    /// A recovery metric depends on how long the run sends after the fault:
    /// by default the search runs again with every workload's duration_ms
    /// doubled and reports both crossings; --once runs the first only
    #[arg(long)]
    pub(super) once: bool,
}

/// `resim tune`'s arguments.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("aim").args(["maximize", "minimize"])))]
pub(super) struct TuneArgs {
    /// The scenario file; its compare rows are the suite (faults, loads) every
    /// candidate must hold under. Its [tune] table gives what the flags leave out
    #[arg(value_name = "FILE")]
    pub(super) file: PathBuf,
    /// A key to tune: KEY=LO..HI (a number; whole numbers stay whole) or
    /// KEY=[v1, v2, ...] (one of these values); repeat for more keys. Without
    /// it, the file's [tune] vary
    #[arg(long, value_name = "KEY=LO..HI")]
    pub(super) vary: Vec<String>,
    /// The metric to make as large as possible (named as a sweep names it)
    #[arg(long, value_name = "METRIC")]
    pub(super) maximize: Option<String>,
    /// The metric to make as small as possible (named as a sweep names it)
    #[arg(long, value_name = "METRIC")]
    pub(super) minimize: Option<String>,
    /// "METRIC OP LIMIT" (OP one of <, <=, >, >=) that the metric's mean must
    /// meet in every compare row; repeat for more
    #[arg(long, value_name = "\"METRIC <= X\"")]
    pub(super) constraint: Vec<String>,
    /// How the objective is taken over the compare rows: the worst row's mean
    /// (the default), or the mean of the rows' means
    #[arg(long, value_name = "HOW")]
    pub(super) over: Option<crate::tune::Over>,
    /// Replications a candidate starts with (default 10)
    #[arg(long, short = 'n', value_name = "N")]
    pub(super) replications: Option<u64>,
    /// While a candidate is in doubt (feasible? beaten?), its replications are
    /// doubled up to this many (default 4 x --replications); the recommendation
    /// is run again on this many fresh replications
    #[arg(long, value_name = "N")]
    pub(super) max_replications: Option<u64>,
    /// The most runs the search may spend, a run being one replication of one
    /// compare row (default 3000)
    #[arg(long, value_name = "RUNS")]
    pub(super) budget: Option<u64>,
    /// Output folder (default out/<file stem>-tune)
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
    #[command(flatten)]
    pub(super) common: SearchFlags,
    /// The configuration files the scenario was imported from (as given to
    /// `resim import`): the tuned values are written into the fields they
    /// came from, in each field's own notation, as tuned-FILE in the output
    /// folder and as a diff (printed, and in write-back.diff); the rest of
    /// each file is kept byte for byte
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub(super) write_back: Vec<PathBuf>,
    /// Run as the K-th of N shards, all at once with the same --out (a shared
    /// folder): every shard runs the search, each step's runs are split among
    /// them through DIR/runs/, and shard 1 writes the results (the same bytes
    /// as one process). `auto`: K (and N) from the array job this runs in
    /// (Slurm, GNU parallel, ...; see docs/cluster.md)
    #[arg(long, value_name = "K/N|auto")]
    pub(super) shard: Option<String>,
    /// With --shard auto: the number of shards, for schedulers that do not
    /// tell their jobs how many there are
    #[arg(long, value_name = "N")]
    pub(super) shards: Option<u64>,
    /// How long a shard waits for a slice of a step's runs that another shard
    /// has taken before it makes the slice itself, in seconds (a shard that
    /// stopped midway is not waited for)
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub(super) shard_wait: u64,
}

/// `resim import`'s arguments.
#[derive(Args, Debug)]
pub(super) struct ImportArgs {
    /// Trace files (all of one system), or configuration files
    #[arg(required = true, value_name = "FILE")]
    pub(super) files: Vec<PathBuf>,
    /// The scenario to write (SCENARIO.toml); its report goes into
    /// SCENARIO.import.md beside it, and a trace import's data into
    /// SCENARIO-data/
    #[arg(long, value_name = "SCENARIO.toml")]
    pub(super) out: PathBuf,
    /// The format of every file (default: told by each file's content)
    #[arg(long, value_name = "FORMAT")]
    pub(super) from: Option<crate::import::Format>,
    /// The share of requests the traces hold (0 < R <= 1): arrival rates
    /// are divided by it (default: the sampling each trace says, else 1)
    #[arg(long, value_name = "R")]
    pub(super) sample_rate: Option<f64>,
    /// The tails of the measured own times and latencies: `empirical`, the
    /// values as measured; `fit`, the values above each file's 0.9
    /// quantile drawn from a generalized Pareto tail fitted to them
    /// (`fit_tail_above = 0.9`; the report gives each fit's goodness)
    #[arg(long, value_name = "TAIL", default_value = "empirical")]
    pub(super) tail: crate::import::Tail,
    /// How the gRPC clients spread their retry back-off: `a6`, as gRFC A6
    /// since 2024, grpc-go, C-core and grpc-java 1.80 on do (the capped
    /// exponential back-off x U(0.8, 1.2)); `full-jitter`, as grpc-java
    /// before 1.80 does (U(0, the capped exponential back-off))
    #[arg(long, value_name = "RULE", default_value = "a6")]
    pub(super) grpc_backoff: crate::import::config::grpc::Backoff,
    /// Replace the scenario, its report and its data written before
    /// (without it, an existing SCENARIO.toml, SCENARIO.import.md or
    /// SCENARIO-data/ stops the import before it writes anything)
    #[arg(long)]
    pub(super) force: bool,
    /// Print nothing but warnings on stderr (the first 20; the report holds
    /// every one)
    #[arg(long, short)]
    pub(super) quiet: bool,
}
