//! What `[[faults]]` do to a server's instances: `down` fails arrivals and the
//! work held at its start, `latency_factor` stretches service that starts in
//! its window, `error_rate` fails requests at the end of their service,
//! `slots` changes how many run at once.

use super::super::faults::scaled;
use super::super::vocab::{Outcome, ReqId, World};
use crate::engine::Ticks;
use crate::model::ServiceId;

impl World<'_> {
    /// A request arrives at instance `i`: if a `down` fault acts on it, it fails
    /// at once (true).
    #[cold]
    #[inline(never)]
    pub(super) fn server_arrive_down(&mut self, i: usize, req: ReqId) -> bool {
        if !self.fault_down(self.servers.states[i].subject) {
            return false;
        }
        let s = &self.servers.states[i];
        let st = &mut self.servers.stats[s.stats];
        st.arrived += 1;
        if let Some(r) = s.replica {
            // the replica's row counts it too: the rows sum to the service's
            st.replicas[r].arrived += 1;
        }
        self.respond(req, Outcome::Error);
        true
    }

    /// `demand` stretched by the `latency_factor` faults acting on instance `i`.
    #[cold]
    #[inline(never)]
    pub(super) fn server_stretch(&self, i: usize, demand: Ticks) -> Ticks {
        scaled(
            demand,
            self.fault_latency_factor(self.servers.states[i].subject),
        )
    }

    /// Whether an `error_rate` fault fails `req` at the end of its service.
    #[cold]
    #[inline(never)]
    pub(super) fn server_fails(&mut self, req: ReqId) -> bool {
        let service = self.requests[req].service;
        match self.servers.state_of(service, req) {
            Some(i) => self.fault_fails(self.servers.states[i].subject),
            None => false,
        }
    }

    /// A `slots` fault on `service` started or ended: each instance's limit now,
    /// and the waiters it lets in start.
    pub(in crate::sim) fn server_slots_changed(&mut self, service: ServiceId) {
        for i in self.server_instances(service) {
            let limit = self.fault_slots(self.servers.states[i].subject);
            let s = &mut self.servers.states[i];
            match limit {
                Some(n) => s.line.set_limit(n),
                None => s.line.reset_limit(s.slots),
            }
            loop {
                self.server_pick_order(i);
                let Some(w) = self.servers.states[i].line.next() else {
                    break;
                };
                self.server_start_waiter(i, w);
            }
        }
    }

    /// A `down` fault on `service` starts: the queued and running requests of each
    /// instance it hits fail now (answered `error`).
    pub(in crate::sim) fn server_down(&mut self, service: ServiceId) {
        let now = self.now();
        for i in self.server_instances(service) {
            if !self.fault_down(self.servers.states[i].subject) {
                continue;
            }
            let s = &mut self.servers.states[i];
            let queued = s.line.drain();
            s.outstanding -= queued.len() as u32;
            if s.timed {
                s.discipline.left(0, now);
            }
            let st = s.stats;
            for w in queued {
                self.server_timeout_off(w.req);
                let stats = &mut self.servers.stats[st];
                stats.queued.add(now, -1);
                stats.in_server.add(now - w.arrived);
                self.respond(w.req, Outcome::Error);
            }
            let running: Vec<ReqId> = (0..self.requests.len() as ReqId)
                .filter(|&r| {
                    self.requests[r].in_handler
                        && self.requests[r].service == service
                        && self.servers.state_of(service, r) == Some(i)
                })
                .collect();
            for r in running {
                if self.requests[r].in_handler && self.server_stop(i, r, false) {
                    self.respond(r, Outcome::Error);
                }
            }
        }
    }
}
