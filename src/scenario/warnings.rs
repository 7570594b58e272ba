//! Settings that load but cannot do what they say, which `resim check`
//! warns of on stderr (the scenario is valid: exit code 0). Each kind of
//! warning is one function of [`CHECKS`], given a compare row's model and
//! returning its warnings, each naming the key path it is about.

use super::Scenario;
use crate::model::{AttemptOutcome, BreakerWindow, Model};

/// A check: the warnings of one compare row's model.
type Check = fn(&Model) -> Vec<String>;

/// Every check, in the order their warnings are printed.
const CHECKS: &[Check] = &[
    breaker_min_calls_above_window,
    per_try_timeout_never_retried,
];

/// The scenario's warnings. A warning every compare row gives is said once;
/// one that only some rows give names them.
pub fn warnings(s: &Scenario) -> Vec<String> {
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    for row in &s.rows {
        for check in CHECKS {
            for w in check(&row.model) {
                let label = row.labels.join(", ");
                match found.iter_mut().find(|(x, _)| *x == w) {
                    Some((_, rows)) => rows.push(label),
                    None => found.push((w, vec![label])),
                }
            }
        }
    }
    found
        .into_iter()
        .map(|(w, rows)| {
            if rows.len() == s.rows.len() {
                w
            } else {
                format!("{w} (in the compare rows {})", rows.join("; "))
            }
        })
        .collect()
}

/// A breaker whose `min_calls` exceeds its count window never opens: its
/// window holds at most `count` calls (src/sim/policy/breaker.rs drops the
/// oldest beyond it), so the minimum is never reached. resilience4j reads
/// such a setting as min(minimumNumberOfCalls, slidingWindowSize)
/// (CircuitBreakerMetrics); resim keeps `min_calls` as written and says so.
fn breaker_min_calls_above_window(m: &Model) -> Vec<String> {
    m.policies
        .iter()
        .filter_map(|p| {
            let b = p.breaker.as_ref()?;
            match b.window {
                BreakerWindow::Count(n) if b.min_calls > n => Some(format!(
                    "policies.{}.breaker.min_calls = {} is above its window's count ({n}): the window never holds more than {n} calls, so this breaker never opens (resilience4j reads such a setting as min(minimumNumberOfCalls, slidingWindowSize)); set min_calls to {n} or less",
                    p.name, b.min_calls
                )),
                _ => None,
            }
        })
        .collect()
}

/// A policy whose per-attempt `timeout_ms` cuts attempts that its retry
/// never retries (`retry.on` without `timeout`): the first attempt cut ends
/// the call, so the per-try timeout is the call's timeout and the retries
/// never follow a slow attempt. Envoy does the same when `retry_on` has none
/// of `5xx`, `gateway-error` and `reset` (Istio's default conditions): it may
/// be meant, but it is rarely what a per-try timeout is set for.
fn per_try_timeout_never_retried(m: &Model) -> Vec<String> {
    m.policies
        .iter()
        .filter_map(|p| {
            let t = p.timeout?;
            let r = p.retry.as_ref()?;
            (r.max_attempts > 1 && r.on & AttemptOutcome::Timeout.bit() == 0).then(|| {
                format!(
                    "policies.{}.timeout_ms = {} cuts attempts that are never retried (its retry.on has no `timeout`): the first attempt cut ends the call, so the per-try timeout acts as the call's timeout; add \"timeout\" to retry.on to retry a slow attempt (Envoy retries a per-try timeout only under 5xx, gateway-error or reset)",
                    p.name,
                    crate::error::num(t.as_ms()),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    fn scenario(breaker: &str, compare: &str) -> Scenario {
        let text = format!(
            "[scenario]\nname = \"w\"\nseed = 1\n\n[services.api.handler]\ntype = \"server\"\nslots = 4\nqueue = 8\nservice = {{ constant = 5 }}\n\n[services.api]\nroutes = [\"/x\"]\n\n[workload]\ntype = \"open\"\nroute = \"/x\"\nrate_rps = 10\nduration_ms = 1000\ncall_policy = \"p\"\n\n[policies.p]\nbreaker = {breaker}\n{compare}"
        );
        load_str(&text, Path::new("w.toml"), &LoadOptions::default()).expect("loads")
    }

    #[test]
    fn a_breaker_whose_minimum_exceeds_its_count_window_is_warned_of() {
        let s = scenario("{ window = { count = 6 }, min_calls = 100 }", "");
        let w = warnings(&s);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("policies.p.breaker.min_calls = 100 is above its window's count (6)"),
            "{w:?}"
        );
        for fine in [
            "{ window = { count = 6 }, min_calls = 6 }",
            "{ window = { ms = 1000 }, min_calls = 100 }",
        ] {
            assert!(warnings(&scenario(fine, "")).is_empty(), "{fine}");
        }
    }

    #[test]
    fn a_per_try_timeout_that_is_never_retried_is_warned_of() {
        let policy = |retry: &str| {
            let text = format!(
                "[scenario]\nname = \"w\"\n[services.api]\nroutes = [\"/x\"]\n[services.api.handler]\ntype = \"server\"\nslots = 4\nqueue = 8\nservice = {{ constant = 5 }}\n[workload]\ntype = \"open\"\nroute = \"/x\"\nrate_rps = 10\nduration_ms = 1000\ncall_policy = \"p\"\n[policies.p]\ntimeout_ms = 100\n{retry}"
            );
            warnings(&load_str(&text, Path::new("w.toml"), &LoadOptions::default()).expect("loads"))
        };
        let w = policy("retry = { max_attempts = 3, on = [\"error\", \"shed\"] }");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("policies.p.timeout_ms = 100 cuts attempts that are never retried"),
            "{w:?}"
        );
        for fine in [
            "retry = { max_attempts = 3, on = [\"timeout\"] }",
            "retry = { max_attempts = 3 }",
            "retry = { max_attempts = 1, on = [\"error\"] }",
            "",
        ] {
            assert!(policy(fine).is_empty(), "{fine}");
        }
    }

    #[test]
    fn a_warning_of_some_compare_rows_names_them() {
        let s = scenario(
            "{ window = { count = 6 }, min_calls = 5 }",
            "\n[compare]\n\"policies.p.breaker.min_calls\" = [5, 10]\n",
        );
        let w = warnings(&s);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].ends_with("(in the compare rows 10)"), "{w:?}");
    }
}
