//! What one run measured: the figures the simulation hands to the analyses.
//! Plain data, filled by the books (`observe`) and the actors' own statistics.

use super::dependency_replicas::DependencyReplicaStats;
use super::limiter::LimiterResults;
use super::policy::CallStats;
use super::server::stats::{EjectionRow, ServerStats};
use super::timeseries;
use super::vocab::Outcome;
use crate::metrics::Samples;

/// Requests sent, and how each ended: every request is counted in `requests`
/// and, once it is over, in exactly one of the outcome counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcomes {
    /// Requests sent.
    pub requests: u64,
    /// Answered (for a plan, every call in time) within the threshold.
    pub answered: u64,
    /// A plan call failed, or the response came after the threshold.
    pub dropped: u64,
    /// The client gave up first.
    pub timed_out: u64,
    /// Refused by a full server (503).
    pub shed: u64,
    /// Rejected by a limiter (429).
    pub rejected: u64,
    /// Answered with an error (a fault, a failed call through a policy).
    pub errors: u64,
    /// Refused by a client policy (breaker open, throttled).
    pub refused: u64,
    /// Answered 404: no service owns the route.
    pub not_found: u64,
}

impl Outcomes {
    /// One more request ended with `outcome`.
    #[inline(always)]
    pub fn count(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Answered => self.answered += 1,
            Outcome::Dropped => self.dropped += 1,
            Outcome::TimedOut => self.timed_out += 1,
            Outcome::Shed => self.shed += 1,
            Outcome::Rejected(_) => self.rejected += 1,
            Outcome::Error => self.errors += 1,
            Outcome::Refused => self.refused += 1,
            Outcome::NotFound => self.not_found += 1,
        }
    }

    /// The requests that ended without an answer in time: every outcome but
    /// `answered`.
    pub fn failed(&self) -> u64 {
        self.dropped
            + self.timed_out
            + self.shed
            + self.rejected
            + self.errors
            + self.refused
            + self.not_found
    }

    /// The requests that have ended, whichever way.
    pub fn ended(&self) -> u64 {
        self.answered + self.failed()
    }
}

/// Per-dependency results.
#[derive(Debug, Clone, Default)]
pub struct DependencyStats {
    /// Calls made to the dependency (those failed at once for lack of time too).
    pub calls: u64,
    /// Calls that failed for their caller: timed out, had no time left, got an
    /// error, or (through a policy) were refused; one per call, after its last
    /// attempt.
    pub failed: u64,
    /// Work started (calls that reached the dependency).
    pub work_started: u64,
    /// Time the dependency spent working, abandoned work included.
    pub work_ms: f64,
    /// Work done after the caller had given up.
    pub wasted_ms: f64,
    /// Time-average number of calls being worked on.
    pub mean_busy: f64,
    /// Per replica, with `replicas` > 1 (empty otherwise).
    pub replicas: Vec<DependencyReplicaStats>,
    /// With `replicas` > 1: the calls made with no time left, which fail at
    /// once and reach no replica (counted in `calls` and `failed`).
    pub no_replica: u64,
    /// Every ejection of a replica by outlier detection, over the whole run
    /// (None without `outlier_detection`).
    pub ejections: Option<Vec<EjectionRow>>,
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    /// Every request the workload sent, each counted once by how it ended.
    pub outcomes: Outcomes,
    /// Response times of every request that got a response.
    pub response: Samples,
    /// One per dependency, in declaration order.
    pub dependencies: Vec<DependencyStats>,
    /// One per service with a server handler, in declaration order.
    pub servers: Vec<ServerStats>,
    /// One per workload step (ladders); empty for other workloads.
    pub steps: Vec<StepStats>,
    /// Dependency work done after the caller had given up, all dependencies.
    pub wasted_ms: f64,
    /// Events the run processed.
    pub events: u64,
    /// Virtual time of the last event.
    pub sim_time_ms: f64,
    /// Time-average number of requests in flight.
    pub mean_in_flight: f64,
    /// Total time requests spent in the system, from sent to their answer or to
    /// their client giving up (every request, timed-out ones included).
    pub in_system_ms: f64,
    /// When the last request left (answered or given up); abandoned dependency work
    /// may run on after it.
    pub last_exit_ms: f64,
    /// Time-average number of dependency calls being worked on (abandoned included).
    pub mean_dependency_work: f64,
    /// Per limiter, per (route, access) pair and per member (empty without limiters).
    pub limiters: LimiterResults,
    /// Per window (with `[output] window_ms` or faults).
    pub timeseries: Option<timeseries::TimeSeries>,
    /// End-to-end response times of the answered requests only.
    pub answered_response: Samples,
    /// One per workload, in declaration order: what its clients saw.
    pub workloads: Vec<WorkloadStats>,
    /// Requests and calls still held when the run ended: 0 unless one never ended
    /// (a bug the property tests look for).
    pub leaked: u64,
    /// Per (caller, target, call_policy): calls made through client policies
    /// (empty without `[policies]`).
    pub calls: Vec<CallStats>,
}

/// What one ladder step measured.
#[derive(Debug, Clone, Default)]
pub struct StepStats {
    /// The step's value: requests per wave (closed) or the rate multiplier (open).
    pub concurrency: u64,
    /// Requests sent in the step.
    pub sent: u64,
    /// Refused at once (shed by a full server).
    pub rejected: u64,
    /// Completed by the handler (answered in time or not).
    pub processed: u64,
    /// Dropped from a server queue because the client gave up.
    pub abandoned: u64,
    /// Answered within the timeout.
    pub successful: u64,
    /// Queue wait of every request that started service.
    pub waits: Samples,
}

/// What one workload's clients saw, end to end.
#[derive(Debug, Clone, Default)]
pub struct WorkloadStats {
    /// Every request its clients sent, each counted once by how it ended.
    pub outcomes: Outcomes,
    /// Response times of the requests that got a response (not given up on).
    pub response: Samples,
    /// Response times of the answered requests.
    pub answered_response: Samples,
}

#[cfg(test)]
mod tests {
    use super::Outcomes;
    use crate::sim::vocab::Outcome;

    #[test]
    fn each_outcome_counts_once_in_its_own_field() {
        let every = [
            Outcome::Answered,
            Outcome::Dropped,
            Outcome::TimedOut,
            Outcome::Shed,
            Outcome::Rejected(0),
            Outcome::Error,
            Outcome::Refused,
            Outcome::NotFound,
        ];
        let mut seen = Vec::new();
        for (i, &outcome) in every.iter().enumerate() {
            let mut o = Outcomes::default();
            // a different number of each, so a field counted twice shows
            for _ in 0..=i {
                o.count(outcome);
            }
            let fields = [
                o.answered,
                o.dropped,
                o.timed_out,
                o.shed,
                o.rejected,
                o.errors,
                o.refused,
                o.not_found,
            ];
            let counted: Vec<usize> = (0..fields.len()).filter(|&f| fields[f] > 0).collect();
            assert_eq!(counted.len(), 1, "{outcome:?} counts in one field");
            assert_eq!(fields[counted[0]], i as u64 + 1, "{outcome:?}");
            assert_eq!(o.ended(), i as u64 + 1, "{outcome:?} ends a request");
            let failed = outcome != Outcome::Answered;
            assert_eq!(o.failed(), if failed { i as u64 + 1 } else { 0 });
            seen.push(counted[0]);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), every.len(), "no two outcomes share a field");
    }
}
