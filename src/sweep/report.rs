//! The printed sweep report: means with their intervals, per row and per paired
//! comparison. With `[montecarlo] report = [metrics]` one column per metric
//! ("mean +/- half-width", or "mean [low, high]" when the interval is not
//! symmetric, as Wilson's near 0 or 1); without it, every metric one per line.
//! A recovery time shows its median over every replication and how many
//! recovered ("median 1000, 17/20 recovered"), never a mean of the recovered ones.

use super::headline::{self, Better};
use super::manifest::Manifest;
use super::summary::Summary;
use crate::error::Error;
use crate::format::percent;
use crate::report::html::{self, Heading, Thresholds};
use crate::report::{Cell, Table};
use std::collections::HashMap;
use std::path::Path;

/// Metrics charted when neither `[montecarlo] report` nor the headline names
/// any (a scenario without an `outcomes` table): the first few.
const DEFAULT_CHARTED: usize = 6;

/// `report.html` of a whole sweep or a merge. It reads only what a merge has too
/// (the manifest's sweep-defining fields and the summary), so both write the same
/// bytes.
pub fn html_page(
    manifest: &Manifest,
    s: &Summary,
    thresholds: Option<Thresholds>,
) -> Result<Vec<u8>, Error> {
    let metrics: Vec<String> = if !manifest.report.is_empty() {
        manifest.report.clone()
    } else {
        match headline_metrics(manifest, s) {
            m if m.is_empty() => manifest
                .metrics
                .iter()
                .take(DEFAULT_CHARTED)
                .cloned()
                .collect(),
            m => m,
        }
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
        if let (Some(k), Some(n)) = (
            Cell::number(cell(self.recovered)),
            Cell::number(cell(self.n)),
        ) {
            let median = Cell::number(cell(self.p50))
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
    match (Cell::number(mean), Cell::number(low), Cell::number(high)) {
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

/// The metrics a sweep without `[montecarlo] report` shows and charts: its
/// headline ([`super::headline`]) as the summary has them. A folder written
/// before the manifest kept a headline gets one chosen from its metric names.
pub fn headline_metrics(manifest: &Manifest, s: &Summary) -> Vec<String> {
    let candidates = if manifest.headline.is_empty() {
        headline::candidates(&manifest.metrics, &[], &[])
    } else {
        manifest.headline.clone()
    };
    headline::shown(&candidates, &s.summary)
}

/// The printed report of a whole sweep or merge: with `[montecarlo] report`,
/// those metrics per row and per paired difference; without, the headline
/// and one sentence per paired comparison ([`headline_report`]); with `all`
/// (`--all-metrics`), every metric that differs between the rows.
pub fn render(s: &Summary, manifest: &Manifest, all: bool) -> String {
    let (report, confidence) = (&manifest.report, manifest.confidence);
    let level = percent(confidence);
    let mut out = String::new();
    if report.is_empty() && !all {
        let metrics = headline_metrics(manifest, s);
        if !metrics.is_empty() {
            let windows = manifest
                .metrics
                .iter()
                .filter(|m| crate::table::per_window(m))
                .count();
            let in_files = if manifest.windows {
                manifest.metrics.len()
            } else {
                manifest.metrics.len() - windows
            };
            let mut out = headline_report(s, &metrics, confidence, in_files);
            if windows > 0 && !manifest.windows {
                out.push_str(&crate::report::wrap(
                    &format!(
                        "The {windows} per-window metrics of the time series are in replications.csv; \
                         `[montecarlo] windows = true` puts them in summary.csv and paired.csv too."
                    ),
                    crate::report::WIDTH,
                ));
            }
            return out;
        }
    }
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

/// Comparisons printed as sentences; the rest are in `paired.csv`.
const MAX_SENTENCES: usize = 8;

/// The headline report: one line per headline metric with one column per
/// compare row, then one sentence per paired comparison saying which row is
/// better on what, with each difference's interval, and how to see the rest.
fn headline_report(s: &Summary, metrics: &[String], confidence: f64, all: usize) -> String {
    let level = percent(confidence);
    let summary = &s.summary;
    let (Some(axes), Some(cols)) = (summary.column("metric"), Columns::of(summary)) else {
        return String::new();
    };
    let mut rows: Vec<String> = Vec::new();
    for r in &summary.rows {
        let label = r[..axes]
            .iter()
            .map(Cell::render)
            .collect::<Vec<_>>()
            .join(" / ");
        if rows.last() != Some(&label) {
            rows.push(label);
        }
    }
    let axis_names = summary.headers[..axes].join(" / ");
    let mut t = Table::new(
        "headline",
        &format!(
            "Mean +/- half-width of its {level} interval{}",
            if axes == 0 {
                String::new()
            } else {
                format!(", one column per compare row ({axis_names})")
            }
        ),
        std::iter::once("metric".to_string())
            .chain(rows.iter().cloned())
            .collect(),
    );
    for name in metrics {
        let mut row = vec![Cell::Text(short(name).to_string())];
        row.extend(
            summary
                .rows
                .iter()
                .filter(|r| r[axes].render() == *name)
                .map(|r| cols.shown(r)),
        );
        row.resize(rows.len() + 1, Cell::Empty);
        t.push(row);
    }
    t.notes
        .extend(empty_tail_notes(summary, metrics, axes, &cols));
    let mut out = format!("\n{}", t.render_text());
    let sentences = verdicts(&s.paired, metrics, &level);
    if let Some((first, _)) = sentences.first() {
        out.push('\n');
        out.push_str(&crate::report::wrap(
            &format!(
                "Paired differences against {first} (the same replications on both sides, {level} intervals):"
            ),
            crate::report::WIDTH,
        ));
        for (_, sentence) in sentences.iter().take(MAX_SENTENCES) {
            out.push_str(&crate::report::wrap(
                &format!("- {sentence}"),
                crate::report::WIDTH,
            ));
        }
        if sentences.len() > MAX_SENTENCES {
            out.push_str(&format!(
                "- ... {} more comparison(s) in paired.csv\n",
                sentences.len() - MAX_SENTENCES
            ));
        }
    }
    out.push('\n');
    out.push_str(&crate::report::wrap(
        &format!(
            "These are the headline metrics; `--all-metrics` prints those of all {all} that differ between \
             rows, summary.csv and paired.csv hold each, pooled.csv the percentiles of all requests together; \
             `[montecarlo] report = [..]` chooses the metrics shown."
        ),
        crate::report::WIDTH,
    ));
    out
}

/// Why a percentile of all requests is empty in the headline: more requests
/// failed in every replication of that row than the percentile leaves out.
fn empty_tail_notes(
    summary: &Table,
    metrics: &[String],
    axes: usize,
    cols: &Columns,
) -> Vec<String> {
    let mut notes = Vec::new();
    let undefined: Vec<&str> = metrics
        .iter()
        .filter(|m| m.ends_with("_all_ms"))
        .filter(|m| {
            summary
                .rows
                .iter()
                .any(|r| r[axes].render() == **m && r[cols.mean] == Cell::Empty)
        })
        .map(|m| short(m))
        .collect();
    for m in undefined {
        let q = m
            .strip_prefix('p')
            .and_then(|r| r.strip_suffix("_all_ms"))
            .and_then(|d| d.parse::<f64>().ok())
            .map(|d| if d >= 100.0 { d / 10.0 } else { d });
        if let Some(q) = q {
            notes.push(format!(
                "An empty {m}: more than {} % of the requests failed in every replication of that row, \
                 so no time within which {} % of ALL of them were answered exists.",
                crate::format::format_number(100.0 - q),
                crate::format::format_number(q)
            ));
        }
    }
    notes
}

/// A metric's name as the headline shows it: without `outcomes.`.
fn short(name: &str) -> &str {
    name.strip_prefix("outcomes.").unwrap_or(name)
}

/// One sentence per paired comparison of `paired` (`paired.csv`), over
/// `metrics` in order, each with the reference it is against
/// (`variant=round-robin`).
fn verdicts(paired: &Table, metrics: &[String], level: &str) -> Vec<(String, String)> {
    let (Some(axis_at), Some(cols)) = (paired.column("axis"), Columns::of(paired)) else {
        return Vec::new();
    };
    let metric_at = axis_at + 2;
    let mut out = Vec::new();
    let mut start = 0;
    while start < paired.rows.len() {
        let key = &paired.rows[start][..metric_at];
        let end = (start..paired.rows.len())
            .find(|&i| paired.rows[i][..metric_at] != *key)
            .unwrap_or(paired.rows.len());
        let group = &paired.rows[start..end];
        start = end;
        let axis = key[axis_at].render();
        let versus = key[axis_at + 1].render();
        let Some(at) = paired.headers[..axis_at].iter().position(|h| *h == axis) else {
            continue;
        };
        let subject = key[at].render();
        let context: Vec<String> = (0..axis_at)
            .filter(|&i| i != at)
            .map(|i| format!("{}={}", paired.headers[i], key[i].render()))
            .collect();
        let mut clauses = Vec::new();
        for name in metrics {
            let Some(r) = group.iter().find(|r| r[metric_at].render() == *name) else {
                continue;
            };
            let (mean, low, high) = (
                Cell::number(&r[cols.mean]),
                Cell::number(&r[cols.low]),
                Cell::number(&r[cols.high]),
            );
            let first = clauses.is_empty();
            clauses.push(clause(name, mean, low.zip(high), first.then_some(level)));
        }
        if clauses.is_empty() {
            continue;
        }
        let better: Vec<&str> = clauses
            .iter()
            .filter(|c| c.1 == Some(true))
            .map(|c| c.2.as_str())
            .collect();
        let worse: Vec<&str> = clauses
            .iter()
            .filter(|c| c.1 == Some(false))
            .map(|c| c.2.as_str())
            .collect();
        let ctx = if context.is_empty() {
            String::new()
        } else {
            format!(" (with {})", context.join(", "))
        };
        let lead = match (better.is_empty(), worse.is_empty()) {
            (false, true) => format!("{subject} is better than {versus}{ctx}"),
            (true, false) => format!("{subject} is worse than {versus}{ctx}"),
            (false, false) => format!(
                "{subject} against {versus}{ctx} is better on {}, worse on {}",
                and_list(&better),
                and_list(&worse)
            ),
            (true, true) => {
                format!("{subject} is not clearly better or worse than {versus}{ctx}")
            }
        };
        let text: Vec<&str> = clauses.iter().map(|c| c.0.as_str()).collect();
        out.push((
            format!("{axis}={versus}"),
            format!("{lead}: {}.", text.join("; ")),
        ));
    }
    out
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// What a metric is called in a sentence: a column of another table than
/// `outcomes` says which (`rejects (limiters)`), so that two clauses never read
/// alike.
fn spoken(name: &str) -> String {
    let word = spoken_column(name);
    match name.split_once('.') {
        Some((table, _)) if table != "outcomes" && word != short(name) => {
            format!("{word} ({table})")
        }
        _ => word.to_string(),
    }
}

/// What an `outcomes` column is called in a sentence.
fn spoken_column(name: &str) -> &str {
    let column = name.rsplit('.').next().unwrap_or(name);
    match column {
        "answered_pct" => "answered share",
        "p50_all_ms" => "p50 over all requests",
        "p90_all_ms" => "p90 over all requests",
        "p99_all_ms" => "p99 over all requests",
        "p999_all_ms" => "p99.9 over all requests",
        "timed_out" => "timeouts",
        "shed" => "sheds",
        "rejected" => "rejects",
        "dropped" => "drops",
        "refused" => "refusals",
        "not_found" => "not found",
        _ => short(name),
    }
}

/// One clause of a comparison: the difference `mean` of metric `name` in words,
/// with its interval `ci` (the first clause names the level), whether it is
/// better (`None`: the interval holds 0, or the metric has no better side) and
/// what the metric is called.
fn clause(
    name: &str,
    mean: Option<f64>,
    ci: Option<(f64, f64)>,
    level: Option<&str>,
) -> (String, Option<bool>, String) {
    let called = spoken(name);
    let Some(d) = mean else {
        return (format!("{called} not defined in both rows"), None, called);
    };
    let column = name.rsplit('.').next().unwrap_or(name);
    let up = d >= 0.0;
    let (more, less) = if column.ends_with("_ms") || !counts_failures(column) {
        ("higher", "lower")
    } else {
        ("more", "fewer")
    };
    let unit = if column.ends_with("_ms") { " ms" } else { "" };
    let word = if up { more } else { less };
    let size = format!("{:.2}{unit}", d.abs());
    let what = match column {
        "answered_pct" => format!(
            "answers {:.2} points {}",
            d.abs(),
            if up { "more" } else { "less" }
        ),
        c if counts_failures(c) => format!("{size} {word} {called}"),
        _ => format!("{called} {size} {word}"),
    };
    let Some((low, high)) = ci else {
        return (what, None, called);
    };
    // the interval in the clause's own direction: "14 ms lower (CI 9 to 19 ms)"
    let (a, b) = if up { (low, high) } else { (-high, -low) };
    let excludes = low > 0.0 || high < 0.0;
    let verdict = match headline::better(name) {
        Some(dir) if excludes => Some((dir == Better::Higher) == (d > 0.0)),
        _ => None,
    };
    let ci_name = level.map_or_else(|| "CI".to_string(), |l| format!("{l} CI"));
    let text = format!(
        "{what} ({ci_name} {a:.2} to {b:.2}{unit}, {} 0)",
        if excludes { "excludes" } else { "includes" }
    );
    (text, verdict, called)
}

/// Whether an outcomes column counts failed requests.
fn counts_failures(column: &str) -> bool {
    headline::FAILURES.contains(&column) || column == "failed"
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
