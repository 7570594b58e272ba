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

use super::{Done, ENVOY_FILTER, Kind, Rule, Sample, ordered};
use crate::engine::{Stream, Ticks};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};
use rand::RngExt;

/// Envoy's gradient controller's parameters (its defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnvoyGradient {
    /// The sample window (`concurrency_update_interval_ms`).
    pub update_interval: Ticks,
    /// Time between min RTT measurements (`min_rtt_calc_interval_ms`).
    pub min_rtt_interval: Ticks,
    /// Samples of a min RTT measurement.
    pub request_count: u64,
    /// The limit while the min RTT is measured, and the lowest.
    pub min_concurrency: u64,
    /// The random extra on the min RTT interval, a share of it (0.15).
    pub jitter: f64,
    /// The min RTT's buffer, a share of it (0.25).
    pub buffer: f64,
    /// The highest limit.
    pub max: u64,
}

impl Kind for EnvoyGradient {
    const DECL: Decl = Decl {
        name: "envoy_gradient",
        family: "concurrency limiter",
        keys: &[
            Key::with("concurrency_update_interval_ms", 100.0, Range::PositiveMs),
            Key::with("min_rtt_calc_interval_ms", 60_000.0, Range::PositiveMs),
            Key::with("request_count", 50.0, Range::Count(1)),
            Key::with("min_concurrency", 3.0, Range::Count(1)),
            Key::with("jitter_percent", 15.0, Range::between(0.0, 100.0, "")),
            Key::with("buffer_percent", 25.0, Range::NonNegative),
            Key::with("max_limit", 1000.0, Range::Count(1)),
            ENVOY_FILTER,
        ],
        required_because: "",
    };
    type State = Box<Envoy>;

    fn from_keys(k: &Keys) -> R<EnvoyGradient> {
        ordered(k, &["min_concurrency", "max_limit"], true)?;
        Ok(EnvoyGradient {
            update_interval: k.ticks("concurrency_update_interval_ms")?,
            min_rtt_interval: k.ticks("min_rtt_calc_interval_ms")?,
            request_count: k.count("request_count"),
            min_concurrency: k.count("min_concurrency"),
            jitter: k.num("jitter_percent") / 100.0,
            buffer: k.num("buffer_percent") / 100.0,
            max: k.count("max_limit"),
        })
    }

    fn max_limit(&self) -> u64 {
        self.max
    }

    fn start(&self, rng: impl FnOnce() -> Stream) -> (u64, Box<Envoy>) {
        (self.min_concurrency, Box::new(Envoy::new(*self, rng())))
    }
}

/// Windows in a row at `min_concurrency` that start a min RTT measurement.
const MIN_WINDOWS: u32 = 5;

#[derive(Debug, Clone)]
pub struct Envoy {
    keys: EnvoyGradient,
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
    fn new(keys: EnvoyGradient, rng: Stream) -> Envoy {
        Envoy {
            keys,
            min_rtt: Ticks::ZERO,
            measuring: true,
            deferred: keys.min_concurrency as f64,
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
    pub fn min_rtt(&self) -> Ticks {
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
}

impl Rule for Envoy {
    /// Every window end and min RTT timer due by `now`, in time order.
    fn catch_up(&mut self, limit: &mut f64, now: Ticks) {
        let EnvoyGradient {
            update_interval,
            min_concurrency,
            buffer,
            max,
            ..
        } = self.keys;
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

    /// A request let through at `done.started` ends at `done.now` with `s`.
    fn sample(&mut self, limit: &mut f64, s: Sample, done: Done) {
        let EnvoyGradient {
            update_interval,
            min_rtt_interval,
            request_count,
            jitter,
            ..
        } = self.keys;
        let (started, now) = (done.started, done.now);
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
