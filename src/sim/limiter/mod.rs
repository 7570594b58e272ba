//! Limiter actor: rate limiters on the gateway (by route prefix) and in service
//! middleware (DY13).
//!
//! A request meets its limiters in a fixed order: the gateway rules whose prefix
//! matches its route (rule order, then list order; gateway access only), then the
//! middleware of the service that owns the route. A limiter meets a request at most
//! once. Each limiter counts the request before deciding (per bucket and per
//! member), then lets it through, holds it (throttle) or rejects it; the first
//! rejection ends the request with a 429 naming that limiter. A route no service owns
//! is answered 404 before any limiter sees it.
//!
//! The decision itself is a pure function of (time, bucket state): [`decide`]. Every
//! algorithm answers one question, [`Bucket::earliest`]: the first instant at or after
//! `t` when one more request may pass. Reject mode passes a request when that instant
//! is now; throttle mode holds it until then if the wait is at most `max_delay_ms`
//! (held requests of a bucket leave in FIFO order) and rejects it otherwise. The
//! limiter is deterministic, so that outcome is known on arrival; `overflow` only
//! says when the 429 goes out: after holding the request `max_delay_ms` (`hold`, the
//! default) or at once (`reject-now`). A request that will be rejected reserves
//! nothing, so no later request overtakes it. Only requests let through change an
//! algorithm's state.
//!
//! # Files
//!
//! - `algorithms`: the pure part: [`Decision`], [`Bucket`] (one bucket's state per
//!   algorithm), [`decide`], and [`natural_cmp`] for member names. No `World`.
//! - `actor`: the limiter actor: each request's chain (gateway rules, then
//!   middleware), its place in it, the holds, and the per-limiter and per-member
//!   tallies, as `impl World` reactions.
//! - `results`: what the limiters measured ([`LimiterResults`]), built from the
//!   actor's tallies at the end of a run.
//! - `windows`: one limiter's passes and rejects per time-series window, overall
//!   and per bucket key (`timeseries_limiters.csv`).

mod actor;
mod algorithms;
mod results;
mod windows;

pub(crate) use actor::Limiting;
pub use algorithms::{Bucket, Decision, decide, natural_cmp};
pub use results::{
    KeyWindows, LimiterResults, LimiterRun, LimiterWindows, MemberCount, MemberOutcome,
    RouteTraffic,
};
pub use windows::{KEYED_WINDOWS_MAX, rows_per_window};
