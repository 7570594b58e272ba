//! The servers put to the run: the only way to [`Servers`], whose state the
//! world keeps private. The servers say what becomes of a request at each step
//! of its life there (it starts, waits, is shed, leaves its slot, and which
//! waiter takes the slot) and set their own events; the world lends them the
//! clock, the queue and the faults, asks the balancers' callers, gives the
//! notes and answers the request.

use super::super::context::Timers;
use super::super::notes::Note;
use super::super::server::{Arrival, Pick, Released, Started, Waiting};
use super::super::vocab::{Caller, Outcome, ReqId};
use super::World;
use crate::engine::Ticks;
use crate::model::{Hook, ServiceId};

impl World<'_> {
    /// A request reaches its server: start it, queue it, or shed it. (Its one
    /// caller is `handle`, on every request's path: always inlined there.)
    #[inline(always)]
    pub(in crate::sim) fn server_arrive(&mut self, req: ReqId) {
        let service = self.requests[req].service;
        let Some(i) = self.server_pick(service, req) else {
            self.server_unplaced(service, req);
            return;
        };
        self.server_enter(i, req);
    }

    /// A request of `service` reached no instance: no server serves it
    /// (answered at once), or it waits in the queue in front of the replicas
    /// or was refused there (done already).
    #[cold]
    #[inline(never)]
    fn server_unplaced(&mut self, service: ServiceId, req: ReqId) {
        if self.servers.route(service).is_none() {
            self.respond(req, Outcome::Answered);
        }
    }

    /// `req` reaches instance `i`: start it, queue it, or shed it (or, if a
    /// `down` fault acts on the instance, fail it).
    #[inline(always)]
    pub(super) fn server_enter(&mut self, i: usize, req: ReqId) {
        let now = self.now();
        if !self.plain() && self.faults_of(Hook::Down) && self.server_arrive_down(i, req) {
            return;
        }
        let mut t = Timers::new(&mut self.queue, now);
        match self.servers.arrive(&mut t, i, req) {
            Arrival::Start { demand } => self.server_start(i, req, now, demand),
            Arrival::Queued => {}
            Arrival::Shed => self.respond(req, Outcome::Shed),
        }
    }

    /// A request arrives at instance `i`: if a `down` fault acts on it, it fails
    /// at once (true).
    #[cold]
    #[inline(never)]
    fn server_arrive_down(&mut self, i: usize, req: ReqId) -> bool {
        if !self.servers.down(&self.faults, i, self.now) {
            return false;
        }
        self.servers.arrived_down(i);
        self.respond(req, Outcome::Error);
        true
    }

    /// A waiter of instance `i` has taken a slot: its queue timeout is off, its
    /// service starts.
    #[inline(always)]
    fn server_start_waiter(&mut self, i: usize, w: Waiting) {
        let plain = self.plain();
        let mut t = Timers::new(&mut self.queue, self.now);
        let req = w.req;
        let waited = self.servers.begin_waiter(&mut t, &self.faults, plain, i, w);
        self.note(Note::Started { req, waited });
    }

    /// `req` has taken a slot of instance `i`: its service starts now.
    fn server_start(&mut self, i: usize, req: ReqId, arrived: Ticks, demand: Ticks) {
        let plain = self.plain();
        let mut t = Timers::new(&mut self.queue, self.now);
        let work = (arrived, demand);
        let waited = self
            .servers
            .begin(&mut t, &self.faults, plain, (i, req), work);
        self.note(Note::Started { req, waited });
    }

    /// The requests that took a slot in a step of the servers' own start
    /// their service: each is noted, in order.
    pub(super) fn server_started(&mut self, started: Started) {
        for (req, waited) in started {
            self.note(Note::Started { req, waited });
        }
    }

    /// A slot finishes the service of `req`: with calls to make, they start while
    /// the slot stays held; otherwise the request is answered.
    pub(super) fn server_done(&mut self, req: ReqId) {
        self.servers.service_done(req);
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            return;
        };
        if !self.plain() && self.faults_of(Hook::ErrorRate) && self.server_fails(i) {
            // an `error_rate` fault fails the request after its service time
            self.server_release(i, req, Outcome::Error);
            return;
        }
        if self.servers.calls(i) {
            self.plan_start(req);
            return;
        }
        self.server_release(i, req, Outcome::Answered);
    }

    /// Whether an `error_rate` fault fails the request at instance `i` at the
    /// end of its service.
    #[cold]
    #[inline(never)]
    fn server_fails(&mut self, i: usize) -> bool {
        self.fault_fails(self.servers.subject(i))
    }

    /// A server's calls are over for `req` (`outcome`): its slot is freed.
    pub(in crate::sim) fn server_calls_done(&mut self, req: ReqId, outcome: Outcome) {
        let service = self.requests[req].service;
        if let Some(i) = self.servers.state_of(service, req) {
            self.server_release(i, req, outcome);
        }
    }

    /// `req` leaves its slot at instance `i` with `outcome`: the slot takes the
    /// next queued request, then the answer goes back (so a new arrival it
    /// triggers sees the freed slot taken).
    fn server_release(&mut self, i: usize, req: ReqId, outcome: Outcome) {
        let now = self.now();
        let r = &self.requests[req];
        let late = r.closed || r.deadline.is_some_and(|d| now > d);
        let released = self.servers.release(i, req, now, late);
        self.server_freed(i, req, released, Some(outcome), late);
        self.respond(req, outcome);
    }

    /// `req` left its slot at instance `i` (answered with `outcome`, or
    /// stopped: None): the tracer hears it, the slot takes the next waiter
    /// (and, where the slots' limit had room to spare, the waiters it lets
    /// in), and work nobody waited for (`late`) is counted.
    #[inline(always)]
    fn server_freed(
        &mut self,
        i: usize,
        req: ReqId,
        released: Released,
        outcome: Option<Outcome>,
        late: bool,
    ) {
        let Released {
            arrived,
            started,
            next,
            stats,
            worked,
            takes,
        } = released;
        self.note(Note::Served {
            req,
            outcome,
            arrived,
            started,
        });
        if let Some(w) = next {
            self.server_start_waiter(i, w);
        }
        if takes {
            self.server_take_waiters(i);
        }
        // (only the time series hears late work: none in a plain run)
        if late && !self.plain() {
            self.server_note_late(stats, worked);
        }
    }

    /// The time series sees work nobody waited for (`worked`) end at server
    /// row `stats`. (It reads the rest of a server's figures from its books at
    /// each window's end.)
    #[cold]
    #[inline(never)]
    fn server_note_late(&mut self, stats: usize, worked: Ticks) {
        self.note(Note::LateWork { row: stats, worked });
    }

    /// The client of `req` gave up: with `abandon = true` a queued request leaves
    /// the queue and its work is saved; a request in service runs to its end.
    pub(in crate::sim) fn server_abandon(&mut self, req: ReqId) {
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            self.server_proxy_abandon(service, req);
            return;
        };
        if !self.servers.abandons(i) {
            return;
        }
        self.server_unqueue(i, req);
    }

    /// Takes `req` out of instance `i`'s queue, if it waits there.
    fn server_unqueue(&mut self, i: usize, req: ReqId) -> bool {
        let mut t = Timers::new(&mut self.queue, self.now);
        let Some(arrived) = self.servers.unqueue(&mut t, i, req) else {
            return false;
        };
        self.note(Note::Unqueued { req, arrived });
        self.handler_released(req);
        if self.servers.limited(i) {
            self.server_take_waiters(i);
        }
        true
    }

    /// The caller of `req` cancelled it: it leaves the queue, or its service or
    /// its calls stop and its slot is freed at once.
    pub(in crate::sim) fn server_cancel(&mut self, req: ReqId) {
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            self.server_proxy_cancel(service, req);
            return;
        };
        if self.server_unqueue(i, req) || self.server_stop(i, req, true) {
            self.handler_released(req);
        }
    }

    /// Stops the running work of `req` at instance `i` (its service, or its
    /// calls) and frees its slot; false if it was not running there (held by a
    /// limiter on its way). `late`: the work counts as late work.
    fn server_stop(&mut self, i: usize, req: ReqId, late: bool) -> bool {
        let mut t = Timers::new(&mut self.queue, self.now);
        if self.servers.stop_service(&mut t, req) {
            // its completion is cancelled
        } else if self.plan_running(req) {
            self.plan_cancel(req);
        } else {
            return false;
        }
        let now = self.now();
        let released = self.servers.stopped(i, req, now, late);
        self.server_freed(i, req, released, None, late);
        true
    }

    /// A queued request's queue timeout (CoDel): still waiting, it is shed.
    #[inline(never)]
    pub(super) fn server_queue_timeout(&mut self, req: ReqId) {
        let now = self.now();
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            self.server_proxy_timeout(service, req);
            return;
        };
        if self.servers.queue_timeout(i, req, now) {
            if self.servers.limited(i) {
                self.server_take_waiters(i);
            }
            self.respond(req, Outcome::Shed);
        }
    }

    /// A `down` fault on `service` starts: the queued and running requests of each
    /// instance it hits fail now (answered `error`).
    pub(super) fn server_down(&mut self, service: ServiceId) {
        let now = self.now();
        for i in self.servers.instances(service) {
            if !self.servers.down(&self.faults, i, now) {
                continue;
            }
            let mut t = Timers::new(&mut self.queue, now);
            for w in self.servers.drain(&mut t, i) {
                self.servers.queued_failed(i, &w, now);
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
            if self.servers.limited(i) {
                self.server_take_waiters(i);
            }
        }
    }

    /// The instance a new request of `service` goes to (the balancer's pick);
    /// None when no server serves it, or when it waits in the queue in front
    /// of the replicas or was refused there (`max_conn`).
    #[inline]
    fn server_pick(&mut self, service: ServiceId, req: ReqId) -> Option<usize> {
        match self.servers.route(service)? {
            Pick::One(i) => Some(i),
            Pick::Balance { by_caller } => {
                let i = self.server_pick_replica(service, req, by_caller);
                if self.limiting.per_replica(service) {
                    // its replica's own limiters first (`scope = "replica"`)
                    self.limit_at_replica(i, req);
                    return None;
                }
                Some(i)
            }
            Pick::Limited => self.server_place(service, req),
        }
    }

    /// The replica of `service` its balancer picks for `req`, in its view.
    #[inline(never)]
    fn server_pick_replica(&mut self, service: ServiceId, req: ReqId, by_caller: bool) -> usize {
        let now = self.now();
        if !by_caller {
            return self.servers.pick(service, req, now, None);
        }
        let key = self.balance_caller(req);
        let model = self.model();
        let name = move || super::super::balance::caller_name(model, key);
        self.servers.pick(service, req, now, Some((key, &name)))
    }

    /// Who sent `req`, as a caller view counts it: its workload (one proxy
    /// per workload), or the service instance whose call it is.
    fn balance_caller(&self, req: ReqId) -> u64 {
        let r = &self.requests[req];
        let outer = match r.caller {
            None => Caller::Client { req },
            Some(call) => self.call_owner(call),
        };
        self.balance_caller_of(outer)
    }

    /// A caller (a client's request, or a plan's branch) as a caller view
    /// counts it: the request's workload, or the service instance the branch
    /// runs in.
    pub(in crate::sim) fn balance_caller_of(&self, outer: Caller) -> u64 {
        match outer {
            Caller::Client { req } => u64::from(self.request_workload(req).unwrap_or(0)),
            Caller::Branch { req, .. } => {
                let service = self.requests[req].service;
                self.servers.branch_key(service, req)
            }
            Caller::Policy { .. } => unreachable!("a policy call's owner is never a policy"),
        }
    }

    /// A pick is over for its caller (`req` answered, failed, or given up
    /// on): its picker hears it, when it listens.
    pub(super) fn balance_over(&mut self, req: ReqId, failed: bool) {
        let now = self.now();
        self.servers.balance_over(req, failed, now);
    }

    /// The caller of `req` gave up on it: its pick is over for its balancer,
    /// or kept, marked given up, where the balancer holds picks.
    pub(super) fn balance_gave_up(&mut self, req: ReqId) {
        let now = self.now();
        self.servers.balance_gave_up(req, now);
    }

    /// The replica is done with `req` without answering it: a held pick is
    /// over, as a failure.
    pub(super) fn balance_left(&mut self, req: ReqId) {
        let now = self.now();
        self.servers.balance_left(req, now);
    }
}
