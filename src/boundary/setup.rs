//! What a boundary search settles before it runs: the command line's
//! numbers, the scenario with its numeric axes, the range's validity at both
//! ends (and at every grid value), and what kind of figure the metric is.

use super::*;

/// The values of a grid axis: its list, or `n` evenly spaced values of its range
/// (whole numbers for an integer key, repeats dropped).
pub(super) fn grid_values(axis: &Axis, n: u64) -> Vec<f64> {
    let mut out: Vec<f64> = match &axis.values {
        AxisValues::List(v) => v.clone(),
        AxisValues::Range(lo, hi) => (0..n)
            .map(|i| {
                let x = if n == 1 {
                    *lo
                } else {
                    lo + (hi - lo) * i as f64 / (n - 1) as f64
                };
                if axis.integer { x.round() } else { x }
            })
            .collect(),
    };
    out.dedup();
    out
}

/// Why `metric` cannot be searched on, as a message, or `None`.
pub(crate) fn metric_problem(
    metric: &str,
    scenario: &Scenario,
    names: &[String],
) -> Option<String> {
    let table = metric_parts(metric).first().cloned().unwrap_or_default();
    let list = |names: &[String]| {
        let mut shown: Vec<&str> = names.iter().map(String::as_str).take(40).collect();
        if names.len() > shown.len() {
            shown.push("...");
        }
        shown.join(", ")
    };
    if NOT_PER_REPLICATION.contains(&table.as_str()) {
        return Some(format!(
            "`{metric}` is not a per-replication metric: the table `{table}` compares compare rows or pools replications, so one replication has no value of it; the per-replication metrics of this scenario (time-series windows left out): {}",
            list(
                &names
                    .iter()
                    .filter(|n| !n.contains("window_start_ms_"))
                    .cloned()
                    .collect::<Vec<_>>()
            )
        ));
    }
    if let Some(problem) = crate::sweep::Shapes::of(scenario).problem(metric) {
        return Some(problem);
    }
    if !names.iter().any(|n| n == metric) {
        return Some(format!(
            "no metric named `{metric}` in replication 0{}; the metrics of this scenario there: {}",
            did_you_mean(metric, names.iter().map(String::as_str)),
            list(names)
        ));
    }
    let parts = metric_parts(metric);
    let column = parts.last().map(String::as_str).unwrap_or_default();
    if table == "recovery" && ["recovered_at_ms", "recovery_ms"].contains(&column) {
        return Some(format!(
            "`{metric}` is a recovery time, empty in a replication that stays stuck, so its mean says nothing of those: search on `recovery.stuck` (the share of stuck replications) instead"
        ));
    }
    None
}

/// The command line's numbers, checked before anything is read.
pub(super) struct Settings {
    pub(super) axis: Axis,
    pub(super) grid: Option<Axis>,
    pub(super) replications: u64,
    pub(super) max_replications: u64,
    pub(super) max_points: u64,
    pub(super) tolerance: Tolerance,
    pub(super) grid_n: u64,
    pub(super) jobs: usize,
}

/// `--axis`, `--target`, `--replications`, `--max-replications`,
/// `--max-points`, `--tolerance`, `--grid` and `--jobs`, each checked.
pub(super) fn settings(opts: &BoundaryOptions) -> Result<Settings, Error> {
    if opts.axes.is_empty() || opts.axes.len() > 2 {
        return Err(arg_error(format!(
            "give one --axis KEY=LO..HI to bisect, and at most one more to trace the boundary over (got {})",
            opts.axes.len()
        )));
    }
    let axis = parse_axis(&opts.axes[0], false)?;
    let mut grid = opts.axes.get(1).map(|a| parse_axis(a, true)).transpose()?;
    if let Some(g) = &mut grid
        && g.key == axis.key
    {
        return Err(arg_error(format!(
            "--axis {}: the same key as the first --axis",
            g.text
        )));
    }
    if !opts.target.is_finite() {
        return Err(arg_error("--target must be a finite number"));
    }
    let replications = opts.replications.unwrap_or(DEFAULT_REPLICATIONS);
    if replications == 0 {
        return Err(arg_error("--replications must be >= 1"));
    }
    let max_replications = opts
        .max_replications
        .unwrap_or(replications.saturating_mul(4));
    if max_replications < replications {
        return Err(arg_error(format!(
            "--max-replications ({max_replications}) must be >= --replications ({replications})"
        )));
    }
    let max_points = opts.max_points.unwrap_or(DEFAULT_MAX_POINTS);
    if max_points < 2 {
        return Err(arg_error(
            "--max-points must be >= 2 (the range's two ends)",
        ));
    }
    let tolerance =
        Tolerance::parse(opts.tolerance.as_deref().unwrap_or("1%")).map_err(arg_error)?;
    let grid_n = opts.grid.unwrap_or(DEFAULT_GRID);
    if !(1..=MAX_GRID).contains(&grid_n) {
        return Err(arg_error(format!(
            "--grid must be 1 to {MAX_GRID} (got {grid_n})"
        )));
    }
    let jobs = crate::sweep::runner::jobs(opts.jobs)?;

    Ok(Settings {
        axis,
        grid,
        replications,
        max_replications,
        max_points,
        tolerance,
        grid_n,
        jobs,
    })
}

/// The scenario's text and its table with `--set` applied (a file that is
/// not TOML is refused with the loader's message, which gives its position).
pub(crate) fn read_with_sets(
    file: &std::path::Path,
    overrides: &[Override],
) -> Result<(String, toml::Table), Error> {
    let bytes = scenario::read_input(file, "scenario file")?;
    let text =
        scenario::decode_text(bytes, "scenario file").map_err(|e| Error::from(e.in_file(file)))?;
    let mut doc: toml::Table = toml::from_str(&text).map_err(|_| {
        // the loader says what is wrong with the file, with its position
        match scenario::load_str(&text, file, &LoadOptions::default()) {
            Err(e) => Error::from(e),
            Ok(_) => arg_error("the scenario file is not valid TOML"),
        }
    })?;
    for o in overrides {
        let _ = scenario::paths::set(&mut doc, &o.path, o.value.clone());
    }
    Ok((text, doc))
}

/// A value that is not a number, as a message names it ("the text \"x\"").
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("the text \"{s}\""),
        Value::Boolean(b) => format!("the boolean {b}"),
        Value::Array(_) => "a list".into(),
        Value::Table(_) => "a table".into(),
        _ => "not a number".into(),
    }
}

/// The scenario's text and its table with `--set` applied; an axis whose
/// key holds a text or a table is refused.
pub(super) fn read_scenario(
    opts: &BoundaryOptions,
    axes: &[&Axis],
) -> Result<(String, toml::Table), Error> {
    let in_file = |e: ScenarioError| Error::from(e.in_file(&opts.file));
    let (text, doc) = read_with_sets(&opts.file, &opts.overrides)?;
    // the key's value in the file (with --set): a text or a table is no axis
    for a in axes {
        if let Some(v) = scenario::paths::get(&doc, &a.key)
            && !matches!(v, Value::Integer(_) | Value::Float(_))
        {
            return Err(in_file(
                ScenarioError::new(
                    a.key.as_str(),
                    format!(
                        "--axis {}: not a numeric key: its value is {}; a boundary is found along a number",
                        a.text,
                        describe(v)
                    ),
                )
                .at(scenario::paths::locate(&text, &a.key)),
            ));
        }
    }

    Ok((text, doc))
}

/// Loads the scenario at both ends of the range (and LO at every grid
/// value): the key's type and the range's validity, before anything runs.
/// Returns the scenario at LO; whole numbers are tried as such, and the
/// axis is made fractional when a value between them loads too.
pub(super) fn check_range(
    ctx: &mut Context,
    grid_values: &[f64],
    lo: f64,
    hi: f64,
) -> Result<Scenario, Error> {
    let (mut axis, grid) = (ctx.axis.clone(), ctx.grid.clone());
    let first_grid = grid_values.first().copied();
    // An error names the axis whose key it is about (a grid value can be the
    // invalid one while the range's ends are checked), else the one being tried.
    let blame = |e: Error, which: &str, x: f64, g: Option<f64>| match e {
        Error::Scenario(se) => {
            let on = |key: &str| se.path == key || se.path.starts_with(&format!("{key}."));
            let note = match (&grid, g) {
                (Some(ga), Some(g)) if on(&ga.key) && !on(&axis.key) => format!(
                    " (--axis {}: {} is not a valid value of `{}`)",
                    ga.text,
                    crate::format::format_number(g),
                    ga.key
                ),
                _ => format!(
                    " (--axis {}: {which}{} is not a valid value of `{}`)",
                    axis.text,
                    crate::format::format_number(x),
                    axis.key
                ),
            };
            Error::Scenario(noted(se, &note))
        }
        other => other,
    };
    let base = ctx
        .load(lo, axis.integer, first_grid)
        .map_err(|e| blame(e, "LO = ", lo, first_grid))?;
    ctx.load(hi, axis.integer, first_grid)
        .map_err(|e| blame(e, "HI = ", hi, first_grid))?;
    if axis.integer && lo + 0.5 < hi && ctx.load(lo + 0.5, false, first_grid).is_ok() {
        axis.integer = false;
    }
    for v in grid_values.iter().skip(1) {
        ctx.load(lo, axis.integer, Some(*v))
            .map_err(|e| blame(e, "LO = ", lo, Some(*v)))?;
    }
    ctx.axis = axis.clone();
    Ok(base)
}

/// What the metric is (a proportion, a percentage, a plain number), from
/// replication 0 at LO; a metric no replication has is refused.
pub(super) fn metric_kind(ctx: &mut Context, base: &Scenario, lo: f64) -> Result<Kind, Error> {
    let opts = ctx.opts;
    let in_file = |e: ScenarioError| Error::from(e.in_file(&opts.file));
    let axis = &ctx.axis;
    // the metric: one every replication has, or the thresholds' pass
    let probe_runner = RowRunner::new(base);
    let probe = probe_runner.shape_tables(0);
    let shape_names: Vec<String> = probe_runner
        .named(&probe)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let thresholds = base.base().thresholds.clone();
    Ok(match &mut ctx.metric {
        Metric::Pass(all) => {
            if thresholds.is_empty() {
                return Err(in_file(ScenarioError::new(
                    "thresholds",
                    format!("--metric {PASS}: the scenario has no [thresholds] to pass"),
                )));
            }
            *all = thresholds;
            Kind::Proportion
        }
        Metric::Column(name) => {
            let name = name.clone();
            // replication 0 at LO fixes what the metric is
            let runner = RowRunner::new(base);
            let tables = runner.tables(0, 0)?;
            let named = runner.named(&tables);
            let names: Vec<String> = named.iter().map(|(n, _)| n.clone()).collect();
            let known = if names.contains(&name) {
                &names
            } else {
                &shape_names
            };
            if let Some(problem) = metric_problem(&name, base, known) {
                return Err(arg_error(format!("--metric {name}: {problem}")));
            }
            if !names.contains(&name) {
                return Err(arg_error(format!(
                    "--metric {name}: replication 0 at {} = {} has no value of it (a row of its table it did not have, or a text column)",
                    axis.column,
                    crate::format::format_number(lo)
                )));
            }
            let is_bool = named
                .iter()
                .any(|(n, c)| *n == name && matches!(c, Cell::Bool(_)));
            let column = metric_parts(&name).last().cloned().unwrap_or_default();
            if is_bool {
                Kind::Proportion
            } else if column.ends_with("_pct") {
                Kind::Percent
            } else {
                Kind::Plain
            }
        }
    })
}
