//! The core dependencies and servers share: up to `slots` items worked on at once
//! and a FIFO of waiters. The two differ only in the bounds of the grant rule: a
//! dependency may have unlimited slots and always lets a call wait; a server has a
//! bounded queue and refuses (sheds) what does not fit.

use std::collections::VecDeque;

/// What the grant rule says to an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// A slot is free: start now.
    Start,
    /// Every slot is busy but a place is free: wait in line.
    Wait,
    /// Slots and places are all taken: refuse at once.
    Refuse,
}

#[derive(Debug, Clone)]
pub(crate) struct SlotQueue<T> {
    /// Items worked on at once now (u32::MAX: unlimited); a `slots` fault changes it.
    limit: u32,
    /// Places in the line; None = unbounded.
    places: Option<u32>,
    busy: u32,
    waiting: VecDeque<T>,
    /// A freed slot takes the newest waiter instead of the oldest.
    lifo: bool,
}

impl<T> SlotQueue<T> {
    /// `slots` at once (0 = unlimited), `places` in line (None = unbounded).
    pub fn new(slots: u32, places: Option<u32>) -> Self {
        SlotQueue {
            limit: Self::limit_of(slots),
            places,
            busy: 0,
            waiting: VecDeque::new(),
            lifo: false,
        }
    }

    fn limit_of(slots: u32) -> u32 {
        if slots == 0 { u32::MAX } else { slots }
    }

    /// From now on `slots` at once (work already running goes on; use `next` to
    /// start waiters the new limit lets in). Here 0 means none at all.
    pub fn set_limit(&mut self, slots: u32) {
        self.limit = slots;
    }

    /// Back to the target's own `slots` (0 = unlimited).
    pub fn reset_limit(&mut self, slots: u32) {
        self.limit = Self::limit_of(slots);
    }

    /// Freed slots take the newest waiter (`true`) or the oldest.
    #[inline]
    pub fn set_lifo(&mut self, lifo: bool) {
        self.lifo = lifo;
    }

    /// Room for `more` waiters beyond those in line, made now (see
    /// `World::reserve_ahead`).
    pub fn reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.waiting.try_reserve(more)
    }

    /// Items waiting now.
    #[inline]
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// A waiter that may start now that the limit allows it (it takes a slot).
    pub fn next(&mut self) -> Option<T> {
        if self.busy >= self.limit {
            return None;
        }
        let next = self.pop();
        if next.is_some() {
            self.busy += 1;
        }
        next
    }

    /// Every waiter, taken out of the line (oldest first).
    pub fn drain(&mut self) -> Vec<T> {
        self.waiting.drain(..).collect()
    }

    #[inline]
    fn pop(&mut self) -> Option<T> {
        if self.lifo {
            self.waiting.pop_back()
        } else {
            self.waiting.pop_front()
        }
    }

    /// The grant rule for the next arrival (nothing changes until `start`/`wait`).
    #[inline]
    pub fn admit(&self) -> Admit {
        if self.busy < self.limit {
            Admit::Start
        } else if self
            .places
            .is_none_or(|p| (self.waiting.len() as u64) < u64::from(p))
        {
            Admit::Wait
        } else {
            Admit::Refuse
        }
    }

    /// An item takes a slot.
    pub fn start(&mut self) {
        self.busy += 1;
    }

    /// An item joins the end of the line.
    pub fn wait(&mut self, item: T) {
        self.waiting.push_back(item);
    }

    /// A slot is freed; the first in line (the last with LIFO), if any and if the
    /// limit allows, takes it and is returned.
    #[inline]
    pub fn release(&mut self) -> Option<T> {
        self.busy -= 1;
        self.next()
    }

    /// Takes the first waiting item that matches out of the line.
    pub fn leave(&mut self, matches: impl Fn(&T) -> bool) -> Option<T> {
        let pos = self.waiting.iter().position(matches)?;
        self.waiting.remove(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_line_refuses_when_slots_and_places_are_full() {
        let mut q = SlotQueue::new(2, Some(1));
        for expected in [Admit::Start, Admit::Start] {
            assert_eq!(q.admit(), expected);
            q.start();
        }
        assert_eq!(q.admit(), Admit::Wait);
        q.wait('a');
        assert_eq!(q.admit(), Admit::Refuse);
        assert_eq!(q.release(), Some('a'), "the waiter takes the freed slot");
        assert_eq!(
            q.admit(),
            Admit::Wait,
            "still 2 busy, the place is free again"
        );
        assert_eq!(q.release(), None);
        assert_eq!(q.admit(), Admit::Start);
    }

    #[test]
    fn unlimited_slots_always_start_and_an_unbounded_line_always_waits() {
        let mut q: SlotQueue<u8> = SlotQueue::new(0, None);
        for _ in 0..1000 {
            assert_eq!(q.admit(), Admit::Start);
            q.start();
        }
        let mut q = SlotQueue::new(1, None);
        q.start();
        for i in 0..1000u32 {
            assert_eq!(q.admit(), Admit::Wait);
            q.wait(i);
        }
        assert_eq!(q.leave(|&w| w == 500), Some(500));
        assert_eq!(q.release(), Some(0), "FIFO");
        q.set_lifo(true);
        assert_eq!(q.release(), Some(999), "LIFO takes the newest");
    }

    #[test]
    fn a_lowered_limit_lets_running_work_finish_and_a_raised_one_starts_waiters() {
        let mut q = SlotQueue::new(2, Some(5));
        q.start();
        q.start();
        q.wait('a');
        q.wait('b');
        q.set_limit(1);
        assert_eq!(q.release(), None, "2 -> 1 busy: still at the limit of 1");
        assert_eq!(q.release(), Some('a'), "1 -> 0 busy: one may start");
        q.set_limit(0);
        assert_eq!(q.admit(), Admit::Wait, "no slot at all: everyone waits");
        q.reset_limit(3);
        assert_eq!(q.next(), Some('b'));
        assert_eq!(q.next(), None);
        assert_eq!(q.admit(), Admit::Start);
    }
}
