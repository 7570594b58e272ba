//! `aimd` (Netflix `AIMDLimit._update`): a sample in time from a request let
//! through while at least half the limit was in flight adds 1; a drop, or a
//! sample slower than `timeout_ms`, multiplies the limit by `backoff_ratio`
//! (whole part kept; in [0.5, 1) as its builder checks); the limit stays
//! within `min_limit..=max_limit`.

use super::Sample;
use crate::model::ConcurrencyAlgorithm;

pub(super) fn sample(alg: &ConcurrencyAlgorithm, limit: &mut f64, s: Sample, in_flight: u64) {
    let ConcurrencyAlgorithm::Aimd {
        min,
        max,
        backoff_ratio,
        timeout,
        ..
    } = *alg
    else {
        return;
    };
    let current = *limit;
    let next = match s {
        Sample::Drop(_) => (current * backoff_ratio).floor(),
        Sample::Answer(rtt) if rtt > timeout => (current * backoff_ratio).floor(),
        Sample::Answer(_) if (in_flight * 2) as f64 >= current => current + 1.0,
        _ => current,
    };
    *limit = next.clamp(min as f64, max as f64);
}
