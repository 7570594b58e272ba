//! Dependency actor: a store or backend that plan calls wait on. It works on up to
//! `slots` calls at once (0 = unlimited) and queues the rest FIFO. Its work goes on
//! after the caller gives up unless the caller cancels it.

use super::latency::Sampler;
use super::slots::{Admit, SlotQueue};
use super::{CallId, Event, World};
use crate::engine::{Lane, Stream, Ticks};
use crate::metrics::TimeAverage;
use crate::model::Dependency;

pub(crate) struct DependencyState {
    sampler: Sampler,
    rng: Stream,
    /// `slots` calls at once (0 = unlimited), the rest wait without bound.
    line: SlotQueue<CallId>,
    /// Calls being worked on, over time (abandoned work included).
    pub busy_average: TimeAverage,
}

impl DependencyState {
    pub fn new(model: &Dependency, mut rng: Stream) -> DependencyState {
        DependencyState {
            sampler: Sampler::new(&model.latency, &mut rng),
            rng,
            line: SlotQueue::new(model.slots, None),
            busy_average: TimeAverage::default(),
        }
    }
}

impl World<'_> {
    /// A call asks dependency `dep` for work. Returns when the work will be done if
    /// it started at once (None: it waits for a slot). `cancelled_at`: the caller
    /// will cancel the work then if it is not done (see `dependency_begin`).
    pub(super) fn dependency_request(
        &mut self,
        dep: usize,
        call: CallId,
        cancelled_at: Option<Ticks>,
    ) -> Option<Ticks> {
        let line = &mut self.dependencies[dep].line;
        if line.admit() == Admit::Start {
            line.start();
            Some(self.dependency_begin(dep, call, cancelled_at))
        } else {
            line.wait(call);
            None
        }
    }

    /// Starts the work of a call that has taken a slot; returns when it will be done. A completion that
    /// comes after `cancelled_at` would be cancelled before it runs, so it is not
    /// scheduled (the cancel ends the work).
    fn dependency_begin(&mut self, dep: usize, call: CallId, cancelled_at: Option<Ticks>) -> Ticks {
        let now = self.now;
        let d = &mut self.dependencies[dep];
        d.busy_average.add(now, 1);
        let latency = d.sampler.sample(&mut d.rng);
        self.result.dependencies[dep].work_started += 1;
        let done = now + latency;
        let key = if cancelled_at.is_some_and(|c| done > c) {
            None
        } else {
            Some(self.schedule(done, Lane::Normal, Event::DependencyDone(call)))
        };
        let c = &mut self.calls[call as usize];
        c.work_start = Some(now);
        c.done_key = key;
        done
    }

    /// The dependency stops working on a call (finished or cancelled) and takes the
    /// next waiting one. Returns the work time spent.
    pub(super) fn dependency_end(&mut self, dep: usize, call: CallId) -> Ticks {
        let now = self.now;
        let c = &mut self.calls[call as usize];
        c.done_key = None;
        let start = c.work_start.take().unwrap_or(now);
        let d = &mut self.dependencies[dep];
        d.busy_average.add(now, -1);
        let worked = now - start;
        self.result.dependencies[dep].work_ms += worked.as_ms();
        if let Some(next) = self.dependencies[dep].line.release() {
            self.dependency_begin(dep, next, None);
        }
        worked
    }

    /// The caller cancels a call: pending work is removed from the queue, running
    /// work stops now.
    pub(super) fn dependency_cancel(&mut self, dep: usize, call: CallId) {
        let c = &self.calls[call as usize];
        if c.work_start.is_some() {
            if let Some(key) = c.done_key {
                self.queue.cancel(key);
            }
            self.dependency_end(dep, call);
        } else {
            self.dependencies[dep].line.leave(|&w| w == call);
        }
    }
}
