//! The printed sweep report: means with their intervals, per row and per paired
//! comparison. With `[montecarlo] report = [metrics]` one column per metric
//! ("mean +/- half-width"); without it, every metric one per line.

use super::manifest::Manifest;
use super::summary::{Summary, percent};
use crate::error::Error;
use crate::report::html::{self, Heading, Thresholds};
use crate::report::{Cell, Table};
use std::collections::HashMap;
use std::path::Path;

/// Metrics charted when `[montecarlo] report` names none: the first few.
const DEFAULT_CHARTED: usize = 6;

/// `report.html` of a whole sweep or a merge. It reads only what a merge has too
/// (the manifest's sweep-defining fields and the summary), so both write the same
/// bytes.
pub fn html_page(
    manifest: &Manifest,
    s: &Summary,
    thresholds: Option<Thresholds>,
) -> Result<Vec<u8>, Error> {
    let metrics: Vec<String> = if manifest.report.is_empty() {
        manifest
            .metrics
            .iter()
            .take(DEFAULT_CHARTED)
            .cloned()
            .collect()
    } else {
        manifest.report.clone()
    };
    let heading = Heading {
        title: manifest.scenario_name.clone(),
        subtitle: format!(
            "Monte-Carlo sweep: {} replication(s) x {} compare row(s), seed {}, {} intervals (Student t)",
            manifest.replications,
            manifest.rows,
            manifest.seed,
            percent(manifest.confidence)
        ),
        about: None,
    };
    let page = html::sweep_page(
        heading,
        &s.summary,
        &s.paired,
        &metrics,
        &manifest.timelines,
        thresholds,
    )?;
    Ok(page.into_bytes())
}

/// Columns of `summary.csv` after the axis columns.
const SUMMARY_TAIL: usize = 10;
/// Columns of `paired.csv` after the axis columns.
const PAIRED_TAIL: usize = 8;

fn num(c: &Cell) -> Option<f64> {
    match c {
        Cell::Num(x) => Some(*x),
        Cell::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// "46.02 +/- 0.31" from a mean and its interval (just the mean without one).
fn mean_and_half(mean: &Cell, low: &Cell, high: &Cell) -> Cell {
    match (num(mean), num(low), num(high)) {
        (Some(m), Some(lo), Some(hi)) => Cell::Text(format!("{m:.2} +/- {:.2}", (hi - lo) / 2.0)),
        (Some(m), _, _) => Cell::Text(format!("{m:.2}")),
        _ => Cell::Empty,
    }
}

pub fn render(s: &Summary, report: &[String], confidence: f64) -> String {
    let level = percent(confidence);
    let mut out = String::new();
    if report.is_empty() {
        out.push('\n');
        out.push_str(&varying(&s.summary, &level));
        out.push_str(&crate::report::wrap(
            "Every metric per row: summary.csv (one column per metric: summary_wide.csv); \
             paired differences between rows: paired.csv.",
            crate::report::WIDTH,
        ));
        return out;
    }
    let axes = s.summary.headers.len() - SUMMARY_TAIL;
    let mut means = Table::new(
        "sweep",
        &format!("Mean +/- half-width of its {level} interval (Student t), per compare row"),
        s.summary.headers[..axes]
            .iter()
            .cloned()
            .chain(report.iter().cloned())
            .collect(),
    );
    wide(&s.summary, axes, report, &mut means, |r| {
        mean_and_half(&r[axes + 1], &r[axes + 3], &r[axes + 4])
    });
    out.push('\n');
    out.push_str(&means.render_text());

    let axes = s.paired.headers.len() - PAIRED_TAIL;
    let mut paired = Table::new(
        "paired",
        &format!(
            "Paired difference to the row with `versus` (same replications: common random numbers), {level} interval"
        ),
        s.paired.headers[..axes]
            .iter()
            .cloned()
            .chain(["versus".to_string()])
            .chain(report.iter().cloned())
            .collect(),
    );
    // key: the row's labels plus the axis compared
    wide(&s.paired, axes + 2, report, &mut paired, |r| {
        mean_and_half(&r[axes + 3], &r[axes + 5], &r[axes + 6])
    });
    for row in &mut paired.rows {
        // `axis` and `versus` (kept as the key) become one `axis=versus` cell
        let versus = row.remove(axes + 1).render();
        let axis = row[axes].render();
        row[axes] = Cell::Text(format!("{axis}={versus}"));
    }
    if !paired.rows.is_empty() {
        out.push('\n');
        out.push_str(&paired.render_text());
    }
    out
}

/// The default report: the metrics whose "mean +/- half-width" differs between
/// compare rows, one line per metric and one column per compare row, and the
/// others (the same in every row) on one line. With a single compare row every
/// metric is shown.
fn varying(summary: &Table, level: &str) -> String {
    let axes = summary.headers.len() - SUMMARY_TAIL;
    let at = |name: &str| summary.column(name).unwrap_or(axes);
    let (metric, mean, low, high) = (axes, at("mean"), at("ci_low"), at("ci_high"));
    // compare rows and metrics in first-seen order; the rendered cell of each pair
    let mut rows: Vec<String> = Vec::new();
    let mut order: Vec<String> = Vec::new();
    let mut cells: HashMap<String, Vec<Cell>> = HashMap::new();
    for r in &summary.rows {
        let label = r[..axes]
            .iter()
            .map(Cell::render)
            .collect::<Vec<_>>()
            .join(" / ");
        if rows.last() != Some(&label) {
            rows.push(label);
        }
        let name = r[metric].render();
        if name.starts_with("timeseries") {
            // one metric per window: in summary.csv, too many to print
            continue;
        }
        cells
            .entry(name.clone())
            .or_insert_with(|| {
                order.push(name.clone());
                Vec::new()
            })
            .push(mean_and_half(&r[mean], &r[low], &r[high]));
    }
    let constant =
        |name: &String| rows.len() > 1 && cells[name].iter().all(|c| *c == cells[name][0]);
    let axis_names = summary.headers[..axes].join(" / ");
    let mut t = Table::new(
        "summary",
        &format!(
            "Metrics that differ between compare rows: mean +/- half-width of its {level} interval (Student t){}",
            if axes == 0 {
                String::new()
            } else {
                format!("; one column per row ({axis_names})")
            }
        ),
        std::iter::once("metric".to_string())
            .chain(rows.iter().cloned())
            .collect(),
    );
    for name in order.iter().filter(|n| !constant(n)) {
        let mut row = vec![Cell::Text(name.clone())];
        row.extend(cells[name].iter().cloned());
        row.resize(rows.len() + 1, Cell::Empty);
        t.push(row);
    }
    let mut out = String::new();
    if !t.rows.is_empty() {
        out.push_str(&t.render_text());
    }
    let same: Vec<String> = order
        .iter()
        .filter(|n| constant(n))
        .map(|n| format!("{n} {}", cells[n][0].render()))
        .collect();
    if !same.is_empty() {
        out.push_str(&crate::report::wrap(
            &format!(
                "The same in every compare row ({}): {}",
                same.len(),
                same.join("; ")
            ),
            crate::report::WIDTH,
        ));
    }
    out
}

/// Turns a long table (one line per key x metric) into `into`'s wide rows: one per
/// key (its first `key` cells, followed by the `metric` column), one cell per
/// `report` metric.
fn wide(
    long: &Table,
    key: usize,
    report: &[String],
    into: &mut Table,
    cell: impl Fn(&[Cell]) -> Cell,
) {
    let metric_at = key;
    let mut current: Option<Vec<Cell>> = None;
    let mut values = vec![Cell::Empty; report.len()];
    let flush = |k: Option<Vec<Cell>>, values: &mut Vec<Cell>, into: &mut Table| {
        if let Some(mut k) = k {
            k.append(values);
            into.rows.push(k);
            *values = vec![Cell::Empty; report.len()];
        }
    };
    for r in &long.rows {
        let k = r[..key].to_vec();
        if current.as_ref() != Some(&k) {
            flush(current.take(), &mut values, into);
            current = Some(k);
        }
        let name = r[metric_at].render();
        if let Some(i) = report.iter().position(|m| *m == name) {
            values[i] = cell(r);
        }
    }
    flush(current, &mut values, into);
}

pub fn footer(dir: &Path) -> String {
    let note = "Rows are flushed at every finished replication: an interrupted sweep keeps every \
         finished replication in replications.partial.csv (each run's row is written once it and \
         all before it are done), and the folder's earlier results stay as they were. When the \
         sweep completes, the file becomes replications.csv, beside summary.csv, \
         summary_wide.csv and paired.csv.";
    format!(
        "\n{}CSV: {}\n",
        crate::report::wrap(note, crate::report::WIDTH),
        dir.display()
    )
}
