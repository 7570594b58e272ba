//! Which instance of a service a request goes to: its one instance, or with
//! `replicas = N` the one its balancer picks ([`crate::sim::balance`]) from the
//! replicas' outstanding requests (`view = "global"`) or from what the
//! request's caller alone has outstanding there (`view = "caller"`: the
//! caller is the request's workload, or the service instance whose call it
//! is). A pick the balancer hears again is kept until its request is over for
//! its caller (`Servers::balance_over`, from the notes `Responded`, `GaveUp` and
//! `CallerGone`), or with `release = "replica"` until the replica is done
//! with it (`Responded`, `HandlerLeft`; `Servers::balance_gave_up`
//! marks it given up meanwhile).

use super::super::balance::{Ejection, Picker, instance_key};
use super::super::vocab::{ReqId, slot_of};
use super::Servers;
use crate::engine::Ticks;
use crate::model::{Model, Service, ServiceId};

/// How a service's requests reach its instances.
pub(super) enum Route {
    /// One instance: `Servers::states[i]`.
    Single(usize),
    /// `n` instances from `Servers::states[first]`, picked by `balancer`.
    Replicated(Box<Balancing>),
}

/// The replicas of one service and how it picks among them.
pub(super) struct Balancing {
    pub(super) first: usize,
    n: usize,
    /// Picks among the replicas' outstanding counts (the global view, with
    /// the stream `balancer:<service>`), or among each caller's own.
    pub(super) picker: Picker,
    /// The replicas' outstanding counts as the balancer is shown them, made
    /// at each pick (the instances keep their own counts, on their hot path).
    pub(super) view: Vec<u32>,
    /// When each replica's count last changed, made at each pick for a
    /// balancer that reads it (`tie_break = "first_reached"`).
    since: Option<Vec<u64>>,
}

/// `Servers::replica_of` for a request waiting in the queue in front of the
/// replicas (`max_conn`): it is at no instance yet.
pub(super) const AT_PROXY: u32 = u32::MAX;

/// A pick the picker hears again when it is over for its caller
/// ([`Picker::listens`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Picked {
    service: ServiceId,
    /// The caller's key, in the caller view.
    caller: Option<u64>,
    /// The replica, from 0.
    replica: u32,
    /// When it was sent there.
    at: Ticks,
    /// Its caller gave up on it while it is held (`release = "replica"`).
    given_up: bool,
}

/// A service's ejections per view, its sweep interval and its picks per
/// interval and replica (`Route::ejections`).
pub(super) type Ejected = (Vec<(String, Ejection)>, (Ticks, Vec<u64>));

impl Route {
    /// The route to `service`'s `n` instances, from `first` in the states.
    pub(super) fn new(
        model: &Model,
        replication: u64,
        service: &Service,
        first: usize,
        n: usize,
    ) -> Route {
        if n == 1 {
            Route::Single(first)
        } else {
            let picker = Picker::new(
                &service.balancer,
                &service.balance,
                n,
                (model.seed, replication),
                &service.name,
            );
            Route::Replicated(Box::new(Balancing {
                first,
                n,
                since: picker.reads_since().then(|| Vec::with_capacity(n)),
                picker,
                view: Vec::with_capacity(n),
            }))
        }
    }

    /// Whether its picks are heard when they are over.
    pub(super) fn listens(&self) -> bool {
        matches!(self, Route::Replicated(b) if b.picker.listens())
    }

    /// Whether its picks are held until the replica is done with them
    /// (`release = "replica"`).
    fn holds(&self) -> bool {
        matches!(self, Route::Replicated(b) if b.picker.holds())
    }

    /// Its ejections up to the run's `end`, per view, and every view's picks
    /// per sweep interval and replica (None without `outlier_detection`).
    pub(super) fn ejections(&mut self, end: Ticks) -> Option<Ejected> {
        match self {
            Route::Replicated(b) if b.picker.ejects() => {
                Some((b.picker.ejections(end), b.picker.sent()))
            }
            _ => None,
        }
    }
}

impl Servers {
    /// Whether `service`'s balancer holds its picks until the replica is
    /// done with them (`release = "replica"`).
    fn holds(&self, service: ServiceId) -> bool {
        self.by_service[service].as_ref().is_some_and(Route::holds)
    }

    /// The instance `req` of `service` is at (it has one).
    #[inline]
    pub(in crate::sim) fn state_of(&self, service: ServiceId, req: ReqId) -> Option<usize> {
        match self.by_service[service].as_ref()? {
            Route::Single(i) => Some(*i),
            Route::Replicated(_) => self
                .replica_of
                .get(req as usize)
                .filter(|&&i| i != AT_PROXY)
                .map(|&i| i as usize),
        }
    }

    /// The replica of `service` its balancer picks for `req` at `now`, from
    /// the replicas' outstanding counts now (or, `caller` given, from what
    /// that caller has outstanding, `name` naming it); noted for the
    /// request's later events.
    #[inline(never)]
    pub(in crate::sim) fn pick(
        &mut self,
        service: ServiceId,
        req: ReqId,
        now: Ticks,
        caller: Option<(u64, &dyn Fn() -> String)>,
    ) -> usize {
        let Some(Route::Replicated(b)) = self.by_service[service].as_mut() else {
            unreachable!("service {service} has one instance");
        };
        let k = match caller {
            Some((key, name)) => b.picker.pick_for(key, name, now),
            None => {
                b.fill(&self.states);
                b.picker.pick(&b.view, now)
            }
        };
        self.picked(service, req, k, now, caller.map(|(key, _)| key))
    }

    /// `req` of `service` goes to replica `k` at `now` (picked by `caller`,
    /// in the caller view): a pick the picker hears again is kept, and the
    /// request's instance noted. Its instance.
    pub(super) fn picked(
        &mut self,
        service: ServiceId,
        req: ReqId,
        k: usize,
        now: Ticks,
        caller: Option<u64>,
    ) -> usize {
        let Some(Route::Replicated(b)) = self.by_service[service].as_ref() else {
            unreachable!("service {service} has one instance");
        };
        if b.picker.listens() {
            self.picks.insert(
                req,
                Picked {
                    service,
                    caller,
                    replica: k as u32,
                    at: now,
                    given_up: false,
                },
            );
        }
        let i = b.first + k;
        self.set_replica_of(req, i as u32);
        i
    }

    /// Notes that `req` is at instance `i` (or [`AT_PROXY`]).
    pub(super) fn set_replica_of(&mut self, req: ReqId, i: u32) {
        *slot_of(&mut self.replica_of, req, || 0) = i;
    }
}

impl Balancing {
    /// The global view's counts (and, for a balancer that reads them, when
    /// each last changed, given to the picker), from the instances.
    #[inline]
    pub(super) fn fill(&mut self, states: &[super::Instance]) {
        let replicas = &states[self.first..self.first + self.n];
        self.view.clear();
        self.view.extend(replicas.iter().map(|s| s.outstanding));
        if let Some(since) = &mut self.since {
            since.clear();
            since.extend(replicas.iter().map(|s| s.since));
            self.picker.since(since);
        }
    }
}

/// Where a new request of a service goes ([`Servers::route`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pick {
    /// The service's one instance.
    One(usize),
    /// One of its replicas, picked by its balancer ([`Servers::pick`]); with
    /// `by_caller`, from what the request's caller has outstanding (the
    /// caller view, which needs the caller's key).
    Balance { by_caller: bool },
    /// A replica with room, or the queue in front of them (`max_conn`:
    /// [`Servers::place`]).
    Limited,
}

impl Servers {
    /// Where a new request of `service` goes (None: no server serves it).
    #[inline]
    pub(in crate::sim) fn route(&self, service: ServiceId) -> Option<Pick> {
        match self.by_service[service].as_ref()? {
            Route::Single(i) => Some(Pick::One(*i)),
            Route::Replicated(b) if b.picker.limited() => Some(Pick::Limited),
            Route::Replicated(b) => Some(Pick::Balance {
                by_caller: b.picker.by_caller(),
            }),
        }
    }

    /// The key of the service instance that `req` of `service` runs in, as a
    /// caller view counts a call it makes.
    pub(in crate::sim) fn branch_key(&self, service: ServiceId, req: ReqId) -> u64 {
        let replica = self
            .state_of(service, req)
            .and_then(|i| self.states[i].replica)
            .unwrap_or(0);
        instance_key(service, replica)
    }

    /// A pick is over for its caller at `now` (`req` answered, failed, or
    /// given up on): its picker hears it, when it listens, and its outlier
    /// detection whether it `failed`.
    #[inline(never)]
    pub(in crate::sim) fn balance_over(&mut self, req: ReqId, failed: bool, now: Ticks) {
        let Some(p) = self.picks.remove(&req) else {
            return;
        };
        let failed = failed || p.given_up;
        if let Some(Route::Replicated(b)) = self.by_service[p.service].as_mut() {
            b.picker
                .done(p.caller, p.replica as usize, now, now.saturating_sub(p.at));
            if b.picker.ejects() {
                b.picker.heard(p.caller, p.replica as usize, now, failed);
            }
        }
    }

    /// The caller of `req` gave up on it at `now`: its pick is over for its
    /// balancer, or, where the balancer holds picks until the replica is done
    /// with them (`release = "replica"`), marked given up (a failure for
    /// outlier detection) and kept.
    pub(in crate::sim) fn balance_gave_up(&mut self, req: ReqId, now: Ticks) {
        let Servers {
            picks, by_service, ..
        } = self;
        if let Some(p) = picks.get_mut(&req)
            && by_service[p.service].as_ref().is_some_and(Route::holds)
        {
            p.given_up = true;
            return;
        }
        self.balance_over(req, true, now);
    }

    /// The replica is done with `req` at `now` without answering it (it left
    /// the queue, or its handler gave the work up): a held pick is over, as a
    /// failure.
    pub(in crate::sim) fn balance_left(&mut self, req: ReqId, now: Ticks) {
        if let Some(p) = self.picks.get(&req)
            && self.holds(p.service)
        {
            self.balance_over(req, true, now);
        }
    }

    /// The instances of `service`, as indices into the states.
    pub(in crate::sim) fn instances(&self, service: ServiceId) -> std::ops::Range<usize> {
        match self.by_service[service].as_ref() {
            Some(Route::Single(i)) => *i..*i + 1,
            Some(Route::Replicated(b)) => b.first..b.first + b.n,
            None => 0..0,
        }
    }
}
