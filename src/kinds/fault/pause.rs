//! `pause`: stop-the-world pauses of each replica (or dependency instance)
//! it hits, one every `every_ms` (a fixed period from a random phase, or a
//! Poisson process of that mean gap), each `pause_ms` long. How a pause
//! holds work follows OpenJDK's safepoints (see `sim/pauses.rs`).

use super::{Effect, Kind};
use crate::engine::Ticks;
use crate::error::{ScenarioError, num};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};

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

/// The `pause` kind: its pauses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pauses(pub Pause);

impl Kind for Pauses {
    const DECL: Decl = Decl {
        name: "pause",
        family: "fault",
        keys: &[
            Key::required("every_ms", Range::PositiveMs),
            Key::required("pause_ms", Range::PositiveMs),
            Key::with("arrivals", 0.0, Range::Names(&["periodic", "poisson"])),
        ],
        required_because: "`every_ms`: the period, or the mean gap between pauses; `pause_ms`: each pause's length",
    };

    fn from_keys(k: &Keys) -> R<Pauses> {
        let every = k.ticks("every_ms")?;
        let length = k.ticks("pause_ms")?;
        let poisson = k.name_index("arrivals") == 1;
        if !poisson && length >= every {
            return Err(ScenarioError::new(
                k.at("pause_ms"),
                format!(
                    "each pause ({} ms) must be shorter than the period every_ms = {} ms: the target would never run",
                    num(length.as_ms()),
                    num(every.as_ms())
                ),
            )
            .related(k.at("every_ms")));
        }
        Ok(Pauses(Pause {
            every,
            length,
            poisson,
        }))
    }

    fn effect(&self) -> Effect {
        Effect::Pause(self.0)
    }
}
