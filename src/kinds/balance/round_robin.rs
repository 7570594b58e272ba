//! `round_robin`: the replicas in turn, whatever they hold.

use super::{Balance, Kind};
use crate::engine::Stream;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};
use crate::engine::Ticks;

/// Replica 0, 1, ..., N - 1, then 0 again.
#[derive(Debug, Default)]
pub(crate) struct RoundRobin {
    /// The replica whose turn it is.
    next: usize,
}

impl Balance for RoundRobin {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        let k = self.next;
        self.next = (k + 1) % outstanding.len();
        k
    }

    /// The turn passes over the replicas not in `among`: the first of them
    /// at or after the one whose turn it is.
    fn pick_among(&mut self, outstanding: &[u32], among: &[usize], _now: Ticks) -> usize {
        let k = among
            .iter()
            .copied()
            .find(|&r| r >= self.next)
            .unwrap_or(among[0]);
        self.next = (k + 1) % outstanding.len();
        k
    }

    /// HAProxy's `roundrobin`: a new request waits behind anyone queued.
    fn queue_first(&self) -> bool {
        true
    }
}


/// `round_robin`: replicas in turn. No keys.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoundRobinKind;

impl Kind for RoundRobinKind {
    const DECL: Decl = Decl {
        name: "round_robin",
        family: "balancer",
        keys: &[],
        required_because: "",
    };

    fn from_keys(_k: &Keys, _replicas: u32) -> R<RoundRobinKind> {
        Ok(RoundRobinKind)
    }

    fn make(&self, _n: usize, _rng: Stream) -> Box<dyn Balance> {
        Box::new(RoundRobin::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_replicas_in_turn_whatever_they_hold() {
        let mut b = RoundRobin::default();
        let picks: Vec<usize> = (0..7).map(|_| b.pick(&[9, 0, 4])).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn passes_over_the_replicas_left_out() {
        let mut b = RoundRobin::default();
        let among = [0, 2, 3];
        let picks: Vec<usize> = (0..5)
            .map(|_| b.pick_among(&[0; 4], &among, Ticks::ZERO))
            .collect();
        assert_eq!(picks, [0, 2, 3, 0, 2]);
        assert_eq!(b.pick(&[0; 4]), 3, "all back: the turn goes on from 2");
    }
}
