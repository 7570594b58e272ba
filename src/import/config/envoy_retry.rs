//! Envoy's route retry and hedge policies (`envoy.config.route.v3.RetryPolicy`,
//! `HedgePolicy`): their tables, what each `retry_on` condition covers among
//! resim's attempt outcomes (Istio's `retryOn` too), and the policy a route
//! gets from them.

use super::draft::{Fate, Ledger, Tab, Val};
use super::duration::{Syntax, ms};
use super::envoy_cluster::wrapped;
use super::spec::{Binding, Field, Table, Unknown, read};
use super::tree::Node;
use crate::error::Error;

/// What each `retry_on` condition covers among resim's attempt outcomes, and
/// why, from Envoy's `RetryStateImpl` (source/common/router/retry_state_impl.cc):
/// `wouldRetryFromHeaders` reads an answer's status (and grpc-status),
/// `wouldRetryFromReset` a reset. resim's outcomes as Envoy meets them:
/// `timeout` is the attempt's per-try timeout, which Envoy turns into a
/// reset of the attempt (router.cc `Filter::onPerTryTimeoutCommon` ->
/// `maybeRetryReset(LocalReset, ...)`): only `5xx`, `gateway-error` and
/// `reset` retry it; `error` is a 500 answer or a `down` replica refusing
/// the connection; `shed` a 503 answer; `rejected` a 429 answer. The route's
/// own timeout ends the call and is never retried (`Filter::onResponseTimeout`).
pub(super) const CONDITIONS: [(&str, &[&str], &str); 16] = [
    (
        "5xx",
        &["timeout", "error", "shed"],
        "any 5xx answer and any reset, a per-try timeout included",
    ),
    (
        "gateway-error",
        &["timeout", "error", "shed"],
        "502, 503, 504 answers and any reset: a per-try timeout, a shed, a down replica (its 500 answers are retried too here: resim's `error` is both)",
    ),
    (
        "reset",
        &["timeout", "error"],
        "any reset: a per-try timeout, a down replica (its 500 answers are retried too here)",
    ),
    (
        "reset-before-request",
        &["error"],
        "a reset before any byte was sent: a down replica (a per-try timeout comes after the request was sent; 500 answers are retried too here)",
    ),
    (
        "connect-failure",
        &["error"],
        "a failed connection: a down replica (its 500 answers are retried too here)",
    ),
    (
        "retriable-status-codes",
        &[],
        "the codes of retriable_status_codes: 500 -> error, 503 -> shed, 429 -> rejected",
    ),
    (
        "unavailable",
        &["shed"],
        "a gRPC UNAVAILABLE answer: a gRPC server's shed",
    ),
    (
        "internal",
        &["error"],
        "a gRPC INTERNAL answer: a gRPC server's error",
    ),
    (
        "resource-exhausted",
        &["rejected"],
        "a gRPC RESOURCE_EXHAUSTED answer: a rejection",
    ),
    (
        "envoy-ratelimited",
        &["rejected"],
        "a 429 from an Envoy rate limiter upstream (x-envoy-ratelimited)",
    ),
    (
        "refused-stream",
        &[],
        "an HTTP/2 REFUSED_STREAM reset: cannot happen in resim (its servers shed with 503)",
    ),
    (
        "cancelled",
        &[],
        "a gRPC CANCELLED answer: cannot happen in resim",
    ),
    (
        "deadline-exceeded",
        &[],
        "a gRPC DEADLINE_EXCEEDED answer from the server: cannot happen in resim (a per-try timeout is a reset, not this answer)",
    ),
    ("retriable-4xx", &[], "a 409 answer: cannot happen in resim"),
    (
        "retriable-headers",
        &[],
        "answer headers: cannot happen in resim",
    ),
    (
        "http3-post-connect-failure",
        &[],
        "HTTP/3 only: cannot happen in resim",
    ),
];

const RETRY_ON_RULE: &str = "`5xx`, `gateway-error` -> `timeout`, `error`, `shed`; `reset` -> `timeout`, `error`; `reset-before-request`, `connect-failure` -> `error` (a down replica); `retriable-status-codes` -> its codes (500 `error`, 503 `shed`, 429 `rejected`); `unavailable` -> `shed`, `internal` -> `error`, `resource-exhausted`, `envoy-ratelimited` -> `rejected`; `refused-stream`, `cancelled`, `deadline-exceeded`, `retriable-4xx`, `retriable-headers`, `http3-post-connect-failure` cannot happen in resim. A per-try timeout (`timeout`) is retried only under `5xx`, `gateway-error` and `reset` (RetryStateImpl::wouldRetryFromReset)";

const BACKOFF_RULE: &str = "retry k waits U(0, min((2^k - 1) x base, max)): `kind = \"envoy\"` (RetryStateImpl, JitteredBackOffStrategy)";

static BACKOFF: Table = Table {
    at: "retry_policy.retry_back_off",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::maps(
            "base_interval",
            "the back-off's base (required, > 0)",
            "policies.{}.retry.backoff.base_ms",
            BACKOFF_RULE,
        ),
        Field::maps(
            "max_interval",
            "the longest wait (>= base_interval)",
            "policies.{}.retry.backoff.cap_ms",
            BACKOFF_RULE,
        )
        .or("10 x base_interval", "cap_ms = 10 x base_ms"),
    ],
};

pub(super) static RETRY: Table = Table {
    at: "retry_policy",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::code(
            "retry_on",
            "the conditions retried, comma separated",
            "policies.{}.retry.on",
            RETRY_ON_RULE,
        )
        .or("(none)", "no retry: Envoy makes no retry state without a condition (RetryStateImpl::create)"),
        Field::maps(
            "num_retries",
            "retries after the first try",
            "policies.{}.retry.max_attempts",
            "num_retries + 1 attempts in all",
        )
        .or("1", "max_attempts = 2"),
        Field::maps(
            "per_try_timeout",
            "each attempt's timeout",
            "policies.{}.timeout_ms",
            "each attempt's own timeout; 0: none",
        )
        .or("(none)", "no per-try timeout: an attempt runs until the route's timeout"),
        Field::code(
            "retriable_status_codes",
            "the answer codes `retriable-status-codes` retries",
            "policies.{}.retry.on",
            "500 -> `error`, 503 -> `shed`, 429 -> `rejected`, other codes cannot happen in resim; read only when retry_on names `retriable-status-codes`, as Envoy reads them",
        ),
        Field::nested("retry_back_off", "the wait before a retry", &BACKOFF).or(
            "base 25ms, max 250ms",
            "`backoff = { kind = \"envoy\", base_ms = 25, cap_ms = 250 }` (runtime `upstream.base_retry_backoff_ms`, 25, and 10 x base)",
        ),
        Field::ignored("per_try_idle_timeout", "an attempt's idle time limit", "resim's answers are one message"),
        Field::ignored("retry_priority", "the priority a retry goes to", "priorities: resim balances over all the hosts"),
        Field::ignored("retry_host_predicate", "hosts a retry avoids", "resim's balancer picks each attempt anew"),
        Field::ignored("host_selection_retry_max_attempts", "picks tried to satisfy the predicates", "resim's balancer picks each attempt anew"),
        Field::ignored("retry_options_predicates", "options changed for a retry", "not modelled"),
        Field::ignored("rate_limited_retry_back_off", "a back-off from the answer's reset headers", "resim's answers carry no headers"),
        Field::ignored("retriable_headers", "answer headers that are retried", "resim's answers carry no headers"),
        Field::ignored("retriable_request_headers", "requests the policy applies to", "resim's requests carry no headers: every request is taken to match"),
    ],
};

pub(super) static HEDGE: Table = Table {
    at: "hedge_policy",
    binding: Binding::Exact,
    unknown: Unknown::Refuse,
    fields: &[
        Field::code(
            "hedge_on_per_try_timeout",
            "at a per-try timeout, send a retry and keep the timed-out attempt running",
            "policies.{}.hedge",
            "true, with a per-try timeout: `hedge = { delay_ms = per_try_timeout, max_attempts = num_retries + 1 }` instead of `retry`, approximated (a copy every delay_ms while no answer has come, the first ok wins; Envoy retries a hedge whatever retry_on says: RetryStateImpl::shouldHedgeRetryPerTryTimeout); without a per-try timeout there is nothing to hedge on",
        )
        .or("false", "no hedging"),
        Field::ignored("initial_requests", "copies sent at once at the start", "resim sends one first copy, Envoy's default"),
        Field::ignored("additional_request_chance", "the chance of one more first copy", "resim sends one first copy, Envoy's default (chance 0)"),
    ],
};

/// The outcomes of resim the conditions `parts` (and, under
/// `retriable-status-codes`, the answer codes `codes`) cover, and how, for
/// the ledger. An unknown condition is an error at `at`.
pub(super) fn outcomes(
    parts: &[&str],
    codes: &[u64],
    at: &Node<'_>,
) -> Result<(Vec<&'static str>, String), Error> {
    let mut on: Vec<&'static str> = Vec::new();
    let mut how = Vec::new();
    let mut add = |xs: &[&'static str]| {
        for x in xs {
            if !on.contains(x) {
                on.push(x);
            }
        }
    };
    for p in parts.iter().filter(|p| !p.is_empty()) {
        let Some((_, covers, why)) = CONDITIONS.iter().find(|c| c.0 == *p) else {
            return Err(at.err(format!(
                "`{p}` is not a retry condition Envoy knows{}",
                crate::error::did_you_mean(p, CONDITIONS.iter().map(|c| c.0))
            )));
        };
        add(covers);
        if *p == "retriable-status-codes" {
            let mut shown = Vec::new();
            for c in codes {
                match c {
                    500 => add(&["error"]),
                    503 => add(&["shed"]),
                    429 => add(&["rejected"]),
                    _ => {}
                }
                shown.push(match c {
                    500 => format!("{c} error"),
                    503 => format!("{c} shed"),
                    429 => format!("{c} rejected"),
                    _ => format!("{c} cannot happen in resim"),
                });
            }
            how.push(format!(
                "retriable-status-codes: {}",
                if shown.is_empty() {
                    "no code".into()
                } else {
                    shown.join(", ")
                }
            ));
        } else {
            how.push(format!("{p}: {why}"));
        }
    }
    let order = ["timeout", "error", "shed", "rejected"];
    on.sort_by_key(|o| order.iter().position(|x| x == o));
    let to = if on.is_empty() {
        "nothing".to_string()
    } else {
        on.join(", ")
    };
    Ok((on, format!("-> {to} ({})", how.join("; "))))
}

/// A retry policy, as read.
#[derive(Debug, Clone)]
pub(super) struct Retry {
    on: Vec<&'static str>,
    retries: u64,
    base: f64,
    cap: f64,
    per_try: Option<f64>,
}

/// A hedge policy, as read: hedging on per-try timeouts, and its node.
#[derive(Debug, Clone)]
pub(super) struct Hedge<'a> {
    on_per_try: bool,
    node: Node<'a>,
}

pub(super) fn read_retry(n: &Node<'_>, scope: &str, led: &mut Ledger) -> Result<Retry, Error> {
    let r = read(n, &RETRY, scope, led)?;
    let mut codes = Vec::new();
    if let Some(c) = r.get("retriable_status_codes") {
        for x in c.items()? {
            codes.push(x.whole()?);
        }
    }
    let on = match r.get("retry_on") {
        Some(o) => {
            let parts: Vec<&str> = o.str()?.split(',').map(str::trim).collect();
            let (on, how) = outcomes(&parts, &codes, &o)?;
            r.note(led, "retry_on", Fate::Approximated, how);
            let (fate, how) = if parts.contains(&"retriable-status-codes") {
                (
                    Fate::Approximated,
                    "read with retry_on's retriable-status-codes",
                )
            } else {
                (
                    Fate::Ignored,
                    "retry_on does not name retriable-status-codes: Envoy does not read these codes",
                )
            };
            r.note(led, "retriable_status_codes", fate, how);
            on
        }
        None => {
            r.note(
                led,
                "retriable_status_codes",
                Fate::Ignored,
                "no retry_on: Envoy retries on nothing",
            );
            Vec::new()
        }
    };
    let retries = match r.get("num_retries") {
        Some(x) => {
            let x = wrapped(&x)?;
            let n = x.u32()?;
            if n >= u32::MAX as u64 {
                return Err(x.err(format!(
                    "{n} retries and the first try are more attempts than resim counts (at most {} retries)",
                    u32::MAX - 1
                )));
            }
            n
        }
        None => 1,
    };
    let (mut base, mut cap) = (25.0, 250.0);
    if let Some(b) = r.nested("retry_back_off", scope, led)? {
        let bi = b.need("base_interval", "Envoy refuses a retry_back_off without it")?;
        base = ms(&bi, Syntax::Protobuf)?;
        if base <= 0.0 {
            return Err(bi.err("must be above 0 (Envoy refuses it)"));
        }
        cap = match b.get("max_interval") {
            Some(m) => ms(&m, Syntax::Protobuf)?,
            None => 10.0 * base,
        };
        if cap < base {
            return Err(b
                .node
                .err("max_interval is below base_interval (Envoy refuses it)"));
        }
    }
    let per_try = match r.get("per_try_timeout") {
        Some(p) => {
            let v = ms(&p, Syntax::Protobuf)?;
            if v == 0.0 {
                r.amend(
                    led,
                    "per_try_timeout",
                    Fate::Mapped,
                    "0: no per-try timeout",
                );
            }
            (v > 0.0).then_some(v)
        }
        None => None,
    };
    Ok(Retry {
        on,
        retries,
        base,
        cap,
        per_try,
    })
}

pub(super) fn read_hedge<'a>(
    n: &Node<'a>,
    scope: &str,
    led: &mut Ledger,
) -> Result<Hedge<'a>, Error> {
    let h = read(n, &HEDGE, scope, led)?;
    let on_per_try = match h.get("hedge_on_per_try_timeout") {
        Some(x) => x.bool()?,
        None => false,
    };
    Ok(Hedge {
        on_per_try,
        node: h
            .get("hedge_on_per_try_timeout")
            .unwrap_or_else(|| n.clone()),
    })
}

/// The policy of a route: its retry (or hedge) policy and the cluster's
/// retry limit. Returns whether the route has one.
pub(super) fn policy(
    pol: &mut Tab,
    retry: Option<&Retry>,
    hedge: Option<&Hedge<'_>>,
    budget: Val,
    led: &mut Ledger,
) -> bool {
    let Some(r) = retry else {
        if let Some(h) = hedge {
            led.renote(
                &h.node,
                Fate::Ignored,
                "",
                "Envoy hedges on a per-try timeout of the retry policy, and this route has none",
            );
        }
        return false;
    };
    if let Some(h) = hedge {
        let key = format!("{}.hedge", pol.header);
        match (h.on_per_try, r.per_try) {
            (true, Some(t)) => {
                led.renote(&h.node, Fate::Approximated, key, "a copy after each per-try timeout, the earlier copies kept running (resim's hedge: another copy every delay_ms, the first ok wins)");
                pol.put(
                    "hedge",
                    Val::table(&[
                        ("delay_ms", Val::n(t)),
                        ("max_attempts", Val::n((r.retries + 1) as f64)),
                        ("cancel_losers", Val::b(true)),
                    ]),
                );
                return true;
            }
            (true, None) => led.renote(
                &h.node,
                Fate::Ignored,
                "",
                "no per-try timeout: nothing to hedge on",
            ),
            (false, _) => {}
        }
    }
    if let Some(t) = r.per_try {
        pol.put_noted("timeout_ms", Val::n(t), "per_try_timeout");
    }
    if r.on.is_empty() {
        return r.per_try.is_some();
    }
    pol.put(
        "retry",
        Val::table(&[
            ("max_attempts", Val::n((r.retries + 1) as f64)),
            ("on", Val::strs(r.on.iter().copied())),
            (
                "backoff",
                Val::table(&[
                    ("kind", Val::s("envoy")),
                    ("base_ms", Val::n(r.base)),
                    ("cap_ms", Val::n(r.cap)),
                ]),
            ),
            ("budget", budget),
        ]),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::super::tree::Source;
    use super::*;

    fn on(parts: &[&str], codes: &[u64]) -> Vec<&'static str> {
        let s = Source::new(
            std::path::Path::new("e.json"),
            vec![serde_json::json!("x")],
            false,
            0,
            "",
        );
        outcomes(parts, codes, &s.root(0))
            .expect("known conditions")
            .0
    }

    /// A per-try timeout is a reset of the attempt (router.cc
    /// `onPerTryTimeoutCommon`): only `5xx`, `gateway-error` and `reset`
    /// retry it (`wouldRetryFromReset`). A gRPC DEADLINE_EXCEEDED or a 504 is
    /// an answer resim's servers never give.
    #[test]
    fn only_5xx_gateway_error_and_reset_retry_a_per_try_timeout() {
        for p in ["5xx", "gateway-error", "reset"] {
            assert!(on(&[p], &[]).contains(&"timeout"), "{p}");
        }
        for p in CONDITIONS.iter().map(|c| c.0) {
            if !["5xx", "gateway-error", "reset"].contains(&p) {
                assert!(!on(&[p], &[504, 408]).contains(&"timeout"), "{p}");
            }
        }
        // Istio's default retryOn, with its 503
        let istio = [
            "connect-failure",
            "refused-stream",
            "unavailable",
            "cancelled",
            "retriable-status-codes",
        ];
        assert_eq!(on(&istio, &[503]), ["error", "shed"]);
        assert_eq!(
            on(&["retriable-status-codes"], &[500, 429]),
            ["error", "rejected"]
        );
    }
}
