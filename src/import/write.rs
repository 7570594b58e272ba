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

use super::infer::Callee;
use super::layout::{PlanCall, System, percentile_ms};
use super::report::{Section, Table};
use super::spans::{Interner, Sym};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// Slots of an imported server: more than it ever has work at once.
pub const SLOTS: u32 = 1_000_000;

/// The scenario's text, its data files and the report's sections.
pub struct Written {
    /// The scenario file's text.
    pub toml: String,
    /// Data files: (name in the data folder, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// The report's sections about the system.
    pub sections: Vec<Section>,
    /// One line each: what was built.
    pub summary: Vec<String>,
    /// What was changed or left out.
    pub warnings: Vec<String>,
}

/// Names as the scenario writes them: control characters replaced, a
/// formula start guarded, Unicode in NFC, each unique.
#[derive(Default)]
struct Namer {
    used: HashSet<String>,
    renamed: Vec<(String, String)>,
}

impl Namer {
    fn name(&mut self, raw: &str) -> String {
        use unicode_normalization::UnicodeNormalization;
        let mut s: String = raw
            .nfc()
            .map(|c| {
                if crate::error::is_hidden_char(c) {
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
        let base = s.clone();
        let mut k = 2;
        while self.used.contains(&s) {
            s = format!("{base}-{k}");
            k += 1;
        }
        self.used.insert(s.clone());
        if s != raw {
            self.renamed.push((raw.to_string(), s.clone()));
        }
        s
    }
}

/// A file name for `name`: letters, digits, `.`, `_` and `-` kept, the rest
/// `_`, unique without regard to case.
fn file_name(name: &str, used: &mut HashSet<String>) -> String {
    let mut s: String = name
        .chars()
        .take(80)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    let base = s.clone();
    let mut k = 2;
    while used.contains(&s.to_lowercase()) {
        s = format!("{base}-{k}");
        k += 1;
    }
    used.insert(s.to_lowercase());
    format!("{s}.csv")
}

/// A TOML string (quoted, escaped).
pub fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML key: bare when it may be, else quoted.
pub fn key(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        s.to_string()
    } else {
        quoted(s)
    }
}

/// A number for the scenario file: six significant digits, trimmed.
fn number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let digits = (6 - 1 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Milliseconds from nanoseconds, exactly (at most six decimals).
fn ms(ns: i64) -> String {
    let (w, f) = (ns / 1_000_000, ns % 1_000_000);
    if f == 0 {
        w.to_string()
    } else {
        format!("{w}.{f:06}").trim_end_matches('0').to_string()
    }
}

/// A CSV of one column of milliseconds.
fn csv_column(column: &str, values: &[i64]) -> Vec<u8> {
    let mut out = String::with_capacity(values.len() * 10 + 16);
    out.push_str(column);
    out.push('\n');
    for &v in values {
        out.push_str(&ms(v.max(0)));
        out.push('\n');
    }
    out.into_bytes()
}

/// A share as a percentage for the report.
fn pct(part: u64, of: u64) -> String {
    if of == 0 {
        return String::new();
    }
    format!("{:.2} %", 100.0 * part as f64 / of as f64)
}

fn opt_ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_default()
}

/// What `write` needs to know beyond the system.
pub struct Context<'a> {
    /// Interned names.
    pub strings: &'a Interner,
    /// The scenario's file stem.
    pub stem: &'a str,
    /// The data folder, relative to the scenario file.
    pub data_dir: &'a str,
    /// The inputs, for the header.
    pub inputs: &'a str,
    /// Traces and spans, for the header.
    pub traces: u64,
    /// See `traces`.
    pub spans: u64,
    /// The sampling probability applied (`--sample-rate`), if given.
    pub sample_rate: Option<f64>,
    /// How the tails are drawn (`--tail`).
    pub tail: super::Tail,
}

/// The scenario, its data and the report's sections.
pub fn write(sys: &System, cx: &Context<'_>) -> Written {
    let strings = cx.strings;
    let mut namer = Namer::default();
    let mut files_used = HashSet::new();
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    // names: services, then dependencies (one namespace)
    let mut name_of: HashMap<Sym, String> = HashMap::new();
    for s in &sys.services {
        let n = namer.name(strings.name(s.sym));
        name_of.insert(s.sym, n);
    }
    for d in &sys.dependencies {
        let n = namer.name(strings.name(d.callee.sym()));
        name_of.insert(d.callee.sym(), n);
    }
    let callee_name = |c: Callee| name_of.get(&c.sym()).cloned().unwrap_or_default();
    // routes, unique across services
    let mut routes_used: HashSet<String> = HashSet::new();
    let mut route_of: Vec<String> = Vec::new();
    for e in &sys.entries {
        let raw = strings.name(e.route);
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
            // "GET /orders" names the route /orders
            match r.find(" /") {
                Some(at) => r = r[at + 1..].to_string(),
                None => r.insert(0, '/'),
            }
        }
        if routes_used.contains(&r) {
            r = format!(
                "/{}{r}",
                name_of.get(&e.service).cloned().unwrap_or_default()
            );
        }
        let base = r.clone();
        let mut k = 2;
        while routes_used.contains(&r) {
            r = format!("{base}-{k}");
            k += 1;
        }
        routes_used.insert(r.clone());
        route_of.push(r);
    }
    let interval_ms = sys.interval_ns as f64 / 1e6;

    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Built by `resim import` from {}: {} traces, {} spans.",
        cx.inputs, cx.traces, cx.spans
    );
    let _ = writeln!(
        t,
        "# Every inference, with its counts, is in {}.import.md; the measured",
        cx.stem
    );
    let _ = writeln!(
        t,
        "# own times and latencies are in {}/, drawn at random by `empirical`.",
        cx.data_dir
    );
    let _ = writeln!(
        t,
        "# Servers get {SLOTS} slots (the traces measured own times under their own load);"
    );
    let _ = writeln!(
        t,
        "# set the real worker counts (the report gives the concurrency seen) and add"
    );
    let _ = writeln!(t, "# policies and faults to ask what-if questions.\n");
    t.push_str("[scenario]\n");
    let _ = writeln!(
        t,
        "name = {}",
        quoted(&format!("{}: imported from traces", cx.stem))
    );
    let _ = writeln!(
        t,
        "about = {}",
        quoted(&format!(
            "The call graph, own times, error shares and arrival rates of {} traces ({} spans), as resim import inferred them; see {}.import.md.",
            cx.traces, cx.spans, cx.stem
        ))
    );
    t.push_str("seed = 1\n");

    let mut tails = Table::new(&[
        "name",
        "values",
        "above p99",
        "above p99.9",
        "tail",
        "threshold ms",
        "fitted to",
        "shape",
        "scale ms",
        "KS distance",
        "p-value",
    ]);
    // services
    let mut svc_table = Table::new(&[
        "service",
        "as",
        "spans",
        "own p50 ms",
        "own p99 ms",
        "own mean ms",
        "errors",
        "own errors",
        "peak at once",
        "mean at once",
        "file",
    ]);
    for s in &sys.services {
        let name = &name_of[&s.sym];
        let file = file_name(name, &mut files_used);
        files.push((file.clone(), csv_column("own_ms", &s.own)));
        let routes: Vec<String> = sys
            .entries
            .iter()
            .zip(&route_of)
            .filter(|(e, _)| e.service == s.sym)
            .map(|(_, r)| quoted(r))
            .collect();
        let mean = if s.own.is_empty() {
            0.0
        } else {
            s.own.iter().map(|&v| v as f64).sum::<f64>() / s.own.len() as f64 / 1e6
        };
        let _ = writeln!(t, "\n[services.{}]", key(name));
        if s.replicas > 1 {
            let _ = writeln!(t, "# {} instances named in its spans (service.instance.id, k8s.pod.name or host.name)", s.replicas);
            let _ = writeln!(t, "replicas = {}", s.replicas);
        }
        if !routes.is_empty() {
            let _ = writeln!(t, "routes = [{}]", routes.join(", "));
        }
        let _ = writeln!(
            t,
            "# own time: p50 {} ms, p99 {} ms over {} spans; at most {} at once in the traces",
            opt_ms(percentile_ms(&s.own, 0.5)),
            opt_ms(percentile_ms(&s.own, 0.99)),
            s.own.len(),
            s.peak
        );
        let _ = writeln!(t, "[services.{}.handler]", key(name));
        t.push_str("type = \"server\"\n");
        let _ = writeln!(t, "slots = {SLOTS}");
        t.push_str("queue = 0\n");
        let file_path = format!("{}/{file}", cx.data_dir);
        t.push_str(&measured("service", &file_path, "own_ms", &s.own, name, cx.tail, &mut tails));
        if s.own.is_empty() {
            warnings.push(format!("services.{name}: none of its spans had an end (or all its calls lacked one): no own time was measured, `service = {{ constant = 0 }}` is written; set it"));
        }
        if !s.plan.is_empty() {
            t.push_str("budget = \"none\"\nbranches = [\n");
            for (b, branch) in s.plan.iter().enumerate() {
                let list: Vec<String> = branch.calls.iter().map(|c| plan_call(c, &callee_name)).collect();
                let after: Vec<String> = branch.after.iter().map(|a| format!("\"b{}\"", a + 1)).collect();
                let after = if after.is_empty() { String::new() } else { format!(", after = [{}]", after.join(", ")) };
                let _ = writeln!(t, "  {{ name = \"b{}\"{after}, calls = [{}] }},", b + 1, list.join(", "));
            }
            t.push_str("]\n");
        }
        svc_table.push(vec![
            name.clone(),
            if routes.is_empty() {
                "service".into()
            } else {
                "service (entry)".into()
            },
            s.handling.to_string(),
            opt_ms(percentile_ms(&s.own, 0.5)),
            opt_ms(percentile_ms(&s.own, 0.99)),
            format!("{mean:.3}"),
            pct(s.errors, s.handling),
            pct(s.own_errors, s.handling),
            s.peak.to_string(),
            s.mean_busy.map(|m| format!("{m:.2}")).unwrap_or_default(),
            format!("{}/{file}", cx.data_dir),
        ]);
        if s.own_errors > 0 {
            warnings.push(format!(
                "services.{name}: {} of {} spans ({}) failed with none of their calls failing (its own errors); a server has no error rate of its own in resim, so the scenario leaves them out (add an `error_rate` fault on it to bring them back)",
                s.own_errors,
                s.handling,
                pct(s.own_errors, s.handling)
            ));
        }
        if s.capped > 0 {
            warnings.push(format!(
                "services.{name}: {} spans made more than {} calls to one callee; the plan holds the first {}",
                s.capped,
                super::infer::MAX_REPEAT,
                super::infer::MAX_REPEAT
            ));
        }
    }
    // dependencies
    for d in &sys.dependencies {
        let name = &name_of[&d.callee.sym()];
        let file = file_name(name, &mut files_used);
        files.push((file.clone(), csv_column("latency_ms", &d.latency)));
        let _ = writeln!(t, "\n[dependencies.{}]", key(name));
        if d.replicas > 1 {
            let _ = writeln!(t, "# {} instances named in its spans (service.instance.id, k8s.pod.name or host.name)", d.replicas);
            let _ = writeln!(t, "replicas = {}", d.replicas);
        }
        let _ = writeln!(
            t,
            "# latency: p50 {} ms, p99 {} ms over {} {}",
            opt_ms(percentile_ms(&d.latency, 0.5)),
            opt_ms(percentile_ms(&d.latency, 0.99)),
            d.latency.len(),
            match d.callee {
                Callee::Service(_) => "spans of its own",
                Callee::Peer(_) => "client spans of its callers",
            }
        );
        let file_path = format!("{}/{file}", cx.data_dir);
        t.push_str(&measured("latency", &file_path, "latency_ms", &d.latency, name, cx.tail, &mut tails));
        if d.latency.is_empty() {
            warnings.push(format!("dependencies.{name}: none of its spans (or its callers' client spans) had an end: no latency was measured, `latency = {{ constant = 0 }}` is written; set it"));
        }
        if d.errors > 0 && d.calls > 0 {
            let _ = writeln!(
                t,
                "error_rate = {}",
                number(d.errors as f64 / d.calls as f64)
            );
        }
        svc_table.push(vec![
            name.clone(),
            match d.callee {
                Callee::Service(_) => "dependency (its spans)".into(),
                Callee::Peer(_) => "dependency (named by callers)".into(),
            },
            d.calls.to_string(),
            opt_ms(percentile_ms(&d.latency, 0.5)),
            opt_ms(percentile_ms(&d.latency, 0.99)),
            if d.latency.is_empty() {
                String::new()
            } else {
                format!(
                    "{:.3}",
                    d.latency.iter().map(|&v| v as f64).sum::<f64>() / d.latency.len() as f64 / 1e6
                )
            },
            pct(d.errors, d.calls),
            pct(d.errors, d.calls),
            String::new(),
            String::new(),
            format!("{}/{file}", cx.data_dir),
        ]);
    }
    // workloads
    let several = sys.entries.len() > 1;
    let mut entry_table = Table::new(&[
        "workload",
        "service",
        "route",
        "arrivals",
        "requests they stand for",
        "rate rps",
        "kind",
        "parent outside the file",
    ]);
    let mut workload_names = Namer::default();
    workload_names.used.insert("all".into());
    for (e, route) in sys.entries.iter().zip(&route_of) {
        let service = &name_of[&e.service];
        let wname = if several {
            workload_names.name(&format!(
                "{service}{}",
                route.replace('/', "-").trim_end_matches('-')
            ))
        } else {
            "main".into()
        };
        let too_few = format!(
            "{} arrivals over {} ms are too few for a rate (at least {} over at least {} ms)",
            e.arrivals,
            number(interval_ms),
            super::layout::MIN_ARRIVALS,
            super::layout::MIN_INTERVAL_NS / 1_000_000
        );
        if e.rate_rps.is_none() {
            warnings.push(format!(
                "route {route} of {service}: {too_few}: rate_rps = 1 is written, marked `# set me`; set it"
            ));
        }
        if several {
            let _ = writeln!(t, "\n[workloads.{}]", key(&wname));
        } else {
            t.push_str("\n[workload]\n");
        }
        let _ = writeln!(
            t,
            "# {} arrivals{}{} over {} ms{}",
            e.arrivals,
            if e.entered > 0 {
                format!(
                    " ({} at server spans whose parent is not in the file)",
                    e.entered
                )
            } else {
                String::new()
            },
            if (e.weight - e.arrivals as f64).abs() > 1e-9 {
                format!(" standing for {} requests", number(e.weight))
            } else {
                String::new()
            },
            number(interval_ms),
            if e.asynchronous {
                " (asynchronous: messages consumed, made a workload of their own)"
            } else {
                ""
            }
        );
        t.push_str("type = \"open\"\n");
        let _ = writeln!(t, "route = {}", quoted(route));
        t.push_str("access = \"direct\"\n");
        match e.rate_rps {
            Some(rate) => {
                let _ = writeln!(t, "rate_rps = {}", number(rate));
            }
            None => {
                let _ = writeln!(t, "rate_rps = 1 # set me: {too_few}");
            }
        }
        if sys.interval_ns >= super::layout::MIN_INTERVAL_NS {
            let _ = writeln!(t, "duration_ms = {}", number(interval_ms));
        } else {
            let _ = writeln!(t, "duration_ms = 1000 # set me: the traces span {} ms", number(interval_ms));
        }
        entry_table.push(vec![
            if several { wname } else { "workload".into() },
            service.clone(),
            route.clone(),
            e.arrivals.to_string(),
            number(e.weight),
            e.rate_rps.map(number).unwrap_or_default(),
            if e.asynchronous {
                "asynchronous (consumer)".into()
            } else {
                "request".into()
            },
            e.entered.to_string(),
        ]);
    }

    // the report's sections
    let mut sections = Vec::new();
    sections.push(tails_section(tails, &mut warnings));
    sections.push(Section {
        heading: "Services and dependencies".into(),
        text: vec![
            "Own time: a handling span's length minus the time its calls cover (their union within it); a dependency's latency: its spans' lengths, or the client spans of its callers when it has none of its own. Percentiles by nearest rank. `errors`: spans in error; `own errors`: in error with none of their calls failed. `peak at once`: the most handling spans open at one instant in the traces (a lower bound when they are sampled); `mean at once`: their total time over the traced interval, over the sampling probability (Little's law).".into(),
        ],
        table: Some(svc_table),
    });
    let mut edge_table = Table::new(&[
        "caller",
        "callee",
        "calls",
        "caller spans",
        "spans calling",
        "calls per span",
        "errors",
        "with callee span",
        "network p50 ms",
        "network p99 ms",
        "in the scenario",
    ]);
    for e in &sys.edges {
        let caller = name_of
            .get(&e.caller)
            .cloned()
            .unwrap_or_else(|| strings.name(e.caller).to_string());
        let callee = name_of
            .get(&e.callee.sym())
            .cloned()
            .unwrap_or_else(|| strings.name(e.callee.sym()).to_string());
        let status = match &e.cut {
            Some(cycle) => {
                let path: Vec<&str> = cycle.iter().map(|&s| strings.name(s)).collect();
                warnings.push(format!(
                    "the call {caller} -> {callee} ({} calls) is left out: it closes the cycle {}, and a call graph resim runs has none",
                    e.calls,
                    path.join(" -> ")
                ));
                format!("left out: closes the cycle {}", path.join(" -> "))
            }
            None if sys.services.iter().any(|s| s.sym == e.caller) => "yes".into(),
            None => "no: the caller is not reached from an entry point".into(),
        };
        edge_table.push(vec![
            caller,
            callee,
            e.calls.to_string(),
            e.of.to_string(),
            e.parents.to_string(),
            if e.of > 0 {
                format!("{:.4}", e.calls as f64 / e.of as f64)
            } else {
                String::new()
            },
            pct(e.errors, e.calls),
            e.with_server.to_string(),
            opt_ms(percentile_ms(&e.network, 0.5)),
            opt_ms(percentile_ms(&e.network, 0.99)),
            status,
        ]);
    }
    sections.push(Section {
        heading: "Calls".into(),
        text: vec![
            "One row per edge of the call graph. `errors`: the calls whose client span (or the callee's span) was in error. `network`: the client span's length minus the callee's span's, for calls with both (time on the wire and in queues before the callee's span started; the scenario's calls take none of it).".into(),
        ],
        table: Some(edge_table),
    });
    let mut plan_table = Table::new(&[
        "service",
        "branch",
        "order",
        "callee",
        "call",
        "probability",
        "fan-out",
    ]);
    for s in &sys.services {
        for (b, branch) in s.plan.iter().enumerate() {
            for (i, c) in branch.calls.iter().enumerate() {
                let kind = fan_out_kind(s, c);
                plan_table.push(vec![
                    name_of[&s.sym].clone(),
                    format!("b{}", b + 1),
                    (i + 1).to_string(),
                    callee_name(c.callee),
                    c.nth.to_string(),
                    format!("{:.6}", c.probability),
                    kind,
                ]);
            }
        }
    }
    let mut plan_text = vec![
        "Each service's calls as the scenario makes them: branches run in parallel, the calls of a branch in order. Two calls of a span that overlapped (or started together) are parallel, two that did not are in sequence; a pair is laid out as most spans that made both made it. The n-th call of a span to a callee is made with the share of spans that made at least n (`probability`); `count N` means every span made N calls.".into(),
    ];
    for (s, a, b, p) in &sys.mixed_pairs {
        plan_text.push(format!(
            "{}: call {} to {} and call {} to {} were made in parallel by {} spans, the first before the second by {} and the other way round by {}: laid out as most did.",
            name_of.get(s).cloned().unwrap_or_default(),
            a.1,
            callee_name(a.0),
            b.1,
            callee_name(b.0),
            p.parallel,
            p.first_before,
            p.second_before
        ));
    }
    sections.push(Section {
        heading: "Plans: calls in sequence and in parallel".into(),
        text: plan_text,
        table: Some(plan_table),
    });
    let mut entry_text = vec![format!(
        "An arrival is a root handling span (or one right under a root client span: a request from outside; or a server or consumer span whose parent is not in the file: where requests entered, counted in `parent outside the file`), at its service's route (its `http.route`, else its span name). The traced interval runs from the first arrival to the last: {} ms. A rate is the requests the arrivals stand for (each over its trace's sampling probability) times (N - 1) / N over the interval, N the arrivals of every entry point together; none is measured from fewer than {} arrivals at the entry point, or over less than {} ms (a Poisson count of 20 is within 44 % of its mean 19 times in 20): the scenario gets `rate_rps = 1`, marked `# set me`.",
        number(interval_ms),
        super::layout::MIN_ARRIVALS,
        super::layout::MIN_INTERVAL_NS / 1_000_000
    )];
    match cx.sample_rate {
        Some(r) => entry_text.push(format!(
            "--sample-rate {}: every trace stands for {} requests.",
            number(r),
            number(1.0 / r)
        )),
        None => entry_text.push(
            "Without --sample-rate, a trace stands for 1 / the sampling probability its spans say (Jaeger's sampler.type = probabilistic and sampler.param, OpenTelemetry's trace state ot=th or ot=p), else for 1.".into(),
        ),
    }
    sections.push(Section {
        heading: "Entry points and arrival rates".into(),
        text: entry_text,
        table: Some(entry_table),
    });
    if !sys.async_edges.is_empty() {
        let mut at = Table::new(&["producer", "consumer", "messages"]);
        for (a, b, n) in &sys.async_edges {
            at.push(vec![
                name_of
                    .get(a)
                    .cloned()
                    .unwrap_or_else(|| strings.name(*a).to_string()),
                name_of
                    .get(&b.sym())
                    .cloned()
                    .unwrap_or_else(|| strings.name(b.sym()).to_string()),
                n.to_string(),
            ]);
        }
        sections.push(Section {
            heading: "Asynchronous calls".into(),
            text: vec!["A message sent (a producer span), a span that follows from its parent (Jaeger's FOLLOWS_FROM) and a span linked to the span that started it (OTLP span links, a Jaeger reference to another trace) do not block their caller: they are no call of its plan, and the work they start (a consumer span, the linked span) arrives at its service as a workload of its own, at the rate it happened.".into()],
            table: Some(at),
        });
        warnings.push(format!(
            "{} asynchronous calls (messages, FOLLOWS_FROM, span links) are not calls in the scenario: the work they start arrives as workloads of its own",
            sys.async_edges.iter().map(|x| x.2).sum::<u64>()
        ));
    }
    for (s, n) in &sys.unreachable {
        warnings.push(format!(
            "service {}: {} spans, but no entry point reaches it (its spans are orphans, or its callers are cut off): left out",
            strings.name(*s),
            n
        ));
    }
    for (from, to) in &namer.renamed {
        warnings.push(format!(
            "the name `{}` is written `{to}` (a name in a scenario holds no control characters, does not start like a spreadsheet formula, and is unique)",
            from.escape_debug()
        ));
    }
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let summary = vec![format!(
        "built {}, {}, {} between them and {}",
        count(sys.services.len(), "service", "services"),
        count(sys.dependencies.len(), "dependency", "dependencies"),
        count(
            sys.edges.iter().filter(|e| e.cut.is_none()).count(),
            "call",
            "calls"
        ),
        count(sys.entries.len(), "workload", "workloads")
    )];
    Written {
        toml: t,
        files,
        sections,
        summary,
        warnings,
    }
}

/// `KEY = { empirical = { file, column } }` for the sorted values `v` (ns)
/// of `name` (with `fit_tail_above` when `tail` is `Fit` and a tail fits),
/// or a constant 0 to set when none was measured; its row of the report's
/// tails table.
fn measured(key: &str, file: &str, column: &str, v: &[i64], name: &str, tail: super::Tail, tails: &mut Table) -> String {
    use crate::scenario::tail::{above, fit};
    if v.is_empty() {
        return format!("{key} = {{ constant = 0 }} # set me: no value was measured\n");
    }
    let mut row = vec![name.to_string(), v.len().to_string(), above(v.len(), 0.99).to_string(), above(v.len(), 0.999).to_string()];
    let ms: Vec<f64> = v.iter().map(|&x| x as f64 / 1e6).collect();
    let fitted = (tail == super::Tail::Fit).then(|| fit(&ms, super::FIT_ABOVE));
    let mut extra = String::new();
    match fitted {
        None => row.push("as measured".into()),
        Some(Err(why)) => row.push(format!("as measured: not fitted ({why})")),
        Some(Ok(f)) => {
            extra = format!(", fit_tail_above = {}", number(super::FIT_ABOVE));
            row.push(format!("fitted above {}", number(super::FIT_ABOVE)));
            row.extend([
                format!("{:.3}", f.threshold_ms),
                f.exceedances.to_string(),
                format!("{:.3}", f.shape),
                format!("{:.3}", f.scale_ms),
                format!("{:.3}", f.ks),
                format!("{:.3}", f.p_value()),
            ]);
        }
    }
    row.resize(11, String::new());
    tails.push(row);
    format!(
        "{key} = {{ empirical = {{ file = {}, column = {}{extra} }} }}\n",
        quoted(file),
        quoted(column)
    )
}

/// The report's section on tails, and its warnings: percentiles that rest on
/// fewer than 10 values, tails not fitted, and fits that do not fit.
fn tails_section(tails: Table, warnings: &mut Vec<String>) -> Section {
    let enough = crate::model::ThinTail::ENOUGH;
    let count = |r: &[String], i: usize| r[i].parse::<usize>().unwrap_or(0);
    let thin: Vec<String> = tails
        .rows
        .iter()
        .filter(|r| r[4] == "as measured" && count(r, 2) < enough)
        .map(|r| format!("{} ({} of {} values above its p99, {} above its p99.9)", r[0], r[2], r[1], r[3]))
        .collect();
    if !thin.is_empty() {
        warnings.push(format!(
            "thin tails: the p99 of {} rests on fewer than {enough} measured values: a run's p99 (and p99.9) that depends on them moves with those few; give --tail fit to draw the values above the 0.9 quantile from a fitted tail",
            thin.join(", ")
        ));
    }
    for r in &tails.rows {
        if let Some(why) = r[4].strip_prefix("as measured: not fitted (") {
            warnings.push(format!("{}: no tail fitted: {}", r[0], why.trim_end_matches(')')));
        }
        if r[4].starts_with("fitted") && r[10].parse::<f64>().is_ok_and(|p| p < 0.05) {
            warnings.push(format!(
                "{}: the tail fitted above its 0.9 quantile does not fit its values (Kolmogorov-Smirnov distance {}, p = {} < 0.05): its tail is drawn from it all the same",
                r[0], r[9], r[10]
            ));
        }
    }
    Section {
        heading: "Tails".into(),
        text: vec![format!("Per service and dependency: its measured values, and how many are above its p99 and p99.9 (nearest rank); a percentile with fewer than {enough} values above it rests on those few. With --tail fit, the values above the 0.9 quantile are drawn from a generalized Pareto distribution fitted to their excess over it by probability-weighted moments (Hosking and Wallis, 1987), the scenario's `fit_tail_above = 0.9`: its threshold, the values it was fitted to, its shape (xi) and scale (sigma), the Kolmogorov-Smirnov distance between them and the fit, and that distance's p-value by parametric bootstrap (200 samples of the fit, each refitted; below 0.05 the fit is poor).")],
        table: Some(tails),
    }
}

/// `"b"` or `{ to = "b", probability = 0.3, wait = false }`.
fn plan_call(c: &PlanCall, name: &impl Fn(Callee) -> String) -> String {
    let to = quoted(&name(c.callee));
    let mut keys = String::new();
    let p = number(c.probability);
    if p != "1" && c.probability < 1.0 {
        let p = if p == "0" { "0.000001" } else { &p };
        keys.push_str(&format!(", probability = {p}"));
    }
    if !c.wait {
        keys.push_str(", wait = false");
    }
    if let Some(x) = c.if_ok {
        keys.push_str(&format!(", if_ok = \"b{}\"", x + 1));
    }
    if keys.is_empty() { to } else { format!("{{ to = {to}{keys} }}") }
}

/// How a service calls a callee: `count N` (every span made N calls), or
/// `probability` (some spans made fewer).
pub fn fan_out_kind(s: &super::layout::ServiceOut, c: &PlanCall) -> String {
    let all: Vec<&PlanCall> = s
        .plan
        .iter()
        .flat_map(|b| &b.calls)
        .filter(|x| x.callee == c.callee)
        .collect();
    if all.iter().all(|x| number(x.probability) == "1") {
        format!("count {}", all.len())
    } else {
        "probability".into()
    }
}
