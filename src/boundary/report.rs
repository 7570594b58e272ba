//! What `resim boundary` writes: `boundary.csv` (every point evaluated),
//! `crossing.csv` (the crossing per search), the printed report, the JSON
//! document and `report.html`, all from the same [`Search`].

use super::search::{Crossing, Point, Side, Status};
use super::{Curve, Longer, Search, Tolerance};
use crate::error::Error;
use crate::format::format_number;
use crate::report::html::charts::Marker;
use crate::report::html::numeric::{self, HeatMap, ValueChart, ValueSeries};
use crate::report::html::{Heading, Section};
use crate::report::{Cell, Table};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::path::Path;

fn grid_header(s: &Search) -> Vec<String> {
    s.grid.iter().map(|g| g.column.clone()).collect()
}

fn grid_cells(s: &Search, g: Option<f64>) -> Vec<Cell> {
    match (&s.grid, g) {
        (Some(_), Some(v)) => vec![Cell::Num(v)],
        _ => Vec::new(),
    }
}

/// Each search's curves with its run length (1: as written, 2: twice), and
/// whether the table says which (only when the search ran twice).
fn runs(s: &Search) -> (Vec<(i64, &Vec<Curve>)>, bool) {
    let mut all = vec![(1, &s.curves)];
    if let Some(Longer::Searched { curves, .. }) = &s.longer {
        all.push((2, curves));
    }
    let twice = all.len() > 1;
    (all, twice)
}

fn opt(x: Option<f64>) -> Cell {
    x.map_or(Cell::Empty, Cell::Num)
}

/// `boundary.csv`: one row per point evaluated, in the order evaluated.
pub fn points_table(s: &Search) -> Table {
    let headers = grid_header(s)
        .into_iter()
        .chain(
            [
                "point",
                s.axis.column.as_str(),
                "replications",
                "n",
                "estimate",
                "ci_low",
                "ci_high",
                "interval",
                "side",
            ]
            .map(String::from),
        )
        .chain(runs(s).1.then(|| "run_length".to_string()))
        .collect();
    let mut t = Table::new(
        "boundary",
        &format!(
            "Every point evaluated: the mean of {} over its replications and its {} interval",
            s.metric,
            crate::format::percent(s.rules.confidence)
        ),
        headers,
    );
    let (all, twice) = runs(s);
    for (length, c) in all
        .iter()
        .flat_map(|(l, cs)| cs.iter().map(move |c| (*l, c)))
    {
        for (i, p) in c.crossing.points.iter().enumerate() {
            let mut row = grid_cells(s, c.grid);
            let (lo, hi) = p.estimate.interval.unzip();
            row.extend([
                Cell::Int(i as i64 + 1),
                Cell::Num(p.value),
                Cell::Int(p.estimate.replications as i64),
                Cell::Int(p.estimate.n as i64),
                opt(p.estimate.mean),
                opt(lo),
                opt(hi),
                Cell::Text(s.rules.kind.interval().into()),
                Cell::Text(p.side.name().into()),
            ]);
            if twice {
                row.push(Cell::Int(length));
            }
            t.push(row);
        }
    }
    t
}

/// `crossing.csv`: one row per search (per grid value with two axes).
pub fn crossing_table(s: &Search) -> Table {
    let headers = grid_header(s)
        .into_iter()
        .chain(
            [
                "metric",
                "target",
                "boundary",
                "bracket_low",
                "bracket_high",
                "status",
                "points",
                "replications",
            ]
            .map(String::from),
        )
        .chain(runs(s).1.then(|| "run_length".to_string()))
        .collect();
    let mut t = Table::new(
        "crossing",
        &format!(
            "Where {} crosses {} along {}",
            s.metric,
            format_number(s.target),
            s.axis.key
        ),
        headers,
    );
    let (all, twice) = runs(s);
    for (length, c) in all
        .iter()
        .flat_map(|(l, cs)| cs.iter().map(move |c| (*l, c)))
    {
        let mut row = grid_cells(s, c.grid);
        let (lo, hi) = c.crossing.bracket.unzip();
        row.extend([
            Cell::Text(s.metric.clone()),
            Cell::Num(s.target),
            opt(c.crossing.estimate),
            opt(lo),
            opt(hi),
            Cell::Text(c.crossing.status.name().into()),
            Cell::Int(c.crossing.points.len() as i64),
            Cell::Int(
                c.crossing
                    .points
                    .iter()
                    .map(|p| p.estimate.replications as i64)
                    .sum(),
            ),
        ]);
        if twice {
            row.push(Cell::Int(length));
        }
        t.push(row);
    }
    if twice {
        t.notes.push(format!(
            "run_length: 1 as the file has it, 2 with every workload's duration_ms doubled ({}), the faults where they were",
            s.longer.as_ref().map(Longer::keys_text).unwrap_or_default()
        ));
    }
    t
}

/// Both tables, as the CSV files and the page hold them.
pub fn tables(s: &Search) -> Vec<Table> {
    vec![crossing_table(s), points_table(s)]
}

fn tolerance(t: Tolerance) -> String {
    match t {
        Tolerance::Absolute(x) => format_number(x),
        Tolerance::Relative(r) => format!("{} %", format_number(r * 100.0)),
    }
}

/// "0.125 [0.044, 0.310]": a point's mean and interval.
fn shown(p: &Point) -> String {
    match (p.estimate.mean, p.estimate.interval) {
        (Some(m), Some((lo, hi))) => format!("{m:.3} [{lo:.3}, {hi:.3}]"),
        _ => "no value".into(),
    }
}

/// The sentence that answers the question, for one search.
pub fn verdict(s: &Search, c: &Crossing) -> String {
    let col = &s.axis.column;
    let target = format_number(s.target);
    let (lo, hi) = (format_number(s.rules.lo), format_number(s.rules.hi));
    let at = |p: &Point| format!("{} ({})", format_number(p.value), shown(p));
    match (c.status, c.estimate, c.bracket) {
        (Status::NoValue, _, _) => {
            let empty: Vec<String> = c
                .points
                .iter()
                .filter(|p| p.side == Side::Empty)
                .map(|p| {
                    format!(
                        "{col} = {} ({} replications)",
                        format_number(p.value),
                        p.estimate.replications
                    )
                })
                .collect();
            let bracket = c.bracket.map_or(String::new(), |(a, b)| {
                format!(
                    "; the values on either side bracket [{}, {}] but not what lies between",
                    format_number(a),
                    format_number(b)
                )
            });
            format!(
                "no boundary in [{lo}, {hi}]: {} has no value at {} (no replication gave it one, e.g. a percentile of no requests): the metric is undefined there, on neither side of {target}{bracket}",
                s.metric,
                empty.join(" and ")
            )
        }
        (Status::NoCrossing, _, _) => {
            let ends = &c.points[..2.min(c.points.len())];
            let seen: Vec<String> = ends.iter().map(at).collect();
            let sides: Vec<&str> = ends.iter().map(|p| p.side.name()).collect();
            let why = match sides.as_slice() {
                ["below", "below"] => format!("{} stays below {target} at both ends", s.metric),
                ["above", "above"] => format!("{} stays above {target} at both ends", s.metric),
                _ => format!(
                    "at an end the interval of {} holds {target} even with {} replications, so the side there cannot be told (the crossing may be at that end or beyond it: widen the range)",
                    s.metric, s.rules.max_replications
                ),
            };
            format!(
                "no crossing in [{lo}, {hi}]: {why}; values seen: {}",
                seen.join(", ")
            )
        }
        (status, Some(e), Some((a, b))) => {
            let why = match status {
                Status::Tolerance => format!(
                    "the bracket is within the tolerance ({})",
                    tolerance(s.rules.tolerance)
                ),
                Status::Undecided => format!(
                    "at {} the interval holds {target} even with {} replications: the crossing is there, as far as they can tell",
                    format_number(e),
                    s.rules.max_replications
                ),
                Status::MaxPoints => format!(
                    "stopped after {} points (--max-points), the bracket still wider than the tolerance",
                    c.points.len()
                ),
                Status::Adjacent => "the bracket's ends are neighbouring whole numbers".into(),
                Status::NoCrossing | Status::NoValue => String::new(),
            };
            let side = |x: f64| c.points.iter().find(|p| p.value == x);
            let ends: Vec<String> = [a, b].iter().filter_map(|x| side(*x)).map(at).collect();
            format!(
                "{col} = {}: {} crosses {target} between {} ({why}; {} points)",
                format_number(e),
                s.metric,
                ends.join(" and "),
                c.points.len()
            )
        }
        _ => String::new(),
    }
}

/// The printed report.
pub fn text(s: &Search, runs: u64, dir: &Path) -> String {
    let mut out = format!("== {} ({})\n", s.scenario_name, s.file.display());
    out.push_str(&intro(s, true));
    out.push('\n');
    if let Some(m) = &s.meaning {
        out.push_str(&crate::report::wrap(&format!("{m}."), 120));
        out.push('\n');
    }
    if s.grid.is_some() {
        out.push_str(&crossing_table(s).render_text());
    } else {
        out.push_str(&points_table(s).render_text());
    }
    out.push('\n');
    for c in &s.curves {
        let prefix = match (&s.grid, c.grid) {
            (Some(g), Some(v)) => format!("{} = {}: ", g.column, format_number(v)),
            _ => String::new(),
        };
        out.push_str(&crate::report::wrap(
            &format!("{prefix}{}", verdict(s, &c.crossing)),
            120,
        ));
        out.push('\n');
    }
    for line in longer_lines(s) {
        out.push_str(&crate::report::wrap(&line, 120));
        out.push('\n');
    }
    out.push_str(&format!(
        "{runs} runs. Files: {} (crossing.csv, boundary.csv{})\n",
        dir.display(),
        if dir.join(crate::report::html::FILE).exists() {
            "; report.html"
        } else {
            ""
        }
    ));
    out
}

/// The crossings at twice the run's length, or why there are none: one
/// sentence each.
fn longer_lines(s: &Search) -> Vec<String> {
    match &s.longer {
        None => Vec::new(),
        Some(Longer::Skipped(why)) => {
            vec![format!(
                "Not searched again at twice the run's length: {why}."
            )]
        }
        Some(l @ Longer::Searched { curves, .. }) => (curves.iter())
            .map(|c| {
                let grid = match (&s.grid, c.grid) {
                    (Some(g), Some(v)) => format!(", {} = {}", g.column, format_number(v)),
                    _ => String::new(),
                };
                format!(
                    "At twice the run's length ({}{grid}): {}",
                    l.keys_text(),
                    verdict(s, &c.crossing)
                )
            })
            .collect(),
    }
}

/// What was searched, in one paragraph.
fn intro(s: &Search, threads: bool) -> String {
    let r = &s.rules;
    let grid = match &s.grid {
        Some(g) => format!(
            ", for each of {} values of {} ({})",
            s.grid_values.len(),
            g.key,
            s.grid_values
                .iter()
                .map(|v| format_number(*v))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => String::new(),
    };
    crate::report::wrap(
        &format!(
            "Boundary: where {} crosses {} along {} in [{}, {}]{grid}. {} replications per point, up to {} when its interval holds the target; {} {} intervals; tolerance {}; at most {} points; seed {}{}.",
            s.metric,
            format_number(s.target),
            s.axis.key,
            format_number(r.lo),
            format_number(r.hi),
            r.replications,
            r.max_replications,
            crate::format::percent(r.confidence),
            r.kind.interval(),
            tolerance(r.tolerance),
            r.max_points,
            s.seed,
            if threads {
                format!(", {} thread(s)", s.jobs)
            } else {
                String::new()
            }
        ),
        120,
    )
}

fn json_number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// One search's crossing and points, as the JSON document holds them.
fn curve_json(s: &Search, c: &Curve) -> Value {
    let points: Vec<Value> = (c.crossing.points.iter())
        .map(|p| {
            json!({
                "value": json_number(p.value),
                "replications": p.estimate.replications,
                "n": p.estimate.n,
                "estimate": p.estimate.mean.map(json_number),
                "ci_low": p.estimate.interval.map(|i| json_number(i.0)),
                "ci_high": p.estimate.interval.map(|i| json_number(i.1)),
                "side": p.side.name(),
            })
        })
        .collect();
    json!({
        "grid_value": c.grid.map(json_number),
        "status": c.crossing.status.name(),
        "boundary": c.crossing.estimate.map(json_number),
        "bracket": c.crossing.bracket.map(|(a, b)| vec![json_number(a), json_number(b)]),
        "verdict": verdict(s, &c.crossing),
        "points": points,
    })
}

/// The `--json` document.
pub fn json(s: &Search, dir: &Path) -> Result<String, Error> {
    let curves: Vec<Value> = s.curves.iter().map(|c| curve_json(s, c)).collect();
    let doc = json!({
        "scenario": s.scenario_name,
        "file": s.file.display().to_string(),
        "metric": s.metric,
        "target": json_number(s.target),
        "axis": {
            "key": s.axis.key,
            "column": s.axis.column,
            "lo": json_number(s.rules.lo),
            "hi": json_number(s.rules.hi),
            "integer": s.axis.integer,
        },
        "grid": s.grid.as_ref().map(|g| json!({
            "key": g.key,
            "column": g.column,
            "values": s.grid_values.iter().map(|v| json_number(*v)).collect::<Vec<_>>(),
        })),
        "replications": s.rules.replications,
        "max_replications": s.rules.max_replications,
        "confidence": json_number(s.rules.confidence),
        "interval": s.rules.kind.interval(),
        "tolerance": tolerance(s.rules.tolerance),
        "seed": s.seed,
        "meaning": s.meaning,
        "curves": curves,
        "twice_the_run": match &s.longer {
            None => Value::Null,
            Some(Longer::Skipped(why)) => json!({ "skipped": why }),
            Some(Longer::Searched { keys, curves }) => json!({
                "keys": keys.iter().map(|(k, v)| (k.clone(), json_number(*v))).collect::<serde_json::Map<_, _>>(),
                "curves": curves.iter().map(|c| curve_json(s, c)).collect::<Vec<_>>(),
            }),
        },
        "folder": dir.display().to_string(),
    });
    serde_json::to_string_pretty(&doc)
        .map(|mut t| {
            t.push('\n');
            t
        })
        .map_err(|e| Error::Other(format!("--json: {e}")))
}

/// The metric against the axis for one search: its points in order of value,
/// the target, the estimate and the bracket.
fn search_chart(s: &Search, c: &Crossing, title: String) -> Result<String, Error> {
    let points: Vec<&Point> = c
        .points
        .iter()
        .filter(|p| p.estimate.mean.is_some())
        .collect();
    points_chart(s, c, points, title)
}

/// The points within two bracket widths of the bracket, when they are at least
/// three and not all the points: what a chart near the boundary shows.
fn near(c: &Crossing) -> Option<Vec<&Point>> {
    let (a, b) = c.bracket?;
    let w = b - a;
    let all: Vec<&Point> = c
        .points
        .iter()
        .filter(|p| p.estimate.mean.is_some())
        .collect();
    let near: Vec<&Point> = all
        .iter()
        .copied()
        .filter(|p| p.value >= a - 2.0 * w && p.value <= b + 2.0 * w)
        .collect();
    (near.len() >= 3 && near.len() < all.len()).then_some(near)
}

fn points_chart(
    s: &Search,
    c: &Crossing,
    mut points: Vec<&Point>,
    title: String,
) -> Result<String, Error> {
    points.sort_by(|a, b| a.value.total_cmp(&b.value));
    let level = crate::format::percent(s.rules.confidence);
    let series = ValueSeries {
        name: format!(
            "{} per point (mean, {level} {} interval shaded)",
            s.metric,
            s.rules.kind.interval()
        ),
        points: points
            .iter()
            .filter_map(|p| Some((p.value, p.estimate.mean?)))
            .collect(),
        intervals: points
            .iter()
            .filter_map(|p| {
                let (lo, hi) = p.estimate.interval?;
                Some((p.value, lo, hi))
            })
            .collect(),
        dots: false,
    };
    let markers = c
        .estimate
        .map(|e| Marker {
            name: format!("boundary: {} = {}", s.axis.column, format_number(e)),
            x: e,
        })
        .into_iter()
        .collect();
    let shade = c.bracket.map(|(a, b)| {
        (
            format!(
                "bracket: {} to {} ({})",
                format_number(a),
                format_number(b),
                c.status.name()
            ),
            a,
            b,
        )
    });
    numeric::value_chart(&ValueChart {
        title,
        x_label: s.axis.key.clone(),
        y_label: metric_label(&s.metric),
        series: vec![series],
        target: Some((format!("target: {}", format_number(s.target)), s.target)),
        markers,
        shade,
    })
}

/// A metric with its unit, as an axis names it.
fn metric_label(metric: &str) -> String {
    if metric == super::PASS {
        format!("{metric} (share of replications)")
    } else {
        format!("{metric} ({})", crate::report::html::unit_of(metric))
    }
}

/// With two axes: the boundary as a curve over the grid, its bracket as a band.
fn curve_chart(s: &Search) -> Result<Option<String>, Error> {
    let Some(g) = &s.grid else {
        return Ok(None);
    };
    let found: Vec<(f64, f64, (f64, f64))> = s
        .curves
        .iter()
        .filter_map(|c| Some((c.grid?, c.crossing.estimate?, c.crossing.bracket?)))
        .collect();
    let series = ValueSeries {
        name: format!("boundary of {} (bracket shaded)", s.axis.column),
        points: found.iter().map(|(x, e, _)| (*x, *e)).collect(),
        intervals: found.iter().map(|(x, _, (a, b))| (*x, *a, *b)).collect(),
        dots: false,
    };
    let missing: Vec<String> = s
        .curves
        .iter()
        .filter(|c| c.crossing.estimate.is_none())
        .filter_map(|c| c.grid.map(format_number))
        .collect();
    let mut title = format!(
        "Where {} crosses {}: {} against {}",
        s.metric,
        format_number(s.target),
        s.axis.column,
        g.column
    );
    if !missing.is_empty() {
        title.push_str(&format!(" (no crossing at {})", missing.join(", ")));
    }
    Ok(Some(numeric::value_chart(&ValueChart {
        title,
        x_label: g.key.clone(),
        y_label: format!("boundary: {}", s.axis.key),
        series: vec![series],
        target: None,
        markers: Vec::new(),
        shade: None,
    })?))
}

/// With two axes: every point as a cell of a heatmap, the grid's values as
/// rows and the axis values evaluated (sorted) as columns.
fn points_heatmap(s: &Search) -> Result<Option<String>, Error> {
    let Some(g) = &s.grid else {
        return Ok(None);
    };
    let mut xs: Vec<f64> = s
        .curves
        .iter()
        .flat_map(|c| c.crossing.points.iter().map(|p| p.value))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() > 40 {
        return Ok(None);
    }
    let mut cells = Vec::new();
    for (row, c) in s.curves.iter().enumerate() {
        for p in &c.crossing.points {
            if let (Some(m), Some(col)) = (p.estimate.mean, xs.iter().position(|x| *x == p.value)) {
                cells.push((col, row, m));
            }
        }
    }
    Ok(Some(numeric::heatmap(&HeatMap {
        title: format!(
            "{} at every point evaluated (blank: not evaluated)",
            s.metric
        ),
        x_label: s.axis.key.clone(),
        y_label: g.key.clone(),
        value_label: format!("mean {}", metric_label(&s.metric)),
        columns: xs.iter().map(|x| compact(*x)).collect(),
        rows: s.grid_values.iter().map(|v| format_number(*v)).collect(),
        cells,
        scale: None,
    })?))
}

/// A value as a heatmap's column shows it: four significant digits at most.
fn compact(x: f64) -> String {
    let digits = 4 - (x.abs().max(1e-9).log10().floor() as i32 + 1);
    let scale = 10f64.powi(digits.max(0));
    format_number((x * scale).round() / scale)
}

/// The page's charts: those of the crossing table (the search, near the
/// boundary, at twice the run's length; a grid's curve) and those of the
/// points table (a grid's heatmap and its searches).
fn charts(s: &Search) -> Result<(Vec<String>, Vec<String>), Error> {
    let mut crossing_charts = Vec::new();
    let mut point_charts = Vec::new();
    match &s.grid {
        None => {
            if let Some(c) = s.curves.first() {
                crossing_charts.push(search_chart(
                    s,
                    &c.crossing,
                    format!("{} against {}", s.metric, s.axis.column),
                )?);
                if let Some(points) = near(&c.crossing) {
                    crossing_charts.push(points_chart(
                        s,
                        &c.crossing,
                        points,
                        format!(
                            "{} against {}, near the boundary (the points within two bracket widths)",
                            s.metric, s.axis.column
                        ),
                    )?);
                }
            }
        }
        Some(g) => {
            crossing_charts.extend(curve_chart(s)?);
            point_charts.extend(points_heatmap(s)?);
            for c in &s.curves {
                if let Some(v) = c.grid {
                    point_charts.push(search_chart(
                        s,
                        &c.crossing,
                        format!(
                            "{} against {} at {}={}",
                            s.metric,
                            s.axis.column,
                            g.column,
                            format_number(v)
                        ),
                    )?);
                }
            }
        }
    }
    if let (None, Some(l @ Longer::Searched { curves, .. })) = (&s.grid, &s.longer)
        && let Some(c) = curves.first()
    {
        crossing_charts.push(search_chart(
            s,
            &c.crossing,
            format!(
                "{} against {} at twice the run's length ({})",
                s.metric,
                s.axis.column,
                l.keys_text()
            ),
        )?);
    }
    Ok((crossing_charts, point_charts))
}

/// `report.html`.
pub fn page(s: &Search) -> Result<String, Error> {
    let [crossing, points] = <[Table; 2]>::try_from(tables(s))
        .map_err(|_| Error::Other("boundary: two tables expected".into()))?;
    let (crossing_charts, point_charts) = charts(s)?;
    let mut crossing = crossing;
    for c in &s.curves {
        let prefix = match (&s.grid, c.grid) {
            (Some(g), Some(v)) => format!("{}={}: ", g.column, format_number(v)),
            _ => String::new(),
        };
        crossing
            .notes
            .push(format!("{prefix}{}", verdict(s, &c.crossing)));
    }
    crossing.notes.extend(longer_lines(s));
    let heading = Heading {
        title: s.scenario_name.clone(),
        subtitle: format!(
            "Boundary of {} = {} along {} in [{}, {}]",
            s.metric,
            format_number(s.target),
            s.axis.key,
            format_number(s.rules.lo),
            format_number(s.rules.hi)
        ),
        about: Some(match &s.meaning {
            Some(m) => format!("{} {m}.", intro(s, false)),
            None => intro(s, false),
        }),
    };
    crate::report::html::sections_page(
        heading,
        vec![
            Section {
                table: Cow::Owned(crossing),
                file: "crossing.csv".into(),
                charts: crossing_charts,
                grid: false,
            },
            Section {
                table: Cow::Owned(points),
                file: "boundary.csv".into(),
                charts: point_charts,
                grid: s.grid.is_some(),
            },
        ],
    )
}
