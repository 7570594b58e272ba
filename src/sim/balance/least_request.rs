//! `least_request`: Envoy's least request balancer (`LEAST_REQUEST`).
//!
//! Equal weights (none given): `choice_count` (default 2) distinct replicas
//! drawn at random, the one with the fewest active requests; ties go to the
//! first drawn. (Envoy draws its choices with replacement; here they are
//! distinct, so two choices always compare two replicas.)
//!
//! Unequal `weights`: Envoy's weighted rule, an earliest-deadline-first
//! schedule on effective weights, effective weight = weight / (active +
//! 1)^`active_request_bias` (default 1.0). Each replica holds a deadline; a
//! pick takes the earliest (ties: the lowest index), the schedule's clock
//! moves to it, and the replica goes back with deadline clock + 1 / its
//! effective weight, its active count read at that pick (as Envoy re-adds a
//! picked host with the weight it has then). No draws in this case.
//! Source: Envoy's docs, "Load balancers: weighted least request".

use super::Balance;
use crate::engine::{Stream, Ticks};
use rand::RngExt;

pub(crate) struct LeastRequest {
    rng: Stream,
    choices: usize,
    /// A permutation of the replicas, its front drawn anew at each pick
    /// (a partial Fisher-Yates shuffle: distinct choices).
    order: Vec<usize>,
    /// Unequal weights: the EDF schedule.
    edf: Option<Edf>,
}

struct Edf {
    weights: Vec<f64>,
    bias: f64,
    deadlines: Vec<f64>,
    clock: f64,
}

impl LeastRequest {
    /// `n` replicas, `choices` drawn per pick, `weights` (empty or all equal:
    /// the unweighted rule) with `bias`.
    pub fn new(rng: Stream, n: usize, choices: usize, weights: &[f64], bias: f64) -> LeastRequest {
        let unequal = weights.windows(2).any(|w| w[0] != w[1]);
        LeastRequest {
            rng,
            choices: choices.clamp(1, n.max(1)),
            order: (0..n).collect(),
            edf: unequal.then(|| Edf {
                weights: weights.to_vec(),
                bias,
                deadlines: weights.iter().map(|w| 1.0 / w).collect(),
                clock: 0.0,
            }),
        }
    }
}

impl Balance for LeastRequest {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        let n = outstanding.len();
        if n < 2 {
            return 0;
        }
        if let Some(e) = &mut self.edf {
            let mut k = 0;
            for i in 1..n {
                if e.deadlines[i] < e.deadlines[k] {
                    k = i;
                }
            }
            e.clock = e.deadlines[k];
            let active = f64::from(outstanding[k]);
            let effective = e.weights[k] / (active + 1.0).powf(e.bias);
            e.deadlines[k] = e.clock + 1.0 / effective;
            return k;
        }
        let mut best = usize::MAX;
        for j in 0..self.choices {
            let r = j + self.rng.random_range(0..n - j);
            self.order.swap(j, r);
            let k = self.order[j];
            if best == usize::MAX || outstanding[k] < outstanding[best] {
                best = k;
            }
        }
        best
    }

    /// The same rule among `among`, each replica with its own weight and
    /// deadline.
    fn pick_among(&mut self, outstanding: &[u32], among: &[usize], _now: Ticks) -> usize {
        let m = among.len();
        if m < 2 {
            return among[0];
        }
        if let Some(e) = &mut self.edf {
            let mut k = among[0];
            for &i in &among[1..] {
                if e.deadlines[i] < e.deadlines[k] {
                    k = i;
                }
            }
            e.clock = e.deadlines[k];
            let active = f64::from(outstanding[k]);
            let effective = e.weights[k] / (active + 1.0).powf(e.bias);
            e.deadlines[k] = e.clock + 1.0 / effective;
            return k;
        }
        let mut order = among.to_vec();
        let mut best = usize::MAX;
        for j in 0..self.choices.min(m) {
            let r = j + self.rng.random_range(0..m - j);
            order.swap(j, r);
            let k = order[j];
            if best == usize::MAX || outstanding[k] < outstanding[best] {
                best = k;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    #[test]
    fn unweighted_takes_the_fewest_of_distinct_draws() {
        let mut b = LeastRequest::new(stream(3, 0, "balancer:t"), 5, 5, &[], 1.0);
        // all five drawn: always the least loaded
        for _ in 0..50 {
            assert_eq!(b.pick(&[4, 3, 9, 1, 7]), 3);
        }
        let mut two = LeastRequest::new(stream(3, 0, "balancer:t"), 3, 2, &[], 1.0);
        let picks: Vec<usize> = (0..300).map(|_| two.pick(&[1, 9, 4])).collect();
        assert!(!picks.contains(&1), "the busiest loses every pair it is in");
        assert!(picks.contains(&0) && picks.contains(&2));
    }

    #[test]
    fn weighted_shares_follow_the_effective_weights() {
        // idle replicas: shares in proportion to the weights, deterministic
        let mut b = LeastRequest::new(stream(1, 0, "balancer:t"), 3, 2, &[1.0, 2.0, 5.0], 1.0);
        let mut counts = [0u32; 3];
        for _ in 0..800 {
            counts[b.pick(&[0, 0, 0])] += 1;
        }
        let near = |c: u32, of: u32| c.abs_diff(of) <= 1;
        assert!(
            near(counts[0], 100) && near(counts[1], 200) && near(counts[2], 500),
            "{counts:?}"
        );
        // the heavy replica holds 4 active: 5 / 5 = 1, as the weight-1 one
        let mut b = LeastRequest::new(stream(1, 0, "balancer:t"), 2, 2, &[1.0, 5.0], 1.0);
        let mut counts = [0u32; 2];
        for _ in 0..1000 {
            counts[b.pick(&[0, 4])] += 1;
        }
        assert!((counts[0] as i32 - 500).abs() <= 2, "{counts:?}");
        // bias 0: active requests are ignored
        let mut b = LeastRequest::new(stream(1, 0, "balancer:t"), 2, 2, &[1.0, 3.0], 0.0);
        let mut counts = [0u32; 2];
        for _ in 0..400 {
            counts[b.pick(&[0, 50])] += 1;
        }
        assert!(counts[0].abs_diff(100) <= 1, "{counts:?}");
    }
}
