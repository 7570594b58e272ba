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
//! than greedy"), with its own Student t interval.

use super::stats::{Median, Running, t_quantile};
use crate::error::Error;
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
    }

    /// Paired differences against `axis=value` rows instead of each axis's first.
    pub fn with_baseline(mut self, baseline: Vec<String>) -> Summarizer {
        self.baseline = baseline;
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
                if let Some(x) = v {
                    self.stats[i * m + k].push(*x);
                    self.medians[i * m + k].push(*x);
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
        self.paired = vec![Running::default(); self.pairs.len() * m];
        Ok(())
    }

    pub fn finish(mut self) -> Result<Summary, Error> {
        self.close_group()?;
        let m = self.metrics.len();
        let headers = |rest: &[&str]| -> Vec<String> {
            self.axis_columns
                .iter()
                .cloned()
                .chain(rest.iter().map(|s| s.to_string()))
                .collect()
        };
        let mut summary = Table::new(
            "summary",
            &format!(
                "Per row and metric over the replications: mean, sd, {} Student t interval of the mean, min, p50 (sorted[n/2]), max, n, the interval's confidence level",
                percent(self.confidence)
            ),
            headers(&[
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
            ]),
        );
        let mut t_of_n: HashMap<u64, f64> = HashMap::new();
        let confidence = self.confidence;
        let mut interval_cells = |r: &Running| -> [Cell; 2] {
            let t = *t_of_n
                .entry(r.n())
                .or_insert_with(|| t_quantile(0.5 + confidence / 2.0, r.n().max(2) as f64 - 1.0));
            let ci = r.interval_with(t);
            [ci.map(|c| c.0).into(), ci.map(|c| c.1).into()]
        };
        for (i, labels) in self.rows.iter().enumerate() {
            for (k, name) in self.metrics.iter().enumerate() {
                let s = &self.stats[i * m + k];
                let mut cells = text_cells(labels);
                cells.push(name.as_str().into());
                cells.push(s.mean().into());
                cells.push(s.sd().into());
                cells.extend(interval_cells(s));
                cells.push(s.min().into());
                cells.push(self.medians[i * m + k].median().into());
                cells.push(s.max().into());
                cells.push(s.n().into());
                cells.push(confidence.into());
                summary.push(cells);
            }
        }
        let mut paired = Table::new(
            "paired",
            &format!(
                "Paired differences on common random numbers: row minus the row with `axis` at its first value (`versus`), {} interval",
                percent(self.confidence)
            ),
            headers(&[
                "axis", "versus", "metric", "mean", "sd", "ci_low", "ci_high", "n",
            ]),
        );
        for (p, pair) in self.pairs.iter().enumerate() {
            for (k, name) in self.metrics.iter().enumerate() {
                let s = &self.paired[p * m + k];
                let mut cells = text_cells(&self.rows[pair.row]);
                cells.push(self.axis_columns[pair.axis].as_str().into());
                cells.push(self.reference[pair.axis].as_str().into());
                cells.push(name.as_str().into());
                cells.push(s.mean().into());
                cells.push(s.sd().into());
                cells.extend(interval_cells(s));
                cells.push(s.n().into());
                paired.push(cells);
            }
        }
        let wide = wide_means(&self.axis_columns, &self.metrics, &self.rows, &self.stats);
        Ok(Summary {
            summary,
            paired,
            wide,
        })
    }
}

/// One row per compare row, one column per metric holding its mean over the
/// replications (empty when no replication had a value).
fn wide_means(
    axis_columns: &[String],
    metrics: &[String],
    rows: &[Vec<String>],
    stats: &[Running],
) -> Table {
    let mut wide = Table::new(
        "summary_wide",
        "Mean of each metric per compare row (summary.csv, one column per metric)",
        axis_columns.iter().chain(metrics).cloned().collect(),
    );
    let m = metrics.len();
    for (i, labels) in rows.iter().enumerate() {
        let mut cells = text_cells(labels);
        cells.extend((0..m).map(|k| stats[i * m + k].mean().into()));
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
        let Some((axis, value)) = b.split_once('=') else {
            return Err(format!(
                "baseline `{b}`: expected axis=value, e.g. policy=equal"
            ));
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

/// `0.95` -> `95 %`.
pub fn percent(confidence: f64) -> String {
    format!("{} %", crate::report::format_number(confidence * 100.0))
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
            "policy,metric,mean,sd,ci_low,ci_high,min,p50,max,n,confidence\n\
             greedy,t.dropped,1.50,1.290994,-0.55426,3.55426,0,2,3,4,0.95\n\
             equal,t.dropped,3.50,1.290994,1.44574,5.55426,2,4,5,4,0.95\n"
        );
        let csv = String::from_utf8(crate::report::to_csv(&out.wide).unwrap()).unwrap();
        assert_eq!(csv, "policy,t.dropped\ngreedy,1.50\nequal,3.50\n");
        let csv = String::from_utf8(crate::report::to_csv(&out.paired).unwrap()).unwrap();
        assert_eq!(
            csv,
            "policy,axis,versus,metric,mean,sd,ci_low,ci_high,n\n\
             equal,policy,greedy,t.dropped,2,0,2,2,4\n"
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
