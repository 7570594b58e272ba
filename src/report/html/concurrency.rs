//! The chart of `timeseries_concurrency`: per compare row and concurrency
//! limiter, its limit (the window's time-weighted mean, with its lowest and
//! highest as dashed lines when they differ from it) and its mean requests in
//! flight against time, fault windows shaded. Each chart has its own scale: an
//! adaptive limit may sit at 1000 where another sits at 40.

use super::charts::{self, Styled, TimeChart};
use super::{RowTimes, TIME, axes_title, bands, grouped, multiple_width, times_of, window_of};
use crate::error::Error;
use crate::report::{Cell, Table};

/// A level per window: each window's value over its width, in seconds.
fn levels(rows: &[&Vec<Cell>], start: usize, column: usize, w: f64) -> Vec<(f64, f64)> {
    rows.iter()
        .filter_map(|r| Some((r[start].number()?, r[column].number()?)))
        .flat_map(|(s, v)| [(s / 1000.0, v), ((s + w) / 1000.0, v)])
        .collect()
}

pub(super) fn limit_charts(
    t: &Table,
    axes: usize,
    times: &[RowTimes],
) -> Result<Vec<String>, Error> {
    let cols = [
        "window_start_ms",
        "limiter",
        "mean_limit",
        "min_limit",
        "max_limit",
        "mean_in_flight",
    ]
    .map(|c| t.column(c));
    let [
        Some(start),
        Some(lim),
        Some(mean),
        Some(low),
        Some(high),
        Some(flight),
    ] = cols
    else {
        return Ok(Vec::new());
    };
    let w = window_of(t, start);
    // a limiter kept per replica has rows per replica: a chart each
    let replica = t.column("replica");
    // (axes + limiter (+ replica)) -> rows, first-seen order
    let groups = grouped(&t.rows, |row| {
        let mut id: Vec<Cell> = row[..axes].to_vec();
        id.push(row[lim].clone());
        if let Some(r) = replica {
            id.push(row[r].clone());
        }
        id
    });
    let width = multiple_width(groups.len());
    let x_end = t
        .rows
        .iter()
        .filter_map(|r| r[start].number())
        .fold(0.0_f64, f64::max)
        / 1000.0
        + w / 1000.0;
    let mut out = Vec::new();
    for (id, rows) in &groups {
        let series = limit_lines(rows, [start, mean, low, high, flight], w);
        let y_max = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(1.0_f64, f64::max);
        // `gradient2#3`: replica 3's own limit (replicas from 1, as targets)
        let name = match id.get(axes + 1).map(Cell::render) {
            Some(k) if !k.is_empty() => format!("{}#{k}", id[axes].render()),
            _ => id[axes].render(),
        };
        let mut title = format!("Limiter {name}: the limit and the requests in flight");
        if axes > 0 {
            title = format!("{title} ({})", axes_title(t, id, axes));
        }
        let marks = if axes == 0 {
            times.first()
        } else {
            times_of(times, id, axes)
        };
        out.push(charts::time_chart(&TimeChart {
            title,
            x_label: TIME.into(),
            y_label: "requests".into(),
            series,
            bands: bands(marks),
            markers: Vec::new(),
            x_range: 0.0..x_end.max(1.0),
            y_max,
            width,
        })?);
    }
    Ok(out)
}

/// A limiter's lines: its mean limit, its lowest and highest (dashed, when they
/// differ from it anywhere) and its mean requests in flight. `columns`: the
/// window start, the mean, lowest and highest limit, the mean in flight.
fn limit_lines(rows: &[&Vec<Cell>], columns: [usize; 5], w: f64) -> Vec<Styled> {
    let [start, mean, low, high, flight] = columns;
    let mut series = vec![Styled {
        name: "limit (mean)".into(),
        color: 0,
        dashed: false,
        points: levels(rows, start, mean, w),
        interval: Vec::new(),
    }];
    let spread = rows.iter().any(|r| r[low] != r[high]);
    if spread {
        for (column, name) in [(low, "limit (lowest)"), (high, "limit (highest)")] {
            series.push(Styled {
                name: name.into(),
                color: 0,
                dashed: true,
                points: levels(rows, start, column, w),
                interval: Vec::new(),
            });
        }
    }
    series.push(Styled {
        name: "in flight (mean)".into(),
        color: 1,
        dashed: false,
        points: levels(rows, start, flight, w),
        interval: Vec::new(),
    });
    series
}
