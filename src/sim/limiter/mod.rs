//! Limiter actor: rate and concurrency limiters on the gateway (by route
//! prefix) and in service middleware (DY13).
//!
//! A request meets its limiters in a fixed order: the gateway rules whose prefix
//! matches its route (rule order, then list order; gateway access only), then the
//! middleware of the service that owns the route. A limiter meets a request at most
//! once. Each limiter counts the request before deciding (per bucket and per
//! member), then lets it through, holds it (throttle) or rejects it; the first
//! rejection ends the request with a 429 naming that limiter. A route no service owns
//! is answered 404 before any limiter sees it.
//!
//! A rate limiter's decision is a pure function of (time, bucket state):
//! `crate::kinds::rate::decide`. Every rate algorithm answers one question,
//! `Bucket::earliest`: the first instant at or after
//! `t` when one more request may pass. Reject mode passes a request when that instant
//! is now; throttle mode holds it until then if the wait is at most `max_delay_ms`
//! (held requests of a bucket leave in FIFO order) and rejects it otherwise. The
//! limiter is deterministic, so that outcome is known on arrival; `overflow` only
//! says when the 429 goes out: after holding the request `max_delay_ms` (`hold`, the
//! default) or at once (`reject-now`). A request that will be rejected reserves
//! nothing, so no later request overtakes it. Only requests let through change an
//! algorithm's state.
//!
//! # Admissions and when a request is done
//!
//! Each limiter keeps one state per bucket key behind the [`Admission`] trait:
//! `try_admit` decides, and a request it lets through (at once, or at the end of
//! a throttle hold) holds an *admission* of that state. Every admission hears
//! `on_done(now, latency, outcome, started_with)` exactly once, when the
//! request's work leaves the service, with `latency = now - the instant it was
//! let through` and `started_with` a concurrency limit's count in flight when
//! it let the request through:
//!
//! - its handler ends it (the world's `respond`): answered, dropped, an error or
//!   shed, with the handler's outcome, also when the client had stopped
//!   waiting earlier (the work ran to its end), and for a request that is a
//!   call from another service;
//! - a later limiter of its chain rejects it: the earlier admissions hear
//!   `Rejected` when its 429 goes out (at once, or after a `hold`);
//! - its client left while a limiter held it: `TimedOut` when the hold ends;
//! - its handler gives its work up (the world's `handler_released`): a queued
//!   request whose client left (`abandon`), a request its caller cancelled:
//!   `TimedOut`.
//!
//! A rejected request holds no admission of the limiter that rejected it. The
//! rate algorithms ignore `on_done`; a concurrency limit counts its requests in
//! flight with it.
//!
//! # Files
//!
//! - `admission`: the seam: the [`Admission`] trait and its [`Decision`], and
//!   the admissions each request holds.
//! - `admitter`: the per-key state the actor keeps, one variant per family of
//!   algorithms.
//! - `concurrency/`: the concurrency limits' side of the seam (`kind =
//!   "concurrency"`): what a request's end tells the algorithm, and `track`,
//!   a limiter's limit and in flight over time (`concurrency.csv`,
//!   `timeseries_concurrency.csv`).
//!
//! The algorithms themselves are kinds, one module each, with no `World`:
//! the rate algorithms in `crate::kinds::rate` (fixed-window, sliding-counter,
//! sliding-log, token-bucket, GCRA: pure functions of (time, bucket state)),
//! the concurrency algorithms in `crate::kinds::concurrency` (fixed, AIMD,
//! Vegas, Gradient2, Envoy's gradient controller).
//! - `actor`: the limiter actor: each request's chain (gateway rules, then
//!   middleware), its place in it, the holds, the admissions' done notices, and
//!   the per-limiter and per-member tallies. It knows nothing of the world: it
//!   reads the request's record it is given, says where a request's walk past
//!   its limiters ends (`Walk`), and the world sends the request on, holds
//!   it or answers it (`world/limiter.rs`).
//! - `results`: what the limiters measured ([`LimiterResults`]), built from the
//!   actor's tallies at the end of a run, and [`natural_cmp`] for member names.
//! - `windows`: one limiter's passes and rejects per time-series window, overall
//!   and per bucket key (`timeseries_limiters.csv`).

mod actor;
mod admission;
#[cfg(test)]
mod admission_tests;
mod admitter;
mod concurrency;
mod results;
#[cfg(test)]
mod scope_tests;
mod windows;

pub(crate) use actor::{Limiting, Resumed, Walk};
#[cfg(test)]
pub(crate) use admission::Ledger;
pub use admission::{Admission, Decision};
pub use concurrency::track::Gauges;
pub use results::{
    ConcurrencyRun, KeyWindows, LimiterResults, LimiterRun, LimiterWindows, MemberCount,
    MemberOutcome, ReplicaConcurrency, RouteTraffic, natural_cmp,
};
pub use windows::{KEYED_WINDOWS_MAX, rows_per_window};
