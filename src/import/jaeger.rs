//! Jaeger's JSON (what its UI downloads and its query API answers):
//! `{"data": [{"traceID", "spans": [...], "processes": {"p1": {"serviceName"}}}]}`.
//! A span names its process by `processID` (or carries it as `process`); its
//! parent is its first `CHILD_OF` reference (else `FOLLOWS_FROM`, which does
//! not block the parent; older files give `parentSpanID`); `startTime` and
//! `duration` are microseconds; the `span.kind` tag gives its kind, the
//! `error` tag (or `otel.status_code = ERROR`) an error, and `sampler.type =
//! probabilistic` with `sampler.param` its sampling probability.

use super::json::{
    AttrKey, Ctx, Draft, Id, IdSeed, IntSeed, Keys, Scalar, ScalarSeed, SymSeed, at, attr_key,
    each_element, next_key, skip_value,
};
use super::spans::{NO_SYM, Sym};
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::HashMap;
use std::fmt;

/// The value of `data`: a list of traces.
pub struct TraceList<'c, 's>(pub &'c mut Ctx<'s>);

seed_via_visitor!(TraceList<'_, '_>, deserialize_seq);

impl<'de> Visitor<'de> for TraceList<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of traces")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        each_element(seq, self.0, |seq, ctx| {
            Ok(seq.next_element_seed(Trace(ctx))?.is_some())
        })
    }
}

/// One trace: its spans and the processes they name.
struct Trace<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Trace<'_, '_>, deserialize_map);

impl<'de> Visitor<'de> for Trace<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace: an object with `spans` and `processes`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        const KEYS: &[&str] = &["spans", "processes"];
        let ctx = self.0;
        // the spans kept, by store index, with the process each names
        let mut named: Vec<(usize, Sym)> = Vec::new();
        let mut processes: HashMap<Sym, Sym> = HashMap::new();
        while let Some(k) = next_key(&mut map, ctx, KEYS)? {
            match k {
                Some(0) => at(ctx, KEYS[0], |c| {
                    map.next_value_seed(SpanList {
                        ctx: c,
                        named: &mut named,
                    })
                })?,
                Some(_) => {
                    processes = at(ctx, KEYS[1], |c| map.next_value_seed(Processes(c)))?;
                }
                None => skip_value(&mut map, ctx)?,
            }
        }
        // processes may come after the spans: each span gets its service now
        for (i, process) in named {
            if let Some(&service) = processes.get(&process) {
                ctx.store.spans[i].service = service;
            }
        }
        Ok(())
    }
}

/// `processes`: process id -> its `serviceName`.
struct Processes<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Processes<'_, '_>, deserialize_any);

impl<'de> Visitor<'de> for Processes<'_, '_> {
    type Value = HashMap<Sym, Sym>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the processes: an object of process id -> {\"serviceName\": ...}")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(HashMap::new())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let ctx = self.0;
        let mut out = HashMap::new();
        while let Some(id) = map.next_key_seed(SymSeed(ctx))? {
            ctx.other.clear();
            ctx.other.push_str(ctx.store.strings.name(id));
            ctx.path.push(super::json::Seg::Other);
            let service = map.next_value_seed(Process(ctx))?;
            ctx.path.pop();
            out.insert(id, service);
        }
        Ok(out)
    }
}

/// A process: its `serviceName`.
struct Process<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Process<'_, '_>, deserialize_any);

impl<'de> Visitor<'de> for Process<'_, '_> {
    type Value = Sym;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a process: an object with `serviceName`")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Sym, E> {
        Ok(NO_SYM)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sym, A::Error> {
        let mut service = NO_SYM;
        while let Some(k) = map.next_key_seed(Keys(&["serviceName"]))? {
            match k {
                Some(_) => service = map.next_value_seed(SymSeed(self.0))?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(service)
    }
}

/// A trace's `spans`.
struct SpanList<'c, 's, 'n> {
    ctx: &'c mut Ctx<'s>,
    named: &'n mut Vec<(usize, Sym)>,
}

seed_via_visitor!(SpanList<'_, '_, '_>, deserialize_seq);

impl<'de> Visitor<'de> for SpanList<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of spans")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let named = self.named;
        each_element(seq, self.ctx, |seq, ctx| {
            let before = ctx.store.spans.len();
            match seq.next_element_seed(Span(ctx))? {
                None => Ok(false),
                Some(process) => {
                    if ctx.store.spans.len() > before && process != NO_SYM {
                        named.push((before, process));
                    }
                    Ok(true)
                }
            }
        })
    }
}

/// One span; its value is the process it names (NO_SYM: none, or one it
/// carries itself).
struct Span<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Span<'_, '_>, deserialize_map);

impl<'de> Visitor<'de> for Span<'_, '_> {
    type Value = Sym;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a span: an object with `traceID`, `spanID`, `startTime`, `duration`...")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sym, A::Error> {
        const KEYS: &[&str] = &[
            "traceID",
            "spanID",
            "parentSpanID",
            "operationName",
            "references",
            "startTime",
            "duration",
            "tags",
            "processID",
            "process",
        ];
        let ctx = self.0;
        let mut d = Draft::default();
        let mut process = NO_SYM;
        let mut reference = None;
        while let Some(k) = next_key(&mut map, ctx, KEYS)? {
            let Some(k) = k else {
                skip_value(&mut map, ctx)?;
                continue;
            };
            let key = KEYS[k];
            match k {
                0 => d.trace = at(ctx, key, |_| map.next_value_seed(IdSeed))?,
                1 => d.id = at(ctx, key, |_| map.next_value_seed(IdSeed))?,
                2 => {
                    let p = at(ctx, key, |_| map.next_value_seed(IdSeed))?;
                    if d.parent == Id::Missing {
                        d.parent = p;
                    }
                }
                3 => d.name = at(ctx, key, |c| map.next_value_seed(SymSeed(c)))?,
                4 => reference = at(ctx, key, |c| map.next_value_seed(References(c)))?,
                5 => d.start = at(ctx, key, |_| map.next_value_seed(IntSeed))?.map(us),
                6 => d.duration = at(ctx, key, |_| map.next_value_seed(IntSeed))?.map(us),
                7 => at(ctx, key, |c| {
                    map.next_value_seed(Tags {
                        ctx: c,
                        draft: &mut d,
                    })
                })?,
                8 => process = at(ctx, key, |c| map.next_value_seed(SymSeed(c)))?,
                _ => d.service = at(ctx, key, |c| map.next_value_seed(Process(c)))?,
            }
        }
        if let Some((parent, follows)) = reference {
            d.parent = parent;
            d.follows = follows;
        }
        let process = if d.service == NO_SYM { process } else { NO_SYM };
        d.finish(ctx);
        Ok(process)
    }
}

/// Microseconds to nanoseconds.
fn us(v: i64) -> i64 {
    v.saturating_mul(1000)
}

/// `references`: the parent (the first `CHILD_OF`, else the first
/// `FOLLOWS_FROM`: then true).
struct References<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(References<'_, '_>, deserialize_any);

impl<'de> Visitor<'de> for References<'_, '_> {
    type Value = Option<(Id, bool)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of references")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let mut child_of = None;
        let mut follows = None;
        each_element(seq, self.0, |seq, _| {
            match seq.next_element_seed(Reference)? {
                None => Ok(false),
                Some((id, is_follows)) => {
                    if is_follows {
                        follows = follows.or(Some(id));
                    } else {
                        child_of = child_of.or(Some(id));
                    }
                    Ok(true)
                }
            }
        })?;
        Ok(match (child_of, follows) {
            (Some(id), _) => Some((id, false)),
            (None, Some(id)) => Some((id, true)),
            (None, None) => None,
        })
    }
}

/// One reference: its span id, and whether it is `FOLLOWS_FROM`.
struct Reference;

seed_via_visitor!(Reference, deserialize_map);

impl<'de> Visitor<'de> for Reference {
    type Value = (Id, bool);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a reference: an object with `refType` and `spanID`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut id = Id::Missing;
        let mut follows = false;
        while let Some(k) = map.next_key_seed(Keys(&["refType", "spanID"]))? {
            match k {
                Some(0) => {
                    follows = matches!(
                        map.next_value_seed(ScalarSeed)?,
                        Some(Scalar::Str(s)) if s.eq_ignore_ascii_case("follows_from")
                    );
                }
                Some(_) => id = map.next_value_seed(IdSeed)?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((id, follows))
    }
}

/// `tags`: `[{key, type, value}]`, those [`attr_key`] knows into the draft.
struct Tags<'c, 's, 'd> {
    ctx: &'c mut Ctx<'s>,
    draft: &'d mut Draft,
}

seed_via_visitor!(Tags<'_, '_, '_>, deserialize_any);

impl<'de> Visitor<'de> for Tags<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of tags")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let draft = self.draft;
        each_element(seq, self.ctx, |seq, ctx| {
            match seq.next_element_seed(Tag)? {
                None => Ok(false),
                Some(found) => {
                    if let Some((key, value)) = found {
                        draft.attribute(key, &value, ctx);
                    }
                    Ok(true)
                }
            }
        })
    }
}

/// One tag: its key, if [`attr_key`] knows it, and its value.
struct Tag;

seed_via_visitor!(Tag, deserialize_map);

impl<'de> Visitor<'de> for Tag {
    type Value = Option<(AttrKey, Scalar)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tag: an object with `key` and `value`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut key: Option<Option<AttrKey>> = None;
        let mut value = None;
        while let Some(k) = map.next_key_seed(Keys(&["key", "value"]))? {
            match k {
                Some(0) => key = Some(map.next_value_seed(TagKey)?),
                Some(_) if key == Some(None) => {
                    map.next_value::<IgnoredAny>()?;
                }
                Some(_) => value = map.next_value_seed(ScalarSeed)?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(match (key, value) {
            (Some(Some(k)), Some(v)) => Some((k, v)),
            _ => None,
        })
    }
}

/// A tag's key: the [`AttrKey`] it is, if any.
pub(super) struct TagKey;

seed_via_visitor!(TagKey, deserialize_str);

impl<'de> Visitor<'de> for TagKey {
    type Value = Option<AttrKey>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tag key (a string)")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(attr_key(v))
    }
}
