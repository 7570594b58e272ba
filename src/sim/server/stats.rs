//! What a server measured in a run, in total and per replica: the books the
//! server's reactions write and the observers and the time series read. A
//! leaf: it imports nothing from the simulation but the balancers'
//! [`Ejection`] record.

use crate::engine::Ticks;
use crate::metrics::{Samples, TickSum, TimeAverage};
use crate::model::ServiceId;
use crate::sim::balance::Ejection;

/// What one server measured in a run.
#[derive(Debug, Clone, Default)]
pub struct ServerStats {
    /// The service it serves.
    pub service: ServiceId,
    /// Requests that reached the server.
    pub arrived: u64,
    /// Requests whose service was completed.
    pub processed: u64,
    /// Requests refused because slots and queue were full.
    pub shed: u64,
    /// Queued requests dropped because their client gave up (`abandon = true`) or
    /// their caller cancelled them.
    pub abandoned: u64,
    /// Queue wait of every request that started service.
    pub waits: Samples,
    /// Time at the server (wait + service) of every processed request.
    pub response: Samples,
    /// Busy slots over time.
    pub busy: TimeAverage,
    /// Queued requests over time.
    pub queued: TimeAverage,
    /// Filled in at the end of the run from `busy` and `queued`.
    pub mean_busy_slots: f64,
    /// Time-weighted mean of queued requests (`queued`).
    pub mean_queue: f64,
    /// Slot time spent on processed requests (service, and calls made holding the
    /// slot), and on requests cancelled while they held it.
    pub work_ms: f64,
    /// The part of `work_ms` spent on requests whose answer came after the client's
    /// deadline or after the client gave up: work nobody waited for.
    pub late_work_ms: f64,
    /// Service demand of the queued requests dropped by `abandon`: work never done.
    pub saved_ms: f64,
    /// Requests whose caller cancelled them while they held a slot (in service or
    /// in their calls).
    pub cancelled: u64,
    /// Time every admitted request spent at the server, from arrival to leaving
    /// (answered, dropped from the queue or cancelled): the sample path behind
    /// `mean_busy_slots + mean_queue` (Little's law).
    pub in_server_ms: f64,
    /// Per replica (empty for a service with one).
    pub replicas: Vec<ReplicaStats>,
    /// The queue in front of the replicas (None without `max_conn`; boxed:
    /// the books of a server without one stay small).
    pub proxy: Option<Box<ProxyStats>>,
    /// Every ejection of a replica by outlier detection, over the whole run
    /// (None without `outlier_detection`).
    pub ejections: Option<Vec<EjectionRow>>,
    /// Per sweep interval and replica, with `outlier_detection`.
    pub replica_series: Option<ReplicaSeries>,
    // the sums behind work_ms, late_work_ms, saved_ms and in_server_ms, kept in
    // ticks during the run
    pub(crate) work: TickSum,
    pub(crate) late_work: TickSum,
    pub(crate) saved: TickSum,
    pub(crate) in_server: TickSum,
}

/// What one replica of a replicated server measured.
#[derive(Debug, Clone, Default)]
pub struct ReplicaStats {
    pub arrived: u64,
    pub processed: u64,
    pub shed: u64,
    /// Time at the replica of every processed request.
    pub response: Samples,
    pub busy: TimeAverage,
    /// Requests in its queue (the time series reads it per window).
    pub queued: TimeAverage,
    pub mean_busy_slots: f64,
    /// Times outlier detection ejected it (every view's together).
    pub ejections: u64,
    /// Time it spent ejected, every view's ejections added up.
    pub ejected_ms: f64,
    /// Requests it took from the queue in front of the replicas (`max_conn`).
    pub from_queue: u64,
}

/// The queue in front of a service's replicas (`max_conn`): what joined it
/// and what became of it. A request that never found a replica with room
/// is counted here and not in the replicas' rows.
#[derive(Debug, Clone, Default)]
pub struct ProxyStats {
    /// Requests a replica holds at most.
    pub max_conn: u32,
    /// Requests that joined the queue.
    pub queued: u64,
    /// Requests that left it for a replica with room.
    pub dispatched: u64,
    /// Requests refused after `queue_timeout_ms` (503).
    pub timed_out: u64,
    /// Requests refused because the queue was full (503).
    pub refused: u64,
    /// Requests that left it because their client gave up (`abandon = true`)
    /// or their caller cancelled them.
    pub abandoned: u64,
    /// The wait of every request that left it for a replica.
    pub waits: Samples,
    /// Waiters over time.
    pub length: TimeAverage,
    /// Filled in at the end of the run from `length`.
    pub mean_queue: f64,
    /// The most waiters at once.
    pub peak: u64,
}

/// A replicated service's replicas per sweep interval of its outlier
/// detection, `[w * n + r]` for interval w from the run's start and replica r.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplicaSeries {
    /// The sweep interval.
    pub window_ms: f64,
    /// Requests the balancer sent each replica (every view's picks).
    pub sent: Vec<u64>,
    /// Time each replica spent ejected in the window, every view's added up.
    pub ejected_ms: Vec<f64>,
}

/// One ejection of a replica by one view's outlier detection.
#[derive(Debug, Clone, PartialEq)]
pub struct EjectionRow {
    /// `global`, or the caller whose view ejected it.
    pub view: String,
    /// The replica, from 0.
    pub replica: u32,
    /// When it was ejected.
    pub at_ms: f64,
    /// How long the ejection lasts: min(multiplier x `base_ejection_ms`,
    /// `max_ejection_ms`).
    pub lasts_ms: f64,
    /// The multiplier.
    pub multiplier: u32,
    /// The sweep at which it returned (None: still ejected at the run's end).
    pub back_ms: Option<f64>,
}

impl ServerStats {
    /// End of run (`end`): the time averages over the whole run, and the sums
    /// kept in ticks in ms.
    pub(super) fn finish(&mut self, end: Ticks) {
        self.mean_busy_slots = self.busy.mean(end);
        self.mean_queue = self.queued.mean(end);
        self.work_ms = self.work.ms();
        self.late_work_ms = self.late_work.ms();
        self.saved_ms = self.saved.ms();
        self.in_server_ms = self.in_server.ms();
        for r in &mut self.replicas {
            r.mean_busy_slots = r.busy.mean(end);
        }
        if let Some(p) = &mut self.proxy {
            p.mean_queue = p.length.mean(end);
        }
    }

    /// Outlier detection's ejections over the run, ended at `end`: each
    /// replica's count and time ejected, and the rows of the `ejections`
    /// table.
    pub(super) fn ejected(
        &mut self,
        ejections: Vec<(String, Ejection)>,
        interval: Ticks,
        sent: &[u64],
        end: Ticks,
    ) {
        let n = self.replicas.len();
        let windows = (end.0.div_ceil(interval.0) as usize).max(sent.len() / n.max(1));
        let mut series = ReplicaSeries {
            window_ms: interval.as_ms(),
            sent: sent.to_vec(),
            ejected_ms: vec![0.0; windows * n],
        };
        series.sent.resize(windows * n, 0);
        let mut rows = Vec::with_capacity(ejections.len());
        for (_, e) in &ejections {
            let (from, to) = (e.at, e.back.unwrap_or(end));
            let first = (from.0 / interval.0) as usize;
            let last = (to.0.saturating_sub(1) / interval.0) as usize;
            for w in first..=last.min(windows.saturating_sub(1)) {
                let (a, b) = (
                    Ticks(w as u64 * interval.0),
                    Ticks((w as u64 + 1) * interval.0),
                );
                let overlap = to.min(b).saturating_sub(from.max(a));
                series.ejected_ms[w * n + e.replica as usize] += overlap.as_ms();
            }
        }
        self.replica_series = Some(series);
        for (view, e) in ejections {
            let r = &mut self.replicas[e.replica as usize];
            r.ejections += 1;
            r.ejected_ms += (e.back.unwrap_or(end).saturating_sub(e.at)).as_ms();
            rows.push(EjectionRow {
                view,
                replica: e.replica,
                at_ms: e.at.as_ms(),
                lasts_ms: e.lasts.as_ms(),
                multiplier: e.multiplier,
                back_ms: e.back.map(Ticks::as_ms),
            });
        }
        self.ejections = Some(rows);
    }
}
