//! `weighted_round_robin`: nginx's smooth weighted round robin.
//!
//! Each replica keeps a current weight. At each pick every current weight
//! grows by the replica's weight, the largest is picked (ties: the lowest
//! index) and loses the sum of the weights. Over any sum-of-weights picks each
//! replica gets exactly its weight's share, spread out (weights 5, 1, 1 give
//! a a b a c a a, not a a a a a b c). No draws, and the load is not read.
//! Source: nginx's `ngx_http_upstream_get_peer` in
//! `src/http/ngx_http_upstream_round_robin.c` (upstream `weight=`).

use super::{Balance, Kind};
use crate::engine::Stream;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::engine::Ticks;

pub(crate) struct WeightedRoundRobin {
    weights: Vec<f64>,
    current: Vec<f64>,
    total: f64,
}

impl WeightedRoundRobin {
    pub fn new(weights: &[f64]) -> WeightedRoundRobin {
        WeightedRoundRobin {
            weights: weights.to_vec(),
            current: vec![0.0; weights.len()],
            total: weights.iter().sum(),
        }
    }
}

impl Balance for WeightedRoundRobin {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        let n = outstanding.len().min(self.weights.len());
        if n < 2 {
            return 0;
        }
        let mut best = 0;
        for i in 0..n {
            self.current[i] += self.weights[i];
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= self.total;
        best
    }

    /// Smooth weighted round robin over `among`, with their own weights.
    fn pick_among(&mut self, outstanding: &[u32], among: &[usize], _now: Ticks) -> usize {
        let n = outstanding.len().min(self.weights.len());
        let among: Vec<usize> = among.iter().copied().filter(|&i| i < n).collect();
        let Some(&first) = among.first() else {
            return 0;
        };
        let mut best = first;
        let mut total = 0.0;
        for &i in &among {
            self.current[i] += self.weights[i];
            total += self.weights[i];
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= total;
        best
    }

    /// HAProxy's `roundrobin`: a new request waits behind anyone queued.
    fn queue_first(&self) -> bool {
        true
    }
}


/// `weighted_round_robin`: nginx's smooth weighted round robin.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedRoundRobinKind {
    /// One positive weight per replica.
    pub weights: Vec<f64>,
}

impl Kind for WeightedRoundRobinKind {
    const DECL: Decl = Decl {
        name: "weighted_round_robin",
        family: "balancer",
        keys: &[Key::required("weights", Range::Weights)],
        required_because: "one positive weight per replica",
    };

    fn from_keys(k: &Keys, replicas: u32) -> R<WeightedRoundRobinKind> {
        Ok(WeightedRoundRobinKind {
            weights: super::weights(k, replicas, false)?,
        })
    }

    fn make(&self, _n: usize, _rng: Stream) -> Box<dyn Balance> {
        Box::new(WeightedRoundRobin::new(&self.weights))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_the_weights_as_nginx_does() {
        let mut b = WeightedRoundRobin::new(&[5.0, 1.0, 1.0]);
        let picks: Vec<usize> = (0..14).map(|_| b.pick(&[0, 9, 9])).collect();
        assert_eq!(picks, [0, 0, 1, 0, 2, 0, 0, 0, 0, 1, 0, 2, 0, 0]);
        let mut b = WeightedRoundRobin::new(&[1.0, 1.0, 1.0]);
        let picks: Vec<usize> = (0..6).map(|_| b.pick(&[0, 0, 0])).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2], "equal weights: round robin");
    }
}
