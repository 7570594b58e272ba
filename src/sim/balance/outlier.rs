//! Outlier ejection (`services.NAME.outlier_detection`): Envoy's
//! consecutive-failure detector, one per balancing view.
//!
//! A [`Detector`] hears each request's end at a replica ([`Detector::heard`]:
//! failed or not) and decides which replicas the view's balancer may pick
//! ([`Detector::pick`]). It knows nothing of servers or requests, so any
//! replicated target's picker can hold one.
//!
//! The rules follow Envoy's `source/common/upstream/outlier_detection_impl.cc`
//! with `consecutive_5xx`:
//!
//! - A replica's count of failures in a row grows with each failure and
//!   starts again at each success. When it reaches `consecutive_failures` the
//!   replica is ejected (unless it already is, or the share rule refuses) and
//!   its count starts again either way (`onConsecutiveErrorWorker`).
//! - The share rule (`DetectorImpl::ejectHost`): an ejection goes ahead only
//!   while (ejected + 1) / replicas x 100 <= `max_ejection_pct`; with
//!   `always_eject_one_host` also whenever none is ejected. So with 3
//!   replicas and the default 10 %, none is ever ejected.
//! - Length (`ejectHost`, `checkHostForUneject`): each replica has a
//!   multiplier k. An ejection raises it by one if k x base < max + base
//!   before (so it stops one step past the cap) and lasts min(k x base,
//!   `max_ejection`): with a base that does not divide the cap, the last
//!   ejections last the cap itself.
//! - Sweeps run every `interval` from the run's start (`onIntervalTimer`): at
//!   each one, an ejected replica whose ejection is over returns, with its
//!   count of failures in a row cleared (`unejectHost`), and a replica that is
//!   not ejected has its multiplier lowered by one (to 0; not the one that
//!   returns at this sweep). A replica returns at the first sweep at or after
//!   its ejection's end, not at the end itself.
//! - Panic (Envoy's `healthy_panic_threshold`, 50 %): while fewer than half
//!   the replicas are not ejected, the balancer picks among all of them.
//!
//! Sweeps are run when the view is next used (a pick or a result), each at
//! its own instant, so the outcome is the same as with a timer.

use super::Balance;
use crate::engine::Ticks;
use crate::model::Outlier;

/// Envoy's default `healthy_panic_threshold` (%).
const PANIC_PCT: usize = 50;

/// One ejection of a replica by a view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ejection {
    /// The replica, from 0.
    pub replica: u32,
    /// When it was ejected.
    pub at: Ticks,
    /// The multiplier k: it lasts k x `base_ejection`, within `max_ejection`.
    pub multiplier: u32,
    /// How long it lasts: min(k x `base_ejection`, `max_ejection`).
    pub lasts: Ticks,
    /// The sweep at which it returned (None: still ejected).
    pub back: Option<Ticks>,
}

/// One view's detector over `n` replicas.
pub(crate) struct Detector {
    keys: Outlier,
    /// Failures in a row, per replica.
    failures: Vec<u32>,
    /// Per replica: the index in `log` of its ejection now, if ejected.
    ejected: Vec<Option<usize>>,
    /// Per replica: the multiplier of its last ejection's length (Envoy's
    /// `ejectTimeBackoff`).
    multiplier: Vec<u32>,
    /// The replicas not ejected, in order.
    healthy: Vec<usize>,
    next_sweep: Ticks,
    /// Every ejection, in order.
    log: Vec<Ejection>,
    /// Picks per sweep interval and replica (`[w * n + r]`: interval w from
    /// the run's start).
    sent: Vec<u32>,
}

impl Detector {
    pub fn new(keys: Outlier, n: usize) -> Detector {
        Detector {
            keys,
            failures: vec![0; n],
            ejected: vec![None; n],
            multiplier: vec![0; n],
            healthy: (0..n).collect(),
            next_sweep: keys.interval,
            log: Vec::new(),
            sent: Vec::new(),
        }
    }

    /// Runs the sweeps due at or before `now`, each at its own instant.
    fn sweep(&mut self, now: Ticks) {
        while self.next_sweep <= now {
            let t = self.next_sweep;
            let mut back = false;
            for r in 0..self.failures.len() {
                match self.ejected[r] {
                    Some(e) => {
                        let e = &mut self.log[e];
                        if t.saturating_sub(e.at) >= e.lasts {
                            e.back = Some(t);
                            self.ejected[r] = None;
                            // Envoy's unejectHost clears the count, so that
                            // failures heard while out do not carry over
                            self.failures[r] = 0;
                            back = true;
                        }
                    }
                    None => self.multiplier[r] = self.multiplier[r].saturating_sub(1),
                }
            }
            if back {
                self.healthy.clear();
                let ejected = &self.ejected;
                self.healthy
                    .extend((0..ejected.len()).filter(|&r| ejected[r].is_none()));
            }
            self.next_sweep = t + self.keys.interval;
            if self.healthy.len() == self.failures.len()
                && self.multiplier.iter().all(|&m| m == 0)
                && self.next_sweep <= now
            {
                // nothing left for a sweep to change: on to the last one due
                let behind = (now.0 - self.next_sweep.0) / self.keys.interval.0;
                self.next_sweep = Ticks(self.next_sweep.0 + behind * self.keys.interval.0);
            }
        }
    }

    /// `balancer`'s pick at `now` among the replicas not ejected (among all
    /// of them in panic), given each replica's `outstanding` count.
    pub fn pick(&mut self, balancer: &mut dyn Balance, outstanding: &[u32], now: Ticks) -> usize {
        self.sweep(now);
        let n = self.failures.len();
        let k = if self.healthy.len() == n || self.healthy.len() * 100 < n * PANIC_PCT {
            balancer.pick_at(outstanding, now)
        } else {
            balancer.pick_among(outstanding, &self.healthy, now)
        };
        let at = (now.0 / self.keys.interval.0) as usize * n + k;
        if self.sent.len() <= at {
            self.sent.resize((at / n + 1) * n, 0);
        }
        self.sent[at] += 1;
        k
    }

    /// Its picks per sweep interval and replica, `[w * n + r]` for interval
    /// w from the run's start (up to the last interval with a pick).
    pub fn sent(&self) -> &[u32] {
        &self.sent
    }

    /// A request to `replica` is over at `now`: `failed` (an error answer,
    /// shed, or given up on) or not.
    pub fn heard(&mut self, replica: usize, now: Ticks, failed: bool) {
        self.sweep(now);
        if !failed {
            self.failures[replica] = 0;
            return;
        }
        self.failures[replica] += 1;
        if self.failures[replica] < self.keys.consecutive_failures {
            return;
        }
        self.failures[replica] = 0;
        if self.ejected[replica].is_some() {
            return;
        }
        // Envoy's DetectorImpl::ejectHost: the share with this one ejected
        // too must stay within max_ejection_percent, unless
        // always_eject_one_host and none is ejected
        let n = self.failures.len();
        let ejected = n - self.healthy.len();
        let share = 100.0 * (ejected + 1) as f64 / n as f64;
        let allowed =
            share <= self.keys.max_ejection_pct || (self.keys.always_eject_one && ejected == 0);
        if !allowed {
            return;
        }
        // ejectHost raises ejectTimeBackoff while k x base < max + base, and
        // checkHostForUneject holds the host out min(k x base, max)
        let (base, max) = (self.keys.base_ejection.0, self.keys.max_ejection.0);
        let k = &mut self.multiplier[replica];
        if u64::from(*k).saturating_mul(base) < max.saturating_add(base) {
            *k += 1;
        }
        let lasts = Ticks(u64::from(*k).saturating_mul(base).min(max));
        self.ejected[replica] = Some(self.log.len());
        self.log.push(Ejection {
            replica: replica as u32,
            at: now,
            multiplier: *k,
            lasts,
            back: None,
        });
        self.healthy.retain(|&r| r != replica);
    }

    /// Every ejection so far, with the sweeps up to `end` run (the run's end:
    /// a replica still ejected then has no `back`).
    pub fn ejections(&mut self, end: Ticks) -> &[Ejection] {
        self.sweep(end);
        &self.log
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::balance::of_text;

    fn ms(x: f64) -> Ticks {
        Ticks::from_ms(x)
    }

    /// Envoy's defaults but the share: `pct` %, `always_eject_one_host` off.
    fn keys(pct: f64) -> Outlier {
        Outlier {
            consecutive_failures: 5,
            interval: ms(10_000.0),
            base_ejection: ms(30_000.0),
            max_ejection: ms(300_000.0),
            max_ejection_pct: pct,
            always_eject_one: false,
        }
    }

    /// Five failures in a row eject; the replica returns at the first sweep
    /// 30 s or more later, and a second ejection before any sweep has lowered
    /// the multiplier lasts 60 s.
    #[test]
    fn ejects_at_the_threshold_and_backs_off() {
        let mut d = Detector::new(keys(34.0), 3);
        let mut rr = of_text(
            "kind = \"round_robin\"",
            3,
            crate::engine::stream(1, 0, "t"),
        );
        for i in 0..4 {
            d.heard(1, ms(100.0 + f64::from(i)), true);
        }
        d.heard(1, ms(105.0), false);
        assert!(
            d.ejections(ms(106.0)).is_empty(),
            "a success starts the count again"
        );
        for i in 0..5 {
            d.heard(1, ms(1_000.0 + f64::from(i)), true);
        }
        let picks: Vec<usize> = (0..4)
            .map(|_| d.pick(&mut *rr, &[0, 0, 0], ms(2_000.0)))
            .collect();
        assert!(!picks.contains(&1), "{picks:?}");
        // ejected at 1004 ms: 30 s later is 31004 ms, the next sweep 40 s
        assert_eq!(d.pick(&mut *rr, &[0, 0, 0], ms(39_999.0)), 0);
        let picks: Vec<usize> = (0..3)
            .map(|_| d.pick(&mut *rr, &[0, 0, 0], ms(40_000.0)))
            .collect();
        assert!(picks.contains(&1), "{picks:?}");
        for i in 0..5 {
            d.heard(1, ms(40_001.0 + f64::from(i)), true);
        }
        let log = d.ejections(ms(200_000.0)).to_vec();
        assert_eq!(log.len(), 2);
        assert_eq!(
            (log[0].at, log[0].back, log[0].multiplier),
            (ms(1_004.0), Some(ms(40_000.0)), 1)
        );
        // 60 s from 40005 ms is 100005 ms: back at the 110 s sweep
        assert_eq!(
            (log[1].at, log[1].back, log[1].multiplier),
            (ms(40_005.0), Some(ms(110_000.0)), 2)
        );
    }

    /// Sweeps while healthy lower the multiplier: ejected again three sweeps
    /// after returning, the ejection lasts one base again.
    #[test]
    fn healthy_sweeps_lower_the_multiplier() {
        let mut d = Detector::new(keys(50.0), 2);
        for i in 0..5 {
            d.heard(0, ms(f64::from(i)), true);
        }
        // ejected at 4 ms, back at the 40 s sweep; healthy at the 50 s
        // sweep: multiplier 1 -> 0
        for i in 0..5 {
            d.heard(0, ms(55_000.0 + f64::from(i)), true);
        }
        let log = d.ejections(ms(100_000.0)).to_vec();
        assert_eq!(log[0].back, Some(ms(40_000.0)));
        assert_eq!(log[1].multiplier, 1);
        // 55004 ms + 30 s = 85004 ms: back at the 90 s sweep
        assert_eq!(log[1].back, Some(ms(90_000.0)));
    }

    /// Every kind picks only among the replicas it is given, the kinds with
    /// state per replica (weights, costs, deadlines) too.
    #[test]
    fn every_kind_picks_only_among_the_replicas_in() {
        use crate::engine::stream;
        use crate::kinds::balance::{Balancer, KINDS};
        for kind in KINDS {
            for weights in ["weights = [1, 2, 3, 4]", ""] {
                let t: toml::Table = format!("kind = \"{}\"\n{weights}", kind.name)
                    .parse()
                    .expect("a table");
                let with_weights = kind.key("weights").is_some();
                if !weights.is_empty() && !with_weights {
                    continue;
                }
                let Ok(kind) = Balancer::read("b", &t, 4) else {
                    // `weighted_round_robin` without its weights
                    continue;
                };
                let mut b = kind.make(4, stream(1, 0, "balancer:t"));
                let mut seen = [0u32; 4];
                for i in 0..200 {
                    let k = b.pick_among(&[3, 0, 1, 2], &[1, 3], ms(f64::from(i)));
                    b.on_done(k, ms(f64::from(i)), ms(5.0));
                    seen[k] += 1;
                }
                assert_eq!(seen[0] + seen[2], 0, "{kind:?}: {seen:?}");
            }
        }
    }

    /// Every replica fails five in a row; the ejections that go ahead.
    fn ejected(keys: Outlier, n: usize) -> Vec<u32> {
        let mut d = Detector::new(keys, n);
        for r in 0..n {
            for i in 0..5 {
                d.heard(r, ms(f64::from(i)), true);
            }
        }
        d.ejections(ms(10.0)).iter().map(|e| e.replica).collect()
    }

    /// The share rule, as Envoy's ejectHost: an ejection goes ahead only while
    /// (ejected + 1) / replicas <= max_ejection_pct. With 3 replicas at the
    /// default 10 % none is ever ejected (one would be 33 %); ten replicas
    /// are needed for one at 10 %. `always_eject_one_host` lets one go ahead
    /// when none is ejected, never a second.
    #[test]
    fn the_share_rule_counts_the_ejection_itself() {
        assert_eq!(ejected(keys(10.0), 3), [] as [u32; 0], "33 % > 10 %");
        assert_eq!(ejected(keys(33.0), 3), [] as [u32; 0], "33.3 % > 33 %");
        assert_eq!(ejected(keys(34.0), 3), [0], "34 %: one, not two (67 %)");
        assert_eq!(ejected(keys(10.0), 9), [] as [u32; 0], "11.1 % > 10 %");
        assert_eq!(ejected(keys(10.0), 10), [0], "10 % <= 10 %: exactly one");
        assert_eq!(ejected(keys(100.0), 3), [0, 1, 2]);
        let one = Outlier {
            always_eject_one: true,
            ..keys(10.0)
        };
        assert_eq!(ejected(one, 3), [0], "always one, never a second");
        assert_eq!(
            ejected(
                Outlier {
                    max_ejection_pct: 0.0,
                    ..one
                },
                2
            ),
            [0]
        );
    }

    /// With every replica ejected the picks go to every replica (panic).
    #[test]
    fn panic_picks_among_all() {
        let mut d = Detector::new(keys(100.0), 2);
        for r in [0, 1] {
            for i in 0..5 {
                d.heard(r, ms(f64::from(i)), true);
            }
        }
        assert_eq!(d.ejections(ms(10.0)).len(), 2);
        let mut rr = of_text(
            "kind = \"round_robin\"",
            3,
            crate::engine::stream(1, 0, "t"),
        );
        let picks: Vec<usize> = (0..2)
            .map(|_| d.pick(&mut *rr, &[0, 0], ms(20.0)))
            .collect();
        assert_eq!(picks, [0, 1], "panic: every replica");
    }

    /// Ejects replica 0 of two over and over, each time at its first chance
    /// (five failures at once, then the sweep that brings it back): the
    /// multipliers and lengths of its ejections.
    fn ejections_in_a_row(keys: Outlier, times: usize) -> Vec<(u32, Ticks)> {
        let mut d = Detector::new(keys, 2);
        let mut now = ms(1.0);
        for _ in 0..times {
            for _ in 0..5 {
                d.heard(0, now, true);
            }
            let log = d.ejections(now);
            let last = log[log.len() - 1];
            // back at the first sweep at or after its end
            let end = (last.at + last.lasts).0;
            let interval = keys.interval.0;
            now = Ticks(end.div_ceil(interval) * interval);
        }
        d.ejections(now)
            .iter()
            .map(|e| (e.multiplier, e.lasts))
            .collect()
    }

    /// Envoy's length: k x base capped at max_ejection_time, k raised while
    /// k x base < max + base. With a base of 70 s and the cap of 300 s: 70,
    /// 140, 210, 280, then 300 s (5 x 70 = 350 capped), and k stops at 6 (5
    /// x 70 = 350 < 370, 6 x 70 = 420 is not). Capping k so that k x base
    /// stays within 300 s would stop at 280 s. With a base of 30 s k stops at
    /// 11 and every ejection from the 10th lasts 300 s.
    #[test]
    fn the_length_is_capped_at_max_ejection_time_not_below() {
        let base = Outlier {
            base_ejection: ms(70_000.0),
            always_eject_one: true,
            ..keys(10.0)
        };
        let got = ejections_in_a_row(base, 7);
        let want: Vec<(u32, Ticks)> = [(1, 70), (2, 140), (3, 210), (4, 280), (5, 300), (6, 300)]
            .iter()
            .chain(&[(6, 300)])
            .map(|&(k, s)| (k, ms(f64::from(s) * 1000.0)))
            .collect();
        assert_eq!(got, want);
        let got = ejections_in_a_row(
            Outlier {
                always_eject_one: true,
                ..keys(10.0)
            },
            12,
        );
        let ks: Vec<u32> = got.iter().map(|g| g.0).collect();
        assert_eq!(ks, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 11]);
        assert!(got[9..].iter().all(|g| g.1 == ms(300_000.0)), "{got:?}");
        // a cap of its own (max_ejection_ms)
        let capped = Outlier {
            max_ejection: ms(45_000.0),
            always_eject_one: true,
            ..keys(10.0)
        };
        let got = ejections_in_a_row(capped, 4);
        assert_eq!(
            got,
            [(1, 30.0), (2, 45.0), (3, 45.0), (3, 45.0)].map(|(k, s)| (k, ms(s * 1000.0)))
        );
    }

    /// Envoy's unejectHost clears the count of failures in a row: failures
    /// heard while the replica was out (requests already at it) do not count
    /// towards its next ejection.
    #[test]
    fn a_return_clears_the_count_of_failures() {
        let mut d = Detector::new(keys(50.0), 2);
        for i in 0..5 {
            d.heard(0, ms(f64::from(i)), true);
        }
        // four failures of requests already sent, heard while it is out
        for i in 0..4 {
            d.heard(0, ms(100.0 + f64::from(i)), true);
        }
        // back at the 40 s sweep: one more failure does not eject it
        d.heard(0, ms(40_001.0), true);
        assert_eq!(d.ejections(ms(40_002.0)).len(), 1);
        for i in 0..4 {
            d.heard(0, ms(40_002.0 + f64::from(i)), true);
        }
        assert_eq!(d.ejections(ms(40_010.0)).len(), 2, "five after its return");
    }
}
