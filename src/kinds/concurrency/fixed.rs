//! `fixed`: at most `limit` in flight (a semaphore); it learns nothing.

use super::{Done, Kind, Rule, Sample};
use crate::engine::Stream;
use crate::kinds::check::R;
use crate::kinds::keys::{Decl, Key, Keys, Range};

/// At most `limit` requests in flight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fixed {
    /// Requests in flight at most.
    pub limit: u64,
}

impl Kind for Fixed {
    const DECL: Decl = Decl {
        name: "fixed",
        family: "concurrency limiter",
        keys: &[Key::required("limit", Range::Count(1))],
        required_because: "requests in flight at most",
    };
    type State = Fixed;

    fn from_keys(k: &Keys) -> R<Fixed> {
        Ok(Fixed {
            limit: k.count("limit"),
        })
    }

    fn max_limit(&self) -> u64 {
        self.limit
    }

    fn start(&self, _: impl FnOnce() -> Stream) -> (u64, Fixed) {
        (self.limit, *self)
    }
}

impl Rule for Fixed {
    fn sample(&mut self, _: &mut f64, _: Sample, _: Done) {}
}
