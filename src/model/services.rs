//! The system: the gateway, routes, services with their handlers and servers, and
//! dependencies.

use super::{Latency, LimiterId, Plan, RouteId, ServiceId};
use crate::engine::Ticks;
pub use crate::kinds::balance::{Balancer, TieBreak};

/// `[gateway]`: the edge in front of the services.
#[derive(Debug, Clone, PartialEq)]
pub struct Gateway {
    /// Latency the gateway consumes (`share_ms`), in ticks.
    pub share: Ticks,
    /// The same latency in milliseconds.
    pub share_ms: f64,
    /// Limiters for gateway requests, by route prefix.
    pub rules: Vec<GatewayRule>,
}

/// One `gateway.rules` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayRule {
    /// Routes starting with this prefix are matched.
    pub prefix: String,
    /// Limiters applied to matched gateway requests, in order.
    pub limiters: Vec<LimiterId>,
}

/// A route a workload can send to.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// The route as written (starts with `/`).
    pub path: String,
    /// The service that owns the route; `None` for a route a workload names on
    /// purpose that no service owns (answered 404, counted by no limiter).
    pub service: Option<ServiceId>,
}

/// One `[services.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// `NAME`.
    pub name: String,
    /// The routes it owns.
    pub routes: Vec<RouteId>,
    /// Limiters applied to every request it gets (`middleware`), in order.
    pub middleware: Vec<LimiterId>,
    /// What it does with a request.
    pub handler: Handler,
    /// Typical time of a call into it, for a caller's `weighted` split.
    pub median_ms: Option<f64>,
    /// Instances, each with its own slots and queue (servers); 1 for others.
    pub replicas: u32,
    /// How a request picks its replica.
    pub balancer: Balancer,
    /// The balancer's keys beyond its kind (`balancer = { kind = ..., ... }`).
    pub balance: BalanceKeys,
    /// `[services.NAME.replica.K]`: replicas with settings of their own, in
    /// replica order (empty: every replica as the service says).
    pub replica_settings: Vec<ReplicaSettings>,
}

/// `[services.NAME.replica.K]`: one server replica's own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaSettings {
    /// The replica, 0-based (K - 1).
    pub replica: u32,
    /// Its service times are multiplied by this (`latency_factor`).
    pub latency_factor: f64,
    /// ... and then this is added (`latency_add_ms`).
    pub latency_add: Ticks,
    /// Its own service-time model (`service`; None: the service's).
    pub service: Option<Latency>,
    /// Its own slot count (`slots`; None: the service's).
    pub slots: Option<u32>,
}

impl ReplicaSettings {
    /// Whether its service times differ from the drawn ones by a factor or an
    /// addition.
    pub fn stretches(&self) -> bool {
        self.latency_factor != 1.0 || self.latency_add > Ticks::ZERO
    }
}

/// Whose counts a balancer reads (`view`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BalanceView {
    /// The replicas' own counts of requests in slots and in line: one balancer
    /// for every caller.
    #[default]
    Global,
    /// Each caller (a workload, or the calling service's instance) keeps its
    /// own balancer, counts of what it alone has outstanding at each replica,
    /// and (`peak_ewma`) its own costs: a proxy beside each client.
    Caller,
}

/// When a pick stops counting for its balancer and what it teaches
/// (`release`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BalanceRelease {
    /// When its request is over for its caller: answered, failed, or given up
    /// on (a proxy that hears its client give up).
    #[default]
    Caller,
    /// When the replica is done with it: a request its caller gave up on
    /// still counts until the replica answers it (or drops it), and the
    /// replica's whole time is what `peak_ewma` learns; a proxy that does not
    /// hear its client give up, the timeout sitting in the application above
    /// it.
    Replica,
}

/// A balancer's keys every kind takes (the kind's own are in its
/// [`Balancer`] value).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BalanceKeys {
    /// Whose counts it reads (`view`).
    pub view: BalanceView,
    /// When a pick stops counting (`release`).
    pub release: BalanceRelease,
    /// A connection limit per replica with one queue in front of them all
    /// (`max_conn`, `max_queue`, `queue_timeout_ms`; services only).
    pub conn_limit: Option<ConnLimit>,
    /// Outlier ejection (`services.NAME.outlier_detection`), read by each
    /// view of the balancer.
    pub outlier: Option<Outlier>,
}

/// HAProxy's `maxconn` per server with the backend's queue: a replica holding
/// `max_conn` requests takes no more, and a request that finds no replica
/// with room waits in one queue in front of them until one has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimit {
    /// Requests a replica holds at most (in its slots and its own queue).
    pub max_conn: u32,
    /// Places in the queue in front of the replicas (None: no limit); a
    /// request that finds it full is refused (503).
    pub max_queue: Option<u32>,
    /// How long a request waits there at most before it is refused (503;
    /// HAProxy's `timeout queue`). None: until a replica has room.
    pub queue_timeout: Option<Ticks>,
}

/// Envoy's consecutive-failure outlier detection
/// (`services.NAME.outlier_detection`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlier {
    /// Failures in a row (error answers, shed, timeouts) that eject a replica.
    pub consecutive_failures: u32,
    /// The sweep period: ejections that are over end at the next sweep.
    pub interval: Ticks,
    /// The k-th ejection in a row lasts k x this (within `max_ejection`).
    pub base_ejection: Ticks,
    /// An ejection lasts at most this (Envoy's `max_ejection_time`).
    pub max_ejection: Ticks,
    /// An ejection is refused when it would leave more than this share (%) of
    /// the replicas ejected.
    pub max_ejection_pct: f64,
    /// One replica may be ejected whatever `max_ejection_pct` says (Envoy's
    /// `always_eject_one_host`).
    pub always_eject_one: bool,
}

/// What a service does with a request (`handler.type`).
#[derive(Debug, Clone, PartialEq)]
pub enum Handler {
    /// Answers at once.
    Respond,
    /// Slots and a FIFO queue, then optional calls (`server`).
    Server(Server),
    /// A deadline-budgeted fan-out of calls (`plan`).
    Plan(Plan),
}

impl Handler {
    /// The calls it makes, if any: a plan handler's plan, or a server's.
    pub fn plan(&self) -> Option<&Plan> {
        match self {
            Handler::Plan(p) => Some(p),
            Handler::Server(server) => server.plan.as_ref(),
            Handler::Respond => None,
        }
    }
}

/// A `server` handler.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    /// Requests served at once, per replica.
    pub slots: u32,
    /// FIFO places beyond the slots; a request arriving when both are full is shed.
    pub queue: u32,
    /// Service time model, drawn when a request is admitted.
    pub service: Latency,
    /// When its client gives up, drop a request still in the queue.
    pub abandon: bool,
    /// Calls made after the service time, while the request still holds its slot.
    pub plan: Option<Plan>,
    /// Which queued request a freed slot takes.
    pub order: QueueOrder,
    /// CoDel queue timeouts (Facebook "Fail at Scale").
    pub codel: Option<Codel>,
}

/// Which queued request a freed slot takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueOrder {
    /// The oldest (first in, first out).
    #[default]
    Fifo,
    /// The newest (last in, first out).
    Lifo,
    /// LIFO while the queue has not been empty within the last
    /// `codel.interval_ms` (100 ms without `codel`), else FIFO.
    AdaptiveLifo,
}

impl QueueOrder {
    /// Names as written in scenario files.
    pub const NAMES: [(&'static str, QueueOrder); 3] = [
        ("fifo", QueueOrder::Fifo),
        ("lifo", QueueOrder::Lifo),
        ("adaptive_lifo", QueueOrder::AdaptiveLifo),
    ];
}

/// CoDel as Facebook's "Fail at Scale" describes it: a queued request's queue
/// timeout is `target` while the queue has not been empty within the last
/// `interval`, else `interval`; past it the request is shed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codel {
    /// The queue timeout while the queue stands (`target_ms`).
    pub target: Ticks,
    /// How far back an empty queue counts, and the timeout then (`interval_ms`).
    pub interval: Ticks,
}

/// One `[dependencies.NAME]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dependency {
    /// `NAME`.
    pub name: String,
    /// Typical latency in ms, for a caller's `weighted` split.
    pub median_ms: Option<f64>,
    /// Latency model of a call.
    pub latency: Latency,
    /// Concurrent calls it works on; 0 = unlimited. Beyond it calls wait FIFO.
    pub slots: u32,
    /// The probability that a call fails with `error` after its drawn latency.
    pub error_rate: f64,
    /// Instances, each with its own slots, latency draws and faults (1: one).
    pub replicas: u32,
    /// How a call picks its replica (callers: the calling service instances).
    pub balancer: Balancer,
    /// The balancer's keys beyond its kind.
    pub balance: BalanceKeys,
}
