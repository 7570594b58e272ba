//! Balancers: every request a replica is sent is in its row of replicas.csv
//! (a replica that is down included), the caller view's counts, and the
//! golden figures of the balancer scenarios.

use crate::common::*;

/// Three replicas, the second down from 1 s to 3 s of a 5 s run, under four
/// balancers (two that read load, one per caller).
const DOWN: &str = r#"
[scenario]
name = "down"
seed = 4

[services.api]
routes = ["/api"]
replicas = 3
balancer = "random"

[services.api.handler]
type = "server"
slots = 2
queue = 10
service = { exponential = { mean_ms = 10 } }

[workload]
type = "open"
rate_rps = 200
arrivals = "poisson"
duration_ms = 5000

[[faults]]
target = "api#2"
kind = "down"
at_ms = 1000
for_ms = 2000

[compare]
"services.api.balancer" = ["round_robin", "random", "two_choices", { kind = "peak_ewma", view = "caller" }]
"#;

#[test]
fn a_replica_that_is_down_keeps_its_row_and_the_rows_sum_to_the_service() {
    let (_guard, file) = file_with(DOWN);
    let dir = run_into(&file, &["--quiet"]);
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    let services = Csv::read(&dir.path().join("services.csv"));
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    assert_eq!(services.rows.len(), 4, "one row per balancer");
    for s in &services.rows {
        let b = s["balancer"].as_str();
        let rows = reps.select(&[("api.balancer", b)]);
        assert_eq!(rows.len(), 3, "{b}: every replica listed");
        let sum = |col: &str| rows.iter().map(|r| num(r, col)).sum::<f64>();
        assert_eq!(sum("arrived"), num(s, "arrived"), "{b}: arrivals");
        assert_eq!(sum("processed"), num(s, "processed"), "{b}: processed");
        assert_eq!(sum("shed"), num(s, "shed"), "{b}: shed");
        let pct: f64 = sum("arrived_pct");
        assert!((pct - 100.0).abs() < 1e-6, "{b}: shares sum to {pct}");
        // the down replica was sent requests it did not process: they failed
        // there, and they are the run's errors
        let down = reps.row(&[("api.balancer", b), ("replica", "2")]);
        let failed = num(down, "arrived") - num(down, "processed");
        assert!(failed > 0.0, "{b}: the down replica's failures are counted");
        let o = outcomes.row(&[("balancer", b)]);
        assert_eq!(failed, num(o, "errors"), "{b}: its failures are the errors");
        assert_eq!(num(s, "arrived"), num(o, "requests"), "{b}: every request");
    }
}

/// `scenarios/supermarket.toml` as the file runs: 10 s of warm-up, then 400 s
/// measured (3.6 million requests per balancer; about 40 s of CPU in a debug
/// build, the longest test, kept whole because the figures need it).
///
/// Tolerances, from a 12-seed sweep of 60 s runs (release binary): one run's
/// mean time in system has a standard deviation of 2.6 % for random (100
/// M/M/1 queues at load 0.9 relax slowly) and 1.1 % for two_choices; both
/// scale as 1 / sqrt(duration), so over 400 s they are 1.0 % and 0.4 %. The
/// bounds are the 3 % the docs state: three standard deviations for random,
/// and for two_choices room for the finite-n excess (Mitzenmacher's 2.614
/// service times is the n -> infinity limit; at n = 100 the mean is about
/// 1.2 % higher, 26.46 ms). The run gives random 98.45 ms, two_choices
/// 26.27 ms.
#[test]
fn supermarket_two_choices_against_random() {
    let dir = run_into(&scenario("scenarios/supermarket.toml"), &["--quiet"]);
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    let mean = |b: &str| {
        let row = outcomes.row(&[("balancer", b)]);
        assert_eq!(
            num(row, "answered"),
            num(row, "requests"),
            "{b}: all answered"
        );
        num(row, "mean_ms")
    };
    let (random, two) = (mean("random"), mean("two_choices"));
    // random: M/M/1, 1 / (1 - 0.9) = 10 service times of 10 ms
    assert!((random / 100.0 - 1.0).abs() < 0.03, "random {random} ms");
    // two_choices: Mitzenmacher's 2.614 service times
    assert!((two / 26.14 - 1.0).abs() < 0.03, "two_choices {two} ms");
}

/// `scenarios/balancers-linkerd.toml`, as the file runs (60,000 requests per
/// balancer).
///
/// round robin: 1/11 of the 30 s fault's requests time out (the slow
/// backend's median is 2 s; 0.3 % of its answers come within 1 s), 95.45 %
/// answered; the fault window's count is Poisson (about 2,700 +/- 52 failures,
/// +/- 0.09 points), so +/- 0.3 points is over three standard deviations.
///
/// least request (Envoy, two choices on the client's own counts): the slow
/// backend keeps as many requests outstanding as the others (about 15) but
/// each lasts the 1 s timeout: about 20 time out per second of the fault
/// (98.99 %; 99.03 % with distinct draws, before they became Envoy's, with
/// replacement); >= 98.5 %.
///
/// peak EWMA (Finagle's rule, on the client's own counts and costs): Linkerd
/// reports ~99.9 %; with the proxy hearing the client's 1 s timeout this model
/// gives 99.68 % (99.66-99.68 over seeds 1-5). Why: a timeout is observed as
/// 1 s, so the slow backend's cost is ~1,000 ms, while a healthy backend's
/// peak-sensitive cost sits near its recent peaks (~350 ms with sigma 0.25)
/// times ~16 (outstanding + 1): ~5,600. The slow backend wins a pair while it
/// has fewer than ~5 outstanding, so it holds ~5 at all times and ~6
/// requests a second time out (the time series shows 5-7 per second through
/// the fault). The bounds assert the model's figure with a margin of one
/// timeout a second (0.05 points) below and 0.08 above.
///
/// The `-held` rows run the same balancers in a proxy that does not hear the
/// client give up (`release = "replica"`: the timeout sits in the application
/// above the proxy): a request to the slow backend counts for its whole 2 s
/// and peak EWMA learns 2 s, so the slow backend holds fewer requests. Least
/// request gives 99.46 % (99.40-99.46 over seeds 1-5), peak EWMA 99.90 %
/// (99.90-99.92), Linkerd's ~99.9 %. About 57 of the 60,000 requests fail
/// there; the Poisson deviation of that count is ~8 (0.013 points), and the
/// bounds are about three of them each way: 99.85-99.96 %, above the 99.7 %
/// a reproduction of the post must reach. Least request held: 99.3-99.7 %.
#[test]
fn linkerd_one_slow_backend_of_eleven() {
    let outcomes = run_csv("scenarios/balancers-linkerd.toml", "outcomes");
    let pct = |v: &str| num(outcomes.row(&[("variant", v)]), "answered_pct");
    let (rr, lr, ewma) = (pct("round-robin"), pct("least-request"), pct("peak-ewma"));
    assert!((rr - 95.45).abs() <= 0.3, "round robin {rr} %");
    assert!((98.5..=99.3).contains(&lr), "least request {lr} %");
    assert!((99.6..=99.76).contains(&ewma), "peak EWMA {ewma} %");
    assert!(ewma > lr && lr > rr, "{rr} < {lr} < {ewma}");
    let (lr_held, ewma_held) = (pct("least-request-held"), pct("peak-ewma-held"));
    assert!(
        (99.3..=99.7).contains(&lr_held),
        "least request held {lr_held} %"
    );
    assert!(
        (99.85..=99.96).contains(&ewma_held) && ewma_held >= 99.7,
        "peak EWMA held {ewma_held} %"
    );
    assert!(lr_held > lr && ewma_held > ewma, "holding helps both");
    for v in [
        "round-robin",
        "least-request",
        "peak-ewma",
        "least-request-held",
        "peak-ewma-held",
    ] {
        let row = outcomes.row(&[("variant", v)]);
        assert_eq!(
            num(row, "answered") + num(row, "timed_out"),
            num(row, "requests"),
            "{v}: every request answered or timed out"
        );
    }
}

/// The backend's arrivals per (release, replica) of a two-replica backend
/// (100 ms each, least outstanding on the client's own counts) whose client
/// gives up after 25 or 30 ms.
fn release_arrivals(server: &str, workload: &str) -> Vec<(String, String, f64)> {
    let text = format!(
        "[scenario]\nname = \"r\"\nseed = 1\n\
         [services.backend]\nroutes = [\"/b\"]\nreplicas = 2\n\
         balancer = {{ kind = \"least_outstanding\", view = \"caller\" }}\n\
         [services.backend.handler]\ntype = \"server\"\n{server}\n\
         service = {{ constant = 100 }}\n\
         [workload]\ntype = \"open\"\nroute = \"/b\"\narrivals = \"uniform\"\n{workload}\n\
         [compare]\n\"services.backend.balancer.release\" = [\"caller\", \"replica\"]\n"
    );
    let (_guard, file) = file_with(&text);
    let dir = run_into(&file, &["--quiet"]);
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    reps.select(&[("service", "backend")])
        .into_iter()
        .map(|r| {
            (
                r["release"].clone(),
                r["replica"].clone(),
                num(r, "arrived"),
            )
        })
        .collect()
}

#[test]
fn a_held_pick_counts_until_the_replica_answers() {
    // two requests 50 ms apart, each given up on after 30 ms while its
    // replica works 100 ms on it: with `release = "caller"` the first stops
    // counting at 30 ms and the second takes the first replica again (ties go
    // to the first); held, the first still counts and the second goes to the
    // other replica
    let got = release_arrivals(
        "slots = 4\nqueue = 0",
        "rate_rps = 20\nrequests = 2\ntimeout_ms = 30",
    );
    let at = |v: &str, r: &str| got.iter().find(|g| g.0 == v && g.1 == r).unwrap().2;
    assert_eq!((at("caller", "1"), at("caller", "2")), (2.0, 0.0));
    assert_eq!((at("replica", "1"), at("replica", "2")), (1.0, 1.0));
}

#[test]
fn a_held_pick_ends_when_its_waiter_leaves_the_queue() {
    // one slot per replica, waiters leave the queue when their client gives
    // up (25 ms); requests 30 ms apart: the first two go to replicas 1 and 2
    // (held to 100 and 130 ms), the third waits at replica 1 and leaves its
    // queue at 85 ms; the fourth, at 90 ms, sees one held at each (the third
    // no longer counts) and takes the first. Had the third stayed counted,
    // the fourth would go to replica 2.
    let got = release_arrivals(
        "slots = 1\nqueue = 4\nabandon = true",
        "rate_rps = 33.333333\nrequests = 4\ntimeout_ms = 25",
    );
    let at = |v: &str, r: &str| got.iter().find(|g| g.0 == v && g.1 == r).unwrap().2;
    assert_eq!((at("replica", "1"), at("replica", "2")), (3.0, 1.0));
}

/// The backend's arrivals per (view, replica) when `text` runs with `extra`.
fn backend_arrivals(text: &str, extra: &[&str]) -> Vec<(String, String, f64)> {
    let (_guard, file) = file_with(text);
    let mut args = vec!["--quiet"];
    args.extend_from_slice(extra);
    let dir = run_into(&file, &args);
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    reps.select(&[("service", "backend")])
        .into_iter()
        .map(|r| (r["view"].clone(), r["replica"].clone(), num(r, "arrived")))
        .collect()
}

const BACKEND: &str = r#"
[services.backend]
routes = ["/b"]
replicas = 2
balancer = { kind = "least_outstanding", view = "global" }

[services.backend.handler]
type = "server"
slots = 4
queue = 0
service = { constant = 100 }

[compare]
"services.backend.balancer.view" = ["global", "caller"]
"#;

// In both tests one replica of two is busy with another caller's request:
// the global view sees it and goes to the other; a caller's own view sees
// nothing of its own there and takes the first (least_outstanding: ties go
// to the first).
#[test]
fn a_caller_view_counts_each_workload_on_its_own() {
    // two workloads send one request each at the same instant
    let text = format!(
        "[scenario]\nname = \"w\"\nseed = 1\n{BACKEND}\n\
         [workloads.a]\ntype = \"sequence\"\nroute = \"/b\"\nrequests = 1\n\
         [workloads.b]\ntype = \"sequence\"\nroute = \"/b\"\nrequests = 1\n"
    );
    let got = backend_arrivals(&text, &[]);
    let want = |v: &str, r: &str| got.iter().find(|g| g.0 == v && g.1 == r).unwrap().2;
    assert_eq!((want("global", "1"), want("global", "2")), (1.0, 1.0));
    assert_eq!((want("caller", "1"), want("caller", "2")), (2.0, 0.0));
}

#[test]
fn a_caller_view_counts_each_calling_instance_on_its_own() {
    // a front of two replicas (round robin) calls the backend once per request
    let text = format!(
        "[scenario]\nname = \"i\"\nseed = 1\n{BACKEND}\n\
         [services.front]\nroutes = [\"/f\"]\nreplicas = 2\n\
         [services.front.handler]\ntype = \"server\"\nslots = 4\nqueue = 0\n\
         service = {{ constant = 1 }}\nbudget = \"none\"\n\
         branches = [{{ name = \"b\", calls = [\"backend\"] }}]\n\
         [workload]\ntype = \"open\"\nroute = \"/f\"\narrivals = \"uniform\"\n\
         rate_rps = 1000\nrequests = 2\n"
    );
    let by = |got: &[(String, String, f64)], v: &str| -> Vec<f64> {
        got.iter().filter(|g| g.0 == v).map(|g| g.2).collect()
    };
    // each front instance has nothing of its own at the backend: both take
    // the first replica; the global view sees the first busy
    let two = backend_arrivals(&text, &[]);
    assert_eq!(by(&two, "global"), [1.0, 1.0]);
    assert_eq!(by(&two, "caller"), [2.0, 0.0]);
    // one front instance makes both calls: it sees its own first one
    let one = backend_arrivals(&text, &["--set", "services.front.replicas=1"]);
    assert_eq!(by(&one, "caller"), [1.0, 1.0]);
}

// ------------------------------------------------------------------------
// The balancers as the proxies' code has them: Envoy's least request draws,
// HAProxy's leastconn ties, random(N) ring and maxconn queue.

/// Each replica's `arrived` in `replicas.csv` of `text`'s run, per compare
/// row named by its `col` (in replica order).
fn arrivals_by(text: &str, col: &str) -> Vec<(String, Vec<f64>)> {
    let (_guard, file) = file_with(text);
    let dir = run_into(&file, &["--quiet"]);
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    for r in &reps.rows {
        let key = r[col].clone();
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(num(r, "arrived")),
            None => out.push((key, vec![num(r, "arrived")])),
        }
    }
    out
}

/// Envoy draws its two choices with replacement: a replica that is always
/// busier than the other still gets the picks whose two draws both land on
/// it, a quarter of them. Distinct draws (`two_choices`, and resim's
/// least_request before it followed Envoy) compare both replicas every time
/// and never send it one once it holds a request.
#[test]
fn envoy_least_request_draws_with_replacement() {
    // replica 2 is 1000 times slower: its first request holds it to the end
    let text = r#"
[scenario]
name = "lr"
seed = 3

[services.api]
routes = ["/api"]
replicas = 2
balancer = "least_request"

[services.api.handler]
type = "server"
slots = 1
queue = 10000
service = { constant = 1 }

[workload]
type = "open"
rate_rps = 50
arrivals = "uniform"
requests = 4000

[[faults]]
target = "api#2"
kind = "latency_factor"
at_ms = 0
for_ms = 1000000
value = 1000000.0

[compare]
"services.api.balancer" = ["least_request", "two_choices"]
"#;
    let got = arrivals_by(text, "api.balancer");
    let share = |b: &str| {
        let v = &got.iter().find(|(k, _)| k == b).unwrap().1;
        v[1] / (v[0] + v[1])
    };
    let envoy = share("least_request");
    assert!((envoy - 0.25).abs() < 0.03, "least_request: {envoy}");
    assert!(
        share("two_choices") < 0.002,
        "two_choices: {}",
        share("two_choices")
    );
}

/// `scenarios/balancers-envoy-least-request.toml`, as the file runs: the
/// draws with replacement cost time on the mean against distinct draws (a
/// third of the picks compare a replica with itself); over 10 seeds the
/// paired difference is 3.0 ms (2.1 to 3.9), and the file's run shows it
/// (46.65 against 42.04 ms).
#[test]
fn envoy_least_request_scenario() {
    let outcomes = run_csv("scenarios/balancers-envoy-least-request.toml", "outcomes");
    let mean = |v: &str| num(outcomes.row(&[("variant", v)]), "mean_ms");
    assert!(
        mean("least-request") > mean("two-choices") + 1.0,
        "{} against {}",
        mean("least-request"),
        mean("two-choices")
    );
}

/// HAProxy's leastconn, exactly: requests 10 ms apart, each served in 5 ms,
/// so every request finds all three replicas idle. Ties to the lowest index
/// send all of them to replica 1; HAProxy's tree sends each to the replica
/// that has been idle longest: replica 1, 2, 3, 1, 2, 3, ...
#[test]
fn leastconn_ties_go_to_the_replica_that_reached_its_count_first() {
    let text = r#"
[scenario]
name = "lc"
seed = 1

[services.api]
routes = ["/api"]
replicas = 3
balancer = { kind = "least_outstanding" }

[services.api.handler]
type = "server"
slots = 4
queue = 0
service = { constant = 5 }

[workload]
type = "open"
rate_rps = 100
arrivals = "uniform"
requests = 30

[compare]
"services.api.balancer.tie_break" = ["lowest_index", "first_reached"]
"#;
    let got = arrivals_by(text, "tie_break");
    let of = |t: &str| got.iter().find(|(k, _)| k == t).unwrap().1.clone();
    assert_eq!(of("lowest_index"), [30.0, 0.0, 0.0]);
    assert_eq!(of("first_reached"), [10.0, 10.0, 10.0]);
}

/// `scenarios/balancers-haproxy-leastconn.toml`, one run: with HAProxy's
/// rule the three fast backends share within 2 points of each other
/// wherever the slow one sits; with ties to the lowest index the first fast
/// backend takes over 15 points more than the last.
#[test]
fn leastconn_scenario_evens_the_fast_backends() {
    let reps = run_csv("scenarios/balancers-haproxy-leastconn.toml", "replicas");
    for (target, fast) in [("api#1", ["2", "3", "4"]), ("api#4", ["1", "2", "3"])] {
        let shares = |v: &str| -> Vec<f64> {
            fast.iter()
                .map(|r| {
                    num(
                        reps.row(&[("target", target), ("variant", v), ("replica", r)]),
                        "arrived_pct",
                    )
                })
                .collect()
        };
        let spread = |s: &[f64]| {
            s.iter().cloned().fold(f64::MIN, f64::max) - s.iter().cloned().fold(f64::MAX, f64::min)
        };
        let first = shares("first-reached");
        assert!(spread(&first) < 2.0, "{target} first_reached {first:?}");
        let low = shares("lowest-index");
        assert!(low[0] - low[2] > 15.0, "{target} lowest_index {low:?}");
    }
}

/// HAProxy's `full_hash` (Bob Jenkins' full-avalanche integer hash times a
/// prime), written again from its definition to check the ring.
fn haproxy_full_hash(x: u32) -> u32 {
    let mut a = x;
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

/// Each of `n` equal servers' share of HAProxy's ring: 16 points each at
/// full_hash(id x 4096 + j), a draw going to the closest point.
fn ring_shares(n: u32) -> Vec<f64> {
    let mut ring: Vec<(u32, usize)> = (0..n)
        .flat_map(|i| (0..16).map(move |j| (haproxy_full_hash((i + 1) * 4096 + j), i as usize)))
        .collect();
    ring.sort();
    let mut arcs = vec![0.0; n as usize];
    for p in 0..ring.len() {
        let (pos, s) = ring[p];
        let (next, t) = ring[(p + 1) % ring.len()];
        let gap = f64::from(next.wrapping_sub(pos));
        arcs[s] += gap / 2.0;
        arcs[t] += gap / 2.0;
    }
    arcs.iter().map(|a| a / 2f64.powi(32)).collect()
}

/// One draw a pick (`random(1)`): each backend's share is its arcs of
/// HAProxy's ring, uneven for equal weights (28.9, 18.5, 24.3 and 28.3 %
/// of four), whatever the backends hold.
#[test]
fn haproxy_random_single_draws_follow_the_ring() {
    let expected = ring_shares(4);
    let text = r#"
[scenario]
name = "ring"
seed = 2

[services.api]
routes = ["/api"]
replicas = 4
balancer = { kind = "haproxy_random", draws = 1 }

[services.api.handler]
type = "server"
slots = 100
queue = 0
service = { constant = 1 }

[workload]
type = "open"
rate_rps = 1000
arrivals = "poisson"
requests = 40000
"#;
    let got = &arrivals_by(text, "service")[0].1;
    let total: f64 = got.iter().sum();
    for (k, (&a, e)) in got.iter().zip(&expected).enumerate() {
        assert!(
            (a / total - e).abs() < 0.01,
            "replica {k}: {} vs {e}",
            a / total
        );
    }
    assert!(
        expected[0] - expected[1] > 0.08,
        "uneven arcs: {expected:?}"
    );
}

/// `scenarios/balancers-haproxy-random.toml`, one run: the slow backend
/// with the largest arc gets more with HAProxy's random(2) than with two
/// distinct uniform draws.
#[test]
fn haproxy_random_scenario_sends_the_slow_backend_more_than_two_choices() {
    let reps = run_csv("scenarios/balancers-haproxy-random.toml", "replicas");
    let slow = |v: &str| {
        num(
            reps.row(&[("target", "api#1"), ("variant", v), ("replica", "1")]),
            "arrived_pct",
        )
    };
    assert!(
        slow("haproxy-random-2") > slow("two-choices") + 2.0,
        "{} against {}",
        slow("haproxy-random-2"),
        slow("two-choices")
    );
}

/// Two replicas of one slot and no queue of their own, 10 ms each, requests
/// every 3.33 ms (30 of them): without a connection limit round robin sends
/// every other request to a busy replica, which sheds it; with `max_conn =
/// 1` the requests wait in the queue in front, first in first out, and each
/// replica takes the oldest when it finishes. Request k then starts at 5k ms
/// (k even) or 5(k - 1) + 3.33 ms (k odd); the last two wait longest:
/// 150 - 93.33 = 153.33 - 96.67 = 56.67 ms.
#[test]
fn a_request_waits_in_front_until_a_replica_has_room() {
    let text = r#"
[scenario]
name = "front"
seed = 1

[services.api]
routes = ["/api"]
replicas = 2
balancer = "round_robin"

[services.api.handler]
type = "server"
slots = 1
queue = 0
service = { constant = 10 }

[workload]
type = "open"
rate_rps = 300
arrivals = "uniform"
requests = 30

[compare]
"services.api.balancer" = ["round_robin", { kind = "round_robin", max_conn = 1 }]
"#;
    let (_guard, file) = file_with(text);
    let dir = run_into(&file, &["--quiet"]);
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    let plain = outcomes.row(&[("balancer", "round_robin")]);
    assert!(num(plain, "shed") > 0.0, "no limit: the busy replica sheds");
    let limited = &outcomes.rows[1];
    assert_eq!(num(limited, "answered"), 30.0);
    assert_eq!(num(limited, "shed"), 0.0);
    assert!(
        (num(limited, "worst_ms") - 56.667).abs() < 0.01,
        "{}",
        num(limited, "worst_ms")
    );
    let queue = Csv::read(&dir.path().join("proxy_queue.csv"));
    let q = &queue.rows[0];
    assert_eq!(num(q, "requests"), 30.0);
    assert_eq!(num(q, "queued"), 28.0, "all but the first two waited");
    assert_eq!(num(q, "dispatched"), 28.0);
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    let from: f64 = reps
        .rows
        .iter()
        .filter(|r| !r["from_queue"].is_empty())
        .map(|r| num(r, "from_queue"))
        .sum();
    assert_eq!(from, 28.0);
}

/// The queue's limits: a full queue refuses at once, a waiter past its
/// queue timeout is answered 503, and with `abandon = true` a waiter whose
/// client gave up leaves. Every request is accounted for once.
#[test]
fn the_queue_in_front_refuses_times_out_and_lets_go() {
    let text = r#"
[scenario]
name = "limits"
seed = 5

[services.api]
routes = ["/api"]
replicas = 3
balancer = { kind = "least_outstanding", max_conn = 2, max_queue = 20, queue_timeout_ms = 40 }

[services.api.handler]
type = "server"
slots = 2
queue = 0
abandon = true
service = { exponential = { mean_ms = 10 } }

[workload]
type = "open"
rate_rps = 700
arrivals = "poisson"
duration_ms = 5000
timeout_ms = 30
"#;
    let (_guard, file) = file_with(text);
    let dir = run_into(&file, &["--quiet"]);
    let q = &Csv::read(&dir.path().join("proxy_queue.csv")).rows[0];
    let o = &Csv::read(&dir.path().join("outcomes.csv")).rows[0];
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    let reached: f64 = reps.rows.iter().map(|r| num(r, "arrived")).sum();
    let (refused, timed_out, abandoned) =
        (num(q, "refused"), num(q, "timed_out"), num(q, "abandoned"));
    assert!(refused > 0.0 && abandoned > 0.0, "{q:?}");
    // the client gives up at 30 ms, before the 40 ms queue timeout: with
    // abandon the waiter is gone by then
    assert_eq!(timed_out, 0.0);
    assert_eq!(num(q, "requests"), num(o, "requests"));
    assert!(num(q, "requests") >= reached + refused + abandoned);
    assert!(
        num(q, "requests") - (reached + refused + abandoned) <= 20.0,
        "still waiting"
    );
    // refused at once: answered 503 (shed); no replica sheds (room is
    // checked before a request is sent)
    assert_eq!(num(o, "shed"), refused);
    assert!(reps.rows.iter().all(|r| num(r, "shed") == 0.0));
    // the same with the queue timeout first: waiters are answered 503 then
    let dir = run_into(&file, &["--quiet", "--set", "workload.timeout_ms=1000"]);
    let q = &Csv::read(&dir.path().join("proxy_queue.csv")).rows[0];
    let o = &Csv::read(&dir.path().join("outcomes.csv")).rows[0];
    assert!(num(q, "timed_out") > 0.0);
    assert_eq!(num(q, "abandoned"), 0.0);
    assert_eq!(num(o, "shed"), num(q, "refused") + num(q, "timed_out"));
}

/// `scenarios/balancers-haproxy-maxconn.toml`, as the file runs: plain
/// round robin loses most of the slow backend's quarter (about 75 %
/// answered over 20 seeds); with `max_conn = 4` the slow backend is passed
/// over when full and nearly all are answered (99.95 %); near capacity the
/// queue's 50 ms timeout answers 503 and the books add up.
#[test]
fn maxconn_scenario_skips_the_full_backend() {
    let dir = run_into(
        &scenario("scenarios/balancers-haproxy-maxconn.toml"),
        &["--quiet"],
    );
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    let pct = |v: &str| num(outcomes.row(&[("variant", v)]), "answered_pct");
    assert!(pct("round-robin") < 80.0, "{}", pct("round-robin"));
    assert!(pct("maxconn") > 99.5, "{}", pct("maxconn"));
    let queue = Csv::read(&dir.path().join("proxy_queue.csv"));
    let near = "maxconn-near-capacity";
    let q = queue.row(&[("variant", near)]);
    let o = outcomes.row(&[("variant", near)]);
    assert_eq!(num(q, "requests"), num(o, "requests"));
    assert!(num(q, "timed_out") > 0.0);
    assert_eq!(
        num(q, "timed_out"),
        num(o, "shed"),
        "each timed-out waiter: 503"
    );
    assert_eq!(
        num(q, "queued"),
        num(q, "dispatched") + num(q, "timed_out") + num(q, "abandoned")
    );
}
