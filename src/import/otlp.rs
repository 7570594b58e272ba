//! OpenTelemetry's OTLP JSON (`{"resourceSpans": [...]}`, one document or one
//! a line as the collector's file exporter writes them; Tempo's `batches` and
//! the older `instrumentationLibrarySpans` too). A resource's `service.name`
//! names the service of its spans; a span's `kind` is 2 server, 3 client, 4
//! producer, 5 consumer (or the enum's name); times are nanoseconds, in
//! decimal strings; `status.code` 2 is an error; ids are hex (or base64, the
//! protobuf JSON mapping's default).

use super::json::{
    AttrKey, Ctx, Draft, IdSeed, IntSeed, Keys, ScalarSeed, SymSeed, at, attr_key, each_element,
    next_key, skip_value,
};
use super::spans::{Kind, NO_SYM, Sym, trace_state_probability};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The value of `resourceSpans` (or `batches`): a list of resources and their
/// spans.
pub struct ResourceSpansList<'c, 's>(pub &'c mut Ctx<'s>);

seed_via_visitor!(ResourceSpansList<'_, '_>, deserialize_seq);

impl<'de> Visitor<'de> for ResourceSpansList<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of resource spans")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        each_element(seq, self.0, |seq, ctx| {
            Ok(seq.next_element_seed(ResourceSpans(ctx))?.is_some())
        })
    }
}

/// One resource and its spans.
struct ResourceSpans<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(ResourceSpans<'_, '_>, deserialize_map);

impl<'de> Visitor<'de> for ResourceSpans<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a resource's spans: an object with `resource` and `scopeSpans`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        const KEYS: &[&str] = &["resource", "scopeSpans", "instrumentationLibrarySpans"];
        let ctx = self.0;
        let first = ctx.store.spans.len();
        let mut service = NO_SYM;
        ctx.service = NO_SYM;
        while let Some(k) = next_key(&mut map, ctx, KEYS)? {
            match k {
                Some(0) => {
                    service = at(ctx, KEYS[0], |c| map.next_value_seed(Resource(c)))?;
                    // the spans after it take it as they are read
                    ctx.service = service;
                }
                Some(i) => at(ctx, KEYS[i], |c| map.next_value_seed(ScopeSpansList(c)))?,
                None => skip_value(&mut map, ctx)?,
            }
        }
        // the resource may come after its spans: they get its service now
        for s in &mut ctx.store.spans[first..] {
            if s.service == NO_SYM {
                s.service = service;
            }
        }
        ctx.service = NO_SYM;
        Ok(())
    }
}

/// A resource: the `service.name` of its attributes.
struct Resource<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Resource<'_, '_>, deserialize_any);

impl<'de> Visitor<'de> for Resource<'_, '_> {
    type Value = Sym;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a resource: an object with `attributes`")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Sym, E> {
        Ok(NO_SYM)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sym, A::Error> {
        const KEYS: &[&str] = &["attributes"];
        let ctx = self.0;
        let mut draft = Draft::default();
        while let Some(k) = next_key(&mut map, ctx, KEYS)? {
            match k {
                Some(_) => at(ctx, KEYS[0], |c| {
                    map.next_value_seed(Attributes {
                        ctx: c,
                        draft: &mut draft,
                    })
                })?,
                None => skip_value(&mut map, ctx)?,
            }
        }
        Ok(draft.service)
    }
}

/// The value of `scopeSpans`: a list of scopes and their spans.
struct ScopeSpansList<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(ScopeSpansList<'_, '_>, deserialize_seq);

impl<'de> Visitor<'de> for ScopeSpansList<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of scope spans")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        each_element(seq, self.0, |seq, ctx| {
            Ok(seq.next_element_seed(ScopeSpans(ctx))?.is_some())
        })
    }
}

/// One scope: its `spans`.
struct ScopeSpans<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(ScopeSpans<'_, '_>, deserialize_map);

impl<'de> Visitor<'de> for ScopeSpans<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scope's spans: an object with `spans`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        const KEYS: &[&str] = &["spans"];
        let ctx = self.0;
        while let Some(k) = next_key(&mut map, ctx, KEYS)? {
            match k {
                Some(_) => at(ctx, KEYS[0], |c| map.next_value_seed(SpanList(c)))?,
                None => skip_value(&mut map, ctx)?,
            }
        }
        Ok(())
    }
}

/// A list of spans.
struct SpanList<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(SpanList<'_, '_>, deserialize_seq);

impl<'de> Visitor<'de> for SpanList<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of spans")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        each_element(seq, self.0, |seq, ctx| {
            Ok(seq.next_element_seed(Span(ctx))?.is_some())
        })
    }
}

/// One span.
struct Span<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Span<'_, '_>, deserialize_map);

impl<'de> Visitor<'de> for Span<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a span: an object with `traceId`, `spanId`, `startTimeUnixNano`...")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        const KEYS: &[&str] = &[
            "traceId",
            "spanId",
            "parentSpanId",
            "name",
            "kind",
            "startTimeUnixNano",
            "endTimeUnixNano",
            "attributes",
            "status",
            "traceState",
        ];
        let ctx = self.0;
        let mut d = Draft::default();
        while let Some(k) = next_key(&mut map, ctx, KEYS)? {
            let Some(k) = k else {
                skip_value(&mut map, ctx)?;
                continue;
            };
            let key = KEYS[k];
            match k {
                0 => d.trace = at(ctx, key, |_| map.next_value_seed(IdSeed))?,
                1 => d.id = at(ctx, key, |_| map.next_value_seed(IdSeed))?,
                2 => d.parent = at(ctx, key, |_| map.next_value_seed(IdSeed))?,
                3 => d.name = at(ctx, key, |c| map.next_value_seed(SymSeed(c)))?,
                4 => {
                    let kind = at(ctx, key, |_| map.next_value_seed(ScalarSeed))?;
                    d.kind = match kind {
                        Some(super::json::Scalar::Num(n)) => Kind::from_otlp(n as i64),
                        Some(super::json::Scalar::Str(s)) => Kind::from_name(&s),
                        _ => Kind::Internal,
                    };
                    d.kind_given = true;
                }
                5 => d.start = at(ctx, key, |_| map.next_value_seed(IntSeed))?,
                6 => d.end = at(ctx, key, |_| map.next_value_seed(IntSeed))?,
                7 => at(ctx, key, |c| {
                    map.next_value_seed(Attributes {
                        ctx: c,
                        draft: &mut d,
                    })
                })?,
                8 => d.error = at(ctx, key, |_| map.next_value_seed(Status))?,
                _ => {
                    let state = at(ctx, key, |_| map.next_value_seed(ScalarSeed))?;
                    if let Some(super::json::Scalar::Str(s)) = state {
                        d.sampling = trace_state_probability(&s);
                    }
                }
            }
        }
        d.finish(ctx);
        Ok(())
    }
}

/// A span's `status`: whether its code says error (2, `STATUS_CODE_ERROR`).
struct Status;

seed_via_visitor!(Status, deserialize_any);

impl<'de> Visitor<'de> for Status {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a status: an object with `code`")
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut error = false;
        while let Some(key) = map.next_key_seed(Keys(&["code"]))? {
            if key.is_some() {
                error = match map.next_value_seed(ScalarSeed)? {
                    Some(super::json::Scalar::Num(n)) => n == 2.0,
                    Some(super::json::Scalar::Str(s)) => s == "STATUS_CODE_ERROR" || s == "2",
                    _ => false,
                };
            } else {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
        Ok(error)
    }
}

/// A list of attributes `{key, value: {stringValue | intValue | ...}}`: those
/// [`attr_key`] knows go into the draft.
pub(super) struct Attributes<'c, 's, 'd> {
    pub ctx: &'c mut Ctx<'s>,
    pub draft: &'d mut Draft,
}

seed_via_visitor!(Attributes<'_, '_, '_>, deserialize_any);

impl<'de> Visitor<'de> for Attributes<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of attributes")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let draft = self.draft;
        each_element(seq, self.ctx, |seq, ctx| {
            match seq.next_element_seed(Attribute(ctx))? {
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

/// One attribute: its key, if [`attr_key`] knows it, and its scalar value.
struct Attribute<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Attribute<'_, '_>, deserialize_map);

impl<'de> Visitor<'de> for Attribute<'_, '_> {
    type Value = Option<(AttrKey, super::json::Scalar)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an attribute: an object with `key` and `value`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        const KEYS: &[&str] = &["key", "value"];
        let ctx = self.0;
        // None: no key yet; Some(None): a key nobody uses
        let mut key: Option<Option<AttrKey>> = None;
        let mut value = None;
        while let Some(k) = next_key(&mut map, ctx, KEYS)? {
            match k {
                Some(0) => {
                    let name = at(ctx, KEYS[0], |_| map.next_value_seed(KeyName))?;
                    key = Some(name);
                }
                Some(_) if key == Some(None) => skip_value(&mut map, ctx)?,
                Some(_) => value = at(ctx, KEYS[1], |_| map.next_value_seed(AnyValue))?,
                None => skip_value(&mut map, ctx)?,
            }
        }
        Ok(match (key, value) {
            (Some(Some(k)), Some(v)) => Some((k, v)),
            _ => None,
        })
    }
}

/// An attribute's key: the [`AttrKey`] it is, if any (no allocation).
struct KeyName;

seed_via_visitor!(KeyName, deserialize_str);

impl<'de> Visitor<'de> for KeyName {
    type Value = Option<AttrKey>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an attribute key (a string)")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(attr_key(v))
    }
}

/// OTLP's `AnyValue`: `{"stringValue": ...}`, `intValue` (a string or a
/// number), `doubleValue`, `boolValue`; arrays, lists and bytes: None.
struct AnyValue;

seed_via_visitor!(AnyValue, deserialize_any);

impl<'de> Visitor<'de> for AnyValue {
    type Value = Option<super::json::Scalar>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an attribute value: an object such as {\"stringValue\": \"...\"}")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use super::json::Scalar;
        const KEYS: &[&str] = &["stringValue", "boolValue", "doubleValue", "intValue"];
        let mut out = None;
        while let Some(key) = map.next_key_seed(Keys(KEYS))? {
            match key {
                Some(0..=2) => {
                    out = map.next_value_seed(ScalarSeed)?;
                }
                Some(_) => {
                    // a 64-bit integer: a string in OTLP JSON
                    out = map.next_value_seed(ScalarSeed)?.map(|v| match v {
                        Scalar::Str(s) => s.parse::<f64>().map_or(Scalar::Str(s), Scalar::Num),
                        other => other,
                    });
                }
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}
