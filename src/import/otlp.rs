//! OpenTelemetry's OTLP JSON (`{"resourceSpans": [...]}`, one document or one
//! a line as the collector's file exporter writes them; Tempo's `batches` and
//! the older `instrumentationLibrarySpans` too). A resource's `service.name`
//! names the service of its spans (`service.instance.id`, `k8s.pod.name` or
//! `host.name` the replica); a span's `kind` is 2 server, 3 client, 4
//! producer, 5 consumer (or the enum's name); times are nanoseconds, in
//! decimal strings; `status.code` 2 is an error; `links` name spans it did not
//! come from; ids are hex (or base64, the protobuf JSON mapping's default).
//! The resources, scopes and spans are streamed; each span is derived whole.

use super::spans::{Draft, ERROR, Id, Kept, Kind, Scalar, nanos, trace_state_probability};
use super::stream::{Ctx, List, Whole, nullable};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt::Formatter;
use std::marker::PhantomData;

/// An attribute: `{key, value: {stringValue | intValue | doubleValue |
/// boolValue}}`; arrays, lists and bytes are skipped.
#[derive(Deserialize)]
pub struct KeyValue {
    key: String,
    #[serde(default)]
    value: Option<AnyValue>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct AnyValue {
    string_value: Option<Scalar>,
    int_value: Option<Scalar>,
    double_value: Option<Scalar>,
    bool_value: Option<Scalar>,
}

/// An attribute list whose keys are unique, as OTLP requires ("attribute keys
/// MUST be unique", the common protocol's `KeyValue` list): a repeated key
/// (two `service.name`) would be read as whichever came last, so it is
/// refused naming the key.
fn unique_attributes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<KeyValue>, D::Error> {
    let list: Vec<KeyValue> = nullable(d)?;
    let mut seen = std::collections::HashSet::new();
    for a in &list {
        if !seen.insert(a.key.as_str()) {
            return Err(de::Error::custom(format!(
                "the attribute `{}` is given twice in one attribute list: OTLP requires each key once, and readers keep either value; remove one",
                a.key.escape_debug()
            )));
        }
    }
    Ok(list)
}

/// Attributes into a draft.
fn attributes(d: &mut Draft, list: Vec<KeyValue>, ctx: &mut Ctx<'_>) {
    for a in list {
        let v = a.value.and_then(|v| {
            v.string_value
                .or(v.int_value)
                .or(v.double_value)
                .or(v.bool_value)
        });
        if let Some(v) = v {
            d.attribute(&a.key, &v, &mut ctx.store.strings);
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Resource {
    #[serde(deserialize_with = "unique_attributes")]
    attributes: Vec<KeyValue>,
}

impl Resource {
    /// Names the spans read for it (from `from` on) by its `service.name`, and
    /// notes its instance.
    fn name(self, from: usize, ctx: &mut Ctx<'_>) {
        let mut d = Draft::default();
        attributes(&mut d, self.attributes, ctx);
        let (service, instance) = (d.service.unwrap_or(super::spans::NO_SYM), d.instance);
        let instance = if instance.0 > 0 {
            instance.1
        } else {
            super::spans::NO_SYM
        };
        ctx.store.name_service(from, service, instance);
    }
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Link {
    span_id: Option<Scalar>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Status {
    code: Option<Scalar>,
}

/// One span.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Span {
    trace_id: Option<Scalar>,
    span_id: Option<Scalar>,
    parent_span_id: Option<Scalar>,
    name: Option<String>,
    kind: Option<Scalar>,
    start_time_unix_nano: Option<Scalar>,
    end_time_unix_nano: Option<Scalar>,
    #[serde(deserialize_with = "unique_attributes")]
    attributes: Vec<KeyValue>,
    status: Option<Status>,
    trace_state: Option<String>,
    #[serde(deserialize_with = "nullable")]
    links: Vec<Link>,
}

impl Span {
    /// Keeps the span (its service named later, by its resource).
    pub fn keep(self, ctx: &mut Ctx<'_>) -> Kept {
        let time = |v: &Option<Scalar>, field| nanos(v.as_ref(), 1, field, false);
        let start = time(&self.start_time_unix_nano, "startTimeUnixNano")?;
        let end = time(&self.end_time_unix_nano, "endTimeUnixNano")?;
        let mut d = Draft {
            trace: Id::of(self.trace_id.as_ref()),
            id: Id::of(self.span_id.as_ref()),
            parent: Id::of(self.parent_span_id.as_ref()),
            start,
            end,
            name: self.name.map(|n| ctx.store.strings.intern(&n)),
            kind: self.kind.as_ref().map_or(Kind::Internal, Kind::of),
            sampling: self
                .trace_state
                .as_deref()
                .and_then(trace_state_probability),
            links: self
                .links
                .iter()
                .filter_map(|l| Id::of(l.span_id.as_ref()).span())
                .collect(),
            ..Draft::default()
        };
        attributes(&mut d, self.attributes, ctx);
        // 2, or its enum's name
        let code = self.status.and_then(|s| s.code);
        if code
            .is_some_and(|c| c.int() == Some(2) || c.text().as_deref() == Some("STATUS_CODE_ERROR"))
        {
            d.flags |= ERROR;
        }
        d.keep(ctx.store)
    }
}

/// A scope and its spans, derived whole (a list of OTLP documents).
#[derive(Deserialize, Default)]
#[serde(default)]
struct ScopeSpans {
    #[serde(deserialize_with = "nullable")]
    spans: Vec<Span>,
}

/// A resource and its spans, derived whole (a list of OTLP documents).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ResourceSpans {
    resource: Option<Resource>,
    #[serde(deserialize_with = "nullable", alias = "instrumentationLibrarySpans")]
    scope_spans: Vec<ScopeSpans>,
}

/// One OTLP document, an element of a list of them (read as Jaeger's UI
/// reads a list: their resources together).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Document {
    #[serde(deserialize_with = "nullable", alias = "batches")]
    resource_spans: Vec<ResourceSpans>,
}

impl Document {
    /// Keeps the document's spans.
    pub fn keep(self, ctx: &mut Ctx<'_>) -> Kept {
        for (i, r) in self.resource_spans.into_iter().enumerate() {
            let from = ctx.store.spans.len();
            for (k, scope) in r.scope_spans.into_iter().enumerate() {
                for (j, s) in scope.spans.into_iter().enumerate() {
                    s.keep(ctx).map_err(|e| {
                        e.under(&format!("resourceSpans/{i}/scopeSpans/{k}/spans/{j}"))
                    })?;
                }
            }
            r.resource.unwrap_or_default().name(from, ctx);
        }
        Ok(())
    }
}

/// The value of `resourceSpans` (level 0) or of a resource's `scopeSpans`
/// (level 1): each element streamed.
pub struct ResourceList<'c, 's>(pub &'c mut Ctx<'s>, pub u8);

impl<'de> DeserializeSeed<'de> for ResourceList<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ResourceList<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut Formatter) -> std::fmt::Result {
        f.write_str(["a list of resource spans", "a list of scope spans"][self.1 as usize])
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let level = self.1;
        for i in 0.. {
            let element = self.0.at(&i.to_string(), |c| {
                seq.next_element_seed(Streamed(c, level))
            })?;
            if element.is_none() {
                break;
            }
        }
        Ok(())
    }
}

/// A resource's spans (level 0: `{resource, scopeSpans}`) or a scope's
/// (level 1: `{spans}`), streamed.
struct Streamed<'c, 's>(&'c mut Ctx<'s>, u8);

impl<'de> DeserializeSeed<'de> for Streamed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Streamed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut Formatter) -> std::fmt::Result {
        f.write_str(match self.1 {
            0 => "a resource's spans: an object with `resource` and `scopeSpans`",
            _ => "a scope's spans: an object with `spans`",
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (ctx, level) = (self.0, self.1);
        let from = ctx.store.spans.len();
        let mut resource: Option<Resource> = None;
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(super::json_keys::repeated(&key)));
            }
            ctx.at(&key, |c| match (level, key.as_str()) {
                (0, "resource") => map
                    .next_value_seed(Whole(&mut c.inner, PhantomData))
                    .map(|r| resource = r),
                (0, "scopeSpans" | "instrumentationLibrarySpans") => {
                    map.next_value_seed(ResourceList(c, 1))
                }
                (1, "spans") => map.next_value_seed(List {
                    ctx: c,
                    what: "a list of spans",
                    each: Span::keep,
                    item: PhantomData,
                }),
                _ => map.next_value::<IgnoredAny>().map(drop),
            })?;
        }
        // the resource may come after its spans: they get its service now
        if level == 0 {
            resource.unwrap_or_default().name(from, ctx);
        }
        Ok(())
    }
}
