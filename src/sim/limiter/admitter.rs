//! The state a limiter keeps per bucket key: one variant per family of
//! algorithms, each answering the admission seam ([`Admission`]).

use super::admission::{Admission, Decision};
use super::rate::Bucket;
use crate::engine::Ticks;
use crate::model::Limiter;
use crate::sim::Outcome;

/// The state a limiter keeps per bucket key, one variant per family of
/// algorithms. (One arm here per family: the actor needs no other change.)
#[derive(Debug, Clone)]
pub(super) enum Admitter {
    /// The rate algorithms ([`super::rate`]).
    Rate(Bucket),
}

impl Admitter {
    /// A fresh state for `limiter`'s algorithm.
    pub(super) fn new(limiter: &Limiter) -> Admitter {
        Admitter::Rate(Bucket::new(limiter))
    }
}

impl Admission for Admitter {
    #[inline]
    fn try_admit(&mut self, limiter: &Limiter, now: Ticks) -> Decision {
        match self {
            Admitter::Rate(b) => b.try_admit(limiter, now),
        }
    }

    #[inline]
    fn on_done(&mut self, limiter: &Limiter, now: Ticks, latency: Ticks, outcome: Outcome) {
        match self {
            Admitter::Rate(b) => b.on_done(limiter, now, latency, outcome),
        }
    }
}
