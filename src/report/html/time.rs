//! The page's charts against time: a compare row's marks (warm-up, faults,
//! the drain after the sending), requests per second per window for the
//! clients, per key (services, call sites, replicas) and per limiter, drawn
//! as small multiples on shared scales.

use super::*;

/// What the time-series charts of one compare row mark: its warm-up and fault
/// windows, taken from its model (the tables hold the series, not the scenario).
/// A sweep keeps them in its manifest (`[[timelines]]`), so a merge has them too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowTimes {
    /// The row's compare-axis labels, as in the tables' axis cells.
    pub labels: Vec<String>,
    /// `scenario.warmup_ms`.
    pub warmup_ms: f64,
    /// `[[faults]]` in file order.
    pub faults: Vec<FaultWindow>,
}

/// One fault's window, named for the legend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultWindow {
    /// "latency_factor 3 on backend".
    pub what: String,
    /// Its start (`at_ms`).
    pub from_ms: f64,
    /// Its end (`at_ms + for_ms`).
    pub to_ms: f64,
}

/// How wide each of `n` time charts is drawn: one full width, two or more side
/// by side (small multiples, three to a row of the page).
pub(super) fn multiple_width(n: usize) -> u32 {
    match n {
        0 | 1 => draw::WIDTH,
        2 => 560,
        _ => 380,
    }
}

/// The time axis label.
pub(super) const TIME: &str = "time (s)";

/// "variant = codel, faults.0.for_ms = 500": a group's title from its axis cells.
pub(super) fn axes_title(t: &Table, row: &[Cell], axes: usize) -> String {
    t.headers[..axes]
        .iter()
        .zip(row)
        .map(|(h, c)| format!("{h} = {}", c.render()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The window length of a time-series table: the smallest step between window
/// starts (1000 ms with a single window).
pub(super) fn window_of(t: &Table, start: usize) -> f64 {
    let mut starts: Vec<f64> = t.rows.iter().filter_map(|r| r[start].number()).collect();
    starts.sort_by(f64::total_cmp);
    starts.dedup();
    starts
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .min_by(f64::total_cmp)
        .unwrap_or(1000.0)
}

/// The shaded bands of a compare row: its warm-up, then its faults.
pub(super) fn bands(times: Option<&RowTimes>) -> Vec<Band> {
    let Some(r) = times else { return Vec::new() };
    let mut out = Vec::new();
    if r.warmup_ms > 0.0 {
        out.push(Band {
            name: format!("warm-up (0 to {} s)", tick(&(r.warmup_ms / 1000.0))),
            label: "warm-up".into(),
            from: 0.0,
            to: r.warmup_ms / 1000.0,
            warmup: true,
        });
    }
    for (i, f) in r.faults.iter().enumerate() {
        out.push(Band {
            name: format!(
                "fault {i}: {} ({} to {} s)",
                f.what,
                tick(&(f.from_ms / 1000.0)),
                tick(&(f.to_ms / 1000.0))
            ),
            label: format!("fault {i}"),
            from: f.from_ms / 1000.0,
            to: f.to_ms / 1000.0,
            warmup: false,
        });
    }
    out
}

pub(super) fn tick(v: &f64) -> String {
    crate::report::format_number((v * 1000.0).round() / 1000.0)
}

/// The marks of the compare row whose labels the row `row` starts with.
pub(super) fn times_of<'a>(
    times: &'a [RowTimes],
    row: &[Cell],
    axes: usize,
) -> Option<&'a RowTimes> {
    times
        .iter()
        .find(|r| r.labels.len() == axes && r.labels.iter().zip(row).all(|(l, c)| *l == c.render()))
}

/// Rows of a per-workload table that count every workload: those with
/// `workload = all` when the table has such a column and rows (all rows else).
pub(super) fn every_workload(t: &Table) -> Vec<&Vec<Cell>> {
    // the whole run's rows of a per-workload table (as `outcomes.csv`)
    let all = "all";
    match t.column("workload") {
        Some(w) if t.rows.iter().any(|r| r[w].render() == all) => {
            t.rows.iter().filter(|r| r[w].render() == all).collect()
        }
        _ => t.rows.iter().collect(),
    }
}

/// Per compare row, requests per second against time: answered (goodput),
/// attempts (and first tries when retries make them differ), and each way of
/// ending unanswered that happened; every fault window shaded and labelled, the
/// warm-up shaded, and each fault's recovery (recovery.csv) as a dashed line.
/// One chart per compare row (small multiples on shared scales).
pub(super) fn timeseries_charts(
    t: &Table,
    recovery: Option<&Table>,
    axes: usize,
    times: &[RowTimes],
) -> Result<Vec<String>, Error> {
    let Some(start) = t.column("window_start_ms") else {
        return Ok(Vec::new());
    };
    let w = window_of(t, start);
    let ends = run_ends(Some(t), axes);
    let rows = every_workload(t);
    let nonzero = |column: &str| {
        t.column(column)
            .is_some_and(|c| rows.iter().any(|r| r[c].number().unwrap_or(0.0) > 0.0))
    };
    let differ = match (t.column("first_tries"), t.column("attempts")) {
        (Some(a), Some(b)) => rows.iter().any(|r| r[a] != r[b]),
        _ => false,
    };
    // (column, legend name, palette colour)
    let mut lines: Vec<(&str, &str, usize)> = vec![
        ("answered", "answered (goodput)", 2),
        ("attempts", "attempts sent", 0),
    ];
    if differ {
        lines.push(("first_tries", "first tries sent", 9));
    }
    for (column, name, col) in [
        ("timed_out", "timed out", 1),
        ("failed", "failed", 3),
        ("shed", "shed", 4),
        ("rejected", "rejected (429)", 5),
    ] {
        if nonzero(column) {
            lines.push((column, name, col));
        }
    }
    let groups = grouped(rows, |row| group_name(row, axes, ""));
    let mut y_max: f64 = 0.0;
    let mut x_end: f64 = 0.0;
    let mut charts = Vec::new();
    for (_, rows) in &groups {
        let series: Vec<Styled> = lines
            .iter()
            .filter_map(|&(column, name, color)| {
                let c = t.column(column)?;
                let points = steps(rows, start, c, w, end_of(&ends, rows[0], axes));
                Some(Styled {
                    name: format!("{name} per s"),
                    color,
                    dashed: false,
                    points,
                    interval: Vec::new(),
                })
            })
            .collect();
        for s in &series {
            for p in &s.points {
                y_max = y_max.max(p.1);
                x_end = x_end.max(p.0);
            }
        }
        let first = rows[0];
        let marks = if axes == 0 {
            times.first()
        } else {
            times_of(times, first, axes)
        };
        let markers = recovery
            .map(|rec| recovered(rec, first, axes))
            .unwrap_or_default();
        let mut shaded = bands(marks);
        let end = end_of(&ends, first, axes);
        shaded.extend(recovery.and_then(|rec| drain(rec, first, axes, end, w)));
        charts.push((axes_title(t, first, axes), series, shaded, markers));
    }
    rate_charts(
        charts,
        Some("Requests per second: goodput, failures and attempts".into()),
        x_end,
        y_max,
    )
}

/// One time-series chart's title, lines, shaded bands and markers.
pub(super) type RateChart = (String, Vec<Styled>, Vec<Band>, Vec<Marker>);

/// One time-series chart of requests per second per group ([`RateChart`]), as
/// small multiples on shared scales (times up to `x_end` s,
/// rates up to `y_max`); a chart alone takes `lone_title` when given. The run
/// page's client and limiter windows and the sweep page's means draw through it.
pub(super) fn rate_charts(
    groups: Vec<RateChart>,
    lone_title: Option<String>,
    x_end: f64,
    y_max: f64,
) -> Result<Vec<String>, Error> {
    labelled_rate_charts(groups, lone_title, "requests per second", x_end, y_max)
}

/// [`rate_charts`] with its own label of the rate axis.
pub(super) fn labelled_rate_charts(
    groups: Vec<RateChart>,
    lone_title: Option<String>,
    y_label: &str,
    x_end: f64,
    y_max: f64,
) -> Result<Vec<String>, Error> {
    let lone = groups.len() == 1;
    let width = multiple_width(groups.len());
    groups
        .into_iter()
        .map(|(title, series, bands, markers)| {
            charts::time_chart(&TimeChart {
                title: match (&lone_title, lone) {
                    (Some(t), true) => t.clone(),
                    _ => title,
                },
                x_label: TIME.into(),
                y_label: y_label.into(),
                series,
                bands,
                markers,
                x_range: 0.0..x_end.max(1.0),
                y_max,
                width,
            })
        })
        .collect()
}

/// A count column per second as a step line against time (s): each window level
/// over its width, so that a change lines up with the fault bands. The last
/// window ends at the run's end (`end_ms`, when known): it is drawn only that far
/// and its count is a rate over that part, so the line does not dip at the very
/// end.
pub(super) fn steps(
    rows: &[&Vec<Cell>],
    start: usize,
    column: usize,
    w: f64,
    end_ms: Option<f64>,
) -> Vec<(f64, f64)> {
    let windows: Vec<(f64, f64, f64)> = rows
        .iter()
        .filter_map(|r| {
            let s = r[start].number()?;
            let width = end_ms.map_or(w, |e| crate::analysis::timeseries::width_ms(s, w, e));
            Some((s, width, r[column].number()?))
        })
        .filter(|&(s, width, _)| charted_width(s, width, w))
        .collect();
    // a long run: k neighbouring windows per step, their counts over their widths
    let k = windows.len().div_ceil(MAX_STEPS).max(1);
    windows
        .chunks(k)
        .map(|c| {
            let width: f64 = c.iter().map(|x| x.1).sum();
            let count: f64 = c.iter().map(|x| x.2).sum();
            (c[0].0, width, count * 1000.0 / width)
        })
        .flat_map(|(s, width, v)| [(s / 1000.0, v), ((s + width) / 1000.0, v)])
        .collect()
}

/// Whether a window of `width` ms (of `w`) starting at `start` is charted: a last
/// window cut to less than half its width by the run's end is not (a rate over a
/// few ms of draining would dwarf the rest), unless it is the only window. The
/// CSV files keep it.
pub(super) fn charted_width(start: f64, width: f64, w: f64) -> bool {
    width > 0.0 && (width >= w / 2.0 || start == 0.0)
}

/// Each compare row's run end (ms), from the `width_ms` column of `timeseries`:
/// (the row's axis cells, the end of its last window).
pub(super) fn run_ends(t: Option<&Table>, axes: usize) -> Vec<(Vec<Cell>, f64)> {
    let Some(t) = t else { return Vec::new() };
    let (Some(start), Some(width)) = (t.column("window_start_ms"), t.column("width_ms")) else {
        return Vec::new();
    };
    let mut out: Vec<(Vec<Cell>, f64)> = Vec::new();
    for r in &t.rows {
        let Some(end) = r[start].number().zip(r[width].number()).map(|(s, w)| s + w) else {
            continue;
        };
        match out.iter_mut().find(|(k, _)| k[..] == r[..axes]) {
            Some((_, e)) => *e = e.max(end),
            None => out.push((r[..axes].to_vec(), end)),
        }
    }
    out
}

/// The run end of the compare row `row` starts with, among `ends`.
pub(super) fn end_of(ends: &[(Vec<Cell>, f64)], row: &[Cell], axes: usize) -> Option<f64> {
    ends.iter()
        .find(|(k, _)| k[..] == row[..axes])
        .map(|(_, e)| *e)
}

/// The windows of the compare row `row` that no recovery figure reads
/// (recovery.csv `judged_until_ms`: the drain after the workloads stopped
/// sending) up to the run's `end` (ms), shaded grey as the warm-up is; none
/// when less than half a window (`w` ms) of the run lies past them.
pub(super) fn drain(
    rec: &Table,
    row: &[Cell],
    axes: usize,
    end: Option<f64>,
    w: f64,
) -> Option<Band> {
    let c = rec.column("judged_until_ms")?;
    let until = (rec.rows.iter())
        .filter(|r| r[..axes] == row[..axes])
        .find_map(|r| r[c].number())?;
    let end = end?;
    (end - until >= w / 2.0).then(|| Band {
        name: format!(
            "after the workloads stopped sending ({} to {} s): no recovery figure reads it",
            tick(&(until / 1000.0)),
            tick(&(end / 1000.0))
        ),
        label: "drain".into(),
        from: until / 1000.0,
        to: end / 1000.0,
        warmup: true,
    })
}

/// The recovery of each fault of the compare row `row` (recovery.csv), as a
/// marker at its `recovered_at_ms`.
pub(super) fn recovered(rec: &Table, row: &[Cell], axes: usize) -> Vec<Marker> {
    let (Some(f), Some(at)) = (rec.column("fault"), rec.column("recovered_at_ms")) else {
        return Vec::new();
    };
    rec.rows
        .iter()
        .filter(|r| r[..axes] == row[..axes])
        .filter_map(|r| {
            let x = r[at].number()? / 1000.0;
            Some(Marker {
                name: format!("recovered from fault {} ({} s)", r[f].render(), tick(&x)),
                x,
            })
        })
        .collect()
}

/// Per compare row and limiter, passes and rejects per second against time: per
/// bucket key when it has at most [`KEYS_CHARTED`] keys (passed solid, rejected
/// dashed in the key's colour), else the limiter's own; fault windows shaded.
pub(super) fn limiter_window_charts(
    t: &Table,
    ends: &[(Vec<Cell>, f64)],
    axes: usize,
    times: &[RowTimes],
) -> Result<Vec<String>, Error> {
    let (Some(start), Some(lim), Some(key), Some(pass), Some(rej)) = (
        t.column("window_start_ms"),
        t.column("limiter"),
        t.column("key"),
        t.column("passed"),
        t.column("rejected"),
    ) else {
        return Ok(Vec::new());
    };
    let w = window_of(t, start);
    let replica = t.column("replica");
    // (axes + limiter) -> key (or replica) -> rows, first-seen order
    let key_of = |row: &[Cell]| match replica.map(|r| &row[r]) {
        // a replica's rows of a limiter kept per replica: a line of their own
        Some(r) if *r != Cell::Empty => format!("replica {}", r.render()),
        _ => row[key].render(),
    };
    let charts: Vec<(Vec<Cell>, KeyRows)> = grouped(&t.rows, |row| {
        let mut id: Vec<Cell> = row[..axes].to_vec();
        id.push(row[lim].clone());
        id
    })
    .into_iter()
    .map(|(id, rows)| (id, grouped(rows, key_of)))
    .collect();
    let all = crate::analysis::timeseries::ALL_KEYS;
    let mut built = Vec::new();
    let (mut y_max, mut x_end): (f64, f64) = (0.0, 0.0);
    for (id, keys) in &charts {
        let per_key = keys.len() > 1 && keys.len() - 1 <= KEYS_CHARTED;
        let shown: Vec<&(String, Vec<&Vec<Cell>>)> =
            keys.iter().filter(|(k, _)| (k == all) != per_key).collect();
        let mut series = Vec::new();
        for (i, (k, rows)) in shown.iter().enumerate() {
            for (column, what, dashed) in [(pass, "passed", false), (rej, "rejected", true)] {
                let points = steps(rows, start, column, w, end_of(ends, id, axes));
                if dashed && points.iter().all(|p| p.1 == 0.0) {
                    continue;
                }
                for p in &points {
                    y_max = y_max.max(p.1);
                    x_end = x_end.max(p.0);
                }
                let name = if k == all {
                    format!("{what} per s")
                } else {
                    format!("{k}: {what} per s")
                };
                series.push(Styled {
                    name,
                    color: if per_key { i } else { usize::from(dashed) * 3 },
                    dashed,
                    points,
                    interval: Vec::new(),
                });
            }
        }
        let limiter = id[axes].render();
        let mut title = format!("Limiter {limiter}: passes and rejects per second");
        if per_key {
            let replicas = shown
                .iter()
                .filter(|(k, _)| k.starts_with("replica "))
                .count();
            title.push_str(match replicas {
                0 => " per key",
                n if n == shown.len() => " per replica",
                _ => " per key and replica",
            });
        }
        if axes > 0 {
            title = format!("{title} ({})", axes_title(t, id, axes));
        }
        let marks = if axes == 0 {
            times.first()
        } else {
            times_of(times, id, axes)
        };
        built.push((title, series, bands(marks), Vec::new()));
    }
    rate_charts(built, None, x_end, y_max)
}

/// The rows of one chart by key, first-seen order.
pub(super) type KeyRows<'a> = Vec<(String, Vec<&'a Vec<Cell>>)>;

/// What [`keyed_rate_charts`] draws: a line per key (the `keys` columns'
/// values joined by `join`) of the count column `value`, per second.
pub(super) struct KeyedRates<'a> {
    pub(super) keys: &'a [&'a str],
    /// " -> " between a caller and its target; "#" between a service and its
    /// replica (`checkout#1`, as faults name a replica).
    pub(super) join: &'a str,
    pub(super) value: &'a str,
    /// The charts' title, before the compare row's labels.
    pub(super) what: &'a str,
    pub(super) y_label: &'a str,
}

/// A chart draws at most this many lines (the keys with the largest counts
/// over the whole table; its title says so).
pub(super) const LINES_CHARTED: usize = 20;

/// Per compare row, a count column per second against time, one line per key
/// (a server or dependency of `timeseries_services`, a call site of
/// `timeseries_calls`): each key in the same colour in every chart (dashed
/// past the palette's ten), fault windows and the warm-up shaded, each
/// fault's recovery (recovery.csv) a dashed line; small multiples on shared
/// scales.
pub(super) fn keyed_rate_charts(
    t: &Table,
    k: &KeyedRates,
    recovery: Option<&Table>,
    ends: &[(Vec<Cell>, f64)],
    axes: usize,
    times: &[RowTimes],
) -> Result<Vec<String>, Error> {
    let (Some(start), Some(value)) = (t.column("window_start_ms"), t.column(k.value)) else {
        return Ok(Vec::new());
    };
    let Some(keys) = k
        .keys
        .iter()
        .map(|c| t.column(c))
        .collect::<Option<Vec<usize>>>()
    else {
        return Ok(Vec::new());
    };
    let w = window_of(t, start);
    let key_of = |row: &[Cell]| {
        keys.iter()
            .map(|&c| row[c].render())
            .collect::<Vec<_>>()
            .join(k.join)
    };
    // every key in first-seen order with its total, to pick the lines and
    // give each its colour
    let mut totals: Vec<(String, f64)> = Vec::new();
    for row in &t.rows {
        let (name, n) = (key_of(row), row[value].number().unwrap_or(0.0));
        match totals.iter_mut().find(|(k, _)| *k == name) {
            Some((_, total)) => *total += n,
            None => totals.push((name, n)),
        }
    }
    let mut busiest: Vec<usize> = (0..totals.len()).collect();
    busiest.sort_by(|&a, &b| totals[b].1.total_cmp(&totals[a].1).then(a.cmp(&b)));
    busiest.truncate(LINES_CHARTED);
    let charted = |name: &str| {
        totals
            .iter()
            .position(|(k, _)| k == name)
            .filter(|i| busiest.contains(i))
    };
    let busiest_only = (totals.len() > LINES_CHARTED)
        .then(|| format!("the {LINES_CHARTED} busiest of {}", totals.len()));
    let what = match &busiest_only {
        Some(b) => format!("{} ({b})", k.what),
        None => k.what.to_string(),
    };
    // (axes) -> key -> rows, first-seen order
    let charts: Vec<(Vec<Cell>, KeyRows)> = grouped(&t.rows, |row| row[..axes].to_vec())
        .into_iter()
        .map(|(id, rows)| (id, grouped(rows, key_of)))
        .collect();
    let mut built = Vec::new();
    let (mut y_max, mut x_end): (f64, f64) = (0.0, 0.0);
    for (id, lines) in &charts {
        let mut series = Vec::new();
        for (name, rows) in lines {
            let Some(i) = charted(name) else { continue };
            let points = steps(rows, start, value, w, end_of(ends, id, axes));
            for p in &points {
                y_max = y_max.max(p.1);
                x_end = x_end.max(p.0);
            }
            series.push(Styled {
                name: name.clone(),
                color: i,
                dashed: (i / 10) % 2 == 1,
                points,
                interval: Vec::new(),
            });
        }
        // a small multiple is titled by its compare row (the section says what)
        let title = match &busiest_only {
            Some(b) => format!("{} ({b})", axes_title(t, id, axes)),
            None => axes_title(t, id, axes),
        };
        let marks = if axes == 0 {
            times.first()
        } else {
            times_of(times, id, axes)
        };
        let markers = recovery
            .map(|rec| recovered(rec, id, axes))
            .unwrap_or_default();
        built.push((title, series, bands(marks), markers));
    }
    labelled_rate_charts(built, Some(what), k.y_label, x_end, y_max)
}

/// A limiter's keys get a line each up to this many (else its own lines only).
pub(super) const KEYS_CHARTED: usize = 6;
