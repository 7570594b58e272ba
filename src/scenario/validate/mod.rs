//! Raw scenario -> model: names resolved, units converted to ticks, every value
//! checked, with errors that name the key path and suggest the closest valid name.
//!
//! One file per section of the scenario file, mirroring `raw.rs`: [`meta`]
//! (`[scenario]` limits, `[slo]`, `[analysis]`, `[montecarlo]`, `[thresholds]`),
//! [`services`] (`[gateway]`, `[dependencies]`, routes, `[services]` and their
//! handlers), [`latency`] (latency models), [`limiters`] and [`workload`]. Sections
//! that need what others validated get it through a [`Ctx`]; the order of the
//! checks (and so which error a file with several gets) is the order below.

mod balance;
mod faults;
mod latency;
mod limiters;
mod meta;
pub(crate) use meta::DEFAULT_MAX_EVENTS;
mod outlier;
pub use outlier::MIN_INTERVAL_MS as MIN_OUTLIER_INTERVAL_MS;
mod plan_links;
mod policies;
mod services;
pub(crate) use services::MAX_CALL_DEPTH;
mod workload;

pub(crate) use faults::share_series_rows;
pub(crate) use latency::latency;

use super::raw::*;
use crate::engine::Ticks;
use crate::error::{ScenarioError, did_you_mean, list, num};
use crate::kinds::check::{choice, finite, non_negative, positive, positive_ticks, ticks};
use crate::model::*;

type R<T> = Result<T, ScenarioError>;

fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> R<T> {
    Err(ScenarioError::new(path, msg))
}

/// An error at `path` found by comparing its value with the one at `other`.
fn err_vs<T>(path: impl Into<String>, other: impl Into<String>, msg: impl Into<String>) -> R<T> {
    Err(ScenarioError::new(path, msg).related(other))
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

/// Every name the scenario gives (and every text that reaches a table, a CSV
/// cell or the terminal) is refused when it holds a control character (NUL,
/// ESC and the rest of C0 and C1, DEL) or a bidirectional control (U+202E
/// RIGHT-TO-LEFT OVERRIDE and its kin): such text could rewrite the terminal it
/// is printed on, or show a name in another order than it is written. `allowed`
/// lists characters the text may hold anyway (line breaks in `scenario.about`).
pub(crate) fn plain_text(path: &str, text: &str, allowed: &[char]) -> R<()> {
    if let Some(c) = text
        .chars()
        .find(|c| crate::error::is_hidden_char(*c) && !allowed.contains(c))
    {
        return err(
            path,
            format!(
                "holds U+{:04X} ({}): names and labels may not hold control characters, bidirectional controls or NUL, which would reach the terminal, the CSV files and the report",
                u32::from(c),
                crate::error::hidden_char_name(c)
            ),
        );
    }
    Ok(())
}

/// Names of one namespace that differ as written but are equal after Unicode
/// NFC normalisation (`é` written as one character or as `e` and a combining
/// accent) look the same everywhere they are shown, so the second is refused.
/// `names` are (key path, name) pairs in file order.
pub(crate) fn distinct_looking<'a>(names: impl IntoIterator<Item = (String, &'a str)>) -> R<()> {
    use unicode_normalization::UnicodeNormalization;
    let mut seen: std::collections::HashMap<String, (String, &str)> =
        std::collections::HashMap::new();
    let spelt = |s: &str| -> String {
        s.chars()
            .map(|c| match c.is_ascii() {
                true => c.to_string(),
                false => format!("\\u{{{:04X}}}", u32::from(c)),
            })
            .collect()
    };
    for (path, name) in names {
        if name.is_ascii() {
            continue;
        }
        let key: String = name.nfc().collect();
        match seen.get(&key) {
            Some((first, other)) if *other != name => {
                return err(
                    path,
                    format!(
                        "the name `{name}` looks the same as `{other}` ({first}) but is written with other characters (`{}` and `{}`: the same letters, composed and decomposed): tables and messages could not tell them apart, so write both alike or rename one",
                        spelt(name),
                        spelt(other)
                    ),
                );
            }
            Some(_) => {}
            None => {
                seen.insert(key, (path, name));
            }
        }
    }
    Ok(())
}

/// A name that reaches CSV cells or headers (service, dependency, limiter,
/// variant, branch, client, member). One starting like a formula would be run by
/// a spreadsheet that opens the CSV (formula injection), so it is refused; the
/// default label `-` alone stays valid. So is one holding a control character
/// ([`plain_text`]).
pub(crate) fn csv_name(path: &str, name: &str) -> R<()> {
    plain_text(path, name, &[])?;
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
    /// Latency models drawn from files whose tails are thin.
    pub thin: Vec<ThinTail>,
}

/// Names of one kind, looked up by hash (a linear search made large files
/// quadratic), in declaration order.
pub(super) struct Names<'a> {
    kind: &'static str,
    names: Vec<&'a str>,
    index: std::collections::HashMap<&'a str, usize>,
}

impl<'a> Names<'a> {
    fn new(kind: &'static str, names: impl Iterator<Item = &'a String>) -> Names<'a> {
        let names: Vec<&str> = names.map(String::as_str).collect();
        let index = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        Names { kind, names, index }
    }

    /// The index of `name`, if it is one.
    pub fn get(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The names, in declaration order.
    pub fn all(&self) -> &[&'a str] {
        &self.names
    }

    /// The index of `name`, or an error at `path` naming the kind and the closest.
    pub fn resolve(&self, path: &str, name: &str) -> R<usize> {
        match self.index.get(name) {
            Some(&i) => Ok(i),
            None => resolve(path, self.kind, name, &self.names),
        }
    }
}

/// What sections validated earlier hand to the later ones.
pub(super) struct Ctx<'a> {
    pub raw: &'a RawScenario,
    pub limiter_names: Names<'a>,
    pub dependency_names: Names<'a>,
    pub service_names: Names<'a>,
    pub slo: Slo,
    pub gateway: Option<Gateway>,
    pub dependencies: Vec<Dependency>,
}

impl<'a> Ctx<'a> {
    /// Service `s` as written: its name and keys.
    pub fn raw_service(&self, s: usize) -> (&'a str, &'a RawService) {
        let (name, svc) = self
            .raw
            .services
            .get_index(s)
            .expect("a resolved service index");
        (name.as_str(), svc)
    }
}

/// Validates a scenario whose latency files (if any) are relative to `dir`.
pub fn validate(raw: &RawScenario, dir: &std::path::Path) -> R<Model> {
    let mut files = Files {
        dir,
        read: Vec::new(),
        thin: Vec::new(),
    };
    let files = &mut files;
    check_names(raw)?;
    check_names_given(raw)?;
    check_separators(raw)?;
    let limits = meta::limits(&raw.scenario)?;
    let slo = meta::slo(&raw.slo)?;
    let mut limiters = limiters::limiters(raw, &limits)?;
    let limiter_names = Names::new("limiter", raw.limiters.keys());
    let gateway = services::gateway(raw, &limiter_names)?;
    let dependencies = services::dependencies(raw, files)?;
    let policies = policies::policies(raw)?;
    let ctx = Ctx {
        raw,
        limiter_names,
        dependency_names: Names::new("dependency", raw.dependencies.keys()),
        service_names: Names::new("service", raw.services.keys()),
        slo,
        gateway,
        dependencies,
    };
    let (mut routes, routes_of) = services::routes(raw)?;
    let services = services::services(raw, routes_of, &ctx, files)?;
    services::check_call_graph(&services)?;
    services::check_replicas(&services, &ctx.dependencies)?;
    limiters::scopes(raw, &mut limiters, ctx.gateway.as_ref(), &services)?;
    let workloads = workload::workloads(raw, &mut routes, ctx.gateway.is_some(), &limits, files)?;
    let workload = workloads[0].workload.clone();
    services::check_deadlines(&services, workloads.iter().map(|w| &w.workload))?;
    workload::check_zero_time_loops(
        &workloads,
        raw,
        &services,
        &ctx.dependencies,
        ctx.gateway.as_ref(),
        &routes,
    )?;
    let analysis = meta::analysis(&raw.analysis)?;
    let montecarlo = meta::montecarlo(raw.montecarlo.as_ref())?;
    let thresholds = meta::thresholds(raw)?;
    let faults = faults::faults(raw, &ctx, &services, &workloads, &limits)?;
    faults::check_arrival_budget(&faults, &workloads, &limits)?;
    let (warmup, window) = faults::time(raw, &limits)?;
    faults::check_warmup(warmup, &workloads)?;
    let Ctx {
        slo,
        gateway,
        dependencies,
        ..
    } = ctx;
    let model = Model {
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
        thin_tails: std::mem::take(&mut files.thin),
        thresholds,
        policies,
        faults,
        warmup,
        window,
        workloads,
    };
    faults::check_series_rows(&model)?;
    Ok(model)
}

/// Every name a user gives is given (not empty: an empty dependency made a CSV
/// header `failed_`), and the branches of one plan are named apart (two of one
/// name gave rows no reader could tell apart).
fn check_names_given(raw: &RawScenario) -> R<()> {
    let empty = |path: String| {
        err(
            path,
            "a name must not be empty: it names the thing in the tables and in key paths",
        )
    };
    let keys = [
        ("services", raw.services.keys().collect::<Vec<_>>()),
        ("dependencies", raw.dependencies.keys().collect()),
        ("limiters", raw.limiters.keys().collect()),
        ("policies", raw.policies.keys().collect()),
        ("workloads", raw.workloads.keys().collect()),
        ("variants", raw.variants.keys().collect()),
    ];
    for (section, names) in keys {
        if names.iter().any(|n| n.is_empty()) {
            return empty(format!("{section}.\"\""));
        }
    }
    for (sname, svc) in &raw.services {
        let branches = match &svc.handler {
            Some(RawHandler::Plan { branches, .. }) => branches.as_slice(),
            Some(RawHandler::Server {
                branches: Some(branches),
                ..
            }) => branches.as_slice(),
            _ => continue,
        };
        let path = |b: usize| format!("services.{sname}.handler.branches.{b}.name");
        let mut seen: std::collections::HashMap<&str, usize> = Default::default();
        for (b, br) in branches.iter().enumerate() {
            if br.name.is_empty() {
                return empty(path(b));
            }
            if let Some(first) = seen.insert(br.name.as_str(), b) {
                return err(
                    path(b),
                    format!(
                        "branch `{}` is named twice in this plan ({} and {}): its rows in the tables could not be told apart; rename one",
                        br.name,
                        path(first),
                        path(b)
                    ),
                );
            }
        }
    }
    for (_, p, w) in workload::written(raw)? {
        let (client, member) = match w {
            RawWorkload::Sequence { client, member, .. }
            | RawWorkload::Open { client, member, .. }
            | RawWorkload::Closed { client, member, .. }
            | RawWorkload::Ladder { client, member, .. }
            | RawWorkload::Probe { client, member, .. }
            | RawWorkload::Script { client, member, .. } => (client, member),
        };
        for (key, v) in [("client", client), ("member", member)] {
            if v.as_deref() == Some("") {
                return empty(format!("{p}.{key}"));
            }
        }
        if let RawWorkload::Script { groups, .. } = w {
            for (g, gr) in groups.iter().enumerate() {
                for (key, v) in [("client", &gr.client), ("member", &gr.member)] {
                    if v.as_deref() == Some("") {
                        return empty(format!("{p}.groups.{g}.{key}"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The characters resim joins names with, to name a replica (`NAME#2`, in fault
/// targets and random streams) and random streams (`dependency:NAME:errors`,
/// `workloads.NAME/think`), refused in the names they join: a service named
/// `b#2` drew replica 2 of `b`'s stream, and a fault on it hit that replica.
fn check_separators(raw: &RawScenario) -> R<()> {
    let why = |c: char| match c {
        '#' => {
            "names a replica (`NAME#2` is replica 2 of NAME, in fault targets and random streams)"
        }
        _ => "joins names into the names of random streams, so two names could draw one stream",
    };
    let sections: [(&str, Vec<&String>, &[char]); 4] = [
        ("services", raw.services.keys().collect(), &['#', ':']),
        (
            "dependencies",
            raw.dependencies.keys().collect(),
            &['#', ':'],
        ),
        ("policies", raw.policies.keys().collect(), &[':']),
        ("workloads", raw.workloads.keys().collect(), &[':', '/']),
    ];
    for (section, names, refused) in sections {
        for name in names {
            if let Some(c) = name.chars().find(|c| refused.contains(c)) {
                return err(
                    format!("{section}.{name}"),
                    format!("the name `{name}` holds `{c}`, which {}: rename it", why(c)),
                );
            }
        }
    }
    Ok(())
}

/// Every name that reaches a CSV cell or header is safe to open in a spreadsheet
/// and to print; names of one namespace do not merely look alike.
fn check_names(raw: &RawScenario) -> R<()> {
    plain_text("scenario.name", &raw.scenario.name, &[])?;
    if let Some(about) = &raw.scenario.about {
        plain_text("scenario.about", about, &['\n', '\t'])?;
    }
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
    for (section, names) in [
        ("policies", raw.policies.keys().collect::<Vec<_>>()),
        ("workloads", raw.workloads.keys().collect()),
    ] {
        for name in names {
            plain_text(&format!("{section}.{name}"), name, &[])?;
        }
    }
    // calls name services and dependencies alike: one namespace
    distinct_looking(
        raw.services
            .keys()
            .map(|n| (format!("services.{n}"), n.as_str()))
            .chain(
                raw.dependencies
                    .keys()
                    .map(|n| (format!("dependencies.{n}"), n.as_str())),
            ),
    )?;
    for (section, names) in [
        ("limiters", raw.limiters.keys().collect::<Vec<_>>()),
        ("policies", raw.policies.keys().collect()),
        ("workloads", raw.workloads.keys().collect()),
    ] {
        distinct_looking(
            names
                .into_iter()
                .map(|n| (format!("{section}.{n}"), n.as_str())),
        )?;
    }
    for (sname, svc) in &raw.services {
        for (i, route) in svc.routes.iter().enumerate() {
            plain_text(&format!("services.{sname}.routes.{i}"), route, &[])?;
        }
        let branches = match &svc.handler {
            Some(RawHandler::Plan { branches, .. }) => branches.as_slice(),
            Some(RawHandler::Server {
                branches: Some(branches),
                ..
            }) => branches.as_slice(),
            _ => &[],
        };
        for (b, br) in branches.iter().enumerate() {
            csv_name(
                &format!("services.{sname}.handler.branches.{b}.name"),
                &br.name,
            )?;
        }
        distinct_looking(branches.iter().enumerate().map(|(b, br)| {
            (
                format!("services.{sname}.handler.branches.{b}.name"),
                br.name.as_str(),
            )
        }))?;
    }
    let labels = |client: &Option<String>, member: &Option<String>, at: &str| -> R<()> {
        for (key, v) in [("client", client), ("member", member)] {
            if let Some(v) = v {
                csv_name(&format!("{at}.{key}"), v)?;
            }
        }
        Ok(())
    };
    for (_, p, w) in workload::written(raw)? {
        match w {
            RawWorkload::Sequence { client, member, .. }
            | RawWorkload::Open { client, member, .. }
            | RawWorkload::Closed { client, member, .. }
            | RawWorkload::Ladder { client, member, .. }
            | RawWorkload::Probe { client, member, .. } => labels(client, member, &p)?,
            RawWorkload::Script {
                client,
                member,
                groups,
                ..
            } => {
                labels(client, member, &p)?;
                for (g, gr) in groups.iter().enumerate() {
                    labels(&gr.client, &gr.member, &format!("{p}.groups.{g}"))?;
                }
            }
        }
    }
    Ok(())
}
