//! The queue in front of the replicas (`max_conn`, `max_queue`,
//! `queue_timeout_ms`): HAProxy's `maxconn` per server with the backend's
//! queue, held by the picker.
//!
//! A replica holding `max_conn` requests (in its slots and its own queue) is
//! full. A new request goes to a replica the balancer picks among those with
//! room; when none has room, it waits here, first in first out, up to
//! `max_queue` places (none: no limit; a request that finds them taken is
//! refused) and `queue_timeout_ms` (none: until a replica has room). When a
//! replica's count falls below `max_conn`, it takes the oldest waiters while
//! it has room.
//!
//! As HAProxy 2.6 does it (`src/backend.c` `assign_server` and
//! `assign_server_and_queue`, `src/queue.c` `pendconn_add`,
//! `process_srv_queue`, `pendconn_process_next_strm`):
//! - `roundrobin` (and `static-rr`, `first`) sends a new request to the
//!   backend's queue while anything waits there, so a newcomer never passes
//!   a waiter; here `round_robin` and `weighted_round_robin`
//!   ([`Balance::queue_first`]).
//! - Otherwise the algorithm picks and passes over saturated servers
//!   (`fwrr_get_next_server`, `fwlc_get_next_server`: a full server is
//!   skipped, round robin's turn moving past it); no server left: the queue.
//!   `random` does not pass over: if the server it drew is full the request
//!   goes to the queue ([`Balance::skips_full`]).
//! - The queue is ordered by arrival (no priority classes here); a server
//!   whose connection ends takes the oldest waiters while `served <
//!   maxconn`.
//! - After `timeout queue` a waiter is answered 503.
//!
//! The queue knows nothing of requests: a waiter is any number its owner
//! chooses.

use super::Balance;
use crate::engine::Ticks;
use crate::model::ConnLimit;
use std::collections::VecDeque;

/// Where a new request goes ([`ProxyQueue::place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placed {
    /// To this replica (an index into the view).
    Replica(usize),
    /// Into the queue; with a queue timeout, refused then if still waiting.
    Queued { timeout: Option<Ticks> },
    /// No replica has room and the queue is full: refused at once.
    Refused,
}

pub(crate) struct ProxyQueue {
    limit: ConnLimit,
    /// The waiters, oldest first: (id, when it joined).
    line: VecDeque<(u64, Ticks)>,
    /// The replicas with room, made at each pick.
    room: Vec<usize>,
}

impl ProxyQueue {
    pub fn new(limit: ConnLimit) -> ProxyQueue {
        ProxyQueue {
            limit,
            line: VecDeque::new(),
            room: Vec::new(),
        }
    }

    /// Where waiter `id` arriving at `now` goes, `balancer` picking among
    /// the replicas with room, given each replica's `outstanding` count.
    pub fn place(
        &mut self,
        balancer: &mut dyn Balance,
        outstanding: &[u32],
        id: u64,
        now: Ticks,
    ) -> Placed {
        let max = self.limit.max_conn;
        if !self.line.is_empty() && balancer.queue_first() {
            return self.join(id, now);
        }
        self.room.clear();
        self.room
            .extend((0..outstanding.len()).filter(|&r| outstanding[r] < max));
        if self.room.is_empty() {
            return self.join(id, now);
        }
        let k = if !balancer.skips_full() || self.room.len() == outstanding.len() {
            balancer.pick_at(outstanding, now)
        } else {
            balancer.pick_among(outstanding, &self.room, now)
        };
        if outstanding[k] >= max {
            return self.join(id, now);
        }
        Placed::Replica(k)
    }

    /// `id` joins the line at `now`, or is refused when it is full.
    fn join(&mut self, id: u64, now: Ticks) -> Placed {
        if self
            .limit
            .max_queue
            .is_some_and(|m| self.line.len() >= m as usize)
        {
            return Placed::Refused;
        }
        self.line.push_back((id, now));
        Placed::Queued {
            timeout: self.limit.queue_timeout,
        }
    }

    /// A replica now holding `count` requests takes the oldest waiter, if it
    /// has room and anyone waits: (its id, when it joined).
    pub fn take(&mut self, count: u32) -> Option<(u64, Ticks)> {
        if count >= self.limit.max_conn {
            return None;
        }
        self.line.pop_front()
    }

    /// Waiter `id` leaves the line (its queue timeout, or its caller gave
    /// up): when it joined, if it waited there.
    pub fn leave(&mut self, id: u64) -> Option<Ticks> {
        let at = self.line.iter().position(|&(w, _)| w == id)?;
        self.line.remove(at).map(|(_, t)| t)
    }

    /// Waiters now.
    pub fn len(&self) -> usize {
        self.line.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;
    use crate::kinds::balance::of_text;

    fn limit(max_conn: u32, max_queue: Option<u32>) -> ConnLimit {
        ConnLimit {
            max_conn,
            max_queue,
            queue_timeout: Some(Ticks::from_ms(50.0)),
        }
    }

    /// Round robin passes over a full replica (its turn goes by), and a
    /// newcomer waits behind anyone waiting even when a replica has room.
    #[test]
    fn round_robin_skips_the_full_and_never_passes_a_waiter() {
        let mut q = ProxyQueue::new(limit(2, None));
        let mut rr = of_text(
            "kind = \"round_robin\"",
            3,
            crate::engine::stream(1, 0, "t"),
        );
        let t = Ticks::ZERO;
        assert_eq!(q.place(&mut *rr, &[0, 2, 1], 1, t), Placed::Replica(0));
        assert_eq!(
            q.place(&mut *rr, &[1, 2, 1], 2, t),
            Placed::Replica(2),
            "1 is full"
        );
        assert_eq!(q.place(&mut *rr, &[1, 2, 2], 3, t), Placed::Replica(0));
        let queued = Placed::Queued {
            timeout: Some(Ticks::from_ms(50.0)),
        };
        assert_eq!(q.place(&mut *rr, &[2, 2, 2], 4, t), queued);
        // replica 1 has room again, but 4 waits: 5 goes behind it
        assert_eq!(q.place(&mut *rr, &[2, 1, 2], 5, t), queued);
        assert_eq!(q.take(1), Some((4, t)), "the oldest first");
        assert_eq!(q.take(2), None, "no room");
        assert_eq!(q.leave(5), Some(t));
        assert_eq!(q.len(), 0);
    }

    /// Least outstanding picks among the replicas with room only; a full
    /// queue refuses.
    #[test]
    fn least_outstanding_picks_among_room_and_a_full_queue_refuses() {
        let mut q = ProxyQueue::new(limit(3, Some(1)));
        let mut lo = of_text(
            "kind = \"least_outstanding\"",
            3,
            crate::engine::stream(1, 0, "t"),
        );
        let t = Ticks::ZERO;
        assert_eq!(q.place(&mut *lo, &[3, 2, 3], 1, t), Placed::Replica(1));
        assert!(matches!(
            q.place(&mut *lo, &[3, 3, 3], 2, t),
            Placed::Queued { .. }
        ));
        // not queue-first: a replica with room takes a newcomer
        assert_eq!(q.place(&mut *lo, &[3, 3, 1], 3, t), Placed::Replica(2));
        assert_eq!(q.place(&mut *lo, &[3, 3, 3], 4, t), Placed::Refused);
    }

    /// HAProxy's random draws over every replica: a full one drawn sends the
    /// request to the queue even when another has room.
    #[test]
    fn haproxy_random_queues_when_its_draw_is_full() {
        let mut q = ProxyQueue::new(limit(1, None));
        let mut b = of_text(
            "kind = \"haproxy_random\"\ndraws = 1",
            2,
            stream(1, 0, "balancer:t"),
        );
        let (mut queued, mut to_free) = (0, 0);
        for id in 0..400 {
            match q.place(&mut *b, &[1, 0], id, Ticks::ZERO) {
                Placed::Queued { .. } => queued += 1,
                Placed::Replica(k) => {
                    assert_eq!(k, 1);
                    to_free += 1;
                }
                Placed::Refused => unreachable!("no queue limit"),
            }
        }
        assert!(queued > 100 && to_free > 100, "{queued} {to_free}");
    }
}
