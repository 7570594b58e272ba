//! The event queue: events ordered by (time, lane, sequence number).
//!
//! * Ties at the same time run in the order they were scheduled (FIFO), because the
//!   sequence number only grows.
//! * [`Lane::Deadline`] events run after every [`Lane::Normal`] event of their tick:
//!   a reply that arrives exactly at its caller's deadline is in time.
//! * `cancel` takes a pending event back: it never runs and never reaches the model.
//!
//! Two implementations share that contract ([`Scheduler`]):
//! * [`EventQueue`] (the one the simulator uses): a binary heap of small entries with
//!   lazy cancellation. A cancelled event's payload is dropped at once and its heap
//!   entry is skipped when it comes up. Measured faster (see BENCHMARKS.md).
//!   Events scheduled a fixed delay after "now" (a constant service time, a
//!   timeout, the gateway's share) arrive in time order on their own, so a delay
//!   registered with [`EventQueue::add_fifo`] gets a FIFO lane that bypasses the
//!   heap: O(1) to schedule and to pop. The order of delivery is the same as with the
//!   heap alone.
//! * [`RemovalQueue`]: the `priority-queue` crate, which removes a cancelled entry
//!   from the heap at once, at the cost of a hash index on every operation.
//!
//! Payloads live in a slab of reusable slots, so scheduling allocates nothing once
//! the slab and heap have grown to the largest number of pending events. An event
//! that is never cancelled ([`EventQueue::post`]) and fits in a word ([`Payload`])
//! skips the slab: its heap or lane entry holds it.

use super::Ticks;
use priority_queue::PriorityQueue;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
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

/// What every event queue offers the simulator.
pub trait Scheduler<E> {
    /// Schedules `event` at absolute time `at` in `lane`.
    fn schedule(&mut self, at: Ticks, lane: Lane, event: E) -> EventKey;
    /// Takes a pending event back. Returns false if it already ran or was cancelled.
    fn cancel(&mut self, key: EventKey) -> bool;
    /// Takes the earliest event with its time.
    fn pop(&mut self) -> Option<(Ticks, E)>;
    /// Pending (not cancelled) events.
    fn len(&self) -> usize;
    /// True when no event is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// How many events have been delivered so far.
    fn popped(&self) -> u64;
}

/// How an event type is stored. An event that fits in a word ([`Self::to_word`]
/// is `Some`) and is never cancelled ([`EventQueue::post`]) travels in its heap
/// or lane entry, with no payload slot to fill, take back and free. The default
/// (the impls below for plain types) keeps every event in a slot.
pub trait Payload: Sized {
    /// The event as a word below 2^63, if it has one.
    fn to_word(&self) -> Option<u64> {
        None
    }
    /// The event `to_word` made `word` from.
    fn from_word(word: u64) -> Self {
        unreachable!("no event of this type was stored as the word {word}")
    }
}

impl Payload for i32 {}
impl Payload for u32 {}
impl Payload for u64 {}
impl Payload for usize {}
impl Payload for char {}
impl Payload for &'static str {}

/// Set in an entry's `slot` when the entry holds its event as a word.
const INLINE: u64 = 1 << 63;

/// Sequence numbers carry the lane in their top bit, so one integer orders both.
fn order(lane: Lane, seq: u64) -> u64 {
    ((lane as u64) << 63) | seq
}

/// A slab of event payloads with a free list threaded through the free slots:
/// a free slot holds no payload and, in place of its sequence number, the next
/// free slot (no Vec of free slots to push and pop per event). A stale key
/// that meets a free slot finds no payload, whatever the number there.
struct Slab<E> {
    slots: Vec<(u64, Option<E>)>,
    /// The first free slot ([`NO_SLOT`]: none).
    free: u32,
}

/// The end of the free list.
const NO_SLOT: u32 = u32::MAX;

impl<E> Slab<E> {
    fn new() -> Self {
        Slab {
            slots: Vec::new(),
            free: NO_SLOT,
        }
    }

    #[inline]
    fn insert(&mut self, seq: u64, event: E) -> u32 {
        let s = self.free;
        match self.slots.get_mut(s as usize) {
            Some(slot) => {
                self.free = slot.0 as u32;
                *slot = (seq, Some(event));
                s
            }
            None => {
                self.slots.push((seq, Some(event)));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The payload of `key` if it is still pending.
    fn take(&mut self, key: EventKey) -> Option<E> {
        match self.slots.get_mut(key.slot as usize) {
            Some((seq, ev)) if *seq == key.seq => ev.take(),
            _ => None,
        }
    }

    /// Frees `slot`, whose payload was taken.
    #[inline]
    fn release(&mut self, slot: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            debug_assert!(s.1.is_none(), "a slot is freed once its payload is taken");
            s.0 = u64::from(self.free);
            self.free = slot;
        }
    }
}

/// One heap entry: 24 bytes, ordered earliest first.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Entry {
    at: u64,
    order: u64,
    /// A u32 slot number, stored as u64: with a u32 and 4 bytes of padding, the
    /// heap writes 4 bytes and reads the word back as 8, which stalls store
    /// forwarding on every sift (measured: a quarter of M1's scheduling time).
    /// With [`INLINE`] set: the event itself, as its word.
    slot: u64,
}

impl Entry {
    /// The delivery order as one integer: time, then lane and sequence.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.at) << 64) | u128::from(self.order)
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: the earliest (time, order) must compare greatest.
        // One 128-bit comparison (the same order as the pair's): a compare and a
        // subtract with borrow, no branch between the two halves for the sift's
        // child choice to wait on
        other.key().cmp(&self.key())
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A FIFO lane: a ring buffer whose capacity is a power of two (or 0), so an
/// index wraps with a mask. (It replaced a `VecDeque`, whose `push_back` was
/// not inlined: measured on M3, where two of every three events pass a lane.)
#[derive(Default)]
struct Ring {
    /// Every slot, used or not: `buf.len()` is the capacity.
    buf: Vec<Entry>,
    head: usize,
    len: usize,
}

impl Ring {
    #[inline(always)]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    /// The front entry's key, u128::MAX when the lane is empty, with no branch
    /// on the emptiness: whether a lane just emptied is data no predictor
    /// knows (cachegrind's simulated one missed it six times in ten on M3).
    /// A lane with slots holds an entry in each, live or not.
    #[inline(always)]
    fn front_key(&self) -> u128 {
        let Some(e) = self.buf.get(self.head) else {
            return u128::MAX;
        };
        e.key() | u128::from(self.len == 0).wrapping_neg()
    }

    #[inline(always)]
    fn back(&self) -> Option<&Entry> {
        if self.len == 0 {
            None
        } else {
            self.buf.get((self.head + self.len - 1) & self.mask())
        }
    }

    #[inline(always)]
    fn push_back(&mut self, entry: Entry) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & self.mask();
        self.buf[i] = entry;
        self.len += 1;
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<Entry> {
        if self.len == 0 {
            return None;
        }
        let entry = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(entry)
    }

    /// Room for `more` entries beyond those held, made now: the capacity
    /// doubles (at least) as `grow` would, but a failed allocation is returned.
    fn try_reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        let need = self.len.saturating_add(more);
        if need <= self.buf.len() {
            return Ok(());
        }
        let cap = need.next_power_of_two().max(self.buf.len() * 2).max(16);
        let mut buf = Vec::new();
        buf.try_reserve_exact(cap)?;
        self.grow_into(buf, cap);
        Ok(())
    }

    /// Doubles the capacity (16 at first), the entries in order from slot 0.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(16);
        self.grow_into(Vec::with_capacity(cap), cap);
    }

    /// Moves the entries in order into `buf` (allocated for `cap`), from slot 0.
    fn grow_into(&mut self, mut buf: Vec<Entry>, cap: usize) {
        let mask = self.mask();
        buf.extend((0..self.len).map(|k| self.buf[(self.head + k) & mask]));
        let empty = Entry {
            at: 0,
            order: 0,
            slot: 0,
        };
        buf.resize(cap, empty);
        self.buf = buf;
        self.head = 0;
    }
}

/// At most this many FIFO lanes: each one adds a comparison to every pop.
pub const MAX_FIFOS: usize = 8;

/// The simulator's event queue: a binary heap with lazy cancellation, plus FIFO
/// lanes for registered delays.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry>,
    /// `fifo_delays[i]` is the delay (ticks after `now`) of the events in `fifos[i]`.
    fifo_delays: Vec<u64>,
    fifos: Vec<Ring>,
    /// The key of each lane's front entry (u128::MAX: empty), side by side so
    /// that the pop compares them without visiting the lanes.
    fronts: [u128; MAX_FIFOS],
    /// The smallest of `fronts` and its lane (u128::MAX: every lane is empty):
    /// a pop from the heap then compares one key, not every lane's.
    min_front: u128,
    min_lane: usize,
    /// The time of the last event delivered.
    now: u64,
    slab: Slab<E>,
    next_seq: u64,
    live: usize,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            fifo_delays: Vec::new(),
            fifos: Vec::new(),
            fronts: [u128::MAX; MAX_FIFOS],
            min_front: u128::MAX,
            min_lane: 0,
            now: 0,
            slab: Slab::new(),
            next_seq: 0,
            live: 0,
            popped: 0,
        }
    }

    /// Room for about `more` further pending events, made now (the heap and the
    /// payload slab for `more`, each FIFO lane for as many as it holds, at most
    /// `more`): the memory a run needs next is asked for here, where a refusal
    /// is an error to report, not in the middle of scheduling, where it aborts.
    pub fn try_reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.heap.try_reserve(more)?;
        self.slab.slots.try_reserve(more)?;
        for ring in &mut self.fifos {
            ring.try_reserve(more.min(ring.len + 1))?;
        }
        Ok(())
    }

    /// Gives events scheduled `delay` after the current time a FIFO lane of their
    /// own instead of the heap. Returns false (and changes nothing) when
    /// [`MAX_FIFOS`] lanes exist already; registering a delay twice is harmless.
    ///
    /// Any delay is correct: an event that would break its lane's time order (a
    /// different lane bit at the same tick, or a clock that did not advance through
    /// this queue) goes to the heap instead. Only the speed depends on the choice.
    pub fn add_fifo(&mut self, delay: Ticks) -> bool {
        if self.fifo_delays.contains(&delay.0) {
            return true;
        }
        if self.fifo_delays.len() >= MAX_FIFOS {
            return false;
        }
        self.fifo_delays.push(delay.0);
        self.fifos.push(Ring::default());
        true
    }

    /// Pending (not cancelled) events.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// How many events have been delivered so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

impl<E: Payload> EventQueue<E> {
    /// Schedules `event` at absolute time `at` in `lane`, never to be
    /// cancelled: an event with a word form needs no payload slot. It runs
    /// exactly where [`Self::schedule`] would have run it.
    #[inline]
    pub fn post(&mut self, at: Ticks, lane: Lane, event: E) {
        let seq = self.take_seq();
        self.post_taken(at, lane, seq, event);
    }

    /// Takes the sequence number a post now would take, for an event of the
    /// current instant that its owner keeps and runs itself when nothing in
    /// the queue comes before it ([`Self::has_before`]), or else hands back
    /// with [`Self::post_taken`]: every other event keeps its place.
    #[inline]
    pub fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Whether an entry in the queue (pending or cancelled) comes before an
    /// event at `at` in `lane` with sequence number `seq`.
    #[inline]
    pub fn has_before(&self, at: Ticks, lane: Lane, seq: u64) -> bool {
        let key = (u128::from(at.0) << 64) | u128::from(order(lane, seq));
        self.min_front < key || self.heap.peek().is_some_and(|e| e.key() < key)
    }

    /// Posts an event with the sequence number [`Self::take_seq`] gave it: it
    /// runs where a post at that moment would have run it.
    #[inline]
    pub fn post_taken(&mut self, at: Ticks, lane: Lane, seq: u64, event: E) {
        let slot = match event.to_word() {
            Some(word) => {
                debug_assert!(word & INLINE == 0, "an event's word is below 2^63");
                word | INLINE
            }
            None => u64::from(self.slab.insert(seq, event)),
        };
        self.push(Entry {
            at: at.0,
            order: order(lane, seq),
            slot,
        });
        self.live += 1;
    }

    /// Counts an event its owner ran itself at the current instant (see
    /// [`Self::take_seq`]) as delivered.
    #[inline]
    pub fn delivered_by_owner(&mut self) {
        self.popped += 1;
    }

    /// Schedules `event` at absolute time `at` in `lane`. Always inlined: left
    /// to the optimiser, a change elsewhere in the program could make it a
    /// call from a policy's attempt (1.2 % more instructions on M3).
    #[inline(always)]
    pub fn schedule(&mut self, at: Ticks, lane: Lane, event: E) -> EventKey {
        let seq = self.take_seq();
        let slot = self.slab.insert(seq, event);
        self.push(Entry {
            at: at.0,
            order: order(lane, seq),
            slot: u64::from(slot),
        });
        self.live += 1;
        EventKey { slot, seq }
    }

    /// Into the FIFO lane of the entry's delay if it keeps that lane in order,
    /// else into the heap. Always inlined: an entry built in registers and passed
    /// through memory is read back across its piecewise stores (a store-forwarding
    /// stall measured at a quarter of the push).
    #[inline(always)]
    fn push(&mut self, entry: Entry) {
        if entry.at >= self.now {
            let delay = entry.at - self.now;
            if let Some(i) = self.fifo_delays.iter().position(|&d| d == delay) {
                let fifo = &mut self.fifos[i];
                if fifo.back().is_none_or(|b| b.key() <= entry.key()) {
                    if fifo.len == 0 {
                        let k = entry.key();
                        self.fronts[i] = k;
                        if k < self.min_front {
                            self.min_front = k;
                            self.min_lane = i;
                        }
                    }
                    fifo.push_back(entry);
                    return;
                }
            }
        }
        self.heap.push(entry);
    }

    /// Takes a pending event back. Returns false if it already ran or was cancelled.
    #[inline]
    pub fn cancel(&mut self, key: EventKey) -> bool {
        // The entry stays until it comes up; its slot is released then.
        let cancelled = self.slab.take(key).is_some();
        if cancelled {
            self.live -= 1;
        }
        cancelled
    }

    /// Removes the earliest entry, live or cancelled: the smallest of the heap's
    /// top and the FIFO fronts.
    #[inline]
    fn pop_entry(&mut self) -> Option<Entry> {
        // No entry has the key u128::MAX (its sequence number would need the
        // top bit and every other): an empty heap reads as that.
        let heap = self.heap.peek().map_or(u128::MAX, Entry::key);
        if self.min_front >= heap {
            // the heap's top, or nothing (both u128::MAX)
            return self.heap.pop();
        }
        let lane = self.min_lane;
        let fifo = &mut self.fifos[lane];
        let entry = fifo.pop_front();
        self.fronts[lane] = fifo.front_key();
        // the lanes' new smallest front
        let n = self.fifos.len().min(MAX_FIFOS);
        let (mut best, mut at) = (u128::MAX, 0);
        for (i, &k) in self.fronts[..n].iter().enumerate() {
            if k < best {
                best = k;
                at = i;
            }
        }
        (self.min_front, self.min_lane) = (best, at);
        entry
    }

    /// Takes the earliest event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ticks, E)> {
        while let Some(entry) = self.pop_entry() {
            let event = if entry.slot & INLINE != 0 {
                Some(E::from_word(entry.slot & !INLINE))
            } else {
                let event = self.slab.slots[entry.slot as usize].1.take();
                self.slab.release(entry.slot as u32);
                event
            };
            if let Some(event) = event {
                self.live -= 1;
                self.popped += 1;
                self.now = entry.at;
                return Some((Ticks(entry.at), event));
            }
        }
        None
    }
}

impl<E: Payload> Scheduler<E> for EventQueue<E> {
    fn schedule(&mut self, at: Ticks, lane: Lane, event: E) -> EventKey {
        EventQueue::schedule(self, at, lane, event)
    }
    fn cancel(&mut self, key: EventKey) -> bool {
        EventQueue::cancel(self, key)
    }
    fn pop(&mut self) -> Option<(Ticks, E)> {
        EventQueue::pop(self)
    }
    fn len(&self) -> usize {
        self.live
    }
    fn popped(&self) -> u64 {
        self.popped
    }
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

/// An event queue that removes cancelled events from its heap at once
/// (`priority-queue` crate). Kept for comparison in the benchmarks and tests.
pub struct RemovalQueue<E> {
    heap: PriorityQueue<u32, Reverse<(u64, u64)>, BuildHasherDefault<SlotHasher>>,
    slab: Slab<E>,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for RemovalQueue<E> {
    fn default() -> Self {
        RemovalQueue {
            heap: PriorityQueue::with_default_hasher(),
            slab: Slab::new(),
            next_seq: 0,
            popped: 0,
        }
    }
}

impl<E> Scheduler<E> for RemovalQueue<E> {
    fn schedule(&mut self, at: Ticks, lane: Lane, event: E) -> EventKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = self.slab.insert(seq, event);
        self.heap.push(slot, Reverse((at.0, order(lane, seq))));
        EventKey { slot, seq }
    }

    fn cancel(&mut self, key: EventKey) -> bool {
        if self.slab.take(key).is_none() {
            return false;
        }
        self.heap.remove(&key.slot);
        self.slab.release(key.slot);
        true
    }

    fn pop(&mut self) -> Option<(Ticks, E)> {
        let (slot, Reverse((at, _))) = self.heap.pop()?;
        let event = self.slab.slots[slot as usize].1.take()?;
        self.slab.release(slot);
        self.popped += 1;
        Some((Ticks(at), event))
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain<E>(q: &mut impl Scheduler<E>) -> Vec<(u64, E)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect()
    }

    /// Runs a contract test against both queue implementations.
    macro_rules! both {
        ($name:ident, $body:expr) => {
            mod $name {
                use super::*;
                #[test]
                fn lazy_heap() {
                    $body(&mut EventQueue::new());
                }
                #[test]
                fn removal_heap() {
                    $body(&mut RemovalQueue::default());
                }
            }
        };
    }

    fn ties_run_in_scheduling_order(q: &mut impl Scheduler<i32>) {
        for i in 0..10 {
            let _ = q.schedule(Ticks(7), Lane::Normal, i);
        }
        let _ = q.schedule(Ticks(3), Lane::Normal, 99);
        let order: Vec<i32> = drain(q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(order, vec![99, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
    both!(fifo_ties, ties_run_in_scheduling_order);

    fn deadline_lane_runs_last_in_its_tick(q: &mut impl Scheduler<&'static str>) {
        let _ = q.schedule(Ticks(10), Lane::Deadline, "timeout");
        let _ = q.schedule(Ticks(10), Lane::Normal, "reply");
        let _ = q.schedule(Ticks(9), Lane::Deadline, "earlier timeout");
        let got: Vec<&str> = drain(q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(got, vec!["earlier timeout", "reply", "timeout"]);
    }
    both!(deadline_lane, deadline_lane_runs_last_in_its_tick);

    fn cancel_removes_a_pending_event_and_ignores_stale_keys(q: &mut impl Scheduler<char>) {
        let a = q.schedule(Ticks(5), Lane::Normal, 'a');
        let b = q.schedule(Ticks(6), Lane::Normal, 'b');
        assert!(q.cancel(a));
        assert!(!q.cancel(a), "second cancel is a no-op");
        assert_eq!(q.len(), 1);
        // a new event (maybe in a reused slot) is not cancelled by the old key
        let c = q.schedule(Ticks(4), Lane::Normal, 'c');
        assert!(!q.cancel(a));
        assert_eq!(drain(q), vec![(4, 'c'), (6, 'b')]);
        assert!(!q.cancel(b));
        assert!(!q.cancel(c));
        assert_eq!(q.popped(), 2);
        assert!(q.is_empty());
    }
    both!(
        cancellation,
        cancel_removes_a_pending_event_and_ignores_stale_keys
    );

    /// An event whose sequence number was taken and that was posted later runs
    /// where a post at the taking would have run it; `has_before` tells whether
    /// anything queued comes first.
    #[test]
    fn a_taken_sequence_number_keeps_the_events_place() {
        let mut q = EventQueue::new();
        assert!(q.add_fifo(Ticks::ZERO));
        let _ = q.schedule(Ticks(5), Lane::Normal, "first");
        assert_eq!(q.pop(), Some((Ticks(5), "first")));
        let _ = q.schedule(Ticks(5), Lane::Deadline, "deadline");
        assert!(!q.has_before(Ticks(5), Lane::Normal, q.next_seq));
        q.post(Ticks(5), Lane::Normal, "before");
        let taken = q.take_seq();
        assert!(
            q.has_before(Ticks(5), Lane::Normal, taken),
            "`before` comes first"
        );
        q.post(Ticks(5), Lane::Normal, "after");
        q.post_taken(Ticks(5), Lane::Normal, taken, "taken");
        assert_eq!(q.len(), 4);
        let got: Vec<&str> = drain(&mut q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(got, ["before", "taken", "after", "deadline"]);
        // one the owner ran itself counts as delivered
        q.delivered_by_owner();
        assert_eq!(q.popped(), 6);
    }

    /// FIFO lanes deliver in the heap's order: time, then lane, then FIFO, also
    /// when a lane's delay would put a deadline before a normal event of its tick.
    #[test]
    fn fifo_lanes_keep_the_heap_order() {
        let mut q = EventQueue::new();
        assert!(q.add_fifo(Ticks(10)));
        assert!(q.add_fifo(Ticks(10)), "registering twice is harmless");
        let _ = q.schedule(Ticks(10), Lane::Deadline, "deadline at 10");
        let _ = q.schedule(Ticks(10), Lane::Normal, "normal at 10"); // not after the deadline: heap
        let _ = q.schedule(Ticks(4), Lane::Normal, "heap at 4");
        let _ = q.schedule(Ticks(10), Lane::Normal, "second normal at 10");
        let got: Vec<&str> = drain(&mut q).into_iter().map(|(_, e)| e).collect();
        assert_eq!(
            got,
            [
                "heap at 4",
                "normal at 10",
                "second normal at 10",
                "deadline at 10"
            ]
        );
        for d in 1..MAX_FIFOS as u64 {
            assert!(q.add_fifo(Ticks(d)));
        }
        assert!(!q.add_fifo(Ticks(99)), "no more than MAX_FIFOS lanes");
    }

    /// Freed slots are reused (the slab stays as large as the most events
    /// pending at once), and a stale key never takes a reused or free slot.
    #[test]
    fn slots_are_reused_and_stale_keys_stay_stale() {
        let mut q = EventQueue::new();
        let mut stale = Vec::new();
        for i in 0..1000u64 {
            let a = q.schedule(Ticks(i), Lane::Normal, i);
            let b = q.schedule(Ticks(i), Lane::Deadline, i + 1);
            assert_eq!(q.pop(), Some((Ticks(i), i)));
            assert!(q.cancel(b));
            stale.extend([a, b]);
            assert!(q.pop().is_none(), "the cancelled entry is skipped");
        }
        assert_eq!(q.slab.slots.len(), 2, "two pending at most: two slots");
        let live = q.schedule(Ticks(5000), Lane::Normal, 7);
        for k in stale {
            assert!(!q.cancel(k));
        }
        assert_eq!(q.len(), 1);
        assert!(q.cancel(live));
    }

    /// A lane keeps its order across wrap-around and growth.
    #[test]
    fn a_ring_is_first_in_first_out_across_wraps_and_growth() {
        let mut r = Ring::default();
        assert_eq!(r.front_key(), u128::MAX, "no slots yet");
        let e = |i: u64| Entry {
            at: i,
            order: i,
            slot: i,
        };
        let (mut next_in, mut next_out) = (0, 0);
        for (push, pop) in [(10, 7), (12, 12), (40, 20), (5, 28)] {
            for _ in 0..push {
                r.push_back(e(next_in));
                next_in += 1;
                assert_eq!(r.back().map(|b| b.at), Some(next_in - 1));
            }
            for _ in 0..pop {
                assert_eq!(r.front_key(), e(next_out).key());
                assert_eq!(r.pop_front().map(|f| f.slot), Some(next_out));
                next_out += 1;
            }
        }
        assert_eq!(r.len, 0);
        assert!(r.pop_front().is_none() && r.back().is_none());
        assert_eq!(r.front_key(), u128::MAX, "empty, its slots still filled");
        assert_eq!(r.buf.len(), 64, "grown by doubling from 16");
    }

    /// A payload with a word form: posted ones travel in their entries.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Word(u32);

    impl Payload for Word {
        fn to_word(&self) -> Option<u64> {
            Some(u64::from(self.0))
        }
        fn from_word(word: u64) -> Self {
            Word(word as u32)
        }
    }

    /// Both queues deliver the same sequence under a random mix of operations; the
    /// lazy queue has FIFO lanes for some of the delays drawn, and holds some of
    /// the never-cancelled events as words (`post`), the removal queue all in slots.
    #[test]
    fn lazy_and_removal_queues_agree() {
        use rand::RngExt;
        let mut rng = crate::engine::stream(9, 0, "queue-test");
        let mut lazy = EventQueue::new();
        for d in [0, 7, 25, 49] {
            assert!(lazy.add_fifo(Ticks(d)));
        }
        let mut removal = RemovalQueue::default();
        let mut keys = Vec::new();
        let mut now = 0u64;
        let mut in_fifos = 0;
        let mut posted = 0;
        for i in 0..20_000u32 {
            match rng.random_range(0..10) {
                0..=4 => {
                    let delay = if rng.random_bool(0.5) {
                        [0, 7, 25, 49][rng.random_range(0..4)]
                    } else {
                        rng.random_range(0..50)
                    };
                    let at = Ticks(now + delay);
                    let lane = if rng.random_bool(0.3) {
                        Lane::Deadline
                    } else {
                        Lane::Normal
                    };
                    if rng.random_bool(0.4) {
                        lazy.post(at, lane, Word(i));
                        let _ = removal.schedule(at, lane, Word(i));
                        posted += 1;
                    } else {
                        let k1 = lazy.schedule(at, lane, Word(i));
                        let k2 = removal.schedule(at, lane, Word(i));
                        keys.push((k1, k2));
                    }
                }
                5..=6 if !keys.is_empty() => {
                    let (k1, k2) = keys.swap_remove(rng.random_range(0..keys.len()));
                    assert_eq!(lazy.cancel(k1), removal.cancel(k2));
                }
                _ => {
                    let (a, b) = (lazy.pop(), removal.pop());
                    assert_eq!(a, b);
                    if let Some((t, _)) = a {
                        now = t.0;
                    }
                }
            }
            assert_eq!(lazy.len(), removal.len());
            in_fifos = in_fifos.max(lazy.fifos.iter().map(|f| f.len).sum());
        }
        assert!(in_fifos > 10, "the FIFO lanes were used ({in_fifos})");
        assert!(posted > 1000, "events were posted as words ({posted})");
        assert!(
            lazy.slab.slots.len() < removal.slab.slots.len(),
            "posted events took no slots ({} against {})",
            lazy.slab.slots.len(),
            removal.slab.slots.len()
        );
        assert_eq!(drain(&mut lazy), drain(&mut removal));
    }
}
