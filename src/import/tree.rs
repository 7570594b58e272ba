//! One trace's spans put back into a tree, with what is broken in it counted
//! and repaired: parents that are missing (orphans), parent links that loop
//! (cycles), spans of no known service (left out, their children hung under
//! the span above), spans without an end (they end with the last span below
//! them), and clock skew (a span of another service that starts outside its
//! parent: moved, with everything below it, to the middle of its parent, as
//! Jaeger's UI does; not a message's consumer, which may start after its
//! producer ended).
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
    /// Spans whose parent is not in their trace (kept, with no parent).
    pub orphans: u64,
    /// Parent links that loop: cut at the span where the loop was found.
    pub cycles: u64,
    /// Spans whose id another span of the trace has (not a Zipkin client and
    /// server sharing one): left out.
    pub duplicates: u64,
    /// Spans of no known service: left out, children hung above.
    pub unknown_service: u64,
    /// Spans of another service than their parent's that started outside
    /// it (moved into it), and spans ending after their parent (kept).
    pub skew: u64,
    pub outlived: u64,
}

/// A span's role in its service's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Handling,
    Outgoing,
    Local,
}

/// One span of a trace, in the tree.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    pub rec: SpanRec,
    /// Its parent (local index), None for a root, an orphan or a cut.
    pub parent: Option<u32>,
    /// Its parent was named but is not in the trace (a request that came from
    /// outside the file, or a span lost), or a loop was cut here.
    pub orphan: bool,
    pub cut: bool,
    pub role: Role,
    /// Start and end after the skew repair.
    pub start: i64,
    pub end: i64,
    /// The handling span it belongs to (local index): itself for a handling
    /// span; for an outgoing or local span, the nearest above it.
    pub owner: Option<u32>,
}

impl Node {
    /// Its length in nanoseconds.
    pub fn duration(&self) -> i64 {
        // times are within 64-bit nanoseconds since 1970, but a skew repair
        // may shift them: saturating, never wrapping
        self.end.saturating_sub(self.start)
    }
}

/// The tree of one trace from its spans `idx` (indices into the store), with
/// `broken` counting what was wrong. Left-out spans are not in it.
pub fn build(store: &SpanStore, idx: &[u32], broken: &mut Broken) -> Vec<Node> {
    let all: Vec<SpanRec> = idx.iter().map(|&i| store.spans[i as usize]).collect();
    let n = all.len();
    let parent_of = links(&all, broken);
    // left out: duplicates (no parent entry) and spans of no known service;
    // the others hang under their nearest kept ancestor
    let dropped: Vec<bool> = (0..n)
        .map(|i| parent_of[i].is_none() || all[i].service == NO_SYM)
        .collect();
    broken.unknown_service += (0..n)
        .filter(|&i| parent_of[i].is_some() && all[i].service == NO_SYM)
        .count() as u64;
    let mut local = vec![u32::MAX; n];
    let mut nodes: Vec<Node> = Vec::with_capacity(n);
    for i in (0..n).filter(|&i| !dropped[i]) {
        local[i] = nodes.len() as u32;
        let (rec, role, owner) = (all[i], Role::Local, None);
        let (start, end) = (rec.start, rec.end);
        nodes.push(Node {
            rec,
            parent: None,
            orphan: false,
            cut: false,
            role,
            start,
            end,
            owner,
        });
    }
    for i in (0..n).filter(|&i| !dropped[i]) {
        let mut link = parent_of[i];
        while let Some(Link::To(p)) = link
            && dropped[p]
        {
            link = parent_of[p];
        }
        let me = &mut nodes[local[i] as usize];
        match link {
            Some(Link::To(p)) => me.parent = Some(local[p]),
            Some(Link::Missing) => me.orphan = true,
            Some(Link::Cut) => me.cut = true,
            _ => {}
        }
    }
    let order = top_down(&nodes);
    // a span without an end ends with the last span below it
    for &i in order.iter().rev() {
        if let Some(p) = nodes[i].parent {
            let (end, p) = (nodes[i].rec.end, &mut nodes[p as usize]);
            if p.rec.flags & NO_END != 0 && end > p.rec.end {
                (p.rec.end, p.end) = (end, end);
            }
        }
    }
    for &i in &order {
        place(&mut nodes, i, broken);
    }
    nodes
}

/// A span's link to its parent.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Link {
    /// A root.
    None,
    To(usize),
    /// Named, but not in the trace.
    Missing,
    /// A loop was cut here.
    Cut,
}

/// Each span's link to its parent (None: a duplicate, left out). A Zipkin
/// client and server sharing one id are two spans: the server half under
/// the client half; a child of the pair hangs under the half of its own
/// service, else the server half.
fn links(all: &[SpanRec], broken: &mut Broken) -> Vec<Option<Link>> {
    let n = all.len();
    let server = |r: &SpanRec| r.flags & SHARED != 0 || r.kind == Kind::Server;
    // id -> (first span, the server half of a shared pair)
    let mut by_id: HashMap<u64, (usize, Option<usize>)> = HashMap::with_capacity(n);
    let mut out = vec![Some(Link::None); n];
    for (i, r) in all.iter().enumerate() {
        match by_id.get_mut(&r.id) {
            None => drop(by_id.insert(r.id, (i, None))),
            Some(pair) if pair.1.is_none() && server(r) && all[pair.0].kind == Kind::Client => {
                pair.1 = Some(i)
            }
            Some(pair) if pair.1.is_none() && r.kind == Kind::Client && server(&all[pair.0]) => {
                *pair = (i, Some(pair.0))
            }
            Some(_) => {
                broken.duplicates += 1;
                out[i] = None;
            }
        }
    }
    for (i, r) in all.iter().enumerate() {
        if out[i].is_none() {
            continue;
        }
        out[i] = Some(match by_id.get(&r.id) {
            Some(&(client, Some(s))) if s == i => Link::To(client),
            _ if r.parent == 0 => Link::None,
            None => Link::None,
            Some(_) => match by_id.get(&r.parent) {
                None => {
                    broken.orphans += 1;
                    Link::Missing
                }
                Some(&(a, b)) => Link::To(b.filter(|_| all[a].service != r.service).unwrap_or(a)),
            },
        });
    }
    // loops: follow each chain, marking it; a chain that meets itself is cut
    // at the span where it does
    let mut state = vec![0u8; n]; // 0 new, 1 on the current chain, 2 done
    for start in 0..n {
        let mut chain = Vec::new();
        let mut at = start;
        while state[at] == 0 {
            state[at] = 1;
            chain.push(at);
            match out[at] {
                Some(Link::To(p)) if state[p] == 1 => {
                    out[at] = Some(Link::Cut);
                    broken.cycles += 1;
                }
                Some(Link::To(p)) => at = p,
                _ => {}
            }
        }
        chain.iter().for_each(|&c| state[c] = 2);
    }
    out
}

/// Node `i`'s role, owner and times, its parent's known.
fn place(nodes: &mut [Node], i: usize, broken: &mut Broken) {
    let me = nodes[i];
    let Some(p) = me.parent else {
        let outgoing = matches!(me.rec.kind, Kind::Client | Kind::Producer);
        nodes[i].role = if outgoing {
            Role::Outgoing
        } else {
            Role::Handling
        };
        nodes[i].owner = (!outgoing).then_some(i as u32);
        return;
    };
    let pn = nodes[p as usize];
    let same = pn.rec.service == me.rec.service;
    // a message's consumer (or a span that follows from its parent, or links
    // to others) may start after its producer ended: no skew
    let message = pn.rec.kind == Kind::Producer
        || me.rec.kind == Kind::Consumer
        || me.rec.flags & (FOLLOWS | LINKED) != 0;
    // skew: another host's clock; children move with their parent
    let mut shift = pn.start.saturating_sub(pn.rec.start);
    let start = me.rec.start.saturating_add(shift);
    if !same && !message && (start < pn.start || start > pn.end) {
        broken.skew += 1;
        let dur = me.rec.end - me.rec.start;
        let at = if dur <= pn.duration() {
            pn.start.saturating_add((pn.duration() - dur) / 2)
        } else {
            pn.start
        };
        shift = at.saturating_sub(me.rec.start);
    }
    let node = &mut nodes[i];
    (node.start, node.end) = (
        me.rec.start.saturating_add(shift),
        me.rec.end.saturating_add(shift),
    );
    broken.outlived += u64::from(node.end > pn.end);
    node.role = match me.rec.kind {
        Kind::Client | Kind::Producer if same && pn.role == Role::Outgoing => Role::Local,
        Kind::Client | Kind::Producer => Role::Outgoing,
        Kind::Server | Kind::Consumer if same && pn.role != Role::Outgoing => Role::Local,
        Kind::Internal if same => Role::Local,
        _ => Role::Handling,
    };
    // a client span named for another service than the span above it is
    // still a call of the nearest handling span above it (Zipkin's
    // DependencyLinker: the link is from its first remote ancestor)
    node.owner = match node.role {
        Role::Handling => Some(i as u32),
        Role::Outgoing => pn.owner,
        Role::Local => pn.owner.filter(|_| same),
    };
}

/// The nodes in an order where each parent comes before its children (roots
/// in their own order, then breadth first).
fn top_down(nodes: &[Node]) -> Vec<usize> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, nd) in nodes.iter().enumerate() {
        if let Some(p) = nd.parent {
            children[p as usize].push(i);
        }
    }
    let mut order: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].parent.is_none())
        .collect();
    let mut k = 0;
    while k < order.len() {
        order.extend_from_slice(&children[order[k]]);
        k += 1;
    }
    order
}
