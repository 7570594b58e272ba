//! `least_outstanding`: the replica with the fewest requests outstanding.

use super::Balance;

/// The lowest count of the view; ties go to the lowest index. No draws.
#[derive(Debug, Default)]
pub(crate) struct LeastOutstanding;

impl Balance for LeastOutstanding {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        outstanding
            .iter()
            .enumerate()
            .min_by_key(|&(_, &load)| load)
            .map_or(0, |(k, _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_lowest_count_and_the_lowest_index_among_ties() {
        let mut b = LeastOutstanding;
        assert_eq!(b.pick(&[4, 2, 7, 3]), 1);
        assert_eq!(b.pick(&[5, 1, 9, 1, 1]), 1, "ties: the first");
        assert_eq!(b.pick(&[0, 0]), 0);
        assert_eq!(b.pick(&[3, 3, 2]), 2);
    }
}
