//! Retries: after attempt k fails with an outcome in `on`, the client waits the
//! backoff and sends attempt k + 1, while attempts remain and the call's deadline
//! has not passed; a backoff that would end at or after the deadline ends the call
//! at once with its last failure, and so does a retry the budget refuses.

use super::backoff;
use super::{Policies, Retry};
use crate::engine::Ticks;
use crate::model::Model;
use crate::sim::context::Timers;
use crate::sim::vocab::Outcome;

impl Policies {
    /// An attempt of `pc` failed with `outcome` now (no hedging): whether
    /// and when a retry goes, its backoff drawn, its timer set and its budget
    /// held.
    pub(in crate::sim) fn retry_after(
        &mut self,
        t: &mut Timers,
        model: &Model,
        pc: u32,
        outcome: Outcome,
    ) -> Retry {
        let now = t.now();
        let p = &mut self.calls[pc as usize];
        p.last = outcome;
        let (policy, state, attempts, deadline, prev) =
            (p.policy, p.state, p.attempts, p.deadline, p.sleep_ms);
        let Some(r) = &model.policies[policy].retry else {
            return Retry::Resolve;
        };
        let retryable = r.on & super::attempt_outcome(outcome).bit() != 0;
        if !retryable || attempts >= r.max_attempts || deadline.is_some_and(|d| now >= d) {
            return Retry::Resolve;
        }
        let st = &mut self.states[state as usize];
        let sleep = backoff::sleep_ms(&r.backoff, attempts, prev, &mut st.jitter);
        let at = now + Ticks::from_ms(sleep);
        if deadline.is_some_and(|d| at >= d) {
            return Retry::Resolve;
        }
        let after = super::attempt_outcome(outcome);
        let Some(held) = st.budget.allow_retry(now, after, st.stats.in_flight()) else {
            let w = self.calls[pc as usize].workload;
            self.states[state as usize].tally(w, |s| s.budget_refused += 1);
            return Retry::BudgetRefused;
        };
        let p = &mut self.calls[pc as usize];
        p.sleep_ms = sleep;
        p.held = held;
        if at == now {
            return Retry::Now;
        }
        debug_assert!(
            p.timer.is_none(),
            "a retry's backoff follows an attempt's end"
        );
        self.set_timer(t, pc, at);
        Retry::Later
    }

    /// The retry of `pc` went: counted.
    pub(in crate::sim) fn retried(&mut self, pc: u32) {
        let p = &self.calls[pc as usize];
        let (state, w) = (p.state, p.workload);
        self.states[state as usize].tally(w, |s| s.retries += 1);
    }
}
