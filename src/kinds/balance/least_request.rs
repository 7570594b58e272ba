//! `least_request`: Envoy's least request balancer (`LEAST_REQUEST`).
//!
//! Equal weights (none given): `choice_count` (default 2) draws, each a
//! replica drawn uniformly from all of them, with replacement (two draws may
//! be the same replica, so two choices compare a single replica 1/N of the
//! time); the first draw is the candidate, and a later draw replaces it only
//! with strictly fewer active requests, so ties go to the earliest draw.
//! Source: Envoy, `source/extensions/load_balancing_policies/least_request/
//! least_request_lb.cc`, `LeastRequestLoadBalancer::unweightedHostPickNChoices`
//! (`random() % hosts.size()` per choice, `sampled < candidate` to replace);
//! `choice_count` is validated there only as >= 2, so it may exceed the hosts.
//!
//! Unequal `weights`: Envoy's weighted rule, an earliest-deadline-first
//! schedule on effective weights, effective weight = weight / (active +
//! 1)^`active_request_bias` (default 1.0). Each replica holds a deadline; a
//! pick takes the earliest (ties: the lowest index), the schedule's clock
//! moves to it, and the replica goes back with deadline clock + 1 / its
//! effective weight, its active count read at that pick (as Envoy re-adds a
//! picked host with the weight it has then). No draws in this case.
//! Source: Envoy's `hostWeight` (weight / (active + 1)^bias) and its EDF
//! scheduler, re-adding the picked host (`EdfLoadBalancerBase::chooseHostOnce`).

use super::{Balance, Kind};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::engine::{Stream, Ticks};
use rand::RngExt;

pub(crate) struct LeastRequest {
    rng: Stream,
    /// Draws per pick (Envoy's `choice_count`), at least 1.
    choices: usize,
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
    /// `choices` drawn per pick, `weights` (one per replica; empty or all
    /// equal: the unweighted rule) with `bias`.
    pub fn new(rng: Stream, choices: usize, weights: &[f64], bias: f64) -> LeastRequest {
        let unequal = weights.windows(2).any(|w| w[0] != w[1]);
        LeastRequest {
            rng,
            choices: choices.max(1),
            edf: unequal.then(|| Edf {
                weights: weights.to_vec(),
                bias,
                deadlines: weights.iter().map(|w| 1.0 / w).collect(),
                clock: 0.0,
            }),
        }
    }
}

impl Edf {
    /// The EDF pick among `replicas` (the first with the earliest deadline),
    /// its deadline moved on by 1 / its effective weight at its count in
    /// `outstanding`.
    fn next(&mut self, outstanding: &[u32], mut replicas: impl Iterator<Item = usize>) -> usize {
        let mut k = replicas.next().expect("at least one replica");
        for i in replicas {
            if self.deadlines[i] < self.deadlines[k] {
                k = i;
            }
        }
        self.clock = self.deadlines[k];
        let active = f64::from(outstanding[k]);
        let effective = self.weights[k] / (active + 1.0).powf(self.bias);
        self.deadlines[k] = self.clock + 1.0 / effective;
        k
    }
}

impl Balance for LeastRequest {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        let n = outstanding.len();
        if n < 2 {
            return 0;
        }
        if let Some(e) = &mut self.edf {
            return e.next(outstanding, 0..n);
        }
        let mut best = self.rng.random_range(0..n);
        for _ in 1..self.choices {
            let k = self.rng.random_range(0..n);
            if outstanding[k] < outstanding[best] {
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
            return e.next(outstanding, among.iter().copied());
        }
        // Envoy draws from the healthy hosts alone, with replacement
        let mut best = among[self.rng.random_range(0..m)];
        for _ in 1..self.choices {
            let k = among[self.rng.random_range(0..m)];
            if outstanding[k] < outstanding[best] {
                best = k;
            }
        }
        best
    }
}


/// `least_request`: Envoy's least request.
#[derive(Debug, Clone, PartialEq)]
pub struct LeastRequestKind {
    /// Replicas drawn per pick, with replacement (>= 2).
    pub choice_count: u32,
    /// With unequal weights: effective weight = weight / (active + 1)^bias.
    pub active_request_bias: f64,
    /// One positive weight per replica (empty: all equal).
    pub weights: Vec<f64>,
}

impl Kind for LeastRequestKind {
    const DECL: Decl = Decl {
        name: "least_request",
        family: "balancer",
        keys: &[
            Key::with("choice_count", 2.0, Range::Whole(2)),
            Key::with("active_request_bias", 1.0, Range::NonNegative),
            Key::with("weights", 0.0, Range::Weights),
        ],
        required_because: "",
    };

    fn from_keys(k: &Keys, replicas: u32) -> R<LeastRequestKind> {
        Ok(LeastRequestKind {
            choice_count: super::draws(k, "choice_count")?,
            active_request_bias: k.num("active_request_bias"),
            weights: super::weights(k, replicas, false)?,
        })
    }

    fn make(&self, _n: usize, rng: Stream) -> Box<dyn Balance> {
        Box::new(LeastRequest::new(
            rng,
            self.choice_count as usize,
            &self.weights,
            self.active_request_bias,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    /// Envoy's draws: each uniform over all replicas, with replacement; a
    /// later draw replaces the candidate only with strictly fewer active.
    #[test]
    fn unweighted_draws_with_replacement_and_keeps_the_earliest_on_a_tie() {
        let views: [&[u32]; 3] = [&[4, 3, 9, 1, 7], &[2, 2, 2, 2, 2], &[0, 8, 0, 8, 1]];
        for choices in [2, 3, 7] {
            let mut b = LeastRequest::new(stream(3, 0, "balancer:t"), choices, &[], 1.0);
            let mut same = stream(3, 0, "balancer:t");
            for _ in 0..200 {
                for view in views {
                    let draws: Vec<usize> =
                        (0..choices).map(|_| same.random_range(0..5usize)).collect();
                    let mut expected = draws[0];
                    for &k in &draws[1..] {
                        if view[k] < view[expected] {
                            expected = k;
                        }
                    }
                    assert_eq!(b.pick(view), expected, "{choices} draws {draws:?}");
                }
            }
        }
    }

    /// Two replicas, two choices: both draws land on the busy one a quarter
    /// of the time, and it is picked then (distinct draws never pick it).
    #[test]
    fn two_choices_of_two_pick_the_busier_a_quarter_of_the_time() {
        let mut b = LeastRequest::new(stream(9, 0, "balancer:t"), 2, &[], 1.0);
        let busy = (0..8000).filter(|_| b.pick(&[0, 5]) == 1).count();
        assert!((1800..2200).contains(&busy), "{busy} of 8000");
        // three draws of three replicas miss the idle one when all three
        // land on the busy two: (2/3)^3 = 8/27 of the picks
        let mut b = LeastRequest::new(stream(9, 0, "balancer:t"), 3, &[], 1.0);
        let idle = (0..8000).filter(|_| b.pick(&[4, 0, 4]) == 1).count();
        let share = idle as f64 / 8000.0;
        assert!((share - (1.0 - 8.0 / 27.0)).abs() < 0.02, "{share}");
    }

    #[test]
    fn weighted_shares_follow_the_effective_weights() {
        // idle replicas: shares in proportion to the weights, deterministic
        let mut b = LeastRequest::new(stream(1, 0, "balancer:t"), 2, &[1.0, 2.0, 5.0], 1.0);
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
        let mut b = LeastRequest::new(stream(1, 0, "balancer:t"), 2, &[1.0, 5.0], 1.0);
        let mut counts = [0u32; 2];
        for _ in 0..1000 {
            counts[b.pick(&[0, 4])] += 1;
        }
        assert!((counts[0] as i32 - 500).abs() <= 2, "{counts:?}");
        // bias 0: active requests are ignored
        let mut b = LeastRequest::new(stream(1, 0, "balancer:t"), 2, &[1.0, 3.0], 0.0);
        let mut counts = [0u32; 2];
        for _ in 0..400 {
            counts[b.pick(&[0, 50])] += 1;
        }
        assert!(counts[0].abs_diff(100) <= 1, "{counts:?}");
    }
}
