//! The checks every value read from a scenario goes through (a finite number,
//! a positive one, a fraction, a whole count, a time that fits the clock, one
//! of a list of names), each with the one message users see for it. The
//! declared kinds ([`super::keys`]) and the rest of validation share them.

use crate::engine::Ticks;
use crate::error::{ScenarioError, did_you_mean, list, num};

/// A checked value, or the error naming its key path.
pub type R<T> = Result<T, ScenarioError>;

/// An error at `path`.
pub fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> R<T> {
    Err(ScenarioError::new(path, msg))
}

/// A finite number.
pub fn finite(path: &str, v: f64) -> R<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        err(path, format!("must be a finite number (got {})", num(v)))
    }
}

/// A finite number > 0.
pub fn positive(path: &str, v: f64) -> R<f64> {
    if finite(path, v)? > 0.0 {
        Ok(v)
    } else {
        err(path, format!("must be > 0 (got {})", num(v)))
    }
}

/// A finite number >= 0.
pub fn non_negative(path: &str, v: f64) -> R<f64> {
    if finite(path, v)? >= 0.0 {
        Ok(v)
    } else {
        err(path, format!("must be >= 0 (got {})", num(v)))
    }
}

/// A value in [0, 1].
pub fn fraction(path: &str, v: f64) -> R<f64> {
    if (0.0..=1.0).contains(&finite(path, v)?) {
        Ok(v)
    } else {
        err(path, format!("must be between 0 and 1 (got {})", num(v)))
    }
}

/// A value in [`lo`, `hi`]; `why` (may be empty) says whose bound it is.
pub fn between(path: &str, v: f64, lo: f64, hi: f64, why: &str) -> R<f64> {
    if (lo..=hi).contains(&finite(path, v)?) {
        return Ok(v);
    }
    let why = if why.is_empty() {
        String::new()
    } else {
        format!("{why}; ")
    };
    err(
        path,
        format!(
            "must be between {} and {} ({why}got {})",
            num(lo),
            num(hi),
            num(v)
        ),
    )
}

/// A whole number >= `min` kept in 32 bits (a count of tokens or retries).
pub fn whole(path: &str, v: f64, min: u32) -> R<u32> {
    whole_within(path, v, min, f64::from(u32::MAX)).map(|v| v as u32)
}

/// A whole number >= `min` kept in 64 bits, at most 2^53 (where a float
/// still counts every whole number).
pub fn count(path: &str, v: f64, min: u32) -> R<u64> {
    whole_within(path, v, min, 9_007_199_254_740_992.0).map(|v| v as u64)
}

/// A finite whole number from `min` to `max`.
fn whole_within(path: &str, v: f64, min: u32, max: f64) -> R<f64> {
    let v = finite(path, v)?;
    if v.fract() != 0.0 {
        return err(path, format!("must be a whole number (got {})", num(v)));
    }
    if v < f64::from(min) {
        return err(path, format!("must be >= {min} (got {})", num(v)));
    }
    if v > max {
        return err(path, format!("must be <= {} (got {})", num(max), num(v)));
    }
    Ok(v)
}

/// A finite number >= `lo`.
pub fn at_least(path: &str, v: f64, lo: f64) -> R<f64> {
    if finite(path, v)? >= lo {
        Ok(v)
    } else {
        err(path, format!("must be >= {} (got {})", num(lo), num(v)))
    }
}

/// Milliseconds to ticks, refusing values that do not fit the clock. The check is
/// made on the converted value: a positive time that rounds to 0 ns (the clock's
/// resolution) would divide by zero or silently mean "no time at all".
pub fn ticks(path: &str, ms: f64) -> R<Ticks> {
    non_negative(path, ms)?;
    if ms * Ticks::from_ms(1.0).0 as f64 >= u64::MAX as f64 / 2.0 {
        return err(
            path,
            format!("{} ms is beyond the virtual clock's range", num(ms)),
        );
    }
    let t = Ticks::from_ms(ms);
    if ms > 0.0 && t == Ticks::ZERO {
        return err(
            path,
            format!(
                "{} ms rounds to 0 ns (the virtual clock counts whole nanoseconds): must be > 0 after conversion, at least 5e-7",
                num(ms)
            ),
        );
    }
    Ok(t)
}

/// A time that must be > 0, in ticks (checked before and after conversion).
pub fn positive_ticks(path: &str, ms: f64) -> R<Ticks> {
    ticks(path, positive(path, ms)?)
}

/// One of `allowed`, or an error suggesting the closest.
pub fn choice<'a>(path: &str, value: &str, allowed: &[&'a str]) -> R<&'a str> {
    allowed
        .iter()
        .find(|a| **a == value)
        .copied()
        .ok_or_else(|| {
            ScenarioError::new(
                path,
                format!(
                    "unknown value `{value}`, expected one of {}{}",
                    list(allowed.iter().copied()),
                    did_you_mean(value, allowed.iter().copied())
                ),
            )
        })
}
