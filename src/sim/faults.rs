//! Faults over time: what a `[[faults]]` entry changes for an actor now. A
//! server asks for its latency factor when a request takes a slot, its error
//! rate when a service time ends, whether it is down when a request arrives; a
//! dependency the same for a call; the workload its arrival factor when it
//! draws a gap. Slot counts and `down` also act at a fault's edges (`FaultEdge`
//! events): slots change, queued and running work fails. The end of
//! `scenario.warmup_ms` is an edge too ([`WARMUP_END`]): the server and
//! dependency books start again there.
//!
//! [`Faults`] knows nothing of the world: it answers for the instant it is
//! given and says what an edge changes ([`Edge`]). The world keeps it private
//! and puts the actors' questions to it (`world/faults.rs`).
//!
//! # The window-edge rule
//!
//! A fault acts on the half-open window `[at_ms, at_ms + for_ms)`: anything that
//! happens at the tick `at_ms` (an arrival, a work start, a gap drawn) sees the
//! fault, anything at the tick `at_ms + for_ms` does not. The edge events are
//! scheduled before the run starts, so at their tick they run before every other
//! event (ties run in scheduling order): a request arriving at the very tick a
//! `down` fault starts finds the server already down, and one arriving at the
//! tick a `slots` fault ends finds the slots restored.
//!
//! # Overlaps
//!
//! Factors of overlapping faults on one target multiply; for `slots` and
//! `error_rate` the later-starting fault wins (ties: the later in the file);
//! `down` is down while any is active. A base error rate (a dependency's own
//! `error_rate`) is what applies when no `error_rate` fault does: an active fault
//! replaces it, as a later-starting fault replaces an earlier one.
//!
//! A scenario without faults pays one branch per question (`Faults::none`).

use crate::engine::{Stream, Ticks, stream};
use crate::model::{DependencyId, Fault, FaultTarget, Hook, Model, ServiceId};
use rand::RngExt;

/// What a question is about.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject {
    /// Replica `replica` (0-based; 0 for a service with one instance) of a server.
    Server { service: ServiceId, replica: u32 },
    /// Replica `replica` (0-based; 0 for a dependency with one instance) of a
    /// dependency.
    Dependency { dep: DependencyId, replica: u32 },
    /// A workload, by index.
    Workload(usize),
}

impl Subject {
    fn hit_by(self, target: FaultTarget) -> bool {
        match (self, target) {
            (
                Subject::Server { service, replica },
                FaultTarget::Server {
                    service: s,
                    replica: r,
                },
            ) => service == s && r.is_none_or(|r| r == replica),
            (
                Subject::Dependency { dep, replica },
                FaultTarget::Dependency { dep: d, replica: r },
            ) => dep == d && r.is_none_or(|r| r == replica),
            (Subject::Workload(w), FaultTarget::Workload(t)) => w == t,
            _ => false,
        }
    }
}

/// The run's faults and the random streams of their error draws.
pub(crate) struct Faults {
    list: Vec<Fault>,
    /// Bit `hook as u8` set: some fault has that effect. A question about an
    /// effect no fault has is answered with one test (M3's backend slowdown made
    /// every arrival ask `down` and every service end `error_rate`).
    hooks: u8,
    /// One stream per fault (`fault:<index>`), for `error_rate` draws.
    rngs: Vec<Stream>,
}

impl Faults {
    pub(super) fn new(model: &Model, replication: u64) -> Faults {
        Faults {
            list: model.faults.clone(),
            hooks: hooks_of(&model.faults),
            rngs: (0..model.faults.len())
                .map(|i| stream(model.seed, replication, &format!("fault:{i}")))
                .collect(),
        }
    }

    /// No faults at all: every question has its neutral answer.
    #[inline(always)]
    pub(super) fn none(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether any fault of `kind` exists (false without faults).
    #[inline(always)]
    pub(super) fn has(&self, hook: Hook) -> bool {
        self.hooks & 1 << (hook as u8) != 0
    }

    /// The faults of `kind` acting on `subject` at `now`, in file order.
    fn acting(
        &self,
        hook: Hook,
        subject: Subject,
        now: Ticks,
    ) -> impl Iterator<Item = (usize, &Fault)> {
        self.list.iter().enumerate().filter(move |(_, f)| {
            f.effect().hook() == hook && f.active(now) && subject.hit_by(f.target)
        })
    }

    /// The later-starting acting fault of `kind` (ties: the later in the file).
    fn latest(&self, hook: Hook, subject: Subject, now: Ticks) -> Option<(usize, &Fault)> {
        self.acting(hook, subject, now)
            .max_by_key(|(i, f)| (f.at, *i))
    }

    /// The factor work starting now takes (1 without a fault).
    #[inline]
    pub(super) fn latency_factor(&self, subject: Subject, now: Ticks) -> f64 {
        if !self.has(Hook::LatencyFactor) {
            return 1.0;
        }
        self.acting(Hook::LatencyFactor, subject, now)
            .map(|(_, f)| f.value())
            .product()
    }

    /// The time work starting now takes on top of its length (`latency_add`
    /// faults add up; zero without one).
    #[inline]
    pub(super) fn latency_add(&self, subject: Subject, now: Ticks) -> Ticks {
        if !self.has(Hook::LatencyAdd) {
            return Ticks::ZERO;
        }
        let ms: f64 = self
            .acting(Hook::LatencyAdd, subject, now)
            .map(|(_, f)| f.value())
            .sum();
        Ticks::from_ms(ms)
    }

    /// The factor open workload `workload`'s rate is multiplied by now.
    #[inline]
    pub(super) fn arrival_factor(&self, workload: usize, now: Ticks) -> f64 {
        if !self.has(Hook::ArrivalFactor) {
            return 1.0;
        }
        self.acting(Hook::ArrivalFactor, Subject::Workload(workload), now)
            .map(|(_, f)| f.value())
            .product()
    }

    /// The slot count a `slots` fault sets now (None: the target's own).
    pub(super) fn slots(&self, subject: Subject, now: Ticks) -> Option<u32> {
        if !self.has(Hook::Slots) {
            return None;
        }
        self.latest(Hook::Slots, subject, now)
            .map(|(_, f)| f.value() as u32)
    }

    /// Whether work that ends now fails by an `error_rate` fault: a draw from the
    /// acting fault's own stream (no draw without one). A target's own base rate
    /// (a dependency's `error_rate`) applies only when this finds no acting fault:
    /// the fault replaces it, it does not add to it.
    #[inline]
    pub(super) fn fails(&mut self, subject: Subject, now: Ticks) -> bool {
        if !self.has(Hook::ErrorRate) {
            return false;
        }
        let Some((i, f)) = self.latest(Hook::ErrorRate, subject, now) else {
            return false;
        };
        let p = f.value();
        let u: f64 = self.rngs[i].random();
        u < p
    }

    /// With an `error_rate` fault acting on `subject` now: whether it fails this
    /// call (None: no such fault acts; the target's own rate applies).
    pub(super) fn error_fault(&mut self, subject: Subject, now: Ticks) -> Option<bool> {
        if !self.has(Hook::ErrorRate) {
            return None;
        }
        let (i, f) = self.latest(Hook::ErrorRate, subject, now)?;
        let p = f.value();
        let u: f64 = self.rngs[i].random();
        Some(u < p)
    }

    /// Whether a `down` fault acts on `subject` now.
    #[inline]
    pub(super) fn down(&self, subject: Subject, now: Ticks) -> bool {
        if !self.has(Hook::Down) {
            return false;
        }
        self.acting(Hook::Down, subject, now).next().is_some()
    }

    /// The edges to schedule before the run starts, in order, each as its
    /// tick and its code: the end of the warm-up (`warmup`, if any), then the
    /// start of each `slots` and `down` fault and the end of each `slots`
    /// fault, in file order. A fault of no length has none.
    pub(super) fn edges(&self, warmup: Ticks) -> Vec<(Ticks, u32)> {
        let mut edges = Vec::new();
        if warmup > Ticks::ZERO {
            edges.push((warmup, WARMUP_END));
        }
        for (i, f) in self.list.iter().enumerate() {
            if f.at == f.until || !matches!(f.effect().hook(), Hook::Slots | Hook::Down) {
                continue;
            }
            edges.push((f.at, edge_code(i, false)));
            if f.effect().hook() == Hook::Slots {
                edges.push((f.until, edge_code(i, true)));
            }
        }
        edges
    }

    /// What the edge `code` changes, and for whom.
    pub(super) fn edge(&self, code: u32) -> Edge {
        if code == WARMUP_END {
            return Edge::WarmupOver;
        }
        if code & PAUSE_EDGE != 0 {
            let rest = code & !(PAUSE_EDGE | DEPENDENCY_PAUSE);
            let (instance, end) = ((rest / 2) as usize, rest & 1 == 1);
            return if code & DEPENDENCY_PAUSE != 0 {
                Edge::DependencyPause { instance, end }
            } else {
                Edge::ServerPause { instance, end }
            };
        }
        let f = &self.list[(code / 2) as usize];
        match (f.effect().hook(), f.target) {
            (Hook::Slots, FaultTarget::Server { service, .. }) => Edge::ServerSlots(service),
            (Hook::Slots, FaultTarget::Dependency { dep, .. }) => Edge::DependencySlots(dep),
            (Hook::Down, FaultTarget::Server { service, .. }) => Edge::ServerDown(service),
            (Hook::Down, FaultTarget::Dependency { dep, .. }) => Edge::DependencyDown(dep),
            _ => Edge::Nothing,
        }
    }
}

/// What an edge changes (see [`Faults::edge`]): at the end of the warm-up the
/// books start again; at a `slots` fault's start or end a target's slot count
/// changes (and queued work may start); at a `down` fault's start a target
/// fails its queued and running work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edge {
    WarmupOver,
    ServerSlots(ServiceId),
    DependencySlots(DependencyId),
    ServerDown(ServiceId),
    DependencyDown(DependencyId),
    /// A pause of server instance `instance` starts (or ends, `end`).
    ServerPause {
        instance: usize,
        end: bool,
    },
    /// A pause of dependency instance `instance` starts (or ends, `end`).
    DependencyPause {
        instance: usize,
        end: bool,
    },
    /// The edge of a fault that acts only when asked.
    Nothing,
}

/// Pause edges carry this bit, and those of a dependency's instance the next
/// one: below them, the instance x 2, + 1 for the end (an instance index is
/// below 2^29: `MAX_REPLICAS` is far fewer).
const PAUSE_EDGE: u32 = 1 << 31;
const DEPENDENCY_PAUSE: u32 = 1 << 30;

/// The edge code of a pause of server instance `instance` starting or ending.
pub(crate) fn pause_code(instance: usize, end: bool) -> u32 {
    PAUSE_EDGE | ((instance as u32) * 2) | u32::from(end)
}

/// The edge code of a pause of dependency instance `instance` starting or
/// ending.
pub(crate) fn dependency_pause_code(instance: usize, end: bool) -> u32 {
    DEPENDENCY_PAUSE | pause_code(instance, end)
}

/// The `pause` faults of `model` on `subject`: each one's index, pauses and
/// window.
pub(crate) fn pauses_of(
    model: &Model,
    subject: Subject,
) -> impl Iterator<Item = (usize, crate::model::Pause, Ticks, Ticks)> + '_ {
    model
        .faults
        .iter()
        .enumerate()
        .filter(move |(_, f)| subject.hit_by(f.target))
        .filter_map(|(i, f)| f.effect().pause().map(|p| (i, p, f.at, f.until)))
}

/// Whether some fault of `kind` in `model` targets `subject` (at any time).
pub(crate) fn may_act(model: &Model, hook: Hook, subject: Subject) -> bool {
    may_act_in(&model.faults, hook, subject)
}

/// [`may_act`] for the faults of `list`.
fn may_act_in(list: &[Fault], hook: Hook, subject: Subject) -> bool {
    list.iter()
        .any(|f| f.effect().hook() == hook && subject.hit_by(f.target))
}

/// `t` stretched by `factor` (a `latency_factor` fault), to the nearest tick.
pub(crate) fn scaled(t: Ticks, factor: f64) -> Ticks {
    if factor == 1.0 {
        t
    } else {
        Ticks((t.0 as f64 * factor).round() as u64)
    }
}

/// The effects present in `list`, one bit each (see `Faults::has`).
fn hooks_of(list: &[Fault]) -> u8 {
    list.iter()
        .fold(0, |k, f| k | 1 << (f.effect().hook() as u8))
}

/// Edges are encoded in one `u32`: fault index x 2, + 1 for the end.
pub(crate) fn edge_code(fault: usize, end: bool) -> u32 {
    (fault as u32) * 2 + u32::from(end)
}

/// The edge code of the end of `scenario.warmup_ms` (no fault's: a scenario
/// has far fewer than 2^31 faults), when the server and dependency books start
/// again (see `observe`).
pub(crate) const WARMUP_END: u32 = u32::MAX;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FaultTarget;

    /// A fault of kind `kind` on dependency 0 over `[at, at + len)` ms, with
    /// `value` (left out for `down`).
    fn fault(kind: &str, at: f64, len: f64, value: f64) -> Fault {
        let value = if kind == "down" {
            String::new()
        } else {
            format!("value = {value}")
        };
        let t = format!("kind = \"{kind}\"\nat_ms = {at}\nfor_ms = {len}\n{value}");
        let e = crate::kinds::fault::Entry::read("f", &t.parse().expect("a table"))
            .unwrap_or_else(|e| panic!("{e}"));
        Fault {
            kind: e.kind,
            target: FaultTarget::Dependency {
                dep: 0,
                replica: None,
            },
            at: Ticks::from_ms(at),
            until: Ticks::from_ms(at + len),
        }
    }

    fn faults(list: Vec<Fault>) -> Faults {
        let n = list.len();
        Faults {
            hooks: hooks_of(&list),
            list,
            rngs: (0..n)
                .map(|i| stream(1, 0, &format!("fault:{i}")))
                .collect(),
        }
    }

    const D: Subject = Subject::Dependency { dep: 0, replica: 0 };

    fn at(ms: f64) -> Ticks {
        Ticks::from_ms(ms)
    }

    #[test]
    fn a_window_is_half_open_and_for_ms_zero_never_acts() {
        let f = faults(vec![fault("latency_factor", 100.0, 50.0, 3.0)]);
        assert_eq!(f.latency_factor(D, at(99.999999)), 1.0);
        assert_eq!(
            f.latency_factor(D, at(100.0)),
            3.0,
            "the start tick sees it"
        );
        assert_eq!(f.latency_factor(D, at(149.999999)), 3.0);
        assert_eq!(f.latency_factor(D, at(150.0)), 1.0, "the end tick does not");
        let zero = faults(vec![fault("down", 100.0, 0.0, 0.0)]);
        assert!(!zero.down(D, at(100.0)));
    }

    /// A question about a kind no fault has takes the one-bit answer, the same
    /// as asking the list: no draw, the neutral value.
    #[test]
    fn effects_without_a_fault_answer_neutrally_and_draw_nothing() {
        let mut f = faults(vec![fault("latency_factor", 0.0, 100.0, 3.0)]);
        assert!(f.has(Hook::LatencyFactor));
        for k in [
            Hook::Slots,
            Hook::ErrorRate,
            Hook::Down,
            Hook::ArrivalFactor,
        ] {
            assert!(!f.has(k), "{k:?}");
        }
        let before = f.rngs.clone();
        assert!(!f.fails(D, at(50.0)));
        assert_eq!(f.error_fault(D, at(50.0)), None);
        assert!(!f.down(D, at(50.0)));
        assert_eq!(f.slots(D, at(50.0)), None);
        assert_eq!(f.rngs, before, "no draw");
        assert_eq!(f.latency_factor(D, at(50.0)), 3.0);
        assert!(!faults(Vec::new()).has(Hook::LatencyFactor));
    }

    /// A subject no `latency_factor` fault may act on (a server's
    /// `stretched` flag false, a dependency's stretch skipped) gets factor 1
    /// from the list at every instant, and one a fault may act on gets
    /// another factor at some instant: the flag answers as the list does.
    #[test]
    fn a_subject_no_latency_fault_targets_gets_the_lists_answer() {
        let on = |target, at_ms: f64| Fault {
            target,
            ..fault("latency_factor", at_ms, 100.0, 2.5)
        };
        let list = vec![
            on(
                FaultTarget::Server {
                    service: 0,
                    replica: None,
                },
                0.0,
            ),
            on(
                FaultTarget::Server {
                    service: 1,
                    replica: Some(2),
                },
                50.0,
            ),
            on(
                FaultTarget::Dependency {
                    dep: 1,
                    replica: None,
                },
                200.0,
            ),
            on(
                FaultTarget::Dependency {
                    dep: 0,
                    replica: Some(1),
                },
                300.0,
            ),
            Fault {
                target: FaultTarget::Server {
                    service: 2,
                    replica: None,
                },
                ..fault("slots", 0.0, 100.0, 2.0)
            },
        ];
        let f = faults(list.clone());
        let instants: Vec<Ticks> = (0..=90).map(|k| at(k as f64 * 5.0)).collect();
        let mut subjects = Vec::new();
        for service in 0..4 {
            for replica in 0..4 {
                subjects.push(Subject::Server { service, replica });
            }
        }
        for dep in 0..3 {
            for replica in 0..4 {
                subjects.push(Subject::Dependency { dep, replica });
            }
        }
        let mut stretched = 0;
        for s in subjects {
            let factors: Vec<f64> = instants.iter().map(|&t| f.latency_factor(s, t)).collect();
            if may_act_in(&list, Hook::LatencyFactor, s) {
                stretched += 1;
                assert!(
                    factors.iter().any(|&x| x != 1.0),
                    "{s:?} is stretched at some instant"
                );
            } else {
                assert!(factors.iter().all(|&x| x == 1.0), "{s:?}: {factors:?}");
            }
        }
        // service 0's four replicas, service 1's third, dependency 1's four,
        // dependency 0's second
        assert_eq!(stretched, 10);
    }

    #[test]
    fn factors_multiply_and_slots_and_error_rates_take_the_later_start() {
        let f = faults(vec![
            fault("latency_factor", 0.0, 100.0, 2.0),
            fault("latency_factor", 50.0, 100.0, 3.0),
            fault("slots", 50.0, 100.0, 4.0),
            fault("slots", 0.0, 200.0, 1.0),
            fault("error_rate", 10.0, 100.0, 0.5),
            fault("error_rate", 10.0, 100.0, 0.25),
        ]);
        assert_eq!(f.latency_factor(D, at(25.0)), 2.0);
        assert_eq!(f.latency_factor(D, at(75.0)), 6.0);
        assert_eq!(f.latency_factor(D, at(125.0)), 3.0);
        // the later-starting fault wins though it comes first in the file
        assert_eq!(f.slots(D, at(25.0)), Some(1));
        assert_eq!(f.slots(D, at(75.0)), Some(4));
        assert_eq!(f.slots(D, at(150.0)), Some(1), "back to the earlier one");
        assert_eq!(f.slots(D, at(200.0)), None);
        // same start: the later in the file
        assert_eq!(
            f.latest(Hook::ErrorRate, D, at(50.0))
                .map(|(_, f)| f.value()),
            Some(0.25)
        );
        // other targets see nothing
        let other = Subject::Dependency { dep: 1, replica: 0 };
        assert_eq!(f.latency_factor(other, at(75.0)), 1.0);
        assert_eq!(f.slots(other, at(75.0)), None);
    }

    #[test]
    fn error_draws_follow_the_rate_and_need_an_acting_fault() {
        let mut f = faults(vec![fault("error_rate", 0.0, 1000.0, 0.3)]);
        let n = 20_000;
        let failed = (0..n).filter(|_| f.fails(D, at(5.0))).count();
        let share = failed as f64 / n as f64;
        assert!((share - 0.3).abs() < 0.02, "share {share}");
        let mut none = faults(vec![fault("error_rate", 0.0, 1000.0, 1.0)]);
        assert!(!none.fails(D, at(1000.0)), "after the window");
        assert!(none.fails(D, at(0.0)));
    }

    #[test]
    fn replica_faults_hit_one_replica_and_service_faults_all() {
        let one = FaultTarget::Server {
            service: 2,
            replica: Some(1),
        };
        let all = FaultTarget::Server {
            service: 2,
            replica: None,
        };
        let r = |replica| Subject::Server {
            service: 2,
            replica,
        };
        assert!(r(1).hit_by(one) && !r(0).hit_by(one));
        assert!(r(0).hit_by(all) && r(3).hit_by(all));
        assert!(!Subject::Dependency { dep: 2, replica: 0 }.hit_by(all));
        let dep_one = FaultTarget::Dependency {
            dep: 2,
            replica: Some(1),
        };
        let d = |replica| Subject::Dependency { dep: 2, replica };
        assert!(d(1).hit_by(dep_one) && !d(0).hit_by(dep_one));
        assert!(
            !r(1).hit_by(dep_one),
            "a server's replica is not a dependency's"
        );
    }

    /// A plan calling store `store` (the given keys), requests every `gap_ms`
    /// (`n` of them, from t = 0), and one fault on the store.
    fn store_run(store: &str, gap_ms: f64, n: u32, fault: &str) -> crate::sim::result::RunResult {
        let text = format!(
            "[scenario]\nname = \"t\"\n[services.api]\nroutes = [\"/a\"]\n\
             [services.api.handler]\ntype = \"plan\"\nbudget = \"none\"\n\
             branches = [ {{ name = \"b\", calls = [\"store\"] }} ]\n\
             [dependencies.store]\n{store}\n\
             [workload]\ntype = \"open\"\narrivals = \"uniform\"\nrate_rps = {}\nrequests = {n}\n\
             [[faults]]\ntarget = \"store\"\n{fault}\n",
            1000.0 / gap_ms
        );
        let s = crate::scenario::load_str(
            &text,
            std::path::Path::new("t.toml"),
            &crate::scenario::LoadOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        crate::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_down_dependency_fails_calls_at_its_first_tick_and_not_at_its_end_tick() {
        // calls at 0, 100, 200, 300; down over [100, 200)
        let r = store_run(
            "slots = 1\nlatency = { constant = 10 }",
            100.0,
            4,
            "kind = \"down\"\nat_ms = 100\nfor_ms = 100",
        );
        assert_eq!((r.outcomes.answered, r.outcomes.dropped), (3, 1));
        assert_eq!(r.dependencies[0].failed, 1);
        assert_eq!(
            r.dependencies[0].work_started, 3,
            "the failed call never worked"
        );
    }

    #[test]
    fn a_down_dependency_fails_its_running_and_waiting_calls_at_the_start() {
        // 0-50 running, 10 and 20 waiting (1 slot) when it goes down at 30
        let r = store_run(
            "slots = 1\nlatency = { constant = 50 }",
            10.0,
            3,
            "kind = \"down\"\nat_ms = 30\nfor_ms = 5",
        );
        assert_eq!((r.outcomes.answered, r.outcomes.dropped), (0, 3));
        assert_eq!(r.last_exit_ms, 30.0);
        assert_eq!(
            r.dependencies[0].work_ms, 30.0,
            "the running call worked 0-30"
        );
    }

    #[test]
    fn dependency_slots_latency_and_errors_follow_their_windows() {
        // no slot at all until 100: the call at 0 waits, then takes 10 ms
        let r = store_run(
            "latency = { constant = 10 }",
            1000.0,
            1,
            "kind = \"slots\"\nat_ms = 0\nfor_ms = 100\nvalue = 0",
        );
        let mut resp = r.response.clone();
        assert_eq!(resp.quantile_ms(1.0), 110.0);
        // twice as slow for work starting in [0, 50): the call at 0, not at 50
        let r = store_run(
            "latency = { constant = 10 }",
            50.0,
            2,
            "kind = \"latency_factor\"\nat_ms = 0\nfor_ms = 50\nvalue = 2",
        );
        let mut resp = r.response.clone();
        assert_eq!((resp.quantile_ms(0.0), resp.quantile_ms(1.0)), (10.0, 20.0));
        // every call ending in [0, 50) fails after its latency: the call at 0
        let r = store_run(
            "latency = { constant = 10 }",
            50.0,
            2,
            "kind = \"error_rate\"\nat_ms = 0\nfor_ms = 50\nvalue = 1",
        );
        assert_eq!((r.outcomes.answered, r.outcomes.dropped), (1, 1));
        assert_eq!(r.dependencies[0].failed, 1);
        let mut resp = r.response.clone();
        assert_eq!(resp.quantile_ms(1.0), 10.0, "failed after its latency");
    }
}
