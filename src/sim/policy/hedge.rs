//! Hedging ("The Tail at Scale"): while no answer has come, another copy goes
//! every `delay_ms`, up to `max_attempts` copies in all (the first included); a
//! copy answered with a non-fatal failure (`non_fatal`, every failure unless
//! given) sends the next copy at once, and any other failure ends the call
//! with it, the copies in flight stopped as losers are (gRPC's
//! `nonFatalStatusCodes`: grpc-java `RetriableStream.makeHedgingDecision`,
//! A6 "Hedging policy"); the first `ok` wins, and with `cancel_losers` the other copies are cancelled (their work
//! stops), otherwise they run on as waste. Either way they count as `cancelled`.
//! A hedge's `budget` (gRPC's throttle) may refuse a further copy: the call then
//! sends none and waits for the copies in flight.

use super::Policies;
use crate::engine::Ticks;
use crate::model::{Hedge, Model};
use crate::sim::context::Timers;
use crate::sim::vocab::Outcome;

/// What a copy's end means for its hedged call ([`Policies::hedge_copy_ended`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopyEnded {
    /// The call is over with the copy's outcome (an `ok`, or a fatal
    /// failure): the copies still in flight stop, their work cancelled with
    /// `cancel` (the hedge's `cancel_losers`), left running without.
    Over { cancel: bool },
    /// A non-fatal failure: the next copy goes now, if one may.
    Next,
}

/// Whether a copy's failure with `outcome` ends the call (gRPC: a status
/// not in `nonFatalStatusCodes` commits the call with it).
fn fatal(h: &Hedge, outcome: Outcome) -> bool {
    super::attempt_outcome(outcome).bit() & h.non_fatal == 0
}

impl Policies {
    /// `pc`'s hedge (None: its policy does not hedge).
    #[inline]
    fn hedge_of<'m>(&self, model: &'m Model, pc: u32) -> Option<&'m Hedge> {
        model.policies[self.calls[pc as usize].policy]
            .hedge
            .as_ref()
    }

    /// The first copy of `pc` went: the timer for the next one is set, if a
    /// further copy may go.
    pub(in crate::sim) fn hedge_started(&mut self, t: &mut Timers, model: &Model, pc: u32) {
        if let Some(h) = self.hedge_of(model, pc)
            && self.calls[pc as usize].attempts < h.max_attempts
        {
            self.set_timer(t, pc, t.now() + h.delay);
        }
    }

    /// A copy of hedged call `pc` ended with `outcome`: the call is over,
    /// or (a non-fatal failure, kept as the call's last) the next copy may
    /// go.
    pub(in crate::sim) fn hedge_copy_ended(
        &mut self,
        model: &Model,
        pc: u32,
        outcome: Outcome,
    ) -> CopyEnded {
        let h = self.hedge_of(model, pc).expect("a hedged call's copy");
        if outcome == Outcome::Answered || fatal(h, outcome) {
            return CopyEnded::Over {
                cancel: h.cancel_losers,
            };
        }
        self.calls[pc as usize].last = outcome;
        CopyEnded::Next
    }

    /// Whether a further copy of `pc` may go now: copies left, and the
    /// hedge's budget (gRPC's throttle) letting it. A copy the budget
    /// refuses is counted, and the call sends no further one.
    pub(in crate::sim) fn hedge_may_go(&mut self, model: &Model, pc: u32, now: Ticks) -> bool {
        let Some(h) = self.hedge_of(model, pc) else {
            return false;
        };
        let p = &self.calls[pc as usize];
        if p.attempts >= h.max_attempts || p.hedging_stopped {
            return false;
        }
        let (state, w, last) = (p.state as usize, p.workload, p.last);
        let st = &mut self.states[state];
        if st
            .budget
            .allow_retry(now, super::attempt_outcome(last), st.stats.in_flight())
            .is_some()
        {
            return true;
        }
        st.tally(w, |s| s.budget_refused += 1);
        self.calls[pc as usize].hedging_stopped = true;
        false
    }

    /// A further copy of `pc` went: counted; the timer for the next one is
    /// set if another may follow, cancelled otherwise.
    pub(in crate::sim) fn hedged(&mut self, t: &mut Timers, model: &Model, pc: u32) {
        let Some(h) = self.hedge_of(model, pc) else {
            return;
        };
        let p = &self.calls[pc as usize];
        let (state, more, w) = (p.state, p.attempts < h.max_attempts, p.workload);
        self.states[state as usize].tally(w, |s| s.hedges += 1);
        if more {
            self.set_timer(t, pc, t.now() + h.delay);
        } else {
            self.cancel_timer(t, pc);
        }
    }

    /// No further copy of `pc` can go: with none in flight the call is over
    /// (its timer cancelled), and its last failure comes back.
    pub(in crate::sim) fn hedge_done(&mut self, t: &mut Timers, pc: u32) -> Option<Outcome> {
        if !self.calls[pc as usize].open.is_empty() {
            return None;
        }
        self.cancel_timer(t, pc);
        Some(self.calls[pc as usize].last)
    }
}
