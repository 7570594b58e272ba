//! Fault kinds (`[[faults]] kind = "..."`), one module per kind. A kind is a
//! type of its checked keys implementing [`Kind`]: its declaration, what it
//! acts on, and the [`Effect`] it has on its target while it lasts. The list
//! below makes the rest: the model's [`FaultKind`], the reader's kinds and
//! the docs' key table.
//!
//! The keys every fault reads besides `kind` and `target` (its window,
//! `at_ms` and `for_ms`) are declared once in [`SHARED`]; a kind declares
//! only its own (`value`, with the range its effect takes; a pause's
//! `every_ms`, `pause_ms` and `arrivals`).
//!
//! An [`Effect`] is one of the questions the simulation puts to the faults
//! at its hook points: how long work starting now takes (a factor, an
//! addition), how many slots a target has, whether work ending now fails,
//! whether a target is down, how fast a workload sends, when a target
//! pauses. How overlapping faults of one effect combine is the effect's
//! rule (`sim/faults.rs`), whatever kind asked for it.
//!
//! To add a kind: write its module here and add one line to the list. A kind
//! with an effect the simulation has no hook for needs that hook too.

use super::check::R;
use super::keys::{Decl, Key, Keys, Range, read, read_shared};

/// The keys every fault reads besides `kind` and `target`: its window.
pub const SHARED: Decl = Decl {
    name: "[[faults]]",
    family: "entry",
    keys: &[
        Key::required("at_ms", Range::NonNegative),
        Key::required("for_ms", Range::NonNegative),
    ],
    required_because: "it acts over `[at_ms, at_ms + for_ms)`",
};

/// What a fault acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    /// A server or a dependency (or one replica of either).
    Work,
    /// An `open` workload, by name.
    Workload,
}

/// What a fault does to its target while it acts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Effect {
    /// Work that starts in the window takes this factor times its drawn
    /// length (overlapping factors multiply).
    LatencyFactor(f64),
    /// Work that starts in the window takes this many ms more (overlapping
    /// ones add up).
    LatencyAdd(f64),
    /// The target has this many slots (the later-starting fault wins).
    Slots(u32),
    /// Work (a call, or a server's request after its service time) fails
    /// with this probability (the later-starting fault wins).
    ErrorRate(f64),
    /// Every call fails at once; queued and running work fails at the start.
    Down,
    /// An open workload's rate is multiplied by this factor.
    ArrivalFactor(f64),
    /// Stop-the-world pauses: nothing starts during one, and work in service
    /// waits it out.
    Pause(Pause),
}

/// An [`Effect`] without its value: the question the simulation asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum Hook {
    LatencyFactor,
    LatencyAdd,
    Slots,
    ErrorRate,
    Down,
    ArrivalFactor,
    Pause,
}

impl Effect {
    /// The question it answers.
    #[inline]
    pub fn hook(&self) -> Hook {
        match self {
            Effect::LatencyFactor(_) => Hook::LatencyFactor,
            Effect::LatencyAdd(_) => Hook::LatencyAdd,
            Effect::Slots(_) => Hook::Slots,
            Effect::ErrorRate(_) => Hook::ErrorRate,
            Effect::Down => Hook::Down,
            Effect::ArrivalFactor(_) => Hook::ArrivalFactor,
            Effect::Pause(_) => Hook::Pause,
        }
    }

    /// Its number: the factor, the added ms, the slot count or the
    /// probability (None for `down` and pauses).
    #[inline]
    pub fn value(&self) -> Option<f64> {
        match *self {
            Effect::LatencyFactor(v)
            | Effect::LatencyAdd(v)
            | Effect::ErrorRate(v)
            | Effect::ArrivalFactor(v) => Some(v),
            Effect::Slots(n) => Some(f64::from(n)),
            Effect::Down | Effect::Pause(_) => None,
        }
    }

    /// Its pauses (None for the other effects).
    pub fn pause(&self) -> Option<Pause> {
        match *self {
            Effect::Pause(p) => Some(p),
            _ => None,
        }
    }
}

/// A fault kind: its keys, checked, and what it does.
pub trait Kind: Copy + PartialEq + std::fmt::Debug {
    /// Its name and keys.
    const DECL: Decl;
    /// What it acts on.
    const ON: On = On::Work;
    /// The kind from its checked keys (and the checks the declared ranges
    /// cannot say).
    fn from_keys(k: &Keys) -> R<Self>;
    /// What it does to its target while it acts.
    fn effect(&self) -> Effect;
}

/// The kinds: `Variant: module::Type`, in the order `kind` lists them. Each
/// line declares its module too.
macro_rules! kinds {
    ($($variant:ident: $module:ident::$ty:ident,)*) => {
        $(mod $module;)*

        /// A fault's kind and its checked keys.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum FaultKind {
            $(
                #[allow(missing_docs)]
                $variant($module::$ty),
            )*
        }

        /// Every kind's declaration, in the order `kind` lists them.
        pub const KINDS: &[&Decl] = &[$(&<$module::$ty as Kind>::DECL,)*];

        impl FaultKind {
            /// The kind's declaration.
            pub fn decl(&self) -> &'static Decl {
                match self {
                    $(FaultKind::$variant(_) => &<$module::$ty as Kind>::DECL,)*
                }
            }

            /// What it acts on.
            pub fn on(&self) -> On {
                match self {
                    $(FaultKind::$variant(_) => <$module::$ty as Kind>::ON,)*
                }
            }

            /// What it does to its target while it acts.
            #[inline]
            pub fn effect(&self) -> Effect {
                match self {
                    $(FaultKind::$variant(k) => k.effect(),)*
                }
            }

            fn from_keys(k: &Keys) -> R<FaultKind> {
                $(
                    if k.decl().name == <$module::$ty as Kind>::DECL.name {
                        return Ok(FaultKind::$variant(<$module::$ty as Kind>::from_keys(k)?));
                    }
                )*
                unreachable!("the reader returns a listed kind")
            }
        }
    };
}

kinds! {
    LatencyFactor: latency_factor::LatencyFactor,
    LatencyAdd: latency_add::LatencyAdd,
    Slots: slots::Slots,
    ErrorRate: error_rate::ErrorRate,
    Down: down::Down,
    Pause: pause::Pauses,
    ArrivalFactor: arrival_factor::ArrivalFactor,
}

pub use pause::Pause;

impl FaultKind {
    /// The name as written in scenario files.
    pub fn name(&self) -> &'static str {
        self.decl().name
    }
}

/// A `[[faults]]` entry's keys but its target, read: its kind, and its
/// window as written (`at_ms`, `for_ms`, in ms, each >= 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// The kind and its own keys.
    pub kind: FaultKind,
    /// `at_ms`.
    pub at_ms: f64,
    /// `for_ms`.
    pub for_ms: f64,
}

impl Entry {
    /// The `[[faults]]` table at `path`; `target` is read by the caller.
    pub fn read(path: &str, t: &toml::Table) -> R<Entry> {
        let mut skip = vec!["target"];
        skip.extend(SHARED.keys.iter().map(|k| k.name));
        let kind = FaultKind::from_keys(&read(path, t, KINDS, &skip)?)?;
        let window = read_shared(path, t, &SHARED)?;
        Ok(Entry {
            kind,
            at_ms: window.num("at_ms"),
            for_ms: window.num("for_ms"),
        })
    }
}

/// A kind whose one key is `value` (`what` says what it is) in `range`: the
/// kind's type holds it.
macro_rules! valued {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $what:literal, $range:expr, $effect:expr) => {
        valued!($(#[$doc])* $ty, $name, $what, $range, $effect, $crate::kinds::fault::On::Work);
    };
    ($(#[$doc:meta])* $ty:ident, $name:literal, $what:literal, $range:expr, $effect:expr, $on:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $ty {
            /// `value`, checked.
            pub value: f64,
        }

        impl $crate::kinds::fault::Kind for $ty {
            const DECL: $crate::kinds::keys::Decl = $crate::kinds::keys::Decl {
                name: $name,
                family: "fault",
                keys: &[$crate::kinds::keys::Key::required("value", $range)],
                required_because: $what,
            };
            const ON: $crate::kinds::fault::On = $on;

            fn from_keys(k: &$crate::kinds::keys::Keys) -> $crate::kinds::check::R<$ty> {
                Ok($ty { value: k.num("value") })
            }

            #[inline]
            fn effect(&self) -> $crate::kinds::fault::Effect {
                ($effect)(self.value)
            }
        }
    };
}
use valued;
