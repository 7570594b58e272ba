//! `[[faults]]`: what a fault does, to what, and when.

use super::{DependencyId, Model, ServiceId};
use crate::engine::Ticks;
use crate::format::format_number;

pub use crate::kinds::fault::{Effect, FaultKind, Hook, Pause};

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
    /// Its kind, as written, with its checked keys (what it does:
    /// [`Fault::effect`]).
    pub kind: FaultKind,
    /// What it acts on.
    pub target: FaultTarget,
    /// Its start (`at_ms`).
    pub at: Ticks,
    /// Its end (`at_ms + for_ms`), not included.
    pub until: Ticks,
}

impl Fault {
    /// What it does while it acts: its kind's effect.
    #[inline]
    pub fn effect(&self) -> Effect {
        self.kind.effect()
    }

    /// Its number: the factor, the added ms, the slot count or the
    /// probability (0 for `down` and `pause`).
    #[inline]
    pub fn value(&self) -> f64 {
        self.effect().value().unwrap_or(0.0)
    }

    /// Whether the fault acts at `now`: `at <= now < until`, so a fault with
    /// `for_ms = 0` never acts.
    #[inline]
    pub fn active(&self, now: Ticks) -> bool {
        self.at <= now && now < self.until
    }

    /// What the fault does, to what, in `model`: "latency_factor 3 on backend",
    /// "down on store#2" (replicas counted from 1, as targets are written).
    pub fn label(&self, model: &Model) -> String {
        let kind = self.kind.name();
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
        match (self.effect().pause(), self.effect().value()) {
            (Some(p), _) => format!(
                "{kind} {} ms every {} ms on {target}",
                format_number(p.length.as_ms()),
                format_number(p.every.as_ms())
            ),
            (None, Some(v)) => format!("{kind} {} on {target}", format_number(v)),
            (None, None) => format!("{kind} on {target}"),
        }
    }
}
