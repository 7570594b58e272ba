//! Charts as inline SVG, drawn with plotters' SVG backend. Text is written as SVG
//! `<text>` elements in a generic font family and laid out with plotters' built-in
//! size estimate, so no system font is read: the same data give the same bytes on
//! every machine.
//!
//! Four kinds: lines (ladder curves, distributions) with optional vertical
//! markers, stacked horizontal bars (limiter passes and rejects), forest plots
//! (means with their intervals), and time charts (lines against time over shaded
//! fault and warm-up windows, optionally with interval areas).

use super::draw::{
    COMPACT_KEYS, FONT, ROW_KEYS, Sample, color, dashed, fail, marker_color, svg, svg_sized, tick,
};
use crate::error::Error;
use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordi32};
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// A named line through points (x, y).
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A vertical dashed line at `x`, named in the legend (a ladder finding).
#[derive(Debug, Clone)]
pub struct Marker {
    pub name: String,
    pub x: f64,
}

#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
}

/// One bar made of stacked parts (e.g. passed then rejected).
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub parts: Vec<f64>,
    /// Written at the bar's end (a small bar's figure), when given.
    pub end: Option<String>,
}

#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The legend name of each part.
    pub parts: Vec<String>,
    pub bars: Vec<Bar>,
    /// The palette colour of the first part (a chart of some of another
    /// chart's parts keeps their colours).
    pub first_color: usize,
}

/// One line of a forest plot: a mean and its interval.
#[derive(Debug, Clone)]
pub struct Interval {
    pub label: String,
    pub mean: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct Forest {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub rows: Vec<Interval>,
    /// Draw the line x = 0 (paired differences: no difference).
    pub zero_line: bool,
}

/// `lo..hi` with a margin, never empty.
pub(super) fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> std::ops::Range<f64> {
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo < 1e-9 {
        hi += 1.0;
        if !from_zero || lo < 0.0 {
            lo -= 1.0;
        }
    }
    let pad = (hi - lo) * 0.05;
    let lo = if from_zero && lo >= 0.0 { lo } else { lo - pad };
    lo..hi + pad
}

/// Pixels a label column needs for `labels` (about 7 px a character at 12 px).
fn label_width(labels: impl Iterator<Item = usize>) -> u32 {
    (labels.max().unwrap_or(4) as u32 * 7 + 16).clamp(48, 300)
}

pub fn line_chart(c: &LineChart) -> Result<String, Error> {
    // the legend sits below the plot: one line per entry
    let entries = c.series.len() + c.markers.len();
    let height = 300 + 18 * entries as u32;
    svg(height, |root| {
        let (plot, legend) = root.split_vertically(300);
        let xs = c
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(c.markers.iter().map(|m| m.x));
        let ys = c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
        let mut chart = ChartBuilder::on(&plot)
            .caption(&c.title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(range(xs, false), range(ys, true))
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(&c.x_label)
            .y_desc(&c.y_label)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| e.to_string())?;
        let y_range = chart.y_range();
        for (i, s) in c.series.iter().enumerate() {
            let col = color(i);
            if dashed(i) {
                chart
                    .draw_series(std::iter::once(DashedPathElement::new(
                        s.points.clone(),
                        8,
                        3,
                        col.stroke_width(2),
                    )))
                    .map_err(|e| e.to_string())?;
            } else {
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().copied(),
                        col.stroke_width(2),
                    ))
                    .map_err(|e| e.to_string())?;
            }
            chart
                .draw_series(s.points.iter().map(|p| Circle::new(*p, 3, col.filled())))
                .map_err(|e| e.to_string())?;
        }
        for (k, m) in c.markers.iter().enumerate() {
            let col = marker_color(k);
            chart
                .draw_series(std::iter::once(DashedPathElement::new(
                    vec![(m.x, y_range.start), (m.x, y_range.end)],
                    6,
                    4,
                    col.stroke_width(2),
                )))
                .map_err(|e| e.to_string())?;
        }
        legend_rows(
            &legend,
            c.series
                .iter()
                .enumerate()
                .map(|(i, s)| (s.name.as_str(), color(i), dashed(i)))
                .chain(
                    c.markers
                        .iter()
                        .enumerate()
                        .map(|(k, m)| (m.name.as_str(), marker_color(k), true)),
                ),
        )
    })
    .map_err(fail(&c.title))
}

/// The legend below a chart: a line sample (dashed for markers) and the name.
pub(super) fn legend_rows<'a>(
    area: &DrawingArea<SVGBackend, Shift>,
    entries: impl Iterator<Item = (&'a str, RGBColor, bool)>,
) -> Result<(), String> {
    for (i, (name, col, dashed)) in entries.enumerate() {
        let sample = if dashed {
            Sample::Dashed(col)
        } else {
            Sample::Line(col)
        };
        ROW_KEYS.draw(area, sample, name, (70, 6 + 18 * i as i32))?;
    }
    Ok(())
}

/// The mesh of a chart with one row per label (row 0 at the top), a number axis
/// across: bar charts and forest plots.
fn row_mesh<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, SegmentedCoord<RangedCoordi32>>>,
    x_label: &str,
    y_label: &str,
    labels: &[&str],
) -> Result<(), String> {
    let n = labels.len().max(1) as i32;
    let label_of = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) => labels
            .get((n - 1 - i) as usize)
            .map_or(String::new(), |s| s.to_string()),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&tick)
        .y_label_formatter(&label_of)
        .y_labels(n as usize)
        .disable_y_mesh()
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())
}

/// Horizontal stacked bars, one per `bars` entry, top to bottom in order.
pub fn bar_chart(c: &BarChart) -> Result<String, Error> {
    let n = c.bars.len().max(1) as u32;
    let height = 110 + 22 * n + 18 * c.parts.len() as u32;
    let labels: Vec<&str> = c.bars.iter().map(|b| b.label.as_str()).collect();
    svg(height, |root| {
        let (plot, legend) = root.split_vertically(height - 18 * c.parts.len() as u32 - 8);
        let totals = c.bars.iter().map(|b| b.parts.iter().sum::<f64>());
        let mut x_range = range(totals, true);
        if c.bars.iter().any(|b| b.end.is_some()) {
            // room for the figures written past the longest bar
            x_range.end += (x_range.end - x_range.start) * 0.3;
        }
        let mut chart = ChartBuilder::on(&plot)
            .caption(&c.title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(label_width(labels.iter().map(|l| l.len())))
            .build_cartesian_2d(x_range, (0..n as i32).into_segmented())
            .map_err(|e| e.to_string())?;
        row_mesh(&mut chart, &c.x_label, &c.y_label, &labels)?;
        for (i, bar) in c.bars.iter().enumerate() {
            let y = n as i32 - 1 - i as i32;
            let mut from = 0.0;
            for (k, v) in bar.parts.iter().enumerate() {
                if *v > 0.0 {
                    let mut r = Rectangle::new(
                        [
                            (from, SegmentValue::Exact(y)),
                            (from + v, SegmentValue::Exact(y + 1)),
                        ],
                        color(c.first_color + k).filled(),
                    );
                    r.set_margin(3, 3, 0, 0);
                    chart
                        .draw_series(std::iter::once(r))
                        .map_err(|e| e.to_string())?;
                }
                from += v;
            }
            if let Some(end) = &bar.end {
                let at = EmptyElement::at((from, SegmentValue::CenterOf(y)))
                    + Text::new(
                        end.clone(),
                        (5, 0),
                        (FONT, 12).into_font().color(&BLACK).pos(
                            plotters::style::text_anchor::Pos::new(
                                plotters::style::text_anchor::HPos::Left,
                                plotters::style::text_anchor::VPos::Center,
                            ),
                        ),
                    );
                chart
                    .draw_series(std::iter::once(at))
                    .map_err(|e| e.to_string())?;
            }
        }
        for (k, name) in c.parts.iter().enumerate() {
            let y = 4 + 18 * k as i32;
            legend
                .draw(&Rectangle::new(
                    [(70, y + 1), (100, y + 11)],
                    color(c.first_color + k).filled(),
                ))
                .map_err(|e| e.to_string())?;
            legend
                .draw(&Text::new(name.clone(), (108, y), (FONT, 12).into_font()))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    })
    .map_err(fail(&c.title))
}

/// A forest plot: per row a dot at the mean and a bar over its interval.
pub fn forest(c: &Forest) -> Result<String, Error> {
    let n = c.rows.len().max(1) as u32;
    let height = 130 + 22 * n;
    let labels: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
    svg(height, |root| {
        let (plot, legend) = root.split_vertically(height - 30);
        let xs = c
            .rows
            .iter()
            .flat_map(|r| [Some(r.mean), r.low, r.high].into_iter().flatten());
        let mut chart = ChartBuilder::on(&plot)
            .caption(&c.title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(label_width(labels.iter().map(|l| l.len())))
            .build_cartesian_2d(range(xs, c.zero_line), (0..n as i32).into_segmented())
            .map_err(|e| e.to_string())?;
        row_mesh(&mut chart, &c.x_label, &c.y_label, &labels)?;
        if c.zero_line {
            chart
                .draw_series(std::iter::once(DashedPathElement::new(
                    vec![
                        (0.0, SegmentValue::Exact(0)),
                        (0.0, SegmentValue::Exact(n as i32)),
                    ],
                    6,
                    4,
                    BLACK.stroke_width(1),
                )))
                .map_err(|e| e.to_string())?;
        }
        let col = color(0);
        for (i, r) in c.rows.iter().enumerate() {
            let y = SegmentValue::CenterOf(n as i32 - 1 - i as i32);
            if let (Some(lo), Some(hi)) = (r.low, r.high) {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(lo, y.clone()), (hi, y.clone())],
                        col.stroke_width(2),
                    )))
                    .map_err(|e| e.to_string())?;
            }
            chart
                .draw_series(std::iter::once(Circle::new((r.mean, y), 4, col.filled())))
                .map_err(|e| e.to_string())?;
        }
        legend
            .draw(&Circle::new((85, 12), 4, col.filled()))
            .map_err(|e| e.to_string())?;
        legend
            .draw(&PathElement::new(
                vec![(70, 12), (100, 12)],
                col.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
        legend
            .draw(&Text::new(
                "mean and its confidence interval".to_string(),
                (108, 6),
                (FONT, 12).into_font(),
            ))
            .map_err(|e| e.to_string())?;
        Ok(())
    })
    .map_err(fail(&c.title))
}

/// A shaded stretch of the time axis: a fault's window or the warm-up.
#[derive(Debug, Clone)]
pub struct Band {
    /// The legend entry.
    pub name: String,
    /// The short label written at the top of the band ("fault 0").
    pub label: String,
    pub from: f64,
    pub to: f64,
    /// The warm-up (grey) rather than a fault (red).
    pub warmup: bool,
}

/// A line in a fixed palette colour, with an optional interval around it
/// (x, low, high) drawn as a light area.
#[derive(Debug, Clone)]
pub struct Styled {
    pub name: String,
    pub color: usize,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
    pub interval: Vec<(f64, f64, f64)>,
}

/// A chart against time: lines over shaded bands, with vertical markers. The
/// axis ranges are given, so that small multiples share their scales.
#[derive(Debug, Clone)]
pub struct TimeChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Styled>,
    pub bands: Vec<Band>,
    pub markers: Vec<Marker>,
    pub x_range: std::ops::Range<f64>,
    /// The largest y any chart of the set reaches.
    pub y_max: f64,
    /// Pixels across: narrow charts sit side by side.
    pub width: u32,
}

const FAULT: RGBColor = RGBColor(214, 39, 40);
const WARMUP: RGBColor = RGBColor(127, 127, 127);
const MARKER: RGBColor = RGBColor(60, 60, 60);

/// Where each legend entry goes, and the height taken: lines in columns as wide
/// as the longest line name (as many as fit in `width`), then bands and markers
/// (longer names) a row each.
fn legend_layout(lines: &[&str], others: usize, width: u32) -> (Vec<(i32, i32)>, u32) {
    // a 24 px sample, a gap, about 6 px a character at 11 px
    let column = lines
        .iter()
        .map(|n| 24 + 6 + (n.chars().count() * 6) as i32 + 16)
        .max()
        .unwrap_or(100);
    let per_row = ((width as i32 - 20) / column).max(1) as usize;
    let mut at: Vec<(i32, i32)> = (0..lines.len())
        .map(|i| {
            let (row, col) = (i / per_row, i % per_row);
            (10 + col as i32 * column, 4 + row as i32 * 16)
        })
        .collect();
    let mut y = 4 + lines.len().div_ceil(per_row) as i32 * 16;
    for _ in 0..others {
        at.push((10, y));
        y += 16;
    }
    (at, (y + 4) as u32)
}

/// A time chart's drawing area and its axes.
type TimeArea<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The legend's keys, in order: the lines, the bands, the markers.
fn time_keys(c: &TimeChart) -> Vec<(&str, Sample)> {
    let mut entries: Vec<(&str, Sample)> = c
        .series
        .iter()
        .map(|s| {
            let col = color(s.color);
            let sample = if s.dashed {
                Sample::Dashed(col)
            } else {
                Sample::Line(col)
            };
            (s.name.as_str(), sample)
        })
        .collect();
    entries.extend(c.bands.iter().map(|b| {
        let fill = if b.warmup {
            WARMUP.mix(0.25)
        } else {
            FAULT.mix(0.18)
        };
        (b.name.as_str(), Sample::Area(fill))
    }));
    entries.extend(
        c.markers
            .iter()
            .map(|m| (m.name.as_str(), Sample::Dashed(MARKER))),
    );
    entries
}

/// The shaded bands (faults red, the warm-up grey), each labelled at its top;
/// a label whose band starts near one already written goes a line lower.
fn time_bands(chart: &mut TimeArea, c: &TimeChart, y_top: f64) -> Result<(), String> {
    let x_end = c.x_range.end;
    // where the labels already written start: a label whose band starts
    // near one of them (a fault from 0 under the warm-up) goes a line lower
    let near = (x_end - c.x_range.start) * 0.08;
    let mut labelled: Vec<f64> = Vec::new();
    for b in &c.bands {
        let (fill, text) = if b.warmup {
            (WARMUP.mix(0.25), RGBColor(90, 90, 90))
        } else {
            (FAULT.mix(0.18), RGBColor(160, 20, 20))
        };
        let (from, to) = (b.from.max(c.x_range.start), b.to.min(x_end));
        if to <= from {
            continue;
        }
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(from, 0.0), (to, y_top)],
                fill.filled(),
            )))
            .map_err(|e| e.to_string())?;
        let line = labelled
            .iter()
            .filter(|&&x| (x - from).abs() < near)
            .count() as i32;
        labelled.push(from);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((from, y_top))
                    + Text::new(
                        b.label.clone(),
                        (3, 3 + 13 * line),
                        (FONT, 11).into_font().color(&text),
                    ),
            ))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub fn time_chart(c: &TimeChart) -> Result<String, Error> {
    let entries = time_keys(c);
    let lines: Vec<&str> = c.series.iter().map(|s| s.name.as_str()).collect();
    let (at, legend_height) = legend_layout(&lines, entries.len() - lines.len(), c.width);
    let plot_height = if c.width < 600 { 250 } else { 300 };
    let small = c.width < 600;
    svg_sized(c.width, plot_height + legend_height, |root| {
        let (plot, legend) = root.split_vertically(plot_height);
        // headroom above the data for the band labels
        let y_top = if c.y_max > 0.0 { c.y_max * 1.18 } else { 1.0 };
        let mut chart = ChartBuilder::on(&plot)
            .caption(&c.title, (FONT, if small { 13 } else { 16 }))
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(if small { 48 } else { 60 })
            .build_cartesian_2d(c.x_range.clone(), 0.0..y_top)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(&c.x_label)
            .y_desc(&c.y_label)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .x_labels(if small { 6 } else { 10 })
            .y_labels(if small { 5 } else { 8 })
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 12))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| e.to_string())?;
        time_bands(&mut chart, c, y_top)?;
        for s in &c.series {
            if s.interval.len() > 1 {
                let mut area: Vec<(f64, f64)> = s.interval.iter().map(|p| (p.0, p.2)).collect();
                area.extend(s.interval.iter().rev().map(|p| (p.0, p.1)));
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        area,
                        color(s.color).mix(0.2).filled(),
                    )))
                    .map_err(|e| e.to_string())?;
            }
        }
        for s in &c.series {
            let style = color(s.color).stroke_width(2);
            if s.dashed {
                chart.draw_series(std::iter::once(DashedPathElement::new(
                    s.points.clone(),
                    7,
                    3,
                    style,
                )))
            } else {
                chart.draw_series(LineSeries::new(s.points.iter().copied(), style))
            }
            .map_err(|e| e.to_string())?;
        }
        for m in &c.markers {
            chart
                .draw_series(std::iter::once(DashedPathElement::new(
                    vec![(m.x, 0.0), (m.x, y_top)],
                    6,
                    4,
                    MARKER.stroke_width(2),
                )))
                .map_err(|e| e.to_string())?;
        }
        for ((name, sample), at) in entries.iter().zip(&at) {
            COMPACT_KEYS.draw(&legend, *sample, name, *at)?;
        }
        Ok(())
    })
    .map_err(fail(&c.title))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> LineChart {
        LineChart {
            title: "t".into(),
            x_label: "x (ms)".into(),
            y_label: "y (requests)".into(),
            series: vec![Series {
                name: "a & b".into(),
                points: vec![(1.0, 2.0), (2.0, 4.0)],
            }],
            markers: vec![Marker {
                name: "knee".into(),
                x: 1.5,
            }],
        }
    }

    #[test]
    fn a_line_chart_is_one_svg_with_its_texts() {
        let s = line_chart(&chart()).unwrap();
        assert_eq!(s.matches("<svg").count(), 1, "{s}");
        assert!(s.contains("x (ms)") && s.contains("knee"), "{s}");
        assert!(s.contains("a &amp; b"), "legend text escaped: {s}");
        assert_eq!(s, line_chart(&chart()).unwrap(), "deterministic");
    }

    #[test]
    fn a_time_chart_shades_its_bands_and_names_them_in_the_legend() {
        let c = TimeChart {
            title: "t".into(),
            x_label: "time (s)".into(),
            y_label: "requests per second".into(),
            series: vec![Styled {
                name: "answered per s".into(),
                color: 2,
                dashed: false,
                points: vec![(0.5, 10.0), (1.5, 0.0), (2.5, 10.0)],
                interval: Vec::new(),
            }],
            bands: vec![Band {
                name: "fault 0: down on s (1 to 2 s)".into(),
                label: "fault 0".into(),
                from: 1.0,
                to: 2.0,
                warmup: false,
            }],
            markers: vec![Marker {
                name: "recovered".into(),
                x: 2.0,
            }],
            x_range: 0.0..3.0,
            y_max: 10.0,
            width: 380,
        };
        let s = time_chart(&c).unwrap();
        assert!(s.contains("width=\"380\""), "{s}");
        for text in [
            "fault 0",
            "fault 0: down on s (1 to 2 s)",
            "recovered",
            "time (s)",
        ] {
            assert!(s.contains(text), "{text}: {s}");
        }
        assert!(
            s.contains("opacity=\"0.18\""),
            "the band is translucent: {s}"
        );
        assert_eq!(s, time_chart(&c).unwrap(), "deterministic");
    }

    #[test]
    fn ranges_are_never_empty() {
        let r = range([5.0, 5.0].into_iter(), false);
        assert!(r.start < 5.0 && r.end > 5.0, "{r:?}");
        let r = range(std::iter::empty(), true);
        assert!(r.start == 0.0 && r.end > 1.0, "{r:?}");
    }
}
