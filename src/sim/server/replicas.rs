//! Which instance of a service a request goes to: its one instance, or with
//! `replicas = N` the one its balancer picks ([`crate::sim::balance`]) from the
//! replicas' outstanding requests.

use super::super::balance::{self, Balance};
use super::super::{ReqId, World};
use super::Servers;
use crate::engine::stream;
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
    first: usize,
    n: usize,
    /// Picks among the replicas' outstanding counts, with its own stream
    /// (`balancer:<service>`).
    balancer: Box<dyn Balance>,
    /// The replicas' outstanding counts as the balancer is shown them, made
    /// at each pick (the instances keep their own counts, on their hot path).
    view: Vec<u32>,
}

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
            let rng = stream(
                model.seed,
                replication,
                &format!("balancer:{}", service.name),
            );
            Route::Replicated(Box::new(Balancing {
                first,
                n,
                balancer: balance::of(service.balancer, rng),
                view: Vec::with_capacity(n),
            }))
        }
    }
}

impl Servers {
    /// The instance `req` of `service` is at (it has one).
    #[inline]
    pub(super) fn state_of(&self, service: ServiceId, req: ReqId) -> Option<usize> {
        match self.by_service[service].as_ref()? {
            Route::Single(i) => Some(*i),
            Route::Replicated(_) => self.replica_of.get(req as usize).map(|&i| i as usize),
        }
    }

    /// The instance a new request of `service` goes to (the balancer's pick).
    #[inline]
    pub(super) fn pick(&mut self, service: ServiceId, req: ReqId) -> Option<usize> {
        match self.by_service[service].as_ref()? {
            Route::Single(i) => Some(*i),
            Route::Replicated(_) => Some(self.pick_replica(service, req)),
        }
    }

    /// The replica of `service` its balancer picks for `req`, from the
    /// replicas' outstanding counts now; noted for the request's later events.
    #[inline(never)]
    fn pick_replica(&mut self, service: ServiceId, req: ReqId) -> usize {
        let Some(Route::Replicated(b)) = self.by_service[service].as_mut() else {
            unreachable!("service {service} has one instance");
        };
        let replicas = &self.states[b.first..b.first + b.n];
        b.view.clear();
        b.view.extend(replicas.iter().map(|s| s.outstanding));
        let i = b.first + b.balancer.pick(&b.view);
        let map = &mut self.replica_of;
        if map.len() <= req as usize {
            map.resize(req as usize + 1, 0);
        }
        map[req as usize] = i as u32;
        i
    }
}

impl World<'_> {
    /// The instances of `service`, as indices into the states.
    pub(super) fn server_instances(&self, service: ServiceId) -> std::ops::Range<usize> {
        match self.servers.by_service[service].as_ref() {
            Some(Route::Single(i)) => *i..*i + 1,
            Some(Route::Replicated(b)) => b.first..b.first + b.n,
            None => 0..0,
        }
    }
}
