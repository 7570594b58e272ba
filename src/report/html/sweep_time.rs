//! The time series of a sweep's report: per compare row, the per-window means of
//! requests per second (goodput, attempts, and each way of ending unanswered that
//! happened) with their confidence intervals as light areas, the row's fault and
//! warm-up windows shaded (from the manifest's `[[timelines]]`).
//!
//! Everything comes from `summary.csv`'s lines `timeseries.window_start_ms_<t>.<column>`
//! (and `.all.<column>` with several workloads): a window's rate is its mean count
//! over its mean `width_ms` (the replications that reached it), the interval
//! scaled alike. Full windows have width `window_ms` in every replication, so
//! there the interval is exactly the count's; the last windows, cut by the runs'
//! ends, are drawn to the mean end, and left out when that is under half a window
//! (as on a run's page).

use super::charts::Styled;
use super::{RowTimes, Section, bands, charted_width, times_of};
use crate::error::Error;
use crate::report::{Cell, Table};

/// (column, legend name, palette colour), in drawing order; the first two always,
/// the others when some window's mean is above zero.
const LINES: [(&str, &str, usize); 6] = [
    ("answered", "answered (goodput)", 2),
    ("attempts", "attempts sent", 0),
    ("timed_out", "timed out", 1),
    ("failed", "failed", 3),
    ("shed", "shed", 4),
    ("rejected", "rejected (429)", 5),
];

/// One window's mean and interval of one column.
#[derive(Debug, Clone, Copy)]
struct Mean {
    mean: f64,
    low: Option<f64>,
    high: Option<f64>,
}

/// One compare row's windows: (start ms, column, mean), and widths by start.
#[derive(Default)]
struct RowSeries {
    axes: Vec<Cell>,
    counts: Vec<(f64, &'static str, Mean)>,
    widths: Vec<(f64, f64)>,
}

/// `timeseries.window_start_ms_1000.answered` (or `..._1000.all.answered`) as
/// (1000, "answered"); other workloads' lines and other metrics give None.
fn parse(metric: &str) -> Option<(f64, String)> {
    // (a fractional start is quoted: `timeseries."window_start_ms_0.50".answered`)
    let parts = crate::table::metric_parts(metric);
    let (start, column) = match &parts[..] {
        [table, start, column] | [table, start, _, column]
            if table == "timeseries" && (parts.len() == 3 || parts[2] == "all") =>
        {
            (start, column)
        }
        _ => return None,
    };
    let start = start.strip_prefix("window_start_ms_")?;
    Some((start.parse().ok()?, column.clone()))
}

/// The `timeseries` section of a sweep's page, when `summary` holds a time series.
pub fn section(summary: &Table, times: &[RowTimes]) -> Result<Option<Section<'static>>, Error> {
    let (Some(m), Some(mean), Some(lo), Some(hi)) = (
        summary.column("metric"),
        summary.column("mean"),
        summary.column("ci_low"),
        summary.column("ci_high"),
    ) else {
        return Ok(None);
    };
    let axes = m;
    let rows = row_series(summary, [m, mean, lo, hi]);
    if rows.iter().all(|s| s.counts.is_empty()) {
        return Ok(None);
    }
    // the full window: the widest mean width (every replication's full windows)
    let w = rows
        .iter()
        .flat_map(|s| s.widths.iter().map(|x| x.1))
        .fold(0.0, f64::max);
    if w <= 0.0 {
        return Ok(None);
    }
    let shown: Vec<_> = LINES
        .iter()
        .filter(|(c, _, _)| {
            *c == "answered"
                || *c == "attempts"
                || rows
                    .iter()
                    .any(|s| s.counts.iter().any(|x| x.1 == *c && x.2.mean > 0.0))
        })
        .collect();

    let mut table = Table::new(
        "timeseries",
        &format!(
            "Per window: requests per second, the mean over the replications (lines) and its {} interval (light areas; table: mean +/- half-width); answered = goodput",
            level(summary)
        ),
        summary.headers[..axes]
            .iter()
            .cloned()
            .chain(["window_start_ms".to_string(), "width_ms".to_string()])
            .chain(shown.iter().map(|(c, _, _)| format!("{c}_per_s")))
            .collect(),
    );
    let (mut y_max, mut x_end): (f64, f64) = (0.0, 0.0);
    let mut built = Vec::new();
    for s in &rows {
        let mut series = Vec::new();
        for &&(column, name, color) in &shown {
            let (points, interval) = rate_line(s, column, w, (&mut y_max, &mut x_end));
            series.push(Styled {
                name: format!("{name} per s"),
                color,
                dashed: false,
                points,
                interval,
            });
        }
        push_rows(&mut table, s, &shown);
        let marks = if axes == 0 {
            times.first()
        } else {
            times_of(times, &s.axes, axes)
        };
        let title = if axes == 0 {
            String::new()
        } else {
            summary.headers[..axes]
                .iter()
                .zip(&s.axes)
                .map(|(h, c)| format!("{h} = {}", c.render()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        built.push((title, series, bands(marks), Vec::new()));
    }
    let many = built.len() > 1;
    let lone_title = format!(
        "Requests per second: mean per window and its {} interval",
        level(summary)
    );
    let charts = super::rate_charts(built, Some(lone_title), x_end, y_max)?;
    table.notes.push(
        "Lines: the mean over the replications per window, light areas: its interval (lower ends below 0 drawn at 0); \
         red: the row's fault windows, grey: its warm-up. A window's rate is its mean count over its mean width_ms \
         (the replications that reached it); the last windows, cut short by the runs' ends, are drawn to the mean end, \
         and left out of the chart when that is under half a window. The counts: summary.csv, lines timeseries.*."
            .into(),
    );
    Ok(Some(Section {
        table: std::borrow::Cow::Owned(table),
        file: "summary.csv".into(),
        charts,
        grid: many,
    }))
}

/// The summary's per-window means, gathered per compare row (first-seen
/// order). `columns`: the metric, the mean and the interval's ends (the axis
/// columns come before the metric's).
fn row_series(summary: &Table, columns: [usize; 4]) -> Vec<RowSeries> {
    let [m, mean, lo, hi] = columns;
    let axes = m;
    let mut rows: Vec<RowSeries> = Vec::new();
    for r in &summary.rows {
        let name = r[m].render();
        let Some((start, column)) = parse(&name) else {
            continue;
        };
        let Some(x) = r[mean].number() else { continue };
        let i = match rows.iter().position(|s| s.axes[..] == r[..axes]) {
            Some(i) => i,
            None => {
                rows.push(RowSeries {
                    axes: r[..axes].to_vec(),
                    ..RowSeries::default()
                });
                rows.len() - 1
            }
        };
        if column == "width_ms" {
            rows[i].widths.push((start, x));
        } else if let Some(&(c, _, _)) = LINES.iter().find(|l| l.0 == column) {
            rows[i].counts.push((
                start,
                c,
                Mean {
                    mean: x,
                    low: r[lo].number(),
                    high: r[hi].number(),
                },
            ));
        }
    }
    rows
}

/// An interval's (x, low, high).
type Spread = (f64, f64, f64);

/// One count's line of a compare row in requests per second, as steps over
/// the charted windows, and its interval (drawn from 0 at the lowest); raises
/// the chart's highest value and its end.
fn rate_line(
    s: &RowSeries,
    column: &str,
    w: f64,
    (y_max, x_end): (&mut f64, &mut f64),
) -> (Vec<(f64, f64)>, Vec<Spread>) {
    let mut points = Vec::new();
    let mut interval = Vec::new();
    for &(start, _, x) in s.counts.iter().filter(|x| x.1 == column) {
        let Some(width) = s.widths.iter().find(|x| x.0 == start).map(|x| x.1) else {
            continue;
        };
        if !charted_width(start, width, w) {
            continue;
        }
        let per_s = 1000.0 / width;
        let (from, to) = (start / 1000.0, (start + width) / 1000.0);
        let v = x.mean * per_s;
        points.extend([(from, v), (to, v)]);
        if let (Some(l), Some(h)) = (x.low, x.high) {
            // a count's interval below 0 is drawn from 0
            let (l, h) = ((l * per_s).max(0.0), h * per_s);
            interval.extend([(from, l, h), (to, l, h)]);
            *y_max = y_max.max(h);
        }
        *y_max = y_max.max(v);
        *x_end = x_end.max(to);
    }
    (points, interval)
}

/// "95 %": the summary's confidence level.
fn level(summary: &Table) -> String {
    summary
        .column("confidence")
        .and_then(|c| summary.rows.first().and_then(|r| r[c].number()))
        .map_or_else(|| "confidence".into(), crate::format::percent)
}

/// The table beside the charts: per window, each charted rate as "mean +/- half".
fn push_rows(table: &mut Table, s: &RowSeries, shown: &[&(&str, &str, usize)]) {
    for &(start, width) in &s.widths {
        let mut row = s.axes.clone();
        row.push(Cell::Num(start));
        row.push(Cell::Num(width));
        for &&(column, _, _) in shown {
            let cell = s
                .counts
                .iter()
                .find(|x| x.0 == start && x.1 == column)
                .filter(|_| width > 0.0)
                .map_or(Cell::Empty, |&(_, _, x)| {
                    let per_s = 1000.0 / width;
                    match (x.low, x.high) {
                        (Some(l), Some(h)) => Cell::Text(format!(
                            "{:.1} +/- {:.1}",
                            x.mean * per_s,
                            (h - l) / 2.0 * per_s
                        )),
                        _ => Cell::Text(format!("{:.1}", x.mean * per_s)),
                    }
                });
            row.push(cell);
        }
        table.push(row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_metrics_are_parsed_for_all_workloads_only() {
        assert_eq!(
            parse("timeseries.window_start_ms_1000.answered"),
            Some((1000.0, "answered".to_string()))
        );
        assert_eq!(
            parse("timeseries.window_start_ms_0.all.timed_out"),
            Some((0.0, "timed_out".to_string()))
        );
        // a fractional window start is a quoted part
        assert_eq!(
            parse("timeseries.\"window_start_ms_0.50\".answered"),
            Some((0.5, "answered".to_string()))
        );
        assert_eq!(parse("timeseries.window_start_ms_0.web.answered"), None);
        assert_eq!(parse("timeseries_services.window_start_ms_0.b.shed"), None);
        assert_eq!(parse("outcomes.answered"), None);
    }
}
