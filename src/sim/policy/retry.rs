//! Retries: after attempt k fails with an outcome in `on`, the client waits the
//! backoff and sends attempt k + 1, while attempts remain and the call's deadline
//! has not passed; a backoff that would end at or after the deadline ends the call
//! at once with its last failure, and so does a retry the budget refuses.

use super::backoff;
use crate::engine::{Lane, Ticks};
use crate::sim::notes::Note;
use crate::sim::vocab::{Event, Outcome, World};

impl World<'_> {
    /// An attempt of `pc` ended with `outcome` (no hedging).
    pub(super) fn retry_attempt_ended(&mut self, pc: u32, outcome: Outcome) {
        if outcome == Outcome::Answered {
            return self.policy_resolve(pc, outcome);
        }
        let now = self.now();
        let p = &mut self.policies.calls[pc as usize];
        p.last = outcome;
        let (policy, state, attempts, deadline, prev) =
            (p.policy, p.state, p.attempts, p.deadline, p.sleep_ms);
        let model = self.model();
        let Some(r) = &model.policies[policy].retry else {
            return self.policy_resolve(pc, outcome);
        };
        let retryable = r.on & super::attempt_outcome(outcome).bit() != 0;
        if !retryable || attempts >= r.max_attempts || deadline.is_some_and(|d| now >= d) {
            return self.policy_resolve(pc, outcome);
        }
        let st = &mut self.policies.states[state as usize];
        let sleep = backoff::sleep_ms(&r.backoff, attempts, prev, &mut st.jitter);
        let at = now + Ticks::from_ms(sleep);
        if deadline.is_some_and(|d| at >= d) {
            return self.policy_resolve(pc, outcome);
        }
        let after = super::attempt_outcome(outcome);
        let Some(held) = st.budget.allow_retry(now, after, st.stats.in_flight()) else {
            let w = self.policies.calls[pc as usize].workload;
            self.policies.states[state as usize].tally(w, |s| s.budget_refused += 1);
            self.note(Note::RetryRefused { pc });
            return self.policy_resolve(pc, outcome);
        };
        let p = &mut self.policies.calls[pc as usize];
        p.sleep_ms = sleep;
        p.held = held;
        if at == now {
            self.retry_now(pc);
        } else {
            let key = self.schedule(at, Lane::Normal, Event::PolicyTimer(pc));
            self.policies.calls[pc as usize].timer = Some(key);
        }
    }

    /// Sends the retry of `pc` now (its backoff is over).
    pub(super) fn retry_now(&mut self, pc: u32) {
        if self.attempt(pc) {
            let p = &self.policies.calls[pc as usize];
            let (state, w) = (p.state, p.workload);
            self.policies.states[state as usize].tally(w, |s| s.retries += 1);
        } else {
            let last = self.policies.calls[pc as usize].last;
            self.policy_resolve(pc, last);
        }
    }
}
