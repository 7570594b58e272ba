//! Outlier detection on a replicated dependency
//! (`dependencies.NAME.outlier_detection`): exact ejection times of a
//! replica failing every call, the calls it is spared while out, its rows in
//! `dependency_replicas.csv` and `ejections.csv`, and nothing of it without
//! the table.

use crate::common::*;

/// One plan service calling `store` (three replicas of a constant 10 ms,
/// round robin), 100 requests a second 10 ms apart for 120 s (12,000), an
/// `error_rate` 1.0 fault on `store#2` for the whole run; Envoy's defaults
/// written out, and `always_eject_one_host` (without it, one of three is
/// 33 % of the replicas, above the 10 % share: nothing would be ejected).
/// The global view, and the caller view (the one caller `api`).
const FAILING_SECOND: &str = r#"
[scenario]
name = "dependency-outlier"
seed = 1

[services.api]
routes = ["/api"]
handler = { type = "plan", budget = "none", branches = [{ name = "b", calls = ["store"] }] }

[dependencies.store]
latency = { constant = 10 }
replicas = 3
balancer = "round_robin"

[dependencies.store.outlier_detection]
consecutive_failures = 5
interval_ms = 10000
base_ejection_ms = 30000
max_ejection_pct = 10
always_eject_one_host = true

[workload]
type = "open"
rate_rps = 100
arrivals = "uniform"
duration_ms = 120000

[[faults]]
target = "store#2"
kind = "error_rate"
value = 1.0
at_ms = 0
for_ms = 120000

[variants.global]
[variants.caller]
"dependencies.store.balancer" = { kind = "round_robin", view = "caller" }

[compare]
variant = ["global", "caller"]
"#;

/// No tolerance: nothing is drawn at random, so each time is exact.
///
/// - Request k is made at 10 x k ms; round robin sends requests 1, 4, 7, 10
///   and 13 to store#2, which answers each with its error 10 ms later: the
///   fifth failure, heard at 140 ms, ejects it (multiplier 1, 30 s). Sweeps
///   run every 10 s from the start: back at 40,000 ms, the first at or after
///   30,140.
/// - Back in the turn at 40 s it gets every third call again (40,000 to
///   40,120 ms); the fifth error, at 40,130, ejects it for 60 s (no sweep
///   came between, so the multiplier is 2): back at 110,000.
/// - Ejected a third time at 110,140 for 90 s: still out at the run's end.
///
/// So store#2 is sent 15 calls (5 per stint), all errors, and is out for
/// 39,860 + 69,870 + 9,860 = 119,590 ms; the other two share the other
/// 11,985. The same with each caller's own detector (the caller is `api`).
/// Envoy's detector would eject at the same instants given the same answers;
/// resim's dependency answers after a constant latency, not a network.
#[test]
fn a_failing_dependency_replica_is_ejected_at_exact_times_and_spared_calls() {
    let (_guard, file) = file_with(FAILING_SECOND);
    let dir = run_into(&file, &["--quiet"]);
    let ejections = Csv::read(&dir.path().join("ejections.csv"));
    assert_eq!(
        ejections.headers[1..5],
        ["service", "dependency", "view", "replica"],
        "a dependency's rows are told by the `dependency` column"
    );
    for (v, view) in [("global", "global"), ("caller", "api")] {
        let got: Vec<(f64, f64, f64, String)> = ejections
            .select(&[("variant", v)])
            .iter()
            .map(|r| {
                assert_eq!(
                    (
                        r["service"].as_str(),
                        r["dependency"].as_str(),
                        r["view"].as_str(),
                        r["replica"].as_str()
                    ),
                    ("", "store", view, "2"),
                    "{v}"
                );
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
                (140.0, 1.0, 30_000.0, "40000".to_string()),
                (40_130.0, 2.0, 60_000.0, "110000".to_string()),
                (110_140.0, 3.0, 90_000.0, String::new()),
            ],
            "{v}"
        );

        let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
        let row = |r: &str| reps.row(&[("variant", v), ("replica", r)]);
        let bad = row("2");
        assert_eq!(num(bad, "calls"), 15.0, "{v}: 5 calls per stint in");
        assert_eq!(num(bad, "errors"), 15.0, "{v}");
        assert_eq!(num(bad, "ejections"), 3.0, "{v}");
        assert_eq!(num(bad, "ejected_ms"), 119_590.0, "{v}");
        let mut sum = [0.0; 4];
        for r in ["1", "2", "3"] {
            let r = row(r);
            let ended: f64 = ["ok", "errors", "timed_out", "given_up"]
                .iter()
                .map(|c| num(r, c))
                .sum();
            assert_eq!(ended, num(r, "calls"), "{v}: each row sums");
            for (s, c) in sum.iter_mut().zip(["calls", "ok", "errors", "ejections"]) {
                *s += num(r, c);
            }
        }
        for r in ["1", "3"] {
            assert_eq!(num(row(r), "ejections"), 0.0, "{v}: never ejected");
            assert_eq!(num(row(r), "ejected_ms"), 0.0, "{v}");
        }
        assert_eq!(sum, [12_000.0, 11_985.0, 15.0, 3.0], "{v}: the replicas");
        let all = row("all");
        for (s, c) in sum.iter().zip(["calls", "ok", "errors", "ejections"]) {
            assert_eq!(*s, num(all, c), "{v}: `all` is the replicas' sum: {c}");
        }
        // every request accounted for: the failed ones are store#2's errors
        let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
        let o = outcomes.row(&[("variant", v)]);
        assert_eq!(num(o, "requests"), 12_000.0);
        assert_eq!(num(o, "answered"), 11_985.0);
        assert_eq!(num(o, "failed"), 15.0);
    }
    // no service ejects: no per-replica series of services
    assert!(!dir.path().join("timeseries_replicas.csv").exists());
}

/// Without the table the same run keeps the failing replica in the turn
/// (4,000 calls, every one an error) and writes no ejection columns or table.
#[test]
fn without_outlier_detection_nothing_is_ejected_or_written() {
    let start = FAILING_SECOND
        .find("[dependencies.store.outlier_detection]")
        .unwrap();
    let end = FAILING_SECOND.find("[workload]").unwrap();
    let text = format!("{}{}", &FAILING_SECOND[..start], &FAILING_SECOND[end..]);
    let (_guard, file) = file_with(&text);
    let dir = run_into(&file, &["--quiet"]);
    assert!(!dir.path().join("ejections.csv").exists());
    let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
    assert!(!reps.headers.iter().any(|h| h.starts_with("eject")));
    let bad = reps.row(&[("variant", "global"), ("replica", "2")]);
    assert_eq!(num(bad, "calls"), 4_000.0);
    assert_eq!(num(bad, "errors"), 4_000.0);
}

/// Envoy's share rule at its default 10 %: without `always_eject_one_host`
/// ejecting one of three replicas would leave 33 % ejected, so it is refused
/// each time store#2 reaches five errors in a row (DetectorImpl::ejectHost),
/// and store#2 keeps its 4,000 calls, every one an error, as without the
/// table; `max_ejection_pct = 34` lets the one go again.
#[test]
fn at_the_default_share_one_replica_of_three_is_never_ejected() {
    let text = FAILING_SECOND.replace("always_eject_one_host = true\n", "");
    assert!(!text.contains("always_eject_one_host"));
    let (_guard, file) = file_with(&text);
    let dir = run_into(&file, &["--quiet"]);
    let ejections = Csv::read(&dir.path().join("ejections.csv"));
    assert!(ejections.rows.is_empty(), "{:?}", ejections.rows);
    let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
    for v in ["global", "caller"] {
        let bad = reps.row(&[("variant", v), ("replica", "2")]);
        assert_eq!(num(bad, "calls"), 4_000.0, "{v}");
        assert_eq!(num(bad, "errors"), 4_000.0, "{v}");
        assert_eq!(num(bad, "ejections"), 0.0, "{v}");
    }
    let text = text.replace("max_ejection_pct = 10", "max_ejection_pct = 34");
    let (_guard, file) = file_with(&text);
    let dir = run_into(&file, &["--quiet"]);
    let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
    let bad = reps.row(&[("variant", "global"), ("replica", "2")]);
    assert_eq!(num(bad, "calls"), 15.0, "34 % allows one of three");
}

/// Calls given up on are failures too: store#2 ten times slower (100 ms)
/// and the client's timeout 50 ms, with `cancellation` so that `api` gives
/// its call up when its request times out. No tolerance (nothing drawn).
///
/// - Calls to store#2 at 10, 40, 70, 100 and 130 ms are given up 50 ms later:
///   the fifth at 180 ms ejects it. The call made at 160 ms, before the
///   ejection, is given up at 210, while store#2 is out; its return at the
///   40 s sweep clears that count, as Envoy's unejectHost does.
/// - Back at 40,000 ms, round robin's turn reaches it at 40,010; five fresh
///   give-ups (calls at 40,010 to 40,130) eject it at 40,180. The call at
///   40,160 again fails after the ejection and is cleared at the return.
/// - Back at 110,000, the same: calls at 110,010 to 110,130, ejected at
///   110,180 (the call at 110,160 was made before it).
///
/// So 6 + 6 + 6 = 18 calls to store#2, all given up, and the 18 requests
/// timed out; the ejections' multipliers and returns as with errors. (Were
/// the failure heard while out carried over, four fresh ones would eject it
/// at 40,150 and 110,140, after 16 calls.)
#[test]
fn calls_given_up_count_as_failures() {
    let text = FAILING_SECOND
        .replace(
            r#"budget = "none", branches"#,
            r#"budget = "none", cancellation = true, branches"#,
        )
        .replace(
            "kind = \"error_rate\"\nvalue = 1.0",
            "kind = \"latency_factor\"\nvalue = 10",
        )
        .replace(
            "duration_ms = 120000\n\n",
            "duration_ms = 120000\ntimeout_ms = 50\n\n",
        );
    assert!(text.contains("timeout_ms = 50") && text.contains("latency_factor"));
    let (_guard, file) = file_with(&text);
    let dir = run_into(&file, &["--quiet"]);
    let ejections = Csv::read(&dir.path().join("ejections.csv"));
    for v in ["global", "caller"] {
        let got: Vec<(f64, String)> = ejections
            .select(&[("variant", v)])
            .iter()
            .map(|r| (num(r, "ejected_at_ms"), r["returned_at_ms"].clone()))
            .collect();
        assert_eq!(
            got,
            [
                (180.0, "40000".to_string()),
                (40_180.0, "110000".to_string()),
                (110_180.0, String::new()),
            ],
            "{v}"
        );
        let reps = Csv::read(&dir.path().join("dependency_replicas.csv"));
        let bad = reps.row(&[("variant", v), ("replica", "2")]);
        assert_eq!(num(bad, "calls"), 18.0, "{v}");
        assert_eq!(num(bad, "given_up"), 18.0, "{v}");
        let all = reps.row(&[("variant", v), ("replica", "all")]);
        assert_eq!(num(all, "calls"), 12_000.0, "{v}");
        assert_eq!(num(all, "ok") + num(all, "given_up"), 12_000.0, "{v}");
        let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
        let o = outcomes.row(&[("variant", v)]);
        assert_eq!(num(o, "timed_out"), 18.0, "{v}");
        assert_eq!(num(o, "answered"), 11_982.0, "{v}");
    }
}
