//! `report.html`: one self-contained page (inline CSS and SVG, no script, no
//! external URL) with every table of a run or a sweep and, beside the tables that
//! have one, its charts. Charts are drawn from the tables alone (every chart has
//! its CSV file), so the same tables give the same bytes, and `resim merge` writes
//! the page the unsharded sweep writes.
//!
//! The page is a minijinja template (`report.html.j2`, HTML-escaped); the charts
//! come from `charts`.

pub(crate) mod charts;
pub(crate) mod numeric;

use super::{Cell, Table};
use crate::error::Error;
use charts::{Band, Bar, BarChart, Forest, Interval, LineChart, Marker, Series, Styled, TimeChart};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The file name of the report in an output folder.
pub const FILE: &str = "report.html";

mod concurrency;
mod draw;
mod empty;
mod failures;
mod format;
mod sweep_time;
mod tail;
mod time;

use time::*;
pub use time::{FaultWindow, RowTimes};

const TEMPLATE: &str = include_str!("report.html.j2");

/// The pass/fail table of `[thresholds]` as the page shows it.
pub struct Thresholds<'a> {
    /// The `[thresholds]` table, one row per threshold.
    pub table: &'a Table,
    /// "2 of 3 hold".
    pub summary: String,
    /// How a threshold is judged (per row; whole interval).
    pub rule: String,
}

/// What the page is about: heading, one line under it, the scenario's `about`.
pub struct Heading {
    /// The page title: the scenario's name.
    pub title: String,
    /// One line under the title: what ran (compare rows, seed).
    pub subtitle: String,
    /// The scenario's `about`, when it has one.
    pub about: Option<String>,
}

#[derive(Serialize)]
struct CellView {
    text: String,
    num: bool,
}

#[derive(Serialize)]
struct TableView {
    headers: Vec<String>,
    rows: Vec<Vec<CellView>>,
}

/// A section's table: its body rows already written as HTML. A time series
/// puts thousands of rows on the page, and looping over their cells in the
/// template took most of the page's time (measured: 155 M of the 167 M
/// instructions of M3's page at 10^6 first tries); here each cell is one
/// escape and a few pushes. The markup is what the template's loop wrote, and
/// the escaping is the template's own ([`minijinja::HtmlEscape`]).
#[derive(Serialize)]
struct SectionTable {
    headers: Vec<String>,
    /// `<tr><td>..</td>..</tr>` and a newline per row.
    body: String,
}

impl SectionTable {
    fn of(t: &Table) -> SectionTable {
        use std::fmt::Write;
        let mut body = String::new();
        let shares = format::share_columns(t);
        let metric = t.column("metric");
        for row in t.rows.iter().take(MAX_PAGE_ROWS) {
            body.push_str("<tr>");
            let share_row = format::share_row(row, metric);
            for (c, share) in row.iter().zip(&shares) {
                body.push_str(if c.is_numeric() {
                    "<td class=\"num\">"
                } else {
                    "<td>"
                });
                let text = format::cell_text(c, *share || share_row);
                // writing into a String cannot fail
                let _ = write!(body, "{}", minijinja::HtmlEscape(&text));
                body.push_str("</td>");
            }
            body.push_str("</tr>\n");
        }
        SectionTable {
            headers: t.headers.clone(),
            body,
        }
    }
}

/// A page shows at most this many rows of a table (its CSV file has them all):
/// a long run's time series would otherwise make a page of hundreds of
/// megabytes that no browser opens.
const MAX_PAGE_ROWS: usize = 2_000;

/// A time-series chart draws at most this many steps per line: past it,
/// neighbouring windows are merged (their counts summed over their widths).
const MAX_STEPS: usize = 1_000;

impl TableView {
    /// The table with its numbers [`format::rounded`], as the page's sections
    /// show them.
    fn of(t: &Table) -> TableView {
        let shares = format::share_columns(t);
        let metric = t.column("metric");
        TableView::with(t, |row, i, c| {
            format::cell_text(c, shares[i] || format::share_row(row, metric))
        })
    }

    /// The table with every digit its CSV file has: the thresholds' values,
    /// which a rounding could put onto their bounds.
    fn exact(t: &Table) -> TableView {
        TableView::with(t, |_, _, c| c.render())
    }

    /// The table's first [`MAX_PAGE_ROWS`] rows, each cell written by
    /// `text(row, column, cell)`.
    fn with(t: &Table, text: impl Fn(&[Cell], usize, &Cell) -> String) -> TableView {
        let rows = (t.rows.iter().take(MAX_PAGE_ROWS))
            .map(|r| {
                (r.iter().enumerate())
                    .map(|(i, c)| CellView {
                        text: text(r, i, c),
                        num: c.is_numeric(),
                    })
                    .collect()
            })
            .collect();
        TableView {
            headers: t.headers.clone(),
            rows,
        }
    }
}

#[derive(Serialize)]
struct SectionView {
    name: String,
    title: String,
    file: String,
    charts: Vec<String>,
    /// Small multiples: the charts side by side.
    grid: bool,
    table: SectionTable,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct ThresholdsView {
    summary: String,
    rule: String,
    table: TableView,
}

#[derive(Serialize)]
struct PageView {
    version: &'static str,
    title: String,
    subtitle: String,
    about: Option<String>,
    thresholds: Option<ThresholdsView>,
    digest: Option<DigestView>,
    sections: Vec<SectionView>,
    /// The tables left off the page, empty in every row (see [`empty`]).
    left_out: Vec<String>,
}

/// The digest at the top of a run's page (see [`crate::report::digest`]): the
/// outcome per row and links to the tables that answer the scenario's question.
#[derive(Serialize)]
struct DigestView {
    title: String,
    table: TableView,
    notes: Vec<String>,
    answers: Vec<String>,
}

/// One table with its charts, as a page section.
pub struct Section<'t> {
    /// The table shown: borrowed from the run's tables, or made for the page.
    pub table: Cow<'t, Table>,
    /// The table's CSV file, as the page names it.
    pub file: String,
    /// Its charts, as inline SVG documents.
    pub charts: Vec<String>,
    /// Small multiples: the charts side by side rather than one under another.
    pub grid: bool,
}

/// A table's notes on the page, with a word when the page shows only part of it.
fn page_notes(t: &Table, file: &str) -> Vec<String> {
    let mut notes = t.all_notes();
    if t.rows.len() > MAX_PAGE_ROWS {
        notes.push(format!(
            "the first {} of {} rows are shown here; {file} has them all",
            crate::format::format_number(MAX_PAGE_ROWS as f64),
            crate::format::format_number(t.rows.len() as f64)
        ));
    }
    notes
}

fn render(
    heading: Heading,
    thresholds: Option<Thresholds>,
    sections: Vec<Section<'_>>,
) -> Result<String, Error> {
    let (sections, left_out) = empty::left_out(sections);
    // a run's page opens with the digest; a sweep's (no `outcomes` table) does not
    let tables: Vec<Table> = sections
        .iter()
        .filter(|s| s.table.name == "outcomes")
        .map(|s| s.table.clone().into_owned())
        .collect();
    let digest = crate::report::digest::outcomes(&tables).map(|t| DigestView {
        title: t.title.clone(),
        table: TableView::of(&t),
        notes: t.notes.clone(),
        answers: crate::report::digest::ANSWERS
            .iter()
            .filter(|name| sections.iter().any(|s| s.table.name == **name))
            .map(|name| name.to_string())
            .collect(),
    });
    let page = PageView {
        digest,
        left_out,
        version: env!("CARGO_PKG_VERSION"),
        title: heading.title,
        subtitle: heading.subtitle,
        about: heading.about.map(|a| a.trim().to_string()),
        thresholds: thresholds.map(|t| ThresholdsView {
            summary: t.summary,
            rule: t.rule,
            table: TableView::exact(t.table),
        }),
        sections: sections
            .into_iter()
            .map(|s| SectionView {
                grid: s.grid,
                name: s.table.name.clone(),
                title: s.table.title.clone(),
                notes: page_notes(&s.table, &s.file),
                file: s.file,
                charts: s.charts,
                table: SectionTable::of(&s.table),
            })
            .collect(),
    };
    let mut env = minijinja::Environment::new();
    let fail = |e: minijinja::Error| Error::Other(format!("cannot render {FILE}: {e}"));
    env.add_template("report.html", TEMPLATE).map_err(fail)?;
    env.get_template("report.html")
        .and_then(|t| t.render(minijinja::value::Serde(&page)))
        .map(|mut html| {
            html.push('\n');
            html
        })
        .map_err(fail)
}

/// A page of `sections` under `heading` (`resim boundary`'s).
pub(crate) fn sections_page(heading: Heading, sections: Vec<Section<'_>>) -> Result<String, Error> {
    render(heading, None, sections)
}

/// A row's compare-axis labels as one name ("baseline, greedy"), or `whole`.
fn group_name(row: &[Cell], axes: usize, whole: &str) -> String {
    if axes == 0 {
        whole.to_string()
    } else {
        row[..axes]
            .iter()
            .map(Cell::render)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Rows grouped by `key`, groups and their rows in first-seen order.
fn grouped<'a, K: PartialEq>(
    rows: impl IntoIterator<Item = &'a Vec<Cell>>,
    key: impl Fn(&[Cell]) -> K,
) -> Vec<(K, Vec<&'a Vec<Cell>>)> {
    let mut out: Vec<(K, Vec<&Vec<Cell>>)> = Vec::new();
    for row in rows {
        let k = key(row);
        match out.iter_mut().find(|(n, _)| *n == k) {
            Some((_, rows)) => rows.push(row),
            None => out.push((k, vec![row])),
        }
    }
    out
}

/// Rows grouped by their axis labels, groups in first-seen order.
fn groups(t: &Table, axes: usize) -> Vec<(String, Vec<&Vec<Cell>>)> {
    grouped(&t.rows, |row| group_name(row, axes, ""))
}

/// "processed (queue = 16)" or just "processed" without compare axes.
fn series_name(what: &str, group: &str) -> String {
    if group.is_empty() {
        what.to_string()
    } else {
        format!("{what} ({group})")
    }
}

/// The column names of the axes, for chart legends ("variant, policy").
fn axes_label(t: &Table, axes: usize) -> String {
    t.headers[..axes].join(", ")
}

/// The columns of `outcomes` that sum to `requests`: answered, then each way of
/// failing (the stacked bars of its chart).
const OUTCOME_PARTS: [&str; 8] = [
    "answered",
    "dropped",
    "timed_out",
    "shed",
    "rejected",
    "errors",
    "refused",
    "not_found",
];

/// One scenario of a run of several, as `index.html` lists it.
pub struct IndexEntry {
    /// The scenario's name.
    pub title: String,
    /// Its folder, relative to the index (its `report.html` is in it).
    pub folder: String,
    /// Whether the folder holds a `report.html` (not with `--no-report`).
    pub report: bool,
    /// The figures that sum it up (see [`crate::report::digest::headline`]).
    pub headline: String,
    /// The scenario's `about`.
    pub about: Option<String>,
}

/// The file name of the index a run of several scenarios writes.
pub const INDEX: &str = "index.html";

/// `index.html`: a link to each scenario's report, with its title, headline
/// and `about`. Self-contained like the reports (no script, no external URL).
pub fn index_page(entries: &[IndexEntry]) -> String {
    use std::fmt::Write;
    let e = |s: &str| minijinja::HtmlEscape(s).to_string();
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>resim: the scenarios of this run</title>\n<style>\n\
         body { font-family: sans-serif; margin: 1.5em 2em; color: #222; background: #fff; max-width: 60em; }\n\
         h1 { font-size: 1.5em; } li { margin: 0.8em 0; } .headline { color: #333; } .about { color: #555; font-size: 0.9em; }\n\
         </style>\n</head>\n<body>\n<h1>The scenarios of this run</h1>\n<ul>\n",
    );
    for entry in entries {
        // (the folder escaped alone: the escape would write `/` as `&#x2f;`)
        let target = if entry.report {
            format!("{}/{FILE}", e(&entry.folder))
        } else {
            format!("{}/", e(&entry.folder))
        };
        // writing into a String cannot fail
        let _ = write!(
            out,
            "<li><a href=\"{}\">{}</a><br><span class=\"headline\">{}</span>",
            target,
            e(&entry.title),
            e(&entry.headline)
        );
        if let Some(about) = &entry.about {
            let _ = write!(out, "<br><span class=\"about\">{}</span>", e(about.trim()));
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n</body>\n</html>\n");
    out
}

/// The report of one `resim run`: `tables` are every table written (printed ones
/// and chart tables), `axes` the number of compare-axis columns they start with.
pub fn run_page(
    heading: Heading,
    tables: &[&Table],
    axes: usize,
    times: &[RowTimes],
    thresholds: Option<Thresholds>,
) -> Result<String, Error> {
    let find = |name: &str| tables.iter().find(|t| t.name == name).copied();
    let mut sections = Vec::new();
    for &t in tables {
        let charts = match t.name.as_str() {
            "ladder" => ladder_charts(t, find("findings"), axes)?,
            "latency_cdf" => latency_chart(t, axes)?
                .into_iter()
                .chain(tail::tail_chart(t, axes)?)
                .collect(),
            "timeseries" => timeseries_charts(t, find("recovery"), axes, times)?,
            "timeseries_limiters" => {
                limiter_window_charts(t, &run_ends(find("timeseries"), axes), axes, times)?
            }
            "timeseries_concurrency" => concurrency::limit_charts(t, axes, times)?,
            "timeseries_services" => keyed_rate_charts(
                t,
                &KeyedRates {
                    keys: &["service"],
                    join: " -> ",
                    value: "arrivals",
                    what: "Arrivals per second at each server and dependency",
                    y_label: "arrivals per second",
                },
                find("recovery"),
                &run_ends(find("timeseries"), axes),
                axes,
                times,
            )?,
            "timeseries_services_replicas" => keyed_rate_charts(
                t,
                &KeyedRates {
                    keys: &["service", "replica"],
                    join: "#",
                    value: "processed",
                    what: "Requests processed per second by each replica",
                    y_label: "requests per second",
                },
                find("recovery"),
                &run_ends(find("timeseries"), axes),
                axes,
                times,
            )?,
            "timeseries_replicas" => keyed_rate_charts(
                t,
                &KeyedRates {
                    keys: &["replica"],
                    join: " -> ",
                    value: "sent",
                    what: "Requests per second sent to each replica (outlier detection's intervals)",
                    y_label: "requests per second",
                },
                find("recovery"),
                &run_ends(find("timeseries"), axes),
                axes,
                times,
            )?,
            "timeseries_calls" => keyed_rate_charts(
                t,
                &KeyedRates {
                    keys: &["caller", "target"],
                    join: " -> ",
                    value: "attempts",
                    what: "Attempts per second at each call site",
                    y_label: "attempts per second",
                },
                find("recovery"),
                &run_ends(find("timeseries"), axes),
                axes,
                times,
            )?,
            "outcomes" | "limiters" | "members" => count_charts(t, axes)?,
            _ => Vec::new(),
        };
        let grid = charts.len() > 1 && t.name.starts_with("timeseries");
        sections.push(Section {
            table: Cow::Borrowed(t),
            file: format!("{}.csv", t.name),
            charts,
            grid,
        });
    }
    render(heading, thresholds, sections)
}

/// The stacked bars of a table of counts: every request of `outcomes` (and
/// its failed ones on their own scale), the passes and rejects of `limiters`
/// and `members`.
fn count_charts(t: &Table, axes: usize) -> Result<Vec<String>, Error> {
    match t.name.as_str() {
        "outcomes" => {
            let mut charts = stacked(
                t,
                axes,
                &["workload"],
                &OUTCOME_PARTS,
                "Every request per row: answered, and each way of failing",
                "requests",
            )?;
            charts.extend(failures::failure_chart(t, axes)?);
            Ok(charts)
        }
        "limiters" => stacked(
            t,
            axes,
            &["limiter"],
            &["passed", "rejected"],
            "Limiter passes and rejects per limiter (and key)",
            "requests",
        ),
        "members" => stacked(
            t,
            axes,
            &["limiter", "member"],
            &["passed", "rejected"],
            "Limiter passes and rejects per member",
            "requests",
        ),
        _ => Ok(Vec::new()),
    }
}

/// Ladder curves: processed and successful requests per step, and the p95 queue
/// wait, against the step; the findings (saturation, knee, true limit) as
/// dashed lines.
fn ladder_charts(t: &Table, findings: Option<&Table>, axes: usize) -> Result<Vec<String>, Error> {
    let Some(step) = t.headers.get(axes).cloned() else {
        return Ok(Vec::new());
    };
    let curve = |column: &str| -> Vec<Series> {
        let Some(c) = t.column(column) else {
            return Vec::new();
        };
        groups(t, axes)
            .into_iter()
            .map(|(g, rows)| Series {
                name: series_name(column, &g),
                points: rows
                    .iter()
                    .filter_map(|r| Some((r[axes].number()?, r[c].number()?)))
                    .collect(),
            })
            .collect()
    };
    let mut markers = Vec::new();
    if let Some(f) = findings {
        for (column, what) in [
            ("saturation_concurrency", "saturation"),
            ("knee_concurrency", "knee"),
            ("true_limit", "true limit"),
        ] {
            let Some(c) = f.column(column) else { continue };
            for row in &f.rows {
                if let Some(x) = row[c].number() {
                    let g = group_name(row, axes, "");
                    markers.push(Marker {
                        name: series_name(&format!("{what}: {step} = {}", row[c].render()), &g),
                        x,
                    });
                }
            }
        }
    }
    let mut throughput = curve("processed");
    throughput.extend(curve("successful"));
    let wait = curve("p95_wait_rounds");
    let mut out = vec![charts::line_chart(&LineChart {
        title: "Ladder: processed and successful requests per step".into(),
        x_label: format!("{step} (step)"),
        y_label: "requests per step".into(),
        series: throughput,
        markers: markers.clone(),
    })?];
    if !wait.is_empty() {
        out.push(charts::line_chart(&LineChart {
            title: "Ladder: p95 queue wait per step".into(),
            x_label: format!("{step} (step)"),
            y_label: "p95 wait (rounds of service)".into(),
            series: wait,
            markers,
        })?);
    }
    Ok(out)
}

/// The response-time distribution (CDF), one line per compare row.
fn latency_chart(t: &Table, axes: usize) -> Result<Option<String>, Error> {
    let (Some(p), Some(ms)) = (t.column("percentile"), t.column("latency_ms")) else {
        return Ok(None);
    };
    let series = groups(t, axes)
        .into_iter()
        .map(|(g, rows)| Series {
            name: if g.is_empty() { "requests".into() } else { g },
            points: rows
                .iter()
                .filter_map(|r| Some((r[ms].number()?, r[p].number()?)))
                .collect(),
        })
        .collect();
    let title = if axes == 0 {
        "Response-time distribution".to_string()
    } else {
        format!(
            "Response-time distribution per row ({})",
            axes_label(t, axes)
        )
    };
    Ok(Some(charts::line_chart(&LineChart {
        title,
        x_label: "response time (ms)".into(),
        y_label: "all requests answered within (%)".into(),
        series,
        markers: Vec::new(),
    })?))
}

/// Stacked bars of count columns, one bar per table row, labelled by its axis
/// cells and `keys` columns. Of `parts`, the first is always drawn; the others
/// only when some row has a count in them (a legend of ways nothing ended is
/// noise), so every request a table counts is in its bar.
fn stacked(
    t: &Table,
    axes: usize,
    keys: &[&str],
    parts: &[&str],
    title: &str,
    unit: &str,
) -> Result<Vec<String>, Error> {
    let mut columns: Vec<(usize, &str)> = Vec::new();
    for (k, name) in parts.iter().enumerate() {
        let Some(c) = t.column(name) else {
            if k == 0 {
                return Ok(Vec::new());
            }
            continue;
        };
        if k == 0
            || t.rows
                .iter()
                .any(|r| r[c].number().is_some_and(|v| v > 0.0))
        {
            columns.push((c, name));
        }
    }
    if columns.len() < 2 {
        // a lone part would be one full bar of one colour: nothing to compare
        let Some(&(c, name)) = columns.first() else {
            return Ok(Vec::new());
        };
        // the second of `parts` is drawn even when zero, so that a bar with no
        // failure still says which way it did not end
        if let Some(second) = parts.get(1).and_then(|n| t.column(n).map(|c2| (c2, *n))) {
            columns = vec![(c, name), second];
        }
    }
    let key_columns: Vec<usize> = keys.iter().filter_map(|k| t.column(k)).collect();
    let bars = t
        .rows
        .iter()
        .map(|r| Bar {
            label: bar_label(r, axes, &key_columns),
            parts: columns
                .iter()
                .map(|&(c, _)| r[c].number().unwrap_or(0.0))
                .collect(),
            end: None,
        })
        .collect();
    let y_label: Vec<&str> = t.headers[..axes]
        .iter()
        .map(String::as_str)
        .chain(keys.iter().copied().filter(|k| t.column(k).is_some()))
        .collect();
    Ok(vec![charts::bar_chart(&BarChart {
        title: title.into(),
        x_label: unit.into(),
        y_label: y_label.join(", "),
        parts: columns.iter().map(|(_, n)| n.to_string()).collect(),
        bars,
        first_color: 0,
    })?])
}

/// A bar's label: the row's axis cells and its `keys` cells, joined.
fn bar_label(r: &[Cell], axes: usize, keys: &[usize]) -> String {
    r[..axes]
        .iter()
        .chain(keys.iter().map(|&c| &r[c]))
        .map(Cell::render)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The unit a metric's name ends in, for axis labels.
pub(crate) fn unit_of(metric: &str) -> &'static str {
    let column = metric.rsplit('.').next().unwrap_or(metric);
    if column == "stuck" {
        return "share of replications";
    }
    [
        ("_ms", "ms"),
        ("_pct", "%"),
        ("_per_s", "per s"),
        ("_rps", "per s"),
        ("_slots", "slots"),
        ("slots", "slots"),
        ("_rounds", "rounds of service"),
        ("_concurrency", "concurrent requests"),
    ]
    .iter()
    .find(|(suffix, _)| column.ends_with(suffix))
    .map_or("count", |(_, unit)| unit)
}

/// The report of a sweep (or of its merge): `summary`, `pooled` (percentiles of
/// every replication's requests together) and `paired` as written, forest plots
/// for `metrics` (the `[montecarlo] report` metrics, or the first few),
/// and, when the summary holds a time series, its per-window means per compare row
/// with the rows' fault windows (`times`, from the manifest) shaded.
pub fn sweep_page(
    heading: Heading,
    summary: &Table,
    pooled: Option<&Table>,
    paired: &Table,
    metrics: &[String],
    times: &[RowTimes],
    thresholds: Option<Thresholds>,
) -> Result<String, Error> {
    let mut sections = Vec::new();
    for (t, name_column, paired_rows) in [(summary, "metric", false), (paired, "metric", true)] {
        let (Some(m), Some(mean), Some(lo), Some(hi)) = (
            t.column(name_column),
            t.column("mean"),
            t.column("ci_low"),
            t.column("ci_high"),
        ) else {
            continue;
        };
        // the row's labels end where the metric (summary) or the axis (paired) starts
        let axes = if paired_rows {
            t.column("axis").unwrap_or(m)
        } else {
            m
        };
        let mut charts = forests(t, metrics, [m, axes, mean, lo, hi], paired_rows)?;
        if !paired_rows {
            let level = t
                .column("confidence")
                .and_then(|c| t.rows.first().map(|r| &r[c]))
                .and_then(Cell::number)
                .map_or_else(|| "confidence".to_string(), crate::format::percent);
            charts.extend(numeric::sweep_charts(t, metrics, &level, unit_of)?);
        }
        if t.rows.is_empty() {
            continue;
        }
        let shown = charted_lines(t, metrics, m);
        sections.push(Section {
            file: format!("{}.csv", t.name),
            table: Cow::Owned(shown),
            charts,
            grid: false,
        });
        if !paired_rows {
            sections.extend(sweep_time::section(summary, times)?);
            sections.extend(pooled.map(|t| Section {
                file: format!("{}.csv", t.name),
                table: Cow::Borrowed(t),
                charts: Vec::new(),
                grid: false,
            }));
        }
    }
    render(heading, thresholds, sections)
}

/// A forest plot per charted metric of a sweep's summary (a row's mean and its
/// interval) or of its paired differences (`paired`: a row against the
/// reference). `columns`: the metric, where the row's labels end, the mean and
/// the interval's ends.
fn forests(
    t: &Table,
    metrics: &[String],
    columns: [usize; 5],
    paired_rows: bool,
) -> Result<Vec<String>, Error> {
    let [m, axes, mean, lo, hi] = columns;
    let mut charts = Vec::new();
    for metric in metrics {
        let rows: Vec<Interval> = t
            .rows
            .iter()
            .filter(|r| r[m].render() == *metric)
            .filter_map(|r| {
                let columns: Vec<usize> = (0..axes).collect();
                let mut label = numeric::labelled(&t.headers, r, &columns);
                if label.is_empty() {
                    label = "all rows".into();
                }
                if paired_rows {
                    label = format!("{label} vs {}={}", r[axes].render(), r[axes + 1].render());
                }
                Some(Interval {
                    label,
                    mean: r[mean].number()?,
                    low: r[lo].number(),
                    high: r[hi].number(),
                })
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let unit = unit_of(metric);
        let (title, x_label) = if paired_rows {
            (
                format!("{metric}: paired difference to the reference row"),
                format!("difference in {metric} ({unit})"),
            )
        } else {
            (
                format!("{metric}: mean per row"),
                format!("mean {metric} ({unit})"),
            )
        };
        charts.push(charts::forest(&Forest {
            title,
            x_label,
            y_label: String::new(),
            rows,
            zero_line: paired_rows,
        })?);
    }
    Ok(charts)
}

/// The page's table of a sweep's summary: the lines of the charted metrics
/// (the CSV file holds them all), with a note saying what was left out.
fn charted_lines(t: &Table, metrics: &[String], m: usize) -> Table {
    let mut shown = t.clone();
    shown.rows.retain(|r| metrics.contains(&r[m].render()));
    // the file's lines: the per-window ones of a time series only with
    // `[montecarlo] windows`, which the page (the same either way) leaves aside
    let total = t
        .rows
        .iter()
        .filter(|r| !crate::table::per_window(&r[m].render()))
        .count();
    if shown.rows.len() < t.rows.len() {
        shown.notes.insert(
            0,
            format!(
                "Shown: the {} lines of the charted metrics; {}.csv has all {total}{}.",
                shown.rows.len(),
                t.name,
                if total < t.rows.len() {
                    " (and the per-window lines of the time series with `[montecarlo] windows = true`)"
                } else {
                    ""
                }
            ),
        );
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heading() -> Heading {
        Heading {
            title: "T <x>".into(),
            subtitle: "s".into(),
            about: None,
        }
    }

    fn ladder() -> (Table, Table) {
        let mut l = Table::new(
            "ladder",
            "L",
            ["concurrency", "processed", "p95_wait_rounds", "successful"]
                .map(String::from)
                .to_vec(),
        );
        for c in [1i64, 2, 4] {
            l.push(vec![c.into(), (c * 5).into(), 0i64.into(), (c * 4).into()]);
        }
        let mut f = Table::new(
            "findings",
            "F",
            ["saturation_concurrency", "knee_concurrency"]
                .map(String::from)
                .to_vec(),
        );
        f.push(vec![Cell::Empty, 2i64.into()]);
        (l, f)
    }

    #[test]
    fn a_section_body_is_what_the_template_loop_wrote() {
        let mut t = Table::new("t", "T", vec!["a".into(), "b".into()]);
        t.push(vec!["<b> & \"q\" 'x' /r".into(), 2.5f64.into()]);
        t.push(vec![Cell::Empty, 7i64.into()]);
        t.push(vec![true.into(), "plain".into()]);
        // the loop the body replaced, with minijinja's escaping of a .html template
        let old = "{% for row in rows %}<tr>{% for c in row %}<td{% if c.num %} class=\"num\"{% endif %}>{{ c.text }}</td>{% endfor %}</tr>\n{% endfor %}";
        let mut env = minijinja::Environment::new();
        env.add_template("t.html", old).unwrap();
        let rows = TableView::of(&t).rows;
        let want = env
            .get_template("t.html")
            .and_then(|tpl| {
                tpl.render(minijinja::context! { rows => minijinja::value::Serde(&rows) })
            })
            .unwrap();
        assert!(
            want.contains("<td>&lt;b&gt; &amp; &quot;q&quot; &#x27;x&#x27; &#x2f;r</td>"),
            "{want}"
        );
        assert!(want.contains("<td class=\"num\">2.500</td>"), "{want}");
        assert_eq!(SectionTable::of(&t).body, want);
    }

    #[test]
    fn a_run_page_holds_each_table_and_its_charts_escaped() {
        let (l, f) = ladder();
        let page = run_page(heading(), &[&l, &f], 0, &[], None).unwrap();
        assert!(page.contains("<title>T &lt;x&gt;</title>"), "{page}");
        assert_eq!(page.matches("<svg").count(), 2, "two ladder charts");
        assert!(page.contains("knee: concurrency = 2"), "finding marked");
        assert!(
            !page.contains("saturation:"),
            "an empty finding is not marked"
        );
        assert_eq!(page.matches("<table>").count(), 2);
        let (l, f) = ladder();
        assert_eq!(page, run_page(heading(), &[&l, &f], 0, &[], None).unwrap());
    }

    #[test]
    fn the_last_window_is_a_rate_over_the_part_that_ran_or_left_out_when_short() {
        let rows: Vec<Vec<Cell>> = [(0i64, 10i64), (1000, 20), (2000, 6)]
            .iter()
            .map(|&(s, n)| vec![s.into(), n.into()])
            .collect();
        let rows: Vec<&Vec<Cell>> = rows.iter().collect();
        // the run ended 600 ms into the last window: 6 in 0.6 s is 10 per s
        assert_eq!(
            steps(&rows, 0, 1, 1000.0, Some(2600.0)),
            [
                (0.0, 10.0),
                (1.0, 10.0),
                (1.0, 20.0),
                (2.0, 20.0),
                (2.0, 10.0),
                (2.6, 10.0)
            ]
        );
        // 200 ms would make it 30 per s out of a few requests: not charted
        assert_eq!(steps(&rows, 0, 1, 1000.0, Some(2200.0)).len(), 4);
        // a run that ends in its first window keeps it
        assert_eq!(
            steps(&rows[..1], 0, 1, 1000.0, Some(100.0)),
            [(0.0, 100.0), (0.1, 100.0)]
        );
        // without the run's end: every window at full width
        assert_eq!(steps(&rows, 0, 1, 1000.0, None).len(), 6);
    }

    /// A line per key, the same colour for a key in every compare row's
    /// chart, and past 20 keys the 20 with the largest counts (the title
    /// says so).
    #[test]
    fn keyed_rates_draw_a_line_per_key_and_the_busiest_twenty_past_that() {
        let table = |sites: i64| {
            let headers = ["row", "window_start_ms", "caller", "target", "attempts"];
            let mut t = Table::new("timeseries_calls", "T", headers.map(String::from).to_vec());
            for row in ["a", "b"] {
                for w in [0i64, 1000] {
                    for k in 0..sites {
                        let cells = vec![
                            row.into(),
                            w.into(),
                            "c".into(),
                            format!("t{k}").into(),
                            (k * 10).into(),
                        ];
                        t.push(cells);
                    }
                }
            }
            t
        };
        let k = KeyedRates {
            keys: &["caller", "target"],
            join: " -> ",
            value: "attempts",
            what: "Attempts per second at each call site",
            y_label: "attempts per second",
        };
        let charts = keyed_rate_charts(&table(3), &k, None, &[], 1, &[]).unwrap();
        assert_eq!(charts.len(), 2, "one per compare row");
        for c in &charts {
            for key in ["c -&gt; t0", "c -&gt; t1", "c -&gt; t2"] {
                assert_eq!(c.matches(key).count(), 1, "{key}");
            }
            assert!(
                c.contains("row = b") || c.contains("row = a"),
                "titled by its row"
            );
        }
        let t = table(25);
        let charts = keyed_rate_charts(&t, &k, None, &[], 1, &[]).unwrap();
        let c = &charts[0];
        assert!(c.contains("row = a (the 20 busiest of 25)"), "{c}");
        assert!(c.contains("\nc -&gt; t24\n") && c.contains("\nc -&gt; t5\n"));
        assert!(
            !c.contains("\nc -&gt; t4\n"),
            "the quietest five are left out"
        );
    }

    #[test]
    fn units_come_from_the_metric_name() {
        assert_eq!(unit_of("outcomes.wasted_ms"), "ms");
        assert_eq!(unit_of("outcomes.held_slots"), "slots");
        assert_eq!(unit_of("outcomes.answered"), "count");
    }
}
