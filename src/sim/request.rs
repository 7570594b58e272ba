//! A request's life, from the client's send to its answer: the request slab and
//! the lifecycle steps every request goes through whatever handles it. A request
//! is sent by a client (through the gateway or directly) or is a call from another
//! service ([`call`](super::call)); it *arrives* at its service (its middleware
//! limiters, then its handler), and ends once: answered by its handler
//! (`respond`), or given up by whoever sent it (`client_timeout`, `caller_gone`).
//! Its slot is freed when neither the sender nor a handler needs it any more.
//!
//! Here is the slab and each step's change to a request's record ([`Requests`]),
//! with the client's timeout, set and cancelled here through the [`Timers`]
//! the world lends; the world gives the notes and hands the request on
//! (`world/request.rs`).

use super::context::Timers;
use super::vocab::{CallId, Event, ReqId};
use crate::engine::{EventKey, Ticks};
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
    /// A call it made without waiting (`wait = false`) is still out: the
    /// record stays until its answer comes. False whenever it is released,
    /// so a record taken again starts without it.
    pub held: bool,
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

/// What a handler's answer reaches ([`Requests::respond`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Respond {
    /// Nobody: the client had given up (the request may now be released).
    Nobody,
    /// The call this request is: the answer goes back to its caller.
    Call(CallId),
    /// The client, `response` after it sent the request (its own timeout,
    /// if it had one, cancelled).
    Client { response: Ticks },
}

/// A request's life as its record keeps it. The world carries out what each
/// step says (`world/request.rs`).
impl Requests {
    /// A client's request sent at `now` on `route` (owned by `owner`) through
    /// `access`, by `client` and `member` of sender `source`, its answer of
    /// use until `deadline`, in ladder step `step`: its id.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(in crate::sim) fn open(
        &mut self,
        now: Ticks,
        route: RouteId,
        owner: Option<ServiceId>,
        access: Access,
        (client, member): (u32, u32),
        deadline: Option<Ticks>,
        step: Option<u32>,
        source: u32,
    ) -> ReqId {
        let id = self.take();
        let r = &mut self[id];
        r.sent = now;
        r.route = route;
        r.service = owner.unwrap_or_default();
        r.access = Some(access);
        r.client = client;
        r.member = member;
        r.closed = false;
        r.in_handler = true;
        r.client_timeout = None;
        r.step = step;
        r.deadline = deadline;
        r.source = source;
        r.caller = None;
        id
    }

    /// A request that is call `call` made at `now` on behalf of request
    /// `from`, to `to` (route, service, access), with `from`'s client, member
    /// and workload sender, and the call's deadline: its id.
    #[inline]
    pub(in crate::sim) fn open_call(
        &mut self,
        now: Ticks,
        call: CallId,
        from: ReqId,
        to: (RouteId, ServiceId, Option<Access>),
        deadline: Option<Ticks>,
    ) -> ReqId {
        let id = self.take();
        let f = &self[from];
        let (client, member, source) = (f.client, f.member, f.source);
        let r = &mut self[id];
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

    /// The client of `req` gives up on it at `at` unless answered before.
    #[inline]
    pub(in crate::sim) fn set_client_timeout(&mut self, t: &mut Timers, req: ReqId, at: Ticks) {
        let key = t.deadline(at, Event::ClientTimeout(req));
        self[req].client_timeout = Some(key);
    }

    /// The handler holds no work for `req` (it left, or it never had it).
    #[inline]
    pub(in crate::sim) fn handler_left(&mut self, req: ReqId) {
        self[req].in_handler = false;
    }

    /// A client's call through its policy is over for it at `now`: the
    /// request is closed; how long it was in the system.
    pub(in crate::sim) fn call_over(&mut self, req: ReqId, now: Ticks) -> Ticks {
        let r = &mut self[req];
        r.closed = true;
        r.in_handler = false;
        now - r.sent
    }

    /// The handler answers `req` now: whom the answer reaches.
    #[inline(always)]
    pub(in crate::sim) fn respond(&mut self, t: &mut Timers, req: ReqId) -> Respond {
        let now = t.now();
        let r = &mut self[req];
        r.in_handler = false;
        if r.closed {
            return Respond::Nobody;
        }
        r.closed = true;
        if let Some(call) = r.caller {
            return Respond::Call(call);
        }
        t.cancel(r.client_timeout.take());
        Respond::Client {
            response: now - r.sent,
        }
    }

    /// The client's own timeout of `req` at `now`: if it still waited, it
    /// gives up; how long it waited (None: it had its answer).
    pub(in crate::sim) fn client_timeout(&mut self, req: ReqId, now: Ticks) -> Option<Ticks> {
        let r = &mut self[req];
        r.client_timeout = None;
        if r.closed {
            return None;
        }
        r.closed = true;
        Some(now - r.sent)
    }

    /// The caller of call-request `req` gave up on it: if it still waited,
    /// whether the handler holds work for it (None: it had its answer).
    pub(in crate::sim) fn caller_gone(&mut self, req: ReqId) -> Option<bool> {
        let r = &mut self[req];
        if r.closed {
            return None;
        }
        r.closed = true;
        Some(r.in_handler)
    }

    /// What the client's books hear of `req`'s end at `now`: its step, its
    /// sender, whether it was in time, and its response time.
    #[inline]
    pub(in crate::sim) fn done(&self, req: ReqId, now: Ticks) -> (Option<u32>, u32, bool, Ticks) {
        let r = &self[req];
        let in_time = r.deadline.is_none_or(|d| now <= d);
        (r.step, r.source, in_time, now - r.sent)
    }

    /// Whether `req` can be released (neither the client nor a handler needs
    /// it).
    #[inline]
    pub(in crate::sim) fn releasable(&self, req: ReqId) -> bool {
        let r = &self[req];
        r.closed && !r.in_handler && !r.held
    }

    /// Frees `req`'s slot.
    #[inline]
    pub(in crate::sim) fn free(&mut self, req: ReqId) {
        self.free.push(req);
    }
}
