//! Retries at any depth over time: `timeseries_calls.csv` counts first tries
//! and attempts per window at every call site (the workloads' and every
//! service's), and `recovery.csv`'s peaks are the worst site's. Per-window
//! counts add up to the `calls` table's and the dependencies' own.

use crate::common::{Csv, file_with, num, resim};
use proptest::prelude::*;
use resim::scenario::{LoadOptions, load_str};
use std::collections::BTreeMap;
use std::path::Path;

/// Runs a scenario given as text; returns its folder (kept alive) and the
/// output folder inside it.
fn run_text(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, file) = file_with(text);
    let out = dir.path().join("out");
    resim()
        .args(["run", "-q", "--no-report", "--out"])
        .arg(&out)
        .arg(&file)
        .assert()
        .success();
    (dir, out)
}

/// A service retries its store, which fails every call from 2 s to 4 s; the
/// clients do not retry. 100 requests per second, evenly spaced, each
/// store attempt 1 ms: every request's attempts fall in its own window.
const RETRIES_BELOW: &str = r#"
[scenario]
name = "retries below the client"
seed = 3
[policies.retry3]
retry = { max_attempts = 3, on = ["error"], backoff = { kind = "none" } }
[services.api]
routes = ["/x"]
[services.api.handler]
type = "plan"
budget = "none"
branches = [{ name = "b", calls = [{ to = "store", call_policy = "retry3" }] }]
[dependencies.store]
latency = { constant = 1 }
[[faults]]
target = "store"
kind = "error_rate"
at_ms = 2000
for_ms = 2000
value = 1.0
[workload]
type = "open"
rate_rps = 100
arrivals = "uniform"
duration_ms = 6000
"#;

/// Retries below the client show in the store's windows (three attempts per
/// call during the fault, one outside it), and recovery.csv's amplification
/// is theirs: the clients' own attempts stay one per request.
#[test]
fn retries_below_the_client_show_in_the_windows_and_the_recovery_peaks() {
    let (_dir, out) = run_text(RETRIES_BELOW);
    let calls = Csv::read(&out.join("timeseries_calls.csv"));
    let at = |window: &str, caller: &str, target: &str| {
        calls
            .row(&[
                ("window_start_ms", window),
                ("caller", caller),
                ("target", target),
            ])
            .clone()
    };
    for w in ["0", "1000", "4000", "5000"] {
        let store = at(w, "api", "store");
        assert_eq!(num(&store, "first_tries"), 100.0, "{w}");
        assert_eq!(num(&store, "attempts"), 100.0, "{w}");
        assert_eq!(num(&store, "attempts_per_request"), 1.0, "{w}");
    }
    for w in ["2000", "3000"] {
        let store = at(w, "api", "store");
        assert_eq!(num(&store, "first_tries"), 100.0, "{w}");
        assert_eq!(num(&store, "attempts"), 300.0, "{w}");
        assert_eq!(num(&store, "attempts_per_request"), 3.0, "{w}");
        // the clients send each request once: the time series' own
        // amplification sees nothing
        let clients = at(w, "main", "api");
        assert_eq!(num(&clients, "attempts"), 100.0, "{w}");
        assert_eq!(num(&clients, "attempts_per_request"), 1.0, "{w}");
    }
    let series = Csv::read(&out.join("timeseries.csv"));
    for r in &series.rows {
        assert_eq!(r["attempts"], r["first_tries"], "no client retries");
    }
    let rec = Csv::read(&out.join("recovery.csv"));
    let r = rec.row(&[("fault", "0")]);
    assert_eq!(num(r, "peak_amplification"), 3.0);
    assert_eq!(num(r, "peak_attempts_per_request"), 3.0);
    assert_eq!(r["peak_site"], "api->store");
}

/// Three layers that each make up to 4 attempts (the SRE book's example, as
/// `retry-amplification.toml`), with the database failing from 2 s to 4 s: 64
/// attempts reach it per user request then, 16 the third layer, 4 the
/// second. 10 requests per second, evenly spaced: a request's 64 attempts
/// (1 ms each, one after another) end in its own window.
#[test]
fn three_retrying_layers_send_64_attempts_per_request_in_the_fault() {
    let text = r#"
[scenario]
name = "three layers"
seed = 3
[policies.retry4]
retry = { max_attempts = 4, on = ["error"] }
[services.layer1]
routes = ["/page"]
handler = { type = "plan", budget = "none", branches = [{ name = "down", calls = [{ to = "layer2", call_policy = "retry4" }] }] }
[services.layer2]
handler = { type = "plan", budget = "none", branches = [{ name = "down", calls = [{ to = "layer3", call_policy = "retry4" }] }] }
[services.layer3]
handler = { type = "plan", budget = "none", branches = [{ name = "down", calls = [{ to = "database", call_policy = "retry4" }] }] }
[dependencies.database]
latency = { constant = 1 }
[[faults]]
target = "database"
kind = "error_rate"
at_ms = 2000
for_ms = 2000
value = 1.0
[workload]
type = "open"
rate_rps = 10
arrivals = "uniform"
duration_ms = 6000
"#;
    let (_dir, out) = run_text(text);
    let calls = Csv::read(&out.join("timeseries_calls.csv"));
    let per_request = |window: &str, caller: &str, target: &str| {
        num(
            calls.row(&[
                ("window_start_ms", window),
                ("caller", caller),
                ("target", target),
            ]),
            "attempts_per_request",
        )
    };
    for w in ["2000", "3000"] {
        assert_eq!(per_request(w, "main", "layer1"), 1.0);
        assert_eq!(per_request(w, "layer1", "layer2"), 4.0);
        assert_eq!(per_request(w, "layer2", "layer3"), 16.0);
        assert_eq!(per_request(w, "layer3", "database"), 64.0);
    }
    assert_eq!(per_request("1000", "layer3", "database"), 1.0);
    assert_eq!(per_request("4000", "layer3", "database"), 1.0);
    let rec = Csv::read(&out.join("recovery.csv"));
    let r = rec.row(&[("fault", "0")]);
    assert_eq!(num(r, "peak_attempts_per_request"), 64.0);
    assert_eq!(r["peak_site"], "layer3->database");
    assert_eq!(num(r, "peak_amplification"), 4.0, "4 attempts per call");
}

/// A front plan calls a server (which calls the store) and, in a second
/// branch, the store; each call through a policy when `policies` (retries or
/// hedges, a breaker), plain otherwise. The branch to the store has a fixed
/// budget of 60 ms for two calls in a row, so that some calls have no time
/// left at all.
#[allow(clippy::too_many_arguments)] // one knob per property-test input
fn call_graph(
    policies: bool,
    hedge: bool,
    attempts: u32,
    breaker: bool,
    client_policy: bool,
    error_rate: f64,
    rate: f64,
    window: f64,
    fault: Option<(&str, &str, f64, f64)>,
) -> String {
    let mut t = String::from("[scenario]\nname = \"p\"\nseed = 5\n");
    let (plan_call, plain) = if policies {
        let kind = if hedge {
            format!("hedge = {{ delay_ms = 3, max_attempts = {attempts} }}")
        } else {
            format!(
                "retry = {{ max_attempts = {attempts}, on = [\"error\", \"timeout\", \"shed\"], \
                 backoff = {{ kind = \"full_jitter\", base_ms = 2, cap_ms = 20 }} }}"
            )
        };
        t.push_str(&format!("[policies.p]\ntimeout_ms = 25\n{kind}\n"));
        if breaker {
            t.push_str("breaker = { min_calls = 5, failure_rate = 0.5, open_ms = 300, half_open_calls = 2 }\n");
        }
        (", call_policy = \"p\"", false)
    } else {
        ("", true)
    };
    let call = |to: &str| {
        if plain {
            format!("\"{to}\"")
        } else {
            format!("{{ to = \"{to}\"{plan_call} }}")
        }
    };
    t.push_str(&format!(
        "[services.front]\nroutes = [\"/f\"]\n[services.front.handler]\ntype = \"plan\"\n\
         budget = 60\npolicy = \"greedy\"\nbranches = [\n  {{ name = \"a\", calls = [{}] }},\n  \
         {{ name = \"b\", calls = [{}, {}] }},\n]\n",
        call("back"),
        call("store"),
        call("store")
    ));
    t.push_str(&format!(
        "[services.back]\nroutes = [\"/b\"]\n[services.back.handler]\ntype = \"server\"\nslots = 2\n\
         queue = 4\nservice = {{ exponential = {{ mean_ms = 6 }} }}\nbudget = \"deadline\"\n\
         branches = [{{ name = \"s\", calls = [{}] }}]\n",
        call("store")
    ));
    t.push_str(&format!(
        "[dependencies.store]\nlatency = {{ exponential = {{ mean_ms = 8 }} }}\nerror_rate = {error_rate}\n"
    ));
    t.push_str(&format!(
        "[workload]\ntype = \"open\"\nroute = \"/f\"\nrate_rps = {rate}\nduration_ms = 3000\ntimeout_ms = 120\n"
    ));
    if policies && client_policy {
        t.push_str("call_policy = \"p\"\n");
    }
    t.push_str(&format!("[output]\nwindow_ms = {window}\n"));
    if let Some((target, kind, at, len)) = fault {
        let value = match kind {
            "down" => String::new(),
            "latency_factor" => "value = 4\n".into(),
            _ => "value = 0.8\n".into(),
        };
        t.push_str(&format!(
            "[[faults]]\ntarget = \"{target}\"\nkind = \"{kind}\"\nat_ms = {at}\nfor_ms = {len}\n{value}"
        ));
    }
    t
}

fn fault() -> impl Strategy<Value = Option<(&'static str, &'static str, f64, f64)>> {
    prop_oneof![
        Just(None),
        (
            prop_oneof![Just("store"), Just("back")],
            prop_oneof![Just("error_rate"), Just("down"), Just("latency_factor")],
            0.0..2500.0f64,
            0.0..1500.0f64
        )
            .prop_map(|(t, k, a, l)| Some((t, k, a.round(), l.round()))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Every site's windows add up to the whole run: to the `calls` table's
    /// first tries and attempts of its (caller, target) (every call of a
    /// scenario with policies is a policy call), the workload's site to the
    /// requests sent, and the sites that call the store to the store's calls.
    #[test]
    fn per_window_call_counts_add_up_to_the_calls_table(
        policies in any::<bool>(),
        hedge in any::<bool>(),
        attempts in 1u32..4,
        breaker in any::<bool>(),
        client_policy in any::<bool>(),
        error_rate in 0.0..0.5f64,
        rate in 20.0..200.0f64,
        window in prop_oneof![Just(100.0), Just(250.0), Just(1000.0)],
        fault in fault(),
    ) {
        let text = call_graph(policies, hedge, attempts, breaker, client_policy, error_rate, rate, window, fault);
        let s = load_str(&text, Path::new("p.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let r = resim::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let ts = r.timeseries.as_ref().expect("a time series");
        let n = ts.call_sites.len();
        prop_assert_eq!(ts.calls.len(), n * ts.windows.len());
        // (caller, target) -> (first tries, attempts), over the windows
        let mut windows: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
        for (k, site) in ts.call_sites.iter().enumerate() {
            let (mut f, mut a) = (0, 0);
            for w in 0..ts.windows.len() {
                let c = ts.calls[w * n + k];
                f += c.first_tries;
                a += c.attempts;
            }
            windows.insert((site.caller.clone(), site.target.clone()), (f, a));
        }
        let sites: Vec<String> = windows.keys().map(|(c, t)| format!("{c}->{t}")).collect();
        prop_assert_eq!(sites, ["back->store", "front->back", "front->store", "main->front"]);
        prop_assert_eq!(windows[&("main".into(), "front".into())].0, r.outcomes.requests, "{}", text);
        let store: u64 = windows
            .iter()
            .filter(|((_, t), _)| t == "store")
            .map(|(_, &(_, a))| a)
            .sum();
        prop_assert_eq!(store, r.dependencies[0].calls, "{}", text);
        if policies {
            let mut table: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
            for c in &r.calls {
                let e = table.entry((c.caller.clone(), c.target.clone())).or_default();
                e.0 += c.first_tries;
                e.1 += c.attempts;
            }
            prop_assert_eq!(&windows, &table, "{}", text);
        } else {
            prop_assert!(r.calls.is_empty());
            for (site, &(f, a)) in &windows {
                prop_assert_eq!(f, a, "{:?}: a call without a policy is one attempt", site);
            }
        }
    }
}

/// The validation sizes `timeseries_calls.csv` before a run with the model's
/// count of call sites; the run numbers its own. Every bundled scenario's
/// compare rows count the same sites both ways.
#[test]
fn the_validation_counts_the_call_sites_the_run_numbers() {
    let root = crate::common::root().join("scenarios");
    let mut models = 0;
    let mut with_calls = 0;
    for (rel, _) in resim::scenario::bundled::FILES {
        if !rel.ends_with(".toml") {
            continue;
        }
        let s = resim::scenario::load(&root.join(rel), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        for row in &s.rows {
            let run = resim::sim::timeseries::call_site_rows(&row.model);
            let validated = resim::model::series::call_site_rows(&row.model);
            assert_eq!(validated, run, "{rel}: call sites");
            models += 1;
            with_calls += usize::from(run > row.model.workloads.len() as u64);
        }
    }
    assert!(models > 50, "{models} compare rows");
    assert!(
        with_calls > 10,
        "{with_calls} compare rows with services' calls"
    );
}
