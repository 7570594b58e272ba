//! `order = "lifo"`: a freed slot takes the newest waiter.

use super::Discipline;
use crate::engine::Ticks;

/// Last in, first out; sheds nothing on time and watches nothing (the order
/// is set once, when the server starts).
#[derive(Debug, Default)]
pub(in crate::sim::server) struct Lifo;

impl Discipline for Lifo {
    fn newest_first(&self, _waiting: usize, _now: Ticks) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::drive;
    use super::*;

    #[test]
    fn serves_the_newest_waiter_first() {
        let (served, timeouts) = drive(&mut Lifo, &[0.0, 1.0, 2.0, 3.0], &[10.0, 20.0, 30.0, 40.0]);
        assert_eq!(served, [3, 2, 1, 0]);
        assert_eq!(timeouts, [None; 4], "no queue timeout");
        // a waiter that joins between two frees is the newest at the next one
        let mut d = Lifo;
        let (served, _) = drive(&mut d, &[0.0, 1.0], &[10.0]);
        assert_eq!(served, [1]);
    }
}
