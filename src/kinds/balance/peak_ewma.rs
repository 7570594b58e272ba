//! `peak_ewma`: Finagle's and Linkerd's peak EWMA balancer.
//!
//! Each replica has a cost, an estimate of its round-trip time that jumps up
//! at once and decays slowly. When an answer comes back (or a request fails
//! or is given up on: then the time elapsed since it was sent is the observed
//! rtt, as Finagle records a failure), with dt the time since the replica's
//! cost was last updated and w = exp(-dt / `decay_ms`) (default 10,000 ms):
//! if rtt > cost then cost = rtt, else cost = cost x w + rtt x (1 - w).
//! Reading a cost observes an rtt of 0 first (Finagle's `rtt()`), so the cost
//! of a replica that gets no answers decays towards 0 and it is tried again.
//!
//! load = cost x (outstanding + 1); a replica never answered (cost 0) has
//! load 0 while nothing is outstanding there (so it is tried), and Finagle's
//! penalty (2^47 + outstanding) while something is: one probe at a time. A pick
//! draws two distinct replicas at random (as `two_choices`) and takes the
//! lower load; ties go to the first drawn.
//! Source: Finagle's `PeakEwma` (`Metric.observe` and `Metric.get`) in
//! `finagle-core/src/main/scala/com/twitter/finagle/loadbalancer/PeakEwma.scala`;
//! Linkerd's "Beyond Round Robin" (2016).

use super::{Balance, Kind};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use crate::engine::{Stream, Ticks};
use rand::RngExt;

/// Finagle's load for a replica with requests outstanding and no cost yet
/// (`Long.MaxValue >> 16`).
const PENALTY: f64 = (i64::MAX >> 16) as f64;

pub(crate) struct PeakEwma {
    rng: Stream,
    /// The decay time, in ticks.
    decay: f64,
    /// Per replica: its cost in ticks, and when it was last updated.
    cost: Vec<f64>,
    stamp: Vec<Ticks>,
}

impl PeakEwma {
    pub fn new(rng: Stream, n: usize, decay: Ticks) -> PeakEwma {
        PeakEwma {
            rng,
            decay: decay.0 as f64,
            cost: vec![0.0; n],
            stamp: vec![Ticks::ZERO; n],
        }
    }

    /// Replica `k` observes `rtt` (ticks) at `now`.
    fn observe(&mut self, k: usize, now: Ticks, rtt: f64) {
        let dt = now.saturating_sub(self.stamp[k]).0 as f64;
        let w = (-dt / self.decay).exp();
        let c = &mut self.cost[k];
        if rtt > *c {
            *c = rtt;
        } else {
            *c = *c * w + rtt * (1.0 - w);
        }
        self.stamp[k] = now;
    }

    /// Replica `k`'s load at `now` with `pending` outstanding.
    fn load(&mut self, k: usize, now: Ticks, pending: u32) -> f64 {
        self.observe(k, now, 0.0);
        let c = self.cost[k];
        if c == 0.0 && pending != 0 {
            PENALTY + f64::from(pending)
        } else {
            c * f64::from(pending + 1)
        }
    }
}

impl Balance for PeakEwma {
    fn pick(&mut self, outstanding: &[u32]) -> usize {
        let now = self.stamp.iter().copied().max().unwrap_or(Ticks::ZERO);
        self.pick_at(outstanding, now)
    }

    fn pick_at(&mut self, outstanding: &[u32], now: Ticks) -> usize {
        let n = outstanding.len();
        if n < 2 {
            return 0;
        }
        let a = self.rng.random_range(0..n);
        let b = (a + 1 + self.rng.random_range(0..n - 1)) % n;
        let (la, lb) = (
            self.load(a, now, outstanding[a]),
            self.load(b, now, outstanding[b]),
        );
        if lb < la { b } else { a }
    }

    /// The same two draws among `among`, each replica with its own cost.
    fn pick_among(&mut self, outstanding: &[u32], among: &[usize], now: Ticks) -> usize {
        let m = among.len();
        if m < 2 {
            return among[0];
        }
        let i = self.rng.random_range(0..m);
        let (a, b) = (
            among[i],
            among[(i + 1 + self.rng.random_range(0..m - 1)) % m],
        );
        let (la, lb) = (
            self.load(a, now, outstanding[a]),
            self.load(b, now, outstanding[b]),
        );
        if lb < la { b } else { a }
    }

    fn hears(&self) -> bool {
        true
    }

    fn on_done(&mut self, replica: usize, now: Ticks, latency: Ticks) {
        self.observe(replica, now, latency.0 as f64);
    }
}


/// `peak_ewma`: Finagle's and Linkerd's peak EWMA.
#[derive(Debug, Clone, PartialEq)]
pub struct PeakEwmaKind {
    /// The cost's decay time.
    pub decay: Ticks,
}

impl Kind for PeakEwmaKind {
    const DECL: Decl = Decl {
        name: "peak_ewma",
        family: "balancer",
        keys: &[Key::with("decay_ms", 10_000.0, Range::PositiveMs)],
        required_because: "",
    };

    fn from_keys(k: &Keys, _replicas: u32) -> R<PeakEwmaKind> {
        Ok(PeakEwmaKind {
            decay: k.ticks("decay_ms")?,
        })
    }

    fn make(&self, n: usize, rng: Stream) -> Box<dyn Balance> {
        Box::new(PeakEwma::new(rng, n, self.decay))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn ms(x: f64) -> Ticks {
        Ticks::from_ms(x)
    }

    #[test]
    fn the_cost_jumps_up_and_decays_down() {
        let mut b = PeakEwma::new(stream(1, 0, "balancer:t"), 2, ms(10_000.0));
        b.on_done(0, ms(0.0), ms(100.0));
        assert_eq!(b.cost[0], ms(100.0).0 as f64, "a peak is taken at once");
        // 10 s later an rtt of 50 ms: w = exp(-1)
        b.on_done(0, ms(10_000.0), ms(50.0));
        let w = (-1.0f64).exp();
        let expected = ms(100.0).0 as f64 * w + ms(50.0).0 as f64 * (1.0 - w);
        assert!((b.cost[0] - expected).abs() < 1e-6 * expected);
        // reading it decays it towards 0
        let before = b.cost[0];
        b.observe(0, ms(20_000.0), 0.0);
        assert!((b.cost[0] - before * w).abs() < 1e-6 * before);
    }

    #[test]
    fn load_is_cost_times_outstanding_plus_one_and_penalises_the_unknown() {
        let mut b = PeakEwma::new(stream(1, 0, "balancer:t"), 3, ms(10_000.0));
        b.on_done(0, ms(0.0), ms(100.0));
        b.on_done(1, ms(0.0), ms(300.0));
        assert_eq!(b.load(0, ms(0.0), 3), ms(100.0).0 as f64 * 4.0);
        assert_eq!(b.load(1, ms(0.0), 0), ms(300.0).0 as f64);
        assert_eq!(b.load(2, ms(0.0), 0), 0.0, "never answered, idle: tried");
        assert_eq!(b.load(2, ms(0.0), 1), PENALTY + 1.0, "one probe at a time");
        // two replicas: the lower load wins whichever is drawn first
        let mut b = PeakEwma::new(stream(2, 0, "balancer:t"), 2, ms(10_000.0));
        b.on_done(0, ms(0.0), ms(100.0));
        b.on_done(1, ms(0.0), ms(300.0));
        for _ in 0..20 {
            assert_eq!(b.pick_at(&[3, 0], ms(0.0)), 1, "300 x 1 < 100 x 4");
            assert_eq!(b.pick_at(&[1, 0], ms(0.0)), 0, "100 x 2 < 300 x 1");
        }
    }
}
