//! The tuning's page (`report.html`): the recommendation on fresh
//! replications, the objective against the most binding constraint (every
//! candidate a dot, the Pareto front a line, the limit dashed), the objective
//! against each key, the runs spent per round, and the candidates' table.

use super::Outcome;
use super::figures::{binding, constraint_text, feasible_word, margin, worst_value};
use super::race::{Candidate, Judgement, Status};
use super::space;
use crate::error::Error;
use crate::format::format_number;
use crate::report::html::charts::{Bar, BarChart, Marker};
use crate::report::html::numeric::{ValueChart, ValueSeries, value_chart};
use crate::report::html::{Heading, Section};
use crate::report::{Cell, Table};
use std::borrow::Cow;

/// `fresh.csv`: the recommendation (or the closest) on fresh replications,
/// a line per compare row and figure.
pub fn fresh_table(o: &Outcome) -> Table {
    let mut t = Table::new(
        "fresh",
        "The recommendation on fresh replications",
        [
            "row",
            "figure",
            "limit",
            "mean",
            "low",
            "high",
            "margin",
            "margin_low",
            "margin_high",
            "met",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    );
    let num = |x: f64| {
        if x.is_finite() {
            Cell::Num(x)
        } else {
            Cell::Empty
        }
    };
    for (r, row) in o.fresh.iter().enumerate() {
        let label = Cell::Text(o.rows[r].clone());
        if let Some(e) = &row[0] {
            let aim = if o.goal.maximize {
                "maximize"
            } else {
                "minimize"
            };
            t.rows.push(vec![
                label.clone(),
                Cell::Text(format!("{aim} {}", o.goal.objective)),
                Cell::Empty,
                num(e.mean),
                num(e.lo),
                num(e.hi),
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
            ]);
        }
        for (k, c) in o.goal.constraints.iter().enumerate() {
            let Some(e) = &row[k + 1] else { continue };
            let (a, b) = (margin(c, e.lo), margin(c, e.hi));
            t.rows.push(vec![
                label.clone(),
                Cell::Text(c.metric.clone()),
                Cell::Text(format!("{} {}", c.op.symbol(), format_number(c.value))),
                num(e.mean),
                num(e.lo),
                num(e.hi),
                num(margin(c, e.mean)),
                num(a.min(b)),
                num(a.max(b)),
                Cell::Text(o.goal.judge(c, e).word().into()),
            ]);
        }
    }
    t.notes.push(format!(
        "{} replications numbered from {}, whose seeds no candidate ran; margin: what the limit leaves (more is safer)",
        o.fresh_n,
        super::FRESH
    ));
    t
}

/// The objective's value of a candidate (over the rows), as the metric reads.
fn objective(o: &Outcome, c: &Candidate) -> Option<f64> {
    let cost = o.goal.objective_cost(c)?;
    Some(if o.goal.maximize { -cost } else { cost })
}

/// The objective against the most binding constraint: each candidate a dot
/// (feasible, unsure, infeasible), the front a line, the limit dashed.
fn pareto_chart(o: &Outcome) -> Result<Option<String>, Error> {
    let shown = o.pick.map(|p| p.0).or(o.closest);
    let Some(k) = shown.and_then(|i| binding(o, &o.candidates[i])) else {
        return Ok(None);
    };
    let c = &o.goal.constraints[k];
    let mut groups: [Vec<(f64, f64)>; 3] = Default::default();
    let mut all = Vec::new();
    for cand in &o.candidates {
        let (Some(y), Some(x)) = (objective(o, cand), worst_value(o, cand, k)) else {
            continue;
        };
        let g = match feasible_word(o, cand) {
            "yes" => 0,
            "unsure" => 1,
            _ => 2,
        };
        groups[g].push((x, y));
        all.push((x, y));
    }
    // the front: no other point at least as good on both and better on one
    let better_y = |a: f64, b: f64| if o.goal.maximize { a > b } else { a < b };
    let safer = |a: f64, b: f64| margin(c, a) > margin(c, b);
    let mut front: Vec<(f64, f64)> = all
        .iter()
        .copied()
        .filter(|&(x, y)| {
            !all.iter().any(|&(x2, y2)| {
                (x2, y2) != (x, y)
                    && !better_y(y, y2)
                    && !safer(x, x2)
                    && (better_y(y2, y) || safer(x2, x))
            })
        })
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    front.dedup();
    let mut series: Vec<ValueSeries> = Vec::new();
    for (points, name) in groups.into_iter().zip([
        "candidates meeting every constraint (intervals)",
        "candidates in doubt",
        "candidates shown infeasible",
    ]) {
        series.push(ValueSeries {
            name: format!("{name} ({})", points.len()),
            points,
            intervals: Vec::new(),
            dots: true,
        });
    }
    series.retain(|s| !s.points.is_empty());
    series.push(ValueSeries {
        name: "the Pareto front".into(),
        points: front,
        intervals: Vec::new(),
        dots: false,
    });
    if let Some((i, _)) = o.pick
        && let (Some(y), Some(x)) = (
            objective(o, &o.candidates[i]),
            worst_value(o, &o.candidates[i], k),
        )
    {
        series.push(ValueSeries {
            name: format!("the recommendation (candidate {})", i + 1),
            points: vec![(x, y)],
            intervals: Vec::new(),
            dots: true,
        });
    }
    let chart = ValueChart {
        title: format!("{} against {} (its worst row)", o.goal.objective, c.metric),
        x_label: c.metric.clone(),
        y_label: o.goal.objective.clone(),
        series,
        target: None,
        markers: vec![Marker {
            name: format!("the limit: {}", constraint_text(c)),
            x: c.value,
        }],
        shade: None,
    };
    Ok(Some(value_chart(&chart)?))
}

/// The objective against each numeric key: every candidate with a value a
/// dot, the recommendation marked.
fn key_charts(o: &Outcome) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    for (k, key) in o.keys.iter().enumerate() {
        let numeric =
            |c: &Candidate| matches!(c.point[k], toml::Value::Integer(_) | toml::Value::Float(_));
        if !o.candidates.iter().all(numeric) {
            continue;
        }
        let mut groups: [Vec<(f64, f64)>; 2] = Default::default();
        for c in &o.candidates {
            let Some(y) = objective(o, c) else { continue };
            let g = usize::from(feasible_word(o, c) != "yes");
            groups[g].push((space::number(&c.point[k]), y));
        }
        let mut series: Vec<ValueSeries> = groups
            .into_iter()
            .zip(["meeting every constraint", "in doubt or infeasible"])
            .map(|(points, name)| ValueSeries {
                name: format!("candidates {name} ({})", points.len()),
                points,
                intervals: Vec::new(),
                dots: true,
            })
            .collect();
        let mut markers = Vec::new();
        if let Some((i, _)) = o.pick {
            let x = space::number(&o.candidates[i].point[k]);
            markers.push(Marker {
                name: format!(
                    "recommended: {} = {}",
                    key.column,
                    space::show(&o.candidates[i].point[k])
                ),
                x,
            });
        }
        series.retain(|s| !s.points.is_empty());
        out.push(value_chart(&ValueChart {
            title: format!(
                "{} against {} (each candidate; the other keys vary)",
                o.goal.objective, key.column
            ),
            x_label: key.key.clone(),
            y_label: o.goal.objective.clone(),
            series,
            target: None,
            markers,
            shade: None,
        })?);
    }
    Ok(out)
}

/// The runs spent per round, split by how each candidate left the race.
fn runs_chart(o: &Outcome) -> Result<String, Error> {
    let rounds = o.candidates.iter().map(|c| c.round).max().unwrap_or(0);
    let parts = ["recommended or kept", "beaten", "infeasible", "no value"];
    let bars = (0..=rounds)
        .map(|r| {
            let mut v = [0.0; 4];
            for (i, c) in o
                .candidates
                .iter()
                .enumerate()
                .filter(|(_, c)| c.round == r)
            {
                let part = match &c.status {
                    _ if o.pick.is_some_and(|p| p.0 == i) => 0,
                    Status::Alive => 0,
                    Status::Beaten(_) => 1,
                    Status::Infeasible(_) => 2,
                    Status::NoValue(_) => 3,
                };
                v[part] += (c.n() * o.rows.len() as u64) as f64;
            }
            Bar {
                label: if r == 0 {
                    "start".into()
                } else {
                    format!("round {r}")
                },
                end: Some(format_number(v.iter().sum())),
                parts: v.to_vec(),
            }
        })
        .collect();
    crate::report::html::charts::bar_chart(&BarChart {
        title: "Runs spent per round, by how each candidate left the race".into(),
        x_label: "runs".into(),
        y_label: "round".into(),
        parts: parts.iter().map(|s| s.to_string()).collect(),
        bars,
        first_color: 0,
    })
}

/// The page.
pub fn page(o: &Outcome, candidates: Table, pareto: Table) -> Result<String, Error> {
    let aim = if o.goal.maximize {
        "maximize"
    } else {
        "minimize"
    };
    let verdict = match (o.pick, o.closest) {
        (Some((i, true)), _) if o.goal.constraints.is_empty() => format!(
            "Recommended: candidate {} ({}), the best objective; no constraint was given.",
            i + 1,
            space::set_lines(o.keys, &o.candidates[i].point).join(", ")
        ),
        (Some((i, true)), _) => format!(
            "Recommended: candidate {} ({}), every constraint met by its interval in every row.",
            i + 1,
            space::set_lines(o.keys, &o.candidates[i].point).join(", ")
        ),
        (Some((i, false)), _) => format!(
            "Recommended: candidate {} ({}), whose means meet the constraints but not every interval: run more replications before trusting it.",
            i + 1,
            space::set_lines(o.keys, &o.candidates[i].point).join(", ")
        ),
        (None, Some(i)) => format!(
            "No feasible setting; the closest was candidate {} ({}).",
            i + 1,
            space::set_lines(o.keys, &o.candidates[i].point).join(", ")
        ),
        (None, None) => "No feasible setting: no candidate gave every metric a value.".into(),
    };
    let heading = Heading {
        title: o.scenario_name.clone(),
        subtitle: format!(
            "Tuning: {aim} {}{}; {} candidates, {} runs",
            o.goal.objective,
            if o.goal.constraints.is_empty() {
                String::new()
            } else {
                format!(
                    " with {}",
                    o.goal
                        .constraints
                        .iter()
                        .map(constraint_text)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            o.candidates.len(),
            o.runs + o.other_runs
        ),
        about: Some(verdict),
    };
    let mut fresh = fresh_table(o);
    if o.fresh.iter().flatten().flatten().count() == 0 {
        fresh.notes.push("nothing to run again".into());
    }
    let unsure = o.fresh.iter().any(|row| {
        o.goal
            .constraints
            .iter()
            .enumerate()
            .any(|(k, c)| row[k + 1].is_some_and(|e| o.goal.judge(c, &e) != Judgement::Met))
    });
    if unsure {
        fresh.notes.push(
            "a constraint not met by its interval on fresh seeds: the search's pick was helped by its replications' luck, or the margin is within the noise"
                .into(),
        );
    }
    let mut pareto_charts = Vec::new();
    pareto_charts.extend(pareto_chart(o)?);
    pareto_charts.extend(key_charts(o)?);
    let sections = vec![
        Section {
            table: Cow::Owned(fresh),
            file: "fresh.csv".into(),
            charts: Vec::new(),
            grid: false,
        },
        Section {
            table: Cow::Owned(pareto),
            file: "pareto.csv".into(),
            charts: pareto_charts,
            grid: false,
        },
        Section {
            table: Cow::Owned(candidates),
            file: "tune.csv".into(),
            charts: vec![runs_chart(o)?],
            grid: false,
        },
    ];
    crate::report::html::sections_page(heading, sections)
}
