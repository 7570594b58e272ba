//! The event queue: events ordered by (time, lane, sequence number).
//!
//! * Ties at the same time run in the order they were scheduled (FIFO), because the
//!   sequence number only grows.
//! * [`Lane::Deadline`] events run after every [`Lane::Normal`] event of their tick:
//!   a reply that arrives exactly at its caller's deadline is in time.
//! * [`EventQueue::cancel`] removes a pending event, so a cancelled completion or a
//!   timeout that lost its race never runs and never costs a pop.
//!
//! Payloads live in a slab of reusable slots; the heap (the `priority-queue` crate)
//! holds only the slot number and its priority, so scheduling allocates nothing once
//! the slab has grown to the largest number of pending events.

use super::Ticks;
use priority_queue::PriorityQueue;
use std::cmp::Reverse;
use std::hash::{BuildHasherDefault, Hasher};

/// Which part of a tick an event runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    /// Completions, arrivals and everything else: FIFO within the tick.
    Normal = 0,
    /// Timeouts and deadlines: after all normal events of the same tick.
    Deadline = 1,
}

/// Identifies one scheduled event, for cancellation. Stale keys (the event already
/// ran or was cancelled, and its slot was reused) are recognised and ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "keep the key if the event may need cancelling"]
pub struct EventKey {
    slot: u32,
    seq: u64,
}

/// Slot numbers are already well spread: hash them as themselves.
#[derive(Default)]
struct SlotHasher(u64);

impl Hasher for SlotHasher {
    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n);
    }
}

type Priority = Reverse<(Ticks, Lane, u64)>;

/// A priority queue of events of type `E`.
pub struct EventQueue<E> {
    heap: PriorityQueue<u32, Priority, BuildHasherDefault<SlotHasher>>,
    slab: Vec<Option<(u64, E)>>,
    free: Vec<u32>,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: PriorityQueue::with_default_hasher(),
            slab: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            popped: 0,
        }
    }

    /// Schedules `event` at absolute time `at` in `lane`.
    pub fn schedule(&mut self, at: Ticks, lane: Lane, event: E) -> EventKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = Some((seq, event));
                s
            }
            None => {
                self.slab.push(Some((seq, event)));
                (self.slab.len() - 1) as u32
            }
        };
        self.heap.push(slot, Reverse((at, lane, seq)));
        EventKey { slot, seq }
    }

    /// Removes a pending event. Returns false if it already ran or was cancelled.
    pub fn cancel(&mut self, key: EventKey) -> bool {
        match self.slab.get(key.slot as usize) {
            Some(Some((seq, _))) if *seq == key.seq => {
                self.heap.remove(&key.slot);
                self.slab[key.slot as usize] = None;
                self.free.push(key.slot);
                true
            }
            _ => false,
        }
    }

    /// Takes the earliest event with its time.
    pub fn pop(&mut self) -> Option<(Ticks, E)> {
        let (slot, Reverse((at, _, _))) = self.heap.pop()?;
        let (_, event) = self.slab[slot as usize].take()?;
        self.free.push(slot);
        self.popped += 1;
        Some((at, event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Ticks> {
        self.heap.peek().map(|(_, Reverse((at, _, _)))| *at)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// How many events have been delivered so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain<E>(q: &mut EventQueue<E>) -> Vec<(u64, E)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect()
    }

    #[test]
    fn ties_run_in_scheduling_order() {
        let mut q = EventQueue::new();
        for i in 0..10 {
            let _ = q.schedule(Ticks(7), Lane::Normal, i);
        }
        let _ = q.schedule(Ticks(3), Lane::Normal, 99);
        let order: Vec<i32> = drain(&mut q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(order, vec![99, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn deadline_lane_runs_after_normal_events_of_the_same_tick() {
        let mut q = EventQueue::new();
        let _ = q.schedule(Ticks(10), Lane::Deadline, "timeout");
        let _ = q.schedule(Ticks(10), Lane::Normal, "reply");
        let _ = q.schedule(Ticks(9), Lane::Deadline, "earlier timeout");
        let got: Vec<&str> = drain(&mut q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(got, vec!["earlier timeout", "reply", "timeout"]);
    }

    #[test]
    fn cancel_removes_a_pending_event_and_ignores_stale_keys() {
        let mut q = EventQueue::new();
        let a = q.schedule(Ticks(5), Lane::Normal, 'a');
        let b = q.schedule(Ticks(6), Lane::Normal, 'b');
        assert!(q.cancel(a));
        assert!(!q.cancel(a), "second cancel is a no-op");
        assert_eq!(q.len(), 1);
        // the freed slot is reused; the old key must not cancel the new event
        let c = q.schedule(Ticks(4), Lane::Normal, 'c');
        assert!(!q.cancel(a));
        assert_eq!(drain(&mut q), vec![(4, 'c'), (6, 'b')]);
        assert!(!q.cancel(b));
        assert!(!q.cancel(c));
        assert_eq!(q.popped(), 2);
    }
}
