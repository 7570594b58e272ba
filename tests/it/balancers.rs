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
