//! Zipkin's v2 JSON: a list of spans `{traceId, id, parentId, name, kind,
//! timestamp, duration, localEndpoint: {serviceName}, remoteEndpoint:
//! {serviceName}, tags, shared}`, times in microseconds. A span without `kind`
//! is local work; the `error` tag marks an error (its value is the message). A
//! client and a server may share one id (B3's shared spans): the server half
//! says `shared: true`. The replica is the local endpoint's `ipv4` (or `ipv6`)
//! and `port`, unless a tag names it (`service.instance.id`, `k8s.pod.name`,
//! `host.name`).

use super::read::{Ctx, nullable};
use super::spans::{Draft, ERROR, Id, Kind, NO_SYM, SHARED, Scalar};
use serde::Deserialize;
use std::collections::BTreeMap;

/// An endpoint: its service and address.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Endpoint {
    service_name: Option<String>,
    ipv4: Option<String>,
    ipv6: Option<String>,
    port: Option<Scalar>,
}

/// One span.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Span {
    trace_id: Option<Scalar>,
    id: Option<Scalar>,
    parent_id: Option<Scalar>,
    name: Option<String>,
    kind: Option<Scalar>,
    timestamp: Option<Scalar>,
    duration: Option<Scalar>,
    local_endpoint: Option<Endpoint>,
    remote_endpoint: Option<Endpoint>,
    #[serde(deserialize_with = "nullable")]
    tags: BTreeMap<String, Scalar>,
    shared: Option<Scalar>,
}

/// Microseconds to nanoseconds.
fn us(v: Option<Scalar>) -> Option<i64> {
    v.and_then(|v| v.int()).map(|v| v.saturating_mul(1000))
}

impl Span {
    /// Keeps the span.
    pub fn keep(self, ctx: &mut Ctx<'_>) {
        let strings = &mut ctx.store.strings;
        let mut sym = |s: Option<&String>| match s {
            Some(s) if !s.is_empty() => strings.intern(s),
            _ => NO_SYM,
        };
        let local = self.local_endpoint.unwrap_or_default();
        let remote = self.remote_endpoint.map(|r| sym(r.service_name.as_ref()));
        let address = local
            .ipv4
            .as_ref()
            .or(local.ipv6.as_ref())
            .map(|a| match &local.port {
                Some(p) => format!("{a}:{}", p.text().unwrap_or_default()),
                None => a.clone(),
            });
        let mut d = Draft {
            trace: Id::of(self.trace_id.as_ref()),
            id: Id::of(self.id.as_ref()),
            parent: Id::of(self.parent_id.as_ref()),
            start: us(self.timestamp),
            duration: us(self.duration),
            name: sym(self.name.as_ref()),
            service: sym(local.service_name.as_ref()),
            kind: self.kind.as_ref().map_or(Kind::Internal, Kind::of),
            instance: (u8::MAX - 1, sym(address.as_ref())),
            ..Draft::default()
        };
        if let Some(peer) = remote.filter(|&p| p != NO_SYM) {
            d.peer = (0, peer);
        }
        if self.shared.is_some_and(|s| s.truthy()) {
            d.flags |= SHARED;
        }
        for (key, value) in &self.tags {
            if key == "error" {
                // Zipkin's error tag holds the message, not "true"
                d.flags |= ERROR;
            } else {
                d.attribute(key, value, &mut ctx.store.strings);
            }
        }
        d.keep(ctx.store);
    }
}
