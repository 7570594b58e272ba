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
//!
//! The dependencies know nothing of the world: they say whether a call takes a
//! slot and what its end frees. A step is lent the clock and the queue
//! (`Timers`) to set and cancel their own events (a completion, a pause's
//! edges) and reads the faults it needs; the world gives the notes and
//! answers the call (`world/dependency.rs`).

use super::ahead::Draws;
use super::context::Timers;
use super::dependency_replicas::{DependencyReplicaStats, Replication};
use super::faults::{Faults, Subject, dependency_pause_code, scaled};
use super::latency::Sampler;
use super::notes::Over;
use super::pauses::{self, Pauses};
use super::server::stats::EjectionRow;
use super::slots::{Admit, SlotQueue};
use super::vocab::{CallId, Event};
use crate::engine::{EventKey, Stream, Ticks, stream};
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
    /// Its stop-the-world pauses (`pause` faults), if any.
    pauses: Option<Box<Pauses>>,
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
            let subject = Subject::Dependency { dep, replica };
            let label = format!("{}#{}", d.name, replica + 1);
            DependencyState {
                dep,
                replica,
                slots: d.slots,
                draws: Draws::here(Sampler::new(&d.latency, &mut rng), rng),
                line: SlotQueue::new(d.slots, None),
                busy_average: TimeAverage::default(),
                pauses: pauses::of(model, replication, subject, &label),
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

/// A call's work that has left its instance ([`Dependencies::end`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ended {
    pub(super) dep: DependencyId,
    pub(super) inst: usize,
    /// When the work started.
    pub(super) start: Ticks,
    /// The waiting call that took the freed slot, if any: its work starts now.
    pub(super) next: Option<CallId>,
}

impl Dependencies {
    /// Room in the work books for call `call`.
    #[inline(always)]
    pub(super) fn ensure(&mut self, call: CallId) {
        if self.work.len() <= call as usize {
            self.grow(call);
        }
    }

    /// Whether some dependency has replicas.
    #[inline(always)]
    pub(super) fn is_replicated(&self) -> bool {
        self.replicated.is_some()
    }

    /// The dependency instance `inst` is one of, and which of its replicas
    /// (0-based).
    pub(super) fn replica_of(&self, inst: usize) -> (DependencyId, u32) {
        (self.deps[inst].dep, self.deps[inst].replica)
    }

    /// Instance `inst`'s calls at work and waiting now.
    pub(super) fn instance_levels(&self, inst: usize) -> (u32, u32) {
        let d = &self.deps[inst];
        (d.busy_average.level() as u32, d.line.waiting() as u32)
    }

    /// The dependency instance `inst` is one of.
    pub(super) fn dependency_of(&self, inst: usize) -> DependencyId {
        self.deps[inst].dep
    }

    /// What faults name instance `inst` as.
    #[inline]
    pub(super) fn subject(&self, inst: usize) -> Subject {
        self.deps[inst].subject()
    }

    /// Call `call` to `dep` comes to instance `inst`: true if it takes a slot
    /// now, false if it waits in the instance's line.
    #[inline(always)]
    pub(super) fn enter(&mut self, dep: DependencyId, inst: usize, call: CallId) -> bool {
        let line = &mut self.deps[inst].line;
        if line.admit() == Admit::Start {
            line.start();
            return true;
        }
        line.wait(call);
        // not started: a cancel takes it out of its instance's line
        self.work[call as usize] = Work {
            dep: dep as u32,
            inst: inst as u32,
            start: None,
            done_key: None,
        };
        false
    }

    /// `dep`'s calls at work and waiting now (its replicas' together).
    pub(super) fn levels(&self, dep: DependencyId) -> (u64, u64) {
        let d = &self.deps[dep];
        let (mut busy, mut waiting) = (d.busy_average.level(), d.line.waiting() as u64);
        if self.replicated.is_some() {
            for i in self.instances(dep).skip(1) {
                let d = &self.deps[i];
                busy += d.busy_average.level();
                waiting += d.line.waiting() as u64;
            }
        }
        (busy, waiting)
    }

    /// Instance `inst` starts a call's work at `now`: its latency, drawn.
    #[inline(always)]
    pub(super) fn begin(&mut self, inst: usize, now: Ticks) -> Ticks {
        let d = &mut self.deps[inst];
        d.busy_average.add(now, 1);
        d.draws.sample()
    }

    /// `latency` stretched by the `latency_factor` faults acting on instance
    /// `inst` now, then the `latency_add` faults' time added, then the
    /// instance's pauses in its way waited out (asked off the plain path).
    #[cold]
    #[inline(never)]
    pub(super) fn stretch(
        &mut self,
        faults: &Faults,
        inst: usize,
        now: Ticks,
        latency: Ticks,
    ) -> Ticks {
        let d = &mut self.deps[inst];
        let subject = d.subject();
        let work =
            scaled(latency, faults.latency_factor(subject, now)) + faults.latency_add(subject, now);
        match d.pauses.as_mut() {
            Some(p) => p.finish(now, work) - now,
            None => work,
        }
    }

    /// Call `call`'s work on instance `inst` of `dep` started now and is
    /// done at `done`, unless its caller cancels it at `cancelled_at`. Its
    /// completion is an event: none when it would come after the cancel
    /// (which ends the work), posted for good when nothing in the model
    /// stops work, else scheduled with its key kept.
    #[inline(always)]
    pub(super) fn working(
        &mut self,
        t: &mut Timers,
        call: CallId,
        dep: DependencyId,
        inst: usize,
        done: Ticks,
        cancelled_at: Option<Ticks>,
    ) {
        let now = t.now();
        let key = if cancelled_at.is_some_and(|c| done > c) {
            None
        } else if self.cancellable {
            Some(t.at(done, Event::DependencyDone(call)))
        } else {
            t.post(done, Event::DependencyDone(call));
            None
        };
        self.work[call as usize] = Work {
            dep: dep as u32,
            inst: inst as u32,
            start: Some(now),
            done_key: key,
        };
    }

    /// The instance doing call `call`'s work, and when it started (None: it
    /// waits for a slot).
    #[inline(always)]
    pub(super) fn work_of(&self, call: CallId) -> (usize, Option<Ticks>) {
        let w = &self.work[call as usize];
        (w.inst as usize, w.start)
    }

    /// The pending completion of call `call`'s work, if any, is cancelled
    /// (its work stops).
    #[inline]
    pub(super) fn stop_completion(&self, t: &mut Timers, call: CallId) {
        t.cancel(self.work[call as usize].done_key);
    }

    /// Whether call `call`'s work, done now, succeeds by its dependency's own
    /// `error_rate` (a draw from its stream; none without one).
    #[inline(always)]
    pub(super) fn own_error_passes(&mut self, call: CallId) -> bool {
        let dep = self.work[call as usize].dep;
        match self.errors.get_mut(dep as usize) {
            Some(Some((rate, rng))) => rng.random::<f64>() >= *rate,
            _ => true,
        }
    }

    /// The instance stops working on call `call` at `now` (done or stopped)
    /// and a waiting call takes the slot.
    #[inline(always)]
    pub(super) fn end(&mut self, call: CallId, now: Ticks) -> Ended {
        let w = &mut self.work[call as usize];
        w.done_key = None;
        let start = w.start.take().unwrap_or(now);
        let (dep, inst) = (w.dep as usize, w.inst as usize);
        let d = &mut self.deps[inst];
        d.busy_average.add(now, -1);
        let next = d.line.release();
        Ended {
            dep,
            inst,
            start,
            next,
        }
    }

    /// Posts the first pause of every instance with pauses.
    pub(super) fn first_pauses(&mut self, t: &mut Timers) {
        for (inst, at) in pauses::firsts(self.deps.iter_mut().map(|d| d.pauses.as_mut())) {
            t.post(at, Event::FaultEdge(dependency_pause_code(inst, false)));
        }
    }

    /// A pause of instance `inst` starts (nothing starts until its end, which
    /// is posted; None) or ends now (the slots are back, as a `slots` fault
    /// may set them, the waiting calls they let in start, counted, and the
    /// next pause is posted).
    #[cold]
    #[inline(never)]
    pub(super) fn pause_edge(
        &mut self,
        t: &mut Timers,
        faults: &Faults,
        inst: usize,
        end: bool,
    ) -> Option<u32> {
        let now = t.now();
        if !end {
            let d = &mut self.deps[inst];
            d.line.set_limit(0);
            let until = d.pauses.as_mut().expect("a pause edge").starts(now);
            t.post(until, Event::FaultEdge(dependency_pause_code(inst, true)));
            return None;
        }
        let started = self.slots_now(t, faults, inst);
        if let Some(next) = self.deps[inst].pauses.as_mut().and_then(|p| p.ended(now)) {
            t.post(next, Event::FaultEdge(dependency_pause_code(inst, false)));
        }
        Some(started)
    }

    /// A `slots` fault on `dep` (or one of its replicas) started or ended:
    /// each instance with the calls its slots let start now.
    #[cold]
    #[inline(never)]
    pub(super) fn slots_changed(
        &mut self,
        t: &mut Timers,
        faults: &Faults,
        dep: DependencyId,
    ) -> Vec<(usize, u32)> {
        let instances = self.instances(dep);
        instances
            .map(|inst| (inst, self.slots_now(t, faults, inst)))
            .collect()
    }

    /// Instance `inst` takes the slots the faults give it now (none while a
    /// pause holds it), and the waiting calls they let in start: how many.
    fn slots_now(&mut self, t: &mut Timers, faults: &Faults, inst: usize) -> u32 {
        let now = t.now();
        let d = &mut self.deps[inst];
        let paused = (d.pauses.as_mut()).is_some_and(|p| p.holding(now).is_some());
        match if paused {
            Some(0)
        } else {
            faults.slots(d.subject(), now)
        } {
            Some(n) => d.line.set_limit(n),
            None => d.line.reset_limit(d.slots),
        }
        let dep = d.dep;
        let mut started = 0;
        while let Some(call) = self.deps[inst].line.next() {
            let latency = self.begin(inst, now);
            let done = now + self.stretch(faults, inst, now, latency);
            self.working(t, call, dep, inst, done, None);
            started += 1;
        }
        started
    }

    /// Whether a `down` fault acts on instance `inst` now.
    pub(super) fn down(&self, faults: &Faults, inst: usize, now: Ticks) -> bool {
        faults.down(self.deps[inst].subject(), now)
    }

    /// Every call waiting at instance `inst`, taken out of its line.
    pub(super) fn drain(&mut self, inst: usize) -> Vec<CallId> {
        self.deps[inst].line.drain()
    }

    /// The calls instance `inst` is working on.
    pub(super) fn running_on(&self, inst: usize) -> Vec<CallId> {
        (0..self.work.len() as CallId)
            .filter(|&c| {
                let w = &self.work[c as usize];
                w.inst as usize == inst && w.start.is_some()
            })
            .collect()
    }

    /// The instances of `dep`: its own, then those of its replicas 2 to N.
    pub(super) fn instances(&self, dep: DependencyId) -> impl Iterator<Item = usize> + use<> {
        let extra = self.replicated.as_ref().map_or(0..0, |r| r.extra(dep));
        std::iter::once(dep).chain(extra)
    }

    /// Whether `dep` has replicas (a balancer picks one per call).
    pub(super) fn has_replicas(&self, dep: DependencyId) -> bool {
        self.replicated.as_ref().is_some_and(|r| r.has(dep))
    }

    /// Whether `dep`'s balancer picks by the caller (the caller view): then
    /// [`Dependencies::pick`] needs the caller's key.
    pub(super) fn picks_by_caller(&self, dep: DependencyId) -> bool {
        self.replicated.as_ref().is_some_and(|r| r.by_caller(dep))
    }

    /// The replica of `dep` its balancer picks at `now` for the call about to
    /// be made (by the caller with key `key`, in the caller view; otherwise
    /// from the replicas' calls at work and waiting), kept for the call: its
    /// instance.
    pub(super) fn pick(
        &mut self,
        model: &Model,
        dep: DependencyId,
        key: Option<u64>,
        now: Ticks,
    ) -> usize {
        let (replicated, outstanding) = self.replicas_and_load();
        match replicated {
            Some(r) => r.pick(model, dep, key, now, outstanding),
            None => dep,
        }
    }

    /// The replica picked for the call about to be made to `dep` is down: the
    /// call is over for its caller `now`.
    pub(super) fn refused(&mut self, dep: DependencyId, now: Ticks) {
        if let Some(r) = self.replicated.as_mut() {
            r.refused(dep, now);
        }
    }

    /// The instance picked for call `call` to `dep` as it was made, kept
    /// until the call is over for its caller (`dep` itself without replicas).
    pub(super) fn picked(&mut self, dep: DependencyId, call: CallId) -> usize {
        (self.replicated.as_mut())
            .and_then(|r| r.picked(dep, call))
            .unwrap_or(dep)
    }

    /// Call `call` is over for its caller (`how`) at `now`: if it went to a
    /// replica, the replica's row counts how, and its balancer hears it.
    pub(super) fn pick_over(&mut self, call: CallId, how: Over, now: Ticks) {
        if let Some(r) = self.replicated.as_mut() {
            r.pick_over(call, how, now);
        }
    }

    /// Instance `inst` worked `worked` on a call (done or stopped).
    pub(super) fn worked(&mut self, inst: usize, worked: Ticks) {
        let d = &self.deps[inst];
        let (dep, replica) = (d.dep, d.replica as usize);
        if let Some(r) = self.replicated.as_mut() {
            r.worked(dep, replica, worked);
        }
    }

    /// A call to `dep` was made with no time left: it reaches no replica.
    pub(super) fn no_time(&mut self, dep: DependencyId) {
        if let Some(r) = self.replicated.as_mut() {
            r.no_time(dep);
        }
    }

    /// The caller cancels call `call` to `dep`: running work has its pending
    /// completion cancelled (true: the work is to end), waiting work leaves
    /// its line (false).
    pub(super) fn cancel(&mut self, t: &mut Timers, dep: DependencyId, call: CallId) -> bool {
        let w = self.work[call as usize];
        debug_assert!(
            self.cancellable,
            "work stopped in a model that cancels none"
        );
        if w.start.is_some() {
            t.cancel(w.done_key);
            return true;
        }
        // (a waiting call's instance is kept only with replicas)
        let inst = if self.replicated.is_some() {
            w.inst as usize
        } else {
            dep
        };
        self.deps[inst].line.leave(|&c| c == call);
        false
    }
}
