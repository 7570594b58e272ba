//! Queue disciplines: which waiter a server's freed slot takes, and whether a
//! waiter is shed for waiting too long.
//!
//! One file per kind, each a small type implementing [`Discipline`]: [`Fifo`],
//! [`Lifo`], [`AdaptiveLifo`] (the `order` key) and [`Codel`] (the `codel`
//! key), which sheds on time and leaves the order to the discipline it wraps.
//! [`of`] makes a server's discipline from its keys. The server tells a
//! discipline that [`watches`](Discipline::watches) of every join and leave of
//! its queue and asks it before each freed slot takes a waiter; its queue
//! timeouts are the server's `QueueTimeout` events.

mod adaptive_lifo;
mod codel;
mod fifo;
mod lifo;

pub(super) use adaptive_lifo::AdaptiveLifo;
pub(super) use codel::Codel;
pub(super) use fifo::Fifo;
pub(super) use lifo::Lifo;

use super::super::context::Timers;
use super::super::vocab::{Event, ReqId, slot_of};
use super::Servers;
use crate::engine::Ticks;
use crate::model::{self, QueueOrder};

/// With adaptive LIFO and no `codel`: how long the queue must have been
/// non-empty before it switches to LIFO.
const ADAPTIVE_INTERVAL_MS: f64 = 100.0;

/// How one server instance orders its queue and sheds from it.
/// Each method's default is a plain first-in-first-out queue's answer, so a
/// discipline writes only what it does differently.
pub(super) trait Discipline {
    /// Whether the server must tell it of the queue's joins and leaves and ask
    /// it before each freed slot. When false the server calls nothing else,
    /// and the order [`newest_first`](Discipline::newest_first) gives for an
    /// empty queue at time 0 holds for good (a plain queue pays nothing per
    /// request).
    fn watches(&self) -> bool {
        false
    }

    /// A request joins the queue behind `waiting` others at `now`: how long it
    /// may wait before it is shed, if this discipline sheds on time.
    fn joined(&mut self, _waiting: usize, _now: Ticks) -> Option<Ticks> {
        None
    }

    /// A request left the queue at `now` (it took a slot, its client gave up or
    /// it was shed); `waiting` remain.
    fn left(&mut self, _waiting: usize, _now: Ticks) {}

    /// A freed slot takes one of `waiting` waiters at `now`: the newest (true)
    /// or the oldest.
    fn newest_first(&self, _waiting: usize, _now: Ticks) -> bool {
        false
    }
}

/// The discipline of a server with `order` and `codel` keys.
pub(super) fn of(order: QueueOrder, codel: Option<model::Codel>) -> Box<dyn Discipline> {
    // adaptive LIFO looks back over CoDel's interval when there is one
    let interval = codel.map_or(Ticks::from_ms(ADAPTIVE_INTERVAL_MS), |c| c.interval);
    let order: Box<dyn Discipline> = match order {
        QueueOrder::Fifo => Box::new(Fifo),
        QueueOrder::Lifo => Box::new(Lifo),
        QueueOrder::AdaptiveLifo => Box::new(AdaptiveLifo::new(interval)),
    };
    match codel {
        Some(c) => Box::new(Codel::new(c, order)),
        None => order,
    }
}

/// When a queue was last empty, for the disciplines that look at how long it
/// has stood (CoDel, adaptive LIFO).
#[derive(Debug, Clone, Copy, Default)]
struct Standing {
    last_empty: Ticks,
}

impl Standing {
    /// A request joined at `now` behind `waiting` others (0: the queue was
    /// empty until now).
    fn joined(&mut self, waiting: usize, now: Ticks) {
        if waiting == 0 {
            self.last_empty = now;
        }
    }

    /// A request left at `now`, `waiting` remain (0: the queue is empty now).
    fn left(&mut self, waiting: usize, now: Ticks) {
        if waiting == 0 {
            self.last_empty = now;
        }
    }

    /// Whether the queue, holding `waiting` requests at `now`, has not been
    /// empty within the last `interval`.
    fn stands(&self, waiting: usize, now: Ticks, interval: Ticks) -> bool {
        waiting > 0 && now - self.last_empty > interval
    }
}

/// How the server drives its instances' disciplines: their queue timeouts
/// (the `QueueTimeout` events, set and cancelled here through the step's
/// `Timers`) and what they hear and are asked.
impl Servers {
    /// `req`, waiting in a queue whose discipline sheds it, is shed at `at`
    /// if it still waits then.
    #[cold]
    #[inline(never)]
    pub(super) fn set_queue_timeout(&mut self, t: &mut Timers, req: ReqId, at: Ticks) {
        let key = t.deadline(at, Event::QueueTimeout(req));
        *slot_of(&mut self.timeout_keys, req, || None) = Some(key);
    }

    /// `req` left the queue: its queue timeout (if any) is cancelled.
    pub(super) fn queue_timeout_off(&mut self, t: &mut Timers, req: ReqId) {
        t.cancel(
            self.timeout_keys
                .get_mut(req as usize)
                .and_then(Option::take),
        );
    }

    /// A request left instance `i`'s queue at `now`: its discipline hears of
    /// it, if it watches the queue.
    #[inline]
    pub(super) fn dequeued(&mut self, i: usize, now: Ticks) {
        let s = &mut self.states[i];
        if s.timed {
            s.discipline.left(s.line.waiting(), now);
        }
    }

    /// Before a freed slot takes a waiter: the discipline, if it watches the
    /// queue, says whether it takes the newest or the oldest.
    #[inline]
    pub(super) fn pick_order(&mut self, i: usize, now: Ticks) {
        let s = &mut self.states[i];
        if s.timed {
            let newest = s.discipline.newest_first(s.line.waiting(), now);
            s.line.set_lifo(newest);
        }
    }

    /// `req`'s queue timeout (CoDel) at `now`: still waiting at instance `i`,
    /// it leaves the queue, shed (true).
    #[inline(never)]
    pub(in crate::sim) fn queue_timeout(&mut self, i: usize, req: ReqId, now: Ticks) -> bool {
        let s = &mut self.states[i];
        let Some(w) = s.line.leave(|w| w.req == req) else {
            return false;
        };
        self.timeout_keys[req as usize] = None;
        let s = &mut self.states[i];
        s.outstanding -= 1;
        s.since = self.moves;
        self.moves += 1;
        let (stats, replica) = (s.stats, s.replica);
        let st = &mut self.stats[stats];
        st.queued.add(now, -1);
        st.shed += 1;
        st.in_server.add(now - w.arrived);
        if let Some(r) = replica {
            st.replicas[r].shed += 1;
            st.replicas[r].queued.add(now, -1);
        }
        self.dequeued(i, now);
        true
    }
}

/// Drives `d` as a server with one busy slot does: a request joins at each
/// time of `joins` (ms, in order), then at each time of `frees` the slot's
/// request ends and the slot takes a waiter. Returns the waiters (numbered by
/// join) in the order they took the slot, and each one's queue timeout in ms.
#[cfg(test)]
fn drive(d: &mut dyn Discipline, joins: &[f64], frees: &[f64]) -> (Vec<usize>, Vec<Option<f64>>) {
    use crate::sim::slots::SlotQueue;
    let mut line = SlotQueue::new(1, None);
    line.set_lifo(d.newest_first(0, Ticks::ZERO));
    line.start();
    let mut timeouts = Vec::new();
    for (k, &at) in joins.iter().enumerate() {
        let timeout = if d.watches() {
            d.joined(line.waiting(), Ticks::from_ms(at))
        } else {
            None
        };
        timeouts.push(timeout.map(Ticks::as_ms));
        line.wait(k);
    }
    let mut order = Vec::new();
    for &at in frees {
        let now = Ticks::from_ms(at);
        if d.watches() {
            line.set_lifo(d.newest_first(line.waiting(), now));
        }
        if let Some(k) = line.release() {
            if d.watches() {
                d.left(line.waiting(), now);
            }
            order.push(k);
        }
    }
    (order, timeouts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: f64) -> Ticks {
        Ticks::from_ms(t)
    }

    #[test]
    fn the_keys_make_their_kinds_and_codel_keeps_the_order_it_wraps() {
        let codel = Some(model::Codel {
            target: ms(5.0),
            interval: ms(100.0),
        });
        let joins = [0.0, 1.0, 2.0];
        let frees = [10.0, 20.0, 30.0];
        for (order, codel, expected) in [
            (QueueOrder::Fifo, None, [0, 1, 2]),
            (QueueOrder::Lifo, None, [2, 1, 0]),
            (QueueOrder::Fifo, codel, [0, 1, 2]),
            (QueueOrder::Lifo, codel, [2, 1, 0]),
        ] {
            let mut d = of(order, codel);
            assert_eq!(d.watches(), codel.is_some(), "{order:?} {codel:?}");
            let (served, timeouts) = drive(&mut *d, &joins, &frees);
            assert_eq!(served, expected, "{order:?} {codel:?}");
            let shed = codel.map(|c| c.interval.as_ms());
            assert_eq!(timeouts, [shed; 3], "{order:?} {codel:?}");
        }
        // without codel adaptive LIFO stands after 100 ms; with it, after its interval
        let joins = [0.0, 1.0, 2.0];
        let frees = [60.0, 70.0];
        let (served, _) = drive(&mut *of(QueueOrder::AdaptiveLifo, None), &joins, &frees);
        assert_eq!(served, [0, 1], "stood 60 ms of 100: FIFO");
        let short = Some(model::Codel {
            target: ms(5.0),
            interval: ms(50.0),
        });
        let (served, _) = drive(&mut *of(QueueOrder::AdaptiveLifo, short), &joins, &frees);
        assert_eq!(served, [2, 1], "stood 60 ms of 50: LIFO");
    }

    #[test]
    fn a_queue_stands_once_it_has_not_been_empty_for_longer_than_the_interval() {
        let mut s = Standing::default();
        let i = ms(100.0);
        s.joined(0, ms(10.0));
        assert!(!s.stands(1, ms(110.0), i), "exactly the interval: not yet");
        assert!(s.stands(1, ms(110.001), i));
        assert!(!s.stands(0, ms(500.0), i), "an empty queue never stands");
        s.joined(1, ms(200.0));
        assert!(
            s.stands(2, ms(200.0), i),
            "a join behind others changes nothing"
        );
        s.left(1, ms(300.0));
        assert!(s.stands(1, ms(300.0), i));
        s.left(0, ms(300.0));
        assert!(!s.stands(1, ms(350.0), i), "emptied at 300");
    }
}
