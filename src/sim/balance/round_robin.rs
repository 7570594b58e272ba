//! `round_robin`: the replicas in turn, whatever they hold.

use super::Balance;

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
}
