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
/// tag and Zipkin's `kind` map onto them). No kind is `Internal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    #[default]
    Internal,
    Server,
    Client,
    Producer,
    Consumer,
}

impl Kind {
    /// A kind by OTLP's number or by name (`SERVER`, `client`, `SPAN_KIND_CONSUMER`).
    pub fn of(v: &Scalar) -> Kind {
        let name = match v {
            Scalar::Str(s) => s.trim_start_matches("SPAN_KIND_").to_ascii_lowercase(),
            v => match v.int() {
                Some(2) => "server",
                Some(3) => "client",
                Some(4) => "producer",
                Some(5) => "consumer",
                _ => "",
            }
            .to_string(),
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
/// The span links to spans it did not come from (OTLP `links`, a Jaeger
/// reference to another trace): work a message started.
pub const LINKED: u8 = 8;
/// No end and no duration (optional in Zipkin v2): its end is the latest of
/// the spans below it, and no time is measured from it.
pub const NO_END: u8 = 16;

/// One span, as every format is read.
#[derive(Debug, Clone, Copy)]
pub struct SpanRec {
    /// The trace, by index into [`SpanStore::trace_ids`].
    pub trace: u32,
    /// Its service ([`NO_SYM`]: the file names none).
    pub service: Sym,
    /// Its id (never 0), and its parent's (0: none).
    pub id: u64,
    pub parent: u64,
    /// Start and end (never before the start), ns since the epoch.
    pub start: i64,
    pub end: i64,
    pub name: Sym,
    /// The callee a client span names (`peer.service`, `server.address`,
    /// `db.system`, Zipkin's `remoteEndpoint`), or [`NO_SYM`].
    pub peer: Sym,
    /// Its `http.route` (or `http.target`, `url.path`), or [`NO_SYM`].
    pub route: Sym,
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

/// Spans a reader could not use as they were, by why (each counted).
#[derive(Debug, Default, Clone)]
pub struct Skipped {
    /// No usable trace or span id, or no start: left out.
    pub bad_ids: u64,
    pub no_times: u64,
    /// Ended before it started (its end set to its start).
    pub negative: u64,
    /// No end and no duration: kept, no time measured from them.
    pub no_end: u64,
}

/// Every span read, from every file.
#[derive(Debug, Default)]
pub struct SpanStore {
    /// The spans, in the order read.
    pub spans: Vec<SpanRec>,
    /// Trace ids by index.
    pub trace_ids: Vec<u128>,
    trace_index: HashMap<u128, u32>,
    pub strings: Interner,
    /// The sampling probability a span carries (Jaeger's `sampler.param`, an
    /// OTLP `ot=th:` trace state), by span index; only spans that say one.
    pub sampling: HashMap<u32, f64>,
    /// Each span link (span index, the linked span's id).
    pub links: Vec<(u32, u64)>,
    /// (service, instance) pairs seen.
    pub instances: BTreeSet<(Sym, Sym)>,
    pub skipped: Skipped,
}

impl SpanStore {
    /// The index of trace `id`.
    pub fn trace(&mut self, id: u128) -> u32 {
        let next = self.trace_ids.len() as u32;
        let i = *self.trace_index.entry(id).or_insert(next);
        if i == next {
            self.trace_ids.push(id);
        }
        i
    }

    /// Gives spans `from..` without a service `service` (their resource or
    /// process named it after them), and notes its `instance`.
    pub fn name_service(&mut self, from: usize, service: Sym, instance: Sym) {
        for s in self.spans[from..]
            .iter_mut()
            .filter(|s| s.service == NO_SYM)
        {
            s.service = service;
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
#[derive(Debug, Clone)]
pub enum Scalar {
    Str(String),
    Int(i64),
    UInt(u64),
    Num(f64),
    Bool(bool),
    Other,
}

/// A scalar read as it comes (no buffering, as an untagged enum would).
impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Str(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::UInt(v))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Num(v))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Scalar, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Scalar, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
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
            Scalar::Other => return None,
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
            v => v.number().filter(|x| x.abs() < 9.2e18).map(|x| x as i64),
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

/// A time field of a span that no 64-bit count of nanoseconds since 1970
/// holds (a start or end past the year 2262, or before 1970; a duration as
/// long): `field` is its key in the span, for the JSON pointer.
#[derive(Debug, Clone)]
pub struct BadTime {
    pub field: String,
    pub message: String,
}

impl BadTime {
    /// The same fault, its field under `at` (a span's place in a list).
    pub fn under(mut self, at: &str) -> BadTime {
        self.field = format!("{at}/{}", self.field);
        self
    }
}

/// A span kept, or the time that kept it out.
pub type Kept = Result<(), BadTime>;

/// The largest time or duration a span may have: what 64-bit nanoseconds
/// hold (about 292 years; the year 2262 since 1970).
const MAX_NS: i128 = i64::MAX as i128;

/// A time (`duration`: false) or duration field in nanoseconds, from its
/// value in units of `unit` ns (1: OTLP's nanoseconds, 1000: Jaeger's and
/// Zipkin's microseconds). None when absent or not a number (the span is then
/// counted as one without a start or an end); an error when the number does
/// not fit 64-bit nanoseconds, or a time is before 1970 (OTLP's times are
/// unsigned, `fixed64`; Jaeger's and Zipkin's count from 1970): every sum and
/// difference of the import's times then fits too.
pub fn nanos(
    v: Option<&Scalar>,
    unit: i64,
    field: &'static str,
    duration: bool,
) -> Result<Option<i64>, BadTime> {
    let Some(v) = v else { return Ok(None) };
    let exact: Option<i128> = match v {
        Scalar::Int(x) => Some(i128::from(*x)),
        Scalar::UInt(x) => Some(i128::from(*x)),
        Scalar::Str(s) => s.trim().parse::<i128>().ok(),
        _ => None,
    };
    let ns = match (exact, v.number()) {
        (Some(x), _) => x.checked_mul(i128::from(unit)),
        (None, Some(x)) if x.is_finite() => {
            let x = x * unit as f64;
            (x.abs() < 9.2e18).then_some(x as i128)
        }
        // not a number: no time
        (None, _) => return Ok(None),
    };
    let units = if unit == 1 { "ns" } else { "µs" };
    let text = v.text().unwrap_or_default();
    let bad = |why: &str| BadTime {
        field: field.into(),
        message: format!("{text} {units} {why}"),
    };
    match ns {
        Some(ns) if ns.abs() <= MAX_NS && (duration || ns >= 0) => Ok(Some(ns as i64)),
        Some(ns) if ns < 0 && !duration => Err(bad(
            "is before 1970: a span's time counts from 1970 (the Unix epoch)",
        )),
        _ => Err(bad(if duration {
            "is longer than 64-bit nanoseconds hold (about 292 years): not a span's duration"
        } else {
            "is beyond what 64-bit nanoseconds since 1970 hold (the year 2262): not a span's time"
        })),
    }
}

/// An id as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Id {
    /// Absent, null or empty.
    #[default]
    Missing,
    /// Not a hex (or base64) id.
    Bad,
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

    /// A span id (within 64 bits), if it is one.
    pub fn span(self) -> Option<u64> {
        match self {
            Id::Ok(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }
}

/// A span as its format gives it, before it is kept. The ranked slots keep
/// the best key that named them (rank 1 is best; 0: none yet).
#[derive(Debug, Clone, Default)]
pub struct Draft {
    pub trace: Id,
    pub id: Id,
    pub parent: Id,
    /// Start and end (or duration), ns.
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub duration: Option<i64>,
    pub name: Option<Sym>,
    /// Its service (None: its resource or process names it).
    pub service: Option<Sym>,
    pub kind: Kind,
    /// [`ERROR`], [`SHARED`], [`FOLLOWS`].
    pub flags: u8,
    /// The callee it names: `peer.service` 1, `server.address` 2,
    /// `rpc.service` 3, `db.system` 4, `messaging.destination` 5.
    pub peer: (u8, Sym),
    /// `http.route` 1, `http.target` or `url.path` 2.
    pub route: (u8, Sym),
    /// `service.instance.id` 1, `k8s.pod.name` 2, `host.name` 3, `hostname` 4.
    pub instance: (u8, Sym),
    /// `sampler.type` said `probabilistic`, and `sampler.param`.
    pub sampler: (bool, Option<f64>),
    /// A sampling probability from the trace state.
    pub sampling: Option<f64>,
    /// Spans it links to beyond its parent.
    pub links: Vec<u64>,
}

/// The rank of a slot: the better key named it.
pub fn rank(slot: &mut (u8, Sym), rank: u8, sym: Sym) {
    if slot.0 == 0 || rank < slot.0 {
        *slot = (rank, sym);
    }
}

impl Draft {
    /// Takes what an attribute or tag `key` = `value` says.
    pub fn attribute(&mut self, key: &str, value: &Scalar, strings: &mut Interner) {
        let text = value.text().filter(|t| !t.is_empty());
        let slot = match key {
            "peer.service" => Some((&mut self.peer, 1)),
            "server.address" | "net.peer.name" => Some((&mut self.peer, 2)),
            "rpc.service" => Some((&mut self.peer, 3)),
            "db.system" | "db.type" => Some((&mut self.peer, 4)),
            "messaging.destination.name" | "messaging.destination" => Some((&mut self.peer, 5)),
            "http.route" => Some((&mut self.route, 1)),
            "http.target" | "url.path" => Some((&mut self.route, 2)),
            "service.instance.id" => Some((&mut self.instance, 1)),
            "k8s.pod.name" => Some((&mut self.instance, 2)),
            "host.name" => Some((&mut self.instance, 3)),
            "hostname" => Some((&mut self.instance, 4)),
            _ => None,
        };
        if let (Some((slot, r)), Some(t)) = (slot, &text) {
            return rank(slot, r, strings.intern(t));
        }
        let is = |word: &str| {
            text.as_deref()
                .is_some_and(|t| t.eq_ignore_ascii_case(word))
        };
        match key {
            "service.name" => self.service = text.map(|t| strings.intern(&t)).or(self.service),
            "error" if value.truthy() => self.flags |= ERROR,
            "otel.status_code" if is("error") => self.flags |= ERROR,
            "span.kind" => self.kind = Kind::of(value),
            "sampler.type" => self.sampler.0 = is("probabilistic"),
            "sampler.param" => self.sampler.1 = value.number(),
            _ => {}
        }
    }

    /// Keeps the span in `store`, or counts why it cannot be kept; an
    /// error when its start and duration end beyond 64-bit nanoseconds.
    pub fn keep(self, store: &mut SpanStore) -> Kept {
        let (Id::Ok(trace), Some(id @ 1..)) = (self.trace, self.id.span()) else {
            store.skipped.bad_ids += 1;
            return Ok(());
        };
        let parent = match self.parent {
            Id::Missing => 0,
            p => match p.span() {
                Some(p) => p,
                None => {
                    store.skipped.bad_ids += 1;
                    return Ok(());
                }
            },
        };
        let Some(start) = self.start else {
            store.skipped.no_times += 1;
            return Ok(());
        };
        let mut flags = self.flags;
        let end = match (self.end, self.duration) {
            (Some(e), _) => e,
            (None, Some(d)) => start.checked_add(d).ok_or_else(|| BadTime {
                field: "duration".into(),
                message: format!(
                    "{} ms from a start {} ms after 1970 ends beyond what 64-bit nanoseconds since 1970 hold (the year 2262): not a span's duration",
                    crate::error::num(d as f64 / 1e6),
                    crate::error::num(start as f64 / 1e6)
                ),
            })?,
            (None, None) => {
                // kept for the call graph: the spans below it stay in place
                store.skipped.no_end += 1;
                flags |= NO_END;
                start
            }
        };
        store.skipped.negative += u64::from(end < start);
        let index = store.spans.len() as u32;
        let jaeger = self
            .sampler
            .1
            .filter(|p| self.sampler.0 && *p > 0.0 && *p <= 1.0);
        if let Some(p) = jaeger.or(self.sampling) {
            store.sampling.insert(index, p);
        }
        if !self.links.is_empty() {
            flags |= LINKED;
            store.links.extend(self.links.iter().map(|&l| (index, l)));
        }
        let service = self.service.unwrap_or(NO_SYM);
        store.instance(
            service,
            if self.instance.0 > 0 {
                self.instance.1
            } else {
                NO_SYM
            },
        );
        let trace = store.trace(trace);
        let sym = |slot: (u8, Sym)| if slot.0 > 0 { slot.1 } else { NO_SYM };
        store.spans.push(SpanRec {
            trace,
            service,
            id,
            parent,
            start,
            end: end.max(start),
            name: self.name.unwrap_or(NO_SYM),
            peer: sym(self.peer),
            route: sym(self.route),
            kind: self.kind,
            flags,
        });
        Ok(())
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
    let (mut v, mut acc, mut bits, mut bytes) = (0u128, 0u32, 0, 0);
    for b in s.bytes().take_while(|&b| b != b'=') {
        let d = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        (acc, bits) = ((acc << 6) | u32::from(d), bits + 6);
        if bits >= 8 {
            bits -= 8;
            (v, bytes) = ((v << 8) | u128::from(acc >> bits), bytes + 1);
            acc &= (1 << bits) - 1;
        }
    }
    (bytes <= 16).then_some(v)
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
        assert_eq!(Id::of(Some(&Scalar::Int(12))), Id::Bad);
        assert_eq!(Id::of(Some(&Scalar::Int(0))), Id::Missing);
        assert_eq!(Id::Ok(1 << 70).span(), None);
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

    #[test]
    fn the_best_key_names_a_slot() {
        let mut strings = Interner::default();
        let mut d = Draft::default();
        d.attribute("db.system", &Scalar::Str("mysql".into()), &mut strings);
        d.attribute(
            "peer.service",
            &Scalar::Str("orders-db".into()),
            &mut strings,
        );
        d.attribute(
            "server.address",
            &Scalar::Str("10.0.0.1".into()),
            &mut strings,
        );
        assert_eq!(strings.name(d.peer.1), "orders-db");
    }
}
