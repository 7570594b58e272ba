//! Property tests of client policies: random chains (a workload, maybe with a
//! policy, calls a server or plan that calls a store through a random policy:
//! retries with any backoff and budget, or hedges, with or without a breaker, a
//! throttle and per-attempt timeouts) keep the counting model's invariants:
//!
//! * no call takes more attempts than its policy's `max_attempts`;
//! * no attempt starts at or after its call's deadline;
//! * attempts = first tries + retries + hedges - refused calls;
//! * every attempt ends exactly once (attempts = the sum of its outcomes), and
//!   nothing is left held when the run ends;
//! * with cancellation and `cancel_losers`, no store work is wasted (hedge losers
//!   and timed-out attempts are cancelled);
//! * every request still ends exactly once, and the same seed gives the same calls.

use proptest::prelude::*;
use resim::model::{Handler, Model};
use resim::scenario::{LoadOptions, load_str};
use resim::sim::{CallStats, RunResult, run};
use std::path::Path;

fn backoff() -> impl Strategy<Value = String> {
    (0usize..6, 0u32..20, 0u32..100).prop_map(|(k, base, extra)| {
        let kind = [
            "none",
            "constant",
            "exponential",
            "full_jitter",
            "equal_jitter",
            "decorrelated",
        ][k];
        // each kind gets only the keys it uses (others are refused)
        match kind {
            "none" => "{ kind = \"none\" }".to_string(),
            "constant" => format!("{{ kind = \"constant\", base_ms = {base} }}"),
            _ => format!(
                "{{ kind = \"{kind}\", base_ms = {base}, cap_ms = {} }}",
                base + extra
            ),
        }
    })
}

fn budget() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        (1u32..10, 100u32..5000).prop_map(|(m, w)| format!(
            ", budget = {{ kind = \"ratio\", max = 0.{m}, window_ms = {w} }}"
        )),
        (0u32..6, 0u32..5).prop_map(|(c, d)| format!(
            ", budget = {{ kind = \"token_bucket\", capacity = {c}, deposit = 0.{d}, cost = 1 }}"
        )),
        (0u32..5).prop_map(|t| format!(", budget = {{ kind = \"breaker\", threshold = 0.{t} }}")),
    ]
}

/// One `[policies.NAME]` body (also the trace properties' policies).
pub(crate) fn policy() -> impl Strategy<Value = String> {
    let retry = (1u32..5, backoff(), budget(), any::<bool>()).prop_map(|(n, b, g, all)| {
        let on = if all {
            "[\"timeout\", \"error\", \"shed\", \"rejected\"]"
        } else {
            "[\"error\"]"
        };
        format!("retry = {{ max_attempts = {n}, on = {on}, backoff = {b}{g} }}")
    });
    let hedge = (1u32..40, 1u32..4, any::<bool>()).prop_map(|(d, n, c)| {
        format!("hedge = {{ delay_ms = {d}, max_attempts = {n}, cancel_losers = {c} }}")
    });
    let breaker = prop_oneof![
        Just(String::new()),
        (1u32..20, 1u32..10, 1u32..50, 1u32..5).prop_map(|(m, f, o, h)| format!(
            "\nbreaker = {{ window = {{ count = 50 }}, min_calls = {m}, failure_rate = 0.{f}, open_ms = {o}, half_open_calls = {h} }}"
        )),
    ];
    let throttle = prop_oneof![
        Just(String::new()),
        (11u32..30, 50u32..2000).prop_map(|(k, w)| format!(
            "\nthrottle = {{ k = {}, window_ms = {w} }}",
            k as f64 / 10.0
        )),
    ];
    let timeout = prop_oneof![
        Just(String::new()),
        (1u32..60).prop_map(|t| format!("timeout_ms = {t}\n"))
    ];
    (
        timeout,
        prop_oneof![retry, hedge, Just(String::new())],
        breaker,
        throttle,
    )
        .prop_map(|(t, r, b, th)| format!("{t}{r}{b}{th}"))
}

#[derive(Debug, Clone)]
struct Spec {
    call_policy: String,
    workload_policy: String,
    call_timeout: Option<u32>,
    cancellation: bool,
    server: bool,
    slots: u32,
    latency: u32,
    error_pct: u32,
    rate: u32,
    workload_timeout: Option<u32>,
    clients: u32,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (
            policy(),
            policy(),
            prop::option::of(1u32..120),
            any::<bool>(),
        ),
        (any::<bool>(), 1u32..4, 1u32..40, 0u32..100),
        (50u32..400, prop::option::of(5u32..200), 1u32..4),
    )
        .prop_map(
            |(
                (call_policy, workload_policy, call_timeout, cancellation),
                (server, slots, latency, error_pct),
                (rate, workload_timeout, clients),
            )| Spec {
                call_policy,
                workload_policy,
                call_timeout,
                cancellation,
                server,
                slots,
                latency,
                error_pct,
                rate,
                workload_timeout,
                clients,
            },
        )
}

impl Spec {
    fn toml(&self) -> String {
        let call_timeout = self
            .call_timeout
            .map_or(String::new(), |t| format!(", timeout_ms = {t}"));
        let handler = if self.server {
            format!(
                "type = \"server\"\nslots = {}\nqueue = 4\nservice = {{ exponential = {{ mean_ms = 2 }} }}\nbudget = \"none\"",
                self.slots
            )
        } else {
            "type = \"plan\"\nbudget = \"none\"".to_string()
        };
        let workload_timeout = self
            .workload_timeout
            .map_or(String::new(), |t| format!("timeout_ms = {t}\n"));
        format!(
            r#"[scenario]
name = "policy property"
seed = 3
[policies.call]
{}
[policies.client]
{}
[services.api]
routes = ["/x"]
[services.api.handler]
{handler}
cancellation = {}
branches = [{{ name = "s", calls = [{{ to = "store", call_policy = "call"{call_timeout} }}] }}]
[dependencies.store]
slots = 2
latency = {{ exponential = {{ mean_ms = {} }} }}
error_rate = {}
[workload]
type = "open"
rate_rps = {}
clients = {}
duration_ms = 2000
route = "/x"
call_policy = "client"
{workload_timeout}"#,
            self.call_policy,
            self.workload_policy,
            self.cancellation,
            self.latency,
            self.error_pct as f64 / 100.0,
            self.rate,
            self.clients,
        )
    }
}

fn max_attempts(model: &Model, policy: &str) -> u64 {
    let p = model
        .policies
        .iter()
        .find(|p| p.name == policy)
        .expect("a row names a policy of the model");
    match (&p.retry, &p.hedge) {
        (Some(r), _) => r.max_attempts as u64,
        (_, Some(h)) => h.max_attempts as u64,
        _ => 1,
    }
}

fn check(model: &Model, r: &RunResult, text: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(r.leaked, 0, "nothing held at the end\n{}", text);
    prop_assert_eq!(r.outcomes.ended(), r.outcomes.requests);
    prop_assert_eq!(r.calls.len(), 2, "a row per caller\n{}", text);
    for c in &r.calls {
        let CallStats {
            first_tries,
            attempts,
            retries,
            hedges,
            ok,
            error,
            timeout,
            shed,
            rejected,
            cancelled,
            breaker_refused,
            throttled,
            most_attempts,
            late_attempts,
            ..
        } = *c;
        prop_assert_eq!(
            attempts + breaker_refused + throttled,
            first_tries + retries + hedges,
            "{:?}\n{}",
            c,
            text
        );
        prop_assert_eq!(
            ok + error + timeout + shed + rejected + cancelled,
            attempts,
            "every attempt ends once: {:?}\n{}",
            c,
            text
        );
        prop_assert!(
            most_attempts <= max_attempts(model, &c.call_policy),
            "{:?}",
            c
        );
        prop_assert_eq!(late_attempts, 0, "{:?}", c);
    }
    let keeps_losers = model
        .policies
        .iter()
        .any(|p| p.hedge.is_some_and(|h| !h.cancel_losers));
    let cancels = match &model.services[0].handler {
        Handler::Plan(p) => p.cancellation,
        Handler::Server(s) => s.plan.as_ref().is_some_and(|p| p.cancellation),
        Handler::Respond => false,
    };
    if cancels && !keeps_losers {
        prop_assert_eq!(
            r.dependencies[0].wasted_ms,
            0.0,
            "cancelled losers and timed-out attempts waste nothing\n{}",
            text
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn policies_keep_the_counting_model(spec in spec()) {
        let text = spec.toml();
        let s = load_str(&text, Path::new("p.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("a generated scenario must load: {e}\n{text}"));
        let model = &s.rows[0].model;
        let r = run(model, 0).unwrap_or_else(|e| panic!("run failed: {e}\n{text}"));
        check(model, &r, &text)?;
        let again = run(model, 0).unwrap_or_else(|e| panic!("{e}"));
        prop_assert_eq!(&r.calls, &again.calls, "same seed, same calls");
    }
}
