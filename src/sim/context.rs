//! What an actor is handed to keep its own timers: the instant, and the
//! event queue to schedule and cancel its events on, nothing else of the
//! world. An actor that owns a timer keeps its key, sets it and cancels it
//! through this; the world only delivers the event back to it.

use super::vocab::Event;
use crate::engine::{EventKey, EventQueue, Lane, Ticks};

/// The clock and the queue, lent to an actor for one step.
pub(in crate::sim) struct Timers<'q> {
    queue: &'q mut EventQueue<Event>,
    now: Ticks,
}

impl<'q> Timers<'q> {
    /// The queue at instant `now`.
    #[inline(always)]
    pub(in crate::sim) fn new(queue: &'q mut EventQueue<Event>, now: Ticks) -> Timers<'q> {
        Timers { queue, now }
    }

    /// The instant of the event being handled.
    #[inline(always)]
    pub(in crate::sim) fn now(&self) -> Ticks {
        self.now
    }

    /// Schedules `event` at `at` in the normal lane.
    #[inline(always)]
    pub(in crate::sim) fn at(&mut self, at: Ticks, event: Event) -> EventKey {
        self.queue.schedule(at, Lane::Normal, event)
    }

    /// Schedules `event` at `at` in the normal lane, never to be cancelled
    /// (no key kept).
    #[inline(always)]
    pub(in crate::sim) fn post(&mut self, at: Ticks, event: Event) {
        self.queue.post(at, Lane::Normal, event);
    }

    /// Schedules `event` at `at` in the deadline lane (after every other
    /// event of its tick: a timeout).
    #[inline(always)]
    pub(in crate::sim) fn deadline(&mut self, at: Ticks, event: Event) -> EventKey {
        self.queue.schedule(at, Lane::Deadline, event)
    }

    /// Cancels the event of `key`, if any is given.
    #[inline(always)]
    pub(in crate::sim) fn cancel(&mut self, key: Option<EventKey>) {
        if let Some(key) = key {
            self.queue.cancel(key);
        }
    }
}
