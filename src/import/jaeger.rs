//! Jaeger's JSON (what its UI downloads and opens, and its query API answers):
//! `{"data": [{"traceID", "spans": [...], "processes": {"p1": {"serviceName"}}}]}`,
//! and the other shapes its UI opens (see `read`). A span names its process
//! by `processID` (or carries it as `process`); its parent is, as Jaeger's UI
//! takes it (jaeger-ui `model/transform-trace-data.ts`, `transformTraceData`),
//! its first `CHILD_OF` or `FOLLOWS_FROM` reference whose span is in the trace
//! (`FOLLOWS_FROM` does not block the parent; older files give
//! `parentSpanID`), and a reference to another trace is a link; `startTime`
//! and `duration` are microseconds; the `span.kind` tag gives its kind, the
//! `error` tag (or `otel.status_code = ERROR`) an error, `sampler.type =
//! probabilistic` with `sampler.param` its sampling probability, and the
//! process's `hostname` (or `host.name`, `k8s.pod.name`,
//! `service.instance.id`) its replica.

use super::json_keys::UniqueMap;
use super::spans::{Draft, FOLLOWS, Id, Kept, Scalar, Sym, nanos, rank};
use super::stream::{Ctx, List, Whole, nullable};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;

#[derive(Deserialize)]
struct Tag {
    key: String,
    #[serde(default)]
    value: Option<Scalar>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Process {
    service_name: Option<String>,
    #[serde(deserialize_with = "nullable")]
    tags: Vec<Tag>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Reference {
    ref_type: Option<String>,
    #[serde(rename = "traceID")]
    trace_id: Option<Scalar>,
    #[serde(rename = "spanID")]
    span_id: Option<Scalar>,
}

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
    #[serde(rename = "traceID")]
    pub id: Option<Scalar>,
    #[serde(deserialize_with = "nullable")]
    pub spans: Vec<Span>,
    #[serde(deserialize_with = "nullable")]
    pub processes: UniqueMap<HashMap<String, Process>>,
}

impl Process {
    /// Its service and its instance (a ranked slot).
    fn names(&self, ctx: &mut Ctx<'_>) -> (Option<Sym>, (u8, Sym)) {
        let mut d = Draft::default();
        for t in &self.tags {
            if let Some(v) = &t.value {
                d.attribute(&t.key, v, &mut ctx.store.strings);
            }
        }
        let service = self.service_name.as_deref().filter(|n| !n.is_empty());
        (service.map(|n| ctx.store.strings.intern(n)), d.instance)
    }
}

impl Trace {
    /// Keeps the trace's spans.
    pub fn keep(self, ctx: &mut Ctx<'_>) -> Kept {
        let ids: HashSet<Id> = self
            .spans
            .iter()
            .map(|s| Id::of(s.span_id.as_ref()))
            .collect();
        let named: HashMap<&str, _> = self
            .processes
            .0
            .iter()
            .map(|(id, p)| (id.as_str(), p.names(ctx)))
            .collect();
        for (i, s) in self.spans.into_iter().enumerate() {
            let at = |e: super::spans::BadTime| e.under(&format!("spans/{i}"));
            let start = nanos(s.start_time.as_ref(), 1000, "startTime", false).map_err(at)?;
            let duration = nanos(s.duration.as_ref(), 1000, "duration", true).map_err(at)?;
            let trace = Id::of(s.trace_id.as_ref());
            let mut d = Draft {
                trace,
                id: Id::of(s.span_id.as_ref()),
                parent: Id::of(s.parent_span_id.as_ref()),
                start,
                duration,
                name: s.operation_name.map(|n| ctx.store.strings.intern(&n)),
                ..Draft::default()
            };
            for t in s.tags {
                if let Some(v) = t.value {
                    d.attribute(&t.key, &v, &mut ctx.store.strings);
                }
            }
            // the first reference whose span is here (else the first: an
            // orphan); one to another trace is a link
            let here = |r: &&Reference| ids.contains(&Id::of(r.span_id.as_ref()));
            if let Some(r) = s.references.iter().find(here).or(s.references.first()) {
                d.parent = Id::of(r.span_id.as_ref());
                if r.ref_type
                    .as_deref()
                    .is_some_and(|t| t.eq_ignore_ascii_case("follows_from"))
                {
                    d.flags |= FOLLOWS;
                }
            }
            let elsewhere =
                |r: &&Reference| r.trace_id.is_some() && Id::of(r.trace_id.as_ref()) != trace;
            d.links = s
                .references
                .iter()
                .filter(elsewhere)
                .filter_map(|r| Id::of(r.span_id.as_ref()).span())
                .collect();
            let process = match (&s.process, s.process_id.as_deref()) {
                (Some(p), _) => Some(p.names(ctx)),
                (None, Some(id)) => named.get(id).copied(),
                _ => None,
            };
            if let Some((service, instance)) = process {
                d.service = service;
                rank(&mut d.instance, instance.0, instance.1);
            }
            d.keep(ctx.store).map_err(at)?;
        }
        Ok(())
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
        let trace: Trace = Whole(&mut self.0.inner, PhantomData)
            .deserialize(de::value::MapAccessDeserializer::new(map))?;
        trace
            .keep(self.0)
            .map_err(|e| super::stream::refuse(self.0, e))
    }
}
