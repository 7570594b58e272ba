//! Hedging ("The Tail at Scale"): while no answer has come, another copy goes
//! every `delay_ms`, up to `max_attempts` copies in all (the first included); a
//! copy answered with a failure sends the next copy at once (gRPC); the first `ok`
//! wins, and with `cancel_losers` the other copies are cancelled (their work
//! stops), otherwise they run on as waste. Either way they count as `cancelled`.
//! A hedge's `budget` (gRPC's throttle) may refuse a further copy: the call then
//! sends none and waits for the copies in flight.

use crate::sim::vocab::{Caller, Outcome, World};

impl World<'_> {
    /// Whether `caller` is a hedge that lets its losers run on.
    #[inline]
    pub(in crate::sim) fn keeps_losers(&self, caller: Caller) -> bool {
        match caller {
            Caller::Policy { call } => {
                let p = &self.policies.calls[call as usize];
                self.model().policies[p.policy]
                    .hedge
                    .is_some_and(|h| !h.cancel_losers)
            }
            _ => false,
        }
    }

    /// The first copy of `pc` went: the next one is due after the delay.
    pub(super) fn hedge_started(&mut self, pc: u32) {
        let p = &self.policies.calls[pc as usize];
        if let Some(h) = self.model().policies[p.policy].hedge
            && p.attempts < h.max_attempts
        {
            self.policy_schedule(pc, self.now() + h.delay);
        }
    }

    /// A copy of `pc` ended with `outcome`.
    pub(super) fn hedge_attempt_ended(&mut self, pc: u32, outcome: Outcome) {
        let p = &self.policies.calls[pc as usize];
        let Some(h) = self.model().policies[p.policy].hedge else {
            return;
        };
        if outcome == Outcome::Answered {
            self.policy_stop_attempts(pc, h.cancel_losers);
            return self.policy_resolve(pc, outcome);
        }
        self.policies.calls[pc as usize].last = outcome;
        self.hedge_send(pc);
    }

    /// Whether the hedge's budget (gRPC's throttle) lets a further copy of
    /// `pc` go; a refused copy is counted, and the call sends no further one.
    fn hedge_allowed(&mut self, pc: u32) -> bool {
        let now = self.now();
        let p = &self.policies.calls[pc as usize];
        let (state, w, last) = (p.state as usize, p.workload, p.last);
        let st = &mut self.policies.states[state];
        if st
            .budget
            .allow_retry(now, super::attempt_outcome(last), st.stats.in_flight())
            .is_some()
        {
            return true;
        }
        st.tally(w, |s| s.budget_refused += 1);
        self.policies.calls[pc as usize].hedging_stopped = true;
        false
    }

    /// The hedge delay is over: the next copy goes.
    pub(super) fn hedge_timer(&mut self, pc: u32) {
        self.hedge_send(pc);
    }

    /// Sends the next copy if copies and time remain (and sets the timer for the
    /// one after); ends the call when nothing is in flight and nothing can go.
    fn hedge_send(&mut self, pc: u32) {
        let p = &self.policies.calls[pc as usize];
        let Some(h) = self.model().policies[p.policy].hedge else {
            return;
        };
        if p.attempts < h.max_attempts
            && !p.hedging_stopped
            && self.hedge_allowed(pc)
            && self.attempt(pc)
        {
            let p = &self.policies.calls[pc as usize];
            let (state, more, w) = (p.state, p.attempts < h.max_attempts, p.workload);
            self.policies.states[state as usize].tally(w, |s| s.hedges += 1);
            if more {
                self.policy_schedule(pc, self.now() + h.delay);
            } else if let Some(key) = self.policies.calls[pc as usize].timer.take() {
                self.cancel(key);
            }
            return;
        }
        let p = &mut self.policies.calls[pc as usize];
        if p.open.is_empty() {
            let (timer, last) = (p.timer.take(), p.last);
            if let Some(key) = timer {
                self.cancel(key);
            }
            self.policy_resolve(pc, last);
        }
    }
}
