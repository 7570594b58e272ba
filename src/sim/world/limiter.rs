//! The limiters put to the run: the only way to [`Limiting`], whose state the
//! world keeps private. A request walks its chain of limiters at the gateway
//! and at its service; the limiters say where the walk ends, and the world
//! sends it on, holds it or answers it. The limiters hear each request's end.

use super::super::context::Timers;
use super::super::limiter::{LimiterResults, Resumed, Walk};
use super::super::vocab::{Outcome, ReqId};
use super::World;

impl World<'_> {
    /// Counts a new request for the per-member and per-pair tallies.
    #[inline(always)]
    pub(in crate::sim) fn limiting_sent(&mut self, req: ReqId) {
        if self.limiting.enabled() {
            self.limiting.sent(&self.requests[req]);
        }
    }

    /// The request is at the gateway: its matching rules' limiters, then onward.
    pub(in crate::sim) fn limit_at_gateway(&mut self, req: ReqId) {
        if !self.limiting.enabled() {
            // no limiters in the model: straight on (the chain would be empty)
            return self.gateway_forward(req);
        }
        self.limiting.enter_gateway(req);
        self.limit_chain(req);
    }

    /// The request is at its service: the middleware limiters, then the handler.
    pub(in crate::sim) fn limit_at_service(&mut self, req: ReqId) {
        if !self.limiting.enabled() {
            return self.handle(req);
        }
        self.limiting.enter_service(req);
        self.limit_chain(req);
    }

    /// `req`'s balancer picked instance `i` of its service, whose middleware
    /// has limiters kept per replica: it walks them, then enters `i`. (As a
    /// sidecar's filter sees only its own pod's traffic.)
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn limit_at_replica(&mut self, i: usize, req: ReqId) {
        let service = self.requests[req].service;
        let replica = i - self.servers.instances(service).start;
        self.limiting.enter_replica(req, replica as u32);
        self.limit_chain(req);
    }

    /// A throttled request's hold is over: it passes the limiter that held it, or
    /// gets the 429 it was held for.
    pub(super) fn limiter_resume(&mut self, req: ReqId) {
        let (model, now) = (self.model(), self.now());
        match self.limiting.resume(model, req, &self.requests[req], now) {
            Resumed::Nothing => {}
            Resumed::Reject(l) => self.respond(req, Outcome::Rejected(l)),
            Resumed::Passed if self.requests[req].closed => {
                // the client gave up while it was held: nothing goes further
                self.respond(req, Outcome::TimedOut)
            }
            Resumed::Passed => self.limit_chain(req),
        }
    }

    /// Walks the rest of the request's current stage, then hands it on.
    fn limit_chain(&mut self, req: ReqId) {
        let mut t = Timers::new(&mut self.queue, self.now);
        match (self.limiting).walk(&mut t, self.model, req, &self.requests[req]) {
            Walk::ToService => self.gateway_forward(req),
            Walk::ToHandler => self.handle(req),
            Walk::ToReplica => {
                let service = self.requests[req].service;
                match self.servers.state_of(service, req) {
                    Some(i) => self.server_enter(i, req),
                    None => unreachable!("a request at its replica's limiters has a replica"),
                }
            }
            Walk::Held => {}
            Walk::Reject(l) => self.respond(req, Outcome::Rejected(l)),
        }
    }

    /// `req`'s handler gave its work up now (`World::handler_released`): every
    /// admission it holds hears it is done, as timed out.
    #[inline(always)]
    pub(in crate::sim) fn limiting_given_up(&mut self, req: ReqId) {
        if self.limiting.enabled() {
            let (model, now) = (self.model(), self.now());
            self.limiting.given_up(model, req, &self.requests[req], now);
        }
    }

    /// `req` is answered with `outcome` now (`World::respond`, for every
    /// request, calls from other services too): every admission it holds hears
    /// it is done, once, and a client's request whose client still waits is
    /// counted for its member. A model without limiters pays one check.
    #[inline(always)]
    pub(in crate::sim) fn limiting_responded(&mut self, req: ReqId, outcome: Outcome) {
        if self.limiting.enabled() {
            let (model, now) = (self.model(), self.now());
            (self.limiting).responded(model, req, &self.requests[req], outcome, now);
        }
    }

    /// Under test: `req`'s slot is freed; it must hold no admission by then.
    #[cfg(test)]
    pub(in crate::sim) fn limiting_released(&mut self, req: ReqId) {
        self.limiting.released(req);
    }

    /// Under test: every admission and done notice of the run.
    #[cfg(test)]
    pub(in crate::sim) fn limiting_ledger(&self) -> &super::super::limiter::Ledger {
        &self.limiting.ledger
    }

    /// Counts a request's end: rejected (first reason) or not found.
    #[inline(always)]
    pub(in crate::sim) fn limiting_outcome(&mut self, req: ReqId, outcome: Outcome) {
        if self.limiting.enabled() {
            (self.limiting).outcome(self.model(), &self.requests[req], outcome);
        }
    }

    /// Whether `outcome` is a concurrency limiter's rejection, which a
    /// balancer's outlier detection counts as a failure: Envoy's adaptive
    /// concurrency filter blocks with a local reply of its
    /// `concurrency_limit_exceeded_status`, 503 unless set, a 5xx
    /// (`adaptive_concurrency_filter.cc`, `AdaptiveConcurrencyFilter::decodeHeaders`),
    /// while a rate limiter's 429 (Envoy's `local_ratelimit`) is not one.
    pub(in crate::sim) fn limiting_5xx(&self, outcome: Outcome) -> bool {
        matches!(outcome, Outcome::Rejected(l) if self.model().limiters[l].concurrency().is_some())
    }

    /// The run's limiter figures, with names.
    pub(in crate::sim) fn limiting_results(&self) -> LimiterResults {
        self.limiting
            .results(self.model(), self.symbols(), self.now())
    }
}
