//! Client policies (`[policies]`): the published figures each bundled scenario
//! reproduces, asserted within sampling error, and the counting model of the
//! `calls` table.

use resim::scenario::{LoadOptions, Override, load, load_str};
use resim::sim::{CallStats, RunResult, run};
use std::path::Path;

use crate::common::scenario;

/// Every row of scenario `rel` (with `--set` overrides), run for replications
/// `reps`; per compare row, the `calls` rows summed over the replications.
fn calls_summed(rel: &str, sets: &[&str], reps: std::ops::Range<u64>) -> Vec<Vec<CallStats>> {
    let opts = LoadOptions {
        overrides: sets
            .iter()
            .map(|s| Override::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")))
            .collect(),
        ..LoadOptions::default()
    };
    let s = load(&scenario(rel), &opts).unwrap_or_else(|e| panic!("{e}"));
    s.rows
        .iter()
        .map(|row| {
            let mut sum: Vec<CallStats> = Vec::new();
            for rep in reps.clone() {
                let r = run(&row.model, rep).unwrap_or_else(|e| panic!("{e}"));
                if sum.is_empty() {
                    sum = r.calls.clone();
                } else {
                    for (a, b) in sum.iter_mut().zip(&r.calls) {
                        assert_eq!((&a.caller, &a.target), (&b.caller, &b.target));
                        a.first_tries += b.first_tries;
                        a.attempts += b.attempts;
                        a.retries += b.retries;
                        a.ok += b.ok;
                        a.error += b.error;
                        a.budget_refused += b.budget_refused;
                    }
                }
            }
            sum
        })
        .collect()
}

fn row<'a>(rows: &'a [CallStats], caller: &str, target: &str) -> &'a CallStats {
    rows.iter()
        .find(|c| c.caller == caller && c.target == target)
        .unwrap_or_else(|| panic!("no calls row {caller} -> {target} in {rows:?}"))
}

fn amplification(c: &CallStats) -> f64 {
    c.attempts as f64 / c.first_tries as f64
}

/// Brooker 2022, p = 0.5, 100 clients at 10/s for 100 s: rows none, retry3,
/// bucket, retry-breaker.
#[test]
fn retry_policies_reproduce_brookers_figures() {
    let rows = calls_summed("scenarios/retry-policies.toml", &[], 0..1);
    let [none, retry3, bucket, breaker] = [0, 1, 2, 3].map(|i| row(&rows[i], "main", "api"));
    // no policy: one attempt per call
    assert_eq!(none.attempts, none.first_tries);
    // N = 3 retries: success 1 - p^4 = 0.9375, load (1 - p^4) / (1 - p) = 1.875.
    // Attempts per call take 1..4 with sd 1.05, so over n ~ 10^5 calls the mean has
    // a standard error of ~0.0033: 0.015 is over 4 of them. Success is a Bernoulli
    // share with sd 0.242: standard error 0.0008, 0.004 is 5 of them.
    let n = retry3.first_tries as f64;
    assert!(n > 95_000.0, "{n}");
    let success = retry3.ok as f64 / n;
    assert!((success - 0.9375).abs() < 0.004, "success {success}");
    let a = amplification(retry3);
    assert!((a - 1.875).abs() < 0.015, "{a}");
    // the token bucket: ~1.10 (see token_bucket_load)
    token_bucket_load(bucket, 100);
    assert!((amplification(bucket) - 1.10).abs() < 0.01);
    // Brooker's retry breaker: failed / first tries (~0.5) stays above 0.1 after
    // a client's first failure, so at most a retry or two per client at the start
    assert!(amplification(breaker) < 1.002, "{}", amplification(breaker));
    assert!(breaker.budget_refused as f64 > 0.45 * breaker.first_tries as f64);
}

/// A token bucket per client, when retry demand (0.875 per first try at p = 0.5
/// and 3 retries) always exceeds the supply (0.1 per first try): each client
/// spends its 5 starting tokens and 0.1 per first try, less the under-1 token it
/// is left with (a little more when its last first tries happened to succeed):
/// `1 + (5 clients + 0.1 n) / n` within `1.5 clients / n`.
fn token_bucket_load(c: &CallStats, clients: u64) -> f64 {
    let n = c.first_tries as f64;
    let k = clients as f64;
    let expected = 1.0 + (5.0 * k + 0.1 * n) / n;
    let a = amplification(c);
    assert!(
        a <= expected + 1e-9 && expected - a < 1.5 * k / n,
        "{clients} clients: {a} vs {expected}"
    );
    a
}

/// 1,000 req/s split over 10, 100 or 1,000 clients for 10 s (rows: bucket x
/// clients, then retry-breaker x clients).
#[test]
fn retry_budgets_side_by_side_for_10_100_and_1000_clients() {
    let rows = calls_summed("scenarios/retry-clients.toml", &[], 0..1);
    let bucket: Vec<f64> = (0..3)
        .map(|i| amplification(row(&rows[i], "main", "api")))
        .collect();
    let breaker: Vec<f64> = (3..6)
        .map(|i| amplification(row(&rows[i], "main", "api")))
        .collect();
    // 10 and 100 clients: demand exceeds supply, the closed form holds
    token_bucket_load(row(&rows[0], "main", "api"), 10);
    token_bucket_load(row(&rows[1], "main", "api"), 100);
    // 1,000 clients with ~10 first tries each: demand (~8.75 retries) and the
    // 5 + ~1 tokens meet, so no closed form; Brooker's re-run lands near 1.49.
    // Over 10^4 first tries the sampling error of the mean is ~0.01: 0.04.
    assert!((bucket[2] - 1.49).abs() < 0.04, "{bucket:?}");
    assert!(bucket[0] < bucket[1] && bucket[1] < bucket[2], "{bucket:?}");
    // the retry breaker stays at 1.00 whatever the split (a client whose first
    // tries all succeeded may retry once before its first failure)
    for b in &breaker {
        assert!(*b < 1.002, "{breaker:?}");
    }
}

/// SRE book: 4 attempts at each of three layers send 64 to a database that fails
/// every call; retrying only at the top sends 4; a 10 % ratio budget ~1.1 per
/// layer, ~1.33 at the database.
#[test]
fn retry_amplification_reproduces_the_sre_book() {
    let rows = calls_summed("scenarios/retry-amplification.toml", &[], 0..1);
    let [all, top, budget] = [0, 1, 2].map(|i| &rows[i]);
    let users = row(all, "main", "layer1").first_tries;
    assert!(users > 1000);
    // exact: every call fails, so every layer makes all 4 attempts
    assert_eq!(row(all, "layer3", "database").attempts, 64 * users);
    assert_eq!(row(all, "layer2", "layer3").attempts, 16 * users);
    assert_eq!(
        row(top, "layer3", "database").attempts,
        4 * row(top, "main", "layer1").first_tries
    );
    // The ratio budget allows a retry while retries / first tries in the last
    // 10 s are below 0.1, so it settles at 0.1 plus at most one retry per window
    // (the cold start): 1.1 within 1 / (first tries in 10 s) ~ 0.001, plus the
    // cold start's few retries over ~2,000 calls; 0.01 bounds both.
    let users = row(budget, "main", "layer1").first_tries as f64;
    for (caller, target) in [
        ("layer1", "layer2"),
        ("layer2", "layer3"),
        ("layer3", "database"),
    ] {
        let a = amplification(row(budget, caller, target));
        assert!((a - 1.1).abs() < 0.01, "{caller} -> {target}: {a}");
    }
    let at_db = row(budget, "layer3", "database").attempts as f64 / users;
    assert!((at_db - 1.331).abs() < 0.02, "{at_db}");
}

/// One service calling a store through `policy`, `requests` sequence requests.
fn run_policy(policy: &str, store: &str, requests: u64) -> RunResult {
    let text = format!(
        r#"
[scenario]
name = "policy test"
seed = 5
[policies.p]
{policy}
[services.api]
routes = ["/x"]
[services.api.handler]
type = "plan"
budget = "none"
branches = [{{ name = "b", calls = [{{ to = "store", call_policy = "p", timeout_ms = 100 }}] }}]
[dependencies.store]
{store}
[workload]
type = "sequence"
requests = {requests}
"#
    );
    let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_backoff_past_the_deadline_ends_the_call_at_once_with_its_last_failure() {
    // attempts of 30 ms time out at 30 ms; exponential backoff 20, 40: the second
    // attempt starts at 50, times out at 80; the next backoff (40) would end at
    // 120, after the call's 100 ms: the call ends at 80 with a timeout
    let r = run_policy(
        "timeout_ms = 30\nretry = { max_attempts = 5, backoff = { kind = \"exponential\", base_ms = 20, cap_ms = 1000 } }",
        "latency = { constant = 50 }",
        1,
    );
    let c = &r.calls.iter().find(|c| c.target == "store").expect("row");
    assert_eq!(
        (c.first_tries, c.attempts, c.retries, c.timeout),
        (1, 2, 1, 2)
    );
    assert_eq!(r.response.max_ms(), 80.0);
    assert_eq!(
        r.dependencies[0].calls, 2,
        "each attempt is a call at the store"
    );
}

#[test]
fn retries_follow_only_the_outcomes_in_on() {
    // the store fails every call with `error`: retried with "error", not with "timeout"
    let on_error = run_policy(
        "retry = { max_attempts = 3, on = [\"error\"] }",
        "latency = { constant = 1 }\nerror_rate = 1.0",
        10,
    );
    let on_timeout = run_policy(
        "retry = { max_attempts = 3, on = [\"timeout\"] }",
        "latency = { constant = 1 }\nerror_rate = 1.0",
        10,
    );
    let s = |r: &RunResult| {
        let c = r.calls.iter().find(|c| c.target == "store").expect("row");
        (c.attempts, c.error, c.retries)
    };
    assert_eq!(s(&on_error), (30, 30, 20));
    assert_eq!(s(&on_timeout), (10, 10, 0));
}

#[test]
fn a_store_without_error_rate_draws_what_it_drew_before() {
    // error_rate 0 and no error_rate: the same latencies, the same run
    let a = run_policy(
        "timeout_ms = 100",
        "latency = { exponential = { mean_ms = 10 } }",
        50,
    );
    let b = run_policy(
        "timeout_ms = 100",
        "latency = { exponential = { mean_ms = 10 } }\nerror_rate = 0.0",
        50,
    );
    assert_eq!(a.response.max_ms(), b.response.max_ms());
    assert_eq!(a.dependencies[0].work_ms, b.dependencies[0].work_ms);
    assert_eq!(a.calls, b.calls);
}

/// The Tail at Scale: rows none, hedge 5, 10, 50 ms, and 10 ms keeping losers.
#[test]
fn hedging_cuts_the_p999_for_one_percent_more_attempts() {
    let out = crate::common::run_into(&scenario("scenarios/hedging.toml"), &[]);
    let outcomes = crate::common::Csv::read(&out.path().join("outcomes.csv"));
    let calls = crate::common::Csv::read(&out.path().join("calls.csv"));
    // the axis column: `call_policy`, and in the calls table (which has a
    // `call_policy` column of its own) the shortest unique suffix
    let (axis, calls_axis) = ("call_policy", "0.call_policy");
    let p999 = |p: &str| crate::common::num(outcomes.row(&[(axis, p)]), "p999_ms");
    // constant parts: the slow answer is exactly 1,000 ms; a hedge after d ms
    // answers at d + 1 unless both copies are slow (1e-4 of calls: ~2 of
    // 20,000, far fewer than the 20 above the p99.9)
    assert_eq!(p999("none"), 1000.0);
    assert_eq!(p999("hedge-5ms"), 6.0);
    assert_eq!(p999("hedge-10ms"), 11.0);
    assert_eq!(p999("hedge-50ms"), 51.0);
    for p in ["hedge-5ms", "hedge-10ms", "hedge-50ms", "hedge-10ms-keep"] {
        let r = calls.row(&[(calls_axis, p), ("target", "store")]);
        let n = crate::common::num(r, "first_tries");
        let hedges = crate::common::num(r, "hedges");
        // a copy goes for the 1 % still waiting at the delay: binomial share with
        // standard error sqrt(0.01 x 0.99 / 20,000) ~ 0.0007; 0.0035 is 5 of them
        assert!((hedges / n - 0.01).abs() < 0.0035, "{p}: {hedges} / {n}");
        assert_eq!(crate::common::num(r, "attempts"), n + hedges);
        // every hedged call has exactly one loser
        assert_eq!(crate::common::num(r, "cancelled"), hedges, "{p}");
        let wasted = crate::common::num(outcomes.row(&[(axis, p)]), "wasted_ms");
        if p.ends_with("keep") {
            // each loser (the slow first copy, given up at 11 ms) works on to 1,000
            assert!(
                wasted > 0.95 * hedges * 989.0 && wasted <= hedges * 1000.0,
                "{wasted} for {hedges} losers"
            );
        } else {
            assert_eq!(wasted, 0.0, "{p}: losers cancelled");
        }
    }
}

/// Runs scenario `text` (replication 0, first compare row).
fn run_text(text: &str) -> RunResult {
    let s = load_str(text, Path::new("t.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn an_open_breaker_keeps_calls_from_the_store_until_its_trials() {
    // a store failing every call, a request every 10 ms for 20 s: the breaker
    // opens at the 20th call (20 of 20 failed), and every 5 s one trial fails and
    // reopens it: the store sees 20 + 3 calls, the rest are refused
    let r = run_text(
        r#"
[scenario]
name = "breaker"
[policies.b]
breaker = { window = { count = 100 }, min_calls = 20, failure_rate = 0.5, open_ms = 5000, half_open_calls = 10 }
[services.api]
routes = ["/x"]
[services.api.handler]
type = "plan"
budget = "none"
branches = [{ name = "s", calls = [{ to = "store", call_policy = "b" }] }]
[dependencies.store]
latency = { constant = 2 }
error_rate = 1.0
[workload]
type = "open"
arrivals = "uniform"
rate_rps = 100
duration_ms = 20000
route = "/x"
"#,
    );
    let c = r.calls.iter().find(|c| c.target == "store").expect("row");
    assert_eq!(c.first_tries, 2000);
    assert_eq!((c.attempts, c.breaker_opened), (23, 4));
    assert_eq!(c.breaker_refused, 2000 - 23);
    assert_eq!(
        r.dependencies[0].calls, 23,
        "refused calls never reach the store"
    );
    assert_eq!(r.outcomes.answered, 0);
}

/// circuit-breaker.toml: rows none and breaker.
#[test]
fn circuit_breaker_scenario_stops_calls_reaching_the_failing_store() {
    let s = load(
        &scenario("scenarios/circuit-breaker.toml"),
        &LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let none = run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"));
    let with = run(&s.rows[1].model, 0).unwrap_or_else(|e| panic!("{e}"));
    // without the breaker every call reaches the store, 60 % fail (binomial
    // over ~6,000 calls: standard error 0.0064, 0.03 is over 4 of them)
    let n = none.outcomes.requests as f64;
    assert_eq!(none.dependencies[0].calls, none.outcomes.requests);
    assert!((none.outcomes.dropped as f64 / n - 0.6).abs() < 0.03);
    // with it: opened at least once per 5 s of the 60 s run after the first
    // ~20 calls, and the store sees only the calls before the first opening and
    // the trials (each cycle stops at its first failed trial: 10 at most)
    let c = with
        .calls
        .iter()
        .find(|c| c.target == "store")
        .expect("row");
    assert!(c.breaker_opened >= 11, "{}", c.breaker_opened);
    assert_eq!(with.dependencies[0].calls, c.attempts);
    assert_eq!(c.attempts + c.breaker_refused, c.first_tries);
    assert!(c.attempts < 100 + 10 * c.breaker_opened, "{}", c.attempts);
    assert!(c.attempts < c.first_tries / 50);
}

/// SRE book: under sustained overload the backend receives about K times what it
/// accepts (rows none, K = 2, K = 1.1).
#[test]
fn adaptive_throttling_sends_the_backend_k_times_its_accepts() {
    let rows = calls_summed("scenarios/adaptive-throttling.toml", &[], 0..1);
    let accepted = |c: &CallStats| (c.ok + c.error) as f64;
    let [none, k2, k11] = [0, 1, 2].map(|i| row(&rows[i], "main", "backend"));
    // the backend takes its 100 req/s in every row (120 s: ~12,000); its queue
    // keeps the slot busy, so only the first instants and the queue's last
    // requests move it: 2 %
    for c in [none, k2, k11] {
        assert!((accepted(c) / 12_000.0 - 1.0).abs() < 0.02, "{c:?}");
    }
    // without throttling it receives everything: 5x
    assert_eq!(none.attempts, none.first_tries);
    // With throttling, requests - K accepts balances the refusals: what reaches
    // the backend is K x accepts. The first window starts empty (nothing refused
    // until accepts lag), worth a few hundred attempts over ~12,000 accepts;
    // Poisson arrivals and coin flips move the rest by under 1 %: 0.03.
    for (c, k) in [(k2, 2.0), (k11, 1.1)] {
        let ratio = c.attempts as f64 / accepted(c);
        assert!((ratio - k).abs() < 0.03, "K = {k}: {ratio}");
        assert_eq!(c.attempts + c.throttled, c.first_tries);
        assert_eq!(c.retries, 0, "throttled calls are not retried");
    }
}

/// Same seed, same bytes for any thread count and shard split, with jittered
/// retries and throttle coins in every run (a sweep of the throttling file).
#[test]
fn policy_sweeps_do_not_depend_on_threads_or_shards() {
    let sweep = |extra: &[&str]| {
        let dir = tempfile::tempdir().expect("temp dir");
        crate::common::resim()
            .arg("sweep")
            .arg(scenario("scenarios/adaptive-throttling.toml"))
            .args(["-n", "4", "--quiet", "--set", "workload.duration_ms=5000"])
            .arg("--out")
            .arg(dir.path())
            .args(extra)
            .assert()
            .success();
        dir
    };
    let read = |d: &tempfile::TempDir, f: &str| {
        std::fs::read(d.path().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
    };
    let one = sweep(&["--jobs", "1"]);
    let two = sweep(&["--jobs", "2"]);
    for f in ["replications.csv", "summary.csv"] {
        assert!(read(&one, f) == read(&two, f), "{f} differs with 2 threads");
    }
    // the calls metrics are in it
    let reps = String::from_utf8(read(&one, "replications.csv")).expect("utf-8");
    assert!(reps.contains("calls.throttled"), "{reps}");
    let shards: Vec<tempfile::TempDir> = (1..=2)
        .map(|k| sweep(&["--jobs", "1", "--shard", &format!("{k}/2")]))
        .collect();
    let merged = tempfile::tempdir().expect("temp dir");
    crate::common::resim()
        .arg("merge")
        .args(shards.iter().map(|d| d.path()))
        .arg("--out")
        .arg(merged.path())
        .arg("--quiet")
        .assert()
        .success();
    assert!(read(&one, "summary.csv") == read(&merged, "summary.csv"));
}

/// Brooker's warning: ten shards behind round robin, one failing every call (a
/// fault on `store#3`), so exactly one call in ten fails without a policy; one
/// breaker at a 5 % threshold in front of the whole store opens on that shard and
/// refuses nearly every call, good shards' too.
#[test]
fn one_breaker_in_front_of_ten_shards_turns_ten_percent_into_nearly_all() {
    let dir = crate::common::run_into(&scenario("scenarios/breaker-shards.toml"), &[]);
    let outcomes = crate::common::Csv::read(&dir.path().join("outcomes.csv"));
    let share = |policy: &str| {
        let r = outcomes.row(&[("call_policy", policy)]);
        crate::common::num(r, "dropped") / crate::common::num(r, "requests")
    };
    // round robin over ten replicas: every tenth call reaches the failing one
    assert!((share("none") - 0.10).abs() < 0.001, "{}", share("none"));
    // the breaker is closed only for trial calls after each 5 s open period
    assert!(share("breaker") > 0.95, "{}", share("breaker"));
}

/// A hedge whose copies fail half the time, 2,000 calls 10 ms apart, each
/// answered (or failed) at 2 ms, the hedge delay 100 ms: with every failure
/// non-fatal (the default) a failed first copy sends the second at once, and
/// a call fails only when both do; with `non_fatal = []` (gRPC without
/// `nonFatalStatusCodes`) the first failure ends the call and no copy goes.
#[test]
fn a_fatal_failure_of_a_hedged_copy_ends_the_call() {
    let text = |non_fatal: &str| {
        format!(
            r#"
[scenario]
name = "hedge"
[policies.h]
hedge = {{ delay_ms = 100, max_attempts = 2{non_fatal} }}
[services.api]
routes = ["/x"]
[services.api.handler]
type = "plan"
budget = "none"
branches = [{{ name = "s", calls = [{{ to = "store", call_policy = "h" }}] }}]
[dependencies.store]
latency = {{ constant = 2 }}
error_rate = 0.5
[workload]
type = "open"
arrivals = "uniform"
rate_rps = 100
duration_ms = 20000
route = "/x"
"#
        )
    };
    let row = |r: &RunResult| r.calls.iter().find(|c| c.target == "store").cloned();
    let every = run_text(&text(""));
    let c = row(&every).expect("row");
    assert_eq!(c.first_tries, 2000);
    // a copy follows each failed first copy: about half of them, and every
    // call answered unless both failed (binomial: sd ~ 22 of 2,000 each)
    assert_eq!(c.hedges, c.attempts - c.first_tries);
    assert!((c.hedges as f64 - 1000.0).abs() < 120.0, "{}", c.hedges);
    assert!((every.outcomes.answered as f64 - 1500.0).abs() < 120.0);
    let fatal = run_text(&text(", non_fatal = []"));
    let c = row(&fatal).expect("row");
    assert_eq!((c.first_tries, c.attempts, c.hedges), (2000, 2000, 0));
    assert_eq!(c.ok + c.error, 2000);
    assert_eq!(fatal.outcomes.answered, c.ok);
    // named failures only: a `timeout` listed leaves an error fatal still
    let named = run_text(&text(r#", non_fatal = ["timeout"]"#));
    assert_eq!(row(&named).expect("row").hedges, 0);
}
