//! The request tracer behind `resim run --trace N`: an observer that records the
//! life of the first N requests the workloads send (and of every call, attempt
//! and call-request made on their behalf) as spans and instants in virtual time.
//! [`report::trace`](crate::report::trace) turns them into Chrome's trace-event
//! format.
//!
//! Actors notify it through one-line hooks, `trace!(self, hook(args))`, which
//! expand to a branch on `World::trace`: a run without `--trace` evaluates none of
//! the arguments and does no other work. The tracer keeps its own maps from
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

use super::{CallId, Outcome, ReqId};
use crate::engine::Ticks;
use crate::model::{Handler, Model, PolicyId, RouteId, ServiceId, Target};

/// Runs a tracer hook when the run is traced: `trace!(self, hook(args))` calls
/// `hook(args, self.now)`.
macro_rules! trace {
    ($world:expr, $hook:ident($($arg:expr),* $(,)?)) => {
        if let Some(t) = $world.trace.as_deref_mut() {
            t.$hook($($arg,)* $world.now);
        }
    };
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
    /// The spans and instants it may hold: past them no further request is
    /// traced (`tracks` holds those that were).
    pub max_events: u64,
    /// Whether requests the trace was asked for were left out at that limit.
    pub stopped: bool,
}

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
}

/// A span's place in the tree while the run goes on.
#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u64,
    /// When it ended (None: still open).
    end: Option<Ticks>,
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
    limit: u32,
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
    /// A tracer of the first `limit` requests of a run of `model`, holding at
    /// most about `max_events` spans and instants.
    pub fn new(model: &Model, limit: u32, max_events: u64) -> Tracer {
        Tracer {
            limit,
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

    /// Whether the traced requests made far more spans than the row's share
    /// (a run stops then: see `OVERRUN`).
    pub fn overrun(&self) -> bool {
        self.recorded() > 2 * self.trace.max_events + OVERRUN
    }

    pub fn finish(self) -> Trace {
        debug_assert!(
            self.nodes.iter().all(|n| n.end.is_some()),
            "every span opened was written"
        );
        self.trace
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
    fn open(&mut self, parent: u64) -> u64 {
        self.nodes.push(Node { parent, end: None });
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
        let natural = node.parent;
        let parent = self.open_at(natural, end);
        self.nodes[(id - 1) as usize] = Node {
            parent,
            end: Some(end),
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
        });
    }

    /// Opens and writes a span under `parent` at once.
    fn span(
        &mut self,
        parent: u64,
        track: u32,
        name: String,
        cat: &'static str,
        times: (Ticks, Ticks),
        args: Vec<(&'static str, Arg)>,
    ) {
        let id = self.open(parent);
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
            let id = self.open(r.node);
            self.reqs[req as usize].service_span = id;
            return id;
        }
        r.service_span
    }

    // ---- request.rs ----

    /// A client's request `req` to `route` (owned by `service`) leaves now: traced
    /// when it is one of the first `limit`.
    #[cold]
    #[inline(never)]
    pub fn sent(&mut self, req: ReqId, route: RouteId, service: Option<ServiceId>, now: Ticks) {
        let n = self.trace.tracks.len() as u32;
        // the first request is always traced; the others while the row's share
        // of spans lasts
        let room = n == 0 || self.recorded() < self.trace.max_events;
        if n < self.limit && !room {
            self.trace.stopped = true;
        }
        let track = if n < self.limit && room { n } else { NONE };
        let mut node = NO_SPAN;
        if track != NONE {
            let path = self.routes.get(route).map_or("-", String::as_str);
            self.trace.tracks.push(format!("#{} {path}", n + 1));
            node = self.open(NO_SPAN);
        }
        self.set_req(
            req,
            ReqInfo {
                track,
                depth: 0,
                service: service.unwrap_or_default(),
                sent: now,
                node,
                service_span: NO_SPAN,
                client: true,
                ended: false,
            },
        );
    }

    /// Call `call` became request `req` at `service` (a call from another
    /// service, or an attempt of a client's policy call).
    #[cold]
    #[inline(never)]
    pub fn call_request(&mut self, req: ReqId, call: CallId, service: ServiceId, now: Ticks) {
        let c = self.call(call);
        self.set_req(
            req,
            ReqInfo {
                track: c.map_or(NONE, |c| c.track),
                depth: c.map_or(0, |c| c.depth),
                service,
                sent: now,
                node: c.map_or(NO_SPAN, |c| c.span),
                service_span: NO_SPAN,
                client: false,
                ended: false,
            },
        );
    }

    /// The handler answered `req` with `outcome` (its client may have gone).
    #[cold]
    #[inline(never)]
    pub fn responded(&mut self, req: ReqId, outcome: Outcome, now: Ticks) {
        self.client_end(req, outcome_name(outcome), now);
    }

    /// The client of `req` gave up on it now.
    #[cold]
    #[inline(never)]
    pub fn gave_up(&mut self, req: ReqId, now: Ticks) {
        self.client_end(req, "timeout", now);
    }

    /// A client's call through its workload's policy is over: the request has
    /// `outcome` (a timeout reads as the client giving up).
    #[cold]
    #[inline(never)]
    pub fn client_call_over(&mut self, req: ReqId, outcome: Outcome, now: Ticks) {
        self.client_end(req, outcome_name(outcome), now);
    }

    /// A client's request is over for its client: its span.
    fn client_end(&mut self, req: ReqId, outcome: &'static str, now: Ticks) {
        let Some(r) = self.req(req) else { return };
        if !r.client || r.ended {
            return;
        }
        self.reqs[req as usize].ended = true;
        let name = format!("request {}", self.trace.tracks[r.track as usize]);
        let args = vec![
            ("outcome", Arg::Text(outcome.into())),
            ("service", Arg::Text(self.services[r.service].clone())),
            ("response_ms", Arg::Ms((now - r.sent).as_ms())),
        ];
        self.write(r.node, r.track, name, "request", (r.sent, now), args);
    }

    /// The caller of call-request `req` went away; with `cancel` its work stops.
    #[cold]
    #[inline(never)]
    pub fn caller_gone(&mut self, req: ReqId, cancel: bool, now: Ticks) {
        let Some(r) = self.req(req) else { return };
        if cancel {
            let name = format!("cancelled at {}", self.services[r.service]);
            let args = vec![("depth", Arg::Int(r.depth.into()))];
            self.instant(r.node, r.track, name, "cancel", now, args);
        }
    }

    // ---- server.rs ----

    /// `req` left the queue it waited in since `arrived` without service
    /// (abandoned by its client or cancelled by its caller).
    #[cold]
    #[inline(never)]
    pub fn server_unqueued(&mut self, req: ReqId, arrived: Ticks, now: Ticks) {
        let Some(r) = self.req(req) else { return };
        let name = format!("queue {}", self.services[r.service]);
        let args = vec![("outcome", Arg::Text("left the queue".into()))];
        self.span(r.node, r.track, name, "queue", (arrived, now), args);
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
        let Some(r) = self.req(req) else { return };
        if started > arrived {
            // it waited for a slot (no hook at the start: one branch less each)
            let name = format!("queue {}", self.services[r.service]);
            self.span(
                r.node,
                r.track,
                name,
                "queue",
                (arrived, started),
                Vec::new(),
            );
        }
        let id = match r.service_span {
            NO_SPAN => self.open(r.node),
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

    // ---- call.rs and policy/ ----

    /// The parent, track and depth of what `from` opens now (None: untraced),
    /// with the call's attempt number, policy and whether it is hidden.
    fn opened_by(&mut self, from: Opener) -> Option<(u64, u32, u32, u32, Option<PolicyId>, bool)> {
        match from {
            Opener::Request(req) | Opener::Client(req) => {
                let client = matches!(from, Opener::Client(_));
                let r = self.req(req)?;
                let parent = self.calls_parent(req, r, client);
                // a client's own call is the request's hop: depth 0
                let depth = if client { 0 } else { r.depth + 1 };
                Some((parent, r.track, depth, 0, None, false))
            }
            Opener::Policy(pc, n) => {
                let p = self.pcall(pc)?;
                self.pcalls[pc as usize].attempts = n;
                let named = self.policies[p.policy].name.is_some().then_some(p.policy);
                if p.shown {
                    Some((p.hang, p.track, p.depth, n, named, false))
                } else {
                    // the lone attempt is the call (for a client, its request)
                    Some((p.hang, p.track, p.depth, 0, named, p.client))
                }
            }
        }
    }

    /// `from` calls `target` now: call `call` opens.
    #[cold]
    #[inline(never)]
    pub fn call_open(&mut self, call: CallId, from: Opener, target: Target, now: Ticks) {
        let untraced = CallInfo {
            track: NONE,
            depth: 0,
            target,
            start: now,
            span: NO_SPAN,
            attempt: 0,
            policy: None,
            hidden: false,
            ended: false,
        };
        let info = match self.opened_by(from) {
            Some((parent, track, depth, attempt, policy, hidden)) => CallInfo {
                track,
                depth,
                span: if hidden { parent } else { self.open(parent) },
                attempt,
                policy,
                hidden,
                ..untraced
            },
            None => untraced,
        };
        put(&mut self.calls, call as usize, info, untraced);
    }

    /// `from` calls `target` now, and the call fails at once: `why` (`no time
    /// left`, or the dependency is `down`).
    #[cold]
    #[inline(never)]
    pub fn call_failed_at_once(
        &mut self,
        from: Opener,
        target: Target,
        why: &'static str,
        now: Ticks,
    ) {
        let Some((parent, track, depth, attempt, ..)) = self.opened_by(from) else {
            return;
        };
        let what = if attempt > 0 {
            format!("attempt {attempt} {}", self.target_name(target))
        } else {
            format!("call {}", self.target_name(target))
        };
        let args = vec![("depth", Arg::Int(depth.into()))];
        self.instant(parent, track, format!("{what}: {why}"), "call", now, args);
    }

    /// Call `call` is over for its caller: `outcome` (ok, error, timeout, shed,
    /// rejected, cancelled, abandoned).
    #[cold]
    #[inline(never)]
    pub fn call_ended(&mut self, call: CallId, outcome: &'static str, now: Ticks) {
        let Some(c) = self.call(call) else { return };
        if c.ended {
            return;
        }
        self.calls[call as usize].ended = true;
        if c.hidden {
            return;
        }
        let kind = match c.target {
            Target::Dependency(_) => "dependency",
            Target::Service(_) => "service",
        };
        let mut args = vec![
            ("outcome", Arg::Text(outcome.into())),
            ("target", Arg::Text(kind.into())),
            ("depth", Arg::Int(c.depth.into())),
        ];
        let (name, cat) = if c.attempt > 0 {
            let kind = match (c.attempt, c.policy.map(|p| self.policies[p].hedges)) {
                (1, _) => "first",
                (_, Some(true)) => "hedge",
                _ => "retry",
            };
            args.push(("attempt", Arg::Int(c.attempt.into())));
            args.push(("kind", Arg::Text(kind.into())));
            let name = format!("attempt {} {}", c.attempt, self.target_name(c.target));
            (name, "attempt")
        } else {
            (format!("call {}", self.target_name(c.target)), "call")
        };
        if let Some(name) = c.policy.and_then(|p| self.policies[p].name.clone()) {
            args.push(("call_policy", Arg::Text(name)));
        }
        self.write(c.span, c.track, name, cat, (c.start, now), args);
    }

    /// Call `call`'s outcome from the service it reached.
    #[cold]
    #[inline(never)]
    pub fn call_answered(&mut self, call: CallId, outcome: Outcome, now: Ticks) {
        self.call_ended(call, call_outcome(outcome), now);
    }

    /// The caller gave up on `call` now and, with `cancel`, cancels its work.
    #[cold]
    #[inline(never)]
    pub fn call_given_up(&mut self, call: CallId, cancel: bool, now: Ticks) {
        let Some(c) = self.call(call) else { return };
        if cancel && !c.hidden {
            let name = format!("cancel {}", self.target_name(c.target));
            let args = vec![("depth", Arg::Int(c.depth.into()))];
            self.instant(c.span, c.track, name, "cancel", now, args);
        }
        // a timeout ended the call already; otherwise its own caller went away
        let outcome = if cancel { "cancelled" } else { "abandoned" };
        self.call_ended(call, outcome, now);
    }

    /// Request `from` calls `target` through `policy` now: policy call `pc`
    /// opens (`client`: the call is a workload's request).
    #[cold]
    #[inline(never)]
    pub fn policy_open(
        &mut self,
        pc: u32,
        from: ReqId,
        target: Target,
        policy: PolicyId,
        client: bool,
        now: Ticks,
    ) {
        let untraced = PolicyInfo {
            track: NONE,
            depth: 0,
            target,
            start: now,
            policy,
            hang: NO_SPAN,
            span: NO_SPAN,
            shown: false,
            client,
            attempts: 0,
            ended: false,
        };
        let info = match self.req(from) {
            Some(r) => {
                let parent = self.calls_parent(from, r, client);
                let shown = self.policies[policy].attempts;
                // a workload's attempts hang under its request, which is the call
                let span = if shown && !client {
                    self.open(parent)
                } else {
                    NO_SPAN
                };
                PolicyInfo {
                    track: r.track,
                    depth: if client { 0 } else { r.depth + 1 },
                    hang: if span != NO_SPAN { span } else { parent },
                    span,
                    shown,
                    ..untraced
                }
            }
            None => untraced,
        };
        put(&mut self.pcalls, pc as usize, info, untraced);
    }

    /// Request `from`'s call to `target` through `policy` is refused before any
    /// attempt: `why` (the breaker is open, the throttle said no); `client`: the
    /// call is a workload's request.
    #[cold]
    #[inline(never)]
    pub fn policy_refused(
        &mut self,
        from: ReqId,
        target: Target,
        policy: PolicyId,
        client: bool,
        why: &'static str,
        now: Ticks,
    ) {
        let Some(r) = self.req(from) else { return };
        let parent = self.calls_parent(from, r, client);
        let depth = if client { 0 } else { r.depth + 1 };
        let name = format!("call {}: {why}", self.target_name(target));
        let mut args = vec![("depth", Arg::Int(depth.into()))];
        if let Some(name) = self.policies[policy].name.clone() {
            args.push(("call_policy", Arg::Text(name)));
        }
        self.instant(parent, r.track, name, "call", now, args);
    }

    /// The retry budget of policy call `pc` refused its next attempt (the call
    /// ends with its last failure).
    #[cold]
    #[inline(never)]
    pub fn retry_refused(&mut self, pc: u32, now: Ticks) {
        let Some(p) = self.pcall(pc) else { return };
        let name = format!(
            "retry {}: refused by the budget",
            self.target_name(p.target)
        );
        let args = vec![("depth", Arg::Int(p.depth.into()))];
        self.instant(p.hang, p.track, name, "call", now, args);
    }

    /// Policy call `pc` is over for its caller: `outcome` (ok, error, timeout,
    /// shed, rejected, cancelled, abandoned).
    #[cold]
    #[inline(never)]
    pub fn policy_ended(&mut self, pc: u32, outcome: &'static str, now: Ticks) {
        let Some(p) = self.pcall(pc) else { return };
        if p.ended {
            return;
        }
        self.pcalls[pc as usize].ended = true;
        if p.span == NO_SPAN {
            return;
        }
        let kind = match p.target {
            Target::Dependency(_) => "dependency",
            Target::Service(_) => "service",
        };
        let mut args = vec![
            ("outcome", Arg::Text(outcome.into())),
            ("target", Arg::Text(kind.into())),
            ("depth", Arg::Int(p.depth.into())),
            ("attempts", Arg::Int(p.attempts.into())),
        ];
        if let Some(name) = self.policies[p.policy].name.clone() {
            args.push(("call_policy", Arg::Text(name)));
        }
        let name = format!("call {}", self.target_name(p.target));
        self.write(p.span, p.track, name, "call", (p.start, now), args);
    }

    /// Policy call `pc`'s outcome for its caller.
    #[cold]
    #[inline(never)]
    pub fn policy_resolved(&mut self, pc: u32, outcome: Outcome, now: Ticks) {
        self.policy_ended(pc, call_outcome(outcome), now);
    }

    // ---- dependency.rs ----

    /// The dependency stopped working on `call` (done or cancelled), begun at
    /// `start`.
    #[cold]
    #[inline(never)]
    pub fn work_ended(&mut self, call: CallId, start: Ticks, now: Ticks) {
        let Some(c) = self.call(call) else { return };
        if start > c.start {
            // it waited for a slot (no hook at the start: one branch less per call)
            let name = format!("queue {}", self.target_name(c.target));
            self.span(c.span, c.track, name, "queue", (c.start, start), Vec::new());
        }
        let name = format!("work {}", self.target_name(c.target));
        let args = vec![
            ("caller_waiting", Arg::Text((!c.ended).to_string())),
            ("depth", Arg::Int(c.depth.into())),
        ];
        self.span(c.span, c.track, name, "work", (start, now), args);
    }
}
