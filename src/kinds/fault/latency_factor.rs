//! `latency_factor`: work that starts in the window takes `value` times its
//! drawn length; work already running is not stretched.

use super::{Effect, valued};
use crate::kinds::keys::Range;

valued!(
    /// A factor > 0 on the length of work starting in the window (0 would
    /// make work take no time).
    LatencyFactor,
    "latency_factor",
    "the factor on the length of work starting in the window",
    Range::Positive,
    Effect::LatencyFactor
);
