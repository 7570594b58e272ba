//! `[[faults]]` (what changes, on what, over which window), `scenario.warmup_ms`
//! and `[output] window_ms`.
//!
//! A fault's target is a server (`"backend"`: every replica; `"backend#2"`: the
//! second, 1-based), a dependency, or an open workload (`[workloads.NAME]`'s
//! NAME; `main` for `[workload]`) for `arrival_factor`. Its window is `[at_ms, at_ms + for_ms)`.

use super::*;

/// `[[faults]]`, in file order.
pub(super) fn faults(
    raw: &RawScenario,
    ctx: &Ctx,
    services: &[Service],
    workloads: &[NamedWorkload],
) -> R<Vec<Fault>> {
    raw.faults
        .iter()
        .enumerate()
        .map(|(i, f)| fault(&format!("faults.{i}"), f, ctx, services, workloads))
        .collect()
}

fn fault(
    path: &str,
    f: &RawFault,
    ctx: &Ctx,
    services: &[Service],
    workloads: &[NamedWorkload],
) -> R<Fault> {
    let kind = one_of(
        &format!("{path}.kind"),
        Some(f.kind.as_str()),
        &FaultKind::NAMES,
    )?;
    let at_path = format!("{path}.at_ms");
    let for_path = format!("{path}.for_ms");
    let at = ticks(&at_path, non_negative(&at_path, f.at_ms)?)?;
    let length = ticks(&for_path, non_negative(&for_path, f.for_ms)?)?;
    let until = at + length;
    if until.as_ms() >= DEFAULT_RANGE_MS {
        return err(
            for_path,
            "the fault's end is beyond the virtual clock's range",
        );
    }
    let value = value(path, kind, f.value)?;
    let target = target(
        &format!("{path}.target"),
        kind,
        &f.target,
        ctx,
        services,
        workloads,
    )?;
    if let FaultTarget::Workload(w) = target
        && !matches!(workloads[w].workload, Workload::Open { .. })
    {
        return err(
            format!("{path}.kind"),
            format!(
                "`arrival_factor` changes an open workload's rate: workload `{}` is not `open`",
                workloads[w].name
            ),
        );
    }
    Ok(Fault {
        kind,
        target,
        at,
        until,
        value,
    })
}

/// Far beyond any run (about 290 years): a fault's end must fit the clock.
const DEFAULT_RANGE_MS: f64 = 9.0e12;

/// The fault's `value`, checked for its kind.
fn value(path: &str, kind: FaultKind, value: Option<f64>) -> R<f64> {
    let p = format!("{path}.value");
    let Some(v) = value else {
        if kind == FaultKind::Down {
            return Ok(0.0);
        }
        return err(
            p,
            "missing: a factor (latency_factor, arrival_factor), a slot count (slots) or a probability (error_rate)",
        );
    };
    match kind {
        FaultKind::Down => err(p, "`down` takes no value (every call fails)"),
        FaultKind::LatencyFactor | FaultKind::ArrivalFactor => {
            // 0 would make work take no time or stop arrivals: a factor is > 0
            positive(&p, v)
        }
        FaultKind::Slots => {
            if !v.is_finite() || v < 0.0 || v.fract() != 0.0 || v > f64::from(u32::MAX) {
                return err(p, format!("must be a whole number of slots >= 0 (got {v})"));
            }
            Ok(v)
        }
        FaultKind::ErrorRate => {
            if !(0.0..=1.0).contains(&v) {
                return err(p, format!("must be a probability in [0, 1] (got {v})"));
            }
            Ok(v)
        }
    }
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
    if kind == FaultKind::ArrivalFactor {
        if let Some(w) = workloads.iter().position(|w| w.name == name) {
            return Ok(FaultTarget::Workload(w));
        }
        let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
        return err(
            path,
            format!(
                "`arrival_factor` targets a workload: no workload named `{name}` (defined: {}; `[workload]` is `main`){}",
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
    if let Some(d) = ctx.dependency_names.get(name) {
        return Ok(FaultTarget::Dependency(d));
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

/// `scenario.warmup_ms` and `[output] window_ms`.
pub(super) fn time(raw: &RawScenario) -> R<(Ticks, Option<Ticks>)> {
    let warmup = match raw.scenario.warmup_ms {
        Some(ms) => ticks(
            "scenario.warmup_ms",
            non_negative("scenario.warmup_ms", ms)?,
        )?,
        None => Ticks::ZERO,
    };
    let window = raw
        .output
        .as_ref()
        .and_then(|o| o.window_ms)
        .map(|ms| positive_ticks("output.window_ms", ms))
        .transpose()?;
    Ok((warmup, window))
}

/// A time series that would pass the row limit before the workload even stops
/// sending (an open workload's duration, or its requests at its rate) is refused
/// at load, before a run fills memory with it; the run checks the rest.
pub(super) fn check_series_rows(model: &Model) -> R<()> {
    let Model {
        window,
        faults,
        services,
        dependencies,
        workloads,
        limiters,
        workload,
        ..
    } = model;
    let window_ms = match window {
        Some(w) => w.as_ms(),
        None if !faults.is_empty() => crate::sim::DEFAULT_WINDOW_MS,
        None => return Ok(()),
    };
    let Workload::Open {
        rate_rps,
        requests,
        duration,
        ..
    } = workload
    else {
        return Ok(());
    };
    let end_ms = match (duration, requests) {
        (Some(d), _) => d.as_ms(),
        (None, Some(n)) => *n as f64 / rate_rps * 1000.0,
        (None, None) => return Ok(()),
    };
    let servers = services
        .iter()
        .filter(|s| matches!(s.handler, Handler::Server(_)))
        .count();
    let per_window = crate::sim::timeseries::client_and_limiter_rows(workloads.len(), limiters)
        + crate::sim::timeseries::call_site_rows(model)
        + (servers + dependencies.len()) as u64;
    let rows = (end_ms / window_ms).ceil() * per_window as f64;
    if rows > crate::sim::MAX_SERIES_ROWS as f64 {
        return err(
            "output.window_ms",
            format!(
                "{window_ms} ms windows over the workload's {end_ms} ms make about {rows:.0} time-series rows, more than {}: use longer windows",
                crate::sim::MAX_SERIES_ROWS
            ),
        );
    }
    Ok(())
}
