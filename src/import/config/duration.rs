//! Durations in each system's own syntax, read into milliseconds.
//!
//! - protobuf's JSON `Duration` (gRPC service configs, Envoy): seconds with up
//!   to nine decimals and an `s` (`"0.1s"`, `"1.5s"`), or `{ seconds, nanos }`.
//! - Go's `time.ParseDuration` (Istio): a sequence of numbers with units `ns`,
//!   `us`, `µs`, `ms`, `s`, `m`, `h` (`"100ms"`, `"1m30s"`).
//! - Spring Boot (resilience4j): a number with a unit `ns`, `us`, `ms`, `s`, `m`,
//!   `h`, `d` (`"500ms"`, `"10s"`), ISO-8601 (`"PT0.5S"`), or a bare number of
//!   milliseconds (Spring's default unit for a `Duration`).

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
                "a Spring Boot duration: \"500ms\", \"10s\", \"PT0.5S\", or a number of milliseconds"
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
        (Value::Number(n), Syntax::Spring) => n.as_f64(),
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
        if let Ok(n) = s.parse::<f64>() {
            return Some(n);
        }
        if let Some(iso) = s.strip_prefix("PT").or_else(|| s.strip_prefix("pt")) {
            return iso8601(iso);
        }
    }
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
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
        // protobuf and Spring write one number and one unit
        if syntax != Syntax::Go && parts > 1 {
            return None;
        }
    }
    Some(if neg { -total } else { total })
}

/// The part of an ISO-8601 duration after `PT`: `1H30M`, `0.5S`.
fn iso8601(s: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut num = String::new();
    let mut any = false;
    for c in s.chars() {
        match c.to_ascii_uppercase() {
            d @ ('0'..='9' | '.' | '-') => num.push(d),
            u @ ('H' | 'M' | 'S') => {
                let n: f64 = num.parse().ok()?;
                num.clear();
                total += n * match u {
                    'H' => 3600e3,
                    'M' => 60e3,
                    _ => 1e3,
                };
                any = true;
            }
            _ => return None,
        }
    }
    (any && num.is_empty()).then_some(total)
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
        assert_eq!(parse("500ms", Syntax::Spring), Some(500.0));
        assert_eq!(parse("500", Syntax::Spring), Some(500.0));
        assert_eq!(parse("PT0.5S", Syntax::Spring), Some(500.0));
        assert_eq!(parse("PT1M", Syntax::Spring), Some(60_000.0));
        assert_eq!(parse("2d", Syntax::Spring), Some(172_800_000.0));
        assert_eq!(parse("1m30s", Syntax::Spring), None);
        assert_eq!(parse("fast", Syntax::Spring), None);
        assert_eq!(parse("", Syntax::Go), None);
    }
}
