//! `order = "fifo"` (the default): a freed slot takes the oldest waiter.

use super::Discipline;
use crate::engine::Ticks;

/// First in, first out; sheds nothing on time and watches nothing.
#[derive(Debug, Default)]
pub(in crate::sim::server) struct Fifo;

impl Discipline for Fifo {
    fn watches(&self) -> bool {
        false
    }

    fn joined(&mut self, _waiting: usize, _now: Ticks) -> Option<Ticks> {
        None
    }

    fn left(&mut self, _waiting: usize, _now: Ticks) {}

    fn newest_first(&self, _waiting: usize, _now: Ticks) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::drive;
    use super::*;

    #[test]
    fn serves_waiters_in_arrival_order() {
        let (served, timeouts) = drive(&mut Fifo, &[0.0, 1.0, 2.0, 3.0], &[10.0, 20.0, 30.0, 40.0]);
        assert_eq!(served, [0, 1, 2, 3]);
        assert_eq!(timeouts, [None; 4], "no queue timeout");
    }
}
