//! Jaeger's JSON (what its UI downloads and opens, and its query API answers):
//! `{"data": [{"traceID", "spans": [...], "processes": {"p1": {"serviceName"}}}]}`,
//! and the other shapes its UI opens (see [`super::read`]). A span names its
//! process by `processID` (or carries it as `process`); its parent is, as
//! Jaeger's UI takes it (jaeger-ui `model/transform-trace-data.ts`,
//! `transformTraceData`), its first `CHILD_OF` or `FOLLOWS_FROM` reference
//! whose span is in the trace (`FOLLOWS_FROM` does not block the parent; older
//! files give `parentSpanID`), and a reference to another trace is a link;
//! `startTime` and `duration` are microseconds; the `span.kind` tag gives its
//! kind, the `error` tag (or `otel.status_code = ERROR`) an error, `sampler.type
//! = probabilistic` with `sampler.param` its sampling probability, and the
//! process's `hostname` (or `host.name`, `k8s.pod.name`, `service.instance.id`)
//! its replica.

use super::read::{Ctx, List, Whole, nullable};
use super::spans::{Draft, FOLLOWS, Id, NO_SYM, Scalar};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;

/// A tag: `{key, type, value}`.
#[derive(Deserialize)]
struct Tag {
    key: String,
    #[serde(default)]
    value: Option<Scalar>,
}

/// A process: its service and tags.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Process {
    service_name: Option<String>,
    #[serde(deserialize_with = "nullable")]
    tags: Vec<Tag>,
}

/// A reference to another span.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Reference {
    ref_type: Option<String>,
    #[serde(rename = "traceID")]
    trace_id: Option<Scalar>,
    #[serde(rename = "spanID")]
    span_id: Option<Scalar>,
}

/// One span.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Span {
    #[serde(rename = "traceID")]
    trace_id: Option<Scalar>,
    #[serde(rename = "spanID")]
    span_id: Option<Scalar>,
    #[serde(rename = "parentSpanID")]
    parent_span_id: Option<Scalar>,
    operation_name: Option<String>,
    #[serde(deserialize_with = "nullable")]
    references: Vec<Reference>,
    start_time: Option<Scalar>,
    duration: Option<Scalar>,
    #[serde(deserialize_with = "nullable")]
    tags: Vec<Tag>,
    #[serde(rename = "processID")]
    process_id: Option<String>,
    process: Option<Process>,
}

/// One trace: its spans and the processes they name.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Trace {
    /// Its id (the spans carry their own).
    #[serde(rename = "traceID")]
    pub id: Option<Scalar>,
    /// Its spans.
    #[serde(deserialize_with = "nullable")]
    pub spans: Vec<Span>,
    /// Process id -> process.
    #[serde(deserialize_with = "nullable")]
    pub processes: HashMap<String, Process>,
}

/// Microseconds to nanoseconds.
fn us(v: Option<Scalar>) -> Option<i64> {
    v.and_then(|v| v.int()).map(|v| v.saturating_mul(1000))
}

impl Trace {
    /// Keeps the trace's spans.
    pub fn keep(self, ctx: &mut Ctx<'_>) {
        let ids: HashSet<Id> = self
            .spans
            .iter()
            .map(|s| Id::of(s.span_id.as_ref()))
            .collect();
        let mut named = HashMap::new();
        for (id, p) in &self.processes {
            named.insert(id.as_str(), p.draft(ctx));
        }
        for s in self.spans {
            let strings = &mut ctx.store.strings;
            let mut d = Draft {
                trace: Id::of(s.trace_id.as_ref()),
                id: Id::of(s.span_id.as_ref()),
                parent: Id::of(s.parent_span_id.as_ref()),
                start: us(s.start_time),
                duration: us(s.duration),
                name: s.operation_name.map_or(NO_SYM, |n| strings.intern(&n)),
                ..Draft::default()
            };
            for t in s.tags {
                if let Some(v) = t.value {
                    d.attribute(&t.key, &v, strings);
                }
            }
            // the first reference whose span is here; one to another trace
            // is a link
            let here = |r: &Reference| ids.contains(&Id::of(r.span_id.as_ref()));
            let parent = s
                .references
                .iter()
                .find(|r| here(r))
                .or(s.references.first());
            if let Some(r) = parent {
                d.parent = Id::of(r.span_id.as_ref());
                if r.ref_type
                    .as_deref()
                    .is_some_and(|t| t.eq_ignore_ascii_case("follows_from"))
                {
                    d.flags |= FOLLOWS;
                }
            }
            let trace = Id::of(s.trace_id.as_ref());
            for r in &s.references {
                if Id::of(r.trace_id.as_ref()) != trace
                    && r.trace_id.is_some()
                    && let Id::Ok(v) = Id::of(r.span_id.as_ref())
                {
                    d.links.extend(u64::try_from(v));
                }
            }
            let process = match (&s.process, s.process_id.as_deref()) {
                (Some(p), _) => Some(p.draft(ctx)),
                (None, Some(id)) => named.get(id).copied(),
                _ => None,
            };
            if let Some((service, instance)) = process {
                d.service = service;
                d.instance = (0, instance);
            }
            d.keep(ctx.store);
        }
    }
}

impl Process {
    /// Its service and its instance (or [`NO_SYM`]).
    fn draft(&self, ctx: &mut Ctx<'_>) -> (u32, u32) {
        let mut d = Draft::default();
        for t in &self.tags {
            if let Some(v) = &t.value {
                d.attribute(&t.key, v, &mut ctx.store.strings);
            }
        }
        let service = match &self.service_name {
            Some(n) if !n.is_empty() => ctx.store.strings.intern(n),
            _ => NO_SYM,
        };
        (service, d.instance.1)
    }
}

/// The value of `data`: a list of traces (streamed), or one trace.
pub struct Data<'c, 's>(pub &'c mut Ctx<'s>);

impl<'de> DeserializeSeed<'de> for Data<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Data<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of traces, or a trace")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        List {
            ctx: self.0,
            what: "a list of traces",
            each: Trace::keep,
            item: PhantomData,
        }
        .visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let d = de::value::MapAccessDeserializer::new(map);
        let trace: Trace = Whole(&mut self.0.inner, PhantomData).deserialize(d)?;
        trace.keep(self.0);
        Ok(())
    }
}
