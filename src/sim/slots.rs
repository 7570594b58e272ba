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
    /// Items worked on at once; 0 = unlimited.
    slots: u32,
    /// Places in the line; None = unbounded.
    places: Option<u32>,
    busy: u32,
    waiting: VecDeque<T>,
}

impl<T> SlotQueue<T> {
    pub fn new(slots: u32, places: Option<u32>) -> Self {
        SlotQueue {
            slots,
            places,
            busy: 0,
            waiting: VecDeque::new(),
        }
    }

    /// The grant rule for the next arrival (nothing changes until `start`/`wait`).
    pub fn admit(&self) -> Admit {
        if self.slots == 0 || self.busy < self.slots {
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

    /// A slot is freed; the first in line (if any) takes it and is returned.
    pub fn release(&mut self) -> Option<T> {
        self.busy -= 1;
        let next = self.waiting.pop_front();
        if next.is_some() {
            self.busy += 1;
        }
        next
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
    }
}
