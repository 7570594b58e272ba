//! What the traces say about the system, trace by trace into accumulators
//! (laid out as a system by `layout`):
//!
//! - **calls**: an edge A -> B for each call a handling span of A makes (a
//!   client span of A, and the handling span of B below it; a client span
//!   with nothing below names its callee by `peer.service`, `server.address`,
//!   `db.system`..., or is named for it). Each call's unit (the n-th call of
//!   the span to one callee), its times, its failure, whether the caller
//!   answered before it ended (it did not wait), and for each pair of units
//!   whether they overlapped, and whether the later one was made after the
//!   earlier one failed.
//! - **own time**: a handling span's length minus the time its calls (those
//!   it waited for) cover, their union within it.
//! - **errors**: per edge, the calls whose client span (or the callee's) was
//!   in error; per service, its handling spans in error, and those with none
//!   of their calls failed (its own errors).
//! - **arrivals**: a root handling span (or one under a root client span: a
//!   request from outside; or a server or consumer span whose parent is not
//!   in the file) is an arrival at its service's route (its `http.route`,
//!   else its name); a message's consumer (or a `FOLLOWS_FROM` or linked span)
//!   is an arrival of its own. Each stands for 1 / its trace's sampling.

use super::spans::{ERROR, FOLLOWS, Kind, LINKED, NO_END, NO_SYM, SpanStore, Sym};
use super::tree::{self, Broken, Node, Role};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// The most calls of one span to one callee a plan holds (q_1 .. q_16).
pub const MAX_REPEAT: u16 = 16;

/// Calls per span beyond which pairs are not compared (the first 32 are).
const MAX_PAIRED: usize = 32;

/// A callee as the caller sees it: a service whose spans are in the traces,
/// or a callee only named by its callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Callee {
    Service(Sym),
    Peer(Sym),
}

impl Callee {
    pub fn sym(self) -> Sym {
        match self {
            Callee::Service(s) | Callee::Peer(s) => s,
        }
    }
}

/// The n-th call of a span to one callee.
pub type Unit = (Callee, u16);

/// One unit of a service's calls, over every span that made it.
#[derive(Debug, Default, Clone)]
pub struct UnitAcc {
    /// Spans that made it; of them, those that answered before it ended (or
    /// began), and those where it failed.
    pub parents: u64,
    pub detached: u64,
    pub fails: u64,
    /// Sums of its start and end after the span's start, ms.
    pub start_ms: f64,
    pub end_ms: f64,
}

/// Two units of one span, the first begun first: spans where they
/// overlapped, where the first ended before the second began, and where the
/// second was made after the first failed.
#[derive(Debug, Default, Clone, Copy)]
pub struct PairAcc {
    pub parallel: u64,
    pub before: u64,
    pub after_fail: u64,
}

/// What a service's handling spans gave.
#[derive(Debug, Default)]
pub struct ServiceAcc {
    pub handling: u64,
    /// Own times, ns.
    pub own: Vec<i64>,
    /// Spans in error, and those with none of their calls failed.
    pub errors: u64,
    pub own_errors: u64,
    /// Handling spans' (start, end), and their time together, ns.
    pub spans: Vec<(i64, i64)>,
    pub busy: i128,
    pub units: HashMap<Unit, UnitAcc>,
    pub pairs: HashMap<(Unit, Unit), PairAcc>,
    /// Spans that made more than MAX_REPEAT calls to one callee.
    pub capped: u64,
}

/// The calls of one edge.
#[derive(Debug, Default)]
pub struct EdgeAcc {
    pub calls: u64,
    pub errors: u64,
    /// Handling spans of the caller that made at least one.
    pub parents: u64,
    /// Calls with the callee's handling span below them, and their client
    /// minus server lengths, ns.
    pub with_server: u64,
    pub network: Vec<i64>,
    /// Client span lengths, ns.
    pub latency: Vec<i64>,
}

/// The arrivals at one entry point: their starts, those at spans whose
/// parent is not in the file, the requests they stand for, and whether they
/// are messages.
#[derive(Debug, Default)]
pub struct EntryAcc {
    pub starts: Vec<i64>,
    pub entered: u64,
    pub weight: f64,
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
    /// The callee's span's length, when it is below and has an end.
    server: Option<i64>,
    /// The caller's response did not wait for it.
    detached: bool,
    /// Its time is known (its span, or the callee's below it, has an end).
    timed: bool,
}

/// Counts of what the pass met (see the report's broken-trace rows).
#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub traces: u64,
    pub spans: u64,
    pub handling: u64,
    pub calls: u64,
    pub async_calls: u64,
    pub arrivals: u64,
    /// Arrivals at server or consumer spans whose parent is not in the file.
    pub entered: u64,
    /// Handling spans after the first under a root client span (retries).
    pub outside_repeats: u64,
    /// Client spans with no handling span above them.
    pub unowned_calls: u64,
    /// Handling spans under a span with no handling span above it.
    pub unowned_handling: u64,
    /// Client spans naming no callee, and named for their callee.
    pub unnamed_callees: u64,
    pub named_for_callee: u64,
    /// Traces that said their sampling probability.
    pub sampled_traces: u64,
}

/// Everything the traces gave, before it is laid out as a scenario.
#[derive(Debug, Default)]
pub struct Traces {
    pub broken: Broken,
    pub counts: Counts,
    pub services: HashMap<Sym, ServiceAcc>,
    pub edges: HashMap<(Sym, Callee), EdgeAcc>,
    pub async_edges: BTreeMap<(Sym, Callee), u64>,
    pub entries: HashMap<(Sym, Sym), EntryAcc>,
    /// (service, instance) pairs seen.
    pub instances: BTreeSet<(Sym, Sym)>,
    /// Sampling probabilities the traces said (as bits), and their traces.
    probabilities: BTreeMap<u64, u64>,
}

/// Whether a span's time is known (it has an end).
fn timed(n: &Node) -> bool {
    n.rec.flags & NO_END == 0
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
    // spans grouped by trace, in the order read (a counting sort: one array)
    let mut start = vec![0usize; store.trace_ids.len() + 1];
    for s in &store.spans {
        start[s.trace as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut fill = start.clone();
    let mut order = vec![0u32; store.spans.len()];
    for (i, s) in store.spans.iter().enumerate() {
        order[fill[s.trace as usize]] = i as u32;
        fill[s.trace as usize] += 1;
    }
    // span links: the service of each span linked to (a message's producer)
    let wanted: HashSet<u64> = store.links.iter().map(|l| l.1).collect();
    let of: HashMap<u64, Sym> = store
        .spans
        .iter()
        .filter(|s| wanted.contains(&s.id))
        .map(|s| (s.id, s.service))
        .collect();
    for &(i, id) in &store.links {
        if let Some(&from) = of.get(&id) {
            *t.async_edges
                .entry((from, Callee::Service(store.spans[i as usize].service)))
                .or_default() += 1;
            t.counts.async_calls += 1;
        }
    }
    for idx in start
        .windows(2)
        .map(|w| &order[w[0]..w[1]])
        .filter(|idx| !idx.is_empty())
    {
        let said = idx.iter().find_map(|i| store.sampling.get(i).copied());
        if let Some(p) = said {
            t.counts.sampled_traces += 1;
            *t.probabilities.entry(p.to_bits()).or_default() += 1;
        }
        let nodes = tree::build(store, idx, &mut t.broken);
        t.counts.traces += 1;
        t.trace(&nodes, 1.0 / sample_rate.or(said).unwrap_or(1.0), &known);
    }
    t
}

impl Traces {
    /// The sampling probabilities the traces said, with their trace counts.
    pub fn probabilities(&self) -> Vec<(f64, u64)> {
        self.probabilities
            .iter()
            .map(|(&b, &n)| (f64::from_bits(b), n))
            .collect()
    }

    fn arrival(&mut self, n: &Node, weight: f64, message: bool) -> &mut EntryAcc {
        let route = if n.rec.route != NO_SYM {
            n.rec.route
        } else {
            n.rec.name
        };
        self.counts.arrivals += 1;
        let e = self.entries.entry((n.rec.service, route)).or_default();
        e.starts.push(n.start);
        e.weight += weight;
        e.asynchronous |= message;
        e
    }

    /// One trace's tree into the accumulators; `weight` = 1 / its sampling.
    fn trace(&mut self, nodes: &[Node], weight: f64, known: &HashSet<Sym>) {
        self.counts.spans += nodes.len() as u64;
        // the first handling span below each outgoing span
        let mut below: Vec<Option<u32>> = vec![None; nodes.len()];
        let mut calls: Vec<CallRec> = Vec::new();
        self.arrivals(nodes, weight, &mut below, &mut calls);
        for (i, n) in nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.role == Role::Outgoing)
        {
            let child = below[i].map(|c| &nodes[c as usize]);
            if let Some(owner) = n.owner {
                self.outgoing(n, i, child, &nodes[owner as usize], known, &mut calls);
            } else if n.parent.is_some() {
                self.counts.unowned_calls += 1;
            }
        }
        self.counts.calls += calls.len() as u64;
        calls.sort_by_key(|c| (c.owner, c.start, c.end, c.callee));
        // each handling span with its calls (sorted by owner: together)
        let mut k = 0;
        for (h, n) in nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.role == Role::Handling)
        {
            let begin = k;
            while k < calls.len() && calls[k].owner == h as u32 {
                k += 1;
            }
            self.handling(n, &calls[begin..k]);
        }
    }

    /// The arrivals among a trace's handling spans, the handling span below
    /// each outgoing span (`below`), and the calls that are a handling span
    /// right under another service's.
    fn arrivals(
        &mut self,
        nodes: &[Node],
        weight: f64,
        below: &mut [Option<u32>],
        calls: &mut Vec<CallRec>,
    ) {
        // root client spans with an arrival below them already
        let mut outside = vec![false; nodes.len()];
        for (i, n) in nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.role == Role::Handling)
        {
            // work a message (or a span it follows from, or links to) started
            let message = n.rec.kind == Kind::Consumer || n.rec.flags & (FOLLOWS | LINKED) != 0;
            let Some(p) = n.parent.map(|p| p as usize) else {
                // a server or consumer span whose parent is not in the file is
                // where requests entered (behind an untraced gateway, or a
                // trace cut out of a longer one)
                let entered = n.orphan && matches!(n.rec.kind, Kind::Server | Kind::Consumer);
                if !n.cut && (!n.orphan || entered) {
                    self.arrival(n, weight, message).entered += u64::from(entered);
                    self.counts.entered += u64::from(entered);
                }
                continue;
            };
            let pn = &nodes[p];
            if message || pn.rec.kind == Kind::Producer {
                // asynchronous: its own arrival, at the rate messages came;
                // the producer did not wait for it
                self.arrival(n, weight, true);
                let caller = pn
                    .owner
                    .map_or(pn.rec.service, |o| nodes[o as usize].rec.service);
                *self
                    .async_edges
                    .entry((caller, Callee::Service(n.rec.service)))
                    .or_default() += 1;
                self.counts.async_calls += 1;
                below[p] = below[p].or(Some(i as u32));
            } else if let Some(owner) = pn.owner {
                if pn.role == Role::Outgoing {
                    below[p] = below[p].or(Some(i as u32));
                    continue;
                }
                // right under another service's span: the call is the span
                let (start, end, error, timed) =
                    (n.start, n.end, n.rec.flags & ERROR != 0, timed(n));
                let server = timed.then(|| n.duration());
                calls.push(CallRec {
                    owner,
                    callee: Callee::Service(n.rec.service),
                    start,
                    end,
                    error,
                    server,
                    detached: false,
                    timed,
                });
            } else {
                // no handling span of the caller above it: a request from
                // outside when the chain starts at a root client span (a
                // client's attempts are client spans under it too)
                let mut root = p;
                while let Some(q) = nodes[root].parent {
                    root = q as usize;
                }
                let r = &nodes[root];
                if r.role != Role::Outgoing || r.orphan || r.cut {
                    self.counts.unowned_handling += 1;
                } else if outside[root] {
                    self.counts.outside_repeats += 1;
                } else {
                    outside[root] = true;
                    self.arrival(n, weight, false);
                }
            }
        }
    }

    /// Outgoing span `n` (index `i`) of handling span `o`, with the handling
    /// span below it if any: a call, or a message sent.
    fn outgoing(
        &mut self,
        n: &Node,
        i: usize,
        child: Option<&Node>,
        o: &Node,
        known: &HashSet<Sym>,
        calls: &mut Vec<CallRec>,
    ) {
        let named = |s: Sym| {
            if known.contains(&s) {
                Callee::Service(s)
            } else {
                Callee::Peer(s)
            }
        };
        // a client span named for another service than its caller's: the
        // name is the callee's (Zipkin's DependencyLinker backfills the link
        // from the first remote ancestor to it; one naming a remote service
        // besides is that service's call too)
        let named_for = n.rec.kind == Kind::Client && n.rec.service != o.rec.service;
        self.counts.named_for_callee += u64::from(named_for);
        let callee = match child {
            Some(c) => Callee::Service(c.rec.service),
            None if named_for => {
                if n.rec.peer != NO_SYM && n.rec.peer != n.rec.service {
                    let (start, end, error, timed) =
                        (n.start, n.end, n.rec.flags & ERROR != 0, timed(n));
                    let call = CallRec {
                        owner: i as u32,
                        callee: named(n.rec.peer),
                        start,
                        end,
                        error,
                        server: None,
                        detached: false,
                        timed,
                    };
                    let mut handling = *n;
                    handling.rec.flags &= !ERROR;
                    self.handling(&handling, &[call]);
                }
                Callee::Service(n.rec.service)
            }
            None if n.rec.peer != NO_SYM => named(n.rec.peer),
            None => {
                self.counts.unnamed_callees += 1;
                named(n.rec.name)
            }
        };
        let message =
            |c: &Node| c.rec.kind == Kind::Consumer || c.rec.flags & (FOLLOWS | LINKED) != 0;
        if n.rec.kind == Kind::Producer || child.is_some_and(message) {
            // a message sent: its consumer (counted with its arrival) is no
            // call; one with no consumer in the file is counted here
            if child.is_none() {
                *self.async_edges.entry((o.rec.service, callee)).or_default() += 1;
                self.counts.async_calls += 1;
            }
            return;
        }
        calls.push(CallRec {
            owner: n.owner.unwrap_or(0),
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

    /// One handling span `n` and its calls (sorted by start).
    fn handling(&mut self, n: &Node, calls: &[CallRec]) {
        self.counts.handling += 1;
        // own time: the span minus the union of the calls it waited for
        let (mut covered, mut reach) = (0i64, n.start);
        for c in calls.iter().filter(|c| !c.detached) {
            let (s, e) = (c.start.max(reach), c.end.min(n.end));
            if e > s {
                (covered, reach) = (covered.saturating_add(e.saturating_sub(s)), e);
            }
        }
        let acc = self.services.entry(n.rec.service).or_default();
        acc.handling += 1;
        // no time measured from a span (or a call) without an end
        if timed(n) {
            if calls.iter().all(|c| c.timed || c.detached) {
                acc.own.push(n.duration().saturating_sub(covered).max(0));
            }
            acc.spans.push((n.start, n.end));
            acc.busy += i128::from(n.duration());
        }
        if n.rec.flags & ERROR != 0 {
            acc.errors += 1;
            acc.own_errors += u64::from(!calls.iter().any(|c| c.error && !c.detached));
        }
        // units: the k-th call to each callee
        let mut seen: HashMap<Callee, u16> = HashMap::new();
        let mut units: Vec<(Unit, &CallRec)> = Vec::with_capacity(calls.len());
        for c in calls {
            let k = seen.entry(c.callee).or_default();
            *k = k.saturating_add(1);
            if *k <= MAX_REPEAT {
                units.push(((c.callee, *k), c));
            }
        }
        acc.capped += u64::from(units.len() < calls.len());
        let ms = |t: i64| t.saturating_sub(n.start) as f64 / 1e6;
        for (u, c) in &units {
            let ua = acc.units.entry(*u).or_default();
            ua.parents += 1;
            ua.detached += u64::from(c.detached);
            ua.fails += u64::from(c.error && !c.detached);
            (ua.start_ms, ua.end_ms) = (ua.start_ms + ms(c.start), ua.end_ms + ms(c.end));
        }
        let paired = &units[..units.len().min(MAX_PAIRED)];
        for (i, (ua, a)) in paired.iter().enumerate() {
            for (ub, b) in &paired[i + 1..] {
                // a began first (sorted): parallel if b began before a ended
                let p = acc.pairs.entry((*ua, *ub)).or_default();
                let parallel = b.start < a.end || b.start == a.start;
                (p.parallel, p.before) = (
                    p.parallel + u64::from(parallel),
                    p.before + u64::from(!parallel),
                );
                p.after_fail += u64::from(a.error && !a.detached && b.start >= a.end);
            }
        }
        for callee in seen.into_keys() {
            self.edges
                .entry((n.rec.service, callee))
                .or_default()
                .parents += 1;
        }
        for c in calls {
            let e = self.edges.entry((n.rec.service, c.callee)).or_default();
            (e.calls, e.errors) = (e.calls + 1, e.errors + u64::from(c.error));
            if c.timed {
                e.latency.push(c.end.saturating_sub(c.start));
            }
            if let Some(s) = c.server {
                e.with_server += 1;
                e.network
                    .push(c.end.saturating_sub(c.start).saturating_sub(s).max(0));
            }
        }
    }
}
