//! Handler registration: which module takes a service's requests once they passed
//! the service's middleware, and which is told when a request's client gives up.
//! A new handler kind is one module plus one arm in each `match` below.
//! (`handle`: the request passed its middleware; `abandon`: its client gave up;
//! `cancel_work`: its caller cancelled it.)

use super::super::vocab::{Outcome, ReqId};
use super::World;
use crate::model::Handler;

impl World<'_> {
    /// The request passed every limiter: its service's handler takes it.
    #[inline]
    pub(super) fn handle(&mut self, req: ReqId) {
        let service = &self.model().services[self.requests[req].service];
        match &service.handler {
            Handler::Respond => self.respond(req, Outcome::Answered),
            Handler::Plan(_) => self.plan_start(req),
            Handler::Server(_) => self.server_arrive(req),
        }
    }

    /// The client of `req` gave up while its handler still holds work for it.
    pub(super) fn abandon(&mut self, req: ReqId) {
        let service = &self.model().services[self.requests[req].service];
        match &service.handler {
            Handler::Respond => {}
            Handler::Plan(_) => self.plan_abandon(req),
            Handler::Server(_) => self.server_abandon(req),
        }
    }

    /// The caller of `req` cancelled it: its work stops, queued or running, and so
    /// does every call it still has open.
    pub(super) fn cancel_work(&mut self, req: ReqId) {
        let service = &self.model().services[self.requests[req].service];
        match &service.handler {
            Handler::Respond => {}
            Handler::Plan(_) => {
                if self.plan_cancel(req) {
                    self.handler_released(req);
                }
            }
            Handler::Server(_) => self.server_cancel(req),
        }
    }
}
