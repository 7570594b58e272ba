//! Per-window passes and rejects of one limiter, kept when the run has a time
//! series (`timeseries_limiters.csv`): the limiter's own counts, and per bucket key
//! for the first [`KEYED_WINDOWS_MAX`] keys it meets (keys past them are counted in
//! the limiter's own only; the table then has no per-key rows for it).
//!
//! A request counts in the window of its decision (as `passed` and `rejected` of
//! `limiters.csv`: a throttled request counts as passed when it is held), so the
//! windows of a limiter sum to its run totals.
//!
//! Cost: a decision adds 1 to two counters. The key's slot is found by a scan of at
//! most [`KEYED_WINDOWS_MAX`] keys (no hashing, no allocation); a counter vector
//! grows only when a request lands in a window it has not reached yet.

use crate::engine::Ticks;

pub use crate::model::series::{KEYED_WINDOWS_MAX, rows_per_window};

/// [passed, rejected] per window, from window 0.
pub(super) type Counts = Vec<[u64; 2]>;

/// One limiter's per-window counts.
#[derive(Debug, Clone, Default)]
pub(super) struct Windows {
    /// The whole limiter's.
    pub(super) total: Counts,
    /// Per bucket key, first-seen order.
    pub(super) keys: Vec<([u32; 4], Counts)>,
    /// It met more keys than [`KEYED_WINDOWS_MAX`].
    pub(super) overflow: bool,
    /// Per replica (index: replica - 1), for a limiter kept per replica of
    /// a replicated service (empty otherwise): one per replica of it.
    pub(super) replicas: Vec<Counts>,
}

fn add(counts: &mut Counts, window: usize, rejected: bool) {
    if counts.len() <= window {
        counts.resize(window + 1, [0, 0]);
    }
    counts[window][usize::from(rejected)] += 1;
}

impl Windows {
    /// One decision at `now` on the bucket `key` (`keyed`: the limiter's key has
    /// fields, so buckets are worth telling apart).
    #[inline]
    pub(super) fn count(
        &mut self,
        window: Ticks,
        now: Ticks,
        key: [u32; 4],
        keyed: bool,
        rejected: bool,
    ) {
        let w = (now.0 / window.0.max(1)) as usize;
        add(&mut self.total, w, rejected);
        if !keyed || self.overflow {
            return;
        }
        let n = self.keys.len();
        match self.keys.iter_mut().find(|(k, _)| *k == key) {
            Some((_, counts)) => add(counts, w, rejected),
            None if n < KEYED_WINDOWS_MAX => {
                let mut counts = Counts::new();
                add(&mut counts, w, rejected);
                self.keys.push((key, counts));
            }
            None => {
                // too many keys for per-key rows: keep the totals only
                self.overflow = true;
                self.keys = Vec::new();
            }
        }
    }
}

impl Windows {
    /// One decision at `now` of the state kept for `replica` (from 1) of a
    /// limiter kept per replica.
    #[cold]
    pub(super) fn count_replica(
        &mut self,
        window: Ticks,
        now: Ticks,
        replica: u32,
        rejected: bool,
    ) {
        if let Some(counts) = self.replicas.get_mut(replica as usize - 1) {
            add(counts, (now.0 / window.0.max(1)) as usize, rejected);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_land_in_their_window_per_key_until_there_are_too_many_keys() {
        let w = Ticks::from_ms(100.0);
        let mut c = Windows::default();
        c.count(w, Ticks::from_ms(0.0), [1, 0, 0, 0], true, false);
        c.count(w, Ticks::from_ms(250.0), [2, 0, 0, 0], true, true);
        c.count(w, Ticks::from_ms(299.0), [1, 0, 0, 0], true, false);
        assert_eq!(c.total, [[1, 0], [0, 0], [1, 1]]);
        assert_eq!(c.keys.len(), 2);
        assert_eq!(c.keys[0].1, [[1, 0], [0, 0], [1, 0]]);
        assert_eq!(c.keys[1].1, [[0, 0], [0, 0], [0, 1]]);
        for k in 0..KEYED_WINDOWS_MAX as u32 {
            c.count(w, Ticks::from_ms(300.0), [10 + k, 0, 0, 0], true, false);
        }
        assert!(c.overflow && c.keys.is_empty());
        assert_eq!(c.total[3], [KEYED_WINDOWS_MAX as u64, 0]);
        // a limiter without key fields has its totals only
        let mut c = Windows::default();
        c.count(w, Ticks::from_ms(0.0), [u32::MAX; 4], false, true);
        assert_eq!((c.total.clone(), c.keys.len()), (vec![[0, 1]], 0));
    }
}
