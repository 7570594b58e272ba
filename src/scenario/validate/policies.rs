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
        .map(|b| RetryBudget::read(&format!("{path}.budget"), &b.0, false))
        .transpose()?;
    Ok(Retry {
        max_attempts,
        on,
        backoff,
        budget,
    })
}

/// A key the backoff's kind does not use would be silently ignored: name it
/// and the kind.
fn unused_keys(path: &str, b: &RawBackoff, kind: BackoffKind) -> R<()> {
    let needs_base = kind != BackoffKind::None;
    let needs_cap = !matches!(kind, BackoffKind::None | BackoffKind::Constant);
    let grows = matches!(
        kind,
        BackoffKind::Exponential | BackoffKind::FullJitter | BackoffKind::EqualJitter
    );
    let spreads = matches!(kind, BackoffKind::Constant | BackoffKind::Exponential);
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
    Ok(())
}

fn backoff(path: &str, b: &RawBackoff) -> R<Backoff> {
    let kind = one_of(
        &format!("{path}.kind"),
        Some(b.kind.as_str()),
        &BackoffKind::NAMES,
    )?;
    unused_keys(path, b, kind)?;
    let needs_base = kind != BackoffKind::None;
    let needs_cap = !matches!(kind, BackoffKind::None | BackoffKind::Constant);
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
        budget: h
            .budget
            .as_ref()
            .map(|b| RetryBudget::read(&format!("{path}.budget"), &b.0, true))
            .transpose()?,
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
