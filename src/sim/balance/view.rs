//! A target's balancing as its callers see it (`view`).
//!
//! `view = "global"`: one balancer for every caller, shown the replicas' own
//! counts (the target's book of requests in slots and in line), with the
//! stream `balancer:<target>`.
//!
//! `view = "caller"`: one balancer per caller, as a proxy beside each client
//! runs it: it reads only what that caller has outstanding at each replica
//! (sent and not yet over for the caller: a request the caller gave up on
//! is over for it, even if the replica still works on it), and a kind that
//! learns (`peak_ewma`) learns only from that caller's answers. Each caller's
//! state is made at its first pick, with its own stream
//! `balancer:<target>:<caller>`.
//!
//! A caller is any number the owner chooses; the picker knows nothing of
//! servers or requests, so any replicated target can use it.
//!
//! `least_outstanding` with `tie_break = "first_reached"` also reads when
//! each replica's count last changed: the owner gives the global view's
//! stamps ([`Picker::since`]); a caller's own are kept here, stamped at its
//! picks and their ends. With `max_conn` (the global view) the picker holds
//! the queue in front of the replicas ([`ProxyQueue`]): [`Picker::place`]
//! instead of [`Picker::pick`], [`Picker::take`] when a replica's count
//! falls.

use super::{Balance, Detector, Ejection, Placed, ProxyQueue};
use crate::engine::{Ticks, stream};
use crate::model::{BalanceKeys, BalanceRelease, BalanceView, Balancer};
use crate::sim::vocab::FastMap;

pub(crate) struct Picker {
    kind: Balancer,
    keys: BalanceKeys,
    n: usize,
    seed: u64,
    replication: u64,
    /// The target's name, for the callers' streams.
    target: String,
    /// The one balancer of the global view.
    global: Box<dyn Balance>,
    /// The callers' own balancers and counts (the caller view).
    callers: Option<FastMap<u64, Own>>,
    /// Whether picks are heard when they are over ([`Picker::done`]).
    listens: bool,
    /// The global view's outlier detection (`outlier_detection`).
    outlier: Option<Detector>,
    /// The queue in front of the replicas (`max_conn`).
    queue: Option<ProxyQueue>,
    /// The callers' stamps: the next one to give.
    moves: u64,
}

/// One caller's balancer and what it has outstanding at each replica.
struct Own {
    balancer: Box<dyn Balance>,
    outstanding: Vec<u32>,
    /// When each count last changed (stamps from `Picker::moves`), for a
    /// balancer that reads them.
    since: Vec<u64>,
    /// Its outlier detection, and its name for the ejections' table.
    outlier: Option<(Detector, String)>,
}

impl Picker {
    /// The picker of `target`'s `n` replicas, for run `replication` of
    /// `seed`.
    pub fn new(
        kind: &Balancer,
        keys: &BalanceKeys,
        n: usize,
        (seed, replication): (u64, u64),
        target: &str,
    ) -> Picker {
        let rng = stream(seed, replication, &format!("balancer:{target}"));
        let global = kind.make(n, rng);
        let by_caller = keys.view == BalanceView::Caller;
        Picker {
            listens: by_caller || global.hears() || keys.outlier.is_some(),
            outlier: keys
                .outlier
                .filter(|_| !by_caller)
                .map(|o| Detector::new(o, n)),
            kind: kind.clone(),
            keys: keys.clone(),
            n,
            seed,
            replication,
            target: target.to_string(),
            global,
            callers: by_caller.then(FastMap::default),
            queue: keys.conn_limit.map(ProxyQueue::new),
            moves: n as u64,
        }
    }

    /// Whether each caller keeps its own balancer (`view = "caller"`).
    #[inline]
    pub fn by_caller(&self) -> bool {
        self.callers.is_some()
    }

    /// Whether a pick stays counted until the replica is done with it, its
    /// caller's giving up aside (`release = "replica"`).
    #[inline]
    pub fn holds(&self) -> bool {
        self.keys.release == BalanceRelease::Replica
    }

    /// Whether the owner must tell [`Picker::done`] when each pick is over.
    #[inline]
    pub fn listens(&self) -> bool {
        self.listens
    }

    /// The global view's pick, given the replicas' own counts.
    #[inline]
    pub fn pick(&mut self, outstanding: &[u32], now: Ticks) -> usize {
        match &mut self.outlier {
            None => self.global.pick_at(outstanding, now),
            Some(d) => d.pick(&mut *self.global, outstanding, now),
        }
    }

    /// Whether the global view's balancer reads when each replica's count
    /// last changed: then give them before each pick ([`Picker::since`]).
    pub fn reads_since(&self) -> bool {
        self.global.reads_since()
    }

    /// Per replica, a stamp of when its count last changed (larger: later),
    /// for the global view's next pick.
    pub fn since(&mut self, since: &[u64]) {
        self.global.since(since);
    }

    /// Whether a queue stands in front of the replicas (`max_conn`).
    #[inline]
    pub fn limited(&self) -> bool {
        self.queue.is_some()
    }

    /// The global view's placing of waiter `id` at `now` with `max_conn`: a
    /// replica with room, the queue, or refused (see [`ProxyQueue::place`]).
    pub fn place(&mut self, outstanding: &[u32], id: u64, now: Ticks) -> Placed {
        let q = self.queue.as_mut().expect("a connection limit");
        q.place(&mut *self.global, outstanding, id, now)
    }

    /// A replica holding `count` requests takes the oldest waiter, if it has
    /// room and anyone waits: (its id, when it joined).
    pub fn take(&mut self, count: u32) -> Option<(u64, Ticks)> {
        self.queue.as_mut()?.take(count)
    }

    /// Waiter `id` leaves the queue: when it joined, if it waited there.
    pub fn leave(&mut self, id: u64) -> Option<Ticks> {
        self.queue.as_mut()?.leave(id)
    }

    /// Waiters in the queue now.
    pub fn waiting(&self) -> usize {
        self.queue.as_ref().map_or(0, ProxyQueue::len)
    }

    /// `caller`'s pick, from what it alone has outstanding; `name` names the
    /// caller for its stream, asked at its first pick only.
    pub fn pick_for(&mut self, caller: u64, name: impl FnOnce() -> String, now: Ticks) -> usize {
        let (kind, n) = (&self.kind, self.n);
        let callers = self.callers.as_mut().expect("a caller view");
        let own = callers.entry(caller).or_insert_with(|| {
            let name = name();
            let rng = stream(
                self.seed,
                self.replication,
                &format!("balancer:{}:{}", self.target, name),
            );
            Own {
                balancer: kind.make(n, rng),
                outstanding: vec![0; n],
                since: (0..n as u64).collect(),
                outlier: self.keys.outlier.map(|o| (Detector::new(o, n), name)),
            }
        });
        if own.balancer.reads_since() {
            own.balancer.since(&own.since);
        }
        let k = match &mut own.outlier {
            None => own.balancer.pick_at(&own.outstanding, now),
            Some((d, _)) => d.pick(&mut *own.balancer, &own.outstanding, now),
        };
        own.outstanding[k] += 1;
        own.since[k] = self.moves;
        self.moves += 1;
        k
    }

    /// A request sent to `replica` (by `caller`, in the caller view) is over
    /// for its caller at `now`, `latency` after it was sent.
    pub fn done(&mut self, caller: Option<u64>, replica: usize, now: Ticks, latency: Ticks) {
        match (caller, self.callers.as_mut()) {
            (Some(c), Some(callers)) => {
                if let Some(own) = callers.get_mut(&c) {
                    own.outstanding[replica] = own.outstanding[replica].saturating_sub(1);
                    own.since[replica] = self.moves;
                    self.moves += 1;
                    own.balancer.on_done(replica, now, latency);
                }
            }
            _ => self.global.on_done(replica, now, latency),
        }
    }

    /// A request sent to `replica` (by `caller`, in the caller view) is over
    /// at `now`, `failed` or not: its view's outlier detection hears it.
    pub fn heard(&mut self, caller: Option<u64>, replica: usize, now: Ticks, failed: bool) {
        let detector = match (caller, self.callers.as_mut()) {
            (Some(c), Some(callers)) => callers
                .get_mut(&c)
                .and_then(|own| own.outlier.as_mut())
                .map(|(d, _)| d),
            _ => self.outlier.as_mut(),
        };
        if let Some(d) = detector {
            d.heard(replica, now, failed);
        }
    }

    /// Whether it ejects replicas (`outlier_detection`).
    pub fn ejects(&self) -> bool {
        self.keys.outlier.is_some()
    }

    /// Every view's ejections up to the run's `end`: (`global`, or the
    /// caller's name), in the callers' name order.
    pub fn ejections(&mut self, end: Ticks) -> Vec<(String, Ejection)> {
        let mut out = Vec::new();
        if let Some(d) = &mut self.outlier {
            out.extend(d.ejections(end).iter().map(|e| ("global".to_string(), *e)));
        }
        if let Some(callers) = &mut self.callers {
            let mut views: Vec<&mut (Detector, String)> = callers
                .values_mut()
                .filter_map(|o| o.outlier.as_mut())
                .collect();
            views.sort_by(|a, b| a.1.cmp(&b.1));
            for (d, name) in views {
                out.extend(d.ejections(end).iter().map(|e| (name.clone(), *e)));
            }
        }
        out
    }

    /// Every view's picks per sweep interval and replica added up, `[w * n +
    /// r]` for interval w from the run's start (see [`Detector::sent`]),
    /// with the sweep interval.
    pub fn sent(&self) -> (Ticks, Vec<u64>) {
        let mut views: Vec<&Detector> = self.outlier.iter().collect();
        if let Some(callers) = &self.callers {
            views.extend(
                callers
                    .values()
                    .filter_map(|o| o.outlier.as_ref().map(|(d, _)| d)),
            );
        }
        let mut sum: Vec<u64> = Vec::new();
        for d in views {
            let sent = d.sent();
            if sum.len() < sent.len() {
                sum.resize(sent.len(), 0);
            }
            for (s, &x) in sum.iter_mut().zip(sent) {
                *s += u64::from(x);
            }
        }
        let interval = self.keys.outlier.map_or(Ticks(1), |o| o.interval);
        (interval, sum)
    }

    /// What `caller` has outstanding at each replica (tests).
    #[cfg(test)]
    pub fn outstanding_of(&self, caller: u64) -> Option<&[u32]> {
        self.callers
            .as_ref()?
            .get(&caller)
            .map(|o| &o.outstanding[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str) -> Balancer {
        let t: toml::Table = format!("kind = \"{name}\"").parse().expect("a table");
        Balancer::read("b", &t, 3).expect("a kind")
    }

    fn keys(view: BalanceView) -> BalanceKeys {
        BalanceKeys {
            view,
            ..BalanceKeys::default()
        }
    }

    #[test]
    fn each_caller_counts_only_its_own_and_releases_at_done() {
        let mut p = Picker::new(
            &kind("least_outstanding"),
            &keys(BalanceView::Caller),
            3,
            (1, 0),
            "t",
        );
        assert!(p.by_caller() && p.listens());
        let t = Ticks::ZERO;
        // caller 7 fills replicas 0, 1, 2 in turn (each the least it has)
        let a: Vec<usize> = (0..3).map(|_| p.pick_for(7, || "a".into(), t)).collect();
        assert_eq!(a, [0, 1, 2]);
        // caller 9 has nothing outstanding: it starts at replica 0 again
        assert_eq!(p.pick_for(9, || "b".into(), t), 0);
        assert_eq!(p.outstanding_of(7), Some(&[1, 1, 1][..]));
        assert_eq!(p.outstanding_of(9), Some(&[1, 0, 0][..]));
        // 7's request at replica 1 is over: its next pick goes there
        p.done(Some(7), 1, t, Ticks::from_ms(5.0));
        assert_eq!(p.outstanding_of(7), Some(&[1, 0, 1][..]));
        assert_eq!(p.pick_for(7, || unreachable!("named once"), t), 1);
    }

    #[test]
    fn the_global_view_listens_only_for_kinds_that_learn() {
        let g = keys(BalanceView::Global);
        let p = Picker::new(&kind("two_choices"), &g, 3, (1, 0), "t");
        assert!(!p.by_caller() && !p.listens());
        let p = Picker::new(&kind("peak_ewma"), &g, 3, (1, 0), "t");
        assert!(!p.by_caller() && p.listens());
    }
}
