//! `limiters.NAME.scope`: a limiter in a replicated service's middleware keeps
//! one state per replica (the default, as a sidecar's filter or a server
//! interceptor does) or one for the whole service.

use crate::common::{Csv, file_with, num, run_into, scenario};

/// Three replicas in turn, 60 req/s at even spacing for 5 s, a fixed window
/// of 10 a second in the middleware. Each replica gets 20 a second: kept per
/// replica, each lets 10 through (150 in all); kept once, the service lets 10
/// a second through (50). Exact: arrivals, turns and windows are fixed.
const TURNS: &str = r#"
[scenario]
name = "turns"

[services.api]
routes = ["/x"]
replicas = 3
middleware = ["ten"]

[services.api.handler]
type = "server"
slots = 2
queue = 10
service = { constant = 10 }

[limiters.ten]
limit = 10
window_ms = 1000

[workload]
type = "open"
rate_rps = 60
arrivals = "uniform"
duration_ms = 5000

[compare]
"limiters.ten.scope" = ["replica", "service"]
"#;

#[test]
fn a_rate_limit_per_replica_lets_each_replica_its_own_quota() {
    let (_d, file) = file_with(TURNS);
    let dir = run_into(&file, &["--quiet"]);
    let out = Csv::read(&dir.path().join("outcomes.csv"));
    let row = |s: &str| out.row(&[("scope", s)]);
    assert_eq!(num(row("replica"), "requests"), 300.0);
    assert_eq!(num(row("replica"), "answered"), 150.0);
    assert_eq!(num(row("replica"), "rejected"), 150.0);
    assert_eq!(num(row("service"), "answered"), 50.0);
    assert_eq!(num(row("service"), "rejected"), 250.0);
    let lim = Csv::read(&dir.path().join("limiters.csv"));
    let l = |s: &str| lim.row(&[("ten.scope", s), ("limiter", "ten")]);
    assert_eq!(l("replica")["scope"], "replica", "the scope column");
    assert_eq!(l("service")["scope"], "service");
    assert_eq!(num(l("replica"), "passed"), 150.0);
    assert_eq!(num(l("replica"), "rejected"), 150.0);
    // one bucket in each of three replicas, one for the service
    assert_eq!(num(l("replica"), "buckets"), 3.0);
    assert_eq!(num(l("service"), "buckets"), 1.0);
    // every replica served its 10 a second
    let reps = Csv::read(&dir.path().join("replicas.csv"));
    for k in ["1", "2", "3"] {
        let r = reps.row(&[("scope", "replica"), ("replica", k)]);
        assert_eq!(num(r, "processed"), 50.0, "replica {k}");
    }
}

/// With a time series, a rate limit kept per replica has a row per replica
/// and window in `timeseries_limiters.csv`: each replica lets its 10 of 20
/// through every second, and the replicas' rows add up to the limiter's own.
/// Kept once, the limiter has its own rows only (`replica` empty).
#[test]
fn a_rate_limit_per_replica_has_windows_per_replica() {
    let (_d, file) = file_with(&format!("{TURNS}\n[output]\nwindow_ms = 1000\n"));
    let dir = run_into(&file, &["--quiet"]);
    let ts = Csv::read(&dir.path().join("timeseries_limiters.csv"));
    assert!(
        ts.headers.iter().any(|h| h == "replica"),
        "{:?}",
        ts.headers
    );
    for w in ["0", "1000", "2000", "3000", "4000"] {
        let mut sum = [0.0, 0.0];
        for k in ["1", "2", "3"] {
            let filter = [("scope", "replica"), ("window_start_ms", w), ("replica", k)];
            let r = ts.row(&filter);
            assert_eq!(r["key"], "all");
            assert_eq!(
                (num(r, "passed"), num(r, "rejected")),
                (10.0, 10.0),
                "{w} {k}"
            );
            sum = [sum[0] + num(r, "passed"), sum[1] + num(r, "rejected")];
        }
        let own = ts.row(&[
            ("scope", "replica"),
            ("window_start_ms", w),
            ("replica", ""),
        ]);
        assert_eq!([num(own, "passed"), num(own, "rejected")], sum);
        let shared = ts.row(&[("scope", "service"), ("window_start_ms", w)]);
        assert_eq!(shared["replica"], "");
        assert_eq!(
            (num(shared, "passed"), num(shared, "rejected")),
            (10.0, 50.0)
        );
    }
}

/// `adaptive-per-pod.toml`: Gradient2 starts at 20 in flight and its library's
/// defaults keep it near there. The surge needs 36 in flight over six pods of
/// 8 slots: one limit for the service refuses about a quarter of the run
/// (72.4 % answered over 20 seeds), one per pod (6 in flight each) nearly
/// nothing (99.99 %). concurrency.csv has a row per pod for the first.
#[test]
fn gradient2_per_pod_answers_what_one_shared_limit_refuses() {
    let dir = run_into(&scenario("scenarios/adaptive-per-pod.toml"), &["--quiet"]);
    let out = Csv::read(&dir.path().join("outcomes.csv"));
    let answered = |s: &str| num(out.row(&[("scope", s)]), "answered_pct");
    let (pod, shared) = (answered("replica"), answered("service"));
    assert!(
        pod > 99.5 && shared < 80.0,
        "per pod {pod} %, shared {shared} %"
    );
    let c = Csv::read(&dir.path().join("concurrency.csv"));
    let per_pod = c.select(&[("scope", "replica")]);
    let mut pods: Vec<&str> = per_pod.iter().map(|r| r["replica"].as_str()).collect();
    pods.sort();
    assert_eq!(pods, ["1", "2", "3", "4", "5", "6"]);
    let shared_rows = c.select(&[("scope", "service")]);
    assert_eq!(shared_rows.len(), 1);
    assert_eq!(shared_rows[0]["replica"], "");
    // the pods' counts add up to the requests the limiter met
    let met: f64 = per_pod
        .iter()
        .map(|r| num(r, "passed") + num(r, "rejected"))
        .sum();
    assert_eq!(met, num(out.row(&[("scope", "replica")]), "requests"));
}
