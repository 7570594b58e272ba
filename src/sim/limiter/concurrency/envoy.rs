//! `envoy_gradient` (Envoy's adaptive concurrency filter, gradient
//! controller). It starts measuring the min RTT: the limit pinned at
//! `min_concurrency` until `request_count` answers are in, min RTT = their p50,
//! then the limit from before. Then every `concurrency_update_interval_ms` with
//! answers in the window: sample RTT = their p50, gradient = clamp(min RTT x
//! (1 + buffer) / sample RTT, 0.5, 2), L' = whole part of (g L + sqrt(g L)),
//! within `min_concurrency..=max_limit`. The min RTT is measured again
//! `min_rtt_calc_interval_ms` (+ a random 0..`jitter_percent` % of it) after
//! the last measurement, or at once after 5 windows in a row ending at
//! `min_concurrency`.
//!
//! Only answers are latency samples (drops and timeouts are not). A p50 is the
//! nearest-rank median of the window's latencies (Envoy reads it from a
//! histogram). The state is brought up to date whenever it sees a request
//! (admitted or done), window by window: a window's samples are all heard
//! before its end is processed, so the limit a request meets is the one the
//! timers would have set.

use super::Sample;
use crate::engine::{Stream, Ticks};
use crate::model::ConcurrencyAlgorithm;
use rand::RngExt;

/// Windows in a row at `min_concurrency` that start a min RTT measurement.
const MIN_WINDOWS: u32 = 5;

#[derive(Debug, Clone)]
pub(super) struct Envoy {
    min_rtt: Ticks,
    /// Measuring the min RTT.
    measuring: bool,
    /// The limit to restore when the measurement ends.
    deferred: f64,
    samples: Vec<Ticks>,
    next_update: Ticks,
    next_min_rtt: Ticks,
    at_min: u32,
    rng: Stream,
}

/// The nearest-rank p50 of `samples` (not empty), which it sorts.
fn p50(samples: &mut [Ticks]) -> Ticks {
    samples.sort_unstable();
    samples[samples.len().div_ceil(2) - 1]
}

impl Envoy {
    pub(super) fn new(min_concurrency: u64, rng: Stream) -> Envoy {
        Envoy {
            min_rtt: Ticks::ZERO,
            measuring: true,
            deferred: min_concurrency as f64,
            samples: Vec::new(),
            next_update: Ticks::MAX,
            next_min_rtt: Ticks::MAX,
            at_min: 0,
            rng,
        }
    }

    fn start_measuring(&mut self, min_concurrency: u64, limit: &mut f64) {
        self.deferred = *limit;
        *limit = min_concurrency as f64;
        self.samples.clear();
        self.measuring = true;
        self.at_min = 0;
    }

    /// Every window end and min RTT timer due by `now`, in time order.
    pub(super) fn catch_up(&mut self, alg: &ConcurrencyAlgorithm, limit: &mut f64, now: Ticks) {
        let ConcurrencyAlgorithm::EnvoyGradient {
            update_interval,
            min_concurrency,
            buffer,
            max,
            ..
        } = *alg
        else {
            return;
        };
        while !self.measuring {
            if self.next_update <= self.next_min_rtt && self.next_update <= now {
                self.next_update += update_interval;
                if self.samples.is_empty() {
                    continue;
                }
                let sample = p50(&mut self.samples).0 as f64;
                self.samples.clear();
                let g = (self.min_rtt.0 as f64 * (1.0 + buffer) / sample).clamp(0.5, 2.0);
                let l = *limit * g;
                let new = (l + l.sqrt()).floor();
                *limit = new.clamp(min_concurrency as f64, max as f64);
                if *limit as u64 == min_concurrency {
                    self.at_min += 1;
                } else {
                    self.at_min = 0;
                }
                if self.at_min >= MIN_WINDOWS {
                    self.start_measuring(min_concurrency, limit);
                }
            } else if self.next_min_rtt <= now {
                self.start_measuring(min_concurrency, limit);
            } else {
                break;
            }
        }
    }

    pub(super) fn sample(
        &mut self,
        alg: &ConcurrencyAlgorithm,
        limit: &mut f64,
        s: Sample,
        now: Ticks,
    ) {
        let ConcurrencyAlgorithm::EnvoyGradient {
            update_interval,
            min_rtt_interval,
            request_count,
            jitter,
            ..
        } = *alg
        else {
            return;
        };
        let Sample::Answer(rtt) = s else { return };
        self.samples.push(rtt);
        if self.measuring && self.samples.len() as u64 >= request_count {
            self.min_rtt = p50(&mut self.samples);
            self.samples.clear();
            self.measuring = false;
            *limit = self.deferred;
            self.next_update = now + update_interval;
            let extra = (self.rng.random::<f64>() * jitter * min_rtt_interval.0 as f64) as u64;
            self.next_min_rtt = now + min_rtt_interval + Ticks(extra);
        }
    }
}
