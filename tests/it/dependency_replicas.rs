//! Replicated dependencies: every call a replica was sent is in its row of
//! dependency_replicas.csv, the rows sum to the dependency's own (`all`),
//! faults on `NAME#i` act on one replica and on `NAME` on all, and a
//! balancer that reads load sends a slow replica fewer calls.

use crate::common::*;

/// One plan service calling `store`, three replicas of 10 ms (exponential),
/// the second five times slower for the whole run (`store#2`), 3,000 calls
/// at 300 a second; round robin against Envoy's least request on the
/// caller's own counts (the one caller is `api`).
const SLOW_SECOND: &str = r#"
[scenario]
name = "dependency-replicas"
seed = 1

[services.api]
routes = ["/api"]
handler = { type = "plan", budget = "none", branches = [{ name = "b", calls = ["store"] }] }

[dependencies.store]
latency = { exponential = { mean_ms = 10 } }
replicas = 3
balancer = "round_robin"

[workload]
type = "open"
rate_rps = 300
arrivals = "poisson"
requests = 3000

[[faults]]
target = "store#2"
kind = "latency_factor"
value = 5
at_ms = 0
for_ms = 1000000

[variants.round-robin]
[variants.least-request]
"dependencies.store.balancer" = { kind = "least_request", view = "caller" }

[compare]
variant = ["round-robin", "least-request"]
"#;

/// Every row of `v`: its count columns add up to its calls, and the
/// replicas' rows add up to the `all` row (the dependency's own books).
fn check_sums(reps: &Csv, v: &str, replicas: usize) {
    let rows = reps.select(&[("variant", v)]);
    assert_eq!(rows.len(), replicas + 1, "{v}: every replica, then all");
    for r in &rows {
        let ended = ["no_time", "ok", "errors", "timed_out", "given_up"]
            .iter()
            .map(|c| num(r, c))
            .sum::<f64>();
        assert_eq!(ended, num(r, "calls"), "{v} replica {}", r["replica"]);
    }
    let all = reps.row(&[("variant", v), ("replica", "all")]);
    let each = |col: &str| {
        rows.iter()
            .filter(|r| r["replica"] != "all")
            .map(|r| num(r, col))
            .sum::<f64>()
    };
    for col in ["calls", "ok", "errors", "timed_out", "given_up"] {
        assert_eq!(each(col), num(all, col), "{v}: {col}");
    }
    // the `all` row's work and busy come from the dependency's own books
    for col in ["work_ms", "mean_busy"] {
        let (sum, own) = (each(col), num(all, col));
        assert!(
            (sum - own).abs() <= 1e-6 * own.max(1.0),
            "{v}: {col} {sum} vs {own}"
        );
    }
    assert!((each("calls_pct") - 100.0).abs() < 1e-4, "{v}: shares");
}

/// Round robin sends each replica exactly a third (3,000 calls: 1,000 each),
/// slow or not. Least request (two replicas drawn with replacement, as Envoy
/// draws them, the one the caller has fewer calls outstanding at) sends the
/// slow replica fewer: it holds its calls five times as long, so it loses
/// most draws it is in, and gets the picks that draw it twice. Seed 1 gives
/// 1,238 / 554 / 1,208 (exact: the run is deterministic; 1,250 / 449 / 1,301
/// when the two draws were distinct replicas); the
/// model's claim, asserted with them, is only that the slow replica gets
/// less than its third and the fast ones more. The slow replica's mean time
/// to an answer is five times the others': over ~1,000 exponential draws of
/// mean 10 ms one replica's mean has a standard deviation of 0.32 ms (2.1 ms
/// for the slow one over 554 draws of mean 50), so the bounds are over four
/// of them.
#[test]
fn round_robin_splits_in_thirds_and_least_request_avoids_the_slow_replica() {
    let (_guard, file) = file_with(SLOW_SECOND);
    let dir = run_into(&file, &["--quiet"]);
    let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
    check_sums(&reps, "round-robin", 3);
    check_sums(&reps, "least-request", 3);
    let calls = |v: &str, r: &str| num(reps.row(&[("variant", v), ("replica", r)]), "calls");
    for r in ["1", "2", "3"] {
        assert_eq!(calls("round-robin", r), 1000.0, "round robin, replica {r}");
        let pct = num(
            reps.row(&[("variant", "round-robin"), ("replica", r)]),
            "calls_pct",
        );
        assert!((pct - 100.0 / 3.0).abs() < 1e-5, "a third: {pct}");
    }
    assert_eq!(calls("round-robin", "all"), 3000.0);
    let lr: Vec<f64> = ["1", "2", "3"]
        .iter()
        .map(|r| calls("least-request", r))
        .collect();
    assert_eq!(lr, [1238.0, 554.0, 1208.0], "seed 1's split");
    assert!(lr[1] < 1000.0 && lr[0] > 1000.0 && lr[2] > 1000.0, "{lr:?}");
    assert_eq!(calls("least-request", "all"), 3000.0);
    for v in ["round-robin", "least-request"] {
        let answer = |r: &str| {
            num(
                reps.row(&[("variant", v), ("replica", r)]),
                "mean_answer_ms",
            )
        };
        for r in ["1", "3"] {
            assert!((8.5..=11.5).contains(&answer(r)), "{v} {r}: {}", answer(r));
        }
        assert!((40.0..=60.0).contains(&answer("2")), "{v}: {}", answer("2"));
    }
    // every call answered: the requests are all answered
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    for v in ["round-robin", "least-request"] {
        assert_eq!(num(outcomes.row(&[("variant", v)]), "answered"), 3000.0);
    }
}

/// A `down` fault on `store#3` over the middle second of three: the calls
/// round robin sends it then fail at once, counted in its row as errors;
/// they are the run's failed requests. A fault on `store` (every replica)
/// slows all three.
#[test]
fn faults_on_one_replica_and_on_all() {
    let text = SLOW_SECOND
        .replace("requests = 3000", "requests = 900")
        .replace(
            "target = \"store#2\"\nkind = \"latency_factor\"\nvalue = 5\nat_ms = 0\nfor_ms = 1000000",
            "target = \"store#3\"\nkind = \"down\"\nat_ms = 1000\nfor_ms = 1000",
        );
    let (_guard, file) = file_with(&text);
    let dir = run_into(&file, &["--quiet"]);
    let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
    check_sums(&reps, "round-robin", 3);
    check_sums(&reps, "least-request", 3);
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    for v in ["round-robin", "least-request"] {
        let row = |r: &str| reps.row(&[("variant", v), ("replica", r)]);
        assert_eq!(
            num(row("1"), "errors") + num(row("2"), "errors"),
            0.0,
            "{v}"
        );
        let down = num(row("3"), "errors");
        assert!(down > 0.0, "{v}: the down replica's calls are counted");
        assert_eq!(
            down,
            num(outcomes.row(&[("variant", v)]), "dropped"),
            "{v}: its errors are the failed requests"
        );
    }
    // round robin does not look: a third of the second's ~300 calls
    let rr3 = num(
        reps.row(&[("variant", "round-robin"), ("replica", "3")]),
        "errors",
    );
    assert!((80.0..=120.0).contains(&rr3), "round robin's errors {rr3}");

    let all = SLOW_SECOND.replace("target = \"store#2\"", "target = \"store\"");
    let (_guard, file) = file_with(&all);
    let dir = run_into(&file, &["--quiet", "--set", "workload.requests=900"]);
    let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
    for r in ["1", "2", "3"] {
        let row = reps.row(&[("variant", "round-robin"), ("replica", r)]);
        let ms = num(row, "mean_answer_ms");
        assert!((40.0..=60.0).contains(&ms), "replica {r} slowed: {ms}");
    }
}

/// `replicas = 1` is the dependency as it always was: the same bytes in
/// every file, and no replica table.
#[test]
fn one_replica_writes_the_same_bytes_as_none() {
    let plain = SLOW_SECOND
        .replace("replicas = 3\nbalancer = \"round_robin\"\n", "")
        .replace("target = \"store#2\"", "target = \"store\"")
        .replace(
            "\"dependencies.store.balancer\" = { kind = \"least_request\", view = \"caller\" }",
            "",
        );
    let one = plain.replace(
        "latency = { exponential = { mean_ms = 10 } }",
        "latency = { exponential = { mean_ms = 10 } }\nreplicas = 1",
    );
    assert_ne!(plain, one);
    let bytes = |text: &str| {
        let (_guard, file) = file_with(text);
        let dir = run_into(
            &file,
            &["--quiet", "--no-report", "--set", "workload.requests=500"],
        );
        folder_bytes(dir.path())
    };
    let (a, b) = (bytes(&plain), bytes(&one));
    assert!(!a.contains_key("dependency_replicas.csv"));
    assert_eq!(a, b);
}

/// The caller view of a dependency: each calling service instance keeps its
/// own counts. A front of two replicas (round robin) calls the store once
/// per request, two requests 1 ms apart, each call lasting 100 ms: the
/// global view sees the first replica busy and sends the second call to the
/// second; each front instance has nothing of its own at the store, so both
/// take the first (least_outstanding: ties go to the first). One front
/// instance making both calls sees its own first one.
#[test]
fn a_caller_view_counts_each_calling_instance_on_its_own() {
    let text = r#"
[scenario]
name = "callers"
seed = 1

[services.front]
routes = ["/f"]
replicas = 2

[services.front.handler]
type = "server"
slots = 4
queue = 0
service = { constant = 1 }
budget = "none"
branches = [{ name = "b", calls = ["store"] }]

[dependencies.store]
latency = { constant = 100 }
replicas = 2
balancer = { kind = "least_outstanding", view = "global" }

[workload]
type = "open"
route = "/f"
arrivals = "uniform"
rate_rps = 1000
requests = 2

[compare]
"dependencies.store.balancer.view" = ["global", "caller"]
"#;
    let calls = |extra: &[&str]| -> Vec<(String, f64)> {
        let (_guard, file) = file_with(text);
        let mut args = vec!["--quiet"];
        args.extend_from_slice(extra);
        let dir = run_into(&file, &args);
        let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
        reps.rows
            .iter()
            .filter(|r| r["replica"] != "all")
            .map(|r| (r["view"].clone(), num(r, "calls")))
            .collect()
    };
    let by = |got: &[(String, f64)], v: &str| -> Vec<f64> {
        got.iter().filter(|g| g.0 == v).map(|g| g.1).collect()
    };
    let two = calls(&[]);
    assert_eq!(by(&two, "global"), [1.0, 1.0]);
    assert_eq!(by(&two, "caller"), [2.0, 0.0]);
    let one = calls(&["--set", "services.front.replicas=1"]);
    assert_eq!(by(&one, "caller"), [1.0, 1.0]);
}

/// Calls that wait for a replica's one slot are cancelled out of that
/// replica's line when their client gives up (`cancellation = true`): two
/// workloads, one patient (200 ms), one hasty (15 ms), so a hasty call
/// often waits behind a patient one and is cancelled while it waits. Every
/// call still ends once in its row, and the rows sum, through a warm-up and
/// a time series. (Taking the call out of the dependency's first line
/// instead left it in its replica's line, and the run failed.)
#[test]
fn calls_cancelled_while_waiting_leave_their_replicas_line() {
    let text = r#"
[scenario]
name = "waits"
seed = 3
warmup_ms = 500

[services.api]
routes = ["/api"]
handler = { type = "plan", budget = "none", cancellation = true, branches = [{ name = "b", calls = ["store"] }] }

[dependencies.store]
latency = { exponential = { mean_ms = 20 } }
slots = 1
replicas = 3
balancer = "random"

[workloads.patient]
type = "open"
route = "/api"
rate_rps = 75
arrivals = "poisson"
duration_ms = 4000
timeout_ms = 200

[workloads.hasty]
type = "open"
route = "/api"
rate_rps = 75
arrivals = "poisson"
duration_ms = 4000
timeout_ms = 15

[output]
window_ms = 500

[variants.random]
[variants.two-choices]
"dependencies.store.balancer" = "two_choices"

[compare]
variant = ["random", "two-choices"]
"#;
    let (_guard, file) = file_with(text);
    let dir = run_into(&file, &["--quiet"]);
    let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
    for v in ["random", "two-choices"] {
        check_sums(&reps, v, 3);
        for r in ["1", "2", "3"] {
            let row = reps.row(&[("variant", v), ("replica", r)]);
            assert!(num(row, "given_up") > 0.0, "{v} {r}: calls given up");
            assert!(num(row, "ok") > 0.0, "{v} {r}");
        }
    }
    // Without the warm-up (whose edge the books count by a request's end,
    // the replicas' rows by when its call was made): one call per request,
    // so the requests answered are the ok calls.
    let dir = run_into(&file, &["--quiet", "--set", "scenario.warmup_ms=0"]);
    let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    for v in ["random", "two-choices"] {
        check_sums(&reps, v, 3);
        let all = reps.row(&[("variant", v), ("replica", "all")]);
        let o = outcomes.row(&[("variant", v), ("workload", "all")]);
        assert_eq!(num(all, "ok"), num(o, "answered"), "{v}");
        assert_eq!(num(all, "calls"), num(o, "requests"), "{v}");
    }
}
