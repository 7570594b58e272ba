//! The accumulators of `infer` laid out as a system a scenario is written
//! from: entry points and their rates, the call graph with its cycles cut,
//! services and dependencies, and each service's plan:
//!
//! - **branches and joins**: a call follows another when most spans that made
//!   both made it after the other ended (with no span making both, the mean
//!   times decide). Calls in order form a branch; a call that follows the
//!   last calls of several branches (a parallel group) starts a branch that
//!   waits for all of them (`after`), so that a call after a group waits for
//!   the whole group.
//! - **made only after a success**: a call never made after an earlier call
//!   failed, in spans enough that it would have been made about 3 times or
//!   more had it not cared (the earlier call's failures times the share of the
//!   other spans that made it), is made only when that call's branch
//!   succeeded (`if_ok`); its probability is then the share of those spans.
//! - **replicas**: the distinct instances its spans name.

use super::infer::{Callee, EdgeAcc, EntryAcc, ServiceAcc, Traces, Unit, UnitAcc};
use super::spans::{Interner, Sym};
use super::tree::Broken;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The fewest arrivals at an entry point a rate is measured from: a Poisson
/// count of 20 is within 44 % of its mean 19 times in 20 (1.96 / sqrt(20)).
pub const MIN_ARRIVALS: usize = 20;

/// The shortest traced interval a rate is measured over (1 s, in ns): less
/// is a moment inside a few requests, not a rate.
pub const MIN_INTERVAL_NS: i64 = 1_000_000_000;

/// The calls a call would have been made after an earlier call's failures,
/// had it not cared, for it to be called made only after a success.
const IF_OK_EVIDENCE: f64 = 3.0;

/// The most distinct calls (a callee, and which call to it: the first, the
/// second...) one service's plan is laid out from. Their order is inferred
/// pair by pair (quadratic in them): 5,000 take about a second; a trace with
/// more (a span fanning out to as many callees) is refused, not left to run
/// for hours. A real service's plan has tens.
pub const MAX_PLAN_CALLS: usize = 5000;

/// A call of a plan: its unit, the share of the caller's spans that made it
/// (of those where its `if_ok` branch succeeded), whether most waited for it,
/// and the branch (index) whose success it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCall {
    pub callee: Callee,
    pub nth: u16,
    pub probability: f64,
    pub wait: bool,
    pub if_ok: Option<usize>,
}

/// A branch of a plan: calls in order, after the branches (indices, all
/// before it) it waits for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanBranch {
    pub calls: Vec<PlanCall>,
    pub after: Vec<usize>,
}

/// A service of the imported system.
#[derive(Debug, Clone)]
pub struct ServiceOut {
    pub sym: Sym,
    pub handling: u64,
    /// Own times, ns, sorted.
    pub own: Vec<i64>,
    pub errors: u64,
    pub own_errors: u64,
    pub plan: Vec<PlanBranch>,
    /// The most handling spans at once in the traces, and their mean number
    /// (their time over the traced interval, over the sampling).
    pub peak: u64,
    pub mean_busy: Option<f64>,
    pub capped: u64,
    /// The instances its spans name (0: none named).
    pub replicas: usize,
}

/// A dependency: a leaf of the call graph. Its latencies (ns, sorted) are
/// its handling spans' lengths (a service whose spans are in the traces) or
/// the callers' client spans' (a peer).
#[derive(Debug, Clone)]
pub struct DependencyOut {
    pub callee: Callee,
    pub latency: Vec<i64>,
    pub errors: u64,
    pub calls: u64,
    pub replicas: usize,
}

/// One edge of the call graph: its calls, the caller's spans (`of`), its
/// network times (ns, sorted), and the cycle it closes when it is left out.
#[derive(Debug)]
pub struct EdgeOut {
    pub caller: Sym,
    pub callee: Callee,
    pub acc: EdgeAcc,
    pub of: u64,
    pub network: Vec<i64>,
    pub cut: Option<Vec<Sym>>,
}

/// An entry point: arrivals at a service's route, the requests they stand
/// for, and their rate (None: too few arrivals, or too short a time).
#[derive(Debug, Clone)]
pub struct EntryOut {
    pub service: Sym,
    pub route: Sym,
    pub arrivals: u64,
    pub weight: f64,
    pub rate_rps: Option<f64>,
    pub asynchronous: bool,
    pub entered: u64,
}

/// A pair of calls of a service the spans did not agree on: (service,
/// first, second, (in parallel, first before, second before)).
pub type Mixed = (Sym, Unit, Unit, (u64, u64, u64));

/// The system the traces describe.
#[derive(Debug, Default)]
pub struct System {
    /// Services (entry points and callers), callers before callees.
    pub services: Vec<ServiceOut>,
    pub dependencies: Vec<DependencyOut>,
    /// Every edge, cut ones too.
    pub edges: Vec<EdgeOut>,
    pub async_edges: Vec<(Sym, Callee, u64)>,
    pub entries: Vec<EntryOut>,
    /// The traced interval, ns (first to last arrival).
    pub interval_ns: i64,
    /// Services with spans that nothing reaches from an entry.
    pub unreachable: Vec<(Sym, u64)>,
    /// Pairs of calls the spans did not agree on.
    pub mixed_pairs: Vec<Mixed>,
    /// The longest chain of services calling services (the first calls the
    /// second...), when it is longer than a scenario may nest.
    pub too_deep: Option<Vec<Sym>>,
    /// A service with more distinct calls than [`MAX_PLAN_CALLS`] (the
    /// layout stopped there), and their number.
    pub too_wide: Option<(Sym, usize)>,
}

/// The value at `q` (0..=1) of sorted `v` by nearest rank, in ms.
pub fn percentile_ms(v: &[i64], q: f64) -> Option<f64> {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1));
    v.get(rank - 1).map(|&x| x as f64 / 1e6)
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v
}

/// Lays `t` out as a system; `names` orders ties.
pub fn system(mut t: Traces, names: &Interner) -> (System, Broken, super::infer::Counts) {
    let by_name = |a: Sym, b: Sym| names.name(a).cmp(names.name(b));
    let mut entries: Vec<((Sym, Sym), EntryAcc)> = t.entries.drain().collect();
    entries.sort_by(|a, b| by_name(a.0.0, b.0.0).then(by_name(a.0.1, b.0.1)));
    let mut sys = entry_points(&entries);
    let mut roots: Vec<Sym> = sys.entries.iter().map(|e| e.service).collect();
    roots.dedup();
    let root_set: HashSet<Sym> = roots.iter().copied().collect();
    let mut keys: Vec<(Sym, Callee)> = t.edges.keys().copied().collect();
    let order = |k: &(Sym, Callee)| (names.name(k.0), names.name(k.1.sym()), k.1);
    keys.sort_by(|a, b| order(a).cmp(&order(b)));
    let mut out: BTreeMap<Sym, Vec<Callee>> = BTreeMap::new();
    for &(caller, callee) in &keys {
        out.entry(caller).or_default().push(callee);
    }
    let (reached, cut) = reach(&roots, &out);
    let reached_set: HashSet<Sym> = reached.iter().copied().collect();
    let mut unreachable: Vec<(Sym, u64)> =
        t.services.iter().map(|(&s, a)| (s, a.handling)).collect();
    unreachable.retain(|(s, _)| !reached_set.contains(s));
    unreachable.sort_by(|a, b| by_name(a.0, b.0));
    sys.unreachable = unreachable;
    // a reached node with live calls, or an entry: a service; other reached
    // nodes: dependencies
    let live = |k: &(Sym, Callee)| !cut.contains_key(k);
    let calls_out = |s: Sym| {
        out.get(&s)
            .is_some_and(|v| v.iter().any(|&c| live(&(s, c))))
    };
    let is_service = |s: Sym| root_set.contains(&s) || calls_out(s);
    let mut instances: HashMap<Sym, usize> = HashMap::new();
    for &(s, _) in &t.instances {
        *instances.entry(s).or_default() += 1;
    }
    let replicas = |s: Sym| instances.get(&s).copied().unwrap_or(0);
    for &s in reached.iter().filter(|&&s| is_service(s)) {
        if let Some(acc) = t.services.remove(&s) {
            if acc.units.len() > MAX_PLAN_CALLS {
                sys.too_wide = Some((s, acc.units.len()));
                return (sys, t.broken, t.counts);
            }
            let svc = service_out(
                s,
                acc,
                &cut,
                &entries,
                sys.interval_ns,
                names,
                &mut sys.mixed_pairs,
            );
            sys.services.push(ServiceOut {
                replicas: replicas(s),
                ..svc
            });
        }
    }
    sys.dependencies = dependencies(
        &mut t,
        &keys,
        &reached_set,
        &cut,
        &is_service,
        &replicas,
        names,
    );
    let handling: HashMap<Sym, u64> = sys.services.iter().map(|x| (x.sym, x.handling)).collect();
    sys.too_deep = too_deep(&sys.services, &out, &cut, &is_service);
    for key in &keys {
        if let Some(e) = t.edges.remove(key) {
            let of = handling.get(&key.0).copied().unwrap_or(0);
            let (caller, callee, cut) = (key.0, key.1, cut.get(key).cloned());
            sys.edges.push(EdgeOut {
                caller,
                callee,
                of,
                cut,
                network: sorted(e.network.clone()),
                acc: e,
            });
        }
    }
    sys.async_edges = t
        .async_edges
        .iter()
        .map(|(&(a, b), &n)| (a, b, n))
        .collect();
    (sys, t.broken, t.counts)
}

/// The dependencies: reached callees that are not services, with their
/// latencies: their own spans' lengths (no calls: the own time), or their
/// callers' client spans when they have none.
fn dependencies(
    t: &mut Traces,
    keys: &[(Sym, Callee)],
    reached: &HashSet<Sym>,
    cut: &Cut,
    is_service: &dyn Fn(Sym) -> bool,
    replicas: &dyn Fn(Sym) -> usize,
    names: &Interner,
) -> Vec<DependencyOut> {
    let live = |k: &(Sym, Callee)| !cut.contains_key(k);
    let (mut deps, mut seen): (Vec<Sym>, HashSet<Sym>) = Default::default();
    // the live edges into each callee, in the order of `keys`
    let mut into: HashMap<Sym, Vec<&(Sym, Callee)>> = HashMap::new();
    for k @ &(caller, callee) in keys {
        let service = matches!(callee, Callee::Service(s) if is_service(s));
        // a peer and a service of one name are one dependency
        if live(k) && reached.contains(&caller) && !service && seen.insert(callee.sym()) {
            deps.push(callee.sym());
        }
        if live(k) {
            into.entry(callee.sym()).or_default().push(k);
        }
    }
    deps.sort_by(|a, b| names.name(*a).cmp(names.name(*b)));
    let mut out = Vec::new();
    for sym in deps {
        let (latency, errors, calls, callee) = match t.services.remove(&sym) {
            Some(acc) => (acc.own, acc.errors, acc.handling, Callee::Service(sym)),
            None => into
                .get(&sym)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|k| &t.edges[*k])
                .fold(
                    (Vec::new(), 0, 0, Callee::Peer(sym)),
                    |(mut l, e, n, c), edge| {
                        l.extend_from_slice(&edge.latency);
                        (l, e + edge.errors, n + edge.calls, c)
                    },
                ),
        };
        let replicas = if matches!(callee, Callee::Service(_)) {
            replicas(sym)
        } else {
            0
        };
        out.push(DependencyOut {
            callee,
            latency: sorted(latency),
            errors,
            calls,
            replicas,
        });
    }
    out
}

/// The entry points and the traced interval, in a system to fill.
fn entry_points(entries: &[((Sym, Sym), EntryAcc)]) -> System {
    let starts = || entries.iter().flat_map(|(_, e)| e.starts.iter().copied());
    let total = starts().count() as f64;
    let interval_ns = starts()
        .max()
        .unwrap_or(0)
        .saturating_sub(starts().min().unwrap_or(0));
    let mut sys = System {
        interval_ns,
        ..System::default()
    };
    for ((service, route), e) in entries {
        // no rate from a handful of arrivals, or from a moment; N - 1 gaps
        // between N arrivals: the share of them this entry has
        let enough = e.starts.len() >= MIN_ARRIVALS && interval_ns >= MIN_INTERVAL_NS;
        let rate = e.weight * (total - 1.0) / total / (interval_ns as f64 / 1e9);
        sys.entries.push(EntryOut {
            service: *service,
            route: *route,
            arrivals: e.starts.len() as u64,
            weight: e.weight,
            rate_rps: enough.then_some(rate),
            asynchronous: e.asynchronous,
            entered: e.entered,
        });
    }
    sys
}

/// The longest chain of services calling services over the live edges, if
/// it passes through more than a scenario may nest (the loader's
/// `MAX_CALL_DEPTH`). The live edges have no cycle (`reach` cut them).
fn too_deep(
    services: &[ServiceOut],
    out: &BTreeMap<Sym, Vec<Callee>>,
    cut: &Cut,
    is_service: &dyn Fn(Sym) -> bool,
) -> Option<Vec<Sym>> {
    let max = crate::scenario::validate::MAX_CALL_DEPTH;
    let callees = |s: Sym| {
        out.get(&s)
            .into_iter()
            .flatten()
            .filter_map(move |&c| match c {
                Callee::Service(t) if is_service(t) && !cut.contains_key(&(s, c)) => Some(t),
                _ => None,
            })
    };
    // per service: the services on the longest chain from it, and the next
    let mut depth: HashMap<Sym, (usize, Option<Sym>)> = HashMap::new();
    let mut opened: HashSet<Sym> = HashSet::new();
    for s in services.iter().map(|s| s.sym) {
        // an explicit stack: chains can be long
        let mut stack = vec![(s, false)];
        while let Some((at, expanded)) = stack.pop() {
            if depth.contains_key(&at) {
                continue;
            }
            if !expanded {
                if !opened.insert(at) {
                    continue;
                }
                stack.push((at, true));
                stack.extend(
                    callees(at)
                        .filter(|t| !depth.contains_key(t))
                        .map(|t| (t, false)),
                );
                continue;
            }
            let below = callees(at)
                .filter_map(|t| depth.get(&t).map(|d| (d.0, t)))
                .max_by_key(|&(d, t)| (d, std::cmp::Reverse(t)));
            depth.insert(at, (1 + below.map_or(0, |b| b.0), below.map(|b| b.1)));
        }
    }
    let (&first, _) = depth
        .iter()
        .filter(|d| d.1.0 > max)
        .max_by_key(|d| (d.1.0, std::cmp::Reverse(*d.0)))?;
    let mut chain = vec![first];
    while let Some(&(_, Some(next))) = chain.last().and_then(|s| depth.get(s)) {
        chain.push(next);
    }
    Some(chain)
}

/// Edges left out, with the cycle each closes.
type Cut = HashMap<(Sym, Callee), Vec<Sym>>;

/// Depth-first from each root: the nodes reached (in the order met) and the
/// edges that close a cycle. An explicit stack: call graphs can be deep.
fn reach(roots: &[Sym], out: &BTreeMap<Sym, Vec<Callee>>) -> (Vec<Sym>, Cut) {
    let (mut reached, mut cut) = (Vec::new(), Cut::new());
    let mut state: HashMap<Sym, u8> = HashMap::new();
    for &root in roots {
        if state.insert(root, 1).is_some() {
            continue;
        }
        reached.push(root);
        let mut path = vec![root];
        let mut stack: Vec<(Sym, usize)> = vec![(root, 0)];
        while let Some(&mut (at, ref mut next)) = stack.last_mut() {
            let Some(&callee) = out.get(&at).and_then(|v| v.get(*next)) else {
                state.insert(at, 2);
                path.pop();
                stack.pop();
                continue;
            };
            *next += 1;
            let to = callee.sym();
            match state.get(&to).copied().unwrap_or(0) {
                // back into the path: a cycle (a call to itself too)
                1 => {
                    let from = path.iter().position(|&p| p == to).unwrap_or(0);
                    cut.insert(
                        (at, callee),
                        path[from..].iter().copied().chain([to]).collect(),
                    );
                }
                0 => {
                    state.insert(to, 1);
                    path.push(to);
                    reached.push(to);
                    stack.push((to, 0));
                }
                _ => {}
            }
        }
    }
    (reached, cut)
}

/// A service's accumulators as its model: own times sorted, its plan laid
/// out from its calls' units.
fn service_out(
    s: Sym,
    acc: ServiceAcc,
    cut: &Cut,
    entries: &[((Sym, Sym), EntryAcc)],
    interval_ns: i64,
    names: &Interner,
    mixed: &mut Vec<Mixed>,
) -> ServiceOut {
    // units of live edges, ordered by their mean start (then name)
    let mut units: Vec<(Unit, UnitAcc)> = acc
        .units
        .iter()
        .filter(|((c, _), _)| !cut.contains_key(&(s, *c)))
        .map(|(u, a)| (*u, a.clone()))
        .collect();
    let mean = |sum: f64, a: &UnitAcc| sum / a.parents as f64;
    units.sort_by(|(ua, a), (ub, b)| {
        let name = |u: &Unit| names.name(u.0.sym());
        mean(a.start_ms, a)
            .total_cmp(&mean(b.start_ms, b))
            .then_with(|| name(ua).cmp(name(ub)))
            .then(ua.1.cmp(&ub.1))
    });
    // (in parallel, a before b, b before a), over the spans that made both
    let pair = |a: Unit, b: Unit| {
        let (ab, ba) = (
            acc.pairs.get(&(a, b)).copied().unwrap_or_default(),
            acc.pairs.get(&(b, a)).copied().unwrap_or_default(),
        );
        (ab.parallel + ba.parallel, ab.before, ba.before)
    };
    let follows = |i: usize, j: usize| {
        let ((ua, a), (ub, b)) = (&units[i], &units[j]);
        match pair(*ua, *ub) {
            (par, ab, ba) if par + ab + ba > 0 => ab > par && ab >= ba,
            _ => mean(b.start_ms, b) >= mean(a.end_ms, a),
        }
    };
    for (i, (ua, _)) in units.iter().enumerate() {
        for (ub, _) in &units[i + 1..] {
            // pairs the spans did not agree on (a minority of at least 5 %)
            let (par, ab, ba) = pair(*ua, *ub);
            let total = par + ab + ba;
            if total > 0 && (total - par.max(ab).max(ba)) * 20 >= total {
                mixed.push((s, *ua, *ub, (par, ab, ba)));
            }
        }
    }
    let chains = chains(units.len(), follows);
    let plan = plan(&units, &chains, &acc);
    // concurrency: the most spans at once, and their time over the interval
    let mut events: Vec<(i64, i64)> = acc
        .spans
        .iter()
        .flat_map(|&(a, b)| [(a, 1), (b, -1)])
        .collect();
    events.sort_unstable();
    let peak = events
        .iter()
        .scan(0, |now, &(_, d)| Some(*now + d).inspect(|&x| *now = x))
        .max();
    // the sampling weight of the service's spans: the entries' mean weight
    let (w, k) = entries.iter().fold((0.0, 0.0), |(w, k), (_, e)| {
        (w + e.weight, k + e.starts.len() as f64)
    });
    let scale = if k > 0.0 { w / k } else { 1.0 };
    ServiceOut {
        sym: s,
        handling: acc.handling,
        own: sorted(acc.own),
        errors: acc.errors,
        own_errors: acc.own_errors,
        plan,
        peak: peak.unwrap_or(0).max(0) as u64,
        mean_busy: (interval_ns > 0).then(|| acc.busy as f64 * scale / interval_ns as f64),
        capped: acc.capped,
        replicas: 0,
    }
}

/// Units `0..n` (in order of their mean start) laid out as chains: a unit
/// that follows exactly the last unit of one chain that nothing waits for
/// goes on that chain; otherwise it starts a chain that waits for the chains
/// its immediate predecessors end (a chain is split after a predecessor that
/// is not its last). Returns (units, chains waited for), ordered so that a
/// chain comes after those it waits for.
fn chains(n: usize, follows: impl Fn(usize, usize) -> bool) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut chains: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    let mut at = vec![0usize; n];
    // per chain: how many times chains wait for it
    let mut waited: Vec<usize> = Vec::new();
    for u in 0..n {
        let preds: Vec<usize> = (0..u).filter(|&v| follows(v, u)).collect();
        let mut ends: Vec<usize> = Vec::new();
        for &v in preds
            .iter()
            .filter(|&&v| !preds.iter().any(|&w| w != v && follows(v, w)))
        {
            let b = at[v];
            let pos = chains[b].0.iter().position(|&x| x == v).unwrap_or(0);
            if pos + 1 < chains[b].0.len() {
                // split: what came after v goes on in a chain of its own,
                // which those that waited for the whole chain now wait for
                let tail = chains[b].0.split_off(pos + 1);
                let t = chains.len();
                tail.iter().for_each(|&x| at[x] = t);
                if waited[b] > 0 {
                    chains
                        .iter_mut()
                        .flat_map(|c| c.1.iter_mut())
                        .filter(|a| **a == b)
                        .for_each(|a| *a = t);
                }
                let moved = std::mem::replace(&mut waited[b], 1);
                waited.push(moved);
                chains.push((tail, vec![b]));
            }
            ends.push(b);
        }
        ends.sort_unstable();
        ends.dedup();
        at[u] = match ends[..] {
            [b] if waited[b] == 0 => {
                chains[b].0.push(u);
                b
            }
            _ => {
                ends.iter().for_each(|&b| waited[b] += 1);
                chains.push((vec![u], ends));
                waited.push(0);
                chains.len() - 1
            }
        };
    }
    let order = wait_order(&chains);
    let mut position = vec![0usize; chains.len()];
    order.iter().enumerate().for_each(|(i, &c)| position[c] = i);
    let index = |c: usize| position[c];
    order
        .iter()
        .map(|&c| {
            (
                chains[c].0.clone(),
                chains[c].1.iter().map(|&a| index(a)).collect(),
            )
        })
        .collect()
}

/// The chains in an order where each comes after those it waits for: the
/// first ready chain (by index) each time, else (a loop) the first not yet
/// placed. Linear but for the ready set's logarithm.
fn wait_order(chains: &[(Vec<usize>, Vec<usize>)]) -> Vec<usize> {
    let n = chains.len();
    let mut left: Vec<usize> = chains.iter().map(|c| c.1.len()).collect();
    let mut waiting: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (c, (_, after)) in chains.iter().enumerate() {
        after.iter().for_each(|&a| waiting[a].push(c));
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&c| left[c] == 0).collect();
    let (mut placed, mut order, mut first) = (vec![false; n], Vec::with_capacity(n), 0);
    while order.len() < n {
        let next = match ready.pop_first() {
            Some(c) => c,
            None => {
                while placed[first] {
                    first += 1;
                }
                first
            }
        };
        if placed[next] {
            continue;
        }
        placed[next] = true;
        order.push(next);
        for &w in &waiting[next] {
            left[w] -= 1;
            if left[w] == 0 && !placed[w] {
                ready.insert(w);
            }
        }
    }
    order
}

/// The plan from the chains: each call's probability, `wait` and `if_ok`.
fn plan(
    units: &[(Unit, UnitAcc)],
    chains: &[(Vec<usize>, Vec<usize>)],
    acc: &ServiceAcc,
) -> Vec<PlanBranch> {
    let n = acc.handling.max(1) as f64;
    let after_fail = |a: usize, b: usize| {
        acc.pairs
            .get(&(units[a].0, units[b].0))
            .map_or(0, |p| p.after_fail)
    };
    let mut out: Vec<PlanBranch> = Vec::new();
    let mut above = vec![false; chains.len()];
    for (b, (calls, after)) in chains.iter().enumerate() {
        // the chains this one waits for, through theirs too (each waits for
        // chains before it): found from it, not by scanning every chain
        let mut reached = vec![b];
        above[b] = true;
        let mut k = 0;
        while k < reached.len() {
            let j = reached[k];
            for &i in chains[j].1.iter().filter(|&&i| i < j) {
                if !above[i] {
                    above[i] = true;
                    reached.push(i);
                }
            }
            k += 1;
        }
        reached.sort_unstable_by(|x, y| y.cmp(x));
        let mut branch = PlanBranch {
            calls: Vec::new(),
            after: after.clone(),
        };
        for (k, &u) in calls.iter().enumerate() {
            let (unit, a) = &units[u];
            let (callee, nth, wait) = (unit.0, unit.1, a.detached * 2 <= a.parents);
            let mut call = PlanCall {
                callee,
                nth,
                probability: a.parents as f64 / n,
                wait,
                if_ok: None,
            };
            // the nearest branch (this one's calls before it, then those it
            // waits for) none of whose calls it was made after a failure of,
            // one of them failing often enough to tell
            for &x in &reached {
                let before = if x == b {
                    &calls[..k]
                } else {
                    &chains[x].0[..]
                };
                let fails: u64 = before.iter().map(|&c| units[c].1.fails).sum();
                let ok_share = (a.parents as f64 / (n - fails as f64).max(1.0)).min(1.0);
                let telling = before
                    .iter()
                    .any(|&c| units[c].1.fails as f64 * ok_share >= IF_OK_EVIDENCE);
                if telling && before.iter().all(|&c| after_fail(c, u) == 0) {
                    (call.if_ok, call.probability) = (Some(x), ok_share);
                    break;
                }
            }
            branch.calls.push(call);
        }
        reached.iter().for_each(|&x| above[x] = false);
        out.push(branch);
    }
    out
}
