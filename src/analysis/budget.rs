//! Deadline-budget analyses (AY10): the shares each policy gives, the outcomes per
//! compare row with Little's-law slot figures, the cost of propagating the deadline,
//! the extra drops of tight splits, and the error-budget sensitivity.

use super::asks::{Ask, Stat};
use super::{Results, Tables};
use crate::engine::Ticks;
use crate::metrics::{Samples, approximate_note};
use crate::model::{BudgetKind, Handler, Model, Plan, Policy};
use crate::sim::Outcomes;
use crate::table::{Cell, Table};

/// The plans of a model (plan handlers, and servers that make calls), with their
/// service names.
fn plans(model: &Model) -> Vec<(&str, &Plan)> {
    model
        .services
        .iter()
        .filter_map(|s| s.handler.plan().map(|p| (s.name.as_str(), p)))
        .collect()
}

pub fn tables(results: &mut Results, out: &mut Vec<Table>, wanted: Tables) {
    let has_plans = results.any(|m| !plans(m).is_empty());
    if has_plans {
        out.push(shares(results));
    }
    out.push(outcomes(results));
    if !wanted.across_rows() {
        return;
    }
    if has_plans {
        if let Some(t) = deadline_cost(results) {
            out.push(t);
        }
        if let Some(t) = false_drops(results) {
            out.push(t);
        }
    }
    if let Some(t) = error_budget(results.scenario.base()) {
        out.push(t);
    }
}

fn shares(results: &Results) -> Table {
    let mut t = results.table(
        "shares",
        "Budget shares: the most each call may take (before the time already spent is deducted)",
        &["branch", "dependency"],
        &["share_ms"],
    );
    for (i, row) in results.scenario.rows.iter().enumerate() {
        for (_, plan) in plans(&row.model) {
            for b in &plan.branches {
                for c in &b.calls {
                    let mut cells = results.axis_cells(i);
                    cells.push(b.name.as_str().into());
                    cells.push(row.model.target_name(c.target).into());
                    // a budget known only at run time has no fixed share
                    let fixed = matches!(
                        plan.budget_kind,
                        BudgetKind::Fixed | BudgetKind::SloOrDeadline
                    );
                    cells.push(if fixed {
                        c.share_ms.into()
                    } else {
                        Cell::Empty
                    });
                    t.push(cells);
                }
            }
        }
    }
    t
}

/// Slots held at the peak read rate by work lasting `mean_ms` (Little's law).
fn slots(model: &Model, mean_ms: f64) -> Option<f64> {
    model.slo.peak_read_rps.map(|rps| rps * mean_ms / 1000.0)
}

/// The percentiles of the answered requests' end-to-end times the `outcomes`
/// table gives (`p50_ms` to `p999_ms`), and of every request (`p50_all_ms` to
/// `p999_all_ms`).
pub(super) const ANSWERED_QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// What `outcomes` reads: the median of every response, and of the answered
/// ones [`ANSWERED_QUANTILES`] and those of every request that fall among them;
/// the same per workload when the table has a row per workload (`several`).
pub(super) fn asks(run: &crate::sim::RunResult, several: bool, out: &mut Vec<Ask>) {
    let answered = |requests: u64, samples: &Samples| {
        let mut qs = ANSWERED_QUANTILES.to_vec();
        qs.extend(all_quantiles(requests, samples));
        qs
    };
    out.push(Ask::new(Stat::Response, &[], true));
    out.push(Ask::new(
        Stat::Answered,
        &answered(run.outcomes.requests, &run.answered_response),
        false,
    ));
    if several {
        for (i, w) in run.workloads.iter().enumerate() {
            out.push(Ask::new(Stat::WorkloadResponse(i), &[], true));
            out.push(Ask::new(
                Stat::WorkloadAnswered(i),
                &answered(w.outcomes.requests, &w.answered_response),
                false,
            ));
        }
    }
}

/// Where a percentile `q` of ALL `requests` falls among the `answered` ones,
/// a failed request counting as never answered: the quantile of the answered
/// requests' own count whose nearest rank is that request's (`ceil(q N)`-th of
/// all, when it was answered), or None when more than the share `q` failed.
///
/// The answered times are the fastest `answered` of every request's (the
/// failed ones last, at infinity), so the `k`-th of all is the `k`-th answered
/// while `k <= answered`. `(k - 1/2) / answered` is that rank's quantile with
/// half a rank to spare on either side for rounding.
pub(super) fn of_all(q: f64, requests: u64, answered: u64) -> Option<f64> {
    let k = ((q * requests as f64).ceil() as u64).max(1);
    (requests > 0 && answered > 0 && k <= answered).then(|| (k as f64 - 0.5) / answered as f64)
}

/// [`ANSWERED_QUANTILES`] of every request as quantiles of the answered ones
/// ([`of_all`]), those that fall among them.
pub(super) fn all_quantiles(requests: u64, answered: &Samples) -> Vec<f64> {
    ANSWERED_QUANTILES
        .iter()
        .filter_map(|&q| of_all(q, requests, answered.count()))
        .collect()
}

/// The percentile cells of one `outcomes` row: the answered share, the
/// answered requests' end-to-end p50..p999 and mean (empty when none was), then
/// the failures by kind, then p50..p999 over every request (empty where more
/// than that share failed).
fn percentile_cells(outcomes: &Outcomes, samples: &mut Samples) -> Vec<Cell> {
    let pct = if outcomes.requests == 0 {
        Cell::Empty
    } else {
        (outcomes.answered as f64 / outcomes.requests as f64 * 100.0).into()
    };
    // the mean is exact at any count (the percentiles past 2^20 are not)
    let mean = if samples.count() == 0 {
        Cell::Empty
    } else {
        samples.mean_ms().into()
    };
    let mut cells = vec![pct];
    for q in ANSWERED_QUANTILES {
        cells.push(if samples.count() == 0 {
            Cell::Empty
        } else {
            samples.quantile_ms(q).into()
        });
    }
    cells.push(mean);
    cells.extend(failures(outcomes).map(Cell::from));
    let n = samples.count();
    for q in ANSWERED_QUANTILES {
        cells.push(
            of_all(q, outcomes.requests, n)
                .map(|q| samples.quantile_ms(q))
                .into(),
        );
    }
    cells
}

/// The name of the row that sums every workload when there are several.
pub const ALL_WORKLOADS: &str = "all";

/// `failed`, then each way of failing but `dropped` (a column of its own, the
/// seed's, further left): `timed_out` .. `not_found`.
fn failures(o: &Outcomes) -> [u64; 7] {
    [
        o.failed(),
        o.timed_out,
        o.shed,
        o.rejected,
        o.errors,
        o.refused,
        o.not_found,
    ]
}

/// The columns after `answered_mean_ms`: every request accounted for, then the
/// percentiles over every request.
pub const ACCOUNTED: [&str; 11] = [
    "failed",
    "timed_out",
    "shed",
    "rejected",
    "errors",
    "refused",
    "not_found",
    "p50_all_ms",
    "p90_all_ms",
    "p99_all_ms",
    "p999_all_ms",
];

fn outcomes(results: &mut Results) -> Table {
    // one column per dependency of any row, filled by name (a row may have others,
    // or the same in another order)
    let deps: Vec<String> = results
        .names(|m| m.dependencies.iter().map(|d| d.name.as_str()).collect())
        .into_iter()
        .map(String::from)
        .collect();
    let failed: Vec<String> = deps.iter().map(|d| format!("failed_{d}")).collect();
    let mut headers = vec!["requests", "answered", "dropped"];
    headers.extend(failed.iter().map(String::as_str));
    headers.extend([
        "median_ms",
        "worst_ms",
        "mean_ms",
        "held_slots",
        "wasted_ms",
        "abandoned_slots",
        "total_slots",
        "answered_pct",
        "p50_ms",
        "p90_ms",
        "p99_ms",
        "p999_ms",
        "answered_mean_ms",
    ]);
    headers.extend(ACCOUNTED);
    // with several workloads, one row per workload and one for them all
    let several = results.any(|m| m.workloads.len() > 1);
    let key: &[&str] = if several { &["workload"] } else { &[] };
    let mut t = results.table(
        "outcomes",
        "Outcomes per row: answered = every call in time and the response within the threshold",
        key,
        &headers,
    );
    for i in 0..results.runs.len() {
        let model = &results.scenario.rows[i].model;
        let axis = results.axis_cells(i);
        let r = &mut results.runs[i];
        if several && r.workloads.is_empty() {
            // a row with one workload keeps its books in the run's own
            r.workloads = vec![crate::sim::WorkloadStats {
                outcomes: r.outcomes,
                response: r.response.clone(),
                answered_response: r.answered_response.clone(),
            }];
        }
        if several {
            for (w, named) in r.workloads.iter_mut().zip(&model.workloads) {
                t.push(workload_cells(axis.clone(), &named.name, w, deps.len()));
            }
        }
        t.push(run_cells(axis, several, model, r, &deps));
    }
    t.notes.extend(outcome_notes(!deps.is_empty(), several));
    if let Some(note) = approximate_note(
        results
            .runs
            .iter()
            .flat_map(|r| [&r.response, &r.answered_response]),
    ) {
        t.notes.push(note);
    }
    t.notes
        .extend(thin_tail_notes(&results.scenario.base().thin_tails));
    t
}

/// A workload's row of the outcomes: what its clients saw (the whole-system
/// columns, `deps` failed-call counts and the slots, empty).
fn workload_cells(
    axis: Vec<Cell>,
    name: &str,
    w: &mut crate::sim::WorkloadStats,
    deps: usize,
) -> Vec<Cell> {
    let mut cells = axis;
    cells.push(name.into());
    cells.extend([
        w.outcomes.requests.into(),
        w.outcomes.answered.into(),
        w.outcomes.dropped.into(),
    ]);
    cells.extend((0..deps).map(|_| Cell::Empty));
    let any = w.response.count() > 0;
    let stat = |v: f64| if any { Cell::from(v) } else { Cell::Empty };
    cells.extend([
        stat(w.response.median_ms()),
        stat(w.response.max_ms()),
        stat(w.response.mean_ms()),
        Cell::Empty,
        Cell::Empty,
        Cell::Empty,
        Cell::Empty,
    ]);
    cells.extend(percentile_cells(&w.outcomes, &mut w.answered_response));
    cells
}

/// A compare row's row of the outcomes (`all` with several workloads): the
/// whole run, its failed calls per dependency of `deps` and its slots.
fn run_cells(
    axis: Vec<Cell>,
    several: bool,
    model: &crate::model::Model,
    r: &mut crate::sim::RunResult,
    deps: &[String],
) -> Vec<Cell> {
    let mut cells = axis;
    if several {
        cells.push(ALL_WORKLOADS.into());
    }
    // a statistic of no values is no figure: empty, never 0 (no response
    // at all, or no request counted)
    let any = r.response.count() > 0;
    let mean = any.then(|| r.response.mean_ms());
    let held = mean.and_then(|mean| slots(model, mean));
    let abandoned = (r.outcomes.requests > 0)
        .then(|| slots(model, r.wasted_ms / r.outcomes.requests as f64))
        .flatten();
    cells.extend([
        r.outcomes.requests.into(),
        r.outcomes.answered.into(),
        r.outcomes.dropped.into(),
    ]);
    // the row's dependencies by name (a search per column was quadratic)
    let index: std::collections::HashMap<&str, usize> = model
        .dependencies
        .iter()
        .enumerate()
        .map(|(i, d)| (d.name.as_str(), i))
        .collect();
    cells.extend(deps.iter().map(|name| {
        let d = index.get(name.as_str());
        Cell::from(d.map(|&d| r.dependencies[d].failed))
    }));
    cells.extend([
        any.then(|| r.response.median_ms()).into(),
        any.then(|| r.response.max_ms()).into(),
        mean.into(),
        held.into(),
        r.wasted_ms.into(),
        abandoned.into(),
        held.zip(abandoned).map(|(h, a)| h + a).into(),
    ]);
    cells.extend(percentile_cells(&r.outcomes, &mut r.answered_response));
    cells
}

/// What the outcomes' columns mean, under the table.
fn outcome_notes(dependencies: bool, several: bool) -> Vec<String> {
    let mut notes: Vec<String> = vec![
        "held_slots = peak_read_rps x mean_ms / 1000 (Little's law); abandoned_slots = peak_read_rps x wasted_ms per request / 1000"
            .into(),
        "median_ms, worst_ms and mean_ms are over every response (shed, rejected and dropped ones too); \
         answered_pct, p50_ms..p999_ms and answered_mean_ms are over the answered requests only, end to end (nearest rank)"
            .into(),
        "answered + failed = requests; failed = dropped + timed_out + shed + rejected + errors + refused + not_found \
         (dropped: a call failed or the answer came after the threshold; timed_out: the client gave up; shed: a full server, 503; \
         rejected: a limiter, 429; errors: an error answer; refused: a client policy did not send it; not_found: no route, 404)"
            .into(),
        "p50_all_ms..p999_all_ms: the time within which that share of ALL requests got an answer, a failed request counting as never answered \
         (the SLO reading: 99 % answered within p99_all_ms); empty when more than that share failed"
            .into(),
    ];
    if dependencies {
        notes.push(
            "failed_<dependency>: calls to it that failed for their caller, one per call after its last attempt (attempts are in calls.csv)"
                .into(),
        );
    }
    if several {
        notes.push(format!(
            "one row per workload, then `{ALL_WORKLOADS}` for the whole run (the columns of the whole system: failed calls, slots, waste)"
        ));
    }
    notes
}

/// Notes on the percentiles that rest on a thin tail: a latency drawn from
/// a file with fewer than 10 values above the percentile (the digest shows
/// them beside its own).
fn thin_tail_notes(thin: &[crate::model::ThinTail]) -> Vec<String> {
    let mut out = Vec::new();
    for (q, cols) in [
        (0.99, "p99_ms and p99_all_ms"),
        (0.999, "p999_ms and p999_all_ms"),
    ] {
        let named: Vec<String> = thin
            .iter()
            .map(|t| (t, crate::scenario::tail::above(t.values, q)))
            .filter(|(_, above)| *above < crate::model::ThinTail::ENOUGH)
            .map(|(t, above)| {
                format!(
                    "{} ({}: {above} of {} values above its {})",
                    t.key,
                    t.file,
                    t.values,
                    crate::error::num(q)
                )
            })
            .collect();
        if !named.is_empty() {
            out.push(format!(
                "thin tail: {cols} rest on few measured values where they depend on {} (a latency file's `fit_tail_above` draws a fitted tail instead)",
                named.join(", ")
            ));
        }
    }
    out
}

/// The deadline cost of one model: `None` without `deadline_field_bytes`.
fn deadline_cost_cells(model: &Model) -> Option<Vec<Cell>> {
    let slo = &model.slo;
    let field = slo.deadline_field_bytes?;
    let subcalls: usize = plans(model).iter().map(|(_, p)| p.subcalls()).sum();
    let bytes = subcalls as f64 * field;
    let per_s = slo.peak_edge_rps.map(|rps| rps * bytes);
    Some(vec![
        subcalls.into(),
        bytes.into(),
        slo.response_bytes.map(|rb| bytes / rb * 100.0).into(),
        per_s.into(),
        per_s.map(|b| b / 1024.0).into(),
    ])
}

/// The healthy-day cost of the deadline field: one row when every compare row's
/// model gives the same figures (the usual case: the axes change timings, not the
/// plan or the SLO), else one row per compare row, after its axis columns.
fn deadline_cost(results: &Results) -> Option<Table> {
    const TITLE: &str = "Healthy-day cost of propagating the deadline on every hop";
    const HEADERS: [&str; 5] = [
        "subcalls",
        "bytes_per_request",
        "share_of_response_pct",
        "bytes_per_s",
        "kib_per_s",
    ];
    let rows: Vec<Option<Vec<Cell>>> = results.models().map(deadline_cost_cells).collect();
    if rows.iter().all(|r| *r == rows[0]) {
        let mut t = Table::new("deadline_cost", TITLE, HEADERS.map(String::from).to_vec());
        t.push(rows.into_iter().next()??);
        return Some(t);
    }
    let mut t = Table::new("deadline_cost", TITLE, results.headers(&HEADERS));
    for (i, cells) in rows.into_iter().enumerate() {
        let Some(cells) = cells else { continue };
        let mut row = results.axis_cells(i);
        row.extend(cells);
        t.push(row);
    }
    Some(t)
}

/// The plan of a service (a plan handler's, or a server's calls), to change.
fn plan_mut(handler: &mut Handler) -> Option<&mut Plan> {
    match handler {
        Handler::Plan(plan) => Some(plan),
        Handler::Server(server) => server.plan.as_mut(),
        Handler::Respond => None,
    }
}

/// `model` with every plan's split policy set aside (greedy, no shares): two
/// models equal after this differ at most in their plans' policies.
fn without_policies(model: &Model) -> Model {
    let mut m = model.clone();
    for plan in m
        .services
        .iter_mut()
        .filter_map(|s| plan_mut(&mut s.handler))
    {
        plan.policy = Policy::Greedy;
        for call in plan.branches.iter_mut().flat_map(|b| &mut b.calls) {
            call.share = Ticks::ZERO;
            call.share_ms = 0.0;
            call.fraction = 0.0;
        }
    }
    m
}

/// How a row's model differs from a reference row's.
#[derive(Clone, Copy, PartialEq)]
enum Difference {
    /// Not at all.
    None,
    /// In the plan of this service (by index) alone.
    Plan(usize),
    /// Elsewhere, or in several plans.
    More,
}

/// How each row's model differs from row `reference`'s, one model copy per row
/// (a copy per row and plan service made thousands of them quadratic).
fn differences(rows: &[crate::scenario::Row], reference: usize) -> Vec<Difference> {
    let base = &rows[reference].model;
    let neutral = without_policies(base);
    rows.iter()
        .map(|r| {
            if without_policies(&r.model) != neutral {
                return Difference::More;
            }
            // the same services in the same order: compare their plans
            let mut differ = base
                .services
                .iter()
                .zip(&r.model.services)
                .enumerate()
                .filter(|(_, (a, b))| a.handler.plan() != b.handler.plan())
                .map(|(s, _)| s);
            match (differ.next(), differ.next()) {
                (None, _) => Difference::None,
                (Some(s), None) => Difference::Plan(s),
                _ => Difference::More,
            }
        })
        .collect()
}

/// Each split policy's drops beyond greedy's, per plan service. The rows compared
/// are read from the models, whatever set the policy (a compare axis, a variant,
/// `--set`): for each plan service, the rows whose models differ from the first
/// row's (that has the service) in that service's policy alone; the first of them
/// with each policy, greedy as the reference.
fn false_drops(results: &Results) -> Option<Table> {
    let rows = &results.scenario.rows;
    // each row's split policy per plan service, looked up by name
    let policies: Vec<std::collections::HashMap<&str, Policy>> = rows
        .iter()
        .map(|r| {
            plans(&r.model)
                .into_iter()
                .map(|(name, p)| (name, p.policy))
                .collect()
        })
        .collect();
    let mut services: Vec<&str> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for row in rows {
        for (name, _) in plans(&row.model) {
            if seen.insert(name) {
                services.push(name);
            }
        }
    }
    let several = services.len() > 1;
    let mut headers = vec![
        "policy",
        "extra_drops",
        "requests",
        "extra_drop_pct",
        "extra_drop_rps",
    ];
    if several {
        headers.push("service");
    }
    let mut t = Table::new(
        "false_drops",
        "Requests a tight split drops on top of greedy's (false positives on a healthy day)",
        headers.into_iter().map(String::from).collect(),
    );
    // per reference row, how every row differs from it (computed once)
    let mut differ: std::collections::HashMap<usize, Vec<Difference>> = Default::default();
    for service in services {
        // a service whose policy no row changes has no twin with another policy
        let mut policy_in_rows = policies.iter().filter_map(|p| p.get(service));
        let first = policy_in_rows.next();
        if policy_in_rows.all(|p| Some(p) == first) {
            continue;
        }
        // the first row that has the service is the reference
        let Some(reference) = policies.iter().position(|p| p.contains_key(service)) else {
            continue;
        };
        let Some(index) = rows[reference]
            .model
            .services
            .iter()
            .position(|s| s.name == service)
        else {
            continue;
        };
        let differences = differ
            .entry(reference)
            .or_insert_with(|| differences(rows, reference));
        // (row, policy) of each row that differs from the reference in the policy only
        let twins: Vec<(usize, Policy)> = differences
            .iter()
            .enumerate()
            .filter(|(_, d)| matches!(d, Difference::None) || **d == Difference::Plan(index))
            .filter_map(|(i, _)| Some((i, *policies[i].get(service)?)))
            .collect();
        let Some(&(greedy, _)) = twins.iter().find(|(_, p)| *p == Policy::Greedy) else {
            continue;
        };
        for mut cells in extra_drops(results, &twins, greedy) {
            if several {
                cells.push(service.into());
            }
            t.push(cells);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// A row per split policy other than greedy's among `twins` (rows that differ
/// from greedy's row `greedy` in that policy only; the first of each policy):
/// the requests it drops on top of greedy's.
fn extra_drops(results: &Results, twins: &[(usize, Policy)], greedy: usize) -> Vec<Vec<Cell>> {
    let (rows, g) = (&results.scenario.rows, &results.runs[greedy]);
    let mut out = Vec::new();
    let mut done = vec![Policy::Greedy];
    for &(i, policy) in twins {
        if done.contains(&policy) {
            continue;
        }
        done.push(policy);
        let r = &results.runs[i];
        let extra = r.outcomes.dropped as i64 - g.outcomes.dropped as i64;
        let n = r.outcomes.requests.max(1) as f64;
        let rps = rows[i]
            .model
            .slo
            .peak_read_rps
            .map(|rps| rps * extra as f64 / n);
        out.push(vec![
            policy.name().into(),
            extra.into(),
            r.outcomes.requests.into(),
            (extra as f64 / n * 100.0).into(),
            rps.into(),
        ]);
    }
    out
}

fn error_budget(model: &Model) -> Option<Table> {
    let eb = model.analysis.error_budget.as_ref()?;
    let mut t = Table::new(
        "error_budget",
        &format!(
            "Share of the monthly error budget ({} min) an incident uses",
            crate::format::format_number(eb.budget_minutes)
        ),
        [
            "minutes",
            "per_month",
            "monthly_minutes",
            "share_of_budget_pct",
        ]
        .map(String::from)
        .to_vec(),
    );
    for &(minutes, per_month) in &eb.incidents {
        let monthly = minutes * per_month;
        t.push(vec![
            minutes.into(),
            per_month.into(),
            monthly.into(),
            (monthly / eb.budget_minutes * 100.0).into(),
        ]);
    }
    Some(t)
}
