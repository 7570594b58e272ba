//! Client-side adaptive throttling (Google SRE book, "Handling Overload"): over
//! the last `window_ms` the client counts `requests` and `accepts` (answers that
//! were not shed or rejected) and refuses a new call locally with probability
//! `max(0, (requests - k * accepts) / (requests + 1))`. Locally refused calls count
//! in `requests`.

use crate::engine::{Stream, Ticks};
use crate::model::Throttle;
use rand::RngExt;
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub(crate) struct ThrottleState {
    cfg: Throttle,
    requests: VecDeque<Ticks>,
    accepts: VecDeque<Ticks>,
}

/// The SRE book's rejection probability.
pub(crate) fn reject_probability(requests: f64, accepts: f64, k: f64) -> f64 {
    ((requests - k * accepts) / (requests + 1.0)).max(0.0)
}

impl ThrottleState {
    pub fn new(cfg: Throttle) -> ThrottleState {
        ThrottleState {
            cfg,
            requests: VecDeque::new(),
            accepts: VecDeque::new(),
        }
    }

    fn trim(&mut self, now: Ticks) {
        let span = self.cfg.window;
        for q in [&mut self.requests, &mut self.accepts] {
            while q.front().is_some_and(|&t| t + span <= now) {
                q.pop_front();
            }
        }
    }

    /// A call wants to go now: true when it is refused locally (a coin from
    /// `rng` is drawn only when the probability is above 0). Either way it
    /// counts as a request.
    pub fn refuse(&mut self, now: Ticks, rng: &mut Stream) -> bool {
        self.trim(now);
        let p = reject_probability(
            self.requests.len() as f64,
            self.accepts.len() as f64,
            self.cfg.k,
        );
        self.requests.push_back(now);
        p > 0.0 && rng.random::<f64>() < p
    }

    /// A request sent through the throttle (a retry or a hedge) now.
    pub fn request(&mut self, now: Ticks) {
        self.requests.push_back(now);
    }

    /// The backend accepted a request (answered it, ok or error) now.
    pub fn accepted(&mut self, now: Ticks) {
        self.accepts.push_back(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    #[test]
    fn the_formula() {
        assert_eq!(reject_probability(0.0, 0.0, 2.0), 0.0);
        // all accepted: never refuses
        assert_eq!(reject_probability(100.0, 100.0, 2.0), 0.0);
        // half accepted with k = 2: still none; with k = 1.1: (100 - 55) / 101
        assert_eq!(reject_probability(100.0, 50.0, 2.0), 0.0);
        assert!((reject_probability(100.0, 50.0, 1.1) - 45.0 / 101.0).abs() < 1e-12);
        // nothing accepted: almost every call refused
        assert!((reject_probability(99.0, 0.0, 2.0) - 0.99).abs() < 1e-12);
    }

    #[test]
    fn refuses_at_the_formula_rate_and_forgets_after_the_window() {
        let mut t = ThrottleState::new(Throttle {
            k: 2.0,
            window: Ticks::from_ms(1000.0),
        });
        let mut rng = stream(5, 0, "t");
        // cold start: nothing counted, nothing refused
        assert!(!t.refuse(Ticks::ZERO, &mut rng));
        // 1000 requests with 100 accepts: p = (1000 - 200) / 1001 ~ 0.8
        for _ in 0..999 {
            t.request(Ticks::from_ms(1.0));
        }
        for _ in 0..100 {
            t.accepted(Ticks::from_ms(1.0));
        }
        let n = 20_000;
        let mut refused = 0;
        let mut probe = t.clone();
        for _ in 0..n {
            let mut s = probe.clone();
            refused += s.refuse(Ticks::from_ms(2.0), &mut rng) as u32;
        }
        let p = reject_probability(1000.0, 100.0, 2.0);
        // binomial sd sqrt(p (1 - p) / n) ~ 0.003: within 5 sd
        assert!((refused as f64 / n as f64 - p).abs() < 0.015, "{refused}");
        // a window later everything is forgotten
        assert!(!probe.refuse(Ticks::from_ms(1001.0), &mut rng));
        probe = t;
        let _ = probe;
    }
}
