//! `summary.csv` and `paired.csv` from the rows of `replications.csv`.
//!
//! The summarizer reads exactly what `replications.csv` holds, as text, in file
//! order, whether the rows come fresh from a sweep or from the files of merged
//! shards: the same bytes in give the same bytes out. Rows are grouped by
//! replication (the file is replication-major: every compare row of replication 0,
//! then of replication 1, ...); a group is all the memory it needs besides one
//! accumulator per (row, metric).
//!
//! Paired differences: because every row of a replication runs on the same random
//! streams, the difference between two rows in the same replication removes most of
//! the noise. For each row and each axis on which the row is not at the axis's first
//! value, `paired.csv` gives the row's value minus the value of the row that differs
//! only in that axis being at its first value ("weighted drops 2.1 +/- 0.3 more
//! than greedy"), with its own interval.
//!
//! Intervals fit the metric's kind ([`super::kinds`]): Student t for numbers
//! (cut to [0, 100] for percentages), Wilson for 0/1 metrics (Tango for their
//! paired differences). Each line's `interval` column names the one it uses.
//!
//! Censored metrics (recovery times, empty when the run stayed stuck): a stuck
//! replication is not a missing value but one beyond the run's end. `n` counts
//! every replication with the fault, `recovered` those that recovered, and `p50`
//! is the upper median sorted[n/2] over all n with the stuck ones last (empty when
//! at least half stayed stuck: the median is then beyond the run's end). `min`
//! is the fastest recovery. The mean, sd, interval and max are those of every
//! replication only when none stayed stuck; otherwise they would describe the
//! recovered ones alone, and are left empty (`interval` = `censored`). A paired
//! difference with a stuck side is censored the same way.

use super::kinds::{Kind, kinds};
use super::stats::{Median, Running, normal_quantile, t_quantile, tango, wilson};
use crate::error::Error;
use crate::format::percent;
use crate::report::{Cell, Table};
use std::collections::HashMap;

/// Values kept for exact medians across all (row, metric) series together
/// (8 bytes each): past it each series falls back to its bounded histogram.
const MEDIAN_BUDGET: usize = 8 << 20;

/// One paired comparison: `row` minus `reference` along axis `axis`.
struct Pair {
    row: usize,
    axis: usize,
    reference: usize,
}

pub struct Summarizer {
    axis_columns: Vec<String>,
    metrics: Vec<String>,
    confidence: f64,
    /// The compare rows' labels, learned from the first replication.
    rows: Vec<Vec<String>>,
    /// The replication being collected and its rows' parsed values.
    current: Option<String>,
    group: Vec<Vec<Option<f64>>>,
    /// The labels of the first replication's rows, until they are learnt.
    first_labels: Vec<Vec<String>>,
    /// Per row x metric.
    stats: Vec<Running>,
    medians: Vec<Median>,
    pairs: Vec<Pair>,
    /// `axis=value`: the reference row of the paired differences per axis.
    baseline: Vec<String>,
    /// Per axis, the label the paired differences are taken against.
    reference: Vec<String>,
    /// Per pair x metric.
    paired: Vec<Running>,
    /// Per metric: what its values are.
    kinds: Vec<Kind>,
    /// The metrics that are 0/1 or censored (counted apart).
    special: Vec<usize>,
    /// Per row x metric: the ones of a proportion, the stuck replications of a
    /// censored metric (0 for the other kinds).
    tally: Vec<u64>,
    /// Per pair x metric: for a proportion, the pairs 1 - 0 (`up`) and 0 - 1
    /// (`down`); for a censored metric, `up` counts the pairs with a stuck side.
    paired_up: Vec<u64>,
    paired_down: Vec<u64>,
    /// Data rows consumed (for messages).
    line: u64,
    source: String,
}

/// The finished tables.
pub struct Summary {
    pub summary: Table,
    pub paired: Table,
    /// `summary` pivoted for spreadsheets: one row per compare row, one column
    /// per metric (its mean).
    pub wide: Table,
    /// `pooled.csv`: percentiles over every replication's requests (absent in a
    /// merge of folders written before it).
    pub pooled: Option<Table>,
}

impl Summary {
    /// The tables written as CSV files; without `windows`, no line (or
    /// column) of a per-window metric of a time series (the report's charts
    /// of the windows read them from [`Summary::summary`], which has them all).
    pub fn tables(&self, windows: bool) -> Vec<Table> {
        let long = |t: &Table| -> Table {
            let Some(metric) = t.column("metric").filter(|_| !windows) else {
                return t.clone();
            };
            Table {
                rows: t
                    .rows
                    .iter()
                    .filter(|r| !super::headline::per_window(&r[metric].render()))
                    .cloned()
                    .collect(),
                ..t.clone()
            }
        };
        let wide = if windows {
            self.wide.clone()
        } else {
            let kept: Vec<usize> = (0..self.wide.headers.len())
                .filter(|&c| !super::headline::per_window(&self.wide.headers[c]))
                .collect();
            Table {
                headers: kept.iter().map(|&c| self.wide.headers[c].clone()).collect(),
                rows: self
                    .wide
                    .rows
                    .iter()
                    .map(|r| kept.iter().map(|&c| r[c].clone()).collect())
                    .collect(),
                ..self.wide.clone()
            }
        };
        let mut out = vec![long(&self.summary), long(&self.paired), wide];
        out.extend(self.pooled.clone());
        out
    }
}

impl Summarizer {
    /// `source` names the data in messages (a file path).
    pub fn new(
        axis_columns: Vec<String>,
        metrics: Vec<String>,
        confidence: f64,
        source: &str,
    ) -> Summarizer {
        Summarizer {
            kinds: Vec::new(),
            special: Vec::new(),
            tally: Vec::new(),
            paired_up: Vec::new(),
            paired_down: Vec::new(),
            axis_columns,
            metrics,
            confidence,
            rows: Vec::new(),
            current: None,
            group: Vec::new(),
            first_labels: Vec::new(),
            stats: Vec::new(),
            medians: Vec::new(),
            pairs: Vec::new(),
            baseline: Vec::new(),
            reference: Vec::new(),
            paired: Vec::new(),
            line: 0,
            source: source.to_string(),
        }
        .with_proportions(&[])
    }

    /// Paired differences against `axis=value` rows instead of each axis's first.
    pub fn with_baseline(mut self, baseline: Vec<String>) -> Summarizer {
        self.baseline = baseline;
        self
    }

    /// The metrics whose cells are booleans (the manifest's `proportions`): each
    /// gets a Wilson interval.
    pub fn with_proportions(mut self, proportions: &[String]) -> Summarizer {
        self.kinds = kinds(&self.metrics, proportions);
        self.special = (self.kinds.iter().enumerate())
            .filter(|(_, k)| matches!(k, Kind::Proportion | Kind::Censored { .. }))
            .map(|(i, _)| i)
            .collect();
        self
    }

    /// Names the data that follows in messages: `source`, whose data rows are
    /// counted on from `line` (a merge reads one shard file after another).
    pub fn set_source(&mut self, source: &str, line: u64) {
        self.source = source.to_string();
        self.line = line;
    }

    fn bad(&self, message: String) -> Error {
        Error::Other(format!(
            "{}: data row {}: {message}",
            self.source, self.line
        ))
    }

    /// One row of `replications.csv`: its axis labels, replication and metric values
    /// (as parsed from the row's text; `None` for an empty cell).
    pub fn push(
        &mut self,
        labels: &[String],
        replication: &str,
        values: &[Option<f64>],
    ) -> Result<(), Error> {
        self.line += 1;
        if labels.len() != self.axis_columns.len() || values.len() != self.metrics.len() {
            return Err(self.bad("wrong number of columns".into()));
        }
        for &k in &self.special {
            if let (Kind::Proportion, Some(x)) = (self.kinds[k], &values[k])
                && *x != 0.0
                && *x != 1.0
            {
                return Err(self.bad(format!(
                    "{}: {x} where a 0/1 metric (a boolean of the run's tables) needs 0 or 1",
                    self.metrics[k]
                )));
            }
        }
        if self.current.as_deref() != Some(replication) {
            self.close_group()?;
            self.current = Some(replication.to_string());
        }
        if self.rows.is_empty() {
            self.first_labels.push(labels.to_vec());
        } else if self.rows.get(self.group.len()).map(Vec::as_slice) != Some(labels) {
            return Err(self.bad(format!(
                "replication {replication} does not hold every compare row once, in order \
                 (a truncated or reordered file?)"
            )));
        }
        self.group.push(values.to_vec());
        Ok(())
    }

    /// Folds the collected replication into the accumulators.
    fn close_group(&mut self) -> Result<(), Error> {
        if self.group.is_empty() {
            return Ok(());
        }
        if self.rows.is_empty() {
            let labels = std::mem::take(&mut self.first_labels);
            self.learn_rows(labels)?;
        }
        let group = std::mem::take(&mut self.group);
        if group.len() != self.rows.len() {
            let rep = self.current.clone().unwrap_or_default();
            return Err(self.bad(format!(
                "replication {rep} has {} of the {} compare rows (a truncated file?)",
                group.len(),
                self.rows.len()
            )));
        }
        let m = self.metrics.len();
        for (i, values) in group.iter().enumerate() {
            for (k, v) in values.iter().enumerate() {
                if let Some(x) = *v {
                    self.stats[i * m + k].push(x);
                    self.medians[i * m + k].push(x);
                }
            }
        }
        for (p, pair) in self.pairs.iter().enumerate() {
            let (a, b) = (&group[pair.row], &group[pair.reference]);
            for k in 0..m {
                if let (Some(x), Some(y)) = (a[k], b[k]) {
                    self.paired[p * m + k].push(x - y);
                }
            }
        }
        // the counts of 0/1 and censored metrics (a censored metric's cell is
        // empty when its run stayed stuck, so the loops above left it out)
        let stuck = |v: &[Option<f64>], s: usize| v[s] == Some(1.0);
        for &k in &self.special {
            for (i, values) in group.iter().enumerate() {
                let counted = match self.kinds[k] {
                    Kind::Proportion => values[k] == Some(1.0),
                    Kind::Censored { stuck: s } => stuck(values, s),
                    _ => false,
                };
                self.tally[i * m + k] += u64::from(counted);
            }
            for (p, pair) in self.pairs.iter().enumerate() {
                let (a, b) = (&group[pair.row], &group[pair.reference]);
                let at = p * m + k;
                match self.kinds[k] {
                    Kind::Proportion => {
                        if let (Some(x), Some(y)) = (a[k], b[k]) {
                            self.paired_up[at] += u64::from(x > y);
                            self.paired_down[at] += u64::from(x < y);
                        }
                    }
                    Kind::Censored { stuck: s } => {
                        // both rows had the fault, and one (or both) stayed stuck
                        let known = |v: &[Option<f64>]| stuck(v, s) || v[k].is_some();
                        if known(a) && known(b) && (stuck(a, s) || stuck(b, s)) {
                            self.paired_up[at] += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
        self.group = group;
        self.group.clear();
        Ok(())
    }

    fn learn_rows(&mut self, labels: Vec<Vec<String>>) -> Result<(), Error> {
        self.rows = labels;
        let index: HashMap<&[String], usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, l)| (l.as_slice(), i))
            .collect();
        if index.len() != self.rows.len() {
            return Err(self.bad("the first replication repeats a compare row".into()));
        }
        let first = reference_labels(&self.axis_columns, &self.rows[0], &self.baseline)
            .map_err(|m| self.bad(m))?;
        for (i, labels) in self.rows.iter().enumerate() {
            for (axis, first_label) in first.iter().enumerate() {
                if labels[axis] == *first_label {
                    continue;
                }
                let mut reference = labels.clone();
                reference[axis] = first_label.clone();
                if let Some(&j) = index.get(reference.as_slice()) {
                    self.pairs.push(Pair {
                        row: i,
                        axis,
                        reference: j,
                    });
                }
            }
        }
        self.reference = first;
        let m = self.metrics.len();
        let series = (self.rows.len() * m).max(1);
        let cap = (MEDIAN_BUDGET / series).clamp(64, 1 << 20);
        self.stats = vec![Running::default(); self.rows.len() * m];
        self.medians = vec![Median::with_cap(cap); self.rows.len() * m];
        self.tally = vec![0; self.rows.len() * m];
        self.paired = vec![Running::default(); self.pairs.len() * m];
        self.paired_up = vec![0; self.pairs.len() * m];
        self.paired_down = vec![0; self.pairs.len() * m];
        Ok(())
    }

    pub fn finish(mut self) -> Result<Summary, Error> {
        self.close_group()?;
        let mut t = TIntervals::new(self.confidence);
        let (summary, means) = self.summary_table(&mut t);
        let paired = self.paired_table(&mut t);
        let wide = wide_means(&self.axis_columns, &self.metrics, &self.rows, &means);
        Ok(Summary {
            summary,
            paired,
            wide,
            pooled: None,
        })
    }

    /// A table's header: the axes' columns, then `rest`.
    fn headers(&self, rest: &[&str]) -> Vec<String> {
        self.axis_columns
            .iter()
            .cloned()
            .chain(rest.iter().map(|s| s.to_string()))
            .collect()
    }

    /// `summary.csv`: per row and metric, the replications' mean, spread,
    /// interval and order statistics; and each line's mean (for the wide
    /// table).
    fn summary_table(&mut self, t: &mut TIntervals) -> (Table, Vec<Option<f64>>) {
        let level = percent(self.confidence);
        let mut summary = Table::new(
            "summary",
            &format!(
                "Per row and metric over the replications: mean, sd, {level} interval of the mean \
                 (`interval`: Student t, t cut to [0, 100] for percentages, Wilson for 0/1 metrics), \
                 min, p50 (sorted[n/2]), max, n, the interval's confidence level; recovery times: \
                 `recovered` of n, and no mean unless every replication recovered"
            ),
            self.headers(&[
                "metric",
                "mean",
                "sd",
                "ci_low",
                "ci_high",
                "min",
                "p50",
                "max",
                "n",
                "confidence",
                "interval",
                "recovered",
            ]),
        );
        let confidence = self.confidence;
        let z = t.z;
        let mut t_interval = |r: &Running| t.interval(r);
        let m = self.metrics.len();
        let mut means = Vec::with_capacity(self.rows.len() * m);
        for (i, labels) in self.rows.iter().enumerate() {
            for (k, name) in self.metrics.iter().enumerate() {
                let at = i * m + k;
                let s = &self.stats[at];
                let median = &mut self.medians[at];
                let line = match self.kinds[k] {
                    Kind::Censored { .. } => {
                        censored_line(s, median, self.tally[at], &mut t_interval)
                    }
                    kind => {
                        let ci = match kind {
                            Kind::Proportion => wilson(self.tally[at], s.n(), z),
                            Kind::Percent => t_interval(s).map(|c| clip(c, 0.0, 100.0)),
                            _ => t_interval(s),
                        };
                        Line {
                            mean: s.mean(),
                            sd: s.sd(),
                            ci,
                            min: s.min(),
                            p50: median.median(),
                            max: s.max(),
                            n: s.n(),
                            interval: kind.interval(),
                            recovered: None,
                        }
                    }
                };
                means.push(line.mean);
                let mut cells = text_cells(labels);
                cells.push(name.as_str().into());
                cells.extend([
                    line.mean.into(),
                    line.sd.into(),
                    line.ci.map(|c| c.0).into(),
                    line.ci.map(|c| c.1).into(),
                    line.min.into(),
                    line.p50.into(),
                    line.max.into(),
                    line.n.into(),
                    confidence.into(),
                    line.interval.into(),
                    line.recovered.into(),
                ]);
                summary.push(cells);
            }
        }
        (summary, means)
    }

    /// `paired.csv`: per compared row and metric, the paired differences'
    /// mean, spread and interval.
    fn paired_table(&self, t: &mut TIntervals) -> Table {
        let level = percent(self.confidence);
        let (m, z) = (self.metrics.len(), t.z);
        let mut t_interval = |r: &Running| t.interval(r);
        let mut paired = Table::new(
            "paired",
            &format!(
                "Paired differences on common random numbers: row minus the row with `axis` at its first value (`versus`), \
                 {level} interval (`interval`: Student t, cut to [-100, 100] for percentages, Tango for 0/1 metrics)"
            ),
            self.headers(&[
                "axis", "versus", "metric", "mean", "sd", "ci_low", "ci_high", "n", "interval",
            ]),
        );
        for (p, pair) in self.pairs.iter().enumerate() {
            for (k, name) in self.metrics.iter().enumerate() {
                let at = p * m + k;
                let s = &self.paired[at];
                let kind = self.kinds[k];
                let (mean, sd, ci, n, interval) = match kind {
                    Kind::Censored { .. } if self.paired_up[at] > 0 => {
                        (None, None, None, s.n() + self.paired_up[at], "censored")
                    }
                    Kind::Proportion => (
                        s.mean(),
                        s.sd(),
                        tango(self.paired_up[at], self.paired_down[at], s.n(), z),
                        s.n(),
                        kind.paired_interval(),
                    ),
                    Kind::Percent => (
                        s.mean(),
                        s.sd(),
                        t_interval(s).map(|c| clip(c, -100.0, 100.0)),
                        s.n(),
                        kind.paired_interval(),
                    ),
                    _ => (
                        s.mean(),
                        s.sd(),
                        t_interval(s),
                        s.n(),
                        kind.paired_interval(),
                    ),
                };
                let mut cells = text_cells(&self.rows[pair.row]);
                cells.push(self.axis_columns[pair.axis].as_str().into());
                cells.push(self.reference[pair.axis].as_str().into());
                cells.push(name.as_str().into());
                cells.extend([
                    mean.into(),
                    sd.into(),
                    ci.map(|c| c.0).into(),
                    ci.map(|c| c.1).into(),
                    n.into(),
                    interval.into(),
                ]);
                paired.push(cells);
            }
        }
        paired
    }
}

/// Student t intervals at a confidence level, the t quantile kept per
/// count; and the normal quantile the 0/1 intervals use.
struct TIntervals {
    confidence: f64,
    z: f64,
    t_of_n: HashMap<u64, f64>,
}

impl TIntervals {
    fn new(confidence: f64) -> TIntervals {
        TIntervals {
            confidence,
            z: normal_quantile(0.5 + confidence / 2.0),
            t_of_n: HashMap::new(),
        }
    }

    /// The t interval of `r`'s mean (None below two values).
    fn interval(&mut self, r: &Running) -> Option<(f64, f64)> {
        let confidence = self.confidence;
        let t = *self
            .t_of_n
            .entry(r.n())
            .or_insert_with(|| t_quantile(0.5 + confidence / 2.0, r.n().max(2) as f64 - 1.0));
        r.interval_with(t)
    }
}

/// One line of `summary.csv` after the metric's name.
struct Line {
    mean: Option<f64>,
    sd: Option<f64>,
    ci: Option<(f64, f64)>,
    min: Option<f64>,
    p50: Option<f64>,
    max: Option<f64>,
    n: u64,
    interval: &'static str,
    recovered: Option<u64>,
}

/// The line of a censored metric: `s` and `median` hold the recovered
/// replications' values, `stuck` counts the others (see the module docs).
fn censored_line(
    s: &Running,
    median: &mut Median,
    stuck: u64,
    t_interval: &mut impl FnMut(&Running) -> Option<(f64, f64)>,
) -> Line {
    let recovered = s.n();
    let n = recovered + stuck;
    // sorted[n / 2] over all n, the stuck ones last: a recovered value when
    // that rank falls among them
    let p50 = median.at_rank(n / 2);
    if stuck == 0 {
        return Line {
            mean: s.mean(),
            sd: s.sd(),
            ci: t_interval(s),
            min: s.min(),
            p50,
            max: s.max(),
            n,
            interval: "t",
            recovered: Some(recovered),
        };
    }
    Line {
        mean: None,
        sd: None,
        ci: None,
        min: s.min(),
        p50,
        max: None,
        n,
        interval: "censored",
        recovered: Some(recovered),
    }
}

/// `(low, high)` intersected with `[min, max]`.
fn clip((low, high): (f64, f64), min: f64, max: f64) -> (f64, f64) {
    (low.clamp(min, max), high.clamp(min, max))
}

/// One row per compare row, one column per metric holding its mean over the
/// replications (empty when no replication had a value).
fn wide_means(
    axis_columns: &[String],
    metrics: &[String],
    rows: &[Vec<String>],
    means: &[Option<f64>],
) -> Table {
    let mut wide = Table::new(
        "summary_wide",
        "Mean of each metric per compare row (summary.csv, one column per metric)",
        axis_columns.iter().chain(metrics).cloned().collect(),
    );
    let m = metrics.len();
    for (i, labels) in rows.iter().enumerate() {
        let mut cells = text_cells(labels);
        cells.extend((0..m).map(|k| means[i * m + k].into()));
        wide.push(cells);
    }
    wide
}

/// Per axis, the label paired differences are taken against: the `value` of a
/// `baseline` entry `column=value` for that axis, else the first row's label.
pub fn reference_labels(
    columns: &[String],
    first: &[String],
    baseline: &[String],
) -> Result<Vec<String>, String> {
    let mut out = first.to_vec();
    for b in baseline {
        // with one compare axis, a row's label alone names it
        let (axis, value) = match (b.split_once('='), columns) {
            (Some(pair), _) => pair,
            (None, [only]) => (only.as_str(), b.as_str()),
            (None, _) => {
                return Err(format!(
                    "baseline `{b}`: with several compare axes, name the row by axis=value, e.g. policy=equal (the axes: {})",
                    crate::error::list(columns.iter().map(String::as_str))
                ));
            }
        };
        let (axis, value) = (axis.trim(), value.trim());
        let Some(i) = columns.iter().position(|c| c == axis) else {
            return Err(format!(
                "baseline `{b}`: no compare axis `{axis}` (the axes: {}){}",
                crate::error::list(columns.iter().map(String::as_str)),
                crate::error::did_you_mean(axis, columns.iter().map(String::as_str))
            ));
        };
        out[i] = value.to_string();
    }
    Ok(out)
}

fn text_cells(labels: &[String]) -> Vec<Cell> {
    labels.iter().map(|l| Cell::Text(l.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn summary_and_paired_differences_per_row() {
        let mut z = Summarizer::new(s(&["policy"]), s(&["t.dropped"]), 0.95, "test");
        // replication r: greedy drops r, equal drops r + 2 (same noise, shifted)
        for r in 0..4 {
            let rep = r.to_string();
            z.push(&s(&["greedy"]), &rep, &[Some(f64::from(r))])
                .unwrap();
            z.push(&s(&["equal"]), &rep, &[Some(f64::from(r + 2))])
                .unwrap();
        }
        let out = z.finish().unwrap();
        let csv = String::from_utf8(crate::report::to_csv(&out.summary).unwrap()).unwrap();
        assert_eq!(
            csv,
            "policy,metric,mean,sd,ci_low,ci_high,min,p50,max,n,confidence,interval,recovered\n\
             greedy,t.dropped,1.50,1.290994,-0.55426,3.55426,0,2,3,4,0.95,t,\n\
             equal,t.dropped,3.50,1.290994,1.44574,5.55426,2,4,5,4,0.95,t,\n"
        );
        let csv = String::from_utf8(crate::report::to_csv(&out.wide).unwrap()).unwrap();
        assert_eq!(csv, "policy,t.dropped\ngreedy,1.50\nequal,3.50\n");
        let csv = String::from_utf8(crate::report::to_csv(&out.paired).unwrap()).unwrap();
        assert_eq!(
            csv,
            "policy,axis,versus,metric,mean,sd,ci_low,ci_high,n,interval\n\
             equal,policy,greedy,t.dropped,2,0,2,2,4,t\n"
        );
    }

    #[test]
    fn missing_values_are_left_out() {
        let mut z = Summarizer::new(vec![], s(&["a", "b"]), 0.9, "f.csv");
        z.push(&[], "0", &[Some(1.0), None]).unwrap();
        z.push(&[], "1", &[Some(3.0), None]).unwrap();
        let out = z.finish().unwrap();
        let n = out.summary.column("n").unwrap();
        assert_eq!(out.summary.rows[1][n], Cell::Int(0));
        assert_eq!(out.summary.rows[1][1], Cell::Empty);
        assert_eq!(out.paired.rows.len(), 0);
    }

    /// The summary's cells of `metric` in row `policy`, as text, by column.
    fn line(out: &Summary, policy: &str, metric: &str) -> HashMap<String, String> {
        let t = &out.summary;
        let row = t
            .rows
            .iter()
            .find(|r| r[0].render() == policy && r[1].render() == metric)
            .unwrap_or_else(|| panic!("no line {policy} {metric}"));
        t.headers
            .iter()
            .cloned()
            .zip(row.iter().map(Cell::render))
            .collect()
    }

    #[test]
    fn zero_one_metrics_get_wilson_and_percentages_stay_in_range() {
        let metrics = s(&["r.stuck", "o.answered_pct"]);
        let mut z = Summarizer::new(s(&["policy"]), metrics, 0.95, "test")
            .with_proportions(&s(&["r.stuck"]));
        // never stuck in 20, one stuck in 2; answered_pct 100 or 99
        for r in 0..20u32 {
            let rep = r.to_string();
            let pct = if r % 2 == 0 { 100.0 } else { 99.0 };
            z.push(&s(&["a"]), &rep, &[Some(0.0), Some(pct)]).unwrap();
            let stuck = if r % 10 == 0 { 1.0 } else { 0.0 };
            z.push(&s(&["b"]), &rep, &[Some(stuck), Some(100.0)])
                .unwrap();
        }
        let out = z.finish().unwrap();
        let a = line(&out, "a", "r.stuck");
        assert_eq!(
            (
                &a["mean"][..],
                &a["ci_low"][..],
                &a["ci_high"][..],
                &a["interval"][..]
            ),
            ("0", "0", "0.161125", "wilson")
        );
        let b = line(&out, "b", "r.stuck");
        assert_eq!(
            (&b["mean"][..], &b["ci_low"][..], &b["ci_high"][..]),
            ("0.10", "0.027866", "0.301034")
        );
        let pct = line(&out, "a", "o.answered_pct");
        assert_eq!(
            (&pct["ci_high"][..], &pct["interval"][..]),
            ("99.740086", "t-clipped")
        );
        let pct = line(&out, "b", "o.answered_pct");
        assert_eq!((&pct["ci_low"][..], &pct["ci_high"][..]), ("100", "100"));
        // paired: b - a is 1 in 2 pairs, 0 in 18: Tango, inside [-1, 1]
        let t = &out.paired;
        let d = t.rows.iter().find(|r| r[3].render() == "r.stuck").unwrap();
        let cells: Vec<String> = d.iter().map(Cell::render).collect();
        assert_eq!(cells[4], "0.10");
        assert_eq!(cells[9], "tango");
        let (lo, hi): (f64, f64) = (cells[6].parse().unwrap(), cells[7].parse().unwrap());
        assert!(lo > -0.1 && lo < 0.0 && hi > 0.25 && hi < 0.35, "{cells:?}");

        // a 0/1 metric holding another value is refused
        let mut z = Summarizer::new(vec![], s(&["r.stuck"]), 0.95, "f.csv")
            .with_proportions(&s(&["r.stuck"]));
        let e = z.push(&[], "0", &[Some(0.5)]).unwrap_err().to_string();
        assert!(e.contains("f.csv: data row 1: r.stuck: 0.5"), "{e}");
    }

    #[test]
    fn recovery_times_count_stuck_runs_as_beyond_the_end() {
        let metrics = s(&["recovery.recovery_ms", "recovery.stuck"]);
        let mut z = Summarizer::new(s(&["policy"]), metrics, 0.95, "test")
            .with_proportions(&s(&["recovery.stuck"]));
        // a: recovers in 100, 200, 300, 400 ms, then stuck once (4 of 5);
        // b: recovers once (1 of 3 stuck twice); c: always recovers
        let runs: [(&str, &[Option<f64>]); 3] = [
            (
                "a",
                &[Some(100.0), Some(300.0), None, Some(200.0), Some(400.0)],
            ),
            ("b", &[Some(50.0), None, None, None, None]),
            (
                "c",
                &[Some(10.0), Some(20.0), Some(30.0), Some(40.0), Some(50.0)],
            ),
        ];
        for r in 0..5 {
            for (policy, v) in &runs {
                let stuck = if v[r].is_some() { 0.0 } else { 1.0 };
                z.push(&s(&[policy]), &r.to_string(), &[v[r], Some(stuck)])
                    .unwrap();
            }
        }
        let out = z.finish().unwrap();
        let a = line(&out, "a", "recovery.recovery_ms");
        // sorted: 100, 200, 300, 400, stuck: sorted[5 / 2] = 300
        assert_eq!(
            [
                &a["p50"],
                &a["recovered"],
                &a["n"],
                &a["min"],
                &a["interval"]
            ],
            ["300", "4", "5", "100", "censored"]
        );
        assert_eq!([&a["mean"], &a["ci_low"], &a["max"]], ["", "", ""]);
        let b = line(&out, "b", "recovery.recovery_ms");
        assert_eq!([&b["p50"], &b["recovered"], &b["n"]], ["", "1", "5"]);
        let c = line(&out, "c", "recovery.recovery_ms");
        assert_eq!(
            [&c["mean"], &c["p50"], &c["recovered"], &c["interval"]],
            ["30", "30", "5", "t"]
        );
        assert!(!c["ci_low"].is_empty());
        let stuck = line(&out, "b", "recovery.stuck");
        assert_eq!([&stuck["mean"], &stuck["interval"]], ["0.80", "wilson"]);
        // wide: no mean where a replication stayed stuck
        let csv = String::from_utf8(crate::report::to_csv(&out.wide).unwrap()).unwrap();
        assert_eq!(
            csv,
            "policy,recovery.recovery_ms,recovery.stuck\na,,0.20\nb,,0.80\nc,30,0\n"
        );
        // paired: a pair with a stuck side has no difference
        let t = &out.paired;
        let d: Vec<String> = t
            .rows
            .iter()
            .find(|r| r[0].render() == "c" && r[3].render() == "recovery.recovery_ms")
            .unwrap()
            .iter()
            .map(Cell::render)
            .collect();
        assert_eq!([&d[4], &d[8], &d[9]], ["", "5", "censored"]);
    }

    #[test]
    fn out_of_order_and_truncated_replications_are_refused() {
        let one = [Some(1.0)];
        let mut z = Summarizer::new(s(&["p"]), s(&["a"]), 0.95, "f.csv");
        z.push(&s(&["x"]), "0", &one).unwrap();
        z.push(&s(&["y"]), "0", &one).unwrap();
        z.push(&s(&["y"]), "1", &one).unwrap_err();

        let mut z = Summarizer::new(s(&["p"]), s(&["a"]), 0.95, "f.csv");
        z.push(&s(&["x"]), "0", &one).unwrap();
        z.push(&s(&["y"]), "0", &one).unwrap();
        z.push(&s(&["x"]), "1", &one).unwrap();
        let e = z.finish().err().unwrap().to_string();
        assert!(
            e.contains("replication 1 has 1 of the 2 compare rows"),
            "{e}"
        );
    }
}
