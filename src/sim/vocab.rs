//! The words every actor of the simulation shares: request and call ids, who
//! waits for a call, the events on the clock, how a request ended, and
//! interned names.
//!
//! Actors import these from here, never from the simulation's face
//! (`sim/mod.rs`), which sits above every actor, nor from the world
//! (`world/`), which sits above them too and carries out what they say.

use crate::engine::Ticks;
use crate::model::LimiterId;

/// A hash map for the engine's per-request lookups (policy states, limiter
/// buckets and members): foldhash's fixed-seed hasher, several times cheaper per
/// lookup than the standard SipHash and the same in every run (every table built
/// from these maps is sorted before it is written).
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// The entry of `v` for the request or call in slot `slot`, the vector
/// grown with `fill` to reach it (the per-slot tables actors keep beside the
/// slabs grow as the slabs do).
#[inline(always)]
pub(crate) fn slot_of<T>(v: &mut Vec<T>, slot: u32, fill: impl FnMut() -> T) -> &mut T {
    let i = slot as usize;
    if v.len() <= i {
        v.resize_with(i + 1, fill);
    }
    &mut v[i]
}

/// Requests and calls are addressed by slot in their slabs.
pub(crate) type ReqId = u32;
pub(crate) type CallId = u32;

/// Set in the id a caller holds for a policy call (attempt ids never have it):
/// the call ids of [`call`] and the policy calls of [`policy`] share one
/// number space.
pub(crate) const POLICY_CALL: CallId = 1 << 31;

/// Who waits for a call's answer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Caller {
    /// Branch `branch` of request `req`'s plan.
    Branch { req: ReqId, branch: u32 },
    /// A policy call: this call is one of its attempts.
    Policy { call: u32 },
    /// A workload's client, for its request `req` (the caller of a policy call).
    Client { req: ReqId },
}

/// Labels a workload puts on a request before it leaves.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tag {
    /// The workload step (ladder step index) the request belongs to.
    pub step: Option<u32>,
    /// How long the client's answer is of use when the client does not give up at
    /// a timeout (a ladder's success criterion).
    pub patience: Option<Ticks>,
}

/// Everything that can happen at a point in virtual time. Each variant has one
/// receiving actor (see [`world::World::dispatch`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// Workload sender `i` (a workload, or one client of it) sends its next
    /// request(s).
    WorkloadNext(u32),
    /// A request reaches its service (after the gateway's share).
    AtService(ReqId),
    /// A dependency finishes the work of a call.
    DependencyDone(CallId),
    /// A closed ladder's jittered request of step `step` leaves now.
    LadderSend(u32),
    /// A call's timeout: the caller gives up.
    CallTimeout(CallId),
    /// The client's own timeout.
    ClientTimeout(ReqId),
    /// A server slot finishes a request (its arrival and start times wait in the
    /// server, so that every event is 8 bytes).
    ServerDone(ReqId),
    /// A throttled request's hold at a limiter is over.
    LimiterResume(ReqId),
    /// A call reaches the service it targets (at the instant it is made).
    CallArrive(CallId),
    /// A policy call's backoff or hedge delay is over.
    PolicyTimer(u32),
    /// An attempt of a policy call failed at once (its dependency is down): the
    /// policy hears of it one event later at the same instant.
    PolicyAttemptFailed(u32),
    /// A fault starts or ends (see `faults::edge_code`).
    FaultEdge(u32),
    /// A queued request's CoDel queue timeout.
    QueueTimeout(ReqId),
}

/// An event as a word: its variant's kind above bit 32, its number below, so
/// that an event posted for good (`World::post`) needs no payload slot in the
/// queue. Each variant is listed once, for both directions.
macro_rules! event_words {
    ($($kind:literal => $variant:ident),* $(,)?) => {
        impl crate::engine::Payload for Event {
            #[inline(always)]
            fn to_word(&self) -> Option<u64> {
                let (kind, n): (u64, u32) = match *self {
                    $(Event::$variant(n) => ($kind, n),)*
                };
                Some((kind << 32) | u64::from(n))
            }

            #[inline(always)]
            fn from_word(word: u64) -> Event {
                let n = word as u32;
                match word >> 32 {
                    $($kind => Event::$variant(n),)*
                    _ => unreachable!("{word:#x} is no event's word"),
                }
            }
        }
    };
}

event_words! {
    0 => WorkloadNext,
    1 => AtService,
    2 => DependencyDone,
    3 => LadderSend,
    4 => CallTimeout,
    5 => ClientTimeout,
    6 => ServerDone,
    7 => LimiterResume,
    8 => CallArrive,
    9 => PolicyTimer,
    10 => PolicyAttemptFailed,
    11 => FaultEdge,
    12 => QueueTimeout,
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Handled and (for plans) every call succeeded in time.
    Answered,
    /// A plan call failed, or the response came after the threshold (the AY10
    /// seed's meaning of a drop).
    Dropped,
    /// An error answer: an `error_rate` or `down` fault at the server or
    /// dependency that answered, or a failed dependency call answered to a
    /// client's policy.
    Error,
    /// A client policy refused to send the call (an open breaker, a throttle).
    Refused,
    /// The client stopped waiting first.
    TimedOut,
    /// A server's slots and queue were full: refused at once (503, load shedding).
    Shed,
    /// 429: this limiter was the first to reject it.
    Rejected(LimiterId),
    /// 404: no service owns the route.
    NotFound,
}

impl Outcome {
    /// Whether a replica that ended a request so failed it, for outlier
    /// detection: an error answer (Envoy's 5xx), shed (503), or dropped.
    pub(crate) fn is_failure(self) -> bool {
        matches!(
            self,
            Outcome::Error | Outcome::Shed | Outcome::Dropped | Outcome::TimedOut
        )
    }
}

/// Interned client and member names: looked up by hash (10^5 distinct members
/// made a linear search quadratic), read back by index as a slice.
#[derive(Default)]
pub(crate) struct Symbols {
    names: Vec<String>,
    index: std::collections::HashMap<String, u32>,
}

impl Symbols {
    /// The index of `name`, added when new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }
}

impl std::ops::Deref for Symbols {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.names
    }
}

#[cfg(test)]
mod tests {
    use super::Event;
    use crate::engine::Payload;

    /// Every kind of event comes back from its word as it went in (a kind
    /// mapped to the wrong variant, or two kinds to one, fails the round trip).
    #[test]
    fn every_event_survives_its_word() {
        let mut names = std::collections::BTreeSet::new();
        for kind in 0..13u64 {
            for n in [0, 1, 7, u32::MAX] {
                let word = (kind << 32) | u64::from(n);
                let e = Event::from_word(word);
                assert_eq!(e.to_word(), Some(word), "{e:?}");
                names.insert(format!("{e:?}").split('(').next().map(String::from));
            }
        }
        assert_eq!(names.len(), 13, "thirteen kinds, thirteen variants");
    }
}
