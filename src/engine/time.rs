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
    /// Time zero (also a zero span).
    pub const ZERO: Ticks = Ticks(0);
    /// The largest representable time.
    pub const MAX: Ticks = Ticks(u64::MAX);

    /// Converts milliseconds to ticks, rounding to the nearest nanosecond (halves
    /// away from zero, as `f64::round`). Negative and non-finite inputs saturate
    /// (callers validate them first).
    #[inline]
    pub fn from_ms(ms: f64) -> Ticks {
        let t = ms * TICKS_PER_MS;
        if t.is_nan() || t < 0.5 {
            return Ticks(0);
        }
        if t < (1u64 << 52) as f64 {
            // Every latency draw lands here. `f64::round` and an unsigned cast are
            // library calls on baseline x86-64; a signed cast is one instruction,
            // and `t - whole` is exact below 2^52, so this rounds exactly as
            // `round` does.
            let whole = t as i64;
            let up = t - whole as f64 >= 0.5;
            return Ticks(whole as u64 + u64::from(up));
        }
        if t >= u64::MAX as f64 {
            Ticks::MAX
        } else {
            // Doubles this large are whole numbers already.
            Ticks(t as u64)
        }
    }

    /// In milliseconds.
    pub fn as_ms(self) -> f64 {
        self.0 as f64 / TICKS_PER_MS
    }

    /// `self - other`, or zero when `other` is later.
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

    /// The fast path rounds exactly as `f64::round` (halves away from zero).
    #[test]
    fn from_ms_rounds_as_f64_round() {
        let reference = |ms: f64| {
            let t = (ms * TICKS_PER_MS).round();
            if t.is_nan() || t <= 0.0 {
                0
            } else if t >= u64::MAX as f64 {
                u64::MAX
            } else {
                t as u64
            }
        };
        let mut cases = vec![
            0.0,
            4.9e-7,
            5e-7,
            5.1e-7,
            1.5e-6,
            2.5e-6,
            f64::from_bits(0.5e-6f64.to_bits() - 1), // just below half a tick
            40.0,
            68.571_428_571_4,
            121.884_397_5,
            4.503_599_627_370_495e9,
            4.503_599_627_370_497e9,
            1e12,
            1.9e13,
            -0.0,
            f64::NAN,
            f64::INFINITY,
        ];
        // a spread of magnitudes with awkward fractions
        let mut x = 1.234_567e-7;
        while x < 1e14 {
            cases.extend([x, x * 1.000_000_1, x + 5e-7]);
            x *= 3.7;
        }
        for ms in cases {
            assert_eq!(Ticks::from_ms(ms).0, reference(ms), "{ms} ms");
        }
    }
}
