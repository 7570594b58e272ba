//! The simulation: the scenario's actors on the engine's clock.
//!
//! One [`World`] per run holds every actor's state and the event queue. Each actor
//! kind lives in its own module (`workload`, `gateway`, `plan`, `dependency`, ...) as
//! an `impl World` block that owns the reactions to that actor's events. A request
//! flows workload -> gateway -> service (middleware, then its handler) -> back to the
//! workload; a plan handler calls dependencies. Hand-offs at the same instant are
//! direct calls; anything later is an event on the queue.

mod dependency;
mod gateway;
pub mod latency;
pub mod limiter;
mod plan;
mod server;
mod slots;
mod timers;
mod workload;

use crate::engine::{EventKey, EventQueue, Lane, Stream, Ticks, stream};
use crate::error::Error;
use crate::metrics::{Samples, TimeAverage};
use crate::model::{Access, Handler, LimiterId, Model, RouteId, ServiceId};
use dependency::DependencyState;
pub use limiter::LimiterResults;
pub use server::ServerStats;
pub use workload::StepStats;
use workload::WorkloadState;

/// Requests and calls are addressed by slot in their slabs.
pub(crate) type ReqId = u32;
pub(crate) type CallId = u32;

/// Labels a workload puts on a request before it leaves.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tag {
    /// The workload step (ladder step index) the request belongs to.
    pub step: Option<u32>,
    /// How long the client's answer is of use when the client does not give up at
    /// a timeout (a ladder's success criterion).
    pub patience: Option<Ticks>,
}

/// Everything that can happen at a point in virtual time.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// The workload sends its next request(s).
    WorkloadNext,
    /// A request reaches its service (after the gateway's share).
    AtService(ReqId),
    /// A dependency finishes the work of a call.
    DependencyDone(CallId),
    /// A closed ladder's jittered request of step `step` leaves now.
    LadderSend(u32),
    /// A plan call's timeout: the caller gives up.
    CallTimeout(CallId),
    /// The client's own timeout.
    ClientTimeout(ReqId),
    /// A server slot finishes a request (its arrival and start times wait in the
    /// server, so that every event is 8 bytes).
    ServerDone(ReqId),
    /// A throttled request's hold at a limiter is over.
    LimiterResume(ReqId),
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Handled and (for plans) every call succeeded in time.
    Answered,
    /// A plan call failed, or the response came after the threshold.
    Dropped,
    /// The client stopped waiting first.
    TimedOut,
    /// A server's slots and queue were full: refused at once (503, load shedding).
    Shed,
    /// 429: this limiter was the first to reject it.
    Rejected(LimiterId),
    /// 404: no service owns the route.
    NotFound,
}

/// One request in flight.
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
    pub client_timeout: Option<EventKey>,
    /// The workload step it belongs to (a ladder's step index).
    pub step: Option<u32>,
    /// The latest moment an answer is of use to the client (sent + its timeout),
    /// whether or not the client gives up then.
    pub deadline: Option<Ticks>,
    /// Progress past the limiters.
    pub limiting: limiter::Progress,
    /// Plan progress: one entry per branch.
    pub branches: Vec<plan::BranchRun>,
    pub branches_left: u32,
}

/// Per-dependency results.
#[derive(Debug, Clone, Default)]
pub struct DependencyStats {
    pub calls: u64,
    pub failed: u64,
    /// Work started (calls that reached the dependency).
    pub work_started: u64,
    pub work_ms: f64,
    pub wasted_ms: f64,
    pub mean_busy: f64,
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    pub requests: u64,
    pub answered: u64,
    pub dropped: u64,
    pub timed_out: u64,
    pub shed: u64,
    /// 429: rejected by a limiter.
    pub rejected: u64,
    /// 404: no service owns the route.
    pub not_found: u64,
    /// Response times of every request that got a response.
    pub response: Samples,
    pub dependencies: Vec<DependencyStats>,
    /// One per service with a server handler, in declaration order.
    pub servers: Vec<ServerStats>,
    /// One per workload step (ladders); empty for other workloads.
    pub steps: Vec<StepStats>,
    pub wasted_ms: f64,
    pub events: u64,
    pub sim_time_ms: f64,
    /// Time-average number of requests in flight.
    pub mean_in_flight: f64,
    /// Total time requests spent in the system, from sent to their answer or to
    /// their client giving up (every request, timed-out ones included).
    pub in_system_ms: f64,
    /// When the last request left (answered or given up); abandoned dependency work
    /// may run on after it.
    pub last_exit_ms: f64,
    /// Time-average number of dependency calls being worked on (abandoned included).
    pub mean_dependency_work: f64,
    /// Per limiter, per (route, access) pair and per member (empty without limiters).
    pub limiters: LimiterResults,
}

/// Interned client and member names: looked up by hash (10^5 distinct members
/// made a linear search quadratic), read back by index as a slice.
#[derive(Default)]
pub(crate) struct Symbols {
    names: Vec<String>,
    index: std::collections::HashMap<String, u32>,
}

impl std::ops::Deref for Symbols {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.names
    }
}

/// All actor state of one run.
pub(crate) struct World<'m> {
    pub model: &'m Model,
    pub queue: EventQueue<Event>,
    pub now: Ticks,
    pub requests: Vec<Request>,
    pub free_requests: Vec<ReqId>,
    pub calls: Vec<plan::CallRun>,
    pub free_calls: Vec<CallId>,
    pub dependencies: Vec<DependencyState>,
    pub servers: server::Servers,
    pub workload: WorkloadState,
    pub workload_rng: Stream,
    /// Interned client and member names.
    pub symbols: Symbols,
    pub limiting: limiter::Limiting,
    pub in_flight: TimeAverage,
    pub result: RunResult,
}

/// Runs `model`'s replication `replication` with the model's seed.
pub fn run(model: &Model, replication: u64) -> Result<RunResult, Error> {
    let mut world = World::new(model, replication);
    world.start()?;
    world.run_loop()?;
    Ok(world.finish_run())
}

impl<'m> World<'m> {
    fn new(model: &'m Model, replication: u64) -> World<'m> {
        let seed = model.seed;
        let dependencies = model
            .dependencies
            .iter()
            .map(|d| {
                DependencyState::new(
                    d,
                    stream(seed, replication, &format!("dependency:{}", d.name)),
                )
            })
            .collect();
        let mut world = World {
            model,
            queue: EventQueue::new(),
            now: Ticks::ZERO,
            requests: Vec::new(),
            free_requests: Vec::new(),
            calls: Vec::new(),
            free_calls: Vec::new(),
            dependencies,
            servers: server::Servers::new(model, replication),
            workload: WorkloadState::Idle,
            workload_rng: stream(seed, replication, "workload"),
            symbols: Symbols::default(),
            limiting: limiter::Limiting::new(model),
            in_flight: TimeAverage::default(),
            result: RunResult {
                dependencies: vec![DependencyStats::default(); model.dependencies.len()],
                ..RunResult::default()
            },
        };
        world.workload = WorkloadState::new(&model.workload, &mut world.symbols);
        timers::register(&mut world.queue, model);
        world
    }

    fn run_loop(&mut self) -> Result<(), Error> {
        let limits = self.model.limits;
        while let Some((at, event)) = self.queue.pop() {
            if at > limits.max_sim_time {
                return Err(Error::Limit(format!(
                    "scenario `{}`: the run passed scenario.max_sim_time_ms = {} (raise it in [scenario] if the run is meant to be this long)",
                    self.model.name,
                    limits.max_sim_time.as_ms()
                )));
            }
            if self.queue.popped() > limits.max_events {
                return Err(Error::Limit(format!(
                    "scenario `{}`: the run passed scenario.max_events = {} (raise it in [scenario] if the run is meant to be this long)",
                    self.model.name, limits.max_events
                )));
            }
            debug_assert!(at >= self.now, "time went backwards");
            self.now = at;
            self.dispatch(event);
            if self.in_flight.level() > limits.max_in_flight {
                return Err(Error::Limit(format!(
                    "scenario `{}`: more than scenario.max_in_flight = {} requests in flight at once (raise it in [scenario] if the system is meant to hold this many)",
                    self.model.name, limits.max_in_flight
                )));
            }
            self.check_held(limits.max_in_flight)?;
        }
        Ok(())
    }

    /// Work the system still holds after the client left must stay bounded too:
    /// calls a caller gave up on wait at their dependency until it takes them, and
    /// a server may keep a request its client abandoned. Both count against
    /// `max_in_flight`, so no queue grows without a named limit.
    fn check_held(&self, max: u64) -> Result<(), Error> {
        let calls = self.calls.len().saturating_sub(self.free_calls.len()) as u64;
        let requests = self.requests.len().saturating_sub(self.free_requests.len()) as u64;
        let (what, n) = if calls > max {
            ("dependency calls", calls)
        } else if requests > max {
            ("requests", requests)
        } else {
            return Ok(());
        };
        Err(Error::Limit(format!(
            "scenario `{}`: more than scenario.max_in_flight = {max} {what} held at once ({n}), those their caller gave up on but a dependency or server still holds included (raise it in [scenario], add slots, or set cancellation = true)",
            self.model.name
        )))
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::WorkloadNext => self.workload_next(),
            Event::AtService(req) => self.at_service(req),
            Event::DependencyDone(call) => self.dependency_done(call),
            Event::CallTimeout(call) => self.call_timeout(call),
            Event::LadderSend(step) => self.ladder_jittered_send(step as usize),
            Event::ClientTimeout(req) => self.client_timeout(req),
            Event::ServerDone(req) => self.server_done(req),
            Event::LimiterResume(req) => self.limiter_resume(req),
        }
    }

    fn finish_run(mut self) -> RunResult {
        let end = self.now;
        self.result.events = self.queue.popped();
        self.result.sim_time_ms = end.as_ms();
        // Requests in flight, averaged while requests were in the system: work left
        // behind by given-up calls may run on after the last one left.
        let last_exit = Ticks::from_ms(self.result.last_exit_ms);
        self.result.mean_in_flight = self.in_flight.mean(last_exit);
        let mut work = 0.0;
        for (stats, dep) in self.result.dependencies.iter_mut().zip(&self.dependencies) {
            stats.mean_busy = dep.busy_average.mean(end);
            work += stats.mean_busy;
        }
        self.result.mean_dependency_work = work;
        self.result.wasted_ms = self.result.dependencies.iter().map(|d| d.wasted_ms).sum();
        self.server_finish(end);
        self.result.limiters = self.limiting_results();
        self.result
    }

    pub fn schedule(&mut self, at: Ticks, lane: Lane, event: Event) -> EventKey {
        self.queue.schedule(at, lane, event)
    }

    /// Schedules an event that will never be cancelled.
    pub fn post(&mut self, at: Ticks, lane: Lane, event: Event) {
        let _ = self.queue.schedule(at, lane, event);
    }

    pub fn intern(symbols: &mut Symbols, name: &str) -> u32 {
        if let Some(&i) = symbols.index.get(name) {
            return i;
        }
        let i = symbols.names.len() as u32;
        symbols.names.push(name.to_string());
        symbols.index.insert(name.to_string(), i);
        i
    }

    /// A new request enters the system now.
    pub fn send(
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
    pub fn send_tagged(
        &mut self,
        route: RouteId,
        access: Access,
        client: u32,
        member: u32,
        timeout: Option<Ticks>,
        tag: Tag,
    ) -> ReqId {
        let id = match self.free_requests.pop() {
            Some(id) => id,
            None => {
                self.requests.push(Request::default());
                (self.requests.len() - 1) as ReqId
            }
        };
        let now = self.now;
        let owner = self.model.routes[route].service;
        let r = &mut self.requests[id as usize];
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
        // a reused slot must not carry the previous request's plan progress
        r.branches.clear();
        r.branches_left = 0;
        self.result.requests += 1;
        self.in_flight.add(now, 1);
        if let Some(t) = timeout {
            let key = self.schedule(now + t, Lane::Deadline, Event::ClientTimeout(id));
            self.requests[id as usize].client_timeout = Some(key);
        }
        self.limiting_sent(id);
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

    /// The request reaches the service that owns its route: its middleware
    /// limiters first, then the handler.
    fn at_service(&mut self, req: ReqId) {
        if self.requests[req as usize].closed {
            // the client gave up on the way: nothing reaches the handler
            self.respond(req, Outcome::TimedOut);
            return;
        }
        self.limit_at_service(req);
    }

    /// The request passed every limiter: its service's handler takes it.
    fn handle(&mut self, req: ReqId) {
        let service = &self.model.services[self.requests[req as usize].service];
        match &service.handler {
            Handler::Respond => self.respond(req, Outcome::Answered),
            Handler::Plan(_) => self.plan_start(req),
            Handler::Server(_) => self.server_arrive(req),
        }
    }

    /// The handler is done with `req`: the client gets `outcome` unless it already
    /// gave up.
    pub fn respond(&mut self, req: ReqId, outcome: Outcome) {
        self.workload_handled(req, outcome);
        let now = self.now;
        let r = &mut self.requests[req as usize];
        r.in_handler = false;
        if r.closed {
            self.release(req);
            return;
        }
        r.closed = true;
        let response = now - r.sent;
        if let Some(key) = r.client_timeout.take() {
            self.queue.cancel(key);
        }
        self.result.response.push(response);
        match outcome {
            Outcome::Answered => self.result.answered += 1,
            Outcome::Dropped => self.result.dropped += 1,
            Outcome::TimedOut => self.result.timed_out += 1,
            Outcome::Shed => self.result.shed += 1,
            Outcome::Rejected(_) => self.result.rejected += 1,
            Outcome::NotFound => self.result.not_found += 1,
        }
        self.limiting_outcome(req, outcome);
        self.request_left(response);
        self.release(req);
        self.workload_done(req, outcome);
    }

    /// A request leaves the system now (answered, refused or given up) after
    /// `in_system`.
    fn request_left(&mut self, in_system: Ticks) {
        let now = self.now;
        self.in_flight.add(now, -1);
        self.result.in_system_ms += in_system.as_ms();
        self.result.last_exit_ms = now.as_ms();
    }

    fn client_timeout(&mut self, req: ReqId) {
        let now = self.now;
        let r = &mut self.requests[req as usize];
        r.client_timeout = None;
        if r.closed {
            return;
        }
        r.closed = true;
        let in_system = now - r.sent;
        self.result.timed_out += 1;
        self.request_left(in_system);
        self.plan_abandon(req);
        self.server_abandon(req);
        self.workload_done(req, Outcome::TimedOut);
        self.release(req);
    }

    /// Frees the request's slot once neither the client nor a handler needs it.
    fn release(&mut self, req: ReqId) {
        let r = &self.requests[req as usize];
        if r.closed && !r.in_handler {
            self.free_requests.push(req);
        }
    }
}
