//! The request tracer behind `resim run --trace N` and `--spans FILE`: an
//! observer that records the life of the first N requests the workloads send
//! (and of every call, attempt and call-request made on their behalf) as spans
//! and instants in virtual time, and with `--spans` also a share of all the
//! requests ([`Selection`]). [`traces::chrome`](crate::traces::chrome) turns
//! them into Chrome's trace-event format, [`traces::otlp`](crate::traces::otlp)
//! into OpenTelemetry's OTLP JSON.
//!
//! It hears lifecycle steps from [`super::notes`], whose arms call one-line
//! hooks, `trace!(self, hook(args))`, which expand to a branch on
//! `World::trace`: a run without `--trace` evaluates none of the arguments and
//! does no other work. The tracer keeps its own maps from
//! request, call and policy-call slots to traced requests (slots are reused: a
//! slot is mapped again each time it is taken, by every hook that takes one), so
//! the actors keep no tracing state. Every hook is `#[cold]` and never inlined:
//! an untraced run's hot paths keep their shape.
//!
//! # The tree
//!
//! Every span has an id (1, 2, ... in the order they opened) and a parent on the
//! same traced request: a client's request span is a root; its `queue` and
//! `service` spans hang under it; a call hangs under the `service` span of the
//! server that makes it (under the request itself at a `plan` handler); what the
//! call became at its callee (`queue`, `service` or `work` and their calls) hangs
//! under the call. A call through a client policy that may send more than one
//! attempt (retries, hedges) is a `call` span holding one `attempt` span per
//! attempt, and the callee's spans hang under the attempt; a policy that sends
//! one attempt at most (`none`, a breaker or timeout alone) draws that attempt as
//! the call itself, so a `[policies]` table nothing uses changes nothing. A
//! workload's own policy hangs its attempts straight under the request.
//!
//! A child ends within its parent, with one exception the simulation has: work
//! that runs on after its caller gave up (no cancellation, a hedge's loser, a
//! client's timeout). Such a span takes as parent the nearest ancestor still open
//! when it ends (none: a root) and names the span it outlived (`outlived`), so
//! that every span lies within its parent.
//!
//! # Server spans (`--spans`)
//!
//! OpenTelemetry draws each request a service works on as a server span, from
//! its arrival to its answer. A run recording spans keeps one [`ServerSpan`]
//! per request at a service (a client's, or a call's), in an id space of its
//! own, so that `trace.json` is the same with or without `--spans`: it opens at
//! the arrival (a client's request: when it is sent) and ends when the handler
//! answers, drops it from its queue, or stops its work (a cancellation; a plan
//! whose client or caller went away).

use super::vocab::{CallId, Outcome, ReqId};
use crate::engine::Ticks;
use crate::model::{Handler, Model, PolicyId, RouteId, ServiceId, Target};

mod calls;
mod requests;

/// Runs a tracer hook when the run is traced: `trace!(self, hook(args))` calls
/// `hook(args, self.now())`.
macro_rules! trace {
    ($world:expr, $hook:ident($($arg:expr),* $(,)?)) => {{
        let now = $world.now();
        if let Some(t) = $world.trace.as_deref_mut() {
            t.$hook($($arg,)* now);
        }
    }};
}
pub(crate) use trace;

/// A slot that belongs to no traced request.
const NONE: u32 = u32::MAX;

/// No span (internally span ids start at 1).
const NO_SPAN: u64 = 0;

/// One span of a traced request: `start` to `end` in virtual time.
#[derive(Debug, Clone)]
pub struct Span {
    /// Unique within the trace (of one compare row), from 1 in opening order.
    pub id: u64,
    /// The span it lies within (None: a root), on the same request.
    pub parent: Option<u64>,
    /// The span it would hang under had that one not ended first (its caller
    /// gave up and the work ran on); `parent` is then the nearest span above
    /// that was still open.
    pub outlived: Option<u64>,
    /// The traced request (0 = the first one sent).
    pub track: u32,
    /// What the bar is (`request /route`, `call store`, ...).
    pub name: String,
    /// `request`, `queue`, `service`, `call`, `attempt` or `work`.
    pub cat: &'static str,
    /// When it began, in virtual time.
    pub start: Ticks,
    /// When it ended, in virtual time.
    pub end: Ticks,
    /// Key-value details (outcome, depth, target...), in a fixed order.
    pub args: Vec<(&'static str, Arg)>,
    /// Where its work happens: the caller's service for a call or an attempt,
    /// the dependency for its queue and work, the service otherwise.
    pub at: At,
}

/// Where a span's work happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum At {
    /// A service, by index.
    Service(ServiceId),
    /// A dependency, by index.
    Dependency(usize),
    /// A workload's client (a request to a route nobody owns, a workload's
    /// own policy call).
    #[default]
    Client,
}

/// Which requests a run records.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Selection {
    /// The first N requests sent (`--trace N`).
    pub first: u32,
    /// A share of every request (`--spans-sample R`, 1 with `--spans` alone):
    /// request k (0-based, in send order) when floor((k + 1) R) > floor(k R),
    /// so that exactly floor(n R) of the first n are, evenly spread, with no
    /// random draw (the run's streams stay as they are). None: no spans.
    pub sample: Option<f64>,
    /// With spans: the most spans this row's trace may hold (its share of
    /// [`MAX_SPAN_EVENTS`]); past them no further request is sampled.
    pub max_spans: u64,
}

impl Selection {
    /// Whether request `k` (0-based, in send order) is in the sample.
    pub fn sampled(&self, k: u64) -> bool {
        match self.sample {
            None => false,
            Some(r) if r >= 1.0 => true,
            Some(r) => ((k + 1) as f64 * r).floor() > (k as f64 * r).floor(),
        }
    }
}

/// Why a recorded request is: for `trace.json`, for the spans, or both.
#[derive(Debug, Clone, Copy)]
pub struct Selected {
    /// Its index among the requests sent (0-based).
    pub index: u64,
    /// One of the first N (`--trace N`).
    pub trace: bool,
    /// In the spans' sample.
    pub spans: bool,
}

/// A request at a service, as OpenTelemetry's server span shows it (only when
/// spans are recorded).
#[derive(Debug, Clone)]
pub struct ServerSpan {
    /// Unique within the trace of one compare row, in its own id space.
    pub id: u64,
    /// The span it answers (a call or an attempt); None for a client's request
    /// (the root), or the client's request span itself for a workload's policy.
    pub parent: Option<u64>,
    /// The span the request's own spans hang under in the tracer's tree (its
    /// request span, or the call or attempt it is).
    pub under: u64,
    /// The recorded request.
    pub track: u32,
    /// The service.
    pub service: ServiceId,
    /// It came from a workload (a client's request or one of its attempts).
    pub entry: bool,
    /// Arrival and answer, in virtual time.
    pub start: Ticks,
    /// See `start`.
    pub end: Ticks,
    /// `ok`, `error`, `timeout`, `shed`, `rejected`, `cancelled`, `left the
    /// queue`, `abandoned`.
    pub outcome: &'static str,
    /// Still open.
    open: bool,
}

/// A point event of a traced request (a cancellation, a call that had no time).
#[derive(Debug, Clone)]
pub struct Instant {
    /// The span it happened in (None: none was open).
    pub parent: Option<u64>,
    /// The traced request (0 = the first one sent).
    pub track: u32,
    /// What happened (`cancel store`, ...).
    pub name: String,
    /// The kind of event (`cancel`, `call`).
    pub cat: &'static str,
    /// When, in virtual time.
    pub at: Ticks,
    /// Key-value details, in a fixed order.
    pub args: Vec<(&'static str, Arg)>,
}

/// A span's or instant's detail value.
#[derive(Debug, Clone)]
pub enum Arg {
    /// A name or an outcome.
    Text(String),
    /// A count or a depth.
    Int(u64),
    /// A time in milliseconds.
    Ms(f64),
}

/// What a traced run recorded.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Spans, in the order they ended.
    pub spans: Vec<Span>,
    /// Point events, in the order they happened.
    pub instants: Vec<Instant>,
    /// One label per traced request, by track (`#1 GET /route`).
    pub tracks: Vec<String>,
    /// Why each track is recorded, by track.
    pub selected: Vec<Selected>,
    /// Server spans (only when spans are recorded), in the order they opened.
    pub servers: Vec<ServerSpan>,
    /// The model's service names, by index.
    pub services: Vec<String>,
    /// The model's dependency names, by index.
    pub dependencies: Vec<String>,
    /// Each service's first route, by index.
    pub routes: Vec<Option<String>>,
    /// The `work` spans whose call failed as the work ended (the
    /// dependency's error), by span id; only when spans are recorded.
    pub failed_work: Vec<u64>,
    /// The spans and instants it may hold: past them no further request is
    /// traced (`tracks` holds those that were).
    pub max_events: u64,
    /// Whether requests the trace was asked for were left out at that limit.
    pub stopped: bool,
    /// Requests in the spans' sample left out at [`Selection::max_spans`].
    pub spans_left_out: u64,
}

/// The most spans `--spans` records, all compare rows together (each row gets
/// an even share): about 1 KB of memory each and 300 bytes of OTLP JSON (a
/// 20 s run of retry-amplification.toml made 377,000 spans, 380 MB and a file
/// of 111 MB). A row samples no further request past its share, and the run
/// says how many it left out; the requests it sampled run on to their end.
pub const MAX_SPAN_EVENTS: u64 = 500_000;

/// The most spans and instants `trace.json` holds, all compare rows together
/// (each row gets an even share): about 1 KB of memory each, and 400 bytes of
/// `trace.json` (`--trace 20000` on a chain of retries took 700 MB and 4 s).
/// A row stops tracing further requests at its share; the requests it traced
/// run on to their end.
pub const MAX_TRACE_EVENTS: u64 = 100_000;

/// Who opens a call, as the tracer sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Opener {
    /// Request `req`'s handler (a plan's branch).
    Request(ReqId),
    /// The client of request `req`, with no time left for its policy call.
    Client(ReqId),
    /// Policy call `pc` sends its attempt `n` (1 = the first).
    Policy(u32, u32),
}

/// What the tracer knows of a request slot.
#[derive(Debug, Clone, Copy)]
struct ReqInfo {
    track: u32,
    /// Call hops from the client: 0 for a client's request and its attempts.
    depth: u32,
    service: ServiceId,
    sent: Ticks,
    /// The span it hangs under: its own request span (a client's request), or
    /// the call or attempt it is.
    node: u64,
    /// Its `service` span, opened by its first call (NO_SPAN: not yet).
    service_span: u64,
    /// A workload's request (not a call or an attempt): it has a request span.
    client: bool,
    /// A client's request whose span is written (answered or given up).
    ended: bool,
    /// Its server span, by index (NONE: none).
    server: u32,
}

/// What the tracer knows of a call slot (a call, or one attempt of a policy
/// call).
#[derive(Debug, Clone, Copy)]
struct CallInfo {
    track: u32,
    depth: u32,
    target: Target,
    start: Ticks,
    /// Its span; for a hidden call, the request it is the attempt of.
    span: u64,
    /// Its attempt number under a policy call that shows attempts (0: a call).
    attempt: u32,
    /// The named policy it was sent through (shown as `call_policy`).
    policy: Option<PolicyId>,
    /// The lone attempt of a workload's policy that shows no attempts: the
    /// client's request itself, no span of its own.
    hidden: bool,
    ended: bool,
    /// The dependency's `work` span for it, once written (NO_SPAN: none).
    work: u64,
}

/// What the tracer knows of a policy call slot.
#[derive(Debug, Clone, Copy)]
struct PolicyInfo {
    track: u32,
    /// The depth of its attempts.
    depth: u32,
    target: Target,
    start: Ticks,
    policy: PolicyId,
    /// Where its attempts hang: its own span, the client's request (a
    /// workload's policy call), or where the call would (one attempt at most,
    /// drawn as the call).
    hang: u64,
    /// Its `call` span (NO_SPAN: none).
    span: u64,
    /// Its attempts have spans of their own.
    shown: bool,
    /// A workload's policy call.
    client: bool,
    attempts: u32,
    ended: bool,
    /// Where its attempts are made from.
    at: At,
}

/// A span's place in the tree while the run goes on.
#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u64,
    /// When it ended (None: still open).
    end: Option<Ticks>,
    at: At,
}

/// Where a call or attempt opens, as [`Tracer::opened_by`] finds it.
struct Opened {
    parent: u64,
    track: u32,
    depth: u32,
    /// Its attempt number under a policy call that shows attempts (0: a call).
    attempt: u32,
    policy: Option<PolicyId>,
    /// The lone attempt of a workload's policy that shows none.
    hidden: bool,
    at: At,
}

/// What the tracer needs of a client policy.
#[derive(Debug, Clone)]
struct PolicyShape {
    /// Its name, None for the built-in `none`.
    name: Option<String>,
    /// It may send more than one attempt: attempts get spans of their own.
    attempts: bool,
    /// Its further attempts are hedges (else retries).
    hedges: bool,
}

/// The tracer of one run.
pub(crate) struct Tracer {
    select: Selection,
    /// Requests sent so far (recorded or not).
    sent: u64,
    /// The latest time a hook saw (to close what a run leaves open).
    last: Ticks,
    services: Vec<String>,
    /// Per service: its handler is a server (its calls run in its service span).
    servers: Vec<bool>,
    dependencies: Vec<String>,
    routes: Vec<String>,
    policies: Vec<PolicyShape>,
    reqs: Vec<ReqInfo>,
    calls: Vec<CallInfo>,
    pcalls: Vec<PolicyInfo>,
    /// Every span opened, by id - 1.
    nodes: Vec<Node>,
    trace: Trace,
}

/// The spans and instants a compare row's traced requests may make beyond its
/// share before the run stops (those it traced keep making them after it stops
/// tracing new ones): twice the share, and this much more.
const OVERRUN: u64 = 10_000;

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Answered => "ok",
        Outcome::Dropped | Outcome::Error => "error",
        Outcome::Refused => "refused",
        Outcome::TimedOut => "timeout",
        Outcome::Shed => "shed",
        Outcome::Rejected(_) => "rejected",
        Outcome::NotFound => "not_found",
    }
}

/// A call's or attempt's outcome as its caller reads it (the `calls` table's
/// words).
fn call_outcome(o: Outcome) -> &'static str {
    match o {
        Outcome::Answered => "ok",
        Outcome::Dropped | Outcome::Error | Outcome::NotFound => "error",
        Outcome::Refused => "refused",
        Outcome::TimedOut => "timeout",
        Outcome::Shed => "shed",
        Outcome::Rejected(_) => "rejected",
    }
}

/// Stores `info` at slot `i` of `map`, growing it with untraced slots.
fn put<T: Copy>(map: &mut Vec<T>, i: usize, info: T, untraced: T) {
    if map.len() <= i {
        map.resize(i + 1, untraced);
    }
    map[i] = info;
}

impl Tracer {
    /// A tracer of the requests `select` picks of a run of `model`, holding
    /// at most about `max_events` spans and instants for `trace.json` (no limit
    /// while spans are recorded: `--spans` asks for every sampled request).
    pub fn new(model: &Model, select: Selection, max_events: u64) -> Tracer {
        Tracer {
            select,
            sent: 0,
            last: Ticks::ZERO,
            services: model.services.iter().map(|s| s.name.clone()).collect(),
            servers: model
                .services
                .iter()
                .map(|s| matches!(s.handler, Handler::Server(_)))
                .collect(),
            dependencies: model.dependencies.iter().map(|d| d.name.clone()).collect(),
            routes: model.routes.iter().map(|r| r.path.clone()).collect(),
            policies: model
                .policies
                .iter()
                .map(|p| {
                    let retries = p.retry.as_ref().map_or(1, |r| r.max_attempts);
                    let hedges = p.hedge.map_or(1, |h| h.max_attempts);
                    PolicyShape {
                        name: (p.name != "none").then(|| p.name.clone()),
                        attempts: retries.max(hedges) > 1,
                        hedges: p.hedge.is_some(),
                    }
                })
                .collect(),
            reqs: Vec::new(),
            calls: Vec::new(),
            pcalls: Vec::new(),
            nodes: Vec::new(),
            trace: Trace {
                services: model.services.iter().map(|s| s.name.clone()).collect(),
                dependencies: model.dependencies.iter().map(|d| d.name.clone()).collect(),
                routes: model
                    .services
                    .iter()
                    .map(|s| s.routes.first().map(|&r| model.routes[r].path.clone()))
                    .collect(),
                max_events,
                ..Trace::default()
            },
        }
    }

    /// The spans and instants this trace may hold.
    pub fn max_events(&self) -> u64 {
        self.trace.max_events
    }

    /// Spans opened and instants recorded so far.
    fn recorded(&self) -> u64 {
        (self.nodes.len() + self.trace.instants.len()) as u64
    }

    /// Spans of either kind opened so far, and instants.
    fn spans_recorded(&self) -> u64 {
        self.recorded() + self.trace.servers.len() as u64
    }

    /// Whether the traced requests made far more spans than the row's share
    /// (a run stops then: see `OVERRUN`).
    /// (Never while spans are recorded: `--spans` holds every request it
    /// samples.)
    pub fn overrun(&self) -> bool {
        self.select.sample.is_none()
            && self.recorded() > (2 * self.trace.max_events).saturating_add(OVERRUN)
    }

    pub fn finish(mut self) -> Trace {
        debug_assert!(
            self.nodes.iter().all(|n| n.end.is_some()),
            "every span opened was written"
        );
        // a request still at a service when the run ends (none should be)
        let last = self.last;
        for s in self.trace.servers.iter_mut().filter(|s| s.open) {
            s.open = false;
            s.end = last.max(s.start);
            s.outcome = "unfinished";
        }
        self.trace
    }

    /// Opens the server span of `req` at `service`, under `parent` (spans
    /// recorded only).
    fn server_open(
        &mut self,
        track: u32,
        service: ServiceId,
        (parent, under): (u64, u64),
        entry: bool,
        now: Ticks,
    ) -> u32 {
        if self.select.sample.is_none() || track == NONE {
            return NONE;
        }
        let i = self.trace.servers.len();
        self.trace.servers.push(ServerSpan {
            id: i as u64 + 1,
            parent: (parent != NO_SPAN).then_some(parent),
            under,
            track,
            service,
            entry,
            start: now,
            end: now,
            outcome: "ok",
            open: true,
        });
        i as u32
    }

    /// A client's request `req` goes through its workload's policy: its
    /// attempts are the requests at the service, each with a server span; the
    /// one `sent` opened for it (the last one opened, at this instant) goes.
    fn server_unopen(&mut self, req: ReqId) {
        let Some(r) = self.req(req) else { return };
        if r.server != NONE && r.server as usize + 1 == self.trace.servers.len() {
            self.trace.servers.pop();
            self.reqs[req as usize].server = NONE;
        }
    }

    /// Ends the server span of `req`, if it has an open one.
    fn server_close(&mut self, req: ReqId, outcome: &'static str, now: Ticks) {
        let Some(r) = self.req(req) else { return };
        if r.server == NONE {
            return;
        }
        if let Some(s) = self.trace.servers.get_mut(r.server as usize)
            && s.open
        {
            s.open = false;
            s.end = now;
            s.outcome = outcome;
        }
    }

    fn target_name(&self, target: Target) -> String {
        match target {
            Target::Dependency(d) => self.dependencies[d].clone(),
            Target::Service(s) => self.services[s].clone(),
        }
    }

    fn req(&self, req: ReqId) -> Option<ReqInfo> {
        self.reqs
            .get(req as usize)
            .copied()
            .filter(|r| r.track != NONE)
    }

    fn set_req(&mut self, req: ReqId, info: ReqInfo) {
        let untraced = ReqInfo {
            track: NONE,
            ..info
        };
        put(&mut self.reqs, req as usize, info, untraced);
    }

    fn call(&self, call: CallId) -> Option<CallInfo> {
        self.calls
            .get(call as usize)
            .copied()
            .filter(|c| c.track != NONE)
    }

    fn pcall(&self, pc: u32) -> Option<PolicyInfo> {
        self.pcalls
            .get(pc as usize)
            .copied()
            .filter(|p| p.track != NONE)
    }

    /// Opens a span under `parent`: its id.
    fn open(&mut self, parent: u64, at: At) -> u64 {
        self.nodes.push(Node {
            parent,
            end: None,
            at,
        });
        self.nodes.len() as u64
    }

    /// The nearest of `p` and its ancestors still open at `t` (or ended at `t`).
    fn open_at(&self, mut p: u64, t: Ticks) -> u64 {
        while p != NO_SPAN {
            let n = self.nodes[(p - 1) as usize];
            if n.end.is_none_or(|e| e >= t) {
                break;
            }
            p = n.parent;
        }
        p
    }

    /// Writes span `id` (opened with `open`), from `start` to `end`.
    fn write(
        &mut self,
        id: u64,
        track: u32,
        name: String,
        cat: &'static str,
        (start, end): (Ticks, Ticks),
        args: Vec<(&'static str, Arg)>,
    ) {
        let end = end.max(start);
        let node = &self.nodes[(id - 1) as usize];
        let (natural, at) = (node.parent, node.at);
        let parent = self.open_at(natural, end);
        self.nodes[(id - 1) as usize] = Node {
            parent,
            end: Some(end),
            at,
        };
        self.trace.spans.push(Span {
            id,
            parent: (parent != NO_SPAN).then_some(parent),
            outlived: (parent != natural).then_some(natural),
            track,
            name,
            cat,
            start,
            end,
            args,
            at,
        });
    }

    /// Opens and writes a span under `parent` at once.
    #[allow(clippy::too_many_arguments)]
    fn span(
        &mut self,
        parent: u64,
        at: At,
        track: u32,
        name: String,
        cat: &'static str,
        times: (Ticks, Ticks),
        args: Vec<(&'static str, Arg)>,
    ) {
        let id = self.open(parent, at);
        self.write(id, track, name, cat, times, args);
    }

    fn instant(
        &mut self,
        parent: u64,
        track: u32,
        name: String,
        cat: &'static str,
        at: Ticks,
        args: Vec<(&'static str, Arg)>,
    ) {
        let parent = self.open_at(parent, at);
        self.trace.instants.push(Instant {
            parent: (parent != NO_SPAN).then_some(parent),
            track,
            name,
            cat,
            at,
            args,
        });
    }

    /// Where the calls of traced request `req` hang, made by its handler or
    /// (`client`) by its client: the `service` span of a server (its calls run
    /// while it holds the slot; the span is opened here and written when the
    /// slot is freed), else the request itself.
    fn calls_parent(&mut self, req: ReqId, r: ReqInfo, client: bool) -> u64 {
        if client || !self.servers[r.service] {
            return r.node;
        }
        if r.service_span == NO_SPAN {
            let id = self.open(r.node, At::Service(r.service));
            self.reqs[req as usize].service_span = id;
            return id;
        }
        r.service_span
    }

    // ---- server/ ----

    /// `req` left the queue it waited in since `arrived` without service
    /// (abandoned by its client or cancelled by its caller).
    #[cold]
    #[inline(never)]
    pub fn server_unqueued(&mut self, req: ReqId, arrived: Ticks, now: Ticks) {
        self.last = now;
        let Some(r) = self.req(req) else { return };
        self.server_close(req, "left the queue", now);
        let name = format!("queue {}", self.services[r.service]);
        let args = vec![("outcome", Arg::Text("left the queue".into()))];
        let at = At::Service(r.service);
        self.span(r.node, at, r.track, name, "queue", (arrived, now), args);
    }

    /// `req` left its slot (held since `started`) with `outcome`, or `None`:
    /// cancelled.
    #[cold]
    #[inline(never)]
    pub fn served(
        &mut self,
        req: ReqId,
        outcome: Option<Outcome>,
        arrived: Ticks,
        started: Ticks,
        now: Ticks,
    ) {
        self.last = now;
        let Some(r) = self.req(req) else { return };
        if outcome.is_none() {
            self.server_close(req, "cancelled", now);
        }
        if started > arrived {
            // it waited for a slot (no hook at the start: one branch less each)
            let name = format!("queue {}", self.services[r.service]);
            self.span(
                r.node,
                At::Service(r.service),
                r.track,
                name,
                "queue",
                (arrived, started),
                Vec::new(),
            );
        }
        let id = match r.service_span {
            NO_SPAN => self.open(r.node, At::Service(r.service)),
            id => id,
        };
        self.reqs[req as usize].service_span = NO_SPAN;
        let name = format!("service {}", self.services[r.service]);
        let outcome = outcome.map_or("cancelled", outcome_name);
        let args = vec![
            ("outcome", Arg::Text(outcome.into())),
            ("wait_ms", Arg::Ms((started - arrived).as_ms())),
            ("depth", Arg::Int(r.depth.into())),
        ];
        self.write(id, r.track, name, "service", (started, now), args);
    }
}

#[cfg(test)]
mod tests {
    use super::Selection;

    #[test]
    fn a_sample_takes_every_1_over_r_th_request_exactly() {
        let pick = |r: f64, n: u64| {
            let s = Selection {
                first: 0,
                sample: Some(r),
                max_spans: u64::MAX,
            };
            (0..n).filter(|&k| s.sampled(k)).collect::<Vec<u64>>()
        };
        assert_eq!(pick(0.25, 12), [3, 7, 11]);
        assert_eq!(pick(1.0, 3), [0, 1, 2]);
        assert_eq!(pick(0.1, 1000).len(), 100);
        assert_eq!(pick(0.3, 1000).len(), 300);
        let none = Selection::default();
        assert!(!(0..100).any(|k| none.sampled(k)));
    }

    #[test]
    fn spans_stop_at_their_limit_and_count_what_they_left_out() {
        let text = r#"
[scenario]
name = "spans"
[services.a]
routes = ["/a"]
[services.a.handler]
type = "server"
slots = 4
queue = 10
service = { constant = 5 }
[workloads.w]
type = "open"
rate_rps = 100
requests = 200
route = "/a"
"#;
        let s = crate::scenario::load_str(
            text,
            std::path::Path::new("spans.toml"),
            &crate::scenario::LoadOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let run = |max_spans: u64| {
            let select = Selection {
                first: 0,
                sample: Some(1.0),
                max_spans,
            };
            let (_, t) = crate::sim::run_recorded(&s.rows[0].model, 0, select, 0, false)
                .unwrap_or_else(|e| panic!("{e}"));
            t
        };
        let all = run(u64::MAX);
        assert_eq!(all.spans_left_out, 0);
        assert_eq!(all.selected.len(), 200);
        let capped = run(60);
        let kept = capped.selected.iter().filter(|s| s.spans).count() as u64;
        assert!(kept > 0 && kept < 200, "{kept}");
        assert_eq!(kept + capped.spans_left_out, 200);
        let spans = (capped.spans.len() + capped.servers.len()) as u64;
        // the requests sampled run on to their end: a few spans past the limit
        assert!(spans <= 60 + 10, "{spans}");
    }
}
