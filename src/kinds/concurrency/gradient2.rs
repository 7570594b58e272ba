//! `gradient2` (Netflix `Gradient2Limit`), per sample: shortRtt = the sample's
//! RTT; longRtt = an exponential average of `long_window` samples (a plain
//! mean over the first 10), multiplied by 0.95 when longRtt / shortRtt > 2;
//! fewer than half the limit in flight when the request was let through: no
//! change; gradient = max(0.5, min(1, tolerance x longRtt / shortRtt)); new =
//! L x gradient + queue_size; L = L x (1 - smoothing) + new x smoothing,
//! within `min_limit..=max_limit`.
//!
//! Netflix feeds drops' RTTs as any other (Gradient2 ignores `didDrop`): so does
//! this one; a sample with no latency (shed at once) carries no RTT and is left
//! out.

use super::aimd::bounded_limits;
use super::{Done, GRPC_SERVER, Kind, Rule, Sample, weight};
use crate::engine::{Stream, Ticks};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};

/// Netflix's `ExpAvgMeasurement` warm-up: a plain mean over this many samples.
const WARMUP: u64 = 10;

/// Netflix `Gradient2Limit`'s parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gradient2 {
    /// The starting limit.
    pub initial: u64,
    /// The lowest limit.
    pub min: u64,
    /// The highest limit.
    pub max: u64,
    /// The new limit's weight against the old.
    pub smoothing: f64,
    /// How much slower than the long RTT the short one may be before the limit falls.
    pub tolerance: f64,
    /// Added to the limit per update.
    pub queue_size: u64,
    /// Samples of the long RTT's exponential average.
    pub long_window: u64,
}

impl Kind for Gradient2 {
    const DECL: Decl = Decl {
        name: "gradient2",
        family: "concurrency limiter",
        keys: &[
            Key::with("initial_limit", 20.0, Range::Count(1)),
            Key::with("min_limit", 20.0, Range::Count(1)),
            Key::with("max_limit", 200.0, Range::Count(1)),
            Key::with("smoothing", 0.2, Range::Own("in (0, 1]")),
            Key::with("tolerance", 1.5, Range::AtLeast(1.0)),
            Key::with("queue_size", 4.0, Range::Count(0)),
            Key::with("long_window", 600.0, Range::Count(1)),
            GRPC_SERVER,
        ],
        required_because: "",
    };
    type State = State;

    fn from_keys(k: &Keys) -> R<Gradient2> {
        let (initial, min, max) = bounded_limits(k)?;
        Ok(Gradient2 {
            initial,
            min,
            max,
            smoothing: weight(k, "smoothing")?,
            tolerance: k.num("tolerance"),
            queue_size: k.count("queue_size"),
            long_window: k.count("long_window"),
        })
    }

    fn max_limit(&self) -> u64 {
        self.max
    }

    fn start(&self, _: impl FnOnce() -> Stream) -> (u64, State) {
        let state = State {
            keys: *self,
            long: 0.0,
            count: 0,
            sum: 0.0,
        };
        (self.initial, state)
    }
}

/// The long RTT's average.
#[derive(Debug, Clone)]
pub struct State {
    keys: Gradient2,
    /// The long RTT, in ticks.
    long: f64,
    count: u64,
    sum: f64,
}

impl State {
    fn add(&mut self, rtt: f64, window: u64) -> f64 {
        if self.count < WARMUP {
            self.count += 1;
            self.sum += rtt;
            self.long = self.sum / self.count as f64;
        } else {
            let factor = 2.0 / (window as f64 + 1.0);
            self.long = self.long * (1.0 - factor) + rtt * factor;
        }
        self.long
    }
}

impl Rule for State {
    fn sample(&mut self, limit: &mut f64, s: Sample, done: Done) {
        let Gradient2 {
            min,
            max,
            smoothing,
            tolerance,
            queue_size,
            long_window,
            ..
        } = self.keys;
        let rtt = match s {
            Sample::Answer(rtt) | Sample::Drop(rtt) => rtt,
            Sample::Ignore => return,
        };
        if rtt == Ticks::ZERO {
            return;
        }
        let short = rtt.0 as f64;
        let long = self.add(short, long_window);
        if long / short > 2.0 {
            self.long *= 0.95;
        }
        let l = *limit;
        if (done.in_flight as f64) < l / 2.0 {
            return;
        }
        let gradient = (tolerance * long / short).clamp(0.5, 1.0);
        let new = l * gradient + queue_size as f64;
        let new = l * (1.0 - smoothing) + new * smoothing;
        *limit = new.clamp(min as f64, max as f64);
    }
}
