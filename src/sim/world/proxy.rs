//! The queue in front of a service's replicas (`max_conn`), put to the run:
//! a new request placed at a replica with room, queued (with its queue
//! timeout) or refused; a replica whose count falls taking the oldest
//! waiters while it has room (HAProxy's `process_srv_queue`); a waiter
//! refused at its queue timeout (503, as HAProxy's `timeout queue`), or
//! leaving when its caller gives up on it. The queue and its books are the
//! servers' (`server/proxy.rs`); here the timers and the answers.

use super::super::context::Timers;
use super::super::notes::Note;
use super::super::server::Placement;
use super::super::vocab::{Outcome, ReqId};
use super::World;
use crate::model::ServiceId;

impl World<'_> {
    /// A new request of `service`, whose replicas have a queue in front: the
    /// instance with room it goes to, or None when it waits in the queue
    /// (its queue timeout set) or is refused (answered 503 now).
    #[inline(never)]
    pub(super) fn server_place(&mut self, service: ServiceId, req: ReqId) -> Option<usize> {
        let mut t = Timers::new(&mut self.queue, self.now);
        match self.servers.place(&mut t, service, req) {
            Placement::At(i) => Some(i),
            Placement::Queued => None,
            Placement::Refused => {
                self.respond(req, Outcome::Shed);
                None
            }
        }
    }

    /// Instance `i`'s count has fallen: while it has room, it takes the
    /// oldest waiters of the queue in front of its service's replicas, each
    /// reaching it as a new arrival does (a `down` instance fails it at once).
    #[cold]
    #[inline(never)]
    pub(super) fn server_take_waiters(&mut self, i: usize) {
        loop {
            let mut t = Timers::new(&mut self.queue, self.now);
            let Some(req) = self.servers.take_waiter(&mut t, i) else {
                break;
            };
            self.server_enter(i, req);
        }
    }

    /// The client of `req`, which reached no instance of `service`, gave
    /// up: with `abandon = true` it leaves the queue in front, if it waits
    /// there.
    #[cold]
    #[inline(never)]
    pub(super) fn server_proxy_abandon(&mut self, service: ServiceId, req: ReqId) {
        if self.servers.abandons_at_proxy(service) && self.server_proxy_leave(service, req) {
            self.handler_released(req);
        }
    }

    /// The caller of `req`, which reached no instance of `service`, cancelled
    /// it: it leaves the queue in front, if it waits there.
    #[cold]
    #[inline(never)]
    pub(super) fn server_proxy_cancel(&mut self, service: ServiceId, req: ReqId) {
        if self.server_proxy_leave(service, req) {
            self.handler_released(req);
        }
    }

    /// `req` leaves the queue in front of `service`'s replicas, its caller
    /// gone: true if it waited there.
    fn server_proxy_leave(&mut self, service: ServiceId, req: ReqId) -> bool {
        let mut t = Timers::new(&mut self.queue, self.now);
        let Some(arrived) = self.servers.leave_queue(&mut t, service, req, false) else {
            return false;
        };
        self.note(Note::Unqueued { req, arrived });
        true
    }

    /// `req`'s queue timeout in front of `service`'s replicas: still
    /// waiting, it is refused (503).
    #[cold]
    #[inline(never)]
    pub(super) fn server_proxy_timeout(&mut self, service: ServiceId, req: ReqId) {
        let mut t = Timers::new(&mut self.queue, self.now);
        if self
            .servers
            .leave_queue(&mut t, service, req, true)
            .is_some()
        {
            self.respond(req, Outcome::Shed);
        }
    }
}
