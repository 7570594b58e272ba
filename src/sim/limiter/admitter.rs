//! The state a limiter keeps per bucket key: one variant per family of
//! algorithms, each answering the admission seam ([`Admission`]).

use super::admission::{Admission, Decision};
use super::concurrency::ConcurrencyLimit;
use crate::engine::{Stream, Ticks};
use crate::kinds::rate::{Bucket, decide};
use crate::model::{Limiter, LimiterRule};
use crate::sim::vocab::Outcome;

/// The state a limiter keeps per bucket key, one variant per family of
/// algorithms. (One arm here per family: the actor needs no other change.)
#[derive(Debug, Clone)]
pub(super) enum Admitter {
    /// The rate algorithms (`crate::kinds::rate`).
    Rate(Bucket),
    /// A concurrency limit ([`super::concurrency`]).
    Concurrency(Box<ConcurrencyLimit>),
}

impl Admitter {
    /// A fresh state for `limiter`'s algorithm; `rng` gives the random
    /// stream of an algorithm that draws.
    pub(super) fn new(limiter: &Limiter, rng: impl FnOnce() -> Stream) -> Admitter {
        match &limiter.rule {
            LimiterRule::Rate(r) => Admitter::Rate(Bucket::new(r)),
            LimiterRule::Concurrency(c) => {
                Admitter::Concurrency(Box::new(ConcurrencyLimit::new(&c.algorithm, rng)))
            }
        }
    }

    /// A concurrency limit's (limit, in flight); None for a rate.
    pub(super) fn gauge(&self) -> Option<(u64, u64)> {
        match self {
            Admitter::Rate(_) => None,
            Admitter::Concurrency(c) => Some((c.limit(), c.in_flight())),
        }
    }
}

impl Admission for Admitter {
    #[inline]
    fn try_admit(&mut self, limiter: &Limiter, now: Ticks) -> Decision {
        match self {
            Admitter::Rate(b) => match limiter.rate() {
                Some(r) => decide(r, b, now),
                None => Decision::Reject,
            },
            Admitter::Concurrency(c) => c.try_admit(limiter, now),
        }
    }

    #[inline]
    fn on_done(&mut self, limiter: &Limiter, now: Ticks, latency: Ticks, outcome: Outcome, n: u32) {
        match self {
            // a rate never needs to hear when a request is done
            Admitter::Rate(_) => {}
            Admitter::Concurrency(c) => c.on_done(limiter, now, latency, outcome, n),
        }
    }
}
