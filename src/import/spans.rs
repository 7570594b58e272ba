//! The spans every trace format is read into: one compact record per span
//! (about 56 bytes), names interned, times in nanoseconds since the Unix epoch.
//! The readers (`otlp`, `jaeger`, `zipkin`) fill a [`Draft`] from each span
//! they derive and keep it here; nothing of the JSON is kept.

use serde::Deserialize;
use std::collections::{BTreeSet, HashMap};

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
    /// A kind by OTLP's number or by name (`SERVER`, `client`, `SPAN_KIND_CONSUMER`).
    pub fn of(v: &Scalar) -> Kind {
        let name = match v {
            Scalar::Str(s) => s.trim_start_matches("SPAN_KIND_").to_ascii_lowercase(),
            v => match v.int() {
                Some(2) => return Kind::Server,
                Some(3) => return Kind::Client,
                Some(4) => return Kind::Producer,
                Some(5) => return Kind::Consumer,
                _ => return Kind::Internal,
            },
        };
        match name.as_str() {
            "server" => Kind::Server,
            "client" => Kind::Client,
            "producer" => Kind::Producer,
            "consumer" => Kind::Consumer,
            _ => Kind::Internal,
        }
    }
}

/// The span's status said error.
pub const ERROR: u8 = 1;
/// Zipkin's `shared`: the server half of a span whose id its client half has.
pub const SHARED: u8 = 2;
/// The link to the parent does not block it (Jaeger `FOLLOWS_FROM`).
pub const FOLLOWS: u8 = 4;
/// The span has no end and no duration (optional in Zipkin v2): its end is
/// the latest of the spans below it, and no time is measured from it.
pub const NO_END: u8 = 16;
/// The span links to spans it did not come from (OTLP `links`, a Jaeger
/// reference to another trace): work a message started.
pub const LINKED: u8 = 8;

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
    /// [`ERROR`], [`SHARED`], [`FOLLOWS`], [`LINKED`], [`NO_END`].
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
    /// No start.
    pub no_times: u64,
    /// No end and no duration: kept, no time measured from them.
    pub no_end: u64,
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
    /// Each span link (span index, the linked span's id): OTLP `links`, and
    /// Jaeger references beyond the parent.
    pub links: Vec<(u32, u64)>,
    /// (service, instance) pairs seen: `service.instance.id`, `k8s.pod.name`,
    /// `host.name` (Jaeger's `hostname`, Zipkin's endpoint address).
    pub instances: BTreeSet<(Sym, Sym)>,
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

    /// Gives spans `from..` without a service `service` (their resource or
    /// process named it after them), and notes its `instance`.
    pub fn name_service(&mut self, from: usize, service: Sym, instance: Sym) {
        for s in &mut self.spans[from..] {
            if s.service == NO_SYM {
                s.service = service;
            }
        }
        self.instance(service, instance);
    }

    /// Notes that `service` ran on `instance`.
    pub fn instance(&mut self, service: Sym, instance: Sym) {
        if service != NO_SYM && instance != NO_SYM {
            self.instances.insert((service, instance));
        }
    }
}

/// A JSON scalar as the readers take it (an id, a time, a tag's value);
/// arrays and objects are `Other`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    /// A string.
    Str(String),
    /// A whole number.
    Int(i64),
    /// A whole number above `i64`.
    UInt(u64),
    /// Another number.
    Num(f64),
    /// A boolean.
    Bool(bool),
    /// An array or an object.
    Other(serde::de::IgnoredAny),
}

impl Scalar {
    /// The value as text (numbers and booleans as JSON writes them).
    pub fn text(&self) -> Option<String> {
        Some(match self {
            Scalar::Str(s) => s.clone(),
            Scalar::Int(x) => x.to_string(),
            Scalar::UInt(x) => x.to_string(),
            Scalar::Num(x) => crate::error::num(*x),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Other(_) => return None,
        })
    }

    /// The value as a number (a string holding one too).
    pub fn number(&self) -> Option<f64> {
        match self {
            Scalar::Str(s) => s.trim().parse().ok(),
            Scalar::Int(x) => Some(*x as f64),
            Scalar::UInt(x) => Some(*x as f64),
            Scalar::Num(x) => Some(*x),
            _ => None,
        }
    }

    /// A whole number (OTLP's 64-bit integers are decimal strings).
    pub fn int(&self) -> Option<i64> {
        match self {
            Scalar::Int(x) => Some(*x),
            Scalar::UInt(x) => i64::try_from(*x).ok(),
            Scalar::Str(s) if s.trim().parse::<i64>().is_ok() => s.trim().parse().ok(),
            v => v
                .number()
                .filter(|x| x.is_finite() && x.abs() < 9.2e18)
                .map(|x| x as i64),
        }
    }

    /// Whether it says true (`true`, `"true"`, a non-zero number).
    pub fn truthy(&self) -> bool {
        match self {
            Scalar::Str(s) => s.eq_ignore_ascii_case("true"),
            Scalar::Bool(b) => *b,
            v => v.number().is_some_and(|x| x != 0.0),
        }
    }
}

/// An id as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Id {
    /// Absent, null or empty.
    Missing,
    /// Not a hex (or base64) id.
    Bad,
    /// Its value (never 0).
    Ok(u128),
}

impl Id {
    /// An id from its JSON value (a number is no id: read as hex it would be
    /// another one).
    pub fn of(v: Option<&Scalar>) -> Id {
        match v {
            None => Id::Missing,
            Some(Scalar::Str(s)) if s.is_empty() => Id::Missing,
            Some(Scalar::Str(s)) => parse_id(s).map_or(Id::Bad, Id::Ok),
            Some(v) if v.int() == Some(0) => Id::Missing,
            Some(_) => Id::Bad,
        }
    }
}

/// Tags and attributes the readers use; every other is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attr {
    /// `peer.service`, `server.address`, `rpc.service`, `db.system`,
    /// `messaging.destination`: the callee, best first (the rank).
    Peer(u8),
    /// `http.route` (0), `http.target` or `url.path` (1).
    Route(u8),
    /// `service.name` (a resource's).
    Service,
    /// `service.instance.id` (0), `k8s.pod.name` (1), `host.name` (2),
    /// Jaeger's `hostname` (3).
    Instance(u8),
    /// `error` (Jaeger, Zipkin).
    Error,
    /// `otel.status_code` (an OpenTelemetry span exported to Jaeger).
    OtelStatus,
    /// `span.kind` (Jaeger).
    SpanKind,
    /// `sampler.type` (Jaeger).
    SamplerType,
    /// `sampler.param` (Jaeger).
    SamplerParam,
}

impl Attr {
    /// The attribute a key names, if the readers use it.
    pub fn of(name: &str) -> Option<Attr> {
        Some(match name {
            "peer.service" => Attr::Peer(0),
            "server.address" | "net.peer.name" => Attr::Peer(1),
            "rpc.service" => Attr::Peer(2),
            "db.system" | "db.type" => Attr::Peer(3),
            "messaging.destination.name" | "messaging.destination" => Attr::Peer(4),
            "http.route" => Attr::Route(0),
            "http.target" | "url.path" => Attr::Route(1),
            "service.name" => Attr::Service,
            "service.instance.id" => Attr::Instance(0),
            "k8s.pod.name" => Attr::Instance(1),
            "host.name" => Attr::Instance(2),
            "hostname" => Attr::Instance(3),
            "error" => Attr::Error,
            "otel.status_code" => Attr::OtelStatus,
            "span.kind" => Attr::SpanKind,
            "sampler.type" => Attr::SamplerType,
            "sampler.param" => Attr::SamplerParam,
            _ => return None,
        })
    }
}

/// A span as its format gives it, before it is kept.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Its trace id, id and parent's id.
    pub trace: Id,
    /// See `trace`.
    pub id: Id,
    /// See `trace`.
    pub parent: Id,
    /// Start, in nanoseconds since the epoch.
    pub start: Option<i64>,
    /// End, in nanoseconds since the epoch (or see `duration`).
    pub end: Option<i64>,
    /// Duration in nanoseconds (Jaeger, Zipkin).
    pub duration: Option<i64>,
    /// Operation name.
    pub name: Sym,
    /// Service ([`NO_SYM`]: its resource or process names it).
    pub service: Sym,
    /// Kind.
    pub kind: Kind,
    /// [`ERROR`], [`SHARED`], [`FOLLOWS`], [`LINKED`].
    pub flags: u8,
    /// The callee named, with the rank of the key that named it (lower wins).
    pub peer: (u8, Sym),
    /// `http.route` (rank 0) or `http.target` (rank 1).
    pub route: (u8, Sym),
    /// The instance named, with its rank (lower wins).
    pub instance: (u8, Sym),
    /// `sampler.type` said `probabilistic`, and `sampler.param`.
    pub sampler: (bool, Option<f64>),
    /// A sampling probability from the trace state.
    pub sampling: Option<f64>,
    /// Spans it links to beyond its parent.
    pub links: Vec<u64>,
}

impl Default for Draft {
    fn default() -> Draft {
        Draft {
            trace: Id::Missing,
            id: Id::Missing,
            parent: Id::Missing,
            start: None,
            end: None,
            duration: None,
            name: NO_SYM,
            service: NO_SYM,
            kind: Kind::Internal,
            flags: 0,
            peer: (u8::MAX, NO_SYM),
            route: (u8::MAX, NO_SYM),
            instance: (u8::MAX, NO_SYM),
            sampler: (false, None),
            sampling: None,
            links: Vec::new(),
        }
    }
}

impl Draft {
    /// Takes what an attribute or tag `key` = `value` says.
    pub fn attribute(&mut self, key: &str, value: &Scalar, strings: &mut Interner) {
        let Some(attr) = Attr::of(key) else { return };
        let text = value.text().filter(|t| !t.is_empty());
        let mut ranked = |slot: &mut (u8, Sym), rank: u8| {
            if let Some(t) = &text
                && rank < slot.0
            {
                *slot = (rank, strings.intern(t));
            }
        };
        match attr {
            Attr::Peer(r) => ranked(&mut self.peer, r),
            Attr::Route(r) => ranked(&mut self.route, r),
            Attr::Instance(r) => ranked(&mut self.instance, r),
            Attr::Service => {
                if let Some(t) = &text {
                    self.service = strings.intern(t);
                }
            }
            Attr::Error if value.truthy() => self.flags |= ERROR,
            Attr::OtelStatus
                if text
                    .as_deref()
                    .is_some_and(|t| t.eq_ignore_ascii_case("error")) =>
            {
                self.flags |= ERROR
            }
            Attr::SpanKind => self.kind = Kind::of(value),
            Attr::SamplerType => {
                self.sampler.0 = text
                    .as_deref()
                    .is_some_and(|t| t.eq_ignore_ascii_case("probabilistic"))
            }
            Attr::SamplerParam => self.sampler.1 = value.number(),
            _ => {}
        }
    }

    /// The span's sampling probability, if it says one.
    fn probability(&self) -> Option<f64> {
        let jaeger = self
            .sampler
            .1
            .filter(|p| self.sampler.0 && *p > 0.0 && *p <= 1.0);
        jaeger.or(self.sampling)
    }

    /// Keeps the span in `store` (true), or counts why it cannot be kept.
    pub fn keep(self, store: &mut SpanStore) -> bool {
        let span = |id: Id| match id {
            Id::Ok(v) => u64::try_from(v).ok(),
            Id::Missing => Some(0),
            Id::Bad => None,
        };
        let (Id::Ok(trace), Some(id @ 1..), Some(parent)) =
            (self.trace, span(self.id), span(self.parent))
        else {
            store.skipped.bad_ids += 1;
            return false;
        };
        let Some(start) = self.start else {
            store.skipped.no_times += 1;
            return false;
        };
        let mut flags = self.flags;
        let end = match (self.end, self.duration) {
            (Some(e), _) => e,
            (None, Some(d)) => start.saturating_add(d),
            (None, None) => {
                // kept for the call graph: the spans below it stay in place
                store.skipped.no_end += 1;
                flags |= NO_END;
                start
            }
        };
        if end < start {
            store.skipped.negative += 1;
        }
        let index = store.spans.len() as u32;
        if let Some(p) = self.probability() {
            store.sampling.insert(index, p);
        }
        if !self.links.is_empty() {
            flags |= LINKED;
            store.links.extend(self.links.iter().map(|&l| (index, l)));
        }
        store.instance(self.service, self.instance.1);
        let trace = store.trace(trace);
        store.spans.push(SpanRec {
            trace,
            service: self.service,
            id,
            parent,
            start,
            end: end.max(start),
            name: self.name,
            peer: self.peer.1,
            route: self.route.1,
            kind: self.kind,
            flags,
        });
        true
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
        assert_eq!(parse_id("eee19b7ec3c1b174"), Some(0xeee19b7ec3c1b174));
        // Jaeger leaves leading zeros out
        assert_eq!(parse_id("1f"), Some(0x1f));
        // base64 of the bytes 5b8efff798038103d269b633813fc60c and eee19b7ec3c1b174
        assert_eq!(
            parse_id("W47/95gDgQPSabYzgT/GDA=="),
            Some(0x5b8efff798038103d269b633813fc60c)
        );
        assert_eq!(parse_id("7uGbfsPBsXQ="), Some(0xeee19b7ec3c1b174));
        assert_eq!(parse_id(""), None);
        assert_eq!(parse_id("00000000"), None);
        assert_eq!(parse_id("xyz"), None);
        let num = Scalar::Int(12);
        assert_eq!(Id::of(Some(&num)), Id::Bad);
        assert_eq!(Id::of(Some(&Scalar::Int(0))), Id::Missing);
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
        assert_eq!(Kind::of(&Scalar::Int(2)), Kind::Server);
        assert_eq!(Kind::of(&Scalar::Int(9)), Kind::Internal);
        assert_eq!(
            Kind::of(&Scalar::Str("SPAN_KIND_CLIENT".into())),
            Kind::Client
        );
        assert_eq!(Kind::of(&Scalar::Str("consumer".into())), Kind::Consumer);
    }
}
