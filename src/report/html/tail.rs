//! The response-time tail of `latency_cdf`: beside the distribution on a linear
//! axis, which cannot tell 99 % from 99.9 %, the same percentiles from 90 % on
//! against `-log10(1 - p)`, so that 90, 99, 99.9 and 99.99 % are evenly spaced.
//! Over ALL requests, as the table is: a failed request is never answered, so a
//! row's line stops at its answered share.

use super::charts;
use super::draw::{self, FONT};
use super::{Table, axes_label, groups};
use crate::error::Error;
use plotters::prelude::*;

/// The tail starts at this percentile (1 on the tail scale).
const FROM: f64 = 90.0;

/// The tail chart is drawn when its slowest time is more than this many times
/// its fastest (see [`worth_drawing`]).
const SPREAD: f64 = 1.05;

/// A compare row's tail: its name and its (percentile %, ms) points.
type Line = (String, Vec<(f64, f64)>);

/// Where percentile `p` (%) sits on the tail scale: `-log10(1 - p / 100)`, so
/// 90 % is 1, 99 % is 2, 99.9 % is 3.
fn tail_x(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// "99.9 %": the percentile at whole step `k` of the tail scale (`1 - 10^-k`).
fn tick_label(k: i64) -> String {
    match k {
        ..=0 => String::new(),
        1 => "90 %".into(),
        _ => format!(
            "99{}{} %",
            if k > 2 { "." } else { "" },
            "9".repeat(k as usize - 2)
        ),
    }
}

/// Each compare row's points from [`FROM`] up to (not at) 100 %: the
/// percentiles with a time (a failed request is never answered: none above the
/// answered share), and the answered share itself where the line stops.
fn lines(t: &Table, axes: usize) -> Option<Vec<Line>> {
    let (p, ms) = (t.column("percentile")?, t.column("latency_ms")?);
    Some(
        groups(t, axes)
            .into_iter()
            .map(|(g, rows)| {
                let points = rows
                    .iter()
                    .filter_map(|r| Some((r[p].number()?, r[ms].number()?)))
                    .filter(|&(p, _)| (FROM..100.0).contains(&p))
                    .collect();
                (if g.is_empty() { "requests".into() } else { g }, points)
            })
            .collect(),
    )
}

/// Whether the tail chart adds to the distribution: some time in the tails of
/// all rows is more than [`SPREAD`] times another, i.e. a row's tail rises or
/// the rows' tails differ. Flat tails at one time (every request as fast as
/// the next) would draw flat lines on top of each other.
fn worth_drawing(lines: &[Line]) -> bool {
    let (lo, hi) = lines
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.1))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    hi.is_finite() && hi > lo * SPREAD
}

/// The tail chart of a `latency_cdf` table with `axes` compare-axis columns,
/// when [`worth_drawing`].
pub(super) fn tail_chart(t: &Table, axes: usize) -> Result<Option<String>, Error> {
    let Some(lines) = lines(t, axes) else {
        return Ok(None);
    };
    if !worth_drawing(&lines) {
        return Ok(None);
    }
    let title = if axes == 0 {
        "Response-time tail".to_string()
    } else {
        format!("Response-time tail per row ({})", axes_label(t, axes))
    };
    draw(&title, &lines).map(Some)
}

/// The time axis of the tail chart: linear from 0, or in decades when the
/// slowest time is [`DECADES_FROM`] times the fastest or more (a row that
/// hedges at 6 ms beside one that waits a second: on a linear axis the fast
/// rows' lines would lie on top of each other at the bottom).
struct TimeAxis {
    log: bool,
    range: std::ops::Range<f64>,
}

/// See [`TimeAxis`].
const DECADES_FROM: f64 = 10.0;

impl TimeAxis {
    fn of(lines: &[Line]) -> TimeAxis {
        let ys = || {
            lines
                .iter()
                .flat_map(|(_, points)| points.iter().map(|p| p.1))
        };
        let lo = ys().fold(f64::INFINITY, f64::min);
        let hi = ys().fold(f64::NEG_INFINITY, f64::max);
        if lo > 0.0 && hi >= lo * DECADES_FROM {
            let (a, b) = (lo.log10().floor(), hi.log10().ceil());
            TimeAxis {
                log: true,
                range: a..b.max(a + 1.0),
            }
        } else {
            TimeAxis {
                log: false,
                range: charts::range(ys(), true),
            }
        }
    }

    /// Where `ms` is drawn.
    fn y(&self, ms: f64) -> f64 {
        if self.log { ms.log10() } else { ms }
    }

    /// The tick at `v`: in decades, only the whole ones (10, 100, 1000 ms).
    fn label(&self, v: &f64) -> String {
        if !self.log {
            return crate::report::format_number((v * 1000.0).round() / 1000.0);
        }
        if (v - v.round()).abs() > 1e-9 {
            return String::new();
        }
        let k = v.round() as i32;
        format!("{:.*}", (-k).max(0) as usize, 10f64.powi(k))
    }
}

/// The chart: a line per row (its colour as in the distribution chart), the
/// note that a line stops at its row's answered share, then the legend.
fn draw(title: &str, lines: &[Line]) -> Result<String, Error> {
    let entries = lines.len() as u32 + 1;
    let height = 300 + 18 * entries;
    let x_end = lines
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| tail_x(p.0)))
        .fold(4.0_f64, f64::max);
    let time = TimeAxis::of(lines);
    draw::svg(height, |root| {
        let (plot, legend) = root.split_vertically(300);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.85..x_end + 0.15, time.range.clone())
            .map_err(|e| e.to_string())?;
        let whole = |v: &f64| {
            if (v - v.round()).abs() < 1e-9 {
                tick_label(v.round() as i64)
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        if time.log {
            let decades = (time.range.end - time.range.start).round() as usize;
            mesh.y_labels(decades + 1);
        }
        mesh.x_desc("percentile of ALL requests (tail scale)")
            .y_desc(if time.log {
                "answered within (ms, log scale)"
            } else {
                "answered within (ms)"
            })
            .x_labels(x_end.ceil() as usize)
            .x_label_formatter(&whole)
            .y_label_formatter(&|v: &f64| time.label(v))
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, (_, points)) in lines.iter().enumerate() {
            let col = draw::color(i);
            let points: Vec<(f64, f64)> = points.iter().map(|&(p, ms)| (tail_x(p), time.y(ms))).collect();
            let style = col.stroke_width(2);
            if draw::dashed(i) {
                chart.draw_series(std::iter::once(plotters::element::DashedPathElement::new(
                    points.clone(),
                    8,
                    3,
                    style,
                )))
            } else {
                chart.draw_series(LineSeries::new(points.iter().copied(), style))
            }
            .map_err(|e| e.to_string())?;
            chart
                .draw_series(points.iter().map(|p| Circle::new(*p, 3, col.filled())))
                .map_err(|e| e.to_string())?;
        }
        let (note, rest) = legend.split_vertically(18);
        note.draw(&Text::new(
            "Over ALL requests: a failed request is never answered, so a line stops at its row's answered share",
            (10, 6),
            (FONT, 12).into_font().color(&RGBColor(85, 85, 85)),
        ))
        .map_err(|e| e.to_string())?;
        let names: Vec<String> = lines
            .iter()
            .map(|(name, points)| match points.is_empty() {
                true => format!("{name}: fewer than {FROM} % answered, no point"),
                false => name.clone(),
            })
            .collect();
        charts::legend_rows(
            &rest,
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_str(), draw::color(i), draw::dashed(i))),
        )
    })
    .map_err(draw::fail(title))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Cell;

    /// The cells a test table is made of.
    fn cdf(rows: &[(&str, f64, Option<f64>)]) -> Table {
        let mut t = Table::new(
            "latency_cdf",
            "L",
            ["variant", "percentile", "latency_ms"]
                .map(String::from)
                .to_vec(),
        );
        for &(v, p, ms) in rows {
            t.push(vec![
                v.into(),
                Cell::Num(p),
                ms.map_or(Cell::Empty, Cell::Num),
            ]);
        }
        t
    }

    #[test]
    fn the_tail_scale_spaces_90_99_and_99_9_evenly() {
        for (p, x) in [(90.0, 1.0), (99.0, 2.0), (99.9, 3.0), (99.99, 4.0)] {
            assert!((tail_x(p) - x).abs() < 1e-9, "{p}");
        }
        let labels: Vec<String> = (1..=5).map(tick_label).collect();
        assert_eq!(labels, ["90 %", "99 %", "99.9 %", "99.99 %", "99.999 %"]);
    }

    #[test]
    fn times_spanning_ten_times_or_more_are_drawn_in_decades() {
        let line = |ms: &[f64]| ("r".to_string(), ms.iter().map(|&m| (99.0, m)).collect());
        let axis = TimeAxis::of(&[line(&[1.0, 6.0]), line(&[11.0, 1000.0])]);
        assert!(axis.log);
        assert_eq!(axis.range, 0.0..3.0);
        assert_eq!(axis.y(100.0), 2.0);
        let ticks: Vec<String> = [0.0, 0.5, 1.0, 3.0].iter().map(|v| axis.label(v)).collect();
        assert_eq!(ticks, ["1", "", "10", "1000"]);
        assert_eq!(TimeAxis::of(&[line(&[0.05, 0.9])]).label(&-2.0), "0.01");
        let axis = TimeAxis::of(&[line(&[35.0, 92.0])]);
        assert!(!axis.log, "within ten times: linear from 0");
        assert_eq!(axis.range.start, 0.0);
        assert_eq!(axis.y(92.0), 92.0);
    }

    #[test]
    fn a_line_stops_at_its_answered_share_and_flat_tails_are_not_drawn() {
        let t = cdf(&[
            ("a", 50.0, Some(10.0)),
            ("a", 90.0, Some(10.0)),
            ("a", 99.0, Some(10.0)),
            ("a", 99.9, Some(10.2)),
            ("a", 100.0, Some(40.0)),
            ("b", 90.0, Some(10.0)),
            ("b", 99.0, Some(10.0)),
            ("b", 99.1, Some(10.1)),
            ("b", 99.9, None),
        ]);
        let l = lines(&t, 1).unwrap();
        assert_eq!(
            l[0].1,
            [(90.0, 10.0), (99.0, 10.0), (99.9, 10.2)],
            "not 100 %"
        );
        assert_eq!(l[1].1, [(90.0, 10.0), (99.0, 10.0), (99.1, 10.1)]);
        assert!(!worth_drawing(&l), "within 5 %");
        assert_eq!(tail_chart(&t, 1).unwrap(), None);
        let t = cdf(&[
            ("a", 90.0, Some(10.0)),
            ("b", 90.0, Some(12.0)),
            ("c", 50.0, Some(1.0)),
        ]);
        let svg = tail_chart(&t, 1).unwrap().expect("the rows differ");
        for text in [
            "Response-time tail per row (variant)",
            "99.99 %",
            "answered share",
            "c: fewer than 90 % answered, no point",
        ] {
            assert!(svg.contains(text), "{text}");
        }
    }
}
