//! `latency_add`: work that starts in the window takes `value` ms more than
//! its drawn length (after any factor).

use super::{Effect, valued};
use crate::kinds::keys::Range;

valued!(
    /// Milliseconds >= 0 added to work starting in the window.
    LatencyAdd,
    "latency_add",
    "the ms added to work starting in the window",
    Range::NonNegative,
    Effect::LatencyAdd
);
