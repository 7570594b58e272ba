//! Durations in each system's own syntax, read into milliseconds.
//!
//! - protobuf's JSON `Duration` (gRPC service configs, Envoy): seconds with up
//!   to nine decimals and an `s` (`"0.1s"`, `"1.5s"`), or `{ seconds, nanos }`.
//! - Go's `time.ParseDuration` (Istio): a sequence of numbers with units `ns`,
//!   `us`, `µs`, `ms`, `s`, `m`, `h` (`"100ms"`, `"1m30s"`), or a bare `0`.
//! - Spring Boot (resilience4j), as `DurationStyle.detectAndParse` in
//!   `org.springframework.boot.convert` reads it: a whole number with a unit of
//!   up to two letters, any case, `ns`, `us`, `ms`, `s`, `m`, `h`, `d` (`"500ms"`,
//!   `"10s"`; `SIMPLE`), or a whole number of milliseconds (its default unit for
//!   a `Duration`); else, after an optional sign and a `P`, ISO-8601 as
//!   `java.time.Duration.parse` reads it (`"PT0.5S"`, `"P1DT2H"`). A fraction
//!   (`"1.5s"`, `1.5`) is refused, as Spring refuses it.

use super::tree::Node;
use crate::error::Error;
use serde_json::Value;

/// Whose syntax a duration is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// protobuf JSON.
    Protobuf,
    /// Go.
    Go,
    /// Spring Boot.
    Spring,
}

impl Syntax {
    fn example(self) -> &'static str {
        match self {
            Syntax::Protobuf => {
                "seconds with an `s`, as protobuf's JSON writes a Duration: \"0.1s\", \"1.5s\""
            }
            Syntax::Go => "a Go duration: \"100ms\", \"1.5s\", \"1m30s\"",
            Syntax::Spring => {
                "a Spring Boot duration: a whole number with a unit (\"500ms\", \"10s\"), a whole number of milliseconds, or ISO-8601 (\"PT0.5S\")"
            }
        }
    }
}

/// `node` as a duration in milliseconds (>= 0).
pub fn ms(node: &Node<'_>, syntax: Syntax) -> Result<f64, Error> {
    let got = match (node.v, syntax) {
        (Value::String(s), _) => parse(s.trim(), syntax),
        (Value::Object(m), Syntax::Protobuf) => {
            let part = |k: &str| -> Option<f64> {
                match m.get(k) {
                    None => Some(0.0),
                    Some(Value::Number(n)) => n.as_f64(),
                    Some(Value::String(s)) => s.parse().ok(),
                    _ => None,
                }
            };
            if m.keys().all(|k| k == "seconds" || k == "nanos") {
                match (part("seconds"), part("nanos")) {
                    (Some(s), Some(n)) => Some(s * 1e3 + n / 1e6),
                    _ => None,
                }
            } else {
                None
            }
        }
        // Spring reads a number as its text: a whole one is milliseconds
        (Value::Number(n), Syntax::Spring) => {
            (n.as_i64().map(|v| v as f64)).or_else(|| n.as_u64().map(|v| v as f64))
        }
        _ => None,
    };
    match got {
        Some(ms) if ms.is_finite() && ms >= clock_max_ms() => Err(node.err(format!(
            "{} is {} ms, beyond resim's virtual clock (about 146 years): write a shorter duration",
            node.shown_value(),
            crate::error::num(ms)
        ))),
        Some(ms) if ms > 0.0 && crate::engine::Ticks::from_ms(ms) == crate::engine::Ticks::ZERO => {
            Err(node.err(format!(
                "{} is below 1 ns, which resim's virtual clock counts in whole nanoseconds: write 0 or at least 1 ns",
                node.shown_value()
            )))
        }
        Some(ms) if ms.is_finite() && ms >= 0.0 => Ok(ms),
        Some(ms) if ms.is_finite() => Err(node.err(format!(
            "a duration cannot be negative (got {} ms)",
            crate::error::num(ms)
        ))),
        _ => Err(node.err(format!(
            "must be {} (got {})",
            syntax.example(),
            super::tree::kind(node.v)
        ))),
    }
}

/// The longest duration a scenario holds, in milliseconds: the loader refuses
/// a time of half the clock's 64-bit nanoseconds or more (so sums of two
/// stay on the clock).
pub fn clock_max_ms() -> f64 {
    u64::MAX as f64 / 2.0 / crate::engine::Ticks::from_ms(1.0).0 as f64
}

/// The milliseconds of unit `u` in `syntax` (None: not one of its units).
pub fn unit_ms(u: &str, syntax: Syntax) -> Option<f64> {
    Some(match (u, syntax) {
        ("ns", Syntax::Go | Syntax::Spring) => 1e-6,
        ("us" | "µs" | "μs", Syntax::Go) | ("us", Syntax::Spring) => 1e-3,
        ("ms", Syntax::Go | Syntax::Spring) => 1.0,
        ("s", _) => 1e3,
        ("m", Syntax::Go | Syntax::Spring) => 60e3,
        ("h", Syntax::Go | Syntax::Spring) => 3600e3,
        ("d", Syntax::Spring) => 86400e3,
        _ => return None,
    })
}

/// A duration string in `syntax`, in milliseconds; None when it is not one.
pub fn parse(s: &str, syntax: Syntax) -> Option<f64> {
    if s.is_empty() {
        return None;
    }
    if syntax == Syntax::Spring {
        return spring(s);
    }
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    // Go's time.ParseDuration (src/time/format.go): "if all that is left is
    // "0", this is zero", the one number it takes without a unit
    if syntax == Syntax::Go && rest == "0" {
        return Some(0.0);
    }
    let mut total = 0.0;
    let mut parts = 0;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..n_end].parse().ok()?;
        rest = &rest[n_end..];
        let u_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = unit_ms(&rest[..u_end], syntax)?;
        rest = &rest[u_end..];
        total += number * unit;
        parts += 1;
        // protobuf writes one number and one unit
        if syntax != Syntax::Go && parts > 1 {
            return None;
        }
    }
    Some(if neg { -total } else { total })
}

/// A Spring Boot duration (`DurationStyle.detectAndParse`): `SIMPLE` when it
/// matches `^([+-]?\d+)([a-zA-Z]{0,2})$` (the unit any case, milliseconds when
/// there is none), else ISO-8601 when it starts with an optional sign and a
/// `P`; None otherwise, or for a unit Spring does not know.
fn spring(s: &str) -> Option<f64> {
    let neg = s.starts_with('-');
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let sign = if neg { -1.0 } else { 1.0 };
    if let Some(iso) = body.strip_prefix(['P', 'p']) {
        return iso8601(iso).map(|v| sign * v);
    }
    let digits = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let unit = body[digits..].to_ascii_lowercase();
    if digits == 0 || unit.len() > 2 || !unit.chars().all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    let per = if unit.is_empty() {
        1.0
    } else {
        unit_ms(&unit, Syntax::Spring)?
    };
    Some(sign * body[..digits].parse::<f64>().ok()? * per)
}

/// An ISO-8601 duration after its `P`, as `java.time.Duration.parse` reads it:
/// `[nD][T[nH][nM][n[.f]S]]` in that order, any case, each number whole with
/// an optional sign but the seconds, which may have up to nine decimals after
/// a `.` or `,`; at least one part, and a `T` only with a part after it.
fn iso8601(s: &str) -> Option<f64> {
    let (date, time) = match s.find(['T', 't']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut total = 0.0;
    let mut parts = 0;
    if !date.is_empty() {
        total += whole(date.strip_suffix(['D', 'd'])?)? * 86400e3;
        parts += 1;
    }
    if let Some(mut t) = time {
        let before = parts;
        for (letter, ms) in [('H', 3600e3), ('M', 60e3)] {
            if let Some(i) = t.find([letter, letter.to_ascii_lowercase()]) {
                total += whole(&t[..i])? * ms;
                t = &t[i + 1..];
                parts += 1;
            }
        }
        if !t.is_empty() {
            total += seconds(t.strip_suffix(['S', 's'])?)? * 1e3;
            parts += 1;
        }
        if parts == before {
            return None;
        }
    }
    (parts > 0).then_some(total)
}

/// A whole number with an optional sign (`[-+]?[0-9]+`).
fn whole(s: &str) -> Option<f64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: f64 = digits.parse().ok()?;
    Some(if s.starts_with('-') { -n } else { n })
}

/// ISO-8601 seconds: a whole number with an optional sign, then up to nine
/// decimals after a `.` or a `,` (the sign covers them too).
fn seconds(s: &str) -> Option<f64> {
    let Some(i) = s.find(['.', ',']) else {
        return whole(s);
    };
    let (n, fraction) = (whole(&s[..i])?, &s[i + 1..]);
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let f = if fraction.is_empty() {
        0.0
    } else {
        fraction.parse::<f64>().ok()? / 10f64.powi(fraction.len() as i32)
    };
    Some(if s.starts_with('-') { n - f } else { n + f })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_syntax_reads_its_own_forms() {
        assert_eq!(parse("0.1s", Syntax::Protobuf), Some(100.0));
        assert_eq!(parse("1.5s", Syntax::Protobuf), Some(1500.0));
        assert_eq!(parse("100ms", Syntax::Protobuf), None);
        assert_eq!(parse("1m30s", Syntax::Go), Some(90_000.0));
        assert_eq!(parse("250us", Syntax::Go), Some(0.25));
        assert_eq!(parse("1h", Syntax::Go), Some(3_600_000.0));
        assert_eq!(parse("10", Syntax::Go), None);
        assert_eq!(parse("0", Syntax::Go), Some(0.0));
        assert_eq!(parse("-0", Syntax::Go), Some(0.0));
        assert_eq!(parse("00", Syntax::Go), None);
        assert_eq!(parse("0", Syntax::Protobuf), None);
        assert_eq!(parse("500ms", Syntax::Spring), Some(500.0));
        assert_eq!(parse("500", Syntax::Spring), Some(500.0));
        assert_eq!(parse("PT0.5S", Syntax::Spring), Some(500.0));
        assert_eq!(parse("PT1M", Syntax::Spring), Some(60_000.0));
        assert_eq!(parse("2d", Syntax::Spring), Some(172_800_000.0));
        assert_eq!(parse("1m30s", Syntax::Spring), None);
        // Spring's SIMPLE style: a whole number, the unit any case
        assert_eq!(parse("1.5s", Syntax::Spring), None);
        assert_eq!(parse("1.5", Syntax::Spring), None);
        assert_eq!(parse("500MS", Syntax::Spring), Some(500.0));
        assert_eq!(parse("+10s", Syntax::Spring), Some(10_000.0));
        assert_eq!(parse("10sec", Syntax::Spring), None);
        assert_eq!(parse("10x", Syntax::Spring), None);
        // java.time.Duration.parse: days, a fraction of seconds only, a comma
        assert_eq!(parse("P1DT2H", Syntax::Spring), Some(93_600_000.0));
        assert_eq!(parse("pt0,25s", Syntax::Spring), Some(250.0));
        assert_eq!(parse("PT1M30.5S", Syntax::Spring), Some(90_500.0));
        assert_eq!(parse("PT-0.5S", Syntax::Spring), Some(-500.0));
        assert_eq!(parse("PT1.S", Syntax::Spring), Some(1_000.0));
        assert_eq!(parse("PT1.5M", Syntax::Spring), None);
        assert_eq!(parse("PT30S1M", Syntax::Spring), None);
        assert_eq!(parse("P1DT", Syntax::Spring), None);
        assert_eq!(parse("PT", Syntax::Spring), None);
        assert_eq!(parse("P", Syntax::Spring), None);
        assert_eq!(parse("PT0.1234567891S", Syntax::Spring), None);
        assert_eq!(parse("fast", Syntax::Spring), None);
        assert_eq!(parse("", Syntax::Go), None);
    }
}
