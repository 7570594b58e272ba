//! The run's limits (`[scenario]`'s `max_*` keys, the time series' and the
//! request tracer's row limits): the bounds the run loop derives from the model
//! before it starts, and the message of each limit a run passes, naming the key
//! to raise and what in the model likely caused it. The loop checks; this file
//! says. Every message here is cold: it ends the run.

use crate::engine::Ticks;
use crate::error::Error;
use crate::model::Model;

use super::timeseries::{DEFAULT_WINDOW_MS, MAX_SERIES_ROWS};

/// How often the run checks the work it holds (`World::check_held`): every
/// `mask + 1` events, a power of two. One event starts at most one call per
/// branch of a plan, so a plan of B branches checks every 1024 / B events:
/// whatever the fan-out, the calls held stay within about 1024 of the limit
/// plus one event's calls (10,000 branches held 10 million calls, 2.2 GB,
/// between two checks every 1024 events).
pub(super) fn held_check_mask(model: &Model) -> u64 {
    let fan_out = model
        .services
        .iter()
        .filter_map(|s| s.handler.plan())
        .map(|p| p.branches.len() as u64)
        .max()
        .unwrap_or(1)
        .max(1);
    (1024 / fan_out).max(1).next_power_of_two() - 1
}

/// The latest time the outlier detectors may reach before one counts its
/// picks (per sweep interval and replica) in more than [`MAX_SERIES_ROWS`]
/// cells, and the key path of that detector's `outlier_detection`
/// (`Ticks::MAX` without one): a 1 ms sweep over a day would hold gigabytes of
/// counts.
pub(super) fn outlier_end(model: &Model) -> (Ticks, String) {
    let services = model.services.iter().map(|s| {
        let key = format!("services.{}.outlier_detection", s.name);
        (s.balance.outlier.as_ref(), s.replicas, key)
    });
    let dependencies = model.dependencies.iter().map(|d| {
        let key = format!("dependencies.{}.outlier_detection", d.name);
        (d.balance.outlier.as_ref(), d.replicas, key)
    });
    services
        .chain(dependencies)
        .filter_map(|(o, replicas, key)| {
            let o = o?;
            let intervals = MAX_SERIES_ROWS / u64::from(replicas.max(1));
            Some((Ticks(o.interval.0.saturating_mul(intervals)), key))
        })
        .min_by_key(|(t, _)| *t)
        .unwrap_or((Ticks(u64::MAX), String::new()))
}

/// The run passed `max_sim_time_ms`.
#[cold]
pub(super) fn sim_time(model: &Model) -> Error {
    Error::Limit(format!(
        "scenario `{}`: the run passed scenario.max_sim_time_ms = {} (raise it in [scenario] if the run is meant to be this long)",
        model.name,
        model.limits.max_sim_time.as_ms()
    ))
}

/// The run passed `max_events`.
#[cold]
pub(super) fn events(model: &Model) -> Error {
    Error::Limit(format!(
        "scenario `{}`: the run passed scenario.max_events = {} (raise it in [scenario] if the run is meant to be this long)",
        model.name, model.limits.max_events
    ))
}

/// More requests in flight at once than `max_in_flight`.
#[cold]
pub(super) fn in_flight(model: &Model) -> Error {
    Error::Limit(format!(
        "scenario `{}`: more than scenario.max_in_flight = {} requests in flight at once (raise it in [scenario] if the system is meant to hold this many)",
        model.name, model.limits.max_in_flight
    ))
}

/// An outlier detector would count its picks in more sweep intervals x
/// replicas than [`MAX_SERIES_ROWS`]: `key` is the key path of its
/// `outlier_detection`.
#[cold]
pub(super) fn outlier(model: &Model, key: &str) -> Error {
    Error::Limit(format!(
        "scenario `{}`: {key}: the run passed {MAX_SERIES_ROWS} sweep intervals x replicas, the most a detector counts its picks in (timeseries_replicas.csv): raise {key}.interval_ms or shorten the run",
        model.name,
    ))
}

/// The time series would pass its row limit.
#[cold]
pub(super) fn series(model: &Model) -> Error {
    let max = model.limits.max_series_rows;
    let share = if max < MAX_SERIES_ROWS {
        format!(" (its share of the {MAX_SERIES_ROWS} the compare rows may write together)")
    } else {
        String::new()
    };
    Error::Limit(format!(
        "scenario `{}`: the time series would write more than {max} rows{share} (timeseries.csv, timeseries_services.csv, timeseries_limiters.csv and timeseries_calls.csv): raise output.window_ms (faults without it use {DEFAULT_WINDOW_MS} ms windows)",
        model.name,
    ))
}

/// Limiter `limiter`'s peak tracker keeps every pass within its window: `n`
/// passes, more than `max_in_flight`.
#[cold]
pub(super) fn window_log(model: &Model, limiter: usize, n: u64) -> Error {
    Error::Limit(format!(
        "scenario `{}`: limiter `{}` let more than scenario.max_in_flight = {} requests through within one window_ms ({n}), each kept to measure its peak (raise max_in_flight in [scenario] or shorten the window)",
        model.name, model.limiters[limiter].name, model.limits.max_in_flight
    ))
}

/// More than `max_in_flight` requests held at once (`n`), those their caller
/// gave up on but a dependency or server still holds included.
#[cold]
pub(super) fn held_requests(model: &Model, n: u64) -> Error {
    Error::Limit(format!(
        "scenario `{}`: more than scenario.max_in_flight = {} requests held at once ({n}), those their caller gave up on but a dependency or server still holds included (raise it in [scenario], add slots, or set cancellation = true)",
        model.name, model.limits.max_in_flight
    ))
}

/// More than `max_in_flight` calls open at once (`calls`): those their callers
/// still wait for (`awaited`; a plan's branches each hold one) and those given
/// up on but still held.
#[cold]
pub(super) fn held_calls(model: &Model, calls: u64, awaited: u64) -> Error {
    let given_up = calls.saturating_sub(awaited);
    let fix = if given_up > awaited {
        "raise it in [scenario], add slots, or set cancellation = true"
    } else {
        "raise it in [scenario] if the system is meant to hold this many, or make fewer calls at once: each branch of a plan holds one"
    };
    Error::Limit(format!(
        "scenario `{}`: more than scenario.max_in_flight = {} calls open at once ({calls}: {awaited} awaited by their callers, {given_up} given up on but still held by a dependency or server) ({fix})",
        model.name, model.limits.max_in_flight
    ))
}

/// The traced requests made far more spans than the row may hold (`max`).
#[cold]
pub(super) fn trace_overrun(model: &Model, max: u64) -> Error {
    Error::Limit(format!(
        "scenario `{}`: --trace: the traced requests made more than twice the {max} spans and instants this compare row's trace may hold ({} for trace.json, shared by the compare rows): trace fewer requests",
        model.name,
        super::trace::MAX_TRACE_EVENTS
    ))
}

/// The system refused the memory the run's `what` needed, with `requests`
/// and `calls` held.
#[cold]
pub(super) fn out_of_memory(model: &Model, what: &str, requests: u64, calls: u64) -> Error {
    Error::Limit(format!(
        "scenario `{}`: out of memory: the system refused the memory the run's {what} needed to grow, with {requests} requests and {calls} calls held; lower scenario.max_in_flight (now {}) so that the run stops on it first, or give resim more memory",
        model.name, model.limits.max_in_flight
    ))
}

/// More than `max_events_per_instant` events (`events`) at instant `now`: the
/// run loops without its clock moving. Names what in the model can do that.
#[cold]
pub(super) fn standing_still(model: &Model, now: Ticks, events: u64) -> Error {
    let mut causes: Vec<String> = model
        .policies
        .iter()
        .filter_map(|p| Some((p, p.retry.as_ref()?)))
        .filter_map(|(p, r)| {
            let at_once = at_once_outcomes(r.on);
            let retries_at_once = r.backoff.kind == crate::model::BackoffKind::None
                && r.max_attempts > 1
                && !at_once.is_empty();
            retries_at_once.then(|| {
                format!(
                    "policy `{}` retries at once (backoff none, max_attempts = {}) on {}, answers that can come at once",
                    p.name,
                    r.max_attempts,
                    at_once.join(", ")
                )
            })
        })
        .collect();
    for w in &model.workloads {
        if let crate::model::Workload::Closed { think, .. } = &w.workload
            && think.can_be_zero()
        {
            causes.push(format!(
                "the users of workload `{}` can think 0 ms: a request that ends at once (a 429, a 503, zero service time) is sent again at the same instant",
                w.name
            ));
        }
    }
    if causes.is_empty() {
        causes.push("zero-time work in a loop (service times and latencies of 0)".into());
    }
    Error::Limit(format!(
        "scenario `{}`: the run passed scenario.max_events_per_instant = {} ({events} events at {} ms without the clock moving): it loops in zero time; likely: {} (raise max_events_per_instant in [scenario] if so many events at one instant are meant)",
        model.name,
        model.limits.max_events_per_instant,
        crate::format::format_number(now.as_ms()),
        causes.join("; ")
    ))
}

/// The names of the outcomes in the retry set `on` that can come at once
/// (rejected, shed, error): a retry on them with no backoff can loop in zero
/// time.
fn at_once_outcomes(on: crate::model::OutcomeSet) -> Vec<&'static str> {
    use crate::model::AttemptOutcome;
    [
        AttemptOutcome::Rejected,
        AttemptOutcome::Shed,
        AttemptOutcome::Error,
    ]
    .into_iter()
    .filter(|o| on & o.bit() != 0)
    .filter_map(|o| {
        AttemptOutcome::NAMES
            .iter()
            .find(|(_, x)| *x == o)
            .map(|(n, _)| *n)
    })
    .collect()
}
