//! `resim boundary`: where a per-replication metric crosses a target along a
//! numeric key, found by bisection with replications at each point.
//!
//! ```text
//! --axis KEY=LO..HI -> each point: the scenario with KEY = x (one compare row),
//!   replications 0..n on the sweep's worker pool (RowRunner, the sweep's
//!   metric names), the metric's mean and interval (search) -> the next point
//!   -> boundary.csv, crossing.csv, report.html, the estimate on stdout (report)
//! ```
//!
//! A point's replications are seeded per (seed, replication) exactly as a sweep's,
//! and which point comes next depends only on the estimates, so the same inputs
//! give the same points and bytes with any `--jobs`. A second `--axis` is a grid:
//! the search runs once per value of it, tracing the boundary as a curve.

mod longer;
mod partial;
mod report;
pub mod search;
mod setup;

use crate::error::{Error, ScenarioError, did_you_mean};
use crate::model::Threshold;
use crate::report::{Cell, Content};
use crate::scenario::{self, LoadOptions, Override, Purpose, Scenario};
use crate::sweep::{Layout, Named, RowRunner, Schema, metric_parts};
pub use longer::Longer;
use search::{Crossing, Evaluate, Kind, Rules, Tolerance};
use setup::{check_range, grid_values, metric_kind, read_scenario, settings};
pub(crate) use setup::{describe, metric_problem, read_with_sets};
use std::path::{Path, PathBuf};
use toml::Value;

/// Replications per point when `--replications` does not say.
pub const DEFAULT_REPLICATIONS: u64 = 20;

/// Points per search when `--max-points` does not say.
pub const DEFAULT_MAX_POINTS: u64 = 20;

/// Values of a grid axis given as `LO..HI` when `--grid` does not say.
pub const DEFAULT_GRID: u64 = 5;

/// The most points a grid axis may have.
pub const MAX_GRID: u64 = 100;

/// Everything `resim boundary` was asked for (the command line, parsed).
#[derive(Debug, Clone, Default)]
pub struct BoundaryOptions {
    /// The scenario file.
    pub file: PathBuf,
    /// `--set` overrides, in order.
    pub overrides: Vec<Override>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--axis`, as written: the first is bisected, a second is a grid.
    pub axes: Vec<String>,
    /// `--metric`.
    pub metric: String,
    /// `--target`.
    pub target: f64,
    /// `--replications` (default [`DEFAULT_REPLICATIONS`]).
    pub replications: Option<u64>,
    /// `--max-replications` (default 4 x replications).
    pub max_replications: Option<u64>,
    /// `--tolerance`, as written (default `1%`).
    pub tolerance: Option<String>,
    /// `--max-points` (default [`DEFAULT_MAX_POINTS`]).
    pub max_points: Option<u64>,
    /// `--grid`: values of a second axis given as `LO..HI`.
    pub grid: Option<u64>,
    /// Worker threads; `None`: one per core.
    pub jobs: Option<usize>,
    /// Output folder; `None`: `out/<stem>-boundary`.
    pub out: Option<PathBuf>,
    /// Write `report.html`.
    pub report: bool,
    /// `--once`: no second search at twice the run's length.
    pub once: bool,
}

/// What `resim boundary` leaves for the user.
#[derive(Debug, Clone)]
pub struct BoundaryReport {
    /// The printed report.
    pub text: String,
    /// The same as one JSON document (`--json`).
    pub json: String,
}

/// A numeric key and where along it to look.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The key path.
    pub key: String,
    /// The column name in the output files (the key's last segment).
    pub column: String,
    /// As written on the command line (`--axis ...`).
    pub text: String,
    /// The range `LO..HI` (bisected), or the grid's values.
    pub values: AxisValues,
    /// The key takes whole numbers only.
    pub integer: bool,
}

/// The values an axis covers.
#[derive(Debug, Clone, PartialEq)]
pub enum AxisValues {
    /// `LO..HI`.
    Range(f64, f64),
    /// `[v1, v2, ...]` (a grid axis only).
    List(Vec<f64>),
}

/// One search's result: the grid value it ran at (with two axes) and its crossing.
#[derive(Debug, Clone)]
pub struct Curve {
    pub grid: Option<f64>,
    pub crossing: Crossing,
}

/// What was searched: the settings the report states.
#[derive(Debug, Clone)]
pub struct Search {
    pub scenario_name: String,
    pub file: PathBuf,
    pub metric: String,
    pub target: f64,
    pub axis: Axis,
    pub grid: Option<Axis>,
    pub grid_values: Vec<f64>,
    pub rules: Rules,
    pub seed: u64,
    pub jobs: usize,
    pub curves: Vec<Curve>,
    /// What the metric means, when its name alone could mislead.
    pub meaning: Option<String>,
    /// For a metric that depends on the run's length: the search again at
    /// twice the length, or why not (None: the length does not matter, or
    /// `--once`).
    pub longer: Option<Longer>,
}

/// One bisection per grid value (`searches`; `[None]` without a grid): the
/// crossings, and the runs they took.
fn search_all(
    ctx: &Context,
    rules: &Rules,
    searches: &[Option<f64>],
    (search, partial): (u8, &mut partial::Partial),
) -> Result<(Vec<Curve>, u64), Error> {
    let mut curves = Vec::new();
    let mut runs = 0;
    for &g in searches {
        let mut eval = Evaluator {
            ctx,
            grid: g,
            loaded: None,
            runs: 0,
            search,
            partial: &mut *partial,
        };
        let crossing = search::bisect(&mut eval, rules)?;
        runs += eval.runs;
        curves.push(Curve { grid: g, crossing });
    }
    Ok((curves, runs))
}

/// The searches (one per grid value), and again at twice the run's length
/// when the metric depends on it (`longer_of`: the file's table with `--set`,
/// and the axes' keys, which are not doubled): the crossings, the second
/// search (or why there is none) and the runs they took. Every value goes to
/// `kept` as it is evaluated.
fn run_searches(
    ctx: &mut Context,
    rules: &Rules,
    searches: &[Option<f64>],
    longer_of: (&toml::Table, &[&str]),
    kept: &mut partial::Partial,
) -> Result<(Vec<Curve>, Option<Longer>, u64), Error> {
    let (curves, mut runs) = search_all(ctx, rules, searches, (1, kept))?;
    let longer = (longer::depends_on_length(&ctx.opts.metric) && !ctx.opts.once)
        .then(|| longer::doubled(longer_of.0, longer_of.1));
    let longer = match longer {
        None => None,
        Some(Err(why)) => Some(Longer::Skipped(why)),
        Some(Ok(keys)) => {
            for (key, v) in &keys {
                ctx.overrides.push(Override {
                    path: key.clone(),
                    value: toml_value(false, *v),
                    text: format!("{key}={}", crate::format::format_number(*v)),
                });
            }
            let (curves, more) = search_all(ctx, rules, searches, (2, kept))?;
            runs += more;
            Some(Longer::Searched { keys, curves })
        }
    };
    Ok((curves, longer, runs))
}

/// `ScenarioError` with `note` added to its message.
fn noted(mut e: ScenarioError, note: &str) -> ScenarioError {
    e.message.push_str(note);
    e
}

fn arg_error(message: impl Into<String>) -> Error {
    ScenarioError::new("", message).into()
}

/// Parses `KEY=LO..HI` (or, for a grid axis, `KEY=[v1, v2, ...]`).
pub fn parse_axis(text: &str, grid: bool) -> Result<Axis, Error> {
    let expected = if grid {
        "expected KEY=LO..HI or KEY=[v1, v2, ...]"
    } else {
        "expected KEY=LO..HI, e.g. workload.rate_rps=10..40"
    };
    let Some((key, range)) = text.split_once('=') else {
        return Err(arg_error(format!("--axis {text}: {expected}")));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(arg_error(format!("--axis {text}: the key path is empty")));
    }
    let range = range.trim();
    let number = |s: &str| -> Result<(f64, bool), Error> {
        let s = s.trim();
        let x: f64 = s
            .parse()
            .map_err(|_| arg_error(format!("--axis {text}: `{s}` is not a number ({expected})")))?;
        if !x.is_finite() {
            return Err(arg_error(format!(
                "--axis {text}: `{s}` is not a finite number"
            )));
        }
        Ok((x, s.parse::<i64>().is_ok()))
    };
    let (values, whole) = if let Some((lo, hi)) = range.split_once("..") {
        let ((lo, wl), (hi, wh)) = (number(lo)?, number(hi)?);
        if lo >= hi {
            return Err(arg_error(format!(
                "--axis {text}: LO must be below HI (got {} .. {})",
                crate::format::format_number(lo),
                crate::format::format_number(hi)
            )));
        }
        (AxisValues::Range(lo, hi), wl && wh)
    } else if grid && range.starts_with('[') {
        let list: toml::Table = toml::from_str(&format!("v = {range}"))
            .map_err(|_| arg_error(format!("--axis {text}: {expected}")))?;
        let items = list
            .get("v")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if items.is_empty() {
            return Err(arg_error(format!("--axis {text}: the list is empty")));
        }
        // the cap --grid has: every value is a whole search
        if items.len() as u64 > MAX_GRID {
            return Err(arg_error(format!(
                "--axis {}: {} values; a grid has at most {MAX_GRID} (each value is a search of its own)",
                key.trim(),
                items.len()
            )));
        }
        let mut out = Vec::new();
        let mut whole = true;
        for v in &items {
            match v {
                Value::Integer(i) => out.push(*i as f64),
                Value::Float(f) if f.is_finite() => {
                    whole = false;
                    out.push(*f)
                }
                other => {
                    return Err(arg_error(format!(
                        "--axis {text}: `{other}` is not a number (a boundary is traced along numbers)"
                    )));
                }
            }
        }
        (AxisValues::List(out), whole)
    } else {
        return Err(arg_error(format!("--axis {text}: {expected}")));
    };
    Ok(Axis {
        key: key.to_string(),
        column: scenario::paths::segments(key)
            .last()
            .cloned()
            .unwrap_or_else(|| key.to_string()),
        text: text.to_string(),
        values,
        integer: whole,
    })
}

/// The TOML value an axis sets at `x`.
pub(crate) fn toml_value(integer: bool, x: f64) -> Value {
    if integer {
        Value::Integer(x as i64)
    } else {
        Value::Float(x)
    }
}

/// What the search reads from a run: one metric, or whether the thresholds hold.
#[derive(Debug, Clone)]
enum Metric {
    /// A metric as a sweep names it.
    Column(String),
    /// `thresholds.pass`: 1 when every `[thresholds]` line holds, else 0.
    Pass(Vec<Threshold>),
}

impl Metric {
    /// The metric's value in a run whose metrics `get` reads.
    fn value(&self, get: impl Fn(&str) -> Option<f64>) -> Option<f64> {
        match self {
            Metric::Column(name) => get(name),
            Metric::Pass(all) => {
                Some(f64::from(u8::from(all.iter().all(|t| {
                    get(&t.metric).is_some_and(|v| t.op.holds(v, t.value))
                }))))
            }
        }
    }
}

/// The name of the 0/1 metric "every threshold holds".
pub const PASS: &str = "thresholds.pass";

/// Tables that compare compare rows or describe the whole scenario, and the
/// files of a sweep: one replication gives no value of theirs.
const NOT_PER_REPLICATION: [&str; 8] = [
    "deadline_cost",
    "false_drops",
    "error_budget",
    "ladder_ratios",
    "latency_cdf",
    "summary",
    "paired",
    "pooled",
];

/// Everything fixed before the first point: the file, the options, the pool.
struct Context<'a> {
    opts: &'a BoundaryOptions,
    /// `--set`, and for the search at twice the run's length its durations.
    overrides: Vec<Override>,
    text: String,
    axis: Axis,
    grid: Option<Axis>,
    pool: rayon::ThreadPool,
    metric: Metric,
}

impl Context<'_> {
    /// What the values of a replication depend on: the file, `--set`, the
    /// seed, the metric and the axes (not the target, the tolerance or the
    /// number of replications, which only choose which values are needed).
    fn fingerprint(&self) -> String {
        let seed = format!("{:?}", self.opts.seed);
        let grid = format!("{:?}", self.opts.grid);
        let parts = [
            env!("CARGO_PKG_VERSION").as_bytes(),
            self.text.as_bytes(),
            seed.as_bytes(),
            self.opts.metric.as_bytes(),
            grid.as_bytes(),
        ];
        let axes = self.opts.axes.iter().map(|a| a.as_bytes());
        let sets = self.overrides.iter().map(|o| o.text.as_bytes());
        partial::fingerprint(parts.into_iter().chain(axes).chain(sets))
    }

    /// The scenario with the axis at `x` (and the grid axis at `g`): one compare row.
    fn load(&self, x: f64, integer: bool, g: Option<f64>) -> Result<Scenario, Error> {
        let mut extra = Vec::new();
        if let (Some(grid), Some(g)) = (&self.grid, g) {
            extra.push((grid.key.clone(), vec![toml_value(grid.integer, g)]));
        }
        extra.push((self.axis.key.clone(), vec![toml_value(integer, x)]));
        let extra_count = extra.len();
        let opts = LoadOptions {
            overrides: self.overrides.clone(),
            seed: self.opts.seed,
            purpose: Purpose::Sweep,
            extra_axes: extra,
            max_rows: 0,
        };
        let scenario = scenario::load_str(&self.text, &self.opts.file, &opts)?;
        if scenario.rows.len() > 1 {
            let own = scenario.axes.len() - extra_count;
            let axes: Vec<String> = scenario.axes[..own]
                .iter()
                .map(|a| format!("`{}`", a.path))
                .collect();
            return Err(ScenarioError::new(
                "compare",
                format!(
                    "the scenario has {} compare rows ({}): a boundary is found for one; pick it with --set, e.g. --set 'compare={{}}' for the file's own values",
                    scenario.rows.len(),
                    axes.join(", ")
                ),
            )
            .at(scenario::paths::locate(&self.text, "compare"))
            .in_file(&self.opts.file)
            .into());
        }
        Ok(scenario)
    }
}

/// One point's runner and the layout of its metrics, kept while replications are added.
struct Loaded {
    x: f64,
    runner: RowRunner,
    schema: Schema,
    layout: Layout,
    /// Replication 0's value, from the probe that fixed the layout.
    first: Option<f64>,
}

/// Evaluates points of one search (one grid value).
struct Evaluator<'c, 'a> {
    ctx: &'c Context<'a>,
    grid: Option<f64>,
    loaded: Option<Loaded>,
    /// Total runs, for the report.
    runs: u64,
    /// 1, or 2 for the search at twice the run's length.
    search: u8,
    /// Every value evaluated, on disk as it comes, and those of an earlier,
    /// interrupted run of the same search.
    partial: &'c mut partial::Partial,
}

fn named_value(named: &Named, name: &str) -> Option<f64> {
    named
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, c)| c.metric())
}

impl Evaluator<'_, '_> {
    fn load(&mut self, x: f64) -> Result<&Loaded, Error> {
        if self.loaded.as_ref().is_none_or(|l| l.x != x) {
            let scenario = self.ctx.load(x, self.ctx.axis.integer, self.grid)?;
            let runner = RowRunner::new(&scenario);
            let tables = runner.tables(0, 0)?;
            self.runs += 1;
            let named = runner.named(&tables);
            let schema = Schema::new(std::slice::from_ref(&named));
            let layout = runner.layout(&tables, &schema);
            let first = self.ctx.metric.value(|n| named_value(&named, n));
            self.loaded = Some(Loaded {
                x,
                runner,
                schema,
                layout,
                first,
            });
        }
        self.loaded
            .as_ref()
            .ok_or_else(|| Error::Other("boundary: no point loaded".into()))
    }
}

impl Evaluate for Evaluator<'_, '_> {
    fn replications(&mut self, x: f64, from: u64, to: u64) -> Result<Vec<Option<f64>>, Error> {
        if let Some(kept) = self.partial.get(self.search, self.grid, x, from, to) {
            return Ok(kept);
        }
        let out = self.run(x, from, to)?;
        self.partial.add(self.search, self.grid, x, from, &out)?;
        Ok(out)
    }
}

impl Evaluator<'_, '_> {
    /// Runs replications `from..to` at `x`.
    fn run(&mut self, x: f64, from: u64, to: u64) -> Result<Vec<Option<f64>>, Error> {
        let pool = &self.ctx.pool;
        let metric = &self.ctx.metric;
        let loaded = self.load(x)?;
        let mut out = Vec::new();
        if from == 0 && to > 0 {
            out.push(loaded.first);
        }
        let start = from.max(1);
        if start < to {
            crate::sweep::runner::run(
                pool,
                &loaded.runner,
                &loaded.schema,
                std::slice::from_ref(&loaded.layout),
                (start, to),
                false,
                |_, m| {
                    out.push(metric.value(|n| m.value(&loaded.schema, n)));
                    Ok(())
                },
            )?;
            self.runs += to - start;
        }
        Ok(out)
    }
}

/// The search's folder: a CSV per table, and the page unless `--no-report`.
fn files(search: &Search, page: bool) -> Result<Vec<(String, Content)>, Error> {
    let mut files: Vec<(String, Content)> = Vec::new();
    for t in report::tables(search) {
        files.push((
            format!("{}.csv", t.name),
            Content::Bytes(crate::report::to_csv(&t)?),
        ));
    }
    if page {
        files.push((
            crate::report::html::FILE.into(),
            Content::Bytes(report::page(search)?.into_bytes()),
        ));
    }
    Ok(files)
}

/// An error that stopped the search, with where its values are kept.
fn stopped(e: Error, kept: &partial::Partial, dir: &Path) -> Error {
    let note = format!(
        "\n(the search stopped; the replications it evaluated are kept in {}; no other file in {} was changed; run the same command again to go on from them)",
        kept.path().display(),
        dir.display()
    );
    crate::sweep::with_note(e, &note)
}

/// What the text adds on the values kept from an interrupted run.
fn kept_note(kept: &partial::Partial) -> String {
    let mut text = String::new();
    if kept.resumed > 0 {
        text.push_str(&format!(
            "Resumed: {} replication values an earlier, interrupted run of this search evaluated were kept (not run again).\n",
            kept.resumed
        ));
    }
    if let Some(note) = &kept.note {
        text.push_str(&crate::report::wrap(&format!("Note: {note}."), 120));
    }
    text
}

/// Runs `resim boundary`.
pub fn boundary(opts: &BoundaryOptions) -> Result<BoundaryReport, Error> {
    let settings = settings(opts)?;
    let (mut axis, grid, jobs) = (settings.axis, settings.grid, settings.jobs);
    let (text, doc) = read_scenario(
        opts,
        &std::iter::once(&axis).chain(&grid).collect::<Vec<_>>(),
    )?;
    let metric = if opts.metric == PASS {
        Metric::Pass(Vec::new())
    } else {
        Metric::Column(opts.metric.clone())
    };
    let mut ctx = Context {
        opts,
        overrides: opts.overrides.clone(),
        text,
        axis: axis.clone(),
        grid: grid.clone(),
        pool: crate::sweep::runner::pool(jobs)?,
        metric,
    };
    let grid_values = grid
        .as_ref()
        .map(|g| grid_values(g, settings.grid_n))
        .unwrap_or_default();
    let (lo, hi) = match axis.values {
        AxisValues::Range(lo, hi) => (lo, hi),
        AxisValues::List(_) => return Err(arg_error("the first --axis is a range, KEY=LO..HI")),
    };
    let base = check_range(&mut ctx, &grid_values, lo, hi)?;
    axis = ctx.axis.clone();
    let kind = metric_kind(&mut ctx, &base, lo)?;
    let rules = Rules {
        target: opts.target,
        lo,
        hi,
        integer: axis.integer,
        tolerance: settings.tolerance,
        replications: settings.replications,
        max_replications: settings.max_replications,
        max_points: settings.max_points,
        confidence: base.base().montecarlo.confidence,
        kind,
    };

    let dir = opts
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(format!("{}-boundary", base.stem())));
    let lock = crate::sweep::output::lock(&dir)?;
    let mut folder = crate::report::Folder::open(&dir, &[])?;
    folder.claim(&[partial::FILE])?;
    let mut kept = partial::Partial::open(&dir, &ctx.fingerprint())?;

    // one search per grid value, or one without a grid
    let searches: Vec<Option<f64>> = match grid {
        Some(_) => grid_values.iter().map(|v| Some(*v)).collect(),
        None => vec![None],
    };
    let axes: Vec<&str> = std::iter::once(&axis)
        .chain(&grid)
        .map(|a| a.key.as_str())
        .collect();
    let (curves, longer, runs) =
        run_searches(&mut ctx, &rules, &searches, (&doc, &axes), &mut kept)
            .map_err(|e| stopped(e, &kept, &dir))?;
    let search = Search {
        scenario_name: base.base().name.clone(),
        file: opts.file.clone(),
        metric: opts.metric.clone(),
        target: opts.target,
        axis,
        grid,
        grid_values,
        rules,
        seed: base.base().seed,
        jobs,
        curves,
        meaning: longer::meaning(&opts.metric),
        longer,
    };
    folder.replace(files(&search, opts.report)?)?;
    drop(lock);
    let mut text = report::text(&search, runs, &dir);
    text.push_str(&kept_note(&kept));
    Ok(BoundaryReport {
        text,
        json: report::json(&search, &dir)?,
    })
}
