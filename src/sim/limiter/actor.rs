//! The limiter actor: the chain of limiters each request meets, its place in that
//! chain, throttle holds (`LimiterResume`), and the tallies behind the results.

use super::admission::{Admission, Admitted, Decision, Held};
use super::admitter::Admitter;
use super::concurrency::track::Track;
use super::windows::Windows;
use crate::engine::Ticks;
use crate::model::{
    Access, Field, LimiterId, LimiterMode, Model, Overflow, RouteId, Scope, ServiceId,
};
use crate::sim::context::Timers;
use crate::sim::request::{NO_ROUTE, Request};
use crate::sim::vocab::{Event, FastMap, Outcome, ReqId, slot_of};
use std::collections::VecDeque;

/// Where a request is on its way past the limiters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Stage {
    #[default]
    Gateway,
    Middleware,
    /// The middleware limiters kept per replica (`scope = "replica"`), met
    /// once the balancer picked the replica.
    Replica,
}

/// A request's place in its limiter chain.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    stage: Stage,
    pos: u32,
    /// Held only to be rejected when the hold ends (`overflow = "hold"`).
    rejecting: bool,
    /// At the replica stage: the replica, from 1 (0: none).
    replica: u32,
}

/// The limiters one (route, access) pair meets, in order.
#[derive(Debug, Clone, Default)]
struct Chain {
    gateway: Vec<LimiterId>,
    middleware: Vec<LimiterId>,
    /// The middleware limiters kept per replica of a replicated service.
    replica: Vec<LimiterId>,
}

/// A service's middleware split by scope: (met before the balancer's pick,
/// met at the picked replica). The second is empty unless the service has
/// replicas and a limiter kept per replica.
fn split_middleware(model: &Model, service: ServiceId, list: &[LimiterId]) -> Chain {
    let replicated = model.services[service].replicas > 1;
    let (replica, middleware) = list
        .iter()
        .partition(|&&l| replicated && model.limiters[l].scope == Scope::Replica);
    Chain {
        gateway: Vec::new(),
        middleware,
        replica,
    }
}

/// One limiter's buckets and counts during a run.
#[derive(Debug, Clone, Default)]
pub(super) struct LimiterActor {
    /// (Bucket key, replica from 1 or 0) -> its state's index in `states`.
    keys: FastMap<[u32; 5], u32>,
    /// One admission state per bucket key (and replica, kept per replica),
    /// in the order the keys appeared.
    pub(super) states: Vec<Admitter>,
    /// Each state's replica, from 1 (0: a state of the whole service); kept
    /// only for a concurrency limiter kept per replica.
    pub(super) state_replica: Vec<u32>,
    /// A concurrency limiter kept per replica: its limit and in flight over
    /// time per replica (index: replica - 1).
    pub(super) replica_tracks: Vec<Track>,
    /// The same limiter's [passed, rejected] per replica.
    pub(super) replica_counts: Vec<[u64; 2]>,
    /// member -> (passed, rejected)
    pub(super) members: FastMap<u32, (u64, u64)>,
    pub(super) passed: u64,
    pub(super) rejected: u64,
    pub(super) delayed: u64,
    pub(super) delay_total: Ticks,
    pub(super) delay_max: Ticks,
    /// Pass times within the last window, for the peak.
    recent: VecDeque<Ticks>,
    pub(super) peak: u64,
    /// Passes and rejects per time-series window (with a time series).
    pub(super) windows: Windows,
    /// A concurrency limiter's limit and in flight over time (None: a rate
    /// limiter).
    pub(super) track: Option<Box<Track>>,
}

/// End-to-end outcomes of one member's requests.
#[derive(Debug, Clone, Default)]
pub(super) struct MemberTally {
    pub(super) requests: u64,
    pub(super) admitted: u64,
    pub(super) rejected_by: Vec<u64>,
    pub(super) not_found: u64,
}

/// Every limiter's state for one run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Limiting {
    pub(super) actors: Vec<LimiterActor>,
    /// Each request's place in its chain, by request id.
    progress: Vec<Progress>,
    /// Indexed by `route * 2 + access`.
    chains: Vec<Chain>,
    /// Per service, its middleware split by scope: the chain of a call into
    /// a service that owns no route.
    services: Vec<Chain>,
    /// (requests, counted per limiter), indexed like `chains`.
    pub(super) traffic: Vec<(u64, Vec<u64>)>,
    pub(super) members: FastMap<u32, MemberTally>,
    /// The time series' window: each limiter counts its decisions per window.
    pub(super) window: Option<Ticks>,
    /// The admissions each request holds until it is done.
    held: Held,
    /// The run's seed and replication, for the random streams of the
    /// concurrency algorithms that draw.
    seed: u64,
    replication: u64,
    /// Under test: every admission and done notice, checked by the tests.
    #[cfg(test)]
    pub(crate) ledger: super::admission::Ledger,
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
    /// The largest window log any limiter keeps for its peak (passes within the
    /// last `window_ms`), with the limiter's index: held memory the runaway
    /// check bounds.
    pub fn largest_window_log(&self) -> Option<(usize, u64)> {
        self.actors
            .iter()
            .enumerate()
            .map(|(i, a)| (i, a.recent.len() as u64))
            .max_by_key(|&(_, n)| n)
    }

    pub fn new(model: &Model, replication: u64) -> Limiting {
        if model.limiters.is_empty() {
            return Limiting::default();
        }
        let mut chains = Vec::new();
        for route in 0..model.routes.len() {
            for access in [Access::Gateway, Access::Direct] {
                let (gateway, middleware) = chain_of(model, route, access);
                let split = match model.routes[route].service {
                    Some(s) => split_middleware(model, s, &middleware),
                    None => Chain::default(),
                };
                chains.push(Chain { gateway, ..split });
            }
        }
        let services: Vec<Chain> = (model.services.iter().enumerate())
            .map(|(s, svc)| split_middleware(model, s, &svc.middleware))
            .collect();
        let n = model.limiters.len();
        let window = crate::sim::timeseries::window_of(model);
        let mut actors = vec![LimiterActor::default(); n];
        for (id, (a, l)) in actors.iter_mut().zip(&model.limiters).enumerate() {
            // the replicas of the service whose middleware keeps it per replica
            let replicas = (services.iter().zip(&model.services))
                .filter(|(c, _)| c.replica.contains(&id))
                .map(|(_, s)| s.replicas as usize)
                .max()
                .unwrap_or(0);
            if window.is_some() {
                a.windows.replicas = vec![Vec::new(); replicas];
            }
            if l.concurrency().is_some() {
                a.track = Some(Box::new(Track::new(window)));
                a.replica_tracks = vec![Track::new(window); replicas];
                a.replica_counts = vec![[0, 0]; replicas];
            }
        }
        Limiting {
            actors,
            progress: Vec::new(),
            traffic: vec![(0, vec![0; n]); chains.len()],
            chains,
            services,
            members: FastMap::default(),
            window,
            held: Held::default(),
            seed: model.seed,
            replication,
            #[cfg(test)]
            ledger: Default::default(),
        }
    }

    pub(in crate::sim) fn enabled(&self) -> bool {
        !self.actors.is_empty()
    }

    /// `req` starts walking `stage` of its chain (at `replica`, from 1, or 0).
    fn enter(&mut self, req: ReqId, stage: Stage, replica: u32) {
        *slot_of(&mut self.progress, req, Progress::default) = Progress {
            stage,
            replica,
            ..Progress::default()
        };
    }

    /// Whether `service`'s middleware has limiters kept per replica, met
    /// once its balancer picked the replica.
    #[inline]
    pub(in crate::sim) fn per_replica(&self, service: ServiceId) -> bool {
        self.services
            .get(service)
            .is_some_and(|c| !c.replica.is_empty())
    }

    /// `req` was let through at `at` by state `state` of limiter `limiter`: it
    /// holds that admission until it is done.
    /// `in_flight`: a concurrency limit's count right after it let `req` in.
    fn admit(&mut self, req: ReqId, limiter: LimiterId, state: u32, at: Ticks, in_flight: u32) {
        let a = Admitted {
            limiter,
            state,
            at,
            in_flight,
            #[cfg(test)]
            serial: self.ledger.admit(req),
        };
        self.held.push(req, a);
    }
}

/// Where a request's walk past the limiters of its current stage ends
/// ([`Limiting::walk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// Through every limiter of the gateway's stage: on to the service.
    ToService,
    /// Through every limiter of the service's middleware: to its handler.
    ToHandler,
    /// Through every limiter of its replica: into that replica.
    ToReplica,
    /// A limiter delays it, or a throttle holds it to reject it later: its
    /// `LimiterResume` is set.
    Held,
    /// Rejected by this limiter now.
    Reject(LimiterId),
}

/// What the end of a hold means for a request ([`Limiting::resume`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resumed {
    /// It was held to be rejected by this limiter: rejected now.
    Reject(LimiterId),
    /// It passed the limiter that delayed it: the rest of its stage follows.
    Passed,
    /// It is at no limiter.
    Nothing,
}

impl Limiting {
    /// Counts a new request `r` for the per-member and per-pair tallies.
    /// (This and the other notices of a request's life below are given only
    /// when the model has limiters: [`Limiting::enabled`].)
    #[inline(always)]
    pub(in crate::sim) fn sent(&mut self, r: &Request) {
        let access = r.access.unwrap_or(Access::Direct);
        self.traffic[slot(r.route, access)].0 += 1;
        self.members.entry(r.member).or_default().requests += 1;
    }

    /// `req` is at the gateway: it starts walking its matching rules' limiters.
    pub(in crate::sim) fn enter_gateway(&mut self, req: ReqId) {
        self.enter(req, Stage::Gateway, 0);
    }

    /// `req` is at its service: it starts walking the middleware limiters.
    pub(in crate::sim) fn enter_service(&mut self, req: ReqId) {
        self.enter(req, Stage::Middleware, 0);
    }

    /// `req`'s balancer picked `replica` (from 0): it starts walking the
    /// middleware limiters kept per replica.
    pub(in crate::sim) fn enter_replica(&mut self, req: ReqId, replica: u32) {
        self.enter(req, Stage::Replica, replica + 1);
    }

    /// A throttled request `req` (`r`) ends its hold at `now`: it passes the
    /// limiter that held it, or gets the 429 it was held for.
    pub(in crate::sim) fn resume(
        &mut self,
        model: &Model,
        req: ReqId,
        r: &Request,
        now: Ticks,
    ) -> Resumed {
        let Some(l) = self.chain_step(req, r) else {
            return Resumed::Nothing;
        };
        if self.progress[req as usize].rejecting {
            return Resumed::Reject(l);
        }
        self.record_pass(model, l, now);
        self.progress[req as usize].pos += 1;
        Resumed::Passed
    }

    /// The limiter the request is at, if its stage has one left.
    fn chain_step(&self, req: ReqId, r: &Request) -> Option<LimiterId> {
        let p = &self.progress[req as usize];
        let chain = if r.route == NO_ROUTE {
            // a call into a service that owns no route: its middleware alone
            self.services.get(r.service)?
        } else {
            self.chains.get(slot(r.route, r.access?))?
        };
        let list = match p.stage {
            Stage::Gateway => &chain.gateway,
            Stage::Middleware => &chain.middleware,
            Stage::Replica => &chain.replica,
        };
        list.get(p.pos as usize).copied()
    }

    /// Walks the rest of `req`'s current stage now, each limiter deciding in
    /// turn, and says where it ends; a delay or a hold sets the request's
    /// `LimiterResume`. A client's request through the middleware is counted
    /// as admitted for its member.
    pub(in crate::sim) fn walk(
        &mut self,
        t: &mut Timers,
        model: &Model,
        req: ReqId,
        r: &Request,
    ) -> Walk {
        let now = t.now();
        while let Some(l) = self.chain_step(req, r) {
            match self.decide(model, l, req, r, now) {
                Decision::Pass => {
                    self.record_pass(model, l, now);
                    self.progress[req as usize].pos += 1;
                }
                Decision::Delay(at) => {
                    t.post(at, Event::LimiterResume(req));
                    return Walk::Held;
                }
                Decision::Reject => {
                    let hold = model.limiters[l].rate().filter(|r| {
                        r.mode == LimiterMode::Throttle
                            && r.overflow == Overflow::Hold
                            && r.max_delay > Ticks::ZERO
                    });
                    if let Some(r) = hold {
                        self.progress[req as usize].rejecting = true;
                        t.post(now + r.max_delay, Event::LimiterResume(req));
                        return Walk::Held;
                    }
                    return Walk::Reject(l);
                }
            }
        }
        let count = |s: &mut Self| {
            if r.caller.is_none() {
                s.members.entry(r.member).or_default().admitted += 1;
            }
        };
        match self.progress[req as usize].stage {
            Stage::Gateway => Walk::ToService,
            Stage::Middleware if self.per_replica(r.service) => Walk::ToHandler,
            Stage::Middleware => {
                count(self);
                Walk::ToHandler
            }
            Stage::Replica => {
                count(self);
                Walk::ToReplica
            }
        }
    }

    /// Limiter `l` counts `req` (`r`) in its bucket and for its member, then
    /// decides at `now`.
    fn decide(
        &mut self,
        model: &Model,
        l: LimiterId,
        req: ReqId,
        r: &Request,
        now: Ticks,
    ) -> Decision {
        let limiter = &model.limiters[l];
        let access = r.access.unwrap_or(Access::Direct);
        let replica = match self.progress[req as usize].stage {
            Stage::Replica => self.progress[req as usize].replica,
            _ => 0,
        };
        let key = bucket_key(limiter, r, access, replica);
        let (member, route) = (r.member, r.route);
        let window = self.window;
        let (seed, replication) = (self.seed, self.replication);
        let actor = &mut self.actors[l];
        let states = &mut actor.states;
        let known = states.len();
        let state = *actor.keys.entry(key).or_insert_with(|| {
            let rng = || {
                let name = format!("limiter:{}:{}", limiter.name, states.len());
                crate::engine::stream(seed, replication, &name)
            };
            states.push(Admitter::new(limiter, rng));
            (states.len() - 1) as u32
        });
        if actor.track.is_some() && actor.state_replica.len() < actor.states.len() {
            actor.state_replica.push(replica);
        }
        // a concurrency limit (the limiters with a track) tells its count in
        // flight with the request let in, for the algorithm when it ends
        let (decision, in_flight) = match actor.track.as_deref_mut() {
            None => (actor.states[state as usize].try_admit(limiter, now), 0),
            Some(track) => {
                let s = &mut actor.states[state as usize];
                let before = if (state as usize) < known {
                    s.gauge()
                } else {
                    None
                };
                let d = s.try_admit(limiter, now);
                let mut in_flight = 0;
                if let Some(after) = s.gauge() {
                    track.change(now, before, after);
                    if replica > 0 {
                        actor.replica_tracks[replica as usize - 1].change(now, before, after);
                    }
                    in_flight = u32::try_from(after.1).unwrap_or(u32::MAX);
                }
                (d, in_flight)
            }
        };
        let tally = actor.members.entry(member).or_default();
        if decision == Decision::Reject {
            tally.1 += 1;
            actor.rejected += 1;
        } else {
            tally.0 += 1;
            actor.passed += 1;
        }
        if replica > 0
            && let Some(c) = actor.replica_counts.get_mut(replica as usize - 1)
        {
            c[usize::from(decision == Decision::Reject)] += 1;
        }
        if let Some(w) = window {
            let keyed = !limiter.key.is_empty();
            let rejected = decision == Decision::Reject;
            let key4 = [key[0], key[1], key[2], key[3]];
            actor.windows.count(w, now, key4, keyed, rejected);
            if replica > 0 {
                actor.windows.count_replica(w, now, replica, rejected);
            }
        }
        if let Decision::Delay(at) = decision {
            actor.delayed += 1;
            actor.delay_total += at - now;
            actor.delay_max = actor.delay_max.max(at - now);
        }
        if r.caller.is_none() {
            // per (route, access) pair: the coverage of client requests
            self.traffic[slot(route, access)].1[l] += 1;
        }
        match decision {
            Decision::Pass => self.admit(req, l, state, now, in_flight),
            Decision::Delay(at) => self.admit(req, l, state, at, in_flight),
            Decision::Reject => {}
        }
        decision
    }

    /// A request leaves limiter `l` at `now`: the peak over any window_ms.
    fn record_pass(&mut self, model: &Model, l: LimiterId, now: Ticks) {
        let window = model.limiters[l].peak_window();
        let actor = &mut self.actors[l];
        actor.recent.push_back(now);
        while actor.recent.front().is_some_and(|t| *t + window <= now) {
            actor.recent.pop_front();
        }
        actor.peak = actor.peak.max(actor.recent.len() as u64);
    }

    /// `req`'s handler gave its work up at `now`: every admission it holds
    /// hears it is done, as timed out.
    #[inline(always)]
    pub(in crate::sim) fn given_up(&mut self, model: &Model, req: ReqId, r: &Request, now: Ticks) {
        self.admissions_done(model, req, r, Outcome::TimedOut, now);
    }

    /// `req` (`r`) is answered with `outcome` at `now` (for every request,
    /// calls from other services too): every admission it holds hears it is
    /// done, once, and a client's request whose client still waits is counted
    /// for its member ([`Limiting::outcome`]).
    #[inline(never)]
    pub(in crate::sim) fn responded(
        &mut self,
        model: &Model,
        req: ReqId,
        r: &Request,
        outcome: Outcome,
        now: Ticks,
    ) {
        self.admissions_done(model, req, r, outcome, now);
        if !r.closed && r.caller.is_none() {
            let deeper = matches!(outcome, Outcome::Rejected(_)) && self.passed_chain(req, r);
            self.count_outcome(model, r, outcome, deeper);
        }
    }

    /// Every admission `req` holds hears it is done at `now`, with `outcome`.
    #[inline(never)]
    fn admissions_done(
        &mut self,
        model: &Model,
        req: ReqId,
        r: &Request,
        outcome: Outcome,
        now: Ticks,
    ) {
        #[cfg(not(test))]
        let _ = r;
        let Some(admitted) = self.held.of(req) else {
            return;
        };
        for a in admitted.drain(..) {
            let limiter = &model.limiters[a.limiter];
            let latency = now.saturating_sub(a.at);
            let actor = &mut self.actors[a.limiter];
            let state = &mut actor.states[a.state as usize];
            match actor.track.as_deref_mut() {
                None => state.on_done(limiter, now, latency, outcome, a.in_flight),
                Some(track) => {
                    let before = state.gauge();
                    state.on_done(limiter, now, latency, outcome, a.in_flight);
                    if let Some(after) = state.gauge() {
                        track.change(now, before, after);
                        let replica = actor.state_replica[a.state as usize];
                        if replica > 0 {
                            actor.replica_tracks[replica as usize - 1].change(now, before, after);
                        }
                    }
                }
            }
            #[cfg(test)]
            self.ledger
                .done(&a, req, r.caller.is_some(), latency, outcome);
        }
    }

    /// Under test: `req`'s slot is freed; it must hold no admission by then.
    #[cfg(test)]
    pub(in crate::sim) fn released(&mut self, req: ReqId) {
        if let Some(admitted) = self.held.of(req) {
            let n = admitted.len();
            self.ledger
                .faults
                .push(format!("request {req} released holding {n} admissions"));
        }
    }

    /// Counts the end of a client's call through its policy: rejected (first
    /// reason) or not found. (Its attempts walked the limiters, and a
    /// client's request through a policy is never counted admitted.)
    #[inline(always)]
    pub(in crate::sim) fn outcome(&mut self, model: &Model, r: &Request, outcome: Outcome) {
        self.count_outcome(model, r, outcome, false);
    }

    /// Whether `req` passed every limiter of its own chain (it reached its
    /// handler): a rejection it ends with came from a limiter of a service
    /// it called.
    fn passed_chain(&self, req: ReqId, r: &Request) -> bool {
        let reached = |p: &Progress| match p.stage {
            Stage::Gateway => false,
            Stage::Middleware => !self.per_replica(r.service),
            Stage::Replica => true,
        };
        self.progress.get(req as usize).is_some_and(reached) && self.chain_step(req, r).is_none()
    }

    /// Counts a client request's end for its member; `deeper`: it passed its
    /// own limiters and a limiter of a service it called refused it.
    fn count_outcome(&mut self, model: &Model, r: &Request, outcome: Outcome, deeper: bool) {
        let n = model.limiters.len();
        let tally = self.members.entry(r.member).or_default();
        match outcome {
            Outcome::Rejected(l) => {
                tally.rejected_by.resize(n, 0);
                tally.rejected_by[l] += 1;
                if deeper {
                    // admitted by its own limiters, refused by a callee's:
                    // rejected, no longer admitted
                    tally.admitted = tally.admitted.saturating_sub(1);
                }
            }
            Outcome::NotFound => tally.not_found += 1,
            _ => {}
        }
    }
}

/// The bucket key of request `r` (met with `access`) at `limiter`: its key
/// fields in order, unused places `u32::MAX`, and the replica (from 1; 0 for
/// a state kept per service).
#[inline]
fn bucket_key(
    limiter: &crate::model::Limiter,
    r: &Request,
    access: Access,
    replica: u32,
) -> [u32; 5] {
    let mut key = [u32::MAX, u32::MAX, u32::MAX, u32::MAX, replica];
    for (k, f) in key.iter_mut().zip(&limiter.key) {
        *k = match f {
            Field::Client => r.client,
            Field::Member => r.member,
            Field::Route => r.route as u32,
            Field::Access => access as u32,
        };
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(r.outcomes.rejected, 2);
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
            assert_eq!((r.outcomes.answered, r.outcomes.rejected), (3, 1));
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
        assert_eq!(
            (
                r.outcomes.requests,
                r.outcomes.answered,
                r.outcomes.not_found
            ),
            (4, 2, 2)
        );
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
