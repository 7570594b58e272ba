//! `codel = { target_ms, interval_ms }` (CoDel as Facebook's "Fail at Scale"
//! describes it): a queued request's queue timeout is `interval` while the
//! queue has been empty within the last `interval`, else `target`; past it the
//! request is shed. The order stays the one of the discipline it wraps.

use super::{Discipline, Standing};
use crate::engine::Ticks;
use crate::model;

/// CoDel's queue timeouts over another discipline's order.
pub(in crate::sim::server) struct Codel {
    target: Ticks,
    interval: Ticks,
    queue: Standing,
    /// Which waiter a freed slot takes (the `order` key).
    order: Box<dyn Discipline>,
}

impl Codel {
    pub fn new(codel: model::Codel, order: Box<dyn Discipline>) -> Codel {
        Codel {
            target: codel.target,
            interval: codel.interval,
            queue: Standing::default(),
            order,
        }
    }
}

impl Discipline for Codel {
    fn watches(&self) -> bool {
        true
    }

    fn joined(&mut self, waiting: usize, now: Ticks) -> Option<Ticks> {
        // the queue's state as the request joins it
        let timeout = if self.queue.stands(waiting, now, self.interval) {
            self.target
        } else {
            self.interval
        };
        self.queue.joined(waiting, now);
        self.order.joined(waiting, now);
        Some(timeout)
    }

    fn left(&mut self, waiting: usize, now: Ticks) {
        self.queue.left(waiting, now);
        self.order.left(waiting, now);
    }

    fn newest_first(&self, waiting: usize, now: Ticks) -> bool {
        self.order.newest_first(waiting, now)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Fifo, Lifo, drive};
    use super::*;

    fn codel(order: Box<dyn Discipline>) -> Codel {
        let keys = model::Codel {
            target: Ticks::from_ms(5.0),
            interval: Ticks::from_ms(100.0),
        };
        Codel::new(keys, order)
    }

    #[test]
    fn gives_the_interval_until_the_queue_stands_then_the_target() {
        // the queue fills from 0 and stands: joins up to 100 ms later get the
        // interval, later ones the target
        let joins = [0.0, 50.0, 100.0, 101.0, 150.0];
        let (_, timeouts) = drive(&mut codel(Box::new(Fifo)), &joins, &[]);
        assert_eq!(
            timeouts,
            [Some(100.0), Some(100.0), Some(100.0), Some(5.0), Some(5.0)]
        );
    }

    #[test]
    fn keeps_the_order_it_wraps_and_an_emptied_queue_gives_the_interval_again() {
        let joins = [0.0, 1.0, 2.0];
        let frees = [200.0, 210.0, 220.0];
        let (served, _) = drive(&mut codel(Box::new(Fifo)), &joins, &frees);
        assert_eq!(served, [0, 1, 2]);
        let mut d = codel(Box::new(Lifo));
        let (served, _) = drive(&mut d, &joins, &frees);
        assert_eq!(served, [2, 1, 0]);
        // emptied at 220: a join at 300 finds it empty, one at 401 a queue that
        // has stood since 300
        assert_eq!(
            d.joined(0, Ticks::from_ms(300.0)),
            Some(Ticks::from_ms(100.0))
        );
        assert_eq!(
            d.joined(1, Ticks::from_ms(301.0)),
            Some(Ticks::from_ms(100.0))
        );
        assert_eq!(
            d.joined(2, Ticks::from_ms(401.0)),
            Some(Ticks::from_ms(5.0))
        );
    }
}
