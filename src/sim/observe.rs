//! Observers: the run's books. They hear lifecycle steps from [`super::notes`]
//! (a request was sent, waited, was handled, got its answer or was given up on;
//! a call was made, failed, worked, wasted work); actors never update each
//! other's counters. The books
//! kept here are the whole-run outcome counts, the response-time samples, the time
//! in flight, per-dependency figures and, for ladders, per-step figures.
//!
//! # The warm-up (`scenario.warmup_ms`)
//!
//! Client-side books (outcomes, response times, time in the system) count a
//! request by its **send time**: one sent before the warm-up's end is left out
//! wherever it ends. The server and dependency books (the `services`,
//! `server_work`, `replicas` and `dependencies` figures, and the outcomes' and
//! run's columns drawn from them) **start again** at the warm-up's end, an edge
//! event that runs first in its tick: from then on every event counts by the
//! time it happens (an arrival or a shed when it arrives, a wait when service
//! starts, work, late work and a response when the request leaves its slot, a
//! call when it is made), and time averages (busy slots, queue, requests in
//! flight) cover the time from the warm-up's end to the run's end. Figures kept
//! at the end of the run are rescaled to that span here.

use super::call_sites::CallSites;
use super::limiter::LimiterResults;
use super::result::{DependencyStats, RunResult, StepStats, WorkloadStats};
use super::server::stats::{ProxyStats, ReplicaStats, ServerStats};
use super::timeseries::{CallWindow, End, Reading, Timeline};
use super::vocab::Outcome;
use crate::engine::Ticks;
use crate::metrics::{TickSum, TimeAverage};
use crate::model::{DependencyId, Handler, Model, RouteId, Workload};

/// What the time series notes for a dependency.
#[derive(Debug, Clone, Copy)]
enum Note {
    Arrival,
    Processed,
    Wasted(f64),
}

/// The books of one run.
pub(crate) struct Observers {
    result: RunResult,
    in_flight: TimeAverage,
    /// Requests sent before it stay out of the whole-run outcome counts.
    warmup: Ticks,
    /// The time series (with `[output] window_ms` or faults).
    series: Option<Box<Timeline>>,
    /// The services row of dependency 0 (servers come first).
    first_dependency_row: usize,
    /// A warm-up or a time series: the request books take their slow path.
    extra: bool,
    /// The sum behind `in_system_ms`, and the time behind `last_exit_ms`, kept
    /// in ticks during the run.
    in_system: TickSum,
    last_exit: Ticks,
}

impl Observers {
    pub fn new(model: &Model) -> Observers {
        let steps = match &model.workload {
            Workload::Ladder(l) => l
                .steps
                .iter()
                .map(|&c| StepStats {
                    concurrency: c,
                    ..StepStats::default()
                })
                .collect(),
            _ => Vec::new(),
        };
        let servers: Vec<String> = model
            .services
            .iter()
            .filter(|s| matches!(s.handler, Handler::Server(_)))
            .map(|s| s.name.clone())
            .collect();
        let first_dependency_row = servers.len();
        let series = super::timeseries::window_of(model).map(|w| {
            let names = servers
                .into_iter()
                .chain(model.dependencies.iter().map(|d| d.name.clone()))
                .collect();
            Box::new(
                Timeline::new(
                    w,
                    names,
                    first_dependency_row,
                    model.workloads.len(),
                    super::call_sites::CallSites::of(model),
                )
                .with_replicas(replica_rows(model), &dependency_replicas(model)),
            )
        });
        Observers {
            extra: series.is_some() || model.warmup > Ticks::ZERO,
            warmup: model.warmup,
            series,
            first_dependency_row,
            result: RunResult {
                dependencies: vec![DependencyStats::default(); model.dependencies.len()],
                steps,
                // per-workload books only when there are several: one workload's
                // are the run's own (the analysis reads them from there)
                workloads: if model.workloads.len() > 1 {
                    vec![WorkloadStats::default(); model.workloads.len()]
                } else {
                    Vec::new()
                },
                ..RunResult::default()
            },
            in_flight: TimeAverage::default(),
            in_system: TickSum::default(),
            last_exit: Ticks::ZERO,
        }
    }

    /// Requests in flight now.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        self.in_flight.level()
    }

    fn step(&mut self, step: Option<u32>) -> Option<&mut StepStats> {
        self.result.steps.get_mut(step? as usize)
    }

    /// Keeps per-step books for `n` steps (tests that send tagged requests by hand).
    #[cfg(test)]
    pub fn track_steps(&mut self, n: usize) {
        self.result.steps = vec![StepStats::default(); n];
    }

    /// A ladder request of `step` leaves its client.
    pub fn step_sent(&mut self, step: usize) {
        self.result.steps[step].sent += 1;
    }

    /// The time series, when the run keeps one.
    #[inline]
    pub fn series(&mut self) -> Option<&mut Timeline> {
        self.series.as_deref_mut()
    }

    /// The time series' call sites, when the run keeps one.
    pub fn series_sites(&self) -> Option<&CallSites> {
        self.series.as_deref().map(|t| t.sites())
    }

    /// A warm-up or a time series: the books take their slow path (an actor
    /// asks before it works out what only they need).
    #[inline]
    pub fn slow_path(&self) -> bool {
        self.extra
    }

    /// The latest event time the time series may reach before passing
    /// `max_rows` (the run's share of
    /// [`MAX_SERIES_ROWS`](super::MAX_SERIES_ROWS); `Ticks::MAX` without a
    /// series), with `other_rows` rows per window besides the services and
    /// call sites rows (clients and limiters).
    pub fn series_end(&self, other_rows: u64, max_rows: u64) -> Ticks {
        match &self.series {
            None => Ticks(u64::MAX),
            Some(t) => {
                let per_window = other_rows + t.rows() as u64;
                let windows = max_rows / per_window;
                Ticks(t.window().0.saturating_mul(windows))
            }
        }
    }

    /// The time series' services row of dependency `dep`.
    #[inline]
    pub fn dependency_row(&self, dep: DependencyId) -> usize {
        self.first_dependency_row + dep
    }

    /// A request of `workload` (its index; None: not a workload's) enters the
    /// system now, on `route`.
    #[inline]
    pub fn request_sent(&mut self, now: Ticks, workload: Option<u32>, route: RouteId) {
        self.in_flight.add(now, 1);
        if self.extra {
            self.sent_extra(now, workload, route);
        } else {
            self.result.outcomes.requests += 1;
        }
    }

    /// [`Self::request_sent`] with a warm-up or a time series.
    #[inline]
    fn sent_extra(&mut self, now: Ticks, workload: Option<u32>, route: RouteId) {
        if now >= self.warmup {
            self.result.outcomes.requests += 1;
        }
        if let Some(t) = self.series() {
            t.sent(now, workload, route);
        }
    }

    /// A client of `workload` has its policy send another attempt (a retry or a
    /// hedge) now: the time series counts it by its send time.
    #[cold]
    pub fn client_attempt_sent(&mut self, now: Ticks, workload: Option<u32>) {
        if let Some(t) = self.series() {
            t.attempt(now, workload);
        }
    }

    /// The handler finished with a request (its client may have gone already).
    #[inline]
    pub fn handled(&mut self, step: Option<u32>, outcome: Outcome) {
        if matches!(
            outcome,
            Outcome::Answered | Outcome::Dropped | Outcome::Error
        ) && let Some(st) = self.step(step)
        {
            st.processed += 1;
        }
    }

    /// A request started service after waiting `wait` in a server queue.
    #[inline]
    pub fn waited(&mut self, step: Option<u32>, wait: Ticks) {
        if let Some(st) = self.step(step) {
            st.waits.push(wait);
        }
    }

    /// A request was dropped from a server queue after its client gave up.
    pub fn abandoned(&mut self, step: Option<u32>) {
        if let Some(st) = self.step(step) {
            st.abandoned += 1;
        }
    }

    /// The client got its answer `response` after sending, now. (Always
    /// inlined: left to the compiler it stayed a call on every request's path,
    /// measured at 3 % of M1's CPU time with its saves and restores.)
    #[inline(always)]
    pub fn answered(&mut self, now: Ticks, outcome: Outcome, response: Ticks) {
        if self.extra && !self.answered_extra(now, outcome, response) {
            return;
        }
        // an answered request's response is in `answered_response` (client_done,
        // the same request): `response` gets the rest and both at the end
        if outcome != Outcome::Answered {
            self.result.response.push(response);
        }
        self.result.outcomes.count(outcome);
    }

    /// The time series' part of [`Self::answered`]; whether the whole-run books
    /// count the request (sent after the warm-up).
    #[inline]
    fn answered_extra(&mut self, now: Ticks, outcome: Outcome, response: Ticks) -> bool {
        if let Some(t) = self.series() {
            t.ended(now, End::of(outcome), response);
        }
        now - response >= self.warmup
    }

    /// The time series' part of [`Self::client_done`] (the request's workload's
    /// windows, with several workloads); whether the request was sent during the
    /// warm-up (the whole-run books leave it out).
    #[inline]
    fn client_done_extra(
        &mut self,
        now: Ticks,
        workload: Option<u32>,
        outcome: Outcome,
        response: Ticks,
    ) -> bool {
        if let Some(t) = self.series.as_deref_mut()
            && t.per_workload()
        {
            t.workload_ended(now, workload, End::of(outcome), response);
        }
        now.saturating_sub(response) < self.warmup
    }

    /// A request of workload `workload` is over for its client now: `outcome`
    /// after `response` (the time it gave up, for a client timeout).
    #[inline]
    pub fn client_done(
        &mut self,
        now: Ticks,
        workload: Option<u32>,
        outcome: Outcome,
        response: Ticks,
    ) {
        if self.extra && self.client_done_extra(now, workload, outcome, response) {
            return;
        }
        if outcome == Outcome::Answered {
            self.result.answered_response.push(response);
        }
        let Some(w) = workload.and_then(|w| self.result.workloads.get_mut(w as usize)) else {
            return;
        };
        w.outcomes.requests += 1;
        w.outcomes.count(outcome);
        if outcome == Outcome::Answered {
            w.answered_response.push(response);
        }
        if outcome != Outcome::TimedOut {
            w.response.push(response);
        }
    }

    /// The client gave up on a request now, `waited` after sending it.
    pub fn gave_up(&mut self, now: Ticks, waited: Ticks) {
        if self.extra && !self.answered_extra(now, Outcome::TimedOut, waited) {
            return;
        }
        self.result.outcomes.timed_out += 1;
    }

    /// A request leaves the system now (answered, refused or given up) after
    /// `in_system`.
    #[inline]
    pub fn left(&mut self, now: Ticks, in_system: Ticks) {
        self.in_flight.add(now, -1);
        self.last_exit = now;
        // a time series without a warm-up (every scenario with faults) has no
        // request to leave out: the warm-up's own test spares it the call
        if self.warmup > Ticks::ZERO && self.sent_in_warmup(now, in_system) {
            return;
        }
        self.in_system.add(in_system);
    }

    /// Whether a request over now after `in_system` was sent during the warm-up.
    #[cold]
    #[inline(never)]
    fn sent_in_warmup(&self, now: Ticks, in_system: Ticks) -> bool {
        now.saturating_sub(in_system) < self.warmup
    }

    /// The warm-up is over (now): the dependency books and the requests in
    /// flight start again (see the module docs).
    fn restart(&mut self, now: Ticks) {
        for d in &mut self.result.dependencies {
            *d = DependencyStats::default();
        }
        self.in_flight = self.in_flight.restarted(now);
    }

    /// A request of `step` is over for its client: `outcome`, in time or not.
    #[inline]
    pub fn done(&mut self, step: Option<u32>, outcome: Outcome, in_time: bool) {
        if let Some(st) = self.step(step) {
            match outcome {
                Outcome::Answered if in_time => st.successful += 1,
                Outcome::Shed | Outcome::Rejected(_) => st.rejected += 1,
                _ => {}
            }
        }
    }

    /// A call to dependency `dep` is made (the time series hears of it from
    /// [`Self::dependency_arrival`], on the slow path).
    #[inline]
    pub fn call_made(&mut self, dep: DependencyId) {
        self.result.dependencies[dep].calls += 1;
    }

    /// The time series' part of [`Self::call_made`]: a call reaches `dep` now.
    #[inline]
    pub fn dependency_arrival(&mut self, now: Ticks, dep: DependencyId) {
        self.dependency_note(now, dep, Note::Arrival);
    }

    /// The time series' part of the dependency books.
    #[cold]
    #[inline(never)]
    fn dependency_note(&mut self, now: Ticks, dep: DependencyId, note: Note) {
        let row = self.dependency_row(dep);
        if let Some(t) = self.series() {
            match note {
                Note::Arrival => t.arrival(now, row),
                Note::Processed => t.processed(now, row),
                Note::Wasted(ms) => t.wasted(now, row, ms),
            }
        }
    }

    /// A call to `dep` failed: no time left, or its caller's timeout.
    #[inline]
    pub fn call_failed(&mut self, dep: DependencyId) {
        self.result.dependencies[dep].failed += 1;
    }

    /// `dep` started work on a call.
    #[inline]
    pub fn work_started(&mut self, dep: DependencyId) {
        self.result.dependencies[dep].work_started += 1;
    }

    /// `dep` stopped work on a call (done or cancelled) now after `worked`.
    #[inline]
    pub fn work_ended(&mut self, now: Ticks, dep: DependencyId, worked: Ticks) {
        self.result.dependencies[dep].work_ms += worked.as_ms();
        if self.extra {
            self.dependency_note(now, dep, Note::Processed);
        }
    }

    /// `dep` finished work nobody waited for any more, now: `wasted` of it after
    /// the caller gave up.
    pub fn wasted(&mut self, now: Ticks, dep: DependencyId, wasted: Ticks) {
        self.result.dependencies[dep].wasted_ms += wasted.as_ms();
        if self.extra {
            self.dependency_note(now, dep, Note::Wasted(wasted.as_ms()));
        }
    }

    /// The result at the end of the run (`end`, after `events` events;
    /// `policy_sites` adds the policy states' books to their call sites, as
    /// for [`Timeline::roll`]).
    pub fn finish(
        mut self,
        end: Ticks,
        events: u64,
        dependency_busy: Vec<f64>,
        servers: Vec<ServerStats>,
        limiters: LimiterResults,
        policy_sites: impl FnOnce(&mut [CallWindow]),
    ) -> RunResult {
        let warmup = self.warmup;
        let r = &mut self.result;
        r.response.absorb(&r.answered_response);
        r.events = events;
        r.sim_time_ms = end.as_ms();
        // Requests in flight, averaged while requests were in the system: work left
        // behind by given-up calls may run on after the last one left.
        r.in_system_ms = self.in_system.ms();
        r.last_exit_ms = self.last_exit.as_ms();
        let last_exit = self.last_exit;
        r.mean_in_flight = self.in_flight.mean(last_exit) * after_warmup(warmup, last_exit);
        let mut work = 0.0;
        let scale = after_warmup(warmup, end);
        for (stats, busy) in r.dependencies.iter_mut().zip(dependency_busy) {
            stats.mean_busy = busy * scale;
            work += stats.mean_busy;
        }
        r.mean_dependency_work = work;
        r.wasted_ms = r.dependencies.iter().map(|d| d.wasted_ms).sum();
        let mut servers = servers;
        if warmup > Ticks::ZERO {
            for s in &mut servers {
                s.mean_busy_slots *= scale;
                s.mean_queue *= scale;
                for r in &mut s.replicas {
                    r.mean_busy_slots *= scale;
                }
            }
        }
        // the series reads the servers' time averages and counts, which the
        // warm-up scaling above leaves alone (it rescales only the means)
        r.timeseries = self.series.take().map(|t| {
            let replicas = replica_books(&servers);
            t.finish(
                end,
                |row, at| series_reading(&servers, &replicas, row, at),
                policy_sites,
            )
        });
        r.servers = servers;
        r.limiters = limiters;
        self.result
    }
}

/// What turns a time average over [0, `until`] of a level restarted at the
/// warm-up's end (0 before it) into its average over [warm-up, `until`]: 1
/// without a warm-up, 0 when nothing ran after it.
pub(super) fn after_warmup(warmup: Ticks, until: Ticks) -> f64 {
    if warmup == Ticks::ZERO {
        1.0
    } else if until > warmup {
        until.0 as f64 / (until - warmup).0 as f64
    } else {
        0.0
    }
}

impl Observers {
    /// The time series' current window ends at or before `now`: closes the
    /// windows that ended, reading the servers' books `servers` and the
    /// policies' call books (`policies` adds them to each call site's window),
    /// and returns the new window's end (never, without a time series).
    pub fn series_roll(
        &mut self,
        now: Ticks,
        servers: &[ServerStats],
        policies: impl FnOnce(&mut [CallWindow]),
    ) -> Ticks {
        match self.series.as_deref_mut() {
            Some(t) => {
                let replicas = replica_books(servers);
                t.roll(
                    now,
                    |row, at| series_reading(servers, &replicas, row, at),
                    policies,
                );
                t.end()
            }
            None => Ticks(u64::MAX),
        }
    }

    /// `scenario.warmup_ms` ends now: the servers' books `servers` and these
    /// start again (the client-side books filter by send time instead).
    pub fn warmup_over(&mut self, now: Ticks, servers: &mut [ServerStats]) {
        for (row, s) in servers.iter_mut().enumerate() {
            if let Some(t) = self.series.as_deref_mut() {
                t.restarting(row, server_reading(s, now));
            }
        }
        if let Some(t) = self.series.as_deref_mut() {
            // the replica rows, after the server rows
            let replicas = servers.iter().flat_map(|s| &s.replicas);
            for (k, r) in replicas.enumerate() {
                t.restarting(servers.len() + k, replica_reading(r, now));
            }
        }
        for s in servers.iter_mut() {
            restart_server(s, now);
        }
        self.restart(now);
    }
}

/// A server row's books at `at` (the areas under its busy slots and queue over
/// [0, `at`], and its counts), as the time series reads them at a window's end.
#[inline]
fn server_reading(s: &ServerStats, at: Ticks) -> Reading {
    Reading {
        busy: s.busy.area(at),
        queue: s.queued.area(at),
        arrived: s.arrived,
        processed: s.processed,
        shed: s.shed,
    }
}

/// Row `row` of the time series' server rows at `at`: a server's books, or
/// (past the servers) the replica rows', each replicated server's replicas
/// in order.
#[inline]
fn series_reading(
    servers: &[ServerStats],
    replicas: &[&ReplicaStats],
    row: usize,
    at: Ticks,
) -> Reading {
    match servers.get(row) {
        Some(s) => server_reading(s, at),
        None => replica_reading(replicas[row - servers.len()], at),
    }
}

/// Every replicated server's replicas' books, in the replica rows' order.
fn replica_books(servers: &[ServerStats]) -> Vec<&ReplicaStats> {
    servers.iter().flat_map(|s| &s.replicas).collect()
}

/// A replica's books at `at`, as [`server_reading`] reads a server's.
fn replica_reading(r: &ReplicaStats, at: Ticks) -> Reading {
    Reading {
        busy: r.busy.area(at),
        queue: r.queued.area(at),
        arrived: r.arrived,
        processed: r.processed,
        shed: r.shed,
    }
}

/// The time series' replica rows of `model`: each server with replicas,
/// its replicas numbered from 1.
fn replica_rows(model: &Model) -> Vec<(String, u32)> {
    model
        .services
        .iter()
        .filter(|s| matches!(s.handler, Handler::Server(_)) && s.replicas > 1)
        .flat_map(|s| (1..=s.replicas).map(|k| (s.name.clone(), k)))
        .collect()
}

/// Each dependency's name and replica count, by index.
fn dependency_replicas(model: &Model) -> Vec<(&str, u32)> {
    (model.dependencies.iter())
        .map(|d| (d.name.as_str(), d.replicas))
        .collect()
}

/// A server's figures started again at `now` (the warm-up's end): counts and
/// samples emptied, time averages restarted with their current levels.
fn restart_server(s: &mut ServerStats, now: Ticks) {
    *s = ServerStats {
        service: s.service,
        busy: s.busy.restarted(now),
        queued: s.queued.restarted(now),
        replicas: s
            .replicas
            .iter()
            .map(|r| ReplicaStats {
                busy: r.busy.restarted(now),
                queued: r.queued.restarted(now),
                ..ReplicaStats::default()
            })
            .collect(),
        proxy: s.proxy.as_ref().map(|p| {
            Box::new(ProxyStats {
                max_conn: p.max_conn,
                peak: p.length.level(),
                length: p.length.restarted(now),
                ..ProxyStats::default()
            })
        }),
        ..ServerStats::default()
    };
}
