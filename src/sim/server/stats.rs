//! What a server measured in a run, in total and per replica: the books the
//! server's reactions write and the observers and the time series read. A
//! leaf: it imports nothing from the simulation.

use crate::engine::Ticks;
use crate::metrics::{Samples, TickSum, TimeAverage};
use crate::model::ServiceId;

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
    pub mean_busy_slots: f64,
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
    }
}
