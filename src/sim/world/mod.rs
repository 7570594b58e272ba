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
        let outlier_end = outlier_end(self.model);
        let max_time = limits.max_sim_time.min(series_end).min(outlier_end.0);
        // the time series' current window end (never, without one)
        let mut window_end = self.obs.series().map_or(Ticks(u64::MAX), |t| t.end());
        let held_mask = if fast_paths::on() {
            held_check_mask(self.model)
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
                if at > series_end {
                    return Err(self.series_limit());
                }
                if at > outlier_end.0 {
                    return Err(self.outlier_limit(&outlier_end.1));
                }
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
            if at >= window_end {
                window_end = self.series_roll(at);
            }
            match arrival {
                Some(call) => self.call_arrive(call),
                None => self.dispatch(event),
            }
            if self.obs.in_flight() > limits.max_in_flight {
                return Err(Error::Limit(format!(
                    "scenario `{}`: more than scenario.max_in_flight = {} requests in flight at once (raise it in [scenario] if the system is meant to hold this many)",
                    self.model.name, limits.max_in_flight
                )));
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
                        return Err(self.standing_still(popped - instant_from));
                    }
                }
            }
        }
        Ok(())
    }

    /// An outlier detector would count its picks in more sweep intervals x
    /// replicas than [`MAX_SERIES_ROWS`](super::MAX_SERIES_ROWS): the key path of
    /// its `outlier_detection`.
    #[cold]
    fn outlier_limit(&self, key: &str) -> Error {
        Error::Limit(format!(
            "scenario `{}`: {key}: the run passed {} sweep intervals x replicas, the most a detector counts its picks in (timeseries_replicas.csv): raise {key}.interval_ms or shorten the run",
            self.model.name,
            super::timeseries::MAX_SERIES_ROWS
        ))
    }

    /// The time series would pass its row limit.
    #[cold]
    fn series_limit(&self) -> Error {
        let (max, all) = (
            self.model.limits.max_series_rows,
            super::timeseries::MAX_SERIES_ROWS,
        );
        let share = if max < all {
            format!(" (its share of the {all} the compare rows may write together)")
        } else {
            String::new()
        };
        Error::Limit(format!(
            "scenario `{}`: the time series would write more than {max} rows{share} (timeseries.csv, timeseries_services.csv, timeseries_limiters.csv and timeseries_calls.csv): raise output.window_ms (faults without it use {} ms windows)",
            self.model.name,
            super::timeseries::DEFAULT_WINDOW_MS
        ))
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
            return Err(self.trace_overrun());
        }
        if calls > max {
            return Err(self.too_many_calls(max, calls));
        }
        let (what, n) = if requests > max {
            ("requests", requests)
        } else {
            if let Some((l, n)) = self.limiting.largest_window_log()
                && n > max
            {
                // a limiter's peak tracker keeps every pass within its window
                return Err(Error::Limit(format!(
                    "scenario `{}`: limiter `{}` let more than scenario.max_in_flight = {max} requests through within one window_ms ({n}), each kept to measure its peak (raise max_in_flight in [scenario] or shorten the window)",
                    self.model.name, self.model.limiters[l].name
                )));
            }
            return Ok(());
        };
        Err(Error::Limit(format!(
            "scenario `{}`: more than scenario.max_in_flight = {max} {what} held at once ({n}), those their caller gave up on but a dependency or server still holds included (raise it in [scenario], add slots, or set cancellation = true)",
            self.model.name
        )))
    }

    /// More than `scenario.max_events_per_instant` events at one instant: the run
    /// loops without its clock moving. Names what in the model can do that.
    #[cold]
    fn standing_still(&self, events: u64) -> Error {
        use crate::model::{AttemptOutcome, BackoffKind, Workload};
        let m = self.model;
        let mut causes: Vec<String> = Vec::new();
        for p in &m.policies {
            let Some(r) = &p.retry else { continue };
            let at_once: Vec<&str> = [
                AttemptOutcome::Rejected,
                AttemptOutcome::Shed,
                AttemptOutcome::Error,
            ]
            .into_iter()
            .filter(|o| r.on & o.bit() != 0)
            .filter_map(|o| {
                AttemptOutcome::NAMES
                    .iter()
                    .find(|(_, x)| *x == o)
                    .map(|(n, _)| *n)
            })
            .collect();
            if r.backoff.kind == BackoffKind::None && r.max_attempts > 1 && !at_once.is_empty() {
                causes.push(format!(
                    "policy `{}` retries at once (backoff none, max_attempts = {}) on {}, answers that can come at once",
                    p.name,
                    r.max_attempts,
                    at_once.join(", ")
                ));
            }
        }
        for w in &m.workloads {
            if let Workload::Closed { think, .. } = &w.workload
                && think.can_be_zero()
            {
                causes.push(format!(
                    "the users of workload `{}` can think 0 ms: a request that ends at once (a 429, a 503, zero service time) is sent again at the same instant",
                    w.name
                ));
            }
        }
        if causes.is_empty() {
            causes.push("zero-time work in a loop (service times and latencies of 0)".into());
        }
        Error::Limit(format!(
            "scenario `{}`: the run passed scenario.max_events_per_instant = {} ({events} events at {} ms without the clock moving): it loops in zero time; likely: {} (raise max_events_per_instant in [scenario] if so many events at one instant are meant)",
            m.name,
            m.limits.max_events_per_instant,
            crate::format::format_number(self.now.as_ms()),
            causes.join("; ")
        ))
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
                return Err(self.out_of_memory(what));
            }
        }
        Ok(())
    }

    /// The system refused the memory a table of the run needed.
    #[cold]
    fn out_of_memory(&self, what: &str) -> Error {
        Error::Limit(format!(
            "scenario `{}`: out of memory: the system refused the memory the run's {what} needed to grow, with {} requests and {} calls held; lower scenario.max_in_flight (now {}) so that the run stops on it first, or give resim more memory",
            self.model.name,
            self.requests.held(),
            self.calls.held() + self.policies.held(),
            self.model.limits.max_in_flight
        ))
    }

    /// The traced requests made far more spans than the row may hold.
    #[cold]
    fn trace_overrun(&self) -> Error {
        let max = self.trace.as_ref().map_or(0, |t| t.max_events());
        Error::Limit(format!(
            "scenario `{}`: --trace: the traced requests made more than twice the {max} spans and instants this compare row's trace may hold ({} for trace.json, shared by the compare rows): trace fewer requests",
            self.model.name,
            super::trace::MAX_TRACE_EVENTS
        ))
    }

    /// More than `max` calls open at once: those their callers still wait for
    /// (a plan's branches each hold one) and those given up on but still held.
    #[cold]
    fn too_many_calls(&self, max: u64, calls: u64) -> Error {
        let awaited = self.calls.awaited() + self.policies.held();
        let given_up = calls.saturating_sub(awaited);
        let fix = if given_up > awaited {
            "raise it in [scenario], add slots, or set cancellation = true"
        } else {
            "raise it in [scenario] if the system is meant to hold this many, or make fewer calls at once: each branch of a plan holds one"
        };
        Error::Limit(format!(
            "scenario `{}`: more than scenario.max_in_flight = {max} calls open at once ({calls}: {awaited} awaited by their callers, {given_up} given up on but still held by a dependency or server) ({fix})",
            self.model.name
        ))
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

/// How often the run checks the work it holds (`World::check_held`): every
/// `mask + 1` events, a power of two. One event starts at most one call per
/// branch of a plan, so a plan of B branches checks every 1024 / B events:
/// whatever the fan-out, the calls held stay within about 1024 of the limit
/// plus one event's calls (10,000 branches held 10 million calls, 2.2 GB,
/// between two checks every 1024 events).
fn held_check_mask(model: &Model) -> u64 {
    let fan_out = model
        .services
        .iter()
        .filter_map(|s| s.handler.plan())
        .map(|p| p.branches.len() as u64)
        .max()
        .unwrap_or(1)
        .max(1);
    (1024 / fan_out).max(1).next_power_of_two() - 1
}

/// The latest time the outlier detectors may reach before one counts its
/// picks (per sweep interval and replica) in more than
/// [`MAX_SERIES_ROWS`](super::MAX_SERIES_ROWS) cells, and the key path of that
/// detector's `outlier_detection` (`Ticks::MAX` without one): a 1 ms sweep
/// over a day would hold gigabytes of counts.
fn outlier_end(model: &Model) -> (Ticks, String) {
    let services = model.services.iter().map(|s| {
        let key = format!("services.{}.outlier_detection", s.name);
        (s.balance.outlier.as_ref(), s.replicas, key)
    });
    let dependencies = model.dependencies.iter().map(|d| {
        let key = format!("dependencies.{}.outlier_detection", d.name);
        (d.balance.outlier.as_ref(), d.replicas, key)
    });
    services
        .chain(dependencies)
        .filter_map(|(o, replicas, key)| {
            let o = o?;
            let intervals = super::timeseries::MAX_SERIES_ROWS / u64::from(replicas.max(1));
            Some((Ticks(o.interval.0.saturating_mul(intervals)), key))
        })
        .min_by_key(|(t, _)| *t)
        .unwrap_or((Ticks(u64::MAX), String::new()))
}
