//! `aimd` (Netflix `AIMDLimit._update`): a sample in time from a request let
//! through while at least half the limit was in flight adds 1; a drop, or a
//! sample slower than `timeout_ms`, multiplies the limit by `backoff_ratio`
//! (whole part kept; in [0.5, 1) as its builder checks); the limit stays
//! within `min_limit..=max_limit`.

use super::{Done, GRPC_SERVER, Kind, Rule, Sample, ordered};
use crate::engine::{Stream, Ticks};
use crate::error::num;
use crate::kinds::check::{R, err};
use crate::kinds::keys::{Decl, Key, Keys, Range};

/// Netflix `AIMDLimit`'s parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aimd {
    /// The starting limit.
    pub initial: u64,
    /// The lowest limit.
    pub min: u64,
    /// The highest limit.
    pub max: u64,
    /// The factor on a drop or timeout.
    pub backoff_ratio: f64,
    /// An answer slower than this counts as a drop.
    pub timeout: Ticks,
}

impl Kind for Aimd {
    const DECL: Decl = Decl {
        name: "aimd",
        family: "concurrency limiter",
        keys: &[
            Key::with("initial_limit", 20.0, Range::Count(1)),
            Key::with("min_limit", 20.0, Range::Count(1)),
            Key::with("max_limit", 200.0, Range::Count(1)),
            Key::with("backoff_ratio", 0.9, Range::Own("in [0.5, 1)")),
            Key::with("timeout_ms", 5000.0, Range::PositiveMs),
            GRPC_SERVER,
        ],
        required_because: "",
    };
    type State = Aimd;

    fn from_keys(k: &Keys) -> R<Aimd> {
        let (initial, min, max) = bounded_limits(k)?;
        // Netflix's `AIMDLimit.Builder.backoffRatio` checks [0.5, 1): below
        // 0.5 one drop would more than halve the limit; at 1 or above a drop
        // would not lower it
        let backoff_ratio = k.num("backoff_ratio");
        if !(0.5..1.0).contains(&backoff_ratio) {
            return err(
                k.at("backoff_ratio"),
                format!(
                    "must be >= 0.5 and < 1 (got {}): the factor on the limit at a drop, in [0.5, 1) as Netflix's AIMDLimit requires",
                    num(backoff_ratio)
                ),
            );
        }
        Ok(Aimd {
            initial,
            min,
            max,
            backoff_ratio,
            timeout: k.ticks("timeout_ms")?,
        })
    }

    fn max_limit(&self) -> u64 {
        self.max
    }

    fn start(&self, _: impl FnOnce() -> Stream) -> (u64, Aimd) {
        (self.initial, *self)
    }
}

/// `initial_limit`, `min_limit` and `max_limit` of an algorithm that keeps
/// its limit in [min, max] (AIMD and Gradient2 share Netflix's defaults: 20,
/// 20, 200): min <= max always, and min <= initial <= max where written; the
/// initial limit is then held within [min, max].
pub(super) fn bounded_limits(k: &Keys) -> R<(u64, u64, u64)> {
    ordered(k, &["min_limit", "max_limit"], true)?;
    ordered(k, &["min_limit", "initial_limit", "max_limit"], false)?;
    let (min, max) = (k.count("min_limit"), k.count("max_limit"));
    Ok((k.count("initial_limit").clamp(min, max), min, max))
}

impl Rule for Aimd {
    fn sample(&mut self, limit: &mut f64, s: Sample, done: Done) {
        let current = *limit;
        let next = match s {
            Sample::Drop(_) => (current * self.backoff_ratio).floor(),
            Sample::Answer(rtt) if rtt > self.timeout => (current * self.backoff_ratio).floor(),
            Sample::Answer(_) if (done.in_flight * 2) as f64 >= current => current + 1.0,
            _ => current,
        };
        *limit = next.clamp(self.min as f64, self.max as f64);
    }
}
