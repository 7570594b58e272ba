//! Replicated dependencies: `dependencies.NAME.replicas = N` and its
//! `balancer`.
//!
//! Each replica is an instance of [`super::dependency`] with its own slots,
//! line, latency stream and faults. A call picks its replica when it is made,
//! before anything else is asked of the dependency (`World::dependency_refuses`):
//! a picked replica that is `down` fails the call at once, and is counted for
//! it. The balancer ([`super::balance::Picker`], the stream
//! `balancer:NAME`) reads each replica's calls at work and waiting
//! (`view = "global"`), or what the calling service instance alone has
//! outstanding there (`view = "caller"`, a stream `balancer:NAME:CALLER` per
//! caller). A pick is over for its caller at the first of: the dependency's
//! answer, the call's timeout, the caller giving the call up (the notes
//! `CallEnded`, `CallTimedOut`, `CallGivenUp`); then the balancer hears it and
//! the replica's row counts how the call ended. With `outlier_detection` the
//! pick's view (the global one, or the calling instance's) also hears whether
//! the call failed: an error (a `down` replica's at once included), a
//! timeout or a call given up on is a failure, an `ok` answer resets the
//! replica's count.
//!
//! A dependency with one instance keeps none of this: a run whose dependencies
//! all have one pays nothing (the books are `None`), and a run with replicas
//! is never plain, so that the dependency's fast path asks nothing either.

use super::balance::Picker;
use super::balance::caller_name;
use super::notes::Over;
use super::server::stats::EjectionRow;
use super::vocab::{CallId, FastMap};
use crate::engine::Ticks;
use crate::metrics::TickSum;
use crate::model::{DependencyId, Model};

/// What one replica of a replicated dependency measured. Every call its
/// balancer sent it ends in exactly one of `ok`, `errors`, `timed_out`,
/// `given_up`, so they sum to `calls`.
#[derive(Debug, Clone, Default)]
pub struct DependencyReplicaStats {
    /// Calls (attempts, with a policy) the balancer sent it, those failed at
    /// once because it was `down` included.
    pub calls: u64,
    /// Answered `ok` while the caller waited.
    pub ok: u64,
    /// Answered with an error while the caller waited (its `error_rate`, an
    /// `error_rate` fault, or `down`: at once, or when it went down).
    pub errors: u64,
    /// The call's timeout came first.
    pub timed_out: u64,
    /// The caller stopped waiting for another reason (its own caller went
    /// away, a hedge's loser).
    pub given_up: u64,
    /// Time from each call to its answer (`ok` and `errors`), in ms.
    pub answer_ms: f64,
    /// Time the replica spent working, abandoned work included, in ms.
    pub work_ms: f64,
    /// Time-average number of calls being worked on.
    pub mean_busy: f64,
    /// Times outlier detection ejected it, every view's together (0 without
    /// `outlier_detection`).
    pub ejections: u64,
    /// Time it spent ejected, every view's ejections added up, to the run's
    /// end (over the whole run, warm-up included).
    pub ejected_ms: f64,
    pub(crate) answer: TickSum,
    pub(crate) work: TickSum,
}

/// The replicated dependencies of a run.
pub(crate) struct Replication {
    /// Per dependency: its balancing (None: one instance).
    by_dep: Vec<Option<Balancing>>,
    /// Each call's pick until it is over for its caller, by call id.
    picks: FastMap<CallId, Pick>,
    /// The pick of the call being made, from `dependency_refuses` to
    /// `dependency_request` (the call has no id before).
    pending: Option<Pick>,
    /// Per dependency, per replica (empty for one instance).
    stats: Vec<Vec<DependencyReplicaStats>>,
    /// Per dependency: calls made with no time left, which reach no replica.
    no_time: Vec<u64>,
    /// When the books started (the warm-up's end): an outcome counts only for
    /// a call made since.
    since: Ticks,
}

/// One replicated dependency's balancer.
struct Balancing {
    /// The instances of replicas 2 to N (replica 1 is the dependency's own).
    extra: std::ops::Range<usize>,
    picker: Picker,
    /// The replicas' outstanding calls, made at each pick (global view).
    view: Vec<u32>,
}

/// A call's replica, while it is outstanding for its caller.
#[derive(Debug, Clone, Copy)]
struct Pick {
    dep: u32,
    /// The instance, and the replica (0-based).
    inst: u32,
    replica: u32,
    /// The caller's key, in the caller view.
    caller: Option<u64>,
    at: Ticks,
}

impl Replication {
    /// The books of `model`'s replicated dependencies (None: every one has a
    /// single instance); `add(dep, replica)` makes the instance of each
    /// further replica and returns its index.
    pub fn new(
        model: &Model,
        replication: u64,
        mut add: impl FnMut(DependencyId, u32) -> usize,
    ) -> Option<Box<Replication>> {
        if model.dependencies.iter().all(|d| d.replicas <= 1) {
            return None;
        }
        let mut by_dep = Vec::new();
        let mut stats = Vec::new();
        for (dep, d) in model.dependencies.iter().enumerate() {
            let n = d.replicas.max(1);
            if n == 1 {
                by_dep.push(None);
                stats.push(Vec::new());
                continue;
            }
            let first = add(dep, 1);
            for r in 2..n {
                add(dep, r);
            }
            let picker = Picker::new(
                &d.balancer,
                &d.balance,
                n as usize,
                (model.seed, replication),
                &d.name,
            );
            by_dep.push(Some(Balancing {
                extra: first..first + n as usize - 1,
                picker,
                view: Vec::with_capacity(n as usize),
            }));
            stats.push(vec![DependencyReplicaStats::default(); n as usize]);
        }
        Some(Box::new(Replication {
            by_dep,
            picks: FastMap::default(),
            pending: None,
            stats,
            no_time: vec![0; model.dependencies.len()],
            since: Ticks::ZERO,
        }))
    }

    /// The warm-up is over (`now`): the books start again.
    pub fn restart(&mut self, now: Ticks) {
        for s in self.stats.iter_mut().flatten() {
            *s = DependencyReplicaStats::default();
        }
        self.no_time.iter_mut().for_each(|n| *n = 0);
        self.since = now;
    }
}

impl Replication {
    /// Per dependency, its replicas' books at the end of the run (`end`),
    /// with each instance's time-averaged calls at work from `busy` as
    /// (dependency, replica, mean), its calls made with no time left, and its
    /// ejections (None without `outlier_detection`).
    #[allow(clippy::type_complexity)]
    pub(super) fn books(
        &mut self,
        busy: impl Iterator<Item = (DependencyId, usize, f64)>,
        end: Ticks,
    ) -> Vec<(Vec<DependencyReplicaStats>, u64, Option<Vec<EjectionRow>>)> {
        let r = self;
        let mut out: Vec<(Vec<DependencyReplicaStats>, u64, Option<Vec<EjectionRow>>)> =
            std::mem::take(&mut r.stats)
                .into_iter()
                .zip(r.no_time.iter().copied())
                .map(|(s, n)| (s, n, None))
                .collect();
        for (dep, replica, mean) in busy {
            if let Some(s) = out[dep].0.get_mut(replica) {
                s.mean_busy = mean;
            }
        }
        for s in out.iter_mut().flat_map(|(s, _, _)| s) {
            s.answer_ms = s.answer.ms();
            s.work_ms = s.work.ms();
        }
        for (b, (stats, _, rows)) in r.by_dep.iter_mut().zip(out.iter_mut()) {
            let Some(b) = b.as_mut().filter(|b| b.picker.ejects()) else {
                continue;
            };
            let mut list = Vec::new();
            for (view, e) in b.picker.ejections(end) {
                let s = &mut stats[e.replica as usize];
                s.ejections += 1;
                s.ejected_ms += e.back.unwrap_or(end).saturating_sub(e.at).as_ms();
                list.push(EjectionRow {
                    view,
                    replica: e.replica,
                    at_ms: e.at.as_ms(),
                    lasts_ms: e.lasts.as_ms(),
                    multiplier: e.multiplier,
                    back_ms: e.back.map(Ticks::as_ms),
                });
            }
            *rows = Some(list);
        }
        out
    }
}

impl Replication {
    /// The instances of `dep`'s replicas 2 to N (empty: one instance).
    pub(super) fn extra(&self, dep: DependencyId) -> std::ops::Range<usize> {
        self.by_dep[dep].as_ref().map_or(0..0, |b| b.extra.clone())
    }

    /// Whether `dep` has replicas (a balancer picks one per call).
    pub(super) fn has(&self, dep: DependencyId) -> bool {
        self.by_dep[dep].is_some()
    }

    /// Whether `dep`'s balancer picks by the caller (the caller view).
    pub(super) fn by_caller(&self, dep: DependencyId) -> bool {
        self.by_dep[dep]
            .as_ref()
            .is_some_and(|b| b.picker.by_caller())
    }

    /// The replica of `dep` its balancer picks at `now` for the call about to
    /// be made (by the caller with key `key`, in the caller view; otherwise
    /// from each instance's `outstanding` calls), counted there and kept for
    /// the call (`pending`): its instance.
    pub(super) fn pick(
        &mut self,
        model: &Model,
        dep: DependencyId,
        key: Option<u64>,
        now: Ticks,
        outstanding: impl Fn(usize) -> u32,
    ) -> usize {
        let Some(b) = self.by_dep[dep].as_mut() else {
            return dep;
        };
        let k = match key {
            Some(key) => {
                let name = || caller_name(model, key);
                b.picker.pick_for(key, name, now)
            }
            None => {
                b.view.clear();
                b.view.push(outstanding(dep));
                let extra = b.extra.clone();
                b.view.extend(extra.map(&outstanding));
                b.picker.pick(&b.view, now)
            }
        };
        let inst = if k == 0 { dep } else { b.extra.start + k - 1 };
        self.stats[dep][k].calls += 1;
        self.pending = Some(Pick {
            dep: dep as u32,
            inst: inst as u32,
            replica: k as u32,
            caller: key,
            at: now,
        });
        inst
    }

    /// The replica picked for the call about to be made to `dep` is down: it
    /// answers its error at once, so the call is over for its caller `now`.
    pub(super) fn refused(&mut self, dep: DependencyId, now: Ticks) {
        if let Some(p) = self.pending.take() {
            self.stats[dep][p.replica as usize].errors += 1;
            self.pick_ended(p, true, now);
        }
    }

    /// The instance picked for call `call` to `dep` as it was made, kept
    /// until the call is over for its caller (None: no pick for `dep`).
    pub(super) fn picked(&mut self, dep: DependencyId, call: CallId) -> Option<usize> {
        match self.pending.take() {
            Some(p) if p.dep as usize == dep => {
                self.picks.insert(call, p);
                Some(p.inst as usize)
            }
            _ => None,
        }
    }

    /// Call `call` is over for its caller (`how`) at `now`: if it went to a
    /// replica, the replica's row counts how, and its balancer hears it.
    /// (From the notes: the first of `CallEnded`, `CallTimedOut`,
    /// `CallGivenUp`.)
    #[cold]
    #[inline(never)]
    pub(super) fn pick_over(&mut self, call: CallId, how: Over, now: Ticks) {
        let Some(p) = self.picks.remove(&call) else {
            return;
        };
        if p.at >= self.since {
            let s = &mut self.stats[p.dep as usize][p.replica as usize];
            match how {
                Over::Answered { ok } => {
                    if ok {
                        s.ok += 1;
                    } else {
                        s.errors += 1;
                    }
                    s.answer.add(now - p.at);
                }
                Over::TimedOut => s.timed_out += 1,
                Over::GivenUp => s.given_up += 1,
            }
        }
        let failed = !matches!(how, Over::Answered { ok: true });
        self.pick_ended(p, failed, now);
    }

    /// Pick `p` is over for its caller at `now`, `failed` or not: its balancer
    /// hears it, when it listens, and its outlier detection whether it failed.
    fn pick_ended(&mut self, p: Pick, failed: bool, now: Ticks) {
        if let Some(b) = self.by_dep[p.dep as usize].as_mut()
            && b.picker.listens()
        {
            b.picker
                .done(p.caller, p.replica as usize, now, now.saturating_sub(p.at));
            if b.picker.ejects() {
                b.picker.heard(p.caller, p.replica as usize, now, failed);
            }
        }
    }

    /// Replica `replica` of `dep` worked `worked` on a call (done or stopped).
    #[cold]
    #[inline(never)]
    pub(super) fn worked(&mut self, dep: DependencyId, replica: usize, worked: Ticks) {
        if let Some(s) = self.stats[dep].get_mut(replica) {
            s.work.add(worked);
        }
    }

    /// A call to `dep` was made with no time left: it reaches no replica.
    #[cold]
    #[inline(never)]
    pub(super) fn no_time(&mut self, dep: DependencyId) {
        if self.by_dep[dep].is_some() {
            self.no_time[dep] += 1;
        }
    }
}
