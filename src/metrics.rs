//! Streaming statistics: nothing here grows with the number of events, and only
//! [`Samples`] grows with the number of observations, up to a fixed cap.

use crate::engine::Ticks;

/// Time-weighted average of a level that changes at event times (requests in flight,
/// busy slots): the area under the curve divided by the elapsed time.
#[derive(Debug, Clone, Default)]
pub struct TimeAverage {
    last: Ticks,
    level: u64,
    area: u128,
}

impl TimeAverage {
    pub fn add(&mut self, now: Ticks, delta: i64) {
        self.advance(now);
        self.level = self.level.saturating_add_signed(delta);
    }

    fn advance(&mut self, now: Ticks) {
        let dt = now.saturating_sub(self.last).0;
        self.area += u128::from(dt) * u128::from(self.level);
        self.last = self.last.max(now);
    }

    pub fn level(&self) -> u64 {
        self.level
    }

    /// The average level over [0, until].
    pub fn mean(&self, until: Ticks) -> f64 {
        let mut a = self.clone();
        a.advance(until);
        if until.0 == 0 {
            0.0
        } else {
            a.area as f64 / until.0 as f64
        }
    }
}

/// Above this many observations [`Samples`] switches from exact values to a
/// log-linear histogram.
pub const EXACT_CAP: usize = 1 << 20;

/// Sub-buckets per power of two in the histogram: relative error <= 1/1024.
const SUB_BITS: u32 = 10;

/// Observations (ticks) for exact order statistics, falling back to a log-linear
/// histogram (relative error below 0.1 %) past [`EXACT_CAP`] values so memory stays
/// flat. Count, sum, min and max stay exact either way.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    exact: Vec<u64>,
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

fn bucket_of(v: u64) -> usize {
    if v < (1 << SUB_BITS) {
        return v as usize;
    }
    let exp = 63 - v.leading_zeros();
    let shift = exp - SUB_BITS;
    let sub = (v >> shift) as usize & ((1 << SUB_BITS) - 1);
    (((shift + 1) as usize) << SUB_BITS) + sub
}

/// The upper edge of a bucket: reported values never understate.
fn bucket_value(b: usize) -> u64 {
    let group = b >> SUB_BITS;
    if group == 0 {
        return b as u64;
    }
    let shift = (group - 1) as u32;
    let sub = (b & ((1 << SUB_BITS) - 1)) as u64;
    (((1u64 << SUB_BITS) + sub) << shift) + ((1u64 << shift) - 1)
}

impl Samples {
    pub fn push(&mut self, t: Ticks) {
        let v = t.0;
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += u128::from(v);
        if self.buckets.is_empty() {
            self.exact.push(v);
            if self.exact.len() > EXACT_CAP {
                for x in std::mem::take(&mut self.exact) {
                    self.bin(x);
                }
            }
        } else {
            self.bin(v);
        }
    }

    fn bin(&mut self, v: u64) {
        let b = bucket_of(v);
        if self.buckets.len() <= b {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// True while every order statistic is exact.
    pub fn is_exact(&self) -> bool {
        self.buckets.is_empty()
    }

    pub fn mean_ms(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        (self.sum as f64 / self.count as f64) / crate::engine::Ticks::from_ms(1.0).0 as f64
    }

    pub fn max_ms(&self) -> f64 {
        Ticks(self.max).as_ms()
    }

    pub fn min_ms(&self) -> f64 {
        Ticks(self.min).as_ms()
    }

    pub fn sum_ms(&self) -> f64 {
        self.sum as f64 / crate::engine::Ticks::from_ms(1.0).0 as f64
    }

    /// The value of 0-based rank `rank` in sorted order.
    fn at_rank(&mut self, rank: u64) -> u64 {
        if self.buckets.is_empty() {
            let r = rank as usize;
            let (_, v, _) = self.exact.select_nth_unstable(r);
            return *v;
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

    /// Nearest-rank quantile: sorted[ceil(q n) - 1] (the seed's p95).
    pub fn quantile_ms(&mut self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count) - 1;
        Ticks(self.at_rank(rank)).as_ms()
    }

    /// The upper median sorted[n / 2] (the seed's median).
    pub fn median_ms(&mut self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        Ticks(self.at_rank(self.count / 2)).as_ms()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn time_average_weights_levels_by_duration() {
        let mut a = TimeAverage::default();
        a.add(Ticks(0), 2);
        a.add(Ticks(10), -1);
        assert_eq!(a.mean(Ticks(20)), 1.5);
    }
}
