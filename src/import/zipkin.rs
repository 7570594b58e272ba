//! Zipkin's v2 JSON: a list of spans `{traceId, id, parentId, name, kind,
//! timestamp, duration, localEndpoint: {serviceName}, remoteEndpoint:
//! {serviceName}, tags, shared}`, times in microseconds, `duration` optional.
//! A span without `kind` is local work; the `error` tag marks an error (its
//! value is the message). A client and a server may share one id (B3's shared
//! spans): the server half says `shared: true`. The replica is a tag
//! (`service.instance.id`, `k8s.pod.name`, `host.name`), else the local
//! endpoint's `ipv4` (or `ipv6`) and `port`.

use super::json_keys::UniqueMap;
use super::spans::{Draft, ERROR, Id, Kept, Kind, SHARED, Scalar, nanos, rank};
use super::stream::{Ctx, nullable};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Endpoint {
    service_name: Option<String>,
    ipv4: Option<String>,
    ipv6: Option<String>,
    port: Option<Scalar>,
}

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
    tags: UniqueMap<BTreeMap<String, Scalar>>,
    shared: Option<Scalar>,
}

impl Span {
    /// Keeps the span.
    pub fn keep(self, ctx: &mut Ctx<'_>) -> Kept {
        let start = nanos(self.timestamp.as_ref(), 1000, "timestamp", false)?;
        let duration = nanos(self.duration.as_ref(), 1000, "duration", true)?;
        let strings = &mut ctx.store.strings;
        let mut sym = |s: Option<&String>| s.filter(|s| !s.is_empty()).map(|s| strings.intern(s));
        let local = self.local_endpoint.unwrap_or_default();
        let mut d = Draft {
            trace: Id::of(self.trace_id.as_ref()),
            id: Id::of(self.id.as_ref()),
            parent: Id::of(self.parent_id.as_ref()),
            start,
            duration,
            name: sym(self.name.as_ref()),
            service: sym(local.service_name.as_ref()),
            kind: self.kind.as_ref().map_or(Kind::Internal, Kind::of),
            ..Draft::default()
        };
        if let Some(peer) = self
            .remote_endpoint
            .and_then(|r| sym(r.service_name.as_ref()))
        {
            rank(&mut d.peer, 1, peer);
        }
        let port = local
            .port
            .and_then(|p| p.text())
            .map_or(String::new(), |p| format!(":{p}"));
        if let Some(address) = local.ipv4.or(local.ipv6).map(|a| a + &port) {
            rank(&mut d.instance, 5, strings.intern(&address));
        }
        if self.shared.is_some_and(|s| s.truthy()) {
            d.flags |= SHARED;
        }
        for (key, value) in &self.tags.0 {
            match key.as_str() {
                // Zipkin's error tag holds the message, not "true"
                "error" => d.flags |= ERROR,
                _ => d.attribute(key, value, strings),
            }
        }
        d.keep(ctx.store)
    }
}
