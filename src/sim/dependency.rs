//! Dependency actor: a store or backend that calls wait on. It works on up to
//! `slots` calls at once (0 = unlimited) and queues the rest FIFO. Its work goes on
//! after the caller gives up unless the caller cancels it. It answers through
//! [`call`](super::call): `call_answered` when the work is done.
//!
//! With `replicas = N` a dependency has N instances, each with its own slots,
//! line, latency stream (`dependency:NAME` for the first, `dependency:NAME#i`
//! for i > 1) and faults (`NAME#i`); a balancer picks one per call
//! ([`super::dependency_replicas`]). The instances of replica 1 come first, one
//! per dependency at the dependency's own index, so a dependency with one
//! instance is reached exactly as before.

use super::ahead::Draws;
use super::dependency_replicas::{DependencyReplicaStats, Replication};
use super::faults::{Subject, scaled};
use super::latency::Sampler;
use super::notes::Note;
use super::server::stats::EjectionRow;
use super::slots::{Admit, SlotQueue};
use super::vocab::{CallId, Event, World};
use crate::engine::{EventKey, Lane, Stream, Ticks, stream};
use crate::metrics::TimeAverage;
use crate::model::{DependencyId, Model};
use rand::RngExt;

pub(super) struct DependencyState {
    /// The dependency, and which of its replicas this instance is (0-based).
    pub(super) dep: DependencyId,
    pub(super) replica: u32,
    /// Its own `slots` (0 = unlimited), restored when a `slots` fault ends.
    slots: u32,
    /// Its latencies.
    draws: Draws,
    /// `slots` calls at once (0 = unlimited), the rest wait without bound.
    pub(super) line: SlotQueue<CallId>,
    /// Calls being worked on, over time (abandoned work included).
    pub(super) busy_average: TimeAverage,
}

impl DependencyState {
    /// What faults name this instance as.
    #[inline]
    pub(super) fn subject(&self) -> Subject {
        Subject::Dependency {
            dep: self.dep,
            replica: self.replica,
        }
    }
}

/// The work of one call at its dependency.
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    dep: u32,
    /// The instance (`Dependencies::deps`) doing it.
    inst: u32,
    /// When the work started (None: still waiting for a slot).
    start: Option<Ticks>,
    done_key: Option<EventKey>,
}

/// Every dependency of a run, and the work of each call, by call id.
pub(crate) struct Dependencies {
    /// Every instance: replica 1 of each dependency at the dependency's index,
    /// then the further replicas.
    pub(super) deps: Vec<DependencyState>,
    /// Per dependency, `error_rate` and its own stream (None when 0: nothing is
    /// drawn); empty when no dependency fails calls.
    errors: Vec<Option<(f64, Stream)>>,
    work: Vec<Work>,
    /// Whether a call's work may be stopped (`Model::cancels_work`): then each
    /// pending completion keeps a key to cancel it by; otherwise it is posted
    /// (no payload slot to fill and free).
    cancellable: bool,
    /// The balancers and per-replica books of the replicated dependencies
    /// (None when every dependency has one instance).
    pub(super) replicated: Option<Box<Replication>>,
}

impl Dependencies {
    /// The replicated dependencies' books (None: every dependency has one
    /// instance), beside each instance's calls at work and waiting, by its
    /// index: what a global view's balancer reads.
    pub(super) fn replicas_and_load(
        &mut self,
    ) -> (Option<&mut Replication>, impl Fn(usize) -> u32 + '_) {
        let deps = &self.deps;
        let outstanding =
            move |i: usize| (deps[i].busy_average.level() + deps[i].line.waiting() as u64) as u32;
        (self.replicated.as_deref_mut(), outstanding)
    }

    /// Per dependency, its replicas' books at the end of the run (`end`),
    /// time averages scaled by `scale` (the warm-up's), its calls made with
    /// no time left, and its ejections (None without `outlier_detection`);
    /// None without replicated dependencies.
    #[allow(clippy::type_complexity)]
    pub fn replica_books(
        &mut self,
        end: Ticks,
        scale: f64,
    ) -> Option<Vec<(Vec<DependencyReplicaStats>, u64, Option<Vec<EjectionRow>>)>> {
        let r = self.replicated.as_mut()?;
        let busy = self
            .deps
            .iter()
            .map(|d| (d.dep, d.replica as usize, d.busy_average.mean(end) * scale));
        Some(r.books(busy, end))
    }

    /// Room for `more` calls in the work books and every line, made now (see
    /// `World::reserve_ahead`).
    pub fn reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        for d in &mut self.deps {
            d.line.reserve(more.min(d.line.waiting() + 1))?;
        }
        self.work.try_reserve(more)
    }

    /// Every dependency's latencies, for drawing ahead.
    pub fn draws(&mut self) -> impl Iterator<Item = &mut Draws> {
        self.deps.iter_mut().map(|d| &mut d.draws)
    }

    pub fn new(model: &Model, replication: u64) -> Dependencies {
        let instance = |dep: DependencyId, replica: u32| {
            let d = &model.dependencies[dep];
            let name = if replica == 0 {
                format!("dependency:{}", d.name)
            } else {
                format!("dependency:{}#{}", d.name, replica + 1)
            };
            let mut rng = stream(model.seed, replication, &name);
            DependencyState {
                dep,
                replica,
                slots: d.slots,
                draws: Draws::here(Sampler::new(&d.latency, &mut rng), rng),
                line: SlotQueue::new(d.slots, None),
                busy_average: TimeAverage::default(),
            }
        };
        let mut deps: Vec<DependencyState> = (0..model.dependencies.len())
            .map(|dep| instance(dep, 0))
            .collect();
        let replicated = Replication::new(model, replication, |dep, replica| {
            deps.push(instance(dep, replica));
            deps.len() - 1
        });
        let errors = if model.dependencies.iter().any(|d| d.error_rate > 0.0) {
            model
                .dependencies
                .iter()
                .map(|d| {
                    (d.error_rate > 0.0).then(|| {
                        let name = format!("dependency:{}:errors", d.name);
                        (d.error_rate, stream(model.seed, replication, &name))
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        Dependencies {
            deps,
            errors,
            work: Vec::new(),
            cancellable: model.cancels_work(),
            replicated,
        }
    }

    /// Room for the work of call `call`.
    #[cold]
    fn grow(&mut self, call: CallId) {
        self.work.resize(call as usize + 1, Work::default());
    }

    /// Time-average calls worked on, per dependency, until `end`.
    /// The warm-up is over (now): busy time is averaged from here on (the
    /// observers rescale the mean to the part after the warm-up).
    pub fn restart(&mut self, now: Ticks) {
        for d in &mut self.deps {
            d.busy_average = d.busy_average.restarted(now);
        }
        if let Some(r) = self.replicated.as_mut() {
            r.restart(now);
        }
    }

    /// Per dependency, the time-average calls worked on until `end` (its
    /// replicas' together).
    pub fn finish(&self, end: Ticks, dependencies: usize) -> Vec<f64> {
        let mut busy = vec![0.0; dependencies];
        for d in &self.deps {
            busy[d.dep] += d.busy_average.mean(end);
        }
        busy
    }
}

impl World<'_> {
    /// A call asks dependency `dep` for work. Returns when the work will be done if
    /// it started at once (None: it waits for a slot). `cancelled_at`: the caller
    /// will cancel the work then if it is not done (see `dependency_begin`).
    #[inline(always)]
    pub(super) fn dependency_request(
        &mut self,
        dep: DependencyId,
        call: CallId,
        cancelled_at: Option<Ticks>,
    ) -> Option<Ticks> {
        if self.dependencies.work.len() <= call as usize {
            self.dependencies.grow(call);
        }
        // replicas make a run not plain: the plain path is the one instance
        if !self.plain() && self.dependencies.replicated.is_some() {
            return self.dependency_request_replica(dep, call, cancelled_at);
        }
        let line = &mut self.dependencies.deps[dep].line;
        let done = if line.admit() == Admit::Start {
            line.start();
            Some(self.dependency_begin(dep, call, cancelled_at))
        } else {
            line.wait(call);
            // not started: a cancel takes it out of the line
            self.dependencies.work[call as usize].start = None;
            None
        };
        if !self.plain() {
            self.dependency_levels(dep);
        }
        done
    }

    /// [`World::dependency_request`] in a run with replicated dependencies:
    /// the call goes to the instance picked for it as it was made.
    #[inline(never)]
    fn dependency_request_replica(
        &mut self,
        dep: DependencyId,
        call: CallId,
        cancelled_at: Option<Ticks>,
    ) -> Option<Ticks> {
        let inst = self.dependency_picked(dep, call);
        let line = &mut self.dependencies.deps[inst].line;
        let done = if line.admit() == Admit::Start {
            line.start();
            Some(self.dependency_start(dep, inst, call, cancelled_at))
        } else {
            line.wait(call);
            // not started: a cancel takes it out of its instance's line
            self.dependencies.work[call as usize] = Work {
                dep: dep as u32,
                inst: inst as u32,
                start: None,
                done_key: None,
            };
            None
        };
        self.dependency_levels(dep);
        done
    }

    /// The time series sees `dep`'s calls at work and waiting now (its
    /// replicas' together).
    #[cold]
    #[inline(never)]
    fn dependency_levels(&mut self, dep: DependencyId) {
        let d = &self.dependencies.deps[dep];
        let (mut busy, mut waiting) = (d.busy_average.level(), d.line.waiting() as u64);
        if self.dependencies.replicated.is_some() {
            for i in self.dependency_instances(dep).skip(1) {
                let d = &self.dependencies.deps[i];
                busy += d.busy_average.level();
                waiting += d.line.waiting() as u64;
            }
        }
        self.note(Note::DependencyLevels { dep, busy, waiting });
    }

    /// Starts the work of a call that has taken a slot; returns when it will be
    /// done. A completion that comes after `cancelled_at` would be cancelled before
    /// it runs, so it is not scheduled (the cancel ends the work).
    #[inline]
    fn dependency_begin(
        &mut self,
        dep: DependencyId,
        call: CallId,
        cancelled_at: Option<Ticks>,
    ) -> Ticks {
        self.dependency_begin_on(dep, dep, call, cancelled_at)
    }

    /// [`World::dependency_begin`] on instance `inst` of `dep`: kept apart
    /// so that the one-instance path holds no second index.
    #[inline(never)]
    fn dependency_begin_replica(
        &mut self,
        dep: DependencyId,
        inst: usize,
        call: CallId,
        cancelled_at: Option<Ticks>,
    ) -> Ticks {
        self.dependency_begin_on(dep, inst, call, cancelled_at)
    }

    /// Starts the work of a call on instance `inst` of `dep`.
    #[inline]
    fn dependency_start(
        &mut self,
        dep: DependencyId,
        inst: usize,
        call: CallId,
        cancelled_at: Option<Ticks>,
    ) -> Ticks {
        if inst == dep {
            self.dependency_begin(dep, call, cancelled_at)
        } else {
            self.dependency_begin_replica(dep, inst, call, cancelled_at)
        }
    }

    #[inline(always)]
    fn dependency_begin_on(
        &mut self,
        dep: DependencyId,
        inst: usize,
        call: CallId,
        cancelled_at: Option<Ticks>,
    ) -> Ticks {
        let now = self.now();
        let d = &mut self.dependencies.deps[inst];
        d.busy_average.add(now, 1);
        let mut latency = d.draws.sample();
        if !self.plain() {
            latency = self.dependency_stretch(inst, latency);
        }
        self.note(Note::WorkStarted { dep });
        let done = now + latency;
        let key = if cancelled_at.is_some_and(|c| done > c) {
            None
        } else if self.dependencies.cancellable {
            Some(self.schedule(done, Lane::Normal, Event::DependencyDone(call)))
        } else {
            self.post(done, Lane::Normal, Event::DependencyDone(call));
            None
        };
        self.dependencies.work[call as usize] = Work {
            dep: dep as u32,
            inst: inst as u32,
            start: Some(now),
            done_key: key,
        };
        done
    }

    /// The work of `call` is done: the dependency takes its next waiting call, then
    /// the answer goes back.
    pub(super) fn dependency_done(&mut self, call: CallId) {
        let w = self.dependencies.work[call as usize];
        let work_start = w.start.unwrap_or(self.now());
        // an `error_rate` fault acting now replaces the dependency's own rate
        let fault = if self.plain() {
            None
        } else {
            self.dependency_fault_fails(w.inst as usize)
        };
        let ok = match fault {
            Some(fails) => !fails,
            None => match self.dependencies.errors.get_mut(w.dep as usize) {
                Some(Some((rate, rng))) => rng.random::<f64>() >= *rate,
                _ => true,
            },
        };
        self.dependency_end(call);
        self.call_answered(call, work_start, ok);
    }

    /// `latency` stretched by the `latency_factor` faults acting on instance
    /// `inst` now.
    #[cold]
    #[inline(never)]
    fn dependency_stretch(&self, inst: usize, latency: Ticks) -> Ticks {
        let subject = self.dependencies.deps[inst].subject();
        scaled(latency, self.fault_latency_factor(subject))
    }

    /// With an `error_rate` fault acting on instance `inst` now: whether it
    /// fails the call finishing now (it replaces the dependency's own
    /// `error_rate` meanwhile).
    #[cold]
    #[inline(never)]
    fn dependency_fault_fails(&mut self, inst: usize) -> Option<bool> {
        let subject = self.dependencies.deps[inst].subject();
        self.fault_error(subject)
    }

    /// Whether a `down` fault acts on instance `inst` now.
    pub(super) fn dependency_instance_down(&self, inst: usize) -> bool {
        self.fault_down(self.dependencies.deps[inst].subject())
    }

    /// A `slots` fault on `dep` (or one of its replicas) started or ended:
    /// each instance's limit now, and the waiting calls it lets in start.
    pub(super) fn dependency_slots_changed(&mut self, dep: DependencyId) {
        for inst in self.dependency_instances(dep) {
            let limit = self.fault_slots(self.dependencies.deps[inst].subject());
            let d = &mut self.dependencies.deps[inst];
            match limit {
                Some(n) => d.line.set_limit(n),
                None => d.line.reset_limit(d.slots),
            }
            while let Some(call) = self.dependencies.deps[inst].line.next() {
                self.dependency_start(dep, inst, call, None);
            }
        }
        self.dependency_levels(dep);
    }

    /// A `down` fault on `dep` (or one of its replicas) starts: every waiting
    /// and running call of each instance it hits fails now.
    pub(super) fn dependency_down(&mut self, dep: DependencyId) {
        let now = self.now();
        for inst in self.dependency_instances(dep) {
            if !self.dependency_instance_down(inst) {
                continue;
            }
            let waiting = self.dependencies.deps[inst].line.drain();
            self.dependency_levels(dep);
            for call in waiting {
                self.call_failed_by_fault(call, now);
            }
            let running: Vec<CallId> = (0..self.dependencies.work.len() as CallId)
                .filter(|&c| {
                    let w = &self.dependencies.work[c as usize];
                    w.inst as usize == inst && w.start.is_some()
                })
                .collect();
            for call in running {
                let w = self.dependencies.work[call as usize];
                if let Some(key) = w.done_key {
                    self.cancel(key);
                }
                let work_start = w.start.unwrap_or(now);
                self.dependency_end(call);
                self.call_failed_by_fault(call, work_start);
            }
        }
    }

    /// The dependency stops working on a call (finished or cancelled) and takes the
    /// next waiting one. (Inlined: once per call on the answer's path.)
    #[inline(always)]
    fn dependency_end(&mut self, call: CallId) {
        let now = self.now();
        let w = &mut self.dependencies.work[call as usize];
        w.done_key = None;
        let start = w.start.take().unwrap_or(now);
        let (dep, inst) = (w.dep as usize, w.inst as usize);
        let d = &mut self.dependencies.deps[inst];
        d.busy_average.add(now, -1);
        self.note(Note::WorkEnded { call, dep, start });
        if let Some(next) = self.dependencies.deps[inst].line.release() {
            self.dependency_start(dep, inst, next, None);
        }
        if !self.plain() {
            if self.dependencies.replicated.is_some() {
                self.dependency_worked(inst, now - start);
            }
            self.dependency_levels(dep);
        }
    }

    /// The caller cancels a call: pending work is removed from the queue, running
    /// work stops now.
    pub(super) fn dependency_cancel(&mut self, dep: DependencyId, call: CallId) {
        let w = self.dependencies.work[call as usize];
        debug_assert!(
            self.dependencies.cancellable,
            "work stopped in a model that cancels none"
        );
        if w.start.is_some() {
            if let Some(key) = w.done_key {
                self.cancel(key);
            }
            self.dependency_end(call);
        } else {
            // (a waiting call's instance is kept only with replicas)
            let inst = if self.dependencies.replicated.is_some() {
                w.inst as usize
            } else {
                dep
            };
            self.dependencies.deps[inst].line.leave(|&c| c == call);
            self.dependency_levels(dep);
        }
    }
}
