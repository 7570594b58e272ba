//! The validated model: names resolved to indices, times in ticks, every value
//! checked. The engine and the analyses read only this.
//!
//! One file per section of the scenario, as `scenario::validate` builds them:
//! `services` (gateway, routes, services, handlers, dependencies), `plans`,
//! `latency`, `faults`, `limiters`, `workload`, `policies` (client policies) and
//! `analysis` (thresholds, Monte-Carlo, SLO, `[analysis]`); every item is
//! re-exported here. [`series`] sizes the time series for validation and run
//! alike.

mod analysis;
mod faults;
mod latency;
mod limiters;
mod plans;
mod policies;
pub mod series;
mod services;
mod workload;

pub use analysis::*;
pub use faults::*;
pub use latency::*;
pub use limiters::*;
pub use plans::*;
pub use policies::*;
pub use series::{DEFAULT_WINDOW_MS, MAX_SERIES_ROWS};
pub use services::*;
pub use workload::*;

use crate::engine::Ticks;

/// Index into [`Model::services`].
pub type ServiceId = usize;

/// Index into [`Model::dependencies`].
pub type DependencyId = usize;

/// Index into [`Model::limiters`].
pub type LimiterId = usize;

/// Index into [`Model::routes`].
pub type RouteId = usize;

/// Index into [`Model::policies`].
pub type PolicyId = usize;

/// A whole scenario (one compare row), validated: what a run simulates.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// `scenario.name`: shown in the report header.
    pub name: String,
    /// `scenario.about`: free text printed under the header.
    pub about: Option<String>,
    /// The master seed of every random stream of a run, as decided by
    /// `scenario::seed`: the only seed anything downstream reads.
    pub seed: u64,
    /// Runaway protection (`max_events`, `max_sim_time_ms`, `max_in_flight`,
    /// `max_events_per_instant`).
    pub limits: RunLimits,
    /// `[slo]`: figures the analyses convert with.
    pub slo: Slo,
    /// `[gateway]`, when the file has one.
    pub gateway: Option<Gateway>,
    /// `[services.*]`, in declaration order.
    pub services: Vec<Service>,
    /// Every route in declaration order, with the service that owns it.
    pub routes: Vec<Route>,
    /// `[dependencies.*]`, in declaration order.
    pub dependencies: Vec<Dependency>,
    /// `[limiters.*]`, in declaration order.
    pub limiters: Vec<Limiter>,
    /// The first workload (`workloads[0].workload`).
    pub workload: Workload,
    /// `[analysis]`: options of the analyses.
    pub analysis: Analysis,
    /// `[montecarlo]`: sweep defaults.
    pub montecarlo: MonteCarlo,
    /// Files the latency models were read from (`empirical = { file = .. }`), as
    /// written (relative to the scenario file), each once, in the order read.
    pub latency_files: Vec<LatencyFile>,
    /// Latency models drawn from a file with few values above a percentile
    /// the run reports (no fitted tail): the digest says so beside it.
    pub thin_tails: Vec<ThinTail>,
    /// `[thresholds]`, in file order; metric names are checked by whoever knows
    /// the metrics (the run or the sweep).
    pub thresholds: Vec<Threshold>,
    /// `[policies]` in declaration order; when any is defined, one more named
    /// `none` (no policy) that calls without one use, so that they are counted too.
    pub policies: Vec<ClientPolicy>,
    /// `[[faults]]`, in file order (index = the `faults.N` of key paths).
    pub faults: Vec<Fault>,
    /// `scenario.warmup_ms`: requests sent before it are left out of whole-run
    /// statistics (the time series still shows them).
    pub warmup: Ticks,
    /// `[output] window_ms`: the time series' window (None: no time series).
    pub window: Option<Ticks>,
    /// Every workload, all on one clock, in declaration order: `[workload]` is
    /// the one workload named `main`. `workload` above is the first of them (what
    /// the analyses of a single ladder or probe read).
    pub workloads: Vec<NamedWorkload>,
}

/// One of the scenario's workloads: `[workloads.NAME]` (or `[workload]`, named `main`).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedWorkload {
    /// `NAME` of `[workloads.NAME]`, or `main` for `[workload]`.
    pub name: String,
    /// When it starts sending (`start_ms`).
    pub start: Ticks,
    /// The name its random streams derive from: `workload` for `main` (the
    /// streams a single `[workload]` always drew from), `workloads.NAME` otherwise.
    pub stream: String,
    /// What it sends, and when.
    pub workload: Workload,
    /// Its `call_policy` (None: its requests are sent as they are, with no call
    /// record).
    pub call_policy: Option<PolicyId>,
}

impl Model {
    /// Whether anything can stop work before it ends: a call with
    /// `cancellation = true` (a plan's, or a server's calls), a hedge that
    /// cancels its losers, or a `down` fault. Every cancellation starts at one
    /// of them (a cancelled request cancels its own calls in turn): without any,
    /// a server's or a dependency's completion is never cancelled, and the
    /// engine posts it without a key to cancel it by.
    pub fn cancels_work(&self) -> bool {
        self.services
            .iter()
            .filter_map(|s| s.handler.plan())
            .any(|p| p.cancellation)
            || self
                .policies
                .iter()
                .any(|p| p.hedge.is_some_and(|h| h.cancel_losers))
            || self.faults.iter().any(|f| f.effect() == Effect::Down)
    }

    /// Whether some service's calls go to another service (not only to
    /// dependencies).
    pub fn calls_a_service(&self) -> bool {
        self.services
            .iter()
            .filter_map(|s| s.handler.plan())
            .flat_map(|p| &p.branches)
            .flat_map(|b| &b.calls)
            .any(|c| matches!(c.target, Target::Service(_)))
    }

    /// The name of a call's target (a service or a dependency).
    pub fn target_name(&self, t: Target) -> &str {
        match t {
            Target::Dependency(d) => &self.dependencies[d].name,
            Target::Service(s) => &self.services[s].name,
        }
    }
}

/// Runaway protection: a run stops with an error when it passes either bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunLimits {
    /// Events a run may process (`max_events`).
    pub max_events: u64,
    /// Virtual time a run may reach (`max_sim_time_ms`).
    pub max_sim_time: Ticks,
    /// Requests in flight at once: bounds the memory of a flood.
    pub max_in_flight: u64,
    /// Events one instant of virtual time may hold (`max_events_per_instant`):
    /// more means the run loops without its clock moving.
    pub max_events_per_instant: u64,
    /// Time-series rows this run may write: [`MAX_SERIES_ROWS`], shared
    /// evenly by the compare rows that keep a time series (no key: set when the
    /// scenario's rows are known).
    pub max_series_rows: u64,
}
