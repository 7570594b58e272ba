//! Charts as inline SVG, drawn with plotters' SVG backend. Text is written as SVG
//! `<text>` elements in a generic font family and laid out with plotters' built-in
//! size estimate, so no system font is read: the same data give the same bytes on
//! every machine.
//!
//! Three kinds: lines (ladder curves, distributions) with optional vertical
//! markers, stacked horizontal bars (limiter passes and rejects), and forest plots
//! (means with their intervals).

use crate::error::Error;
use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordi32};
use plotters::element::DashedPathElement;
use plotters::prelude::*;

const WIDTH: u32 = 720;
const FONT: &str = "sans-serif";

/// Tableau 10: distinct on screen and in grey print.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Past the first ten series the colours repeat: those lines are dashed.
fn dashed(i: usize) -> bool {
    (i / COLORS.len()) % 2 == 1
}

/// Markers take the palette from its end, so a finding keeps its colour in every
/// chart however many series the chart has.
fn marker_color(k: usize) -> RGBColor {
    COLORS[COLORS.len() - 1 - k % COLORS.len()]
}

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
}

#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The legend name of each part.
    pub parts: Vec<String>,
    pub bars: Vec<Bar>,
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

fn fail(title: &str) -> impl Fn(String) -> Error + '_ {
    move |e| Error::Other(format!("cannot draw the chart `{title}`: {e}"))
}

/// `lo..hi` with a margin, never empty.
fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> std::ops::Range<f64> {
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

/// Tick labels: whole numbers without decimals, others with up to three.
fn tick(v: &f64) -> String {
    crate::report::format_number((v * 1000.0).round() / 1000.0)
}

/// Pixels a label column needs for `labels` (about 7 px a character at 12 px).
fn label_width(labels: impl Iterator<Item = usize>) -> u32 {
    (labels.max().unwrap_or(4) as u32 * 7 + 16).clamp(48, 300)
}

fn svg(
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
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
fn legend_rows<'a>(
    area: &DrawingArea<SVGBackend, Shift>,
    entries: impl Iterator<Item = (&'a str, RGBColor, bool)>,
) -> Result<(), String> {
    for (i, (name, col, dashed)) in entries.enumerate() {
        let y = 6 + 18 * i as i32;
        if dashed {
            area.draw(&DashedPathElement::new(
                vec![(70, y + 6), (100, y + 6)],
                6,
                4,
                col.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
        } else {
            area.draw(&PathElement::new(
                vec![(70, y + 6), (100, y + 6)],
                col.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
        }
        area.draw(&Text::new(
            name.to_string(),
            (108, y),
            (FONT, 12).into_font(),
        ))
        .map_err(|e| e.to_string())?;
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
        let mut chart = ChartBuilder::on(&plot)
            .caption(&c.title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(label_width(labels.iter().map(|l| l.len())))
            .build_cartesian_2d(range(totals, true), (0..n as i32).into_segmented())
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
                        color(k).filled(),
                    );
                    r.set_margin(3, 3, 0, 0);
                    chart
                        .draw_series(std::iter::once(r))
                        .map_err(|e| e.to_string())?;
                }
                from += v;
            }
        }
        for (k, name) in c.parts.iter().enumerate() {
            let y = 4 + 18 * k as i32;
            legend
                .draw(&Rectangle::new(
                    [(70, y + 1), (100, y + 11)],
                    color(k).filled(),
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
    fn ranges_are_never_empty() {
        let r = range([5.0, 5.0].into_iter(), false);
        assert!(r.start < 5.0 && r.end > 5.0, "{r:?}");
        let r = range(std::iter::empty(), true);
        assert!(r.start == 0.0 && r.end > 1.0, "{r:?}");
    }
}
