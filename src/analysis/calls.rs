//! Client policies: per (caller, target, call_policy), the calls made, the
//! attempts they took and how each ended, the calls refused before any attempt,
//! and the amplification (attempts per first try) the policies caused.

use super::Results;
use crate::table::{Cell, Table};

/// The table's figures, in column order after the key columns.
pub const COLUMNS: [&str; 15] = [
    "first_tries",
    "attempts",
    "retries",
    "hedges",
    "ok",
    "error",
    "timeout",
    "shed",
    "rejected",
    "cancelled",
    "budget_refused",
    "breaker_refused",
    "throttled",
    "breaker_opened",
    "amplification",
];

pub fn tables(results: &mut Results, out: &mut Vec<Table>) {
    if !results.any(|m| !m.policies.is_empty()) {
        return;
    }
    // several workloads: a `workload` key column (a client's row is its own
    // workload's; a service's calls are split by the workload they serve)
    let split = results
        .runs
        .iter()
        .any(|r| r.calls.iter().any(|c| !c.workload.is_empty()));
    // `call_policy` tells rows apart (a key, in their metric names) only when
    // one run calls a target from one caller through two policies: otherwise a
    // compare axis over the policy would give each row metrics of other names,
    // which no summary or paired difference could set side by side
    let two_policies = results.runs.iter().any(|r| {
        let mut sites: Vec<(&str, &str, &str)> = r
            .calls
            .iter()
            .map(|c| (c.caller.as_str(), c.workload.as_str(), c.target.as_str()))
            .collect();
        let n = sites.len();
        sites.sort_unstable();
        sites.dedup();
        sites.len() < n
    });
    let mut keys = vec!["caller"];
    if split {
        keys.push("workload");
    }
    keys.push("target");
    let mut rest = Vec::new();
    if two_policies {
        keys.push("call_policy");
    } else {
        rest.push("call_policy");
    }
    rest.extend(COLUMNS);
    let mut t = results.table(
        "calls",
        "Client policies: calls, attempts by outcome, refusals and amplification",
        &keys,
        &rest,
    );
    for i in 0..results.runs.len() {
        let axis = results.axis_cells(i);
        for c in &results.runs[i].calls {
            let mut cells = axis.clone();
            let amplification =
                (c.first_tries > 0).then(|| c.attempts as f64 / c.first_tries as f64);
            cells.push(Cell::from(c.caller.as_str()));
            if split {
                cells.push(c.workload.as_str().into());
            }
            cells.extend([
                c.target.as_str().into(),
                c.call_policy.as_str().into(),
                c.first_tries.into(),
                c.attempts.into(),
                c.retries.into(),
                c.hedges.into(),
                c.ok.into(),
                c.error.into(),
                c.timeout.into(),
                c.shed.into(),
                c.rejected.into(),
                c.cancelled.into(),
                c.budget_refused.into(),
                c.breaker_refused.into(),
                c.throttled.into(),
                c.breaker_opened.into(),
                amplification.into(),
            ]);
            t.push(cells);
        }
    }
    t.notes.push(
        "first_tries: calls made (refused ones included); attempts = first_tries + retries + hedges - breaker_refused - throttled, \
         counted by how each ended (ok, error, timeout, shed, rejected, cancelled: hedge losers and attempts given up from above); \
         budget_refused: retries the retry budget refused (each ended its call with its last failure); \
         amplification = attempts / first_tries. A workload's clients are summed into one row (the caller is the workload's name)."
            .into(),
    );
    if split {
        t.notes.push(
            "workload: the workload whose requests made the calls (a service's calls are split by the workload of the request \
             they serve; its breaker and budget are shared, so breaker_opened repeats the state's openings on each of its rows)."
                .into(),
        );
    }
    out.push(t);
}
