//! `random`: a replica drawn uniformly, whatever they hold.

use super::{Balance, Kind};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};
use crate::engine::Stream;
use rand::RngExt;

/// One draw per pick from its own stream.
pub(crate) struct Random {
    rng: Stream,
}

impl Random {
    pub fn new(rng: Stream) -> Random {
        Random { rng }
    }
}

impl Balance for Random {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        self.rng.random_range(0..outstanding.len())
    }
}


/// `random`: uniformly at random, from the stream `balancer:NAME`. No keys.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomKind;

impl Kind for RandomKind {
    const DECL: Decl = Decl {
        name: "random",
        family: "balancer",
        keys: &[],
        required_because: "",
    };

    fn from_keys(_k: &Keys, _replicas: u32) -> R<RandomKind> {
        Ok(RandomKind)
    }

    fn make(&self, _n: usize, rng: Stream) -> Box<dyn Balance> {
        Box::new(Random::new(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    #[test]
    fn draws_one_uniform_index_per_pick_from_its_stream() {
        let mut b = Random::new(stream(7, 0, "balancer:t"));
        let mut same = stream(7, 0, "balancer:t");
        let mut counts = [0u32; 4];
        for _ in 0..4000 {
            let k = b.pick(&[100, 0, 0, 0]);
            assert_eq!(k, same.random_range(0..4usize), "one draw, as 0..n");
            counts[k] += 1;
        }
        // the load is not read: the busy replica gets its quarter too
        assert!(
            counts.iter().all(|&c| (900..1100).contains(&c)),
            "{counts:?}"
        );
    }
}
