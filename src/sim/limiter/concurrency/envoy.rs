//! `envoy_gradient` (Envoy's adaptive concurrency filter, gradient
//! controller: `source/extensions/filters/http/adaptive_concurrency/controller/
//! gradient_controller.cc`). It starts measuring the min RTT: the limit pinned
//! at `min_concurrency` until `request_count` samples are in, min RTT = their
//! p50, then the limit from before. Then every
//! `concurrency_update_interval_ms` with samples in the window: sample RTT =
//! their p50, gradient = clamp(min RTT x (1 + buffer) / sample RTT, 0.5, 2),
//! L' = whole part of (g L + sqrt(g L)), within `min_concurrency..=max_limit`.
//! The min RTT is measured again `min_rtt_calc_interval_ms` (+ a random
//! 0..`jitter_percent` % of it) after the last measurement, or at once when a
//! window leaves the limit at `min_concurrency` for the fifth time in a row
//! having found it there (`updateConcurrencyLimit`: old and new limit both
//! the minimum).
//!
//! A measurement's start is its epoch (`enterMinRTTSamplingWindow` sets
//! `min_rtt_epoch_`): a request let through before the latest epoch is no
//! sample when it ends (`recordLatencySample` returns early for `rq_send_time
//! < min_rtt_epoch_`), in the measurement and in the windows after it alike,
//! so the requests queued under the old limit do not measure the min RTT.
//!
//! Which ends are samples is the limiter's `samples` rule (by default Envoy's
//! filter: every response; a request given up on is none). A p50 is the
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
    /// Windows in a row that found the limit at `min_concurrency` and left it
    /// there (Envoy's `consecutive_min_concurrency_set_`).
    at_min: u32,
    /// When the latest min RTT measurement began (Envoy's `min_rtt_epoch_`):
    /// requests let through before it are no samples.
    epoch: Ticks,
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
            epoch: Ticks::ZERO,
            rng,
        }
    }

    /// The min RTT measured last.
    #[cfg(test)]
    pub(super) fn min_rtt(&self) -> Ticks {
        self.min_rtt
    }

    /// A min RTT measurement begins at `at` (Envoy's
    /// `enterMinRTTSamplingWindow`).
    fn start_measuring(&mut self, min_concurrency: u64, limit: &mut f64, at: Ticks) {
        self.deferred = *limit;
        *limit = min_concurrency as f64;
        self.samples.clear();
        self.measuring = true;
        self.at_min = 0;
        self.epoch = at;
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
                let at = self.next_update;
                self.next_update += update_interval;
                if self.samples.is_empty() {
                    continue;
                }
                let sample = p50(&mut self.samples).0 as f64;
                self.samples.clear();
                // a sample RTT of 0 (answers at once) makes Envoy's raw
                // gradient infinite or NaN, which its clamp takes to 2
                let raw = self.min_rtt.0 as f64 * (1.0 + buffer) / sample;
                let g = if raw.is_nan() {
                    2.0
                } else {
                    raw.clamp(0.5, 2.0)
                };
                let l = *limit * g;
                let new = (l + l.sqrt()).floor();
                let old = *limit as u64;
                *limit = new.clamp(min_concurrency as f64, max as f64);
                // updateConcurrencyLimit: only a window that found the limit
                // at the minimum and left it there counts
                if old == min_concurrency && *limit as u64 == min_concurrency {
                    self.at_min += 1;
                } else {
                    self.at_min = 0;
                }
                if self.at_min >= MIN_WINDOWS {
                    self.start_measuring(min_concurrency, limit, at);
                }
            } else if self.next_min_rtt <= now {
                let at = self.next_min_rtt;
                self.start_measuring(min_concurrency, limit, at);
            } else {
                break;
            }
        }
    }

    /// A request let through at `started` ends at `now` with `s`.
    pub(super) fn sample(
        &mut self,
        alg: &ConcurrencyAlgorithm,
        limit: &mut f64,
        s: Sample,
        (started, now): (Ticks, Ticks),
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
        // recordLatencySample: "Disregard samples from requests started in
        // the previous minRTT window"
        if started < self.epoch {
            return;
        }
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
