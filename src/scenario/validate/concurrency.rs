//! `[limiters.NAME] kind = "concurrency"`: the algorithm and its keys, each
//! algorithm's own (a key of another algorithm is an error naming the
//! algorithms it belongs to), with the libraries' defaults.

use super::*;

/// The keys only a rate limiter has.
const RATE_KEYS: [&str; 5] = ["window_ms", "mode", "max_delay_ms", "refill", "overflow"];

/// The keys of each concurrency algorithm, in `ConcurrencyAlgorithm::NAMES` order.
const ALGORITHM_KEYS: [(&str, &[&str]); 5] = [
    ("fixed", &["limit"]),
    (
        "aimd",
        &[
            "initial_limit",
            "min_limit",
            "max_limit",
            "backoff_ratio",
            "timeout_ms",
            "samples",
        ],
    ),
    (
        "vegas",
        &[
            "initial_limit",
            "max_limit",
            "smoothing",
            "probe_multiplier",
            "samples",
        ],
    ),
    (
        "gradient2",
        &[
            "initial_limit",
            "min_limit",
            "max_limit",
            "smoothing",
            "tolerance",
            "queue_size",
            "long_window",
            "samples",
        ],
    ),
    (
        "envoy_gradient",
        &[
            "concurrency_update_interval_ms",
            "min_rtt_calc_interval_ms",
            "request_count",
            "min_concurrency",
            "jitter_percent",
            "buffer_percent",
            "max_limit",
            "samples",
        ],
    ),
];

/// The concurrency keys `l` sets, by name (`limit` apart: a rate key too).
fn concurrency_keys(l: &RawLimiter) -> Vec<&'static str> {
    let set = [
        ("initial_limit", l.initial_limit.is_some()),
        ("min_limit", l.min_limit.is_some()),
        ("max_limit", l.max_limit.is_some()),
        ("backoff_ratio", l.backoff_ratio.is_some()),
        ("timeout_ms", l.timeout_ms.is_some()),
        ("smoothing", l.smoothing.is_some()),
        ("probe_multiplier", l.probe_multiplier.is_some()),
        ("tolerance", l.tolerance.is_some()),
        ("queue_size", l.queue_size.is_some()),
        ("long_window", l.long_window.is_some()),
        (
            "concurrency_update_interval_ms",
            l.concurrency_update_interval_ms.is_some(),
        ),
        (
            "min_rtt_calc_interval_ms",
            l.min_rtt_calc_interval_ms.is_some(),
        ),
        ("request_count", l.request_count.is_some()),
        ("min_concurrency", l.min_concurrency.is_some()),
        ("jitter_percent", l.jitter_percent.is_some()),
        ("buffer_percent", l.buffer_percent.is_some()),
        ("samples", l.samples.is_some()),
    ];
    set.iter().filter(|(_, s)| *s).map(|(k, _)| *k).collect()
}

/// A rate limiter sets no key of a concurrency algorithm.
pub(super) fn no_concurrency_keys(path: &str, l: &RawLimiter) -> R<()> {
    match concurrency_keys(l).first() {
        Some(key) => err(
            format!("{path}.{key}"),
            format!(
                "`{key}` is a key of a concurrency limiter (algorithm {}): add kind = \"concurrency\", or remove it",
                owners(key)
            ),
        ),
        None => Ok(()),
    }
}

/// The algorithms that have `key`, for messages.
fn owners(key: &str) -> String {
    let names: Vec<&str> = ALGORITHM_KEYS
        .iter()
        .filter(|(_, keys)| keys.contains(&key))
        .map(|(n, _)| *n)
        .collect();
    list(names)
}

/// A whole number key of at least `min`, or its default.
fn whole(path: &str, key: &str, v: Option<i64>, default: u64, min: i64) -> R<u64> {
    match v {
        Some(v) => count(&format!("{path}.{key}"), v, min),
        None => Ok(default),
    }
}

/// A number key in [lo, hi] (`open_lo`: lo itself refused), or its default.
fn within(
    path: &str,
    key: &str,
    v: Option<f64>,
    default: f64,
    lo: f64,
    hi: f64,
    open_lo: bool,
) -> R<f64> {
    let Some(v) = v else { return Ok(default) };
    let p = format!("{path}.{key}");
    finite(&p, v)?;
    let low_ok = if open_lo { v > lo } else { v >= lo };
    if low_ok && v <= hi {
        return Ok(v);
    }
    let low = if open_lo { ">" } else { ">=" };
    let high = if hi.is_finite() {
        format!(" and <= {}", num(hi))
    } else {
        String::new()
    };
    err(
        p,
        format!("must be {low} {}{high} (got {})", num(lo), num(v)),
    )
}

/// A time key in ms that must be > 0, or its default, in ticks.
fn time(path: &str, key: &str, v: Option<f64>, default_ms: f64) -> R<Ticks> {
    positive_ticks(&format!("{path}.{key}"), v.unwrap_or(default_ms))
}

/// `min <= initial <= max` (the keys named as written), each already >= 1.
fn ordered(path: &str, keys: &[(&str, Option<u64>)]) -> R<()> {
    for pair in keys.windows(2) {
        if let ((lo_key, Some(lo)), (hi_key, Some(hi))) = (pair[0], pair[1])
            && lo > hi
        {
            return err_vs(
                format!("{path}.{lo_key}"),
                format!("{path}.{hi_key}"),
                format!("must be <= {hi_key} = {hi} (got {lo})"),
            );
        }
    }
    Ok(())
}

/// One concurrency limiter.
pub(super) fn limiter(path: &str, name: &str, l: &RawLimiter) -> R<Limiter> {
    let names = ConcurrencyAlgorithm::NAMES;
    let Some(alg) = &l.algorithm else {
        return err(
            format!("{path}.algorithm"),
            format!(
                "missing: a concurrency limiter needs an algorithm, one of {}",
                list(names.iter().copied())
            ),
        );
    };
    let alg = choice(&format!("{path}.algorithm"), alg, &names)?;
    let rate_set = [
        ("window_ms", l.window_ms.is_some()),
        ("mode", l.mode.is_some()),
        ("max_delay_ms", l.max_delay_ms.is_some()),
        ("refill", l.refill.is_some()),
        ("overflow", l.overflow.is_some()),
    ];
    debug_assert_eq!(rate_set.map(|(k, _)| k), RATE_KEYS);
    if let Some((key, _)) = rate_set.iter().find(|(_, s)| *s) {
        return err(
            format!("{path}.{key}"),
            format!(
                "`{key}` is a key of a rate limiter: a concurrency limiter (kind = \"concurrency\") admits a request while fewer than its limit are in flight and rejects it otherwise"
            ),
        );
    }
    let own = ALGORITHM_KEYS
        .iter()
        .find(|(n, _)| *n == alg)
        .map_or(&[][..], |(_, k)| *k);
    let mut set = concurrency_keys(l);
    if l.limit.is_some() {
        set.insert(0, "limit");
    }
    if let Some(key) = set.iter().find(|k| !own.contains(k)) {
        return err(
            format!("{path}.{key}"),
            format!(
                "`{key}` is a key of algorithm {}, not of `{alg}` (its keys: {})",
                owners(key),
                list(own.iter().copied())
            ),
        );
    }
    let algorithm = match alg {
        "fixed" => ConcurrencyAlgorithm::Fixed {
            limit: match l.limit {
                Some(v) => count(&format!("{path}.limit"), v, 1)?,
                None => {
                    return err(
                        format!("{path}.limit"),
                        "missing: a fixed concurrency limiter needs its limit (requests in flight at most)",
                    );
                }
            },
        },
        "aimd" => {
            let (initial, min, max) = bounded_limits(path, l)?;
            ConcurrencyAlgorithm::Aimd {
                initial: initial.clamp(min, max),
                min,
                max,
                backoff_ratio: backoff_ratio(path, l.backoff_ratio)?,
                timeout: time(path, "timeout_ms", l.timeout_ms, 5000.0)?,
            }
        }
        "vegas" => {
            let initial = whole(path, "initial_limit", l.initial_limit, 20, 1)?;
            let max = whole(path, "max_limit", l.max_limit, 1000, 1)?;
            ordered(
                path,
                &[
                    ("initial_limit", l.initial_limit.map(|_| initial)),
                    ("max_limit", l.max_limit.map(|_| max)),
                ],
            )?;
            ConcurrencyAlgorithm::Vegas {
                initial: initial.min(max),
                max,
                smoothing: within(path, "smoothing", l.smoothing, 1.0, 0.0, 1.0, true)?,
                probe_multiplier: whole(path, "probe_multiplier", l.probe_multiplier, 30, 1)?,
            }
        }
        "gradient2" => {
            let (initial, min, max) = bounded_limits(path, l)?;
            ConcurrencyAlgorithm::Gradient2 {
                initial: initial.clamp(min, max),
                min,
                max,
                smoothing: within(path, "smoothing", l.smoothing, 0.2, 0.0, 1.0, true)?,
                tolerance: within(
                    path,
                    "tolerance",
                    l.tolerance,
                    1.5,
                    1.0,
                    f64::INFINITY,
                    false,
                )?,
                queue_size: whole(path, "queue_size", l.queue_size, 4, 0)?,
                long_window: whole(path, "long_window", l.long_window, 600, 1)?,
            }
        }
        _ => {
            let min = whole(path, "min_concurrency", l.min_concurrency, 3, 1)?;
            let max = whole(path, "max_limit", l.max_limit, 1000, 1)?;
            ordered(
                path,
                &[("min_concurrency", Some(min)), ("max_limit", Some(max))],
            )?;
            ConcurrencyAlgorithm::EnvoyGradient {
                update_interval: time(
                    path,
                    "concurrency_update_interval_ms",
                    l.concurrency_update_interval_ms,
                    100.0,
                )?,
                min_rtt_interval: time(
                    path,
                    "min_rtt_calc_interval_ms",
                    l.min_rtt_calc_interval_ms,
                    60_000.0,
                )?,
                request_count: whole(path, "request_count", l.request_count, 50, 1)?,
                min_concurrency: min,
                jitter: within(
                    path,
                    "jitter_percent",
                    l.jitter_percent,
                    15.0,
                    0.0,
                    100.0,
                    false,
                )? / 100.0,
                buffer: within(
                    path,
                    "buffer_percent",
                    l.buffer_percent,
                    25.0,
                    0.0,
                    f64::INFINITY,
                    false,
                )? / 100.0,
                max,
            }
        }
    };
    let samples = match &l.samples {
        None => Samples::default_for(&algorithm),
        Some(v) => one_of(&format!("{path}.samples"), Some(v), &Samples::NAMES)?,
    };
    let key = super::limiter_key::key(path, &l.key)?;
    Ok(Limiter {
        name: name.to_string(),
        algorithm: Algorithm::FixedWindow,
        key,
        limit: algorithm.max_limit(),
        // the window of the bursts table's peak of requests let through
        window: Ticks::from_ms(1000.0),
        mode: LimiterMode::Reject,
        max_delay: Ticks::ZERO,
        refill: Refill::Continuous,
        overflow: Overflow::RejectNow,
        concurrency: Some(Box::new(Concurrency { algorithm, samples })),
        scope: crate::model::Scope::Replica,
    })
}

/// AIMD's `backoff_ratio`, in [0.5, 1) as Netflix's `AIMDLimit.Builder.
/// backoffRatio` checks it (below 0.5 one drop would more than halve the
/// limit; at 1 or above a drop would not lower it).
fn backoff_ratio(path: &str, v: Option<f64>) -> R<f64> {
    let Some(v) = v else { return Ok(0.9) };
    let p = format!("{path}.backoff_ratio");
    finite(&p, v)?;
    if (0.5..1.0).contains(&v) {
        return Ok(v);
    }
    err(
        p,
        format!(
            "must be >= 0.5 and < 1 (got {}): the factor on the limit at a drop, in [0.5, 1) as Netflix's AIMDLimit requires",
            num(v)
        ),
    )
}

/// `initial_limit`, `min_limit` and `max_limit` of an algorithm that keeps
/// its limit in [min, max] (AIMD and Gradient2 share Netflix's defaults: 20,
/// 20, 200), each checked and their order checked where given.
fn bounded_limits(path: &str, l: &RawLimiter) -> R<(u64, u64, u64)> {
    let initial = whole(path, "initial_limit", l.initial_limit, 20, 1)?;
    let min = whole(path, "min_limit", l.min_limit, 20, 1)?;
    let max = whole(path, "max_limit", l.max_limit, 200, 1)?;
    ordered(path, &[("min_limit", Some(min)), ("max_limit", Some(max))])?;
    ordered(
        path,
        &[
            ("min_limit", l.min_limit.map(|_| min)),
            ("initial_limit", l.initial_limit.map(|_| initial)),
            ("max_limit", l.max_limit.map(|_| max)),
        ],
    )?;
    Ok((initial, min, max))
}
