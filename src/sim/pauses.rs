//! Stop-the-world pauses (`pause` faults) of one server instance: when they
//! fall, whether the instance is paused now, and when work of a given length
//! that starts now ends once it has waited out the pauses in its way.
//!
//! The rule follows a JVM's safepoint (OpenJDK `SafepointSynchronize::begin`
//! and `::end` in `hotspot/share/runtime/safepoint.cpp`: every Java thread is
//! stopped until the VM operation, a stop-the-world collection, is done): a
//! request in service makes no progress during a pause, so its service ends
//! the pause's length later; nothing starts during one (the instance's
//! slots are none for its length); arrivals still queue, or are
//! shed when the queue is full.
//!
//! Each `pause` fault on an instance is one clock with its own random stream,
//! `pause:<fault index>:<service>#<replica>` (replica from 1): a periodic
//! clock draws its phase (uniform over one period) once; a Poisson clock
//! draws each gap (exponential, of mean `every_ms`). Pauses start in the
//! fault's window `[at_ms, at_ms + for_ms)` and last their whole length.
//! Pauses that overlap (of several faults, or Poisson gaps shorter than a
//! pause) are one pause, from the first start to the last end.
//!
//! [`Pauses`] knows nothing of the world: it draws its pauses lazily, in
//! order, as far as the questions about them reach.

use crate::engine::{Stream, Ticks, stream};
use crate::model::Pause;
use rand::RngExt;
use rand_distr::{Distribution, Exp};
use std::collections::VecDeque;

/// One `pause` fault's pauses on one instance.
struct Clock {
    pause: Pause,
    /// No pause starts at or after this (the fault's end).
    until: Ticks,
    /// The start of the next pause not yet drawn into the windows.
    next: Option<Ticks>,
    rng: Stream,
}

impl Clock {
    fn new(pause: Pause, at: Ticks, until: Ticks, mut rng: Stream) -> Clock {
        let first = if pause.poisson {
            at + gap(&mut rng, pause.every)
        } else {
            at + Ticks(rng.random_range(0..pause.every.0.max(1)))
        };
        Clock {
            pause,
            until,
            next: (first < until).then_some(first),
            rng,
        }
    }

    /// The next start is drawn: the one after `start`.
    fn step(&mut self, start: Ticks) {
        let gap = if self.pause.poisson {
            gap(&mut self.rng, self.pause.every)
        } else {
            self.pause.every
        };
        let next = start + gap;
        self.next = (next < self.until).then_some(next);
    }
}

/// An exponential gap of mean `every`, to the nearest tick.
fn gap(rng: &mut Stream, every: Ticks) -> Ticks {
    let exp = Exp::new(1.0 / every.0 as f64).expect("every_ms > 0");
    Ticks(exp.sample(rng).round() as u64)
}

/// Every pause of one instance, as half-open windows `[start, end)`.
pub(crate) struct Pauses {
    clocks: Vec<Clock>,
    /// Pauses drawn so far, merged, in order; those over before the last
    /// [`Pauses::forget`] are gone.
    windows: VecDeque<(Ticks, Ticks)>,
}

impl Pauses {
    /// The pauses of the faults `faults` (each: its index, pauses, window) on
    /// the instance named `name` (`<service>#<replica from 1>`).
    pub(crate) fn new(
        seed: u64,
        replication: u64,
        name: &str,
        faults: impl Iterator<Item = (usize, Pause, Ticks, Ticks)>,
    ) -> Pauses {
        let clocks = faults
            .filter(|(_, _, at, until)| at < until)
            .map(|(i, pause, at, until)| {
                let rng = stream(seed, replication, &format!("pause:{i}:{name}"));
                Clock::new(pause, at, until, rng)
            })
            .collect();
        Pauses {
            clocks,
            windows: VecDeque::new(),
        }
    }

    /// The earliest start not drawn yet, and its clock.
    fn earliest(&self) -> Option<(usize, Ticks)> {
        self.clocks
            .iter()
            .enumerate()
            .filter_map(|(c, k)| k.next.map(|t| (c, t)))
            .min_by_key(|&(c, t)| (t, c))
    }

    /// Draws the next pause into the windows (false: none is left).
    fn pull(&mut self) -> bool {
        let Some((c, start)) = self.earliest() else {
            return false;
        };
        let end = start + self.clocks[c].pause.length;
        self.clocks[c].step(start);
        match self.windows.back_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => self.windows.push_back((start, end)),
        }
        true
    }

    /// The first pause that ends after `t` (it may hold `t`), whole: no pause
    /// yet to be drawn joins it. None: no pause ends after `t`.
    pub(crate) fn after(&mut self, t: Ticks) -> Option<(Ticks, Ticks)> {
        loop {
            let found = self.windows.iter().find(|w| w.1 > t).copied();
            match found {
                Some(w) if self.earliest().is_none_or(|(_, s)| s > w.1) => return Some(w),
                None if self.earliest().is_none() => return None,
                _ => {
                    self.pull();
                }
            }
        }
    }

    /// Whether a pause holds `now`, and until when.
    pub(crate) fn holding(&mut self, now: Ticks) -> Option<Ticks> {
        self.after(now).filter(|w| w.0 <= now).map(|w| w.1)
    }

    /// When work of length `work` that may start at `t` ends, having waited
    /// out every pause in its way: it makes progress only outside them.
    pub(crate) fn finish(&mut self, mut t: Ticks, work: Ticks) -> Ticks {
        let mut left = work;
        while let Some((start, end)) = self.after(t) {
            if start > t {
                if t + left <= start {
                    break;
                }
                left = left - (start - t);
            }
            t = end;
        }
        t + left
    }

    /// The pauses over by `now` are no longer asked about.
    pub(crate) fn forget(&mut self, now: Ticks) {
        while self.windows.front().is_some_and(|w| w.1 <= now) {
            self.windows.pop_front();
        }
    }

    /// The first pause's start, if any.
    pub(crate) fn first(&mut self) -> Option<Ticks> {
        self.after(Ticks::ZERO).map(|w| w.0)
    }

    /// A pause starts at `now` (its edge): when it ends.
    pub(crate) fn starts(&mut self, now: Ticks) -> Ticks {
        self.holding(now).expect("a pause edge falls in a pause")
    }

    /// A pause ended at `now`: the next one's start, if any.
    pub(crate) fn ended(&mut self, now: Ticks) -> Option<Ticks> {
        self.forget(now);
        self.after(now).map(|w| w.0)
    }
}

/// The instances with pauses among `all` (by index), each with its first
/// pause's start.
pub(crate) fn firsts<'a>(
    all: impl Iterator<Item = Option<&'a mut Box<Pauses>>>,
) -> Vec<(usize, Ticks)> {
    all.enumerate()
        .filter_map(|(i, p)| Some((i, p?.first()?)))
        .collect()
}

/// The pauses of the instance named `label` (`<name>#<replica from 1>`) hit
/// by the `pause` faults of `model` on `subject` (None: no such fault).
pub(crate) fn of(
    model: &crate::model::Model,
    replication: u64,
    subject: super::faults::Subject,
    label: &str,
) -> Option<Box<Pauses>> {
    use super::faults::{may_act, pauses_of};
    may_act(model, crate::model::Hook::Pause, subject).then(|| {
        Box::new(Pauses::new(
            model.seed,
            replication,
            label,
            pauses_of(model, subject),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> Ticks {
        Ticks::from_ms(x)
    }

    fn periodic(every: f64, length: f64, at: f64, until: f64) -> Pauses {
        let pause = Pause {
            every: ms(every),
            length: ms(length),
            poisson: false,
        };
        Pauses::new(1, 0, "api#1", [(0, pause, ms(at), ms(until))].into_iter())
    }

    #[test]
    fn periodic_pauses_keep_their_period_from_a_phase_within_one() {
        let mut p = periodic(100.0, 10.0, 0.0, 1000.0);
        let (s0, e0) = p.after(Ticks::ZERO).expect("a pause");
        assert!(s0 < ms(100.0), "the phase is within one period: {s0}");
        assert_eq!(e0 - s0, ms(10.0));
        let starts: Vec<Ticks> = std::iter::successors(Some(s0), |&s| {
            let w = p.after(s + ms(10.0));
            w.map(|w| w.0)
        })
        .collect();
        assert_eq!(starts.len(), 10, "one per period in [0, 1000)");
        assert!(starts.windows(2).all(|w| w[1] - w[0] == ms(100.0)));
        assert!(*starts.last().unwrap() < ms(1000.0));
    }

    #[test]
    fn work_waits_out_the_pauses_in_its_way() {
        let mut p = periodic(100.0, 10.0, 0.0, 1000.0);
        let (s, e) = p.after(Ticks::ZERO).unwrap();
        // starting in a pause: it starts at its end
        assert_eq!(p.finish(s, ms(5.0)), e + ms(5.0));
        // ending exactly as a pause starts: not stretched
        let before = s + ms(100.0) - ms(20.0);
        assert_eq!(p.finish(before, ms(20.0)), s + ms(100.0));
        // across one pause: 10 ms later
        assert_eq!(p.finish(before, ms(25.0)), s + ms(100.0) + ms(15.0));
        // across one pause, then two: 10 and 20 ms later
        assert_eq!(p.finish(e, ms(150.0)), e + ms(160.0));
        assert_eq!(p.finish(e, ms(200.0)), e + ms(220.0));
        assert_eq!(p.holding(s), Some(e));
        assert_eq!(p.holding(e), None, "the end is not in the pause");
    }

    #[test]
    fn poisson_pauses_have_the_mean_gap_and_merge_when_they_overlap() {
        let pause = Pause {
            every: ms(50.0),
            length: ms(10.0),
            poisson: true,
        };
        let mut p = Pauses::new(3, 0, "api#2", [(1, pause, ms(0.0), ms(1e6))].into_iter());
        let mut paused = Ticks::ZERO;
        let mut t = Ticks::ZERO;
        let mut count = 0;
        while let Some((s, e)) = p.after(t) {
            assert!(s >= t && e > s);
            paused += e - s;
            t = e;
            count += 1;
            p.forget(t);
        }
        // 20 000 starts expected; merged pauses are fewer, and the paused share
        // is 1 - exp(-10/50) = 0.181 for Poisson starts (the union of windows)
        let share = paused.as_ms() / 1e6;
        assert!((share - 0.1813).abs() < 0.01, "share {share}");
        assert!(count > 15_000 && count < 20_000, "{count}");
    }

    #[test]
    fn pauses_start_only_in_the_faults_window() {
        let mut p = periodic(100.0, 10.0, 500.0, 700.0);
        let (s, _) = p.after(Ticks::ZERO).unwrap();
        assert!(s >= ms(500.0) && s < ms(600.0));
        let (s2, _) = p.after(s + ms(10.0)).unwrap();
        assert_eq!(s2, s + ms(100.0));
        assert_eq!(p.after(s2 + ms(10.0)), None);
        let mut none = periodic(100.0, 10.0, 500.0, 500.0);
        assert_eq!(none.after(Ticks::ZERO), None);
    }
}
