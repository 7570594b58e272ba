//! An instance's rate limiter and bulkhead, as limiters at the backend's
//! entrance (in the client in resilience4j: the same decisions for one
//! client).

use super::note_code;
use crate::error::Error;
use crate::import::config::draft::{Fate, Ledger, Tab, Val};
use crate::import::config::duration::{Syntax, ms};
use crate::import::config::spec::Read;

/// `[limiters.NAME]`: resilience4j's AtomicRateLimiter hands out
/// `limitForPeriod` permits per `limitRefreshPeriod` (cycles from the
/// limiter's start, unused permits not carried over: a fixed window), and a
/// call waits up to `timeoutDuration` for a permit of a later cycle, else
/// waits it out and fails (`waitForPermissionIfNecessary`): resim's
/// fixed-window limiter in throttle mode with `overflow = "hold"`.
pub fn rate(r: &Read<'_>, b: &str, bn: &str, led: &mut Ledger) -> Result<Tab, Error> {
    let limit = match r.get("limitForPeriod") {
        Some(n) => {
            let v = n.i32("a Java int")?;
            if v < 1 {
                return Err(n.err("must be at least 1 (resilience4j's rule)"));
            }
            v
        }
        None => 50,
    };
    let period = match r.get("limitRefreshPeriod") {
        Some(n) => {
            let v = ms(&n, Syntax::Spring)?;
            if v < 1e-6 {
                return Err(
                    n.err("must be at least 1 ns (RateLimiterConfig refuses a shorter period)")
                );
            }
            v
        }
        None => 0.0005,
    };
    let wait = match r.get("timeoutDuration") {
        Some(n) => ms(&n, Syntax::Spring)?,
        None => 5000.0,
    };
    if wait == 0.0 {
        r.amend(
            led,
            "timeoutDuration",
            Fate::Mapped,
            "0: a call without a permit is refused at once (`mode = \"reject\"`)",
        );
    }
    let mut t = Tab::new(format!("limiters.{bn}"));
    t.notes.push(format!(
        "resilience4j's rate limiter `{b}`: in the client there, at the backend's entrance here (the same decisions for one client)"
    ));
    t.put("algorithm", Val::s("fixed-window"));
    t.put("limit", Val::n(limit as f64));
    t.put("window_ms", Val::n(period));
    if wait > 0.0 {
        t.put("mode", Val::s("throttle"));
        t.put("max_delay_ms", Val::n(wait));
        t.put_noted(
            "overflow",
            Val::s("hold"),
            "a call that cannot get a permit in time waits timeoutDuration, then fails",
        );
    }
    Ok(t)
}

/// `[limiters.NAME-bulkhead]`: a semaphore bulkhead lets `maxConcurrentCalls`
/// calls run at once and refuses the others after `maxWaitDuration`
/// (SemaphoreBulkhead): a fixed concurrency limit, which refuses at once.
pub fn bulkhead(r: &Read<'_>, b: &str, bn: &str, led: &mut Ledger) -> Result<Tab, Error> {
    let limit = match r.get("maxConcurrentCalls") {
        Some(n) => {
            let v = n.i32("a Java int")?;
            if v < 1 {
                return Err(n.err("must be at least 1 (resilience4j's rule)"));
            }
            v
        }
        None => 25,
    };
    if let Some(n) = r.get("maxWaitDuration") {
        let v = ms(&n, Syntax::Spring)?;
        let (fate, how) = if v > 0.0 {
            (
                Fate::Approximated,
                "resim's concurrency limits refuse at once: a call does not wait for a place",
            )
        } else {
            (
                Fate::Mapped,
                "0: a call past the limit is refused at once, as resim's concurrency limit does",
            )
        };
        note_code(r, "maxWaitDuration", fate, "", how, led);
    }
    let lname = format!("{bn}-bulkhead");
    let mut t = Tab::new(format!("limiters.{lname}"));
    t.notes.push(format!(
        "resilience4j's bulkhead `{b}`: at most this many calls in flight"
    ));
    t.put("kind", Val::s("concurrency"));
    t.put("algorithm", Val::s("fixed"));
    t.put("limit", Val::n(limit as f64));
    Ok(t)
}
