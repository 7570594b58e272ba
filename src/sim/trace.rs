//! The request tracer behind `resim run --trace N`: an observer that records the
//! life of the first N requests the workloads send (and of every call and
//! call-request made on their behalf) as spans and instants in virtual time.
//! [`report::trace`](crate::report::trace) turns them into Chrome's trace-event
//! format.
//!
//! Actors notify it through one-line hooks, `trace!(self, hook(args))`, which
//! expand to a branch on `World::trace`: a run without `--trace` evaluates none of
//! the arguments and does no other work. The tracer keeps its own map from request
//! and call slots to traced requests (slots are reused: a slot is mapped again each
//! time it is taken), so the actors keep no tracing state. Every hook is
//! `#[cold]` and never inlined: an untraced run's hot paths keep their shape.

use super::{CallId, Outcome, ReqId};
use crate::engine::Ticks;
use crate::model::{Model, RouteId, ServiceId, Target};

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

/// One span of a traced request: `start` to `end` in virtual time.
#[derive(Debug, Clone)]
pub struct Span {
    /// The traced request (0 = the first one sent).
    pub track: u32,
    /// What the bar is (`request /route`, `call store`, ...).
    pub name: String,
    /// `request`, `queue`, `service`, `call` or `work`.
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
}

/// What the tracer knows of a request slot.
#[derive(Debug, Clone, Copy)]
struct ReqInfo {
    track: u32,
    /// Call hops from the client: 0 for a client's request.
    depth: u32,
    service: ServiceId,
    sent: Ticks,
    /// A client's request whose span is written (answered or given up).
    ended: bool,
}

/// What the tracer knows of a call slot.
#[derive(Debug, Clone, Copy)]
struct CallInfo {
    track: u32,
    depth: u32,
    target: Target,
    start: Ticks,
    ended: bool,
}

/// The tracer of one run.
pub(crate) struct Tracer {
    limit: u32,
    services: Vec<String>,
    dependencies: Vec<String>,
    routes: Vec<String>,
    reqs: Vec<ReqInfo>,
    calls: Vec<CallInfo>,
    trace: Trace,
}

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

impl Tracer {
    /// A tracer of the first `limit` requests of a run of `model`.
    pub fn new(model: &Model, limit: u32) -> Tracer {
        Tracer {
            limit,
            services: model.services.iter().map(|s| s.name.clone()).collect(),
            dependencies: model.dependencies.iter().map(|d| d.name.clone()).collect(),
            routes: model.routes.iter().map(|r| r.path.clone()).collect(),
            reqs: Vec::new(),
            calls: Vec::new(),
            trace: Trace::default(),
        }
    }

    pub fn finish(self) -> Trace {
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
        let i = req as usize;
        if self.reqs.len() <= i {
            self.reqs.resize(
                i + 1,
                ReqInfo {
                    track: NONE,
                    ..info
                },
            );
        }
        self.reqs[i] = info;
    }

    fn call(&self, call: CallId) -> Option<CallInfo> {
        self.calls
            .get(call as usize)
            .copied()
            .filter(|c| c.track != NONE)
    }

    fn span(&mut self, track: u32, name: String, cat: &'static str, start: Ticks, end: Ticks) {
        self.span_with(track, name, cat, start, end, Vec::new());
    }

    fn span_with(
        &mut self,
        track: u32,
        name: String,
        cat: &'static str,
        start: Ticks,
        end: Ticks,
        args: Vec<(&'static str, Arg)>,
    ) {
        self.trace.spans.push(Span {
            track,
            name,
            cat,
            start,
            end: end.max(start),
            args,
        });
    }

    fn instant(&mut self, track: u32, name: String, at: Ticks, args: Vec<(&'static str, Arg)>) {
        self.trace.instants.push(Instant {
            track,
            name,
            cat: "cancel",
            at,
            args,
        });
    }

    // ---- request.rs ----

    /// A client's request `req` to `route` (owned by `service`) leaves now: traced
    /// when it is one of the first `limit`.
    #[cold]
    #[inline(never)]
    pub fn sent(&mut self, req: ReqId, route: RouteId, service: Option<ServiceId>, now: Ticks) {
        let n = self.trace.tracks.len() as u32;
        let track = if n < self.limit { n } else { NONE };
        if track != NONE {
            let path = self.routes.get(route).map_or("-", String::as_str);
            self.trace.tracks.push(format!("#{} {path}", n + 1));
        }
        self.set_req(
            req,
            ReqInfo {
                track,
                depth: 0,
                service: service.unwrap_or_default(),
                sent: now,
                ended: false,
            },
        );
    }

    /// Call `call` became request `req` at `service`.
    #[cold]
    #[inline(never)]
    pub fn call_request(&mut self, req: ReqId, call: CallId, service: ServiceId, now: Ticks) {
        let (track, depth) = self.call(call).map_or((NONE, 0), |c| (c.track, c.depth));
        self.set_req(
            req,
            ReqInfo {
                track,
                depth,
                service,
                sent: now,
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

    /// A client's request is over for its client: its span.
    fn client_end(&mut self, req: ReqId, outcome: &'static str, now: Ticks) {
        let Some(r) = self.req(req) else { return };
        if r.depth > 0 || r.ended {
            return;
        }
        self.reqs[req as usize].ended = true;
        let name = format!("request {}", self.trace.tracks[r.track as usize]);
        let args = vec![
            ("outcome", Arg::Text(outcome.into())),
            ("service", Arg::Text(self.services[r.service].clone())),
            ("response_ms", Arg::Ms((now - r.sent).as_ms())),
        ];
        self.span_with(r.track, name, "request", r.sent, now, args);
    }

    /// The caller of call-request `req` went away; with `cancel` its work stops.
    #[cold]
    #[inline(never)]
    pub fn caller_gone(&mut self, req: ReqId, cancel: bool, now: Ticks) {
        let Some(r) = self.req(req) else { return };
        if cancel {
            let name = format!("cancelled at {}", self.services[r.service]);
            self.instant(
                r.track,
                name,
                now,
                vec![("depth", Arg::Int(r.depth.into()))],
            );
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
        self.span_with(r.track, name, "queue", arrived, now, args);
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
            self.span(r.track, name, "queue", arrived, started);
        }
        let name = format!("service {}", self.services[r.service]);
        let outcome = outcome.map_or("cancelled", outcome_name);
        let args = vec![
            ("outcome", Arg::Text(outcome.into())),
            ("wait_ms", Arg::Ms((started - arrived).as_ms())),
            ("depth", Arg::Int(r.depth.into())),
        ];
        self.span_with(r.track, name, "service", started, now, args);
    }

    // ---- call.rs ----

    /// Request `from` calls `target` now: open call `call` (None: failed at once,
    /// no time left).
    #[cold]
    #[inline(never)]
    pub fn call_open(&mut self, call: Option<CallId>, from: ReqId, target: Target, now: Ticks) {
        let Some(r) = self.req(from) else {
            if let Some(c) = call
                && let Some(info) = self.calls.get_mut(c as usize)
            {
                info.track = NONE;
            }
            return;
        };
        let depth = r.depth + 1;
        let Some(call) = call else {
            let name = format!("call {}: no time left", self.target_name(target));
            let args = vec![("depth", Arg::Int(depth.into()))];
            self.trace.instants.push(Instant {
                track: r.track,
                name,
                cat: "call",
                at: now,
                args,
            });
            return;
        };
        let i = call as usize;
        let info = CallInfo {
            track: r.track,
            depth,
            target,
            start: now,
            ended: false,
        };
        if self.calls.len() <= i {
            self.calls.resize(
                i + 1,
                CallInfo {
                    track: NONE,
                    ..info
                },
            );
        }
        self.calls[i] = info;
    }

    /// Call `call` is over for its caller: `outcome` (ok, failed, timeout,
    /// cancelled, abandoned).
    #[cold]
    #[inline(never)]
    pub fn call_ended(&mut self, call: CallId, outcome: &'static str, now: Ticks) {
        let Some(c) = self.call(call) else { return };
        if c.ended {
            return;
        }
        self.calls[call as usize].ended = true;
        let kind = match c.target {
            Target::Dependency(_) => "dependency",
            Target::Service(_) => "service",
        };
        let name = format!("call {}", self.target_name(c.target));
        let args = vec![
            ("outcome", Arg::Text(outcome.into())),
            ("target", Arg::Text(kind.into())),
            ("depth", Arg::Int(c.depth.into())),
        ];
        self.span_with(c.track, name, "call", c.start, now, args);
    }

    /// Call `call`'s outcome from the service it reached.
    #[cold]
    #[inline(never)]
    pub fn call_answered(&mut self, call: CallId, outcome: Outcome, now: Ticks) {
        let name = match outcome {
            Outcome::Answered => "ok",
            Outcome::TimedOut => "timeout",
            _ => "failed",
        };
        self.call_ended(call, name, now);
    }

    /// The caller gave up on `call` now and, with `cancel`, cancels its work.
    #[cold]
    #[inline(never)]
    pub fn call_given_up(&mut self, call: CallId, cancel: bool, now: Ticks) {
        let Some(c) = self.call(call) else { return };
        if cancel {
            let name = format!("cancel {}", self.target_name(c.target));
            self.instant(
                c.track,
                name,
                now,
                vec![("depth", Arg::Int(c.depth.into()))],
            );
        }
        // a timeout ended the call already; otherwise its own caller went away
        let outcome = if cancel { "cancelled" } else { "abandoned" };
        self.call_ended(call, outcome, now);
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
            self.span(c.track, name, "queue", c.start, start);
        }
        let name = format!("work {}", self.target_name(c.target));
        let args = vec![
            ("caller_waiting", Arg::Text((!c.ended).to_string())),
            ("depth", Arg::Int(c.depth.into())),
        ];
        self.span_with(c.track, name, "work", start, now, args);
    }
}
