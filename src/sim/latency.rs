//! Latency samplers: a model from the scenario plus the state it needs (a cycle's
//! position). Each dependency or server owns one and draws from its own stream.

use crate::engine::{Stream, Ticks};
use crate::model::Latency;
use rand::RngExt;
use rand_distr::{Distribution, Exp, Gamma, LogNormal, Pareto, StandardNormal, Weibull};

/// A latency model with its draw state (a cycle's position).
#[derive(Debug, Clone)]
pub enum Sampler {
    /// Always this value.
    Constant(Ticks),
    /// The values in order, wrapping.
    Cycle {
        /// The values, in order.
        values: Vec<Ticks>,
        /// Index of the next value.
        pos: usize,
    },
    /// Independent draws from these values.
    Empirical(Vec<Ticks>),
    /// Measured values with a fitted tail.
    Tail(Box<crate::model::FittedTail>),
    /// Exponential, in ms.
    Exponential(Exp<f64>),
    /// Uniform between two bounds.
    Uniform {
        /// Lower bound, in ms.
        min_ms: f64,
        /// Upper bound, in ms.
        max_ms: f64,
    },
    /// Lognormal, in ms.
    LogNormal(LogNormal<f64>),
    /// A part picked by weight: (cumulative weight, part).
    Mixture(Vec<(f64, Sampler)>),
    /// Gamma, in ms.
    Gamma(Gamma<f64>),
    /// Weibull, in ms.
    Weibull(Weibull<f64>),
    /// Pareto type I, in ms.
    Pareto(Pareto<f64>),
}

impl Sampler {
    /// The sampler of `model`; a cycle with `start = "random"` draws its first
    /// position from `rng`.
    pub fn new(model: &Latency, rng: &mut Stream) -> Sampler {
        match model {
            Latency::Constant(t) => Sampler::Constant(*t),
            Latency::Cycle {
                values,
                random_start,
            } => Sampler::Cycle {
                values: values.clone(),
                pos: if *random_start {
                    rng.random_range(0..values.len())
                } else {
                    0
                },
            },
            Latency::Empirical(v) => Sampler::Empirical(v.clone()),
            Latency::Tail(t) => Sampler::Tail(t.clone()),
            Latency::Exponential { mean_ms } => Sampler::Exponential(
                Exp::new(1.0 / mean_ms).unwrap_or_else(|_| Exp::new(1.0).expect("rate 1 is valid")),
            ),
            Latency::Uniform { min_ms, max_ms } => Sampler::Uniform {
                min_ms: *min_ms,
                max_ms: *max_ms,
            },
            Latency::LogNormal { mu, sigma } => Sampler::LogNormal(
                LogNormal::new(*mu, *sigma)
                    .unwrap_or_else(|_| LogNormal::new(*mu, 0.0).expect("sigma 0 is valid")),
            ),
            // validation keeps the parameters in range; a fallback never runs
            Latency::Gamma { shape, scale_ms } => match Gamma::new(*shape, *scale_ms) {
                Ok(d) => Sampler::Gamma(d),
                Err(_) => Sampler::Constant(Ticks::from_ms(shape * scale_ms)),
            },
            Latency::Weibull { shape, scale_ms } => match Weibull::new(*scale_ms, *shape) {
                Ok(d) => Sampler::Weibull(d),
                Err(_) => Sampler::Constant(Ticks::from_ms(*scale_ms)),
            },
            Latency::Pareto { shape, min_ms } => match Pareto::new(*min_ms, *shape) {
                Ok(d) => Sampler::Pareto(d),
                Err(_) => Sampler::Constant(Ticks::from_ms(*min_ms)),
            },
            Latency::Mixture(parts) => Sampler::Mixture(
                parts
                    .iter()
                    .map(|(w, m)| (*w, Sampler::new(m, rng)))
                    .collect(),
            ),
        }
    }

    /// The next latency. A constant is answered inline (the common service time);
    /// the other models draw in `draw`. (Inlining the lognormal too saved M2 a
    /// call per draw but cost M1's server path more than that, in spills.)
    #[inline]
    pub fn sample(&mut self, rng: &mut Stream) -> Ticks {
        match self {
            Sampler::Constant(t) => *t,
            _ => self.draw(rng),
        }
    }

    fn draw(&mut self, rng: &mut Stream) -> Ticks {
        match self {
            Sampler::Constant(t) => *t,
            Sampler::Cycle { values, pos } => {
                let v = values[*pos];
                *pos = (*pos + 1) % values.len();
                v
            }
            Sampler::Empirical(v) => v[rng.random_range(0..v.len())],
            Sampler::Tail(t) => {
                let i = rng.random_range(0..t.values.len());
                if i < t.keep {
                    t.values[i]
                } else {
                    let y = crate::scenario::tail::quantile(rng.random(), t.shape, t.scale_ms);
                    Ticks::from_ms(t.threshold_ms + y)
                }
            }
            Sampler::Exponential(d) => Ticks::from_ms(d.sample(rng)),
            Sampler::Uniform { min_ms, max_ms } => {
                let u: f64 = rng.random();
                Ticks::from_ms(*min_ms + u * (*max_ms - *min_ms))
            }
            Sampler::LogNormal(d) => Ticks::from_ms(d.sample(rng)),
            Sampler::Gamma(d) => Ticks::from_ms(d.sample(rng)),
            Sampler::Weibull(d) => Ticks::from_ms(d.sample(rng)),
            Sampler::Pareto(d) => Ticks::from_ms(d.sample(rng)),
            Sampler::Mixture(parts) => {
                let u: f64 = rng.random();
                let last = parts.len() - 1;
                let i = parts.iter().position(|(cum, _)| u < *cum).unwrap_or(last);
                parts[i].1.sample(rng)
            }
        }
    }
}

/// A standard normal draw (for jitter in workloads).
pub fn standard_normal(rng: &mut Stream) -> f64 {
    StandardNormal.sample(rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    #[test]
    fn cycles_wrap_and_can_start_anywhere() {
        let mut rng = stream(1, 0, "t");
        let values = vec![Ticks(1), Ticks(2), Ticks(3)];
        let mut s = Sampler::new(
            &Latency::Cycle {
                values: values.clone(),
                random_start: false,
            },
            &mut rng,
        );
        let got: Vec<u64> = (0..5).map(|_| s.sample(&mut rng).0).collect();
        assert_eq!(got, [1, 2, 3, 1, 2]);
        let starts: std::collections::BTreeSet<u64> = (0..50)
            .map(|r| {
                let mut rng = stream(1, r, "t");
                let mut s = Sampler::new(
                    &Latency::Cycle {
                        values: values.clone(),
                        random_start: true,
                    },
                    &mut rng,
                );
                s.sample(&mut rng).0
            })
            .collect();
        assert_eq!(starts.len(), 3, "random starts reach every position");
    }

    #[test]
    fn lognormal_by_percentiles_hits_its_median() {
        let mut rng = stream(7, 0, "d");
        let m = Latency::LogNormal {
            mu: 6f64.ln(),
            sigma: (80f64 / 6.0).ln() / 2.326_347_874,
        };
        let mut s = Sampler::new(&m, &mut rng);
        let mut v: Vec<u64> = (0..20001).map(|_| s.sample(&mut rng).0).collect();
        v.sort_unstable();
        let median = Ticks(v[10000]).as_ms();
        assert!((median - 6.0).abs() < 0.3, "median {median}");
        let p99 = Ticks(v[19800]).as_ms();
        assert!((p99 - 80.0).abs() < 12.0, "p99 {p99}");
    }

    /// The mean of 200,000 draws, in ms.
    fn sample_mean(m: &Latency, seed: u64) -> f64 {
        let mut rng = stream(seed, 0, "mean");
        let mut s = Sampler::new(m, &mut rng);
        let n = 200_000;
        (0..n).map(|_| s.sample(&mut rng).as_ms()).sum::<f64>() / f64::from(n)
    }

    #[test]
    fn gamma_weibull_and_pareto_draw_around_their_means() {
        let cases = [
            // Erlang-3 with mean 30: sd 17.3, standard error 0.04
            Latency::Gamma {
                shape: 3.0,
                scale_ms: 10.0,
            },
            // gamma with shape 0.5: mean 20, sd 28
            Latency::Gamma {
                shape: 0.5,
                scale_ms: 40.0,
            },
            // Weibull k = 1.5, lambda = 20: mean 20 Gamma(5/3) = 18.05
            Latency::Weibull {
                shape: 1.5,
                scale_ms: 20.0,
            },
            // Weibull k = 0.7 (heavier tail): mean 10 Gamma(1 + 1/0.7) = 12.66
            Latency::Weibull {
                shape: 0.7,
                scale_ms: 10.0,
            },
            // Pareto alpha = 3, x_m = 10: mean 15, finite variance
            Latency::Pareto {
                shape: 3.0,
                min_ms: 10.0,
            },
        ];
        for (i, m) in cases.iter().enumerate() {
            let want = m.mean_ms();
            let got = sample_mean(m, i as u64);
            assert!(
                (got - want).abs() < 0.02 * want,
                "{m:?}: sample mean {got}, mean_ms {want}"
            );
        }
        assert!((cases[2].mean_ms() - 18.054).abs() < 0.01);
        assert!((cases[4].mean_ms() - 15.0).abs() < 1e-12);
    }

    #[test]
    fn mixture_picks_parts_by_weight() {
        let mut rng = stream(3, 0, "m");
        let m = Latency::Mixture(vec![
            (0.9, Latency::Constant(Ticks(1))),
            (1.0, Latency::Constant(Ticks(2))),
        ]);
        let mut s = Sampler::new(&m, &mut rng);
        let twos = (0..10000).filter(|_| s.sample(&mut rng).0 == 2).count();
        assert!((800..1200).contains(&twos), "{twos}");
    }

    #[test]
    fn a_fitted_tail_draws_beyond_the_values_it_was_fitted_to() {
        // 9,000 values below 10 ms, 1,000 above: 10 + a Pareto tail (0.2, 5)
        use crate::scenario::tail::{fit, quantile};
        let mut rng = stream(5, 0, "values");
        let ms: Vec<f64> = (0..10_000)
            .map(|i| {
                let u: f64 = rng.random();
                if i % 10 == 0 {
                    10.0 + quantile(u, 0.2, 5.0)
                } else {
                    10.0 * u
                }
            })
            .collect();
        let f = fit(&ms, 0.9).unwrap();
        let mut values: Vec<Ticks> = ms.iter().map(|&x| Ticks::from_ms(x)).collect();
        values.sort_unstable();
        let max = *values.last().unwrap();
        let model = Latency::Tail(Box::new(crate::model::FittedTail {
            values,
            keep: f.keep,
            threshold_ms: f.threshold_ms,
            shape: f.shape,
            scale_ms: f.scale_ms,
        }));
        let mut s = Sampler::new(&model, &mut rng);
        let mut draws: Vec<u64> = (0..200_000).map(|_| s.sample(&mut rng).0).collect();
        draws.sort_unstable();
        // p99.9: the fitted tail's 0.99 quantile above its threshold (about
        // 200 draws above it: within 3 % by the draws' own noise)
        let p999 = Ticks(draws[199_800]).as_ms();
        let want = f.threshold_ms + quantile(0.99, f.shape, f.scale_ms);
        assert!((p999 / want - 1.0).abs() < 0.05, "{p999} vs {want}");
        let beyond = draws.iter().filter(|&&d| d > max.0).count();
        assert!(beyond > 0, "the tail goes past the largest value measured");
        // an empirical draw never does
        let mut e = Sampler::new(&Latency::Empirical(vec![max]), &mut rng);
        assert_eq!(e.sample(&mut rng), max);
    }
}
