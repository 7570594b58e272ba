//! Client policies (`[policies.NAME]`): what a caller does around each call it
//! makes. A call with a policy is a *policy call* here, and each try of it is an
//! ordinary call ([`call`](super::call)) whose caller is the policy call: the
//! callee never knows. The policy decides, when an attempt ends, whether to send
//! another (retry, hedge) or to resolve the call for its own caller (a plan's
//! branch, or a workload's client), and before any attempt whether the call may
//! go at all (breaker, throttle).
//!
//! One module per policy kind: [`backoff`] (the wait before a retry),
//! [`retry`] and [`hedge`] (what happens when an attempt ends),
//! [`breaker`] and [`throttle`] (calls refused before any attempt). The retry
//! budgets are kinds ([`crate::kinds::budget`], one module each): a budget
//! hears each attempt that ends, and what it holds for a retry is kept on
//! the policy call until that retry's attempt ends or the call is over. Their state
//! lives in a [`PolicyState`] per (caller, policy, target): per client label of a
//! workload, per calling service. Each state has its own random streams, one per
//! purpose (jitter, throttle coins), so a scenario without policies draws exactly
//! what it drew before.
//!
//! The policies know nothing of the world: [`Policies`] says whether a call
//! may go ([`FirstTry`]), what each attempt is ([`Attempt`]), and after an
//! attempt whether another follows ([`Retry`], the hedge's steps). A call's
//! timers (a backoff, the next copy's delay, the report of an attempt that
//! failed at once) are its own: set and cancelled here through the
//! [`Timers`] the world lends for the step. The world sends the attempts,
//! delivers the timers back and answers the caller (`world/policy.rs`).
//!
//! A caller holds a policy call by an id with `POLICY_CALL` set, so that
//! the world's `call_abandon` (a caller giving up from above) reaches it; attempts in
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
mod hedge;
pub(crate) use hedge::CopyEnded;
mod retry;
mod stats;
mod throttle;

use super::context::Timers;
use super::vocab::{CallId, Caller, Event, Outcome};
use crate::engine::{EventKey, Stream, Ticks, stream};
use crate::kinds::budget::BudgetState;
use crate::model::{AttemptOutcome, Model, PolicyId, Target};
pub(crate) use breaker::Admit;
use breaker::BreakerState;
pub use stats::CallStats;
pub(crate) use stats::attempt_outcome;
use std::collections::HashMap;
use throttle::ThrottleState;

/// In a policy call's open attempts: an attempt that failed at once (its target
/// is down) and is reported one event later (`PolicyAttemptFailed`), so the
/// policy never re-enters itself while it sends.
pub(crate) const FAILED_AT_ONCE: CallId = CallId::MAX;

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

/// Who a policy state belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Owner {
    /// A workload's client: the workload's index and the client's interned label.
    Client(u32, u32),
    Service(usize),
}

/// What a policy state is kept per: (caller identity, policy, target).
pub(crate) type StateKey = (Owner, PolicyId, Target);

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

impl PolicyCall {
    /// This freed slot takes `pc`, field by field, and keeps its own `open`
    /// (empty, its memory kept for the next hedge): a whole-struct move here
    /// cost about 30 instructions a call.
    #[inline(always)]
    fn reopen(&mut self, pc: PolicyCall) {
        let PolicyCall {
            caller,
            target,
            policy,
            state,
            cancel,
            deadline,
            attempts,
            open: _,
            last,
            timer,
            failing,
            sleep_ms,
            admit,
            workload,
            held,
            hedging_stopped,
        } = pc;
        debug_assert!(self.open.is_empty(), "a freed policy call holds no attempt");
        self.caller = caller;
        self.target = target;
        self.policy = policy;
        self.state = state;
        self.cancel = cancel;
        self.deadline = deadline;
        self.attempts = attempts;
        self.last = last;
        self.timer = timer;
        self.failing = failing;
        self.sleep_ms = sleep_ms;
        self.admit = admit;
        self.workload = workload;
        self.held = held;
        self.hedging_stopped = hedging_stopped;
    }
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

/// Whether a policy call may go, decided before any attempt
/// ([`Policies::first_try`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstTry {
    /// The throttle refuses it.
    Throttled,
    /// The breaker refuses it.
    BreakerRefused,
    /// No time at all: one attempt that fails at once, as without a policy.
    NoTime,
    /// It goes, let through by the breaker as `Admit` says.
    Go(Admit),
}

/// One attempt of a policy call to send ([`Policies::attempt`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempt {
    pub(in crate::sim) target: Target,
    /// Its cap: the policy's `timeout_ms` and the call's deadline.
    pub(in crate::sim) cap: Option<Ticks>,
    pub(in crate::sim) cancel: bool,
    /// The call's first attempt (not a retry or a hedge).
    pub(in crate::sim) first: bool,
    /// The policy call's own caller.
    pub(in crate::sim) caller: Caller,
}

/// What a retrying policy does after a failed attempt ([`Policies::retry_after`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// No retry: the call is over with its last failure.
    Resolve,
    /// The budget refused the retry: the call is over (the refusal is noted).
    BudgetRefused,
    /// The retry goes now.
    Now,
    /// The retry goes after its backoff: the policy's timer is set.
    Later,
}

/// Every policy call's life, as the policies keep it. The world carries out
/// what each step says (`world/policy.rs`): it sends the attempts, delivers
/// the timers the policies set back to them and answers the caller.
impl Policies {
    /// The state of `key`, if it was made (a state is made on a key's first
    /// call: [`Policies::add_state`]).
    #[inline(always)]
    pub(in crate::sim) fn state_of(&mut self, key: StateKey) -> Option<u32> {
        self.find(key)
    }

    /// Makes the state of `key` on its first call, named after its caller
    /// (`caller_name`, the workload or the service; `identity`, the caller's
    /// own name for its random streams) and `target_name`, counted at call
    /// site `site` of the time series.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn add_state(
        &mut self,
        model: &Model,
        key: StateKey,
        caller_name: String,
        identity: String,
        target_name: String,
        site: u32,
    ) -> u32 {
        let (owner, policy, _) = key;
        let p = &model.policies[policy];
        let actor = format!("policy:{identity}:{}:{target_name}", p.name);
        let (seed, rep) = (self.seed, self.replication);
        let st = PolicyState {
            stats: CallStats {
                caller: caller_name,
                target: target_name,
                call_policy: p.name.clone(),
                ..CallStats::default()
            },
            by_workload: match owner {
                Owner::Service(_) => vec![CallStats::default(); self.workloads.len()],
                Owner::Client(..) => Vec::new(),
            },
            budget: match (&p.retry, &p.hedge) {
                (Some(r), _) => BudgetState::new(r.budget.as_ref(), r.on),
                // gRPC's throttle counts a hedge's non-fatal failures, not a
                // copy it cancelled
                (None, Some(h)) => BudgetState::new(h.budget.as_ref(), h.non_fatal),
                (None, None) => BudgetState::new(None, 0),
            },
            breaker: p.breaker.map(BreakerState::new),
            throttle: p.throttle.map(ThrottleState::new),
            jitter: stream(seed, rep, &format!("{actor}:jitter")),
            coins: stream(seed, rep, &format!("{actor}:throttle")),
            site,
        };
        let i = self.states.len() as u32;
        self.states.push(st);
        self.index.insert(key, i);
        self.memo[memo_of(key)] = Some((key, i));
        i
    }

    /// Whether a service's counts are split by workload (several workloads).
    #[inline(always)]
    pub(in crate::sim) fn split(&self) -> bool {
        !self.workloads.is_empty()
    }

    /// A call through state `state` for workload `w` is made at `now` with
    /// `cap`: counted, and whether it may go.
    #[inline(always)]
    pub(in crate::sim) fn first_try(
        &mut self,
        state: u32,
        w: u32,
        now: Ticks,
        cap: Option<Ticks>,
    ) -> FirstTry {
        let st = &mut self.states[state as usize];
        st.tally(w, |s| s.first_tries += 1);
        st.budget.first_try(now);
        if let Some(t) = &mut st.throttle
            && t.refuse(now, &mut st.coins)
        {
            st.tally(w, |s| s.throttled += 1);
            return FirstTry::Throttled;
        }
        let admit = match &mut st.breaker {
            Some(b) => b.admit(now),
            None => Admit::Pass,
        };
        if admit == Admit::Refuse {
            st.tally(w, |s| s.breaker_refused += 1);
            return FirstTry::BreakerRefused;
        }
        if cap == Some(Ticks::ZERO) {
            st.tally(w, |s| {
                s.attempts += 1;
                s.timeout += 1;
                s.most_attempts = s.most_attempts.max(1);
            });
            if let Some(b) = &mut st.breaker {
                b.resolved(now, admit, Outcome::TimedOut);
            }
            return FirstTry::NoTime;
        }
        FirstTry::Go(admit)
    }

    /// Opens a policy call of `caller` to `target` through `policy` and
    /// state `state` (let through as `admit`, for workload `w`), ending at
    /// `deadline`: its id.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(in crate::sim) fn open(
        &mut self,
        model: &Model,
        caller: Caller,
        target: Target,
        policy: PolicyId,
        state: u32,
        cancel: bool,
        deadline: Option<Ticks>,
        admit: Admit,
        w: u32,
    ) -> u32 {
        let pc = PolicyCall {
            caller,
            target,
            policy,
            state,
            cancel,
            deadline,
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
        let id = match self.free.pop() {
            Some(id) => {
                self.calls[id as usize].reopen(pc);
                id
            }
            None => {
                self.calls.push(pc);
                (self.calls.len() - 1) as u32
            }
        };
        if let Some(b) = &model.policies[policy].retry {
            self.calls[id as usize].sleep_ms = b.backoff.base_ms;
        }
        id
    }

    /// Attempts policy call `call` has sent so far.
    #[cold]
    pub(in crate::sim) fn attempts_of(&self, call: u32) -> u32 {
        self.calls[call as usize].attempts
    }

    /// The caller on whose behalf `caller` calls (a policy call's own caller).
    #[inline]
    pub(in crate::sim) fn outer(&self, caller: Caller) -> Caller {
        match caller {
            Caller::Policy { call } => self.calls[call as usize].caller,
            c => c,
        }
    }

    /// Whether `caller` is a hedge that lets its losers run on.
    #[inline]
    pub(in crate::sim) fn keeps_losers(&self, model: &Model, caller: Caller) -> bool {
        match caller {
            Caller::Policy { call } => {
                let p = &self.calls[call as usize];
                model.policies[p.policy]
                    .hedge
                    .is_some_and(|h| !h.cancel_losers)
            }
            _ => false,
        }
    }

    /// The next attempt of policy call `pc` at `now`, capped by the policy's
    /// `timeout_ms` and the call's deadline, counted as sent (None: no time
    /// left, nothing sent).
    #[inline(always)]
    pub(in crate::sim) fn attempt(
        &mut self,
        model: &Model,
        pc: u32,
        now: Ticks,
    ) -> Option<Attempt> {
        let p = &self.calls[pc as usize];
        let timeout = model.policies[p.policy].timeout;
        let left = p.deadline.map(|d| d.saturating_sub(now));
        let cap = match (timeout, left) {
            (Some(t), Some(l)) => Some(t.min(l)),
            (t, l) => t.or(l),
        };
        if cap == Some(Ticks::ZERO) {
            return None;
        }
        let (target, cancel, state, first) = (p.target, p.cancel, p.state, p.attempts == 0);
        let w = p.workload;
        let late = p.deadline.is_some_and(|d| now >= d);
        let n = p.attempts as u64 + 1;
        let st = &mut self.states[state as usize];
        st.tally(w, |s| {
            s.attempts += 1;
            s.late_attempts += late as u64;
            s.most_attempts = s.most_attempts.max(n);
        });
        if !first && let Some(t) = &mut st.throttle {
            t.request(now);
        }
        let p = &mut self.calls[pc as usize];
        p.attempts += 1;
        Some(Attempt {
            target,
            cap,
            cancel,
            first,
            caller: p.caller,
        })
    }

    /// The attempt of `pc` sent as `id` is in flight.
    #[inline(always)]
    pub(in crate::sim) fn attempt_open(&mut self, pc: u32, id: CallId) {
        self.calls[pc as usize].open.push(id);
    }

    /// The attempt of `pc` failed at once: it is reported by an event now
    /// (kept, so that stopping the call cancels it).
    pub(in crate::sim) fn attempt_failing(&mut self, t: &mut Timers, pc: u32) {
        let key = t.at(t.now(), Event::PolicyAttemptFailed(pc));
        let p = &mut self.calls[pc as usize];
        p.open.push(FAILED_AT_ONCE);
        p.failing = Some(key);
    }

    /// The report of `pc`'s attempt that failed at once has come.
    pub(in crate::sim) fn failing_reported(&mut self, pc: u32) {
        self.calls[pc as usize].failing = None;
    }

    /// Attempt `attempt` of `pc` ended with `outcome` at `now`: counted, and
    /// heard by the budget and the throttle. True if the policy hedges.
    #[inline(always)]
    pub(in crate::sim) fn attempt_ended(
        &mut self,
        model: &Model,
        pc: u32,
        attempt: CallId,
        outcome: Outcome,
        now: Ticks,
    ) -> bool {
        let Policies { calls, states, .. } = self;
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
        model.policies[policy].hedge.is_some()
    }

    /// A backoff or hedge delay of `pc` is over: true if the policy hedges.
    pub(in crate::sim) fn timer_over(&mut self, model: &Model, pc: u32) -> bool {
        let p = &mut self.calls[pc as usize];
        p.timer = None;
        model.policies[p.policy].hedge.is_some()
    }

    /// `pc`'s timer (a backoff or the next copy's delay) goes off at `at`,
    /// in place of the one set, if any.
    fn set_timer(&mut self, t: &mut Timers, pc: u32, at: Ticks) {
        let p = &mut self.calls[pc as usize];
        t.cancel(p.timer.take());
        p.timer = Some(t.at(at, Event::PolicyTimer(pc)));
    }

    /// `pc`'s timer, if set, is cancelled.
    fn cancel_timer(&mut self, t: &mut Timers, pc: u32) {
        t.cancel(self.calls[pc as usize].timer.take());
    }

    /// `pc`'s attempts stop: its timer and its pending report of an attempt
    /// that failed at once are cancelled, and what its budget held is
    /// released.
    pub(in crate::sim) fn stop(&mut self, t: &mut Timers, pc: u32) {
        let p = &mut self.calls[pc as usize];
        let state = p.state as usize;
        let held = std::mem::take(&mut p.held);
        if held != 0 {
            self.states[state].budget.release(held);
        }
        let p = &mut self.calls[pc as usize];
        t.cancel(p.timer.take());
        t.cancel(p.failing.take());
    }

    /// One attempt of `pc` still in flight, taken out and counted as
    /// cancelled (None: none is left): its call (None: it failed at once and
    /// has none).
    pub(in crate::sim) fn pop_open(&mut self, pc: u32) -> Option<Option<CallId>> {
        let p = &mut self.calls[pc as usize];
        let (state, w) = (p.state as usize, p.workload);
        let a = p.open.pop()?;
        self.states[state].tally(w, |s| s.cancelled += 1);
        Some((a != FAILED_AT_ONCE).then_some(a))
    }

    /// `pc` is over for its caller: what its budget held for a retry never
    /// sent (no time left for it) is released; its caller and target.
    #[inline(always)]
    pub(in crate::sim) fn resolving(&mut self, pc: u32) -> (Caller, Target) {
        let p = &mut self.calls[pc as usize];
        debug_assert!(p.open.is_empty() && p.timer.is_none());
        let (caller, state, target) = (p.caller, p.state, p.target);
        let held = std::mem::take(&mut p.held);
        if held != 0 {
            self.states[state as usize].budget.release(held);
        }
        (caller, target)
    }

    /// `pc` is over with `outcome` at `now`: its slot is free, and its breaker
    /// hears the outcome.
    #[inline(always)]
    pub(in crate::sim) fn resolved(&mut self, pc: u32, outcome: Outcome, now: Ticks) {
        let p = &self.calls[pc as usize];
        let (state, admit) = (p.state, p.admit);
        self.free.push(pc);
        if let Some(b) = &mut self.states[state as usize].breaker {
            b.resolved(now, admit, outcome);
        }
    }

    /// The caller of `pc` gives up on it (`force`: it cancels whatever the
    /// policy's own `cancel`): the breaker forgets it; whether its attempts'
    /// work stops.
    pub(in crate::sim) fn abandoning(&mut self, pc: u32, force: bool) -> bool {
        let p = &self.calls[pc as usize];
        let (cancel, state, admit) = (force || p.cancel, p.state, p.admit);
        if let Some(b) = &mut self.states[state as usize].breaker {
            b.forget(admit);
        }
        cancel
    }

    /// `pc`'s slot is free (its caller gave it up).
    pub(in crate::sim) fn release(&mut self, pc: u32) {
        self.free.push(pc);
    }

    /// The last failure of `pc`.
    pub(in crate::sim) fn last(&self, pc: u32) -> Outcome {
        self.calls[pc as usize].last
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
