//! `haproxy_random`: HAProxy's `balance random(draws)`.
//!
//! HAProxy draws its random servers from its consistent-hash ring: server i
//! (its id i + 1, as HAProxy numbers servers in configuration order) with
//! weight w holds 16 x w points at positions hash((i + 1) x 4096 + j),
//! j = 0 .. 16 x w, `hash` being Bob Jenkins' 32-bit full-avalanche integer
//! hash times 3221225473. A draw is a uniform 32-bit number; it goes to the
//! point closest to it on the ring (the point at or after it against the one
//! before it, wrapping round; the one before on a tie of distances). With
//! 16 points per server the arcs are uneven, so even servers of equal weight
//! get unequal shares of the draws (3 servers of weight 1: see the tests).
//!
//! A pick makes `draws` draws (default 2), with replacement. After each draw
//! the new server is compared with the best so far: the best so far stays
//! only when the new one has strictly more requests in flight per unit of
//! weight (in flight x its weight > best's in flight x the new one's
//! weight); otherwise the new draw wins, so ties go to the later draw.
//! Source: HAProxy 2.6, `src/backend.c` `get_server_rnd`, `src/lb_chash.c`
//! `chash_init_server_tree` and `chash_get_server_hash`,
//! `include/haproxy/intops.h` `__full_hash`, `include/haproxy/server-t.h`
//! (`SRV_EWGHT_RANGE` = 256 x 16), `include/haproxy/backend-t.h`
//! (`BE_WEIGHT_SCALE` = 16). HAProxy's draws come from its own xorshift
//! generator; here from the stream `balancer:NAME`. The ring itself draws
//! nothing: it is the one HAProxy builds for the same servers and weights.

use super::{Balance, Kind};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::engine::{Stream, Ticks};
use rand::RngExt;

/// Points per unit of weight (HAProxy's `BE_WEIGHT_SCALE`).
const POINTS_PER_WEIGHT: u32 = 16;

/// The spacing of each server's point ids (HAProxy's `SRV_EWGHT_RANGE`).
const ID_RANGE: u32 = 256 * 16;

/// Bob Jenkins' 32-bit full-avalanche integer hash, spread by a prime near
/// 3/4 of 2^32, as HAProxy places ring points.
fn full_hash(x: u32) -> u32 {
    let mut a = x;
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

pub(crate) struct HaproxyRandom {
    rng: Stream,
    draws: u32,
    /// Each server's weight (HAProxy's user weight, 1 to 256).
    weights: Vec<u64>,
    /// The ring: (position, server), by position; equal positions in the
    /// order they were inserted (server by server, point by point).
    ring: Vec<(u32, u32)>,
    /// `pick_among`: which servers are in.
    allowed: Vec<bool>,
}

impl HaproxyRandom {
    /// `n` servers with `weights` (empty: all 1), `draws` per pick.
    pub fn new(rng: Stream, n: usize, draws: u32, weights: &[f64]) -> HaproxyRandom {
        let weights: Vec<u64> = (0..n)
            .map(|i| weights.get(i).map_or(1, |&w| w as u64))
            .collect();
        let mut ring = Vec::new();
        for (i, &w) in weights.iter().enumerate() {
            let id = i as u32 + 1;
            for j in 0..w as u32 * POINTS_PER_WEIGHT {
                ring.push((
                    full_hash(id.wrapping_mul(ID_RANGE).wrapping_add(j)),
                    i as u32,
                ));
            }
        }
        // stable: equal positions keep their insertion order, as an
        // ebtree walks duplicates
        ring.sort_by_key(|&(pos, _)| pos);
        HaproxyRandom {
            rng,
            draws: draws.max(1),
            weights,
            ring,
            allowed: vec![true; n],
        }
    }

    /// The server of the point closest to `hash`, among the allowed ones
    /// (`all`: every server).
    fn lookup(&self, hash: u32, all: bool) -> usize {
        let len = self.ring.len();
        let ok = |p: usize| all || self.allowed[self.ring[p].1 as usize];
        // the first point at or after `hash`, wrapping round
        let mut next = self.ring.partition_point(|&(pos, _)| pos < hash) % len;
        while !ok(next) {
            next = (next + 1) % len;
        }
        let mut prev = (next + len - 1) % len;
        while !ok(prev) {
            prev = (prev + len - 1) % len;
        }
        let dp = hash.wrapping_sub(self.ring[prev].0);
        let dn = self.ring[next].0.wrapping_sub(hash);
        let p = if dp <= dn { prev } else { next };
        self.ring[p].1 as usize
    }

    /// `draws` draws on the ring, the least loaded per unit of weight.
    fn draw(&mut self, outstanding: &[u32], all: bool) -> usize {
        let mut best: Option<usize> = None;
        for _ in 0..self.draws {
            let hash: u32 = self.rng.random();
            let mut curr = self.lookup(hash, all);
            if let Some(prev) = best
                && prev != curr
                && u64::from(outstanding[curr]) * self.weights[prev]
                    > u64::from(outstanding[prev]) * self.weights[curr]
            {
                curr = prev;
            }
            best = Some(curr);
        }
        best.unwrap_or(0)
    }
}

impl Balance for HaproxyRandom {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        if outstanding.len() < 2 || self.ring.is_empty() {
            return 0;
        }
        self.draw(outstanding, true)
    }

    /// The ring without the servers left out, as HAProxy takes a server's
    /// points off the ring while it is down.
    fn pick_among(&mut self, outstanding: &[u32], among: &[usize], _now: Ticks) -> usize {
        self.allowed.iter_mut().for_each(|a| *a = false);
        for &k in among {
            self.allowed[k] = true;
        }
        let k = self.draw(outstanding, false);
        self.allowed.iter_mut().for_each(|a| *a = true);
        k
    }

    /// A request whose drawn server is full waits in the queue in front:
    /// HAProxy's random does not pass over a full server.
    fn skips_full(&self) -> bool {
        false
    }
}


/// `haproxy_random`: HAProxy's `balance random(draws)`.
#[derive(Debug, Clone, PartialEq)]
pub struct HaproxyRandomKind {
    /// Points drawn on the ring per pick, with replacement (>= 1).
    pub draws: u32,
    /// HAProxy's server weights, whole numbers from 1 to 256 (empty: all 1).
    pub weights: Vec<f64>,
}

impl Kind for HaproxyRandomKind {
    const DECL: Decl = Decl {
        name: "haproxy_random",
        family: "balancer",
        keys: &[
            Key::with("draws", 2.0, Range::Whole(1)),
            Key::with("weights", 0.0, Range::Weights),
        ],
        required_because: "",
    };

    fn from_keys(k: &Keys, replicas: u32) -> R<HaproxyRandomKind> {
        Ok(HaproxyRandomKind {
            draws: super::draws(k, "draws")?,
            weights: super::weights(k, replicas, true)?,
        })
    }

    fn make(&self, n: usize, rng: Stream) -> Box<dyn Balance> {
        Box::new(HaproxyRandom::new(rng, n, self.draws, &self.weights))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    /// Each server's share of the 32-bit hash space: the arcs closer to its
    /// points than to any other's, summed exactly.
    fn shares(b: &HaproxyRandom) -> Vec<f64> {
        let n = b.weights.len();
        let mut arcs = vec![0u64; n];
        let len = b.ring.len();
        for p in 0..len {
            let (pos, s) = b.ring[p];
            let (next, t) = b.ring[(p + 1) % len];
            let gap = u64::from(next.wrapping_sub(pos));
            // a draw d past pos goes to pos while d <= gap - d (ties to
            // the point before): the first gap / 2 of the arc
            let half = gap / 2;
            arcs[s as usize] += half;
            arcs[t as usize] += gap - half;
        }
        arcs.iter().map(|&a| a as f64 / 2f64.powi(32)).collect()
    }

    #[test]
    fn the_ring_holds_sixteen_points_per_unit_of_weight() {
        let b = HaproxyRandom::new(stream(1, 0, "balancer:t"), 3, 2, &[1.0, 2.0, 1.0]);
        assert_eq!(b.ring.len(), 64);
        let count = |s: u32| b.ring.iter().filter(|p| p.1 == s).count();
        assert_eq!((count(0), count(1), count(2)), (16, 32, 16));
        assert!(b.ring.windows(2).all(|w| w[0].0 <= w[1].0), "sorted");
        // server 1's first point is hash(4096), its 32nd hash(4096 + 31)
        assert!(b.ring.contains(&(full_hash(4096), 0)));
        assert!(b.ring.contains(&(full_hash(2 * 4096 + 31), 1)));
    }

    /// One draw per pick: each server gets its arcs' share of the draws, and
    /// the shares of equal weights are not equal.
    #[test]
    fn one_draw_follows_the_rings_uneven_arcs() {
        let mut b = HaproxyRandom::new(stream(2, 0, "balancer:t"), 3, 1, &[]);
        let expected = shares(&b);
        assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let spread = expected.iter().cloned().fold(0.0, f64::max)
            - expected.iter().cloned().fold(1.0, f64::min);
        assert!(spread > 0.02, "uneven arcs: {expected:?}");
        let n = 60_000;
        let mut counts = [0u32; 3];
        for _ in 0..n {
            counts[b.pick(&[0, 0, 0])] += 1;
        }
        for s in 0..3 {
            let got = f64::from(counts[s]) / f64::from(n);
            assert!(
                (got - expected[s]).abs() < 0.01,
                "{s}: {got} vs {expected:?}"
            );
        }
    }

    /// The draws, replayed from the same stream: the later draw wins unless
    /// it holds strictly more per unit of weight.
    #[test]
    fn the_later_draw_wins_unless_strictly_busier() {
        let weights = [1.0, 2.0, 1.0];
        let mut b = HaproxyRandom::new(stream(4, 0, "balancer:t"), 3, 3, &weights);
        let twin = HaproxyRandom::new(stream(4, 0, "balancer:t"), 3, 3, &weights);
        let mut same = stream(4, 0, "balancer:t");
        let views: [&[u32]; 3] = [&[1, 2, 1], &[3, 1, 0], &[2, 5, 2]];
        for _ in 0..300 {
            for view in views {
                let mut best: Option<usize> = None;
                for _ in 0..3 {
                    let curr = twin.lookup(same.random(), true);
                    best = Some(match best {
                        // weight 2 holding 2 is as busy as weight 1 holding 1
                        Some(prev)
                            if f64::from(view[curr]) / weights[curr]
                                > f64::from(view[prev]) / weights[prev] =>
                        {
                            prev
                        }
                        _ => curr,
                    });
                }
                assert_eq!(b.pick(view), best.unwrap());
            }
        }
    }

    /// Left out servers lose their points: their arcs go to the nearest
    /// points of the others.
    #[test]
    fn pick_among_uses_the_ring_without_the_others() {
        let mut b = HaproxyRandom::new(stream(5, 0, "balancer:t"), 4, 2, &[]);
        for _ in 0..500 {
            let k = b.pick_among(&[0, 0, 0, 0], &[1, 3], Ticks::ZERO);
            assert!(k == 1 || k == 3, "{k}");
        }
        assert!(!b.skips_full());
    }
}
