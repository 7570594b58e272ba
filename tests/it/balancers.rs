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
/// (99.03 %); >= 98.5 %.
///
/// peak EWMA (Finagle's rule, on the client's own counts and costs): Linkerd
/// reports ~99.9 %; this model gives 99.68 % (99.66-99.68 over seeds 1-4),
/// below the 99.7 % first aimed at. Why: a timeout is observed as 1 s, so the
/// slow backend's cost is ~1,000 ms, while a healthy backend's peak-sensitive
/// cost sits near its recent peaks (~350 ms with sigma 0.25) times ~16
/// (outstanding + 1): ~5,600. The slow backend wins a pair while it has
/// fewer than ~5 outstanding, so it holds ~5 at all times and ~6 requests a
/// second time out (the time series shows 5-7 per second through the fault).
/// With narrower latencies (sigma 0.1) the same model gives 99.78 %: the
/// published figure depends on a distribution the post does not give. The
/// bounds assert the model's figure with a margin of one timeout a second
/// (0.05 points) below and 0.08 above.
///
/// Both upper bounds pin the caller view's rule that a request the client
/// gave up on stops counting at its timeout and is observed as 1 s: were the
/// proxy to hold it until the backend answers (2 s, observed as 2 s), as a
/// proxy under a client's own timeout does, least request would give 99.51 %
/// and peak EWMA 99.90 %, Linkerd's figure.
#[test]
fn linkerd_one_slow_backend_of_eleven() {
    let outcomes = run_csv("scenarios/balancers-linkerd.toml", "outcomes");
    let pct = |v: &str| num(outcomes.row(&[("variant", v)]), "answered_pct");
    let (rr, lr, ewma) = (pct("round-robin"), pct("least-request"), pct("peak-ewma"));
    assert!((rr - 95.45).abs() <= 0.3, "round robin {rr} %");
    assert!((98.5..=99.3).contains(&lr), "least request {lr} %");
    assert!((99.6..=99.76).contains(&ewma), "peak EWMA {ewma} %");
    assert!(ewma > lr && lr > rr, "{rr} < {lr} < {ewma}");
    for v in ["round-robin", "least-request", "peak-ewma"] {
        let row = outcomes.row(&[("variant", v)]);
        assert_eq!(
            num(row, "answered") + num(row, "timed_out"),
            num(row, "requests"),
            "{v}: every request answered or timed out"
        );
    }
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
