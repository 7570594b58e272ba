//! The accumulators of [`super::infer`] laid out as a system a scenario is
//! written from: entry points and their rates, the call graph with its cycles
//! cut, services and dependencies, and each service's plan:
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

use super::infer::{Callee, EntryAcc, PairAcc, ServiceAcc, Traces, Unit, UnitAcc};
use super::spans::{Interner, Sym};
use super::tree::Broken;
use std::collections::{BTreeMap, HashMap};

/// The fewest arrivals at an entry point a rate is measured from: a Poisson
/// count of 20 is within 44 % of its mean 19 times in 20 (1.96 / sqrt(20)).
pub const MIN_ARRIVALS: usize = 20;

/// The shortest traced interval a rate is measured over (1 s, in ns): less
/// is a moment inside a few requests, not a rate.
pub const MIN_INTERVAL_NS: i64 = 1_000_000_000;

/// The calls a call would have been made after an earlier call's failures,
/// had it not cared, for it to be called made only after a success.
const IF_OK_EVIDENCE: f64 = 3.0;

/// A call of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCall {
    /// The callee, and which call to it (1-based).
    pub callee: Callee,
    /// See `callee`.
    pub nth: u16,
    /// The share of the caller's spans that made it (of those where its
    /// `if_ok` branch succeeded).
    pub probability: f64,
    /// Most spans that made it waited for its answer.
    pub wait: bool,
    /// Made only when this branch (index) succeeded so far.
    pub if_ok: Option<usize>,
}

/// A branch of a plan: calls in order, after the branches it waits for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlanBranch {
    /// Its calls.
    pub calls: Vec<PlanCall>,
    /// The branches (indices, all before it) it waits for.
    pub after: Vec<usize>,
}

/// A service of the imported system.
#[derive(Debug, Clone)]
pub struct ServiceOut {
    /// Its name in the traces.
    pub sym: Sym,
    /// Handling spans.
    pub handling: u64,
    /// Own times, ns, sorted.
    pub own: Vec<i64>,
    /// Handling spans in error, and those with none of their calls failed.
    pub errors: u64,
    /// See `errors`.
    pub own_errors: u64,
    /// Its plan.
    pub plan: Vec<PlanBranch>,
    /// The most handling spans at once in the traces.
    pub peak: u64,
    /// Mean handling spans at once (their time over the traced interval,
    /// over the sampling probability); None without an interval.
    pub mean_busy: Option<f64>,
    /// Spans that made more than `MAX_REPEAT` calls to one callee.
    pub capped: u64,
    /// The instances its spans name (0: none named).
    pub replicas: usize,
}

/// A dependency: a leaf of the call graph.
#[derive(Debug, Clone)]
pub struct DependencyOut {
    /// Its name.
    pub callee: Callee,
    /// Its latencies, ns, sorted: its handling spans' lengths (a service whose
    /// spans are in the traces) or the callers' client spans' (a peer).
    pub latency: Vec<i64>,
    /// Calls that failed, of `calls`.
    pub errors: u64,
    /// Calls (or handling spans).
    pub calls: u64,
    /// The instances its spans name (0: none named).
    pub replicas: usize,
}

/// One edge of the call graph.
#[derive(Debug, Clone)]
pub struct EdgeOut {
    /// Caller and callee.
    pub caller: Sym,
    /// See `caller`.
    pub callee: Callee,
    /// Calls made, and failed.
    pub calls: u64,
    /// See `calls`.
    pub errors: u64,
    /// Caller spans that made at least one, of `of`.
    pub parents: u64,
    /// See `parents`.
    pub of: u64,
    /// Calls with the callee's span below.
    pub with_server: u64,
    /// Network time (client minus server), ns, sorted.
    pub network: Vec<i64>,
    /// Left out: it closes a cycle (the cycle, by names).
    pub cut: Option<Vec<Sym>>,
}

/// An entry point: arrivals at a service's route.
#[derive(Debug, Clone)]
pub struct EntryOut {
    /// The service, and its route (the span's `http.route` or name).
    pub service: Sym,
    /// See `service`.
    pub route: Sym,
    /// Arrivals in the traces.
    pub arrivals: u64,
    /// Arrivals over the sampling: the requests they stand for.
    pub weight: f64,
    /// Requests per second (None: too few arrivals, or too short a time).
    pub rate_rps: Option<f64>,
    /// Asynchronous (messages).
    pub asynchronous: bool,
    /// Arrivals at spans whose parent is not in the file.
    pub entered: u64,
}

/// The system the traces describe.
#[derive(Debug, Clone, Default)]
pub struct System {
    /// Services (entry points and callers), callers before callees.
    pub services: Vec<ServiceOut>,
    /// Dependencies (leaves).
    pub dependencies: Vec<DependencyOut>,
    /// Every edge, cut ones too.
    pub edges: Vec<EdgeOut>,
    /// Asynchronous edges (caller, callee, count).
    pub async_edges: Vec<(Sym, Callee, u64)>,
    /// Entry points.
    pub entries: Vec<EntryOut>,
    /// The traced interval, ns (first to last arrival).
    pub interval_ns: i64,
    /// Services with spans that nothing reaches from an entry.
    pub unreachable: Vec<(Sym, u64)>,
    /// Pairs of calls whose order the spans did not agree on.
    pub mixed_pairs: Vec<(Sym, Unit, Unit, PairAcc)>,
}

/// The value at `q` (0..=1) of sorted `v` by nearest rank, in ms.
pub fn percentile_ms(v: &[i64], q: f64) -> Option<f64> {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1));
    v.get(rank - 1).map(|&x| x as f64 / 1e6)
}

/// Lays `t` out as a system; `names` orders ties.
pub fn system(mut t: Traces, names: &Interner) -> (System, Broken, super::infer::Counts) {
    let mut sys = System::default();
    let by_name = |a: Sym, b: Sym| names.name(a).cmp(names.name(b));
    let mut entries: Vec<((Sym, Sym), EntryAcc)> = t.entries.drain().collect();
    entries.sort_by(|a, b| by_name(a.0.0, b.0.0).then(by_name(a.0.1, b.0.1)));
    let starts = || entries.iter().flat_map(|(_, e)| e.starts.iter().copied());
    let total = starts().count();
    sys.interval_ns = starts().max().unwrap_or(0) - starts().min().unwrap_or(0);
    for ((service, route), e) in &entries {
        // no rate from a handful of arrivals, or from a moment
        let enough = e.starts.len() >= MIN_ARRIVALS && sys.interval_ns >= MIN_INTERVAL_NS;
        sys.entries.push(EntryOut {
            service: *service,
            route: *route,
            arrivals: e.starts.len() as u64,
            weight: e.weight,
            // N - 1 gaps between N arrivals: the share of them this entry has
            rate_rps: enough.then(|| {
                e.weight * (total as f64 - 1.0) / total as f64 / (sys.interval_ns as f64 / 1e9)
            }),
            asynchronous: e.asynchronous,
            entered: e.entered,
        });
    }
    let mut roots: Vec<Sym> = sys.entries.iter().map(|e| e.service).collect();
    roots.dedup();
    let mut edge_keys: Vec<(Sym, Callee)> = t.edges.keys().copied().collect();
    edge_keys.sort_by(|a, b| by_name(a.0, b.0).then(by_name(a.1.sym(), b.1.sym())).then(a.1.cmp(&b.1)));
    let mut out: BTreeMap<Sym, Vec<Callee>> = BTreeMap::new();
    for &(caller, callee) in &edge_keys {
        out.entry(caller).or_default().push(callee);
    }
    let (reached, cut) = reach(&roots, &out);
    sys.unreachable = t.services.iter().filter(|(s, _)| !reached.contains(s)).map(|(&s, a)| (s, a.handling)).collect();
    sys.unreachable.sort_by(|a, b| by_name(a.0, b.0));
    // a reached node with live calls, or an entry: a service; other reached
    // nodes: dependencies
    let live = |k: &(Sym, Callee)| !cut.contains_key(k);
    let is_service = |s: Sym| roots.contains(&s) || out.get(&s).is_some_and(|v| v.iter().any(|&c| live(&(s, c))));
    let mut instances: HashMap<Sym, usize> = HashMap::new();
    for &(s, _) in &t.instances {
        *instances.entry(s).or_default() += 1;
    }
    for &s in reached.iter().filter(|&&s| is_service(s)) {
        if let Some(acc) = t.services.remove(&s) {
            let mut svc = service_out(s, acc, &cut, &entries, sys.interval_ns, names, &mut sys.mixed_pairs);
            svc.replicas = instances.get(&s).copied().unwrap_or(0);
            sys.services.push(svc);
        }
    }
    let mut deps: Vec<Callee> = Vec::new();
    for k @ &(caller, callee) in &edge_keys {
        let service = matches!(callee, Callee::Service(s) if is_service(s));
        // a peer and a service of one name are one dependency
        if live(k) && reached.contains(&caller) && !service && !deps.iter().any(|d| d.sym() == callee.sym()) {
            deps.push(callee);
        }
    }
    deps.sort_by(|a, b| by_name(a.sym(), b.sym()));
    for callee in deps {
        let sym = callee.sym();
        sys.dependencies.push(match t.services.remove(&sym) {
            // its own spans: their lengths (no calls: the own time)
            Some(acc) => DependencyOut {
                callee: Callee::Service(sym),
                latency: sorted(acc.own),
                errors: acc.errors,
                calls: acc.handling,
                replicas: instances.get(&sym).copied().unwrap_or(0),
            },
            // named by its callers only: their client spans
            None => {
                let mut d = DependencyOut { callee: Callee::Peer(sym), latency: Vec::new(), errors: 0, calls: 0, replicas: 0 };
                for k in edge_keys.iter().filter(|k| k.1.sym() == sym && live(k)) {
                    let e = &t.edges[k];
                    d.latency.extend_from_slice(&e.latency);
                    (d.calls, d.errors) = (d.calls + e.calls, d.errors + e.errors);
                }
                d.latency.sort_unstable();
                d
            }
        });
    }
    for key in &edge_keys {
        if let Some(e) = t.edges.remove(key) {
            let of = sys.services.iter().find(|x| x.sym == key.0).map_or(0, |x| x.handling);
            sys.edges.push(EdgeOut {
                caller: key.0,
                callee: key.1,
                calls: e.calls,
                errors: e.errors,
                parents: e.parents,
                of,
                with_server: e.with_server,
                network: sorted(e.network),
                cut: cut.get(key).cloned(),
            });
        }
    }
    sys.async_edges = t.async_edges.iter().map(|(&(a, b), &n)| (a, b, n)).collect();
    (sys, t.broken, t.counts)
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v
}

/// Depth-first from each root: the nodes reached (in the order met) and the
/// edges that close a cycle (cut, with the cycle). An explicit stack: call
/// graphs can be deep.
type Cut = HashMap<(Sym, Callee), Vec<Sym>>;
fn reach(roots: &[Sym], out: &BTreeMap<Sym, Vec<Callee>>) -> (Vec<Sym>, Cut) {
    let (mut reached, mut cut) = (Vec::new(), Cut::new());
    let mut state: HashMap<Sym, u8> = HashMap::new();
    for &root in roots {
        if state.contains_key(&root) {
            continue;
        }
        state.insert(root, 1);
        reached.push(root);
        let mut path = vec![root];
        let mut stack: Vec<(Sym, usize)> = vec![(root, 0)];
        while let Some(&mut (at, ref mut next)) = stack.last_mut() {
            let targets = out.get(&at).map_or(&[][..], Vec::as_slice);
            let Some(&callee) = targets.get(*next) else {
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
                    let cycle = path[from..].iter().copied().chain([to]).collect();
                    cut.insert((at, callee), cycle);
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
    mixed: &mut Vec<(Sym, Unit, Unit, PairAcc)>,
) -> ServiceOut {
    // units of live edges, ordered by their mean start (then name)
    let mut units: Vec<(Unit, UnitAcc)> =
        acc.units.iter().filter(|((c, _), _)| !cut.contains_key(&(s, *c))).map(|(u, a)| (*u, a.clone())).collect();
    let mean = |sum: f64, a: &UnitAcc| sum / a.parents as f64;
    units.sort_by(|(ua, a), (ub, b)| {
        mean(a.start_ms, a)
            .total_cmp(&mean(b.start_ms, b))
            .then_with(|| names.name(ua.0.sym()).cmp(names.name(ub.0.sym())))
            .then(ua.1.cmp(&ub.1))
    });
    // (parallel, a before b, b before a)
    let pair = |a: Unit, b: Unit| match a <= b {
        true => acc.pairs.get(&(a, b)).map(|p| (p.parallel, p.first_before, p.second_before)),
        false => acc.pairs.get(&(b, a)).map(|p| (p.parallel, p.second_before, p.first_before)),
    };
    let follows = |i: usize, j: usize| {
        let ((ua, a), (ub, b)) = (&units[i], &units[j]);
        match pair(*ua, *ub) {
            Some((par, ab, ba)) if par + ab + ba > 0 => ab > par && ab >= ba,
            _ => mean(b.start_ms, b) >= mean(a.end_ms, a),
        }
    };
    for (i, (ua, _)) in units.iter().enumerate() {
        for (ub, _) in &units[i + 1..] {
            // pairs the spans did not agree on (a minority of at least 5 %)
            if let Some((par, ab, ba)) = pair(*ua, *ub)
                && par + ab + ba > 0
                && (par + ab + ba - par.max(ab).max(ba)) * 20 >= par + ab + ba
            {
                mixed.push((s, *ua, *ub, PairAcc { parallel: par, first_before: ab, second_before: ba }));
            }
        }
    }
    let chains = chains(units.len(), follows);
    let plan = plan(&units, &chains, &acc);
    // concurrency: the most spans at once, and their time over the interval
    let mut events: Vec<(i64, i32)> = acc.spans.iter().flat_map(|&(a, b)| [(a, 1), (b, -1)]).collect();
    events.sort_unstable();
    let peak = events.iter().scan(0i64, |now, &(_, d)| {
        *now += i64::from(d);
        Some(*now)
    });
    let peak = peak.max().unwrap_or(0).max(0) as u64;
    // the sampling weight of the service's spans: the entries' mean weight
    let (w, k) = entries.iter().fold((0.0, 0.0), |(w, k), (_, e)| (w + e.weight, k + e.starts.len() as f64));
    let scale = if k > 0.0 { w / k } else { 1.0 };
    ServiceOut {
        sym: s,
        handling: acc.handling,
        own: sorted(acc.own),
        errors: acc.errors,
        own_errors: acc.own_errors,
        plan,
        peak,
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
    for u in 0..n {
        let preds: Vec<usize> = (0..u).filter(|&v| follows(v, u)).collect();
        let mut ends: Vec<usize> = Vec::new();
        for &v in preds.iter().filter(|&&v| !preds.iter().any(|&w| w != v && follows(v, w))) {
            let b = at[v];
            let pos = chains[b].0.iter().position(|&x| x == v).unwrap_or(0);
            if pos + 1 < chains[b].0.len() {
                // split: what came after v goes on in a chain of its own,
                // which those that waited for the whole chain now wait for
                let tail = chains[b].0.split_off(pos + 1);
                let t = chains.len();
                for &x in &tail {
                    at[x] = t;
                }
                chains.iter_mut().flat_map(|c| c.1.iter_mut()).filter(|a| **a == b).for_each(|a| *a = t);
                chains.push((tail, vec![b]));
            }
            ends.push(b);
        }
        ends.sort_unstable();
        ends.dedup();
        match ends[..] {
            [b] if !chains.iter().any(|c| c.1.contains(&b)) => {
                chains[b].0.push(u);
                at[u] = b;
            }
            _ => {
                at[u] = chains.len();
                chains.push((vec![u], ends));
            }
        }
    }
    // each after the chains it waits for (stable otherwise)
    let mut order: Vec<usize> = Vec::new();
    while order.len() < chains.len() {
        let next = (0..chains.len()).find(|&c| !order.contains(&c) && chains[c].1.iter().all(|a| order.contains(a)));
        order.push(next.unwrap_or_else(|| (0..chains.len()).find(|c| !order.contains(c)).unwrap_or(0)));
    }
    let index = |c: usize| order.iter().position(|&o| o == c).unwrap_or(0);
    order.iter().map(|&c| (chains[c].0.clone(), chains[c].1.iter().map(|&a| index(a)).collect())).collect()
}

/// The plan from the chains: each call's probability, `wait` and `if_ok`.
fn plan(units: &[(Unit, UnitAcc)], chains: &[(Vec<usize>, Vec<usize>)], acc: &ServiceAcc) -> Vec<PlanBranch> {
    let n = acc.handling.max(1) as f64;
    let made_after_fail = |a: usize, b: usize| acc.after_fail.get(&(units[a].0, units[b].0)).copied().unwrap_or(0);
    let mut out: Vec<PlanBranch> = Vec::new();
    for (b, (calls, after)) in chains.iter().enumerate() {
        // the chains this one waits for, through theirs too
        let mut above = vec![false; chains.len()];
        above[b] = true;
        for i in (0..b).rev() {
            above[i] = (i + 1..=b).any(|j| above[j] && chains[j].1.contains(&i));
        }
        let mut branch = PlanBranch { calls: Vec::new(), after: after.clone() };
        for (k, &u) in calls.iter().enumerate() {
            let a = &units[u].1;
            let mut call = PlanCall {
                callee: units[u].0.0,
                nth: units[u].0.1,
                probability: a.parents as f64 / n,
                wait: a.detached * 2 <= a.parents,
                if_ok: None,
            };
            // the nearest branch (this one's calls before it, then those it
            // waits for) none of whose calls it was made after a failure of,
            // one of them failing often enough to tell
            for x in (0..=b).rev().filter(|&x| above[x]) {
                let before = if x == b { &calls[..k] } else { &chains[x].0[..] };
                let fails: u64 = before.iter().map(|&c| units[c].1.fails).sum();
                let ok_share = a.parents as f64 / (n - fails as f64).max(1.0);
                let telling = before.iter().any(|&c| units[c].1.fails as f64 * ok_share.min(1.0) >= IF_OK_EVIDENCE);
                if telling && before.iter().all(|&c| made_after_fail(c, u) == 0) {
                    call.if_ok = Some(x);
                    call.probability = ok_share.min(1.0);
                    break;
                }
            }
            branch.calls.push(call);
        }
        out.push(branch);
    }
    out
}
