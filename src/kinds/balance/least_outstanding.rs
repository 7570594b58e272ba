//! `least_outstanding`: the replica with the fewest requests outstanding.
//!
//! Ties (`tie_break`): `lowest_index` (the default) takes the lowest index;
//! `first_reached` takes the replica whose count last changed earliest, the
//! one that reached that count first, as HAProxy's `balance leastconn`
//! does. HAProxy keeps its servers in an ebtree keyed by (in flight + 1) /
//! weight (0 while nothing is in flight), re-inserts a server each time its
//! count changes, and takes the tree's first node: among equal keys an ebtree
//! walks its duplicates in the order they were inserted, so the server that
//! has held its count longest comes first. At the start every count is 0 and
//! the servers were inserted in configuration order: the lowest index first.
//! Source: HAProxy 2.6, `src/lb_fwlc.c` (`fwlc_queue_srv`,
//! `fwlc_srv_reposition`, `fwlc_get_next_server`) and
//! `include/import/ebtree.h` (duplicates walked in insertion order).

use super::{Balance, Kind};
use crate::engine::Stream;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::engine::Ticks;

/// The lowest count of the view; ties by `tie_break`. No draws.
#[derive(Debug, Default)]
pub(crate) struct LeastOutstanding {
    tie_break: TieBreak,
    /// `first_reached`: per replica, when its count last changed (an
    /// increasing stamp), given before each pick ([`Balance::since`]).
    since: Vec<u64>,
}

impl LeastOutstanding {
    pub fn new(tie_break: TieBreak) -> LeastOutstanding {
        LeastOutstanding {
            tie_break,
            since: Vec::new(),
        }
    }

    /// The tie-break key of replica `k`: its stamp (`first_reached`; its
    /// index when none was given) or its index.
    #[inline]
    fn order(&self, k: usize) -> u64 {
        match self.tie_break {
            TieBreak::FirstReached => self.since.get(k).copied().unwrap_or(k as u64),
            TieBreak::LowestIndex => k as u64,
        }
    }
}

impl Balance for LeastOutstanding {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        if self.tie_break == TieBreak::LowestIndex {
            return outstanding
                .iter()
                .enumerate()
                .min_by_key(|&(_, &load)| load)
                .map_or(0, |(k, _)| k);
        }
        (0..outstanding.len())
            .min_by_key(|&k| (outstanding[k], self.order(k)))
            .unwrap_or(0)
    }

    /// The same rule among `among`, each replica with its own stamp.
    fn pick_among(&mut self, outstanding: &[u32], among: &[usize], _now: Ticks) -> usize {
        among
            .iter()
            .copied()
            .min_by_key(|&k| (outstanding[k], self.order(k)))
            .unwrap_or(among[0])
    }

    fn reads_since(&self) -> bool {
        self.tie_break == TieBreak::FirstReached
    }

    fn since(&mut self, since: &[u64]) {
        self.since.clear();
        self.since.extend_from_slice(since);
    }
}


/// Which of the replicas tied for the fewest outstanding a
/// `least_outstanding` pick takes (`tie_break`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TieBreak {
    /// The lowest index.
    #[default]
    LowestIndex,
    /// The one whose count last changed earliest: the one that reached that
    /// count first (HAProxy's `leastconn` tree).
    FirstReached,
}

/// `tie_break`'s names, in [`TieBreak`]'s order.
const TIE_BREAKS: &[&str] = &["lowest_index", "first_reached"];

/// `least_outstanding`: the fewest requests in slots and queue.
#[derive(Debug, Clone, PartialEq)]
pub struct LeastOutstandingKind {
    /// Which of the replicas tied for the fewest gets the request.
    pub tie_break: TieBreak,
}

impl Kind for LeastOutstandingKind {
    const DECL: Decl = Decl {
        name: "least_outstanding",
        family: "balancer",
        keys: &[Key::with("tie_break", 0.0, Range::Names(TIE_BREAKS))],
        required_because: "",
    };

    fn from_keys(k: &Keys, _replicas: u32) -> R<LeastOutstandingKind> {
        Ok(LeastOutstandingKind {
            tie_break: match k.name_index("tie_break") {
                0 => TieBreak::LowestIndex,
                _ => TieBreak::FirstReached,
            },
        })
    }

    fn make(&self, _n: usize, _rng: Stream) -> Box<dyn Balance> {
        Box::new(LeastOutstanding::new(self.tie_break))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_lowest_count_and_the_lowest_index_among_ties() {
        let mut b = LeastOutstanding::default();
        assert_eq!(b.pick(&[4, 2, 7, 3]), 1);
        assert_eq!(b.pick(&[5, 1, 9, 1, 1]), 1, "ties: the first");
        assert_eq!(b.pick(&[0, 0]), 0);
        assert_eq!(b.pick(&[3, 3, 2]), 2);
        assert!(!b.reads_since());
    }

    /// `first_reached`: among the tied, the one whose count changed
    /// earliest, whatever its index; the count still comes first.
    #[test]
    fn first_reached_takes_the_replica_longest_at_its_count() {
        let mut b = LeastOutstanding::new(TieBreak::FirstReached);
        assert!(b.reads_since());
        b.since(&[7, 3, 9, 5]);
        assert_eq!(b.pick(&[1, 1, 1, 1]), 1, "1 changed first");
        assert_eq!(b.pick(&[1, 2, 1, 1]), 3, "then 3 (stamp 5) before 0 (7)");
        assert_eq!(
            b.pick(&[0, 2, 1, 1]),
            0,
            "a lower count wins whatever its stamp"
        );
        assert_eq!(b.pick_among(&[1, 1, 1, 1], &[0, 2, 3], Ticks::ZERO), 3);
        // no stamps yet: the index order, as HAProxy's servers start
        let mut fresh = LeastOutstanding::new(TieBreak::FirstReached);
        assert_eq!(fresh.pick(&[2, 1, 1]), 1);
    }
}
