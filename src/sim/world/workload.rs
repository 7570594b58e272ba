//! The workloads put to the run: the only way to [`Workloads`], whose state
//! the world keeps private. At a sender's turn the world asks it what to send
//! and sends it; when a request is over for its client, the sender says when
//! it goes next; the other actors ask which workload a request is from.

use super::super::context::Timers;
use super::super::notes::Note;
use super::super::vocab::{Event, ReqId, Tag};
use super::super::workload::{LadderSend, Send, Turn};
use super::World;
use crate::engine::{Lane, Ticks};
use crate::error::Error;

impl World<'_> {
    /// Posts each sender's first turn.
    pub(in crate::sim) fn start(&mut self) -> Result<(), Error> {
        let mut t = Timers::new(&mut self.queue, self.now);
        self.workload.first_turns(&mut t, self.model)
    }

    /// The sender whose request is leaving now: the `source` of the request
    /// being sent.
    #[inline]
    pub(in crate::sim) fn sending_source(&self) -> u32 {
        self.workload.sending()
    }

    /// The workload (its index) of sender `source`; None for a request no
    /// sender made.
    #[inline]
    pub(in crate::sim) fn source_workload(&self, source: u32) -> Option<u32> {
        self.workload.of(source)
    }

    /// The workload (its index) of request `req`'s sender; None for a request
    /// no sender made.
    #[inline]
    pub(in crate::sim) fn request_workload(&self, req: ReqId) -> Option<u32> {
        self.workload.of(self.requests[req].source)
    }

    /// The `call_policy` of sender `i`'s workload.
    pub(in crate::sim) fn workload_policy(&self, i: u32) -> Option<crate::model::PolicyId> {
        let w = self.workload.of(i)?;
        self.model().workloads.get(w as usize)?.call_policy
    }

    /// Sender `i`'s turn: its requests leave, then its next turn is posted.
    pub(super) fn workload_next(&mut self, i: usize) {
        let (now, plain) = (self.now(), self.plain());
        // an `arrival_factor` fault multiplies an open workload's rate for gaps
        // drawn now
        let factor = if plain {
            1.0
        } else {
            let w = self.workload.of(i as u32);
            w.map_or(1.0, |w| self.fault_arrival_factor(w as usize))
        };
        match self.workload.turn(i, now, plain, factor) {
            Turn::Nothing => {}
            Turn::One {
                send,
                timeout,
                then,
            } => {
                self.send_from(i as u32, send, timeout);
                if let Some(at) = then {
                    self.post(at, Lane::Normal, Event::WorkloadNext(i as u32));
                }
            }
            Turn::Ladder { send, count, then } => {
                for _ in 0..count {
                    self.ladder_send(send);
                }
                if let Some(at) = then {
                    self.post(at, Lane::Normal, Event::WorkloadNext(0));
                }
            }
            Turn::Jittered { step, at } => {
                for at in at {
                    self.post(at, Lane::Normal, Event::LadderSend(step));
                }
            }
        }
    }

    /// Sends one request of sender `i`.
    fn send_from(&mut self, i: u32, s: Send, timeout: Option<Ticks>) {
        self.workload.send_from(i);
        self.send(
            s.route,
            s.access,
            s.client,
            s.member,
            timeout,
            Tag::default(),
        );
    }

    /// Sends one ladder request tagged with its step (a ladder is the only
    /// workload: sender 0).
    fn ladder_send(&mut self, l: LadderSend) {
        self.note(Note::StepSent { step: l.step });
        self.workload.send_from(0);
        let s = l.send;
        self.send(
            s.route,
            s.access,
            s.client,
            s.member,
            l.client_timeout(),
            l.tag(),
        );
    }

    /// A jittered closed-ladder request leaves.
    pub(super) fn ladder_jittered_send(&mut self, step: usize) {
        if let Some(l) = self.workload.jittered(step) {
            self.ladder_send(l);
        }
    }

    /// A request of sender `source` is over for its client (its workload's
    /// books heard it from `Note::Done`): a closed workload posts its next
    /// turn.
    pub(in crate::sim) fn client_answered(&mut self, source: u32) {
        let mut t = Timers::new(&mut self.queue, self.now);
        self.workload.answered(&mut t, source);
    }
}
