//! What a limiter's rule does with one request ([`Decision`]): the answer
//! both families of limiter algorithms give, rate and concurrency.

use crate::engine::Ticks;

/// What a limiter does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Let through now.
    Pass,
    /// Throttled: held, and let through at this time.
    Delay(Ticks),
    /// Rejected (429).
    Reject,
}
