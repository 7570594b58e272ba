//! The queue in front of a service's replicas (`max_conn`): where a new
//! request goes ([`Servers::place`]), the waiter a replica takes when its
//! count falls ([`Servers::take_waiter`]) and a waiter that leaves
//! ([`Servers::leave_queue`]). The queue itself is the picker's
//! ([`crate::sim::balance::ProxyQueue`]); its books are the service's
//! ([`ProxyStats`](super::stats::ProxyStats)). A queue timeout is the
//! service's own timer, set and cancelled here through the `Timers` lent for
//! the step; the world carries a taken waiter to its replica
//! (`world/proxy.rs`).

use super::super::balance::Placed;
use super::super::context::Timers;
use super::super::faults::Subject;
use super::super::vocab::ReqId;
use super::Servers;
use super::replicas::{AT_PROXY, Route};
use crate::engine::Ticks;
use crate::model::ServiceId;

/// Where a new request of a service with a queue in front of its replicas
/// goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// To this instance, which has room.
    At(usize),
    /// Into the queue (with its queue timeout set, if the queue has one:
    /// refused then if still there).
    Queued,
    /// No replica has room and the queue is full: refused (503).
    Refused,
}

impl Servers {
    /// `req` of `service` arrives now: a replica with room, the queue (its
    /// queue timeout set), or refused; the books count it.
    #[inline(never)]
    pub(in crate::sim) fn place(
        &mut self,
        t: &mut Timers,
        service: ServiceId,
        req: ReqId,
    ) -> Placement {
        let now = t.now();
        let Some(Route::Replicated(b)) = self.by_service[service].as_mut() else {
            unreachable!("service {service} has no queue in front");
        };
        b.fill(&self.states);
        let placed = b.picker.place(&b.view, u64::from(req), now);
        let waiting = b.picker.waiting() as u64;
        let st = &mut self.stats[self.states[b.first].stats];
        let p = st.proxy.as_mut().expect("a limited service's books");
        match placed {
            Placed::Replica(k) => Placement::At(self.picked(service, req, k, now, None)),
            Placed::Queued { timeout } => {
                p.queued += 1;
                p.length.add(now, 1);
                p.peak = p.peak.max(waiting);
                self.set_replica_of(req, AT_PROXY);
                if let Some(timeout) = timeout {
                    self.set_queue_timeout(t, req, now + timeout);
                }
                Placement::Queued
            }
            Placed::Refused => {
                p.refused += 1;
                Placement::Refused
            }
        }
    }

    /// Whether instance `i`'s service has a queue in front of its replicas.
    #[inline(always)]
    pub(in crate::sim) fn limited(&self, i: usize) -> bool {
        self.states[i].limited
    }

    /// Instance `i`'s count has fallen: the oldest waiter of the queue in
    /// front, if `i` has room and anyone waits, now sent to it (counted as
    /// taken from the queue, its queue timeout off; its arrival there is the
    /// caller's to make).
    pub(in crate::sim) fn take_waiter(&mut self, t: &mut Timers, i: usize) -> Option<ReqId> {
        let now = t.now();
        let Subject::Server { service, replica } = self.states[i].subject else {
            return None;
        };
        let Some(Route::Replicated(b)) = self.by_service[service].as_mut() else {
            return None;
        };
        let (id, at) = b.picker.take(self.states[i].outstanding)?;
        let req = id as ReqId;
        let st = &mut self.stats[self.states[i].stats];
        if let Some(p) = st.proxy.as_mut() {
            p.dispatched += 1;
            p.waits.push(now - at);
            p.length.add(now, -1);
        }
        st.replicas[replica as usize].from_queue += 1;
        self.picked(service, req, replica as usize, now, None);
        self.queue_timeout_off(t, req);
        Some(req)
    }

    /// `req` of `service` leaves the queue in front of the replicas now
    /// (`timed_out`: its queue timeout, refused; else its caller gave up on
    /// it or cancelled it, and its queue timeout is off): when it joined, if
    /// it waited there.
    pub(in crate::sim) fn leave_queue(
        &mut self,
        t: &mut Timers,
        service: ServiceId,
        req: ReqId,
        timed_out: bool,
    ) -> Option<Ticks> {
        let now = t.now();
        if self.replica_of.get(req as usize) != Some(&AT_PROXY) {
            return None;
        }
        let Some(Route::Replicated(b)) = self.by_service[service].as_mut() else {
            return None;
        };
        let at = b.picker.leave(u64::from(req))?;
        let st = &mut self.stats[self.states[b.first].stats];
        if let Some(p) = st.proxy.as_mut() {
            p.length.add(now, -1);
            if timed_out {
                p.timed_out += 1;
            } else {
                p.abandoned += 1;
            }
        }
        if !timed_out {
            self.queue_timeout_off(t, req);
        } else if let Some(key) = self.timeout_keys.get_mut(req as usize) {
            *key = None;
        }
        Some(at)
    }

    /// Whether `service`'s queue in front drops a waiter whose client gave
    /// up: as its replicas' own queues do (`abandon = true`).
    pub(in crate::sim) fn abandons_at_proxy(&self, service: ServiceId) -> bool {
        match self.by_service[service].as_ref() {
            Some(Route::Replicated(b)) => b.picker.limited() && self.states[b.first].abandon,
            _ => false,
        }
    }
}
