//! `arrival_factor`: an open workload's rate is multiplied by `value` for
//! the gaps drawn in the window.

use super::{Effect, On, valued};
use crate::kinds::keys::Range;

valued!(
    /// A factor > 0 on an open workload's rate (0 would stop it).
    ArrivalFactor,
    "arrival_factor",
    "the factor on the workload's rate",
    Range::Positive,
    Effect::ArrivalFactor,
    On::Workload
);
