//! The fast paths of docs/performance.md against the slow ones they stand for,
//! where a scenario can choose between them.

use crate::common::*;

/// Bundled scenarios that take the plain path: no faults, no time series, no
/// warm-up.
const PLAIN: [&str; 8] = [
    "ay10-tariff-slowdown.toml",
    "checkout-composition.toml",
    "circuit-breaker.toml",
    "hedging.toml",
    "io22-abandon.toml",
    "io22-open-ladder.toml",
    "retry-policies.toml",
    "three-tier-deadline.toml",
];

/// The path of bundled scenario `name`, checked to take the plain path.
fn plain_scenario(name: &str) -> std::path::PathBuf {
    let file = scenario(&format!("scenarios/{name}"));
    let text = std::fs::read_to_string(&file).expect("reads");
    assert!(
        !text.contains("[[faults]]") && !text.contains("window_ms") && !text.contains("warmup_ms"),
        "{name} must take the plain path"
    );
    file
}

/// A run without faults, time series or warm-up takes the plain path (the
/// `plain` flag: no fault or series question asked; the books' fast path). The
/// same scenario with a time series asks every question and keeps the books'
/// slow path: every table they both write must be the same byte for byte (the
/// series' own files and the report's charts aside).
#[test]
fn the_plain_path_writes_what_the_observed_path_writes() {
    for name in PLAIN {
        let file = plain_scenario(name);
        let plain = folder_bytes(run_into(&file, &["--quiet"]).path());
        let observed =
            folder_bytes(run_into(&file, &["--quiet", "--set", "output.window_ms=1000"]).path());
        assert!(
            observed.keys().any(|k| k.starts_with("timeseries")),
            "{name}: the second run keeps a time series"
        );
        let compared: Vec<&String> = plain
            .keys()
            .filter(|k| k.ends_with(".csv") && !k.starts_with("timeseries"))
            .collect();
        assert!(compared.len() >= 3, "{name}: {compared:?}");
        for k in compared {
            assert!(
                plain[k] == observed[k],
                "{name}: {k} differs between the plain and the observed path"
            );
        }
    }
}

/// A run with a warm-up takes the books' slow path (every request's send time
/// checked against the warm-up's end). With the workload starting at 5 ms and a
/// warm-up ending at 2 ms, the filter leaves nothing out, so every table the
/// plain run writes must come out the same, except what the warm-up changes on
/// purpose: its end is one more event (`run.csv` `events`), the offered
/// rate and Little's law are over the span from its end (`offered_rps`,
/// `littles_law_*`), and the time averages start at its end (`run.csv`
/// `mean_in_flight` and
/// `mean_dependency_work`, `services.csv`
/// `mean_busy_slots` and `mean_queue`), where nothing was at work before it,
/// so each is the plain one times T / (T - 2 ms) for the run's length T (in
/// `run.csv`, which gives T; a rise of at most 1 % in `services.csv`).
#[test]
fn the_warm_up_path_writes_what_the_plain_path_writes() {
    let averaged = |table: &str, col: &str| {
        matches!(
            (table, col),
            ("run.csv", "mean_in_flight" | "mean_dependency_work")
                | ("services.csv", "mean_busy_slots" | "mean_queue")
        )
    };
    let mut checked = std::collections::BTreeSet::new();
    // (a ladder's steps have no `start_ms`)
    for name in PLAIN.iter().filter(|n| !n.starts_with("io22")) {
        let file = plain_scenario(name);
        let start = ["--quiet", "--set", "workload.start_ms=5"];
        let plain_dir = run_into(&file, &start);
        let warm_dir = run_into(
            &file,
            &[&start[..], &["--set", "scenario.warmup_ms=2"]].concat(),
        );
        let (plain, warm) = (
            folder_bytes(plain_dir.path()),
            folder_bytes(warm_dir.path()),
        );
        let tables: Vec<&String> = plain.keys().filter(|k| k.ends_with(".csv")).collect();
        assert!(tables.len() >= 4, "{name}: {tables:?}");
        for k in tables {
            if plain[k] == warm[k] {
                checked.insert(k.clone());
                continue;
            }
            let (a, b) = (
                Csv::read(&plain_dir.path().join(k)),
                Csv::read(&warm_dir.path().join(k)),
            );
            assert_eq!(a.headers, b.headers, "{name}: {k}");
            assert_eq!(a.rows.len(), b.rows.len(), "{name}: {k}");
            let mut differs = false;
            for (ra, rb) in a.rows.iter().zip(&b.rows) {
                for col in &a.headers {
                    let (x, y) = (&ra[col], &rb[col]);
                    if k == "run.csv" && col == "events" {
                        assert_eq!(
                            num(rb, col),
                            num(ra, col) + 1.0,
                            "{name}: the warm-up's end"
                        );
                    } else if k == "run.csv"
                        && matches!(
                            col.as_str(),
                            "offered_rps" | "littles_law_in_flight" | "littles_law_dependency_work"
                        )
                    {
                        // the offered rate is over the span the averages
                        // cover: from the warm-up's end, 2 ms shorter
                        let (x, y) = (num(ra, col), num(rb, col));
                        let length = num(ra, "sim_time_ms");
                        let factor = length / (length - 2.0);
                        assert!(
                            (x == 0.0 && y == 0.0) || (y / x - factor).abs() <= 1e-4,
                            "{name}: {k} {col}: {y} against {x} over {length} ms"
                        );
                        differs |= x != y;
                    } else if averaged(k, col) {
                        let (x, y) = (num(ra, col), num(rb, col));
                        if k == "run.csv" {
                            let length = num(ra, "sim_time_ms");
                            let expected = x * length / (length - 2.0);
                            assert!(
                                // both printed to 6 decimals
                                (y - expected).abs() <= 1.5e-6,
                                "{name}: {k} {col}: {y} against {x} over {length} ms"
                            );
                        } else {
                            // every compared run lasts over 200 ms: 2 ms cut
                            // off its window raise an average by at most 1 %
                            assert!(
                                y >= x && y <= x * 1.01,
                                "{name}: {k} {col}: {y} against {x}"
                            );
                        }
                        differs |= x != y;
                    } else {
                        assert_eq!(x, y, "{name}: {k} {col} differs between the paths");
                    }
                }
            }
            assert!(
                k == "run.csv" || differs,
                "{name}: {k} differs in no column the warm-up may change"
            );
            checked.insert(k.clone());
        }
    }
    for table in [
        "outcomes.csv",
        "latency_cdf.csv",
        "calls.csv",
        "services.csv",
        "run.csv",
    ] {
        assert!(checked.contains(table), "{table} was compared: {checked:?}");
    }
}
