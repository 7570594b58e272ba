//! The admission seam: what every limiter algorithm answers ([`Admission`],
//! [`Decision`]) and the admissions each request holds until it is done
//! ([`Held`]). The per-key state the actor keeps, one variant per family of
//! algorithms, is [`super::admitter::Admitter`].
//!
//! A limiter's state per bucket key admits a request or not
//! ([`Admission::try_admit`]); when the request's work leaves the service, every
//! admission that let it in hears it once ([`Admission::on_done`]; the rule is
//! in the [module docs](super)). The actor records each admission on the request
//! (limiter, the index of the state that admitted it, the instant it passes), so
//! the done notice goes to the very state that admitted it with no key lookup.

use crate::engine::Ticks;
pub use crate::kinds::admit::Decision;
use crate::model::{Limiter, LimiterId};
use crate::sim::vocab::{Outcome, ReqId, slot_of};

/// One limiter algorithm's state for one bucket key.
pub trait Admission {
    /// Decides one request arriving at `now`: let through now, at a later
    /// instant (throttle), or rejected. A request it lets through (now or later)
    /// holds an admission until it is done.
    fn try_admit(&mut self, limiter: &Limiter, now: Ticks) -> Decision;

    /// A request this state admitted is done at `now`, `latency` after it was let
    /// through, with `outcome`: the handler's outcome, `Rejected` when a later
    /// limiter of its chain rejected it, `TimedOut` when its work was given up
    /// (abandoned or cancelled) or its client left while it was held.
    /// `started_with`: a concurrency limit's count in flight right after it
    /// let the request through, the request included (0 for a rate limiter).
    /// Heard exactly once per admission.
    fn on_done(
        &mut self,
        limiter: &Limiter,
        now: Ticks,
        latency: Ticks,
        outcome: Outcome,
        started_with: u32,
    );
}

/// One admission a request holds: the limiter, the index of the state that let
/// it in (in that limiter's states) and the instant it passes (a throttled
/// request's at the end of its hold).
#[derive(Debug, Clone, Copy)]
pub(super) struct Admitted {
    pub(super) limiter: LimiterId,
    pub(super) state: u32,
    pub(super) at: Ticks,
    /// A concurrency limit's count in flight right after it let the request
    /// through (0 for a rate limiter): what its algorithm is given when the
    /// request ends.
    pub(super) in_flight: u32,
    /// Names the admission in the test ledger.
    #[cfg(test)]
    pub(super) serial: u64,
}

/// The admissions each request holds, by request id, in the order it got them.
/// A request that met no limiter has an empty list and costs no allocation; a
/// list keeps its room when its request id is reused.
#[derive(Debug, Clone, Default)]
pub(super) struct Held(Vec<Vec<Admitted>>);

impl Held {
    /// `req` now holds `a` too.
    pub(super) fn push(&mut self, req: ReqId, a: Admitted) {
        slot_of(&mut self.0, req, Vec::new).push(a);
    }

    /// The admissions `req` holds, to be emptied by the caller.
    pub(super) fn of(&mut self, req: ReqId) -> Option<&mut Vec<Admitted>> {
        self.0.get_mut(req as usize).filter(|h| !h.is_empty())
    }
}

/// Under test: every admission made and every done heard, so a test can check
/// that each admission hears exactly once.
#[cfg(test)]
#[derive(Debug, Clone, Default)]
pub(crate) struct Ledger {
    /// Admissions made.
    pub admits: u64,
    /// Done notices heard.
    pub dones: u64,
    /// Done notices per outcome kind (the outcome's debug name, limiter ids
    /// left out), for coverage.
    pub by_outcome: std::collections::BTreeMap<String, u64>,
    /// Done notices for requests that are calls (from another service, or a
    /// client policy's attempts).
    pub call_dones: u64,
    /// Every done notice in order: (limiter, latency).
    pub latencies: Vec<(LimiterId, Ticks)>,
    /// Every done notice in order: the in-flight count it carries.
    pub in_flight: Vec<u32>,
    /// Admissions not yet done: serial -> request.
    pub open: std::collections::BTreeMap<u64, ReqId>,
    /// What went wrong: a done for no open admission (doubled or never
    /// admitted), a request released while it still held admissions.
    pub faults: Vec<String>,
    next: u64,
}

#[cfg(test)]
impl Ledger {
    /// A new admission of `req`: its serial.
    pub(super) fn admit(&mut self, req: ReqId) -> u64 {
        self.admits += 1;
        self.next += 1;
        self.open.insert(self.next, req);
        self.next
    }

    /// Admission `serial` of `req` (a call or not) is done with `outcome`,
    /// `latency` after `a.limiter` let it through.
    pub(super) fn done(
        &mut self,
        a: &Admitted,
        req: ReqId,
        call: bool,
        latency: Ticks,
        outcome: Outcome,
    ) {
        let serial = a.serial;
        self.dones += 1;
        self.latencies.push((a.limiter, latency));
        self.in_flight.push(a.in_flight);
        if call {
            self.call_dones += 1;
        }
        let kind = format!("{outcome:?}");
        let kind = kind.split('(').next().unwrap_or_default().to_string();
        *self.by_outcome.entry(kind).or_default() += 1;
        match self.open.remove(&serial) {
            Some(r) if r == req => {}
            Some(r) => self.faults.push(format!(
                "admission {serial} of request {r} done for request {req}"
            )),
            None => self.faults.push(format!(
                "admission {serial} done again, or never made (request {req})"
            )),
        }
    }
}
