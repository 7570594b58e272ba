//! What every chart of the page draws with: the canvas (an SVG string of a
//! given size on white), the palette, tick labels, the error of a chart that
//! cannot be drawn, and the legend's keys (a sample and its name).

use crate::error::Error;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// The page's chart width in pixels.
pub(super) const WIDTH: u32 = 720;
/// A generic family: no system font is read, so every machine writes the same
/// bytes.
pub(super) const FONT: &str = "sans-serif";

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

/// The `i`-th series' colour; past the tenth the colours repeat.
pub(super) fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Past the first ten series the colours repeat: those lines are dashed.
pub(super) fn dashed(i: usize) -> bool {
    (i / COLORS.len()) % 2 == 1
}

/// Markers take the palette from its end, so a finding keeps its colour in every
/// chart however many series the chart has.
pub(super) fn marker_color(k: usize) -> RGBColor {
    COLORS[COLORS.len() - 1 - k % COLORS.len()]
}

/// The error of a chart that cannot be drawn, naming it.
pub(super) fn fail(title: &str) -> impl Fn(String) -> Error + '_ {
    move |e| Error::Other(format!("cannot draw the chart `{title}`: {e}"))
}

/// Tick labels: whole numbers without decimals, others with up to three.
pub(super) fn tick(v: &f64) -> String {
    crate::report::format_number((v * 1000.0).round() / 1000.0)
}

/// An SVG of the page width and `height`, drawn by `draw` on white.
pub(super) fn svg(
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<String, String> {
    svg_sized(WIDTH, height, draw)
}

/// An SVG of `width` x `height`, drawn by `draw` on white.
pub(super) fn svg_sized(
    width: u32,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// A legend entry's sample: a line, a dashed line, a filled box, or a line
/// over a light box (a line with its interval).
#[derive(Clone, Copy)]
pub(super) enum Sample {
    Line(RGBColor),
    Dashed(RGBColor),
    Area(RGBAColor),
    LineOnArea(RGBColor),
    /// A dot: points no line joins (a search's candidates).
    Dot(RGBColor),
}

/// How a legend's keys are drawn: the sample's length, its dashes, the box's
/// height, the gap before the name and the name's size.
pub(super) struct Keys {
    length: i32,
    dash: (u32, u32),
    area: i32,
    gap: i32,
    font: u32,
}

/// Keys a row each under a full-width chart.
pub(super) const ROW_KEYS: Keys = Keys {
    length: 30,
    dash: (6, 4),
    area: 12,
    gap: 8,
    font: 12,
};

/// Smaller keys set in columns (charts against time).
pub(super) const COMPACT_KEYS: Keys = Keys {
    length: 24,
    dash: (5, 3),
    area: 11,
    gap: 6,
    font: 11,
};

impl Keys {
    /// Draws one key, its sample starting at `(x, y)` and its name after it.
    pub(super) fn draw(
        &self,
        area: &DrawingArea<SVGBackend, Shift>,
        sample: Sample,
        name: &str,
        (x, y): (i32, i32),
    ) -> Result<(), String> {
        let line = vec![(x, y + 6), (x + self.length, y + 6)];
        let boxed = [(x, y), (x + self.length, y + self.area)];
        match sample {
            Sample::Line(col) => area.draw(&PathElement::new(line, col.stroke_width(2))),
            Sample::Dashed(col) => area.draw(&DashedPathElement::new(
                line,
                self.dash.0,
                self.dash.1,
                col.stroke_width(2),
            )),
            Sample::Area(fill) => area.draw(&Rectangle::new(boxed, fill.filled())),
            Sample::LineOnArea(col) => area
                .draw(&Rectangle::new(boxed, col.mix(0.18).filled()))
                .and_then(|()| area.draw(&PathElement::new(line, col.stroke_width(2)))),
            Sample::Dot(col) => {
                area.draw(&Circle::new((x + self.length / 2, y + 6), 4, col.filled()))
            }
        }
        .map_err(|e| e.to_string())?;
        area.draw(&Text::new(
            name.to_string(),
            (x + self.length + self.gap, y),
            (FONT, self.font).into_font(),
        ))
        .map_err(|e| e.to_string())
    }
}
