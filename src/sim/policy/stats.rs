//! The counts of a policy's calls and attempts: a row of the `calls` table
//! (the counting model is in the module above), and how an attempt's answer
//! reads to a policy.

use crate::model::AttemptOutcome;
use crate::sim::vocab::Outcome;

/// What one (caller, target, policy) did: a row of the `calls` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallStats {
    /// The calling service, or the workload (its clients summed).
    pub caller: String,
    /// The service or dependency called.
    pub target: String,
    /// The policy's name (`none`: calls without one).
    pub call_policy: String,
    /// With several workloads, the workload whose requests made these calls
    /// (a service's calls are split by the workload that sent the request they
    /// serve); empty with one.
    pub workload: String,
    /// Calls made, refused ones included.
    pub first_tries: u64,
    /// Attempts sent.
    pub attempts: u64,
    /// Retries sent.
    pub retries: u64,
    /// Hedged copies sent.
    pub hedges: u64,
    /// Attempts answered ok.
    pub ok: u64,
    /// Attempts answered with a failure.
    pub error: u64,
    /// Attempts that timed out.
    pub timeout: u64,
    /// Attempts shed by a full server.
    pub shed: u64,
    /// Attempts rejected by a limiter.
    pub rejected: u64,
    /// Hedge losers and attempts cancelled from above.
    pub cancelled: u64,
    /// Retries the budget refused (each ends its call).
    pub budget_refused: u64,
    /// Calls the breaker refused before any attempt.
    pub breaker_refused: u64,
    /// Calls the throttle refused before any attempt.
    pub throttled: u64,
    /// Times the breaker opened.
    pub breaker_opened: u64,
    /// The most attempts one call took (a check: never above the policy's
    /// `max_attempts`; not a column).
    pub most_attempts: u64,
    /// Attempts sent at or after their call's deadline (a check: always 0).
    pub late_attempts: u64,
    /// The most retries open at once under an `envoy` budget (a check: never
    /// above the budget's cap; not a column).
    pub most_retries_open: u64,
}

impl CallStats {
    /// Attempts sent and not yet ended (every attempt ends in one count).
    pub(super) fn in_flight(&self) -> u64 {
        self.attempts.saturating_sub(
            self.ok + self.error + self.timeout + self.shed + self.rejected + self.cancelled,
        )
    }

    pub(super) fn count(&mut self, o: AttemptOutcome) {
        let c = match o {
            AttemptOutcome::Ok => &mut self.ok,
            AttemptOutcome::Error => &mut self.error,
            AttemptOutcome::Timeout => &mut self.timeout,
            AttemptOutcome::Shed => &mut self.shed,
            AttemptOutcome::Rejected => &mut self.rejected,
            AttemptOutcome::Cancelled => &mut self.cancelled,
        };
        *c += 1;
    }

    /// Adds `o`'s counts (a workload's clients are summed into one row).
    pub(super) fn add(&mut self, o: &CallStats) {
        self.first_tries += o.first_tries;
        self.attempts += o.attempts;
        self.retries += o.retries;
        self.hedges += o.hedges;
        self.ok += o.ok;
        self.error += o.error;
        self.timeout += o.timeout;
        self.shed += o.shed;
        self.rejected += o.rejected;
        self.cancelled += o.cancelled;
        self.budget_refused += o.budget_refused;
        self.breaker_refused += o.breaker_refused;
        self.throttled += o.throttled;
        self.breaker_opened += o.breaker_opened;
        self.most_attempts = self.most_attempts.max(o.most_attempts);
        self.late_attempts += o.late_attempts;
        self.most_retries_open = self.most_retries_open.max(o.most_retries_open);
    }
}

/// How an attempt's answer reads to a policy.
pub(crate) fn attempt_outcome(o: Outcome) -> AttemptOutcome {
    match o {
        Outcome::Answered => AttemptOutcome::Ok,
        Outcome::Dropped | Outcome::Error | Outcome::Refused | Outcome::NotFound => {
            AttemptOutcome::Error
        }
        Outcome::TimedOut => AttemptOutcome::Timeout,
        Outcome::Shed => AttemptOutcome::Shed,
        Outcome::Rejected(_) => AttemptOutcome::Rejected,
    }
}
