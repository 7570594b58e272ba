//! Zipkin's v2 JSON: a list of spans `{traceId, id, parentId, name, kind,
//! timestamp, duration, localEndpoint: {serviceName}, remoteEndpoint:
//! {serviceName}, tags, shared}`, times in microseconds. A span without `kind`
//! is local work; the `error` tag marks an error. A client and a server may
//! share one id (B3's shared spans): the server half says `shared: true`.

use super::json::{
    AttrKey, Ctx, Draft, IdSeed, IntSeed, Keys, Scalar, ScalarSeed, SymSeed, at, each_element,
    next_key, skip_value,
};
use super::spans::{Kind, NO_SYM, Sym};
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The file's top-level list of spans (its first element is read already
/// when the list is recognised: see [`super::read`]).
pub fn spans<'de, A: SeqAccess<'de>>(seq: A, ctx: &mut Ctx<'_>) -> Result<(), A::Error> {
    each_element(seq, ctx, |seq, ctx| {
        Ok(seq.next_element_seed(Span(ctx))?.is_some())
    })
}

/// One span.
struct Span<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Span<'_, '_>, deserialize_map);

impl<'de> Visitor<'de> for Span<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a span: an object with `traceId`, `id`, `timestamp`, `duration`...")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        const KEYS: &[&str] = &[
            "traceId",
            "id",
            "parentId",
            "name",
            "kind",
            "timestamp",
            "duration",
            "localEndpoint",
            "remoteEndpoint",
            "tags",
            "shared",
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
                    if let Some(Scalar::Str(s)) = at(ctx, key, |_| map.next_value_seed(ScalarSeed))?
                    {
                        d.kind = Kind::from_name(&s);
                        d.kind_given = true;
                    }
                }
                5 => d.start = at(ctx, key, |_| map.next_value_seed(IntSeed))?.map(us),
                6 => d.duration = at(ctx, key, |_| map.next_value_seed(IntSeed))?.map(us),
                7 => d.service = at(ctx, key, |c| map.next_value_seed(Endpoint(c)))?,
                8 => {
                    let peer = at(ctx, key, |c| map.next_value_seed(Endpoint(c)))?;
                    let rank = AttrKey::PeerService as u8;
                    if peer != NO_SYM && rank < d.peer.0 {
                        d.peer = (rank, peer);
                    }
                }
                9 => at(ctx, key, |c| {
                    map.next_value_seed(Tags {
                        ctx: c,
                        draft: &mut d,
                    })
                })?,
                _ => {
                    d.shared = at(ctx, key, |_| map.next_value_seed(ScalarSeed))?
                        .is_some_and(|v| v.truthy());
                }
            }
        }
        d.finish(ctx);
        Ok(())
    }
}

/// Microseconds to nanoseconds.
fn us(v: i64) -> i64 {
    v.saturating_mul(1000)
}

/// An endpoint: its `serviceName`.
struct Endpoint<'c, 's>(&'c mut Ctx<'s>);

seed_via_visitor!(Endpoint<'_, '_>, deserialize_any);

impl<'de> Visitor<'de> for Endpoint<'_, '_> {
    type Value = Sym;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an endpoint: an object with `serviceName`")
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

/// `tags`: an object of string values; those [`attr_key`] knows go into the
/// draft (`error`, with any value, marks an error).
struct Tags<'c, 's, 'd> {
    ctx: &'c mut Ctx<'s>,
    draft: &'d mut Draft,
}

seed_via_visitor!(Tags<'_, '_, '_>, deserialize_any);

impl<'de> Visitor<'de> for Tags<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("tags: an object of strings")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ctx = self.ctx;
        while let Some(key) = map.next_key_seed(super::jaeger::TagKey)? {
            let Some(key) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let value = map.next_value_seed(ScalarSeed)?;
            match (key, value) {
                // Zipkin's error tag holds the message, not "true"
                (AttrKey::Error, Some(_)) => self.draft.error = true,
                (key, Some(v)) => self.draft.attribute(key, &v, ctx),
                _ => {}
            }
        }
        Ok(())
    }
}
