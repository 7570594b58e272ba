//! Server actor (IO22, IO23): a service that works on at most `slots` requests at
//! once and keeps up to `queue` more waiting, taken in arrival order (FIFO) unless
//! its queue discipline says otherwise (`order`, `codel`). A request that finds
//! every slot and every queue place taken is shed at once (503, load shedding).
//! With `abandon = true` a queued request is dropped when its client gives up:
//! the cancellation signal for queued work.
//!
//! Each admitted request carries its service demand, drawn from the service model
//! when it is admitted (from the server's own stream, `server:<service>`), so a
//! request dropped from the queue saves exactly the work it would have cost.
//!
//! The grant rule, as the seed's `kapasite.mjs`: occupancy = busy slots + queued
//! requests; occupancy >= slots + queue sheds, busy < slots starts at once, anything
//! else waits. A request admitted at occupancy k under a constant service time waits
//! floor(k / slots) rounds.
//!
//! A server with `branches` makes its calls after the service time, **still holding
//! its slot** (a worker blocked on its downstream calls), then answers: `error`
//! (Dropped) when a call below failed. A cancelled request (its caller gave up with
//! cancellation) leaves the queue, or stops its service or its calls and frees its
//! slot at once.
//!
//! With `replicas = N` each replica has its own slots, queue and stream
//! (`server:<service>#i` for i > 1) and a balancer picks one per request; the
//! service's figures add up its replicas', and each replica's own are kept too.
//!
//! The servers know nothing of the world: each step of a request's life here
//! is a method of [`Servers`] that says what became of it ([`Arrival`],
//! [`Released`], the waiter that takes a freed slot). A step is lent the
//! clock and the queue (`Timers`) to set and cancel the servers' own events
//! (a service's end, a queue timeout, a pause's edges) and reads the faults
//! it needs (`faults.rs`); the world gives the notes and answers the request
//! (`world/server.rs`).
//!
//! # Layout
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Servers`]: every instance of a run, its books, the per-request maps |
//! | `instance.rs` | one instance's slots and queue, and a request's life there |
//! | `queue/` | queue disciplines: `fifo`, `lifo`, `adaptive_lifo`, `codel`, one file each, behind one trait |
//! | `replicas.rs` | which instance a request goes to (a balancer of [`crate::sim::balance`] for replicas) |
//! | `proxy.rs` | the queue in front of replicas with `max_conn`: a request placed, queued, taken by a replica, or gone |
//! | `faults.rs` | what `down` and `slots` faults do to an instance's books and line |
//! | `stats.rs` | the figures per server and per replica ([`ServerStats`], [`ReplicaStats`]) |
//! | `tests.rs` | the server end to end, in a world of its own |

mod faults;
mod instance;
#[cfg(test)]
mod pause_tests;
mod proxy;
mod queue;
mod replicas;
pub(super) mod stats;
#[cfg(test)]
mod tests;

use super::ahead::Draws;
use crate::engine::{EventKey, Ticks};
use crate::model::{Handler, Model};
pub(crate) use faults::Started;
use instance::Instance;
pub(crate) use instance::{Arrival, Released, Waiting};
pub(crate) use proxy::Placement;
pub(crate) use replicas::Pick;
use replicas::{Picked, Route};
use stats::{ProxyStats, ReplicaStats, ServerStats};

/// Every server of a run.
pub(crate) struct Servers {
    states: Vec<Instance>,
    by_service: Vec<Option<Route>>,
    /// One per server, in service order.
    stats: Vec<ServerStats>,
    /// (arrived, started) of each request in service, by request id: kept here
    /// rather than in the completion event so that events stay small.
    in_service: Vec<(Ticks, Ticks)>,
    /// The instance each request of a replicated service went to, by request id.
    replica_of: Vec<u32>,
    /// Some balancer hears when its picks are over (`peak_ewma`, a caller
    /// view): then each such pick is kept here until then, by request id.
    pub(in crate::sim) listening: bool,
    picks: super::vocab::FastMap<super::vocab::ReqId, Picked>,
    /// Whether a request's service here may be stopped (`Model::cancels_work`):
    /// then each request's pending completion is kept, by request id.
    cancellable: bool,
    done_keys: Vec<Option<EventKey>>,
    /// Each queued request's queue timeout (CoDel, or the queue in front of
    /// replicas with `max_conn`), by request id.
    timeout_keys: Vec<Option<EventKey>>,
    /// The next stamp of an instance's count change (`Instance::since`).
    moves: u64,
}

impl Servers {
    /// Room for `more` requests in every server's books and lines, made now
    /// (see `World::reserve_ahead`).
    pub fn reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        for s in &mut self.states {
            s.line.reserve(more.min(s.line.waiting() + 1))?;
        }
        self.in_service.try_reserve(more)?;
        self.replica_of.try_reserve(more)?;
        self.done_keys.try_reserve(more)?;
        self.timeout_keys.try_reserve(more)
    }

    /// Every server's service times, for drawing ahead.
    pub fn draws(&mut self) -> impl Iterator<Item = &mut Draws> {
        self.states.iter_mut().map(|s| &mut s.draws)
    }

    pub fn new(model: &Model, replication: u64) -> Servers {
        let mut states = Vec::new();
        let mut stats = Vec::new();
        let by_service: Vec<Option<Route>> = model
            .services
            .iter()
            .enumerate()
            .map(|(service, s)| {
                let Handler::Server(server) = &s.handler else {
                    return None;
                };
                let first = states.len();
                let n = s.replicas.max(1) as usize;
                for i in 0..n {
                    let instance =
                        Instance::new(model, replication, service, server, (i, n), stats.len());
                    states.push(instance);
                }
                let limit = s.balance.conn_limit.filter(|_| n > 1);
                stats.push(ServerStats {
                    service,
                    replicas: vec![ReplicaStats::default(); if n > 1 { n } else { 0 }],
                    proxy: limit.map(|l| {
                        Box::new(ProxyStats {
                            max_conn: l.max_conn,
                            ..ProxyStats::default()
                        })
                    }),
                    ..ServerStats::default()
                });
                Some(Route::new(model, replication, s, first, n))
            })
            .collect();
        // a cancelling caller or a `down` fault may stop running work
        let cancellable = model.cancels_work();
        let listening = by_service.iter().flatten().any(Route::listens);
        Servers {
            moves: states.len() as u64,
            listening,
            picks: super::vocab::FastMap::default(),
            states,
            by_service,
            stats,
            in_service: Vec::new(),
            replica_of: Vec::new(),
            cancellable,
            done_keys: Vec::new(),
            timeout_keys: Vec::new(),
        }
    }

    /// Every server's figures, for the time series to read its levels and counts
    /// at a window's end (`World::series_roll`).
    pub fn stats(&self) -> &[ServerStats] {
        &self.stats
    }

    /// Every server's figures, to start them again when the warm-up ends
    /// (`observe::restart_server`).
    pub fn stats_mut(&mut self) -> &mut [ServerStats] {
        &mut self.stats
    }

    /// End of run: time averages over the whole run, and every server's figures.
    pub fn finish(mut self, end: Ticks) -> Vec<ServerStats> {
        let mut stats = self.stats;
        for st in &mut stats {
            st.finish(end);
            if let Some(route) = self.by_service[st.service].as_mut()
                && let Some((ejections, (interval, sent))) = route.ejections(end)
            {
                st.ejected(ejections, interval, &sent, end);
            }
        }
        stats
    }
}
