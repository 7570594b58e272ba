//! `vegas` (Netflix `VegasLimit`), per sample: the no-load RTT is the lowest
//! RTT seen (reset to the current sample every `probe_multiplier` x limit x a
//! random 0.5..1 samples, the probe); queue = ceil(L x (1 - rtt_noload / rtt));
//! with k = max(1, whole part of log10 L): a drop: L - k; fewer than half the
//! limit in flight when the request was let through: no change; queue <= k: L + 6k; queue < 3k: L + k; queue >
//! 6k: L - k; the new limit, within 1..=max_limit, is smoothed: L x (1 -
//! smoothing) + new x smoothing.
//!
//! A drop with no latency (shed at once) carries no RTT: it only lowers the
//! limit. An answer with no latency is not a sample (Netflix requires rtt > 0).

use super::Sample;
use crate::engine::{Stream, Ticks};
use crate::model::ConcurrencyAlgorithm;
use rand::RngExt;

#[derive(Debug, Clone)]
pub(super) struct Vegas {
    rtt_noload: Ticks,
    probe_count: u64,
    probe_jitter: f64,
    rng: Stream,
}

/// Netflix's `Log10RootFunction`: max(1, whole part of log10 n).
pub(super) fn log10(limit: f64) -> f64 {
    let n = limit as u64;
    if n == 0 {
        1.0
    } else {
        f64::from(n.ilog10().max(1))
    }
}

impl Vegas {
    pub(super) fn new(mut rng: Stream) -> Vegas {
        let probe_jitter = 0.5 + rng.random::<f64>() * 0.5;
        Vegas {
            rtt_noload: Ticks::ZERO,
            probe_count: 0,
            probe_jitter,
            rng,
        }
    }

    pub(super) fn sample(
        &mut self,
        alg: &ConcurrencyAlgorithm,
        limit: &mut f64,
        s: Sample,
        in_flight: u64,
    ) {
        let ConcurrencyAlgorithm::Vegas {
            max,
            smoothing,
            probe_multiplier,
            ..
        } = *alg
        else {
            return;
        };
        let (rtt, drop) = match s {
            Sample::Answer(rtt) => (rtt, false),
            Sample::Drop(rtt) => (rtt, true),
            Sample::Ignore => return,
        };
        if rtt == Ticks::ZERO && !drop {
            return;
        }
        if rtt > Ticks::ZERO {
            self.probe_count += 1;
            if self.probe_jitter * probe_multiplier as f64 * *limit <= self.probe_count as f64 {
                self.probe_jitter = 0.5 + self.rng.random::<f64>() * 0.5;
                self.probe_count = 0;
                self.rtt_noload = rtt;
                return;
            }
            if self.rtt_noload == Ticks::ZERO || rtt < self.rtt_noload {
                self.rtt_noload = rtt;
                return;
            }
        }
        let l = *limit;
        let k = log10(l);
        let new = if drop {
            l - k
        } else if ((in_flight * 2) as f64) < l {
            return;
        } else {
            let queue = (l * (1.0 - self.rtt_noload.0 as f64 / rtt.0 as f64)).ceil();
            if queue <= k {
                l + 6.0 * k
            } else if queue < 3.0 * k {
                l + k
            } else if queue > 6.0 * k {
                l - k
            } else {
                return;
            }
        };
        let new = new.clamp(1.0, max as f64);
        *limit = (1.0 - smoothing) * l + smoothing * new;
    }
}
