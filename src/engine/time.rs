//! Virtual time: an integer count of nanoseconds since the start of a run.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Ticks per millisecond: the clock counts nanoseconds.
pub const TICKS_PER_MS: f64 = 1_000_000.0;

/// A point in (or span of) virtual time, in nanoseconds. Never a float, so event
/// order is exact and runs are reproducible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticks(pub u64);

impl Ticks {
    pub const ZERO: Ticks = Ticks(0);
    pub const MAX: Ticks = Ticks(u64::MAX);

    /// Converts milliseconds to ticks, rounding to the nearest nanosecond.
    /// Negative and non-finite inputs saturate (callers validate them first).
    pub fn from_ms(ms: f64) -> Ticks {
        let t = (ms * TICKS_PER_MS).round();
        if t.is_nan() || t <= 0.0 {
            Ticks(0)
        } else if t >= u64::MAX as f64 {
            Ticks::MAX
        } else {
            Ticks(t as u64)
        }
    }

    pub fn as_ms(self) -> f64 {
        self.0 as f64 / TICKS_PER_MS
    }

    pub fn saturating_sub(self, other: Ticks) -> Ticks {
        Ticks(self.0.saturating_sub(other.0))
    }
}

impl Add for Ticks {
    type Output = Ticks;
    fn add(self, o: Ticks) -> Ticks {
        Ticks(self.0.saturating_add(o.0))
    }
}

impl AddAssign for Ticks {
    fn add_assign(&mut self, o: Ticks) {
        *self = *self + o;
    }
}

impl Sub for Ticks {
    type Output = Ticks;
    fn sub(self, o: Ticks) -> Ticks {
        self.saturating_sub(o)
    }
}

impl fmt::Display for Ticks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ms", self.as_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ms_round_trip_and_rounding() {
        assert_eq!(Ticks::from_ms(40.0), Ticks(40_000_000));
        assert_eq!(Ticks::from_ms(68.571_428_571_4), Ticks(68_571_429));
        assert_eq!(Ticks::from_ms(-3.0), Ticks::ZERO);
        assert_eq!(Ticks::from_ms(f64::INFINITY), Ticks::MAX);
        assert_eq!(Ticks(1_500_000).as_ms(), 1.5);
        assert_eq!(Ticks(3) - Ticks(5), Ticks::ZERO);
    }
}
