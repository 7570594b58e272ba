//! `scenarios/retry-budgets.toml`: the retry budgets real clients ship (gRPC's
//! throttling, Finagle's budget, the AWS SDKs' quota, Envoy's concurrent-retry
//! budget), each asserted against the figure its rule gives. The derivations
//! and the tolerances are in docs/scenarios.md ("Retry budgets real clients
//! ship").

use resim::scenario::{LoadOptions, Override, load};
use resim::sim::{CallStats, run};

use crate::common::scenario;

const FILE: &str = "scenarios/retry-budgets.toml";

/// The client's `calls` row (main -> api) of the rows of the scenario (with
/// `--set` overrides) whose policy is `policy` and whose store fails `f` of its
/// calls, run once (replication 0).
fn client_row(policy: &str, f: f64, sets: &[&str]) -> CallStats {
    let opts = LoadOptions {
        overrides: sets
            .iter()
            .map(|s| Override::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")))
            .collect(),
        ..LoadOptions::default()
    };
    let s = load(&scenario(FILE), &opts).unwrap_or_else(|e| panic!("{e}"));
    let row = s
        .rows
        .iter()
        .find(|r| r.labels[0] == policy && r.labels[1].parse::<f64>() == Ok(f))
        .unwrap_or_else(|| panic!("no row {policy}, {f}"));
    let r = run(&row.model, 0).unwrap_or_else(|e| panic!("{e}"));
    let c = r
        .calls
        .into_iter()
        .find(|c| c.caller == "main" && c.target == "api")
        .expect("the client's calls row");
    // every attempt accounted for
    assert_eq!(c.attempts, c.first_tries + c.retries);
    assert_eq!(c.attempts, c.ok + c.error + c.timeout, "{c:?}");
    c
}

/// The share of the retries the policy wanted that the budget refused.
fn refused_share(c: &CallStats) -> f64 {
    c.budget_refused as f64 / (c.retries + c.budget_refused) as f64
}

fn amplification(c: &CallStats) -> f64 {
    c.attempts as f64 / c.first_tries as f64
}

/// gRPC: per attempt the tokens drift by (1 - f) r - f, which is negative above
/// f = r / (1 + r): 9.09 % for r = 0.1. Just below (8.6 %) the tokens stay near
/// the maximum and no retry is refused; just above (9.6 %) they drain to half
/// in about 50 / 0.0056 = 9,000 attempts and every later retry is refused: over
/// 1,000 s (10^5 calls, not the file's 150 s) the drain is under a tenth of the
/// run. With r = 0.2 the point moves to 16.7 %.
#[test]
fn grpc_throttling_engages_above_a_failure_share_of_r_over_1_plus_r() {
    let long = "workload.duration_ms=1000000";
    let below = client_row("grpc", 0.086, &[long]);
    let above = client_row("grpc", 0.096, &[long]);
    assert!(refused_share(&below) < 0.02, "{below:?}");
    assert!(refused_share(&above) > 0.9, "{above:?}");
    // r = 0.2: 0.2 / 1.2 = 16.7 %
    let sets = [
        long,
        "policies.grpc.retry.budget.token_ratio=0.2",
        "compare.\"dependencies.store.error_rate\"=[0.157, 0.177]",
    ];
    let below = client_row("grpc", 0.157, &sets);
    let above = client_row("grpc", 0.177, &sets);
    assert!(refused_share(&below) < 0.02, "{below:?}");
    assert!(refused_share(&above) > 0.9, "{above:?}");
}

/// Finagle under total failure at R calls per second: each call deposits a
/// fifth of a retry and the reserve adds 10 retries per second, so 0.2 R + 10
/// retries per second go out: 1 + 0.2 + 10 / R attempts per call, 1.30 at 100
/// per second and 1.40 at 50. The reserve's first 100 retries at time 0 are
/// spent once: over 1,000 s (not the file's 150 s) they move the figure by
/// 100 / 100,000 = 0.001.
#[test]
fn finagle_under_total_failure_sends_1_2_plus_10_over_r_attempts_per_call() {
    let long = "workload.duration_ms=1000000";
    let c = client_row("finagle", 1.0, &[long]);
    assert!((amplification(&c) - 1.30).abs() < 0.02, "{c:?}");
    let c = client_row("finagle", 1.0, &[long, "workload.rate_rps=50"]);
    assert!((amplification(&c) - 1.40).abs() < 0.02, "{c:?}");
}

/// AWS standard mode against a store that always fails: a fresh quota of 500
/// pays 500 / 5 = 100 retries, no success ever refunds or adds a token, so no
/// retry follows: 100 in the first 10 s as in 1,000 s. After timeouts a retry
/// costs 10: 50 retries.
#[test]
fn aws_standard_sends_exactly_quota_over_cost_retries_then_none() {
    let c = client_row("aws", 1.0, &[]);
    assert_eq!(c.retries, 100);
    let c = client_row("aws", 1.0, &["workload.duration_ms=10000"]);
    assert_eq!(c.retries, 100);
    // every attempt times out (50 ms per attempt against 100 ms of work)
    let c = client_row(
        "aws",
        1.0,
        &[
            "policies.aws.timeout_ms=50",
            "policies.aws.retry.on=[\"timeout\"]",
        ],
    );
    assert_eq!(c.timeout, c.attempts);
    assert_eq!(c.retries, 50);
}

/// Envoy: retries open (from the decision to retry to that retry's answer)
/// never exceed max(3, 20 % of the attempts in flight). At 50 calls per second
/// against 100 ms of work, about 5 first tries are in flight: the minimum, 3,
/// holds, and the 3 places, each held 100 ms per retry, pass at most 30
/// retries per second: at most 1 + 30 / 50 = 1.6 attempts per call. A place
/// serves a call's two retries (200 ms), then waits for the next failed first
/// try (1/50 s on average): 2 / 0.22 s = 9.1 retries per second per place,
/// 1 + 27.3 / 50 = 1.545 attempts per call. At 1,000 per
/// second 100 first tries are in flight and x retries with x = 0.2 (100 + x),
/// x = 25: 250 retries per second, 1.25 attempts per call.
#[test]
fn envoy_keeps_retries_open_within_max_of_3_and_20_percent_of_active() {
    let c = client_row("envoy", 1.0, &["workload.rate_rps=50"]);
    assert_eq!(c.most_retries_open, 3, "{c:?}");
    assert!(amplification(&c) <= 1.6 + 1e-9, "{c:?}");
    assert!((amplification(&c) - 1.545).abs() < 0.02, "{c:?}");
    let c = client_row(
        "envoy",
        1.0,
        &["workload.rate_rps=1000", "workload.duration_ms=100000"],
    );
    assert!(c.most_retries_open > 20, "{c:?}");
    assert!((amplification(&c) - 1.25).abs() < 0.02, "{c:?}");
}

/// A scenario text: a client calling a store through policy `std` (`policy`
/// is its TOML body), 10 calls per second for 10 s, the store answering an
/// error after 10 ms; `workload` adds keys to the workload. With `inner`, the
/// policy is on the service's call to the store instead of on the client's.
fn run_text(policy: &str, workload: &str, inner: bool) -> CallStats {
    let (outer, call) = if inner {
        ("none", "{ to = \"store\", call_policy = \"std\" }")
    } else {
        ("std", "\"store\"")
    };
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 3\n\n[policies.std]\n{policy}\n\n\
         [services.api]\nroutes = [\"/x\"]\n[services.api.handler]\ntype = \"plan\"\n\
         budget = \"none\"\nbranches = [{{ name = \"b\", calls = [{call}] }}]\n\n\
         [dependencies.store]\nlatency = {{ constant = 10 }}\nerror_rate = 1.0\n\n\
         [workload]\ntype = \"open\"\nrate_rps = 10\narrivals = \"uniform\"\n\
         duration_ms = 10000\nroute = \"/x\"\ncall_policy = \"{outer}\"\n{workload}\n"
    );
    let s = resim::scenario::load_str(
        &text,
        std::path::Path::new("t.toml"),
        &LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let r = run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"));
    r.calls
        .into_iter()
        .find(|c| c.call_policy == "std")
        .expect("the policy's calls row")
}

/// gRPC throttles hedges too: 10 tokens, threshold 5, every copy fails after
/// 10 ms; a further copy goes 5 ms after the last one, or at once when one
/// fails. The first call's second copy goes at 5 ms (10 tokens), its third at
/// 10 ms (9 left): its three copies take 3 (7 left). The second call's copies
/// go with 7 and 6 left (above 5) and take 3 more (4 left). From the third
/// call on every second copy is refused: 4 hedges in all, one refusal per call
/// but the first two.
#[test]
fn grpc_throttling_stops_hedges_at_half_its_tokens() {
    let c = run_text(
        "hedge = { delay_ms = 5, max_attempts = 3, budget = { kind = \"grpc_throttle\", \
         max_tokens = 10, token_ratio = 0.1 } }",
        "",
        false,
    );
    assert_eq!(c.first_tries, 100);
    assert_eq!(c.hedges, 4, "{c:?}");
    assert_eq!(c.budget_refused, c.first_tries - 2, "{c:?}");
    assert_eq!(c.attempts, c.first_tries + c.hedges);
}

/// Envoy's budget gives a retry's place back when the call is given up during
/// its backoff: the service's call to the store retries with no deadline of its
/// own, and the client gives up at 35 ms, in the backoff after the second
/// attempt (0-10 ms, backoff, 20-30 ms, backoff), which cancels the call. Kept,
/// three such calls would hold every place (the minimum, 3) for good; given
/// back, every call sends its one retry.
#[test]
fn envoy_gives_back_a_retry_held_by_an_abandoned_call() {
    let c = run_text(
        "retry = { max_attempts = 3, on = [\"error\"], backoff = { kind = \"constant\", \
         base_ms = 10 }, budget = { kind = \"envoy\", percent = 20, min_retry_concurrency = 3 } }",
        "timeout_ms = 35",
        true,
    );
    assert_eq!(c.first_tries, 100);
    assert_eq!(c.retries, 100, "{c:?}");
    assert_eq!(c.budget_refused, 0, "{c:?}");
}
