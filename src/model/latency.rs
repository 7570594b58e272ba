//! Latency models: how long a dependency, a server or a delay takes.

use crate::engine::Ticks;

/// A file a latency model was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyFile {
    /// As written in the scenario.
    pub written: String,
    /// Resolved against the scenario file's folder.
    pub path: std::path::PathBuf,
}

/// A latency model; values in ticks, distributions in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Latency {
    /// `constant`: always this value.
    Constant(Ticks),
    /// `cycle`: the values in order, wrapping.
    Cycle {
        /// The values, in order.
        values: Vec<Ticks>,
        /// `start = "random"`: each replication starts at a random position.
        random_start: bool,
    },
    /// `empirical`: independent draws from these values.
    Empirical(Vec<Ticks>),
    /// `empirical` with `fit_tail_above`: the values (sorted), those above
    /// the quantile replaced by a fitted generalized Pareto tail.
    Tail(Box<FittedTail>),
    /// `exponential`.
    Exponential {
        /// Mean, in ms.
        mean_ms: f64,
    },
    /// `uniform` between two bounds.
    Uniform {
        /// Lower bound, in ms.
        min_ms: f64,
        /// Upper bound, in ms.
        max_ms: f64,
    },
    /// exp(mu + sigma Z), in milliseconds.
    LogNormal {
        /// Mean of ln(ms).
        mu: f64,
        /// Standard deviation of ln(ms).
        sigma: f64,
    },
    /// Parts with cumulative weights normalised to end at 1.
    Mixture(Vec<(f64, Latency)>),
    /// Gamma with shape k and scale theta (ms): mean k theta. Erlang-k is an
    /// integer shape.
    Gamma {
        /// k.
        shape: f64,
        /// theta, in ms.
        scale_ms: f64,
    },
    /// Weibull with shape k and scale lambda (ms).
    Weibull {
        /// k.
        shape: f64,
        /// lambda, in ms.
        scale_ms: f64,
    },
    /// Pareto type I with shape alpha > 1 and minimum x_m (ms).
    Pareto {
        /// alpha.
        shape: f64,
        /// x_m, in ms.
        min_ms: f64,
    },
}

/// A latency model drawn from a file with few values above a percentile the
/// run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ThinTail {
    /// Its key path (`dependencies.db.latency`).
    pub key: String,
    /// The file, as written.
    pub file: String,
    /// Its values.
    pub values: usize,
}

impl ThinTail {
    /// The fewest values above a percentile that is not thin.
    pub const ENOUGH: usize = 10;
}

/// Measured values with a fitted tail: a draw picks one of `values`; one of
/// the first `keep` is taken as it is, any other is `threshold_ms` plus a
/// draw of the generalized Pareto distribution (`shape`, `scale_ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct FittedTail {
    /// The measured values, sorted.
    pub values: Vec<Ticks>,
    /// How many of them are kept (those at or below the quantile).
    pub keep: usize,
    /// Where the tail starts, ms.
    pub threshold_ms: f64,
    /// The tail's shape (xi) and scale (sigma, ms).
    pub shape: f64,
    /// See `shape`.
    pub scale_ms: f64,
}

impl Latency {
    /// Whether every value it gives is 0 (a constant 0, a cycle or list of
    /// zeros, a mixture of such).
    pub fn always_zero(&self) -> bool {
        match self {
            Latency::Constant(t) => *t == Ticks::ZERO,
            Latency::Cycle { values, .. } | Latency::Empirical(values) => {
                values.iter().all(|t| *t == Ticks::ZERO)
            }
            Latency::Tail(_) => false,
            Latency::Mixture(parts) => parts.iter().all(|(_, l)| l.always_zero()),
            _ => false,
        }
    }

    /// Whether it gives exactly 0 now and then (a constant 0, a cycle or list
    /// holding a 0, a mixture with such a part): a continuous model does not.
    pub fn can_be_zero(&self) -> bool {
        match self {
            Latency::Constant(t) => *t == Ticks::ZERO,
            Latency::Cycle { values, .. } | Latency::Empirical(values) => {
                values.contains(&Ticks::ZERO)
            }
            Latency::Tail(t) => t.values[..t.keep].contains(&Ticks::ZERO),
            Latency::Mixture(parts) => parts.iter().any(|(_, l)| l.can_be_zero()),
            _ => false,
        }
    }

    /// The mean in milliseconds (used to express waits in rounds of service).
    pub fn mean_ms(&self) -> f64 {
        fn avg(v: &[Ticks]) -> f64 {
            v.iter().map(|t| t.as_ms()).sum::<f64>() / v.len() as f64
        }
        match self {
            Latency::Constant(t) => t.as_ms(),
            Latency::Cycle { values, .. } | Latency::Empirical(values) => avg(values),
            Latency::Tail(t) => {
                let n = t.values.len() as f64;
                let tail = t.threshold_ms + t.scale_ms / (1.0 - t.shape);
                (avg(&t.values[..t.keep]) * t.keep as f64 + tail * (n - t.keep as f64)) / n
            }
            Latency::Exponential { mean_ms } => *mean_ms,
            Latency::Uniform { min_ms, max_ms } => (min_ms + max_ms) / 2.0,
            Latency::LogNormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Latency::Gamma { shape, scale_ms } => shape * scale_ms,
            Latency::Weibull { shape, scale_ms } => scale_ms * libm::tgamma(1.0 + 1.0 / shape),
            Latency::Pareto { shape, min_ms } => shape * min_ms / (shape - 1.0),
            Latency::Mixture(parts) => {
                let mut prev = 0.0;
                parts
                    .iter()
                    .map(|(cum, m)| {
                        let w = cum - prev;
                        prev = *cum;
                        w * m.mean_ms()
                    })
                    .sum()
            }
        }
    }
}
