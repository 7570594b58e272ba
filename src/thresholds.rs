//! `[thresholds]`: conditions on metrics (named as a sweep names them) that make a
//! run a CI check, k6 style. `resim run` checks every compare row; a sweep checks
//! each row's confidence interval, which must satisfy the condition whole. A
//! failed threshold makes the exit status 3, after every file is written.

use crate::error::{Error, ScenarioError, did_you_mean};
use crate::model::Threshold;
use crate::report::{Cell, Table};
use crate::scenario::Scenario;

/// One run's metrics by name (`outcomes.p99_all_ms`), in table order: what a
/// threshold is checked against (a sweep makes them).
pub type Named = Vec<(String, Cell)>;

/// The pass/fail table of a run or sweep and how many lines failed.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub table: Table,
    pub failed: usize,
}

impl Verdict {
    /// "2 of 3 hold" for headings.
    pub fn summary(&self) -> String {
        let total = self.table.rows.len();
        format!("{} of {total} hold", total - self.failed)
    }

    /// The error that sets exit status 3, or `None` when every line holds.
    pub fn error(&self, what: &str) -> Option<Error> {
        (self.failed > 0).then(|| {
            Error::Thresholds(format!(
                "{what}: {} of {} threshold checks failed (see the thresholds table)",
                self.failed,
                self.table.rows.len()
            ))
        })
    }
}

/// An unknown metric: exit 2, the closest name suggested, positioned in `file`.
fn unknown(scenario_file: &std::path::Path, t: &Threshold, names: &[String]) -> Error {
    let path = format!("thresholds.\"{}\"", t.metric);
    let position = std::fs::read_to_string(scenario_file)
        .ok()
        .and_then(|text| crate::scenario::paths::locate(&text, &path));
    let mut shown: Vec<&str> = names.iter().map(String::as_str).take(40).collect();
    if names.len() > shown.len() {
        shown.push("...");
    }
    ScenarioError::new(
        path,
        format!(
            "no metric named `{}`{}; the metrics of this scenario: {}",
            t.metric,
            did_you_mean(&t.metric, names.iter().map(String::as_str)),
            shown.join(", ")
        ),
    )
    .in_file(scenario_file)
    .at(position)
    .into()
}

/// Every threshold names a metric in `names`.
pub fn check_names(
    scenario_file: &std::path::Path,
    thresholds: &[Threshold],
    names: &[String],
) -> Result<(), Error> {
    match thresholds.iter().find(|t| !names.contains(&t.metric)) {
        Some(t) => Err(unknown(scenario_file, t, names)),
        None => Ok(()),
    }
}

fn value_of(named: &Named, metric: &str) -> Option<f64> {
    named
        .iter()
        .find(|(n, _)| n == metric)
        .and_then(|(_, c)| c.metric())
}

/// Why `metric` has no value in a row's metrics: a percentile over every
/// request is empty when more than its share failed; any other figure is empty
/// when the row has nothing it describes.
fn empty_reason(named: &Named, metric: &str) -> String {
    let present = named.iter().any(|(n, _)| n == metric);
    if !present {
        return format!("`{metric}`: this row has no such figure");
    }
    let (prefix, column) = metric.rsplit_once('.').unwrap_or(("", metric));
    let share = column
        .strip_prefix('p')
        .and_then(|c| c.strip_suffix("_all_ms"))
        .and_then(|digits| {
            // p50 -> 50 %, p999 -> 99.9 %
            let v: f64 = digits.parse().ok()?;
            Some(if digits.len() > 2 {
                v / 10f64.powi(digits.len() as i32 - 2)
            } else {
                v
            })
        });
    match share {
        Some(p) => {
            let answered = value_of(named, &format!("{prefix}.answered_pct"))
                .map(|a| format!(" ({a:.2} % were)"))
                .unwrap_or_default();
            format!(
                "`{metric}` is empty: fewer than {} % of all requests were answered{answered}, \
                 so no time exists within which {} % got an answer (a failed request is never answered)",
                crate::format::format_number(p),
                crate::format::format_number(p)
            )
        }
        None => format!("`{metric}` is empty in this row: it had nothing this figure measures"),
    }
}

fn result(ok: Option<bool>) -> Cell {
    Cell::Text(
        match ok {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "no value",
        }
        .into(),
    )
}

/// Checks the thresholds of a `resim run` on every compare row, whose metrics
/// `metrics` gives in row order (called only when there are thresholds). `None`
/// without thresholds.
pub fn check_run(
    scenario: &Scenario,
    metrics: impl FnOnce() -> Vec<Named>,
) -> Result<Option<Verdict>, Error> {
    let thresholds = &scenario.base().thresholds;
    if thresholds.is_empty() {
        return Ok(None);
    }
    let per_row = metrics();
    let mut names: Vec<String> = Vec::new();
    for (n, _) in per_row.iter().flatten() {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    check_names(&scenario.file, thresholds, &names)?;
    let mut table = Table::new(
        "thresholds",
        "Thresholds ([thresholds]): each compare row's value against its condition",
        scenario
            .columns()
            .into_iter()
            .chain(["metric", "condition", "value", "result"].map(String::from))
            .collect(),
    );
    let mut failed = 0;
    let mut why_empty: Vec<String> = Vec::new();
    for t in thresholds {
        for (i, named) in per_row.iter().enumerate() {
            let value = value_of(named, &t.metric);
            let ok = value.map(|v| t.op.holds(v, t.value));
            failed += usize::from(ok != Some(true));
            if value.is_none() {
                let labels = &scenario.rows[i].labels;
                let row = if labels.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", labels.join(", "))
                };
                why_empty.push(format!("{row}{}", empty_reason(named, &t.metric)));
            }
            let mut cells: Vec<Cell> = scenario.rows[i]
                .labels
                .iter()
                .map(|l| Cell::Text(l.clone()))
                .collect();
            cells.extend([
                Cell::Text(t.metric.clone()),
                Cell::Text(t.condition()),
                value.into(),
                result(ok),
            ]);
            table.push(cells);
        }
    }
    table.notes.push(
        "A threshold holds when every compare row satisfies it; `no value` (the row has no such figure) counts as failed."
            .into(),
    );
    table.notes.extend(why_empty);
    Ok(Some(Verdict { table, failed }))
}

/// Checks thresholds against a sweep's `summary` table: a line holds when its
/// whole confidence interval satisfies the condition (the mean when there is no
/// interval: one replication).
pub fn check_sweep(thresholds: &[Threshold], summary: &Table, level: &str) -> Option<Verdict> {
    if thresholds.is_empty() {
        return None;
    }
    let (m, mean, lo, hi) = (
        summary.column("metric")?,
        summary.column("mean")?,
        summary.column("ci_low")?,
        summary.column("ci_high")?,
    );
    let mut table = Table::new(
        "thresholds",
        &format!(
            "Thresholds ([thresholds]): each compare row's {level} interval of the mean against the condition"
        ),
        summary.headers[..m]
            .iter()
            .cloned()
            .chain(["metric", "condition", "mean", "ci_low", "ci_high", "result"].map(String::from))
            .collect(),
    );
    let num = Cell::number;
    let mut failed = 0;
    for t in thresholds {
        for r in summary.rows.iter().filter(|r| r[m].render() == t.metric) {
            let low = num(&r[lo]).or(num(&r[mean]));
            let high = num(&r[hi]).or(num(&r[mean]));
            let ok = low
                .zip(high)
                .map(|(l, h)| t.op.holds(l, t.value) && t.op.holds(h, t.value));
            failed += usize::from(ok != Some(true));
            let mut cells: Vec<Cell> = r[..m].to_vec();
            cells.extend([
                Cell::Text(t.metric.clone()),
                Cell::Text(t.condition()),
                r[mean].clone(),
                r[lo].clone(),
                r[hi].clone(),
                result(ok),
            ]);
            table.push(cells);
        }
    }
    table.notes.push(
        "A threshold holds for a row when its whole interval satisfies the condition (with one replication: the mean); `no value` counts as failed."
            .into(),
    );
    Some(Verdict { table, failed })
}

/// The page's view of a verdict.
pub fn html_view(v: &Verdict) -> crate::report::html::Thresholds<'_> {
    crate::report::html::Thresholds {
        table: &v.table,
        summary: v.summary(),
        rule: v.table.notes.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_threshold_needs_its_whole_interval() {
        let mut s = Table::new(
            "summary",
            "s",
            ["policy", "metric", "mean", "sd", "ci_low", "ci_high"]
                .map(String::from)
                .to_vec(),
        );
        for (policy, lo, hi) in [("greedy", 10.0, 20.0), ("equal", 25.0, 40.0)] {
            s.push(vec![
                policy.into(),
                "outcomes.wasted_ms".into(),
                ((lo + hi) / 2.0).into(),
                1.0.into(),
                lo.into(),
                hi.into(),
            ]);
        }
        let t = |c: &str| Threshold::parse("outcomes.wasted_ms", c).unwrap();
        let v = check_sweep(&[t("< 30")], &s, "95 %").unwrap();
        // equal's mean 32.5 fails anyway; greedy passes whole
        assert_eq!(v.failed, 1);
        let v = check_sweep(&[t("< 35")], &s, "95 %").unwrap();
        assert_eq!(
            v.failed, 1,
            "equal's mean 32.5 < 35 but its interval reaches 40"
        );
        let v = check_sweep(&[t("<= 40")], &s, "95 %").unwrap();
        assert_eq!(v.failed, 0);
        assert_eq!(v.summary(), "2 of 2 hold");
    }

    #[test]
    fn conditions_parse_and_compare() {
        let t = Threshold::parse("x", " >=99.5 ").unwrap();
        assert!(t.op.holds(99.5, t.value) && !t.op.holds(99.4, t.value));
        assert_eq!(t.condition(), ">= 99.50");
        assert!(Threshold::parse("x", "= 3").is_err());
        assert!(Threshold::parse("x", "< abc").is_err());
        assert!(Threshold::parse("x", "< inf").is_err());
    }
}
