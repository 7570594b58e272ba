//! Client policies (`[policies.NAME]`): what a caller does around each call it
//! makes. A call with a policy is a *policy call* here, and each try of it is an
//! ordinary call ([`call`](super::call)) whose caller is the policy call: the
//! callee never knows. The policy decides, when an attempt ends, whether to send
//! another (retry, hedge) or to resolve the call for its own caller (a plan's
//! branch, or a workload's client), and before any attempt whether the call may
//! go at all (breaker, throttle).
//!
//! One module per policy kind: [`backoff`] (the wait before a retry), [`budget`]
//! (retry budgets; the rules of real clients' budgets in [`client_budgets`]: a
//! budget hears each attempt that ends, and what it holds for a retry is kept
//! on the policy call until that retry's attempt ends or the call is over),
//! [`retry`] and [`hedge`] (what happens when an attempt ends),
//! [`breaker`] and [`throttle`] (calls refused before any attempt). Their state
//! lives in a [`PolicyState`] per (caller, policy, target): per client label of a
//! workload, per calling service. Each state has its own random streams, one per
//! purpose (jitter, throttle coins), so a scenario without policies draws exactly
//! what it drew before.
//!
//! A caller holds a policy call by an id with [`POLICY_CALL`] set, so that
//! `World::call_abandon` (a caller giving up from above) reaches it; attempts in
//! flight then end as `cancelled`.
//!
//! Counting model (the `calls` table): `first_tries` counts every call made
//! (refused ones included), `attempts` every attempt sent (a call with no time left
//! at all counts one that times out at once, as it does without a policy), and
//! `attempts = first_tries + retries + hedges - breaker_refused - throttled`.
//! The time series reads the same books per call site at each window's end
//! (each state knows its site: [`call_sites`](super::call_sites)), so a
//! policy's attempts are counted once, here.

mod backoff;
mod breaker;
mod budget;
mod client_budgets;
mod hedge;
mod retry;
mod throttle;

use super::call_sites::NO_SITE;
use super::notes::Note;
use super::trace::Opener;
use super::vocab::{CallId, Event, Outcome, World};
use super::vocab::{Caller, POLICY_CALL};
use crate::engine::{EventKey, Lane, Stream, Ticks, stream};
use crate::model::{AttemptOutcome, Model, PolicyId, Target};
use breaker::{Admit, BreakerState};
use budget::BudgetState;
use std::collections::HashMap;
use throttle::ThrottleState;

/// In a policy call's open attempts: an attempt that failed at once (its target
/// is down) and is reported one event later (`PolicyAttemptFailed`), so the
/// policy never re-enters itself while it sends.
const FAILED_AT_ONCE: CallId = CallId::MAX;

/// The failed outcomes of a hedge's copy that gRPC's throttle counts: every
/// failure a hedge answers with its next copy (gRPC's non-fatal codes), not a
/// copy it cancelled.
const HEDGE_COUNTED: crate::model::OutcomeSet = (1 << AttemptOutcome::Error as u8)
    | (1 << AttemptOutcome::Timeout as u8)
    | (1 << AttemptOutcome::Shed as u8)
    | (1 << AttemptOutcome::Rejected as u8);

/// What one (caller, target, policy) did: a row of the `calls` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallStats {
    /// The calling service, or the workload (its clients summed).
    pub caller: String,
    /// The service or dependency called.
    pub target: String,
    /// The policy's name (`none`: calls without one).
    pub call_policy: String,
    /// With several workloads, the workload whose requests made these calls
    /// (a service's calls are split by the workload that sent the request they
    /// serve); empty with one.
    pub workload: String,
    /// Calls made, refused ones included.
    pub first_tries: u64,
    /// Attempts sent.
    pub attempts: u64,
    /// Retries sent.
    pub retries: u64,
    /// Hedged copies sent.
    pub hedges: u64,
    /// Attempts answered ok.
    pub ok: u64,
    /// Attempts answered with a failure.
    pub error: u64,
    /// Attempts that timed out.
    pub timeout: u64,
    /// Attempts shed by a full server.
    pub shed: u64,
    /// Attempts rejected by a limiter.
    pub rejected: u64,
    /// Hedge losers and attempts cancelled from above.
    pub cancelled: u64,
    /// Retries the budget refused (each ends its call).
    pub budget_refused: u64,
    /// Calls the breaker refused before any attempt.
    pub breaker_refused: u64,
    /// Calls the throttle refused before any attempt.
    pub throttled: u64,
    /// Times the breaker opened.
    pub breaker_opened: u64,
    /// The most attempts one call took (a check: never above the policy's
    /// `max_attempts`; not a column).
    pub most_attempts: u64,
    /// Attempts sent at or after their call's deadline (a check: always 0).
    pub late_attempts: u64,
    /// The most retries open at once under an `envoy` budget (a check: never
    /// above the budget's cap; not a column).
    pub most_retries_open: u64,
}

impl PolicyState {
    /// Applies `f` to the state's counts and, when they are split, to those of
    /// workload `w`.
    #[inline]
    fn tally(&mut self, w: u32, f: impl Fn(&mut CallStats)) {
        f(&mut self.stats);
        if let Some(s) = self.by_workload.get_mut(w as usize) {
            f(s);
        }
    }
}

impl CallStats {
    /// Attempts sent and not yet ended (every attempt ends in one count).
    fn in_flight(&self) -> u64 {
        self.attempts.saturating_sub(
            self.ok + self.error + self.timeout + self.shed + self.rejected + self.cancelled,
        )
    }

    fn count(&mut self, o: AttemptOutcome) {
        let c = match o {
            AttemptOutcome::Ok => &mut self.ok,
            AttemptOutcome::Error => &mut self.error,
            AttemptOutcome::Timeout => &mut self.timeout,
            AttemptOutcome::Shed => &mut self.shed,
            AttemptOutcome::Rejected => &mut self.rejected,
            AttemptOutcome::Cancelled => &mut self.cancelled,
        };
        *c += 1;
    }

    /// Adds `o`'s counts (a workload's clients are summed into one row).
    fn add(&mut self, o: &CallStats) {
        self.first_tries += o.first_tries;
        self.attempts += o.attempts;
        self.retries += o.retries;
        self.hedges += o.hedges;
        self.ok += o.ok;
        self.error += o.error;
        self.timeout += o.timeout;
        self.shed += o.shed;
        self.rejected += o.rejected;
        self.cancelled += o.cancelled;
        self.budget_refused += o.budget_refused;
        self.breaker_refused += o.breaker_refused;
        self.throttled += o.throttled;
        self.breaker_opened += o.breaker_opened;
        self.most_attempts = self.most_attempts.max(o.most_attempts);
        self.late_attempts += o.late_attempts;
        self.most_retries_open = self.most_retries_open.max(o.most_retries_open);
    }
}

/// How an attempt's answer reads to a policy.
pub(crate) fn attempt_outcome(o: Outcome) -> AttemptOutcome {
    match o {
        Outcome::Answered => AttemptOutcome::Ok,
        Outcome::Dropped | Outcome::Error | Outcome::Refused | Outcome::NotFound => {
            AttemptOutcome::Error
        }
        Outcome::TimedOut => AttemptOutcome::Timeout,
        Outcome::Shed => AttemptOutcome::Shed,
        Outcome::Rejected(_) => AttemptOutcome::Rejected,
    }
}

/// Who a policy state belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Owner {
    /// A workload's client: the workload's index and the client's interned label.
    Client(u32, u32),
    Service(usize),
}

/// What a policy state is kept per: (caller identity, policy, target).
type StateKey = (Owner, PolicyId, Target);

/// The state of one (caller, policy, target).
struct PolicyState {
    stats: CallStats,
    /// A service's state with several workloads: its counts per workload (the
    /// state itself, its breaker and budget, stays shared); empty otherwise.
    by_workload: Vec<CallStats>,
    budget: BudgetState,
    breaker: Option<BreakerState>,
    throttle: Option<ThrottleState>,
    jitter: Stream,
    coins: Stream,
    /// Its call site in the time series (`NO_SITE` without one), which reads
    /// `stats` at each window's end.
    site: u32,
}

/// One call made through a policy.
struct PolicyCall {
    caller: Caller,
    target: Target,
    policy: PolicyId,
    state: u32,
    cancel: bool,
    /// The call's absolute deadline (its cap), if any.
    deadline: Option<Ticks>,
    /// Attempts sent so far.
    attempts: u32,
    /// Attempts in flight (several while hedging); kept with the slot.
    open: Open,
    /// The last failure, which ends the call when no attempt is left.
    last: Outcome,
    /// A backoff or the next hedge.
    timer: Option<EventKey>,
    /// The report of an attempt that failed at once, while pending.
    failing: Option<EventKey>,
    /// The previous backoff (decorrelated jitter).
    sleep_ms: f64,
    /// How the breaker let it through.
    admit: Admit,
    /// The workload whose request it serves (0 with one workload).
    workload: u32,
    /// What the retry budget holds for the call's latest retry (see
    /// `budget`), until that retry's attempt ends; 0 for nothing.
    held: u32,
    /// The retry budget refused a copy: the hedge sends no further one.
    hedging_stopped: bool,
}

/// A policy call's attempts in flight, in the order a `Vec` with `push`,
/// `swap_remove` and `pop` keeps them (the order `policy_stop_attempts` drops
/// them in): the first two inline, more (hedges) in a Vec that stays with the
/// slot. A retrying call has one at a time and follows no pointer for it.
#[derive(Default)]
struct Open {
    n: usize,
    head: [CallId; 2],
    more: Vec<CallId>,
}

impl Open {
    #[inline]
    fn is_empty(&self) -> bool {
        self.n == 0
    }

    #[inline]
    fn get(&self, i: usize) -> CallId {
        if i < 2 {
            self.head[i]
        } else {
            self.more[i - 2]
        }
    }

    #[inline]
    fn push(&mut self, id: CallId) {
        if self.n < 2 {
            self.head[self.n] = id;
        } else {
            self.more.push(id);
        }
        self.n += 1;
    }

    #[inline]
    fn pop(&mut self) -> Option<CallId> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        if self.n < 2 {
            Some(self.head[self.n])
        } else {
            self.more.pop()
        }
    }

    /// Takes `id` out as `Vec::swap_remove` would (the last one takes its place).
    #[inline]
    fn remove(&mut self, id: CallId) {
        let Some(i) = (0..self.n).position(|i| self.get(i) == id) else {
            return;
        };
        let Some(last) = self.pop() else {
            return;
        };
        if i < self.n {
            if i < 2 {
                self.head[i] = last;
            } else {
                self.more[i - 2] = last;
            }
        }
    }
}

/// Every policy state and policy call of a run.
pub(crate) struct Policies {
    calls: Vec<PolicyCall>,
    free: Vec<u32>,
    states: Vec<PolicyState>,
    index: super::vocab::FastMap<StateKey, u32>,
    /// The last state found for a client and for a service: a model's calls
    /// through one policy mostly repeat one key, which then skips the hash.
    memo: [Option<(StateKey, u32)>; 2],
    /// Several workloads: a service's counts are split by workload.
    workloads: Vec<String>,
    seed: u64,
    replication: u64,
}

/// Which memo holds `key`: the last client's or the last service's.
#[inline(always)]
fn memo_of(key: StateKey) -> usize {
    matches!(key.0, Owner::Service(_)) as usize
}

impl Policies {
    /// The state made for `key`, if any: the memo of its owner's kind when it
    /// holds `key`, else the map (and the memo then remembers it).
    #[inline(always)]
    fn find(&mut self, key: StateKey) -> Option<u32> {
        let m = memo_of(key);
        if let Some((k, i)) = self.memo[m]
            && k == key
        {
            return Some(i);
        }
        let i = *self.index.get(&key)?;
        self.memo[m] = Some((key, i));
        Some(i)
    }

    pub fn new(model: &Model, replication: u64) -> Policies {
        Policies {
            calls: Vec::new(),
            free: Vec::new(),
            states: Vec::new(),
            index: super::vocab::FastMap::default(),
            memo: [None; 2],
            workloads: if model.workloads.len() > 1 {
                model.workloads.iter().map(|w| w.name.clone()).collect()
            } else {
                Vec::new()
            },
            seed: model.seed,
            replication,
        }
    }

    /// Room for `more` policy calls beyond those held, made now (see
    /// `World::reserve_ahead`).
    pub fn reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.calls.try_reserve(more)?;
        self.free.try_reserve(more)
    }

    /// Policy calls not yet over.
    pub fn held(&self) -> u64 {
        (self.calls.len() - self.free.len()) as u64
    }

    /// Adds each state's first tries and attempts so far to its call site's
    /// (the time series reads them at each window's end).
    pub fn site_books(&self, sites: &mut [crate::sim::timeseries::CallWindow]) {
        for st in &self.states {
            if let Some(c) = sites.get_mut(st.site as usize) {
                c.first_tries += st.stats.first_tries;
                c.attempts += st.stats.attempts;
            }
        }
    }

    /// The run's `calls` rows: states summed per (caller, target, policy), sorted.
    pub fn finish(&mut self) -> Vec<CallStats> {
        let mut rows: Vec<CallStats> = Vec::new();
        let mut at: HashMap<(String, String, String, String), usize> = HashMap::new();
        for st in &mut self.states {
            let opened = st.breaker.as_ref().map_or(0, |b| b.opened);
            let most_open = st.budget.most_open();
            let mut parts = Vec::new();
            if st.by_workload.is_empty() {
                let mut s = std::mem::take(&mut st.stats);
                if !self.workloads.is_empty() {
                    // a client's state: its workload is its caller
                    s.workload = s.caller.clone();
                }
                parts.push(s);
            } else {
                // a service's state: a row per workload that made calls through it,
                // each with the shared breaker's openings
                for (w, mut s) in std::mem::take(&mut st.by_workload).into_iter().enumerate() {
                    if s.first_tries > 0 {
                        s.caller = st.stats.caller.clone();
                        s.target = st.stats.target.clone();
                        s.call_policy = st.stats.call_policy.clone();
                        s.workload = self.workloads[w].clone();
                        parts.push(s);
                    }
                }
            }
            for mut s in parts {
                s.breaker_opened = opened;
                s.most_retries_open = most_open;
                let key = (
                    s.caller.clone(),
                    s.workload.clone(),
                    s.target.clone(),
                    s.call_policy.clone(),
                );
                match at.get(&key) {
                    Some(&i) => rows[i].add(&s),
                    None => {
                        at.insert(key, rows.len());
                        rows.push(s);
                    }
                }
            }
        }
        rows.sort_by(|a, b| {
            (&a.caller, &a.workload, &a.target, &a.call_policy).cmp(&(
                &b.caller,
                &b.workload,
                &b.target,
                &b.call_policy,
            ))
        });
        rows
    }
}

impl World<'_> {
    /// Calls `target` through `policy` when the call has one, directly otherwise.
    /// (Always inlined: the call without a policy pays nothing for the choice.)
    #[inline(always)]
    pub(super) fn call_via(
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
    pub(super) fn policy_call(
        &mut self,
        policy: PolicyId,
        caller: Caller,
        target: Target,
        cap: Option<Ticks>,
        cancel: bool,
    ) -> Result<CallId, Outcome> {
        let state = self.policy_state(caller, policy, target) as usize;
        let w = if self.policies.workloads.is_empty() {
            0
        } else {
            self.policy_workload(caller)
        };
        let now = self.now();
        let st = &mut self.policies.states[state];
        st.tally(w, |s| s.first_tries += 1);
        st.budget.first_try(now);
        if let Some(t) = &mut st.throttle
            && t.refuse(now, &mut st.coins)
        {
            st.tally(w, |s| s.throttled += 1);
            if self.tracing() {
                self.trace_refused(caller, target, policy, "throttled");
            }
            return Err(self.policy_refused(target));
        }
        let admit = match &mut st.breaker {
            Some(b) => b.admit(now),
            None => Admit::Pass,
        };
        if admit == Admit::Refuse {
            st.tally(w, |s| s.breaker_refused += 1);
            if self.tracing() {
                self.trace_refused(caller, target, policy, "refused by the breaker");
            }
            return Err(self.policy_refused(target));
        }
        if cap == Some(Ticks::ZERO) {
            // no time at all: one attempt that fails at once, as without a policy
            st.tally(w, |s| {
                s.attempts += 1;
                s.timeout += 1;
                s.most_attempts = s.most_attempts.max(1);
            });
            if let Some(b) = &mut st.breaker {
                b.record(now, admit, true);
            }
            let _ = self.call(caller, target, cap, cancel);
            return Err(Outcome::TimedOut);
        }
        let pc = PolicyCall {
            caller,
            target,
            policy,
            state: state as u32,
            cancel,
            deadline: cap.map(|c| now + c),
            attempts: 0,
            open: Open::default(),
            last: Outcome::TimedOut,
            timer: None,
            failing: None,
            sleep_ms: 0.0,
            admit,
            workload: w,
            held: 0,
            hedging_stopped: false,
        };
        let id = match self.policies.free.pop() {
            Some(id) => {
                let slot = &mut self.policies.calls[id as usize];
                let open = std::mem::take(&mut slot.open);
                *slot = PolicyCall { open, ..pc };
                id
            }
            None => {
                self.policies.calls.push(pc);
                (self.policies.calls.len() - 1) as u32
            }
        };
        if let Some(b) = &self.model().policies[policy].retry {
            self.policies.calls[id as usize].sleep_ms = b.backoff.base_ms;
        }
        self.note(Note::PolicyOpened {
            pc: id,
            caller,
            target,
            policy,
        });
        self.attempt(id);
        self.hedge_started(id);
        Ok(id | POLICY_CALL)
    }

    /// The request `caller` (a branch or a client) calls for, and whether it is
    /// the client's own call, for the tracer.
    #[cold]
    pub(in crate::sim) fn trace_caller(&self, caller: Caller) -> (super::vocab::ReqId, bool) {
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
    pub(in crate::sim) fn trace_opener(&self, caller: Caller) -> Opener {
        match caller {
            Caller::Branch { req, .. } => Opener::Request(req),
            Caller::Client { req } => Opener::Client(req),
            Caller::Policy { call } => {
                Opener::Policy(call, self.policies.calls[call as usize].attempts)
            }
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
        match self.policies.find(key) {
            Some(i) => i,
            None => {
                let i = self.new_policy_state(key);
                self.policies.memo[memo_of(key)] = Some((key, i));
                i
            }
        }
    }

    /// Makes the state of `key` (its first call).
    #[cold]
    #[inline(never)]
    fn new_policy_state(&mut self, key: StateKey) -> u32 {
        let (owner, policy, target) = key;
        let p = &self.model().policies[policy];
        let (caller_name, identity) = match owner {
            Owner::Client(w, c) => {
                let name = self
                    .model()
                    .workloads
                    .get(w as usize)
                    .map_or("main", |w| w.name.as_str());
                let id = format!("client:{name}:{}", self.symbols()[c as usize]);
                (name.to_string(), id)
            }
            Owner::Service(s) => {
                let n = self.model().services[s].name.clone();
                (n.clone(), format!("service:{n}"))
            }
        };
        let target_name = self.model().target_name(target).to_string();
        let actor = format!("policy:{identity}:{}:{target_name}", p.name);
        let (seed, rep) = (self.policies.seed, self.policies.replication);
        let st = PolicyState {
            stats: CallStats {
                caller: caller_name,
                target: target_name,
                call_policy: p.name.clone(),
                ..CallStats::default()
            },
            by_workload: match owner {
                Owner::Service(_) => vec![CallStats::default(); self.policies.workloads.len()],
                Owner::Client(..) => Vec::new(),
            },
            budget: match (&p.retry, &p.hedge) {
                (Some(r), _) => BudgetState::new(r.budget.as_ref(), r.on),
                (None, Some(h)) => BudgetState::new(h.budget.as_ref(), HEDGE_COUNTED),
                (None, None) => BudgetState::new(None, 0),
            },
            breaker: p.breaker.map(BreakerState::new),
            throttle: p.throttle.map(ThrottleState::new),
            jitter: stream(seed, rep, &format!("{actor}:jitter")),
            coins: stream(seed, rep, &format!("{actor}:throttle")),
            site: match (self.series_sites(), owner) {
                (None, _) => NO_SITE,
                (Some(sites), Owner::Client(w, _)) => sites.of_workload_call(w, target),
                (Some(sites), Owner::Service(s)) => sites.of_call(s, target),
            },
        };
        let i = self.policies.states.len() as u32;
        self.policies.states.push(st);
        self.policies.index.insert(key, i);
        i
    }

    /// The caller on whose behalf `caller` calls (a policy call's own caller).
    pub(super) fn outer(&self, caller: Caller) -> Caller {
        match caller {
            Caller::Policy { call } => self.policies.calls[call as usize].caller,
            c => c,
        }
    }

    /// Sends the next attempt of policy call `pc` now, capped by the policy's
    /// `timeout_ms` and the call's deadline. False: no time left.
    fn attempt(&mut self, pc: u32) -> bool {
        let now = self.now();
        let p = &self.policies.calls[pc as usize];
        let timeout = self.model().policies[p.policy].timeout;
        let left = p.deadline.map(|d| d.saturating_sub(now));
        let cap = match (timeout, left) {
            (Some(t), Some(l)) => Some(t.min(l)),
            (t, l) => t.or(l),
        };
        if cap == Some(Ticks::ZERO) {
            return false;
        }
        let (target, cancel, state, first) = (p.target, p.cancel, p.state, p.attempts == 0);
        let w = p.workload;
        let late = p.deadline.is_some_and(|d| now >= d);
        let n = p.attempts as u64 + 1;
        let st = &mut self.policies.states[state as usize];
        st.tally(w, |s| {
            s.attempts += 1;
            s.late_attempts += late as u64;
            s.most_attempts = s.most_attempts.max(n);
        });
        if !first && let Some(t) = &mut st.throttle {
            t.request(now);
        }
        self.policies.calls[pc as usize].attempts += 1;
        if !first && let Caller::Client { req } = self.policies.calls[pc as usize].caller {
            // a client's retry or hedge: the time series counts attempts by send time
            let workload = self.request_workload(req);
            self.note(Note::AttemptSent { workload });
        }
        match self.call(Caller::Policy { call: pc }, target, cap, cancel) {
            Some(id) => self.policies.calls[pc as usize].open.push(id),
            None => {
                let key = self.schedule(now, Lane::Normal, Event::PolicyAttemptFailed(pc));
                let p = &mut self.policies.calls[pc as usize];
                p.open.push(FAILED_AT_ONCE);
                p.failing = Some(key);
            }
        }
        true
    }

    /// The attempt of `pc` that failed at once is reported: an error.
    pub(super) fn policy_attempt_failed(&mut self, pc: u32) {
        self.policies.calls[pc as usize].failing = None;
        self.policy_attempt_ended(pc, FAILED_AT_ONCE, Outcome::Error);
    }

    /// Attempt `attempt` of policy call `pc` ended with `outcome`.
    pub(super) fn policy_attempt_ended(&mut self, pc: u32, attempt: CallId, outcome: Outcome) {
        let now = self.now();
        let Policies { calls, states, .. } = &mut self.policies;
        let p = &mut calls[pc as usize];
        p.open.remove(attempt);
        let (policy, state, w) = (p.policy, p.state, p.workload);
        let o = attempt_outcome(outcome);
        let st = &mut states[state as usize];
        st.tally(w, |s| s.count(o));
        if st.budget.hears_attempts() {
            st.budget.ended(o, std::mem::take(&mut p.held));
        }
        if matches!(o, AttemptOutcome::Ok | AttemptOutcome::Error)
            && let Some(t) = &mut st.throttle
        {
            t.accepted(now);
        }
        if self.model().policies[policy].hedge.is_some() {
            self.hedge_attempt_ended(pc, outcome);
        } else {
            self.retry_attempt_ended(pc, outcome);
        }
    }

    /// A backoff or hedge delay of `pc` is over.
    pub(super) fn policy_timer(&mut self, pc: u32) {
        self.policies.calls[pc as usize].timer = None;
        if self.model().policies[self.policies.calls[pc as usize].policy]
            .hedge
            .is_some()
        {
            self.hedge_timer(pc);
        } else {
            self.retry_now(pc);
        }
    }

    fn policy_schedule(&mut self, pc: u32, at: Ticks) {
        if let Some(key) = self.policies.calls[pc as usize].timer.take() {
            self.cancel(key);
        }
        let key = self.schedule(at, Lane::Normal, Event::PolicyTimer(pc));
        self.policies.calls[pc as usize].timer = Some(key);
    }

    /// Stops every attempt of `pc` still in flight and its timer; each counts
    /// as `cancelled`. Their work stops with `cancel`, runs on without it.
    fn policy_stop_attempts(&mut self, pc: u32, cancel: bool) {
        let p = &mut self.policies.calls[pc as usize];
        let (timer, failing) = (p.timer.take(), p.failing.take());
        let (state, w) = (p.state as usize, p.workload);
        let held = std::mem::take(&mut p.held);
        for key in [timer, failing].into_iter().flatten() {
            self.cancel(key);
        }
        if held != 0 {
            self.policies.states[state].budget.release(held);
        }
        while let Some(a) = self.policies.calls[pc as usize].open.pop() {
            self.policies.states[state].tally(w, |s| s.cancelled += 1);
            if a != FAILED_AT_ONCE {
                self.call_drop(a, cancel);
            }
        }
    }

    /// The call is over for its caller with `outcome`.
    fn policy_resolve(&mut self, pc: u32, outcome: Outcome) {
        let now = self.now();
        let p = &mut self.policies.calls[pc as usize];
        debug_assert!(p.open.is_empty() && p.timer.is_none());
        let (caller, state, admit, target) = (p.caller, p.state, p.admit, p.target);
        let held = std::mem::take(&mut p.held);
        if held != 0 {
            // a retry allowed but never sent (no time left for it)
            self.policies.states[state as usize].budget.release(held);
        }
        self.note(Note::PolicyResolved { pc, outcome });
        self.policies.free.push(pc);
        if let Some(b) = &mut self.policies.states[state as usize].breaker {
            // timeouts, errors and sheds count as failures
            let failed = matches!(
                outcome,
                Outcome::Dropped
                    | Outcome::Error
                    | Outcome::Refused
                    | Outcome::TimedOut
                    | Outcome::Shed
                    | Outcome::NotFound
            );
            b.record(now, admit, failed);
        }
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
    pub(super) fn policy_abandon(&mut self, id: CallId, force: bool) {
        let pc = id & !POLICY_CALL;
        let p = &self.policies.calls[pc as usize];
        let (cancel, state, admit) = (force || p.cancel, p.state, p.admit);
        if let Some(b) = &mut self.policies.states[state as usize].breaker {
            b.forget(admit);
        }
        self.policy_stop_attempts(pc, cancel);
        // after its attempts: they end within it
        self.note(Note::PolicyEnded { pc, cancel });
        self.policies.free.push(pc);
    }
}

#[cfg(test)]
mod tests {
    use super::{Open, Owner, Policies, StateKey};
    use crate::model::Target;
    use rand::RngExt;

    /// The memo answers what the map answers: over 20,000 lookups of keys
    /// that mostly repeat (as a model's calls through one policy do), of
    /// clients and services, made and not made, `find` gives the map's index.
    #[test]
    fn the_policy_state_memo_answers_as_the_map() {
        let mut rng = crate::engine::stream(11, 0, "memo-test");
        let mut policies = Policies {
            calls: Vec::new(),
            free: Vec::new(),
            states: Vec::new(),
            index: Default::default(),
            memo: [None; 2],
            workloads: Vec::new(),
            seed: 0,
            replication: 0,
        };
        let key = |n: u32| -> StateKey {
            let owner = if n.is_multiple_of(2) {
                Owner::Client(n % 3, n % 5)
            } else {
                Owner::Service(n as usize % 4)
            };
            let target = if n % 7 < 4 {
                Target::Service(n as usize % 3)
            } else {
                Target::Dependency(n as usize % 2)
            };
            (owner, n as usize % 2, target)
        };
        // half the keys are made, in a shuffled order of indexes
        for n in (0u32..60).filter(|&n| n.is_multiple_of(2) || n.is_multiple_of(3)) {
            let i = policies.index.len() as u32;
            policies.index.entry(key(n)).or_insert(i);
        }
        let mut last = 0;
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..20_000 {
            // a key mostly repeats the last one
            let n = if rng.random_bool(0.8) {
                last
            } else {
                rng.random_range(0..60)
            };
            last = n;
            let expected = policies.index.get(&key(n)).copied();
            assert_eq!(policies.find(key(n)), expected, "key {n}");
            match expected {
                Some(_) => hits += 1,
                None => misses += 1,
            }
        }
        assert!(
            hits > 1000 && misses > 1000,
            "{hits} found, {misses} not made"
        );
    }

    /// `Open` keeps the order a Vec with push, swap_remove and pop keeps, also
    /// past its two inline places.
    #[test]
    fn open_attempts_keep_a_vecs_order() {
        let mut rng = crate::engine::stream(7, 0, "open-test");
        let (mut open, mut vec) = (Open::default(), Vec::new());
        for id in 0..5_000u32 {
            match rng.random_range(0..3) {
                0 if vec.len() < 6 => {
                    open.push(id);
                    vec.push(id);
                }
                1 if !vec.is_empty() => {
                    let a = vec[rng.random_range(0..vec.len())];
                    open.remove(a);
                    let i = vec.iter().position(|&x| x == a).expect("present");
                    vec.swap_remove(i);
                }
                _ => assert_eq!(open.pop(), vec.pop()),
            }
            assert_eq!(open.is_empty(), vec.is_empty());
            assert_eq!((0..open.n).map(|i| open.get(i)).collect::<Vec<_>>(), vec);
        }
        open.remove(u32::MAX - 1); // absent: nothing changes
        assert_eq!(open.n, vec.len());
    }
}
