//! The printed sweep report: means with their intervals, per row and per paired
//! comparison. With `[montecarlo] report = [metrics]` one column per metric
//! ("mean +/- half-width", or "mean [low, high]" when the interval is not
//! symmetric, as Wilson's near 0 or 1); without it, every metric one per line.
//! A recovery time shows its median over every replication and how many
//! recovered ("median 1000, 17/20 recovered"), never a mean of the recovered ones.

use super::manifest::Manifest;
use super::summary::Summary;
use crate::error::Error;
use crate::format::percent;
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
            "Monte-Carlo sweep: {} replication(s) x {} compare row(s), seed {}, {} intervals (Student t; Wilson for 0/1 metrics)",
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
        s.pooled.as_ref(),
        &s.paired,
        &metrics,
        &manifest.timelines,
        thresholds,
    )?;
    Ok(page.into_bytes())
}

fn num(c: &Cell) -> Option<f64> {
    match c {
        Cell::Num(x) => Some(*x),
        Cell::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// Where a summary line's figures are (`summary.csv` or `paired.csv`): the
/// columns the report reads, by name.
#[derive(Clone, Copy)]
struct Columns {
    mean: usize,
    low: usize,
    high: usize,
    n: Option<usize>,
    p50: Option<usize>,
    interval: Option<usize>,
    recovered: Option<usize>,
}

impl Columns {
    fn of(t: &Table) -> Option<Columns> {
        Some(Columns {
            mean: t.column("mean")?,
            low: t.column("ci_low")?,
            high: t.column("ci_high")?,
            n: t.column("n"),
            p50: t.column("p50"),
            interval: t.column("interval"),
            recovered: t.column("recovered"),
        })
    }

    /// The line's figure as the report shows it: see [`mean_and_interval`], or,
    /// for a recovery time, its median over every replication and the share that
    /// recovered (`median 1000, 17/20 recovered`).
    fn shown(self, r: &[Cell]) -> Cell {
        let cell = |c: Option<usize>| c.map_or(&Cell::Empty, |c| &r[c]);
        if let (Some(k), Some(n)) = (num(cell(self.recovered)), num(cell(self.n))) {
            let median = num(cell(self.p50))
                .map_or_else(|| "beyond the run's end".to_string(), |m| format!("{m:.2}"));
            return Cell::Text(format!("median {median}, {k}/{n} recovered"));
        }
        if cell(self.interval).render() == "censored" {
            return Cell::Text("stuck in some runs".into());
        }
        mean_and_interval(&r[self.mean], &r[self.low], &r[self.high])
    }
}

/// "46.02 +/- 0.31" from a mean and its interval, "0.05 [0.01, 0.24]" when the
/// interval is not symmetric at the shown precision (a Wilson interval near 0 or
/// 1, a percentage cut at 100), just the mean without one.
fn mean_and_interval(mean: &Cell, low: &Cell, high: &Cell) -> Cell {
    match (num(mean), num(low), num(high)) {
        (Some(m), Some(lo), Some(hi)) => {
            let (below, above) = (format!("{:.2}", m - lo), format!("{:.2}", hi - m));
            if below == above {
                Cell::Text(format!("{m:.2} +/- {below}"))
            } else {
                Cell::Text(format!("{m:.2} [{lo:.2}, {hi:.2}]"))
            }
        }
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
        out.push_str(&pooled(s));
        out.push_str(&crate::report::wrap(
            "Every metric per row: summary.csv (one column per metric: summary_wide.csv); \
             paired differences between rows: paired.csv; percentiles of all requests: pooled.csv.",
            crate::report::WIDTH,
        ));
        return out;
    }
    let (Some(axes), Some(cols)) = (s.summary.column("metric"), Columns::of(&s.summary)) else {
        return out;
    };
    let mut means = Table::new(
        "sweep",
        &format!(
            "Mean +/- half-width of its {level} interval (Student t; Wilson for 0/1 metrics), per compare row"
        ),
        s.summary.headers[..axes]
            .iter()
            .cloned()
            .chain(report.iter().cloned())
            .collect(),
    );
    wide(&s.summary, axes, report, &mut means, |r| cols.shown(r));
    notes(
        &s.summary,
        axes,
        report.iter().map(String::as_str),
        &mut means,
    );
    out.push('\n');
    out.push_str(&means.render_text());

    let (Some(axes), Some(cols)) = (s.paired.column("axis"), Columns::of(&s.paired)) else {
        return out;
    };
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
    wide(&s.paired, axes + 2, report, &mut paired, |r| cols.shown(r));
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
    let (Some(axes), Some(cols)) = (summary.column("metric"), Columns::of(summary)) else {
        return String::new();
    };
    let metric = axes;
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
            .push(cols.shown(r));
    }
    let constant =
        |name: &String| rows.len() > 1 && cells[name].iter().all(|c| *c == cells[name][0]);
    let axis_names = summary.headers[..axes].join(" / ");
    let mut t = Table::new(
        "summary",
        &format!(
            "Metrics that differ between compare rows: mean +/- half-width of its {level} interval (Student t; Wilson for 0/1 metrics){}",
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
    notes(
        summary,
        axes,
        order.iter().filter(|n| !constant(n)).map(String::as_str),
        &mut t,
    );
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

/// The notes under a table of the report showing `shown` metrics: how a
/// recovery time and an interval cut to a range read.
fn notes<'a>(summary: &Table, axes: usize, shown: impl Iterator<Item = &'a str>, into: &mut Table) {
    let shown: Vec<&str> = shown.collect();
    let kinds = |kind: &str| {
        summary.column("interval").is_some_and(|i| {
            summary
                .rows
                .iter()
                .any(|r| r[i].render() == kind && shown.contains(&r[axes].render().as_str()))
        })
    };
    let censored = summary.column("recovered").is_some_and(|c| {
        summary
            .rows
            .iter()
            .any(|r| r[c] != Cell::Empty && shown.contains(&r[axes].render().as_str()))
    });
    if censored {
        into.notes.push(
            "Recovery times: the median over every replication, one that stayed stuck counting as beyond the \
             run's end (empty when half or more did), and how many recovered; summary.csv gives a mean only \
             when every replication recovered."
                .into(),
        );
    }
    if shown.iter().any(|m| is_percentile(m)) {
        into.notes.push(
            "A percentile here (p99_ms, ...) is the mean of each replication's own percentile, not a percentile of \
             the requests: pooled.csv has the end-to-end percentiles of every replication's requests together."
                .into(),
        );
    }
    if kinds("wilson") {
        into.notes.push(
            "0/1 metrics (one true/false per replication): the share of replications and its Wilson score interval."
                .into(),
        );
    }
    if kinds("t-clipped") {
        into.notes.push(
            "Percentages (_pct): the t interval cut to [0, 100], where the mean must lie.".into(),
        );
    }
}

/// Whether metric `name` is a per-replication percentile (`outcomes.p99_ms`,
/// `services.api.p95_wait_ms`, `...median_ms`): its mean over the replications
/// is no percentile of the requests.
fn is_percentile(name: &str) -> bool {
    let column = name.rsplit('.').next().unwrap_or(name);
    let digits = column
        .strip_prefix('p')
        .map(|rest| rest.bytes().take_while(u8::is_ascii_digit).count());
    column.ends_with("_ms") && (column.starts_with("median") || digits.is_some_and(|d| d > 0))
}

/// The pooled percentiles as the report prints them (nothing without them).
fn pooled(s: &Summary) -> String {
    match &s.pooled {
        Some(t) if !t.rows.is_empty() => format!("\n{}", t.render_text()),
        _ => String::new(),
    }
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

/// The line saying that `replications.csv` got `added` columns at the end
/// (nothing when none).
pub fn added_columns(added: usize) -> String {
    if added == 0 {
        return String::new();
    }
    crate::report::wrap(
        &format!(
            "{added} metric column(s) come from later replications: rows their tables had that replication 0 \
             of the compare row did not (e.g. the windows of a run that lasted longer). replications.csv has them \
             after the other metrics of their table, empty where a replication did not reach them; their n in \
             summary.csv counts the replications that did."
        ),
        crate::report::WIDTH,
    )
}

pub fn footer(dir: &Path) -> String {
    let note = "Rows are flushed at every finished replication: an interrupted sweep keeps every \
         finished replication in replications.partial.csv (each run's row is written once it and \
         all before it are done), and the folder's earlier results stay as they were. When the \
         sweep completes, the file becomes replications.csv, beside summary.csv, \
         summary_wide.csv, paired.csv, pooled.csv and histograms.csv.";
    format!(
        "\n{}CSV: {}\n",
        crate::report::wrap(note, crate::report::WIDTH),
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_told_by_their_column() {
        for yes in [
            "outcomes.p99_ms",
            "outcomes.all.p999_all_ms",
            "services.api.p95_wait_ms",
            "outcomes.median_ms",
        ] {
            assert!(is_percentile(yes), "{yes}");
        }
        for no in [
            "outcomes.mean_ms",
            "pool.peak_ms",
            "outcomes.p_ms",
            "outcomes.p99",
        ] {
            assert!(!is_percentile(no), "{no}");
        }
    }

    #[test]
    fn asymmetric_intervals_show_their_ends() {
        let c = |x: f64| Cell::Num(x);
        assert_eq!(
            mean_and_interval(&c(0.5), &c(0.3), &c(0.7)).render(),
            "0.50 +/- 0.20"
        );
        assert_eq!(
            mean_and_interval(&c(0.0), &c(0.0), &c(0.161)).render(),
            "0.00 [0.00, 0.16]"
        );
        assert_eq!(
            mean_and_interval(&c(3.0), &Cell::Empty, &Cell::Empty).render(),
            "3.00"
        );
    }
}
