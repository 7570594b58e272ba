//! `[workload]`: who sends what, when; the routes it names that no service owns;
//! and the runaway check on how many requests it sends.

use super::*;

fn access(path: &str, a: Option<&str>, has_gateway: bool) -> R<Access> {
    let default = if has_gateway { "gateway" } else { "direct" };
    match choice(path, a.unwrap_or(default), &["gateway", "direct"])? {
        "gateway" if !has_gateway => err(path, "`gateway` access needs a [gateway] section"),
        "gateway" => Ok(Access::Gateway),
        _ => Ok(Access::Direct),
    }
}

/// Appends the routes a `script` or `probe` workload names on purpose although no
/// service owns them (`unowned_routes`): requests to them are answered 404 and no
/// limiter counts them. Any other unknown route stays an error, so typos are caught.
pub(super) fn unowned_routes(w: &RawWorkload, routes: &mut Vec<Route>) -> R<()> {
    let list = match w {
        RawWorkload::Script { unowned_routes, .. } | RawWorkload::Probe { unowned_routes, .. } => {
            unowned_routes.as_deref().unwrap_or_default()
        }
        _ => return Ok(()),
    };
    for (i, r) in list.iter().enumerate() {
        let path = format!("workload.unowned_routes.{i}");
        if !r.starts_with('/') {
            return err(path, format!("a route starts with `/` (got `{r}`)"));
        }
        if let Some(prev) = routes.iter().find(|x| x.path == *r) {
            let why = if prev.service.is_some() {
                "is owned by a service: list it in that service's `routes` only"
            } else {
                "is listed twice"
            };
            return err(path, format!("route `{r}` {why}"));
        }
        routes.push(Route {
            path: r.clone(),
            service: None,
        });
    }
    Ok(())
}

fn route(path: &str, r: Option<&str>, routes: &[Route]) -> R<RouteId> {
    let names: Vec<&str> = routes.iter().map(|r| r.path.as_str()).collect();
    match r {
        Some(r) => resolve(path, "route", r, &names).map_err(|e| {
            ScenarioError::new(
                e.path,
                format!(
                    "{} (a route no service owns must be listed in `workload.unowned_routes`)",
                    e.message
                ),
            )
        }),
        None if routes.len() == 1 => Ok(0),
        None => err(
            path,
            format!(
                "give the route: the scenario has {} routes ({})",
                routes.len(),
                list(names)
            ),
        ),
    }
}

fn template(
    path: &str,
    r: Option<&str>,
    a: Option<&str>,
    client: Option<&str>,
    member: Option<&str>,
    routes: &[Route],
    has_gateway: bool,
) -> R<RequestTemplate> {
    Ok(RequestTemplate {
        route: route(&format!("{path}.route"), r, routes)?,
        access: access(&format!("{path}.access"), a, has_gateway)?,
        client: client.unwrap_or("-").to_string(),
        member: member.unwrap_or("-").to_string(),
    })
}

pub(super) fn workload(w: &RawWorkload, routes: &[Route], has_gateway: bool) -> R<Workload> {
    let p = "workload";
    Ok(match w {
        RawWorkload::Sequence {
            requests,
            route,
            access,
            client,
            member,
            ..
        } => Workload::Sequence {
            requests: count("workload.requests", *requests, 1)?,
            template: template(
                p,
                route.as_deref(),
                access.as_deref(),
                client.as_deref(),
                member.as_deref(),
                routes,
                has_gateway,
            )?,
        },
        RawWorkload::Open {
            rate_rps,
            requests,
            duration_ms,
            arrivals,
            timeout_ms,
            route,
            access,
            client,
            member,
            ..
        } => {
            if requests.is_none() && duration_ms.is_none() {
                return err(p, "an open workload needs `requests` or `duration_ms`");
            }
            Workload::Open {
                rate_rps: positive("workload.rate_rps", *rate_rps)?,
                requests: requests
                    .map(|n| count("workload.requests", n, 1))
                    .transpose()?,
                duration: duration_ms
                    .map(|d| ticks("workload.duration_ms", positive("workload.duration_ms", d)?))
                    .transpose()?,
                arrivals: one_of(
                    "workload.arrivals",
                    arrivals.as_deref(),
                    &[
                        ("poisson", Arrivals::Poisson),
                        ("uniform", Arrivals::Uniform),
                    ],
                )?,
                timeout: timeout_ms
                    .map(|t| ticks("workload.timeout_ms", positive("workload.timeout_ms", t)?))
                    .transpose()?,
                template: template(
                    p,
                    route.as_deref(),
                    access.as_deref(),
                    client.as_deref(),
                    member.as_deref(),
                    routes,
                    has_gateway,
                )?,
            }
        }
        RawWorkload::Ladder {
            steps,
            waves,
            timeout_ms,
            arrivals,
            rate_per_step_rps,
            hold_ms,
            jitter_ms,
            route,
            access,
            client,
            member,
        } => {
            if steps.is_empty() {
                return err("workload.steps", "needs at least one step");
            }
            let steps = steps
                .iter()
                .enumerate()
                .map(|(i, s)| count(&format!("workload.steps.{i}"), *s, 1))
                .collect::<R<Vec<_>>>()?;
            let open = match choice(
                "workload.arrivals",
                arrivals.as_deref().unwrap_or("closed"),
                &["closed", "open"],
            )? {
                "open" => {
                    let (Some(rate), Some(hold)) = (rate_per_step_rps, hold_ms) else {
                        return err(p, "an open ladder needs `rate_per_step_rps` and `hold_ms`");
                    };
                    Some(OpenLadder {
                        rate_per_step_rps: positive("workload.rate_per_step_rps", *rate)?,
                        hold: ticks("workload.hold_ms", positive("workload.hold_ms", *hold)?)?,
                    })
                }
                _ => None,
            };
            let timeout_ms = positive("workload.timeout_ms", *timeout_ms)?;
            let jitter = ticks("workload.jitter_ms", jitter_ms.unwrap_or(0.0))?;
            if open.is_some() && jitter > Ticks::ZERO {
                return err(
                    "workload.jitter_ms",
                    "jitter applies to closed waves; an open ladder already spreads its arrivals",
                );
            }
            Workload::Ladder(Ladder {
                steps,
                waves: count("workload.waves", waves.unwrap_or(1), 1)?,
                jitter,
                timeout: ticks("workload.timeout_ms", timeout_ms)?,
                timeout_ms,
                open,
                template: template(
                    p,
                    route.as_deref(),
                    access.as_deref(),
                    client.as_deref(),
                    member.as_deref(),
                    routes,
                    has_gateway,
                )?,
            })
        }
        RawWorkload::Script {
            groups,
            route,
            access: a,
            client,
            member,
            unowned_routes: _,
        } => {
            if groups.is_empty() {
                return err("workload.groups", "needs at least one group");
            }
            let groups = groups
                .iter()
                .enumerate()
                .map(|(g, gr)| {
                    let gp = format!("workload.groups.{g}");
                    let routes_of = if gr.routes.is_empty() {
                        vec![self::route(
                            &format!("{gp}.routes"),
                            route.as_deref(),
                            routes,
                        )?]
                    } else {
                        gr.routes
                            .iter()
                            .enumerate()
                            .map(|(i, r)| self::route(&format!("{gp}.routes.{i}"), Some(r), routes))
                            .collect::<R<Vec<_>>>()?
                    };
                    Ok(ScriptGroup {
                        client: gr
                            .client
                            .clone()
                            .or_else(|| client.clone())
                            .unwrap_or_else(|| "-".into()),
                        member: gr
                            .member
                            .clone()
                            .or_else(|| member.clone())
                            .unwrap_or_else(|| "-".into()),
                        count: count(&format!("{gp}.count"), gr.count, 0)?,
                        routes: routes_of,
                        gap: ticks(&format!("{gp}.gap_ms"), gr.gap_ms.unwrap_or(0.0))?,
                        at: gr
                            .at_ms
                            .map(|a| ticks(&format!("{gp}.at_ms"), a))
                            .transpose()?,
                    })
                })
                .collect::<R<Vec<_>>>()?;
            Workload::Script {
                groups,
                access: access("workload.access", a.as_deref(), has_gateway)?,
            }
        }
        RawWorkload::Probe {
            access: a,
            client,
            member,
            unowned_routes: _,
        } => {
            let list: Vec<String> = match a {
                Some(v) => v.clone(),
                None if has_gateway => vec!["gateway".into(), "direct".into()],
                None => vec!["direct".into()],
            };
            if list.is_empty() {
                return err("workload.access", "needs at least one access path");
            }
            Workload::Probe {
                access: list
                    .iter()
                    .enumerate()
                    .map(|(i, x)| access(&format!("workload.access.{i}"), Some(x), has_gateway))
                    .collect::<R<Vec<_>>>()?,
                client: client.clone().unwrap_or_else(|| "-".into()),
                member: member.clone().unwrap_or_else(|| "-".into()),
                routes: routes.len(),
            }
        }
    })
}

/// Runaway protection before the run: every request the workload sends costs at
/// least one event (its arrival), so a workload that sends more requests than
/// `scenario.max_events` can never finish. Refusing it here answers at once instead
/// of after a billion events.
pub(super) fn check_event_budget(w: &Workload, limits: &RunLimits) -> R<()> {
    let ms = |t: Ticks| t.as_ms();
    let (path, what, arrivals) = match w {
        Workload::Sequence { requests, .. } => ("workload.requests", "requests", *requests as f64),
        Workload::Open {
            rate_rps,
            requests,
            duration,
            ..
        } => {
            let by_time = duration.map(|d| rate_rps * ms(d) / 1000.0);
            match (requests, by_time) {
                (Some(n), Some(t)) if (*n as f64) <= t => {
                    ("workload.requests", "requests", *n as f64)
                }
                (Some(n), None) => ("workload.requests", "requests", *n as f64),
                (_, Some(t)) => ("workload.rate_rps", "arrivals (rate_rps x duration_ms)", t),
                (None, None) => return Ok(()),
            }
        }
        Workload::Ladder(l) => match l.open {
            Some(o) => (
                "workload.rate_per_step_rps",
                "arrivals (steps x rate_per_step_rps x hold_ms)",
                l.steps
                    .iter()
                    .map(|&s| s as f64 * o.rate_per_step_rps * ms(o.hold) / 1000.0)
                    .sum(),
            ),
            None => (
                "workload.waves",
                "waves (steps x waves)",
                l.steps.len() as f64 * l.waves as f64,
            ),
        },
        Workload::Script { groups, .. } => (
            "workload.groups",
            "requests",
            groups.iter().map(|g| g.count as f64).sum(),
        ),
        Workload::Probe { .. } => return Ok(()),
    };
    if arrivals > limits.max_events as f64 {
        return err(
            path,
            format!(
                "the workload sends {arrivals:.0} {what}, each at least one event: more than scenario.max_events = {} (raise max_events in [scenario] if the run is meant to be this long)",
                limits.max_events
            ),
        );
    }
    Ok(())
}
