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

use super::Sample;
use crate::engine::Ticks;
use crate::model::ConcurrencyAlgorithm;

/// Netflix's `ExpAvgMeasurement` warm-up: a plain mean over this many samples.
const WARMUP: u64 = 10;

#[derive(Debug, Clone, Default)]
pub(super) struct Gradient2 {
    /// The long RTT, in ticks.
    long: f64,
    count: u64,
    sum: f64,
}

impl Gradient2 {
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

    pub(super) fn sample(
        &mut self,
        alg: &ConcurrencyAlgorithm,
        limit: &mut f64,
        s: Sample,
        in_flight: u64,
    ) {
        let ConcurrencyAlgorithm::Gradient2 {
            min,
            max,
            smoothing,
            tolerance,
            queue_size,
            long_window,
            ..
        } = *alg
        else {
            return;
        };
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
        if (in_flight as f64) < l / 2.0 {
            return;
        }
        let gradient = (tolerance * long / short).clamp(0.5, 1.0);
        let new = l * gradient + queue_size as f64;
        let new = l * (1.0 - smoothing) + new * smoothing;
        *limit = new.clamp(min as f64, max as f64);
    }
}
