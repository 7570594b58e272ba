//! The fast paths of docs/performance.md against the slow ones they stand for,
//! where a scenario can choose between them.

use crate::common::*;

/// A run without faults, time series or warm-up takes the plain path (the
/// `plain` flag: no fault or series question asked; the books' fast path). The
/// same scenario with a time series asks every question and keeps the books'
/// slow path: every table they both write must be the same byte for byte (the
/// series' own files and the report's charts aside).
#[test]
fn the_plain_path_writes_what_the_observed_path_writes() {
    for name in [
        "ay10-tariff-slowdown.toml",
        "checkout-composition.toml",
        "circuit-breaker.toml",
        "hedging.toml",
        "io22-abandon.toml",
        "io22-open-ladder.toml",
        "retry-policies.toml",
        "three-tier-deadline.toml",
    ] {
        let file = scenario(&format!("scenarios/{name}"));
        let text = std::fs::read_to_string(&file).expect("reads");
        assert!(
            !text.contains("[[faults]]")
                && !text.contains("window_ms")
                && !text.contains("warmup_ms"),
            "{name} must take the plain path"
        );
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
