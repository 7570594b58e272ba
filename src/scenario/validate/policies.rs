//! `[policies.NAME]`: client policies (timeouts per attempt, retries with backoff
//! and budgets, hedging, circuit breakers, adaptive throttling) and the
//! `call_policy` names that attach them to calls and workloads.

use super::*;

/// The reserved name for "no policy".
pub(crate) const NONE: &str = "none";

/// Every `[policies.NAME]`, in declaration order, then (when any is defined) the
/// `none` policy that calls without one use: it does nothing but count them.
pub(super) fn policies(raw: &RawScenario) -> R<Vec<ClientPolicy>> {
    let mut out = Vec::with_capacity(raw.policies.len() + 1);
    for (name, p) in &raw.policies {
        let path = format!("policies.{name}");
        if name == NONE {
            return err(
                path,
                "`none` is reserved: it means no policy (name the policy something else)",
            );
        }
        csv_name(&path, name)?;
        out.push(policy(&path, name, p)?);
    }
    if !out.is_empty() {
        out.push(ClientPolicy {
            name: NONE.to_string(),
            ..ClientPolicy::default()
        });
    }
    Ok(out)
}

/// `call_policy` at `path`: a `[policies.NAME]`, or `"none"` / no key. With no
/// policies defined that is None (calls go as they do without policies); with
/// some, it is the `none` policy, so that the `calls` table counts every call.
pub(super) fn resolve(path: &str, name: Option<&str>, raw: &RawScenario) -> R<Option<PolicyId>> {
    let defined = raw.policies.len();
    match name {
        None | Some(NONE) => Ok((defined > 0).then_some(defined)),
        Some(n) => match raw.policies.get_index_of(n) {
            Some(i) => Ok(Some(i)),
            None => {
                let names: Vec<&str> = raw.policies.keys().map(String::as_str).collect();
                let known = if names.is_empty() {
                    "no policy is defined".to_string()
                } else {
                    format!("defined: {}", list(names.iter().copied()))
                };
                err(
                    path,
                    format!(
                        "no policy named `{n}` ({known}; `\"none\"` means no policy){}",
                        did_you_mean(n, names.iter().copied())
                    ),
                )
            }
        },
    }
}

fn policy(path: &str, name: &str, p: &RawPolicy) -> R<ClientPolicy> {
    if p.retry.is_some() && p.hedge.is_some() {
        return err(
            format!("{path}.hedge"),
            "a policy either retries or hedges, not both (gRPC's rule): move one of `retry` and `hedge` to a policy of its own",
        );
    }
    let timeout = p
        .timeout_ms
        .map(|ms| {
            let at = format!("{path}.timeout_ms");
            positive_ticks(&at, ms)
        })
        .transpose()?;
    Ok(ClientPolicy {
        name: name.to_string(),
        timeout,
        retry: p
            .retry
            .as_ref()
            .map(|r| retry(&format!("{path}.retry"), r))
            .transpose()?,
        hedge: p
            .hedge
            .as_ref()
            .map(|h| hedge(&format!("{path}.hedge"), h))
            .transpose()?,
        breaker: p
            .breaker
            .as_ref()
            .map(|b| breaker(&format!("{path}.breaker"), b))
            .transpose()?,
        throttle: p
            .throttle
            .as_ref()
            .map(|t| throttle(&format!("{path}.throttle"), t))
            .transpose()?,
    })
}

/// The outcomes a retry may follow: `timeout`, `error`, `shed` by default.
const RETRYABLE: [&str; 4] = ["timeout", "error", "shed", "rejected"];

/// Every failed outcome of an attempt: a hedge's `non_fatal` by default.
const RETRYABLE_ALL: OutcomeSet = AttemptOutcome::Timeout.bit()
    | AttemptOutcome::Error.bit()
    | AttemptOutcome::Shed.bit()
    | AttemptOutcome::Rejected.bit();

fn retry(path: &str, r: &RawRetry) -> R<Retry> {
    let max_attempts = count_u32(&format!("{path}.max_attempts"), r.max_attempts, 1)?;
    let on = match &r.on {
        None => {
            AttemptOutcome::Timeout.bit() | AttemptOutcome::Error.bit() | AttemptOutcome::Shed.bit()
        }
        Some(list) => outcome_set(&format!("{path}.on"), list)?,
    };
    let backoff = match &r.backoff {
        None => Backoff {
            kind: BackoffKind::None,
            base_ms: 0.0,
            cap_ms: 0.0,
            multiplier: 2.0,
            jitter_factor: 0.0,
        },
        Some(b) => backoff(&format!("{path}.backoff"), b)?,
    };
    let budget = r
        .budget
        .as_ref()
        .map(|b| budget(&format!("{path}.budget"), b))
        .transpose()?;
    Ok(Retry {
        max_attempts,
        on,
        backoff,
        budget,
    })
}

fn backoff(path: &str, b: &RawBackoff) -> R<Backoff> {
    let kind = one_of(
        &format!("{path}.kind"),
        Some(b.kind.as_str()),
        &BackoffKind::NAMES,
    )?;
    let needs_base = kind != BackoffKind::None;
    let needs_cap = !matches!(kind, BackoffKind::None | BackoffKind::Constant);
    let grows = matches!(
        kind,
        BackoffKind::Exponential | BackoffKind::FullJitter | BackoffKind::EqualJitter
    );
    let spreads = matches!(kind, BackoffKind::Constant | BackoffKind::Exponential);
    // a key the kind does not use would be silently ignored: name it and the kind
    for (key, given, used) in [
        ("base_ms", b.base_ms.is_some(), needs_base),
        ("cap_ms", b.cap_ms.is_some(), needs_cap),
        ("multiplier", b.multiplier.is_some(), grows),
        ("jitter_factor", b.jitter_factor.is_some(), spreads),
    ] {
        if given && !used {
            let why = match (kind, key) {
                (BackoffKind::None, _) => "it retries at once, without waiting",
                (BackoffKind::Constant, _) if key != "jitter_factor" => "it always waits `base_ms`",
                (_, "multiplier") => "its wait does not grow by a factor",
                _ => "its wait is drawn at random already",
            };
            return err(
                format!("{path}.{key}"),
                format!(
                    "a `{}` backoff does not use `{key}` ({why}): remove it, or pick a kind that uses it",
                    b.kind
                ),
            );
        }
    }
    let base_ms = match b.base_ms {
        Some(ms) => non_negative(&format!("{path}.base_ms"), ms)?,
        None if needs_base => {
            return err(path, format!("backoff `{}` needs `base_ms`", b.kind));
        }
        None => 0.0,
    };
    let cap_ms = match b.cap_ms {
        Some(ms) => {
            let at = format!("{path}.cap_ms");
            let ms = non_negative(&at, ms)?;
            if ms < base_ms {
                return err_vs(
                    at,
                    format!("{path}.base_ms"),
                    format!(
                        "the cap ({} ms) is below `base_ms` ({} ms)",
                        num(ms),
                        num(base_ms)
                    ),
                );
            }
            ms
        }
        None if needs_cap => {
            return err(path, format!("backoff `{}` needs `cap_ms`", b.kind));
        }
        None => base_ms,
    };
    // both end up as clock times: refuse what the clock cannot hold
    ticks(&format!("{path}.base_ms"), base_ms)?;
    ticks(&format!("{path}.cap_ms"), cap_ms * 3.0)?;
    let multiplier = match b.multiplier {
        Some(m) => {
            let at = format!("{path}.multiplier");
            if finite(&at, m)? <= 0.0 {
                return err(
                    at,
                    format!(
                        "must be above 0 (got {}): the wait is multiplied by it per failed attempt",
                        num(m)
                    ),
                );
            }
            m
        }
        None => 2.0,
    };
    let jitter_factor = match b.jitter_factor {
        Some(f) => {
            let at = format!("{path}.jitter_factor");
            if !(0.0..1.0).contains(&finite(&at, f)?) {
                return err(
                    at,
                    format!(
                        "must be at least 0 and below 1 (got {}): the wait is drawn from [w (1 - f), w (1 + f)]",
                        num(f)
                    ),
                );
            }
            // the widest wait must fit the clock too
            ticks(&at, cap_ms.max(base_ms) * (1.0 + f))?;
            f
        }
        None => 0.0,
    };
    Ok(Backoff {
        kind,
        base_ms,
        cap_ms,
        multiplier,
        jitter_factor,
    })
}

/// A value in [0, 1].
fn fraction(path: &str, v: f64) -> R<f64> {
    if (0.0..=1.0).contains(&finite(path, v)?) {
        Ok(v)
    } else {
        err(path, format!("must be between 0 and 1 (got {})", num(v)))
    }
}

/// The budget kinds, as written in `budget.kind`.
const BUDGET_KINDS: [&str; 7] = [
    "ratio",
    "token_bucket",
    "breaker",
    "grpc_throttle",
    "finagle",
    "aws_standard",
    "envoy",
];

fn budget(path: &str, b: &RawRetryBudget) -> R<RetryBudget> {
    let kind = choice(&format!("{path}.kind"), &b.kind, &BUDGET_KINDS)?;
    let keys: [(&str, Option<f64>, &[&str]); 16] = [
        ("max", b.max, &["ratio"]),
        ("window_ms", b.window_ms, &["ratio"]),
        ("capacity", b.capacity, &["token_bucket"]),
        ("deposit", b.deposit, &["token_bucket"]),
        ("cost", b.cost, &["token_bucket"]),
        ("threshold", b.threshold, &["breaker"]),
        ("max_tokens", b.max_tokens, &["grpc_throttle"]),
        ("token_ratio", b.token_ratio, &["grpc_throttle"]),
        ("percent", b.percent, &["finagle", "envoy"]),
        ("min_retries_per_s", b.min_retries_per_s, &["finagle"]),
        ("ttl_ms", b.ttl_ms, &["finagle"]),
        ("quota", b.quota, &["aws_standard"]),
        ("retry_cost", b.retry_cost, &["aws_standard"]),
        ("timeout_cost", b.timeout_cost, &["aws_standard"]),
        (
            "no_retry_increment",
            b.no_retry_increment,
            &["aws_standard"],
        ),
        ("min_retry_concurrency", b.min_retry_concurrency, &["envoy"]),
    ];
    for (key, v, owners) in keys {
        if v.is_some() && !owners.contains(&kind) {
            let owner = owners
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(" or ");
            return err(
                format!("{path}.{key}"),
                format!("`{key}` belongs to a {owner} budget, not to `{kind}`"),
            );
        }
    }
    Ok(match kind {
        "ratio" => RetryBudget::Ratio {
            max: fraction(&format!("{path}.max"), b.max.unwrap_or(0.1))?,
            window: {
                let at = format!("{path}.window_ms");
                positive_ticks(&at, b.window_ms.unwrap_or(10_000.0))?
            },
        },
        "token_bucket" => RetryBudget::TokenBucket {
            capacity: non_negative(&format!("{path}.capacity"), b.capacity.unwrap_or(10.0))?,
            deposit: non_negative(&format!("{path}.deposit"), b.deposit.unwrap_or(0.1))?,
            cost: positive(&format!("{path}.cost"), b.cost.unwrap_or(1.0))?,
        },
        "breaker" => RetryBudget::Breaker {
            threshold: match b.threshold {
                Some(t) => non_negative(&format!("{path}.threshold"), t)?,
                None => return err(path, "a `breaker` budget needs `threshold`"),
            },
        },
        "grpc_throttle" => grpc_throttle(path, b)?,
        "finagle" => {
            let at = format!("{path}.percent");
            let percent = non_negative(&at, b.percent.unwrap_or(20.0))?;
            if percent > 100_000.0 {
                return err(
                    at,
                    format!(
                        "must be <= 100000 (Finagle's percentCanRetry is at most 1000, that is 100000 %; got {})",
                        num(percent)
                    ),
                );
            }
            let at = format!("{path}.ttl_ms");
            let ttl_ms = finite(&at, b.ttl_ms.unwrap_or(10_000.0))?;
            if !(1000.0..=60_000.0).contains(&ttl_ms) {
                return err(
                    at,
                    format!(
                        "must be between 1000 and 60000 (Finagle's ttl is 1 to 60 seconds; got {})",
                        num(ttl_ms)
                    ),
                );
            }
            RetryBudget::Finagle {
                percent,
                min_retries_per_s: whole(
                    &format!("{path}.min_retries_per_s"),
                    b.min_retries_per_s.unwrap_or(10.0),
                    0,
                )?,
                ttl: ticks(&at, ttl_ms)?,
                ttl_s: (ttl_ms / 1000.0).floor() as u32,
            }
        }
        "aws_standard" => {
            let quota = whole(&format!("{path}.quota"), b.quota.unwrap_or(500.0), 1)?;
            RetryBudget::AwsStandard {
                quota,
                retry_cost: whole(
                    &format!("{path}.retry_cost"),
                    b.retry_cost.unwrap_or(5.0),
                    1,
                )?,
                timeout_cost: whole(
                    &format!("{path}.timeout_cost"),
                    b.timeout_cost.unwrap_or(10.0),
                    1,
                )?,
                no_retry_increment: whole(
                    &format!("{path}.no_retry_increment"),
                    b.no_retry_increment.unwrap_or(1.0),
                    0,
                )?,
            }
        }
        _ => RetryBudget::Envoy {
            percent: {
                let at = format!("{path}.percent");
                let p = finite(&at, b.percent.unwrap_or(20.0))?;
                if !(0.0..=100.0).contains(&p) {
                    return err(at, format!("must be between 0 and 100 (got {})", num(p)));
                }
                p
            },
            min_retry_concurrency: whole(
                &format!("{path}.min_retry_concurrency"),
                b.min_retry_concurrency.unwrap_or(3.0),
                0,
            )?,
        },
    })
}

/// `grpc_throttle`: gRFC A6's `retryThrottling`, kept in thousandths of a token
/// as gRPC does (decimals past the third are dropped).
fn grpc_throttle(path: &str, b: &RawRetryBudget) -> R<RetryBudget> {
    let (Some(max), Some(ratio)) = (b.max_tokens, b.token_ratio) else {
        return err(
            path,
            "a `grpc_throttle` budget needs `max_tokens` and `token_ratio` (gRPC's retryThrottling has no defaults)",
        );
    };
    let at = format!("{path}.max_tokens");
    let max = finite(&at, max)?;
    if !(max > 0.0 && max <= 1000.0) {
        return err(
            at,
            format!(
                "must be in (0, 1000]: above 0 and at most 1000 (gRPC's rule; got {})",
                num(max)
            ),
        );
    }
    let at = format!("{path}.token_ratio");
    let ratio = positive(&at, ratio)?;
    let ratio_milli = (ratio * 1000.0).floor();
    if ratio_milli < 1.0 {
        return err(
            at,
            format!(
                "must be at least 0.001: gRPC keeps three decimals, and {} would keep 0",
                num(ratio)
            ),
        );
    }
    if ratio_milli > f64::from(u32::MAX) {
        return err(at, format!("must be <= 4294967 (got {})", num(ratio)));
    }
    Ok(RetryBudget::GrpcThrottle {
        max_milli: ((max * 1000.0).floor() as u32).max(1),
        ratio_milli: ratio_milli as u32,
    })
}

/// A whole number >= `min` kept in 32 bits (a count of tokens or retries).
fn whole(path: &str, v: f64, min: u32) -> R<u32> {
    let v = finite(path, v)?;
    if v.fract() != 0.0 {
        return err(path, format!("must be a whole number (got {})", num(v)));
    }
    if v < f64::from(min) {
        return err(path, format!("must be >= {min} (got {})", num(v)));
    }
    if v > f64::from(u32::MAX) {
        return err(path, format!("must be <= {} (got {})", u32::MAX, num(v)));
    }
    Ok(v as u32)
}

/// A list of attempt outcomes (`on`, `non_fatal`) as a set.
fn outcome_set(path: &str, list: &[String]) -> R<OutcomeSet> {
    let mut set = 0;
    for (i, v) in list.iter().enumerate() {
        let name = choice(&format!("{path}.{i}"), v, &RETRYABLE)?;
        let o = AttemptOutcome::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, o)| *o)
            .unwrap_or(AttemptOutcome::Error);
        set |= o.bit();
    }
    Ok(set)
}

fn hedge(path: &str, h: &RawHedge) -> R<Hedge> {
    let at = format!("{path}.delay_ms");
    Ok(Hedge {
        delay: positive_ticks(&at, h.delay_ms)?,
        max_attempts: count_u32(
            &format!("{path}.max_attempts"),
            h.max_attempts.unwrap_or(2),
            1,
        )?,
        cancel_losers: h.cancel_losers.unwrap_or(true),
        non_fatal: match &h.non_fatal {
            None => RETRYABLE_ALL,
            Some(list) => outcome_set(&format!("{path}.non_fatal"), list)?,
        },
        budget: match &h.budget {
            None => None,
            Some(b) => {
                let at = format!("{path}.budget");
                let budget = budget(&at, b)?;
                if !matches!(budget, RetryBudget::GrpcThrottle { .. }) {
                    return err(
                        format!("{at}.kind"),
                        format!(
                            "a hedge takes only a `grpc_throttle` budget (gRPC throttles hedges too; `{}` bounds retries: put it under `retry`)",
                            b.kind
                        ),
                    );
                }
                Some(budget)
            }
        },
    })
}

fn breaker(path: &str, b: &RawBreaker) -> R<Breaker> {
    let window = match &b.window {
        None => BreakerWindow::Count(100),
        Some(w) => {
            let at = format!("{path}.window");
            match (w.count, w.ms) {
                (Some(n), None) => BreakerWindow::Count(count_u32(&format!("{at}.count"), n, 1)?),
                (None, Some(ms)) => {
                    let at = format!("{at}.ms");
                    BreakerWindow::Time(positive_ticks(&at, ms)?)
                }
                _ => return err(at, "give exactly one of `count` (calls) and `ms` (time)"),
            }
        }
    };
    let rate_at = format!("{path}.failure_rate");
    let failure_rate = finite(&rate_at, b.failure_rate.unwrap_or(0.5))?;
    if !(failure_rate > 0.0 && failure_rate <= 1.0) {
        return err(
            rate_at,
            format!(
                "must be in (0, 1]: above 0 and at most 1 (got {})",
                num(failure_rate)
            ),
        );
    }
    let open_at = format!("{path}.open_ms");
    Ok(Breaker {
        window,
        min_calls: count_u32(&format!("{path}.min_calls"), b.min_calls.unwrap_or(20), 1)?,
        failure_rate,
        open: positive_ticks(&open_at, b.open_ms.unwrap_or(5000.0))?,
        half_open_calls: count_u32(
            &format!("{path}.half_open_calls"),
            b.half_open_calls.unwrap_or(10),
            1,
        )?,
    })
}

fn throttle(path: &str, t: &RawThrottle) -> R<Throttle> {
    let k_at = format!("{path}.k");
    let window_at = format!("{path}.window_ms");
    Ok(Throttle {
        k: positive(&k_at, t.k.unwrap_or(2.0))?,
        window: ticks(
            &window_at,
            positive(&window_at, t.window_ms.unwrap_or(120_000.0))?,
        )?,
    })
}
