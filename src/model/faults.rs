//! `[[faults]]`: what a fault does, to what, and when.

use super::{DependencyId, Model, ServiceId};
use crate::engine::Ticks;
use crate::format::format_number;

/// What a fault does to its target while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Work that starts in the window takes `value` times its drawn length.
    LatencyFactor,
    /// The target has `value` slots (running work finishes).
    Slots,
    /// Calls (or a server's requests, after their service time) fail with
    /// probability `value`.
    ErrorRate,
    /// Every call fails at once; queued and running work fails at the start.
    Down,
    /// An open workload's rate is multiplied by `value`.
    ArrivalFactor,
    /// Work that starts in the window takes `value` ms more.
    LatencyAdd,
    /// Stop-the-world pauses ([`Pause`]): nothing starts during one, and
    /// work in service waits it out.
    Pause,
}

impl FaultKind {
    /// Names as written in scenario files.
    pub const NAMES: [(&'static str, FaultKind); 7] = [
        ("latency_factor", FaultKind::LatencyFactor),
        ("slots", FaultKind::Slots),
        ("error_rate", FaultKind::ErrorRate),
        ("down", FaultKind::Down),
        ("arrival_factor", FaultKind::ArrivalFactor),
        ("latency_add", FaultKind::LatencyAdd),
        ("pause", FaultKind::Pause),
    ];
}

/// A `pause` fault's pauses: one every `every` (a fixed period from a random
/// phase, or a Poisson process of that mean gap), each `length` long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    /// The period, or the mean gap between pause starts (`every_ms`).
    pub every: Ticks,
    /// How long each pause lasts (`pause_ms`).
    pub length: Ticks,
    /// `arrivals = "poisson"`: exponential gaps; else a fixed period.
    pub poisson: bool,
}

/// What a fault acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTarget {
    /// A server service: every replica (`replica` None) or one (0-based).
    Server {
        /// The service.
        service: ServiceId,
        /// One replica (0-based), or every one.
        replica: Option<u32>,
    },
    /// A dependency: every replica (`replica` None) or one (0-based).
    Dependency {
        /// The dependency.
        dep: DependencyId,
        /// One replica (0-based), or every one.
        replica: Option<u32>,
    },
    /// An open workload, by index into `Model::workloads`.
    Workload(usize),
}

/// One `[[faults]]` entry: active on the half-open window `[at, until)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fault {
    /// What it does.
    pub kind: FaultKind,
    /// What it acts on.
    pub target: FaultTarget,
    /// Its start (`at_ms`).
    pub at: Ticks,
    /// Its end (`at_ms + for_ms`), not included.
    pub until: Ticks,
    /// The factor, slot count, probability or added ms (0 for `down` and
    /// `pause`).
    pub value: f64,
    /// A `pause` fault's pauses (None for the other kinds).
    pub pause: Option<Pause>,
}

impl Fault {
    /// Whether the fault acts at `now`: `at <= now < until`, so a fault with
    /// `for_ms = 0` never acts.
    #[inline]
    pub fn active(&self, now: Ticks) -> bool {
        self.at <= now && now < self.until
    }

    /// What the fault does, to what, in `model`: "latency_factor 3 on backend",
    /// "down on store#2" (replicas counted from 1, as targets are written).
    pub fn label(&self, model: &Model) -> String {
        let kind = FaultKind::NAMES
            .iter()
            .find(|(_, k)| *k == self.kind)
            .map_or("fault", |(n, _)| n);
        let target = match self.target {
            FaultTarget::Server { service, replica } => {
                let name = model.services.get(service).map_or("", |s| s.name.as_str());
                match replica {
                    Some(r) => format!("{name}#{}", r + 1),
                    None => name.to_string(),
                }
            }
            FaultTarget::Dependency { dep, replica } => {
                let name = model.dependencies.get(dep).map_or("", |d| d.name.as_str());
                match replica {
                    Some(r) => format!("{name}#{}", r + 1),
                    None => name.to_string(),
                }
            }
            FaultTarget::Workload(w) => model
                .workloads
                .get(w)
                .map_or(String::new(), |x| x.name.clone()),
        };
        if let Some(p) = self.pause {
            format!(
                "pause {} ms every {} ms on {target}",
                format_number(p.length.as_ms()),
                format_number(p.every.as_ms())
            )
        } else if self.kind == FaultKind::Down {
            format!("{kind} on {target}")
        } else {
            format!("{kind} {} on {target}", format_number(self.value))
        }
    }
}
