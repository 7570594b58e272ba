//! `error_rate`: work ending in the window fails with probability `value`
//! (a dependency call after its latency, a server's request after its
//! service time), drawn from the fault's own stream.

use super::{Effect, valued};
use crate::kinds::keys::Range;

valued!(
    /// A probability in [0, 1].
    ErrorRate,
    "error_rate",
    "the probability that work fails",
    Range::Fraction,
    Effect::ErrorRate
);
