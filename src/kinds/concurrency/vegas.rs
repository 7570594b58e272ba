//! `vegas` (Netflix `VegasLimit`), per sample: the no-load RTT is the lowest
//! RTT seen (reset to the current sample every `probe_multiplier` x limit x a
//! random 0.5..1 samples, the probe); queue = ceil(L x (1 - rtt_noload / rtt));
//! with k = max(1, whole part of log10 L): a drop: L - k; fewer than half the
//! limit in flight when the request was let through: no change; queue <= k:
//! L + 6k; queue < 3k: L + k; queue > 6k: L - k; the new limit, within
//! 1..=max_limit, is smoothed: L x (1 - smoothing) + new x smoothing.
//!
//! A drop with no latency (shed at once) carries no RTT: it only lowers the
//! limit. An answer with no latency is not a sample (Netflix requires rtt > 0).

use super::{Done, GRPC_SERVER, Kind, Rule, Sample, ordered, weight};
use crate::engine::{Stream, Ticks};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use rand::RngExt;

/// Netflix `VegasLimit`'s parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vegas {
    /// The starting limit.
    pub initial: u64,
    /// The highest limit.
    pub max: u64,
    /// The new limit's weight against the old.
    pub smoothing: f64,
    /// Samples between resets of the no-load RTT, per unit of limit (x a random 0.5..1).
    pub probe_multiplier: u64,
}

impl Kind for Vegas {
    const DECL: Decl = Decl {
        name: "vegas",
        family: "concurrency limiter",
        keys: &[
            Key::with("initial_limit", 20.0, Range::Count(1)),
            Key::with("max_limit", 1000.0, Range::Count(1)),
            Key::with("smoothing", 1.0, Range::Own("in (0, 1]")),
            Key::with("probe_multiplier", 30.0, Range::Count(1)),
            GRPC_SERVER,
        ],
        required_because: "",
    };
    type State = Box<State>;

    fn from_keys(k: &Keys) -> R<Vegas> {
        ordered(k, &["initial_limit", "max_limit"], false)?;
        let max = k.count("max_limit");
        Ok(Vegas {
            initial: k.count("initial_limit").min(max),
            max,
            smoothing: weight(k, "smoothing")?,
            probe_multiplier: k.count("probe_multiplier"),
        })
    }

    fn max_limit(&self) -> u64 {
        self.max
    }

    fn start(&self, rng: impl FnOnce() -> Stream) -> (u64, Box<State>) {
        let mut rng = rng();
        let probe_jitter = 0.5 + rng.random::<f64>() * 0.5;
        let state = State {
            keys: *self,
            rtt_noload: Ticks::ZERO,
            probe_count: 0,
            probe_jitter,
            rng,
        };
        (self.initial, Box::new(state))
    }
}

/// The no-load RTT and the probe's count.
#[derive(Debug, Clone)]
pub struct State {
    keys: Vegas,
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

impl Rule for State {
    fn sample(&mut self, limit: &mut f64, s: Sample, done: Done) {
        let Vegas {
            max,
            smoothing,
            probe_multiplier,
            ..
        } = self.keys;
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
        } else if ((done.in_flight * 2) as f64) < l {
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
