//! Streaming statistics: nothing here grows with the number of events, and only
//! [`Samples`] grows with the number of observations, up to a fixed cap.

use crate::engine::Ticks;

/// Time-weighted average of a level that changes at event times (requests in flight,
/// busy slots): the area under the curve divided by the elapsed time.
///
/// The area is never summed interval by interval. A change of `delta` at time
/// `t` adds `delta` x (T - t) to the area up to any later T, so the area up to
/// T is T x level - (sum of `delta` x `t` over the changes): each change adds
/// its `delta` x `t` to that sum, which for the usual +1 and -1 is an add or a
/// subtract of `t`, where an interval's area is a 128-bit multiply of the
/// level held since the last change, on every change. The result is the same
/// integer either way, so the means are the same to the last bit.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeAverage {
    /// The latest change (times never go back: the run loop checks).
    last: Ticks,
    level: u64,
    /// The sum of `delta` x time over the changes so far.
    moments: i128,
}

impl TimeAverage {
    /// Changes the level by `delta` at time `now`.
    #[inline]
    pub fn add(&mut self, now: Ticks, delta: i64) {
        debug_assert!(now >= self.last, "a time average went back in time");
        debug_assert!(
            self.level.checked_add_signed(delta).is_some(),
            "a time average's level went below zero"
        );
        self.last = now;
        self.level = self.level.wrapping_add_signed(delta);
        self.moments += i128::from(delta) * i128::from(now.0);
    }

    /// The current level.
    pub fn level(&self) -> u64 {
        self.level
    }

    /// Sets the level to `level` at time `now`.
    #[inline]
    pub fn set(&mut self, now: Ticks, level: u64) {
        self.add(now, level.wrapping_sub(self.level) as i64);
    }

    /// The area under the level (level x ticks) over [0, until], counted up to
    /// the latest change when that came after `until`.
    pub fn area(&self, until: Ticks) -> i128 {
        let to = until.max(self.last);
        i128::from(to.0) * i128::from(self.level) - self.moments
    }

    /// The average level over [0, until] (the area counts up to the latest
    /// change when that came after `until`).
    pub fn mean(&self, until: Ticks) -> f64 {
        if until.0 == 0 {
            return 0.0;
        }
        self.area(until) as f64 / until.0 as f64
    }

    /// The average started again at `now`: its level kept, nothing before now
    /// counted (its mean over [0, end] then reads short by the share of
    /// [0, end] before `now`, which a warm-up's books scale back).
    pub fn restarted(&self, now: Ticks) -> TimeAverage {
        let mut a = TimeAverage::default();
        a.add(now, self.level as i64);
        a
    }
}

/// A sum of durations kept in ticks (exact, and no float conversion per
/// observation), read in ms at the end.
#[derive(Debug, Clone, Copy, Default)]
pub struct TickSum(u128);

impl TickSum {
    /// Adds one duration.
    #[inline]
    pub fn add(&mut self, t: Ticks) {
        self.0 += u128::from(t.0);
    }

    /// The sum in ms.
    pub fn ms(&self) -> f64 {
        self.0 as f64 / crate::engine::Ticks::from_ms(1.0).0 as f64
    }
}

/// Above this many observations [`Samples`] switches from exact values to a
/// log-linear histogram.
pub const EXACT_CAP: usize = 1 << 20;

/// Above this many exact values, [`Samples::bucket_counts`] adds them up per
/// bucket instead of giving one entry each.
const DENSE_BUCKETS_FROM: usize = 4096;

/// Sub-buckets per power of two in the histogram: relative error <= 1/1024.
const SUB_BITS: u32 = 10;

/// Observations (ticks) for exact order statistics, falling back to a log-linear
/// histogram (relative error below 0.1 %) past [`EXACT_CAP`] values so memory stays
/// flat: at most `EXACT_CAP` x 4 bytes (4 MiB) of exact values while every value
/// fits in 32 bits (below 2^32 ticks, 4.29 s), x 8 bytes (8 MiB) once one does not,
/// then a histogram of at most 65 x 1024 counters. Count, sum, min and max stay
/// exact either way. Exact percentiles are selected in place (see
/// [`Samples::select_for`]), never by sorting a copy. Zeros are counted, not
/// held: a wait is 0 whenever a slot was free, which is most waits at most
/// servers, and a count takes no memory and no part in a selection.
#[derive(Debug, Clone)]
pub struct Samples {
    /// The exact values while each fits in 32 bits: half the memory (and half
    /// the memory traffic of a percentile) of `wide`.
    narrow: Vec<u32>,
    /// The exact values once one did not fit in `narrow` (they all moved here).
    wide: Vec<u64>,
    buckets: Vec<u64>,
    /// While exact: the values equal to 0, which `narrow` and `wide` leave out
    /// (they sort first, so rank r is 0 below this count and the held value of
    /// rank r - zeros above it). In the histogram they are its bucket 0.
    zeros: u64,
    count: u64,
    sum: u128,
    /// u64::MAX while empty.
    min: u64,
    max: u64,
    /// Positions of the exact values that hold their sorted-order value, ascending: every
    /// value before such a position is no larger and every value after it no
    /// smaller (the partition points of the selections made since the last push),
    /// so a later percentile selects only between its two neighbours.
    splits: Vec<u32>,
    /// The count `splits` (and `known`) were made at: a push since then makes
    /// them stale (cleared by the next percentile, not by every push).
    splits_of: u64,
    /// Values of ranks (zeros included) another statistic holding the same
    /// values selected ([`Samples::select_together`]), ascending by rank.
    known: Vec<(u64, u64)>,
    /// How many values `narrow` may hold: [`EXACT_CAP`] while the values are
    /// narrow, 0 once they widened or moved into the histogram (one comparison
    /// per push tells both).
    narrow_cap: usize,
}

impl Default for Samples {
    fn default() -> Self {
        Samples {
            narrow: Vec::new(),
            wide: Vec::new(),
            buckets: Vec::new(),
            zeros: 0,
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
            splits: Vec::new(),
            splits_of: 0,
            known: Vec::new(),
            narrow_cap: EXACT_CAP,
        }
    }
}

/// The histogram's bucket of value `v`: values below 1024 have a bucket each,
/// then every power of two is cut into 1024 buckets of equal width, so a bucket
/// spans [`bucket_low`] to [`bucket_value`], at most 1/1024 of its values apart.
/// A sweep pools its replications' answered times in the same buckets.
pub(crate) fn bucket_of(v: u64) -> usize {
    if v < (1 << SUB_BITS) {
        return v as usize;
    }
    let exp = 63 - v.leading_zeros();
    let shift = exp - SUB_BITS;
    let sub = (v >> shift) as usize & ((1 << SUB_BITS) - 1);
    (((shift + 1) as usize) << SUB_BITS) + sub
}

/// The lower edge of a bucket: its smallest value.
pub(crate) fn bucket_low(b: usize) -> u64 {
    let group = b >> SUB_BITS;
    if group == 0 {
        return b as u64;
    }
    let shift = (group - 1) as u32;
    let sub = (b & ((1 << SUB_BITS) - 1)) as u64;
    ((1u64 << SUB_BITS) + sub) << shift
}

/// The upper edge of a bucket: reported values never understate.
pub(crate) fn bucket_value(b: usize) -> u64 {
    let group = b >> SUB_BITS;
    if group == 0 {
        return b as u64;
    }
    let shift = (group - 1) as u32;
    let sub = (b & ((1 << SUB_BITS) - 1)) as u64;
    (((1u64 << SUB_BITS) + sub) << shift) + ((1u64 << shift) - 1)
}

impl Samples {
    /// Records one observation: a few instructions while the values are exact.
    #[inline]
    pub fn push(&mut self, t: Ticks) {
        let v = t.0;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += u128::from(v);
        // while exact, `count` is every value so far, this one included
        if v <= u64::from(u32::MAX) && self.count as usize <= self.narrow_cap {
            if v == 0 {
                self.zeros += 1;
            } else {
                self.narrow.push(v as u32);
            }
        } else {
            self.push_slow(v);
        }
    }

    /// Exact values held (zeros are only counted).
    fn held(&self) -> usize {
        self.narrow.len() + self.wide.len()
    }

    /// Exact values, held or counted.
    fn exact_len(&self) -> usize {
        self.held() + self.zeros as usize
    }

    /// A value past 32 bits, or past the cap: below the cap the exact values
    /// widen to 64 bits; at the cap they move into the histogram (before a vector
    /// would grow past the cap), then every value is binned.
    #[cold]
    fn push_slow(&mut self, v: u64) {
        if self.buckets.is_empty() {
            // `count` includes `v`
            if self.count as usize <= EXACT_CAP {
                self.widen();
                if v == 0 {
                    self.zeros += 1;
                } else {
                    self.wide.push(v);
                }
                return;
            }
            self.bin_exact();
        }
        self.bin(v);
    }

    /// The exact values move from `narrow` to `wide` (no-op once wide). The
    /// capacity is kept, so doubling still stops at the cap.
    fn widen(&mut self) {
        self.narrow_cap = 0;
        if self.wide.is_empty() {
            let mut wide = Vec::with_capacity(self.narrow.capacity());
            wide.extend(self.narrow.drain(..).map(u64::from));
            self.narrow = Vec::new();
            self.wide = wide;
        }
    }

    /// The exact values move into the histogram.
    fn bin_exact(&mut self) {
        self.narrow_cap = 0;
        let zeros = std::mem::take(&mut self.zeros);
        self.bin_zeros(zeros);
        for x in std::mem::take(&mut self.narrow) {
            self.bin(u64::from(x));
        }
        for x in std::mem::take(&mut self.wide) {
            self.bin(x);
        }
    }

    /// `n` zeros into the histogram's bucket 0.
    fn bin_zeros(&mut self, n: u64) {
        if n > 0 {
            if self.buckets.is_empty() {
                self.buckets.push(0);
            }
            self.buckets[0] += n;
        }
    }

    fn bin(&mut self, v: u64) {
        let b = bucket_of(v);
        if self.buckets.len() <= b {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += 1;
    }

    /// Adds every observation of `other` (as if each had been pushed here).
    pub fn absorb(&mut self, other: &Samples) {
        if other.count == 0 {
            return;
        }
        let exact = self.buckets.is_empty() && other.buckets.is_empty();
        let stay_exact = exact && self.exact_len() + other.exact_len() <= EXACT_CAP;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
        if stay_exact {
            self.zeros += other.zeros;
            if self.wide.is_empty() && other.wide.is_empty() {
                self.narrow.extend_from_slice(&other.narrow);
            } else {
                self.widen();
                self.wide.extend(other.narrow.iter().map(|&x| u64::from(x)));
                self.wide.extend_from_slice(&other.wide);
            }
            return;
        }
        if self.buckets.is_empty() {
            self.bin_exact();
        }
        self.bin_zeros(other.zeros);
        for &x in &other.narrow {
            self.bin(u64::from(x));
        }
        for &x in &other.wide {
            self.bin(x);
        }
        if self.buckets.len() < other.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            *mine += theirs;
        }
    }

    /// Empties the samples, keeping their memory for the next ones.
    pub fn clear(&mut self) {
        self.narrow.clear();
        self.wide.clear();
        self.buckets.clear();
        self.zeros = 0;
        self.count = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.splits.clear();
        self.splits_of = 0;
        self.known.clear();
        self.narrow_cap = EXACT_CAP;
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// How many positions selections have fixed since the last push, here or
    /// in a statistic holding the same values (a test's window on the work the
    /// percentiles asked so far took).
    #[cfg(test)]
    pub(crate) fn selected(&self) -> usize {
        if self.splits_of == self.count {
            self.splits.len() + self.known.len()
        } else {
            0
        }
    }

    /// True while every order statistic is exact.
    pub fn is_exact(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Mean of the values, in ms (0 when empty).
    pub fn mean_ms(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        (self.sum as f64 / self.count as f64) / crate::engine::Ticks::from_ms(1.0).0 as f64
    }

    /// Largest value, in ms (0 when empty).
    pub fn max_ms(&self) -> f64 {
        Ticks(self.max).as_ms()
    }

    /// Smallest value, in ms (0 when empty).
    pub fn min_ms(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        Ticks(self.min).as_ms()
    }

    /// Sum of the values, in ms.
    pub fn sum_ms(&self) -> f64 {
        self.sum as f64 / crate::engine::Ticks::from_ms(1.0).0 as f64
    }

    /// The value of 0-based rank `rank` in sorted order. Exact values are
    /// selected in place (quickselect: linear, sequential in memory, no copy),
    /// between the nearest positions earlier questions already fixed; a table
    /// asking several percentiles of one statistic asks them through
    /// [`Self::quantiles_ms`] or first [`Self::select_for`], which select them
    /// in the order that costs least. (Sorting instead, even by a radix sort,
    /// costs more: see BENCHMARKS.md, "Percentiles by sorting".)
    fn at_rank(&mut self, rank: u64) -> u64 {
        if self.buckets.is_empty() {
            if rank < self.zeros {
                return 0;
            }
            self.fresh_splits();
            if let Ok(i) = self.known.binary_search_by_key(&rank, |&(r, _)| r) {
                return self.known[i].1;
            }
            let r = (rank - self.zeros) as usize;
            return if self.wide.is_empty() {
                u64::from(select(&mut self.narrow, &mut self.splits, r))
            } else {
                select(&mut self.wide, &mut self.splits, r)
            };
        }
        let mut seen = 0;
        for (b, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen > rank {
                return bucket_value(b).min(self.max);
            }
        }
        self.max
    }

    /// Drops the selection positions a push or an absorb made stale.
    fn fresh_splits(&mut self) {
        if self.splits_of != self.count {
            self.splits.clear();
            self.known.clear();
            self.splits_of = self.count;
        }
    }

    /// Selects the nearest-rank quantiles `qs` and, with `median`, the upper
    /// median, in the order that costs least (see [`selection_order`]), so that
    /// asking them afterwards one by one ([`Self::quantile_ms`],
    /// [`Self::median_ms`]), in any order, finds each already in place. The
    /// values are the same whatever the order; only the work differs.
    pub fn select_for(&mut self, qs: &[f64], median: bool) {
        if self.count == 0 || !self.buckets.is_empty() {
            return;
        }
        self.fresh_splits();
        let mut ranks = self.held_ranks(qs, median);
        // ranks another statistic selected need nothing
        let zeros = self.zeros;
        let known = &self.known;
        ranks.retain(|&h| {
            known
                .binary_search_by_key(&(h as u64 + zeros), |&(r, _)| r)
                .is_err()
        });
        ranks.sort_unstable();
        ranks.dedup();
        self.select_held(&ranks);
    }

    /// [`Self::select_for`] for each statistic of `group`, whose later members
    /// hold the same exact values in the same order as the first
    /// ([`Self::holds_as`]; their zeros, counted apart, may differ): every
    /// response and the answered ones when every other response took no time
    /// (a rejection at once), a lone server's responses when its clients got
    /// every answer in the order it gave them. The ranks they all ask are
    /// selected once, over the first's values; the others take the values of
    /// theirs from it (`known`), and their own values stay as they are.
    pub fn select_together(group: &mut [(&mut Samples, &[f64], bool)]) {
        let Some(((first, qs, median), rest)) = group.split_first_mut() else {
            return;
        };
        if first.count == 0 || !first.buckets.is_empty() {
            return;
        }
        let mut ranks = first.held_ranks(qs, *median);
        for (s, qs, median) in rest.iter() {
            debug_assert!(first.holds_as(s), "a group holds the same values");
            if s.count > 0 {
                ranks.extend(s.held_ranks(qs, *median));
            }
        }
        ranks.sort_unstable();
        ranks.dedup();
        first.select_held(&ranks);
        for (s, qs, median) in rest.iter_mut() {
            if s.count == 0 {
                continue;
            }
            s.fresh_splits();
            for h in s.held_ranks(qs, *median) {
                let v = if first.wide.is_empty() {
                    u64::from(first.narrow[h])
                } else {
                    first.wide[h]
                };
                s.known.push((h as u64 + s.zeros, v));
            }
            s.known.sort_unstable();
            s.known.dedup();
        }
    }

    /// Whether `self` and `other` are exact and hold the same values in the
    /// same order (their zeros, counted apart, may differ). Statistics of
    /// different sizes, sums or largest values differ at the first look.
    pub fn holds_as(&self, other: &Samples) -> bool {
        self.buckets.is_empty()
            && other.buckets.is_empty()
            && self.sum == other.sum
            && self.max == other.max
            && self.narrow == other.narrow
            && self.wide == other.wide
    }

    /// The ranks among the held values (zeros left out) of the nearest-rank
    /// quantiles `qs` and, with `median`, the upper median; ranks that fall on
    /// a zero need nothing and are left out. Unsorted; `count` must not be 0.
    fn held_ranks(&self, qs: &[f64], median: bool) -> Vec<usize> {
        let zeros = self.zeros;
        qs.iter()
            .map(|&q| self.rank_of(q))
            .chain(median.then_some(self.count / 2))
            .filter(|&r| r >= zeros)
            .map(|r| (r - zeros) as usize)
            .collect()
    }

    /// Selects the held ranks `ranks` (ascending, distinct) in the order that
    /// costs least between the positions earlier selections fixed.
    fn select_held(&mut self, ranks: &[usize]) {
        self.fresh_splits();
        // between two positions already fixed the ranks are a problem of their own
        let mut order = Vec::with_capacity(ranks.len());
        let mut fixed = Vec::with_capacity(ranks.len());
        let mut rest = ranks;
        while let Some(&first) = rest.first() {
            let (_, lo, hi) = stretch(&self.splits, first, self.held());
            let take = rest.partition_point(|&r| r < hi);
            let group = &rest[..take];
            // a rank on a fixed position (`hi`) needs nothing
            let skip = usize::from(rest.get(take) == Some(&hi));
            order.clear();
            selection_order(group, lo, hi, &mut order);
            if self.wide.is_empty() {
                select_tree(&mut self.narrow[lo..hi], lo, &order);
            } else {
                select_tree(&mut self.wide[lo..hi], lo, &order);
            }
            fixed.extend_from_slice(group);
            rest = &rest[take + skip..];
        }
        self.splits.extend(fixed.iter().map(|&r| r as u32));
        self.splits.sort_unstable();
    }

    /// The 0-based rank of the nearest-rank quantile `q`.
    fn rank_of(&self, q: f64) -> u64 {
        ((q * self.count as f64).ceil() as u64).clamp(1, self.count) - 1
    }

    /// [`Self::quantile_ms`] of each of `qs`: the same values, selected first
    /// by [`Self::select_for`] in the order that costs least.
    pub fn quantiles_ms(&mut self, qs: &[f64]) -> Vec<f64> {
        if self.count == 0 {
            return vec![0.0; qs.len()];
        }
        self.select_for(qs, false);
        qs.iter().map(|&q| self.quantile_ms(q)).collect()
    }

    /// Nearest-rank quantile: sorted[ceil(q n) - 1] (the seed's p95).
    pub fn quantile_ms(&mut self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        Ticks(self.at_rank(self.rank_of(q))).as_ms()
    }

    /// The values by histogram bucket ([`bucket_of`]): (bucket, values in it,
    /// the largest of them), in no particular order, a bucket possibly more
    /// than once (add them up). While the samples are exact the largest value
    /// is exact (many entries are a single value); once they are binned it is
    /// the bucket's upper edge, or the largest value of all in the top bucket
    /// (never below a value of the bucket). For pooling runs: one pass, no sort,
    /// not for the hot path.
    pub fn bucket_counts(&self) -> Vec<(u32, u64, u64)> {
        if !self.buckets.is_empty() {
            return self
                .buckets
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(b, &n)| (b as u32, n, bucket_value(b).min(self.max)))
                .collect();
        }
        let narrow = self.narrow.iter().map(|&x| u64::from(x));
        let values = narrow.chain(self.wide.iter().copied());
        if self.held() > DENSE_BUCKETS_FROM {
            // many values: counted into an array of the buckets up to the
            // largest value's (at most 65 x 1024), not one entry each
            let mut dense = vec![(0u64, 0u64); bucket_of(self.max) + 1];
            dense[0] = (self.zeros, 0);
            for v in values {
                let d = &mut dense[bucket_of(v)];
                *d = (d.0 + 1, d.1.max(v));
            }
            return (dense.into_iter().enumerate())
                .filter(|(_, (n, _))| *n > 0)
                .map(|(b, (n, max))| (b as u32, n, max))
                .collect();
        }
        let mut out = Vec::with_capacity(self.held() + 1);
        if self.zeros > 0 {
            out.push((0, self.zeros, 0));
        }
        out.extend(values.map(|v| (bucket_of(v) as u32, 1, v)));
        out
    }

    /// How many observations are above zero (exact: zero has a bucket of its own).
    pub fn count_positive(&self) -> u64 {
        if self.buckets.is_empty() {
            self.count - self.zeros
        } else {
            self.count - self.buckets[0]
        }
    }

    /// The upper median sorted[n / 2] (the seed's median).
    pub fn median_ms(&mut self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        Ticks(self.at_rank(self.count / 2)).as_ms()
    }
}

/// Where rank `r` stands among the fixed positions `splits` (ascending) of `len`
/// values: the index in `splits` of the first position at or after `r`, and the
/// stretch `lo..hi` between the fixed positions around it (`hi` is `r` itself
/// when `r` is fixed, `len` when no position follows).
fn stretch(splits: &[u32], r: usize, len: usize) -> (usize, usize, usize) {
    let i = splits.partition_point(|&p| (p as usize) < r);
    let lo = if i == 0 {
        0
    } else {
        splits[i - 1] as usize + 1
    };
    let hi = splits.get(i).map_or(len, |&p| p as usize);
    (i, lo, hi)
}

/// The value of 0-based rank `r` of `v`, selected in place between the nearest
/// positions in `splits` (see [`Samples`]), which then holds `r` too.
fn select<T: Ord + Copy>(v: &mut [T], splits: &mut Vec<u32>, r: usize) -> T {
    let (i, lo, hi) = stretch(splits, r, v.len());
    if hi == r {
        // a position already fixed
        return v[r];
    }
    v[lo..hi].select_nth_unstable(r - lo);
    // below EXACT_CAP (2^20): a position fits in u32
    splits.insert(i, r as u32);
    v[r]
}

/// Below this many values on either side of a selected position, the selections
/// left on the two sides run one after the other rather than on two cores (a
/// selection over fewer values takes less time than handing it to another core).
const PARALLEL_MIN: usize = 1 << 16;

/// Selects the ranks `order` in `v`, which holds the positions `lo..lo + v.len()`
/// (none of them fixed), in that order: the first over all of `v`, and each
/// later one over the stretch between the positions fixed before it. The two
/// sides of the first share nothing, so they run on two cores (rayon) when both
/// are large; each side still sees its ranks in `order`'s order, so the values
/// end where the same selections made one by one put them.
fn select_tree<T: Ord + Copy + Send>(v: &mut [T], lo: usize, order: &[usize]) {
    let Some((&first, rest)) = order.split_first() else {
        return;
    };
    let (below, _, above) = v.select_nth_unstable(first - lo);
    let left: Vec<usize> = rest.iter().copied().filter(|&r| r < first).collect();
    let right: Vec<usize> = rest.iter().copied().filter(|&r| r > first).collect();
    if below.len().min(above.len()) >= PARALLEL_MIN && !left.is_empty() && !right.is_empty() {
        rayon::join(
            || select_tree(below, lo, &left),
            || select_tree(above, first + 1, &right),
        );
    } else {
        select_tree(below, lo, &left);
        select_tree(above, first + 1, &right);
    }
}

/// Appends to `order` the ranks `ranks` (ascending, distinct, all within the
/// positions `lo..hi` that nothing fixed yet) in the order whose selections cost
/// least: a selection works on the whole stretch between the two nearest
/// positions fixed before it, so its cost is that stretch's length, and the
/// cheapest order (an optimal split, as for a search tree) is found for every
/// run of ranks from the shorter runs up. A tail-heavy set such as p50, p90,
/// p95, p99 then costs about 1.65 n instead of 2.45 n in the order a table
/// asks it, and `latency_cdf`'s 19 about 3.9 n instead of 4.5 n middle first.
/// Past 48 ranks (never asked; cubic work) the middle rank goes first.
fn selection_order(ranks: &[usize], lo: usize, hi: usize, order: &mut Vec<usize>) {
    let k = ranks.len();
    if k == 0 {
        return;
    }
    if k > 48 {
        let mid = k / 2;
        order.push(ranks[mid]);
        selection_order(&ranks[..mid], lo, ranks[mid], order);
        selection_order(&ranks[mid + 1..], ranks[mid] + 1, hi, order);
        return;
    }
    // the stretch the ranks i..j lie in once their neighbours are fixed
    let from = |i: usize| if i == 0 { lo } else { ranks[i - 1] + 1 };
    let to = |j: usize| if j == k { hi } else { ranks[j] };
    let at = |i: usize, j: usize| i * (k + 1) + j;
    let mut cost = vec![0usize; (k + 1) * (k + 1)];
    let mut first = vec![0usize; (k + 1) * (k + 1)];
    for len in 1..=k {
        for i in 0..=k - len {
            let j = i + len;
            let (mut best, mut arg) = (usize::MAX, i);
            for m in i..j {
                let c = cost[at(i, m)] + cost[at(m + 1, j)];
                if c < best {
                    (best, arg) = (c, m);
                }
            }
            cost[at(i, j)] = best + (to(j) - from(i));
            first[at(i, j)] = arg;
        }
    }
    let mut pending = vec![(0, k)];
    while let Some((i, j)) = pending.pop() {
        if i < j {
            let m = first[at(i, j)];
            order.push(ranks[m]);
            pending.push((m + 1, j));
            pending.push((i, m));
        }
    }
}

/// The note under a table whose percentiles came (partly) from the histogram, or
/// None while every statistic in `samples` is exact.
pub fn approximate_note<'a>(samples: impl IntoIterator<Item = &'a Samples>) -> Option<String> {
    samples.into_iter().any(|s| !s.is_exact()).then(|| {
        format!(
            "percentiles are nearest rank (p = sorted[ceil(p n) - 1], median = sorted[n/2]); \
             past {EXACT_CAP} values of a statistic they come from a log-linear histogram: \
             never below the true value and at most 0.1 % (1/1024) above it"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every percentile selected in place equals the sorted copy's, for wide,
    /// narrow, constant and heavy-tailed values, asked one by one in any order or
    /// many at once, with values pushed between the questions.
    #[test]
    fn selected_percentiles_equal_a_sorted_copy() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let shapes: [&dyn Fn(u64) -> u64; 5] = [
            &|r| r % 1_000_000_000,
            &|r| 40_000_000 + r % 5_000,
            &|_| 7,
            &|r| {
                if r % 100 == 0 {
                    r % (1 << 50)
                } else {
                    r % 10_000
                }
            },
            &|r| {
                if r % 3 == 0 {
                    0
                } else {
                    1_000 + r % 300_000_000
                }
            },
        ];
        for (i, shape) in shapes.iter().enumerate() {
            for n in [1usize, 2, 100, 5_000, 20_000] {
                let mut s = Samples::default();
                let mut all = Vec::new();
                for round in 0..2 {
                    for _ in 0..n {
                        let v = shape(next());
                        all.push(v);
                        s.push(Ticks(v));
                    }
                    let mut want = all.clone();
                    want.sort_unstable();
                    for k in 0..40u64 {
                        let rank = (next() % want.len() as u64) as usize;
                        let rank = if k == 0 {
                            want.len() - 1
                        } else if k == 1 {
                            0
                        } else {
                            rank
                        };
                        assert_eq!(
                            s.at_rank(rank as u64),
                            want[rank],
                            "shape {i}, n {n}, round {round}, rank {rank}"
                        );
                    }
                    let qs = [0.3, 0.0, 0.999, 0.5, 0.05, 1.0, 0.5, 0.9];
                    let many = s.clone().quantiles_ms(&qs);
                    for (q, got) in qs.iter().zip(many) {
                        let rank =
                            ((q * want.len() as f64).ceil() as usize).clamp(1, want.len()) - 1;
                        assert_eq!(got, Ticks(want[rank]).as_ms(), "shape {i}, n {n}, q {q}");
                    }
                }
            }
        }
    }

    /// Statistics that hold the same values with different zeros, selected
    /// together: each answers every percentile (asked ahead or not, before and
    /// after more pushes) as a sorted copy of its own values would, the second
    /// without selecting over its own values for the ranks asked ahead; one
    /// holding other values is not taken for the same.
    #[test]
    fn statistics_selected_together_answer_as_their_own_sorted_copies() {
        let values: Vec<u64> = (0..30_000u64).map(|i| (i * 7_919) % 50_021 + 1).collect();
        let (mut all, mut answered) = (Samples::default(), Samples::default());
        for (i, &v) in values.iter().enumerate() {
            if i % 10 == 0 {
                all.push(Ticks::ZERO);
            }
            all.push(Ticks(v));
            answered.push(Ticks(v));
        }
        answered.push(Ticks::ZERO);
        let mut other = answered.clone();
        other.push(Ticks(3));
        assert!(all.holds_as(&answered) && answered.holds_as(&all));
        assert!(!all.holds_as(&other), "one more value");
        let want = |s: &Samples, extra: &[u64]| {
            let mut v = values.clone();
            v.extend(std::iter::repeat_n(0, s.zeros as usize));
            v.extend_from_slice(extra);
            v.sort_unstable();
            v
        };
        let cdf = [0.1, 0.5, 0.9, 0.99];
        let asked = [0.5, 0.999];
        Samples::select_together(&mut [(&mut all, &cdf, true), (&mut answered, &asked, false)]);
        assert!(
            answered.splits.is_empty(),
            "the second selected nothing itself"
        );
        let at = |sorted: &[u64], q: f64| {
            let r = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
            Ticks(sorted[r]).as_ms()
        };
        let (want_all, want_answered) = (want(&all, &[]), want(&answered, &[]));
        for q in asked {
            assert_eq!(
                answered.quantile_ms(q),
                at(&want_answered, q),
                "answered, q {q}"
            );
        }
        assert!(
            answered.splits.is_empty(),
            "what was asked ahead needs no selection"
        );
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0, 0.37] {
            assert_eq!(all.quantile_ms(q), at(&want_all, q), "all, q {q}");
            assert_eq!(
                answered.quantile_ms(q),
                at(&want_answered, q),
                "answered, q {q}"
            );
        }
        let upper_median = Ticks(want_answered[want_answered.len() / 2]).as_ms();
        assert_eq!(answered.median_ms(), upper_median);
        // a push makes what was selected for it stale
        answered.push(Ticks(60_000));
        let after = want(&answered, &[60_000]);
        for q in [0.5, 0.999, 1.0] {
            assert_eq!(
                answered.quantile_ms(q),
                at(&after, q),
                "after a push, q {q}"
            );
        }
    }

    /// [`Samples::select_for`] fixes every asked rank (and the upper median)
    /// whatever was fixed before, and the values asked afterwards equal a sorted
    /// copy's.
    #[test]
    fn selecting_for_a_set_fixes_its_ranks() {
        let mut x = 77u64;
        for n in [1u64, 2, 9, 1_000, 4_096] {
            for before in [&[][..], &[0.5][..], &[0.9, 0.0][..], &[1.0, 0.95][..]] {
                let mut s = Samples::default();
                let mut want = Vec::new();
                for _ in 0..n {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    // above zero: zeros are counted, never at a position
                    let v = 1 + (x >> 44) % 5_000;
                    want.push(v);
                    s.push(Ticks(v));
                }
                want.sort_unstable();
                for &q in before {
                    s.quantile_ms(q);
                }
                let qs = [0.99, 0.0, 0.95, 0.9, 0.9, 1.0, 0.999];
                s.select_for(&qs, true);
                let mut fixed: Vec<usize> = qs.iter().map(|&q| s.rank_of(q) as usize).collect();
                fixed.push(n as usize / 2);
                for r in fixed {
                    assert!(
                        s.splits.contains(&(r as u32)),
                        "n {n}, {before:?}: rank {r}"
                    );
                }
                let splits = s.splits.clone();
                for q in qs {
                    let rank = ((q * n as f64).ceil() as usize).clamp(1, n as usize) - 1;
                    assert_eq!(s.quantile_ms(q), Ticks(want[rank]).as_ms(), "n {n}, q {q}");
                }
                assert_eq!(s.median_ms(), Ticks(want[n as usize / 2]).as_ms());
                assert_eq!(s.splits, splits, "nothing left to select");
            }
        }
    }

    /// Past [`PARALLEL_MIN`] values on both sides, [`Samples::select_for`]
    /// selects the two sides of its first rank on two cores: the values asked
    /// equal a sorted copy's, and every value ends where the same selections
    /// made one by one, in the same order, put it.
    #[test]
    fn selections_on_two_cores_end_as_one_by_one() {
        let n = 6 * PARALLEL_MIN;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut s = Samples::default();
        let mut want = Vec::with_capacity(n);
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x % 3_000_000;
            want.push(v);
            s.push(Ticks(v));
        }
        let mut one_by_one = s.clone();
        want.sort_unstable();
        let qs = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999];
        s.select_for(&qs, true);
        // the same order, one selection at a time on one core
        let mut ranks: Vec<usize> = qs.iter().map(|&q| s.rank_of(q) as usize).collect();
        ranks.push(n / 2);
        ranks.sort_unstable();
        ranks.dedup();
        let mut order = Vec::new();
        selection_order(&ranks, 0, n, &mut order);
        for &r in &order {
            one_by_one.at_rank(r as u64);
        }
        assert!(
            order[0] > PARALLEL_MIN && n - order[0] > PARALLEL_MIN,
            "the first selection leaves two large sides"
        );
        assert_eq!(s.narrow, one_by_one.narrow, "the same arrangement");
        assert_eq!(s.splits, one_by_one.splits, "the same positions fixed");
        for &r in &ranks {
            assert_eq!(u64::from(s.narrow[r]), want[r], "rank {r}");
        }
    }

    /// The order [`selection_order`] gives costs (the stretches its selections
    /// work on) no more than the best of every order, found by trying them all.
    #[test]
    fn the_selection_order_is_the_cheapest() {
        fn cost(order: &[usize], lo: usize, hi: usize) -> usize {
            let mut fixed: Vec<usize> = Vec::new();
            let mut total = 0;
            for &r in order {
                let i = fixed.partition_point(|&p| p < r);
                let from = if i == 0 { lo } else { fixed[i - 1] + 1 };
                total += fixed.get(i).copied().unwrap_or(hi) - from;
                fixed.insert(i, r);
            }
            total
        }
        fn every_order(rest: &mut Vec<usize>, now: &mut Vec<usize>, f: &mut dyn FnMut(&[usize])) {
            if rest.is_empty() {
                f(now);
            }
            for i in 0..rest.len() {
                let r = rest.remove(i);
                now.push(r);
                every_order(rest, now, f);
                now.pop();
                rest.insert(i, r);
            }
        }
        let (lo, hi) = (10, 1_010);
        for ranks in [
            vec![500],
            vec![10, 1_009],
            vec![505, 900, 950, 990],
            vec![11, 20, 60, 500, 990, 1_000],
            vec![100, 200, 300, 400, 500, 600],
        ] {
            let mut order = Vec::new();
            selection_order(&ranks, lo, hi, &mut order);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, ranks, "each rank once");
            let mut best = usize::MAX;
            every_order(&mut ranks.clone(), &mut Vec::new(), &mut |o| {
                best = best.min(cost(o, lo, hi));
            });
            assert_eq!(cost(&order, lo, hi), best, "{ranks:?}: {order:?}");
        }
        // past 48 ranks the middle goes first: still every rank once, and a
        // selection of them all fixes each
        let many: Vec<usize> = (0..60).map(|i| 12 + i * 16).collect();
        let mut order = Vec::new();
        selection_order(&many, lo, hi, &mut order);
        assert_eq!(order[0], many[30]);
        order.sort_unstable();
        assert_eq!(order, many);
        let mut s = Samples::default();
        for i in 0..1_000u64 {
            s.push(Ticks(1 + i * 7_919 % 1_000));
        }
        let qs: Vec<f64> = (0..60).map(|i| f64::from(i) / 60.0).collect();
        s.select_for(&qs, false);
        assert_eq!(s.splits.len(), 60);
        for q in qs {
            let rank = ((q * 1_000.0).ceil() as u64).clamp(1, 1_000) - 1;
            assert_eq!(s.quantile_ms(q), Ticks(rank + 1).as_ms());
        }
        // p50, p90, p95, p99 of a million: 1.65 n, not 2.45 n in the table's order
        let n = 1_000_000;
        let ranks = [n / 2, 9 * n / 10, 95 * n / 100, 99 * n / 100];
        let mut order = Vec::new();
        selection_order(&ranks, 0, n, &mut order);
        assert!(cost(&order, 0, n) <= 1_650_000, "{order:?}");
        assert!(cost(&[ranks[2], ranks[3], ranks[0], ranks[1]], 0, n) > 2_400_000);
    }

    /// Absorbing equals pushing, below the cap and past it (either side), with
    /// 32-bit values, 64-bit ones (from 2^32 ticks) on either side, or both.
    #[test]
    fn absorbing_equals_pushing_the_same_values() {
        let big = 1u64 << 33;
        for (a, b, left_big, right_big) in [
            (10u64, 20u64, 0, 0),
            (EXACT_CAP as u64 - 5, 20, 0, 0),
            (20, EXACT_CAP as u64 + 3, 0, 0),
            (10, 20, 0, big),
            (10, 20, big, 0),
            (EXACT_CAP as u64 - 5, 20, big, big),
        ] {
            let (mut left, mut right, mut all) =
                (Samples::default(), Samples::default(), Samples::default());
            for i in 0..a {
                left.push(Ticks(i * 7 % 1000 + left_big));
                all.push(Ticks(i * 7 % 1000 + left_big));
            }
            for i in 0..b {
                right.push(Ticks(i * 13 % 5000 + 3 + right_big));
                all.push(Ticks(i * 13 % 5000 + 3 + right_big));
            }
            left.absorb(&right);
            assert_eq!(left.count(), all.count());
            assert_eq!(left.is_exact(), all.is_exact(), "{a} + {b}");
            assert_eq!(left.sum_ms(), all.sum_ms());
            assert_eq!(left.min_ms(), all.min_ms());
            assert_eq!(left.max_ms(), all.max_ms());
            for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
                assert_eq!(left.quantile_ms(q), all.quantile_ms(q), "{a} + {b}: q {q}");
            }
            assert_eq!(left.count_positive(), all.count_positive());
        }
    }

    #[test]
    fn log_buckets_hold_every_value_between_their_edges() {
        for v in (0..5000u64).chain([1 << 20, 123_456_789, 999_999_999, u64::MAX / 3]) {
            let b = bucket_of(v);
            assert!(bucket_low(b) <= v && v <= bucket_value(b), "{v}");
            assert_eq!(bucket_of(bucket_low(b)), b);
            assert_eq!(bucket_of(bucket_value(b)), b);
            assert!(
                bucket_value(b) - bucket_low(b) <= bucket_low(b) / 1024,
                "{v}"
            );
        }
        // added up by bucket: (bucket, count, largest)
        let total = |s: &Samples| {
            let mut m = std::collections::BTreeMap::new();
            for (b, n, max) in s.bucket_counts() {
                let e: &mut (u64, u64) = m.entry(b).or_default();
                *e = (e.0 + n, e.1.max(max));
            }
            m.into_iter()
                .map(|(b, (n, max))| (b, n, max))
                .collect::<Vec<_>>()
        };
        let mut s = Samples::default();
        for v in [0, 5, 5, 0, 1_000_000, 1_000_300, 2_000_000_000] {
            s.push(Ticks(v));
        }
        // 1,000,000 and 1,000,300 share a bucket (width 512 ns there)
        assert_eq!(
            total(&s),
            [
                (0, 2, 0),
                (5, 2, 5),
                (bucket_of(1_000_000) as u32, 2, 1_000_300),
                (bucket_of(2_000_000_000) as u32, 1, 2_000_000_000)
            ]
        );
        // many values: added up per bucket, the same totals
        let mut many = Samples::default();
        let mut sorted = Vec::new();
        for i in 0..(DENSE_BUCKETS_FROM as u64 + 10) {
            let v = (i * 7919 % 100_003) * 1013;
            many.push(Ticks(v));
            sorted.push(v);
        }
        sorted.sort_unstable();
        let mut want: Vec<(u32, u64, u64)> = Vec::new();
        for v in sorted {
            let b = bucket_of(v) as u32;
            match want.last_mut() {
                Some(l) if l.0 == b => (l.1, l.2) = (l.1 + 1, v),
                _ => want.push((b, 1, v)),
            }
        }
        assert!(many.bucket_counts().len() < DENSE_BUCKETS_FROM);
        assert_eq!(total(&many), want);
        // binned: counts kept, the largest value an upper edge (or the maximum)
        let mut big = Samples::default();
        for i in 0..=EXACT_CAP as u64 {
            big.push(Ticks(5000 + i % 7919));
        }
        assert!(!big.is_exact());
        let b = total(&big);
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), big.count());
        assert_eq!(b.last().map(|x| x.2), Some(5000 + 7918));
        assert!(b.iter().all(|&(k, _, max)| bucket_of(max) == k as usize));
    }

    #[test]
    fn positive_values_are_counted_exactly_before_and_after_the_cap() {
        let mut s = Samples::default();
        for v in [0, 3, 0, 7] {
            s.push(Ticks(v));
        }
        assert_eq!(s.count_positive(), 2);
        for i in 0..EXACT_CAP as u64 {
            s.push(Ticks(i % 2));
        }
        assert!(!s.is_exact());
        assert_eq!(s.count_positive(), 2 + EXACT_CAP as u64 / 2);
    }

    #[test]
    fn exact_order_statistics_follow_the_seed_definitions() {
        let mut s = Samples::default();
        for v in [5, 1, 4, 2, 3, 6] {
            s.push(Ticks::from_ms(v as f64));
        }
        assert_eq!(s.median_ms(), 4.0, "upper median sorted[n/2]");
        assert_eq!(
            s.quantile_ms(0.95),
            6.0,
            "sorted[ceil(0.95*6)-1] = sorted[5]"
        );
        assert_eq!(s.quantile_ms(0.5), 3.0);
        assert_eq!(s.mean_ms(), 3.5);
        assert_eq!(s.max_ms(), 6.0);
    }

    #[test]
    fn histogram_buckets_bound_the_relative_error() {
        for v in [
            0u64,
            1,
            1023,
            1024,
            1025,
            40_000_000,
            112_953_200,
            u64::MAX / 4,
        ] {
            let b = bucket_of(v);
            let up = bucket_value(b);
            assert!(up >= v, "{v} -> {up}");
            assert!((up - v) as f64 <= v as f64 / 1024.0 + 1.0, "{v} -> {up}");
        }
    }

    /// Zeros are counted, not held, and every question reads as if they were
    /// held: percentiles (one by one and selected together), positives, an
    /// absorb, and the move into the histogram at the same count as before.
    #[test]
    fn zeros_are_counted_not_held() {
        let values: Vec<u64> = (0..10_000u64)
            .map(|i| {
                if i % 10 < 7 {
                    0
                } else {
                    1 + (i * 7_919) % 100_000
                }
            })
            .collect();
        let mut s = Samples::default();
        for &v in &values {
            s.push(Ticks(v));
        }
        assert_eq!((s.zeros, s.held()), (7_000, 3_000));
        assert_eq!(s.count_positive(), 3_000);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let qs = [0.5, 0.69, 0.7, 0.71, 0.9, 0.99, 1.0];
        let mut together = s.clone();
        let got = together.quantiles_ms(&qs);
        for (q, g) in qs.iter().zip(got) {
            let rank = ((q * 10_000.0_f64).ceil() as usize).clamp(1, 10_000) - 1;
            assert_eq!(Ticks::from_ms(g).0, sorted[rank], "q {q}");
            assert_eq!(s.quantile_ms(*q), g, "q {q} one by one");
        }
        assert_eq!(Ticks::from_ms(s.median_ms()).0, sorted[5_000]);
        // an absorb keeps the other's zeros
        let mut both = s.clone();
        both.absorb(&s);
        assert_eq!(
            (both.zeros, both.held(), both.count()),
            (14_000, 6_000, 20_000)
        );
        assert_eq!(Ticks::from_ms(both.quantile_ms(0.7)).0, 0);
        assert!(both.quantile_ms(0.7001) > 0.0);
        // the histogram takes over after EXACT_CAP values, zeros included
        let mut big = Samples::default();
        for i in 0..EXACT_CAP as u64 {
            big.push(Ticks(i % 2));
        }
        assert!(big.is_exact());
        assert_eq!(big.held(), EXACT_CAP / 2);
        big.push(Ticks(0));
        assert!(!big.is_exact());
        assert_eq!(big.buckets[0], EXACT_CAP as u64 / 2 + 1);
        assert_eq!(big.count_positive(), EXACT_CAP as u64 / 2);
        let mut small = Samples::default();
        small.push(Ticks(0));
        big.absorb(&small);
        assert_eq!(big.buckets[0], EXACT_CAP as u64 / 2 + 2);
    }

    /// Past the cap the exact values never take more than `EXACT_CAP` slots, and
    /// every percentile of the histogram is within its stated bound: never below
    /// the true value, at most 1/1024 of it (plus one tick) above.
    #[test]
    fn past_the_cap_memory_stays_flat_and_percentiles_stay_within_the_bound() {
        let n = EXACT_CAP as u64 + 5_000;
        let mut s = Samples::default();
        let mut all = Vec::with_capacity(n as usize);
        let mut x = 12_345u64;
        for i in 0..n {
            // a spread of magnitudes: 0 to ~300 ms in ns, deterministic
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let v = (x >> 40) * ((i % 7) + 1) * 3;
            all.push(v);
            s.push(Ticks(v));
            if s.count() == EXACT_CAP as u64 {
                assert!(s.is_exact());
                assert_eq!(s.narrow.capacity(), EXACT_CAP, "no growth past the cap");
            }
        }
        assert!(!s.is_exact());
        let exact = Samples::default();
        assert_eq!(approximate_note([&exact]), None);
        let note = approximate_note([&exact, &s]).unwrap_or_default();
        assert!(note.contains("at most 0.1 %"), "{note}");
        assert_eq!(s.narrow.capacity(), 0, "the exact values were released");
        assert_eq!(s.wide.capacity(), 0, "the exact values were released");
        assert!(s.buckets.len() <= 65 << SUB_BITS);
        all.sort_unstable();
        for q in [0.01, 0.5, 0.95, 0.99, 0.999, 1.0] {
            let rank = ((q * n as f64).ceil() as usize).clamp(1, all.len()) - 1;
            let truth = all[rank];
            let got = Ticks::from_ms(s.quantile_ms(q)).0;
            assert!(got >= truth, "q {q}: {got} < {truth}");
            assert!(got - truth <= truth / 1024 + 1, "q {q}: {got} vs {truth}");
        }
        assert_eq!(s.count(), n);
        assert_eq!(Ticks::from_ms(s.max_ms()).0, all[all.len() - 1]);
        assert_eq!(Ticks::from_ms(s.min_ms()).0, all[0]);
    }

    #[test]
    fn time_average_weights_levels_by_duration() {
        let mut a = TimeAverage::default();
        a.add(Ticks(0), 2);
        a.add(Ticks(10), -1);
        assert_eq!(a.mean(Ticks(20)), 1.5);
    }

    /// The area from the changes' moments equals the area summed interval by
    /// interval (level x time since the last change), to the last bit, on
    /// random walks of +1 / -1 and larger steps, ties at one time included,
    /// read after the last change and before it (then the area counts up to
    /// the last change, as the interval sum did).
    #[test]
    fn time_average_equals_the_interval_sum() {
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200 {
            let mut fast = TimeAverage::default();
            let (mut now, mut level, mut last, mut area) = (0u64, 0u64, 0u64, 0u128);
            for _ in 0..(next() % 500) {
                now += next() % 3 * (next() % 5_000_000_000);
                let delta = match next() % 4 {
                    0 | 1 => 1i64,
                    2 if level > 0 => -1,
                    _ => (next() % 7) as i64 - level.min(3) as i64,
                };
                area += u128::from(now - last) * u128::from(level);
                last = now;
                level = level
                    .checked_add_signed(delta)
                    .expect("the walk stays >= 0");
                fast.add(Ticks(now), delta);
            }
            assert_eq!(fast.level(), level);
            for until in [now, now + 1, now + next() % 1_000_000_000, now / 2] {
                let counted = if until >= last {
                    area + u128::from(until - last) * u128::from(level)
                } else {
                    area
                };
                let want = if until == 0 {
                    0.0
                } else {
                    counted as f64 / until as f64
                };
                assert_eq!(fast.mean(Ticks(until)), want, "until {until}");
            }
        }
    }
}
