//! The tracer's calls and policies: a call's span and its attempts, a
//! policy call's span, its refusals and retries, and a dependency's work (what
//! `call.rs` and `policy/` tell it).

use super::*;

impl Tracer {
    /// The parent, track and depth of what `from` opens now (None: untraced),
    /// with the call's attempt number, policy and whether it is hidden.
    fn opened_by(&mut self, from: Opener) -> Option<Opened> {
        match from {
            Opener::Request(req) | Opener::Client(req) => {
                let client = matches!(from, Opener::Client(_));
                let r = self.req(req)?;
                let parent = self.calls_parent(req, r, client);
                // a client's own call is the request's hop: depth 0
                let depth = if client { 0 } else { r.depth + 1 };
                Some(Opened {
                    parent,
                    track: r.track,
                    depth,
                    attempt: 0,
                    policy: None,
                    hidden: false,
                    at: if client {
                        At::Client
                    } else {
                        At::Service(r.service)
                    },
                })
            }
            Opener::Policy(pc, n) => {
                let p = self.pcall(pc)?;
                self.pcalls[pc as usize].attempts = n;
                let named = self.policies[p.policy].name.is_some().then_some(p.policy);
                // the lone attempt of a policy that shows none is the call (for
                // a client, its request)
                Some(Opened {
                    parent: p.hang,
                    track: p.track,
                    depth: p.depth,
                    attempt: if p.shown { n } else { 0 },
                    policy: named,
                    hidden: !p.shown && p.client,
                    at: p.at,
                })
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
            work: NO_SPAN,
        };
        let info = match self.opened_by(from) {
            Some(o) => CallInfo {
                track: o.track,
                depth: o.depth,
                span: if o.hidden {
                    o.parent
                } else {
                    self.open(o.parent, o.at)
                },
                attempt: o.attempt,
                policy: o.policy,
                hidden: o.hidden,
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
        let Some(Opened {
            parent,
            track,
            depth,
            attempt,
            ..
        }) = self.opened_by(from)
        else {
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
        if outcome == "error" && c.work != NO_SPAN && self.select.sample.is_some() {
            // the dependency's own failure: its work span says so in the spans
            self.trace.failed_work.push(c.work);
        }
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
            at: At::Client,
        };
        if client {
            self.server_unopen(from);
        }
        let info = match self.req(from) {
            Some(r) => {
                let parent = self.calls_parent(from, r, client);
                let shown = self.policies[policy].attempts;
                let at = if client {
                    At::Client
                } else {
                    At::Service(r.service)
                };
                // a workload's attempts hang under its request, which is the call
                let span = if shown && !client {
                    self.open(parent, at)
                } else {
                    NO_SPAN
                };
                PolicyInfo {
                    track: r.track,
                    depth: if client { 0 } else { r.depth + 1 },
                    hang: if span != NO_SPAN { span } else { parent },
                    span,
                    shown,
                    at,
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
        if client {
            self.server_unopen(from);
        }
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
        self.last = now;
        let Some(c) = self.call(call) else { return };
        let at = match c.target {
            Target::Dependency(d) => At::Dependency(d),
            Target::Service(s) => At::Service(s),
        };
        if start > c.start {
            // it waited for a slot (no hook at the start: one branch less per call)
            let name = format!("queue {}", self.target_name(c.target));
            let times = (c.start, start);
            self.span(c.span, at, c.track, name, "queue", times, Vec::new());
        }
        let name = format!("work {}", self.target_name(c.target));
        let args = vec![
            ("caller_waiting", Arg::Text((!c.ended).to_string())),
            ("depth", Arg::Int(c.depth.into())),
        ];
        self.span(c.span, at, c.track, name, "work", (start, now), args);
        self.calls[call as usize].work = self.nodes.len() as u64;
    }
}
