//! Server actor (IO22, IO23): a service that works on at most `slots` requests at
//! once and keeps up to `queue` more waiting in arrival order (FIFO). A request that
//! finds every slot and every queue place taken is shed at once (503, load
//! shedding). With `abandon = true` a queued request is dropped when its client
//! gives up: the cancellation signal for queued work.
//!
//! Each admitted request carries its service demand, drawn from the service model
//! when it is admitted (from the server's own stream, `server:<service>`), so a
//! request dropped from the queue saves exactly the work it would have cost.
//!
//! The grant rule, as the seed's `kapasite.mjs`: occupancy = busy slots + queued
//! requests; occupancy >= slots + queue sheds, busy < slots starts at once, anything
//! else waits. A request admitted at occupancy k under a constant service time waits
//! floor(k / slots) rounds.
//!
//! A server with `branches` makes its calls after the service time, **still holding
//! its slot** (a worker blocked on its downstream calls), then answers: `error`
//! (Dropped) when a call below failed. A cancelled request (its caller gave up with
//! cancellation) leaves the queue, or stops its service or its calls and frees its
//! slot at once.
//!
//! With `replicas = N` each replica has its own slots, queue and stream
//! (`server:<service>#i` for i > 1) and a balancer picks one per request; the
//! service's figures add up its replicas', and each replica's own are kept too.

mod queue;

use super::ahead::Draws;
use super::balance::{self, Balance};
use super::faults::{Subject, may_act, scaled};
use super::latency::Sampler;
use super::slots::{Admit, SlotQueue};
use super::trace::trace;
use super::{Event, Outcome, ReqId, World};
use crate::engine::{EventKey, Lane, Ticks, stream};
use crate::metrics::{Samples, TickSum, TimeAverage};
use crate::model::{FaultKind, Handler, Model, ServiceId};
use queue::Discipline;

/// What one server measured in a run.
#[derive(Debug, Clone, Default)]
pub struct ServerStats {
    /// The service it serves.
    pub service: ServiceId,
    /// Requests that reached the server.
    pub arrived: u64,
    /// Requests whose service was completed.
    pub processed: u64,
    /// Requests refused because slots and queue were full.
    pub shed: u64,
    /// Queued requests dropped because their client gave up (`abandon = true`) or
    /// their caller cancelled them.
    pub abandoned: u64,
    /// Queue wait of every request that started service.
    pub waits: Samples,
    /// Time at the server (wait + service) of every processed request.
    pub response: Samples,
    /// Busy slots over time.
    pub busy: TimeAverage,
    /// Queued requests over time.
    pub queued: TimeAverage,
    /// Filled in at the end of the run from `busy` and `queued`.
    pub mean_busy_slots: f64,
    /// Time-weighted mean of queued requests (`queued`).
    pub mean_queue: f64,
    /// Slot time spent on processed requests (service, and calls made holding the
    /// slot), and on requests cancelled while they held it.
    pub work_ms: f64,
    /// The part of `work_ms` spent on requests whose answer came after the client's
    /// deadline or after the client gave up: work nobody waited for.
    pub late_work_ms: f64,
    /// Service demand of the queued requests dropped by `abandon`: work never done.
    pub saved_ms: f64,
    /// Requests whose caller cancelled them while they held a slot (in service or
    /// in their calls).
    pub cancelled: u64,
    /// Time every admitted request spent at the server, from arrival to leaving
    /// (answered, dropped from the queue or cancelled): the sample path behind
    /// `mean_busy_slots + mean_queue` (Little's law).
    pub in_server_ms: f64,
    /// Per replica (empty for a service with one).
    pub replicas: Vec<ReplicaStats>,
    // the sums behind work_ms, late_work_ms, saved_ms and in_server_ms, kept in
    // ticks during the run
    pub(crate) work: TickSum,
    pub(crate) late_work: TickSum,
    pub(crate) saved: TickSum,
    pub(crate) in_server: TickSum,
}

/// What one replica of a replicated server measured.
#[derive(Debug, Clone, Default)]
pub struct ReplicaStats {
    pub arrived: u64,
    pub processed: u64,
    pub shed: u64,
    /// Time at the replica of every processed request.
    pub response: Samples,
    pub busy: TimeAverage,
    pub mean_busy_slots: f64,
}

/// One queued request.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    req: ReqId,
    arrived: Ticks,
    demand: Ticks,
}

/// One server instance (a replica).
struct ServerState {
    /// Which fault questions are about it.
    subject: Subject,
    /// A `latency_factor` fault targets it: work starting here asks for its factor.
    stretched: bool,
    /// Its own slots, restored when a `slots` fault ends.
    slots: u32,
    /// Its queue's order and queue timeouts (`order`, `codel`).
    discipline: Box<dyn Discipline>,
    /// The discipline watches the queue (`Discipline::watches`): it hears of
    /// every join and leave and is asked before each freed slot.
    timed: bool,
    abandon: bool,
    /// Its service times.
    draws: Draws,
    /// `slots` at once, `queue` places in line, the rest shed.
    line: SlotQueue<Waiting>,
    /// Index into `Servers::stats`.
    stats: usize,
    /// Index into the service's `ServerStats::replicas` (replicated services).
    replica: Option<usize>,
    /// The server makes calls after its service time (`branches`).
    calls: bool,
}

/// How a service's requests reach its instances.
enum Route {
    /// One instance: `Servers::states[i]`.
    Single(usize),
    /// `n` instances from `Servers::states[first]`, picked by `balancer`.
    Replicated(Box<Balancing>),
}

/// The replicas of one service and how it picks among them.
struct Balancing {
    first: usize,
    n: usize,
    /// Picks among the replicas' outstanding counts, with its own stream
    /// (`balancer:<service>`).
    balancer: Box<dyn Balance>,
}

/// Every server of a run.
pub(crate) struct Servers {
    states: Vec<ServerState>,
    /// Requests in slots and in line now, by instance: the replicas of a
    /// service side by side, the view its balancer picks from.
    outstanding: Vec<u32>,
    by_service: Vec<Option<Route>>,
    /// One per server, in service order.
    stats: Vec<ServerStats>,
    /// (arrived, started) of each request in service, by request id: kept here
    /// rather than in the completion event so that events stay small.
    in_service: Vec<(Ticks, Ticks)>,
    /// The instance each request of a replicated service went to, by request id.
    replica_of: Vec<u32>,
    /// Whether a request's service here may be stopped (`Model::cancels_work`):
    /// then each request's pending completion is kept, by request id.
    cancellable: bool,
    done_keys: Vec<Option<EventKey>>,
    /// Each queued request's queue timeout (CoDel), by request id.
    timeout_keys: Vec<Option<EventKey>>,
}

impl Servers {
    /// Room for `more` requests in every server's books and lines, made now
    /// (see `World::reserve_ahead`).
    pub fn reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        for s in &mut self.states {
            s.line.reserve(more.min(s.line.waiting() + 1))?;
        }
        self.in_service.try_reserve(more)?;
        self.replica_of.try_reserve(more)?;
        self.done_keys.try_reserve(more)?;
        self.timeout_keys.try_reserve(more)
    }

    /// Every server's service times, for drawing ahead.
    pub fn draws(&mut self) -> impl Iterator<Item = &mut Draws> {
        self.states.iter_mut().map(|s| &mut s.draws)
    }

    pub fn new(model: &Model, replication: u64) -> Servers {
        let mut states = Vec::new();
        let mut stats = Vec::new();
        let by_service: Vec<Option<Route>> = model
            .services
            .iter()
            .enumerate()
            .map(|(service, s)| {
                let Handler::Server(server) = &s.handler else {
                    return None;
                };
                let first = states.len();
                let n = s.replicas.max(1) as usize;
                for i in 0..n {
                    let name = if i == 0 {
                        format!("server:{}", s.name)
                    } else {
                        format!("server:{}#{}", s.name, i + 1)
                    };
                    let mut rng = stream(model.seed, replication, &name);
                    let mut line = SlotQueue::new(server.slots, Some(server.queue));
                    let discipline = queue::of(server.order, server.codel);
                    line.set_lifo(discipline.newest_first(0, Ticks::ZERO));
                    let subject = Subject::Server {
                        service,
                        replica: i as u32,
                    };
                    states.push(ServerState {
                        subject,
                        stretched: may_act(model, FaultKind::LatencyFactor, subject),
                        slots: server.slots,
                        timed: discipline.watches(),
                        discipline,
                        abandon: server.abandon,
                        draws: Draws::here(Sampler::new(&server.service, &mut rng), rng),
                        line,
                        stats: stats.len(),
                        replica: (n > 1).then_some(i),
                        calls: server.plan.is_some(),
                    });
                }
                stats.push(ServerStats {
                    service,
                    replicas: vec![ReplicaStats::default(); if n > 1 { n } else { 0 }],
                    ..ServerStats::default()
                });
                Some(if n == 1 {
                    Route::Single(first)
                } else {
                    let rng = stream(model.seed, replication, &format!("balancer:{}", s.name));
                    Route::Replicated(Box::new(Balancing {
                        first,
                        n,
                        balancer: balance::of(s.balancer, rng),
                    }))
                })
            })
            .collect();
        // a cancelling caller or a `down` fault may stop running work
        let cancellable = model.cancels_work();
        Servers {
            outstanding: vec![0; states.len()],
            states,
            by_service,
            stats,
            in_service: Vec::new(),
            replica_of: Vec::new(),
            cancellable,
            done_keys: Vec::new(),
            timeout_keys: Vec::new(),
        }
    }

    /// Every server's figures, for the time series to read its levels and counts
    /// at a window's end (`World::series_roll`).
    pub fn stats(&self) -> &[ServerStats] {
        &self.stats
    }

    /// Every server's figures, to start them again when the warm-up ends
    /// (`observe::restart_server`).
    pub fn stats_mut(&mut self) -> &mut [ServerStats] {
        &mut self.stats
    }

    /// End of run: time averages over the whole run, and every server's figures.
    pub fn finish(self, end: Ticks) -> Vec<ServerStats> {
        let mut stats = self.stats;
        for st in &mut stats {
            st.mean_busy_slots = st.busy.mean(end);
            st.mean_queue = st.queued.mean(end);
            st.work_ms = st.work.ms();
            st.late_work_ms = st.late_work.ms();
            st.saved_ms = st.saved.ms();
            st.in_server_ms = st.in_server.ms();
            for r in &mut st.replicas {
                r.mean_busy_slots = r.busy.mean(end);
            }
        }
        stats
    }

    /// The instance `req` of `service` is at (it has one).
    #[inline]
    fn state_of(&self, service: ServiceId, req: ReqId) -> Option<usize> {
        match self.by_service[service].as_ref()? {
            Route::Single(i) => Some(*i),
            Route::Replicated(_) => self.replica_of.get(req as usize).map(|&i| i as usize),
        }
    }

    /// The instance a new request of `service` goes to (the balancer's pick).
    #[inline]
    fn pick(&mut self, service: ServiceId, req: ReqId) -> Option<usize> {
        let i = match self.by_service[service].as_mut()? {
            Route::Single(i) => return Some(*i),
            Route::Replicated(b) => {
                let view = &self.outstanding[b.first..b.first + b.n];
                b.first + b.balancer.pick(view)
            }
        };
        let map = &mut self.replica_of;
        if map.len() <= req as usize {
            map.resize(req as usize + 1, 0);
        }
        map[req as usize] = i as u32;
        Some(i)
    }
}

impl World<'_> {
    /// A request reaches its server: start it, queue it, or shed it.
    pub(super) fn server_arrive(&mut self, req: ReqId) {
        let now = self.now;
        let service = self.requests[req].service;
        let Some(i) = self.servers.pick(service, req) else {
            self.respond(req, Outcome::Answered);
            return;
        };
        if !self.plain && self.faults.has(FaultKind::Down) && self.server_arrive_down(i, req) {
            return;
        }
        let s = &mut self.servers.states[i];
        let admit = s.line.admit();
        let full = admit == Admit::Refuse;
        let start_now = admit == Admit::Start;
        let demand = if full { Ticks::ZERO } else { s.draws.sample() };
        let (stats, replica, timed) = (s.stats, s.replica, s.timed);
        if !full {
            self.servers.outstanding[i] += 1;
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

    /// A request arrives at instance `i`: if a `down` fault acts on it, it fails
    /// at once (true).
    #[cold]
    #[inline(never)]
    fn server_arrive_down(&mut self, i: usize, req: ReqId) -> bool {
        let now = self.now;
        if !self.faults.down(self.servers.states[i].subject, now) {
            return false;
        }
        let stats = self.servers.states[i].stats;
        self.servers.stats[stats].arrived += 1;
        self.respond(req, Outcome::Error);
        true
    }

    /// The time series sees work nobody waited for (`worked`) end at server
    /// row `stats`. (It reads the rest of a server's figures from its books at
    /// each window's end.)
    #[cold]
    #[inline(never)]
    fn server_note_late(&mut self, stats: usize, worked: Ticks) {
        let now = self.now;
        if let Some(t) = self.obs.series() {
            t.wasted(now, stats, worked.as_ms());
        }
    }

    /// `req` joins the queue of instance `i`, whose discipline watches it: the
    /// discipline hears of it, and its queue timeout (if any) is set.
    #[cold]
    #[inline(never)]
    fn server_joined(&mut self, i: usize, req: ReqId) {
        let now = self.now;
        let s = &mut self.servers.states[i];
        if let Some(timeout) = s.discipline.joined(s.line.waiting(), now) {
            let key = self
                .queue
                .schedule(now + timeout, Lane::Deadline, Event::QueueTimeout(req));
            let keys = &mut self.servers.timeout_keys;
            if keys.len() <= req as usize {
                keys.resize(req as usize + 1, None);
            }
            keys[req as usize] = Some(key);
        }
    }

    /// `demand` stretched by the `latency_factor` faults acting on instance `i`.
    #[cold]
    #[inline(never)]
    fn server_stretch(&self, i: usize, demand: Ticks) -> Ticks {
        scaled(
            demand,
            self.faults
                .latency_factor(self.servers.states[i].subject, self.now),
        )
    }

    /// Whether an `error_rate` fault fails `req` at the end of its service.
    #[cold]
    #[inline(never)]
    fn server_fails(&mut self, req: ReqId) -> bool {
        let service = self.requests[req].service;
        match self.servers.state_of(service, req) {
            Some(i) => self.faults.fails(self.servers.states[i].subject, self.now),
            None => false,
        }
    }

    /// A waiter of a queue whose discipline watches it starts.
    #[cold]
    #[inline(never)]
    fn server_waiter_timed(&mut self, i: usize, req: ReqId) {
        self.server_timeout_off(req);
        self.server_dequeued(i);
    }

    /// `req` left the queue: its queue timeout (if any) is off.
    fn server_timeout_off(&mut self, req: ReqId) {
        if let Some(key) = self
            .servers
            .timeout_keys
            .get_mut(req as usize)
            .and_then(Option::take)
        {
            self.queue.cancel(key);
        }
    }

    /// A waiter of instance `i` has taken a slot: its queue timeout is off, its
    /// service starts.
    #[inline(always)]
    fn server_start_waiter(&mut self, i: usize, w: Waiting) {
        let s = &self.servers.states[i];
        let (st, timed) = (s.stats, s.timed);
        self.servers.stats[st].queued.add(self.now, -1);
        if timed {
            self.server_waiter_timed(i, w.req);
        }
        self.server_start(i, w.req, w.arrived, w.demand);
    }

    /// A request left instance `i`'s queue: its discipline hears of it, if it
    /// watches the queue.
    #[inline]
    fn server_dequeued(&mut self, i: usize) {
        let s = &mut self.servers.states[i];
        if s.timed {
            s.discipline.left(s.line.waiting(), self.now);
        }
    }

    /// Before a freed slot takes a waiter: the discipline, if it watches the
    /// queue, says whether it takes the newest or the oldest.
    #[inline]
    fn server_pick_order(&mut self, i: usize) {
        let now = self.now;
        let s = &mut self.servers.states[i];
        if s.timed {
            let newest = s.discipline.newest_first(s.line.waiting(), now);
            s.line.set_lifo(newest);
        }
    }

    /// `req` has taken a slot of instance `i`: its service starts now (stretched
    /// by a `latency_factor` fault acting now).
    fn server_start(&mut self, i: usize, req: ReqId, arrived: Ticks, demand: Ticks) {
        let now = self.now;
        let demand = if self.plain || !self.servers.states[i].stretched {
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
        self.obs.waited(self.requests[req].step, now - arrived);
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
    pub(super) fn server_done(&mut self, req: ReqId) {
        if self.servers.cancellable {
            self.servers.done_keys[req as usize] = None;
        }
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            return;
        };
        if !self.plain && self.faults.has(FaultKind::ErrorRate) && self.server_fails(req) {
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
    pub(super) fn server_calls_done(&mut self, req: ReqId, outcome: Outcome) {
        let service = self.requests[req].service;
        if let Some(i) = self.servers.state_of(service, req) {
            self.server_release(i, req, outcome);
        }
    }

    /// `req` leaves its slot at instance `i` with `outcome`: the slot takes the
    /// next queued request, then the answer goes back (so a new arrival it
    /// triggers sees the freed slot taken).
    fn server_release(&mut self, i: usize, req: ReqId, outcome: Outcome) {
        let now = self.now;
        let (arrived, started) = self.servers.in_service[req as usize];
        self.server_pick_order(i);
        let s = &mut self.servers.states[i];
        let next = s.line.release();
        self.servers.outstanding[i] -= 1;
        let (stats, replica) = (s.stats, s.replica);
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
        trace!(self, served(req, Some(outcome), arrived, started));
        if let Some(w) = next {
            self.server_start_waiter(i, w);
        }
        if late && !self.plain {
            self.server_note_late(stats, worked);
        }
        self.respond(req, outcome);
    }

    /// The client of `req` gave up: with `abandon = true` a queued request leaves
    /// the queue and its work is saved; a request in service runs to its end.
    pub(super) fn server_abandon(&mut self, req: ReqId) {
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
    fn server_unqueue(&mut self, i: usize, req: ReqId) -> bool {
        let now = self.now;
        let s = &mut self.servers.states[i];
        let Some(w) = s.line.leave(|w| w.req == req) else {
            return false;
        };
        self.servers.outstanding[i] -= 1;
        let st = &mut self.servers.stats[s.stats];
        st.queued.add(now, -1);
        st.abandoned += 1;
        st.saved.add(w.demand);
        trace!(self, server_unqueued(req, w.arrived));
        st.in_server.add(now - w.arrived);
        self.server_timeout_off(w.req);
        self.server_dequeued(i);
        self.handler_released(req);
        self.obs.abandoned(self.requests[req].step);
        true
    }

    /// The caller of `req` cancelled it: it leaves the queue, or its service or
    /// its calls stop and its slot is freed at once.
    pub(super) fn server_cancel(&mut self, req: ReqId) {
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
    fn server_stop(&mut self, i: usize, req: ReqId, late: bool) -> bool {
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
            self.queue.cancel(key);
        } else if in_calls {
            self.plan_cancel(req);
        } else {
            return false;
        }
        let now = self.now;
        let (arrived, started) = self.servers.in_service[req as usize];
        self.server_pick_order(i);
        let s = &mut self.servers.states[i];
        let next = s.line.release();
        self.servers.outstanding[i] -= 1;
        let (stats, replica) = (s.stats, s.replica);
        let worked = now - started;
        let st = &mut self.servers.stats[stats];
        st.busy.add(now, -1);
        st.cancelled += u64::from(late);
        st.work.add(worked);
        if late {
            st.late_work.add(worked);
        }
        st.in_server.add(now - arrived);
        trace!(self, served(req, None, arrived, started));
        if let Some(r) = replica {
            st.replicas[r].busy.add(now, -1);
        }
        if let Some(w) = next {
            self.server_start_waiter(i, w);
        }
        if late && let Some(t) = self.obs.series() {
            t.wasted(now, stats, worked.as_ms());
        }
        true
    }

    /// A queued request's queue timeout (CoDel): still waiting, it is shed.
    #[inline(never)]
    pub(super) fn server_queue_timeout(&mut self, req: ReqId) {
        let now = self.now;
        let service = self.requests[req].service;
        let Some(i) = self.servers.state_of(service, req) else {
            return;
        };
        let s = &mut self.servers.states[i];
        let Some(w) = s.line.leave(|w| w.req == req) else {
            return;
        };
        self.servers.timeout_keys[req as usize] = None;
        self.servers.outstanding[i] -= 1;
        let s = &self.servers.states[i];
        let (stats, replica) = (s.stats, s.replica);
        let st = &mut self.servers.stats[stats];
        st.queued.add(now, -1);
        st.shed += 1;
        st.in_server.add(now - w.arrived);
        if let Some(r) = replica {
            st.replicas[r].shed += 1;
        }
        self.server_dequeued(i);
        self.respond(req, Outcome::Shed);
    }

    /// The instances of `service`, as indices into the states.
    fn server_instances(&self, service: ServiceId) -> std::ops::Range<usize> {
        match self.servers.by_service[service].as_ref() {
            Some(Route::Single(i)) => *i..*i + 1,
            Some(Route::Replicated(b)) => b.first..b.first + b.n,
            None => 0..0,
        }
    }

    /// A `slots` fault on `service` started or ended: each instance's limit now,
    /// and the waiters it lets in start.
    pub(super) fn server_slots_changed(&mut self, service: ServiceId) {
        let now = self.now;
        for i in self.server_instances(service) {
            let s = &mut self.servers.states[i];
            match self.faults.slots(s.subject, now) {
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
    pub(super) fn server_down(&mut self, service: ServiceId) {
        let now = self.now;
        for i in self.server_instances(service) {
            if !self.faults.down(self.servers.states[i].subject, now) {
                continue;
            }
            let s = &mut self.servers.states[i];
            let queued = s.line.drain();
            self.servers.outstanding[i] -= queued.len() as u32;
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

#[cfg(test)]
mod tests {
    use super::super::world::World;
    use super::super::{RunResult, Tag};
    use crate::engine::Ticks;
    use crate::model::{Access, Model};
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    /// A model with one server `loan` (the given handler keys) and a workload that
    /// sends nothing: the tests send their own requests.
    fn model(handler: &str) -> Model {
        let text = format!(
            "[scenario]\nname = \"t\"\n[services.loan]\nroutes = [\"/loan\"]\n\
             [services.loan.handler]\ntype = \"server\"\n{handler}\n\
             [workload]\ntype = \"script\"\ngroups = [ {{ count = 0 }} ]\n"
        );
        let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        s.rows[0].model.clone()
    }

    /// Sends `n` requests at t = 0, request i tagged as step i, with an optional
    /// client timeout; runs to the end.
    fn burst(model: &Model, n: u32, timeout_ms: Option<f64>) -> RunResult {
        let mut w = World::new(model, 0);
        w.obs.track_steps(n as usize);
        let timeout = timeout_ms.map(Ticks::from_ms);
        for i in 0..n {
            let tag = Tag {
                step: Some(i),
                patience: timeout,
            };
            w.send_tagged(0, Access::Direct, 0, 0, timeout, tag);
        }
        w.run_loop().unwrap_or_else(|e| panic!("{e}"));
        w.finish_run()
    }

    /// Each request's queue wait in ms (None: never started).
    fn waits(r: &RunResult) -> Vec<Option<f64>> {
        r.steps
            .iter()
            .map(|s| {
                let mut w = s.waits.clone();
                (w.count() > 0).then(|| w.quantile_ms(1.0))
            })
            .collect()
    }

    /// Every event fits in 8 bytes: it travels in a register into its slab slot.
    #[test]
    fn events_are_eight_bytes() {
        assert_eq!(std::mem::size_of::<super::super::Event>(), 8);
        assert_eq!(std::mem::size_of::<Option<super::super::Event>>(), 8);
    }

    #[test]
    fn queue_position_sets_the_wait_in_rounds() {
        let m = model("slots = 2\nqueue = 3\nservice = { constant = 40 }");
        let r = burst(&m, 6, None);
        // occupancy at admission 0..4 -> floor(k / 2) rounds; the sixth is shed
        assert_eq!(
            waits(&r),
            [Some(0.), Some(0.), Some(40.), Some(40.), Some(80.), None]
        );
        let rejected: Vec<u64> = r.steps.iter().map(|s| s.rejected).collect();
        assert_eq!(rejected, [0, 0, 0, 0, 0, 1]);
        let s = &r.servers[0];
        assert_eq!((s.arrived, s.processed, s.shed), (6, 5, 1));
        assert_eq!(r.shed, 1);
        assert_eq!(r.sim_time_ms, 120.0);
        // busy slots: 2 for 80 ms, 1 for 40 ms over 120 ms
        assert!((s.mean_busy_slots - 200.0 / 120.0).abs() < 1e-9);
        // queued: 3 for 40 ms, 1 for 40 ms
        assert!((s.mean_queue - 160.0 / 120.0).abs() < 1e-9);
    }

    #[test]
    fn full_slots_and_queue_shed_at_once_and_a_zero_queue_only_has_slots() {
        let m = model("slots = 1\nqueue = 0\nservice = { constant = 10 }");
        let r = burst(&m, 3, None);
        assert_eq!((r.servers[0].processed, r.servers[0].shed), (1, 2));
        assert_eq!((r.answered, r.shed), (1, 2));
        let m = model("slots = 3\nqueue = 2\nservice = { constant = 10 }");
        let r = burst(&m, 9, None);
        assert_eq!((r.servers[0].processed, r.servers[0].shed), (5, 4));
    }

    #[test]
    fn the_queue_is_first_in_first_out() {
        // demands 30, 10, 20 in arrival order: FIFO serves them in that order
        let m = model("slots = 1\nqueue = 3\nservice = { cycle = [30, 10, 20] }");
        let r = burst(&m, 3, None);
        assert_eq!(waits(&r), [Some(0.), Some(30.), Some(40.)]);
        let mut resp = r.servers[0].response.clone();
        assert_eq!(resp.quantile_ms(1.0), 60.0);
        assert_eq!(r.servers[0].work_ms, 60.0);
    }

    #[test]
    fn abandon_drops_queued_work_when_the_client_gives_up() {
        // r0 0-40 in time; r1 40-80 in service when its client gives up at 50;
        // r2 still queued at 50
        let on = model("slots = 1\nqueue = 2\nservice = { constant = 40 }\nabandon = true");
        let r = burst(&on, 3, Some(50.0));
        let s = &r.servers[0];
        assert_eq!((s.processed, s.abandoned), (2, 1));
        assert_eq!((s.work_ms, s.late_work_ms, s.saved_ms), (80.0, 40.0, 40.0));
        assert_eq!(waits(&r), [Some(0.), Some(40.), None]);
        assert_eq!(r.steps[2].abandoned, 1);
        assert_eq!((r.answered, r.timed_out), (1, 2));
        assert_eq!(r.sim_time_ms, 80.0);

        let off = model("slots = 1\nqueue = 2\nservice = { constant = 40 }");
        let r = burst(&off, 3, Some(50.0));
        let s = &r.servers[0];
        assert_eq!((s.processed, s.abandoned), (3, 0));
        assert_eq!((s.work_ms, s.late_work_ms, s.saved_ms), (120.0, 80.0, 0.0));
    }

    #[test]
    fn a_reply_at_the_client_deadline_is_in_time() {
        let on = model("slots = 1\nqueue = 2\nservice = { constant = 40 }\nabandon = true");
        // r1 answers at 80 = its deadline; r2 starts at 80, before its timeout runs
        let r = burst(&on, 3, Some(80.0));
        let successful: Vec<u64> = r.steps.iter().map(|s| s.successful).collect();
        assert_eq!(successful, [1, 1, 0]);
        assert_eq!(r.servers[0].abandoned, 0);
        assert_eq!(r.servers[0].late_work_ms, 40.0);
    }

    /// Runs a scenario with one server `loan` (the given handler keys), a
    /// workload and extra tables (faults).
    fn run_with(handler: &str, workload: &str, extra: &str) -> RunResult {
        let text = format!(
            "[scenario]\nname = \"t\"\n[services.loan]\nroutes = [\"/loan\"]\n\
             [services.loan.handler]\ntype = \"server\"\n{handler}\n\
             [workload]\n{workload}\n{extra}\n"
        );
        let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        crate::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Requests at 0, 1, 2, ... ms (`gap` ms apart), `n` of them.
    fn every(gap_ms: f64, n: u32) -> String {
        format!(
            "type = \"open\"\narrivals = \"uniform\"\nrate_rps = {}\nrequests = {n}",
            1000.0 / gap_ms
        )
    }

    fn fault(kind: &str, at: f64, len: f64, value: Option<f64>) -> String {
        let value = value.map_or(String::new(), |v| format!("value = {v}\n"));
        format!(
            "[[faults]]\ntarget = \"loan\"\nkind = \"{kind}\"\nat_ms = {at}\nfor_ms = {len}\n{value}"
        )
    }

    fn script_at(times: &[f64]) -> String {
        let groups: Vec<String> = times
            .iter()
            .map(|t| format!("{{ count = 1, at_ms = {t} }}"))
            .collect();
        format!("type = \"script\"\ngroups = [{}]", groups.join(", "))
    }

    #[test]
    fn a_latency_fault_stretches_service_that_starts_at_its_first_tick_not_its_last() {
        // arrivals exactly at the window's start (100) and end (150)
        let r = run_with(
            "slots = 1\nqueue = 5\nservice = { constant = 10 }",
            &script_at(&[100.0, 150.0]),
            &fault("latency_factor", 100.0, 50.0, Some(3.0)),
        );
        let mut resp = r.servers[0].response.clone();
        assert_eq!(
            resp.quantile_ms(0.0),
            10.0,
            "the one at the end tick: not stretched"
        );
        assert_eq!(
            resp.quantile_ms(1.0),
            30.0,
            "the one at the start tick: stretched"
        );
    }

    #[test]
    fn a_down_server_fails_arrivals_at_its_first_tick_and_serves_at_its_end_tick() {
        let r = run_with(
            "slots = 1\nqueue = 5\nservice = { constant = 10 }",
            &script_at(&[100.0, 150.0]),
            &fault("down", 100.0, 50.0, None),
        );
        // a fault's failure is an error answer, not a drop (the seed's meaning)
        assert_eq!((r.errors, r.dropped, r.answered), (1, 0, 1));
        assert_eq!(r.servers[0].processed, 1);
    }

    #[test]
    fn down_fails_queued_and_running_work_at_its_start() {
        // r0 in service 0-100, r1 and r2 queued: all fail at 50
        let r = run_with(
            "slots = 1\nqueue = 5\nservice = { constant = 100 }",
            &every(1.0, 3),
            &fault("down", 50.0, 10.0, None),
        );
        assert_eq!((r.errors, r.dropped, r.answered), (3, 0, 0));
        assert_eq!(r.last_exit_ms, 50.0);
        assert_eq!(r.servers[0].work_ms, 50.0, "r0 worked 0-50");
        // a fault of length 0 never acts: the neutral compare row
        let r = run_with(
            "slots = 1\nqueue = 5\nservice = { constant = 100 }",
            &every(1.0, 3),
            &fault("down", 50.0, 0.0, None),
        );
        assert_eq!((r.errors, r.answered), (0, 3));
    }

    #[test]
    fn a_slots_fault_holds_waiters_until_it_ends_and_running_work_finishes() {
        // 2 slots cut to 1 from 0 to 250: r0 0-100, r1 100-200, r2 200-300;
        // at 250 the second slot returns and r3 starts: 250-350
        let r = run_with(
            "slots = 2\nqueue = 5\nservice = { constant = 100 }",
            &every(1.0, 4),
            &fault("slots", 0.0, 250.0, Some(1.0)),
        );
        let mut waits = r.servers[0].waits.clone();
        assert_eq!(waits.quantile_ms(1.0), 247.0);
        assert_eq!(r.sim_time_ms, 350.0);
        // cut to 1 at 50 while r0 and r1 run: both finish; r2 starts only once
        // no slot is busy (limit 1), when r1 ends at 101
        let r = run_with(
            "slots = 2\nqueue = 5\nservice = { constant = 100 }",
            &every(1.0, 3),
            &fault("slots", 50.0, 1000.0, Some(1.0)),
        );
        assert_eq!(r.servers[0].processed, 3);
        assert_eq!(r.last_exit_ms, 201.0, "r2 starts at 101 when r1 ends");
    }

    #[test]
    fn an_error_rate_fault_fails_requests_after_their_service_time() {
        let r = run_with(
            "slots = 1\nqueue = 5\nservice = { constant = 10 }",
            &every(20.0, 10),
            &fault("error_rate", 0.0, 100.0, Some(1.0)),
        );
        // sent at 0, 20, .. 180: the five done before 100 fail
        assert_eq!((r.errors, r.dropped, r.answered), (5, 0, 5));
        assert_eq!(r.servers[0].processed, 10);
        assert_eq!(
            r.servers[0].work_ms, 100.0,
            "failures still took their time"
        );
    }

    #[test]
    fn codel_gives_the_interval_while_the_queue_was_recently_empty_then_the_target() {
        let codel = "slots = 1\nqueue = 50\nservice = { constant = 100 }\n\
                     codel = { target_ms = 5, interval_ms = 100 }";
        // 1: the queue empties within the interval: timeouts of 100 ms
        let r = run_with(codel, &every(1.0, 4), "");
        assert_eq!((r.answered, r.shed), (2, 2));
        let mut resp = r.response.clone();
        assert_eq!(resp.quantile_ms(0.0), 100.0, "shed after the interval");
        // 2: a standing queue (non-empty for more than 100 ms): newcomers get 5 ms
        let r = run_with(codel, &every(10.0, 30), "");
        let mut resp = r.response.clone();
        assert_eq!(resp.quantile_ms(0.0), 5.0, "shed after the target");
        assert!(r.shed > 20, "shed {}", r.shed);
        assert_eq!(r.servers[0].shed, r.shed);
    }

    #[test]
    fn adaptive_lifo_serves_fifo_until_the_queue_stands_for_an_interval() {
        // r0 0-100; r1..r5 queue at 10..50 (empty last at 10)
        let max_wait = |order: &str| {
            let r = run_with(
                &format!(
                    "slots = 1\nqueue = 10\nservice = {{ constant = 100 }}\norder = \"{order}\""
                ),
                &every(10.0, 6),
                "",
            );
            let mut w = r.servers[0].waits.clone();
            w.quantile_ms(1.0)
        };
        // FIFO: r5 last, starts at 500
        assert_eq!(max_wait("fifo"), 450.0);
        // LIFO: r1 last
        assert_eq!(max_wait("lifo"), 490.0);
        // adaptive: at 100 the queue had been empty 90 ms ago: FIFO takes r1; at
        // 200 it has stood for 190 ms: LIFO takes r5, r4, r3, then r2 at 500
        assert_eq!(max_wait("adaptive_lifo"), 480.0);
    }
}
