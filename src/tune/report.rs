//! What a tuning leaves: `tune.csv` (every candidate, per compare row),
//! `pareto.csv` (the objective against the most binding constraint),
//! `fresh.csv` and `report.html` (see `page`),
//! `recommendation.txt` (the `--set` lines), `tuned.toml` (the scenario with
//! the recommended values written in, the rest as it was), and the printed
//! report or its JSON.

use super::figures::{binding, constraint_text, feasible_word, margin, worst_value};
use super::race::{Candidate, Estimate, Judgement, Status};
use super::space::{self, Key, Point};
use super::{FRESH, Outcome};
use crate::error::Error;
use crate::format::format_number;
use crate::report::{Cell, Content, Table};
use crate::table::wrap;
use std::path::Path;

/// The files of the output folder.
pub fn files(o: &Outcome, text: &str) -> Result<Vec<(String, Content)>, Error> {
    let mut files = Vec::new();
    let (cands, front) = (candidates(o), pareto(o));
    for t in [&cands, &front, &super::page::fresh_table(o)] {
        files.push((
            format!("{}.csv", t.name),
            Content::Bytes(crate::report::to_csv(t)?),
        ));
    }
    if o.opts.report {
        let page = super::page::page(o, cands, front)?;
        files.push((
            crate::report::html::FILE.into(),
            Content::Bytes(page.into_bytes()),
        ));
    }
    if let Some((i, _)) = o.pick {
        let point = &o.candidates[i].point;
        let lines = space::set_lines(o.keys, point).join("\n") + "\n";
        files.push((
            "recommendation.txt".into(),
            Content::Bytes(lines.into_bytes()),
        ));
        if let Some(copy) = tuned_copy(text, o.keys, point) {
            files.push(("tuned.toml".into(), Content::Bytes(copy.into_bytes())));
        }
    }
    if !o.written.is_empty() {
        for w in &o.written {
            files.push((w.name.clone(), Content::Bytes(w.text.clone().into_bytes())));
        }
        let diff = super::write_back::diffs(&o.written);
        files.push(("write-back.diff".into(), Content::Bytes(diff.into_bytes())));
    }
    Ok(files)
}

/// A metric's columns: unique names, the second use of a name numbered.
fn metric_columns(o: &Outcome) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in &o.goal.metrics() {
        let mut name = n.clone();
        let mut k = 2;
        while out.contains(&name) {
            name = format!("{n}#{k}");
            k += 1;
        }
        out.push(name);
    }
    out
}

fn num(x: f64) -> Cell {
    if x.is_finite() {
        Cell::Num(x)
    } else {
        Cell::Empty
    }
}

fn status_words(o: &Outcome, i: usize, c: &Candidate) -> (String, String) {
    if o.pick.is_some_and(|(p, _)| p == i) {
        return ("recommended".into(), String::new());
    }
    match &c.status {
        Status::Alive => (
            "kept".into(),
            "not beaten within the replications it ran (a tie, or the budget)".into(),
        ),
        Status::Infeasible(why) => ("infeasible".into(), why.clone()),
        Status::Beaten(b) => ("beaten".into(), format!("by candidate {}", b + 1)),
        Status::NoValue(why) => ("no_value".into(), why.clone()),
    }
}

/// `tune.csv`: a line per candidate and compare row.
fn candidates(o: &Outcome) -> Table {
    let cols = metric_columns(o);
    let mut headers: Vec<String> = vec!["candidate".into(), "round".into()];
    headers.extend(o.keys.iter().map(|k| k.column.clone()));
    headers.extend(["row".into(), "replications".into()]);
    for (m, name) in cols.iter().enumerate() {
        headers.extend([name.clone(), format!("{name}_low"), format!("{name}_high")]);
        if m > 0 {
            headers.push(format!("{name}_met"));
        }
    }
    headers.extend([
        "feasible".into(),
        "runs".into(),
        "status".into(),
        "why".into(),
    ]);
    let mut t = Table::new("tune", "Candidates", headers);
    for (i, c) in o.candidates.iter().enumerate() {
        let feasible = feasible_word(o, c);
        let (status, why) = status_words(o, i, c);
        let judged = o.goal.judgements(c);
        for (r, row) in c.values.iter().enumerate() {
            let mut line = vec![Cell::Int(i as i64 + 1), Cell::Int(i64::from(c.round))];
            line.extend(c.point.iter().map(value_cell));
            line.extend([Cell::Text(o.rows[r].clone()), Cell::Int(c.n() as i64)]);
            for (m, values) in row.iter().enumerate() {
                match o.goal.estimate(m, values) {
                    Some(e) => line.extend([num(e.mean), num(e.lo), num(e.hi)]),
                    None => line.extend([Cell::Empty, Cell::Empty, Cell::Empty]),
                }
                if m > 0 {
                    line.push(match judged[r][m - 1] {
                        Some((_, j)) => Cell::Text(j.word().into()),
                        None => Cell::Empty,
                    });
                }
            }
            line.extend([
                Cell::Text(feasible.into()),
                Cell::Int((c.n() * o.rows.len() as u64) as i64),
                Cell::Text(status.clone()),
                Cell::Text(why.clone()),
            ]);
            t.rows.push(line);
        }
    }
    t
}

fn value_cell(v: &toml::Value) -> Cell {
    match v {
        toml::Value::Integer(i) => Cell::Int(*i),
        toml::Value::String(s) => Cell::Text(s.clone()),
        // a float as it is set (37.5), not to the report's two decimals
        other => Cell::Text(space::show(other)),
    }
}

/// `pareto.csv`: every candidate with values, its objective against the
/// most binding constraint, and whether no other candidate is better in both.
fn pareto(o: &Outcome) -> Table {
    let shown = o.pick.map(|p| p.0).or(o.closest);
    let k = shown.and_then(|i| binding(o, &o.candidates[i]));
    let mut headers: Vec<String> = vec!["candidate".into()];
    headers.extend(o.keys.iter().map(|k| k.column.clone()));
    headers.extend([
        "objective".into(),
        "constraint".into(),
        "constraint_value".into(),
        "feasible".into(),
        "front".into(),
    ]);
    let mut t = Table::new(
        "pareto",
        "Objective against the most binding constraint",
        headers,
    );
    let points: Vec<(usize, f64, Option<f64>)> = o
        .candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let cost = o.goal.objective_cost(c)?;
            Some((i, cost, k.and_then(|k| worst_value(o, c, k))))
        })
        .collect();
    for &(i, cost, v) in &points {
        let c = &o.candidates[i];
        let better = |a: f64, b: f64| {
            k.is_some_and(|k| margin(&o.goal.constraints[k], a) > margin(&o.goal.constraints[k], b))
        };
        let dominated = points.iter().any(|&(j, cj, vj)| {
            j != i
                && match (v, vj) {
                    (Some(v), Some(vj)) => {
                        (cj <= cost && !better(v, vj)) && (cj < cost || better(vj, v))
                    }
                    (None, None) => cj < cost,
                    _ => false,
                }
        });
        let mut line = vec![Cell::Int(i as i64 + 1)];
        line.extend(c.point.iter().map(value_cell));
        let objective = if o.goal.maximize { -cost } else { cost };
        line.push(num(objective));
        line.push(match k {
            Some(k) => Cell::Text(constraint_text(&o.goal.constraints[k])),
            None => Cell::Empty,
        });
        line.push(v.map_or(Cell::Empty, num));
        line.push(Cell::Text(feasible_word(o, c).into()));
        line.push(Cell::Bool(!dominated));
        t.rows.push(line);
    }
    t
}

fn interval(e: &Estimate) -> String {
    format!(
        "{} [{}, {}]",
        format_number(e.mean),
        format_number(e.lo),
        format_number(e.hi)
    )
}

/// The printed report: what was searched, the answer, its figures on fresh
/// replications, and the files.
pub fn text(o: &Outcome, dir: &Path) -> String {
    let mut s = settings_text(o);
    s.push_str(&answer_text(o));
    s.push_str(&fresh_text(o));
    s.push_str(&format!(
        "Files: {}/ (tune.csv, pareto.csv, fresh.csv",
        dir.display()
    ));
    if o.pick.is_some() {
        s.push_str(", recommendation.txt, tuned.toml");
    }
    if o.opts.report {
        s.push_str(", report.html");
    }
    s.push_str(")\n");
    s.push_str(&written_text(o, dir));
    s
}

/// What was written back into the configuration files, with the diff.
fn written_text(o: &Outcome, dir: &Path) -> String {
    if o.opts.write_back.is_empty() {
        return String::new();
    }
    if o.pick.is_none() {
        return "Nothing written back: there is no setting to recommend.\n".into();
    }
    if o.refused.is_some() {
        return "Nothing written back: the reason follows.\n".into();
    }
    if o.written.is_empty() {
        return "Nothing written back: the files already hold the recommended values.\n".into();
    }
    let paths = super::write_back::paths(&o.written, dir);
    format!(
        "\nWritten back: {} (to apply the change to your files: patch -p0 < {})\n{}",
        paths.join(", "),
        dir.join("write-back.diff").display(),
        super::write_back::diffs(&o.written)
    )
}

/// The aim, the constraints and what the search spent.
fn settings_text(o: &Outcome) -> String {
    let goal = o.goal;
    let aim = if goal.maximize {
        "maximize"
    } else {
        "minimize"
    };
    let over = match goal.over {
        super::Over::Worst => "the worst compare row",
        super::Over::Mean => "the mean of the compare rows",
    };
    let mut s = format!("Tuning: {} ({})\n", o.scenario_name, o.opts.file.display());
    let keys: Vec<&str> = o.keys.iter().map(|k| k.text.as_str()).collect();
    s.push_str(&wrap(
        &format!(
            "Aim: {aim} {} {}, keys {}.",
            goal.objective,
            rows_text(&o.rows, over),
            keys.join(", ")
        ),
        crate::table::WIDTH,
    ));
    if goal.constraints.is_empty() {
        s.push_str("Constraints: none.\n");
    } else {
        let all: Vec<String> = goal.constraints.iter().map(constraint_text).collect();
        s.push_str(&format!(
            "Constraints (every compare row): {}.\n",
            all.join(", ")
        ));
    }
    let count = |f: fn(&Status) -> bool| o.candidates.iter().filter(|c| f(&c.status)).count();
    s.push_str(&wrap(
        &format!(
            "Searched: {} candidates ({} infeasible, {} beaten, {} without a value, {} kept), {} runs of a budget of {}{}; {} more to check the metrics and run the answer again; {:.1} s.",
            o.candidates.len(),
            count(|s| matches!(s, Status::Infeasible(_))),
            count(|s| matches!(s, Status::Beaten(_))),
            count(|s| matches!(s, Status::NoValue(_))),
            count(|s| *s == Status::Alive),
            o.runs,
            o.budget,
            if o.out_of_budget { " (spent: the search stopped short)" } else { "" },
            o.other_runs,
            o.seconds
        ),
        crate::table::WIDTH,
    ));
    s
}

/// The recommendation, or that nothing is feasible and what came closest.
fn answer_text(o: &Outcome) -> String {
    match (o.pick, o.closest) {
        (Some((i, sure)), _) => {
            let how = if o.goal.constraints.is_empty() {
                "the best objective; no constraint was given"
            } else if sure {
                "every constraint met by its interval in every row"
            } else {
                "its means meet the constraints, but not every interval: run more replications (--max-replications) before trusting it"
            };
            let mut s = wrap(
                &format!("Recommendation (candidate {}, {how}):", i + 1),
                crate::table::WIDTH,
            );
            s.push_str(&format!("  {}\n", set_args(o.keys, &o.candidates[i].point)));
            for line in edges(o.keys, &o.candidates[i].point) {
                s.push_str(&wrap(&line, crate::table::WIDTH));
            }
            s
        }
        (None, Some(i)) => wrap(
            &format!(
                "No feasible setting: no candidate's means meet every constraint. The closest was candidate {}: {}",
                i + 1,
                set_args(o.keys, &o.candidates[i].point)
            ),
            crate::table::WIDTH,
        ),
        (None, None) => "No feasible setting: no candidate gave every metric a value.\n".into(),
    }
}

/// A note for each range key whose value lies in the outer 5 % of its
/// range, at an end the key can go past: the best may lie beyond it.
pub(super) fn edges(keys: &[Key], point: &Point) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in keys.iter().zip(point) {
        let space::Domain::Range { lo, hi, .. } = k.domain else {
            continue;
        };
        let x = space::number(v);
        let end = if k.beyond.0 && x - lo <= 0.05 * (hi - lo) {
            lo
        } else if k.beyond.1 && hi - x <= 0.05 * (hi - lo) {
            hi
        } else {
            continue;
        };
        out.push(format!(
            "Note: {} = {} is at the edge of its range (near {}): the best may lie beyond it; widen --vary {} to see.",
            k.key,
            space::show(v),
            format_number(end),
            k.key
        ));
    }
    out
}

/// A constraint's margin over an interval of its metric, as an interval.
fn margin_interval(t: &crate::model::Threshold, e: &Estimate) -> Estimate {
    let (a, b) = (margin(t, e.lo), margin(t, e.hi));
    Estimate {
        mean: margin(t, e.mean),
        lo: a.min(b),
        hi: a.max(b),
        n: e.n,
    }
}

/// The recommendation's figures on fresh replications, a line per row.
fn fresh_text(o: &Outcome) -> String {
    if o.fresh.is_empty() {
        return String::new();
    }
    let goal = o.goal;
    let mut s = format!(
        "On {} fresh replications (from {FRESH}, seeds no candidate ran):\n",
        o.fresh_n
    );
    for (r, row) in o.fresh.iter().enumerate() {
        let mut parts = Vec::new();
        if let Some(e) = &row[0] {
            parts.push(format!("{} {}", goal.objective, interval(e)));
        }
        for (k, t) in goal.constraints.iter().enumerate() {
            let Some(e) = &row[k + 1] else {
                parts.push(format!("{} no value", t.metric));
                continue;
            };
            let verdict = match goal.judge(t, e) {
                Judgement::Met => "met",
                Judgement::Violated => "FAILS",
                Judgement::Unsure => "unsure",
            };
            parts.push(format!(
                "{} {}, margin {} ({verdict})",
                t.metric,
                interval(e),
                interval(&margin_interval(t, e))
            ));
        }
        s.push_str(&wrap(
            &format!("  row {}: {}", o.rows[r], parts.join("; ")),
            crate::table::WIDTH,
        ));
    }
    s
}

fn rows_text(rows: &[String], over: &str) -> String {
    match rows {
        [_] => "in the scenario's one compare row".into(),
        _ => format!(
            "over {over} ({} compare rows: {})",
            rows.len(),
            rows.join("; ")
        ),
    }
}

fn set_args(keys: &[Key], p: &Point) -> String {
    space::set_lines(keys, p)
        .iter()
        .map(|l| format!("--set {l}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The result as one JSON document.
pub fn json(o: &Outcome, dir: &Path) -> Result<String, Error> {
    use serde_json::{Map, Value as J, json};
    let est = |e: &Option<Estimate>| match e {
        Some(e) => {
            json!({"mean": finite(e.mean), "low": finite(e.lo), "high": finite(e.hi), "n": e.n})
        }
        None => J::Null,
    };
    let point = |i: usize| -> J {
        let mut m = Map::new();
        for (k, v) in o.keys.iter().zip(&o.candidates[i].point) {
            m.insert(k.key.clone(), serde_json::to_value(v).unwrap_or(J::Null));
        }
        J::Object(m)
    };
    let fresh: Vec<J> = o
        .fresh
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let constraints: Vec<J> = o
                .goal
                .constraints
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    json!({
                        "constraint": constraint_text(t),
                        "estimate": est(&row[k + 1]),
                        "met": row[k + 1].map(|e| o.goal.judge(t, &e).word()),
                    })
                })
                .collect();
            json!({"row": o.rows[r], "objective": est(&row[0]), "constraints": constraints})
        })
        .collect();
    let doc = json!({
        "scenario": o.scenario_name,
        "file": o.opts.file.display().to_string(),
        "objective": {"metric": o.goal.objective, "maximize": o.goal.maximize, "over": format!("{:?}", o.goal.over).to_lowercase()},
        "constraints": o.goal.constraints.iter().map(constraint_text).collect::<Vec<_>>(),
        "rows": o.rows,
        "recommendation": o.pick.map(|(i, _)| point(i)),
        "feasible": o.pick.is_some_and(|(_, sure)| sure),
        "edges": o.pick.map(|(i, _)| edges(o.keys, &o.candidates[i].point)).unwrap_or_default(),
        "closest": o.closest.map(point),
        "fresh": {"replications": o.fresh_n, "rows": fresh},
        "candidates": o.candidates.len(),
        "runs": o.runs + o.other_runs,
        "search_runs": o.runs,
        "budget": o.budget,
        "out_of_budget": o.out_of_budget,
        "folder": dir.display().to_string(),
        "write_back": (!o.opts.write_back.is_empty()).then(|| json!({
            "files": o.written.iter().map(|w| json!({
                "file": w.file.display().to_string(),
                "written": dir.join(&w.name).display().to_string(),
            })).collect::<Vec<_>>(),
            "diff": super::write_back::diffs(&o.written),
            "refused": o.refused,
        })),
    });
    serde_json::to_string_pretty(&doc)
        .map(|s| s + "\n")
        .map_err(|e| Error::Other(format!("tune: cannot write JSON: {e}")))
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The scenario's text with each key set to the point's value, everything
/// else (comments, order, layout) as it was. None: a key the file does not
/// hold where it can be written (one given by `--set` only).
pub fn tuned_copy(text: &str, keys: &[Key], point: &Point) -> Option<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().ok()?;
    for (k, v) in keys.iter().zip(point) {
        let path = crate::scenario::paths::segments(&k.key);
        let slot = find(doc.as_item_mut(), &path)?;
        let mut new = to_edit(v)?;
        *new.decor_mut() = slot.decor().clone();
        *slot = new;
    }
    Some(doc.to_string())
}

/// The value at `path` under `item`, when it is there.
fn find<'a>(item: &'a mut toml_edit::Item, path: &[String]) -> Option<&'a mut toml_edit::Value> {
    let (head, rest) = path.split_first()?;
    let child: &mut toml_edit::Item = match item {
        toml_edit::Item::ArrayOfTables(a) => {
            let t = a.get_mut(head.parse().ok()?)?;
            return find_in_table(t, rest);
        }
        toml_edit::Item::Value(v) => return find_value(v, path),
        other => other.get_mut(head.as_str())?,
    };
    if rest.is_empty() {
        child.as_value_mut()
    } else {
        find(child, rest)
    }
}

fn find_in_table<'a>(
    t: &'a mut toml_edit::Table,
    path: &[String],
) -> Option<&'a mut toml_edit::Value> {
    let (head, rest) = path.split_first()?;
    let child = t.get_mut(head)?;
    if rest.is_empty() {
        child.as_value_mut()
    } else {
        find(child, rest)
    }
}

fn find_value<'a>(
    v: &'a mut toml_edit::Value,
    path: &[String],
) -> Option<&'a mut toml_edit::Value> {
    let Some((head, rest)) = path.split_first() else {
        return Some(v);
    };
    let child = match v {
        toml_edit::Value::Array(a) => a.get_mut(head.parse().ok()?)?,
        toml_edit::Value::InlineTable(t) => t.get_mut(head)?,
        _ => return None,
    };
    find_value(child, rest)
}

fn to_edit(v: &toml::Value) -> Option<toml_edit::Value> {
    let text = format!("v = {}", space::show(v));
    let doc: toml_edit::DocumentMut = text.parse().ok()?;
    doc.get("v")?.as_value().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tuned_copy_changes_only_the_tuned_values() {
        let text = "# top\n[policies.retry]\ntimeout_ms = 100 # per try\nretry = { max_attempts = 3, on = [\"timeout\"] }\n\n[[faults]]\nat_ms = 5\n[compare]\nx = [1]\n";
        let keys = [
            space::parse("policies.retry.timeout_ms=20..500").unwrap(),
            space::parse("policies.retry.retry.max_attempts=1..5").unwrap(),
            space::parse("faults.0.at_ms=1..9").unwrap(),
        ];
        let point = vec![
            toml::Value::Float(37.5),
            toml::Value::Integer(2),
            toml::Value::Integer(7),
        ];
        let out = tuned_copy(text, &keys, &point).expect("a copy");
        assert_eq!(
            out,
            "# top\n[policies.retry]\ntimeout_ms = 37.5 # per try\nretry = { max_attempts = 2, on = [\"timeout\"] }\n\n[[faults]]\nat_ms = 7\n[compare]\nx = [1]\n"
        );
        let missing = [space::parse("policies.other.timeout_ms=1..2").unwrap()];
        assert!(tuned_copy(text, &missing, &vec![toml::Value::Integer(1)]).is_none());
    }
}
