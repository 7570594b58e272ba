//! What the traces say about the system, trace by trace into accumulators,
//! then into a model a scenario is written from:
//!
//! - **the call graph**: an edge A -> B for each call a handling span of A
//!   makes (a client span of A, and the handling span of B below it; a client
//!   span with nothing below names its callee by `peer.service`,
//!   `server.address`, `db.system`..., which then is a dependency). A call
//!   graph resim can run has no cycle: an edge that closes one is left out,
//!   and said so.
//! - **calls in sequence or in parallel**: two calls of one handling span
//!   overlap (or start together: parallel) or not (in sequence, in the order
//!   they started). Across every span of a service, each pair of its calls
//!   is called parallel or sequential by what most spans did, and the calls
//!   are laid out as branches (parallel) of calls in order (sequential).
//! - **calls per parent**: the i-th call of A to B is made by a share q_i of
//!   A's handling spans (q_1 >= q_2 >= ...): a call with `probability = q_i`
//!   (left out at 1). A count of 3 is three calls; a call made by some spans
//!   only has its probability; the sum of the q_i is the mean calls per span.
//! - **own time**: a handling span's length minus the time its calls (the
//!   blocking ones: not producers) cover, their union within it.
//! - **errors**: per edge, the share of calls that failed (the client span's
//!   status, or the callee's); per service, the share of its handling spans in
//!   error when none of its calls failed (its own errors).
//! - **arrivals**: a root handling span (or one under a root client span: a
//!   request from outside) is an arrival at its service's route (its
//!   `http.route`, else its name); an asynchronous one (a consumer, a
//!   `FOLLOWS_FROM` child) is an arrival of its own. The rate of each is its
//!   arrivals over the traced interval (the first arrival to the last) divided
//!   by the sampling probability (`--sample-rate`, else the trace's own).

use super::spans::{ERROR, FOLLOWS, Kind, LINKED, NO_END, NO_SYM, SpanStore, Sym};
use super::tree::{self, Broken, Node, Role};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The most calls of one span to one callee a plan holds (q_1 .. q_16).
pub const MAX_REPEAT: u16 = 16;

/// Calls per span beyond which pairs are not compared (the first 32 are).
pub const MAX_PAIRED: usize = 32;

/// A callee as the caller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Callee {
    /// A service whose spans are in the traces.
    Service(Sym),
    /// A callee only named by its callers.
    Peer(Sym),
}

impl Callee {
    /// Its name.
    pub fn sym(self) -> Sym {
        match self {
            Callee::Service(s) | Callee::Peer(s) => s,
        }
    }
}

/// The i-th call of a span to one callee.
pub type Unit = (Callee, u16);

/// One unit of a service's calls, over every span that made it.
#[derive(Debug, Default, Clone)]
pub struct UnitAcc {
    /// Handling spans that made it.
    pub parents: u64,
    /// ... and answered before it ended (or before it began).
    pub detached: u64,
    /// ... and it failed.
    pub fails: u64,
    /// Sums of its start and end after the parent's start, in ms.
    pub start_ms: f64,
    /// See `start_ms`.
    pub end_ms: f64,
}

/// How two calls of one span were made, over every span that made both.
#[derive(Debug, Default, Clone, Copy)]
pub struct PairAcc {
    /// They overlapped (or started together).
    pub parallel: u64,
    /// The first of the key started, and ended, before the second started.
    pub first_before: u64,
    /// The other way round.
    pub second_before: u64,
}

/// What a service's handling spans gave.
#[derive(Debug, Default)]
pub struct ServiceAcc {
    /// Handling spans.
    pub handling: u64,
    /// Own times, ns.
    pub own: Vec<i64>,
    /// Spans in error, and those with none of their calls failed.
    pub errors: u64,
    /// See `errors`.
    pub own_errors: u64,
    /// Handling spans' (start, end), for the concurrency.
    pub spans: Vec<(i64, i64)>,
    /// Handling time, ns, over every span.
    pub busy: i128,
    /// Its calls' units.
    pub units: HashMap<Unit, UnitAcc>,
    /// How pairs of them were made.
    pub pairs: HashMap<(Unit, Unit), PairAcc>,
    /// Spans where the first unit failed and the second was made after it.
    pub after_fail: HashMap<(Unit, Unit), u64>,
    /// Spans that made more than MAX_REPEAT calls to one callee.
    pub capped: u64,
}

/// The calls of one edge.
#[derive(Debug, Default)]
pub struct EdgeAcc {
    /// Calls, and those that failed.
    pub calls: u64,
    /// See `calls`.
    pub errors: u64,
    /// Handling spans of the caller that made at least one.
    pub parents: u64,
    /// Calls with the callee's handling span below them.
    pub with_server: u64,
    /// Client minus server length, ns (calls with both).
    pub network: Vec<i64>,
    /// Client span lengths, ns.
    pub latency: Vec<i64>,
}

/// The arrivals at one entry point.
#[derive(Debug, Default)]
pub struct EntryAcc {
    /// Their starts, ns.
    pub starts: Vec<i64>,
    /// Arrivals at spans whose parent is not in the file.
    pub entered: u64,
    /// The requests they stand for.
    pub weight: f64,
    /// Messages, not requests.
    pub asynchronous: bool,
}

/// One call of a handling span, as the pass collects them.
#[derive(Debug, Clone, Copy)]
struct CallRec {
    owner: u32,
    callee: Callee,
    start: i64,
    end: i64,
    error: bool,
    server: Option<i64>,
    /// The caller's response did not wait for it.
    detached: bool,
    /// Its time is known (its span, or the callee's below it, has an end).
    timed: bool,
}

/// Counts of what the pass met (every span accounted for).
#[derive(Debug, Default, Clone)]
pub struct Counts {
    /// Traces.
    pub traces: u64,
    /// Spans kept in trees.
    pub spans: u64,
    /// Handling spans.
    pub handling: u64,
    /// Calls (blocking).
    pub calls: u64,
    /// Asynchronous calls (producer spans, FOLLOWS_FROM children).
    pub async_calls: u64,
    /// Arrivals (root handling spans, and those under a root client span).
    pub arrivals: u64,
    /// ... of them at a server or consumer span whose parent is not in the
    /// file.
    pub entered: u64,
    /// A root client span with more than one handling span below it: the
    /// further ones (an outside client's retries).
    pub outside_repeats: u64,
    /// Client spans whose service has no handling span above them.
    pub unowned_calls: u64,
    /// Handling spans under such a span, in a trace with a handling root
    /// (their caller is not known).
    pub unowned_handling: u64,
    /// Client spans with no callee below them and none named (named after
    /// the span).
    pub unnamed_callees: u64,
    /// Client spans named for another service than the handling span above
    /// them: calls of that span to the service they name.
    pub named_for_callee: u64,
    /// Traces whose sampling probability the traces said.
    pub sampled_traces: u64,
}

/// Everything the traces gave, before it is laid out as a scenario.
#[derive(Debug, Default)]
pub struct Traces {
    pub(super) broken: Broken,
    pub(super) counts: Counts,
    pub(super) services: HashMap<Sym, ServiceAcc>,
    pub(super) edges: HashMap<(Sym, Callee), EdgeAcc>,
    pub(super) async_edges: BTreeMap<(Sym, Callee), u64>,
    pub(super) entries: HashMap<(Sym, Sym), EntryAcc>,
    /// (service, instance) pairs seen.
    pub(super) instances: std::collections::BTreeSet<(Sym, Sym)>,
    /// Sampling probabilities the traces said, and how many traces each.
    probabilities: BTreeMap<u64, u64>,
}

/// Reads every trace of `store`. `sample_rate`: `--sample-rate`.
pub fn gather(store: &SpanStore, sample_rate: Option<f64>) -> Traces {
    let mut t = Traces {
        instances: store.instances.clone(),
        ..Traces::default()
    };
    let known: HashSet<Sym> = store
        .spans
        .iter()
        .map(|s| s.service)
        .filter(|&s| s != NO_SYM)
        .collect();
    // spans grouped by trace, in the order read (a counting sort)
    let traces = store.trace_ids.len();
    let mut start = vec![0u32; traces + 1];
    for s in &store.spans {
        start[s.trace as usize + 1] += 1;
    }
    for i in 0..traces {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut order = vec![0u32; store.spans.len()];
    for (i, s) in store.spans.iter().enumerate() {
        order[fill[s.trace as usize] as usize] = i as u32;
        fill[s.trace as usize] += 1;
    }
    // span links: the service of each span linked to (a message's producer)
    if !store.links.is_empty() {
        let wanted: HashSet<u64> = store.links.iter().map(|l| l.1).collect();
        let of: HashMap<u64, Sym> = store
            .spans
            .iter()
            .filter(|s| wanted.contains(&s.id))
            .map(|s| (s.id, s.service))
            .collect();
        for &(i, id) in &store.links {
            if let Some(&from) = of.get(&id) {
                let to = Callee::Service(store.spans[i as usize].service);
                *t.async_edges.entry((from, to)).or_default() += 1;
                t.counts.async_calls += 1;
            }
        }
    }
    let mut scratch = tree::Scratch::default();
    for tr in 0..traces {
        let idx = &order[start[tr] as usize..start[tr + 1] as usize];
        if idx.is_empty() {
            continue;
        }
        let said = idx.iter().find_map(|i| store.sampling.get(i).copied());
        if let Some(p) = said {
            t.counts.sampled_traces += 1;
            *t.probabilities.entry(p.to_bits()).or_default() += 1;
        }
        let p = sample_rate.or(said).unwrap_or(1.0);
        let nodes = tree::build(store, idx, &mut t.broken, &mut scratch);
        t.counts.traces += 1;
        t.trace(&nodes, 1.0 / p, &known);
    }
    t
}

impl Traces {
    /// What was broken.
    pub fn broken(&self) -> &Broken {
        &self.broken
    }

    /// What the pass met.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// The sampling probabilities the traces said, with their trace counts.
    pub fn probabilities(&self) -> Vec<(f64, u64)> {
        self.probabilities
            .iter()
            .map(|(&b, &n)| (f64::from_bits(b), n))
            .collect()
    }

    fn arrival(&mut self, service: Sym, route: Sym, at: i64, weight: f64, asynchronous: bool) {
        let e = self.entries.entry((service, route)).or_default();
        e.starts.push(at);
        e.weight += weight;
        e.asynchronous |= asynchronous;
        self.counts.arrivals += 1;
    }

    /// One trace's tree into the accumulators; `weight` = 1 / its sampling.
    fn trace(&mut self, nodes: &[Node], weight: f64, known: &HashSet<Sym>) {
        self.counts.spans += nodes.len() as u64;
        // the first handling span below each outgoing span
        let mut below: Vec<Option<u32>> = vec![None; nodes.len()];
        let mut calls: Vec<CallRec> = Vec::new();
        self.arrivals(nodes, weight, &mut below, &mut calls);
        for (i, n) in nodes.iter().enumerate() {
            if n.role == Role::Outgoing {
                self.outgoing(nodes, i, below[i], known, &mut calls);
            }
        }
        self.counts.calls += calls.len() as u64;
        calls.sort_by_key(|c| (c.owner, c.start, c.end, c.callee));
        // each handling span with its calls (sorted by owner: together)
        let mut k = 0;
        for (h, n) in nodes.iter().enumerate() {
            if n.role != Role::Handling {
                continue;
            }
            let begin = k;
            while k < calls.len() && calls[k].owner == h as u32 {
                k += 1;
            }
            self.handling(n, &calls[begin..k]);
        }
        debug_assert_eq!(k, calls.len(), "every call has a handling owner");
    }

    /// The arrivals among a trace's handling spans, the handling span below
    /// each outgoing span (`below`), and the calls that are a handling span
    /// right under another service's.
    fn arrivals(&mut self, nodes: &[Node], weight: f64, below: &mut [Option<u32>], calls: &mut Vec<CallRec>) {
        // root client spans with an arrival below them already
        let mut outside = vec![false; nodes.len()];
        let route_of = |n: &Node| if n.rec.route != NO_SYM { n.rec.route } else { n.rec.name };
        for (i, n) in nodes.iter().enumerate() {
            if n.role != Role::Handling {
                continue;
            }
            let route = route_of(n);
            // work a message (or a span it follows from, or links to) started
            let message = n.rec.kind == Kind::Consumer || n.rec.flags & (FOLLOWS | LINKED) != 0;
            let Some(p) = n.parent else {
                // a server or consumer span whose parent is not in the file is
                // where requests entered (behind an untraced gateway, or a
                // trace cut out of a longer one)
                let entered = n.orphan && matches!(n.rec.kind, Kind::Server | Kind::Consumer);
                if !n.cut && (!n.orphan || entered) {
                    self.arrival(n.rec.service, route, n.start, weight, message);
                    if entered {
                        self.counts.entered += 1;
                        self.entries.entry((n.rec.service, route)).or_default().entered += 1;
                    }
                }
                continue;
            };
            let pn = &nodes[p as usize];
            if message || pn.rec.kind == Kind::Producer {
                // asynchronous: its own arrival, at the rate messages came;
                // the producer did not wait for it
                self.arrival(n.rec.service, route, n.start, weight, true);
                let caller = pn.owner.map_or(pn.rec.service, |o| nodes[o as usize].rec.service);
                *self.async_edges.entry((caller, Callee::Service(n.rec.service))).or_default() += 1;
                self.counts.async_calls += 1;
                below[p as usize] = below[p as usize].or(Some(i as u32));
                continue;
            }
            let Some(owner) = pn.owner else {
                // no handling span of the caller above it: a request from
                // outside when the chain starts at a root client span (a
                // client's attempts are client spans under it too)
                let mut root = p as usize;
                while let Some(q) = nodes[root].parent {
                    root = q as usize;
                }
                let r = &nodes[root];
                if r.role == Role::Outgoing && !r.orphan && !r.cut {
                    if outside[root] {
                        self.counts.outside_repeats += 1;
                    } else {
                        outside[root] = true;
                        self.arrival(n.rec.service, route, n.start, weight, false);
                    }
                } else {
                    self.counts.unowned_handling += 1;
                }
                continue;
            };
            if pn.role == Role::Outgoing {
                below[p as usize] = below[p as usize].or(Some(i as u32));
                continue;
            }
            // a handling span right under another service's span: the call
            // is the span itself
            calls.push(CallRec {
                owner,
                callee: Callee::Service(n.rec.service),
                start: n.start,
                end: n.end,
                error: n.rec.flags & ERROR != 0,
                server: timed(n).then(|| n.duration()),
                detached: false,
                timed: timed(n),
            });
        }
    }

    /// Outgoing span `i` (a client or producer span), with the handling span
    /// below it if any: a call of its owner, or a message it sent.
    fn outgoing(&mut self, nodes: &[Node], i: usize, below: Option<u32>, known: &HashSet<Sym>, calls: &mut Vec<CallRec>) {
        let n = &nodes[i];
        let Some(owner) = n.owner else {
            if n.parent.is_some() {
                self.counts.unowned_calls += 1;
            }
            return;
        };
        let child = below.map(|c| &nodes[c as usize]);
        let o = &nodes[owner as usize];
        // a client span named for another service than its caller's: the
        // name is the callee's (Zipkin's DependencyLinker backfills the link
        // from the first remote ancestor to it; one naming a remote service
        // besides is that service's call too)
        let named_for = n.rec.kind == Kind::Client && n.rec.service != o.rec.service;
        if named_for {
            self.counts.named_for_callee += 1;
        }
        let callee = match child {
            Some(c) => Callee::Service(c.rec.service),
            None if named_for => {
                if n.rec.peer != NO_SYM && n.rec.peer != n.rec.service {
                    self.hop(n, i, known);
                }
                Callee::Service(n.rec.service)
            }
            None => {
                let name = if n.rec.peer != NO_SYM {
                    n.rec.peer
                } else {
                    self.counts.unnamed_callees += 1;
                    n.rec.name
                };
                if known.contains(&name) {
                    Callee::Service(name)
                } else {
                    Callee::Peer(name)
                }
            }
        };
        if n.rec.kind == Kind::Producer {
            // a message sent: its consumer (counted with its arrival) is
            // no call; one with no consumer in the file is counted here
            if child.is_none() {
                let caller = nodes[owner as usize].rec.service;
                *self.async_edges.entry((caller, callee)).or_default() += 1;
                self.counts.async_calls += 1;
            }
            return;
        }
        if child.is_some_and(|c| {
            c.rec.kind == Kind::Consumer || c.rec.flags & (FOLLOWS | LINKED) != 0
        }) {
            return;
        }
        calls.push(CallRec {
            owner,
            callee,
            start: n.start,
            end: n.end,
            error: n.rec.flags & ERROR != 0 || child.is_some_and(|c| c.rec.flags & ERROR != 0),
            server: child.filter(|c| timed(c)).map(Node::duration),
            timed: timed(n) || child.is_some_and(timed),
            // it outlived its caller's response, or began after it: the
            // response did not wait for it
            detached: n.end > o.end || n.start >= o.end,
        });
    }

    /// Client span `n` (index `i`) named for a callee and naming another as
    /// its remote: the callee's call to it (its handling span: the client
    /// span, no time of its own), as Zipkin links both.
    fn hop(&mut self, n: &Node, i: usize, known: &HashSet<Sym>) {
        let callee = if known.contains(&n.rec.peer) {
            Callee::Service(n.rec.peer)
        } else {
            Callee::Peer(n.rec.peer)
        };
        let call = CallRec {
            owner: i as u32,
            callee,
            start: n.start,
            end: n.end,
            error: n.rec.flags & ERROR != 0,
            server: None,
            detached: false,
            timed: timed(n),
        };
        let mut handling = *n;
        handling.rec.flags &= !ERROR;
        self.handling(&handling, &[call]);
    }

    /// One handling span `n` and its blocking calls (sorted by start).
    fn handling(&mut self, n: &Node, calls: &[CallRec]) {
        self.counts.handling += 1;
        let service = n.rec.service;
        let error = n.rec.flags & ERROR != 0;
        // own time: the span minus the union of its calls within it
        let mut covered = 0i64;
        let mut reach = n.start;
        for c in calls.iter().filter(|c| !c.detached) {
            let (s, e) = (c.start.max(reach).max(n.start), c.end.min(n.end));
            if e > s {
                covered += e - s;
                reach = e;
            }
        }
        let own = (n.duration() - covered).max(0);
        let acc = self.services.entry(service).or_default();
        acc.handling += 1;
        // no time measured from a span (or a call) without an end
        if timed(n) && calls.iter().all(|c| c.timed || c.detached) {
            acc.own.push(own);
        }
        if timed(n) {
            acc.spans.push((n.start, n.end));
            acc.busy += i128::from(n.duration());
        }
        if error {
            acc.errors += 1;
            if !calls.iter().any(|c| c.error && !c.detached) {
                acc.own_errors += 1;
            }
        }
        // units: the k-th call to each callee
        let mut seen: HashMap<Callee, u16> = HashMap::new();
        let mut units: Vec<(Unit, &CallRec)> = Vec::with_capacity(calls.len());
        let mut capped = false;
        for c in calls {
            let k = seen.entry(c.callee).or_default();
            *k += 1;
            if *k > MAX_REPEAT {
                capped = true;
                continue;
            }
            units.push(((c.callee, *k), c));
        }
        if capped {
            acc.capped += 1;
        }
        let ms = |t: i64| (t - n.start) as f64 / 1e6;
        for (u, c) in &units {
            let ua = acc.units.entry(*u).or_default();
            ua.parents += 1;
            ua.detached += u64::from(c.detached);
            ua.fails += u64::from(c.error && !c.detached);
            ua.start_ms += ms(c.start);
            ua.end_ms += ms(c.end);
        }
        let paired = &units[..units.len().min(MAX_PAIRED)];
        for (i, (ua, a)) in paired.iter().enumerate() {
            for (ub, b) in &paired[i + 1..] {
                // a started first (sorted): parallel if b starts before a ends
                let parallel = b.start < a.end || b.start == a.start;
                let (key, a_first) = if ua <= ub {
                    ((*ua, *ub), true)
                } else {
                    ((*ub, *ua), false)
                };
                // b made after a failed (a failed and ended before b began)
                if a.error && !a.detached && b.start >= a.end {
                    *acc.after_fail.entry((*ua, *ub)).or_default() += 1;
                }
                let p = acc.pairs.entry(key).or_default();
                match (parallel, a_first) {
                    (true, _) => p.parallel += 1,
                    (false, true) => p.first_before += 1,
                    (false, false) => p.second_before += 1,
                }
            }
        }
        for (callee, _) in seen {
            self.edges.entry((service, callee)).or_default().parents += 1;
        }
        for c in calls {
            let e = self.edges.entry((service, c.callee)).or_default();
            e.calls += 1;
            e.errors += u64::from(c.error);
            if c.timed {
                e.latency.push(c.end - c.start);
            }
            if let Some(s) = c.server {
                e.with_server += 1;
                e.network.push((c.end - c.start - s).max(0));
            }
        }
    }
}

/// Whether a span's time is known (it has an end).
fn timed(n: &Node) -> bool {
    n.rec.flags & NO_END == 0
}
