//! Charts against a numeric setting (an axis whose values are numbers, such as a
//! rate or a duration): a metric's mean per value as a line with its interval as
//! a band, and, over two such settings, a heatmap of the means. Drawn as
//! `charts` draws (plotters' SVG backend, text as SVG `<text>`, no font read):
//! the same data give the same bytes.
//!
//! A sweep's summary gets them when its compare axes hold numbers: one numeric
//! axis (with 3 or more values) draws a line chart per charted metric, one line
//! per combination of the other axes; two or more draw a heatmap per charted
//! metric over the last two, one per combination of the others (the first
//! [`MAX_HEATMAPS`]). Settings spaced by factors (250, 1000, 4000 ms) are drawn
//! on a log scale, ticked at their own values. `resim boundary` draws its
//! points with the same charts.

use super::charts::Marker;
use super::draw::{FONT, ROW_KEYS, Sample, color, dashed, fail, svg, tick};
use crate::error::Error;
use crate::report::{Cell, Table};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// An axis is numeric when every value is a number and it has at least this many.
pub const MIN_VALUES: usize = 3;

/// The most heatmaps per metric (combinations of the other axes beyond it are
/// left to the table).
pub const MAX_HEATMAPS: usize = 12;

/// The most lines in one chart (combinations beyond it are left to the table).
pub const MAX_LINES: usize = 10;

/// A line through (x, mean) with its interval (x, low, high) as a band.
#[derive(Debug, Clone)]
pub struct ValueSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub intervals: Vec<(f64, f64, f64)>,
    /// Dots alone, no line: points of a search that no order joins.
    pub dots: bool,
}

/// A chart of means against a numeric setting.
#[derive(Debug, Clone)]
pub struct ValueChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<ValueSeries>,
    /// A horizontal dashed line (a boundary's target), named in the legend.
    pub target: Option<(String, f64)>,
    /// Vertical dashed lines (a boundary's estimate).
    pub markers: Vec<Marker>,
    /// A shaded stretch of x (a boundary's bracket), named in the legend.
    pub shade: Option<(String, f64, f64)>,
}

const TARGET: RGBColor = RGBColor(200, 30, 30);
const MARKER: RGBColor = RGBColor(40, 40, 40);

/// `lo..hi` of finite values with a 5 % margin, never empty.
fn span(values: impl Iterator<Item = f64>, margin: bool) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    let (mut lo, mut hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    if hi - lo < 1e-12 {
        lo -= 0.5_f64.max(lo.abs() * 0.05);
        hi += 0.5_f64.max(hi.abs() * 0.05);
    }
    let pad = if margin { (hi - lo) * 0.05 } else { 0.0 };
    lo - pad..hi + pad
}

/// Whether settings are spaced by factors rather than steps (250, 1000, 4000 ms;
/// 1, 2, 4, 8, 16), so that a log scale spaces them evenly: all above 0, the
/// largest at least 8 times the smallest, and the gaps between neighbours more
/// even in logarithms than in values.
fn geometric(xs: impl Iterator<Item = f64>) -> bool {
    let mut v: Vec<f64> = xs.collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    if v.len() < MIN_VALUES || v.iter().any(|x| !x.is_finite() || *x <= 0.0) {
        return false;
    }
    if v[v.len() - 1] < 8.0 * v[0] {
        return false;
    }
    // the largest gap over the smallest
    let unevenness = |gaps: Vec<f64>| {
        let max = gaps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = gaps.iter().copied().fold(f64::INFINITY, f64::min);
        max / min
    };
    let linear = unevenness(v.windows(2).map(|w| w[1] - w[0]).collect());
    let log = unevenness(v.windows(2).map(|w| (w[1] / w[0]).ln()).collect());
    log < linear
}

/// The plot's height in pixels, above its legend.
const VALUE_PLOT_HEIGHT: u32 = 320;

/// A value chart's drawing area and its axes.
type ValueArea<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws a [`ValueChart`]: bands first, then lines with a dot per value, the
/// target and markers on top; the legend below the plot, one entry a row.
pub fn value_chart(c: &ValueChart) -> Result<String, Error> {
    let keys = value_keys(c);
    let height = VALUE_PLOT_HEIGHT + 10 + 18 * keys.len() as u32;
    // settings spaced by factors are drawn on a log scale, ticked at their own
    // values (a boundary's charts, with markers and a bracket, stay linear)
    let log_x = c.markers.is_empty()
        && c.shade.is_none()
        && geometric(c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let fx = |x: f64| if log_x { x.ln() } else { x };
    let series: Vec<ValueSeries> = c
        .series
        .iter()
        .map(|s| ValueSeries {
            name: s.name.clone(),
            points: s.points.iter().map(|p| (fx(p.0), p.1)).collect(),
            intervals: s.intervals.iter().map(|i| (fx(i.0), i.1, i.2)).collect(),
            dots: s.dots,
        })
        .collect();
    svg(height, |root| {
        let (plot, legend) = root.split_vertically(VALUE_PLOT_HEIGHT);
        let mut chart = value_axes(&plot, c, &series, log_x)?;
        if log_x {
            let mut settings: Vec<f64> = c
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .collect();
            settings.sort_by(f64::total_cmp);
            settings.dedup();
            log_ticks(&plot, &mut chart, &settings)?;
        }
        value_marks(&mut chart, c, &series)?;
        for (row, (sample, name)) in keys.iter().enumerate() {
            ROW_KEYS.draw(&legend, *sample, name, (70, 8 + 18 * row as i32))?;
        }
        Ok(())
    })
    .map_err(fail(&c.title))
}

/// The legend's keys, in order: the series, the target, the markers, the shade.
fn value_keys(c: &ValueChart) -> Vec<(Sample, &str)> {
    let mut keys: Vec<(Sample, &str)> = c
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sample = if s.dots {
                Sample::Dot(color(i))
            } else {
                Sample::LineOnArea(color(i))
            };
            (sample, s.name.as_str())
        })
        .collect();
    keys.extend(
        c.target
            .iter()
            .map(|(name, _)| (Sample::Dashed(TARGET), name.as_str())),
    );
    keys.extend(
        c.markers
            .iter()
            .map(|m| (Sample::Dashed(MARKER), m.name.as_str())),
    );
    keys.extend(
        c.shade
            .iter()
            .map(|(name, _, _)| (Sample::Area(MARKER.mix(0.12)), name.as_str())),
    );
    keys
}

/// The axes over every value, interval, marker and target, and the mesh.
fn value_axes<'a, 'b>(
    plot: &'a DrawingArea<SVGBackend<'b>, Shift>,
    c: &ValueChart,
    series: &[ValueSeries],
    log_x: bool,
) -> Result<ValueArea<'a, 'b>, String> {
    let xs = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(c.markers.iter().map(|m| m.x))
        .chain(c.shade.iter().flat_map(|s| [s.1, s.2]));
    let ys = series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.intervals.iter().flat_map(|i| [i.1, i.2]))
        })
        .chain(c.target.iter().map(|t| t.1));
    let x_span = span(xs, true);
    // whole-number settings (slots, replicas) few enough to tick one by one:
    // no tick between them, where no setting can be
    let whole = !log_x
        && series
            .iter()
            .flat_map(|s| &s.points)
            .all(|p| p.0.fract() == 0.0)
        && x_span.end - x_span.start <= 20.0;
    let x_ticks = if log_x {
        0
    } else if whole {
        (x_span.end - x_span.start).ceil() as usize + 1
    } else {
        10
    };
    let x_tick = |v: &f64| {
        if whole && v.fract() != 0.0 {
            String::new()
        } else {
            tick(v)
        }
    };
    let x_label = if log_x {
        format!("{} (log scale)", c.x_label)
    } else {
        c.x_label.clone()
    };
    let mut chart = ChartBuilder::on(plot)
        .caption(&c.title, (FONT, 15))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x_span, span(ys, true))
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(&x_label)
        .y_desc(&c.y_label)
        .x_labels(x_ticks)
        .x_label_formatter(&x_tick)
        .y_label_formatter(&tick)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// A log scale's ticks: a light line and a label at each setting.
fn log_ticks(
    plot: &DrawingArea<SVGBackend, Shift>,
    chart: &mut ValueArea,
    settings: &[f64],
) -> Result<(), String> {
    let y = chart.y_range();
    for v in settings {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(v.ln(), y.start), (v.ln(), y.end)],
                RGBColor(220, 220, 220),
            )))
            .map_err(|e| e.to_string())?;
        let (px, py) = chart.backend_coord(&(v.ln(), y.start));
        plot.draw(&Text::new(
            tick(v),
            (px, py + 6),
            (FONT, 12)
                .into_font()
                .color(&BLACK)
                .pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Top,
                )),
        ))
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The shade, the intervals, the target, the lines with a dot per value and
/// the markers, in that order (later ones on top).
fn value_marks(
    chart: &mut ValueArea,
    c: &ValueChart,
    series: &[ValueSeries],
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    let y = chart.y_range();
    if let Some((_, from, to)) = &c.shade {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(*from, y.start), (*to, y.end)],
                MARKER.mix(0.12).filled(),
            )))
            .map_err(err)?;
    }
    for (i, s) in series.iter().enumerate() {
        if s.intervals.len() > 1 {
            let mut area: Vec<(f64, f64)> = s.intervals.iter().map(|p| (p.0, p.2)).collect();
            area.extend(s.intervals.iter().rev().map(|p| (p.0, p.1)));
            chart
                .draw_series(std::iter::once(Polygon::new(
                    area,
                    color(i).mix(0.18).filled(),
                )))
                .map_err(err)?;
        }
        // a single value's interval: a vertical bar
        if let [(x, lo, hi)] = s.intervals[..] {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, lo), (x, hi)],
                    color(i).mix(0.5).stroke_width(3),
                )))
                .map_err(err)?;
        }
    }
    if let Some((_, t)) = &c.target {
        let x = chart.x_range();
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(x.start, *t), (x.end, *t)],
                6,
                4,
                TARGET.stroke_width(2),
            )))
            .map_err(err)?;
    }
    for (i, s) in series.iter().enumerate() {
        let style = color(i).stroke_width(2);
        if s.dots {
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|p| Circle::new(*p, 4, color(i).filled())),
                )
                .map_err(err)?;
            continue;
        }
        if dashed(i) {
            chart.draw_series(std::iter::once(DashedPathElement::new(
                s.points.clone(),
                8,
                3,
                style,
            )))
        } else {
            chart.draw_series(LineSeries::new(s.points.iter().copied(), style))
        }
        .map_err(err)?;
        chart
            .draw_series(
                s.points
                    .iter()
                    .map(|p| Circle::new(*p, 3, color(i).filled())),
            )
            .map_err(err)?;
    }
    for m in &c.markers {
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(m.x, y.start), (m.x, y.end)],
                6,
                4,
                MARKER.stroke_width(2),
            )))
            .map_err(err)?;
    }
    Ok(())
}

/// A heatmap cell: (column, row, value).
type Cell3 = (usize, usize, f64);

/// A grid of cells coloured by value, columns and rows named by their values.
#[derive(Debug, Clone)]
pub struct HeatMap {
    pub title: String,
    /// The columns' setting and the rows' (bottom to top).
    pub x_label: String,
    pub y_label: String,
    /// What the colour means (the metric, with its unit).
    pub value_label: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    /// (column, row, mean): a missing cell stays blank.
    pub cells: Vec<Cell3>,
    /// The values at the two ends of the colour scale (shared by the heatmaps
    /// of one metric); `None`: the lowest and highest cell.
    pub scale: Option<(f64, f64)>,
}

/// Viridis at five stops: dark blue (low) to yellow (high), readable in grey.
const RAMP: [(u8, u8, u8); 5] = [
    (68, 1, 84),
    (59, 82, 139),
    (33, 145, 140),
    (94, 201, 98),
    (253, 231, 37),
];

fn ramp(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (RAMP.len() - 1) as f64;
    let i = (x.floor() as usize).min(RAMP.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A number as a cell shows it: at most three significant decimals.
fn short(v: f64) -> String {
    let a = v.abs();
    let text = if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if text == "-0" { "0".into() } else { text }
}

/// The lowest and highest finite value ((0, 1) without any).
fn value_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, m), v| {
            (l.min(v), m.max(v))
        });
    if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) }
}

/// Draws a [`HeatMap`]: a cell per (column, row) with its value written in it,
/// and a colour scale from the lowest to the highest value below.
pub fn heatmap(h: &HeatMap) -> Result<String, Error> {
    let (nx, ny) = (h.columns.len().max(1), h.rows.len().max(1));
    let label_w = (h.rows.iter().map(|r| r.chars().count()).max().unwrap_or(2) as u32 * 7 + 60)
        .clamp(80, 220);
    let cell_h: u32 = if ny > 16 { 22 } else { 34 };
    let plot_h = 70 + cell_h * ny as u32 + 50;
    let height = plot_h + 56;
    let (lo, hi) = h
        .scale
        .unwrap_or_else(|| value_range(h.cells.iter().map(|c| c.2)));
    let scale = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    svg(height, |root| {
        let (plot, legend) = root.split_vertically(plot_h);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&h.title, (FONT, 15))
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(label_w)
            .build_cartesian_2d(0.0..nx as f64, 0.0..ny as f64)
            .map_err(|e| e.to_string())?;
        let xf = |v: &f64| centre_label(&h.columns, *v);
        let yf = |v: &f64| centre_label(&h.rows, *v);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(&h.x_label)
            .y_desc(&h.y_label)
            .x_labels(nx * 2 + 1)
            .y_labels(ny * 2 + 1)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()
            .map_err(|e| e.to_string())?;
        for &(cx, cy, v) in &h.cells {
            let t = scale(v);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(cx as f64, cy as f64), (cx as f64 + 1.0, cy as f64 + 1.0)],
                    ramp(t).filled(),
                )))
                .map_err(|e| e.to_string())?;
            let ink = if t > 0.6 { BLACK } else { WHITE };
            chart
                .draw_series(std::iter::once(Text::new(
                    short(v),
                    (cx as f64 + 0.5, cy as f64 + 0.5),
                    (FONT, 12)
                        .into_font()
                        .color(&ink)
                        .pos(plotters::style::text_anchor::Pos::new(
                            plotters::style::text_anchor::HPos::Center,
                            plotters::style::text_anchor::VPos::Center,
                        )),
                )))
                .map_err(|e| e.to_string())?;
        }
        ramp_key(&legend, label_w as i32 + 10, (lo, hi), &h.value_label)?;
        Ok(())
    })
    .map_err(fail(&h.title))
}

/// A heatmap's cell label: the name of the cell whose centre `v` is, none
/// between centres.
fn centre_label(names: &[String], v: f64) -> String {
    if (v - v.floor() - 0.5).abs() < 1e-9 {
        names.get(v.floor() as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

/// A heatmap's scale, from `x0` across: a ramp from the lowest to the highest
/// value, its ends and what the values are.
fn ramp_key(
    legend: &DrawingArea<SVGBackend, Shift>,
    x0: i32,
    (lo, hi): (f64, f64),
    value_label: &str,
) -> Result<(), String> {
    let w = 300;
    for k in 0..60 {
        let t = k as f64 / 59.0;
        legend
            .draw(&Rectangle::new(
                [(x0 + k * w / 60, 8), (x0 + (k + 1) * w / 60, 22)],
                ramp(t).filled(),
            ))
            .map_err(|e| e.to_string())?;
    }
    let (left, right) = if hi > lo {
        (short(lo), short(hi))
    } else {
        (format!("every cell {}", short(lo)), String::new())
    };
    legend
        .draw(&Text::new(left, (x0, 26), (FONT, 11).into_font()))
        .map_err(|e| e.to_string())?;
    legend
        .draw(&Text::new(right, (x0 + w - 20, 26), (FONT, 11).into_font()))
        .map_err(|e| e.to_string())?;
    legend
        .draw(&Text::new(
            value_label.to_string(),
            (x0 + w + 12, 9),
            (FONT, 12).into_font(),
        ))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// An axis column's values as numbers, when every value is one and there are
/// at least [`MIN_VALUES`] different ones; in first-seen order.
fn numeric(t: &Table, column: usize) -> Option<Vec<f64>> {
    let mut out: Vec<f64> = Vec::new();
    for r in &t.rows {
        let v: f64 = r[column].render().parse().ok()?;
        if !v.is_finite() {
            return None;
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    (out.len() >= MIN_VALUES).then_some(out)
}

/// `key=value, key=value` for a row's labels in `columns`.
pub fn labelled(headers: &[String], row: &[Cell], columns: &[usize]) -> String {
    columns
        .iter()
        .map(|&c| format!("{}={}", headers[c], row[c].render()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The charts of a sweep's summary against its numeric axes, for `metrics`
/// (see the module doc); none when it has no numeric axis. `unit` names a
/// metric's unit.
pub fn sweep_charts(
    summary: &Table,
    metrics: &[String],
    level: &str,
    unit: impl Fn(&str) -> &'static str,
) -> Result<Vec<String>, Error> {
    let (Some(m), Some(mean), Some(lo), Some(hi)) = (
        summary.column("metric"),
        summary.column("mean"),
        summary.column("ci_low"),
        summary.column("ci_high"),
    ) else {
        return Ok(Vec::new());
    };
    let numeric_axes: Vec<(usize, Vec<f64>)> = (0..m)
        .filter_map(|a| numeric(summary, a).map(|v| (a, v)))
        .collect();
    let mut charts = Vec::new();
    for metric in metrics {
        let rows: Vec<&Vec<Cell>> = summary
            .rows
            .iter()
            .filter(|r| r[m].render() == *metric)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let of = Metric {
            summary,
            rows,
            axes: m,
            name: metric,
            unit: unit(metric),
            level,
            cells: (mean, lo, hi),
        };
        match numeric_axes.as_slice() {
            [] => {}
            [(x_axis, _)] => charts.extend(of.line_chart(*x_axis)?),
            [.., y, x] => charts.extend(of.heatmaps(x, y)?),
        }
    }
    Ok(charts)
}

/// One metric's rows of a sweep's summary, and where its figures are.
struct Metric<'a> {
    summary: &'a Table,
    rows: Vec<&'a Vec<Cell>>,
    /// The axis columns are the first `axes`.
    axes: usize,
    name: &'a str,
    unit: &'static str,
    level: &'a str,
    /// The columns of the mean and its interval's ends.
    cells: (usize, usize, usize),
}

impl Metric<'_> {
    /// The axes other than `skip`.
    fn others(&self, skip: &[usize]) -> Vec<usize> {
        (0..self.axes).filter(|a| !skip.contains(a)).collect()
    }

    /// The metric against the one numeric axis: a line per value of the other
    /// axes (at most [`MAX_LINES`]), its interval shaded.
    fn line_chart(&self, x_axis: usize) -> Result<Option<String>, Error> {
        let (mean, lo, hi) = self.cells;
        let others = self.others(&[x_axis]);
        let mut series: Vec<ValueSeries> = Vec::new();
        for r in &self.rows {
            let (Some(x), Some(y)) = (r[x_axis].render().parse::<f64>().ok(), r[mean].number())
            else {
                continue;
            };
            let name = if others.is_empty() {
                format!("mean with its {} interval", self.level)
            } else {
                labelled(&self.summary.headers, r, &others)
            };
            let i = match series.iter().position(|s| s.name == name) {
                Some(i) => i,
                None if series.len() < MAX_LINES => {
                    series.push(ValueSeries {
                        name,
                        points: Vec::new(),
                        intervals: Vec::new(),
                        dots: false,
                    });
                    series.len() - 1
                }
                None => continue,
            };
            series[i].points.push((x, y));
            if let (Some(l), Some(h)) = (r[lo].number(), r[hi].number()) {
                series[i].intervals.push((x, l, h));
            }
        }
        for s in &mut series {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
            s.intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        if series.is_empty() {
            return Ok(None);
        }
        let (metric, level, column) = (self.name, self.level, &self.summary.headers[x_axis]);
        value_chart(&ValueChart {
            title: format!("{metric} against {column} (mean, {level} interval shaded)"),
            x_label: column.clone(),
            y_label: format!("mean {metric} ({})", self.unit),
            series,
            target: None,
            markers: Vec::new(),
            shade: None,
        })
        .map(Some)
    }

    /// The metric over the last two numeric axes: a heatmap per value of the
    /// other axes (at most [`MAX_HEATMAPS`]), on one colour scale.
    fn heatmaps(
        &self,
        (x_axis, x_values): &(usize, Vec<f64>),
        (y_axis, y_values): &(usize, Vec<f64>),
    ) -> Result<Vec<String>, Error> {
        let (x_axis, y_axis, mean) = (*x_axis, *y_axis, self.cells.0);
        let others = self.others(&[x_axis, y_axis]);
        let mut maps: Vec<(String, Vec<Cell3>)> = Vec::new();
        for r in &self.rows {
            let (Ok(x), Ok(y), Some(v)) = (
                r[x_axis].render().parse::<f64>(),
                r[y_axis].render().parse::<f64>(),
                r[mean].number(),
            ) else {
                continue;
            };
            let name = labelled(&self.summary.headers, r, &others);
            let i = match maps.iter().position(|(n, _)| *n == name) {
                Some(i) => i,
                None if maps.len() < MAX_HEATMAPS => {
                    maps.push((name, Vec::new()));
                    maps.len() - 1
                }
                None => continue,
            };
            let cx = x_values.iter().position(|v| *v == x).unwrap_or(0);
            let cy = y_values.iter().position(|v| *v == y).unwrap_or(0);
            maps[i].1.push((cx, cy, v));
        }
        let headers = &self.summary.headers;
        let (metric, xc, yc) = (self.name, &headers[x_axis], &headers[y_axis]);
        let scale = value_range(maps.iter().flat_map(|(_, c)| c.iter().map(|c| c.2)));
        let names = |values: &[f64]| -> Vec<String> {
            values
                .iter()
                .map(|v| crate::report::format_number(*v))
                .collect()
        };
        maps.into_iter()
            .map(|(name, cells)| {
                let title = if name.is_empty() {
                    format!("{metric}: mean over {xc} and {yc}")
                } else {
                    format!("{metric}: mean over {xc} and {yc} ({name})")
                };
                heatmap(&HeatMap {
                    title,
                    x_label: xc.clone(),
                    y_label: yc.clone(),
                    value_label: format!("mean {metric} ({})", self.unit),
                    columns: names(x_values),
                    rows: names(y_values),
                    cells,
                    scale: Some(scale),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(axes: &[&str], rows: &[(&[&str], f64)]) -> Table {
        let headers = axes
            .iter()
            .map(|s| s.to_string())
            .chain(["metric", "mean", "ci_low", "ci_high"].map(String::from))
            .collect();
        let mut t = Table::new("summary", "s", headers);
        for (labels, mean) in rows {
            let mut r: Vec<Cell> = labels.iter().map(|l| Cell::Text(l.to_string())).collect();
            r.extend([
                Cell::Text("m.x_ms".into()),
                Cell::Num(*mean),
                Cell::Num(mean - 1.0),
                Cell::Num(mean + 1.0),
            ]);
            t.push(r);
        }
        t
    }

    #[test]
    fn one_numeric_axis_draws_a_line_per_other_label() {
        let t = summary(
            &["variant", "rate"],
            &[
                (&["a", "10"], 1.0),
                (&["a", "20"], 2.0),
                (&["a", "30"], 3.0),
                (&["b", "10"], 1.5),
                (&["b", "20"], 2.5),
                (&["b", "30"], 3.5),
            ],
        );
        let charts = sweep_charts(&t, &["m.x_ms".into()], "95 %", |_| "ms").unwrap();
        assert_eq!(charts.len(), 1);
        assert!(charts[0].contains("variant=a") && charts[0].contains("variant=b"));
        assert!(charts[0].contains("m.x_ms against rate"));
        // two values are no axis to draw a line along
        let two = summary(&["rate"], &[(&["10"], 1.0), (&["20"], 2.0)]);
        assert!(
            sweep_charts(&two, &["m.x_ms".into()], "95 %", |_| "ms")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn two_numeric_axes_draw_a_heatmap_with_every_value_written() {
        let mut rows = Vec::new();
        let labels: Vec<[String; 2]> = ["1", "2", "3"]
            .iter()
            .flat_map(|a| ["5", "6", "7"].map(|b| [a.to_string(), b.to_string()]))
            .collect();
        for (i, l) in labels.iter().enumerate() {
            rows.push((l, i as f64 * 1.5));
        }
        let rows: Vec<(&[&str], f64)> = rows
            .iter()
            .map(|(l, v)| {
                let s: &[&str] = Box::leak(vec![l[0].as_str(), l[1].as_str()].into_boxed_slice());
                (s, *v)
            })
            .collect();
        let t = summary(&["for_ms", "value"], &rows);
        let charts = sweep_charts(&t, &["m.x_ms".into()], "95 %", |_| "ms").unwrap();
        assert_eq!(charts.len(), 1);
        let svg = &charts[0];
        assert!(svg.contains("mean over value and for_ms"), "{svg}");
        assert!(
            svg.contains("\n12\n</text>") && svg.contains("\n1.50\n</text>"),
            "{svg}"
        );
        assert_eq!(
            svg,
            &sweep_charts(&t, &["m.x_ms".into()], "95 %", |_| "ms").unwrap()[0]
        );
    }

    /// Slots or replicas: ticks at the whole numbers only, none at 1.50.
    #[test]
    fn a_whole_number_setting_is_ticked_at_whole_numbers() {
        let chart = |xs: [f64; 4]| {
            value_chart(&ValueChart {
                title: "t".into(),
                x_label: "slots".into(),
                y_label: "y".into(),
                series: vec![ValueSeries {
                    name: "s".into(),
                    points: xs.iter().map(|x| (*x, x * 10.0)).collect(),
                    intervals: xs.iter().map(|x| (*x, x * 9.0, x * 11.0)).collect(),
                    dots: false,
                }],
                target: None,
                markers: Vec::new(),
                shade: None,
            })
            .unwrap()
        };
        let whole = chart([1.0, 2.0, 3.0, 4.0]);
        assert!(whole.contains("\n3\n</text>"), "{whole}");
        assert!(!whole.contains("\n1.50\n</text>"), "{whole}");
        // fractions keep their ticks between
        let fractions = chart([1.0, 1.5, 2.0, 4.0]);
        assert!(fractions.contains("\n1.50\n</text>"), "{fractions}");
    }

    /// Settings spaced by factors are drawn on a log scale, ticked at their values.
    #[test]
    fn settings_spaced_by_factors_get_a_log_scale() {
        let g = |v: &[f64]| geometric(v.iter().copied());
        assert!(g(&[250.0, 1000.0, 4000.0]));
        assert!(g(&[1.0, 2.0, 4.0, 8.0, 16.0]));
        // even steps, a narrow range, too few values, zero or below: linear
        assert!(!g(&[
            10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0
        ]));
        assert!(!g(&[100.0, 200.0, 400.0]));
        assert!(!g(&[1.0, 100.0]));
        assert!(!g(&[0.0, 10.0, 100.0]));
        let t = summary(
            &["for_ms"],
            &[(&["250"], 1.0), (&["1000"], 2.0), (&["4000"], 3.0)],
        );
        let charts = sweep_charts(&t, &["m.x_ms".into()], "95 %", |_| "ms").unwrap();
        let svg = &charts[0];
        assert!(svg.contains("for_ms (log scale)"), "{svg}");
        for v in ["250", "1000", "4000"] {
            assert!(svg.contains(&format!("\n{v}\n</text>")), "{v}: {svg}");
        }
        // 1000 is drawn halfway between 250 and 4000
        let x_of = |v: &str| -> f64 {
            let at = svg.find(&format!("\n{v}\n</text>")).unwrap();
            let open = svg[..at].rfind("<text x=\"").unwrap() + 9;
            svg[open..].split('"').next().unwrap().parse().unwrap()
        };
        let (a, m, b) = (x_of("250"), x_of("1000"), x_of("4000"));
        assert!(((m - a) - (b - m)).abs() <= 1.0, "{a} {m} {b}");
    }

    #[test]
    fn the_ramp_runs_dark_to_light() {
        assert_eq!(ramp(0.0), RGBColor(68, 1, 84));
        assert_eq!(ramp(1.0), RGBColor(253, 231, 37));
        assert_eq!(short(0.126), "0.13");
        assert_eq!(short(12.34), "12.3");
        assert_eq!(short(24.0), "24");
    }
}
