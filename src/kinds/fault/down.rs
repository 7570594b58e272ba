//! `down`: every arrival (call) fails at once; queued and running work fails
//! at the fault's start. It reads no keys of its own.

use super::{Effect, Kind};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Keys};

/// No keys: every call fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Down;

impl Kind for Down {
    const DECL: Decl = Decl {
        name: "down",
        family: "fault",
        keys: &[],
        required_because: "",
    };

    fn from_keys(_: &Keys) -> R<Down> {
        Ok(Down)
    }

    fn effect(&self) -> Effect {
        Effect::Down
    }
}
