//! The client policies put to the run: the only way to [`Policies`], whose
//! state the world keeps private. The policies say whether a call may go,
//! what each attempt is, and after each attempt whether another goes and
//! when, keeping their own timers (set and cancelled through the `Timers`
//! they are lent); the world sends the attempts through the call module,
//! delivers the timers back, gives the notes and answers the caller.

use super::super::call_sites::NO_SITE;
use super::super::context::Timers;
use super::super::notes::Note;
use super::super::policy::{CopyEnded, FirstTry, Owner, Retry, StateKey};
use super::super::trace::Opener;
use super::super::vocab::{CallId, Caller, Outcome, POLICY_CALL};
use super::World;
use crate::engine::Ticks;
use crate::model::{PolicyId, Target};

impl World<'_> {
    /// Calls `target` through `policy` when the call has one, directly otherwise.
    /// (Always inlined: the call without a policy pays nothing for the choice.)
    #[inline(always)]
    pub(in crate::sim) fn call_via(
        &mut self,
        policy: Option<PolicyId>,
        caller: Caller,
        target: Target,
        cap: Option<Ticks>,
        cancel: bool,
    ) -> Option<CallId> {
        match policy {
            None => self.call(caller, target, cap, cancel),
            Some(p) => self.policy_call(p, caller, target, cap, cancel).ok(),
        }
    }

    /// `caller` calls `target` through `policy`, within `cap`. Err: the call
    /// failed at once, with the outcome its caller sees (a refused call is an
    /// `error`; no time left, a `timeout`).
    pub(in crate::sim) fn policy_call(
        &mut self,
        policy: PolicyId,
        caller: Caller,
        target: Target,
        cap: Option<Ticks>,
        cancel: bool,
    ) -> Result<CallId, Outcome> {
        let state = self.policy_state(caller, policy, target);
        let w = if self.policies.split() {
            self.policy_workload(caller)
        } else {
            0
        };
        let now = self.now();
        let admit = match self.policies.first_try(state, w, now, cap) {
            FirstTry::Go(admit) => admit,
            FirstTry::Throttled => {
                if self.tracing() {
                    self.trace_refused(caller, target, policy, "throttled");
                }
                return Err(self.policy_refused(target));
            }
            FirstTry::BreakerRefused => {
                if self.tracing() {
                    self.trace_refused(caller, target, policy, "refused by the breaker");
                }
                return Err(self.policy_refused(target));
            }
            FirstTry::NoTime => {
                let _ = self.call(caller, target, cap, cancel);
                return Err(Outcome::TimedOut);
            }
        };
        let deadline = cap.map(|c| now + c);
        let model = self.model();
        let id = (self.policies).open(
            model, caller, target, policy, state, cancel, deadline, admit, w,
        );
        self.note(Note::PolicyOpened {
            pc: id,
            caller,
            target,
            policy,
        });
        self.attempt(id);
        let mut t = Timers::new(&mut self.queue, now);
        self.policies.hedge_started(&mut t, model, id);
        Ok(id | POLICY_CALL)
    }

    /// The request `caller` (a branch or a client) calls for, and whether it is
    /// the client's own call, for the tracer.
    #[cold]
    pub(super) fn trace_caller(&self, caller: Caller) -> (super::super::vocab::ReqId, bool) {
        match caller {
            Caller::Branch { req, .. } => (req, false),
            Caller::Client { req } => (req, true),
            Caller::Policy { .. } => unreachable!("a policy call's caller is never a policy"),
        }
    }

    /// Tells the tracer that `caller`'s call to `target` was refused (`why`).
    #[cold]
    #[inline(never)]
    fn trace_refused(
        &mut self,
        caller: Caller,
        target: Target,
        policy: PolicyId,
        why: &'static str,
    ) {
        self.note(Note::PolicyRefused {
            caller,
            target,
            policy,
            why,
        });
    }

    /// Who opens a call that `caller` makes, for the tracer: a request's
    /// handler, a client, or a policy call's next attempt.
    #[cold]
    pub(super) fn trace_opener(&self, caller: Caller) -> Opener {
        match caller {
            Caller::Branch { req, .. } => Opener::Request(req),
            Caller::Client { req } => Opener::Client(req),
            Caller::Policy { call } => Opener::Policy(call, self.policies.attempts_of(call)),
        }
    }

    /// The workload whose request `caller` serves.
    #[cold]
    fn policy_workload(&self, caller: Caller) -> u32 {
        let req = match self.outer(caller) {
            Caller::Client { req } | Caller::Branch { req, .. } => req,
            Caller::Policy { .. } => return 0,
        };
        self.request_workload(req).unwrap_or(0)
    }

    /// The state of (the caller's identity, `policy`, `target`), made on first use.
    fn policy_state(&mut self, caller: Caller, policy: PolicyId, target: Target) -> u32 {
        let owner = match self.outer(caller) {
            Caller::Client { req } => {
                let r = &self.requests[req];
                let w = self.source_workload(r.source);
                Owner::Client(w.unwrap_or(0), r.client)
            }
            Caller::Branch { req, .. } => Owner::Service(self.requests[req].service),
            Caller::Policy { .. } => unreachable!("a policy call's caller is never a policy"),
        };
        let key = (owner, policy, target);
        match self.policies.state_of(key) {
            Some(i) => i,
            None => self.new_policy_state(key),
        }
    }

    /// Makes the state of `key` (its first call), with its names and its call
    /// site.
    #[cold]
    #[inline(never)]
    fn new_policy_state(&mut self, key: StateKey) -> u32 {
        let (owner, _, target) = key;
        let model = self.model();
        let (caller_name, identity) = match owner {
            Owner::Client(w, c) => {
                let name = model
                    .workloads
                    .get(w as usize)
                    .map_or("main", |w| w.name.as_str());
                let id = format!("client:{name}:{}", self.symbols()[c as usize]);
                (name.to_string(), id)
            }
            Owner::Service(s) => {
                let n = model.services[s].name.clone();
                (n.clone(), format!("service:{n}"))
            }
        };
        let target_name = model.target_name(target).to_string();
        let site = match (self.series_sites(), owner) {
            (None, _) => NO_SITE,
            (Some(sites), Owner::Client(w, _)) => sites.of_workload_call(w, target),
            (Some(sites), Owner::Service(s)) => sites.of_call(s, target),
        };
        (self.policies).add_state(model, key, caller_name, identity, target_name, site)
    }

    /// The caller on whose behalf `caller` calls (a policy call's own caller).
    #[inline]
    pub(in crate::sim) fn outer(&self, caller: Caller) -> Caller {
        self.policies.outer(caller)
    }

    /// Whether `caller` is a hedge that lets its losers run on.
    #[inline]
    pub(in crate::sim) fn keeps_losers(&self, caller: Caller) -> bool {
        self.policies.keeps_losers(self.model(), caller)
    }

    /// Sends the next attempt of policy call `pc` now, capped by the policy's
    /// `timeout_ms` and the call's deadline. False: no time left.
    fn attempt(&mut self, pc: u32) -> bool {
        let now = self.now();
        let Some(a) = self.policies.attempt(self.model, pc, now) else {
            return false;
        };
        if !a.first
            && let Caller::Client { req } = a.caller
        {
            // a client's retry or hedge: the time series counts attempts by send time
            let workload = self.request_workload(req);
            self.note(Note::AttemptSent { workload });
        }
        match self.call(Caller::Policy { call: pc }, a.target, a.cap, a.cancel) {
            Some(id) => self.policies.attempt_open(pc, id),
            None => {
                let mut t = Timers::new(&mut self.queue, now);
                self.policies.attempt_failing(&mut t, pc);
            }
        }
        true
    }

    /// The attempt of `pc` that failed at once is reported: an error.
    pub(super) fn policy_attempt_failed(&mut self, pc: u32) {
        self.policies.failing_reported(pc);
        self.policy_attempt_ended(pc, super::super::policy::FAILED_AT_ONCE, Outcome::Error);
    }

    /// Attempt `attempt` of policy call `pc` ended with `outcome`.
    pub(in crate::sim) fn policy_attempt_ended(
        &mut self,
        pc: u32,
        attempt: CallId,
        outcome: Outcome,
    ) {
        let now = self.now();
        if (self.policies).attempt_ended(self.model, pc, attempt, outcome, now) {
            self.hedge_attempt_ended(pc, outcome);
        } else {
            self.retry_attempt_ended(pc, outcome);
        }
    }

    /// A backoff or hedge delay of `pc` is over.
    pub(super) fn policy_timer(&mut self, pc: u32) {
        if self.policies.timer_over(self.model, pc) {
            self.hedge_send(pc);
        } else {
            self.retry_now(pc);
        }
    }

    /// Stops every attempt of `pc` still in flight and its timer; each counts
    /// as `cancelled`. Their work stops with `cancel`, runs on without it.
    fn policy_stop_attempts(&mut self, pc: u32, cancel: bool) {
        let mut t = Timers::new(&mut self.queue, self.now);
        self.policies.stop(&mut t, pc);
        while let Some(a) = self.policies.pop_open(pc) {
            if let Some(call) = a {
                self.call_drop(call, cancel);
            }
        }
    }

    /// The call is over for its caller with `outcome`.
    fn policy_resolve(&mut self, pc: u32, outcome: Outcome) {
        let now = self.now();
        let (caller, target) = self.policies.resolving(pc);
        self.note(Note::PolicyResolved { pc, outcome });
        self.policies.resolved(pc, outcome, now);
        if outcome != Outcome::Answered
            && let Target::Dependency(dep) = target
        {
            // the call failed after its last attempt (attempts are counted apart)
            self.note(Note::CallFailed { dep });
        }
        self.call_resolved_outer(caller, outcome);
    }

    /// A call to `target` the policy refuses to send: it fails for its caller
    /// (one failed call of a dependency).
    #[cold]
    fn policy_refused(&mut self, target: Target) -> Outcome {
        if let Target::Dependency(dep) = target {
            self.note(Note::CallFailed { dep });
        }
        Outcome::Refused
    }

    /// The caller of policy call `id` (with [`POLICY_CALL`] set) gives up on it.
    pub(in crate::sim) fn policy_abandon(&mut self, id: CallId, force: bool) {
        let pc = id & !POLICY_CALL;
        let cancel = self.policies.abandoning(pc, force);
        self.policy_stop_attempts(pc, cancel);
        // after its attempts: they end within it
        self.note(Note::PolicyEnded { pc, cancel });
        self.policies.release(pc);
    }

    /// An attempt of `pc` ended with `outcome` (no hedging).
    fn retry_attempt_ended(&mut self, pc: u32, outcome: Outcome) {
        if outcome == Outcome::Answered {
            return self.policy_resolve(pc, outcome);
        }
        let mut t = Timers::new(&mut self.queue, self.now);
        match self.policies.retry_after(&mut t, self.model, pc, outcome) {
            Retry::Resolve => self.policy_resolve(pc, outcome),
            Retry::BudgetRefused => {
                self.note(Note::RetryRefused { pc });
                self.policy_resolve(pc, outcome)
            }
            Retry::Now => self.retry_now(pc),
            Retry::Later => {}
        }
    }

    /// Sends the retry of `pc` now (its backoff is over).
    fn retry_now(&mut self, pc: u32) {
        if self.attempt(pc) {
            self.policies.retried(pc);
        } else {
            let last = self.policies.last(pc);
            self.policy_resolve(pc, last);
        }
    }

    /// A copy of `pc` ended with `outcome`: the call is over (the copies in
    /// flight stopped), or the next copy goes.
    fn hedge_attempt_ended(&mut self, pc: u32, outcome: Outcome) {
        match self.policies.hedge_copy_ended(self.model, pc, outcome) {
            CopyEnded::Over { cancel } => {
                self.policy_stop_attempts(pc, cancel);
                self.policy_resolve(pc, outcome)
            }
            CopyEnded::Next => self.hedge_send(pc),
        }
    }

    /// Sends the next copy if copies and time remain (the policy sets the
    /// timer for the one after); ends the call when nothing is in flight and
    /// nothing can go.
    fn hedge_send(&mut self, pc: u32) {
        let now = self.now();
        if self.policies.hedge_may_go(self.model, pc, now) && self.attempt(pc) {
            let mut t = Timers::new(&mut self.queue, now);
            self.policies.hedged(&mut t, self.model, pc);
            return;
        }
        let mut t = Timers::new(&mut self.queue, now);
        if let Some(last) = self.policies.hedge_done(&mut t, pc) {
            self.policy_resolve(pc, last);
        }
    }
}
