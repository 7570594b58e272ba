//! The time series: the run cut into windows of `[output] window_ms` (1000 ms by
//! default when the scenario has faults), kept by the observers.
//!
//! Counting rules (the contract's): client first tries and attempts count in the
//! window of their send time; outcomes (`answered` = goodput, `failed`,
//! `timed_out`, `shed`, `rejected`) and the answered requests' percentiles in the
//! window of their end. Per service (servers, then dependencies): `arrivals`,
//! `processed` and `shed` in the window they happen, `wasted_ms` in the window the
//! wasted work ends, and `mean_queue` / `mean_busy` as time averages over the
//! window.
//!
//! Cost: every observation lands in the current window, since virtual time only
//! moves forward; a window is closed (one row pushed) when time passes its end.
//! The run loop closes the windows before it hands on the first event past their
//! end ([`Timeline::roll`]), so an observation is one count and never asks which
//! window it is in, and nothing is allocated per request: the answered response
//! times of the current window go into one buffer that is cleared, not freed, at
//! each window's end.
//!
//! A server row's `mean_busy` and `mean_queue` are read from the server's own
//! time averages when a window closes (the roll is given them): the servers
//! tell the time series nothing about their levels. A dependency row keeps its
//! levels here, told by the dependency at each change.
//!
//! With several workloads the client-side figures are also kept per workload
//! (first tries and attempts by the send time of the workload's requests, ends by
//! their end time), one more buffer of answered response times per workload; the
//! whole-run figures stay as they are, so the per-workload windows add up to them.
//! A run with one workload keeps no per-workload books at all.
//!
//! Per call site (see [`call_sites`](super::call_sites): every workload -> service
//! and service -> service or dependency pair of the model), first tries and
//! attempts count in the window of their send time, as `calls.csv` counts them
//! over the run: a call (a workload's request, a plan's call) is a first try
//! when it is made (a call a breaker or throttle refuses too); every attempt a
//! policy sends (the first, retries, hedged copies) is an attempt, and a call
//! or request without a policy is one (a call with no time left at all as
//! well). So retries at any depth show here, not only the workload's. A call
//! through a policy is counted by its policy state's books, which the roll
//! reads at each window's end (as it reads a server's: nothing more per
//! attempt); the others are counted here as they happen.

use super::call_sites::CallSites;
use crate::engine::Ticks;
use crate::metrics::{Samples, TimeAverage};
use crate::model::{Model, RouteId};

pub use crate::model::series::client_and_limiter_rows;
pub(crate) use crate::model::series::window_of;
pub use crate::model::{DEFAULT_WINDOW_MS, MAX_SERIES_ROWS};

/// Rows per window of `timeseries_calls.csv`: one per call site of `model`
/// (the count the validation makes, `model::series::call_site_rows`, is the same).
pub fn call_site_rows(model: &Model) -> u64 {
    CallSites::of(model).len() as u64
}

/// One window's client-side figures.
#[derive(Debug, Clone, Default)]
pub struct WindowStats {
    /// Requests first sent in the window.
    pub first_tries: u64,
    /// Attempts sent in the window (first tries and retries).
    pub attempts: u64,
    /// Requests that ended in the window, by outcome.
    pub answered: u64,
    /// Failed: a plan's call failed, an `error` from a fault, a 404.
    pub failed: u64,
    /// Given up by their client.
    pub timed_out: u64,
    /// Refused by a full server (503) or dropped by CoDel.
    pub shed: u64,
    /// Rejected by a limiter (429).
    pub rejected: u64,
    /// Median response time of the answered requests (None: none answered).
    pub p50_ms: Option<f64>,
    /// 99th percentile of the same.
    pub p99_ms: Option<f64>,
}

/// One window's figures for one service or dependency.
#[derive(Debug, Clone, Default)]
pub struct ServiceWindow {
    /// Requests (calls) that arrived.
    pub arrivals: u64,
    /// Requests processed (dependency work ended).
    pub processed: u64,
    /// Requests shed.
    pub shed: u64,
    /// Time-average queued requests (waiting calls).
    pub mean_queue: f64,
    /// Time-average busy slots (calls at work).
    pub mean_busy: f64,
    /// Work nobody waited for, ending in the window.
    pub wasted_ms: f64,
}

/// One window's figures for one call site.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallWindow {
    /// Calls (requests, for a workload's site) first made in the window.
    pub first_tries: u64,
    /// Attempts sent in the window (first ones, retries, hedged copies).
    pub attempts: u64,
}

/// A call site by name: who calls and what.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallSiteName {
    /// The calling workload or service.
    pub caller: String,
    /// The service or dependency called (`(no service)`: a route nobody owns).
    pub target: String,
}

/// What a run's time series measured.
#[derive(Debug, Clone, Default)]
pub struct TimeSeries {
    /// The windows' length.
    pub window_ms: f64,
    /// One per window from t = 0 to the last event.
    pub windows: Vec<WindowStats>,
    /// Names of the services rows (servers, then dependencies).
    pub names: Vec<String>,
    /// `windows.len() x names.len()`, window-major.
    pub services: Vec<ServiceWindow>,
    /// Workloads with their own client-side rows: 0 with one workload, else
    /// every workload of the model, in its order.
    pub workloads: usize,
    /// `windows.len() x workloads`, window-major: each workload's own
    /// client-side figures (empty with one workload).
    pub per_workload: Vec<WindowStats>,
    /// The call sites, in the model's order (see
    /// [`call_sites`](super::call_sites)).
    pub call_sites: Vec<CallSiteName>,
    /// `windows.len() x call_sites.len()`, window-major.
    pub calls: Vec<CallWindow>,
    /// The replica rows: each replicated server's replicas (service, replica
    /// from 1), in service order, then each replicated dependency's (empty:
    /// nothing has replicas).
    pub replica_names: Vec<(String, u32)>,
    /// `windows.len() x replica_names.len()`, window-major (`wasted_ms` 0).
    pub replicas: Vec<ServiceWindow>,
}

/// A level (busy slots, queued requests) over the run, and its area up to the
/// current window's start.
#[derive(Debug, Clone, Copy, Default)]
struct Level {
    run: TimeAverage,
    start: i128,
}

impl Level {
    /// The area within the window whose end has area `area` since t = 0; the
    /// next window starts there.
    fn close(&mut self, area: i128) -> i128 {
        let window = area - self.start;
        self.start = area;
        window
    }
}

/// A server row's books at a window's end, as the server keeps them since its
/// books started (t = 0, or the warm-up's end): the areas (level x ticks) under
/// its busy slots and queue, as its time averages give them, and its counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reading {
    pub busy: i128,
    pub queue: i128,
    pub arrived: u64,
    pub processed: u64,
    pub shed: u64,
}

impl std::ops::Add for Reading {
    type Output = Reading;
    fn add(self, o: Reading) -> Reading {
        Reading {
            busy: self.busy + o.busy,
            queue: self.queue + o.queue,
            arrived: self.arrived + o.arrived,
            processed: self.processed + o.processed,
            shed: self.shed + o.shed,
        }
    }
}

impl std::ops::Sub for Reading {
    type Output = Reading;
    /// What the books gained since `o` (an earlier reading of them).
    fn sub(self, o: Reading) -> Reading {
        Reading {
            busy: self.busy - o.busy,
            queue: self.queue - o.queue,
            arrived: self.arrived - o.arrived,
            processed: self.processed - o.processed,
            shed: self.shed - o.shed,
        }
    }
}

/// The current window of one services row. A dependency row counts its
/// arrivals, work done and levels here as they happen; a server row reads them
/// from the server's books at the window's end (see [`ServerRow`]).
#[derive(Debug, Clone, Copy, Default)]
struct Open {
    arrivals: u64,
    processed: u64,
    wasted_ms: f64,
    busy: Level,
    queue: Level,
}

impl Open {
    /// The window ending at `end`, counted as things happened (none shed);
    /// the next one starts from nothing.
    fn close(&mut self, end: Ticks) -> Reading {
        let w = Reading {
            busy: self.busy.close(self.busy.run.area(end)),
            queue: self.queue.close(self.queue.run.area(end)),
            arrived: self.arrivals,
            processed: self.processed,
            shed: 0,
        };
        (self.arrivals, self.processed) = (0, 0);
        w
    }
}

/// What a server row keeps between windows: what its books dropped when they
/// were started again (the warm-up's end), so that its windows run on, and
/// what they held, with that added, at the current window's start.
#[derive(Debug, Clone, Copy, Default)]
struct ServerRow {
    dropped: Reading,
    start: Reading,
}

/// The client-side figures of the current window: the whole run's, or one
/// workload's.
#[derive(Debug, Clone, Default)]
struct Clients {
    current: WindowStats,
    /// Response times of the window's answered requests (cleared, not freed).
    answered: Samples,
}

impl Clients {
    fn sent(&mut self) {
        self.current.first_tries += 1;
        self.current.attempts += 1;
    }

    fn ended(&mut self, end: End, response: Ticks) {
        let w = &mut self.current;
        match end {
            End::Answered => {
                w.answered += 1;
                self.answered.push(response);
            }
            End::Failed => w.failed += 1,
            End::TimedOut => w.timed_out += 1,
            End::Shed => w.shed += 1,
            End::Rejected => w.rejected += 1,
        }
    }

    /// The window's figures; the books start the next window empty.
    fn close(&mut self) -> WindowStats {
        let mut w = std::mem::take(&mut self.current);
        if self.answered.count() > 0 {
            w.p50_ms = Some(self.answered.quantile_ms(0.5));
            w.p99_ms = Some(self.answered.quantile_ms(0.99));
        }
        self.answered.clear();
        w
    }
}

/// The time series being kept during a run.
pub(crate) struct Timeline {
    window: Ticks,
    /// Start and end of the current window.
    start: Ticks,
    end: Ticks,
    clients: Clients,
    /// One per workload with several workloads, else empty.
    workloads: Vec<Clients>,
    rows: Vec<Open>,
    /// One per server row (the first rows: their levels and counts are read
    /// from the server's books at each window's end, not kept in `rows`).
    servers: Vec<ServerRow>,
    /// One per replica row of a server (read from its replica's books as a
    /// server row is: row `servers.len() + k` of the reading).
    replicas: Vec<ServerRow>,
    /// One per replica row of a dependency (counted here as a dependency
    /// row is), after the servers' in `out.replica_names`.
    dependency_replicas: Vec<Open>,
    /// Per dependency, the index in `dependency_replicas` of its first
    /// replica (None: it has one instance).
    dependency_replica_first: Vec<Option<usize>>,
    /// The model's call sites; the current window's counts of each made
    /// here (calls without a policy); and the policy states' books per site
    /// at the window's start, and as read at its end (kept to reuse).
    sites: CallSites,
    calls: Vec<CallWindow>,
    policy_start: Vec<CallWindow>,
    policy_read: Vec<CallWindow>,
    out: TimeSeries,
}

impl Timeline {
    /// A time series of `window`-long windows with the services rows `names`
    /// (the first `servers` of them servers), per-workload client rows for
    /// `workloads` workloads when there are more than one, and a row per call
    /// site of `sites`.
    pub fn new(
        window: Ticks,
        names: Vec<String>,
        servers: usize,
        workloads: usize,
        sites: CallSites,
    ) -> Timeline {
        let workloads = if workloads > 1 { workloads } else { 0 };
        Timeline {
            window,
            start: Ticks::ZERO,
            end: window,
            clients: Clients::default(),
            workloads: vec![Clients::default(); workloads],
            rows: vec![Open::default(); names.len()],
            servers: vec![ServerRow::default(); servers],
            replicas: Vec::new(),
            dependency_replicas: Vec::new(),
            dependency_replica_first: Vec::new(),
            calls: vec![CallWindow::default(); sites.len()],
            policy_start: vec![CallWindow::default(); sites.len()],
            policy_read: vec![CallWindow::default(); sites.len()],
            out: TimeSeries {
                window_ms: window.as_ms(),
                names,
                workloads,
                call_sites: sites
                    .names()
                    .iter()
                    .map(|(caller, target)| CallSiteName {
                        caller: caller.clone(),
                        target: target.clone(),
                    })
                    .collect(),
                ..TimeSeries::default()
            },
            sites,
        }
    }

    /// With a row per replica of each replicated server (`servers`: service
    /// and replica from 1, in order), read as `read(servers + k, end)` for
    /// the k-th, then one per replica of each dependency of `dependencies`
    /// (name and replica count, by index; a count of 1: no rows).
    pub fn with_replicas(
        mut self,
        servers: Vec<(String, u32)>,
        dependencies: &[(&str, u32)],
    ) -> Timeline {
        self.replicas = vec![ServerRow::default(); servers.len()];
        self.out.replica_names = servers;
        for &(name, n) in dependencies {
            if n < 2 {
                self.dependency_replica_first.push(None);
                continue;
            }
            let first = self.dependency_replicas.len();
            self.dependency_replica_first.push(Some(first));
            for k in 1..=n {
                self.out.replica_names.push((name.to_string(), k));
                self.dependency_replicas.push(Open::default());
            }
        }
        self
    }

    /// The model's call sites.
    #[inline]
    pub fn sites(&self) -> &CallSites {
        &self.sites
    }

    /// The window's length.
    pub fn window(&self) -> Ticks {
        self.window
    }

    /// Services, call sites and replica rows per window.
    pub fn rows(&self) -> usize {
        self.rows.len() + self.calls.len() + self.out.replica_names.len()
    }

    /// The end of the current window: an event at or after it must wait for
    /// [`Self::roll`].
    #[inline]
    pub fn end(&self) -> Ticks {
        self.end
    }

    /// Brings the current window up to `now`: closes every window that ended
    /// (`read(row, end)`: a server row's books at `end`; `policies`: adds the
    /// policy states' books, first tries and attempts since t = 0, to each
    /// one's site). Called before any observation at `now`; the servers' and
    /// the policies' books last changed before the first window end it closes.
    #[cold]
    pub fn roll(
        &mut self,
        now: Ticks,
        read: impl Fn(usize, Ticks) -> Reading,
        policies: impl FnOnce(&mut [CallWindow]),
    ) {
        if now < self.end {
            return;
        }
        self.read_policies(policies);
        self.close_until(now, &read);
    }

    /// Closes every window that ended at or before `now`.
    fn close_until(&mut self, now: Ticks, read: &impl Fn(usize, Ticks) -> Reading) {
        while now >= self.end {
            let end = self.end;
            self.close(end, self.window, read);
            self.start = end;
            self.end = end + self.window;
        }
    }

    /// Reads the policy states' books per site (see [`Self::roll`]).
    fn read_policies(&mut self, policies: impl FnOnce(&mut [CallWindow])) {
        self.policy_read.fill(CallWindow::default());
        policies(&mut self.policy_read);
    }

    /// Server row `row`'s books start again now, with `books` behind them: its
    /// windows go on from there.
    pub fn restarting(&mut self, row: usize, books: Reading) {
        let n = self.servers.len();
        let d = match self.servers.get_mut(row) {
            Some(s) => &mut s.dropped,
            None => &mut self.replicas[row - n].dropped,
        };
        *d = *d + books;
    }

    /// Checks, in debug builds, that an observation at `now` falls in the
    /// current window (the run loop rolls before it hands on an event).
    #[inline]
    fn at(&self, now: Ticks) {
        debug_assert!(
            now < self.end,
            "an observation at {now:?} past the window's end {:?}: not rolled",
            self.end
        );
    }

    /// Closes the current window at `end`, `length` long.
    fn close(&mut self, end: Ticks, length: Ticks, read: &impl Fn(usize, Ticks) -> Reading) {
        let w = self.clients.close();
        self.out.windows.push(w);
        for c in &mut self.workloads {
            let w = c.close();
            self.out.per_workload.push(w);
        }
        // a site's counts made here, and its policies' since the last window
        let sites = self.calls.iter_mut().zip(&mut self.policy_start);
        for ((own, start), &read) in sites.zip(&self.policy_read) {
            let own = std::mem::take(own);
            self.out.calls.push(CallWindow {
                first_tries: own.first_tries + read.first_tries - start.first_tries,
                attempts: own.attempts + read.attempts - start.attempts,
            });
            *start = read;
        }
        let len = length.0.max(1) as f64;
        for (i, row) in self.rows.iter_mut().enumerate() {
            // the window's areas and counts
            let w = match self.servers.get_mut(i) {
                Some(s) => {
                    // the books since t = 0, less those at the window's start
                    let r = s.dropped + read(i, end);
                    r - std::mem::replace(&mut s.start, r)
                }
                // a dependency row: counted as they happened
                None => row.close(end),
            };
            self.out.services.push(ServiceWindow {
                arrivals: w.arrived,
                processed: w.processed,
                shed: w.shed,
                mean_queue: w.queue as f64 / len,
                mean_busy: w.busy as f64 / len,
                wasted_ms: row.wasted_ms,
            });
            row.wasted_ms = 0.0;
        }
        let n = self.servers.len();
        for (k, s) in self.replicas.iter_mut().enumerate() {
            let r = s.dropped + read(n + k, end);
            let w = r - std::mem::replace(&mut s.start, r);
            self.out.replicas.push(ServiceWindow {
                arrivals: w.arrived,
                processed: w.processed,
                shed: w.shed,
                mean_queue: w.queue as f64 / len,
                mean_busy: w.busy as f64 / len,
                wasted_ms: 0.0,
            });
        }
        for row in &mut self.dependency_replicas {
            let w = row.close(end);
            self.out.replicas.push(ServiceWindow {
                arrivals: w.arrived,
                processed: w.processed,
                shed: 0,
                mean_queue: w.queue as f64 / len,
                mean_busy: w.busy as f64 / len,
                wasted_ms: 0.0,
            });
        }
    }

    /// A client of workload `workload` (None: not a workload's) sends a
    /// request on `route` (its first try): the whole run's, its workload's
    /// (with several) and its call site's first try (and attempt, without a
    /// `call_policy`).
    #[inline]
    pub fn sent(&mut self, now: Ticks, workload: Option<u32>, route: RouteId) {
        self.at(now);
        self.clients.sent();
        if self.sites.counted_when_sent()
            && let Some(w) = workload
        {
            let (site, own) = self.sites.of_request(w, route);
            if let Some(c) = self.calls.get_mut(site as usize) {
                c.first_tries += 1;
                c.attempts += u64::from(own);
            }
        }
        if let Some(c) = self.workload(workload) {
            c.sent();
        }
    }

    /// A call without a policy is made now at call site `site`: a first try
    /// and its one attempt.
    pub fn call_made(&mut self, now: Ticks, site: u32) {
        self.at(now);
        if let Some(c) = self.calls.get_mut(site as usize) {
            c.first_tries += 1;
            c.attempts += 1;
        }
    }

    /// A client of `workload` sends another attempt of a request (a retry or a
    /// hedge).
    pub fn attempt(&mut self, now: Ticks, workload: Option<u32>) {
        self.at(now);
        self.clients.current.attempts += 1;
        if let Some(c) = self.workload(workload) {
            c.current.attempts += 1;
        }
    }

    /// A request ended: `answered` (goodput) with its response time, or `failed`,
    /// `shed`, `rejected` (the whole run's figures).
    #[inline]
    pub fn ended(&mut self, now: Ticks, end: End, response: Ticks) {
        self.at(now);
        self.clients.ended(end, response);
    }

    /// [`Self::ended`] for the figures of the request's workload (kept only
    /// with several workloads).
    pub fn workload_ended(&mut self, now: Ticks, workload: Option<u32>, end: End, response: Ticks) {
        self.at(now);
        if let Some(c) = self.workload(workload) {
            c.ended(end, response);
        }
    }

    /// Whether the series keeps per-workload figures.
    #[inline]
    pub fn per_workload(&self) -> bool {
        !self.workloads.is_empty()
    }

    fn workload(&mut self, workload: Option<u32>) -> Option<&mut Clients> {
        self.workloads.get_mut(workload? as usize)
    }

    /// Services row `row` (a dependency's: a server's counts are read from its
    /// own books): a call arrived.
    #[inline]
    pub fn arrival(&mut self, now: Ticks, row: usize) {
        self.at(now);
        self.own_row(row);
        self.rows[row].arrivals += 1;
    }

    /// Services row `row` (a dependency's): a call's work ended.
    #[inline]
    pub fn processed(&mut self, now: Ticks, row: usize) {
        self.at(now);
        self.own_row(row);
        self.rows[row].processed += 1;
    }

    /// Checks, in debug builds, that row `row` is not a server's, whose counts
    /// and levels are read from its books.
    #[inline]
    fn own_row(&self, row: usize) {
        debug_assert!(
            row >= self.servers.len(),
            "a server row's counts and levels are its own"
        );
    }

    /// Services row `row`: work nobody waited for, ending now.
    #[inline]
    pub fn wasted(&mut self, now: Ticks, row: usize, ms: f64) {
        self.at(now);
        self.rows[row].wasted_ms += ms;
    }

    /// Services row `row` (a dependency's: a server's levels are read from
    /// its own books): its busy slots and queue length from now on.
    #[inline]
    pub fn levels(&mut self, now: Ticks, row: usize, busy: u64, queued: u64) {
        self.at(now);
        self.own_row(row);
        let r = &mut self.rows[row];
        r.busy.run.set(now, busy);
        r.queue.run.set(now, queued);
    }

    /// Replica `replica` (0-based) of dependency `dep` (one with replicas):
    /// a call was sent to it (`Arrival`), its work on one ended
    /// (`Processed`), or its calls at work and waiting are now these.
    #[cold]
    pub fn dependency_replica(&mut self, now: Ticks, dep: usize, replica: u32, change: AtReplica) {
        self.at(now);
        let Some(Some(first)) = self.dependency_replica_first.get(dep) else {
            return;
        };
        let r = &mut self.dependency_replicas[first + replica as usize];
        match change {
            AtReplica::Arrival => r.arrivals += 1,
            AtReplica::Processed => r.processed += 1,
            AtReplica::Levels { busy, waiting } => {
                r.busy.run.set(now, u64::from(busy));
                r.queue.run.set(now, u64::from(waiting));
            }
        }
    }

    /// The series at the end of the run (`end`: the last event): the window
    /// holding it is closed over the part that ran (`read` and `policies` as
    /// for [`Self::roll`]).
    pub fn finish(
        mut self,
        end: Ticks,
        read: impl Fn(usize, Ticks) -> Reading,
        policies: impl FnOnce(&mut [CallWindow]),
    ) -> TimeSeries {
        self.read_policies(policies);
        self.close_until(end, &read);
        let length = end.saturating_sub(self.start).max(Ticks(1));
        self.close(self.start + length, length, &read);
        self.out
    }
}

/// What changed at a dependency's replica ([`Timeline::dependency_replica`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtReplica {
    /// A call was sent to it.
    Arrival,
    /// Its work on a call ended (done or stopped).
    Processed,
    /// It has `busy` calls at work and `waiting` in its line from now on.
    Levels { busy: u32, waiting: u32 },
}

/// How a request ended, as the time series counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Answered,
    Failed,
    TimedOut,
    Shed,
    Rejected,
}

impl End {
    /// How the time series counts a request that ended with `outcome`.
    pub fn of(outcome: super::vocab::Outcome) -> End {
        use super::vocab::Outcome;
        match outcome {
            Outcome::Answered => End::Answered,
            Outcome::Dropped | Outcome::Error | Outcome::Refused | Outcome::NotFound => End::Failed,
            Outcome::TimedOut => End::TimedOut,
            Outcome::Shed => End::Shed,
            Outcome::Rejected(_) => End::Rejected,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::TimeAverage;

    fn ms(x: f64) -> Ticks {
        Ticks::from_ms(x)
    }

    /// No server rows: nothing to read at a window's end.
    fn no_servers(_: usize, _: Ticks) -> Reading {
        unreachable!("no server rows")
    }

    /// No policy states: nothing to add to the call sites.
    fn no_policies(_: &mut [CallWindow]) {}

    /// What the run loop does before an event at `at`.
    fn roll(t: &mut Timeline, at: f64) {
        t.roll(ms(at), no_servers, no_policies);
    }

    #[test]
    fn observations_land_in_their_window_and_empty_windows_are_rows_too() {
        let mut t = Timeline::new(ms(100.0), vec!["s".into()], 0, 1, CallSites::default());
        t.sent(ms(0.0), None, 0);
        t.sent(ms(99.0), None, 0);
        t.ended(ms(99.999), End::Answered, ms(10.0));
        roll(&mut t, 100.0);
        t.sent(ms(100.0), None, 0);
        roll(&mut t, 250.0);
        t.ended(ms(250.0), End::Shed, ms(0.0));
        let s = t.finish(ms(250.0), no_servers, no_policies);
        let tries: Vec<u64> = s.windows.iter().map(|w| w.first_tries).collect();
        assert_eq!(tries, [2, 1, 0]);
        let answered: Vec<u64> = s.windows.iter().map(|w| w.answered).collect();
        assert_eq!(answered, [1, 0, 0]);
        assert_eq!(s.windows[0].p99_ms, Some(10.0));
        assert_eq!(s.windows[1].p50_ms, None);
        assert_eq!(s.windows[2].shed, 1);
    }

    #[test]
    fn levels_average_over_each_window_and_the_last_over_its_run_part() {
        let mut t = Timeline::new(ms(100.0), vec!["s".into()], 0, 1, CallSites::default());
        t.levels(ms(50.0), 0, 2, 1); // 2 busy from 50
        roll(&mut t, 150.0);
        t.levels(ms(150.0), 0, 0, 0); // to 150
        let s = t.finish(ms(160.0), no_servers, no_policies);
        // [0, 100): 2 busy for 50 ms; [100, 160) (the run's end): 2 busy for 50 ms
        let busy: Vec<f64> = s.services.iter().map(|w| w.mean_busy).collect();
        assert_eq!(busy, [1.0, 100.0 / 60.0]);
        let queue: Vec<f64> = s.services.iter().map(|w| w.mean_queue).collect();
        assert_eq!(queue, [0.5, 50.0 / 60.0]);
    }

    /// A server row reads its levels and counts from the server's own books at
    /// each window's end, and runs on across their restart (the warm-up's end).
    #[test]
    fn server_rows_read_the_servers_books_across_a_restart() {
        let names = vec!["srv".to_string(), "dep".to_string()];
        let mut t = Timeline::new(ms(100.0), names, 1, 1, CallSites::default());
        /// A server's books: its busy slots' time average and its counts.
        #[derive(Default)]
        struct Books {
            busy: TimeAverage,
            arrived: u64,
            processed: u64,
            shed: u64,
        }
        fn read(b: &Books) -> impl Fn(usize, Ticks) -> Reading + '_ {
            move |row, end| {
                assert_eq!(row, 0, "only row 0 is a server");
                Reading {
                    busy: b.busy.area(end),
                    queue: 0,
                    arrived: b.arrived,
                    processed: b.processed,
                    shed: b.shed,
                }
            }
        }
        let mut books = Books::default();
        books.busy.add(ms(50.0), 2); // 2 busy from 50
        books.arrived = 3; // before 100
        books.processed = 1;
        t.arrival(ms(60.0), 1); // the dependency row counts its own
        t.roll(ms(110.0), read(&books), no_policies);
        books.arrived += 1; // at 110
        books.shed += 1;
        // the books start again at 120 with their level (TimeAverage::restarted)
        t.restarting(0, read(&books)(0, ms(120.0)));
        let mut again = Books::default();
        again.busy.add(ms(120.0), 2);
        again.busy.add(ms(150.0), -2); // to 150
        again.processed = 2; // after 120
        let s = t.finish(ms(160.0), read(&again), no_policies);
        // rows: window 0 (srv, dep), window 1 (srv, dep)
        let busy: Vec<f64> = s.services.iter().map(|w| w.mean_busy).collect();
        assert_eq!(busy, [1.0, 0.0, 100.0 / 60.0, 0.0]);
        let counts: Vec<(u64, u64, u64)> = s
            .services
            .iter()
            .map(|w| (w.arrivals, w.processed, w.shed))
            .collect();
        assert_eq!(counts, [(3, 1, 0), (1, 0, 0), (1, 2, 1), (0, 0, 0)]);
    }
}
