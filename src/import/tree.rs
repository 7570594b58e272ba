//! One trace's spans put back into a tree, with what is broken in it counted
//! and repaired: parents that are missing (orphans), parent links that loop
//! (cycles), spans of no known service (left out, their children hung under
//! the span above), and clock skew (a span of another service that starts
//! outside its parent: moved, with everything below it, to the middle of its
//! parent, as Jaeger's UI does; not a message's consumer, which may start
//! after its producer ended).
//!
//! Every span then gets its role: **handling** (a request its service works
//! on: a server or consumer span, a root, or a span whose parent is in another
//! service), **outgoing** (a client or producer span: a call its service
//! makes), or **local** (work inside a handling span of its own service, and
//! a client span inside another client span of its service, as an HTTP call
//! inside an RPC). Local spans are transparent: what happens below them
//! belongs to the handling span above.

use super::spans::{FOLLOWS, Kind, LINKED, NO_END, NO_SYM, SHARED, SpanRec, SpanStore};
use std::collections::HashMap;

/// What was broken in the traces, and repaired or left out.
#[derive(Debug, Default, Clone)]
pub struct Broken {
    /// Spans whose parent is not in their trace: kept, with no parent (a
    /// server or consumer span among them is where requests entered).
    pub orphans: u64,
    /// Parent links that loop: cut at the span where the loop was found.
    pub cycles: u64,
    /// Spans whose id another span of the trace has (not a Zipkin client and
    /// server sharing one): left out.
    pub duplicates: u64,
    /// Spans of no known service: left out, their children hung under the
    /// span above.
    pub unknown_service: u64,
    /// Spans of another service than their parent's that started outside it:
    /// moved into it.
    pub skew: u64,
    /// Spans that end after their parent (the caller gave up, or did not
    /// wait): kept as they are.
    pub outlived: u64,
}

/// A span's role in its service's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A request the service works on.
    Handling,
    /// A call the service makes.
    Outgoing,
    /// Work inside a handling span.
    Local,
}

/// One span of a trace, in the tree.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// Its record.
    pub rec: SpanRec,
    /// Its parent (local index), None for a root or an orphan.
    pub parent: Option<u32>,
    /// Its parent was named but is not in the trace (a request that came from
    /// outside the file, or a span lost).
    pub orphan: bool,
    /// A parent link that looped was cut here.
    pub cut: bool,
    /// Its role.
    pub role: Role,
    /// Start and end after the skew repair.
    pub start: i64,
    /// See `start`.
    pub end: i64,
    /// The handling span of its service it belongs to (local index), for an
    /// outgoing or local span; itself for a handling span.
    pub owner: Option<u32>,
}

impl Node {
    /// Its length in nanoseconds.
    pub fn duration(&self) -> i64 {
        self.end - self.start
    }
}

/// Reusable buffers for [`build`].
#[derive(Default)]
pub struct Scratch {
    by_id: HashMap<u64, (u32, u32)>,
    order: Vec<u32>,
}

/// The tree of one trace from its spans `idx` (indices into the store), with
/// `broken` counting what was wrong. Left-out spans are not in it.
pub fn build(store: &SpanStore, idx: &[u32], broken: &mut Broken, s: &mut Scratch) -> Vec<Node> {
    // spans of no known service are left out, their children rehung
    let all: Vec<SpanRec> = idx.iter().map(|&i| store.spans[i as usize]).collect();
    let n = all.len();
    // id -> (first span, second span: a shared server half), u32::MAX: none
    s.by_id.clear();
    let mut dropped = vec![false; n];
    for (i, r) in all.iter().enumerate() {
        let i = i as u32;
        match s.by_id.get_mut(&r.id) {
            None => {
                s.by_id.insert(r.id, (i, u32::MAX));
            }
            Some(pair) => {
                let first = &all[pair.0 as usize];
                let halves = pair.1 == u32::MAX
                    && ((r.flags & SHARED != 0 || r.kind == Kind::Server)
                        && first.kind == Kind::Client
                        || (first.flags & SHARED != 0 || first.kind == Kind::Server)
                            && r.kind == Kind::Client);
                if halves {
                    // keep the client half first
                    if r.kind == Kind::Client {
                        *pair = (i, pair.0);
                    } else {
                        pair.1 = i;
                    }
                } else {
                    broken.duplicates += 1;
                    dropped[i as usize] = true;
                }
            }
        }
    }
    // parents, as local indices
    let mut parent: Vec<Option<u32>> = vec![None; n];
    let mut orphan = vec![false; n];
    let mut cut = vec![false; n];
    for (i, r) in all.iter().enumerate() {
        if dropped[i] {
            continue;
        }
        let me = i as u32;
        let found = s.by_id.get(&r.id).copied();
        // a shared server half hangs under its client half
        if let Some((client, server)) = found
            && server == me
        {
            parent[i] = Some(client);
            continue;
        }
        if r.parent == 0 {
            continue;
        }
        match s.by_id.get(&r.parent) {
            None => {
                orphan[i] = true;
                broken.orphans += 1;
            }
            Some(&(a, b)) => {
                // of a shared pair: the half of the child's own service, else
                // the server half
                let p = if b == u32::MAX || all[a as usize].service == r.service {
                    a
                } else {
                    b
                };
                if p == me {
                    cut[i] = true;
                    broken.cycles += 1;
                } else {
                    parent[i] = Some(p);
                }
            }
        }
    }
    // cut loops: follow each chain, marking it; a chain that meets itself is
    // cut at the span where it does
    let mut state = vec![0u8; n]; // 0 new, 1 on the current chain, 2 done
    for start in 0..n {
        if state[start] != 0 || dropped[start] {
            continue;
        }
        let mut chain = Vec::new();
        let mut at = start;
        loop {
            if state[at] == 2 {
                break;
            }
            if state[at] == 1 {
                // the chain from `at` loops back to it: cut above `at`
                parent[at] = None;
                cut[at] = true;
                broken.cycles += 1;
                break;
            }
            state[at] = 1;
            chain.push(at);
            match parent[at] {
                Some(p) if !dropped[p as usize] => at = p as usize,
                _ => break,
            }
        }
        for c in chain {
            state[c] = 2;
        }
    }
    // unknown services: left out, children rehung under the nearest known
    // ancestor (which keeps the chain acyclic)
    for (i, r) in all.iter().enumerate() {
        if r.service == NO_SYM && !dropped[i] {
            broken.unknown_service += 1;
            dropped[i] = true;
        }
    }
    let mut kept_parent = parent.clone();
    for i in 0..n {
        if dropped[i] {
            continue;
        }
        let mut p = parent[i];
        let (mut o, mut c) = (orphan[i], cut[i]);
        while let Some(q) = p {
            if !dropped[q as usize] {
                break;
            }
            o |= orphan[q as usize];
            c |= cut[q as usize];
            p = parent[q as usize];
        }
        kept_parent[i] = p;
        // hung under nothing: an orphan (or cut) if the chain above it was one
        orphan[i] = p.is_none() && o;
        cut[i] = p.is_none() && c;
    }
    // the kept spans, renumbered
    let mut local = vec![u32::MAX; n];
    let mut nodes: Vec<Node> = Vec::with_capacity(n);
    for i in 0..n {
        if !dropped[i] {
            local[i] = nodes.len() as u32;
            nodes.push(Node {
                rec: all[i],
                parent: None,
                orphan: orphan[i],
                cut: cut[i],
                role: Role::Local,
                start: all[i].start,
                end: all[i].end,
                owner: None,
            });
        }
    }
    for i in 0..n {
        if !dropped[i] {
            nodes[local[i] as usize].parent = kept_parent[i].map(|p| local[p as usize]);
        }
    }
    // top-down order: parents before children
    top_down(&nodes, &mut s.order);
    let order = std::mem::take(&mut s.order);
    // a span without an end ends with the last span below it
    for &i in order.iter().rev() {
        if let Some(p) = nodes[i as usize].parent {
            let (end, p) = (nodes[i as usize].rec.end, &mut nodes[p as usize]);
            if p.rec.flags & NO_END != 0 && end > p.rec.end {
                p.rec.end = end;
                p.end = end;
            }
        }
    }
    for &i in &order {
        let i = i as usize;
        let Some(p) = nodes[i].parent else {
            nodes[i].role = match nodes[i].rec.kind {
                Kind::Client | Kind::Producer => Role::Outgoing,
                _ => Role::Handling,
            };
            nodes[i].owner = (nodes[i].role == Role::Handling).then_some(i as u32);
            continue;
        };
        let p = p as usize;
        let (pn, me) = (nodes[p], nodes[i]);
        let same = pn.rec.service == me.rec.service;
        // a message's consumer (or a span that follows from its parent, or
        // links to others) may start after its producer ended: no skew
        let message = pn.rec.kind == Kind::Producer
            || me.rec.kind == Kind::Consumer
            || me.rec.flags & (FOLLOWS | LINKED) != 0;
        // skew: another host's clock; children move with their parent
        let shift = if same || message {
            pn.start - pn.rec.start
        } else {
            let inherited = pn.start - pn.rec.start;
            let start = me.rec.start + inherited;
            if start < pn.start || start > pn.end {
                broken.skew += 1;
                let dur = me.rec.end - me.rec.start;
                let at = if dur <= pn.duration() {
                    pn.start + (pn.duration() - dur) / 2
                } else {
                    pn.start
                };
                at - me.rec.start
            } else {
                inherited
            }
        };
        nodes[i].start = me.rec.start + shift;
        nodes[i].end = me.rec.end + shift;
        if nodes[i].end > pn.end {
            broken.outlived += 1;
        }
        let role = match me.rec.kind {
            Kind::Client | Kind::Producer if same && pn.role == Role::Outgoing => Role::Local,
            Kind::Client | Kind::Producer => Role::Outgoing,
            Kind::Server | Kind::Consumer if same && pn.role != Role::Outgoing => Role::Local,
            Kind::Server | Kind::Consumer => Role::Handling,
            Kind::Internal if same => Role::Local,
            Kind::Internal => Role::Handling,
        };
        nodes[i].role = role;
        // a client span named for another service than the span above it
        // is still a call of the nearest handling span above it (Zipkin's
        // DependencyLinker: the link is from its first remote ancestor)
        nodes[i].owner = match role {
            Role::Handling => Some(i as u32),
            Role::Outgoing => pn.owner,
            _ if same => pn.owner,
            _ => None,
        };
    }
    s.order = order;
    nodes
}

/// The nodes in an order where each parent comes before its children (roots
/// in their own order, then breadth first).
fn top_down(nodes: &[Node], order: &mut Vec<u32>) {
    let n = nodes.len();
    let mut count = vec![0u32; n + 1];
    for nd in nodes {
        if let Some(p) = nd.parent {
            count[p as usize + 1] += 1;
        }
    }
    for i in 0..n {
        count[i + 1] += count[i];
    }
    let mut children = vec![0u32; count[n] as usize];
    let mut fill = count.clone();
    for (i, nd) in nodes.iter().enumerate() {
        if let Some(p) = nd.parent {
            children[fill[p as usize] as usize] = i as u32;
            fill[p as usize] += 1;
        }
    }
    order.clear();
    order.extend((0..n as u32).filter(|&i| nodes[i as usize].parent.is_none()));
    let mut k = 0;
    while k < order.len() {
        let p = order[k] as usize;
        for &c in &children[count[p] as usize..count[p + 1] as usize] {
            order.push(c);
        }
        k += 1;
    }
}
