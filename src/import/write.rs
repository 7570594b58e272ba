//! The system the traces describe, written as a scenario file, its data files
//! (one CSV of measured milliseconds per service and dependency, read with
//! `{ empirical = { file, column } }`) and the sections of the import report.
//!
//! Every service whose spans are in the traces and that calls others (or
//! that requests arrive at) is a `server` with as many slots as it ever
//! needs (1,000,000: the traces measured the own times under the load they
//! had, queueing included, so the scenario does not queue them again; the
//! report gives the concurrency seen, to set real slots from), its own time
//! as its service time, then its calls (`budget = "none"`: the traces carry
//! no deadlines). A leaf is a dependency: its latency is its spans' lengths
//! (or, named only by its callers, the callers' client spans'), its
//! `error_rate` the share that failed. Each entry point is an open workload
//! (Poisson arrivals) at the rate measured, for the traced interval.

use super::infer::{Callee, MAX_REPEAT};
use super::layout::{
    DependencyOut, MIN_ARRIVALS, MIN_INTERVAL_NS, PlanCall, ServiceOut, System, percentile_ms,
};
use super::report::{Section, Table};
use super::spans::{Interner, Sym};
use super::{FIT_ABOVE, Tail};
use crate::model::ThinTail;
use crate::scenario::tail::{above, fit};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// Slots of an imported server: more than it ever has work at once.
pub const SLOTS: u32 = 1_000_000;

/// The scenario's text, its data files and the report's sections.
pub struct Written {
    pub toml: String,
    /// Data files: (name in the data folder, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    pub sections: Vec<Section>,
    /// One line each: what was built.
    pub summary: Vec<String>,
    /// What was changed or left out.
    pub warnings: Vec<String>,
}

/// What `write` needs to know beyond the system.
pub struct Context<'a> {
    pub strings: &'a Interner,
    /// The scenario's file stem, and its data folder (relative to it).
    pub stem: &'a str,
    pub data_dir: &'a str,
    /// The inputs, traces and spans, for the header.
    pub inputs: &'a str,
    pub traces: u64,
    pub spans: u64,
    /// `--sample-rate` and `--tail`.
    pub sample_rate: Option<f64>,
    pub tail: Tail,
}

/// A row of strings.
macro_rules! row {
    ($($e:expr),* $(,)?) => { vec![$($e.to_string()),*] };
}

/// Names as the scenario writes them: control characters and the
/// characters the loader refuses in the namespace (`refused`) replaced, a
/// formula start guarded, Unicode in NFC, each unique.
#[derive(Default)]
struct Namer {
    used: HashSet<String>,
    renamed: Vec<(String, String)>,
    refused: &'static [char],
}

/// What the loader refuses in service and dependency names: `#` names a
/// replica (`NAME#2`), `:` joins names into random streams' names.
const SERVICE_REFUSED: &[char] = &['#', ':'];

/// What the loader refuses in workload names (joined into random streams'
/// names with `:` and `/`).
const WORKLOAD_REFUSED: &[char] = &[':', '/'];

impl Namer {
    fn name(&mut self, raw: &str) -> String {
        use unicode_normalization::UnicodeNormalization;
        let mut s: String = raw
            .nfc()
            .map(|c| {
                if crate::error::is_hidden_char(c) || self.refused.contains(&c) {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        if s.trim().is_empty() {
            s = "unnamed".into();
        }
        if s.starts_with(['=', '+', '-', '@']) {
            s.insert(0, '_');
        }
        let s = unique(s, |s| self.used.contains(s));
        self.used.insert(s.clone());
        if s != raw {
            self.renamed.push((raw.to_string(), s.clone()));
        }
        s
    }
}

/// `base`, or `base-2`, `base-3`... the first that is not `taken`.
fn unique(base: String, taken: impl Fn(&str) -> bool) -> String {
    let mut s = base.clone();
    for k in 2.. {
        if !taken(&s) {
            break;
        }
        s = format!("{base}-{k}");
    }
    s
}

/// A file name for `name`: letters, digits, `.`, `_` and `-` kept, the rest
/// `_`, unique without regard to case.
fn file_name(name: &str, used: &mut HashSet<String>) -> String {
    let ok = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    let mut s: String = name
        .chars()
        .take(80)
        .map(|c| if ok(c) { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    let s = unique(s, |s| used.contains(&s.to_lowercase()));
    used.insert(s.to_lowercase());
    format!("{s}.csv")
}

/// A TOML string (quoted, escaped).
pub fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML key: bare when it may be, else quoted.
pub fn key(s: &str) -> String {
    let bare = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { s.to_string() } else { quoted(s) }
}

/// A number for the scenario file: six significant digits, trimmed.
fn number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    if x.abs() >= 1e15 {
        // a TOML integer holds 64 bits: large values as floats
        let s = format!("{x:.5e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}e{e}");
    }
    let digits = (5 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A CSV of one column of milliseconds, exact (at most six decimals).
fn csv_column(column: &str, values: &[i64]) -> Vec<u8> {
    let mut out = format!("{column}\n");
    for &v in values {
        let (w, f) = (v.max(0) / 1_000_000, v.max(0) % 1_000_000);
        match f {
            0 => writeln!(out, "{w}"),
            _ => writeln!(out, "{}", format!("{w}.{f:06}").trim_end_matches('0')),
        }
        .ok();
    }
    out.into_bytes()
}

/// A share as a percentage for the report.
fn pct(part: u64, of: u64) -> String {
    if of == 0 {
        String::new()
    } else {
        format!("{:.2} %", 100.0 * part as f64 / of as f64)
    }
}

/// The value at `q` of sorted ns `v`, in ms for the report ("" for none).
fn at(v: &[i64], q: f64) -> String {
    percentile_ms(v, q)
        .map(|x| format!("{x:.3}"))
        .unwrap_or_default()
}

/// The mean of ns `v`, in ms for the report.
fn mean(v: &[i64]) -> String {
    if v.is_empty() {
        String::new()
    } else {
        format!(
            "{:.3}",
            v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64 / 1e6
        )
    }
}

/// The writer's state: the scenario's text, its files, and what the
/// report's tables collect on the way.
struct W<'a> {
    cx: &'a Context<'a>,
    sys: &'a System,
    t: String,
    files: Vec<(String, Vec<u8>)>,
    used: HashSet<String>,
    names: HashMap<Sym, String>,
    warnings: Vec<String>,
    measured: Table,
    tails: Table,
}

impl W<'_> {
    fn name(&self, s: Sym) -> String {
        self.names
            .get(&s)
            .cloned()
            .unwrap_or_else(|| self.cx.strings.name(s).to_string())
    }

    /// `KEY = { empirical = { file, column } }` for `name`'s sorted ns `v`
    /// (`fit_tail_above` with `--tail fit` when a tail fits; a constant 0 to
    /// set when none was measured), its data file, and its tails row.
    fn measured(&mut self, key: &str, column: &str, v: &[i64], name: &str) -> String {
        let file = file_name(name, &mut self.used);
        self.files.push((file.clone(), csv_column(column, v)));
        let path = format!("{}/{file}", self.cx.data_dir);
        if v.is_empty() {
            self.warnings.push(format!("{name}: none of its spans (or calls) had an end: no time was measured, `{key} = {{ constant = 0 }}` is written; set it"));
            return format!("{key} = {{ constant = 0 }} # set me: no value was measured\n");
        }
        let mut row = row![name, v.len(), above(v.len(), 0.99), above(v.len(), 0.999)];
        let ms: Vec<f64> = v.iter().map(|&x| x as f64 / 1e6).collect();
        let mut extra = String::new();
        match (self.cx.tail == Tail::Fit).then(|| fit(&ms, FIT_ABOVE)) {
            None => row.push("as measured".into()),
            Some(Err(why)) => row.push(format!("as measured: not fitted ({why})")),
            Some(Ok(f)) => {
                extra = format!(", fit_tail_above = {FIT_ABOVE}");
                row.extend(row![
                    format!("fitted above {FIT_ABOVE}"),
                    format!("{:.3}", f.threshold_ms),
                    f.exceedances
                ]);
                row.extend([f.shape, f.scale_ms, f.ks, f.p_value()].map(|x| format!("{x:.3}")));
            }
        }
        row.resize(11, String::new());
        self.tails.push(row);
        format!(
            "{key} = {{ empirical = {{ file = {}, column = {}{extra} }} }}\n",
            quoted(&path),
            quoted(column)
        )
    }

    /// `replicas = N` when its spans named more than one instance.
    fn replicas(&mut self, n: usize) {
        if n > 1 {
            writeln!(self.t, "# {n} instances named in its spans (service.instance.id, k8s.pod.name or host.name)\nreplicas = {n}").ok();
        }
    }

    fn service(&mut self, s: &ServiceOut, routes: &[String]) {
        let name = self.names[&s.sym].clone();
        let mine: Vec<String> = self
            .sys
            .entries
            .iter()
            .zip(routes)
            .filter(|(e, _)| e.service == s.sym)
            .map(|(_, r)| quoted(r))
            .collect();
        writeln!(self.t, "\n[services.{}]", key(&name)).ok();
        self.replicas(s.replicas);
        if !mine.is_empty() {
            writeln!(self.t, "routes = [{}]", mine.join(", ")).ok();
        }
        let (p50, p99) = (at(&s.own, 0.5), at(&s.own, 0.99));
        writeln!(self.t, "# own time: p50 {p50} ms, p99 {p99} ms over {} spans; at most {} at once in the traces", s.own.len(), s.peak).ok();
        writeln!(
            self.t,
            "[services.{}.handler]\ntype = \"server\"\nslots = {SLOTS}\nqueue = 0",
            key(&name)
        )
        .ok();
        let line = self.measured("service", "own_ms", &s.own, &name);
        self.t.push_str(&line);
        if !s.plan.is_empty() {
            self.t.push_str("budget = \"none\"\nbranches = [\n");
            for (b, branch) in s.plan.iter().enumerate() {
                let calls: Vec<String> = branch.calls.iter().map(|c| self.call(c)).collect();
                let after: Vec<String> = branch
                    .after
                    .iter()
                    .map(|a| format!("\"b{}\"", a + 1))
                    .collect();
                let after = if after.is_empty() {
                    String::new()
                } else {
                    format!(", after = [{}]", after.join(", "))
                };
                writeln!(
                    self.t,
                    "  {{ name = \"b{}\"{after}, calls = [{}] }},",
                    b + 1,
                    calls.join(", ")
                )
                .ok();
            }
            self.t.push_str("]\n");
        }
        let kind = if mine.is_empty() {
            "service"
        } else {
            "service (entry)"
        };
        let busy = s.mean_busy.map(|m| format!("{m:.2}")).unwrap_or_default();
        let file = format!(
            "{}/{}",
            self.cx.data_dir,
            self.files.last().map_or("", |f| f.0.as_str())
        );
        self.measured.push(row![
            name,
            kind,
            s.handling,
            p50,
            p99,
            mean(&s.own),
            pct(s.errors, s.handling),
            pct(s.own_errors, s.handling),
            s.peak,
            busy,
            file
        ]);
        if s.own_errors > 0 {
            self.warnings.push(format!("services.{name}: {} of {} spans ({}) failed with none of their calls failing (its own errors); a server has no error rate of its own in resim, so the scenario leaves them out (add an `error_rate` fault on it to bring them back)", s.own_errors, s.handling, pct(s.own_errors, s.handling)));
        }
        if s.capped > 0 {
            self.warnings.push(format!("services.{name}: {} spans made more than {MAX_REPEAT} calls to one callee; the plan holds the first {MAX_REPEAT}", s.capped));
        }
    }

    /// `"b"` or `{ to = "b", probability = 0.3, wait = false, if_ok = "b1" }`.
    fn call(&self, c: &PlanCall) -> String {
        let to = quoted(&self.name(c.callee.sym()));
        let mut keys = String::new();
        let p = number(c.probability);
        if p != "1" && c.probability < 1.0 {
            keys += &format!(", probability = {}", if p == "0" { "0.000001" } else { &p });
        }
        if !c.wait {
            keys += ", wait = false";
        }
        if let Some(x) = c.if_ok {
            keys += &format!(", if_ok = \"b{}\"", x + 1);
        }
        if keys.is_empty() {
            to
        } else {
            format!("{{ to = {to}{keys} }}")
        }
    }

    fn dependency(&mut self, d: &DependencyOut) {
        let name = self.names[&d.callee.sym()].clone();
        writeln!(self.t, "\n[dependencies.{}]", key(&name)).ok();
        self.replicas(d.replicas);
        let (own, whose) = match d.callee {
            Callee::Service(_) => ("spans of its own", "dependency (its spans)"),
            Callee::Peer(_) => (
                "client spans of its callers",
                "dependency (named by callers)",
            ),
        };
        let (p50, p99) = (at(&d.latency, 0.5), at(&d.latency, 0.99));
        writeln!(
            self.t,
            "# latency: p50 {p50} ms, p99 {p99} ms over {} {own}",
            d.latency.len()
        )
        .ok();
        let line = self.measured("latency", "latency_ms", &d.latency, &name);
        self.t.push_str(&line);
        if d.errors > 0 && d.calls > 0 {
            writeln!(
                self.t,
                "error_rate = {}",
                number(d.errors as f64 / d.calls as f64)
            )
            .ok();
        }
        let file = format!(
            "{}/{}",
            self.cx.data_dir,
            self.files.last().map_or("", |f| f.0.as_str())
        );
        let e = pct(d.errors, d.calls);
        self.measured.push(row![
            name,
            whose,
            d.calls,
            p50,
            p99,
            mean(&d.latency),
            e,
            e,
            "",
            "",
            file
        ]);
    }

    /// Each entry point's route, unique across services: its `http.route`, or
    /// its span name (`GET /orders` names `/orders`).
    fn routes(&self) -> Vec<String> {
        let mut used: HashSet<String> = HashSet::new();
        let mut out = Vec::new();
        for e in &self.sys.entries {
            let raw = self.cx.strings.name(e.route);
            let mut r: String = raw
                .chars()
                .map(|c| {
                    if crate::error::is_hidden_char(c) {
                        '_'
                    } else {
                        c
                    }
                })
                .collect();
            if !r.starts_with('/') {
                match r.find(" /") {
                    Some(at) => r = r[at + 1..].to_string(),
                    None => r.insert(0, '/'),
                }
            }
            if used.contains(&r) {
                r = format!("/{}{r}", self.name(e.service));
            }
            let r = unique(r, |r| used.contains(r));
            used.insert(r.clone());
            out.push(r);
        }
        out
    }

    /// The workloads, and the report's table of entry points.
    fn workloads(&mut self, routes: &[String]) -> Table {
        let several = self.sys.entries.len() > 1;
        let mut table = Table::of(
            "workload|service|route|arrivals|requests they stand for|rate rps|kind|parent outside the file",
        );
        let mut names = Namer {
            refused: WORKLOAD_REFUSED,
            ..Namer::default()
        };
        names.used.insert("all".into());
        let interval = number(self.sys.interval_ns as f64 / 1e6);
        for (e, route) in self.sys.entries.iter().zip(routes) {
            let service = self.name(e.service);
            let workload = match several {
                true => names.name(&format!(
                    "{service}{}",
                    route.replace('/', "-").trim_end_matches('-')
                )),
                false => "main".into(),
            };
            let too_few = format!(
                "{} arrivals over {interval} ms are too few for a rate (at least {MIN_ARRIVALS} over at least {} ms)",
                e.arrivals,
                MIN_INTERVAL_NS / 1_000_000
            );
            let header = if several {
                format!("[workloads.{}]", key(&workload))
            } else {
                "[workload]".into()
            };
            let entered = if e.entered > 0 {
                format!(
                    " ({} at server spans whose parent is not in the file)",
                    e.entered
                )
            } else {
                String::new()
            };
            let stand = if (e.weight - e.arrivals as f64).abs() > 1e-9 {
                format!(" standing for {} requests", number(e.weight))
            } else {
                String::new()
            };
            let message = if e.asynchronous {
                " (asynchronous: messages consumed, made a workload of their own)"
            } else {
                ""
            };
            writeln!(self.t, "\n{header}\n# {} arrivals{entered}{stand} over {interval} ms{message}\ntype = \"open\"\nroute = {}\naccess = \"direct\"", e.arrivals, quoted(route)).ok();
            match e.rate_rps {
                Some(rate) => writeln!(self.t, "rate_rps = {}", number(rate)),
                None => {
                    self.warnings.push(format!("route {route} of {service}: {too_few}: rate_rps = 1 is written, marked `# set me`; set it"));
                    writeln!(self.t, "rate_rps = 1 # set me: {too_few}")
                }
            }
            .ok();
            // the placeholder rate of 1 rps over traces spanning decades (a
            // span with a time near 1970) would send more than a run may
            let placeholder_fits = e.rate_rps.is_some()
                || (self.sys.interval_ns as f64 / 1e9)
                    <= crate::scenario::validate::DEFAULT_MAX_EVENTS as f64;
            match self.sys.interval_ns >= MIN_INTERVAL_NS && placeholder_fits {
                true => writeln!(self.t, "duration_ms = {interval}"),
                false => writeln!(
                    self.t,
                    "duration_ms = 1000 # set me: the traces span {interval} ms"
                ),
            }
            .ok();
            let kind = if e.asynchronous {
                "asynchronous (consumer)"
            } else {
                "request"
            };
            let rate = e.rate_rps.map(number).unwrap_or_default();
            table.push(row![
                if several { &workload } else { "workload" },
                service,
                route,
                e.arrivals,
                number(e.weight),
                rate,
                kind,
                e.entered
            ]);
        }
        table
    }

    /// The report's table of edges (warning of each cut).
    fn calls(&mut self) -> Table {
        let mut table = Table::of(
            "caller|callee|calls|caller spans|spans calling|calls per span|errors|with callee span|network p50 ms|network p99 ms|in the scenario",
        );
        for e in &self.sys.edges {
            let (caller, callee, a) = (self.name(e.caller), self.name(e.callee.sym()), &e.acc);
            let status = match &e.cut {
                Some(cycle) => {
                    let path: Vec<&str> = cycle.iter().map(|&s| self.cx.strings.name(s)).collect();
                    let path = path.join(" -> ");
                    self.warnings.push(format!("the call {caller} -> {callee} ({} calls) is left out: it closes the cycle {path}, and a call graph resim runs has none", a.calls));
                    format!("left out: closes the cycle {path}")
                }
                None if self.sys.services.iter().any(|s| s.sym == e.caller) => "yes".into(),
                None => "no: the caller is not reached from an entry point".into(),
            };
            let per = if e.of > 0 {
                format!("{:.4}", a.calls as f64 / e.of as f64)
            } else {
                String::new()
            };
            let (network, errors) = (
                (at(&e.network, 0.5), at(&e.network, 0.99)),
                pct(a.errors, a.calls),
            );
            let row = row![
                caller,
                callee,
                a.calls,
                e.of,
                a.parents,
                per,
                errors,
                a.with_server,
                network.0,
                network.1,
                status
            ];
            table.push(row);
        }
        table
    }

    /// The report's table of plans, and its text (pairs the spans did not
    /// agree on).
    fn plans(&self) -> (Table, Vec<String>) {
        let mut table =
            Table::of("service|branch|after|order|callee|call|probability|if ok|wait|fan-out");
        for s in &self.sys.services {
            let calls: Vec<&PlanCall> = s.plan.iter().flat_map(|b| &b.calls).collect();
            for (b, branch) in s.plan.iter().enumerate() {
                let after: Vec<String> =
                    branch.after.iter().map(|a| format!("b{}", a + 1)).collect();
                for (i, c) in branch.calls.iter().enumerate() {
                    // every span made N calls: `count N`
                    let all: Vec<_> = calls.iter().filter(|x| x.callee == c.callee).collect();
                    let fan = if all.iter().all(|x| number(x.probability) == "1") {
                        format!("count {}", all.len())
                    } else {
                        "probability".into()
                    };
                    let if_ok = c.if_ok.map(|x| format!("b{}", x + 1)).unwrap_or_default();
                    table.push(row![
                        self.names[&s.sym],
                        format!("b{}", b + 1),
                        after.join(" "),
                        i + 1,
                        self.name(c.callee.sym()),
                        c.nth,
                        format!("{:.6}", c.probability),
                        if_ok,
                        if c.wait { "yes" } else { "no" },
                        fan
                    ]);
                }
            }
        }
        let mut text = vec!["Each service's calls as the scenario makes them: branches run in parallel, the calls of a branch in order, and a branch with `after` starts when those have ended. A call follows another when most spans that made both made it after the other ended (two that overlapped, or started together, are parallel); a call after the last calls of several branches waits for all of them. The n-th call of a span to a callee is made with the share of spans that made at least n (`probability`; with `if ok`, of the spans where that branch succeeded: the call was never made after it failed); `count N` means every span made N calls; `wait = no`: most spans answered before it ended.".to_string()];
        for (s, a, b, (par, ab, ba)) in &self.sys.mixed_pairs {
            let (s, (an, a), (bn, b)) = (
                self.name(*s),
                (a.1, self.name(a.0.sym())),
                (b.1, self.name(b.0.sym())),
            );
            text.push(format!("{s}: call {an} to {a} and call {bn} to {b} were made in parallel by {par} spans, the first before the second by {ab} and the other way round by {ba}: laid out as most did."));
        }
        (table, text)
    }

    /// The report's tails section, and its warnings: percentiles that rest
    /// on fewer than 10 values, tails not fitted, and fits that do not fit.
    fn tails(&mut self) -> Section {
        let enough = ThinTail::ENOUGH;
        let thin: Vec<String> = self
            .tails
            .rows
            .iter()
            .filter(|r| r[4] == "as measured" && r[2].parse::<usize>().is_ok_and(|n| n < enough))
            .map(|r| {
                format!(
                    "{} ({} of {} values above its p99, {} above its p99.9)",
                    r[0], r[2], r[1], r[3]
                )
            })
            .collect();
        if !thin.is_empty() {
            self.warnings.push(format!("thin tails: fewer than {enough} measured values are above the p99 of {}: a run's p99 (and p99.9) that depends on them moves with those few; give --tail fit to draw the values above the 0.9 quantile from a fitted tail", thin.join(", ")));
        }
        for r in &self.tails.rows {
            if let Some(why) = r[4].strip_prefix("as measured: not fitted (") {
                self.warnings.push(format!(
                    "{}: no tail fitted: {}",
                    r[0],
                    why.trim_end_matches(')')
                ));
            }
            if r[10].parse::<f64>().is_ok_and(|p| p < 0.05) {
                self.warnings.push(format!("{}: the tail fitted above its 0.9 quantile does not fit its values (Kolmogorov-Smirnov distance {}, p = {} < 0.05): its tail is drawn from it all the same", r[0], r[9], r[10]));
            }
        }
        Section {
            heading: "Tails".into(),
            text: vec![format!(
                "Per service and dependency: its measured values, and how many are above its p99 and p99.9 (nearest rank); a percentile with fewer than {enough} values above it rests on those few. With --tail fit, the values above the 0.9 quantile are drawn from a generalized Pareto distribution fitted to their excess over it by probability-weighted moments (Hosking and Wallis, 1987), the scenario's `fit_tail_above = 0.9`: its threshold, the values it was fitted to, its shape (xi) and scale (sigma), the Kolmogorov-Smirnov distance between them and the fit, and that distance's p-value by parametric bootstrap (200 samples of the fit, each refitted; below 0.05 the fit is poor)."
            )],
            table: Some(std::mem::take(&mut self.tails)),
        }
    }
}

/// The scenario, its data and the report's sections.
pub fn write(sys: &System, cx: &Context<'_>) -> Written {
    let tails = Table::of(
        "name|values|above p99|above p99.9|tail|threshold ms|fitted to|shape|scale ms|KS distance|p-value",
    );
    let measured = Table::of(
        "service|as|spans|own p50 ms|own p99 ms|own mean ms|errors|own errors|peak at once|mean at once|file",
    );
    let (t, files, used, names, warnings) = (
        String::new(),
        Vec::new(),
        HashSet::new(),
        HashMap::new(),
        Vec::new(),
    );
    let mut w = W {
        cx,
        sys,
        t,
        files,
        used,
        names,
        warnings,
        measured,
        tails,
    };
    // names: services, then dependencies (one namespace)
    let mut namer = Namer {
        refused: SERVICE_REFUSED,
        ..Namer::default()
    };
    for s in sys
        .services
        .iter()
        .map(|s| s.sym)
        .chain(sys.dependencies.iter().map(|d| d.callee.sym()))
    {
        w.names.insert(s, namer.name(cx.strings.name(s)));
    }
    let routes = w.routes();
    let (stem, data) = (cx.stem, cx.data_dir);
    let name = quoted(&format!("{stem}: imported from traces"));
    let about = quoted(&format!(
        "The call graph, own times, error shares and arrival rates of {} traces ({} spans), as resim import inferred them; see {stem}.import.md.",
        cx.traces, cx.spans
    ));
    writeln!(
        w.t,
        "# Built by `resim import` from {}: {} traces, {} spans.",
        cx.inputs, cx.traces, cx.spans
    )
    .ok();
    writeln!(w.t, "# Every inference, with its counts, is in {stem}.import.md; the measured\n# own times and latencies are in {data}/, drawn at random by `empirical`.\n# Servers get {SLOTS} slots (the traces measured own times under their own load);\n# set the real worker counts (the report gives the concurrency seen) and add\n# policies and faults to ask what-if questions.\n\n[scenario]\nname = {name}\nabout = {about}\nseed = 1").ok();
    for s in &sys.services {
        w.service(s, &routes);
    }
    for d in &sys.dependencies {
        w.dependency(d);
    }
    let sections = w.sections(&routes);
    for (s, n) in &sys.unreachable {
        w.warnings.push(format!("service {}: {n} spans, but no entry point reaches it (its spans are orphans, or its callers are cut off): left out", cx.strings.name(*s)));
    }
    for (from, to) in namer.renamed {
        w.warnings.push(format!("the name `{}` is written `{to}` (a name in a scenario holds no control characters, no `#` (which names a replica, `NAME#2`) and no `:` (which joins names into the names of random streams), does not start like a spreadsheet formula, and is unique)", from.escape_debug()));
    }
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let live = sys.edges.iter().filter(|e| e.cut.is_none()).count();
    let summary = vec![format!(
        "built {}, {}, {} between them and {}",
        count(sys.services.len(), "service", "services"),
        count(sys.dependencies.len(), "dependency", "dependencies"),
        count(live, "call", "calls"),
        count(sys.entries.len(), "workload", "workloads")
    )];
    Written {
        toml: w.t,
        files: w.files,
        sections,
        summary,
        warnings: w.warnings,
    }
}

impl W<'_> {
    /// The report's sections on the system.
    fn sections(&mut self, routes: &[String]) -> Vec<Section> {
        let entries = self.workloads(routes);
        let calls = self.calls();
        let (plans, plan_text) = self.plans();
        let section = |heading: &str, text: Vec<String>, table| Section {
            heading: heading.into(),
            text,
            table: Some(table),
        };
        let measured = std::mem::take(&mut self.measured);
        let mut sections = vec![
            section("Services and dependencies", vec!["Own time: a handling span's length minus the time its calls cover (their union within it); a dependency's latency: its spans' lengths, or the client spans of its callers when it has none of its own. Percentiles by nearest rank. `errors`: spans in error; `own errors`: in error with none of their calls failed. `peak at once`: the most handling spans open at one instant in the traces (a lower bound when they are sampled); `mean at once`: their total time over the traced interval, over the sampling probability (Little's law).".into()], measured),
            section("Calls", vec!["One row per edge of the call graph. `errors`: the calls whose client span (or the callee's span) was in error. `network`: the client span's length minus the callee's span's, for calls with both (time on the wire and in queues before the callee's span started; the scenario's calls take none of it).".into()], calls),
            section("Plans: calls in sequence and in parallel", plan_text, plans),
            section("Entry points and arrival rates", entry_text(self.sys, self.cx), entries),
        ];
        if !self.sys.async_edges.is_empty() {
            let mut table = Table::of("producer|consumer|messages");
            for (a, b, n) in &self.sys.async_edges {
                table.push(row![self.name(*a), self.name(b.sym()), n]);
            }
            sections.push(section("Asynchronous calls", vec!["A message sent (a producer span), a span that follows from its parent (Jaeger's FOLLOWS_FROM) and a span linked to the span that started it (OTLP span links, a Jaeger reference to another trace) do not block their caller: they are no call of its plan, and the work they start (a consumer span, the linked span) arrives at its service as a workload of its own, at the rate it happened.".into()], table));
            let n: u64 = self.sys.async_edges.iter().map(|x| x.2).sum();
            self.warnings.push(format!("{n} asynchronous calls (messages, FOLLOWS_FROM, span links) are not calls in the scenario: the work they start arrives as workloads of its own"));
        }
        sections.push(self.tails());
        sections
    }
}

/// The text of the report's section on entry points.
fn entry_text(sys: &System, cx: &Context<'_>) -> Vec<String> {
    vec![
        format!(
            "An arrival is a root handling span (or one right under a root client span: a request from outside; or a server or consumer span whose parent is not in the file: where requests entered, counted in `parent outside the file`), at its service's route (its `http.route`, else its span name). The traced interval runs from the first arrival to the last: {} ms. A rate is the requests the arrivals stand for (each over its trace's sampling probability) times (N - 1) / N over the interval, N the arrivals of every entry point together; none is measured from fewer than {MIN_ARRIVALS} arrivals at the entry point, or over less than {} ms (a Poisson count of 20 is within 44 % of its mean 19 times in 20): the scenario gets `rate_rps = 1`, marked `# set me`.",
            number(sys.interval_ns as f64 / 1e6),
            MIN_INTERVAL_NS / 1_000_000
        ),
        match cx.sample_rate {
            Some(r) => format!("--sample-rate {}: every trace stands for {} requests.", number(r), number(1.0 / r)),
            None => "Without --sample-rate, a trace stands for 1 / the sampling probability its spans say (Jaeger's sampler.type = probabilistic and sampler.param, OpenTelemetry's trace state ot=th or ot=p), else for 1.".into(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn a_large_number_is_written_as_a_toml_float() {
        // written as digits, 1e301 overflowed TOML's 64-bit integers
        for x in [1e15, 1.45e301, 9.3e18, -2.5e20] {
            let text = number(x);
            let v: toml::Value = toml::from_str(&format!("x = {text}")).expect(&text);
            let back = v["x"].as_float().expect(&text);
            assert!((back - x).abs() <= x.abs() * 1e-5, "{x}: {text}");
        }
        assert_eq!(number(123456.7), "123457");
        assert_eq!(number(0.5), "0.5");
    }
}
