//! The spans every trace format is read into: one compact record per span
//! (about 56 bytes), names interned, times in nanoseconds since the Unix epoch.
//! The readers (`otlp`, `jaeger`, `zipkin`) push records here as they stream
//! through a file; nothing of the JSON is kept.

use std::collections::HashMap;

/// An interned string (a service, operation, peer or route name).
pub type Sym = u32;

/// No string (an unknown service, no peer named).
pub const NO_SYM: Sym = u32::MAX;

/// What a span says it is (OpenTelemetry's span kinds; Jaeger's `span.kind`
/// tag and Zipkin's `kind` map onto them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// No kind given (OTLP 0, a Zipkin span without `kind`) or `INTERNAL` (1).
    Internal,
    /// A request handled (2).
    Server,
    /// A request sent, the caller waiting for it (3).
    Client,
    /// A message sent, nobody waiting (4).
    Producer,
    /// A message handled (5).
    Consumer,
}

impl Kind {
    /// OTLP's integer kinds.
    pub fn from_otlp(k: i64) -> Kind {
        match k {
            2 => Kind::Server,
            3 => Kind::Client,
            4 => Kind::Producer,
            5 => Kind::Consumer,
            _ => Kind::Internal,
        }
    }

    /// A kind by name: `SERVER`, `client`, `SPAN_KIND_CONSUMER`...
    pub fn from_name(name: &str) -> Kind {
        let n = name.trim_start_matches("SPAN_KIND_");
        if n.eq_ignore_ascii_case("server") {
            Kind::Server
        } else if n.eq_ignore_ascii_case("client") {
            Kind::Client
        } else if n.eq_ignore_ascii_case("producer") {
            Kind::Producer
        } else if n.eq_ignore_ascii_case("consumer") {
            Kind::Consumer
        } else {
            Kind::Internal
        }
    }
}

/// The span's status said error.
pub const ERROR: u8 = 1;
/// Zipkin's `shared`: the server half of a span whose id its client half has.
pub const SHARED: u8 = 2;
/// The link to the parent does not block it (Jaeger `FOLLOWS_FROM`).
pub const FOLLOWS: u8 = 4;

/// One span, as every format is read.
#[derive(Debug, Clone, Copy)]
pub struct SpanRec {
    /// The trace, by index into [`SpanStore::trace_ids`].
    pub trace: u32,
    /// Its service ([`NO_SYM`]: the file names none).
    pub service: Sym,
    /// Its id (never 0).
    pub id: u64,
    /// Its parent's id (0: none).
    pub parent: u64,
    /// Start and end, in nanoseconds since the Unix epoch.
    pub start: i64,
    /// See `start`; never before it.
    pub end: i64,
    /// Its operation name.
    pub name: Sym,
    /// The callee a client span names (`peer.service`, `server.address`,
    /// `db.system`, Zipkin's `remoteEndpoint`), or [`NO_SYM`].
    pub peer: Sym,
    /// Its `http.route` (or `http.target`, `url.path`), or [`NO_SYM`].
    pub route: Sym,
    /// What it says it is.
    pub kind: Kind,
    /// [`ERROR`], [`SHARED`], [`FOLLOWS`].
    pub flags: u8,
}

/// Interned strings.
#[derive(Debug, Default)]
pub struct Interner {
    map: HashMap<String, Sym>,
    names: Vec<String>,
}

impl Interner {
    /// The symbol of `s` (allocates only the first time it is seen).
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&k) = self.map.get(s) {
            return k;
        }
        let k = self.names.len() as Sym;
        self.names.push(s.to_string());
        self.map.insert(s.to_string(), k);
        k
    }

    /// The text of `k` ("" for [`NO_SYM`]).
    pub fn name(&self, k: Sym) -> &str {
        self.names.get(k as usize).map_or("", String::as_str)
    }
}

/// Spans a reader could not use, by why (each counted, none silent).
#[derive(Debug, Default, Clone)]
pub struct Skipped {
    /// No `traceId`/`spanId`, or one that is not a hex (or base64) id.
    pub bad_ids: u64,
    /// No start or no end (or duration).
    pub no_times: u64,
    /// Ended before it started (its end is set to its start).
    pub negative: u64,
}

/// Every span read, from every file.
#[derive(Debug, Default)]
pub struct SpanStore {
    /// The spans, in the order read.
    pub spans: Vec<SpanRec>,
    /// Trace ids by index.
    pub trace_ids: Vec<u128>,
    trace_index: HashMap<u128, u32>,
    /// Every interned name.
    pub strings: Interner,
    /// The sampling probability a span carries (Jaeger's `sampler.param`, an
    /// OTLP `ot=th:` trace state), by span index; only spans that say one.
    pub sampling: HashMap<u32, f64>,
    /// Spans not kept.
    pub skipped: Skipped,
}

impl SpanStore {
    /// The index of trace `id`.
    pub fn trace(&mut self, id: u128) -> u32 {
        if let Some(&i) = self.trace_index.get(&id) {
            return i;
        }
        let i = self.trace_ids.len() as u32;
        self.trace_ids.push(id);
        self.trace_index.insert(id, i);
        i
    }

    /// Keeps `span` (its end moved to its start if it ends before it).
    pub fn push(&mut self, mut span: SpanRec, sampling: Option<f64>) {
        if span.end < span.start {
            self.skipped.negative += 1;
            span.end = span.start;
        }
        if let Some(p) = sampling {
            self.sampling.insert(self.spans.len() as u32, p);
        }
        self.spans.push(span);
    }
}

/// A hex id of up to 32 digits (leading zeros may be left out, as Jaeger
/// does), or OTLP's base64 form of 16 or 8 bytes; None if it is neither, or 0.
pub fn parse_id(s: &str) -> Option<u128> {
    let v = if s.len() <= 32 && !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        u128::from_str_radix(s, 16).ok()?
    } else if s.len() == 24 || s.len() == 12 {
        base64(s)?
    } else {
        return None;
    };
    (v != 0).then_some(v)
}

/// A span id: [`parse_id`] within 64 bits.
pub fn parse_span_id(s: &str) -> Option<u64> {
    parse_id(s).and_then(|v| u64::try_from(v).ok())
}

/// Standard (or URL-safe) base64 of at most 16 bytes, as a number.
fn base64(s: &str) -> Option<u128> {
    let mut bytes: Vec<u8> = Vec::with_capacity(16);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.bytes() {
        let d = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(d);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bytes.len() > 16 {
        return None;
    }
    Some(bytes.iter().fold(0u128, |v, &b| (v << 8) | u128::from(b)))
}

/// The sampling probability of an OpenTelemetry trace state: `ot=th:T` (the
/// rejection threshold, 1 - T / 2^56) or the older `ot=p:N` (2^-N).
pub fn trace_state_probability(state: &str) -> Option<f64> {
    let ot = state
        .split(',')
        .find_map(|kv| kv.trim().strip_prefix("ot="))?;
    for part in ot.split(';') {
        if let Some(th) = part.strip_prefix("th:") {
            if th.is_empty() || th.len() > 14 || !th.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            // the digits are the leading ones of 14; the rest are zeros
            let t = u64::from_str_radix(th, 16).ok()? << (4 * (14 - th.len()));
            let p = 1.0 - t as f64 / (1u64 << 56) as f64;
            return (p > 0.0).then_some(p);
        }
        if let Some(n) = part.strip_prefix("p:") {
            let n: i32 = n.parse().ok()?;
            return (0..=62).contains(&n).then(|| 0.5f64.powi(n));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::otlp::trace_state_for;

    #[test]
    fn ids_read_as_hex_or_base64() {
        assert_eq!(
            parse_id("5b8efff798038103d269b633813fc60c"),
            Some(0x5b8efff798038103d269b633813fc60c)
        );
        assert_eq!(parse_span_id("eee19b7ec3c1b174"), Some(0xeee19b7ec3c1b174));
        // Jaeger leaves leading zeros out
        assert_eq!(parse_span_id("1f"), Some(0x1f));
        // base64 of the bytes 5b8efff798038103d269b633813fc60c and eee19b7ec3c1b174
        assert_eq!(
            parse_id("W47/95gDgQPSabYzgT/GDA=="),
            Some(0x5b8efff798038103d269b633813fc60c)
        );
        assert_eq!(parse_span_id("7uGbfsPBsXQ="), Some(0xeee19b7ec3c1b174));
        assert_eq!(parse_id(""), None);
        assert_eq!(parse_id("00000000"), None);
        assert_eq!(parse_id("xyz"), None);
        assert_eq!(parse_span_id("5b8efff798038103d269b633813fc60c"), None);
    }

    #[test]
    fn trace_state_round_trips_the_probability() {
        for p in [1.0, 0.5, 0.1, 0.25, 0.01] {
            let state = trace_state_for(p);
            let back = trace_state_probability(&state).unwrap();
            assert!((back - p).abs() < 1e-12, "{p}: {state} -> {back}");
        }
        assert_eq!(trace_state_for(0.5), "ot=th:8");
        assert_eq!(trace_state_for(1.0), "ot=th:0");
        assert_eq!(trace_state_probability("vendor=x,ot=p:3"), Some(0.125));
        assert_eq!(trace_state_probability("vendor=x"), None);
    }

    #[test]
    fn kinds_by_number_and_name() {
        assert_eq!(Kind::from_otlp(2), Kind::Server);
        assert_eq!(Kind::from_otlp(9), Kind::Internal);
        assert_eq!(Kind::from_name("SPAN_KIND_CLIENT"), Kind::Client);
        assert_eq!(Kind::from_name("consumer"), Kind::Consumer);
    }
}
