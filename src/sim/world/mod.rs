//! The world of one run: the clock, the event queue, the request and call slabs
//! and one state value per actor kind, plus the run loop and the one dispatch
//! point that hands each event to the actor that receives it.

mod call;
mod dependency;
mod fanout;
mod faults;
mod gateway;
mod handler;
mod limiter;
mod plan;
mod policy;
mod proxy;
mod request;
mod server;
mod workload;

use super::call::Calls;
use super::dependency::Dependencies;
use super::fast_paths;
use super::faults::Faults;
use super::limiter::Limiting;
use super::observe::Observers;
use super::plan::Plans;
use super::policy::Policies;
use super::request::Requests;
use super::result::RunResult;
use super::run_limits;
use super::server::Servers;
use super::timers;
use super::trace::Tracer;
use super::vocab::{Event, Symbols};
use super::workload::Workloads;
use crate::engine::{EventQueue, Lane, Ticks};
use crate::error::Error;
use crate::model::Model;

/// All actor state of one run. The clock, the event queue, the model, the
/// interned names, the `plain` flag and the draw-ahead helper are private to
/// this module: only the run loop moves the clock; an event nobody cancels
/// goes through `post`, and every timer an actor may cancel is the actor's
/// own, set and cancelled through the `Timers` its file lends it for a step
/// (the queue and the instant, nothing else). The rest is fixed for the run
/// and read through its accessor. The books and the request tracer are private too:
/// the notes' fan-out (`fanout.rs`, a child of this module) is the only way to
/// them. So are the faults, the workloads, the plans, the limiters, the
/// dependencies, the servers and the client policies: `faults.rs`,
/// `workload.rs`, `plan.rs`, `limiter.rs`, `dependency.rs`, `server.rs` (with
/// `proxy.rs`, the queue in front of replicas with `max_conn`) and
/// `policy.rs`, children of this module, put the actors' questions to them and
/// carry out what they answer. The actors' states are the simulation's alone
/// (nothing outside `sim` sees a `World`), and each one's insides are private
/// to the module that defines its type. Each of those fields is touched by
/// its owner only (and by this module): actors reach each other through
/// `impl World` methods.
pub(crate) struct World<'m> {
    model: &'m Model,
    queue: EventQueue<Event>,
    now: Ticks,
    requests: Requests,
    calls: Calls,
    dependencies: Dependencies,
    servers: Servers,
    plans: Plans,
    policies: Policies,
    workload: Workloads,
    /// Interned client and member names.
    symbols: Symbols,
    limiting: Limiting,
    obs: Observers,
    /// The request tracer (`--trace N`); None in an ordinary run.
    trace: Option<Box<Tracer>>,
    /// What `[[faults]]` change, asked by the actors through `faults.rs`.
    faults: Faults,
    /// The fast path's flag, read through [`World::plain`].
    plain: bool,
    /// The thread drawing random streams ahead, if any (dropping it stops it).
    helper: Option<super::ahead::Helper>,
}

impl<'m> World<'m> {
    pub fn new(model: &'m Model, replication: u64) -> World<'m> {
        let mut symbols = Symbols::default();
        let workload = Workloads::new(model, replication, &mut symbols);
        let mut world = World {
            model,
            queue: EventQueue::new(),
            now: Ticks::ZERO,
            requests: Requests::default(),
            calls: Calls::new(model),
            dependencies: Dependencies::new(model, replication),
            servers: Servers::new(model, replication),
            plans: Plans::new(model, replication),
            policies: Policies::new(model, replication),
            workload,
            symbols,
            limiting: Limiting::new(model, replication),
            obs: Observers::new(model),
            trace: None,
            faults: Faults::new(model, replication),
            plain: false,
            helper: None,
        };
        world.plain = world.faults.none()
            && !world.servers.any_stretched()
            && world.obs.series().is_none()
            && world.dependencies.replicated.is_none();
        timers::register(&mut world.queue, model);
        world.schedule_fault_edges();
        world
    }

    /// Hands the random streams worth it to a helper thread that draws them
    /// ahead on another core (see [`super::ahead`]); the results stay the same.
    pub fn draw_ahead(&mut self) {
        let streams = (self.dependencies.draws())
            .chain(self.servers.draws())
            .chain(self.workload.draws());
        self.helper = super::ahead::start(streams);
    }

    pub fn run_loop(&mut self) -> Result<(), Error> {
        let limits = self.model.limits;
        let series_end = self.obs.series_end(
            super::timeseries::client_and_limiter_rows(
                self.model.workloads.len(),
                &self.model.limiters,
            ),
            limits.max_series_rows,
        );
        let outlier_end = run_limits::outlier_end(self.model);
        let max_time = limits.max_sim_time.min(series_end).min(outlier_end.0);
        // the time series' current window end (never, without one)
        let mut window_end = self.obs.series().map_or(Ticks(u64::MAX), |t| t.end());
        let held_mask = if fast_paths::on() {
            run_limits::held_check_mask(self.model)
        } else {
            0
        };
        // the instant the last check saw, and the events popped when it first saw it
        let (mut instant, mut instant_from) = (Ticks::ZERO, 0u64);
        loop {
            // a call's arrival due now runs without the queue's round trip
            let arrival = self.arrival_due();
            let (at, event) = match arrival {
                Some(call) => (self.now, Event::CallArrive(call)),
                None => match self.queue.pop() {
                    Some(next) => next,
                    None => break,
                },
            };
            if at > max_time {
                return Err(if at > series_end {
                    run_limits::series(self.model)
                } else if at > outlier_end.0 {
                    run_limits::outlier(self.model, &outlier_end.1)
                } else {
                    run_limits::sim_time(self.model)
                });
            }
            if self.queue.popped() > limits.max_events {
                return Err(run_limits::events(self.model));
            }
            debug_assert!(at >= self.now, "time went backwards");
            self.now = at;
            if at >= window_end {
                window_end = self.series_roll(at);
            }
            match arrival {
                Some(call) => self.call_arrive(call),
                None => self.dispatch(event),
            }
            if self.obs.in_flight() > limits.max_in_flight {
                return Err(run_limits::in_flight(self.model));
            }
            // held work grows by one call per branch of a plan at most per event:
            // checking every 1024 events (fewer, the more branches a plan has)
            // bounds it as well, at a fraction of the cost
            let popped = self.queue.popped();
            if popped & held_mask == 0 {
                self.check_held(limits.max_in_flight)?;
                // every 1024 events whatever the fan-out (`held_mask + 1` divides
                // 1024), never per event: the large tables grow ahead, and a clock
                // standing still is noticed
                if popped & 1023 == 0 {
                    self.reserve_ahead()?;
                    if self.now != instant {
                        (instant, instant_from) = (self.now, popped);
                    } else if popped - instant_from > limits.max_events_per_instant {
                        let events = popped - instant_from;
                        return Err(run_limits::standing_still(self.model, self.now, events));
                    }
                }
            }
        }
        Ok(())
    }

    /// Work the system still holds after the client left must stay bounded too:
    /// calls a caller gave up on wait at their dependency until it takes them, and
    /// a server may keep a request its client abandoned. Both count against
    /// `max_in_flight`, so no queue grows without a named limit.
    #[inline]
    fn check_held(&self, max: u64) -> Result<(), Error> {
        let calls = self.calls.held() + self.policies.held();
        let requests = self.requests.held();
        if let Some(t) = &self.trace
            && t.overrun()
        {
            return Err(run_limits::trace_overrun(self.model, t.max_events()));
        }
        if calls > max {
            let awaited = self.calls.awaited() + self.policies.held();
            return Err(run_limits::held_calls(self.model, calls, awaited));
        }
        if requests > max {
            return Err(run_limits::held_requests(self.model, requests));
        }
        if let Some((l, n)) = self.limiting.largest_window_log()
            && n > max
        {
            // a limiter's peak tracker keeps every pass within its window
            return Err(run_limits::window_log(self.model, l, n));
        }
        Ok(())
    }

    /// Makes room now for the entries the next events may add to the run's
    /// large tables (the event queue, requests, calls, plans, policy calls,
    /// server and dependency books and lines): a table grows here, with an
    /// allocation that may fail and be reported with the tables' state, rather
    /// than in the middle of an event, where a refusal can only end the process
    /// (`memory::Allocator`; a raised max_in_flight under `ulimit -v` aborted).
    /// Called every 1024 events: no cost per event.
    #[inline(never)]
    fn reserve_ahead(&mut self) -> Result<(), Error> {
        /// Entries made room for: more than 1024 events add, but for a plan's
        /// wide fan-out (a table that outgrows it grows as it would anyway, a
        /// refusal then reported by `memory::Allocator`). Larger made every
        /// table copy more when it grows.
        const ROOM: usize = 1 << 11;
        let tables: [(&str, Result<(), std::collections::TryReserveError>); 7] =
            crate::memory::fallibly(|| {
                [
                    ("event queue", self.queue.try_reserve(ROOM)),
                    ("requests", self.requests.reserve(ROOM)),
                    ("calls", self.calls.reserve(ROOM)),
                    ("plan progress", self.plans.reserve(ROOM)),
                    ("policy calls", self.policies.reserve(ROOM)),
                    ("server books", self.servers.reserve(ROOM)),
                    ("dependency books", self.dependencies.reserve(ROOM)),
                ]
            });
        for (what, result) in tables {
            if result.is_err() {
                return Err(run_limits::out_of_memory(
                    self.model,
                    what,
                    self.requests.held(),
                    self.calls.held() + self.policies.held(),
                ));
            }
        }
        Ok(())
    }

    /// The one place an event meets its receiver.
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::WorkloadNext(i) => self.workload_next(i as usize),
            Event::LadderSend(step) => self.ladder_jittered_send(step as usize),
            Event::AtService(req) => self.at_service(req),
            Event::ClientTimeout(req) => self.client_timeout(req),
            Event::LimiterResume(req) => self.limiter_resume(req),
            Event::ServerDone(req) => self.server_done(req),
            Event::CallTimeout(call) => self.call_timeout(call),
            Event::CallArrive(call) => self.call_arrive(call),
            Event::DependencyDone(call) => self.dependency_done(call),
            Event::PolicyTimer(call) => self.policy_timer(call),
            Event::PolicyAttemptFailed(call) => self.policy_attempt_failed(call),
            Event::FaultEdge(code) => self.fault_edge(code),
            Event::QueueTimeout(req) => self.server_queue_timeout(req),
        }
    }

    /// Collects every actor's figures into the run's result.
    pub fn finish_run(mut self) -> RunResult {
        // the run drew its last: the helper's core is free again
        self.helper = None;
        let end = self.now;
        let events = self.queue.popped();
        let dependency_busy = self.dependencies.finish(end, self.model.dependencies.len());
        let scale = super::observe::after_warmup(self.model.warmup, end);
        let dependency_replicas = self.dependencies.replica_books(end, scale);
        let limiters = self.limiting_results();
        let servers = self.servers.finish(end);
        let leaked = self.requests.held() + self.calls.held() + self.policies.held();
        let policies = &self.policies;
        let mut result =
            self.obs
                .finish(end, events, dependency_busy, servers, limiters, |sites| {
                    policies.site_books(sites)
                });
        let calls = self.policies.finish();
        result.leaked = leaked;
        result.calls = calls;
        for (d, (replicas, no_time, ejections)) in
            dependency_replicas.into_iter().flatten().enumerate()
        {
            result.dependencies[d].replicas = replicas;
            result.dependencies[d].no_replica = no_time;
            result.dependencies[d].ejections = ejections;
        }
        result
    }

    /// Takes the sequence number an event posted now would get, for an
    /// actor that keeps such events itself and delivers them in turn (see
    /// `arrival_due`): `first_before(seq)` says whether one of the queue's
    /// comes first, `post_taken` hands one to the queue after all, and
    /// `delivered_by_owner` counts one delivered by its owner.
    #[inline(always)]
    pub fn take_seq(&mut self) -> u64 {
        self.queue.take_seq()
    }

    /// Whether an event of the queue, at this instant in the normal lane,
    /// comes before the one holding sequence number `seq`.
    #[inline(always)]
    pub fn first_before(&self, seq: u64) -> bool {
        self.queue.has_before(self.now, Lane::Normal, seq)
    }

    /// Posts `event` now in the normal lane, with the sequence number `seq`
    /// taken earlier with `take_seq`.
    #[inline(always)]
    pub fn post_taken(&mut self, seq: u64, event: Event) {
        self.queue.post_taken(self.now, Lane::Normal, seq, event);
    }

    /// Counts an event delivered by the actor that kept it.
    #[inline(always)]
    pub fn delivered_by_owner(&mut self) {
        self.queue.delivered_by_owner();
    }

    /// Schedules an event that will never be cancelled.
    #[inline]
    pub fn post(&mut self, at: Ticks, lane: Lane, event: Event) {
        self.queue.post(at, lane, event);
    }

    /// The virtual time: the instant of the event being handled. Only the
    /// run loop moves it.
    #[inline(always)]
    pub fn now(&self) -> Ticks {
        self.now
    }

    /// The scenario's model, fixed for the run.
    #[inline(always)]
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// No faults, no time series and no replicated dependency: the actors
    /// skip every question about them with this one flag (the fast path of
    /// every scenario without them). Fixed for the run.
    #[inline(always)]
    pub fn plain(&self) -> bool {
        self.plain
    }

    /// The interned client and member names, fixed once the workloads are
    /// built.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }
}
