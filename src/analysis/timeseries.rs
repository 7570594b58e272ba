//! Time series and recovery: per window, what the clients sent and got
//! (`timeseries`), what each service and dependency did (`timeseries_services`),
//! what each limiter passed and rejected (`timeseries_limiters`), what each call
//! site sent (`timeseries_calls`: first tries and attempts of every (caller,
//! target) pair, the workloads' and every service's, and its attempts per user
//! request: per first try of the workloads in the window), and, per fault,
//! whether and when goodput came back (`recovery`).
//!
//! The recovery rule (the contract's): `before_goodput_per_s` is the mean
//! goodput (answered requests per second, by end time) over the windows that
//! start at or after `scenario.warmup_ms` and end at or before the fault's start;
//! `recovered_at_ms` is the start of the first window starting at or after the
//! fault's end from which the mean goodput of the next `analysis.recovery_windows`
//! whole windows is at least `analysis.recovery_fraction` of before (empty if
//! never: `stuck = true`); `recovery_ms` = recovered_at_ms - the fault's end.
//! `min_goodput_per_s` is the lowest goodput of the windows from the one holding
//! the fault's start until recovery (the run's end when stuck).
//! `peak_amplification` is the largest attempts / first tries of any call site
//! in any window with first tries at that site: the worst site, at any depth
//! (a service retrying its store counts, where the clients' own attempts would
//! say 1). `peak_attempts_per_request` is the largest attempts at any site per
//! first try of the workloads in any window with first tries, and `peak_site`
//! names that site (`caller->target`; on a tie the earliest window, then the
//! first site in the table's order).
//!
//! Every figure looks only at the whole windows in which the workloads sent
//! ([`sending_end_ms`]): after the last send the run drains what is left,
//! goodput falls to nothing and a window's few first tries meet the retries
//! of many, so a drain window would read as a collapse or an amplification
//! that no client saw. `stuck` thus means not recovered while the workloads
//! still sent: a longer run gives the system longer to recover.

use super::Results;
use super::budget::ALL_WORKLOADS;
use crate::model::Model;
use crate::sim::timeseries::{CallWindow, TimeSeries, WindowStats};
use crate::table::{Cell, Table};

pub fn tables(results: &mut Results, out: &mut Vec<Table>) {
    if !results.runs.iter().any(|r| r.timeseries.is_some()) {
        return;
    }
    out.push(clients(results));
    out.push(services(results));
    if results.runs.iter().any(|r| {
        r.timeseries
            .as_ref()
            .is_some_and(|s| !s.replica_names.is_empty())
    }) {
        out.push(replicas(results));
    }
    if results.any(|m| !m.limiters.is_empty()) {
        out.push(limiters(results));
    }
    out.push(calls(results));
    if results.any(|m| !m.faults.is_empty()) {
        out.push(recovery(results));
    }
}

fn clients(results: &Results) -> Table {
    // with several workloads, one row per (window, workload) and one for them all
    let several = results.any(|m| m.workloads.len() > 1);
    let key: &[&str] = if several {
        &["window_start_ms", "workload"]
    } else {
        &["window_start_ms"]
    };
    let mut t = results.table(
        "timeseries",
        "Per window: first tries and attempts by send time, outcomes by end time (answered = goodput)",
        key,
        &[
            "first_tries",
            "attempts",
            "answered",
            "failed",
            "timed_out",
            "shed",
            "rejected",
            "p50_ms",
            "p99_ms",
            "width_ms",
        ],
    );
    t.printed = false;
    for (i, run) in results.runs.iter().enumerate() {
        let Some(s) = &run.timeseries else { continue };
        let model: &Model = &results.scenario.rows[i].model;
        for (k, all) in s.windows.iter().enumerate() {
            let from = k as f64 * s.window_ms;
            let start = Cell::Num(from);
            let width = Cell::Num(width_ms(from, s.window_ms, run.sim_time_ms));
            let mut row = |workload: Option<&str>, w: &WindowStats| {
                let mut cells = results.axis_cells(i);
                cells.push(start.clone());
                if let Some(name) = workload {
                    cells.push(name.into());
                }
                cells.extend(window_cells(w));
                cells.push(width.clone());
                t.push(cells);
            };
            if several {
                // a row with one workload keeps its books in the whole run's
                let own = &s.per_workload[k * s.workloads..(k + 1) * s.workloads];
                if own.is_empty() {
                    let name = model.workloads.first().map_or("main", |w| w.name.as_str());
                    row(Some(name), all);
                }
                for (named, w) in model.workloads.iter().zip(own) {
                    row(Some(named.name.as_str()), w);
                }
                row(Some(ALL_WORKLOADS), all);
            } else {
                row(None, all);
            }
        }
    }
    if several {
        t.notes.push(format!(
            "one row per window and workload (the workload's own requests: first tries and attempts by their send time, \
             outcomes by their end time), then `{ALL_WORKLOADS}` for every request of the window"
        ));
    }
    t
}

/// How much of the window starting at `from` the run lasted: `window_ms`, except
/// for the last window, which the run's last event (`end_ms`) cuts short. A rate
/// of the window is its count over this width.
pub fn width_ms(from: f64, window_ms: f64, end_ms: f64) -> f64 {
    (end_ms - from).clamp(0.0, window_ms)
}

/// A window's client-side figures, in column order.
fn window_cells(w: &WindowStats) -> [Cell; 9] {
    [
        w.first_tries.into(),
        w.attempts.into(),
        w.answered.into(),
        w.failed.into(),
        w.timed_out.into(),
        w.shed.into(),
        w.rejected.into(),
        w.p50_ms.into(),
        w.p99_ms.into(),
    ]
}

fn services(results: &Results) -> Table {
    let mut t = results.table(
        "timeseries_services",
        "Per window and service (servers, then dependencies): arrivals, work done, sheds, time-average queue and busy slots, work nobody waited for",
        &["window_start_ms", "service"],
        &[
            "arrivals",
            "processed",
            "shed",
            "mean_queue",
            "mean_busy",
            "wasted_ms",
        ],
    );
    t.printed = false;
    for (i, run) in results.runs.iter().enumerate() {
        let Some(s) = &run.timeseries else { continue };
        let n = s.names.len();
        for k in 0..s.windows.len() {
            for (j, name) in s.names.iter().enumerate() {
                let w = &s.services[k * n + j];
                let mut cells = results.axis_cells(i);
                cells.extend([
                    Cell::Num(k as f64 * s.window_ms),
                    name.as_str().into(),
                    w.arrivals.into(),
                    w.processed.into(),
                    w.shed.into(),
                    w.mean_queue.into(),
                    w.mean_busy.into(),
                    w.wasted_ms.into(),
                ]);
                t.push(cells);
            }
        }
    }
    t
}

/// Per window and replica of each server with replicas: the figures of
/// `timeseries_services` for one replica (no `wasted_ms`).
fn replicas(results: &Results) -> Table {
    let mut t = results.table(
        "timeseries_services_replicas",
        "Per window and replica of each replicated server and dependency: arrivals, requests processed, sheds, time-average queue and busy slots",
        &["window_start_ms", "service", "replica"],
        &["arrivals", "processed", "shed", "mean_queue", "mean_busy"],
    );
    t.printed = false;
    for (i, run) in results.runs.iter().enumerate() {
        let Some(s) = &run.timeseries else { continue };
        let n = s.replica_names.len();
        for k in 0..s.windows.len() {
            for (j, (name, replica)) in s.replica_names.iter().enumerate() {
                let w = &s.replicas[k * n + j];
                let mut cells = results.axis_cells(i);
                cells.extend([
                    Cell::Num(k as f64 * s.window_ms),
                    name.as_str().into(),
                    Cell::from(u64::from(*replica)),
                    w.arrivals.into(),
                    w.processed.into(),
                    w.shed.into(),
                    w.mean_queue.into(),
                    w.mean_busy.into(),
                ]);
                t.push(cells);
            }
        }
    }
    t
}

/// Per window and call site: first tries and attempts by send time, and the
/// site's attempts per first try of the workloads (a user request) in the
/// window.
fn calls(results: &Results) -> Table {
    let mut t = results.table(
        "timeseries_calls",
        "Per window and call site (caller -> target, every workload's and service's): first tries and attempts by send time, and attempts per user request",
        &["window_start_ms", "caller", "target"],
        &["first_tries", "attempts", "attempts_per_request"],
    );
    t.printed = false;
    for (i, run) in results.runs.iter().enumerate() {
        let Some(s) = &run.timeseries else { continue };
        let n = s.call_sites.len();
        for (k, window) in s.windows.iter().enumerate() {
            for (j, site) in s.call_sites.iter().enumerate() {
                let c = &s.calls[k * n + j];
                let mut cells = results.axis_cells(i);
                cells.extend([
                    Cell::Num(k as f64 * s.window_ms),
                    site.caller.as_str().into(),
                    site.target.as_str().into(),
                    c.first_tries.into(),
                    c.attempts.into(),
                    per_request(c, window).into(),
                ]);
                t.push(cells);
            }
        }
    }
    t.notes.push(
        "by send time, as calls.csv counts them: a first try when a call (or a workload's request) is made, refused ones \
         included; an attempt for every attempt sent (first ones, retries, hedged copies; a call without a policy is one); \
         attempts_per_request = attempts / the workloads' first tries in the window (empty without any): the load the \
         site carries per user request"
            .into(),
    );
    t
}

/// A call site's attempts in a window per first try of the workloads (a user
/// request) in it; None without first tries.
fn per_request(c: &CallWindow, window: &WindowStats) -> Option<f64> {
    (window.first_tries > 0).then(|| c.attempts as f64 / window.first_tries as f64)
}

/// The `key` of a limiter's own row in `timeseries_limiters` (all its keys).
pub const ALL_KEYS: &str = "all";

fn limiters(results: &Results) -> Table {
    let scoped = super::limiters::scoped(results);
    let key: &[&str] = if scoped {
        &["window_start_ms", "limiter", "replica", "key"]
    } else {
        &["window_start_ms", "limiter", "key"]
    };
    let mut t = results.table(
        "timeseries_limiters",
        "Per window and limiter: requests passed and rejected (by decision time), the limiter's own (key = all), then per bucket key, then per replica of a limiter kept per replica",
        key,
        &["passed", "rejected"],
    );
    t.printed = false;
    let mut overflow = Vec::new();
    for (i, run) in results.runs.iter().enumerate() {
        let Some(s) = &run.timeseries else { continue };
        let model: &Model = &results.scenario.rows[i].model;
        let at = |counts: &[[u64; 2]], k: usize| counts.get(k).copied().unwrap_or([0, 0]);
        for k in 0..s.windows.len() {
            for (limiter, l) in model.limiters.iter().zip(&run.limiters.limiters) {
                let Some(w) = &l.windows else { continue };
                if k == 0 && w.too_many_keys {
                    overflow.push(limiter.name.as_str());
                }
                let keys = (w.keys.iter()).map(|x| (Cell::Empty, x.key.as_str(), &x.counts[..]));
                let replicas = (w.replicas.iter().enumerate())
                    .map(|(r, counts)| (Cell::from((r + 1) as u64), ALL_KEYS, &counts[..]));
                let own = std::iter::once((Cell::Empty, ALL_KEYS, &w.total[..]));
                for (replica, key, counts) in own.chain(keys).chain(replicas) {
                    let [passed, rejected] = at(counts, k);
                    let mut cells = results.axis_cells(i);
                    cells.extend([
                        Cell::Num(k as f64 * s.window_ms),
                        limiter.name.as_str().into(),
                    ]);
                    if scoped {
                        cells.push(replica);
                    }
                    cells.extend([key.into(), passed.into(), rejected.into()]);
                    t.push(cells);
                }
            }
        }
    }
    if scoped {
        t.notes.push(
            "replica: a limiter kept per replica (scope = \"replica\") also has a row per replica and window (key = all), \
             numbered from 1 as NAME#K; empty on the limiter's own and per-key rows, which count every replica."
                .into(),
        );
    }
    overflow.dedup();
    if !overflow.is_empty() {
        t.notes.push(format!(
            "More than {} bucket keys: only the limiter's own rows for {}.",
            crate::model::series::KEYED_WINDOWS_MAX,
            overflow.join(", ")
        ));
    }
    t
}

/// One fault's recovery, as the rule in the module docs computes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    pub before_goodput_per_s: Option<f64>,
    pub min_goodput_per_s: Option<f64>,
    pub recovered_at_ms: Option<f64>,
    pub recovery_ms: Option<f64>,
    pub stuck: bool,
    pub peak_amplification: Option<f64>,
    pub peak_attempts_per_request: Option<f64>,
    /// The site of `peak_attempts_per_request`, "caller->target".
    pub peak_site: Option<String>,
}

/// The part of a run whose windows a recovery is judged on.
#[derive(Debug, Clone, Copy)]
pub struct Judged {
    /// `scenario.warmup_ms`: no window before it counts as `before`.
    pub warmup_ms: f64,
    /// The run's last event: a window it cuts short does not count.
    pub last_event_ms: f64,
    /// When the workloads stopped sending ([`sending_end_ms`]): the windows
    /// after it drain what was sent, and no figure looks at them.
    pub sending_end_ms: f64,
}

impl Judged {
    /// The end of the last window the figures read: the drain, and a window
    /// cut short, come after it.
    pub fn until_ms(&self, series: &TimeSeries) -> f64 {
        self.windows(series) as f64 * series.window_ms
    }

    /// The whole windows of `series` while the workloads sent: from 0 to this.
    fn windows(&self, series: &TimeSeries) -> usize {
        let w = series.window_ms;
        // a window ending within a microsecond of the end is whole
        let whole = |end_ms: f64| ((end_ms + 1e-3) / w).floor() as usize;
        (series.windows.len())
            .min(whole(self.last_event_ms))
            .min(whole(self.sending_end_ms))
    }
}

/// When the workloads of `model` stopped sending, in `series`: the latest of
/// each workload's end. A workload bounded by time alone (`duration_ms`, no
/// `requests`) ends at its start + duration; any other ends, as far as the
/// windows tell, at the start of the last window in which a request was first
/// sent (that window may be cut short by its last send, so it is left out).
pub fn sending_end_ms(model: &Model, series: &TimeSeries) -> f64 {
    use crate::model::Workload;
    let w = series.window_ms;
    let last_sends = (series.windows.iter()).rposition(|x| x.first_tries > 0);
    let measured = last_sends.map_or(0.0, |k| k as f64 * w);
    (model.workloads.iter())
        .map(|n| match n.workload {
            Workload::Open {
                duration: Some(d),
                requests: None,
                ..
            }
            | Workload::Closed {
                duration: Some(d),
                requests: None,
                ..
            } => (n.start + d).as_ms(),
            _ => measured,
        })
        .fold(0.0, f64::max)
}

/// The recovery from a fault over `[at_ms, end_ms)` in `series`, judged on
/// the whole windows of `judged`.
pub fn recovery_of(
    series: &TimeSeries,
    judged: Judged,
    at_ms: f64,
    end_ms: f64,
    windows: usize,
    fraction: f64,
) -> Recovery {
    let w = series.window_ms;
    let warmup_ms = judged.warmup_ms;
    let per_s = |k: usize| series.windows[k].answered as f64 * 1000.0 / w;
    // whole windows while the workloads sent: the last one may be cut short
    // by the run's end, and the drain after the sending has no goodput to judge
    let whole = judged.windows(series);
    let start = |k: usize| k as f64 * w;
    let before: Vec<f64> = (0..whole)
        .filter(|&k| start(k) >= warmup_ms && start(k) + w <= at_ms)
        .map(per_s)
        .collect();
    let before_goodput =
        (!before.is_empty()).then(|| before.iter().sum::<f64>() / before.len() as f64);
    let first_after = (end_ms / w).ceil() as usize;
    let recovered = before_goodput.and_then(|b| {
        (first_after..whole.saturating_sub(windows - 1)).find(|&k| {
            let mean = (k..k + windows).map(per_s).sum::<f64>() / windows as f64;
            mean >= fraction * b
        })
    });
    let fault_window = (at_ms / w).floor() as usize;
    let min_until = recovered.unwrap_or(whole);
    let min_goodput = (fault_window..min_until.min(whole))
        .map(per_s)
        .min_by(f64::total_cmp);
    let (peak, per_request) = peaks(series, whole);
    let recovered_at = recovered.map(start);
    Recovery {
        before_goodput_per_s: before_goodput,
        min_goodput_per_s: min_goodput,
        recovered_at_ms: recovered_at,
        recovery_ms: recovered_at.map(|r| r - end_ms),
        stuck: recovered.is_none(),
        peak_amplification: peak,
        peak_attempts_per_request: per_request.as_ref().map(|p| p.0),
        peak_site: per_request.map(|p| p.1),
    }
}

/// The largest attempts / first tries of any call site in any of the first
/// `whole` windows (with
/// first tries at the site), and the largest attempts per user request at any
/// site in any window (with first tries of the workloads), with that site
/// ("caller->target"; the first in time, then in site order, on a tie).
fn peaks(series: &TimeSeries, whole: usize) -> (Option<f64>, Option<(f64, String)>) {
    let n = series.call_sites.len();
    let mut amplification: Option<f64> = None;
    let mut peak: Option<(f64, usize)> = None;
    for (k, window) in series.windows.iter().enumerate().take(whole) {
        for (j, c) in series.calls[k * n..(k + 1) * n].iter().enumerate() {
            if c.first_tries > 0 {
                let a = c.attempts as f64 / c.first_tries as f64;
                amplification = Some(amplification.map_or(a, |m| m.max(a)));
            }
            // strictly above: a tie keeps the first
            if let Some(r) = per_request(c, window)
                && peak.is_none_or(|(p, _)| r > p)
            {
                peak = Some((r, j));
            }
        }
    }
    let site = |j: usize| {
        let s = &series.call_sites[j];
        format!("{}->{}", s.caller, s.target)
    };
    (amplification, peak.map(|(r, j)| (r, site(j))))
}

fn recovery(results: &Results) -> Table {
    let mut t = results.table(
        "recovery",
        "Per fault: goodput before it, its lowest, and when it came back (analysis.recovery_windows windows at analysis.recovery_fraction of before)",
        &["fault"],
        &[
            "before_goodput_per_s",
            "min_goodput_per_s",
            "recovered_at_ms",
            "recovery_ms",
            "stuck",
            "peak_amplification",
            "peak_attempts_per_request",
            "peak_site",
            "judged_until_ms",
        ],
    );
    let mut idle = std::collections::BTreeSet::new();
    let mut pauses = std::collections::BTreeSet::new();
    let mut late = std::collections::BTreeSet::new();
    for (i, run) in results.runs.iter().enumerate() {
        let Some(s) = &run.timeseries else { continue };
        let model: &Model = &results.scenario.rows[i].model;
        for (f, fault) in model.faults.iter().enumerate() {
            // a fault that never acted (empty, or after the last request left,
            // as the warning says) has nothing to recover from: no verdict
            let acted = fault.until > fault.at && fault.at.as_ms() <= run.last_exit_ms;
            if !acted {
                idle.insert(f);
            }
            // recurring pauses are a condition, not an event to recover from
            let pause = fault.effect().pause().is_some();
            let acted = acted && !pause;
            if pause {
                pauses.insert(f);
            }
            let judged = Judged {
                warmup_ms: model.warmup.as_ms(),
                last_event_ms: run.sim_time_ms,
                sending_end_ms: sending_end_ms(model, s),
            };
            // a fault starting after the workloads stopped sending meets only
            // the drain: nothing to judge
            let sent = fault.at.as_ms() < judged.sending_end_ms;
            if acted && !sent {
                late.insert(f);
            }
            let r = recovery_of(
                s,
                judged,
                fault.at.as_ms(),
                fault.until.as_ms(),
                model.analysis.recovery_windows as usize,
                model.analysis.recovery_fraction,
            );
            let mut cells = results.axis_cells(i);
            let verdict = |c: Cell| if acted && sent { c } else { Cell::Empty };
            cells.extend([
                Cell::from(f as u64),
                r.before_goodput_per_s.into(),
                verdict(r.min_goodput_per_s.into()),
                verdict(r.recovered_at_ms.into()),
                verdict(r.recovery_ms.into()),
                verdict(r.stuck.into()),
                r.peak_amplification.into(),
                r.peak_attempts_per_request.into(),
                r.peak_site.as_deref().into(),
                Cell::Num(judged.until_ms(s)),
            ]);
            t.push(cells);
        }
    }
    t.notes.push(
        "before: mean goodput of the whole windows between scenario.warmup_ms and the fault's start; \
         recovered_at_ms: the first window starting at or after the fault's end from which the next \
         analysis.recovery_windows windows average at least analysis.recovery_fraction of before; \
         stuck: never, while the workloads still sent (a longer run gives it longer); \
         peak_amplification: the largest attempts / first tries of any call site \
         (timeseries_calls.csv) in any window; peak_attempts_per_request: the largest attempts at any call site per \
         first try of the workloads (a user request) in any window, at peak_site (caller->target). \
         Every figure reads only the whole windows in which the workloads sent, those before judged_until_ms: \
         the drain after the last send (and a window the run's end cuts short) is left out"
            .into(),
    );
    t.notes.extend(unjudged_notes(&late, &pauses, &idle));
    t
}

/// Why some faults have no verdict: those starting after the workloads stopped
/// sending (`late`), recurring pauses that acted, and those that never acted.
fn unjudged_notes(
    late: &std::collections::BTreeSet<usize>,
    pauses: &std::collections::BTreeSet<usize>,
    idle: &std::collections::BTreeSet<usize>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if !late.is_empty() {
        let late: Vec<String> = late.iter().map(|f| format!("faults.{f}")).collect();
        notes.push(format!(
            "{} {} after the workloads stopped sending: only the drain follows, so min_goodput_per_s, recovered_at_ms, recovery_ms and stuck are empty",
            late.join(", "),
            if late.len() == 1 { "starts" } else { "start" }
        ));
    }
    let pauses: Vec<String> = pauses
        .iter()
        .filter(|f| !idle.contains(*f))
        .map(|f| format!("faults.{f}"))
        .collect();
    if !pauses.is_empty() {
        notes.push(format!(
            "{} {} recurring pauses: a condition of the whole window, not an event to recover from, so min_goodput_per_s, recovered_at_ms, recovery_ms and stuck are empty",
            pauses.join(", "),
            if pauses.len() == 1 { "is" } else { "are" }
        ));
    }
    if !idle.is_empty() {
        let idle: Vec<String> = idle.iter().map(|f| format!("faults.{f}")).collect();
        notes.push(format!(
            "{} never acted (for_ms = 0, or a start after the run's last request left): nothing to recover from, so min_goodput_per_s, recovered_at_ms, recovery_ms and stuck are empty",
            idle.join(", ")
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run after `warmup_ms` until `last_event_ms`, sending all along.
    fn run(warmup_ms: f64, last_event_ms: f64) -> Judged {
        Judged {
            warmup_ms,
            last_event_ms,
            sending_end_ms: f64::INFINITY,
        }
    }

    /// The windows after the workloads stopped sending (the drain: goodput
    /// falls as the last requests end, retries outnumber first tries) count
    /// in no figure: the lowest goodput, the recovery and the peaks are
    /// those of the sending windows.
    #[test]
    fn the_drain_after_the_sending_counts_in_no_figure() {
        // sending until 8000; the drain's windows: 2 answered, then none
        let mut s = series(&[10, 10, 2, 0, 9, 10, 10, 10, 2, 0]);
        s.windows[9].first_tries = 0;
        s.windows[8].first_tries = 1;
        s.windows[8].attempts = 6;
        let sending = Judged {
            sending_end_ms: 8000.0,
            ..run(0.0, 10_000.0)
        };
        let r = recovery_of(&s, sending, 2000.0, 4000.0, 3, 0.9);
        assert_eq!(r.recovered_at_ms, Some(4000.0));
        assert_eq!(r.peak_attempts_per_request, Some(3.0), "not the drain's 6");
        // needing 3 windows after 7000, of which the workloads sent in 1:
        // stuck, its lowest that of the sending windows
        let r = recovery_of(&s, sending, 6000.0, 7000.0, 3, 0.9);
        assert!(r.stuck);
        assert_eq!(r.min_goodput_per_s, Some(10.0));
        // with the drain mixed in, the same run reads the drain's lowest and
        // its attempts over a single first try
        let all = recovery_of(&s, run(0.0, 10_000.0), 6000.0, 7000.0, 3, 0.9);
        assert!(all.stuck);
        assert_eq!(all.min_goodput_per_s, Some(0.0));
        assert!(all.peak_attempts_per_request > Some(3.0));
    }

    #[test]
    fn a_workload_bounded_by_time_ends_at_its_duration_others_where_they_last_sent() {
        let text = "[scenario]\nname = \"t\"\n[services.api]\nroutes = [\"/a\"]\n\
            [services.api.handler]\ntype = \"server\"\nslots = 1\nqueue = 5\nservice = { constant = 1 }\n\
            [workload]\ntype = \"open\"\nrate_rps = 10\nduration_ms = 4500\n";
        let load = |t: &str| {
            let s =
                crate::scenario::load_str(t, std::path::Path::new("t.toml"), &Default::default());
            s.unwrap_or_else(|e| panic!("{e}")).rows[0].model.clone()
        };
        let mut s = series(&[10, 10, 10, 10, 10, 10, 0]);
        s.windows[6].first_tries = 0;
        assert_eq!(sending_end_ms(&load(text), &s), 4500.0);
        let counted = text.replace("duration_ms = 4500", "requests = 45");
        // the last window with first tries is window 5 (each has 10): it starts at 5000
        assert_eq!(sending_end_ms(&load(&counted), &s), 5000.0);
    }

    fn site(caller: &str, target: &str) -> crate::sim::timeseries::CallSiteName {
        crate::sim::timeseries::CallSiteName {
            caller: caller.into(),
            target: target.into(),
        }
    }

    /// Windows with `answered` each and 10 requests sent: the clients retry a
    /// little (`answered % 3` attempts more), and the service they call
    /// retries its store twice more for every call in a window with nothing
    /// answered.
    fn series(answered: &[u64]) -> TimeSeries {
        let calls = answered.iter().flat_map(|&a| {
            let attempts = 10 + a % 3;
            let store = if a == 0 { 3 * attempts } else { attempts };
            [
                CallWindow {
                    first_tries: 10,
                    attempts,
                },
                CallWindow {
                    first_tries: attempts,
                    attempts: store,
                },
            ]
        });
        TimeSeries {
            window_ms: 1000.0,
            windows: answered
                .iter()
                .map(|&a| WindowStats {
                    answered: a,
                    first_tries: 10,
                    attempts: 10 + a % 3,
                    ..WindowStats::default()
                })
                .collect(),
            call_sites: vec![site("main", "api"), site("api", "store")],
            calls: calls.collect(),
            ..TimeSeries::default()
        }
    }

    /// The peaks are the worst call site's in the worst window: the store's
    /// three attempts per call where nothing was answered, not the clients'
    /// 1.2, and per request the store's 3 per first try of the clients.
    #[test]
    fn the_peaks_are_the_worst_call_sites_and_name_it() {
        let s = series(&[10, 10, 2, 0, 5, 8]);
        let r = recovery_of(&s, run(0.0, 6000.0), 2000.0, 4000.0, 1, 0.9);
        assert_eq!(r.peak_amplification, Some(3.0));
        assert_eq!(r.peak_attempts_per_request, Some(3.0));
        assert_eq!(r.peak_site.as_deref(), Some("api->store"));
        // without the deeper site: the clients' own 12 attempts per 10 (the
        // window with 2 answered, the first of the two at 1.2)
        let mut s = series(&[10, 10, 2, 0, 5, 8]);
        s.call_sites.truncate(1);
        s.calls = s.calls.iter().step_by(2).copied().collect();
        let r = recovery_of(&s, run(0.0, 6000.0), 2000.0, 4000.0, 1, 0.9);
        assert_eq!(r.peak_amplification, Some(1.2));
        assert_eq!(r.peak_attempts_per_request, Some(1.2));
        assert_eq!(r.peak_site.as_deref(), Some("main->api"));
        // a window without first tries has no ratio: none at all here
        for w in &mut s.windows {
            w.first_tries = 0;
        }
        for c in &mut s.calls {
            c.first_tries = 0;
        }
        let r = recovery_of(&s, run(0.0, 6000.0), 2000.0, 4000.0, 1, 0.9);
        assert_eq!(r.peak_amplification, None);
        assert_eq!((r.peak_attempts_per_request, r.peak_site), (None, None));
    }

    #[test]
    fn recovery_is_the_first_window_after_the_end_whose_next_windows_reach_the_fraction() {
        // before: 10/s; fault 2000-4000; windows 4.. : 5, 8, 9, 10, 10, 10
        let s = series(&[10, 10, 2, 0, 5, 8, 9, 10, 10, 10]);
        // 3 windows at 0.9: from 4: (5+8+9)/3 = 7.3 no; 5: 9 yes -> 5000
        let r = recovery_of(&s, run(0.0, 10_000.0), 2000.0, 4000.0, 3, 0.9);
        assert_eq!(r.before_goodput_per_s, Some(10.0));
        assert_eq!(r.recovered_at_ms, Some(5000.0));
        assert_eq!(r.recovery_ms, Some(1000.0));
        assert!(!r.stuck);
        assert_eq!(r.min_goodput_per_s, Some(0.0));
        assert_eq!(r.peak_amplification, Some(3.0));
        // a fraction of 1 needs three whole windows of 10: from 7
        let r = recovery_of(&s, run(0.0, 10_000.0), 2000.0, 4000.0, 3, 1.0);
        assert_eq!(r.recovered_at_ms, Some(7000.0));
        // a fault ending mid-window: the first window starting at or after its end
        let r = recovery_of(&s, run(0.0, 10_000.0), 2000.0, 4500.0, 1, 0.5);
        assert_eq!(r.recovered_at_ms, Some(5000.0));
        assert_eq!(r.recovery_ms, Some(500.0));
    }

    #[test]
    fn a_run_that_ends_before_enough_windows_recover_is_stuck() {
        let s = series(&[10, 10, 0, 0, 9, 10]);
        // 5 windows needed after 4000, the run has 2
        let r = recovery_of(&s, run(0.0, 6000.0), 2000.0, 4000.0, 5, 0.9);
        assert!(r.stuck);
        assert_eq!((r.recovered_at_ms, r.recovery_ms), (None, None));
        // the warm-up leaves windows out of before: only window 1 counts
        let s = series(&[2, 10, 0, 0, 9, 10]);
        let r = recovery_of(&s, run(1000.0, 6000.0), 2000.0, 4000.0, 2, 0.9);
        assert_eq!(r.before_goodput_per_s, Some(10.0));
        assert_eq!(r.recovered_at_ms, Some(4000.0));
        // a partial last window is not a whole window
        let r = recovery_of(&s, run(1000.0, 5500.0), 2000.0, 4000.0, 2, 0.9);
        assert!(r.stuck);
    }
}
