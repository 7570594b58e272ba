//! `slots`: the target has `value` slots while the fault acts (0: none at
//! all; work already running finishes).

use super::{Effect, Kind};
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};

/// A whole number of slots >= 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slots {
    /// `value`.
    pub slots: u32,
}

impl Kind for Slots {
    const DECL: Decl = Decl {
        name: "slots",
        family: "fault",
        keys: &[Key::required("value", Range::Whole(0))],
        required_because: "the slot count the target has while the fault acts",
    };

    fn from_keys(k: &Keys) -> R<Slots> {
        Ok(Slots {
            slots: k.whole("value"),
        })
    }

    fn effect(&self) -> Effect {
        Effect::Slots(self.slots)
    }
}
