//! `two_choices`: the less loaded of two replicas drawn at random (the power
//! of two choices).

use super::{Balance, Kind};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};
use crate::engine::Stream;
use rand::RngExt;

/// Two draws per pick: a replica `a` uniformly, then `b` uniformly among the
/// others; `b` only when it has strictly fewer outstanding than `a`.
pub(crate) struct TwoChoices {
    rng: Stream,
}

impl TwoChoices {
    pub fn new(rng: Stream) -> TwoChoices {
        TwoChoices { rng }
    }
}

impl Balance for TwoChoices {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        let n = outstanding.len();
        if n < 2 {
            return 0;
        }
        let a = self.rng.random_range(0..n);
        let b = (a + 1 + self.rng.random_range(0..n - 1)) % n;
        if outstanding[b] < outstanding[a] {
            b
        } else {
            a
        }
    }
}


/// `two_choices`: two distinct replicas drawn at random, the one with fewer
/// requests. No keys.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoChoicesKind;

impl Kind for TwoChoicesKind {
    const DECL: Decl = Decl {
        name: "two_choices",
        family: "balancer",
        keys: &[],
        required_because: "",
    };

    fn from_keys(_k: &Keys, _replicas: u32) -> R<TwoChoicesKind> {
        Ok(TwoChoicesKind)
    }

    fn make(&self, _n: usize, rng: Stream) -> Box<dyn Balance> {
        Box::new(TwoChoices::new(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    #[test]
    fn takes_the_less_loaded_of_two_distinct_draws_and_the_first_on_a_tie() {
        let mut b = TwoChoices::new(stream(3, 0, "balancer:t"));
        let mut same = stream(3, 0, "balancer:t");
        let views: [&[u32]; 3] = [&[5, 1, 9, 0], &[2, 2, 2, 2], &[0, 8, 3, 8]];
        for _ in 0..200 {
            for view in views {
                let n = view.len();
                let first = same.random_range(0..n);
                let second = (first + 1 + same.random_range(0..n - 1)) % n;
                assert_ne!(first, second, "two distinct replicas");
                let expected = if view[second] < view[first] {
                    second
                } else {
                    first
                };
                assert_eq!(b.pick(view), expected);
            }
        }
    }

    #[test]
    fn never_picks_the_most_loaded_of_three_unless_it_ties() {
        let mut b = TwoChoices::new(stream(5, 0, "balancer:t"));
        let picks: Vec<usize> = (0..300).map(|_| b.pick(&[1, 9, 4])).collect();
        assert!(!picks.contains(&1), "the busiest loses every pair it is in");
        assert!(picks.contains(&0) && picks.contains(&2));
        let mut one = TwoChoices::new(stream(5, 0, "balancer:t"));
        assert_eq!(one.pick(&[3]), 0, "a single replica needs no draw");
    }
}
