//! Rate-limiter analyses (DY13): which limiter sees which (route, access) pair
//! (coverage), what each limiter's key makes of its one limit (buckets, the real
//! ceiling, the projection to more members), who passed and who was rejected, why,
//! and how much each limiter lets through within one window.

use super::Results;
use crate::model::{LimiterMode, Model, Workload};
use crate::sim::limiter::LimiterRun;
use crate::table::{Cell, Table};

/// A per-member line is printed under the limiters table up to this many members.
const MEMBER_NOTE_MAX: usize = 12;

pub fn tables(results: &mut Results, out: &mut Vec<Table>) {
    if !results.any(|m| !m.limiters.is_empty()) {
        return;
    }
    if results.any(|m| matches!(m.workload, Workload::Probe { .. })) {
        out.push(coverage(results));
        out.push(coverage_totals(results));
    }
    out.push(limiters(results));
    out.push(members(results));
    out.push(rejects(results));
    out.push(bursts(results));
}

fn limiter_names(model: &Model) -> Vec<&str> {
    model.limiters.iter().map(|l| l.name.as_str()).collect()
}

/// The limiters of every row, by name in first-seen order: one column each.
fn all_limiters<'m>(results: &'m Results) -> Vec<&'m str> {
    results.names(limiter_names)
}

/// Index `l` of `names` in `model`'s limiters (a row may lack a limiter or hold
/// them in another order).
fn limiter_index(model: &Model, name: &str) -> Option<usize> {
    model.limiters.iter().position(|l| l.name == name)
}

/// Whether `counted` requests of a pair were seen by the limiter.
fn seen(counted: u64) -> Cell {
    if counted > 0 { "counted" } else { "skipped" }.into()
}

fn coverage(results: &Results) -> Table {
    let names = all_limiters(results);
    let mut t = results.table(
        "coverage",
        "Coverage: which limiter counts a request of each route and access path",
        &["route", "access"],
        &names,
    );
    for (i, row) in results.scenario.rows.iter().enumerate() {
        for pair in &results.runs[i].limiters.traffic {
            let mut cells = results.axis_cells(i);
            cells.push(row.model.routes[pair.route].path.as_str().into());
            cells.push(pair.access.map_or("", |a| a.name()).into());
            cells.extend(names.iter().map(|name| {
                limiter_index(&row.model, name).map_or(Cell::Empty, |l| seen(pair.counted[l]))
            }));
            t.push(cells);
        }
    }
    t
}

fn coverage_totals(results: &Results) -> Table {
    let all = all_limiters(results);
    let mut head = vec!["pairs"];
    head.extend(all.iter().copied());
    head.push("unlimited");
    let mut t = results.table(
        "coverage_totals",
        "Coverage totals: (route, access) pairs each limiter counts, and pairs no limiter counts",
        &[],
        &head,
    );
    for (i, row) in results.scenario.rows.iter().enumerate() {
        let traffic = &results.runs[i].limiters.traffic;
        let mut cells = results.axis_cells(i);
        cells.push(traffic.len().into());
        for name in &all {
            cells.push(Cell::from(
                limiter_index(&row.model, name)
                    .map(|l| traffic.iter().filter(|p| p.counted[l] > 0).count()),
            ));
        }
        let none = traffic
            .iter()
            .filter(|p| p.counted.iter().all(|c| *c == 0))
            .count();
        cells.push(none.into());
        t.push(cells);
        let names = limiter_names(&row.model);
        let seen: Vec<String> = (0..names.len())
            .map(|l| {
                let n = traffic.iter().filter(|p| p.counted[l] > 0).count();
                format!("{} {n}", names[l])
            })
            .collect();
        let label = row_label(results, i);
        t.notes.push(format!(
            "{label}{} route-access pairs: {}; {none} pairs outside every limiter",
            traffic.len(),
            seen.join(", ")
        ));
    }
    t
}

/// `key = client: ` for a compare row, empty without axes.
fn row_label(results: &Results, i: usize) -> String {
    let cols = results.scenario.columns();
    if cols.is_empty() {
        return String::new();
    }
    let labels = &results.scenario.rows[i].labels;
    let parts: Vec<String> = cols
        .iter()
        .zip(labels)
        .map(|(c, l)| format!("{c} = {l}"))
        .collect();
    format!("{}: ", parts.join(", "))
}

/// limit x buckets x active_members / members seen, when the key holds `member`.
fn projected(model: &Model, l: usize, run: &LimiterRun) -> Cell {
    let limiter = &model.limiters[l];
    match model.analysis.active_members {
        Some(active)
            if limiter.key.contains(&crate::model::Field::Member) && !run.members.is_empty() =>
        {
            let seen = run.members.len() as f64;
            (limiter.limit() as f64 * run.buckets as f64 * active as f64 / seen).into()
        }
        _ => Cell::Empty,
    }
}

/// limit x buckets, exact while it fits a whole-number cell.
fn ceiling(limit: u64, buckets: u64) -> Cell {
    let c = u128::from(limit) * u128::from(buckets);
    match i64::try_from(c) {
        Ok(v) => Cell::Int(v),
        Err(_) => Cell::Num(c as f64),
    }
}

/// Whether a compare row has a limiter in the middleware of a replicated
/// service, where a limiter's scope (one state per replica or one for the
/// service) makes a difference: then the limiter tables show it.
pub(super) fn scoped(results: &Results) -> bool {
    results.any(|m| (m.services.iter()).any(|s| s.replicas > 1 && !s.middleware.is_empty()))
}

fn limiters(results: &Results) -> Table {
    let base = results.scenario.base();
    let active = results.models().find_map(|m| m.analysis.active_members);
    let scoped = scoped(results);
    let mut head = vec!["bucket_key", "buckets", "ceiling", "passed", "rejected"];
    if scoped {
        head.insert(0, "scope");
    }
    if active.is_some() {
        head.push("projected_ceiling");
    }
    let mut t = results.table(
        "limiters",
        "Limiters: buckets the key made, the real ceiling (limit x buckets), passed and rejected",
        &["limiter"],
        &head,
    );
    for (i, row) in results.scenario.rows.iter().enumerate() {
        let m = &row.model;
        for (l, (limiter, run)) in m
            .limiters
            .iter()
            .zip(&results.runs[i].limiters.limiters)
            .enumerate()
        {
            let mut cells = results.axis_cells(i);
            cells.push(limiter.name.as_str().into());
            if scoped {
                cells.push(limiter.scope.name().into());
            }
            cells.extend([
                limiter.key_label().into(),
                run.buckets.into(),
                ceiling(limiter.limit(), run.buckets),
                run.passed.into(),
                run.rejected.into(),
            ]);
            if active.is_some() {
                cells.push(projected(m, l, run));
            }
            t.push(cells);
            if run.members.len() <= MEMBER_NOTE_MAX && !run.members.is_empty() {
                let per: Vec<String> = run
                    .members
                    .iter()
                    .map(|c| format!("{} {}/{}", c.member, c.passed, c.rejected))
                    .collect();
                t.notes.push(format!(
                    "{}{} passed/rejected per member: {}",
                    row_label(results, i),
                    limiter.name,
                    per.join(", ")
                ));
            }
        }
    }
    let limits: Vec<String> = base
        .limiters
        .iter()
        .map(|l| format!("{} {}", l.name, l.limit()))
        .collect();
    t.notes.push(format!(
        "The limit written is one number per limiter ({}); the ceiling is that limit times the buckets, and the buckets come from the traffic, not the configuration.",
        limits.join(", ")
    ));
    if scoped {
        t.notes.push(
            "scope: replica = one state per replica of the service whose middleware lists it, met after its balancer's pick \
             (buckets counts each replica's); service = one state for the whole service (a gateway's limiter always)."
                .into(),
        );
    }
    if let Some(n) = active {
        t.notes.push(format!(
            "projected_ceiling: with {n} active members, a key holding `member` makes limit x buckets x {n} / members seen per window."
        ));
    }
    t
}

fn members(results: &Results) -> Table {
    let mut t = results.table(
        "members",
        "Members: what each limiter passed and rejected per member",
        &["limiter", "member"],
        &["passed", "rejected"],
    );
    for (i, row) in results.scenario.rows.iter().enumerate() {
        for (limiter, run) in row
            .model
            .limiters
            .iter()
            .zip(&results.runs[i].limiters.limiters)
        {
            for c in &run.members {
                let mut cells = results.axis_cells(i);
                cells.extend([
                    limiter.name.as_str().into(),
                    c.member.as_str().into(),
                    c.passed.into(),
                    c.rejected.into(),
                ]);
                t.push(cells);
            }
        }
    }
    t
}

/// The row name of the all-members total in `rejects.csv`.
pub const ALL_MEMBERS: &str = "(all)";

fn rejects(results: &Results) -> Table {
    let names = all_limiters(results);
    let reasons: Vec<String> = names.iter().map(|l| format!("rejected_by_{l}")).collect();
    let mut head = vec!["requests", "admitted", "rejected"];
    head.extend(reasons.iter().map(String::as_str));
    head.push("not_found");
    let mut t = results.table(
        "rejects",
        "Rejects: each member's requests end to end, rejected (429) by the first limiter that refused them, or not found (404)",
        &["member"],
        &head,
    );
    for i in 0..results.runs.len() {
        let model = &results.scenario.rows[i].model;
        // the row's limiters in column order
        let columns: Vec<Option<usize>> = names.iter().map(|n| limiter_index(model, n)).collect();
        let by_column = |rejected_by: &[u64]| -> Vec<u64> {
            columns
                .iter()
                .map(|l| l.map_or(0, |l| rejected_by[l]))
                .collect()
        };
        let outcomes = &results.runs[i].limiters.members;
        let n = reasons.len();
        let mut total = (0u64, 0u64, vec![0u64; n], 0u64);
        let push = |t: &mut Table, name: &str, req: u64, adm: u64, by: &[u64], nf: u64| {
            let mut cells = results.axis_cells(i);
            cells.extend([
                name.into(),
                req.into(),
                adm.into(),
                by.iter().sum::<u64>().into(),
            ]);
            cells.extend(by.iter().map(|x| Cell::from(*x)));
            cells.push(nf.into());
            t.push(cells);
        };
        for o in outcomes {
            let rejected_by = by_column(&o.rejected_by);
            push(
                &mut t,
                &o.member,
                o.requests,
                o.admitted,
                &rejected_by,
                o.not_found,
            );
            total.0 += o.requests;
            total.1 += o.admitted;
            for (s, x) in total.2.iter_mut().zip(&rejected_by) {
                *s += x;
            }
            total.3 += o.not_found;
        }
        push(&mut t, ALL_MEMBERS, total.0, total.1, &total.2, total.3);
    }
    t.notes.push(format!(
        "admitted = passed every limiter; requests - admitted - rejected - not_found gave up before the handler. Row {ALL_MEMBERS} sums the members."
    ));
    t
}

fn bursts(results: &Results) -> Table {
    // Only measured figures: the limiter's settings are often compare axes, whose
    // columns come first anyway.
    let mut t = results.table(
        "bursts",
        "Bursts and holds: the most requests each limiter let through within any window_ms, and its throttle delays",
        &["limiter"],
        &[
            "passed",
            "rejected",
            "delayed",
            "mean_delay_ms",
            "max_delay_ms",
            "peak_passed_in_window",
            "peak_to_limit",
        ],
    );
    for (i, row) in results.scenario.rows.iter().enumerate() {
        for (limiter, run) in row
            .model
            .limiters
            .iter()
            .zip(&results.runs[i].limiters.limiters)
        {
            let mut cells = results.axis_cells(i);
            let mean_delay = (run.delayed > 0).then(|| run.delay_total_ms / run.delayed as f64);
            let max_delay = limiter
                .rate()
                .is_some_and(|r| r.mode == LimiterMode::Throttle)
                .then_some(run.delay_max_ms);
            cells.extend([
                limiter.name.as_str().into(),
                run.passed.into(),
                run.rejected.into(),
                run.delayed.into(),
                mean_delay.into(),
                max_delay.into(),
                run.peak_passed_in_window.into(),
                // a concurrency limit is no count per window
                (limiter.concurrency().is_none())
                    .then(|| run.peak_passed_in_window as f64 / limiter.limit() as f64)
                    .into(),
            ]);
            t.push(cells);
        }
    }
    t.notes.push(
        "peak_passed_in_window: the most requests let through within any (t - window_ms, t]; peak_to_limit = that / limit. \
         A fixed window reaches 2 across a window boundary; a token bucket (or GCRA) can too over a whole window, \
         its full burst plus one window of refill."
            .into(),
    );
    t
}
