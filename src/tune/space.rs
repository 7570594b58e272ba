//! The settings a tuning searches: each `--vary` key with its range or list,
//! and the candidates drawn from them: a space-filling start (a Halton
//! sequence over every key at once) and, round by round, points in a box
//! around the best setting so far that halves each round.

use crate::error::{Error, ScenarioError};
use crate::format::format_number;
use toml::Value;

/// One key a tuning sets, and where.
#[derive(Debug, Clone)]
pub struct Key {
    /// The key path, as `--set` takes it.
    pub key: String,
    /// The column name in the output files (the key's last segment).
    pub column: String,
    /// As written (`--vary ...`).
    pub text: String,
    pub domain: Domain,
    /// Whether the key takes values below and above the range (found when
    /// the range is checked): an answer at an end the key can go past may
    /// lie beyond it.
    pub beyond: (bool, bool),
}

/// The values a key may take.
#[derive(Debug, Clone, PartialEq)]
pub enum Domain {
    /// `LO..HI`: any number between (whole numbers only when `integer`).
    Range { lo: f64, hi: f64, integer: bool },
    /// `[v1, v2, ...]`: one of these, as TOML values.
    List(Vec<Value>),
}

/// A point of the search: one value per key, in the keys' order.
pub type Point = Vec<Value>;

fn arg_error(message: impl Into<String>) -> Error {
    ScenarioError::new("", message).into()
}

/// Parses `KEY=LO..HI` or `KEY=[v1, v2, ...]`.
pub fn parse(text: &str) -> Result<Key, Error> {
    let expected =
        "expected KEY=LO..HI (e.g. policies.retry.timeout_ms=50..500) or KEY=[v1, v2, ...]";
    let Some((key, range)) = text.split_once('=') else {
        return Err(arg_error(format!("--vary {text}: {expected}")));
    };
    let (key, range) = (key.trim(), range.trim());
    if key.is_empty() {
        return Err(arg_error(format!("--vary {text}: the key path is empty")));
    }
    let domain = if range.starts_with('[') {
        let (_, values) = crate::sweep::parse_vary(text).map_err(Error::from)?;
        if values.is_empty() {
            return Err(arg_error(format!("--vary {text}: the list is empty")));
        }
        if values.len() > MAX_LIST {
            return Err(arg_error(format!(
                "--vary {text}: {} values; a list has at most {MAX_LIST}",
                values.len()
            )));
        }
        Domain::List(values)
    } else if let Some((lo, hi)) = range.split_once("..") {
        let number = |s: &str| -> Result<(f64, bool), Error> {
            let s = s.trim();
            let x: f64 = s.parse().map_err(|_| {
                arg_error(format!("--vary {text}: `{s}` is not a number ({expected})"))
            })?;
            if !x.is_finite() {
                return Err(arg_error(format!(
                    "--vary {text}: `{s}` is not a finite number"
                )));
            }
            Ok((x, s.parse::<i64>().is_ok()))
        };
        let ((lo, wl), (hi, wh)) = (number(lo)?, number(hi)?);
        if lo >= hi {
            return Err(arg_error(format!(
                "--vary {text}: LO must be below HI (got {} .. {})",
                format_number(lo),
                format_number(hi)
            )));
        }
        Domain::Range {
            lo,
            hi,
            integer: wl && wh,
        }
    } else {
        return Err(arg_error(format!("--vary {text}: {expected}")));
    };
    Ok(Key {
        key: key.to_string(),
        column: crate::scenario::paths::segments(key)
            .last()
            .cloned()
            .unwrap_or_else(|| key.to_string()),
        text: text.to_string(),
        domain,
        beyond: (true, true),
    })
}

/// The most values a listed key may have.
pub const MAX_LIST: usize = 100;

impl Key {
    /// The key's value at `u` in [0, 1): a point of the range (rounded for
    /// whole numbers), or the list's element at that fraction.
    fn at(&self, u: f64) -> Value {
        match &self.domain {
            Domain::Range { lo, hi, integer } => {
                let x = lo + (hi - lo) * u;
                if *integer {
                    Value::Integer(x.round().clamp(*lo, *hi) as i64)
                } else {
                    Value::Float(round_to(x, (hi - lo) * 1e-3))
                }
            }
            Domain::List(v) => v[((u * v.len() as f64) as usize).min(v.len() - 1)].clone(),
        }
    }

    /// Where `v` lies in [0, 1) (the inverse of `at`, to the middle of a list slot).
    fn place(&self, v: &Value) -> f64 {
        match &self.domain {
            Domain::Range { lo, hi, .. } => (number(v) - lo) / (hi - lo),
            Domain::List(list) => {
                let i = list.iter().position(|x| x == v).unwrap_or(0);
                (i as f64 + 0.5) / list.len() as f64
            }
        }
    }

    /// Whether a listed key, whose values a box of any size covers fully.
    fn listed(&self) -> bool {
        matches!(self.domain, Domain::List(_))
    }
}

/// A TOML number as f64 (0 for anything else).
pub fn number(v: &Value) -> f64 {
    match v {
        Value::Integer(i) => *i as f64,
        Value::Float(f) => *f,
        _ => 0.0,
    }
}

/// `x` rounded to the decimals of a power of ten no larger than `step`, so
/// the values printed and set are short and the same on every machine.
fn round_to(x: f64, step: f64) -> f64 {
    if step <= 0.0 || !step.is_finite() {
        return x;
    }
    let decimals = (-step.log10().floor()).clamp(0.0, 15.0) as usize;
    format!("{x:.decimals$}").parse().unwrap_or(x)
}

/// The radical inverse of `i` in `base` (the Halton sequence's coordinate).
fn radical_inverse(mut i: u64, base: u64) -> f64 {
    let (mut f, mut out) = (1.0, 0.0);
    while i > 0 {
        f /= base as f64;
        out += f * (i % base) as f64;
        i /= base;
    }
    out
}

const PRIMES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];

/// The most keys a tuning varies (one Halton base each).
pub const MAX_KEYS: usize = PRIMES.len();

/// The `i`-th point (from 1) of the Halton sequence in the box `[lo, hi)` per key.
fn halton(keys: &[Key], i: u64, boxes: &[(f64, f64)]) -> Point {
    keys.iter()
        .zip(PRIMES)
        .zip(boxes)
        .map(|((k, base), (lo, hi))| k.at(lo + (hi - lo) * radical_inverse(i, base)))
        .collect()
}

/// Every combination of the listed values when they are all the keys and
/// few; else `n` points of the Halton sequence over the whole space, with the
/// corner of every key's lowest value first. Repeats are dropped.
pub fn start(keys: &[Key], n: usize) -> Vec<Point> {
    let all_listed: Option<usize> = keys.iter().try_fold(1usize, |acc, k| match &k.domain {
        Domain::List(v) => acc.checked_mul(v.len()),
        Domain::Range { .. } => None,
    });
    if let Some(count) = all_listed
        && count <= n
    {
        let mut out = vec![Vec::new()];
        for k in keys {
            let Domain::List(values) = &k.domain else {
                unreachable!("every key is listed")
            };
            out = out
                .into_iter()
                .flat_map(|p: Point| {
                    values.iter().map(move |v| {
                        let mut q = p.clone();
                        q.push(v.clone());
                        q
                    })
                })
                .collect();
        }
        return out;
    }
    let whole: Vec<(f64, f64)> = keys.iter().map(|_| (0.0, 1.0)).collect();
    let mut out: Vec<Point> = vec![keys.iter().map(|k| k.at(0.0)).collect()];
    let mut i = 1;
    while out.len() < n && i < 64 * n as u64 {
        let p = halton(keys, i, &whole);
        if !out.contains(&p) {
            out.push(p);
        }
        i += 1;
    }
    out
}

/// `n` new points in the box around `best` whose half-width is `half` of
/// each range (a listed key keeps its whole list), none already in `seen`.
pub fn around(keys: &[Key], best: &Point, half: f64, n: usize, seen: &[Point]) -> Vec<Point> {
    let boxes: Vec<(f64, f64)> = keys
        .iter()
        .zip(best)
        .map(|(k, v)| {
            if k.listed() {
                (0.0, 1.0)
            } else {
                let c = k.place(v);
                ((c - half).max(0.0), (c + half).min(1.0))
            }
        })
        .collect();
    let mut out: Vec<Point> = Vec::new();
    let mut i = 1;
    while out.len() < n && i < 64 * n as u64 {
        let p = halton(keys, i, &boxes);
        if !seen.contains(&p) && !out.contains(&p) {
            out.push(p);
        }
        i += 1;
    }
    out
}

/// A point as `key=value` pairs, as `--set` takes them.
pub fn set_lines(keys: &[Key], point: &Point) -> Vec<String> {
    keys.iter()
        .zip(point)
        .map(|(k, v)| format!("{}={}", k.key, show(v)))
        .collect()
}

/// A value as written in TOML (a float always with its point).
pub fn show(v: &Value) -> String {
    match v {
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.1}"),
        Value::Float(f) => format!("{f}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> Key {
        parse(text).expect("a valid --vary")
    }

    #[test]
    fn ranges_and_lists_parse_and_bad_ones_are_refused() {
        let k = key("policies.retry.timeout_ms=20..500");
        assert_eq!(k.column, "timeout_ms");
        assert_eq!(
            k.domain,
            Domain::Range {
                lo: 20.0,
                hi: 500.0,
                integer: true
            }
        );
        let k = key("a.b=[\"x\", \"y\"]");
        assert_eq!(k.domain, Domain::List(vec!["x".into(), "y".into()]));
        for bad in ["a.b=5..1", "a.b=x..2", "a.b", "=1..2", "a.b=[]", "a.b=7"] {
            assert!(parse(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn the_start_covers_the_space_and_whole_numbers_stay_whole() {
        let keys = [key("a=1..10"), key("b=0.0..1.0")];
        let pts = start(&keys, 12);
        assert_eq!(pts.len(), 12);
        assert_eq!(pts[0], vec![Value::Integer(1), Value::Float(0.0)]);
        assert!(pts.iter().all(|p| matches!(p[0], Value::Integer(1..=10))));
        // both halves of each range are visited
        for d in 0..2 {
            let low = pts.iter().filter(|p| keys[d].place(&p[d]) < 0.5).count();
            assert!(
                (3..=9).contains(&low),
                "key {d}: {low} of 12 in the lower half"
            );
        }
    }

    #[test]
    fn a_few_listed_values_are_all_tried() {
        let keys = [key("a=[1, 2, 3]"), key("b=[\"x\", \"y\"]")];
        assert_eq!(start(&keys, 8).len(), 6);
    }

    #[test]
    fn points_around_the_best_stay_in_their_box_and_are_new() {
        let keys = [key("a=0..100")];
        let best = vec![Value::Integer(50)];
        let pts = around(&keys, &best, 0.1, 6, std::slice::from_ref(&best));
        assert_eq!(pts.len(), 6);
        for p in &pts {
            let x = number(&p[0]);
            assert!((40.0..=60.0).contains(&x) && x != 50.0, "{x}");
        }
    }
}
