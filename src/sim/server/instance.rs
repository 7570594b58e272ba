//! One server instance (a replica): its slots and bounded queue, and a
//! request's life there: admitted, started, queued, shed, finished (or on to
//! its calls), abandoned by its client or cancelled by its caller.

use super::super::ahead::Draws;
use super::super::faults::{Subject, may_act};
use super::super::latency::Sampler;
use super::super::notes::Note;
use super::super::slots::{Admit, SlotQueue};
use super::super::vocab::{Event, Outcome, ReqId, World};
use super::queue::{self, Discipline};
use crate::engine::{Lane, Ticks, stream};
use crate::model::{FaultKind, Model, Server, ServiceId};

/// One queued request.
#[derive(Debug, Clone, Copy)]
pub(super) struct Waiting {
    pub(super) req: ReqId,
    pub(super) arrived: Ticks,
    pub(super) demand: Ticks,
}

/// One server instance (a replica).
pub(super) struct Instance {
    /// Which fault questions are about it.
    pub(super) subject: Subject,
    /// A `latency_factor` fault targets it: work starting here asks for its factor.
    pub(super) stretched: bool,
    /// Its own slots, restored when a `slots` fault ends.
    pub(super) slots: u32,
    /// Its queue's order and queue timeouts (`order`, `codel`).
    pub(super) discipline: Box<dyn Discipline>,
    /// The discipline watches the queue (`Discipline::watches`): it hears of
    /// every join and leave and is asked before each freed slot.
    pub(super) timed: bool,
    pub(super) abandon: bool,
    /// Its service times.
    pub(super) draws: Draws,
    /// `slots` at once, `queue` places in line, the rest shed.
    pub(super) line: SlotQueue<Waiting>,
    /// Index into `Servers::stats`.
    pub(super) stats: usize,
    /// Index into the service's `ServerStats::replicas` (replicated services).
    pub(super) replica: Option<usize>,
    /// The server makes calls after its service time (`branches`).
    pub(super) calls: bool,
    /// Requests in its slots and in its line now (what a balancer reads).
    pub(super) outstanding: u32,
}

impl Instance {
    /// Replica `i` (of `n`) of `service`'s `server`, its figures in row
    /// `stats` of `Servers::stats`.
    pub(super) fn new(
        model: &Model,
        replication: u64,
        service: ServiceId,
        server: &Server,
        (i, n): (usize, usize),
        stats: usize,
    ) -> Instance {
        let name = &model.services[service].name;
        let name = if i == 0 {
            format!("server:{name}")
        } else {
            format!("server:{name}#{}", i + 1)
        };
        let mut rng = stream(model.seed, replication, &name);
        let mut line = SlotQueue::new(server.slots, Some(server.queue));
        let discipline = queue::of(server.order, server.codel);
        line.set_lifo(discipline.newest_first(0, Ticks::ZERO));
        let subject = Subject::Server {
            service,
            replica: i as u32,
        };
        Instance {
            subject,
            stretched: may_act(model, FaultKind::LatencyFactor, subject),
            slots: server.slots,
            timed: discipline.watches(),
            discipline,
            abandon: server.abandon,
            draws: Draws::here(Sampler::new(&server.service, &mut rng), rng),
            line,
            stats,
            replica: (n > 1).then_some(i),
            calls: server.plan.is_some(),
            outstanding: 0,
        }
    }
}

impl World<'_> {
    /// A request reaches its server: start it, queue it, or shed it.
    pub(in crate::sim) fn server_arrive(&mut self, req: ReqId) {
        let now = self.now();
        let service = self.requests[req].service;
        let Some(i) = self.server_pick(service, req) else {
            self.respond(req, Outcome::Answered);
            return;
        };
        if !self.plain() && self.faults_of(FaultKind::Down) && self.server_arrive_down(i, req) {
            return;
        }
        let s = &mut self.servers.states[i];
        let admit = s.line.admit();
        let full = admit == Admit::Refuse;
        let start_now = admit == Admit::Start;
        let demand = if full { Ticks::ZERO } else { s.draws.sample() };
        let (stats, replica, timed) = (s.stats, s.replica, s.timed);
        if !full {
            s.outstanding += 1;
        }
        match admit {
            Admit::Start => s.line.start(),
            Admit::Wait => {
                if timed {
                    self.server_joined(i, req);
                }
                self.servers.states[i].line.wait(Waiting {
                    req,
                    arrived: now,
                    demand,
                })
            }
            Admit::Refuse => {}
        }
        let st = &mut self.servers.stats[stats];
        st.arrived += 1;
        if let Some(r) = replica {
            let r = &mut st.replicas[r];
            r.arrived += 1;
            r.shed += u64::from(full);
        }
        if full {
            st.shed += 1;
        } else if start_now {
            self.server_start(i, req, now, demand);
        } else {
            st.queued.add(now, 1);
        }
        if full {
            self.respond(req, Outcome::Shed);
        }
    }

    /// The time series sees work nobody waited for (`worked`) end at server
    /// row `stats`. (It reads the rest of a server's figures from its books at
    /// each window's end.)
    #[cold]
    #[inline(never)]
    pub(super) fn server_note_late(&mut self, stats: usize, worked: Ticks) {
        self.note(Note::LateWork { row: stats, worked });
    }

    /// A waiter of instance `i` has taken a slot: its queue timeout is off, its
    /// service starts.
    #[inline(always)]
    pub(super) fn server_start_waiter(&mut self, i: usize, w: Waiting) {
        let s = &self.servers.states[i];
        let (st, timed) = (s.stats, s.timed);
        let now = self.now();
        self.servers.stats[st].queued.add(now, -1);
        if timed {
            self.server_waiter_timed(i, w.req);
        }
        self.server_start(i, w.req, w.arrived, w.demand);
    }

    /// `req` has taken a slot of instance `i`: its service starts now (stretched
    /// by a `latency_factor` fault acting now).
    pub(super) fn server_start(&mut self, i: usize, req: ReqId, arrived: Ticks, demand: Ticks) {
        let now = self.now();
        let demand = if self.plain() || !self.servers.states[i].stretched {
            demand
        } else {
            self.server_stretch(i, demand)
        };
        let s = &self.servers.states[i];
        let st = &mut self.servers.stats[s.stats];
        st.busy.add(now, 1);
        st.waits.push(now - arrived);
        if let Some(r) = s.replica {
            st.replicas[r].busy.add(now, 1);
        }
        self.note(Note::Started {
            req,
            waited: now - arrived,
        });
        let times = &mut self.servers.in_service;
        if times.len() <= req as usize {
            times.resize(req as usize + 1, (Ticks::ZERO, Ticks::ZERO));
        }
        times[req as usize] = (arrived, now);
        if self.servers.cancellable {
            let key = self.schedule(now + demand, Lane::Normal, Event::ServerDone(req));
            let keys = &mut self.servers.done_keys;
            if keys.len() <= req as usize {
                keys.resize(req as usize + 1, None);
            }
            keys[req as usize] = Some(key);
        } else {
            self.post(now + demand, Lane::Normal, Event::ServerDone(req));
        }
    }

    /// A slot finishes the service of `req`: with calls to make, they start while
    /// the slot stays held; otherwise the request is answered.
    pub(in crate::sim) fn server_done(&mut self, req: ReqId) {
        if self.servers.cancellable {
            self.servers.done_keys[req as usize] = None;
        }
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            return;
        };
        if !self.plain() && self.faults_of(FaultKind::ErrorRate) && self.server_fails(req) {
            // an `error_rate` fault fails the request after its service time
            self.server_release(i, req, Outcome::Error);
            return;
        }
        if self.servers.states[i].calls {
            self.plan_start(req);
            return;
        }
        self.server_release(i, req, Outcome::Answered);
    }

    /// A server's calls are over for `req` (`outcome`): its slot is freed.
    pub(in crate::sim) fn server_calls_done(&mut self, req: ReqId, outcome: Outcome) {
        let service = self.requests[req].service;
        if let Some(i) = self.servers.state_of(service, req) {
            self.server_release(i, req, outcome);
        }
    }

    /// `req`'s slot at instance `i` is free: the order discipline picks, the
    /// line gives the next waiter (if any), and the request's arrival and start
    /// come back with the statistics' and replica's indices.
    #[inline(always)]
    fn server_free_slot(
        &mut self,
        i: usize,
        req: ReqId,
    ) -> (Ticks, Ticks, Option<Waiting>, usize, Option<usize>) {
        let (arrived, started) = self.servers.in_service[req as usize];
        self.server_pick_order(i);
        let s = &mut self.servers.states[i];
        let next = s.line.release();
        s.outstanding -= 1;
        (arrived, started, next, s.stats, s.replica)
    }

    /// `req` leaves its slot at instance `i` with `outcome`: the slot takes the
    /// next queued request, then the answer goes back (so a new arrival it
    /// triggers sees the freed slot taken).
    pub(super) fn server_release(&mut self, i: usize, req: ReqId, outcome: Outcome) {
        let now = self.now();
        let (arrived, started, next, stats, replica) = self.server_free_slot(i, req);
        let r = &self.requests[req];
        let late = r.closed || r.deadline.is_some_and(|d| now > d);
        let worked = now - started;
        let st = &mut self.servers.stats[stats];
        st.busy.add(now, -1);
        st.processed += 1;
        st.response.push(now - arrived);
        st.in_server.add(now - arrived);
        st.work.add(worked);
        if late {
            st.late_work.add(worked);
        }
        if let Some(r) = replica {
            let r = &mut st.replicas[r];
            r.busy.add(now, -1);
            r.processed += 1;
            r.response.push(now - arrived);
        }
        self.note(Note::Served {
            req,
            outcome: Some(outcome),
            arrived,
            started,
        });
        if let Some(w) = next {
            self.server_start_waiter(i, w);
        }
        if late && !self.plain() {
            self.server_note_late(stats, worked);
        }
        self.respond(req, outcome);
    }

    /// The client of `req` gave up: with `abandon = true` a queued request leaves
    /// the queue and its work is saved; a request in service runs to its end.
    pub(in crate::sim) fn server_abandon(&mut self, req: ReqId) {
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            return;
        };
        if !self.servers.states[i].abandon {
            return;
        }
        self.server_unqueue(i, req);
    }

    /// Takes `req` out of instance `i`'s queue, if it waits there.
    pub(super) fn server_unqueue(&mut self, i: usize, req: ReqId) -> bool {
        let now = self.now();
        let s = &mut self.servers.states[i];
        let Some(w) = s.line.leave(|w| w.req == req) else {
            return false;
        };
        s.outstanding -= 1;
        let st = &mut self.servers.stats[s.stats];
        st.queued.add(now, -1);
        st.abandoned += 1;
        st.saved.add(w.demand);
        st.in_server.add(now - w.arrived);
        self.note(Note::Unqueued {
            req,
            arrived: w.arrived,
        });
        self.server_timeout_off(w.req);
        self.server_dequeued(i);
        self.handler_released(req);
        true
    }

    /// The caller of `req` cancelled it: it leaves the queue, or its service or
    /// its calls stop and its slot is freed at once.
    pub(in crate::sim) fn server_cancel(&mut self, req: ReqId) {
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            return;
        };
        if self.server_unqueue(i, req) || self.server_stop(i, req, true) {
            self.handler_released(req);
        }
    }

    /// Stops the running work of `req` at instance `i` (its service, or its
    /// calls) and frees its slot; false if it was not running there (held by a
    /// limiter on its way). `late`: the work counts as late work.
    pub(super) fn server_stop(&mut self, i: usize, req: ReqId, late: bool) -> bool {
        debug_assert!(
            self.servers.cancellable,
            "work stopped in a model that cancels none"
        );
        let in_service = self
            .servers
            .done_keys
            .get_mut(req as usize)
            .and_then(Option::take);
        let in_calls = in_service.is_none() && self.plan_running(req);
        if let Some(key) = in_service {
            self.cancel(key);
        } else if in_calls {
            self.plan_cancel(req);
        } else {
            return false;
        }
        let now = self.now();
        let (arrived, started, next, stats, replica) = self.server_free_slot(i, req);
        let worked = now - started;
        let st = &mut self.servers.stats[stats];
        st.busy.add(now, -1);
        st.cancelled += u64::from(late);
        st.work.add(worked);
        if late {
            st.late_work.add(worked);
        }
        st.in_server.add(now - arrived);
        if let Some(r) = replica {
            st.replicas[r].busy.add(now, -1);
        }
        self.note(Note::Served {
            req,
            outcome: None,
            arrived,
            started,
        });
        if let Some(w) = next {
            self.server_start_waiter(i, w);
        }
        if late {
            self.note(Note::LateWork { row: stats, worked });
        }
        true
    }
}
