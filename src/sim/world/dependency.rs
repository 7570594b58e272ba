//! The dependencies put to the run: the only way to [`Dependencies`], whose
//! state the world keeps private. A call asks a dependency for work; the
//! dependency says whether it starts and sets its completion (the world lends
//! it the clock, the queue and the faults), and the world answers the call
//! and gives the notes.

use super::super::context::Timers;
use super::super::notes::{Note, Over};
use super::super::timeseries::AtReplica;
use super::super::vocab::{CallId, Caller};
use super::World;
use crate::engine::Ticks;
use crate::model::DependencyId;

impl World<'_> {
    /// A call asks dependency `dep` for work. Returns when the work will be done if
    /// it started at once (None: it waits for a slot). `cancelled_at`: the caller
    /// will cancel the work then if it is not done (see `dependency_begin`).
    #[inline(always)]
    pub(in crate::sim) fn dependency_request(
        &mut self,
        dep: DependencyId,
        call: CallId,
        cancelled_at: Option<Ticks>,
    ) -> Option<Ticks> {
        self.dependencies.ensure(call);
        // replicas make a run not plain: the plain path is the one instance
        if !self.plain() && self.dependencies.is_replicated() {
            return self.dependency_request_replica(dep, call, cancelled_at);
        }
        let done = if self.dependencies.enter(dep, dep, call) {
            Some(self.dependency_begin(dep, call, cancelled_at))
        } else {
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
        let inst = self.dependencies.picked(dep, call);
        let done = if self.dependencies.enter(dep, inst, call) {
            Some(self.dependency_start(dep, inst, call, cancelled_at))
        } else {
            None
        };
        self.dependency_levels(dep);
        if self.dependencies.has_replicas(dep) {
            self.dependency_replica_levels(inst);
        }
        done
    }

    /// The time series sees `dep`'s calls at work and waiting now (its
    /// replicas' together).
    #[cold]
    #[inline(never)]
    fn dependency_levels(&mut self, dep: DependencyId) {
        let (busy, waiting) = self.dependencies.levels(dep);
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
        let mut latency = self.dependencies.begin(inst, now);
        if !self.plain() {
            latency = self.dependency_stretch(inst, latency);
        }
        self.note(Note::WorkStarted { dep });
        let done = now + latency;
        let mut t = Timers::new(&mut self.queue, now);
        (self.dependencies).working(&mut t, call, dep, inst, done, cancelled_at);
        done
    }

    /// The work of `call` is done: the dependency takes its next waiting call, then
    /// the answer goes back.
    pub(super) fn dependency_done(&mut self, call: CallId) {
        let (inst, start) = self.dependencies.work_of(call);
        let work_start = start.unwrap_or(self.now());
        // an `error_rate` fault acting now replaces the dependency's own rate
        let fault = if self.plain() {
            None
        } else {
            self.dependency_fault_fails(inst)
        };
        let ok = match fault {
            Some(fails) => !fails,
            None => self.dependencies.own_error_passes(call),
        };
        self.dependency_end(call);
        self.call_answered(call, work_start, ok);
    }

    /// `latency` of work starting now at instance `inst`, stretched by what
    /// acts on it (the dependencies' own `stretch`). Its own cold step, so
    /// that the hot path's call stays small: passing the faults from there
    /// cost 0.4 % more instructions on M2.
    #[cold]
    #[inline(never)]
    fn dependency_stretch(&mut self, inst: usize, latency: Ticks) -> Ticks {
        let now = self.now();
        self.dependencies.stretch(&self.faults, inst, now, latency)
    }

    /// A pause of instance `inst` starts or ends: the time series hears the
    /// calls its end let start, and the levels.
    #[cold]
    #[inline(never)]
    pub(super) fn dependency_pause_edge(&mut self, inst: usize, end: bool) {
        let mut t = Timers::new(&mut self.queue, self.now);
        let Some(started) = self
            .dependencies
            .pause_edge(&mut t, &self.faults, inst, end)
        else {
            return;
        };
        let dep = self.dependencies.dependency_of(inst);
        self.dependency_started(dep, inst, started);
        self.dependency_levels(dep);
    }

    /// With an `error_rate` fault acting on instance `inst` now: whether it
    /// fails the call finishing now (it replaces the dependency's own
    /// `error_rate` meanwhile).
    #[cold]
    #[inline(never)]
    fn dependency_fault_fails(&mut self, inst: usize) -> Option<bool> {
        let subject = self.dependencies.subject(inst);
        self.fault_error(subject)
    }

    /// Whether a `down` fault acts on instance `inst` now.
    fn dependency_instance_down(&self, inst: usize) -> bool {
        self.dependencies.down(&self.faults, inst, self.now)
    }

    /// A `slots` fault on `dep` (or one of its replicas) started or ended:
    /// the time series hears the calls each instance let start, and the
    /// levels.
    pub(super) fn dependency_slots_changed(&mut self, dep: DependencyId) {
        let mut t = Timers::new(&mut self.queue, self.now);
        for (inst, started) in self.dependencies.slots_changed(&mut t, &self.faults, dep) {
            self.dependency_started(dep, inst, started);
        }
        self.dependency_levels(dep);
    }

    /// `started` calls of instance `inst` of `dep` took a slot in a step of
    /// the dependencies' own: each is noted, then the replica's levels.
    fn dependency_started(&mut self, dep: DependencyId, inst: usize, started: u32) {
        for _ in 0..started {
            self.note(Note::WorkStarted { dep });
        }
        if self.dependencies.has_replicas(dep) {
            self.dependency_replica_levels(inst);
        }
    }

    /// A `down` fault on `dep` (or one of its replicas) starts: every waiting
    /// and running call of each instance it hits fails now.
    pub(super) fn dependency_down(&mut self, dep: DependencyId) {
        let now = self.now();
        for inst in self.dependencies.instances(dep) {
            if !self.dependency_instance_down(inst) {
                continue;
            }
            let waiting = self.dependencies.drain(inst);
            self.dependency_levels(dep);
            if self.dependencies.has_replicas(dep) {
                self.dependency_replica_levels(inst);
            }
            for call in waiting {
                self.call_failed_by_fault(call, now);
            }
            for call in self.dependencies.running_on(inst) {
                let mut t = Timers::new(&mut self.queue, now);
                self.dependencies.stop_completion(&mut t, call);
                let work_start = self.dependencies.work_of(call).1.unwrap_or(now);
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
        let ended = self.dependencies.end(call, now);
        let (dep, inst, start) = (ended.dep, ended.inst, ended.start);
        self.note(Note::WorkEnded { call, dep, start });
        if let Some(next) = ended.next {
            self.dependency_start(dep, inst, next, None);
        }
        if !self.plain() {
            if self.dependencies.is_replicated() {
                self.dependency_replica_ended(dep, inst, now - start);
            }
            self.dependency_levels(dep);
        }
    }

    /// Instance `inst` of `dep` ended `worked` of work on a call: its
    /// replica's books and time series row hear it.
    #[cold]
    #[inline(never)]
    fn dependency_replica_ended(&mut self, dep: DependencyId, inst: usize, worked: Ticks) {
        self.dependencies.worked(inst, worked);
        if self.dependencies.has_replicas(dep) {
            self.dependency_replica_note(inst, AtReplica::Processed);
            self.dependency_replica_levels(inst);
        }
    }

    /// The caller cancels a call: pending work is removed from the queue, running
    /// work stops now.
    pub(in crate::sim) fn dependency_cancel(&mut self, dep: DependencyId, call: CallId) {
        let mut t = Timers::new(&mut self.queue, self.now);
        if self.dependencies.cancel(&mut t, dep, call) {
            self.dependency_end(call);
        } else {
            self.dependency_levels(dep);
            if self.dependencies.has_replicas(dep) {
                let (inst, _) = self.dependencies.work_of(call);
                self.dependency_replica_levels(inst);
            }
        }
    }

    /// A call from `caller` to `dep` is about to be made (with time left): its
    /// replica is picked, and whether it fails at once (the instance is
    /// `down`). Asked only off the plain path.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn dependency_refuses(&mut self, caller: Caller, dep: DependencyId) -> bool {
        let replicated = self.dependencies.has_replicas(dep);
        let inst = if replicated {
            self.dependency_pick(caller, dep)
        } else {
            dep
        };
        if !self.dependency_instance_down(inst) {
            return false;
        }
        if replicated {
            // the replica answers its error at once: over for the caller now
            let now = self.now();
            self.dependencies.refused(dep, now);
        }
        true
    }

    /// The replica of `dep` its balancer picks for `caller`'s call now,
    /// counted there and kept for the call.
    fn dependency_pick(&mut self, caller: Caller, dep: DependencyId) -> usize {
        let key = (self.dependencies.picks_by_caller(dep))
            .then(|| self.balance_caller_of(self.outer(caller)));
        let (model, now) = (self.model(), self.now());
        let inst = self.dependencies.pick(model, dep, key, now);
        self.dependency_replica_note(inst, AtReplica::Arrival);
        inst
    }

    /// The time series' row of instance `inst` (of a dependency with
    /// replicas) hears `change`.
    fn dependency_replica_note(&mut self, inst: usize, change: AtReplica) {
        let (dep, replica) = self.dependencies.replica_of(inst);
        self.note(Note::AtReplica {
            dep,
            replica,
            change,
        });
    }

    /// The time series' row of instance `inst` (of a dependency with
    /// replicas) hears its calls at work and waiting now.
    fn dependency_replica_levels(&mut self, inst: usize) {
        let (busy, waiting) = self.dependencies.instance_levels(inst);
        self.dependency_replica_note(inst, AtReplica::Levels { busy, waiting });
    }

    /// Call `call` is over for its caller (`how`): if it went to a replica,
    /// the replica's row counts how, and its balancer hears it.
    pub(super) fn dependency_pick_over(&mut self, call: CallId, how: Over) {
        let now = self.now();
        self.dependencies.pick_over(call, how, now);
    }

    /// A call to `dep` was made with no time left: it reaches no replica.
    pub(in crate::sim) fn dependency_no_time(&mut self, dep: DependencyId) {
        self.dependencies.no_time(dep);
    }
}
