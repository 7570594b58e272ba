//! The tracer's requests: a request sent by a workload or by a service's
//! call, its answer, its client giving up and its caller going away (what
//! `request.rs` tells it).

use super::*;

impl Tracer {
    /// A client's request `req` to `route` (owned by `service`) leaves now: traced
    /// when the selection picks it (one of the first N, or in the sample).
    #[cold]
    #[inline(never)]
    pub fn sent(&mut self, req: ReqId, route: RouteId, service: Option<ServiceId>, now: Ticks) {
        self.last = now;
        let k = self.sent;
        self.sent += 1;
        let in_trace = k < u64::from(self.select.first);
        let n = self.trace.tracks.len() as u32;
        let mut in_spans = self.select.sampled(k);
        if in_spans && n > 0 && self.spans_recorded() >= self.select.max_spans {
            in_spans = false;
            self.trace.spans_left_out += 1;
        }
        // the first request is always traced; the others while the row's share
        // of spans lasts (no limit while spans are recorded: they hold every
        // request sampled anyway, and trace.json's stay as they would be)
        let room =
            n == 0 || self.select.sample.is_some() || self.recorded() < self.trace.max_events;
        if in_trace && !room {
            self.trace.stopped = true;
        }
        let in_trace = in_trace && room;
        let track = if in_trace || in_spans { n } else { NONE };
        let mut node = NO_SPAN;
        if track != NONE {
            let path = self.routes.get(route).map_or("-", String::as_str);
            self.trace.tracks.push(format!("#{} {path}", k + 1));
            self.trace.selected.push(Selected {
                index: k,
                trace: in_trace,
                spans: in_spans,
            });
            let at = service.map_or(At::Client, At::Service);
            node = self.open(NO_SPAN, at);
        }
        // (a workload's policy takes it back: its attempts are the requests
        // at the service; see `server_unopen`)
        let server = match service {
            Some(s) => self.server_open(track, s, (NO_SPAN, node), true, now),
            None => NONE,
        };
        self.set_req(
            req,
            ReqInfo {
                track,
                depth: 0,
                service: service.unwrap_or_default(),
                sent: now,
                node,
                service_span: NO_SPAN,
                client: true,
                ended: false,
                server,
            },
        );
    }

    /// Call `call` became request `req` at `service` (a call from another
    /// service, or an attempt of a client's policy call).
    #[cold]
    #[inline(never)]
    pub fn call_request(&mut self, req: ReqId, call: CallId, service: ServiceId, now: Ticks) {
        self.last = now;
        let c = self.call(call);
        let track = c.map_or(NONE, |c| c.track);
        let node = c.map_or(NO_SPAN, |c| c.span);
        // a workload's attempt is the client's request at the service
        let entry = c.is_some_and(|c| c.depth == 0);
        let server = self.server_open(track, service, (node, node), entry, now);
        self.set_req(
            req,
            ReqInfo {
                track,
                depth: c.map_or(0, |c| c.depth),
                service,
                sent: now,
                node,
                service_span: NO_SPAN,
                client: false,
                ended: false,
                server,
            },
        );
    }

    /// The handler answered `req` with `outcome` (its client may have gone).
    #[cold]
    #[inline(never)]
    pub fn responded(&mut self, req: ReqId, outcome: Outcome, now: Ticks) {
        self.last = now;
        self.server_close(req, outcome_name(outcome), now);
        self.client_end(req, outcome_name(outcome), now);
    }

    /// The client of `req` gave up on it now.
    #[cold]
    #[inline(never)]
    pub fn gave_up(&mut self, req: ReqId, now: Ticks) {
        self.last = now;
        // a plan stops its work when its client goes; a server works on
        if let Some(r) = self.req(req)
            && !self.servers[r.service]
        {
            self.server_close(req, "abandoned", now);
        }
        self.client_end(req, "timeout", now);
    }

    /// A client's call through its workload's policy is over: the request has
    /// `outcome` (a timeout reads as the client giving up).
    #[cold]
    #[inline(never)]
    pub fn client_call_over(&mut self, req: ReqId, outcome: Outcome, now: Ticks) {
        self.client_end(req, outcome_name(outcome), now);
    }

    /// A client's request is over for its client: its span.
    fn client_end(&mut self, req: ReqId, outcome: &'static str, now: Ticks) {
        let Some(r) = self.req(req) else { return };
        if !r.client || r.ended {
            return;
        }
        self.reqs[req as usize].ended = true;
        let name = format!("request {}", self.trace.tracks[r.track as usize]);
        let args = vec![
            ("outcome", Arg::Text(outcome.into())),
            ("service", Arg::Text(self.services[r.service].clone())),
            ("response_ms", Arg::Ms((now - r.sent).as_ms())),
        ];
        self.write(r.node, r.track, name, "request", (r.sent, now), args);
    }

    /// The caller of call-request `req` went away; with `cancel` its work stops.
    #[cold]
    #[inline(never)]
    pub fn caller_gone(&mut self, req: ReqId, cancel: bool, now: Ticks) {
        self.last = now;
        let Some(r) = self.req(req) else { return };
        // a plan stops its work when its caller goes; a server's own hooks say
        // when it stops
        if !self.servers[r.service] {
            self.server_close(req, if cancel { "cancelled" } else { "abandoned" }, now);
        }
        if cancel {
            let name = format!("cancelled at {}", self.services[r.service]);
            let args = vec![("depth", Arg::Int(r.depth.into()))];
            self.instant(r.node, r.track, name, "cancel", now, args);
        }
    }
}
