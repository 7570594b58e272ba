//! What `[[faults]]` and pauses do to a server's instances: `down` fails
//! arrivals and the work held at its start, `slots` changes how many run at
//! once, a `latency_factor` or `latency_add` stretches service that starts in
//! its window, a pause holds every slot until it ends. The instance asks the
//! faults itself (the read-only [`Faults`] lent for the step) and keeps its
//! own pause edges on the queue; an `error_rate` fault, drawn from the
//! faults' streams, the world asks as the service ends.

use super::super::context::Timers;
use super::super::faults::{Faults, Subject, pause_code, scaled};
use super::super::pauses;
use super::super::vocab::{Event, ReqId};
use super::Servers;
use super::instance::Waiting;
use crate::engine::Ticks;
use crate::model::ServiceId;

/// The requests that took a slot in one step, each with how long it waited
/// (the world notes each, in order).
pub(crate) type Started = Vec<(ReqId, Ticks)>;

impl Servers {
    /// A request arrives at instance `i`, which a `down` fault holds: the
    /// books count it (it fails at once).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn arrived_down(&mut self, i: usize) {
        let s = &self.states[i];
        let st = &mut self.stats[s.stats];
        st.arrived += 1;
        if let Some(r) = s.replica {
            // the replica's row counts it too: the rows sum to the service's
            st.replicas[r].arrived += 1;
        }
    }

    /// What faults name instance `i` as.
    #[inline]
    pub(in crate::sim) fn subject(&self, i: usize) -> Subject {
        self.states[i].subject
    }

    /// When work of `demand` starting at instance `i` at `now` ends:
    /// multiplied by the `latency_factor` faults acting on it and its own
    /// factor, then the `latency_add` faults' and its own addition added, then
    /// the instance's pauses in its way waited out.
    #[cold]
    #[inline(never)]
    pub(super) fn stretch(
        &mut self,
        faults: &Faults,
        i: usize,
        now: Ticks,
        demand: Ticks,
    ) -> Ticks {
        let s = &mut self.states[i];
        let subject = s.subject;
        let demand = scaled(demand, faults.latency_factor(subject, now) * s.factor)
            + s.add
            + faults.latency_add(subject, now);
        match s.pauses.as_mut() {
            Some(p) => p.finish(now, demand),
            None => now + demand,
        }
    }

    /// Posts the first pause of every instance with pauses.
    pub(in crate::sim) fn first_pauses(&mut self, t: &mut Timers) {
        let all = self.states.iter_mut().map(|s| s.pauses.as_mut());
        for (i, at) in pauses::firsts(all) {
            t.post(at, Event::FaultEdge(pause_code(i, false)));
        }
    }

    /// A pause of instance `i` starts (nothing starts until its end, which is
    /// posted) or ends now (the slots are back, as a `slots` fault may set
    /// them, the waiters they let in start, and the next pause is posted).
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn pause_edge(
        &mut self,
        t: &mut Timers,
        faults: &Faults,
        i: usize,
        end: bool,
    ) -> Started {
        let now = t.now();
        let s = &mut self.states[i];
        let pauses = s.pauses.as_mut().expect("a pause edge");
        if !end {
            s.line.set_limit(0);
            let until = pauses.starts(now);
            t.post(until, Event::FaultEdge(pause_code(i, true)));
            return Started::new();
        }
        let limit = faults.slots(s.subject, now);
        let started = self.slots_now(t, faults, i, limit);
        if let Some(next) = self.states[i].pauses.as_mut().and_then(|p| p.ended(now)) {
            t.post(next, Event::FaultEdge(pause_code(i, false)));
        }
        started
    }

    /// A `slots` fault on `service` started or ended: each instance's limit
    /// now (none while a pause holds it), and the waiters it lets in start.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn slots_changed(
        &mut self,
        t: &mut Timers,
        faults: &Faults,
        service: ServiceId,
    ) -> Started {
        let now = t.now();
        let mut started = Started::new();
        for i in self.instances(service) {
            let s = &mut self.states[i];
            let paused = (s.pauses.as_mut()).is_some_and(|p| p.holding(now).is_some());
            // a pause holds it: nothing starts until the pause ends
            let limit = if paused {
                Some(0)
            } else {
                faults.slots(s.subject, now)
            };
            started.extend(self.slots_now(t, faults, i, limit));
        }
        started
    }

    /// Instance `i`'s slot count is now `limit` (None: its own), and the
    /// waiters it lets in start.
    fn slots_now(
        &mut self,
        t: &mut Timers,
        faults: &Faults,
        i: usize,
        limit: Option<u32>,
    ) -> Started {
        let s = &mut self.states[i];
        match limit {
            Some(n) => s.line.set_limit(n),
            None => s.line.reset_limit(s.slots),
        }
        let mut started = Started::new();
        while let Some(w) = self.next_waiter(i, t.now()) {
            let req = w.req;
            started.push((req, self.begin_waiter(t, faults, false, i, w)));
        }
        started
    }

    /// Whether a `down` fault acts on instance `i` now.
    pub(in crate::sim) fn down(&self, faults: &Faults, i: usize, now: Ticks) -> bool {
        faults.down(self.states[i].subject, now)
    }

    /// The next waiter of instance `i` that a free slot lets start at `now`,
    /// in its discipline's order.
    pub(in crate::sim) fn next_waiter(&mut self, i: usize, now: Ticks) -> Option<Waiting> {
        self.pick_order(i, now);
        self.states[i].line.next()
    }

    /// A `down` fault hits instance `i` now: every queued request leaves its
    /// queue, its queue timeout off, to fail ([`Servers::queued_failed`]
    /// each).
    pub(in crate::sim) fn drain(&mut self, t: &mut Timers, i: usize) -> Vec<Waiting> {
        let now = t.now();
        let s = &mut self.states[i];
        let queued = s.line.drain();
        if !queued.is_empty() {
            s.outstanding -= queued.len() as u32;
            s.since = self.moves;
            self.moves += 1;
        }
        if s.timed {
            s.discipline.left(0, now);
        }
        for w in &queued {
            self.queue_timeout_off(t, w.req);
        }
        queued
    }

    /// Queued request `w` of instance `i` fails at `now` (a `down` fault):
    /// the books count it.
    pub(in crate::sim) fn queued_failed(&mut self, i: usize, w: &Waiting, now: Ticks) {
        let s = &self.states[i];
        let stats = &mut self.stats[s.stats];
        stats.queued.add(now, -1);
        if let Some(r) = s.replica {
            stats.replicas[r].queued.add(now, -1);
        }
        stats.in_server.add(now - w.arrived);
    }
}
