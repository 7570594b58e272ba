//! Gateway actor: a request that comes through it meets the limiters of the rules
//! whose prefix matches its route, then spends the gateway's share of the budget
//! before it reaches the service that owns its route.

use super::super::vocab::{Event, ReqId};
use super::World;
use crate::engine::{Lane, Ticks};

impl World<'_> {
    pub(super) fn gateway_receive(&mut self, req: ReqId) {
        self.limit_at_gateway(req);
    }

    /// The gateway's limiters let the request through: on to the service.
    pub(super) fn gateway_forward(&mut self, req: ReqId) {
        let share = self
            .model()
            .gateway
            .as_ref()
            .map_or(Ticks::ZERO, |g| g.share);
        if share == Ticks::ZERO {
            self.at_service(req);
        } else {
            self.post(self.now() + share, Lane::Normal, Event::AtService(req));
        }
    }
}
