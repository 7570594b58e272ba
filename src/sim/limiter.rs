//! Limiter actor: rate limiters on the gateway (by route prefix) and in service
//! middleware (DY13).
//!
//! A request meets its limiters in a fixed order: the gateway rules whose prefix
//! matches its route (rule order, then list order; gateway access only), then the
//! middleware of the service that owns the route. A limiter meets a request at most
//! once. Each limiter counts the request before deciding (per bucket and per
//! member), then lets it through, holds it (throttle) or rejects it; the first
//! rejection ends the request with a 429 naming that limiter. A route no service owns
//! is answered 404 before any limiter sees it.
//!
//! The decision itself is a pure function of (time, bucket state): [`decide`]. Every
//! algorithm answers one question, [`Bucket::earliest`]: the first instant at or after
//! `t` when one more request may pass. Reject mode passes a request when that instant
//! is now; throttle mode holds it until then if the wait is at most `max_delay_ms`
//! (held requests of a bucket leave in FIFO order) and rejects it otherwise. The
//! limiter is deterministic, so that outcome is known on arrival; `overflow` only
//! says when the 429 goes out: after holding the request `max_delay_ms` (`hold`, the
//! default) or at once (`reject-now`). A request that will be rejected reserves
//! nothing, so no later request overtakes it. Only requests let through change an
//! algorithm's state.

use super::request::NO_ROUTE;
use super::{Event, Outcome, ReqId, World};
use crate::engine::{Lane, Ticks};
use crate::model::{
    Access, Algorithm, Field, Limiter, LimiterId, LimiterMode, Model, Overflow, Refill, RouteId,
};
use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};

/// What a limiter does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Pass,
    /// Throttled: held, and let through at this time.
    Delay(Ticks),
    Reject,
}

/// One bucket's algorithm state. Token and GCRA levels are exact integers (no
/// floats), so a decision never depends on rounding.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// The latest time a request was let through or is held to: held requests
    /// leave in FIFO order, never before it.
    last: Ticks,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    /// fixed-window, sliding-counter: requests let through per window aligned to
    /// multiples of window_ms from t = 0, as (window index, count), oldest first.
    Windows(VecDeque<(u64, u64)>),
    /// sliding-log: the times requests were let through, oldest first.
    Log(VecDeque<Ticks>),
    /// token-bucket: the level at time `at` after the last take. Continuous refill
    /// counts in units of 1/window_ticks of a token (refill: `limit` units per tick);
    /// discrete refill counts whole tokens, one arriving at each multiple of
    /// window_ms / limit.
    Tokens { at: Ticks, level: u128 },
    /// gcra: the theoretical arrival time in ticks x limit (so the emission
    /// interval window_ms / limit is exactly window_ticks).
    Gcra { tat: u128 },
}

fn clamp_ticks(v: u128) -> Ticks {
    Ticks(u64::try_from(v).unwrap_or(u64::MAX))
}

fn div_ceil(a: u128, b: u128) -> u128 {
    a.div_ceil(b)
}

fn count_in(windows: &VecDeque<(u64, u64)>, k: u64) -> u64 {
    windows.iter().find(|(i, _)| *i == k).map_or(0, |(_, n)| *n)
}

impl Bucket {
    /// A fresh bucket: empty windows and log, a full token bucket.
    pub fn new(l: &Limiter) -> Bucket {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        let state = match l.algorithm {
            Algorithm::FixedWindow | Algorithm::SlidingCounter => State::Windows(VecDeque::new()),
            Algorithm::SlidingLog => State::Log(VecDeque::new()),
            Algorithm::TokenBucket => State::Tokens {
                at: Ticks::ZERO,
                level: match l.refill {
                    Refill::Continuous => lim * w,
                    Refill::Discrete => lim,
                },
            },
            Algorithm::Gcra => State::Gcra { tat: 0 },
        };
        Bucket {
            last: Ticks::ZERO,
            state,
        }
    }

    /// Drops what can no longer matter at or after `now`.
    fn forget(&mut self, l: &Limiter, now: Ticks) {
        match &mut self.state {
            State::Windows(ws) => {
                let current = now.0 / l.window.0;
                // sliding-counter still weighs the previous window
                let keep = match l.algorithm {
                    Algorithm::SlidingCounter => current.saturating_sub(1),
                    _ => current,
                };
                while ws.front().is_some_and(|(k, _)| *k < keep) {
                    ws.pop_front();
                }
            }
            State::Log(log) => {
                while log.front().is_some_and(|x| *x + l.window <= now) {
                    log.pop_front();
                }
            }
            State::Tokens { .. } | State::Gcra { .. } => {}
        }
    }

    /// Token level at `t` >= the last take (continuous units or whole tokens).
    fn tokens_at(l: &Limiter, at: Ticks, level: u128, t: Ticks) -> u128 {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        match l.refill {
            Refill::Continuous => (level + u128::from((t - at).0) * lim).min(lim * w),
            Refill::Discrete => {
                let arrived = |x: Ticks| u128::from(x.0) * lim / w;
                (level + arrived(t) - arrived(at)).min(lim)
            }
        }
    }

    /// The first instant at or after `t` (and after every request already let
    /// through or held) when one more request may pass.
    pub fn earliest(&self, l: &Limiter, t: Ticks) -> Ticks {
        let w = u128::from(l.window.0);
        let lim = u128::from(l.limit);
        let t0 = t.max(self.last);
        match &self.state {
            State::Windows(ws) => match l.algorithm {
                Algorithm::SlidingCounter => sliding_counter_earliest(ws, l, t0),
                _ => {
                    let mut k = t0.0 / l.window.0;
                    while count_in(ws, k) >= l.limit {
                        k += 1;
                    }
                    t0.max(clamp_ticks(u128::from(k) * w))
                }
            },
            State::Log(log) => {
                let n = log.len();
                let limit = usize::try_from(l.limit).unwrap_or(usize::MAX);
                if n < limit {
                    t0
                } else {
                    // the limit-th most recent pass must have left the window
                    t0.max(log[n - limit] + l.window)
                }
            }
            State::Tokens { at, level } => {
                let have = Self::tokens_at(l, *at, *level, t0);
                match l.refill {
                    Refill::Continuous if have >= w => t0,
                    Refill::Continuous => t0 + clamp_ticks(div_ceil(w - have, lim)),
                    Refill::Discrete if have >= 1 => t0,
                    Refill::Discrete => {
                        let next = u128::from(t0.0) * lim / w + 1;
                        clamp_ticks(div_ceil(next * w, lim))
                    }
                }
            }
            State::Gcra { tat } => {
                let tau = (lim - 1) * w;
                t0.max(clamp_ticks(div_ceil(tat.saturating_sub(tau), lim)))
            }
        }
    }

    /// Records a request let through at `at` (a value `earliest` returned).
    fn take(&mut self, l: &Limiter, at: Ticks) {
        match &mut self.state {
            State::Windows(ws) => {
                let k = at.0 / l.window.0;
                match ws.back_mut() {
                    Some((last, n)) if *last == k => *n += 1,
                    _ => ws.push_back((k, 1)),
                }
            }
            State::Log(log) => log.push_back(at),
            State::Tokens { at: since, level } => {
                let unit = match l.refill {
                    Refill::Continuous => u128::from(l.window.0),
                    Refill::Discrete => 1,
                };
                *level = Self::tokens_at(l, *since, *level, at) - unit;
                *since = at;
            }
            State::Gcra { tat } => {
                let lim = u128::from(l.limit);
                *tat = (*tat).max(u128::from(at.0) * lim) + u128::from(l.window.0);
            }
        }
        self.last = at;
    }
}

/// sliding-counter: a request may pass at `e` into window k when
/// `prev x (W - e) / W + curr + 1 <= limit` (the previous window's count weighed by
/// its overlap with the sliding window), computed in integers.
fn sliding_counter_earliest(ws: &VecDeque<(u64, u64)>, l: &Limiter, mut t0: Ticks) -> Ticks {
    let w = l.window.0;
    loop {
        let k = t0.0 / w;
        let prev = if k == 0 { 0 } else { count_in(ws, k - 1) };
        let curr = count_in(ws, k);
        if curr < l.limit {
            let room = u128::from(l.limit - curr - 1) * u128::from(w);
            let e_min = match prev {
                0 => 0,
                p => u128::from(w).saturating_sub(room / u128::from(p)),
            };
            let at = t0.max(clamp_ticks(u128::from(k) * u128::from(w) + e_min));
            if at.0 / w == k {
                return at;
            }
        }
        t0 = clamp_ticks((u128::from(k) + 1) * u128::from(w));
    }
}

/// Decides one request arriving at `now` and updates the bucket.
pub fn decide(l: &Limiter, b: &mut Bucket, now: Ticks) -> Decision {
    b.forget(l, now);
    let at = b.earliest(l, now);
    let decision = if at == now {
        Decision::Pass
    } else if l.mode == LimiterMode::Throttle && at - now <= l.max_delay {
        Decision::Delay(at)
    } else {
        return Decision::Reject;
    };
    b.take(l, at);
    decision
}

/// Where a request is on its way past the limiters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Stage {
    #[default]
    Gateway,
    Middleware,
}

/// A request's place in its limiter chain.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    stage: Stage,
    pos: u32,
    /// Held only to be rejected when the hold ends (`overflow = "hold"`).
    rejecting: bool,
}

/// The limiters one (route, access) pair meets, in order.
#[derive(Debug, Clone, Default)]
struct Chain {
    gateway: Vec<LimiterId>,
    middleware: Vec<LimiterId>,
}

/// One limiter's buckets and counts during a run.
#[derive(Debug, Clone, Default)]
struct LimiterActor {
    buckets: HashMap<[u32; 4], Bucket>,
    /// member -> (passed, rejected)
    members: HashMap<u32, (u64, u64)>,
    passed: u64,
    rejected: u64,
    delayed: u64,
    delay_total: Ticks,
    delay_max: Ticks,
    /// Pass times within the last window, for the peak.
    recent: VecDeque<Ticks>,
    peak: u64,
}

/// End-to-end outcomes of one member's requests.
#[derive(Debug, Clone, Default)]
struct MemberTally {
    requests: u64,
    admitted: u64,
    rejected_by: Vec<u64>,
    not_found: u64,
}

/// Every limiter's state for one run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Limiting {
    actors: Vec<LimiterActor>,
    /// Each request's place in its chain, by request id.
    progress: Vec<Progress>,
    /// Indexed by `route * 2 + access`.
    chains: Vec<Chain>,
    /// (requests, counted per limiter), indexed like `chains`.
    traffic: Vec<(u64, Vec<u64>)>,
    members: HashMap<u32, MemberTally>,
}

fn slot(route: RouteId, access: Access) -> usize {
    route * 2 + access as usize
}

/// The limiters a request on `route` through `access` meets: the matching gateway
/// rules' (gateway access only), then the owning service's middleware; each once.
pub(crate) fn chain_of(
    model: &Model,
    route: RouteId,
    access: Access,
) -> (Vec<LimiterId>, Vec<LimiterId>) {
    let r = &model.routes[route];
    let mut gateway = Vec::new();
    if let (Access::Gateway, Some(g), Some(_)) = (access, &model.gateway, r.service) {
        for rule in g
            .rules
            .iter()
            .filter(|rule| r.path.starts_with(&rule.prefix))
        {
            for &l in &rule.limiters {
                if !gateway.contains(&l) {
                    gateway.push(l);
                }
            }
        }
    }
    let mut middleware = Vec::new();
    if let Some(s) = r.service {
        for &l in &model.services[s].middleware {
            if !gateway.contains(&l) && !middleware.contains(&l) {
                middleware.push(l);
            }
        }
    }
    (gateway, middleware)
}

impl Limiting {
    pub fn new(model: &Model) -> Limiting {
        if model.limiters.is_empty() {
            return Limiting::default();
        }
        let mut chains = Vec::new();
        for route in 0..model.routes.len() {
            for access in [Access::Gateway, Access::Direct] {
                let (gateway, middleware) = chain_of(model, route, access);
                chains.push(Chain {
                    gateway,
                    middleware,
                });
            }
        }
        let n = model.limiters.len();
        Limiting {
            actors: vec![LimiterActor::default(); n],
            progress: Vec::new(),
            traffic: vec![(0, vec![0; n]); chains.len()],
            chains,
            members: HashMap::new(),
        }
    }

    fn enabled(&self) -> bool {
        !self.actors.is_empty()
    }

    /// `req` starts walking `stage` of its chain.
    fn enter(&mut self, req: ReqId, stage: Stage) {
        let p = &mut self.progress;
        if p.len() <= req as usize {
            p.resize(req as usize + 1, Progress::default());
        }
        p[req as usize] = Progress {
            stage,
            ..Progress::default()
        };
    }
}

/// Orders names with their digit runs compared as numbers (u2 before u10).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for ((da, xa), (db, xb)) in pa.iter().zip(&pb) {
        let ord = if *da && *db {
            let (ta, tb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb))
        } else {
            xa.cmp(xb)
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

/// One limiter's figures for the run.
#[derive(Debug, Clone, Default)]
pub struct LimiterRun {
    /// Requests counted (= passed + rejected).
    pub seen: u64,
    /// Let through, at once or after a throttle hold.
    pub passed: u64,
    pub rejected: u64,
    /// Passed after a throttle hold.
    pub delayed: u64,
    pub delay_total_ms: f64,
    pub delay_max_ms: f64,
    /// Distinct bucket keys the limiter saw.
    pub buckets: u64,
    /// The most requests it let through within any window_ms (t - window, t].
    pub peak_passed_in_window: u64,
    /// Per member, in natural name order.
    pub members: Vec<MemberCount>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberCount {
    pub member: String,
    pub passed: u64,
    pub rejected: u64,
}

/// The requests of one (route, access) pair and how many each limiter counted.
#[derive(Debug, Clone, Default)]
pub struct RouteTraffic {
    pub route: RouteId,
    pub access: Option<Access>,
    pub requests: u64,
    /// Per limiter (declaration order).
    pub counted: Vec<u64>,
}

/// End-to-end outcomes of one member's requests.
#[derive(Debug, Clone, Default)]
pub struct MemberOutcome {
    pub member: String,
    pub requests: u64,
    /// Passed every limiter and reached the handler.
    pub admitted: u64,
    /// Rejected (429), per limiter that rejected first.
    pub rejected_by: Vec<u64>,
    /// Answered 404: no service owns the route.
    pub not_found: u64,
}

/// What the limiters measured in one run (empty when the scenario has none).
#[derive(Debug, Clone, Default)]
pub struct LimiterResults {
    /// Per limiter, declaration order.
    pub limiters: Vec<LimiterRun>,
    /// Every (route, access) pair that got requests, route then access order.
    pub traffic: Vec<RouteTraffic>,
    /// Per member, natural name order.
    pub members: Vec<MemberOutcome>,
}

impl World<'_> {
    /// Counts a new request for the per-member and per-pair tallies.
    pub(super) fn limiting_sent(&mut self, req: ReqId) {
        if !self.limiting.enabled() {
            return;
        }
        let r = &self.requests[req];
        let (route, member) = (r.route, r.member);
        let access = r.access.unwrap_or(Access::Direct);
        self.limiting.traffic[slot(route, access)].0 += 1;
        self.limiting.members.entry(member).or_default().requests += 1;
    }

    /// The request is at the gateway: its matching rules' limiters, then onward.
    pub(super) fn limit_at_gateway(&mut self, req: ReqId) {
        if !self.limiting.enabled() {
            // no limiters in the model: straight on (the chain would be empty)
            return self.gateway_forward(req);
        }
        self.limiting.enter(req, Stage::Gateway);
        self.limit_chain(req);
    }

    /// The request is at its service: the middleware limiters, then the handler.
    pub(super) fn limit_at_service(&mut self, req: ReqId) {
        if !self.limiting.enabled() {
            return self.handle(req);
        }
        self.limiting.enter(req, Stage::Middleware);
        self.limit_chain(req);
    }

    /// A throttled request's hold is over: it passes the limiter that held it, or
    /// gets the 429 it was held for.
    pub(super) fn limiter_resume(&mut self, req: ReqId) {
        let Some(l) = self.chain_step(req) else {
            return;
        };
        if self.limiting.progress[req as usize].rejecting {
            self.respond(req, Outcome::Rejected(l));
            return;
        }
        self.record_pass(l);
        self.limiting.progress[req as usize].pos += 1;
        if self.requests[req].closed {
            // the client gave up while it was held: nothing goes further
            self.respond(req, Outcome::TimedOut);
            return;
        }
        self.limit_chain(req);
    }

    /// The limiter the request is at, if its stage has one left.
    fn chain_step(&self, req: ReqId) -> Option<LimiterId> {
        let r = &self.requests[req];
        let p = &self.limiting.progress[req as usize];
        if r.route == NO_ROUTE {
            // a call into a service that owns no route: its middleware alone
            let list = &self.model.services[r.service].middleware;
            return list.get(p.pos as usize).copied();
        }
        let chain = &self.limiting.chains.get(slot(r.route, r.access?))?;
        let list = match p.stage {
            Stage::Gateway => &chain.gateway,
            Stage::Middleware => &chain.middleware,
        };
        list.get(p.pos as usize).copied()
    }

    /// Walks the rest of the request's current stage, then hands it on.
    fn limit_chain(&mut self, req: ReqId) {
        while let Some(l) = self.chain_step(req) {
            match self.limiter_decide(l, req) {
                Decision::Pass => {
                    self.record_pass(l);
                    self.limiting.progress[req as usize].pos += 1;
                }
                Decision::Delay(at) => {
                    self.post(at, Lane::Normal, Event::LimiterResume(req));
                    return;
                }
                Decision::Reject => {
                    let limiter = &self.model.limiters[l];
                    let hold = limiter.mode == LimiterMode::Throttle
                        && limiter.overflow == Overflow::Hold
                        && limiter.max_delay > Ticks::ZERO;
                    if hold {
                        let at = self.now + limiter.max_delay;
                        self.limiting.progress[req as usize].rejecting = true;
                        self.post(at, Lane::Normal, Event::LimiterResume(req));
                    } else {
                        self.respond(req, Outcome::Rejected(l));
                    }
                    return;
                }
            }
        }
        match self.limiting.progress[req as usize].stage {
            Stage::Gateway => self.gateway_forward(req),
            Stage::Middleware => {
                if self.limiting.enabled() && self.requests[req].caller.is_none() {
                    let member = self.requests[req].member;
                    self.limiting.members.entry(member).or_default().admitted += 1;
                }
                self.handle(req);
            }
        }
    }

    /// Limiter `l` counts `req` in its bucket and for its member, then decides.
    fn limiter_decide(&mut self, l: LimiterId, req: ReqId) -> Decision {
        let limiter = &self.model.limiters[l];
        let r = &self.requests[req];
        let access = r.access.unwrap_or(Access::Direct);
        let mut key = [u32::MAX; 4];
        for (k, f) in key.iter_mut().zip(&limiter.key) {
            *k = match f {
                Field::Client => r.client,
                Field::Member => r.member,
                Field::Route => r.route as u32,
                Field::Access => access as u32,
            };
        }
        let (member, route, now) = (r.member, r.route, self.now);
        let actor = &mut self.limiting.actors[l];
        let bucket = actor
            .buckets
            .entry(key)
            .or_insert_with(|| Bucket::new(limiter));
        let decision = decide(limiter, bucket, now);
        let tally = actor.members.entry(member).or_default();
        if decision == Decision::Reject {
            tally.1 += 1;
            actor.rejected += 1;
        } else {
            tally.0 += 1;
            actor.passed += 1;
        }
        if let Decision::Delay(at) = decision {
            actor.delayed += 1;
            actor.delay_total += at - now;
            actor.delay_max = actor.delay_max.max(at - now);
        }
        if self.requests[req].caller.is_none() {
            // per (route, access) pair: the coverage of client requests
            self.limiting.traffic[slot(route, access)].1[l] += 1;
        }
        decision
    }

    /// A request leaves limiter `l` now: the peak over any window_ms.
    fn record_pass(&mut self, l: LimiterId) {
        let window = self.model.limiters[l].window;
        let now = self.now;
        let actor = &mut self.limiting.actors[l];
        actor.recent.push_back(now);
        while actor.recent.front().is_some_and(|t| *t + window <= now) {
            actor.recent.pop_front();
        }
        actor.peak = actor.peak.max(actor.recent.len() as u64);
    }

    /// Counts a request's end: rejected (first reason) or not found.
    pub(super) fn limiting_outcome(&mut self, req: ReqId, outcome: Outcome) {
        if !self.limiting.enabled() {
            return;
        }
        let n = self.model.limiters.len();
        let member = self.requests[req].member;
        let tally = self.limiting.members.entry(member).or_default();
        match outcome {
            Outcome::Rejected(l) => {
                tally.rejected_by.resize(n, 0);
                tally.rejected_by[l] += 1;
            }
            Outcome::NotFound => tally.not_found += 1,
            _ => {}
        }
    }

    /// The run's limiter figures, with names.
    pub(super) fn limiting_results(&mut self) -> LimiterResults {
        if !self.limiting.enabled() {
            return LimiterResults::default();
        }
        let n = self.model.limiters.len();
        let symbols = &self.symbols;
        let name = |id: &u32| symbols.get(*id as usize).cloned().unwrap_or_default();
        let limiters = self
            .limiting
            .actors
            .iter()
            .map(|a| {
                let mut members: Vec<MemberCount> = a
                    .members
                    .iter()
                    .map(|(m, (passed, rejected))| MemberCount {
                        member: name(m),
                        passed: *passed,
                        rejected: *rejected,
                    })
                    .collect();
                members.sort_by(|x, y| natural_cmp(&x.member, &y.member));
                LimiterRun {
                    seen: a.passed + a.rejected,
                    passed: a.passed,
                    rejected: a.rejected,
                    delayed: a.delayed,
                    delay_total_ms: a.delay_total.as_ms(),
                    delay_max_ms: a.delay_max.as_ms(),
                    buckets: a.buckets.len() as u64,
                    peak_passed_in_window: a.peak,
                    members,
                }
            })
            .collect();
        let traffic = self
            .limiting
            .traffic
            .iter()
            .enumerate()
            .filter(|(_, (requests, _))| *requests > 0)
            .map(|(i, (requests, counted))| RouteTraffic {
                route: i / 2,
                access: Some(if i % 2 == 0 {
                    Access::Gateway
                } else {
                    Access::Direct
                }),
                requests: *requests,
                counted: counted.clone(),
            })
            .collect();
        let mut members: Vec<MemberOutcome> = self
            .limiting
            .members
            .iter()
            .map(|(m, t)| {
                let mut rejected_by = t.rejected_by.clone();
                rejected_by.resize(n, 0);
                MemberOutcome {
                    member: name(m),
                    requests: t.requests,
                    admitted: t.admitted,
                    rejected_by,
                    not_found: t.not_found,
                }
            })
            .collect();
        members.sort_by(|x, y| natural_cmp(&x.member, &y.member));
        LimiterResults {
            limiters,
            traffic,
            members,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LimiterMode, Refill};

    fn limiter(algorithm: Algorithm, limit: u64, window_ms: f64) -> Limiter {
        Limiter {
            name: "l".into(),
            algorithm,
            key: vec![],
            limit,
            window: Ticks::from_ms(window_ms),
            mode: LimiterMode::Reject,
            max_delay: Ticks::ZERO,
            refill: Refill::Continuous,
            overflow: Overflow::Hold,
        }
    }

    fn throttled(mut l: Limiter, max_delay_ms: f64) -> Limiter {
        l.mode = LimiterMode::Throttle;
        l.max_delay = Ticks::from_ms(max_delay_ms);
        l
    }

    /// Decisions for arrivals at `times_ms` on one bucket: "P", "R" or "D<ms>"
    /// (held, let through at that time).
    fn run(l: &Limiter, times_ms: &[f64]) -> Vec<String> {
        let mut b = Bucket::new(l);
        times_ms
            .iter()
            .map(|t| match decide(l, &mut b, Ticks::from_ms(*t)) {
                Decision::Pass => "P".to_string(),
                Decision::Reject => "R".to_string(),
                Decision::Delay(at) => format!("D{}", at.as_ms()),
            })
            .collect()
    }

    #[test]
    fn fixed_window_counts_per_aligned_window() {
        let l = limiter(Algorithm::FixedWindow, 2, 100.0);
        assert_eq!(
            run(&l, &[0., 10., 20., 99., 100., 150., 199., 200.]),
            ["P", "P", "R", "R", "P", "P", "R", "P"]
        );
        // the boundary burst: twice the limit within 15 ms
        assert_eq!(run(&l, &[90., 95., 100., 105.]), ["P", "P", "P", "P"]);
    }

    #[test]
    fn fixed_window_throttle_holds_to_the_next_free_window() {
        let l = throttled(limiter(Algorithm::FixedWindow, 2, 100.0), 100.0);
        assert_eq!(
            run(&l, &[0., 0., 0., 0., 0., 50., 150.]),
            // 3rd and 4th wait for window [100, 200); the 5th would wait 200 ms;
            // at 50 the next free window starts at 200 (150 ms > 100); at 150, 50 ms
            ["P", "P", "D100", "D100", "R", "R", "D200"]
        );
    }

    #[test]
    fn sliding_log_keeps_every_pass_for_a_window() {
        let l = limiter(Algorithm::SlidingLog, 2, 100.0);
        assert_eq!(
            run(&l, &[0., 50., 99., 100., 120., 150., 199.]),
            ["P", "P", "R", "P", "R", "P", "R"]
        );
        assert_eq!(run(&l, &[90., 95., 100., 105.]), ["P", "P", "R", "R"]);
        let t = throttled(l, 60.0);
        // 20 would wait until 100 (80 ms); 50 waits 50 ms; 60 queues behind it and
        // leaves when the pass at 10 has left the window (110)
        assert_eq!(
            run(&t, &[0., 10., 20., 50., 60.]),
            ["P", "P", "R", "D100", "D110"]
        );
    }

    #[test]
    fn sliding_counter_weighs_the_previous_window_by_overlap() {
        let l = limiter(Algorithm::SlidingCounter, 4, 100.0);
        // window 0 fills; in window 1 the estimate 4 x (100 - e)/100 + curr + 1 <= 4
        // first holds at e = 25, then 50, then 75
        assert_eq!(
            run(
                &l,
                &[
                    0., 10., 20., 30., 40., 110., 125., 130., 150., 160., 175., 180.
                ]
            ),
            ["P", "P", "P", "P", "R", "R", "P", "R", "P", "R", "P", "R"]
        );
        // throttled (30 ms): held requests leave at e = 25, 50, 75 in FIFO order; at
        // 175 the next room is at 200 (window 2, prev 3: 3 x 1 + 0 + 1 <= 4); after it
        // 3 x (100 - e)/100 + 1 + 1 <= 4 needs e >= 34 (234: 54 ms, too long)
        let t = throttled(l, 30.0);
        let got = run(
            &t,
            &[
                0., 10., 20., 30., 40., 110., 125., 130., 150., 160., 175., 180.,
            ],
        );
        assert_eq!(
            got,
            [
                "P", "P", "P", "P", "R", "D125", "D150", "R", "D175", "R", "D200", "R"
            ]
        );
    }

    #[test]
    fn token_bucket_refills_continuously_from_full() {
        let l = limiter(Algorithm::TokenBucket, 2, 100.0);
        // one token per 50 ms, two to start with, never more than two
        let seq = [0., 0., 0., 50., 60., 100., 200., 200., 200.];
        let want = ["P", "P", "R", "P", "R", "P", "P", "P", "R"];
        assert_eq!(run(&l, &seq), want);
        let t = throttled(l, 60.0);
        assert_eq!(
            run(&t, &[0., 0., 0., 0., 10., 45.]),
            ["P", "P", "D50", "R", "R", "D100"]
        );
    }

    #[test]
    fn token_bucket_discrete_adds_whole_tokens_at_aligned_instants() {
        let mut l = limiter(Algorithm::TokenBucket, 2, 100.0);
        let seq = [90., 90., 100., 140.];
        // continuous: empty at 90, the next whole token at 140
        assert_eq!(run(&l, &seq), ["P", "P", "R", "P"]);
        // discrete: a token lands at every multiple of 50 ms: 100 passes, 140 waits
        // for 150
        l.refill = Refill::Discrete;
        assert_eq!(run(&l, &seq), ["P", "P", "P", "R"]);
        let t = throttled(l, 20.0);
        assert_eq!(run(&t, &[90., 90., 100., 140.]), ["P", "P", "P", "D150"]);
    }

    #[test]
    fn gcra_matches_the_continuous_token_bucket() {
        let seq = [0., 0., 0., 50., 60., 100., 200., 200., 200., 230., 260.];
        let g = limiter(Algorithm::Gcra, 2, 100.0);
        let tb = limiter(Algorithm::TokenBucket, 2, 100.0);
        assert_eq!(
            run(&g, &seq),
            ["P", "P", "R", "P", "R", "P", "P", "P", "R", "R", "P"]
        );
        assert_eq!(run(&g, &seq), run(&tb, &seq));
        let gt = throttled(g, 60.0);
        let tbt = throttled(tb, 60.0);
        let seq = [0., 0., 0., 0., 10., 45.];
        assert_eq!(run(&gt, &seq), ["P", "P", "D50", "R", "R", "D100"]);
        assert_eq!(run(&gt, &seq), run(&tbt, &seq));
    }

    #[test]
    fn window_and_emission_interval_need_not_divide_evenly() {
        // 3 per 100 ms: GCRA's interval is 33.333... ms; no rounding drift
        let g = limiter(Algorithm::Gcra, 3, 100.0);
        let seq: Vec<f64> = (0..7).map(|i| 100.0 * i as f64).collect();
        assert!(run(&g, &seq).iter().all(|d| d == "P"));
        let tb = throttled(limiter(Algorithm::TokenBucket, 3, 100.0), 1000.0);
        let got = run(&tb, &[0., 0., 0., 0.]);
        assert_eq!(got[3], format!("D{}", Ticks(33_333_334).as_ms()));
    }

    #[test]
    fn natural_order_compares_digit_runs_as_numbers() {
        let mut v = vec!["u10", "u2", "u1", "toplu", "u02x"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["toplu", "u1", "u2", "u02x", "u10"]);
    }

    fn load(text: &str) -> crate::model::Model {
        let s = crate::scenario::load_str(
            text,
            std::path::Path::new("test.toml"),
            &crate::scenario::LoadOptions::default(),
        )
        .unwrap();
        s.rows[0].model.clone()
    }

    const STACK: &str = r#"
[scenario]
name = "stack"
[gateway]
rules = [ { prefix = "/a", limiters = ["g1", "both"] }, { prefix = "/a/x", limiters = ["g2", "g1"] } ]
[services.s]
routes = ["/a/x", "/b"]
middleware = ["both", "m"]
[limiters.g1]
limit = 1
window_ms = 1000
[limiters.g2]
limit = 5
window_ms = 1000
[limiters.both]
limit = 5
window_ms = 1000
[limiters.m]
limit = 2
window_ms = 1000
key = ["member"]
[workload]
type = "probe"
"#;

    #[test]
    fn chains_put_gateway_rules_first_and_count_each_limiter_once() {
        let m = load(STACK);
        let id = |n: &str| m.limiters.iter().position(|l| l.name == n).unwrap();
        let (g, mw) = chain_of(&m, 0, Access::Gateway);
        assert_eq!(g, [id("g1"), id("both"), id("g2")]);
        assert_eq!(mw, [id("m")]);
        let (g, mw) = chain_of(&m, 0, Access::Direct);
        assert!(g.is_empty());
        assert_eq!(mw, [id("both"), id("m")]);
        let (g, mw) = chain_of(&m, 1, Access::Gateway);
        assert!(g.is_empty(), "no rule prefix matches /b");
        assert_eq!(mw, [id("both"), id("m")]);
    }

    #[test]
    fn the_first_limiter_to_reject_is_the_reason_and_later_ones_never_see_it() {
        // g1 (limit 1) passes the first probe (/a/x via gateway) and rejects nothing
        // else: the second /a/x request goes direct. Run twice over /a/x via gateway.
        let text = STACK.replace(
            "type = \"probe\"",
            "type = \"script\"\naccess = \"gateway\"\ngroups = [ { member = \"u1\", count = 3, routes = [\"/a/x\"] } ]",
        );
        let m = load(&text);
        let r = crate::sim::run(&m, 0).unwrap();
        let id = |n: &str| m.limiters.iter().position(|l| l.name == n).unwrap();
        let lim = &r.limiters.limiters;
        assert_eq!((lim[id("g1")].passed, lim[id("g1")].rejected), (1, 2));
        // g1 rejected requests 2 and 3: `both`, g2 and m saw only the first
        for n in ["both", "g2", "m"] {
            assert_eq!(lim[id(n)].seen, 1, "{n}");
        }
        assert_eq!(r.rejected, 2);
        let u1 = &r.limiters.members[0];
        assert_eq!(u1.member, "u1");
        assert_eq!((u1.requests, u1.admitted), (3, 1));
        assert_eq!(u1.rejected_by[id("g1")], 2);
    }

    #[test]
    fn middleware_order_decides_which_bucket_a_rejected_request_uses() {
        // global (limit 3) and per-member (limit 1): u1 sends 3, then u2 sends 1
        let base = r#"
[scenario]
name = "order"
[services.s]
routes = ["/r"]
middleware = MIDDLEWARE
[limiters.global]
limit = 3
window_ms = 1000
[limiters.per-member]
limit = 1
window_ms = 1000
key = ["member"]
[workload]
type = "script"
groups = [ { member = "u1", count = 3 }, { member = "u2", count = 1 } ]
"#;
        let outcome = |mw: &str| {
            let m = load(&base.replace("MIDDLEWARE", mw));
            let r = crate::sim::run(&m, 0).unwrap();
            r.limiters
                .members
                .iter()
                .map(|o| (o.member.clone(), o.admitted, o.rejected_by.clone()))
                .collect::<Vec<_>>()
        };
        // per-member first: u1's extra requests never reach the global bucket
        assert_eq!(
            outcome(r#"["per-member", "global"]"#),
            [
                ("u1".to_string(), 1, vec![0, 2]),
                ("u2".to_string(), 1, vec![0, 0])
            ]
        );
        // global first: u1's rejected requests used the global bucket up
        assert_eq!(
            outcome(r#"["global", "per-member"]"#),
            [
                ("u1".to_string(), 1, vec![0, 2]),
                ("u2".to_string(), 0, vec![1, 0])
            ]
        );
    }

    #[test]
    fn a_throttle_hold_is_an_event_and_delays_the_response() {
        let text = r#"
[scenario]
name = "hold"
[services.s]
routes = ["/r"]
middleware = ["t"]
[limiters.t]
algorithm = "token-bucket"
limit = 1
window_ms = 100
mode = "throttle"
max_delay_ms = 250
[workload]
type = "open"
rate_rps = 1000
requests = 4
arrivals = "uniform"
"#;
        // arrivals at 0, 1, 2, 3 ms; passes at 0, 100, 200; the 4th would wait 297 ms
        let check = |text: &str, reject_ms: f64| {
            let m = load(text);
            let r = crate::sim::run(&m, 0).unwrap();
            assert_eq!((r.answered, r.rejected), (3, 1));
            let t = &r.limiters.limiters[0];
            assert_eq!((t.passed, t.delayed, t.rejected), (3, 2, 1));
            assert_eq!(t.delay_max_ms, 198.0);
            assert_eq!(t.delay_total_ms, 99.0 + 198.0);
            assert_eq!(t.peak_passed_in_window, 1);
            // the 429's response time, and the run ends with the last event
            let mut response = r.response.clone();
            assert_eq!(response.max_ms(), reject_ms.max(198.0));
            assert_eq!(response.quantile_ms(0.0), 0.0);
            assert_eq!(r.sim_time_ms, (3.0 + reject_ms).max(200.0));
        };
        // hold (default): held the full 250 ms, then rejected
        check(text, 250.0);
        // reject-now: the same decision, sent at once
        check(
            &text.replace(
                "max_delay_ms = 250",
                "max_delay_ms = 250\noverflow = \"reject-now\"",
            ),
            0.0,
        );
    }

    #[test]
    fn unowned_routes_answer_404_before_any_limiter() {
        let text = r#"
[scenario]
name = "404"
[gateway]
rules = [ { prefix = "/", limiters = ["g"] } ]
[services.s]
routes = ["/r"]
middleware = ["g"]
[limiters.g]
limit = 100
window_ms = 1000
[workload]
type = "probe"
unowned_routes = ["/gone"]
"#;
        let m = load(text);
        let r = crate::sim::run(&m, 0).unwrap();
        assert_eq!((r.requests, r.answered, r.not_found), (4, 2, 2));
        assert_eq!(r.limiters.limiters[0].seen, 2);
        let counted: Vec<(usize, u64)> = r
            .limiters
            .traffic
            .iter()
            .map(|t| (t.route, t.counted[0]))
            .collect();
        assert_eq!(counted, [(0, 1), (0, 1), (1, 0), (1, 0)]);
    }
}
