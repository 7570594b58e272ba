//! A request's life, from the client's send to its answer: the request slab and
//! the lifecycle steps every request goes through whatever handles it. A request
//! is sent by a client (through the gateway or directly) or is a call from another
//! service ([`call`](super::call)); it *arrives* at its service (its middleware
//! limiters, then its handler), and ends once: answered by its handler
//! (`respond`), or given up by whoever sent it (`client_timeout`, `caller_gone`).
//! Its slot is freed when neither the sender nor a handler needs it any more.

use super::notes::Note;
use super::vocab::{CallId, Event, Outcome, ReqId, Tag, World};
use crate::engine::{EventKey, Lane, Ticks};
use crate::model::{Access, RouteId, ServiceId};

/// The route of a call into a service that owns none.
pub(crate) const NO_ROUTE: RouteId = RouteId::MAX;

/// One request in flight: what it carries (route, client, member, deadline) and
/// where it is in its life.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    pub sent: Ticks,
    pub route: RouteId,
    pub service: ServiceId,
    pub access: Option<Access>,
    pub client: u32,
    pub member: u32,
    /// The client has its answer (or gave up); further outcomes are ignored.
    pub closed: bool,
    /// The handler still holds work for it.
    pub in_handler: bool,
    client_timeout: Option<EventKey>,
    /// The workload step it belongs to (a ladder's step index).
    pub step: Option<u32>,
    /// The latest moment an answer is of use to the client (sent + its timeout),
    /// whether or not the client gives up then; for a call, the call's deadline.
    pub deadline: Option<Ticks>,
    /// The workload sender (a workload, or one client of it) that sent it.
    pub source: u32,
    /// The call this request is (None: a client's request).
    pub caller: Option<CallId>,
}

/// The request slab: ids are reused once a request is released.
#[derive(Default)]
pub(crate) struct Requests {
    slab: Vec<Request>,
    free: Vec<ReqId>,
}

impl std::ops::Index<ReqId> for Requests {
    type Output = Request;
    #[inline]
    fn index(&self, id: ReqId) -> &Request {
        &self.slab[id as usize]
    }
}

impl std::ops::IndexMut<ReqId> for Requests {
    #[inline]
    fn index_mut(&mut self, id: ReqId) -> &mut Request {
        &mut self.slab[id as usize]
    }
}

impl Requests {
    /// Entries in use (requests or calls not yet released).
    #[inline]
    pub fn held(&self) -> u64 {
        (self.slab.len() - self.free.len()) as u64
    }

    /// Ids handed out so far (live or free): every live id is below it.
    #[inline]
    pub fn len(&self) -> usize {
        self.slab.len()
    }

    /// Room for `more` requests beyond those held, made now (see
    /// `World::reserve_ahead`).
    pub fn reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.slab.try_reserve(more)?;
        self.free.try_reserve(more)
    }

    fn take(&mut self) -> ReqId {
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.slab.push(Request::default());
                (self.slab.len() - 1) as ReqId
            }
        }
    }
}

impl World<'_> {
    /// A new request enters the system now.
    pub(super) fn send(
        &mut self,
        route: RouteId,
        access: Access,
        client: u32,
        member: u32,
        timeout: Option<Ticks>,
    ) -> ReqId {
        self.send_tagged(route, access, client, member, timeout, Tag::default())
    }

    /// [`World::send`] for a request that carries workload labels.
    pub(super) fn send_tagged(
        &mut self,
        route: RouteId,
        access: Access,
        client: u32,
        member: u32,
        timeout: Option<Ticks>,
        tag: Tag,
    ) -> ReqId {
        let id = self.requests.take();
        let now = self.now();
        let owner = self.model().routes[route].service;
        let source = self.sending_source();
        let r = &mut self.requests[id];
        r.sent = now;
        r.route = route;
        r.service = owner.unwrap_or_default();
        r.access = Some(access);
        r.client = client;
        r.member = member;
        r.closed = false;
        r.in_handler = true;
        r.client_timeout = None;
        r.step = tag.step;
        r.deadline = timeout.or(tag.patience).map(|t| now + t);
        r.source = source;
        r.caller = None;
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
            let key = self.schedule(now + t, Lane::Deadline, Event::ClientTimeout(id));
            self.requests[id].client_timeout = Some(key);
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
        let id = self.call_request(call, from, (route, service, Some(Access::Direct)), deadline);
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
        self.requests[id].in_handler = false;
        let caller = super::vocab::Caller::Client { req: id };
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
        self.call_request(call, from, to, deadline)
    }

    /// A request that is call `call` made on behalf of request `from`: sent now to
    /// `to` (route, service, access), with `from`'s client, member and workload
    /// sender, and the call's deadline.
    #[inline]
    fn call_request(
        &mut self,
        call: CallId,
        from: ReqId,
        to: (RouteId, ServiceId, Option<Access>),
        deadline: Option<Ticks>,
    ) -> ReqId {
        let id = self.requests.take();
        let f = &self.requests[from];
        let (client, member, source) = (f.client, f.member, f.source);
        let now = self.now();
        let r = &mut self.requests[id];
        (r.route, r.service, r.access) = to;
        r.sent = now;
        r.client = client;
        r.member = member;
        r.closed = false;
        r.in_handler = true;
        r.client_timeout = None;
        r.step = None;
        r.deadline = deadline;
        r.source = source;
        r.caller = Some(call);
        id
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
        let r = &mut self.requests[req];
        r.closed = true;
        r.in_handler = false;
        let in_system = now - r.sent;
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
    #[inline]
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
    pub(super) fn respond(&mut self, req: ReqId, outcome: Outcome) {
        self.note(Note::Responded { req, outcome });
        let now = self.now();
        let r = &mut self.requests[req];
        r.in_handler = false;
        if r.closed {
            self.release(req);
            return;
        }
        r.closed = true;
        if let Some(call) = r.caller {
            // a call from another service: the answer goes back to it
            self.release(req);
            self.call_answered_by_service(call, outcome);
            return;
        }
        let response = now - r.sent;
        if let Some(key) = r.client_timeout.take() {
            self.cancel(key);
        }
        self.note(Note::Answered { outcome, response });
        self.release(req);
        self.answer_client(req, outcome);
    }

    /// The client's own timeout: it stops waiting, and the handler is told.
    pub(super) fn client_timeout(&mut self, req: ReqId) {
        let now = self.now();
        let r = &mut self.requests[req];
        r.client_timeout = None;
        if r.closed {
            return;
        }
        r.closed = true;
        let in_system = now - r.sent;
        self.note(Note::GaveUp {
            req,
            waited: in_system,
        });
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
        let r = &mut self.requests[req];
        if r.closed {
            return;
        }
        r.closed = true;
        let in_handler = r.in_handler;
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
        let r = &self.requests[req];
        let in_time = r.deadline.is_none_or(|d| self.now() <= d);
        let (step, source, response) = (r.step, r.source, self.now() - r.sent);
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
    pub(super) fn handler_released(&mut self, req: ReqId) {
        self.requests[req].in_handler = false;
        self.note(Note::HandlerLeft { req });
    }

    /// Frees the request's slot once neither the client nor a handler needs it.
    fn release(&mut self, req: ReqId) {
        let r = &self.requests[req];
        if r.closed && !r.in_handler {
            #[cfg(test)]
            self.limiting_released(req);
            self.requests.free.push(req);
        }
    }
}
