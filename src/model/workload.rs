//! Workloads: the requests the clients send, and when.

use super::{Access, Latency, RouteId};
use crate::engine::Ticks;

/// The fields one request carries (limiter keys are made of them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestTemplate {
    /// The route it is sent to.
    pub route: RouteId,
    /// Gateway or direct.
    pub access: Access,
    /// The `client` label.
    pub client: String,
    /// The `member` label.
    pub member: String,
}

/// How an open workload spaces its arrivals (`arrivals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process), starting one gap after the start.
    Poisson,
    /// Evenly spaced, the first at the start.
    Uniform,
}

/// What a workload sends, and when (`type`).
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// One request at a time; the next when the previous has its answer.
    Sequence {
        /// Requests sent in all.
        requests: u64,
        /// The fields of every request.
        template: RequestTemplate,
    },
    /// Open-loop arrivals at a rate.
    Open {
        /// Independent clients splitting the rate and `requests` (`clients`).
        clients: u64,
        /// Arrival rate, in requests per second (all clients together).
        rate_rps: f64,
        /// Requests sent in all (split among the clients), if bounded.
        requests: Option<u64>,
        /// Arrivals stop this long after the start (`duration_ms`), if bounded.
        duration: Option<Ticks>,
        /// Poisson or evenly spaced.
        arrivals: Arrivals,
        /// The client gives up this long after sending (`timeout_ms`).
        timeout: Option<Ticks>,
        /// The fields of every request.
        template: RequestTemplate,
    },
    /// A closed population: `users` each send, wait for the answer, think, send
    /// again, until `requests` are sent or `duration` has passed.
    Closed {
        /// Users in the population.
        users: u64,
        /// Think time between an answer and the next send.
        think: Latency,
        /// Requests sent in all, if bounded.
        requests: Option<u64>,
        /// Sending stops this long after the start (`duration_ms`), if bounded.
        duration: Option<Ticks>,
        /// A user gives up this long after sending (`timeout_ms`).
        timeout: Option<Ticks>,
        /// The fields of every request.
        template: RequestTemplate,
    },
    /// Steps of rising concurrency, closed waves or open arrivals (IO22).
    Ladder(Ladder),
    /// Groups of requests sent one after another, each when the previous has its answer.
    Script {
        /// The groups, in order.
        groups: Vec<ScriptGroup>,
        /// The access path of every request.
        access: Access,
    },
    /// One request for every (route, access) pair, routes in declaration order.
    Probe {
        /// Access paths each route is probed through, in order.
        access: Vec<Access>,
        /// The `client` label of every probe request.
        client: String,
        /// The `member` label of every probe request.
        member: String,
        /// Routes probed: ids 0..routes (every route of the model, owned first).
        routes: usize,
    },
}

/// The `ladder` workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    /// Concurrency of each step: requests per wave, or the multiple of `rate_per_step_rps`.
    pub steps: Vec<u64>,
    /// Closed ladder: waves per step.
    pub waves: u64,
    /// A request succeeds when answered within this (`timeout_ms`), in ticks.
    pub timeout: Ticks,
    /// The same timeout in milliseconds.
    pub timeout_ms: f64,
    /// `None`: closed waves. `Some`: open arrivals at step x rate for hold.
    pub open: Option<OpenLadder>,
    /// Closed waves: requests leave at uniform random offsets in [0, jitter).
    pub jitter: Ticks,
    /// The fields of every request.
    pub template: RequestTemplate,
}

impl Ladder {
    /// How many requests the ladder sends (saturating), to refuse runaway
    /// ladders before they allocate.
    pub fn requests(&self) -> u64 {
        self.steps
            .iter()
            .map(|&c| match &self.open {
                None => c.saturating_mul(self.waves),
                Some(open) => {
                    let per_ms = c as f64 * open.rate_per_step_rps / 1000.0;
                    (open.hold.as_ms() * per_ms).ceil().min(u64::MAX as f64) as u64
                }
            })
            .fold(0u64, u64::saturating_add)
    }
}

/// An open ladder's arrivals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenLadder {
    /// Step c sends c x this many requests per second.
    pub rate_per_step_rps: f64,
    /// How long each step lasts (`hold_ms`).
    pub hold: Ticks,
}

/// One group of a `script` workload.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptGroup {
    /// The `client` label of its requests.
    pub client: String,
    /// The `member` label of its requests.
    pub member: String,
    /// Requests in the group.
    pub count: u64,
    /// Request i goes to `routes[i % len]`.
    pub routes: Vec<RouteId>,
    /// Pause after each answer before the group's next request (`gap_ms`).
    pub gap: Ticks,
    /// Not before this time (the group's first request).
    pub at: Option<Ticks>,
}
