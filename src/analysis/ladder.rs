//! Load-ladder analyses (IO22-IO25): the per-step table, where the ladder
//! saturates and where waits pass what the timeout allows (the knee), the true
//! limit at the acceptance share, the sweep of limit-declaring rules with their
//! false passes and false fails, the cost of the ladder, and (with several compare
//! rows) each row's throughput and success against the first row's.
//!
//! A round is the mean service time of the server the ladder calls, so a step's
//! `p95_wait_rounds` is its p95 queue wait divided by that mean. The acceptable
//! wait is the most whole rounds a request may wait and still be answered within
//! the timeout: floor((timeout - round) / round).

use super::{Results, Tables};
use crate::format::format_number;
use crate::model::{Handler, Ladder, Model, Workload};
use crate::sim::{RunResult, StepStats};
use crate::table::{Cell, Table};

/// One step's figures, as the tables print them.
struct Step {
    concurrency: u64,
    sent: u64,
    processed: u64,
    rejected: u64,
    p95_wait_rounds: Option<f64>,
    successful: u64,
    timed_out: u64,
    /// Requests that waited in the queue for a slot at all.
    waited: u64,
}

/// One compare row's ladder read.
struct Read {
    steps: Vec<Step>,
    max_wait_rounds: Option<f64>,
    /// Indices into `steps`.
    saturation: Option<usize>,
    knee: Option<usize>,
    /// The first step where a request waited for a slot (every slot was busy).
    slots_full: Option<usize>,
    /// The first step where the queue was full too (a request was refused).
    queue_full: Option<usize>,
    true_limit: Option<u64>,
    /// Per step: successful share >= acceptance (None without `acceptance`).
    acceptable: Option<Vec<bool>>,
}

/// A rule's verdict on one row.
struct Verdict {
    name: String,
    declared: Option<u64>,
    false_pass: Vec<u64>,
    false_fail: Vec<u64>,
}

fn ladder_of(model: &Model) -> Option<&Ladder> {
    match &model.workload {
        Workload::Ladder(l) => Some(l),
        _ => None,
    }
}

/// The mean service time (ms) of the server the ladder calls: one round.
fn round_ms(model: &Model, ladder: &Ladder) -> Option<f64> {
    let service = model.routes[ladder.template.route].service?;
    match &model.services[service].handler {
        Handler::Server(s) => Some(s.service.mean_ms()).filter(|r| *r > 0.0),
        _ => None,
    }
}

fn step_row(st: &StepStats, round: Option<f64>) -> Step {
    let mut waits = st.waits.clone();
    let p95 = (waits.count() > 0)
        .then(|| waits.quantile_ms(0.95))
        .and_then(|w| round.map(|r| w / r));
    Step {
        concurrency: st.concurrency,
        sent: st.sent,
        processed: st.processed,
        rejected: st.rejected,
        p95_wait_rounds: p95,
        successful: st.successful,
        // accepted but not answered in time: processed late, or dropped from the
        // queue when the client gave up (the spec's processed - successful when
        // nothing is abandoned)
        timed_out: (st.processed + st.abandoned).saturating_sub(st.successful),
        waited: st.waits.count_positive(),
    }
}

fn read(model: &Model, run: &RunResult) -> Option<Read> {
    let ladder = ladder_of(model)?;
    let round = round_ms(model, ladder);
    let steps: Vec<Step> = run.steps.iter().map(|s| step_row(s, round)).collect();
    let max_wait_rounds = round
        .filter(|r| ladder.timeout_ms >= *r)
        .map(|r| ((ladder.timeout_ms - r) / r).floor());
    let saturation = (1..steps.len()).find(|&i| steps[i].processed <= steps[i - 1].processed);
    let knee = steps.iter().position(|s| {
        s.p95_wait_rounds
            .is_some_and(|p| max_wait_rounds.is_none_or(|m| p > m))
    });
    let acceptable = model.analysis.acceptance.map(|a| {
        steps
            .iter()
            .map(|s| s.sent > 0 && s.successful as f64 / s.sent as f64 >= a)
            .collect::<Vec<bool>>()
    });
    let true_limit = acceptable.as_ref().and_then(|ok| {
        steps
            .iter()
            .zip(ok)
            .filter(|(_, ok)| **ok)
            .map(|(s, _)| s.concurrency)
            .max()
    });
    let slots_full = steps.iter().position(|s| s.waited > 0);
    let queue_full = steps.iter().position(|s| s.rejected > 0);
    Some(Read {
        steps,
        max_wait_rounds,
        saturation,
        knee,
        slots_full,
        queue_full,
        true_limit,
        acceptable,
    })
}

/// Every rule the analysis asks for, judged against the true acceptability.
fn verdicts(model: &Model, r: &Read) -> Vec<Verdict> {
    let Some(ok) = &r.acceptable else {
        return Vec::new();
    };
    let mut rules: Vec<(String, Vec<bool>)> = model
        .analysis
        .p95_rules_rounds
        .iter()
        .map(|&t| {
            let accepts = r
                .steps
                .iter()
                .map(|s| s.p95_wait_rounds.is_some_and(|p| p <= t))
                .collect();
            (format!("p95<={}", format_number(t)), accepts)
        })
        .collect();
    if model.analysis.throughput_rule {
        // the steps before saturation; every step when the ladder never saturates
        let before = r.saturation.unwrap_or(r.steps.len());
        rules.push((
            "throughput".into(),
            (0..r.steps.len()).map(|i| i < before).collect(),
        ));
    }
    rules
        .into_iter()
        .map(|(name, accepts)| {
            let pick = |f: &dyn Fn(bool, bool) -> bool| -> Vec<u64> {
                r.steps
                    .iter()
                    .zip(accepts.iter().zip(ok))
                    .filter(|(_, (a, o))| f(**a, **o))
                    .map(|(s, _)| s.concurrency)
                    .collect()
            };
            Verdict {
                declared: r
                    .steps
                    .iter()
                    .zip(&accepts)
                    .filter(|(_, a)| **a)
                    .map(|(s, _)| s.concurrency)
                    .max(),
                false_pass: pick(&|a, o| a && !o),
                false_fail: pick(&|a, o| !a && o),
                name,
            }
        })
        .collect()
}

fn list(steps: &[u64]) -> String {
    steps
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One English line per rule.
fn verdict_line(v: &Verdict, acceptance: f64) -> String {
    let declared = v
        .declared
        .map_or("declares no limit (accepts no step)".to_string(), |c| {
            format!("declares c = {c}")
        });
    let share = format_number(acceptance * 100.0);
    let mut parts = Vec::new();
    if !v.false_pass.is_empty() {
        parts.push(format!(
            "passes {} step(s) whose successful share is below {share} % (c = {})",
            v.false_pass.len(),
            list(&v.false_pass)
        ));
    }
    if !v.false_fail.is_empty() {
        parts.push(format!(
            "fails {} step(s) that meet {share} % (c = {})",
            v.false_fail.len(),
            list(&v.false_fail)
        ));
    }
    if parts.is_empty() {
        format!(
            "{}: {declared}; it agrees with the successful share on every step (0 false pass, 0 false fail)",
            v.name
        )
    } else {
        format!("{}: {declared}, but {}", v.name, parts.join(" and "))
    }
}

pub fn tables(results: &mut Results, out: &mut Vec<Table>, wanted: Tables) {
    if !results.any(|m| ladder_of(m).is_some()) {
        return;
    }
    let reads: Vec<Option<Read>> = results
        .scenario
        .rows
        .iter()
        .zip(&results.runs)
        .map(|(row, run)| read(&row.model, run))
        .collect();
    out.push(ladder_table(results, &reads));
    out.push(findings_table(results, &reads));
    if let Some(t) = rules_table(results, &reads) {
        out.push(t);
    }
    out.push(totals_table(results, &reads));
    if !wanted.across_rows() {
        return;
    }
    if let Some(t) = ratios_table(results, &reads) {
        out.push(t);
    }
}

/// The axis labels of row `i` as a report prefix (`[queue = 16] `), or nothing.
fn row_prefix(results: &Results, i: usize) -> String {
    let cols = results.scenario.columns();
    if cols.is_empty() {
        return String::new();
    }
    let labels: Vec<String> = cols
        .iter()
        .zip(&results.scenario.rows[i].labels)
        .map(|(c, l)| format!("{c} = {l}"))
        .collect();
    format!("[{}] ", labels.join(", "))
}

fn ladder_table(results: &Results, reads: &[Option<Read>]) -> Table {
    let mut t = results.table(
        "ladder",
        "Load ladder: per step, what was sent, processed, refused, how long it waited and what succeeded",
        &["concurrency"],
        &[
            "sent",
            "processed",
            "rejected",
            "p95_wait_rounds",
            "successful",
            "timed_out",
        ],
    );
    for (i, r) in reads.iter().enumerate() {
        let Some(r) = r else { continue };
        for s in &r.steps {
            let mut cells = results.axis_cells(i);
            cells.extend([
                s.concurrency.into(),
                s.sent.into(),
                s.processed.into(),
                s.rejected.into(),
                s.p95_wait_rounds.into(),
                s.successful.into(),
                s.timed_out.into(),
            ]);
            t.push(cells);
        }
    }
    t.notes.push(
        "p95_wait_rounds = p95 queue wait / mean service time; successful = answered within \
         timeout_ms (a reply at the deadline is in time); timed_out = accepted - successful"
            .into(),
    );
    if let Some(o) = open_ladder(results) {
        t.notes.push(o);
    }
    let waits = results
        .runs
        .iter()
        .flat_map(|r| r.steps.iter().map(|s| &s.waits));
    if let Some(note) = crate::metrics::approximate_note(waits) {
        t.notes.push(note);
    }
    t
}

fn findings_table(results: &Results, reads: &[Option<Read>]) -> Table {
    let mut t = results.table(
        "findings",
        "Where the ladder breaks: saturation (throughput stops growing), knee (p95 wait passes what the timeout allows), true limit (successful share >= acceptance)",
        &[],
        &[
            "saturation_concurrency",
            "knee_concurrency",
            "true_limit",
            "max_wait_rounds",
            "slots_full_concurrency",
            "queue_full_concurrency",
        ],
    );
    for (i, r) in reads.iter().enumerate() {
        let Some(r) = r else { continue };
        let at = |k: Option<usize>| -> Cell { k.map(|k| r.steps[k].concurrency).into() };
        let mut cells = results.axis_cells(i);
        cells.extend([
            at(r.saturation),
            at(r.knee),
            r.true_limit.into(),
            r.max_wait_rounds.into(),
            at(r.slots_full),
            at(r.queue_full),
        ]);
        t.push(cells);
        let mut note = row_prefix(results, i);
        note.push_str(&match (r.saturation, r.knee) {
            (Some(s), Some(k)) if k < s => format!(
                "waits pass the timeout at c = {} while throughput still grows until c = {}",
                r.steps[k].concurrency, r.steps[s].concurrency
            ),
            (Some(s), _) => format!("throughput stops growing at c = {}", r.steps[s].concurrency),
            (None, k) => {
                let growth = if r.steps.len() < 2 {
                    "one step cannot show saturation"
                } else {
                    "throughput never stops growing"
                };
                match k {
                    Some(k) => format!(
                        "{growth}; waits pass the timeout at c = {}",
                        r.steps[k].concurrency
                    ),
                    None => format!("{growth}; waits never pass the timeout"),
                }
            }
        });
        if let Some(l) = r.true_limit {
            note.push_str(&format!("; the true limit is c = {l}"));
        }
        let first = |k: Option<usize>, what: &str| match k {
            Some(k) => format!("{what} at c = {}", r.steps[k].concurrency),
            None => format!("{what} at no step"),
        };
        note.push_str(&format!(
            "; {}, {}",
            first(r.slots_full, "the slots fill (a request waits)"),
            first(r.queue_full, "the queue overflows (a request is refused)")
        ));
        t.notes.push(note);
    }
    t.notes.push(
        "saturation_concurrency keeps the course's definition (IO25: the first step whose \
         processed count does not grow); behind a queue it is where the queue overflows and \
         throughput stops, often far above where the slots fill: slots_full_concurrency = the \
         first step at which a request waited for a slot, queue_full_concurrency = the first \
         step at which one was refused (slots and queue full)"
            .into(),
    );
    if let Some(o) = open_ladder(results) {
        t.notes.push(o);
    }
    t
}

/// For an open ladder, the caption that says its steps are rates.
fn open_ladder(results: &Results) -> Option<String> {
    let ladder = ladder_of(results.scenario.base())?;
    let open = ladder.open?;
    Some(format!(
        "open ladder: `concurrency` (and c in these lines) is the step number s, which sends \
         s x {} req/s for {} ms; it is a rate, not requests in flight",
        crate::format::format_number(open.rate_per_step_rps),
        crate::format::format_number(open.hold.as_ms())
    ))
}

fn rules_table(results: &Results, reads: &[Option<Read>]) -> Option<Table> {
    let mut t = results.table(
        "limit_rules",
        "Limit-declaring rules: the highest step each accepts, and the steps it gets wrong against the successful share",
        &["rule"],
        &["declared_limit", "false_pass", "false_fail"],
    );
    for (i, r) in reads.iter().enumerate() {
        let Some(r) = r else { continue };
        let model = &results.scenario.rows[i].model;
        let Some(acceptance) = model.analysis.acceptance else {
            continue;
        };
        for v in verdicts(model, r) {
            let mut cells = results.axis_cells(i);
            cells.extend([
                v.name.as_str().into(),
                v.declared.into(),
                v.false_pass.len().into(),
                v.false_fail.len().into(),
            ]);
            t.push(cells);
            t.notes.push(format!(
                "{}{}",
                row_prefix(results, i),
                verdict_line(&v, acceptance)
            ));
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

fn totals_table(results: &Results, reads: &[Option<Read>]) -> Table {
    let mut t = results.table(
        "totals",
        "What the ladder cost: requests sent, accepted, refused and timed out over every step",
        &[],
        &[
            "steps",
            "sent",
            "accepted",
            "rejected",
            "timed_out",
            "successful",
            "duration_ms",
            "successful_per_s",
        ],
    );
    for (i, r) in reads.iter().enumerate() {
        let Some(r) = r else { continue };
        let sum = |f: fn(&Step) -> u64| -> u64 { r.steps.iter().map(f).sum() };
        let sent = sum(|s| s.sent);
        let rejected = sum(|s| s.rejected);
        let successful = sum(|s| s.successful);
        let duration_ms = results.runs[i].sim_time_ms;
        let mut cells = results.axis_cells(i);
        cells.extend([
            r.steps.len().into(),
            sent.into(),
            (sent - rejected.min(sent)).into(),
            rejected.into(),
            sum(|s| s.timed_out).into(),
            successful.into(),
            duration_ms.into(),
            (duration_ms > 0.0)
                .then(|| successful as f64 / duration_ms * 1000.0)
                .into(),
        ]);
        t.push(cells);
    }
    t
}

/// Each row's processed and successful totals against the first row's: figures
/// across rows (a row's ratios depend on the first row's run).
fn ratios_table(results: &Results, reads: &[Option<Read>]) -> Option<Table> {
    if results.scenario.rows.len() < 2 {
        return None;
    }
    let totals = |r: &Read| -> (u64, u64) {
        (
            r.steps.iter().map(|s| s.processed).sum(),
            r.steps.iter().map(|s| s.successful).sum(),
        )
    };
    let (p0, s0) = totals(reads[0].as_ref()?);
    let mut t = Table::new(
        "ladder_ratios",
        "Each compare row against the first: throughput (processed) and successful requests",
        results.headers(&[
            "processed",
            "successful",
            "processed_ratio",
            "successful_ratio",
        ]),
    );
    let ratio = |a: u64, b: u64| -> Option<f64> { (b > 0).then(|| a as f64 / b as f64) };
    for (i, r) in reads.iter().enumerate() {
        let Some(r) = r else { continue };
        let (p, s) = totals(r);
        let mut cells = results.axis_cells(i);
        cells.extend([p.into(), s.into(), ratio(p, p0).into(), ratio(s, s0).into()]);
        t.push(cells);
        if i > 0 {
            let fmt = |x: Option<f64>| x.map_or("-".into(), |x| format!("x{x:.2}"));
            t.notes.push(format!(
                "{}throughput {} and successful {} against {}",
                row_prefix(results, i),
                fmt(ratio(p, p0)),
                fmt(ratio(s, s0)),
                row_prefix(results, 0).trim_end()
            ));
        }
    }
    Some(t)
}
