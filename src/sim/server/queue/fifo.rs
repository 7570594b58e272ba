//! `order = "fifo"` (the default): a freed slot takes the oldest waiter.

use super::Discipline;

/// First in, first out; sheds nothing on time and watches nothing.
#[derive(Debug, Default)]
pub(in crate::sim::server) struct Fifo;

/// Every answer is the trait's default.
impl Discipline for Fifo {}

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
