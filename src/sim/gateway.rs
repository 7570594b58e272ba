//! Gateway actor: requests that come through it spend its share of the budget
//! before they reach the service that owns their route.

use super::{Event, ReqId, World};
use crate::engine::{Lane, Ticks};

impl World<'_> {
    pub(super) fn gateway_receive(&mut self, req: ReqId) {
        let share = self.model.gateway.as_ref().map_or(Ticks::ZERO, |g| g.share);
        if share == Ticks::ZERO {
            self.at_service(req);
        } else {
            self.post(self.now + share, Lane::Normal, Event::AtService(req));
        }
    }
}
