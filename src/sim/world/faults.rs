//! The faults put to the actors: the only way to [`Faults`], whose state the
//! world keeps private. The servers and the dependencies read what a fault
//! changes for their work now (its latency, their slots, `down`) from the
//! faults lent to their step; the draws of `error_rate` faults and a
//! workload's arrival factor are asked here. The edges a fault acts at are
//! posted before the run starts and handed to the actor they change.

use super::super::context::Timers;
use super::super::faults::{Edge, Subject};
use super::super::vocab::Event;
use super::World;
use crate::engine::Lane;
use crate::model::Hook;

/// What the faults change, asked by the other actors. Each answers for now.
impl World<'_> {
    /// Whether any fault has the effect `hook` asks about (false without faults).
    #[inline(always)]
    pub(in crate::sim) fn faults_of(&self, hook: Hook) -> bool {
        self.faults.has(hook)
    }

    /// The factor open workload `workload`'s rate is multiplied by now.
    #[inline]
    pub(in crate::sim) fn fault_arrival_factor(&self, workload: usize) -> f64 {
        self.faults.arrival_factor(workload, self.now())
    }

    /// Whether work of `subject` that ends now fails by an `error_rate` fault
    /// (a draw from the acting fault's stream; none without one).
    #[inline]
    pub(in crate::sim) fn fault_fails(&mut self, subject: Subject) -> bool {
        let now = self.now();
        self.faults.fails(subject, now)
    }

    /// With an `error_rate` fault acting on `subject` now: whether it fails
    /// this call (None: no such fault acts; the target's own rate applies).
    pub(in crate::sim) fn fault_error(&mut self, subject: Subject) -> Option<bool> {
        let now = self.now();
        self.faults.error_fault(subject, now)
    }
}

impl World<'_> {
    /// Posts the end of the warm-up and the edges of the faults that act at
    /// their edges (`slots`, `down`); before the run starts, so that they run
    /// first in their tick.
    pub(super) fn schedule_fault_edges(&mut self) {
        for (at, code) in self.faults.edges(self.model().warmup) {
            self.post(at, Lane::Normal, Event::FaultEdge(code));
        }
        let mut t = Timers::new(&mut self.queue, self.now);
        self.servers.first_pauses(&mut t);
        self.dependencies.first_pauses(&mut t);
    }

    /// A fault starts or ends: the books start again (the warm-up's end),
    /// slots change (and queued work may start), or a `down` target fails its
    /// queued and running work.
    #[cold]
    #[inline(never)]
    pub(super) fn fault_edge(&mut self, code: u32) {
        match self.faults.edge(code) {
            Edge::WarmupOver => self.warmup_over(),
            Edge::ServerSlots(service) => {
                let mut t = Timers::new(&mut self.queue, self.now);
                let started = self.servers.slots_changed(&mut t, &self.faults, service);
                self.server_started(started);
            }
            Edge::DependencySlots(dep) => self.dependency_slots_changed(dep),
            Edge::ServerDown(service) => self.server_down(service),
            Edge::DependencyDown(dep) => self.dependency_down(dep),
            Edge::ServerPause { instance, end } => {
                let mut t = Timers::new(&mut self.queue, self.now);
                let started = self.servers.pause_edge(&mut t, &self.faults, instance, end);
                self.server_started(started);
            }
            Edge::DependencyPause { instance, end } => self.dependency_pause_edge(instance, end),
            Edge::Nothing => {}
        }
    }
}
