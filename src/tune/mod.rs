//! `resim tune`: the settings to run with, searched against an objective and
//! constraints that every compare row (a fault suite) must meet.
//!
//! ```text
//! --vary KEY=LO..HI | KEY=[...] -> candidates: a space-filling start, then
//!   rounds in a shrinking box around the best (space) -> each candidate: the
//!   scenario with its values, every compare row, replications 0, 1, ... with
//!   a sweep's streams (eval) -> the race: intervals drop the infeasible and
//!   the beaten, replications are doubled where a decision is close (race) ->
//!   the recommendation, run again on fresh replications -> tune.csv,
//!   pareto.csv, fresh.csv, recommendation.txt, tuned.toml, the text or
//!   JSON (report), report.html (page)
//! ```
//!
//! Every candidate runs the same replications (common random numbers), and
//! which candidate comes next depends only on the estimates, so the same
//! inputs give the same candidates and bytes with any `--jobs`.

mod eval;
mod figures;
mod page;
pub mod race;
mod report;
pub mod space;
mod store;
mod write_back;

use crate::error::{Error, ScenarioError};
use crate::model::Threshold;
use crate::scenario::{self, Override};
pub use race::Over;
use race::{Candidate, Estimate, Goal, Race, Status};
use space::{Domain, Key, Point};
use std::path::{Path, PathBuf};
use toml::Value;

/// Replications a candidate starts with when `--replications` does not say.
pub const DEFAULT_REPLICATIONS: u64 = 10;

/// Runs a tuning may spend when `--budget` does not say.
pub const DEFAULT_BUDGET: u64 = 3000;

/// Rounds around the best after the start.
const ROUNDS: u32 = 3;

/// The first of the fresh replications the recommendation is run again on:
/// far past any a search runs, so none of its seeds were seen.
pub const FRESH: u64 = 1 << 40;

/// Everything `resim tune` was asked for (the command line, parsed).
#[derive(Debug, Clone)]
pub struct TuneOptions {
    pub file: PathBuf,
    /// `--set` overrides, in order.
    pub overrides: Vec<Override>,
    pub seed: Option<u64>,
    /// `--vary`, as written.
    pub vary: Vec<String>,
    /// `--maximize` or `--minimize`: the metric, and whether larger is better.
    pub objective: Option<(String, bool)>,
    /// `--constraint`, as written.
    pub constraints: Vec<String>,
    pub over: Option<Over>,
    pub replications: Option<u64>,
    pub max_replications: Option<u64>,
    pub budget: Option<u64>,
    pub jobs: Option<usize>,
    pub out: Option<PathBuf>,
    /// Write `report.html`.
    pub report: bool,
    /// `--write-back`: the configuration files to write the tuned values into.
    pub write_back: Vec<PathBuf>,
    /// `--shard K/N`: this process runs the K-th slice of every step's runs.
    pub shard: Option<crate::sweep::Shard>,
    /// `--shard-wait`: how long a shard waits for the others' runs, in seconds.
    pub shard_wait: u64,
}

/// What `resim tune` leaves for the user.
#[derive(Debug)]
pub struct TuneReport {
    pub text: String,
    pub json: String,
    /// Why the tuned values were not written back (the tuning's files are
    /// written): an error to exit with after the report.
    pub refused: Option<Error>,
}

/// What the tuning found, for the files and the report.
pub struct Outcome<'a> {
    pub opts: &'a TuneOptions,
    pub scenario_name: String,
    pub keys: &'a [Key],
    pub goal: &'a Goal,
    pub candidates: Vec<Candidate>,
    pub rows: Vec<String>,
    /// Runs the search spent (within `budget`).
    pub runs: u64,
    /// Runs beside the search: the metrics checked, the fresh re-run.
    pub other_runs: u64,
    pub budget: u64,
    pub out_of_budget: bool,
    /// The candidate recommended, and whether it is surely feasible (false:
    /// its means meet the constraints, not its intervals).
    pub pick: Option<(usize, bool)>,
    /// With no pick: the candidate closest to feasible.
    pub closest: Option<usize>,
    /// The pick (or the closest) run again on fresh replications:
    /// `[row][metric]`.
    pub fresh: Vec<Vec<Option<Estimate>>>,
    pub fresh_n: u64,
    pub seconds: f64,
    /// The configuration files written back (`--write-back`), and why
    /// writing back was refused.
    pub written: Vec<write_back::Written>,
    pub refused: Option<String>,
}

fn arg_error(message: impl Into<String>) -> Error {
    ScenarioError::new("", message).into()
}

/// Parses `METRIC OP LIMIT` (`outcomes.p99_all_ms <= 300`).
pub fn parse_constraint(text: &str) -> Result<Threshold, Error> {
    let Some(at) = text.find(['<', '>']) else {
        return Err(arg_error(format!(
            "--constraint \"{text}\": expected METRIC OP LIMIT, e.g. \"outcomes.p99_all_ms <= 300\" (OP one of <, <=, >, >=)"
        )));
    };
    let metric = text[..at].trim();
    if metric.is_empty() {
        return Err(arg_error(format!(
            "--constraint \"{text}\": the metric is missing before `{}`",
            &text[at..at + 1]
        )));
    }
    Threshold::parse(metric, &text[at..])
        .map_err(|m| arg_error(format!("--constraint \"{text}\": {m}")))
}

/// The command line's numbers and names, checked before anything is read.
struct Settings {
    keys: Vec<Key>,
    goal: Goal,
    first: u64,
    most: u64,
    budget: u64,
    jobs: usize,
}

fn settings(opts: &TuneOptions) -> Result<Settings, Error> {
    if opts.vary.is_empty() {
        return Err(arg_error(
            "give at least one --vary KEY=LO..HI or KEY=[v1, v2, ...] (or `vary` in [tune])",
        ));
    }
    if opts.vary.len() > space::MAX_KEYS {
        return Err(arg_error(format!(
            "{} --vary keys; a tuning varies at most {}",
            opts.vary.len(),
            space::MAX_KEYS
        )));
    }
    let keys: Vec<Key> = opts
        .vary
        .iter()
        .map(|v| space::parse(v))
        .collect::<Result<_, _>>()?;
    for (i, k) in keys.iter().enumerate() {
        if keys[..i].iter().any(|o| o.key == k.key) {
            return Err(arg_error(format!(
                "--vary {}: the key is varied twice",
                k.text
            )));
        }
    }
    let constraints: Vec<Threshold> = opts
        .constraints
        .iter()
        .map(|c| parse_constraint(c))
        .collect::<Result<_, _>>()?;
    let first = opts.replications.unwrap_or(DEFAULT_REPLICATIONS);
    if first < 2 {
        return Err(arg_error(
            "--replications must be >= 2 (an interval needs two values)",
        ));
    }
    let most = opts.max_replications.unwrap_or(first.saturating_mul(4));
    if most < first {
        return Err(arg_error(format!(
            "--max-replications ({most}) must be >= --replications ({first})"
        )));
    }
    let budget = opts.budget.unwrap_or(DEFAULT_BUDGET);
    let jobs = crate::sweep::runner::jobs(opts.jobs)?;
    let Some((objective, maximize)) = opts.objective.clone() else {
        return Err(arg_error(
            "give --maximize METRIC or --minimize METRIC (or `maximize` or `minimize` in [tune])",
        ));
    };
    let goal = Goal {
        objective,
        maximize,
        constraints,
        over: opts.over.unwrap_or(Over::Worst),
        confidence: 0.95,
        clip: Vec::new(),
    };
    Ok(Settings {
        keys,
        goal,
        first,
        most,
        budget,
        jobs,
    })
}

/// The options with `[tune]`'s values where the command line is silent:
/// `--vary` (all of them) replaces the table's `vary`, `--constraint` its
/// `constraints`, and each other flag its key. A value of the table that is
/// wrong is refused naming the file, its line and the key.
fn with_table(opts: &TuneOptions, text: &str, doc: &toml::Table) -> Result<TuneOptions, Error> {
    let Some(table) = doc.get("tune") else {
        return Ok(opts.clone());
    };
    let at = |key: &str, message: String| -> Error {
        ScenarioError::new(key, message)
            .at(scenario::paths::locate(text, key))
            .in_file(&opts.file)
            .into()
    };
    let raw: scenario::raw::RawTune = table.clone().try_into().map_err(|e: toml::de::Error| {
        // the loader names the key and its position
        match scenario::load_str(text, &opts.file, &scenario::LoadOptions::default()) {
            Err(e) => Error::from(e),
            Ok(_) => at("tune", e.message().trim().to_string()),
        }
    })?;
    let mut out = opts.clone();
    let reason = |e: Error| match e {
        Error::Scenario(se) => se.message,
        other => other.to_string(),
    };
    if out.vary.is_empty() {
        for v in &raw.vary {
            space::parse(v).map_err(|e| at("tune.vary", reason(e)))?;
        }
        out.vary = raw.vary;
    }
    if out.constraints.is_empty() {
        for c in &raw.constraints {
            parse_constraint(c).map_err(|e| at("tune.constraints", reason(e)))?;
        }
        out.constraints = raw.constraints;
    }
    if out.objective.is_none() {
        out.objective = match (raw.maximize, raw.minimize) {
            (Some(_), Some(_)) => {
                return Err(at(
                    "tune.minimize",
                    "give one of `maximize` and `minimize`, not both".into(),
                ));
            }
            (Some(m), None) => Some((m, true)),
            (None, Some(m)) => Some((m, false)),
            (None, None) => None,
        };
    }
    if out.over.is_none() {
        out.over = match raw.over.as_deref() {
            None => None,
            Some("worst") => Some(Over::Worst),
            Some("mean") => Some(Over::Mean),
            Some(other) => {
                return Err(at(
                    "tune.over",
                    format!("\"{other}\" is not one of \"worst\", \"mean\""),
                ));
            }
        };
    }
    out.replications = out.replications.or(raw.replications);
    out.max_replications = out.max_replications.or(raw.max_replications);
    out.budget = out.budget.or(raw.budget);
    if out.write_back.is_empty() {
        let folder = opts.file.parent().unwrap_or(Path::new(""));
        out.write_back = raw.write_back.iter().map(|f| folder.join(f)).collect();
    }
    Ok(out)
}

/// Each key checked against the file: in it (or set by `--set`), a number
/// for a range, and not an axis of `[compare]`.
fn check_keys(
    opts: &TuneOptions,
    text: &str,
    doc: &toml::Table,
    keys: &[Key],
) -> Result<(), Error> {
    let in_file = |e: ScenarioError| Error::from(e.in_file(&opts.file));
    for k in keys {
        let at = scenario::paths::locate(text, &k.key);
        match (scenario::paths::get(doc, &k.key), &k.domain) {
            (None, _) => {
                return Err(in_file(ScenarioError::new(
                    k.key.as_str(),
                    format!(
                        "--vary {}: the scenario does not set this key; write it in the file (or give it with --set) so the tuned copy has a value to change",
                        k.text
                    ),
                )));
            }
            (Some(Value::Integer(_) | Value::Float(_)), _) | (Some(_), Domain::List(_)) => {}
            (Some(v), Domain::Range { .. }) => {
                return Err(in_file(
                    ScenarioError::new(
                        k.key.as_str(),
                        format!(
                            "--vary {}: not a numeric key: its value is {}; a range is searched along a number (give a list, KEY=[...], to choose among values)",
                            k.text,
                            crate::boundary::describe(v)
                        ),
                    )
                    .at(at),
                ));
            }
        }
        let compared = doc
            .get("compare")
            .and_then(Value::as_table)
            .is_some_and(|c| c.contains_key(&k.key));
        if compared {
            return Err(in_file(
                ScenarioError::new(
                    "compare",
                    format!(
                        "--vary {}: `{}` is an axis of [compare], whose rows are the suite every candidate must hold under; take it out of [compare] (or pin it with --set) to tune it",
                        k.text, k.key
                    ),
                )
                .at(scenario::paths::locate(text, "compare")),
            ));
        }
    }
    Ok(())
}

/// Each key's ends (every value of a list) loaded with the other keys at
/// their first values, before anything runs; a whole-number range is made
/// fractional when a value between whole numbers loads too.
fn check_values(ev: &eval::Evaluator, keys: &mut [Key]) -> Result<(), Error> {
    let base: Point = space::start(keys, 1).remove(0);
    for i in 0..keys.len() {
        let values: Vec<Value> = match &keys[i].domain {
            Domain::Range { lo, hi, integer } => [lo, hi]
                .iter()
                .map(|x| crate::boundary::toml_value(*integer, **x))
                .collect(),
            Domain::List(v) => v.clone(),
        };
        for v in values {
            let mut p = base.clone();
            p[i] = v.clone();
            ev.load(&p).map_err(|e| match e {
                Error::Scenario(mut se) => {
                    se.message.push_str(&format!(
                        " (--vary {}: {} is not a valid value of `{}`)",
                        keys[i].text,
                        space::show(&v),
                        keys[i].key
                    ));
                    Error::Scenario(se)
                }
                other => other,
            })?;
        }
        if let Domain::Range { lo, hi, integer } = keys[i].domain {
            // a step past each end: does the key take it?
            let step = if integer { 1.0 } else { (hi - lo) * 0.01 };
            let past = |x: f64| {
                let mut p = base.clone();
                p[i] = crate::boundary::toml_value(integer, x);
                ev.load(&p).is_ok()
            };
            keys[i].beyond = (past(lo - step), past(hi + step));
        }
        if let Domain::Range { lo, hi, integer } = keys[i].domain
            && integer
            && lo + 0.5 < hi
        {
            let mut p = base.clone();
            p[i] = Value::Float(lo + 0.5);
            if ev.load(&p).is_ok() {
                keys[i].domain = Domain::Range {
                    lo,
                    hi,
                    integer: false,
                };
            }
        }
    }
    Ok(())
}

/// Each metric checked on replication 0 of the first candidate's rows, and
/// the range its values lie in (a `_pct` in [0, 100], a flag in [0, 1]).
fn check_metrics(ev: &eval::Evaluator, point: &Point, goal: &mut Goal) -> Result<Checked, Error> {
    let scenario = ev.load(point)?;
    goal.confidence = scenario.base().montecarlo.confidence;
    let runner = crate::sweep::RowRunner::new(&scenario);
    let probes = crate::sweep::runner::probe(&ev.pool, &runner)?;
    let named: Vec<_> = probes.iter().map(|t| runner.named(t)).collect();
    let names: Vec<String> = named[0].iter().map(|(n, _)| n.clone()).collect();
    let metrics =
        std::iter::once(&goal.objective).chain(goal.constraints.iter().map(|c| &c.metric));
    let mut clip = Vec::new();
    for (k, m) in metrics.enumerate() {
        let flag = if k == 0 {
            "--maximize/--minimize"
        } else {
            "--constraint"
        };
        if m == crate::boundary::PASS {
            return Err(arg_error(format!(
                "{flag} {m}: not a metric of a run; write the thresholds as --constraint lines"
            )));
        }
        if let Some(problem) = crate::boundary::metric_problem(m, &scenario, &names) {
            return Err(arg_error(format!("{flag} {m}: {problem}")));
        }
        let cell = named[0].iter().find(|(n, _)| n == m).map(|(_, c)| c);
        let column = crate::sweep::metric_parts(m)
            .last()
            .cloned()
            .unwrap_or_default();
        clip.push(if matches!(cell, Some(crate::report::Cell::Bool(_))) {
            Some((0.0, 1.0))
        } else if column.ends_with("_pct") {
            Some((0.0, 100.0))
        } else {
            None
        });
    }
    goal.clip = clip;
    let rows = scenario
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if r.labels.is_empty() {
                format!("{}", i + 1)
            } else {
                r.labels.join(" ")
            }
        })
        .collect();
    Ok(Checked {
        name: scenario.base().name.clone(),
        rows,
        runs: probes.len() as u64,
    })
}

/// What the metrics' check found: the scenario's name, its compare rows'
/// labels, and the runs it took.
struct Checked {
    name: String,
    rows: Vec<String>,
    runs: u64,
}

/// Runs `resim tune`.
pub fn tune(opts: &TuneOptions) -> Result<TuneReport, Error> {
    let clock = std::time::Instant::now();
    let (text, doc) = crate::boundary::read_with_sets(&opts.file, &opts.overrides)?;
    let opts = &with_table(opts, &text, &doc)?;
    let Settings {
        mut keys,
        mut goal,
        first,
        most,
        budget,
        jobs,
    } = settings(opts)?;
    check_keys(opts, &text, &doc, &keys)?;
    let metrics = goal.metrics();
    let pool = crate::sweep::runner::pool(jobs)?;
    keys = keys_checked(opts, &text, &keys, &metrics)?;
    let back = write_back::WriteBack::prepare(&opts.write_back, &keys)?;
    let mut ev = eval::Evaluator::new(
        opts.file.clone(),
        text.clone(),
        (opts.overrides.clone(), opts.seed),
        &keys,
        metrics,
        pool,
    );
    let start = space::start(&keys, (4 * (keys.len() + 1)).clamp(8, 32));
    let Checked {
        name,
        rows,
        runs: checked,
    } = check_metrics(&ev, &start[0], &mut goal)?;
    check_budget(budget, first, rows.len() as u64)?;
    let dir = out_dir(opts);
    // with shards, the first writes the results; the others only their runs
    let (lock, folder) = match opts.shard.is_none_or(|s| s.index == 1) {
        true => (
            Some(crate::sweep::output::lock(&dir)?),
            Some(crate::report::Folder::open(&dir, &[])?),
        ),
        false => (None, None),
    };
    let limits = Limits {
        rows: rows.len() as u64,
        first,
        most,
        budget,
    };
    let done = match opts.shard {
        None => drive(&goal, &mut ev, &keys, start, limits)?,
        Some(shard) => {
            let id = store::fingerprint(opts, &text, &goal, rows.len());
            let sharded = store::Sharded::new(ev, shard, &dir, id, rows.len(), opts.shard_wait)?;
            drive_sharded(&goal, sharded, &keys, start, limits)?
        }
    };
    let Driven {
        candidates,
        runs: spent,
        search_runs,
        out_of_budget,
        pick,
        closest,
        fresh,
    } = done;
    let mut outcome = Outcome {
        opts,
        scenario_name: name,
        keys: &keys,
        goal: &goal,
        runs: search_runs,
        other_runs: spent - search_runs + checked,
        budget,
        out_of_budget,
        candidates,
        rows,
        pick,
        closest,
        fresh,
        fresh_n: most,
        seconds: clock.elapsed().as_secs_f64(),
        written: Vec::new(),
        refused: None,
    };
    let refused = match (&back, pick) {
        (Some(back), Some((i, _))) => write_back(back, &mut outcome, i),
        _ => None,
    };
    if let Some(folder) = folder {
        folder.replace(report::files(&outcome, &text)?)?;
    }
    drop(lock);
    Ok(TuneReport {
        text: report::text(&outcome, &dir),
        json: report::json(&outcome, &dir)?,
        refused,
    })
}

/// Refuses a budget smaller than one candidate's first replications.
fn check_budget(budget: u64, first: u64, rows: u64) -> Result<(), Error> {
    if budget < first * rows {
        return Err(arg_error(format!(
            "--budget {budget}: not enough for one candidate ({first} replications x {rows} compare row{} = {} runs)",
            if rows == 1 { "" } else { "s" },
            first * rows
        )));
    }
    Ok(())
}

/// The search run by a shard: again from the start each time a step's runs
/// were missing, until none is.
fn drive_sharded(
    goal: &Goal,
    mut sharded: store::Sharded,
    keys: &[Key],
    start: Vec<Point>,
    limits: Limits,
) -> Result<Driven, Error> {
    loop {
        let done = drive(goal, &mut sharded, keys, start.clone(), limits)?;
        if !race::Evaluate::stop(&sharded) {
            return Ok(done);
        }
        sharded.resolve()?;
    }
}

/// Candidate `i`'s values written back into the configuration files, into
/// the outcome; the error when they were not.
fn write_back(back: &write_back::WriteBack, outcome: &mut Outcome, i: usize) -> Option<Error> {
    match back.write(outcome.keys, &outcome.candidates[i].point) {
        Ok(w) => {
            outcome.written = w;
            None
        }
        Err(e) => {
            outcome.refused = Some(match &e {
                Error::Scenario(se) => se.message.clone(),
                other => other.to_string(),
            });
            Some(e)
        }
    }
}

/// The keys, each checked at its ends (a whole-number range made fractional
/// when the key takes fractions), on a pool of one thread: nothing runs.
fn keys_checked(
    opts: &TuneOptions,
    text: &str,
    keys: &[Key],
    metrics: &[String],
) -> Result<Vec<Key>, Error> {
    let probe = eval::Evaluator::new(
        opts.file.clone(),
        text.to_string(),
        (opts.overrides.clone(), opts.seed),
        keys,
        metrics.to_vec(),
        crate::sweep::runner::pool(1)?,
    );
    let mut k = keys.to_vec();
    check_values(&probe, &mut k)?;
    Ok(k)
}

/// The output folder: `--out`, else `out/<file stem>-tune`.
fn out_dir(opts: &TuneOptions) -> PathBuf {
    let stem = opts
        .file
        .file_stem()
        .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    opts.out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(format!("{stem}-tune")))
}

/// The race's limits: compare rows, replications, budget.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub rows: u64,
    pub first: u64,
    pub most: u64,
    pub budget: u64,
}

/// What a search found.
struct Driven {
    candidates: Vec<Candidate>,
    /// Every run of the race, the fresh ones included; the search's alone.
    runs: u64,
    search_runs: u64,
    out_of_budget: bool,
    pick: Option<(usize, bool)>,
    closest: Option<usize>,
    fresh: Vec<Vec<Option<Estimate>>>,
}

/// The search from `start`, its answer and the answer's fresh run. With an
/// evaluator that [stops](race::Evaluate::stop), it ends early, its answer
/// meaningless: it is run again once the runs are in.
fn drive(
    goal: &Goal,
    ev: &mut impl race::Evaluate,
    keys: &[Key],
    start: Vec<Point>,
    limits: Limits,
) -> Result<Driven, Error> {
    let mut race = Race {
        goal,
        candidates: Vec::new(),
        runs: 0,
        rows: limits.rows,
        first: limits.first,
        most: limits.most,
        budget: limits.budget,
        out_of_budget: false,
    };
    search(&mut race, ev, keys, start)?;
    let pick = match race.incumbent() {
        Some(i) => Some((i, true)),
        None => race.best(|g, c| g.likely_feasible(c)).map(|i| (i, false)),
    };
    let closest = match pick {
        Some(_) => None,
        None => closest(&race.candidates, goal),
    };
    let search_runs = race.runs;
    // the recommendation (or the closest) on replications no candidate ran
    let fresh = match pick.map(|p| p.0).or(closest) {
        Some(i) if !ev.stop() => run_fresh(&mut race, ev, i)?,
        _ => Vec::new(),
    };
    Ok(Driven {
        runs: race.runs,
        search_runs,
        out_of_budget: race.out_of_budget,
        candidates: race.candidates,
        pick,
        closest,
        fresh,
    })
}

/// Candidate `i` run again on `most` replications numbered from [`FRESH`]:
/// each row's estimates, the runs counted in the race's.
fn run_fresh(
    race: &mut Race,
    ev: &mut impl race::Evaluate,
    i: usize,
) -> Result<Vec<Vec<Option<Estimate>>>, Error> {
    let point = race.candidates[i].point.clone();
    let most = race.most;
    let values = race::Evaluate::run(ev, usize::MAX, &point, FRESH, FRESH + most)?;
    // its replication 0 is run too, to lay out its metrics
    race.runs += (most + 1) * race.rows;
    Ok(values
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(m, v)| race.goal.estimate(m, v))
                .collect()
        })
        .collect())
}

/// The start, raced; then rounds around the best so far, each box half the
/// last, while the budget lasts.
fn search(
    race: &mut Race,
    ev: &mut impl race::Evaluate,
    keys: &[Key],
    start: Vec<Point>,
) -> Result<(), Error> {
    race.add(ev, start, 0)?;
    if ev.stop() {
        return Ok(());
    }
    race.settle(ev)?;
    forget_settled(race, ev);
    for round in 1..=ROUNDS {
        if ev.stop() {
            return Ok(());
        }
        let centre = race
            .incumbent()
            .or_else(|| race.best(|g, c| g.likely_feasible(c)))
            .or_else(|| closest(&race.candidates, race.goal));
        let Some(centre) = centre else { break };
        let seen: Vec<Point> = race.candidates.iter().map(|c| c.point.clone()).collect();
        let half = 0.25 / f64::from(1u32 << (round - 1));
        let points = space::around(
            keys,
            &race.candidates[centre].point,
            half,
            2 * keys.len() + 2,
            &seen,
        );
        if points.is_empty() || !race.add(ev, points, round)? {
            break;
        }
        if ev.stop() {
            return Ok(());
        }
        race.settle(ev)?;
        forget_settled(race, ev);
    }
    Ok(())
}

/// Frees the runners of candidates out of the race.
fn forget_settled(race: &Race, ev: &mut impl race::Evaluate) {
    for (i, c) in race.candidates.iter().enumerate() {
        if c.status != Status::Alive {
            ev.forget(i);
        }
    }
}

/// The candidate with the smallest shortfall from its constraints (the first of equals).
fn closest(candidates: &[Candidate], goal: &Goal) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, c) in candidates.iter().enumerate() {
        if matches!(c.status, Status::NoValue(_)) {
            continue;
        }
        let s = goal.shortfall(c);
        if best.is_none_or(|(_, b)| s < b) {
            best = Some((i, s));
        }
    }
    best.map(|(i, _)| i)
}
