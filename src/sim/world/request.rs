//! A request's life put to the run: the request slab is the world's own, and
//! each step's change to the record is [`Requests`]'s; here the world gives
//! the notes, lends the request its timer (the client's timeout) and hands
//! the request on: to the gateway, its service, the caller or the client.

use super::super::context::Timers;
use super::super::notes::Note;
use super::super::request::{NO_ROUTE, Respond};
use super::super::vocab::{CallId, Outcome, ReqId, Tag};
use super::World;
use crate::engine::Ticks;
use crate::model::{Access, RouteId, ServiceId};

impl World<'_> {
    /// A new request enters the system now, carrying `tag` (a ladder's
    /// step, a patience; `Tag::default()` for none).
    pub(in crate::sim) fn send(
        &mut self,
        route: RouteId,
        access: Access,
        client: u32,
        member: u32,
        timeout: Option<Ticks>,
        tag: Tag,
    ) -> ReqId {
        let now = self.now();
        let owner = self.model().routes[route].service;
        let source = self.sending_source();
        let deadline = timeout.or(tag.patience).map(|t| now + t);
        let id = (self.requests).open(
            now,
            route,
            owner,
            access,
            (client, member),
            deadline,
            tag.step,
            source,
        );
        self.note(Note::Sent {
            req: id,
            route,
            owner,
        });
        if !self.model().policies.is_empty()
            && let Some(policy) = self.workload_policy(source)
        {
            self.send_through_policy(id, policy, owner, timeout);
            return id;
        }
        if let Some(t) = timeout {
            let mut timers = Timers::new(&mut self.queue, now);
            self.requests.set_client_timeout(&mut timers, id, now + t);
        }
        self.note(Note::Departed { req: id });
        if owner.is_none() {
            // answered before any limiter sees it
            self.respond(id, Outcome::NotFound);
            return id;
        }
        match access {
            Access::Gateway => self.gateway_receive(id),
            Access::Direct => self.at_service(id),
        }
        id
    }

    /// A call from request `from` reaches `service`: a request there that carries
    /// the caller's client and member, the callee's first route, direct access and
    /// the call's deadline. It is not a client request: the run's request counts
    /// and the members' end-to-end tallies do not see it.
    pub(super) fn send_call(
        &mut self,
        call: CallId,
        service: ServiceId,
        from: ReqId,
        deadline: Option<Ticks>,
    ) -> ReqId {
        let route = self.model().services[service]
            .routes
            .first()
            .copied()
            .unwrap_or(NO_ROUTE);
        let now = self.now();
        let to = (route, service, Some(Access::Direct));
        let id = self.requests.open_call(now, call, from, to, deadline);
        self.note(Note::CallRequestSent {
            req: id,
            call,
            service,
        });
        id
    }

    /// A client's request `id` goes through its workload's `policy`: its
    /// attempts are the requests the service sees, and its `timeout` caps the
    /// whole call (no client timeout of its own). (Out of line, but not cold:
    /// for a workload with a policy it is every request's path.)
    #[inline(never)]
    fn send_through_policy(
        &mut self,
        id: ReqId,
        policy: crate::model::PolicyId,
        owner: Option<ServiceId>,
        timeout: Option<Ticks>,
    ) {
        self.note(Note::Departed { req: id });
        let Some(owner) = owner else {
            self.respond(id, Outcome::NotFound);
            return;
        };
        self.requests.handler_left(id);
        let caller = super::super::vocab::Caller::Client { req: id };
        let target = crate::model::Target::Service(owner);
        if let Err(outcome) = self.policy_call(policy, caller, target, timeout, false) {
            self.client_call_over(id, outcome);
        }
    }

    /// An attempt of a client's policy call: a copy of the client's request
    /// `from` (route, access, client, member) that answers the call.
    pub(super) fn send_attempt(
        &mut self,
        call: CallId,
        from: ReqId,
        deadline: Option<Ticks>,
    ) -> ReqId {
        let f = &self.requests[from];
        let to = (f.route, f.service, f.access);
        let now = self.now();
        self.requests.open_call(now, call, from, to, deadline)
    }

    /// A client's attempt leaves: through the gateway or straight to the service.
    pub(super) fn attempt_receive(&mut self, req: ReqId) {
        match self.requests[req].access {
            Some(Access::Gateway) => self.gateway_receive(req),
            _ => self.at_service(req),
        }
    }

    /// A client's call through its policy is over: the client has `outcome` (a
    /// timeout reads as the client giving up, as without a policy).
    #[inline(never)]
    pub(super) fn client_call_over(&mut self, req: ReqId, outcome: Outcome) {
        let now = self.now();
        let in_system = self.requests.call_over(req, now);
        self.note(Note::ClientCallOver {
            req,
            outcome,
            in_system,
        });
        self.release(req);
        self.answer_client(req, outcome);
    }

    /// The request reaches the service that owns its route: its middleware
    /// limiters first, then the handler.
    #[inline(always)]
    pub(super) fn at_service(&mut self, req: ReqId) {
        if self.requests[req].closed {
            // the client gave up on the way: nothing reaches the handler
            self.respond(req, Outcome::TimedOut);
            return;
        }
        self.limit_at_service(req);
    }

    /// The handler is done with `req`: the limiter admissions it holds hear so,
    /// and the client gets `outcome` unless it already gave up.
    pub(in crate::sim) fn respond(&mut self, req: ReqId, outcome: Outcome) {
        self.note(Note::Responded { req, outcome });
        match (self.requests).respond(&mut Timers::new(&mut self.queue, self.now), req) {
            Respond::Nobody => self.release(req),
            Respond::Call(call) => {
                // a call from another service: the answer goes back to it
                self.release(req);
                self.call_answered_by_service(call, outcome);
            }
            Respond::Client { response } => {
                self.note(Note::Answered { outcome, response });
                self.release(req);
                self.answer_client(req, outcome);
            }
        }
    }

    /// The client's own timeout: it stops waiting, and the handler is told.
    pub(super) fn client_timeout(&mut self, req: ReqId) {
        let now = self.now();
        let Some(waited) = self.requests.client_timeout(req, now) else {
            return;
        };
        self.note(Note::GaveUp { req, waited });
        if self.requests[req].in_handler {
            self.abandon(req);
        }
        self.answer_client(req, Outcome::TimedOut);
        self.release(req);
    }

    /// The caller of a call-request gave up on it: its handler is told, and with
    /// `cancel` its work stops (queued or running) and every call it still has
    /// open is cancelled too, recursively.
    pub(super) fn caller_gone(&mut self, req: ReqId, cancel: bool) {
        let Some(in_handler) = self.requests.caller_gone(req) else {
            return;
        };
        self.note(Note::CallerGone { req, cancel });
        if in_handler {
            if cancel {
                self.cancel_work(req);
            } else {
                self.abandon(req);
            }
        }
        self.release(req);
    }

    /// The answer (or the client's own timeout) reaches whoever sent `req`: the
    /// books of its step, then the workload, which may send the next request.
    #[inline]
    fn answer_client(&mut self, req: ReqId, outcome: Outcome) {
        let (step, source, in_time, response) = self.requests.done(req, self.now());
        self.note(Note::Done {
            step,
            source,
            outcome,
            in_time,
            response,
        });
        self.client_answered(source);
    }

    /// The handler no longer holds work for `req` (it left a queue, or its calls
    /// were given up): its limiter admissions hear it is done, as timed out.
    pub(in crate::sim) fn handler_released(&mut self, req: ReqId) {
        self.requests.handler_left(req);
        self.note(Note::HandlerLeft { req });
    }

    /// Frees the request's slot once neither the client nor a handler needs it.
    pub(super) fn release(&mut self, req: ReqId) {
        if self.requests.releasable(req) {
            #[cfg(test)]
            self.limiting_released(req);
            self.requests.free(req);
        }
    }

    /// Under test: requests not yet released.
    #[cfg(test)]
    pub(in crate::sim) fn requests_held(&self) -> u64 {
        self.requests.held()
    }
}
