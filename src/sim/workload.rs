//! Workload actor: sends requests. Closed workloads (`sequence`, `script`, `probe`)
//! send the next request when the previous one has its answer; `open` sends on its
//! own clock, whatever the system does.

use super::{Event, ReqId, World};
use crate::engine::{Lane, Ticks};
use crate::model::{Access, Arrivals, RequestTemplate, RouteId, Workload};
use rand::RngExt;

/// One request to send: route, access, client, member (interned).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Send {
    route: RouteId,
    access: Access,
    client: u32,
    member: u32,
}

pub(crate) enum WorkloadState {
    Idle,
    /// One request at a time, `left` more to send.
    Sequence {
        send: Send,
        left: u64,
    },
    /// Closed loop over a fixed list of requests, with a pause before each.
    Closed {
        items: Vec<(Send, Ticks)>,
        next: usize,
    },
    Open {
        send: Send,
        left: Option<u64>,
        until: Option<Ticks>,
        mean_gap_ms: f64,
        arrivals: Arrivals,
        timeout: Option<Ticks>,
    },
}

fn send_of(t: &RequestTemplate, symbols: &mut Vec<String>) -> Send {
    Send {
        route: t.route,
        access: t.access,
        client: World::intern(symbols, &t.client),
        member: World::intern(symbols, &t.member),
    }
}

impl WorkloadState {
    pub fn new(w: &Workload, symbols: &mut Vec<String>) -> WorkloadState {
        match w {
            Workload::Sequence { requests, template } => WorkloadState::Sequence {
                send: send_of(template, symbols),
                left: *requests,
            },
            Workload::Open {
                rate_rps,
                requests,
                duration,
                arrivals,
                timeout,
                template,
            } => WorkloadState::Open {
                send: send_of(template, symbols),
                left: *requests,
                until: *duration,
                mean_gap_ms: 1000.0 / rate_rps,
                arrivals: *arrivals,
                timeout: *timeout,
            },
            Workload::Script { groups, access } => {
                let mut items = Vec::new();
                for g in groups {
                    let client = World::intern(symbols, &g.client);
                    let member = World::intern(symbols, &g.member);
                    for i in 0..g.count as usize {
                        let route = g.routes[i % g.routes.len()];
                        let gap = if i == 0 { Ticks::ZERO } else { g.gap };
                        items.push((
                            Send {
                                route,
                                access: *access,
                                client,
                                member,
                            },
                            gap,
                        ));
                    }
                }
                WorkloadState::Closed { items, next: 0 }
            }
            Workload::Probe { .. } | Workload::Ladder(_) => WorkloadState::Idle,
        }
    }
}

impl World<'_> {
    pub(super) fn start(&mut self) {
        let first = match &self.workload {
            WorkloadState::Closed { items, .. } => items.first().map(|(_, gap)| *gap),
            WorkloadState::Open { .. } | WorkloadState::Sequence { .. } => Some(Ticks::ZERO),
            WorkloadState::Idle => None,
        };
        if let Some(at) = first {
            self.post(at, Lane::Normal, Event::WorkloadNext);
        }
    }

    pub(super) fn workload_next(&mut self) {
        match &mut self.workload {
            WorkloadState::Idle => {}
            WorkloadState::Sequence { send, left } => {
                if *left > 0 {
                    *left -= 1;
                    let s = *send;
                    self.send(s.route, s.access, s.client, s.member, None);
                }
            }
            WorkloadState::Closed { items, next } => {
                if let Some(&(s, _)) = items.get(*next) {
                    *next += 1;
                    self.send(s.route, s.access, s.client, s.member, None);
                }
            }
            WorkloadState::Open {
                send,
                left,
                until,
                mean_gap_ms,
                arrivals,
                timeout,
            } => {
                let s = *send;
                let timeout = *timeout;
                if let Some(n) = left {
                    if *n == 0 {
                        return;
                    }
                    *n -= 1;
                }
                let gap_ms = match arrivals {
                    Arrivals::Uniform => *mean_gap_ms,
                    Arrivals::Poisson => {
                        let u: f64 = self.workload_rng.random();
                        -(1.0 - u).ln() * *mean_gap_ms
                    }
                };
                let next_at = self.now + Ticks::from_ms(gap_ms);
                let more = left.is_none_or(|n| n > 0) && until.is_none_or(|u| next_at < u);
                self.send(s.route, s.access, s.client, s.member, timeout);
                if more {
                    self.post(next_at, Lane::Normal, Event::WorkloadNext);
                }
            }
        }
    }

    /// A request has its answer (or its client gave up).
    pub(super) fn workload_done(&mut self, _req: ReqId) {
        match &self.workload {
            WorkloadState::Closed { items, next } => {
                if let Some(&(_, gap)) = items.get(*next) {
                    self.post(self.now + gap, Lane::Normal, Event::WorkloadNext);
                }
            }
            WorkloadState::Sequence { left, .. } if *left > 0 => {
                self.post(self.now, Lane::Normal, Event::WorkloadNext);
            }
            _ => {}
        }
    }
}
