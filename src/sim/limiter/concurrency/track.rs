//! A concurrency limiter's limit and in-flight count over time: the sums over
//! its bucket keys (one key: its own), integrated from the first request it
//! met to the end of the run, overall and per time-series window.
//!
//! Cost: a decision or a done notice of a concurrency limiter adds two
//! products to running sums (and a window's when a window boundary passed); a
//! rate limiter keeps no track.

use crate::engine::Ticks;

/// One window's gauges (or the whole run's).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gauges {
    /// Time covered, in ticks (from the first request the limiter met).
    pub covered: u64,
    /// Limit x ticks, exact (a float sum rounds once past 2^53: a fixed limit
    /// of 10^15 then averaged to more than itself).
    pub limit_area: u128,
    /// In flight x ticks, exact.
    pub in_flight_area: u128,
    /// The lowest limit in force.
    pub limit_min: u64,
    /// The highest limit in force.
    pub limit_max: u64,
    /// The most requests in flight.
    pub in_flight_max: u64,
    /// The limit at the end.
    pub limit_end: u64,
    /// Times the limit fell.
    pub decreases: u64,
}

impl Gauges {
    fn open(limit: u64, in_flight: u64) -> Gauges {
        Gauges {
            limit_min: limit,
            limit_max: limit,
            limit_end: limit,
            in_flight_max: in_flight,
            ..Gauges::default()
        }
    }

    fn span(&mut self, ticks: u64, limit: u64, in_flight: u64) {
        self.covered += ticks;
        self.limit_area = (self.limit_area).saturating_add(u128::from(ticks) * u128::from(limit));
        self.in_flight_area =
            (self.in_flight_area).saturating_add(u128::from(ticks) * u128::from(in_flight));
    }

    fn set(&mut self, limit: u64, in_flight: u64, fell: bool) {
        self.limit_min = self.limit_min.min(limit);
        self.limit_max = self.limit_max.max(limit);
        self.in_flight_max = self.in_flight_max.max(in_flight);
        self.limit_end = limit;
        self.decreases += u64::from(fell);
    }

    /// Time-average limit over the covered time (None: none covered): within
    /// the lowest and highest limit, as an average is (the division's rounding
    /// cannot take it past them).
    pub fn mean_limit(&self) -> Option<f64> {
        (self.covered > 0).then(|| {
            let mean = self.limit_area as f64 / self.covered as f64;
            mean.clamp(self.limit_min as f64, self.limit_max as f64)
        })
    }

    /// Time-average in flight over the covered time (at most the most in flight).
    pub fn mean_in_flight(&self) -> Option<f64> {
        (self.covered > 0).then(|| {
            let mean = self.in_flight_area as f64 / self.covered as f64;
            mean.clamp(0.0, self.in_flight_max as f64)
        })
    }
}

/// The running sums of one concurrency limiter.
#[derive(Debug, Clone, Default)]
pub struct Track {
    started: bool,
    last: Ticks,
    limit: u64,
    in_flight: u64,
    /// The whole run's.
    pub run: Gauges,
    /// The time series' window, if the run keeps one.
    window: Option<Ticks>,
    /// Per window from t = 0 (None: before the limiter's first request).
    pub windows: Vec<Option<Gauges>>,
}

impl Track {
    pub fn new(window: Option<Ticks>) -> Track {
        Track {
            window,
            ..Track::default()
        }
    }

    /// Integrates the current sums up to `now`.
    fn advance(&mut self, now: Ticks) {
        if !self.started || now <= self.last {
            return;
        }
        let (limit, in_flight) = (self.limit, self.in_flight);
        self.run.span(now.0 - self.last.0, limit, in_flight);
        if let Some(w) = self.window {
            let w = w.0.max(1);
            let mut t = self.last.0;
            while t < now.0 {
                let k = (t / w) as usize;
                let end = ((k as u64 + 1) * w).min(now.0);
                let g = self.window_at(k);
                g.span(end - t, limit, in_flight);
                t = end;
            }
        }
        self.last = now;
    }

    fn window_at(&mut self, k: usize) -> &mut Gauges {
        let (limit, in_flight) = (self.limit, self.in_flight);
        if self.windows.len() <= k {
            self.windows.resize(k + 1, None);
        }
        self.windows[k].get_or_insert_with(|| Gauges::open(limit, in_flight))
    }

    /// One bucket's (limit, in flight) went from `before` to `after` at `now`
    /// (`before` None: a new bucket).
    pub fn change(&mut self, now: Ticks, before: Option<(u64, u64)>, after: (u64, u64)) {
        self.advance(now);
        let (l0, f0) = before.unwrap_or((0, 0));
        let fell = before.is_some() && after.0 < l0;
        self.limit = self.limit + after.0 - l0;
        self.in_flight = self.in_flight + after.1 - f0;
        let (limit, in_flight) = (self.limit, self.in_flight);
        if !self.started {
            self.started = true;
            self.last = now;
            self.run = Gauges::open(limit, in_flight);
        }
        self.run.set(limit, in_flight, fell);
        if let Some(w) = self.window {
            let k = (now.0 / w.0.max(1)) as usize;
            self.window_at(k).set(limit, in_flight, fell);
        }
    }

    /// Brings the sums to the end of the run.
    pub fn finish(&mut self, end: Ticks) {
        self.advance(end);
    }
}
