//! Figures of a candidate the files, the text and the page share: whether
//! it meets its constraints, a constraint's margin, the most binding one.

use super::Outcome;
use super::race::{Candidate, Judgement};
use crate::format::format_number;

/// Whether a candidate meets every constraint: `yes` (every interval),
/// `no` (some interval fails), `unsure`.
pub(super) fn feasible_word(o: &Outcome, c: &Candidate) -> &'static str {
    let all: Vec<Option<Judgement>> = o
        .goal
        .judgements(c)
        .into_iter()
        .flatten()
        .map(|j| j.map(|(_, j)| j))
        .collect();
    if all.contains(&Some(Judgement::Violated)) {
        "no"
    } else if all.iter().all(|j| *j == Some(Judgement::Met)) {
        "yes"
    } else {
        "unsure"
    }
}

/// A constraint's margin at a mean (more is safer): what the limit leaves
/// above a `<=` mean, below a `>=` one.
pub(super) fn margin(c: &crate::model::Threshold, mean: f64) -> f64 {
    use crate::model::Comparison::*;
    match c.op {
        Less | LessOrEqual => c.value - mean,
        Greater | GreaterOrEqual => mean - c.value,
    }
}

/// The constraint with the least relative margin at the recommendation (or
/// the candidate shown), and that margin's row.
pub(super) fn binding(o: &Outcome, c: &Candidate) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for row in o.goal.judgements(c) {
        for (k, (j, t)) in row.iter().zip(&o.goal.constraints).enumerate() {
            if let Some((e, _)) = j {
                let m = margin(t, e.mean) / t.value.abs().max(1e-9);
                if best.is_none_or(|(_, b)| m < b) {
                    best = Some((k, m));
                }
            }
        }
    }
    best.map(|(k, _)| k)
}

/// A candidate's worst row for constraint `k`: its mean there.
pub(super) fn worst_value(o: &Outcome, c: &Candidate, k: usize) -> Option<f64> {
    let t = &o.goal.constraints[k];
    o.goal
        .judgements(c)
        .iter()
        .filter_map(|row| row[k].map(|(e, _)| e.mean))
        .min_by(|a, b| margin(t, *a).total_cmp(&margin(t, *b)))
}

pub(super) fn constraint_text(c: &crate::model::Threshold) -> String {
    format!("{} {} {}", c.metric, c.op.symbol(), format_number(c.value))
}
