//! Outlier ejection (`outlier_detection`): `scenarios/outlier-ejection.toml`'s
//! two rows (Envoy's share rule refusing the one ejection at the default 10 %,
//! and `always_eject_one_host`'s ejection times), the requests the ejected
//! replica is spared, every request accounted for, and one detector per
//! caller in the caller view.

use crate::common::*;

/// The file as it runs (12,000 requests, uniform arrivals 10 ms apart, round
/// robin over three replicas, api#2 `down` for the whole run), one row per
/// value of `always_eject_one_host`. No tolerance: nothing is drawn at
/// random, so each figure is exact.
///
/// Without `always_eject_one_host` (Envoy's default): ejecting api#2 would
/// leave 1 / 3 = 33 % of the replicas ejected, above `max_ejection_pct` 10,
/// so Envoy's ejectHost refuses it every time: round robin keeps sending it
/// every third request, 4,000 errors of 12,000.
///
/// With it, one replica may go when none is out:
///
/// - Requests 1, 4, 7, 10 and 13 (at 10 ms x k) go to api#2 and fail at once:
///   the fifth ejects it at 130 ms, multiplier 1, for 30 s. Sweeps run every
///   10 s from the start; the first at or after 30,130 ms is 40,000 ms.
/// - Back in the turn at 40 s, it gets every third request again, and the
///   fifth failure ejects it at 40,120 ms: no sweep came between while it was
///   in, so the multiplier is 2 and the ejection 60 s; back at the first sweep
///   at or after 100,120 ms, 110,000 ms.
/// - Ejected a third time at 110,130 ms for 90 s: still out when the run ends
///   at 120 s (no `returned_at_ms`).
///
/// Envoy would give the same instants (its interval timer starts with the
/// cluster); the file's timing is the model's, not a measured Envoy run.
#[test]
fn outlier_ejection_follows_the_share_rule_and_its_times_are_exact() {
    let dir = run_into(&scenario("scenarios/outlier-ejection.toml"), &["--quiet"]);
    let ejections = Csv::read(&dir.path().join("ejections.csv"));
    let col = "always_eject_one_host";
    assert!(
        ejections.select(&[(col, "false")]).is_empty(),
        "at the default 10 %, one of three is too many"
    );
    let got: Vec<(f64, f64, f64, String)> = ejections
        .select(&[(col, "true")])
        .iter()
        .map(|r| {
            assert_eq!(
                (r["service"].as_str(), r["view"].as_str()),
                ("api", "global")
            );
            assert_eq!(r["replica"], "2", "only the failing replica");
            (
                num(r, "ejected_at_ms"),
                num(r, "multiplier"),
                num(r, "ejection_ms"),
                r["returned_at_ms"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (130.0, 1.0, 30_000.0, "40000".to_string()),
            (40_120.0, 2.0, 60_000.0, "110000".to_string()),
            (110_130.0, 3.0, 90_000.0, String::new()),
        ]
    );

    // per 10 s sweep interval: api#2 is sent its five requests in the
    // intervals it returns in (0, 40 and 110 s) and nothing in the others,
    // where it is ejected throughout; never ejected, a third of each
    // interval's 1,000 (333 or 334)
    let series = Csv::read(&dir.path().join("timeseries_replicas.csv"));
    assert_eq!(series.rows.len(), 2 * 12 * 3, "12 intervals of 3 replicas");
    for r in series.select(&[(col, "true"), ("replica", "api#2")]) {
        let start = num(r, "window_start_ms");
        let back = [0.0, 40_000.0, 110_000.0].contains(&start);
        assert_eq!(num(r, "sent"), if back { 5.0 } else { 0.0 }, "at {start}");
        let out = match start as u64 {
            0 => 10_000.0 - 130.0,
            40_000 => 10_000.0 - 120.0,
            110_000 => 10_000.0 - 130.0,
            _ => 10_000.0,
        };
        assert_eq!(num(r, "ejected_ms"), out, "at {start}");
    }
    for r in series.select(&[(col, "false"), ("replica", "api#2")]) {
        assert!((333.0..=334.0).contains(&num(r, "sent")), "{r:?}");
        assert_eq!(num(r, "ejected_ms"), 0.0, "{r:?}");
    }
    for v in ["false", "true"] {
        let sent: f64 = series
            .select(&[(col, v)])
            .iter()
            .map(|r| num(r, "sent"))
            .sum();
        assert_eq!(sent, 12_000.0, "{v}: every request in one interval's row");
    }

    let reps = Csv::read(&dir.path().join("replicas.csv"));
    let bad = reps.row(&[(col, "true"), ("replica", "2")]);
    // five failures in each of the three spells it was in, none while out
    assert_eq!(
        num(bad, "arrived"),
        15.0,
        "requests reached it while ejected"
    );
    assert_eq!(num(bad, "ejections"), 3.0);
    // 130 -> 40000, 40120 -> 110000, 110130 -> the run's end (120000)
    let out = (40_000.0 - 130.0) + (110_000.0 - 40_120.0) + (120_000.0 - 110_130.0);
    assert_eq!(num(bad, "ejected_ms"), out);
    let kept = reps.row(&[(col, "false"), ("replica", "2")]);
    assert_eq!(num(kept, "arrived"), 4_000.0, "every third request");
    assert_eq!(num(kept, "ejections"), 0.0);
    for v in ["false", "true"] {
        for good in ["1", "3"] {
            let r = reps.row(&[(col, v), ("replica", good)]);
            assert_eq!(num(r, "ejections"), 0.0);
            assert_eq!(num(r, "processed"), num(r, "arrived"), "replica {good}");
        }
    }

    // every request accounted for: the replica rows sum to the service's,
    // which are the workload's requests, and the bad replica's are the errors
    let services = Csv::read(&dir.path().join("services.csv"));
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    for (v, errors) in [("false", 4_000.0), ("true", 15.0)] {
        let (s, o) = (services.row(&[(col, v)]), outcomes.row(&[(col, v)]));
        let sum = |c: &str| {
            reps.select(&[(col, v)])
                .iter()
                .map(|r| num(r, c))
                .sum::<f64>()
        };
        assert_eq!(sum("arrived"), num(s, "arrived"), "{v}");
        assert_eq!(sum("processed"), num(s, "processed"), "{v}");
        assert_eq!(num(s, "arrived"), num(o, "requests"), "{v}");
        assert_eq!(num(o, "requests"), 12_000.0, "{v}");
        assert_eq!(num(o, "errors"), errors, "{v}");
        assert_eq!(num(o, "answered") + num(o, "errors"), num(o, "requests"));
    }
}

/// Two workloads in the caller view: each keeps its own detector (as each
/// proxy does), so each ejects api#2 after five failures of its own.
const BY_CALLER: &str = r#"
[scenario]
name = "by-caller"
seed = 1

[services.api]
routes = ["/api"]
replicas = 2
balancer = { kind = "round_robin", view = "caller" }

[services.api.outlier_detection]
consecutive_failures = 3
base_ejection_ms = 5000
interval_ms = 1000
max_ejection_pct = 50

[services.api.handler]
type = "server"
slots = 4
queue = 10
service = { constant = 5 }

[workloads.a]
type = "open"
route = "/api"
rate_rps = 100
arrivals = "uniform"
duration_ms = 3000

[workloads.b]
type = "open"
route = "/api"
rate_rps = 50
arrivals = "uniform"
duration_ms = 3000

[[faults]]
target = "api#2"
kind = "down"
at_ms = 0
for_ms = 3000
"#;

/// With two replicas one ejection is 50 % of them, which `max_ejection_pct`
/// = 50 allows (the default 10 % would allow none), leaving one replica in
/// each view. Caller a (100 req/s, round robin: api#2 at 10, 30, 50 ms)
/// ejects it at 50 ms; caller b (50 req/s: 20, 60, 100 ms) at 100 ms. Each
/// is back at the first 1 s sweep 5 s later: never within the 3 s run.
#[test]
fn each_caller_ejects_on_its_own_failures() {
    let (_guard, file) = file_with(BY_CALLER);
    let dir = run_into(&file, &["--quiet"]);
    let ejections = Csv::read(&dir.path().join("ejections.csv"));
    let got: Vec<(String, String, f64, String)> = ejections
        .rows
        .iter()
        .map(|r| {
            (
                r["view"].clone(),
                r["replica"].clone(),
                num(r, "ejected_at_ms"),
                r["returned_at_ms"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("a".to_string(), "2".to_string(), 50.0, String::new()),
            ("b".to_string(), "2".to_string(), 100.0, String::new()),
        ]
    );
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    let bad = reps.row(&[("replica", "2")]);
    assert_eq!(num(bad, "arrived"), 6.0, "three failures per caller");
    assert_eq!(num(bad, "ejections"), 2.0);
    // both views' time out added up, to the run's end: its last event,
    // 2,995 ms (a's request at 2,990 ms answered 5 ms later)
    assert_eq!(num(bad, "ejected_ms"), (2995.0 - 50.0) + (2995.0 - 100.0));
}
