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
pub(super) fn unowned_routes(w: &RawWorkload, p: &str, routes: &mut Vec<Route>) -> R<()> {
    let list = match w {
        RawWorkload::Script { unowned_routes, .. } | RawWorkload::Probe { unowned_routes, .. } => {
            unowned_routes.as_deref().unwrap_or_default()
        }
        _ => return Ok(()),
    };
    for (i, r) in list.iter().enumerate() {
        let path = format!("{p}.unowned_routes.{i}");
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

/// The routes, with an index by path: a search through the list for each
/// workload made a scenario of many workloads and routes (an import of
/// thousands of routes) quadratic.
struct Routes<'a> {
    list: &'a [Route],
    at: std::collections::HashMap<&'a str, RouteId>,
}

fn route(path: &str, r: Option<&str>, routes: &Routes) -> R<RouteId> {
    if let Some(&i) = r.and_then(|r| routes.at.get(r)) {
        return Ok(i);
    }
    let (routes, names): (&[Route], Vec<&str>) = (
        routes.list,
        routes.list.iter().map(|r| r.path.as_str()).collect(),
    );
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
        None if routes.is_empty() => err(
            path,
            "no service has a route to send requests to: give a service `routes = [\"/...\"]`"
                .to_string(),
        ),
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
    routes: &Routes,
    has_gateway: bool,
) -> R<RequestTemplate> {
    Ok(RequestTemplate {
        route: route(&format!("{path}.route"), r, routes)?,
        access: access(&format!("{path}.access"), a, has_gateway)?,
        client: client.unwrap_or("-").to_string(),
        member: member.unwrap_or("-").to_string(),
    })
}

/// One workload at `p`: one arm per kind, each reading its own keys (the
/// request template the kinds share last, so that errors come in the
/// keys' order). Over 100 lines because it is one arm per kind (six), each
/// a few lines per key; the parts longer than that (a script's groups, an
/// open ladder, the template) are functions of their own.
fn workload(
    w: &RawWorkload,
    p: &str,
    routes: &Routes,
    has_gateway: bool,
    files: &mut Files,
) -> R<Workload> {
    // the request template of a kind that sends one route
    let template = |route: &Option<String>,
                    access: &Option<String>,
                    client: &Option<String>,
                    member: &Option<String>| {
        self::template(
            p,
            route.as_deref(),
            access.as_deref(),
            client.as_deref(),
            member.as_deref(),
            routes,
            has_gateway,
        )
    };
    Ok(match w {
        RawWorkload::Sequence {
            requests,
            start_ms: _,
            route,
            access,
            client,
            member,
            ..
        } => Workload::Sequence {
            requests: count(&format!("{p}.requests"), *requests, 1)?,
            template: template(route, access, client, member)?,
        },
        RawWorkload::Open {
            rate_rps,
            requests,
            duration_ms,
            arrivals,
            timeout_ms,
            clients,
            start_ms: _,
            route,
            access,
            client,
            member,
            ..
        } => {
            if requests.is_none() && duration_ms.is_none() {
                return err(p, "an open workload needs `requests` or `duration_ms`");
            }
            let clients = count(&format!("{p}.clients"), clients.unwrap_or(1), 1)?;
            if let Some(n) = requests
                && *n >= 1
                && (*n as u64) < clients
            {
                return err(
                    format!("{p}.clients"),
                    format!(
                        "{clients} clients split {n} requests: some would send none (give at least one request per client)"
                    ),
                );
            }
            Workload::Open {
                clients,
                rate_rps: positive(&format!("{p}.rate_rps"), *rate_rps)?,
                requests: requests
                    .map(|n| count(&format!("{p}.requests"), n, 1))
                    .transpose()?,
                duration: duration_ms
                    .map(|d| positive_ticks(&format!("{p}.duration_ms"), d))
                    .transpose()?,
                arrivals: one_of(
                    &format!("{p}.arrivals"),
                    arrivals.as_deref(),
                    &[
                        ("poisson", Arrivals::Poisson),
                        ("uniform", Arrivals::Uniform),
                    ],
                )?,
                timeout: timeout_ms
                    .map(|t| positive_ticks(&format!("{p}.timeout_ms"), t))
                    .transpose()?,
                template: template(route, access, client, member)?,
            }
        }
        RawWorkload::Closed {
            users,
            think_ms,
            requests,
            duration_ms,
            timeout_ms,
            start_ms: _,
            route,
            access,
            client,
            member,
            call_policy: _,
        } => {
            if requests.is_none() && duration_ms.is_none() {
                return err(p, "a closed workload needs `requests` or `duration_ms`");
            }
            Workload::Closed {
                users: count(&format!("{p}.users"), *users, 1)?,
                think: match think_ms {
                    Some(t) => super::latency(&format!("{p}.think_ms"), t, files)?,
                    None => Latency::Constant(Ticks::ZERO),
                },
                requests: requests
                    .map(|n| count(&format!("{p}.requests"), n, 1))
                    .transpose()?,
                duration: duration_ms
                    .map(|d| {
                        let path = format!("{p}.duration_ms");
                        positive_ticks(&path, d)
                    })
                    .transpose()?,
                timeout: timeout_ms
                    .map(|t| {
                        let path = format!("{p}.timeout_ms");
                        positive_ticks(&path, t)
                    })
                    .transpose()?,
                template: template(route, access, client, member)?,
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
                return err(format!("{p}.steps"), "needs at least one step");
            }
            let steps = steps
                .iter()
                .enumerate()
                .map(|(i, s)| count(&format!("{p}.steps.{i}"), *s, 1))
                .collect::<R<Vec<_>>>()?;
            let open = open_ladder(p, arrivals, *rate_per_step_rps, *hold_ms)?;
            let timeout_ms = positive(&format!("{p}.timeout_ms"), *timeout_ms)?;
            let jitter = ticks(&format!("{p}.jitter_ms"), jitter_ms.unwrap_or(0.0))?;
            if open.is_some() && jitter > Ticks::ZERO {
                return err(
                    format!("{p}.jitter_ms"),
                    "jitter applies to closed waves; an open ladder already spreads its arrivals",
                );
            }
            Workload::Ladder(Ladder {
                steps,
                waves: count(&format!("{p}.waves"), waves.unwrap_or(1), 1)?,
                jitter,
                timeout: ticks(&format!("{p}.timeout_ms"), timeout_ms)?,
                timeout_ms,
                open,
                template: template(route, access, client, member)?,
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
                return err(format!("{p}.groups"), "needs at least one group");
            }
            let groups = groups
                .iter()
                .enumerate()
                .map(|(g, gr)| {
                    let defaults = (route.as_deref(), client, member);
                    script_group(&format!("{p}.groups.{g}"), gr, defaults, routes)
                })
                .collect::<R<Vec<_>>>()?;
            Workload::Script {
                groups,
                access: access(&format!("{p}.access"), a.as_deref(), has_gateway)?,
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
                return err(format!("{p}.access"), "needs at least one access path");
            }
            Workload::Probe {
                access: list
                    .iter()
                    .enumerate()
                    .map(|(i, x)| access(&format!("{p}.access.{i}"), Some(x), has_gateway))
                    .collect::<R<Vec<_>>>()?,
                client: client.clone().unwrap_or_else(|| "-".into()),
                member: member.clone().unwrap_or_else(|| "-".into()),
                routes: routes.list.len(),
            }
        }
    })
}

/// A ladder's `arrivals`: `closed` waves (None), or `open` steps of
/// `rate_per_step_rps` more each, held `hold_ms`.
fn open_ladder(
    p: &str,
    arrivals: &Option<String>,
    rate_per_step_rps: Option<f64>,
    hold_ms: Option<f64>,
) -> R<Option<OpenLadder>> {
    Ok(
        match choice(
            &format!("{p}.arrivals"),
            arrivals.as_deref().unwrap_or("closed"),
            &["closed", "open"],
        )? {
            "open" => {
                let (Some(rate), Some(hold)) = (rate_per_step_rps, hold_ms) else {
                    return err(p, "an open ladder needs `rate_per_step_rps` and `hold_ms`");
                };
                Some(OpenLadder {
                    rate_per_step_rps: positive(&format!("{p}.rate_per_step_rps"), rate)?,
                    hold: ticks(
                        &format!("{p}.hold_ms"),
                        positive(&format!("{p}.hold_ms"), hold)?,
                    )?,
                })
            }
            _ => None,
        },
    )
}

/// A script's group at `gp`: its routes (the script's `route` when it
/// gives none), its client and member (the script's when it gives none).
fn script_group(
    gp: &str,
    gr: &RawGroup,
    (route, client, member): (Option<&str>, &Option<String>, &Option<String>),
    routes: &Routes,
) -> R<ScriptGroup> {
    let routes_of = if gr.routes.is_empty() {
        vec![self::route(&format!("{gp}.routes"), route, routes)?]
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
}

/// Runaway protection before the run: every request the workload sends costs at
/// least one event (its arrival), so a workload that sends more requests than
/// `scenario.max_events` can never finish. Refusing it here answers at once instead
/// of after a billion events. A workload that would start after
/// `scenario.max_sim_time_ms` could never send either.
pub(super) fn check_event_budget(w: &NamedWorkload, p: &str, limits: &RunLimits) -> R<()> {
    if w.start > limits.max_sim_time {
        return err_vs(
            format!("{p}.start_ms"),
            "scenario.max_sim_time_ms",
            format!(
                "starts at {} ms, after scenario.max_sim_time_ms = {} (raise max_sim_time_ms in [scenario] if the run is meant to be this long)",
                crate::format::format_number(w.start.as_ms()),
                crate::format::format_number(limits.max_sim_time.as_ms())
            ),
        );
    }
    let ms = |t: Ticks| t.as_ms();
    // the index of a ladder's largest step: the value to blame for too many
    let largest = |steps: &[u64]| {
        steps
            .iter()
            .enumerate()
            .max_by_key(|(i, s)| (**s, std::cmp::Reverse(*i)))
            .map_or(0, |(i, _)| i)
    };
    let (key, what, arrivals) = match &w.workload {
        Workload::Sequence { requests, .. } => ("requests", "requests", *requests as f64),
        Workload::Closed { requests, .. } => match requests {
            Some(n) => ("requests", "requests", *n as f64),
            None => return Ok(()),
        },
        Workload::Open {
            rate_rps,
            requests,
            duration,
            ..
        } => {
            let by_time = duration.map(|d| rate_rps * ms(d) / 1000.0);
            match (requests, by_time) {
                (Some(n), Some(t)) if (*n as f64) <= t => ("requests", "requests", *n as f64),
                (Some(n), None) => ("requests", "requests", *n as f64),
                (_, Some(t)) => ("rate_rps", "arrivals (rate_rps x duration_ms)", t),
                (None, None) => return Ok(()),
            }
        }
        Workload::Ladder(l) => match l.open {
            Some(o) => (
                "rate_per_step_rps",
                "arrivals (steps x rate_per_step_rps x hold_ms)",
                l.steps
                    .iter()
                    .map(|&s| s as f64 * o.rate_per_step_rps * ms(o.hold) / 1000.0)
                    .sum(),
            ),
            // each wave of a step sends that step's number of requests at once
            None => (
                &*format!("steps.{}", largest(&l.steps)),
                "requests (the sum of the steps x waves)",
                l.steps.iter().map(|&s| s as f64).sum::<f64>() * l.waves as f64,
            ),
        },
        Workload::Script { groups, .. } => (
            "groups",
            "requests",
            groups.iter().map(|g| g.count as f64).sum(),
        ),
        Workload::Probe { .. } => return Ok(()),
    };
    if arrivals > limits.max_events as f64 {
        return err_vs(
            format!("{p}.{key}"),
            "scenario.max_events",
            format!(
                "the workload sends {} {what}, each at least one event: more than scenario.max_events = {} (raise max_events in [scenario] if the run is meant to be this long)",
                num(arrivals.round()),
                limits.max_events
            ),
        );
    }
    Ok(())
}

/// The workloads as written: `[workload]` (the one workload `main`) or the
/// `[workloads.NAME]` tables, each with its key path.
pub(super) fn written(raw: &RawScenario) -> R<Vec<(String, String, &RawWorkload)>> {
    match (&raw.workload, raw.workloads.is_empty()) {
        (Some(_), false) => err(
            "workloads",
            "give either [workload] (the shorthand for one workload named `main`) or [workloads.NAME] tables, not both",
        ),
        (Some(w), true) => Ok(vec![("main".into(), "workload".into(), w)]),
        (None, false) => Ok(raw
            .workloads
            .iter()
            .map(|(name, w)| (name.clone(), format!("workloads.{name}"), w))
            .collect()),
        (None, true) => err(
            "workload",
            "the scenario sends nothing: add a [workload] (or [workloads.NAME] tables)",
        ),
    }
}

/// The workload's `call_policy` (open, closed and sequence workloads).
fn call_policy(w: &RawWorkload) -> Option<&str> {
    match w {
        RawWorkload::Sequence { call_policy, .. }
        | RawWorkload::Open { call_policy, .. }
        | RawWorkload::Closed { call_policy, .. } => call_policy.as_deref(),
        _ => None,
    }
}

fn start_ms(w: &RawWorkload) -> Option<f64> {
    match w {
        RawWorkload::Sequence { start_ms, .. }
        | RawWorkload::Open { start_ms, .. }
        | RawWorkload::Closed { start_ms, .. } => *start_ms,
        _ => None,
    }
}

/// Every workload: names checked, routes resolved, values checked, runaway
/// checks made. Appends the routes named in `unowned_routes` to `routes`.
pub(super) fn workloads(
    raw: &RawScenario,
    routes: &mut Vec<Route>,
    has_gateway: bool,
    limits: &RunLimits,
    files: &mut Files,
) -> R<Vec<NamedWorkload>> {
    let written = written(raw)?;
    let several = written.len() > 1;
    for (name, p, w) in &written {
        csv_name(p, name)?;
        if several && name == "all" {
            return err(
                p.as_str(),
                "`all` names the row of the outcomes table that sums every workload: give this workload another name",
            );
        }
        if several && matches!(w, RawWorkload::Ladder { .. } | RawWorkload::Probe { .. }) {
            return err(
                format!("{p}.type"),
                "a ladder or a probe measures the system alone: it must be the scenario's only workload",
            );
        }
        unowned_routes(w, p, routes)?;
    }
    let mut at = std::collections::HashMap::new();
    for (i, r) in routes.iter().enumerate() {
        // the first of a path, as a search through the list finds
        at.entry(r.path.as_str()).or_insert(i);
    }
    let routes = &Routes { list: routes, at };
    let mut out = Vec::with_capacity(written.len());
    for (name, p, w) in written {
        let start = ticks(&format!("{p}.start_ms"), start_ms(w).unwrap_or(0.0))?;
        let stream = if name == "main" {
            "workload".to_string()
        } else {
            format!("workloads.{name}")
        };
        let named = NamedWorkload {
            workload: workload(w, &p, routes, has_gateway, files)?,
            call_policy: super::policies::resolve(
                &format!("{p}.call_policy"),
                call_policy(w),
                raw,
            )?,
            name,
            start,
            stream,
        };
        check_event_budget(&named, &p, limits)?;
        out.push(named);
    }
    check_held_at_once(&out, limits)?;
    Ok(out)
}

/// The most clients of `open` workloads, all workloads together: each keeps its
/// own state and random stream (about 1 KB).
pub(crate) const MAX_CLIENTS: u64 = 1_000_000;

/// What the workloads hold from their start, whatever the run does, refused
/// before a run allocates it all at once (10^8 users or clients passed `check`
/// and aborted the run on one huge allocation), so that `check` says what `run`
/// would: a closed population's users each hold a request in flight or a
/// pending think time, and a closed ladder's wave is in flight at once (both
/// against `scenario.max_in_flight`); open workloads' clients each keep their
/// own state and random stream ([`MAX_CLIENTS`]).
fn check_held_at_once(workloads: &[NamedWorkload], limits: &RunLimits) -> R<()> {
    let max = limits.max_in_flight;
    let (mut users, mut clients) = (0u64, 0u64);
    for w in workloads {
        let p = if w.stream == "workload" {
            "workload".to_string()
        } else {
            format!("workloads.{}", w.name)
        };
        let across = |total: u64, own: u64| {
            if total > own {
                " (all workloads together)"
            } else {
                ""
            }
        };
        match &w.workload {
            Workload::Closed { users: n, .. } => {
                users = users.saturating_add(*n);
                if users > max {
                    return err(
                        format!("{p}.users"),
                        format!(
                            "{users} users{}, each holding a request in flight or a think time: more than scenario.max_in_flight = {max} (raise max_in_flight in [scenario] if the system is meant to hold this many)",
                            across(users, *n)
                        ),
                    );
                }
            }
            Workload::Open { clients: n, .. } => {
                clients = clients.saturating_add(*n);
                if clients > MAX_CLIENTS {
                    return err(
                        format!("{p}.clients"),
                        format!(
                            "{clients} clients{}, each keeping its own state and random stream: more than the limit of {MAX_CLIENTS}",
                            across(clients, *n)
                        ),
                    );
                }
            }
            Workload::Ladder(l) => {
                // the run refuses a ladder that sends more than max_events
                // before it starts: say the same, first
                let n = l.requests();
                if n > limits.max_events {
                    return err(
                        format!("{p}.steps"),
                        format!(
                            "the ladder sends {n} requests, more than scenario.max_events = {} (raise it in [scenario] if the run is meant to be this long)",
                            limits.max_events
                        ),
                    );
                }
                if l.open.is_some() {
                    continue;
                }
                let wave = l.steps.iter().enumerate().max_by_key(|(_, c)| **c);
                if let Some((i, &c)) = wave
                    && c > max
                {
                    return err(
                        format!("{p}.steps.{i}"),
                        format!(
                            "a wave of {c} requests is in flight at once: more than scenario.max_in_flight = {max} (raise max_in_flight in [scenario] if the system is meant to hold this many)"
                        ),
                    );
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A closed population that thinks 0 ms against a service that always answers
/// in 0 ms sends its next request at the same instant, forever: the clock never
/// reaches its `duration_ms` (a run took 38 s to reach max_events). Refused when
/// it is certain: every think time is 0, no `requests` bounds it, and the whole
/// round trip (the gateway's share, every handler's time, every call's latency)
/// is 0 with no limiter on the way. (A loop that is only possible, a 429 or a
/// 503 answered at once, is stopped by `scenario.max_events_per_instant`.)
pub(super) fn check_zero_time_loops(
    workloads: &[NamedWorkload],
    raw: &RawScenario,
    services: &[Service],
    dependencies: &[Dependency],
    gateway: Option<&Gateway>,
    routes: &[Route],
) -> R<()> {
    let mut zero: Vec<Option<bool>> = vec![None; services.len()];
    let by_name: std::collections::HashMap<&str, &NamedWorkload> =
        workloads.iter().map(|x| (x.name.as_str(), x)).collect();
    for (name, p, w) in written(raw)? {
        let Some(&named) = by_name.get(name.as_str()) else {
            continue;
        };
        let Workload::Closed {
            think,
            requests: None,
            duration: Some(duration),
            template,
            ..
        } = &named.workload
        else {
            continue;
        };
        if !think.always_zero() {
            continue;
        }
        let route = &routes[template.route];
        let Some(entry) = route.service else {
            continue;
        };
        if template.access == Access::Gateway
            && let Some(g) = gateway
            && (g.share > Ticks::ZERO
                || g.rules
                    .iter()
                    .any(|r| route.path.starts_with(&r.prefix) && !r.limiters.is_empty()))
        {
            continue;
        }
        if !answers_at_once(entry, services, dependencies, &mut zero) {
            continue;
        }
        let at = match w {
            RawWorkload::Closed {
                think_ms: Some(_), ..
            } => format!("{p}.think_ms"),
            _ => format!("{p}.users"),
        };
        return err(
            at,
            format!(
                "the users think 0 ms and service `{}` always answers in 0 ms (no service time, latency or gateway share on the way): each user sends its next request at the same instant, forever, and the clock never reaches duration_ms = {} ms; give think_ms or the service a time above 0, or set `requests`",
                services[entry].name,
                crate::format::format_number(duration.as_ms())
            ),
        );
    }
    Ok(())
}

/// Whether service `s` always answers in 0 ms, whatever it is asked: no
/// middleware (a limiter may hold), and a handler whose every time is 0 (a
/// `respond`; a server's service time; a plan's calls, each to a dependency of
/// 0 latency or to such a service). Memoised in `zero`; the recursion follows
/// calls, at most `MAX_CALL_DEPTH` deep (checked before).
fn answers_at_once(
    s: usize,
    services: &[Service],
    dependencies: &[Dependency],
    zero: &mut [Option<bool>],
) -> bool {
    if let Some(z) = zero[s] {
        return z;
    }
    let svc = &services[s];
    let plan_zero = |plan: &Plan, zero: &mut [Option<bool>]| {
        plan.branches
            .iter()
            .flat_map(|b| &b.calls)
            .all(|c| match c.target {
                Target::Dependency(d) => dependencies[d].latency.always_zero(),
                Target::Service(t) => answers_at_once(t, services, dependencies, zero),
            })
    };
    let z = svc.middleware.is_empty()
        && match &svc.handler {
            Handler::Respond => true,
            Handler::Plan(plan) => plan_zero(plan, zero),
            Handler::Server(server) => {
                server.service.always_zero()
                    && server.plan.as_ref().is_none_or(|p| plan_zero(p, zero))
            }
        };
    zero[s] = Some(z);
    z
}
