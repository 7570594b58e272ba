//! What `[[faults]]` do to a server's instances: `down` fails arrivals and the
//! work held at its start, `slots` changes how many run at once. (A
//! `latency_factor` stretches service that starts in its window and an
//! `error_rate` fails requests at the end of their service: the world asks
//! the faults for those as the step happens.)

use super::Servers;
use super::instance::Waiting;
use crate::engine::Ticks;

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

    /// Instance `i`'s slot count is now `limit` (None: its own).
    pub(in crate::sim) fn set_slots(&mut self, i: usize, limit: Option<u32>) {
        let s = &mut self.states[i];
        match limit {
            Some(n) => s.line.set_limit(n),
            None => s.line.reset_limit(s.slots),
        }
    }

    /// The next waiter of instance `i` that a free slot lets start at `now`,
    /// in its discipline's order.
    pub(in crate::sim) fn next_waiter(&mut self, i: usize, now: Ticks) -> Option<Waiting> {
        self.pick_order(i, now);
        self.states[i].line.next()
    }

    /// A `down` fault hits instance `i` at `now`: every queued request leaves
    /// its queue, to fail ([`Servers::queued_failed`] each).
    pub(in crate::sim) fn drain(&mut self, i: usize, now: Ticks) -> Vec<Waiting> {
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
