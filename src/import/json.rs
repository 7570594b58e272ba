//! What the three trace readers share: streaming through a JSON file with
//! serde visitors (each span is read into a [`Draft`] and kept as a compact
//! [`SpanRec`](super::spans::SpanRec); no tree of JSON values is built), the
//! JSON pointer of where the reader is (for error messages), and the file's
//! first bytes (a byte order mark, UTF-16, gzip).

use super::spans::{FOLLOWS, Kind, NO_SYM, SHARED, SpanRec, SpanStore, Sym, parse_id};
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// One step of the JSON pointer to where the reader is.
#[derive(Debug, Clone, Copy)]
pub enum Seg {
    /// A key the reader knows.
    Key(&'static str),
    /// A key it skips (its text is in [`Ctx::other`]).
    Other,
    /// An array index.
    Index(usize),
}

/// The state a file's readers share: where they are, and the store.
pub struct Ctx<'s> {
    /// The JSON pointer, one step per level.
    pub path: Vec<Seg>,
    /// The last skipped key's text (one at a time: skipped values are not
    /// entered).
    pub other: String,
    /// Where spans go.
    pub store: &'s mut SpanStore,
    /// Spans kept from this file.
    pub kept: u64,
    /// The service of the spans being read when their container names it
    /// before them (an OTLP resource); [`NO_SYM`] otherwise.
    pub service: Sym,
}

impl<'s> Ctx<'s> {
    /// A reader's state for one file.
    pub fn new(store: &'s mut SpanStore) -> Ctx<'s> {
        Ctx {
            path: Vec::with_capacity(16),
            other: String::new(),
            store,
            kept: 0,
            service: NO_SYM,
        }
    }

    /// The JSON pointer (RFC 6901) of where the reader is.
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for s in &self.path {
            out.push('/');
            match s {
                Seg::Key(k) => out.push_str(k),
                Seg::Other => out.push_str(&self.other.replace('~', "~0").replace('/', "~1")),
                Seg::Index(i) => out.push_str(&i.to_string()),
            }
        }
        if out.is_empty() { "/".into() } else { out }
    }
}

/// A map's keys, as a reader sees them: one it knows (by its position in the
/// list given) or another.
pub struct KeySeed<'c, 's> {
    /// The keys the reader knows.
    pub known: &'static [&'static str],
    /// Where another key's text goes.
    pub ctx: &'c mut Ctx<'s>,
}

seed_via_visitor!(KeySeed<'_, '_>, deserialize_str);

impl<'de> Visitor<'de> for KeySeed<'_, '_> {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        let i = self.known.iter().position(|k| *k == v);
        if i.is_none() {
            self.ctx.other.clear();
            self.ctx.other.push_str(v);
        }
        Ok(i)
    }
}

/// A key among `known` (its position), without the pointer's bookkeeping:
/// for small objects whose other keys need no name in a message.
pub struct Keys(pub &'static [&'static str]);

seed_via_visitor!(Keys, deserialize_str);

impl<'de> Visitor<'de> for Keys {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|k| *k == v))
    }
}

/// Reads the next key of `map`: Some(Some(i)) for `known[i]`, Some(None) for
/// another (its value must still be read or skipped), None at the end.
pub fn next_key<'de, A: MapAccess<'de>>(
    map: &mut A,
    ctx: &mut Ctx<'_>,
    known: &'static [&'static str],
) -> Result<Option<Option<usize>>, A::Error> {
    map.next_key_seed(KeySeed { known, ctx })
}

/// Skips the value of another key, with the key on the pointer while it does.
pub fn skip_value<'de, A: MapAccess<'de>>(map: &mut A, ctx: &mut Ctx<'_>) -> Result<(), A::Error> {
    ctx.path.push(Seg::Other);
    map.next_value::<IgnoredAny>()?;
    ctx.path.pop();
    Ok(())
}

/// Runs `f` (which reads the value of `key`) with `key` on the pointer.
pub fn at<T, E>(
    ctx: &mut Ctx<'_>,
    key: &'static str,
    f: impl FnOnce(&mut Ctx<'_>) -> Result<T, E>,
) -> Result<T, E> {
    ctx.path.push(Seg::Key(key));
    let v = f(ctx)?;
    ctx.path.pop();
    Ok(v)
}

/// An id as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// Absent, null or empty.
    Missing,
    /// Not a hex (or base64) id.
    Bad,
    /// Its value (never 0).
    Ok(u128),
}

/// A hex id string (or null).
pub struct IdSeed;

seed_via_visitor!(IdSeed, deserialize_any);

impl<'de> Visitor<'de> for IdSeed {
    type Value = Id;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an id: a string of hex digits")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
        if v.is_empty() {
            return Ok(Id::Missing);
        }
        Ok(parse_id(v).map_or(Id::Bad, Id::Ok))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Id, E> {
        Ok(Id::Missing)
    }
    fn visit_none<E: de::Error>(self) -> Result<Id, E> {
        Ok(Id::Missing)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
        // an id written as a number: read as its digits in hex would be wrong
        Ok(if v == 0 { Id::Missing } else { Id::Bad })
    }
}

/// A whole number of some unit, written as a number or a decimal string
/// (OTLP's 64-bit integers are strings); None when it is neither.
pub struct IntSeed;

seed_via_visitor!(IntSeed, deserialize_any);

impl<'de> Visitor<'de> for IntSeed {
    type Value = Option<i64>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a whole number (or one in a string)")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<i64>, E> {
        Ok(v.trim().parse::<i64>().ok().or_else(|| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && x.abs() < 9.2e18)
                .map(|x| x as i64)
        }))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<i64>, E> {
        Ok(i64::try_from(v).ok())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<i64>, E> {
        Ok(Some(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<i64>, E> {
        Ok((v.is_finite() && v.abs() < 9.2e18).then_some(v as i64))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<i64>, E> {
        Ok(None)
    }
}

/// A string, interned (null: [`NO_SYM`]).
pub struct SymSeed<'c, 's>(pub &'c mut Ctx<'s>);

seed_via_visitor!(SymSeed<'_, '_>, deserialize_any);

impl<'de> Visitor<'de> for SymSeed<'_, '_> {
    type Value = Sym;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Sym, E> {
        Ok(self.0.store.strings.intern(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Sym, E> {
        Ok(NO_SYM)
    }
}

/// A scalar value of an attribute or tag, as text (numbers and booleans
/// written as JSON writes them).
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// A string.
    Str(String),
    /// A number.
    Num(f64),
    /// A boolean.
    Bool(bool),
}

impl Scalar {
    /// The value as text.
    pub fn text(&self) -> String {
        match self {
            Scalar::Str(s) => s.clone(),
            Scalar::Num(x) => crate::error::num(*x),
            Scalar::Bool(b) => b.to_string(),
        }
    }

    /// The value as a number (a string holding one too).
    pub fn number(&self) -> Option<f64> {
        match self {
            Scalar::Str(s) => s.trim().parse().ok(),
            Scalar::Num(x) => Some(*x),
            Scalar::Bool(_) => None,
        }
    }

    /// Whether it says true (`true`, `"true"`, a non-zero number).
    pub fn truthy(&self) -> bool {
        match self {
            Scalar::Str(s) => s.eq_ignore_ascii_case("true"),
            Scalar::Num(x) => *x != 0.0,
            Scalar::Bool(b) => *b,
        }
    }
}

/// A JSON scalar (arrays and objects: None).
pub struct ScalarSeed;

seed_via_visitor!(ScalarSeed, deserialize_any);

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Option<Scalar>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<Scalar>, E> {
        Ok(Some(Scalar::Str(v.to_string())))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<Scalar>, E> {
        Ok(Some(Scalar::Bool(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<Scalar>, E> {
        Ok(Some(Scalar::Num(v as f64)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<Scalar>, E> {
        Ok(Some(Scalar::Num(v as f64)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<Scalar>, E> {
        Ok(Some(Scalar::Num(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<Scalar>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Scalar>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Scalar>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// The attribute and tag keys the readers use; every other is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrKey {
    /// `service.name` (a resource's).
    ServiceName,
    /// `peer.service`: the callee, named by the caller.
    PeerService,
    /// `server.address`, `net.peer.name`: the callee's host.
    ServerAddress,
    /// `rpc.service`.
    RpcService,
    /// `db.system`, `db.type`.
    DbSystem,
    /// `messaging.destination.name`, `messaging.destination`.
    Destination,
    /// `http.route`.
    HttpRoute,
    /// `http.target`, `url.path`.
    HttpTarget,
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

/// The keys [`AttrKey`] knows, by name.
pub fn attr_key(name: &str) -> Option<AttrKey> {
    Some(match name {
        "service.name" => AttrKey::ServiceName,
        "peer.service" => AttrKey::PeerService,
        "server.address" | "net.peer.name" => AttrKey::ServerAddress,
        "rpc.service" => AttrKey::RpcService,
        "db.system" | "db.type" => AttrKey::DbSystem,
        "messaging.destination.name" | "messaging.destination" => AttrKey::Destination,
        "http.route" => AttrKey::HttpRoute,
        "http.target" | "url.path" => AttrKey::HttpTarget,
        "error" => AttrKey::Error,
        "otel.status_code" => AttrKey::OtelStatus,
        "span.kind" => AttrKey::SpanKind,
        "sampler.type" => AttrKey::SamplerType,
        "sampler.param" => AttrKey::SamplerParam,
        _ => return None,
    })
}

/// A span as its fields are read, in any order.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Its trace id.
    pub trace: Id,
    /// Its id.
    pub id: Id,
    /// Its parent's id.
    pub parent: Id,
    /// Start, in nanoseconds since the epoch.
    pub start: Option<i64>,
    /// End, in nanoseconds since the epoch (or see `duration`).
    pub end: Option<i64>,
    /// Duration in nanoseconds (Jaeger, Zipkin).
    pub duration: Option<i64>,
    /// Operation name.
    pub name: Sym,
    /// Service.
    pub service: Sym,
    /// Kind.
    pub kind: Kind,
    /// A kind was given.
    pub kind_given: bool,
    /// Status error, `error` tag.
    pub error: bool,
    /// The callee named, with the rank of the key that named it (lower wins).
    pub peer: (u8, Sym),
    /// `http.route` (rank 0) or `http.target` (rank 1).
    pub route: (u8, Sym),
    /// `sampler.type` said `probabilistic`.
    pub sampler_probabilistic: bool,
    /// `sampler.param`.
    pub sampler_param: Option<f64>,
    /// A sampling probability from the trace state.
    pub sampling: Option<f64>,
    /// Zipkin's `shared`.
    pub shared: bool,
    /// The parent link does not block (FOLLOWS_FROM).
    pub follows: bool,
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
            kind_given: false,
            error: false,
            peer: (u8::MAX, NO_SYM),
            route: (u8::MAX, NO_SYM),
            sampler_probabilistic: false,
            sampler_param: None,
            sampling: None,
            shared: false,
            follows: false,
        }
    }
}

impl Draft {
    /// Takes what an attribute or tag says.
    pub fn attribute(&mut self, key: AttrKey, value: &Scalar, ctx: &mut Ctx<'_>) {
        let text_sym = |ctx: &mut Ctx<'_>| match value {
            Scalar::Str(s) if !s.is_empty() => Some(ctx.store.strings.intern(s)),
            Scalar::Str(_) => None,
            other => Some(ctx.store.strings.intern(&other.text())),
        };
        match key {
            AttrKey::ServiceName => {
                if let Some(s) = text_sym(ctx) {
                    self.service = s;
                }
            }
            AttrKey::PeerService
            | AttrKey::ServerAddress
            | AttrKey::RpcService
            | AttrKey::DbSystem
            | AttrKey::Destination => {
                let rank = key as u8;
                if rank < self.peer.0
                    && let Some(s) = text_sym(ctx)
                {
                    self.peer = (rank, s);
                }
            }
            AttrKey::HttpRoute | AttrKey::HttpTarget => {
                let rank = u8::from(key == AttrKey::HttpTarget);
                if rank < self.route.0
                    && let Some(s) = text_sym(ctx)
                {
                    self.route = (rank, s);
                }
            }
            AttrKey::Error => self.error |= value.truthy(),
            AttrKey::OtelStatus => {
                self.error |= matches!(value, Scalar::Str(s) if s.eq_ignore_ascii_case("error"))
            }
            AttrKey::SpanKind => {
                if let Scalar::Str(s) = value {
                    self.kind = Kind::from_name(s);
                    self.kind_given = true;
                }
            }
            AttrKey::SamplerType => {
                self.sampler_probabilistic =
                    matches!(value, Scalar::Str(s) if s.eq_ignore_ascii_case("probabilistic"))
            }
            AttrKey::SamplerParam => self.sampler_param = value.number(),
        }
    }

    /// The span's sampling probability, if it says one.
    fn probability(&self) -> Option<f64> {
        let jaeger = self
            .sampler_param
            .filter(|_| self.sampler_probabilistic)
            .filter(|p| *p > 0.0 && *p <= 1.0);
        jaeger.or(self.sampling)
    }

    /// Keeps the span in the store, or counts why it cannot be kept.
    pub fn finish(self, ctx: &mut Ctx<'_>) {
        let skipped = &mut ctx.store.skipped;
        let (Id::Ok(trace), Id::Ok(id)) = (self.trace, self.id) else {
            skipped.bad_ids += 1;
            return;
        };
        let Ok(id) = u64::try_from(id) else {
            skipped.bad_ids += 1;
            return;
        };
        let parent = match self.parent {
            Id::Ok(p) => match u64::try_from(p) {
                Ok(p) => p,
                Err(_) => {
                    skipped.bad_ids += 1;
                    return;
                }
            },
            Id::Missing => 0,
            Id::Bad => {
                skipped.bad_ids += 1;
                return;
            }
        };
        let Some(start) = self.start else {
            skipped.no_times += 1;
            return;
        };
        let end = match (self.end, self.duration) {
            (Some(e), _) => e,
            (None, Some(d)) => start.saturating_add(d),
            (None, None) => {
                skipped.no_times += 1;
                return;
            }
        };
        let mut flags = 0;
        if self.error {
            flags |= super::spans::ERROR;
        }
        if self.shared {
            flags |= SHARED;
        }
        if self.follows {
            flags |= FOLLOWS;
        }
        let sampling = self.probability();
        let trace = ctx.store.trace(trace);
        let service = if self.service == NO_SYM {
            ctx.service
        } else {
            self.service
        };
        let rec = SpanRec {
            trace,
            service,
            id,
            parent,
            start,
            end,
            name: self.name,
            peer: self.peer.1,
            route: self.route.1,
            kind: self.kind,
            flags,
        };
        ctx.store.push(rec, sampling);
        ctx.kept += 1;
    }
}

/// Reads a JSON array element by element with `each`, the index on the
/// pointer while it does.
pub fn each_element<'de, A, F>(mut seq: A, ctx: &mut Ctx<'_>, mut each: F) -> Result<(), A::Error>
where
    A: SeqAccess<'de>,
    F: FnMut(&mut A, &mut Ctx<'_>) -> Result<bool, A::Error>,
{
    let mut i = 0;
    loop {
        ctx.path.push(Seg::Index(i));
        let more = each(&mut seq, ctx)?;
        ctx.path.pop();
        if !more {
            return Ok(());
        }
        i += 1;
    }
}

/// The file's first bytes: what they say it is not.
pub fn check_head(head: &[u8]) -> Result<usize, String> {
    if head.is_empty() {
        return Err("the file is empty".into());
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Err("the file is compressed (gzip): decompress it first (gunzip)".into());
    }
    if head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]) {
        return Err("the file is UTF-16: save it as UTF-8".into());
    }
    if head.len() >= 2 && (head[0] == 0 || head[1] == 0) {
        return Err("the file is UTF-16 (or binary): save it as UTF-8".into());
    }
    if head.starts_with(&[0xef, 0xbb, 0xbf]) {
        return Ok(3);
    }
    Ok(0)
}
