//! `[limiters]`: algorithm, limit, window, key and mode of each rate limiter
//! (a concurrency limiter's keys: [`super::concurrency`]).

use super::*;

/// Every `[limiters.NAME]`, in declaration order.
pub(super) fn limiters(raw: &RawScenario, limits: &RunLimits) -> R<Vec<Limiter>> {
    raw.limiters
        .iter()
        .map(|(name, l)| limiter(&format!("limiters.{name}"), name, l, limits))
        .collect()
}

fn limiter(path: &str, name: &str, l: &RawLimiter, limits: &RunLimits) -> R<Limiter> {
    let concurrent = one_of(
        &format!("{path}.kind"),
        l.kind.as_deref(),
        &[("rate", false), ("concurrency", true)],
    )?;
    if concurrent {
        return super::concurrency::limiter(path, name, l);
    }
    super::concurrency::no_concurrency_keys(path, l)?;
    let algorithm = one_of(
        &format!("{path}.algorithm"),
        l.algorithm.as_deref(),
        &[
            ("fixed-window", Algorithm::FixedWindow),
            ("sliding-log", Algorithm::SlidingLog),
            ("sliding-counter", Algorithm::SlidingCounter),
            ("token-bucket", Algorithm::TokenBucket),
            ("gcra", Algorithm::Gcra),
        ],
    )?;
    let key = super::limiter_key::key(path, &l.key)?;
    let mode = one_of(
        &format!("{path}.mode"),
        l.mode.as_deref(),
        &[
            ("reject", LimiterMode::Reject),
            ("throttle", LimiterMode::Throttle),
        ],
    )?;
    let refill = one_of(
        &format!("{path}.refill"),
        l.refill.as_deref(),
        &[
            ("continuous", Refill::Continuous),
            ("discrete", Refill::Discrete),
        ],
    )?;
    let overflow = one_of(
        &format!("{path}.overflow"),
        l.overflow.as_deref(),
        &[
            ("hold", Overflow::Hold),
            ("reject-now", Overflow::RejectNow),
        ],
    )?;
    let required =
        |key: &str| ScenarioError::new(format!("{path}.{key}"), "missing: this key is required");
    let limit = count(
        &format!("{path}.limit"),
        l.limit.ok_or_else(|| required("limit"))?,
        1,
    )?;
    let window_ms = l.window_ms.ok_or_else(|| required("window_ms"))?;
    if algorithm == Algorithm::SlidingLog && limit > limits.max_in_flight {
        // the log keeps one entry per request let through within the window, per
        // bucket: the limit is what bounds its memory
        return err_vs(
            format!("{path}.limit"),
            "scenario.max_in_flight",
            format!(
                "a sliding-log limiter keeps one entry per request let through within window_ms, so its limit must be <= scenario.max_in_flight = {} (got {limit}); raise scenario.max_in_flight, or use sliding-counter, which keeps two counts per bucket",
                limits.max_in_flight
            ),
        );
    }
    Ok(Limiter {
        name: name.to_string(),
        algorithm,
        key,
        limit,
        window: positive_ticks(&format!("{path}.window_ms"), window_ms)?,
        mode,
        max_delay: ticks(
            &format!("{path}.max_delay_ms"),
            l.max_delay_ms.unwrap_or(0.0),
        )?,
        refill,
        overflow,
        concurrency: None,
    })
}
