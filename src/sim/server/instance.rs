//! One server instance (a replica): its slots and bounded queue, and a
//! request's life there: admitted, started, queued, shed, finished (or on to
//! its calls), abandoned by its client or cancelled by its caller.

use super::super::ahead::Draws;
use super::super::context::Timers;
use super::super::faults::{Faults, Subject, may_act};
use super::super::latency::Sampler;
use super::super::pauses::{self, Pauses};
use super::super::slots::{Admit, SlotQueue};
use super::super::vocab::{Event, ReqId, slot_of};
use super::Servers;
use super::queue::{self, Discipline};
use crate::engine::{Ticks, stream};
use crate::model::{Hook, Model, Server, ServiceId};

/// One queued request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waiting {
    pub(in crate::sim) req: ReqId,
    pub(in crate::sim) arrived: Ticks,
    pub(in crate::sim) demand: Ticks,
}

/// One server instance (a replica).
pub(super) struct Instance {
    /// Which fault questions are about it.
    pub(super) subject: Subject,
    /// A `latency_factor`, `latency_add` or `pause` fault targets it, or its
    /// replica settings stretch its service times: work starting here asks
    /// how long it takes ([`Servers::stretch`]).
    pub(super) stretched: bool,
    /// Its own factor and addition (`[services.NAME.replica.K]`; 1 and 0).
    pub(super) factor: f64,
    pub(super) add: Ticks,
    /// Its stop-the-world pauses (`pause` faults), if any.
    pub(super) pauses: Option<Box<Pauses>>,
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
    /// When `outstanding` last changed: a stamp of `Servers::moves` (what a
    /// `first_reached` tie-break reads).
    pub(super) since: u64,
    /// A queue stands in front of its replicas (`max_conn`): when its count
    /// falls, it may take a waiter from there.
    pub(super) limited: bool,
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
        let own = model.services[service]
            .replica_settings
            .iter()
            .find(|r| r.replica as usize == i);
        let slots = own.and_then(|r| r.slots).unwrap_or(server.slots);
        let latency = own
            .and_then(|r| r.service.as_ref())
            .unwrap_or(&server.service);
        let mut line = SlotQueue::new(slots, Some(server.queue));
        let discipline = queue::of(server.order, server.codel);
        line.set_lifo(discipline.newest_first(0, Ticks::ZERO));
        let subject = Subject::Server {
            service,
            replica: i as u32,
        };
        let label = format!("{}#{}", model.services[service].name, i + 1);
        let pauses = pauses::of(model, replication, subject, &label);
        Instance {
            subject,
            stretched: may_act(model, Hook::LatencyFactor, subject)
                || may_act(model, Hook::LatencyAdd, subject)
                || pauses.is_some()
                || own.is_some_and(|r| r.stretches()),
            factor: own.map_or(1.0, |r| r.latency_factor),
            add: own.map_or(Ticks::ZERO, |r| r.latency_add),
            pauses,
            slots,
            timed: discipline.watches(),
            discipline,
            abandon: server.abandon,
            draws: Draws::here(Sampler::new(latency, &mut rng), rng),
            line,
            stats,
            replica: (n > 1).then_some(i),
            calls: server.plan.is_some(),
            outstanding: 0,
            since: i as u64,
            limited: model.services[service].balance.conn_limit.is_some() && n > 1,
        }
    }
}

/// What became of a request that reached an instance ([`Servers::arrive`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// It took a slot: its service of `demand` starts now.
    Start { demand: Ticks },
    /// It waits in the queue (with its queue timeout set where its
    /// discipline sheds it then if it still waits).
    Queued,
    /// The queue was full: it is shed now.
    Shed,
}

/// A request that left its slot ([`Servers::release`], [`Servers::stopped`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Released {
    pub(in crate::sim) arrived: Ticks,
    pub(in crate::sim) started: Ticks,
    /// The waiter that took the freed slot: its service starts now.
    pub(in crate::sim) next: Option<Waiting>,
    /// The server's row in the books.
    pub(in crate::sim) stats: usize,
    /// How long the slot worked on it.
    pub(in crate::sim) worked: Ticks,
    /// A queue stands in front of the instance's replicas (`max_conn`): it
    /// may take a waiter now.
    pub(in crate::sim) takes: bool,
}

/// A request's life at an instance, as the server's books and lines keep it.
/// The world carries out what each step says (`world/server.rs`).
impl Servers {
    /// `req` reaches instance `i` now: it starts, waits (its queue timeout
    /// set, where its discipline has one) or is shed, and the books count it.
    #[inline(always)]
    pub(in crate::sim) fn arrive(&mut self, t: &mut Timers, i: usize, req: ReqId) -> Arrival {
        let now = t.now();
        let mut timeout = None;
        let s = &mut self.states[i];
        let admit = s.line.admit();
        let full = admit == Admit::Refuse;
        let demand = if full { Ticks::ZERO } else { s.draws.sample() };
        let (stats, replica, timed) = (s.stats, s.replica, s.timed);
        if !full {
            s.outstanding += 1;
        }
        let arrival = match admit {
            Admit::Start => {
                s.line.start();
                Arrival::Start { demand }
            }
            Admit::Wait => {
                // the discipline hears of it and sets its queue timeout
                if timed {
                    timeout = s.discipline.joined(s.line.waiting(), now);
                }
                s.line.wait(Waiting {
                    req,
                    arrived: now,
                    demand,
                });
                Arrival::Queued
            }
            Admit::Refuse => Arrival::Shed,
        };
        let st = &mut self.stats[stats];
        st.arrived += 1;
        let queued = arrival == Arrival::Queued;
        match arrival {
            Arrival::Shed => st.shed += 1,
            Arrival::Queued => st.queued.add(now, 1),
            Arrival::Start { .. } => {}
        }
        if let Some(r) = replica {
            self.replica_arrived(i, r, full, queued, now);
        }
        if let Some(timeout) = timeout {
            self.set_queue_timeout(t, req, now + timeout);
        }
        arrival
    }

    /// A replica's own books for an arrival at instance `i` (replica `r`):
    /// kept out of the path of a service without replicas.
    #[inline(never)]
    fn replica_arrived(&mut self, i: usize, r: usize, full: bool, queued: bool, now: Ticks) {
        let st = &mut self.stats[self.states[i].stats].replicas[r];
        st.arrived += 1;
        st.shed += u64::from(full);
        if queued {
            st.queued.add(now, 1);
        }
        // only replicas are balanced: one instance keeps no stamp
        if !full {
            self.states[i].since = self.moves;
            self.moves += 1;
        }
    }

    /// Whether some instance's service times are stretched (a fault, its
    /// replica settings, pauses).
    pub(in crate::sim) fn any_stretched(&self) -> bool {
        self.states.iter().any(|s| s.stretched)
    }

    /// A waiter of instance `i` has taken a slot at `now`; true if its
    /// discipline watches the queue (its queue timeout is then off, and it
    /// hears the waiter left).
    #[inline(always)]
    fn waiter_starts(&mut self, i: usize, now: Ticks) -> bool {
        let s = &self.states[i];
        let (st, timed, replica) = (s.stats, s.timed, s.replica);
        let st = &mut self.stats[st];
        st.queued.add(now, -1);
        if let Some(r) = replica {
            replica_left_queue(st, r, now);
        }
        timed
    }

    /// `req`, which arrived at `arrived` with work `demand`, takes a slot of
    /// instance `i` now: its service starts, stretched by what acts on the
    /// instance (its own factor, the faults `faults` says act now, its
    /// pauses; nothing in a `plain` run), and its end is set. Returns how
    /// long it waited.
    #[inline(always)]
    pub(in crate::sim) fn begin(
        &mut self,
        t: &mut Timers,
        faults: &Faults,
        plain: bool,
        (i, req): (usize, ReqId),
        (arrived, demand): (Ticks, Ticks),
    ) -> Ticks {
        let now = t.now();
        let end = if plain || !self.states[i].stretched {
            now + demand
        } else {
            self.stretch(faults, i, now, demand)
        };
        self.start(i, req, arrived, now);
        self.service_ends(t, req, end);
        now - arrived
    }

    /// Waiter `w` of instance `i` takes a slot now: its queue timeout is off
    /// if its discipline watches the queue, and its service starts
    /// ([`Servers::begin`]). Returns how long it waited.
    #[inline(always)]
    pub(in crate::sim) fn begin_waiter(
        &mut self,
        t: &mut Timers,
        faults: &Faults,
        plain: bool,
        i: usize,
        w: Waiting,
    ) -> Ticks {
        let now = t.now();
        if self.waiter_starts(i, now) {
            self.left_queue(t, i, w.req);
        }
        self.begin(t, faults, plain, (i, w.req), (w.arrived, w.demand))
    }

    /// `req` left instance `i`'s queue now (it started, or its caller left):
    /// its queue timeout is off, and the discipline hears it left.
    #[cold]
    #[inline(never)]
    fn left_queue(&mut self, t: &mut Timers, i: usize, req: ReqId) {
        self.queue_timeout_off(t, req);
        self.dequeued(i, t.now());
    }

    /// `req`, which arrived at `arrived`, has taken a slot of instance `i`:
    /// its service starts at `now`.
    #[inline(always)]
    fn start(&mut self, i: usize, req: ReqId, arrived: Ticks, now: Ticks) {
        let s = &self.states[i];
        let st = &mut self.stats[s.stats];
        st.busy.add(now, 1);
        st.waits.push(now - arrived);
        if let Some(r) = s.replica {
            st.replicas[r].busy.add(now, 1);
        }
        *slot_of(&mut self.in_service, req, || (Ticks::ZERO, Ticks::ZERO)) = (arrived, now);
    }

    /// `req`'s service ends at `end`: its completion is an event, kept by its
    /// key in a model that may stop work.
    #[inline(always)]
    fn service_ends(&mut self, t: &mut Timers, req: ReqId, end: Ticks) {
        if !self.cancellable {
            return t.post(end, Event::ServerDone(req));
        }
        let key = t.at(end, Event::ServerDone(req));
        *slot_of(&mut self.done_keys, req, || None) = Some(key);
    }

    /// `req`'s service is done: its completion is no longer pending.
    #[inline(always)]
    pub(in crate::sim) fn service_done(&mut self, req: ReqId) {
        if self.cancellable {
            self.done_keys[req as usize] = None;
        }
    }

    /// Whether instance `i` makes calls after its service time.
    #[inline(always)]
    pub(in crate::sim) fn calls(&self, i: usize) -> bool {
        self.states[i].calls
    }

    /// Whether instance `i` drops a queued request whose client left.
    pub(in crate::sim) fn abandons(&self, i: usize) -> bool {
        self.states[i].abandon
    }

    /// `req`'s slot at instance `i` is free: the order discipline picks, the
    /// line gives the next waiter (if any), and the request's arrival and start
    /// come back with the statistics' and replica's indices.
    #[inline(always)]
    fn free_slot(
        &mut self,
        i: usize,
        req: ReqId,
        now: Ticks,
    ) -> (Ticks, Ticks, Option<Waiting>, usize, Option<usize>) {
        let (arrived, started) = self.in_service[req as usize];
        self.pick_order(i, now);
        let s = &mut self.states[i];
        let next = s.line.release();
        s.outstanding -= 1;
        (arrived, started, next, s.stats, s.replica)
    }

    /// `req` leaves its slot at instance `i` at `now`, answered (`late`: its
    /// client had given up, or its deadline had passed): the books count it,
    /// and the slot takes the next queued request.
    #[inline(always)]
    pub(in crate::sim) fn release(
        &mut self,
        i: usize,
        req: ReqId,
        now: Ticks,
        late: bool,
    ) -> Released {
        let (arrived, started, next, stats, replica) = self.free_slot(i, req, now);
        let worked = now - started;
        let st = &mut self.stats[stats];
        st.busy.add(now, -1);
        st.processed += 1;
        st.response.push(now - arrived);
        st.in_server.add(now - arrived);
        st.work.add(worked);
        if late {
            st.late_work.add(worked);
        }
        let mut takes = false;
        if let Some(r) = replica {
            let r = &mut st.replicas[r];
            r.busy.add(now, -1);
            r.processed += 1;
            r.response.push(now - arrived);
            takes = self.replica_freed(i);
        }
        Released {
            arrived,
            started,
            next,
            stats,
            worked,
            takes,
        }
    }

    /// Replica `i`'s count fell: its stamp moves (a `first_reached`
    /// tie-break reads it); whether a queue stands in front of its service's
    /// replicas.
    #[inline(always)]
    fn replica_freed(&mut self, i: usize) -> bool {
        let s = &mut self.states[i];
        s.since = self.moves;
        self.moves += 1;
        s.limited
    }

    /// Takes `req` out of instance `i`'s queue now, if it waits there (its
    /// client left, or its caller cancelled it): its queue timeout is off,
    /// its discipline hears it left; when it arrived.
    pub(in crate::sim) fn unqueue(
        &mut self,
        t: &mut Timers,
        i: usize,
        req: ReqId,
    ) -> Option<Ticks> {
        let now = t.now();
        let s = &mut self.states[i];
        let w = s.line.leave(|w| w.req == req)?;
        s.outstanding -= 1;
        s.since = self.moves;
        self.moves += 1;
        let st = &mut self.stats[s.stats];
        st.queued.add(now, -1);
        if let Some(r) = s.replica {
            replica_left_queue(st, r, now);
        }
        st.abandoned += 1;
        st.saved.add(w.demand);
        st.in_server.add(now - w.arrived);
        self.left_queue(t, i, req);
        Some(w.arrived)
    }

    /// Stops `req`'s service if it is in service: its pending completion is
    /// cancelled (true); false when it is not in service.
    pub(in crate::sim) fn stop_service(&mut self, t: &mut Timers, req: ReqId) -> bool {
        debug_assert!(
            self.cancellable,
            "work stopped in a model that cancels none"
        );
        let key = self.done_keys.get_mut(req as usize).and_then(Option::take);
        t.cancel(key);
        key.is_some()
    }

    /// The running work of `req` at instance `i` (its service, or its calls)
    /// stopped at `now` and its slot is free (`late`: the work counts as late
    /// work): the books count it, and the slot takes the next queued request.
    pub(in crate::sim) fn stopped(
        &mut self,
        i: usize,
        req: ReqId,
        now: Ticks,
        late: bool,
    ) -> Released {
        let (arrived, started, next, stats, replica) = self.free_slot(i, req, now);
        let worked = now - started;
        let st = &mut self.stats[stats];
        st.busy.add(now, -1);
        st.cancelled += u64::from(late);
        st.work.add(worked);
        if late {
            st.late_work.add(worked);
        }
        st.in_server.add(now - arrived);
        let mut takes = false;
        if let Some(r) = replica {
            st.replicas[r].busy.add(now, -1);
            takes = self.replica_freed(i);
        }
        Released {
            arrived,
            started,
            next,
            stats,
            worked,
            takes,
        }
    }
}

/// A replica's queue is one shorter at `now` (kept out of the path of a
/// service without replicas).
#[inline(never)]
fn replica_left_queue(st: &mut super::stats::ServerStats, r: usize, now: Ticks) {
    st.replicas[r].queued.add(now, -1);
}
