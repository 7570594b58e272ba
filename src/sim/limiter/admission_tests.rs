//! Every admission hears exactly once that its request is done: counted by the
//! test ledger (`admission::Ledger`) over scenarios with limiters on the
//! gateway and in middleware, reject and throttle modes (both overflows),
//! client timeouts, calls between services, cancellation, policies and faults.

use super::admission::Ledger;
use crate::model::Model;
use crate::scenario::{LoadOptions, load, load_str};
use crate::sim::world::World;
use std::path::Path;

/// A front server calling an internal mid tier, a plan calling the same mid
/// tier, a limiter at every place one can sit, clients that give up, and
/// faults at the mid tier, the front and the store.
const CHAIN: &str = r#"
[scenario]
name = "admissions"
seed = 3

[slo]
threshold_ms = 200

[gateway]
share_ms = 2
rules = [ { prefix = "/", limiters = ["edge"] } ]

[services.front]
routes = ["/checkout"]
middleware = ["front-throttle", "per-client"]
[services.front.handler]
type = "server"
slots = 4
queue = 8
abandon = true
service = { constant = 5 }
branches = [{ name = "mid", calls = ["mid"] }]
budget = "slo"
cancellation = true

[services.search]
routes = ["/search"]
middleware = ["per-client"]
[services.search.handler]
type = "plan"
budget = "slo"
cancellation = true
branches = [{ name = "mid", calls = ["mid"] }]

[services.mid]
middleware = ["mid-limit"]
[services.mid.handler]
type = "server"
slots = 4
queue = 8
abandon = true
service = { exponential = { mean_ms = 8 } }
branches = [{ name = "store", calls = ["store"] }]

[dependencies.store]
latency = { cycle = [5, 20, 80, 300, 10, 15] }

[limiters.edge]
algorithm = "token-bucket"
limit = 150
window_ms = 1000
mode = "throttle"
max_delay_ms = 30

[limiters.front-throttle]
algorithm = "sliding-log"
limit = 60
window_ms = 1000
mode = "throttle"
max_delay_ms = 120

[limiters.per-client]
algorithm = "fixed-window"
limit = 12
window_ms = 500
key = ["client"]

[limiters.mid-limit]
algorithm = "gcra"
limit = 40
window_ms = 1000

[workloads.checkout]
type = "open"
rate_rps = 60
clients = 4
duration_ms = 4000
timeout_ms = 150
route = "/checkout"
access = "gateway"

[workloads.search]
type = "open"
rate_rps = 30
clients = 2
duration_ms = 4000
timeout_ms = 100
route = "/search"
access = "direct"

[[faults]]
target = "mid"
kind = "error_rate"
at_ms = 1000
for_ms = 800
value = 0.5

[[faults]]
target = "front"
kind = "down"
at_ms = 2500
for_ms = 200

[[faults]]
target = "store"
kind = "latency_factor"
at_ms = 3000
for_ms = 500
value = 4

[compare]
"services.front.handler.cancellation" = [false, true]
"limiters.front-throttle.overflow" = ["hold", "reject-now"]
"services.mid.handler.abandon" = [true, false]
"#;

/// [`CHAIN`] with a retrying policy on the search workload: its requests'
/// attempts are calls too, and retries meet the limiters again.
fn with_retries() -> String {
    let policy = "[policies.retry]\ntimeout_ms = 60\nretry = { max_attempts = 3, on = [\"timeout\", \"error\", \"shed\", \"rejected\"] }\n\n[workloads.search]";
    let text = CHAIN.replacen("[workloads.search]", policy, 1);
    text.replacen(
        "access = \"direct\"",
        "access = \"direct\"\ncall_policy = \"retry\"",
        1,
    )
}

/// Runs `model` to its end and returns its ledger; every request must have
/// ended.
fn ledger_of(model: &Model) -> Ledger {
    let mut world = World::new(model, 0);
    world.start().unwrap();
    world.run_loop().unwrap();
    assert_eq!(world.requests_held(), 0, "{}: requests left", model.name);
    world.limiting_ledger().clone()
}

/// Every admission of every row heard exactly one done; the ledgers of all
/// rows together.
fn check_rows(models: impl IntoIterator<Item = (String, Model)>) -> Ledger {
    let mut all = Ledger::default();
    for (row, model) in models {
        let l = ledger_of(&model);
        assert!(
            l.faults.is_empty(),
            "{row}: {:?}",
            &l.faults[..l.faults.len().min(5)]
        );
        assert!(
            l.open.is_empty(),
            "{row}: {} admissions never done",
            l.open.len()
        );
        assert_eq!(l.admits, l.dones, "{row}");
        all.admits += l.admits;
        all.dones += l.dones;
        all.call_dones += l.call_dones;
        for (k, n) in l.by_outcome {
            *all.by_outcome.entry(k).or_default() += n;
        }
    }
    all
}

fn rows(text: &str, file: &Path) -> Vec<(String, Model)> {
    let s = if text.is_empty() {
        load(file, &LoadOptions::default()).unwrap()
    } else {
        load_str(text, file, &LoadOptions::default()).unwrap()
    };
    s.rows
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("{} row {i}", file.display()), r.model.clone()))
        .collect()
}

#[test]
fn every_admission_hears_once_that_its_request_is_done() {
    let all = check_rows(rows(CHAIN, Path::new("chain.toml")));
    assert!(all.admits > 5000, "{all:?}");
    // each way a request's work can leave was met
    for kind in [
        "Answered", "Dropped", "Error", "Shed", "Rejected", "TimedOut",
    ] {
        assert!(
            all.by_outcome.get(kind).is_some_and(|&n| n > 0),
            "{kind}: {all:?}"
        );
    }
    // the mid tier's requests are calls from the front and the plan
    assert!(
        all.call_dones > 500 && all.call_dones < all.dones,
        "{all:?}"
    );
    let retried = check_rows(rows(&with_retries(), Path::new("retries.toml")));
    assert!(retried.admits > 5000, "{retried:?}");
}

#[test]
fn the_bundled_limiter_scenarios_balance_their_admissions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut models = Vec::new();
    for name in [
        "adaptive-limits.toml",
        "dy13-algorithms.toml",
        "dy13-limiter-keys.toml",
        "dy13-limiter-placement.toml",
        "dy13-two-limiters.toml",
        "noisy-neighbour.toml",
    ] {
        models.extend(rows("", &dir.join(name)));
    }
    let all = check_rows(models);
    assert!(all.admits > 1000, "{all:?}");
    assert!(
        all.by_outcome.get("Rejected").is_some_and(|&n| n > 0),
        "{all:?}"
    );
}

/// `latency` runs from the instant a limiter lets the request through (a
/// throttled one's at the end of its hold) to the instant its answer leaves
/// the service: here always the 10 ms of service after the middleware, and the
/// gateway's 5 ms share before it.
#[test]
fn a_done_latency_runs_from_the_pass_to_the_answer() {
    let text = r#"
[scenario]
name = "latency"
[gateway]
share_ms = 5
rules = [ { prefix = "/", limiters = ["edge"] } ]
[services.s]
routes = ["/r"]
middleware = ["hold"]
[services.s.handler]
type = "server"
slots = 1
queue = 8
service = { constant = 10 }
[limiters.edge]
limit = 100
window_ms = 1000
[limiters.hold]
algorithm = "token-bucket"
limit = 1
window_ms = 100
mode = "throttle"
max_delay_ms = 1000
[workload]
type = "open"
rate_rps = 1000
requests = 3
arrivals = "uniform"
access = "gateway"
"#;
    let (_, model) = rows(text, Path::new("latency.toml")).remove(0);
    let l = ledger_of(&model);
    let ms = |t: crate::engine::Ticks| t.as_ms();
    // sent at 0, 1, 2 ms; at the service 5 ms later; `hold` lets them through at
    // 5, 105, 205 ms; answered 10 ms later. The gateway limiter let each through
    // when it was sent: 15, 114 and 213 ms before the answer.
    let got: Vec<(String, f64)> = l
        .latencies
        .iter()
        .map(|&(lim, t)| (model.limiters[lim].name.clone(), ms(t)))
        .collect();
    let want = [
        ("edge", 15.0),
        ("hold", 10.0),
        ("edge", 114.0),
        ("hold", 10.0),
        ("edge", 213.0),
        ("hold", 10.0),
    ];
    let want: Vec<(String, f64)> = want.iter().map(|&(n, t)| (n.to_string(), t)).collect();
    assert_eq!(got, want);
    assert_eq!(l.by_outcome.get("Answered"), Some(&6));
}

/// A concurrency limit's done carries its count in flight when the request
/// was let through, itself included, as Netflix's limiter takes it
/// (AbstractLimiter.createListener), not the count when it ends: three
/// requests 1 ms apart, each served 10 ms on its own slot, are let in at
/// counts 1, 2, 3 and end at counts 3, 2, 1.
#[test]
fn a_concurrency_done_carries_the_count_at_its_admission() {
    let text = r#"
[scenario]
name = "in-flight"
[services.s]
routes = ["/r"]
middleware = ["c"]
[services.s.handler]
type = "server"
slots = 4
queue = 0
service = { constant = 10 }
[limiters.c]
kind = "concurrency"
algorithm = "aimd"
[workload]
type = "open"
rate_rps = 1000
requests = 3
arrivals = "uniform"
"#;
    let (_, model) = rows(text, Path::new("in-flight.toml")).remove(0);
    let l = ledger_of(&model);
    assert_eq!(l.in_flight, [1, 2, 3]);
    // a rate limiter's admissions carry none
    let rate = text.replace(
        "kind = \"concurrency\"\nalgorithm = \"aimd\"",
        "limit = 10\nwindow_ms = 1000",
    );
    assert!(rate.contains("window_ms"));
    let (_, model) = rows(&rate, Path::new("in-flight.toml")).remove(0);
    assert_eq!(ledger_of(&model).in_flight, [0, 0, 0]);
}
