//! `[gateway]`, `[dependencies]`, the routes and `[services]` with their
//! handlers (`respond`, `server`, `plan`).

use super::*;

/// Limiter names at `path` (a list), resolved.
fn resolve_limiters(names: &Names, path: &str, list: &[String]) -> R<Vec<LimiterId>> {
    list.iter()
        .enumerate()
        .map(|(i, n)| names.resolve(&format!("{path}.{i}"), n))
        .collect()
}

/// `[gateway]`: its share of the budget and its limiter rules.
pub(super) fn gateway(raw: &RawScenario, limiter_names: &Names) -> R<Option<Gateway>> {
    Ok(match &raw.gateway {
        None => None,
        Some(g) => {
            let share_ms = non_negative("gateway.share_ms", g.share_ms.unwrap_or(0.0))?;
            let rules = g
                .rules
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    Ok(GatewayRule {
                        prefix: r.prefix.clone(),
                        limiters: resolve_limiters(
                            limiter_names,
                            &format!("gateway.rules.{i}.limiters"),
                            &r.limiters,
                        )?,
                    })
                })
                .collect::<R<Vec<_>>>()?;
            Some(Gateway {
                share: ticks("gateway.share_ms", share_ms)?,
                share_ms,
                rules,
            })
        }
    })
}

/// `[dependencies]`, in declaration order.
pub(super) fn dependencies(raw: &RawScenario, files: &mut Files) -> R<Vec<Dependency>> {
    raw.dependencies
        .iter()
        .map(|(name, d)| {
            let path = format!("dependencies.{name}");
            let median_ms = match d.median_ms {
                Some(m) => Some(positive(&format!("{path}.median_ms"), m)?),
                None => None,
            };
            let replicas = count_u32(&format!("{path}.replicas"), d.replicas.unwrap_or(1), 1)?;
            if d.replicas.is_none() && d.balancer.is_some() {
                return err(
                    format!("{path}.balancer"),
                    "a balancer picks among replicas: set `replicas` (2 or more) beside it, or remove it (`replicas = 1` keeps it with nothing to pick)",
                );
            }
            let (balancer, mut balance) =
                balance::balancer(&format!("{path}.balancer"), d.balancer.as_ref(), replicas)?;
            if balance.release == BalanceRelease::Replica {
                return err(
                    format!("{path}.balancer.release"),
                    "`replica` is for services' balancers: a dependency's pick is over when its caller's call is, and `caller` is the only release it has",
                );
            }
            if balance.conn_limit.is_some() {
                return err(
                    format!("{path}.balancer.max_conn"),
                    "a connection limit with its queue is for services' balancers: a dependency's `slots` already hold its calls in line",
                );
            }
            if balancer.breaks_ties_by_time() {
                return err(
                    format!("{path}.balancer.tie_break"),
                    "`first_reached` is for services' balancers (it reads when each replica's count last changed); a dependency's ties go to the lowest index",
                );
            }
            balance.outlier = outlier::outlier(
                &format!("{path}.outlier_detection"),
                d.outlier_detection.as_ref(),
                ("dependency", replicas),
            )?;
            Ok(Dependency {
                name: name.clone(),
                replicas,
                balancer,
                balance,
                median_ms,
                latency: latency(&format!("{path}.latency"), &d.latency, files)?,
                slots: count_u32(&format!("{path}.slots"), d.slots.unwrap_or(0), 0)?,
                error_rate: match d.error_rate {
                    Some(r) => {
                        let at = format!("{path}.error_rate");
                        let r = finite(&at, r)?;
                        if !(0.0..=1.0).contains(&r) {
                            return err(at, format!("must be between 0 and 1 (got {})", num(r)));
                        }
                        r
                    }
                    None => 0.0,
                },
            })
        })
        .collect()
}

/// Every route a service owns, in declaration order, and the routes of each
/// service. A route belongs to exactly one service.
pub(super) fn routes(raw: &RawScenario) -> R<(Vec<Route>, Vec<Vec<RouteId>>)> {
    // Hashed, not searched: 10^5 services made `check` quadratic.
    let mut routes: Vec<Route> = Vec::new();
    let mut owners: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut routes_of: Vec<Vec<RouteId>> = vec![Vec::new(); raw.services.len()];
    for (s, (sname, svc)) in raw.services.iter().enumerate() {
        for (i, r) in svc.routes.iter().enumerate() {
            let path = format!("services.{sname}.routes.{i}");
            if !r.starts_with('/') {
                return err(path, format!("a route starts with `/` (got `{r}`)"));
            }
            if let Some(&prev) = owners.get(r.as_str()) {
                let owner = raw.services.get_index(prev).map(|x| x.0.as_str());
                return err(
                    path,
                    format!(
                        "route `{r}` is already owned by service `{}`",
                        owner.unwrap_or("?")
                    ),
                );
            }
            owners.insert(r, s);
            routes_of[s].push(routes.len());
            routes.push(Route {
                path: r.clone(),
                service: Some(s),
            });
        }
    }

    Ok((routes, routes_of))
}

/// `[services]`, in declaration order, with their handlers.
pub(super) fn services(
    raw: &RawScenario,
    mut routes_of: Vec<Vec<RouteId>>,
    ctx: &Ctx,
    files: &mut Files,
) -> R<Vec<Service>> {
    let mut services = Vec::new();
    for (s, (sname, svc)) in raw.services.iter().enumerate() {
        let path = format!("services.{sname}");
        if ctx.dependency_names.get(sname).is_some() {
            return err(
                path,
                format!(
                    "`{sname}` names both a service and a dependency: calls name their target, so the names must differ"
                ),
            );
        }
        let routed = !routes_of[s].is_empty();
        let handler = handler(&path, svc, ctx, routed, files)?;
        let median_ms = svc
            .median_ms
            .map(|m| positive(&format!("{path}.median_ms"), m))
            .transpose()?;
        let replicas = count_u32(&format!("{path}.replicas"), svc.replicas.unwrap_or(1), 1)?;
        if replicas > 1 && !matches!(handler, Handler::Server(_)) {
            return err(
                format!("{path}.replicas"),
                "replicas need a `server` handler (each replica has its own slots and queue)",
            );
        }
        let (balancer, mut balance) =
            balance::balancer(&format!("{path}.balancer"), svc.balancer.as_ref(), replicas)?;
        balance.outlier = outlier::outlier(
            &format!("{path}.outlier_detection"),
            svc.outlier_detection.as_ref(),
            ("service", replicas),
        )?;
        if balance.outlier.is_some() && balance.conn_limit.is_some() {
            return err(
                format!("{path}.outlier_detection"),
                "outlier detection beside a balancer's `max_conn` is not modelled: remove one of them",
            );
        }
        let replica_settings = replica_settings(&path, svc, &handler, replicas, files)?;
        services.push(Service {
            replica_settings,
            name: sname.clone(),
            routes: std::mem::take(&mut routes_of[s]),
            middleware: resolve_limiters(
                &ctx.limiter_names,
                &format!("{path}.middleware"),
                &svc.middleware,
            )?,
            handler,
            median_ms,
            replicas,
            balancer,
            balance,
        });
    }

    Ok(services)
}

/// The service's `handler`: `respond` (the default), a `server` (its
/// slots, queue, order and, with `branches`, the calls it makes after its
/// service time) or a `plan`.
fn handler(path: &str, svc: &RawService, ctx: &Ctx, routed: bool, files: &mut Files) -> R<Handler> {
    Ok(match &svc.handler {
        None | Some(RawHandler::Respond {}) => Handler::Respond,
        Some(RawHandler::Server {
            slots,
            queue,
            service,
            abandon,
            budget,
            policy,
            cancellation,
            on_failure,
            branches,
            order,
            codel,
        }) => {
            let p = format!("{path}.handler");
            let order = one_of(&format!("{p}.order"), order.as_deref(), &QueueOrder::NAMES)?;
            let codel = codel.as_ref().map(|c| self::codel(&p, c)).transpose()?;
            let plan = match branches {
                Some(branches) => {
                    let keys = PlanKeys {
                        budget: budget.as_ref(),
                        policy: policy.as_deref(),
                        cancellation: *cancellation,
                        on_failure: on_failure.as_deref(),
                        branches,
                    };
                    Some(plan(&p, &keys, ctx, routed)?)
                }
                None => {
                    let set = [
                        ("budget", budget.is_some()),
                        ("policy", policy.is_some()),
                        ("cancellation", *cancellation),
                        ("on_failure", on_failure.is_some()),
                    ];
                    if let Some((key, _)) = set.iter().find(|(_, on)| *on) {
                        return err(
                            format!("{p}.{key}"),
                            "a server's plan keys need `branches` (the calls it makes after its service time)",
                        );
                    }
                    None
                }
            };
            Handler::Server(Server {
                slots: count_u32(&format!("{p}.slots"), *slots, 1)?,
                queue: count_u32(&format!("{p}.queue"), *queue, 0)?,
                service: latency(&format!("{p}.service"), service, files)?,
                abandon: *abandon,
                plan,
                order,
                codel,
            })
        }
        Some(RawHandler::Plan {
            budget,
            policy,
            cancellation,
            on_failure,
            branches,
        }) => {
            let p = format!("{path}.handler");
            let keys = PlanKeys {
                budget: budget.as_ref(),
                policy: policy.as_deref(),
                cancellation: *cancellation,
                on_failure: on_failure.as_deref(),
                branches,
            };
            Handler::Plan(plan(&p, &keys, ctx, routed)?)
        }
    })
}

/// A server's `codel`: both its keys, each a time > 0.
fn codel(p: &str, c: &RawCodel) -> R<Codel> {
    let required = |key: &str, v: Option<f64>| {
        let at = format!("{p}.codel.{key}");
        let ms = v.ok_or_else(|| {
            ScenarioError::new(
                at.as_str(),
                "missing: CoDel needs both `target_ms` (the queue timeout while the queue stands) and `interval_ms` (how far back an empty queue counts, and the timeout then)",
            )
        })?;
        positive_ticks(&at, ms)
    };
    Ok(Codel {
        target: required("target_ms", c.target_ms)?,
        interval: required("interval_ms", c.interval_ms)?,
    })
}

/// `[services.NAME.replica.K]`: each replica's own settings, in replica order.
fn replica_settings(
    path: &str,
    svc: &RawService,
    handler: &Handler,
    replicas: u32,
    files: &mut Files,
) -> R<Vec<ReplicaSettings>> {
    let mut out = Vec::new();
    let name = path.strip_prefix("services.").unwrap_or(path);
    for (k, r) in &svc.replica {
        let p = format!("{path}.replica.{k}");
        if !matches!(handler, Handler::Server(_)) {
            return err(
                p,
                "replica settings need a `server` handler (its replicas have slots and service times)",
            );
        }
        let replica = match k.parse::<u32>() {
            Ok(k) if (1..=replicas).contains(&k) => k - 1,
            _ => {
                return Err(ScenarioError::new(
                    p,
                    format!(
                        "replica `{k}` is out of range: replicas are numbered 1 to {replicas} (as `{path}.replicas` says; faults name them `{name}#1` .. `{name}#{replicas}`)"
                    ),
                )
                .related(format!("{path}.replicas")));
            }
        };
        let latency_factor = match r.latency_factor {
            Some(f) => positive(&format!("{p}.latency_factor"), f)?,
            None => 1.0,
        };
        let latency_add = match r.latency_add_ms {
            Some(ms) => {
                let at = format!("{p}.latency_add_ms");
                ticks(&at, non_negative(&at, ms)?)?
            }
            None => Ticks::ZERO,
        };
        let service = r
            .service
            .as_ref()
            .map(|l| latency(&format!("{p}.service"), l, files))
            .transpose()?;
        let slots = r
            .slots
            .map(|n| count_u32(&format!("{p}.slots"), n, 1))
            .transpose()?;
        out.push(ReplicaSettings {
            replica,
            latency_factor,
            latency_add,
            service,
            slots,
        });
    }
    out.sort_by_key(|r| r.replica);
    if let Some(w) = out.windows(2).find(|w| w[0].replica == w[1].replica) {
        return err(
            format!("{path}.replica"),
            format!(
                "replica {} is given settings twice (`{}` and another spelling of the same number)",
                w[0].replica + 1,
                w[0].replica + 1
            ),
        );
    }
    Ok(out)
}

/// The most replicas of all services together: each keeps its own slots, queue,
/// random stream and books (about 1 KB).
pub(crate) const MAX_REPLICAS: u64 = 1_000_000;

/// Refuses more than [`MAX_REPLICAS`] replicas of services and dependencies
/// together: 10^8 passed `check` and aborted the run on one huge allocation.
pub(super) fn check_replicas(services: &[Service], dependencies: &[Dependency]) -> R<()> {
    let mut total = 0u64;
    let all = services
        .iter()
        .map(|s| (format!("services.{}.replicas", s.name), s.replicas))
        .chain(
            dependencies
                .iter()
                .map(|d| (format!("dependencies.{}.replicas", d.name), d.replicas)),
        );
    for (path, n) in all {
        total = total.saturating_add(u64::from(n));
        if total > MAX_REPLICAS {
            let across = if total > u64::from(n) {
                " (all services and dependencies together)"
            } else {
                ""
            };
            return err(
                path,
                format!(
                    "{total} replicas{across}, each keeping its own slots, queue, random stream and books: more than the limit of {MAX_REPLICAS}"
                ),
            );
        }
    }
    Ok(())
}

/// The most services one chain of calls may pass through (a service calling a
/// service calling a service ...): an answer travels back up a chain, and a
/// cancellation down it, in one step of the run per level (a nested call each),
/// so the depth bounds the run's stack. Far beyond any real call graph.
pub(crate) const MAX_CALL_DEPTH: usize = 1000;

/// Services calling services must not call back into themselves: a cycle is
/// named, as `services.a -> services.b -> services.a`, at the call that closes it.
/// No chain of calls may pass through more than [`MAX_CALL_DEPTH`] services.
/// (An explicit stack, not recursion: a chain of 50,000 services overflowed the
/// stack.)
pub(super) fn check_call_graph(services: &[Service]) -> R<()> {
    // the calls of a service into services: (branch, call, target)
    /// A call into a service: (branch, call, target service).
    type Call = (usize, usize, usize);
    let calls_of = |s: usize| -> Vec<Call> {
        let Some(plan) = services[s].handler.plan() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (b, branch) in plan.branches.iter().enumerate() {
            for (i, call) in branch.calls.iter().enumerate() {
                if let Target::Service(t) = call.target {
                    out.push((b, i, t));
                }
            }
        }
        out
    };
    let call_path = |s: usize, b: usize, i: usize| {
        format!(
            "services.{}.handler.branches.{b}.calls.{i}",
            services[s].name
        )
    };
    // 0 unvisited, 1 on the current path, 2 done
    let mut state = vec![0u8; services.len()];
    // per service done: the most services a chain of calls from it passes
    // through, and the service it calls on that chain
    let mut depth = vec![0usize; services.len()];
    let mut deepest: Vec<Option<Call>> = vec![None; services.len()];
    // the current path: each service with its calls and the next one to follow
    let mut path: Vec<(usize, Vec<Call>, usize)> = Vec::new();
    for root in 0..services.len() {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        path.push((root, calls_of(root), 0));
        while let Some((s, calls, next)) = path.last_mut() {
            let s = *s;
            if let Some(&(b, i, t)) = calls.get(*next) {
                *next += 1;
                match state[t] {
                    1 => {
                        let from = path.iter().position(|p| p.0 == t).unwrap_or(0);
                        let cycle: Vec<String> = path[from..]
                            .iter()
                            .map(|p| p.0)
                            .chain(std::iter::once(t))
                            .map(|x| format!("services.{}", services[x].name))
                            .collect();
                        return err(
                            call_path(s, b, i),
                            format!("calls form a cycle: {}", cycle.join(" -> ")),
                        );
                    }
                    0 => {
                        state[t] = 1;
                        path.push((t, calls_of(t), 0));
                    }
                    _ => {}
                }
                continue;
            }
            // every call of `s` followed: its depth is known
            let below = calls
                .iter()
                .copied()
                .max_by_key(|&(_, _, t)| (depth[t], std::cmp::Reverse(t)));
            depth[s] = 1 + below.map_or(0, |(_, _, t)| depth[t]);
            deepest[s] = below;
            if depth[s] > MAX_CALL_DEPTH {
                let (b, i, _) = below.expect("a chain deeper than one has a call");
                let mut chain = vec![s];
                while let Some((_, _, t)) = deepest[*chain.last().expect("not empty")] {
                    chain.push(t);
                }
                let name = |x: usize| format!("services.{}", services[x].name);
                return err(
                    call_path(s, b, i),
                    format!(
                        "calls nest {} services deep ({} -> {} -> ... -> {}), more than the limit of {MAX_CALL_DEPTH} (the run follows an answer or a cancellation along a chain one nested step per service, so the depth is capped)",
                        depth[s],
                        name(chain[0]),
                        name(chain[1]),
                        name(chain[chain.len() - 1])
                    ),
                );
            }
            state[s] = 2;
            path.pop();
        }
    }
    Ok(())
}

/// `budget = "deadline"` needs a deadline to split: a caller's call (every call
/// carries one) or a workload with a timeout.
pub(super) fn check_deadlines<'a>(
    services: &[Service],
    workloads: impl Iterator<Item = &'a Workload>,
) -> R<()> {
    let mut called = vec![false; services.len()];
    for plan in services.iter().filter_map(|s| s.handler.plan()) {
        for call in plan.branches.iter().flat_map(|b| &b.calls) {
            if let Target::Service(t) = call.target {
                called[t] = true;
            }
        }
    }
    let mut workload_deadline = false;
    for w in workloads {
        workload_deadline |= match w {
            Workload::Open { timeout, .. } => timeout.is_some(),
            Workload::Ladder(_) => true,
            _ => false,
        };
    }
    for (s, svc) in services.iter().enumerate() {
        let Some(plan) = svc.handler.plan() else {
            continue;
        };
        // a service without routes that nobody calls is never reached
        let reached = !svc.routes.is_empty();
        if plan.budget_kind == BudgetKind::Deadline && reached && !called[s] && !workload_deadline {
            return err(
                format!("services.{}.handler.budget", svc.name),
                "`deadline` splits the deadline its callers set, but no service calls this one and the workload sets no `timeout_ms`: give the budget in ms, `slo` or `none`",
            );
        }
    }
    Ok(())
}

/// The keys of a plan (a `plan` handler's, or a `server`'s calls), as written.
struct PlanKeys<'a> {
    budget: Option<&'a RawBudget>,
    policy: Option<&'a str>,
    cancellation: bool,
    on_failure: Option<&'a str>,
    branches: &'a [RawBranch],
}

/// The fixed budget `slo` gives: the threshold less the gateway's share.
fn slo_budget(path: &str, ctx: &Ctx) -> R<f64> {
    let share_ms = ctx.gateway.as_ref().map_or(0.0, |g| g.share_ms);
    let Some(th) = ctx.slo.threshold_ms else {
        return err(
            format!("{path}.budget"),
            "`slo` needs `slo.threshold_ms` (or give the budget in ms)",
        );
    };
    let r = th - share_ms;
    if r <= 0.0 {
        return Err(ScenarioError::new(
            "slo.threshold_ms",
            format!(
                "{} minus gateway.share_ms ({}) leaves no budget for {path} (its budget is `slo`): must be > gateway.share_ms",
                num(th),
                num(share_ms)
            ),
        )
        .related("gateway.share_ms")
        .related(format!("{path}.budget")));
    }
    Ok(r)
}

/// A call's target: one namespace of services and dependencies.
fn target(path: &str, name: &str, ctx: &Ctx) -> R<Target> {
    if let Some(s) = ctx.service_names.get(name) {
        return Ok(Target::Service(s));
    }
    if let Some(d) = ctx.dependency_names.get(name) {
        return Ok(Target::Dependency(d));
    }
    let (deps, svcs) = (ctx.dependency_names.all(), ctx.service_names.all());
    let defined = |kind: &str, names: &[&str]| {
        if names.is_empty() {
            format!("no {kind} is defined")
        } else {
            format!("{kind}: {}", list(names.iter().copied()))
        }
    };
    err(
        path,
        format!(
            "no service or dependency named `{name}` ({}; {}){}",
            defined("dependencies", deps),
            defined("services", svcs),
            did_you_mean(name, deps.iter().chain(svcs).copied())
        ),
    )
}

/// Each call's weight in its branch: its callee's `median_ms` under the
/// weighted policy (required there), 1 otherwise.
fn call_weights(
    (path, bpath): (&str, &str),
    targets: &[Target],
    policy: Policy,
    ctx: &Ctx,
) -> R<Vec<f64>> {
    Ok(match policy {
        Policy::Weighted => targets
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let (median, key) = match t {
                    Target::Dependency(d) => (
                        ctx.dependencies[d].median_ms,
                        format!("dependencies.{}.median_ms", ctx.dependencies[d].name),
                    ),
                    Target::Service(s) => {
                        let (name, svc) = ctx.raw_service(s);
                        (svc.median_ms, format!("services.{name}.median_ms"))
                    }
                };
                median.filter(|m| *m > 0.0).ok_or_else(|| {
                    ScenarioError::new(
                        format!("{bpath}.calls.{i}"),
                        format!("the weighted policy needs `{key}`"),
                    )
                    .related(format!("{path}.policy"))
                    .related(key.as_str())
                })
            })
            .collect::<R<_>>()?,
        _ => vec![1.0; targets.len()],
    })
}

/// A call's own keys: its `timeout_ms`, its `call_policy` (the scenario's
/// default for a bare name), its `probability` and whether its caller waits.
fn call_keys(
    cpath: &str,
    raw: &RawCall,
    ctx: &Ctx,
) -> R<(Option<Ticks>, Option<PolicyId>, f64, bool)> {
    let (timeout, call_policy) = match raw {
        RawCall::Name(_) => (None, None),
        RawCall::Table(c) => (
            c.timeout_ms
                .map(|ms| {
                    let p = format!("{cpath}.timeout_ms");
                    positive_ticks(&p, ms)
                })
                .transpose()?,
            super::policies::resolve(
                &format!("{cpath}.call_policy"),
                c.call_policy.as_deref(),
                ctx.raw,
            )?,
        ),
    };
    let call_policy = match raw {
        RawCall::Name(_) => super::policies::resolve(cpath, None, ctx.raw)?,
        RawCall::Table(_) => call_policy,
    };
    let probability = match raw {
        RawCall::Table(RawCallTable {
            probability: Some(p),
            ..
        }) => call_probability(&format!("{cpath}.probability"), *p)?,
        _ => 1.0,
    };
    let wait = match raw {
        RawCall::Table(c) => c.wait.unwrap_or(true),
        RawCall::Name(_) => true,
    };
    Ok((timeout, call_policy, probability, wait))
}

/// A call's share of its plan's budget under `policy`: the fraction, in ms
/// and in ticks (0 without a fixed budget); `(w, total)` are its weight and
/// its branch's, `k` the branch's calls.
fn call_share(
    path: &str,
    (policy, kind, budget_ms): (Policy, BudgetKind, f64),
    (w, total): (f64, f64),
    k: f64,
) -> R<(f64, f64, Ticks)> {
    let fraction = match policy {
        Policy::Greedy => 1.0,
        Policy::Equal => 1.0 / k,
        Policy::Weighted => w / total,
    };
    let share_ms = match policy {
        Policy::Greedy => budget_ms,
        Policy::Equal => budget_ms / k,
        Policy::Weighted => budget_ms * w / total,
    };
    let share = if kind == BudgetKind::Fixed || kind == BudgetKind::SloOrDeadline {
        ticks(&format!("{path}.budget"), share_ms)
            .map_err(|e| e.context("the share of one call under this policy"))?
    } else {
        Ticks::ZERO
    };
    Ok((fraction, share_ms, share))
}

/// The plan's `budget`: its kind and, when fixed, its length in ms.
fn plan_budget(
    path: &str,
    budget: Option<&RawBudget>,
    ctx: &Ctx,
    routed: bool,
) -> R<(BudgetKind, f64)> {
    Ok(match budget {
        Some(RawBudget::Ms(ms)) => (BudgetKind::Fixed, positive(&format!("{path}.budget"), *ms)?),
        Some(RawBudget::Named(n)) => {
            match choice(&format!("{path}.budget"), n, &["slo", "deadline", "none"])? {
                "slo" => (BudgetKind::Fixed, slo_budget(path, ctx)?),
                "deadline" => (BudgetKind::Deadline, 0.0),
                _ => (BudgetKind::None, 0.0),
            }
        }
        // the default: `slo` for requests from a workload, the deadline for calls;
        // a service no workload can reach (no routes) only ever gets calls
        None if !routed => (BudgetKind::Deadline, 0.0),
        None => (BudgetKind::SloOrDeadline, slo_budget(path, ctx)?),
    })
}

/// The plan's `sometimes`, `special` and `joins` (see [`Plan`]): whether a
/// call is made only sometimes; whether its calls need the run's general
/// loop; whether a branch waits for others.
fn shapes(out: &[Branch]) -> (bool, bool, bool) {
    let sometimes = out
        .iter()
        .any(|b| b.calls.iter().any(|c| c.probability < 1.0));
    let special = out.iter().any(|b| {
        !b.after.is_empty()
            || b.calls
                .iter()
                .any(|c| c.probability < 1.0 || !c.wait || c.if_ok.is_some())
    });
    let joins = out.iter().any(|b| !b.after.is_empty());
    (sometimes, special, joins)
}

fn plan(path: &str, keys: &PlanKeys, ctx: &Ctx, routed: bool) -> R<Plan> {
    let PlanKeys {
        budget,
        policy,
        cancellation,
        on_failure,
        branches,
    } = *keys;
    let (kind, budget_ms) = plan_budget(path, budget, ctx, routed)?;
    let policy = one_of(
        &format!("{path}.policy"),
        policy,
        &[
            ("greedy", Policy::Greedy),
            ("equal", Policy::Equal),
            ("weighted", Policy::Weighted),
        ],
    )?;
    let on_failure = one_of(
        &format!("{path}.on_failure"),
        on_failure,
        &[
            ("continue", OnFailure::Continue),
            ("abort", OnFailure::Abort),
        ],
    )?;
    if branches.is_empty() {
        return err(
            format!("{path}.branches"),
            "a plan needs at least one branch",
        );
    }
    let mut out = Vec::new();
    for (b, br) in branches.iter().enumerate() {
        let bpath = format!("{path}.branches.{b}");
        if br.calls.is_empty() {
            return err(format!("{bpath}.calls"), "a branch needs at least one call");
        }
        let targets = br
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| target(&format!("{bpath}.calls.{i}"), c.to(), ctx))
            .collect::<R<Vec<_>>>()?;
        let k = targets.len() as f64;
        let weights = call_weights((path, &bpath), &targets, policy, ctx)?;
        let total: f64 = weights.iter().sum();
        let calls = targets
            .iter()
            .zip(&weights)
            .zip(&br.calls)
            .enumerate()
            .map(|(i, ((&t, w), raw))| {
                let (fraction, share_ms, share) =
                    call_share(path, (policy, kind, budget_ms), (*w, total), k)?;
                let cpath = format!("{bpath}.calls.{i}");
                let (timeout, call_policy, probability, wait) = call_keys(&cpath, raw, ctx)?;
                Ok(Call {
                    target: t,
                    share,
                    share_ms,
                    fraction,
                    timeout,
                    call_policy,
                    probability,
                    wait,
                    if_ok: None,
                })
            })
            .collect::<R<Vec<_>>>()?;
        out.push(Branch {
            name: br.name.clone(),
            calls,
            after: Vec::new(),
            then: Vec::new(),
        });
    }
    super::plan_links::resolve(path, branches, &mut out)?;
    let budget = match kind {
        BudgetKind::Fixed | BudgetKind::SloOrDeadline => {
            ticks(&format!("{path}.budget"), budget_ms)?
        }
        _ => Ticks::ZERO,
    };
    let (sometimes, special, joins) = shapes(&out);
    Ok(Plan {
        budget_kind: kind,
        budget,
        budget_ms,
        policy,
        cancellation,
        on_failure,
        sometimes,
        special,
        joins,
        branches: out,
    })
}

/// A call's `probability`: in (0, 1] (a call never made is no call).
fn call_probability(path: &str, p: f64) -> R<f64> {
    let p = finite(path, p)?;
    if p > 0.0 && p <= 1.0 {
        Ok(p)
    } else {
        err(
            path,
            format!(
                "must be above 0 and at most 1 (got {}); a call that is never made is left out of the branch",
                num(p)
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{Handler, Model};
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    fn model(
        policy: &str,
        calls: &str,
        medians: [f64; 3],
    ) -> Result<Model, crate::error::ScenarioError> {
        let text = format!(
            r#"
[scenario]
name = "split"
[slo]
threshold_ms = 200
[gateway]
share_ms = 20
[services.s]
routes = ["/x"]
handler = {{ type = "plan", policy = "{policy}", branches = [{{ name = "p", calls = {calls} }}] }}
[dependencies.a]
median_ms = {}
latency = {{ constant = 1 }}
[dependencies.b]
median_ms = {}
latency = {{ constant = 1 }}
[dependencies.c]
median_ms = {}
latency = {{ constant = 1 }}
[workload]
type = "sequence"
requests = 1
"#,
            medians[0], medians[1], medians[2]
        );
        load_str(&text, Path::new("t.toml"), &LoadOptions::default())
            .map(|s| s.rows[0].model.clone())
    }

    fn shares(m: &Model) -> Vec<f64> {
        match &m.services[0].handler {
            Handler::Plan(p) => p.branches[0].calls.iter().map(|c| c.share_ms).collect(),
            _ => panic!("plan expected"),
        }
    }

    #[test]
    fn greedy_gives_every_call_the_whole_budget() {
        assert_eq!(
            shares(&model("greedy", r#"["a", "b"]"#, [6., 12., 1.]).unwrap()),
            [180.0, 180.0]
        );
    }

    #[test]
    fn equal_splits_the_budget_by_call_count() {
        assert_eq!(
            shares(&model("equal", r#"["a", "b", "c"]"#, [6., 12., 1.]).unwrap()),
            [60.0, 60.0, 60.0]
        );
    }

    #[test]
    fn weighted_splits_by_medians() {
        assert_eq!(
            shares(&model("weighted", r#"["a", "b"]"#, [6., 12., 1.]).unwrap()),
            [60.0, 120.0]
        );
        let s = shares(&model("weighted", r#"["a", "b"]"#, [8., 13., 1.]).unwrap());
        assert!(
            (s[0] - 68.571_428_571).abs() < 1e-6 && (s[1] - 111.428_571_428).abs() < 1e-6,
            "{s:?}"
        );
    }

    #[test]
    fn unknown_dependency_is_named_with_a_suggestion() {
        let e = model("greedy", r#"["a", "bb"]"#, [1., 1., 1.]).unwrap_err();
        assert_eq!(e.path, "services.s.handler.branches.0.calls.1");
        assert!(
            e.message.contains("no service or dependency named `bb`"),
            "{}",
            e.message
        );
        assert!(e.message.contains("did you mean `b`?"), "{}", e.message);
        assert!(e.position.is_some());
    }

    fn latency_of(text: &str) -> crate::model::Latency {
        use super::{Files, latency};
        use crate::scenario::raw::RawLatency;
        let raw: RawLatency = toml::from_str(text).unwrap();
        let mut files = Files {
            dir: std::path::Path::new("."),
            read: Vec::new(),
            thin: Vec::new(),
        };
        latency("l", &raw, &mut files).unwrap()
    }

    #[test]
    fn weibull_and_pareto_by_percentiles_have_those_percentiles() {
        let crate::model::Latency::Weibull { shape, scale_ms } =
            latency_of("weibull = { p50_ms = 6.5, p99_ms = 120 }")
        else {
            panic!("a weibull")
        };
        let q = |p: f64| scale_ms * (-(1.0 - p).ln()).powf(1.0 / shape);
        assert!((q(0.5) - 6.5).abs() < 1e-9 && (q(0.99) - 120.0).abs() < 1e-9);
        let crate::model::Latency::Pareto { shape, min_ms } =
            latency_of("pareto = { p50_ms = 6.5, p99_ms = 120 }")
        else {
            panic!("a pareto")
        };
        let q = |p: f64| min_ms * (1.0 - p).powf(-1.0 / shape);
        assert!((q(0.5) - 6.5).abs() < 1e-9 && (q(0.99) - 120.0).abs() < 1e-9);
        assert_eq!(
            latency_of("erlang = { k = 3, mean_ms = 30 }"),
            crate::model::Latency::Gamma {
                shape: 3.0,
                scale_ms: 10.0
            }
        );
        assert_eq!(
            latency_of("gamma = { shape = 2, mean_ms = 10 }").mean_ms(),
            10.0
        );
    }

    /// A chain of 50,000 services (a file of that size takes seconds to parse
    /// in a debug build, so the chain is built from a loaded two-service model):
    /// the walk is iterative (a recursive one overflowed the stack), refuses
    /// the chain at the depth limit, and stays linear.
    #[test]
    fn a_chain_of_50000_services_is_refused_at_the_depth_limit_without_recursion() {
        use crate::model::Target;
        let text = r#"
[scenario]
name = "chain"
[services.a]
routes = ["/x"]
handler = { type = "plan", budget = 1000, branches = [{ name = "b", calls = ["z"] }] }
[services.z]
handler = { type = "plan", branches = [{ name = "b", calls = ["store"] }] }
[dependencies.store]
latency = { constant = 1 }
[workload]
type = "sequence"
requests = 1
"#;
        let m = load_str(text, Path::new("t.toml"), &LoadOptions::default())
            .map(|s| s.rows[0].model.clone())
            .expect("loads");
        let n = 50_000;
        let mut services = Vec::with_capacity(n);
        for i in 0..n {
            let mut s = m.services[0].clone();
            s.name = format!("s{i}");
            let Handler::Plan(plan) = &mut s.handler else {
                panic!("a plan");
            };
            plan.branches[0].calls[0].target = if i + 1 < n {
                Target::Service(i + 1)
            } else {
                m.services[1].handler.plan().expect("a plan").branches[0].calls[0].target
            };
            services.push(s);
        }
        let started = std::time::Instant::now();
        let e = super::check_call_graph(&services).expect_err("too deep");
        let text = e.to_string();
        assert!(
            text.contains("calls nest 1001 services deep")
                && text.contains("services.s48999 -> services.s49000 -> ... -> services.s49999"),
            "{text}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        // at the limit: accepted
        let ok = &mut services[n - 1000..];
        for s in ok.iter_mut() {
            let Handler::Plan(plan) = &mut s.handler else {
                unreachable!()
            };
            if let Target::Service(t) = &mut plan.branches[0].calls[0].target {
                *t -= n - 1000;
            }
        }
        super::check_call_graph(ok).expect("1000 deep is within the limit");
    }
}
