//! The limiter algorithms, pure functions of (time, bucket state): fixed-window,
//! sliding-counter, sliding-log, token-bucket and GCRA all answer
//! [`Bucket::earliest`], and [`decide`] turns that instant into a decision.

use crate::engine::Ticks;
use crate::model::{Algorithm, Limiter, LimiterMode, Refill};
use std::cmp::Ordering;
use std::collections::VecDeque;

/// What a limiter does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Let through now.
    Pass,
    /// Throttled: held, and let through at this time.
    Delay(Ticks),
    /// Rejected (429).
    Reject,
}

/// One bucket's algorithm state. Token and GCRA levels are exact integers (no
/// floats), so a decision never depends on rounding.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// The latest time a request was let through or is held to: held requests
    /// leave in FIFO order, never before it.
    last: Ticks,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    /// fixed-window, sliding-counter: requests let through per window aligned to
    /// multiples of window_ms from t = 0, as (window index, count), oldest first.
    Windows(VecDeque<(u64, u64)>),
    /// sliding-log: the times requests were let through, oldest first.
    Log(VecDeque<Ticks>),
    /// token-bucket: the level at time `at` after the last take. Continuous refill
    /// counts in units of 1/window_ticks of a token (refill: `limit` units per tick);
    /// discrete refill counts whole tokens, one arriving at each multiple of
    /// window_ms / limit.
    Tokens { at: Ticks, level: u128 },
    /// gcra: the theoretical arrival time in ticks x limit (so the emission
    /// interval window_ms / limit is exactly window_ticks).
    Gcra { tat: u128 },
}

fn clamp_ticks(v: u128) -> Ticks {
    Ticks(u64::try_from(v).unwrap_or(u64::MAX))
}

fn div_ceil(a: u128, b: u128) -> u128 {
    a.div_ceil(b)
}

fn count_in(windows: &VecDeque<(u64, u64)>, k: u64) -> u64 {
    windows.iter().find(|(i, _)| *i == k).map_or(0, |(_, n)| *n)
}

impl Bucket {
    /// A fresh bucket: empty windows and log, a full token bucket.
    pub fn new(l: &Limiter) -> Bucket {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        let state = match l.algorithm {
            Algorithm::FixedWindow | Algorithm::SlidingCounter => State::Windows(VecDeque::new()),
            Algorithm::SlidingLog => State::Log(VecDeque::new()),
            Algorithm::TokenBucket => State::Tokens {
                at: Ticks::ZERO,
                level: match l.refill {
                    Refill::Continuous => lim * w,
                    Refill::Discrete => lim,
                },
            },
            Algorithm::Gcra => State::Gcra { tat: 0 },
        };
        Bucket {
            last: Ticks::ZERO,
            state,
        }
    }

    /// Drops what can no longer matter at or after `now`.
    fn forget(&mut self, l: &Limiter, now: Ticks) {
        match &mut self.state {
            State::Windows(ws) => {
                let current = now.0 / l.window.0;
                // sliding-counter still weighs the previous window
                let keep = match l.algorithm {
                    Algorithm::SlidingCounter => current.saturating_sub(1),
                    _ => current,
                };
                while ws.front().is_some_and(|(k, _)| *k < keep) {
                    ws.pop_front();
                }
            }
            State::Log(log) => {
                while log.front().is_some_and(|x| *x + l.window <= now) {
                    log.pop_front();
                }
            }
            State::Tokens { .. } | State::Gcra { .. } => {}
        }
    }

    /// Token level at `t` >= the last take (continuous units or whole tokens).
    fn tokens_at(l: &Limiter, at: Ticks, level: u128, t: Ticks) -> u128 {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        match l.refill {
            Refill::Continuous => (level + u128::from((t - at).0) * lim).min(lim * w),
            Refill::Discrete => {
                let arrived = |x: Ticks| u128::from(x.0) * lim / w;
                (level + arrived(t) - arrived(at)).min(lim)
            }
        }
    }

    /// The first instant at or after `t` (and after every request already let
    /// through or held) when one more request may pass.
    pub fn earliest(&self, l: &Limiter, t: Ticks) -> Ticks {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        let t0 = t.max(self.last);
        match &self.state {
            State::Windows(ws) => match l.algorithm {
                Algorithm::SlidingCounter => sliding_counter_earliest(ws, l, t0),
                _ => {
                    let mut k = t0.0 / l.window.0;
                    while count_in(ws, k) >= l.limit {
                        k += 1;
                    }
                    t0.max(clamp_ticks(u128::from(k) * w))
                }
            },
            State::Log(log) => {
                let n = log.len();
                let limit = usize::try_from(l.limit).unwrap_or(usize::MAX);
                if n < limit {
                    t0
                } else {
                    // the limit-th most recent pass must have left the window
                    t0.max(log[n - limit] + l.window)
                }
            }
            State::Tokens { at, level } => {
                let have = Self::tokens_at(l, *at, *level, t0);
                match l.refill {
                    Refill::Continuous if have >= w => t0,
                    Refill::Continuous => t0 + clamp_ticks(div_ceil(w - have, lim)),
                    Refill::Discrete if have >= 1 => t0,
                    Refill::Discrete => {
                        let next = u128::from(t0.0) * lim / w + 1;
                        clamp_ticks(div_ceil(next * w, lim))
                    }
                }
            }
            State::Gcra { tat } => {
                let tau = (lim - 1) * w;
                t0.max(clamp_ticks(div_ceil(tat.saturating_sub(tau), lim)))
            }
        }
    }

    /// Records a request let through at `at` (a value `earliest` returned).
    fn take(&mut self, l: &Limiter, at: Ticks) {
        match &mut self.state {
            State::Windows(ws) => {
                let k = at.0 / l.window.0;
                match ws.back_mut() {
                    Some((last, n)) if *last == k => *n += 1,
                    _ => ws.push_back((k, 1)),
                }
            }
            State::Log(log) => log.push_back(at),
            State::Tokens { at: since, level } => {
                let unit = match l.refill {
                    Refill::Continuous => u128::from(l.window.0),
                    Refill::Discrete => 1,
                };
                *level = Self::tokens_at(l, *since, *level, at) - unit;
                *since = at;
            }
            State::Gcra { tat } => {
                let lim = u128::from(l.limit);
                *tat = (*tat).max(u128::from(at.0) * lim) + u128::from(l.window.0);
            }
        }
        self.last = at;
    }
}

/// sliding-counter: a request may pass at `e` into window k when
/// `prev x (W - e) / W + curr + 1 <= limit` (the previous window's count weighed by
/// its overlap with the sliding window), computed in integers.
fn sliding_counter_earliest(ws: &VecDeque<(u64, u64)>, l: &Limiter, mut t0: Ticks) -> Ticks {
    let w = l.window.0;
    loop {
        let k = t0.0 / w;
        let prev = if k == 0 { 0 } else { count_in(ws, k - 1) };
        let curr = count_in(ws, k);
        if curr < l.limit {
            let room = u128::from(l.limit - curr - 1) * u128::from(w);
            let e_min = match prev {
                0 => 0,
                p => u128::from(w).saturating_sub(room / u128::from(p)),
            };
            let at = t0.max(clamp_ticks(u128::from(k) * u128::from(w) + e_min));
            if at.0 / w == k {
                return at;
            }
        }
        t0 = clamp_ticks((u128::from(k) + 1) * u128::from(w));
    }
}

/// Decides one request arriving at `now` and updates the bucket.
pub fn decide(l: &Limiter, b: &mut Bucket, now: Ticks) -> Decision {
    b.forget(l, now);
    let at = b.earliest(l, now);
    let decision = if at == now {
        Decision::Pass
    } else if l.mode == LimiterMode::Throttle && at - now <= l.max_delay {
        Decision::Delay(at)
    } else {
        return Decision::Reject;
    };
    b.take(l, at);
    decision
}

/// Orders names with their digit runs compared as numbers (u2 before u10).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for ((da, xa), (db, xb)) in pa.iter().zip(&pb) {
        let ord = if *da && *db {
            let (ta, tb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb))
        } else {
            xa.cmp(xb)
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LimiterMode, Overflow, Refill};

    fn limiter(algorithm: Algorithm, limit: u64, window_ms: f64) -> Limiter {
        Limiter {
            name: "l".into(),
            algorithm,
            key: vec![],
            limit,
            window: Ticks::from_ms(window_ms),
            mode: LimiterMode::Reject,
            max_delay: Ticks::ZERO,
            refill: Refill::Continuous,
            overflow: Overflow::Hold,
        }
    }

    fn throttled(mut l: Limiter, max_delay_ms: f64) -> Limiter {
        l.mode = LimiterMode::Throttle;
        l.max_delay = Ticks::from_ms(max_delay_ms);
        l
    }

    /// Decisions for arrivals at `times_ms` on one bucket: "P", "R" or "D<ms>"
    /// (held, let through at that time).
    fn run(l: &Limiter, times_ms: &[f64]) -> Vec<String> {
        let mut b = Bucket::new(l);
        times_ms
            .iter()
            .map(|t| match decide(l, &mut b, Ticks::from_ms(*t)) {
                Decision::Pass => "P".to_string(),
                Decision::Reject => "R".to_string(),
                Decision::Delay(at) => format!("D{}", at.as_ms()),
            })
            .collect()
    }

    #[test]
    fn fixed_window_counts_per_aligned_window() {
        let l = limiter(Algorithm::FixedWindow, 2, 100.0);
        assert_eq!(
            run(&l, &[0., 10., 20., 99., 100., 150., 199., 200.]),
            ["P", "P", "R", "R", "P", "P", "R", "P"]
        );
        // the boundary burst: twice the limit within 15 ms
        assert_eq!(run(&l, &[90., 95., 100., 105.]), ["P", "P", "P", "P"]);
    }

    #[test]
    fn fixed_window_throttle_holds_to_the_next_free_window() {
        let l = throttled(limiter(Algorithm::FixedWindow, 2, 100.0), 100.0);
        assert_eq!(
            run(&l, &[0., 0., 0., 0., 0., 50., 150.]),
            // 3rd and 4th wait for window [100, 200); the 5th would wait 200 ms;
            // at 50 the next free window starts at 200 (150 ms > 100); at 150, 50 ms
            ["P", "P", "D100", "D100", "R", "R", "D200"]
        );
    }

    #[test]
    fn sliding_log_keeps_every_pass_for_a_window() {
        let l = limiter(Algorithm::SlidingLog, 2, 100.0);
        assert_eq!(
            run(&l, &[0., 50., 99., 100., 120., 150., 199.]),
            ["P", "P", "R", "P", "R", "P", "R"]
        );
        assert_eq!(run(&l, &[90., 95., 100., 105.]), ["P", "P", "R", "R"]);
        let t = throttled(l, 60.0);
        // 20 would wait until 100 (80 ms); 50 waits 50 ms; 60 queues behind it and
        // leaves when the pass at 10 has left the window (110)
        assert_eq!(
            run(&t, &[0., 10., 20., 50., 60.]),
            ["P", "P", "R", "D100", "D110"]
        );
    }

    #[test]
    fn sliding_counter_weighs_the_previous_window_by_overlap() {
        let l = limiter(Algorithm::SlidingCounter, 4, 100.0);
        // window 0 fills; in window 1 the estimate 4 x (100 - e)/100 + curr + 1 <= 4
        // first holds at e = 25, then 50, then 75
        assert_eq!(
            run(
                &l,
                &[
                    0., 10., 20., 30., 40., 110., 125., 130., 150., 160., 175., 180.
                ]
            ),
            ["P", "P", "P", "P", "R", "R", "P", "R", "P", "R", "P", "R"]
        );
        // throttled (30 ms): held requests leave at e = 25, 50, 75 in FIFO order; at
        // 175 the next room is at 200 (window 2, prev 3: 3 x 1 + 0 + 1 <= 4); after it
        // 3 x (100 - e)/100 + 1 + 1 <= 4 needs e >= 34 (234: 54 ms, too long)
        let t = throttled(l, 30.0);
        let got = run(
            &t,
            &[
                0., 10., 20., 30., 40., 110., 125., 130., 150., 160., 175., 180.,
            ],
        );
        assert_eq!(
            got,
            [
                "P", "P", "P", "P", "R", "D125", "D150", "R", "D175", "R", "D200", "R"
            ]
        );
    }

    #[test]
    fn token_bucket_refills_continuously_from_full() {
        let l = limiter(Algorithm::TokenBucket, 2, 100.0);
        // one token per 50 ms, two to start with, never more than two
        let seq = [0., 0., 0., 50., 60., 100., 200., 200., 200.];
        let want = ["P", "P", "R", "P", "R", "P", "P", "P", "R"];
        assert_eq!(run(&l, &seq), want);
        let t = throttled(l, 60.0);
        assert_eq!(
            run(&t, &[0., 0., 0., 0., 10., 45.]),
            ["P", "P", "D50", "R", "R", "D100"]
        );
    }

    #[test]
    fn token_bucket_discrete_adds_whole_tokens_at_aligned_instants() {
        let mut l = limiter(Algorithm::TokenBucket, 2, 100.0);
        let seq = [90., 90., 100., 140.];
        // continuous: empty at 90, the next whole token at 140
        assert_eq!(run(&l, &seq), ["P", "P", "R", "P"]);
        // discrete: a token lands at every multiple of 50 ms: 100 passes, 140 waits
        // for 150
        l.refill = Refill::Discrete;
        assert_eq!(run(&l, &seq), ["P", "P", "P", "R"]);
        let t = throttled(l, 20.0);
        assert_eq!(run(&t, &[90., 90., 100., 140.]), ["P", "P", "P", "D150"]);
    }

    #[test]
    fn gcra_matches_the_continuous_token_bucket() {
        let seq = [0., 0., 0., 50., 60., 100., 200., 200., 200., 230., 260.];
        let g = limiter(Algorithm::Gcra, 2, 100.0);
        let tb = limiter(Algorithm::TokenBucket, 2, 100.0);
        assert_eq!(
            run(&g, &seq),
            ["P", "P", "R", "P", "R", "P", "P", "P", "R", "R", "P"]
        );
        assert_eq!(run(&g, &seq), run(&tb, &seq));
        let gt = throttled(g, 60.0);
        let tbt = throttled(tb, 60.0);
        let seq = [0., 0., 0., 0., 10., 45.];
        assert_eq!(run(&gt, &seq), ["P", "P", "D50", "R", "R", "D100"]);
        assert_eq!(run(&gt, &seq), run(&tbt, &seq));
    }

    #[test]
    fn window_and_emission_interval_need_not_divide_evenly() {
        // 3 per 100 ms: GCRA's interval is 33.333... ms; no rounding drift
        let g = limiter(Algorithm::Gcra, 3, 100.0);
        let seq: Vec<f64> = (0..7).map(|i| 100.0 * i as f64).collect();
        assert!(run(&g, &seq).iter().all(|d| d == "P"));
        let tb = throttled(limiter(Algorithm::TokenBucket, 3, 100.0), 1000.0);
        let got = run(&tb, &[0., 0., 0., 0.]);
        assert_eq!(got[3], format!("D{}", Ticks(33_333_334).as_ms()));
    }

    #[test]
    fn natural_order_compares_digit_runs_as_numbers() {
        let mut v = vec!["u10", "u2", "u1", "toplu", "u02x"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["toplu", "u1", "u2", "u02x", "u10"]);
    }
}
