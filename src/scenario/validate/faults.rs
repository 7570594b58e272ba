//! `[[faults]]` (what changes, on what, over which window), `scenario.warmup_ms`
//! and `[output] window_ms`.
//!
//! A fault's target is a server (`"backend"`: every replica; `"backend#2"`: the
//! second, 1-based), a dependency, or an open workload (`[workloads.NAME]`'s
//! NAME; `main` for `[workload]`) for `arrival_factor`. Its window is `[at_ms, at_ms + for_ms)`.

use super::*;
use crate::kinds::fault::{Effect, Entry, On};

/// `[[faults]]`, in file order.
pub(super) fn faults(
    raw: &RawScenario,
    ctx: &Ctx,
    services: &[Service],
    workloads: &[NamedWorkload],
    limits: &RunLimits,
) -> R<Vec<Fault>> {
    raw.faults
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let path = format!("faults.{i}");
            let fault = fault(&path, f, ctx, services, workloads)?;
            check_stretch(&path, &fault, ctx, services, limits)?;
            Ok(fault)
        })
        .collect()
}

fn fault(
    path: &str,
    f: &RawFault,
    ctx: &Ctx,
    services: &[Service],
    workloads: &[NamedWorkload],
) -> R<Fault> {
    let entry = Entry::read(path, &f.0)?;
    let at_path = format!("{path}.at_ms");
    let for_path = format!("{path}.for_ms");
    let at = ticks(&at_path, entry.at_ms)?;
    if at.as_ms() >= DEFAULT_RANGE_MS {
        return err(
            at_path,
            format!(
                "the fault starts at {} ms, beyond the virtual clock's range (about 290 years)",
                num(entry.at_ms)
            ),
        );
    }
    let until = at + ticks(&for_path, entry.for_ms)?;
    if until.as_ms() >= DEFAULT_RANGE_MS {
        return Err(ScenarioError::new(
            for_path,
            format!(
                "the fault's end (at_ms + for_ms = {} ms) is beyond the virtual clock's range (about 290 years)",
                num(entry.at_ms + entry.for_ms)
            ),
        )
        .related(at_path));
    }
    let target_path = format!("{path}.target");
    let Some(name) = crate::kinds::keys::text(path, &f.0, "target")? else {
        return err(
            path,
            "missing `target`: the server, dependency (`NAME#i`: one replica) or workload the fault acts on",
        );
    };
    let target = target(&target_path, entry.kind, name, ctx, services, workloads)?;
    if let FaultTarget::Workload(w) = target
        && !matches!(workloads[w].workload, Workload::Open { .. })
    {
        return err(
            format!("{path}.kind"),
            format!(
                "`{}` changes an open workload's rate: workload `{}` is not `open`",
                entry.kind.name(),
                workloads[w].name
            ),
        );
    }
    Ok(Fault {
        kind: entry.kind,
        target,
        at,
        until,
    })
}

/// The up-front event check of an open workload (each arrival costs at least one
/// event: `workload::check_event_budget`) with its `arrival_factor` faults
/// counted: over a fault's window the workload sends `value` times its rate
/// (overlapping faults multiply). A workload bounded by `requests` is bounded
/// already; one bounded by `duration_ms` alone sends about the rate times the
/// integral of the factor over its duration. (A factor of 10^9 passed the check
/// and ran for 90 s until it reached max_events.)
pub(super) fn check_arrival_budget(
    faults: &[Fault],
    workloads: &[NamedWorkload],
    limits: &RunLimits,
) -> R<()> {
    for (w, named) in workloads.iter().enumerate() {
        let Workload::Open {
            rate_rps,
            requests: None,
            duration: Some(duration),
            ..
        } = &named.workload
        else {
            continue;
        };
        let (start, end) = (named.start, named.start + *duration);
        // the factor's changes over the workload's time: (time, ln of the change)
        let mut changes: Vec<(Ticks, f64)> = Vec::new();
        let mut largest: Option<(usize, f64)> = None;
        for (i, f) in faults.iter().enumerate() {
            let Effect::ArrivalFactor(factor) = f.effect() else {
                continue;
            };
            if f.target != FaultTarget::Workload(w) {
                continue;
            }
            let (from, to) = (f.at.max(start), f.until.min(end));
            if from >= to {
                continue;
            }
            changes.push((from, factor.ln()));
            changes.push((to, -factor.ln()));
            if largest.is_none_or(|(_, v)| factor > v) {
                largest = Some((i, factor));
            }
        }
        let Some((i, value)) = largest else {
            continue;
        };
        changes.sort_by_key(|c| c.0);
        let (mut ln_factor, mut at, mut seconds) = (0.0f64, start, 0.0f64);
        for (t, change) in changes {
            seconds += (t - at).as_ms() / 1000.0 * ln_factor.exp();
            (ln_factor, at) = (ln_factor + change, t);
        }
        seconds += (end - at).as_ms() / 1000.0 * ln_factor.exp();
        let arrivals = rate_rps * seconds;
        if arrivals > limits.max_events as f64 {
            let p = if named.stream == "workload" {
                "workload".to_string()
            } else {
                format!("workloads.{}", named.name)
            };
            return err(
                format!("faults.{i}.value"),
                format!(
                    "an arrival_factor of {} makes {p} send about {arrivals:.0} requests over its duration_ms, each at least one event: more than scenario.max_events = {} (raise max_events in [scenario] if the run is meant to be this long)",
                    crate::format::format_number(value),
                    limits.max_events
                ),
            );
        }
    }
    Ok(())
}

/// Far beyond any run (about 290 years): a fault's end must fit the clock.
const DEFAULT_RANGE_MS: f64 = 9.0e12;

/// The mean time of the work a `latency_factor` fault stretches: a server's
/// service time or a dependency's latency.
fn stretched_mean(
    fault: &Fault,
    dependencies: &[crate::model::Dependency],
    services: &[Service],
) -> Option<(String, f64)> {
    match fault.target {
        FaultTarget::Server { service, .. } => match &services[service].handler {
            Handler::Server(s) => Some((
                format!("`{}`'s mean service time", services[service].name),
                s.service.mean_ms(),
            )),
            _ => None,
        },
        FaultTarget::Dependency { dep, .. } => Some((
            format!("`{}`'s mean latency", dependencies[dep].name),
            dependencies[dep].latency.mean_ms(),
        )),
        FaultTarget::Workload(_) => None,
    }
}

/// A `latency_factor` so large that the work it slows would take longer than the
/// run may last (`scenario.max_sim_time_ms`) on average could only stop the run
/// on that limit: refused here, at the factor, instead of after the run.
fn check_stretch(
    path: &str,
    fault: &Fault,
    ctx: &Ctx,
    services: &[Service],
    limits: &RunLimits,
) -> R<()> {
    let (Effect::LatencyFactor(value) | Effect::LatencyAdd(value)) = fault.effect() else {
        return Ok(());
    };
    let Some((what, mean)) = stretched_mean(fault, &ctx.dependencies, services) else {
        return Ok(());
    };
    if let Effect::LatencyAdd(_) = fault.effect() {
        let max = limits.max_sim_time.as_ms();
        if mean + value > max {
            return Err(ScenarioError::new(
                format!("{path}.value"),
                format!(
                    "a latency_add of {} ms makes {what} ({} ms) longer than the run may last (scenario.max_sim_time_ms = {}): work it slows could never finish",
                    num(value),
                    crate::format::format_number(mean),
                    crate::format::format_number(max),
                ),
            )
            .related("scenario.max_sim_time_ms"));
        }
        return Ok(());
    }
    let stretched = mean * value;
    let max = limits.max_sim_time.as_ms();
    if stretched > max {
        return Err(ScenarioError::new(
            format!("{path}.value"),
            format!(
                "a latency_factor of {} stretches {what} ({} ms) to {} ms, longer than the run may last (scenario.max_sim_time_ms = {}): work it slows could never finish (use a smaller factor; `down` makes every call fail)",
                num(value),
                crate::format::format_number(mean),
                num(stretched),
                crate::format::format_number(max),
            ),
        )
        .related("scenario.max_sim_time_ms"));
    }
    Ok(())
}

/// Resolves `name` for a fault of `kind`.
fn target(
    path: &str,
    kind: FaultKind,
    name: &str,
    ctx: &Ctx,
    services: &[Service],
    workloads: &[NamedWorkload],
) -> R<FaultTarget> {
    if kind.on() == On::Workload {
        if let Some(w) = workloads.iter().position(|w| w.name == name) {
            return Ok(FaultTarget::Workload(w));
        }
        let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
        return err(
            path,
            format!(
                "`{}` targets a workload: no workload named `{name}` (defined: {}; `[workload]` is `main`){}",
                kind.name(),
                list(names.iter().copied()),
                did_you_mean(name, names.iter().copied())
            ),
        );
    }
    let (base, replica) = match name.rsplit_once('#') {
        Some((base, i)) => (base, Some(i)),
        None => (name, None),
    };
    if let Some(s) = ctx.service_names.get(base) {
        let svc = &services[s];
        if !matches!(svc.handler, Handler::Server(_)) {
            return err(
                path,
                format!(
                    "`{base}` is not a server: faults act on servers (services with a `server` handler), dependencies and (arrival_factor) the workload"
                ),
            );
        }
        let replica = match replica {
            None => None,
            Some(i) => {
                let n = svc.replicas;
                match i.parse::<u32>() {
                    Ok(k) if (1..=n).contains(&k) => Some(k - 1),
                    _ => {
                        return err(
                            path,
                            format!(
                                "replica `{i}` of `{base}` is out of range: replicas are numbered 1 to {n} (`{base}#1` .. `{base}#{n}`)"
                            ),
                        );
                    }
                }
            }
        };
        return Ok(FaultTarget::Server {
            service: s,
            replica,
        });
    }
    if let Some(dep) = ctx.dependency_names.get(name) {
        return Ok(FaultTarget::Dependency { dep, replica: None });
    }
    if let (Some(dep), Some(i)) = (ctx.dependency_names.get(base), replica) {
        let n = ctx.dependencies[dep].replicas;
        return match i.parse::<u32>() {
            Ok(k) if (1..=n).contains(&k) => Ok(FaultTarget::Dependency {
                dep,
                replica: Some(k - 1),
            }),
            _ => err(
                path,
                format!(
                    "replica `{i}` of dependency `{base}` is out of range: replicas are numbered 1 to {n} (`{base}#1` .. `{base}#{n}`; `{base}` alone is every replica)"
                ),
            ),
        };
    }
    let servers: Vec<&str> = services
        .iter()
        .filter(|s| matches!(s.handler, Handler::Server(_)))
        .map(|s| s.name.as_str())
        .collect();
    let deps = ctx.dependency_names.all();
    let known: Vec<&str> = servers.iter().chain(deps).copied().collect();
    err(
        path,
        format!(
            "no server or dependency named `{name}` ({}){}",
            if known.is_empty() {
                "none is defined".to_string()
            } else {
                format!("defined: {}", list(known.iter().copied()))
            },
            did_you_mean(name, known.iter().copied())
        ),
    )
}

/// `scenario.warmup_ms` and `[output] window_ms`. The run goes on at least until
/// the warm-up ends, so a warm-up past `scenario.max_sim_time_ms` is refused.
pub(super) fn time(raw: &RawScenario, limits: &RunLimits) -> R<(Ticks, Option<Ticks>)> {
    let key = "scenario.warmup_ms";
    let warmup = match raw.scenario.warmup_ms {
        Some(ms) => ticks(key, non_negative(key, ms)?)?,
        None => Ticks::ZERO,
    };
    if warmup > limits.max_sim_time {
        return Err(ScenarioError::new(
            key,
            format!(
                "the warm-up ends at {} ms, after scenario.max_sim_time_ms = {}: the run would stop on that limit before measuring anything",
                crate::format::format_number(warmup.as_ms()),
                crate::format::format_number(limits.max_sim_time.as_ms())
            ),
        )
        .related("scenario.max_sim_time_ms"));
    }
    let window = raw
        .output
        .as_ref()
        .and_then(|o| o.window_ms)
        .map(|ms| positive_ticks("output.window_ms", ms))
        .transpose()?;
    Ok((warmup, window))
}

/// A warm-up that ends after every workload certainly stopped sending leaves
/// no request to count: every outcome figure would be 0 (the run exited 0 with
/// all-zero outcomes). Refused when each workload's end is known up front (its
/// `duration_ms`, or evenly spaced `requests`); otherwise the run fails when
/// it sent nothing at or after the warm-up (`sim::run_with`).
pub(super) fn check_warmup(warmup: Ticks, workloads: &[NamedWorkload]) -> R<()> {
    if warmup == Ticks::ZERO {
        return Ok(());
    }
    // the end of the sending (no send at or after it), and the time shown
    let (mut last, mut shown) = (Ticks::ZERO, Ticks::ZERO);
    for w in workloads {
        let (end, by) = match &w.workload {
            Workload::Open {
                duration: Some(d), ..
            }
            | Workload::Closed {
                duration: Some(d), ..
            } => (w.start + *d, w.start + *d),
            Workload::Open {
                rate_rps,
                requests: Some(n),
                arrivals: Arrivals::Uniform,
                clients: 1,
                ..
            } => {
                // the last of n evenly spaced sends, at (n - 1) / rate
                let at = w.start + Ticks::from_ms((*n - 1) as f64 * 1000.0 / rate_rps);
                (at + Ticks(1), at)
            }
            _ => return Ok(()),
        };
        last = last.max(end);
        shown = shown.max(by);
    }
    if last <= warmup {
        return err(
            "scenario.warmup_ms",
            format!(
                "the warm-up ends at {} ms, after every workload stopped sending (by {} ms): no request would be counted; shorten the warm-up or lengthen the workload",
                crate::format::format_number(warmup.as_ms()),
                crate::format::format_number(shown.as_ms())
            ),
        );
    }
    Ok(())
}

/// When an open workload stops sending (its duration, or its requests at its
/// rate), if it says.
fn sending_end_ms(workload: &Workload) -> Option<f64> {
    let Workload::Open {
        rate_rps,
        requests,
        duration,
        ..
    } = workload
    else {
        return None;
    };
    match (duration, requests) {
        (Some(d), _) => Some(d.as_ms()),
        (None, Some(n)) => Some(*n as f64 / rate_rps * 1000.0),
        (None, None) => None,
    }
}

/// The time-series rows a run makes up to an instant, and how the message
/// says its windows.
struct Series<'a> {
    rows: &'a dyn Fn(f64) -> f64,
    windows_are: &'a str,
    limit: u64,
}

/// A `latency_factor` fault that would make a run pass the row limit: its
/// start is blamed when that alone takes the run that far (or it starts after
/// the workload stops sending), else its factor.
fn check_fault_rows(
    faults: &[crate::model::Fault],
    dependencies: &[crate::model::Dependency],
    services: &[crate::model::Service],
    workload: &Workload,
    series: &Series,
) -> R<()> {
    let Series {
        rows,
        windows_are,
        limit,
    } = *series;
    let too_many = |end_ms: f64| rows(end_ms) > limit as f64;
    for (i, f) in faults.iter().enumerate() {
        let Effect::LatencyFactor(factor) = f.effect() else {
            continue;
        };
        let Some((what, mean)) = stretched_mean(f, dependencies, services) else {
            continue;
        };
        let end_ms = f.at.as_ms() + mean * factor;
        let sends_until = sending_end_ms(workload);
        let late = sends_until.is_some_and(|end| f.at.as_ms() > end);
        if too_many(end_ms) && (late || too_many(f.at.as_ms())) {
            // the start, not the factor, is what takes the run that far
            let after = match sends_until {
                Some(end) if late => format!(
                    ", after the run's end (the workload sends until {} ms; a fault after it never acts)",
                    crate::format::format_number(end)
                ),
                _ => String::new(),
            };
            return Err(ScenarioError::new(
            format!("faults.{i}.at_ms"),
            format!(
                "the fault starts at {} ms{after}: a run that lasted until then would make about {} time-series rows with {windows_are}, more than {limit}: start it within the run",
                crate::format::format_number(f.at.as_ms()),
                num(rows(f.at.as_ms().max(sends_until.unwrap_or(0.0))))
            ),
        )
        .related("output.window_ms"));
        }
        if too_many(end_ms) {
            return Err(ScenarioError::new(
            format!("faults.{i}.value"),
            format!(
                "a latency_factor of {} stretches {what} ({} ms) to {} ms: work it slows from {} ms on would keep the run going that long, and {windows_are} make about {} time-series rows, more than {limit}: use a smaller factor (or longer windows)",
                num(factor),
                crate::format::format_number(mean),
                num(mean * factor),
                crate::format::format_number(f.at.as_ms()),
                num(rows(end_ms))
            ),
        )
        .related("output.window_ms"));
        }
    }
    Ok(())
}

/// A time series that would pass the row limit before the run could end is
/// refused at load (on the built model), before a run fills memory with it; the
/// run checks the rest. What makes a run this long is blamed: an open workload
/// that sends for longer than the windows can cover (the windows then:
/// `output.window_ms`), a warm-up the run must reach (`scenario.warmup_ms`), or
/// a `latency_factor` fault that stretches the work it slows that far on average
/// (its `value`).
pub(super) fn check_series_rows(model: &Model) -> R<()> {
    let Model {
        window,
        warmup,
        faults,
        services,
        dependencies,
        workloads,
        limiters,
        workload,
        ..
    } = model;
    let (window, warmup) = (*window, *warmup);
    let window_ms = match window {
        Some(w) => w.as_ms(),
        None if !faults.is_empty() => crate::model::DEFAULT_WINDOW_MS,
        None => return Ok(()),
    };
    let windows_are = match window {
        Some(_) => format!("{window_ms} ms windows"),
        None => {
            format!("the {window_ms} ms windows a run with faults keeps without [output] window_ms")
        }
    };
    let servers = services
        .iter()
        .filter(|s| matches!(s.handler, Handler::Server(_)))
        .count();
    let per_window = crate::model::series::client_and_limiter_rows(workloads.len(), limiters)
        + crate::model::series::call_site_rows(model)
        + crate::model::series::replica_rows(services)
        + (servers + dependencies.len()) as u64;
    let rows = |end_ms: f64| (end_ms / window_ms).ceil() * per_window as f64;
    let limit = crate::model::MAX_SERIES_ROWS;
    let too_many = |end_ms: f64| rows(end_ms) > limit as f64;
    if too_many(warmup.as_ms()) {
        return Err(ScenarioError::new(
            "scenario.warmup_ms",
            format!(
                "the run lasts at least until the warm-up ends ({} ms): {windows_are} up to then make about {} time-series rows, more than {limit}: shorten the warm-up or use longer windows",
                crate::format::format_number(warmup.as_ms()),
                num(rows(warmup.as_ms()))
            ),
        )
        .related("output.window_ms"));
    }
    let series = Series {
        rows: &rows,
        windows_are: &windows_are,
        limit,
    };
    check_fault_rows(faults, dependencies, services, workload, &series)?;
    let Some(end_ms) = sending_end_ms(workload) else {
        return Ok(());
    };
    if too_many(end_ms) {
        return err(
            "output.window_ms",
            format!(
                "{windows_are} over the workload's {} ms make about {} time-series rows, more than {limit}: use longer windows",
                crate::format::format_number(end_ms),
                num(rows(end_ms))
            ),
        );
    }
    Ok(())
}

/// The time-series rows a run will write before its workload stops sending,
/// when they can be known up front: an open workload's duration, or its
/// requests at its rate (the same count `check_series_rows` refuses alone).
fn series_estimate(model: &Model) -> Option<f64> {
    let window_ms = match model.window {
        Some(w) => w.as_ms(),
        None if !model.faults.is_empty() => crate::model::DEFAULT_WINDOW_MS,
        None => return None,
    };
    let Workload::Open {
        rate_rps,
        requests,
        duration,
        ..
    } = &model.workload
    else {
        return None;
    };
    let end_ms = match (duration, requests) {
        (Some(d), _) => d.as_ms(),
        (None, Some(n)) => *n as f64 / rate_rps * 1000.0,
        (None, None) => return None,
    };
    let servers = model
        .services
        .iter()
        .filter(|s| matches!(s.handler, Handler::Server(_)))
        .count();
    let per_window =
        crate::model::series::client_and_limiter_rows(model.workloads.len(), &model.limiters)
            + crate::model::series::call_site_rows(model)
            + crate::model::series::replica_rows(&model.services)
            + (servers + model.dependencies.len()) as u64;
    Some((end_ms / window_ms).ceil() * per_window as f64)
}

/// The time-series rows of every compare row together are bounded by
/// [`MAX_SERIES_ROWS`](crate::model::MAX_SERIES_ROWS) (they are all held at once
/// to write the tables: four rows of 1 ns windows, each under the limit alone,
/// ran out of memory): each row that keeps a time series may write an even
/// share (`RunLimits::max_series_rows`, a run stops when it would pass it), and
/// rows whose count is known up front are refused here when together they pass
/// the limit.
pub(crate) fn share_series_rows(models: &mut [Model]) -> R<()> {
    let max = crate::model::MAX_SERIES_ROWS;
    let with_series = models
        .iter()
        .filter(|m| crate::model::series::window_of(m).is_some())
        .count() as u64;
    if with_series <= 1 {
        return Ok(());
    }
    let mut total = 0.0;
    for m in models.iter_mut() {
        m.limits.max_series_rows = max / with_series;
        if let Some(rows) = series_estimate(m) {
            total += rows;
        }
    }
    if total > max as f64 {
        return err(
            "output.window_ms",
            format!(
                "the {with_series} compare rows' time series make about {total:.0} rows together, more than {max} (all are held at once to write the tables): use longer windows, or fewer compare rows"
            ),
        );
    }
    Ok(())
}
