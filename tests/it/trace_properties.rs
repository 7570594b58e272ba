//! Property test of `--trace` with client policies: random call chains (a
//! workload, maybe with a policy, reaches a front service that calls a mid
//! service and a store through random policies; the mid calls the store through
//! another: retries with any backoff and budget, hedges keeping or cancelling
//! their losers, breakers, throttles, per-attempt and per-call timeouts, servers
//! or plans, with or without cancellation, maybe a `down` fault on the store or
//! the mid server) give a trace where
//!
//! * span ids are unique, and every traced request has its one request span;
//! * every span's parent exists, belongs to the same request, and holds it in
//!   time; a span without a parent is a request, or work that outlived the span
//!   it would hang under (named, on the same request, ended first);
//! * every instant lies in its parent;
//! * a call through a policy that shows attempts holds exactly as many
//!   `attempt` spans as it sent.
//!
//! The checks are those of `trace::check_tree`, on trace.json as written.

use super::policy_properties::policy;
use super::trace::check_tree;
use proptest::prelude::*;
use resim::DrawAhead;
use resim::scenario::{LoadOptions, load_str};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone)]
struct Tier {
    server: bool,
    slots: u32,
    queue: u32,
    abandon: bool,
    service_ms: u32,
    cancellation: bool,
    /// `budget`: None = "none", else a number of ms.
    budget: Option<u32>,
}

fn tier() -> impl Strategy<Value = Tier> {
    (
        any::<bool>(),
        1u32..4,
        0u32..4,
        any::<bool>(),
        1u32..6,
        any::<bool>(),
        prop::option::of(20u32..300),
    )
        .prop_map(
            |(server, slots, queue, abandon, service_ms, cancellation, budget)| Tier {
                server,
                slots,
                queue,
                abandon,
                service_ms,
                cancellation,
                budget,
            },
        )
}

impl Tier {
    /// The handler's keys (without `branches`).
    fn handler(&self) -> String {
        let budget = self
            .budget
            .map_or("\"none\"".to_string(), |b| b.to_string());
        let kind = if self.server {
            format!(
                "type = \"server\"\nslots = {}\nqueue = {}\nabandon = {}\nservice = {{ exponential = {{ mean_ms = {} }} }}",
                self.slots, self.queue, self.abandon, self.service_ms
            )
        } else {
            "type = \"plan\"".to_string()
        };
        format!(
            "{kind}\nbudget = {budget}\ncancellation = {}",
            self.cancellation
        )
    }
}

#[derive(Debug, Clone)]
struct Spec {
    seed: u64,
    /// Policy bodies: the workload's, the front's calls to mid and to the
    /// store, the mid's calls to the store.
    policies: [String; 4],
    front: Tier,
    mid: Tier,
    /// `timeout_ms` of the calls front -> mid, front -> store, mid -> store.
    timeouts: [Option<u32>; 3],
    /// The front calls the store too (a second branch).
    front_store: bool,
    store_slots: u32,
    store_mean_ms: u32,
    store_error_pct: u32,
    client_policy: bool,
    rate: u32,
    requests: u32,
    workload_timeout: Option<u32>,
    trace: u32,
    /// A `down` fault: on the mid server (else the store), at, for (ms).
    down: Option<(bool, u32, u32)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (
            0u64..1_000_000,
            [policy(), policy(), policy(), policy()],
            tier(),
            tier(),
        ),
        (
            [
                prop::option::of(1u32..150),
                prop::option::of(1u32..150),
                prop::option::of(1u32..150),
            ],
            any::<bool>(),
            0u32..3,
            1u32..30,
            0u32..60,
        ),
        (
            any::<bool>(),
            50u32..400,
            5u32..60,
            prop::option::of(5u32..300),
            1u32..40,
            prop::option::of((any::<bool>(), 0u32..300, 1u32..200)),
        ),
    )
        .prop_map(
            |(
                (seed, policies, front, mid),
                (timeouts, front_store, store_slots, store_mean_ms, store_error_pct),
                (client_policy, rate, requests, workload_timeout, trace, down),
            )| Spec {
                seed,
                policies,
                front,
                mid,
                timeouts,
                front_store,
                store_slots,
                store_mean_ms,
                store_error_pct,
                client_policy,
                rate,
                requests,
                workload_timeout,
                trace,
                down,
            },
        )
}

impl Spec {
    fn toml(&self) -> String {
        let call = |to: &str, policy: &str, timeout: Option<u32>| {
            let t = timeout.map_or(String::new(), |t| format!(", timeout_ms = {t}"));
            format!("{{ to = \"{to}\", call_policy = \"{policy}\"{t} }}")
        };
        let [to_mid, to_store, deep] = self.timeouts;
        let mut front_branches = format!(
            "{{ name = \"mid\", calls = [{}] }}",
            call("mid", "mid", to_mid)
        );
        if self.front_store {
            front_branches.push_str(&format!(
                ", {{ name = \"store\", calls = [{}] }}",
                call("store", "store", to_store)
            ));
        }
        let mid_branches = format!(
            "{{ name = \"store\", calls = [{}] }}",
            call("store", "deep", deep)
        );
        let workload_timeout = self
            .workload_timeout
            .map_or(String::new(), |t| format!("timeout_ms = {t}\n"));
        let client_policy = if self.client_policy {
            "call_policy = \"client\"\n"
        } else {
            ""
        };
        let [client, mid, store, deep_policy] = &self.policies;
        let fault = match self.down {
            Some((on_mid, at, length)) => {
                let target = if on_mid && self.mid.server {
                    "mid"
                } else {
                    "store"
                };
                format!(
                    "[[faults]]\ntarget = \"{target}\"\nkind = \"down\"\nat_ms = {at}\nfor_ms = {length}\n"
                )
            }
            None => String::new(),
        };
        format!(
            r#"[scenario]
name = "trace property"
seed = {seed}
[policies.client]
{client}
[policies.mid]
{mid}
[policies.store]
{store}
[policies.deep]
{deep_policy}
[policies.unused]
retry = {{ max_attempts = 3, on = ["error"] }}
[services.front]
routes = ["/x"]
[services.front.handler]
{front}
branches = [{front_branches}]
[services.mid.handler]
{mid_handler}
branches = [{mid_branches}]
[dependencies.store]
slots = {store_slots}
latency = {{ exponential = {{ mean_ms = {store_mean} }} }}
error_rate = {error}
[workload]
type = "open"
rate_rps = {rate}
requests = {requests}
route = "/x"
{client_policy}{workload_timeout}{fault}"#,
            seed = self.seed,
            front = self.front.handler(),
            mid_handler = self.mid.handler(),
            store_slots = self.store_slots,
            store_mean = self.store_mean_ms,
            error = self.store_error_pct as f64 / 100.0,
            rate = self.rate,
            requests = self.requests,
        )
    }
}

/// trace.json's events for `text` traced with `n`.
fn traced(text: &str, n: u32) -> Vec<Value> {
    let s = load_str(text, Path::new("t.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("a generated scenario must load: {e}\n{text}"));
    let (_, bytes) = resim::run_scenario_traced(&s, false, Some(n), DrawAhead::Off)
        .unwrap_or_else(|e| panic!("run failed: {e}\n{text}"));
    let bytes = bytes.expect("a traced run writes its trace");
    let doc: Value = serde_json::from_slice(&bytes).expect("trace.json is JSON");
    doc["traceEvents"].as_array().expect("traceEvents").clone()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn traces_with_policies_nest_every_span_in_its_own_request(spec in spec()) {
        let text = spec.toml();
        let events = traced(&text, spec.trace);
        let expected = spec.trace.min(spec.requests) as usize;
        if let Err(e) = check_tree(&events, &[expected]) {
            return Err(TestCaseError::fail(format!("{e}\n{text}")));
        }
    }
}
