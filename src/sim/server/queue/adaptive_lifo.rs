//! `order = "adaptive_lifo"` (Facebook's "Fail at Scale"): FIFO while the
//! queue has been empty within the last interval, LIFO once it stands longer:
//! under a standing queue the newest requests, whose clients still wait, go
//! first.

use super::{Discipline, Standing};
use crate::engine::Ticks;

/// FIFO, or LIFO while the queue has not been empty within `interval`
/// (`codel.interval_ms`, else 100 ms).
#[derive(Debug)]
pub(in crate::sim::server) struct AdaptiveLifo {
    interval: Ticks,
    queue: Standing,
}

impl AdaptiveLifo {
    pub fn new(interval: Ticks) -> AdaptiveLifo {
        AdaptiveLifo {
            interval,
            queue: Standing::default(),
        }
    }
}

impl Discipline for AdaptiveLifo {
    fn watches(&self) -> bool {
        true
    }

    fn joined(&mut self, waiting: usize, now: Ticks) -> Option<Ticks> {
        self.queue.joined(waiting, now);
        None
    }

    fn left(&mut self, waiting: usize, now: Ticks) {
        self.queue.left(waiting, now);
    }

    fn newest_first(&self, waiting: usize, now: Ticks) -> bool {
        self.queue.stands(waiting, now, self.interval)
    }
}

#[cfg(test)]
mod tests {
    use super::super::drive;
    use super::*;

    #[test]
    fn serves_fifo_until_the_queue_stands_for_an_interval_then_the_newest() {
        // waiters 0..4 join from 10 ms (the queue empty until then); the slot
        // frees at 50 and 100 (stood 40 and 90 ms: FIFO), then at 150 (stood
        // 140 ms: LIFO)
        let mut d = AdaptiveLifo::new(Ticks::from_ms(100.0));
        let joins = [10.0, 20.0, 30.0, 40.0, 45.0];
        let (served, timeouts) = drive(&mut d, &joins, &[50.0, 100.0, 150.0, 160.0]);
        assert_eq!(served, [0, 1, 4, 3]);
        assert_eq!(timeouts, [None; 5], "no queue timeout");
    }

    #[test]
    fn an_emptied_queue_starts_its_interval_again() {
        let mut d = AdaptiveLifo::new(Ticks::from_ms(100.0));
        // one waiter from 0, taken at 150: the queue is empty again at 150
        let (served, _) = drive(&mut d, &[0.0], &[150.0]);
        assert_eq!(served, [0]);
        // two join at 160 and 170: the queue stands from 160
        d.joined(0, Ticks::from_ms(160.0));
        d.joined(1, Ticks::from_ms(170.0));
        assert!(!d.newest_first(2, Ticks::from_ms(200.0)), "stood 40 ms");
        assert!(!d.newest_first(2, Ticks::from_ms(260.0)), "stood 100 ms");
        assert!(d.newest_first(2, Ticks::from_ms(261.0)), "stood 101 ms");
    }
}
