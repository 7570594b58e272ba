//! Raw scenario -> model: names resolved, units converted to ticks, every value
//! checked, with errors that name the key path and suggest the closest valid name.

use super::raw::*;
use crate::engine::Ticks;
use crate::error::{ScenarioError, did_you_mean, list};
use crate::model::*;

type R<T> = Result<T, ScenarioError>;

/// The 0.99 quantile of the standard normal distribution.
const Z99: f64 = 2.326_347_874_040_840_8;

const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;
const DEFAULT_MAX_SIM_TIME_MS: f64 = 365.0 * 24.0 * 3_600_000.0;
/// About half a gigabyte of request, call and event state.
const DEFAULT_MAX_IN_FLIGHT: u64 = 1_000_000;

fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> R<T> {
    Err(ScenarioError::new(path, msg))
}

fn finite(path: &str, v: f64) -> R<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        err(path, format!("must be a finite number (got {v})"))
    }
}

fn positive(path: &str, v: f64) -> R<f64> {
    if finite(path, v)? > 0.0 {
        Ok(v)
    } else {
        err(path, format!("must be > 0 (got {v})"))
    }
}

fn non_negative(path: &str, v: f64) -> R<f64> {
    if finite(path, v)? >= 0.0 {
        Ok(v)
    } else {
        err(path, format!("must be >= 0 (got {v})"))
    }
}

fn count(path: &str, v: i64, min: i64) -> R<u64> {
    if v >= min {
        Ok(v as u64)
    } else {
        err(path, format!("must be >= {min} (got {v})"))
    }
}

/// A count that the model keeps in 32 bits (slots, queue places): larger values
/// are refused rather than truncated (4294967297 would otherwise become 1).
fn count_u32(path: &str, v: i64, min: i64) -> R<u32> {
    let n = count(path, v, min)?;
    u32::try_from(n)
        .map_err(|_| ScenarioError::new(path, format!("must be <= {} (got {n})", u32::MAX)))
}

/// The characters that make a spreadsheet read a cell as a formula.
const FORMULA_STARTS: [char; 4] = ['=', '+', '-', '@'];

/// A name that reaches CSV cells or headers (service, dependency, limiter,
/// variant, branch, client, member). One starting like a formula would be run by
/// a spreadsheet that opens the CSV (formula injection), so it is refused; the
/// default label `-` alone stays valid.
pub(crate) fn csv_name(path: &str, name: &str) -> R<()> {
    if name != "-" && name.starts_with(FORMULA_STARTS) {
        return err(
            path,
            format!(
                "the name `{name}` starts with `{}`, which a spreadsheet opening the CSV output would run as a formula: start it with a letter or digit",
                name.chars().next().unwrap_or_default()
            ),
        );
    }
    Ok(())
}

/// Milliseconds to ticks, refusing values that do not fit the clock. The check is
/// made on the converted value: a positive time that rounds to 0 ns (the clock's
/// resolution) would divide by zero or silently mean "no time at all".
fn ticks(path: &str, ms: f64) -> R<Ticks> {
    non_negative(path, ms)?;
    if ms * crate::engine::Ticks::from_ms(1.0).0 as f64 >= u64::MAX as f64 / 2.0 {
        return err(path, format!("{ms} ms is beyond the virtual clock's range"));
    }
    let t = Ticks::from_ms(ms);
    if ms > 0.0 && t == Ticks::ZERO {
        return err(
            path,
            format!(
                "{ms} ms rounds to 0 ns (the virtual clock counts whole nanoseconds): must be > 0 after conversion, at least 0.0000005"
            ),
        );
    }
    Ok(t)
}

/// One of `allowed`, or an error suggesting the closest.
fn choice<'a>(path: &str, value: &str, allowed: &[&'a str]) -> R<&'a str> {
    allowed
        .iter()
        .find(|a| **a == value)
        .copied()
        .ok_or_else(|| {
            ScenarioError::new(
                path,
                format!(
                    "unknown value `{value}`, expected one of {}{}",
                    list(allowed.iter().copied()),
                    did_you_mean(value, allowed.iter().copied())
                ),
            )
        })
}

/// The value named by `value` among `options` (name, value); no value means the
/// first option, the default. Any other name is an error suggesting the closest.
fn one_of<T: Copy>(path: &str, value: Option<&str>, options: &[(&str, T)]) -> R<T> {
    let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
    let name = choice(path, value.unwrap_or(names[0]), &names)?;
    Ok(options
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .expect("choice returns a listed name"))
}

/// Resolves a name among `names`, or an error naming the kind and the closest.
fn resolve(path: &str, kind: &str, name: &str, names: &[&str]) -> R<usize> {
    names.iter().position(|n| *n == name).ok_or_else(|| {
        let known = if names.is_empty() {
            format!("no {kind} is defined")
        } else {
            format!("defined: {}", list(names.iter().copied()))
        };
        ScenarioError::new(
            path,
            format!(
                "no {kind} named `{name}` ({known}){}",
                did_you_mean(name, names.iter().copied())
            ),
        )
    })
}

/// What latency models read from files: the folder their paths are relative to
/// (the scenario file's) and the files read so far.
pub struct Files<'a> {
    pub dir: &'a std::path::Path,
    pub read: Vec<LatencyFile>,
}

/// Validates a scenario whose latency files (if any) are relative to `dir`.
pub fn validate(raw: &RawScenario, dir: &std::path::Path) -> R<Model> {
    let mut files = Files {
        dir,
        read: Vec::new(),
    };
    let files = &mut files;
    check_names(raw)?;
    let limiter_names: Vec<&str> = raw.limiters.keys().map(String::as_str).collect();
    let dependency_names: Vec<&str> = raw.dependencies.keys().map(String::as_str).collect();

    let limits = RunLimits {
        max_events: match raw.scenario.max_events {
            Some(0) => return err("scenario.max_events", "must be >= 1 (got 0)"),
            Some(n) => n,
            None => DEFAULT_MAX_EVENTS,
        },
        max_in_flight: match raw.scenario.max_in_flight {
            Some(0) => return err("scenario.max_in_flight", "must be >= 1 (got 0)"),
            Some(n) => n,
            None => DEFAULT_MAX_IN_FLIGHT,
        },
        max_sim_time: ticks(
            "scenario.max_sim_time_ms",
            positive(
                "scenario.max_sim_time_ms",
                raw.scenario
                    .max_sim_time_ms
                    .unwrap_or(DEFAULT_MAX_SIM_TIME_MS),
            )?,
        )?,
    };

    let slo = slo(&raw.slo)?;
    let limiters = raw
        .limiters
        .iter()
        .map(|(name, l)| limiter(&format!("limiters.{name}"), name, l))
        .collect::<R<Vec<_>>>()?;
    let resolve_limiters = |path: &str, names: &[String]| -> R<Vec<LimiterId>> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| resolve(&format!("{path}.{i}"), "limiter", n, &limiter_names))
            .collect()
    };

    let gateway = match &raw.gateway {
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
    };

    let dependencies = raw
        .dependencies
        .iter()
        .map(|(name, d)| {
            let path = format!("dependencies.{name}");
            let median_ms = match d.median_ms {
                Some(m) => Some(positive(&format!("{path}.median_ms"), m)?),
                None => None,
            };
            Ok(Dependency {
                name: name.clone(),
                median_ms,
                latency: latency(&format!("{path}.latency"), &d.latency, files)?,
                slots: count_u32(&format!("{path}.slots"), d.slots.unwrap_or(0), 0)?,
            })
        })
        .collect::<R<Vec<_>>>()?;

    // Routes: each belongs to exactly one service.
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

    let mut services = Vec::new();
    for (s, (sname, svc)) in raw.services.iter().enumerate() {
        let path = format!("services.{sname}");
        let handler = match &svc.handler {
            None | Some(RawHandler::Respond {}) => Handler::Respond,
            Some(RawHandler::Server {
                slots,
                queue,
                service,
                abandon,
            }) => Handler::Server(Server {
                slots: count_u32(&format!("{path}.handler.slots"), *slots, 1)?,
                queue: count_u32(&format!("{path}.handler.queue"), *queue, 0)?,
                service: latency(&format!("{path}.handler.service"), service, files)?,
                abandon: *abandon,
            }),
            Some(RawHandler::Plan {
                budget,
                policy,
                cancellation,
                on_failure,
                branches,
            }) => {
                let p = format!("{path}.handler");
                Handler::Plan(plan(
                    &p,
                    budget.as_ref(),
                    policy.as_deref(),
                    *cancellation,
                    on_failure.as_deref(),
                    branches,
                    &slo,
                    gateway.as_ref(),
                    &dependencies,
                    &dependency_names,
                )?)
            }
        };
        services.push(Service {
            name: sname.clone(),
            routes: std::mem::take(&mut routes_of[s]),
            middleware: resolve_limiters(&format!("{path}.middleware"), &svc.middleware)?,
            handler,
        });
    }

    unowned_routes(&raw.workload, &mut routes)?;
    let workload = workload(&raw.workload, &routes, gateway.is_some())?;
    check_event_budget(&workload, &limits)?;
    let analysis = analysis(&raw.analysis)?;
    let montecarlo = montecarlo(raw.montecarlo.as_ref())?;
    let thresholds = raw
        .thresholds
        .iter()
        .map(|(metric, condition)| {
            Threshold::parse(metric, condition)
                .map_err(|m| ScenarioError::new(format!("thresholds.\"{metric}\""), m))
        })
        .collect::<R<Vec<_>>>()?;

    Ok(Model {
        name: raw.scenario.name.clone(),
        about: raw.scenario.about.clone(),
        seed: super::seed(raw, None, super::Purpose::Run),
        limits,
        slo,
        gateway,
        services,
        routes,
        dependencies,
        limiters,
        workload,
        analysis,
        montecarlo,
        latency_files: std::mem::take(&mut files.read),
        thresholds,
    })
}

/// Every name that reaches a CSV cell or header is safe to open in a spreadsheet.
fn check_names(raw: &RawScenario) -> R<()> {
    let keys = [
        ("services", raw.services.keys().collect::<Vec<_>>()),
        ("dependencies", raw.dependencies.keys().collect()),
        ("limiters", raw.limiters.keys().collect()),
    ];
    for (section, names) in keys {
        for name in names {
            csv_name(&format!("{section}.{name}"), name)?;
        }
    }
    for (sname, svc) in &raw.services {
        if let Some(RawHandler::Plan { branches, .. }) = &svc.handler {
            for (b, br) in branches.iter().enumerate() {
                csv_name(
                    &format!("services.{sname}.handler.branches.{b}.name"),
                    &br.name,
                )?;
            }
        }
    }
    let labels = |client: &Option<String>, member: &Option<String>, at: &str| -> R<()> {
        for (key, v) in [("client", client), ("member", member)] {
            if let Some(v) = v {
                csv_name(&format!("{at}.{key}"), v)?;
            }
        }
        Ok(())
    };
    match &raw.workload {
        RawWorkload::Sequence { client, member, .. }
        | RawWorkload::Open { client, member, .. }
        | RawWorkload::Ladder { client, member, .. }
        | RawWorkload::Probe { client, member, .. } => labels(client, member, "workload"),
        RawWorkload::Script {
            client,
            member,
            groups,
            ..
        } => {
            labels(client, member, "workload")?;
            for (g, gr) in groups.iter().enumerate() {
                labels(&gr.client, &gr.member, &format!("workload.groups.{g}"))?;
            }
            Ok(())
        }
    }
}

/// `[montecarlo]`; metric names in `report` are checked by the sweep, which knows them.
fn montecarlo(m: Option<&RawMonteCarlo>) -> R<MonteCarlo> {
    let Some(m) = m else {
        return Ok(MonteCarlo {
            replications: None,
            confidence: 0.95,
            report: Vec::new(),
            baseline: Vec::new(),
        });
    };
    let confidence = m.confidence.unwrap_or(0.95);
    if !(confidence > 0.0 && confidence < 1.0) {
        return err(
            "montecarlo.confidence",
            format!("must be in (0, 1), e.g. 0.95 (got {confidence})"),
        );
    }
    Ok(MonteCarlo {
        replications: m
            .replications
            .map(|n| count("montecarlo.replications", n, 1))
            .transpose()?,
        confidence,
        report: m.report.clone().unwrap_or_default(),
        baseline: m.baseline.clone().unwrap_or_default(),
    })
}

fn slo(s: &RawSlo) -> R<Slo> {
    let opt = |name: &str, v: Option<f64>| -> R<Option<f64>> {
        v.map(|x| positive(&format!("slo.{name}"), x)).transpose()
    };
    Ok(Slo {
        threshold_ms: opt("threshold_ms", s.threshold_ms)?,
        peak_read_rps: opt("peak_read_rps", s.peak_read_rps)?,
        peak_edge_rps: opt("peak_edge_rps", s.peak_edge_rps)?,
        response_bytes: opt("response_bytes", s.response_bytes)?,
        deadline_field_bytes: opt("deadline_field_bytes", s.deadline_field_bytes)?,
    })
}

#[allow(clippy::too_many_arguments)]
fn plan(
    path: &str,
    budget: Option<&RawBudget>,
    policy: Option<&str>,
    cancellation: bool,
    on_failure: Option<&str>,
    branches: &[RawBranch],
    slo: &Slo,
    gateway: Option<&Gateway>,
    deps: &[Dependency],
    dep_names: &[&str],
) -> R<Plan> {
    let share_ms = gateway.map_or(0.0, |g| g.share_ms);
    let budget_ms = match budget.unwrap_or(&RawBudget::Named("slo".into())) {
        RawBudget::Ms(ms) => positive(&format!("{path}.budget"), *ms)?,
        RawBudget::Named(n) => {
            choice(&format!("{path}.budget"), n, &["slo"])?;
            let Some(th) = slo.threshold_ms else {
                return err(
                    format!("{path}.budget"),
                    "`slo` needs `slo.threshold_ms` (or give the budget in ms)",
                );
            };
            let r = th - share_ms;
            if r <= 0.0 {
                return err(
                    format!("{path}.budget"),
                    format!(
                        "slo.threshold_ms ({th}) minus gateway.share_ms ({share_ms}) leaves no budget"
                    ),
                );
            }
            r
        }
    };
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
        let ids = br
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| resolve(&format!("{bpath}.calls.{i}"), "dependency", c, dep_names))
            .collect::<R<Vec<_>>>()?;
        let k = ids.len() as f64;
        let weights: Vec<f64> = match policy {
            Policy::Weighted => ids
                .iter()
                .enumerate()
                .map(|(i, &d)| {
                    deps[d].median_ms.ok_or_else(|| {
                        ScenarioError::new(
                            format!("{bpath}.calls.{i}"),
                            format!(
                                "the weighted policy needs `dependencies.{}.median_ms`",
                                deps[d].name
                            ),
                        )
                    })
                })
                .collect::<R<_>>()?,
            _ => vec![1.0; ids.len()],
        };
        let total: f64 = weights.iter().sum();
        let calls = ids
            .iter()
            .zip(&weights)
            .map(|(&d, w)| {
                let share_ms = match policy {
                    Policy::Greedy => budget_ms,
                    Policy::Equal => budget_ms / k,
                    Policy::Weighted => budget_ms * w / total,
                };
                Ok(Call {
                    dependency: d,
                    share: ticks(&format!("{path}.budget"), share_ms)
                        .map_err(|e| e.context("the share of one call under this policy"))?,
                    share_ms,
                })
            })
            .collect::<R<Vec<_>>>()?;
        out.push(Branch {
            name: br.name.clone(),
            calls,
        });
    }
    Ok(Plan {
        budget: ticks(&format!("{path}.budget"), budget_ms)?,
        budget_ms,
        policy,
        cancellation,
        on_failure,
        branches: out,
    })
}

/// The keys a latency model may be given by, for "exactly one of" errors.
const LATENCY_KEYS: [&str; 11] = [
    "constant",
    "cycle",
    "empirical",
    "exponential",
    "uniform",
    "lognormal",
    "mixture",
    "gamma",
    "erlang",
    "weibull",
    "pareto",
];

/// ln(ln 100 / ln 2): Weibull's shape from p99 / p50.
fn weibull_shape(p: &str, p50: f64, p99: f64) -> R<f64> {
    if p99 <= p50 {
        return err(
            format!("{p}.p99_ms"),
            format!("must be > p50_ms (got {p99} <= {p50})"),
        );
    }
    Ok((100f64.ln() / 2f64.ln()).ln() / (p99 / p50).ln())
}

fn values_ms(path: &str, v: &[f64]) -> R<Vec<Ticks>> {
    if v.is_empty() {
        return err(path, "needs at least one value");
    }
    v.iter()
        .enumerate()
        .map(|(i, x)| ticks(&format!("{path}.{i}"), *x))
        .collect()
}

pub fn latency(path: &str, l: &RawLatency, files: &mut Files) -> R<Latency> {
    let set: Vec<&str> = [
        l.constant.is_some(),
        l.cycle.is_some(),
        l.empirical.is_some(),
        l.exponential.is_some(),
        l.uniform.is_some(),
        l.lognormal.is_some(),
        l.mixture.is_some(),
        l.gamma.is_some(),
        l.erlang.is_some(),
        l.weibull.is_some(),
        l.pareto.is_some(),
    ]
    .iter()
    .zip(LATENCY_KEYS)
    .filter(|(on, _)| **on)
    .map(|(_, k)| k)
    .collect();
    if set.len() != 1 {
        return err(
            path,
            format!(
                "a latency model takes exactly one of {} (got {})",
                list(LATENCY_KEYS),
                if set.is_empty() {
                    "none".to_string()
                } else {
                    list(set)
                }
            ),
        );
    }
    if l.start.is_some() && l.cycle.is_none() {
        return err(format!("{path}.start"), "`start` applies only to a `cycle`");
    }
    if let Some(c) = l.constant {
        return Ok(Latency::Constant(ticks(&format!("{path}.constant"), c)?));
    }
    if let Some(c) = &l.cycle {
        let start = choice(
            &format!("{path}.start"),
            l.start.as_deref().unwrap_or("first"),
            &["first", "random"],
        )?;
        return Ok(Latency::Cycle {
            values: values_ms(&format!("{path}.cycle"), c)?,
            random_start: start == "random",
        });
    }
    if let Some(e) = &l.empirical {
        let p = format!("{path}.empirical");
        return match e {
            RawEmpirical::Values(v) => Ok(Latency::Empirical(values_ms(&p, v)?)),
            RawEmpirical::File(f) => {
                let (resolved, v) =
                    super::latency_file::read(&p, files.dir, &f.file, f.column.as_deref())?;
                let values = v
                    .iter()
                    .map(|x| ticks(&format!("{p}.file"), *x))
                    .collect::<R<Vec<_>>>()?;
                let file = LatencyFile {
                    written: f.file.clone(),
                    path: resolved,
                };
                if !files.read.contains(&file) {
                    files.read.push(file);
                }
                Ok(Latency::Empirical(values))
            }
        };
    }
    if let Some(g) = &l.gamma {
        let p = format!("{path}.gamma");
        let shape = positive(&format!("{p}.shape"), g.shape)?;
        let scale_ms = match (g.mean_ms, g.scale_ms) {
            (Some(m), None) => positive(&format!("{p}.mean_ms"), m)? / shape,
            (None, Some(s)) => positive(&format!("{p}.scale_ms"), s)?,
            _ => return err(p, "give exactly one of `mean_ms` and `scale_ms`"),
        };
        return Ok(Latency::Gamma { shape, scale_ms });
    }
    if let Some(e) = &l.erlang {
        let p = format!("{path}.erlang");
        let k = count(&format!("{p}.k"), e.k, 1)? as f64;
        let mean = positive(&format!("{p}.mean_ms"), e.mean_ms)?;
        return Ok(Latency::Gamma {
            shape: k,
            scale_ms: mean / k,
        });
    }
    if let Some(w) = &l.weibull {
        let p = format!("{path}.weibull");
        let (shape, scale_ms) = match (w.shape, w.scale_ms, w.p50_ms, w.p99_ms) {
            (Some(k), Some(s), None, None) => (
                positive(&format!("{p}.shape"), k)?,
                positive(&format!("{p}.scale_ms"), s)?,
            ),
            (None, None, Some(p50), Some(p99)) => {
                let p50 = positive(&format!("{p}.p50_ms"), p50)?;
                let p99 = positive(&format!("{p}.p99_ms"), p99)?;
                let k = weibull_shape(&p, p50, p99)?;
                (k, p50 / 2f64.ln().powf(1.0 / k))
            }
            _ => {
                return err(
                    p,
                    "give either `shape` and `scale_ms`, or `p50_ms` and `p99_ms`",
                );
            }
        };
        return Ok(Latency::Weibull { shape, scale_ms });
    }
    if let Some(pa) = &l.pareto {
        let p = format!("{path}.pareto");
        let (shape, min_ms) = match (pa.shape, pa.min_ms, pa.p50_ms, pa.p99_ms) {
            (Some(a), Some(m), None, None) => (
                positive(&format!("{p}.shape"), a)?,
                positive(&format!("{p}.min_ms"), m)?,
            ),
            (None, None, Some(p50), Some(p99)) => {
                let p50 = positive(&format!("{p}.p50_ms"), p50)?;
                let p99 = positive(&format!("{p}.p99_ms"), p99)?;
                if p99 <= p50 {
                    return err(
                        format!("{p}.p99_ms"),
                        format!("must be > p50_ms (got {p99} <= {p50})"),
                    );
                }
                // p = x_m (1 - q)^(-1/alpha): p99 / p50 = 50^(1/alpha)
                let a = 50f64.ln() / (p99 / p50).ln();
                (a, p50 / 2f64.powf(1.0 / a))
            }
            _ => {
                return err(
                    p,
                    "give either `shape` and `min_ms`, or `p50_ms` and `p99_ms`",
                );
            }
        };
        if shape <= 1.0 {
            return err(
                format!("{p}.shape"),
                format!(
                    "must be > 1 for a finite mean (got {}); the mean is what waits are measured in",
                    crate::report::format_number(shape)
                ),
            );
        }
        return Ok(Latency::Pareto { shape, min_ms });
    }
    if let Some(e) = &l.exponential {
        return Ok(Latency::Exponential {
            mean_ms: positive(&format!("{path}.exponential.mean_ms"), e.mean_ms)?,
        });
    }
    if let Some(u) = &l.uniform {
        let min_ms = non_negative(&format!("{path}.uniform.min_ms"), u.min_ms)?;
        let max_ms = non_negative(&format!("{path}.uniform.max_ms"), u.max_ms)?;
        if max_ms < min_ms {
            return err(
                format!("{path}.uniform.max_ms"),
                format!("must be >= min_ms (got {max_ms} < {min_ms})"),
            );
        }
        return Ok(Latency::Uniform { min_ms, max_ms });
    }
    if let Some(ln) = &l.lognormal {
        let p = format!("{path}.lognormal");
        let p50 = positive(&format!("{p}.p50_ms"), ln.p50_ms)?;
        let sigma = match (ln.p99_ms, ln.sigma) {
            (Some(p99), None) => {
                let p99 = positive(&format!("{p}.p99_ms"), p99)?;
                if p99 < p50 {
                    return err(
                        format!("{p}.p99_ms"),
                        format!("must be >= p50_ms (got {p99} < {p50})"),
                    );
                }
                let sigma = (p99 / p50).ln() / Z99;
                if !sigma.is_finite() {
                    return err(
                        format!("{p}.p99_ms"),
                        format!(
                            "p99_ms / p50_ms = {p99:e} / {p50:e} overflows (the spread would be infinite): give a smaller ratio or `sigma`"
                        ),
                    );
                }
                sigma
            }
            (None, Some(s)) => non_negative(&format!("{p}.sigma"), s)?,
            _ => return err(p, "give exactly one of `p99_ms` and `sigma`"),
        };
        return Ok(Latency::LogNormal {
            mu: p50.ln(),
            sigma,
        });
    }
    let parts = l.mixture.as_deref().unwrap_or_default();
    let p = format!("{path}.mixture");
    if parts.is_empty() {
        return err(p, "needs at least one part");
    }
    let mut total = 0.0;
    let mut models = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        total += non_negative(&format!("{p}.{i}.weight"), part.weight)?;
        if !total.is_finite() {
            return err(
                format!("{p}.{i}.weight"),
                "the weights add up to more than a number can hold: scale them down (only their ratios matter)",
            );
        }
        models.push((
            total,
            latency(&format!("{p}.{i}.model"), &part.model, files)?,
        ));
    }
    if total <= 0.0 {
        return err(p, "the weights must add up to a positive number");
    }
    for m in &mut models {
        m.0 /= total;
    }
    Ok(Latency::Mixture(models))
}

fn limiter(path: &str, name: &str, l: &RawLimiter) -> R<Limiter> {
    let algorithm = one_of(
        &format!("{path}.algorithm"),
        l.algorithm.as_deref(),
        &[
            ("fixed-window", Algorithm::FixedWindow),
            ("sliding-log", Algorithm::SlidingLog),
            ("sliding-counter", Algorithm::SlidingCounter),
            ("token-bucket", Algorithm::TokenBucket),
            ("gcra", Algorithm::Gcra),
        ],
    )?;
    let key = l
        .key
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let fp = format!("{path}.key.{i}");
            one_of(
                &fp,
                Some(f),
                &[
                    ("client", Field::Client),
                    ("member", Field::Member),
                    ("route", Field::Route),
                    ("access", Field::Access),
                ],
            )
        })
        .collect::<R<Vec<_>>>()?;
    if let Some(i) = (1..key.len()).find(|&i| key[..i].contains(&key[i])) {
        return err(
            format!("{path}.key.{i}"),
            format!("`{}` is already in the key", key[i].name()),
        );
    }
    let mode = one_of(
        &format!("{path}.mode"),
        l.mode.as_deref(),
        &[
            ("reject", LimiterMode::Reject),
            ("throttle", LimiterMode::Throttle),
        ],
    )?;
    let refill = one_of(
        &format!("{path}.refill"),
        l.refill.as_deref(),
        &[
            ("continuous", Refill::Continuous),
            ("discrete", Refill::Discrete),
        ],
    )?;
    let overflow = one_of(
        &format!("{path}.overflow"),
        l.overflow.as_deref(),
        &[
            ("hold", Overflow::Hold),
            ("reject-now", Overflow::RejectNow),
        ],
    )?;
    Ok(Limiter {
        name: name.to_string(),
        algorithm,
        key,
        limit: count(&format!("{path}.limit"), l.limit, 1)?,
        window: ticks(
            &format!("{path}.window_ms"),
            positive(&format!("{path}.window_ms"), l.window_ms)?,
        )?,
        mode,
        max_delay: ticks(
            &format!("{path}.max_delay_ms"),
            l.max_delay_ms.unwrap_or(0.0),
        )?,
        refill,
        overflow,
    })
}

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
fn unowned_routes(w: &RawWorkload, routes: &mut Vec<Route>) -> R<()> {
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

fn workload(w: &RawWorkload, routes: &[Route], has_gateway: bool) -> R<Workload> {
    let p = "workload";
    Ok(match w {
        RawWorkload::Sequence {
            requests,
            route,
            access,
            client,
            member,
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
                        vec![super::validate::route(
                            &format!("{gp}.routes"),
                            route.as_deref(),
                            routes,
                        )?]
                    } else {
                        gr.routes
                            .iter()
                            .enumerate()
                            .map(|(i, r)| {
                                super::validate::route(&format!("{gp}.routes.{i}"), Some(r), routes)
                            })
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

fn analysis(a: &RawAnalysis) -> R<Analysis> {
    let error_budget = match &a.error_budget {
        None => None,
        Some(e) => {
            let p = "analysis.error_budget";
            let budget_minutes = positive(&format!("{p}.budget_minutes"), e.budget_minutes)?;
            for (i, (m, n)) in e.incidents.iter().enumerate() {
                non_negative(&format!("{p}.incidents.{i}.0"), *m)?;
                non_negative(&format!("{p}.incidents.{i}.1"), *n)?;
            }
            Some(ErrorBudget {
                budget_minutes,
                incidents: e.incidents.clone(),
            })
        }
    };
    let acceptance = match a.acceptance {
        Some(x) if !(x > 0.0 && x <= 1.0) => {
            return err(
                "analysis.acceptance",
                format!("must be in (0, 1] (got {x})"),
            );
        }
        x => x,
    };
    for (i, r) in a.p95_rules_rounds.iter().flatten().enumerate() {
        non_negative(&format!("analysis.p95_rules_rounds.{i}"), *r)?;
    }
    Ok(Analysis {
        error_budget,
        active_members: a
            .active_members
            .map(|n| count("analysis.active_members", n, 1))
            .transpose()?,
        acceptance,
        p95_rules_rounds: a.p95_rules_rounds.clone().unwrap_or_default(),
        throughput_rule: a.throughput_rule.unwrap_or(false),
    })
}

/// Runaway protection before the run: every request the workload sends costs at
/// least one event (its arrival), so a workload that sends more requests than
/// `scenario.max_events` can never finish. Refusing it here answers at once instead
/// of after a billion events.
fn check_event_budget(w: &Workload, limits: &RunLimits) -> R<()> {
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
            e.message.contains("no dependency named `bb`"),
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
}
