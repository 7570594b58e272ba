//! Concurrency limiter algorithms (`[limiters.NAME] kind = "concurrency"`,
//! `algorithm = "..."`), one module per algorithm. A kind is a type of its
//! checked keys implementing [`Kind`] (its declaration, its highest limit,
//! the limit and state a fresh bucket starts with) and a state implementing
//! [`Rule`] (what a sample does to the limit, and the updates time brings).
//! The list below makes the rest: the model's [`ConcurrencyAlgorithm`], the
//! running [`AlgorithmState`], the reader's kinds and the docs' key table.
//!
//! The adaptive algorithms declare `samples`, which ends of a request they
//! learn from, each with its library's integration as the default; what a
//! request's end tells them under each rule is the simulation's (it knows
//! the outcomes): `sim::limiter::concurrency`.
//!
//! The kinds named after libraries (Netflix concurrency-limits' `AIMDLimit`,
//! `VegasLimit`, `Gradient2Limit`; Envoy's adaptive concurrency filter)
//! follow their code; docs/scenarios.md ("Concurrency limiters") cites each.
//!
//! To add an algorithm: write its module here and add one line to the list.

use super::check::{R, err};
use super::keys::{Decl, Key, Keys, Range, Tag, read_tagged};
use crate::engine::{Stream, Ticks};
use crate::error::num;

/// Which ends of a request a concurrency algorithm learns from (`samples`),
/// as the integration that feeds the algorithm in its own library does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Samples {
    /// Netflix's gRPC server interceptor (`ConcurrencyLimitServerInterceptor`):
    /// a request given up on (the call cancelled, `DEADLINE_EXCEEDED`) is a
    /// drop, every other end (any status, errors included) a sample.
    GrpcServer,
    /// Netflix's gRPC client interceptor (`ConcurrencyLimitClientInterceptor`):
    /// an OK answer is a sample, `UNAVAILABLE` (a shed, a limiter's
    /// rejection) a drop, any other end nothing.
    GrpcClient,
    /// Envoy's adaptive concurrency filter: every response is a sample
    /// (errors included); a request given up on before its response is none.
    EnvoyFilter,
}

/// The names of [`Samples`], in variant order.
const SAMPLES: &[&str] = &["grpc_server", "grpc_client", "envoy_filter"];

/// `samples`, the gRPC server interceptor by default (Netflix's algorithms).
const GRPC_SERVER: Key = Key::with("samples", 0.0, Range::Names(SAMPLES));

/// `samples`, Envoy's filter by default (Envoy's controller).
const ENVOY_FILTER: Key = Key::with("samples", 2.0, Range::Names(SAMPLES));

/// What one request's end tells a concurrency algorithm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sample {
    /// A latency sample (Netflix's `onSuccess`, Envoy's
    /// `recordLatencySample`), `latency` after it was let through.
    Answer(Ticks),
    /// A drop (Netflix's `onDropped`), after this latency.
    Drop(Ticks),
    /// Tells nothing (Envoy's `cancelLatencySample`).
    Ignore,
}

/// When a sampled request was let through and ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Done {
    /// The count in flight when it was let through, itself included
    /// (Netflix's `AbstractLimiter.createListener`).
    pub in_flight: u64,
    /// When it was let through.
    pub started: Ticks,
    /// When it ended.
    pub now: Ticks,
}

/// A concurrency limiter's rule: its algorithm and which ends it learns from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Concurrency {
    /// The algorithm and its parameters.
    pub algorithm: ConcurrencyAlgorithm,
    /// Which ends of a request are latency samples and which are drops
    /// (`samples`; by default the integration of the algorithm's library).
    pub samples: Samples,
}

/// An algorithm: its keys, checked, and what a bucket starts with.
pub trait Kind: Copy + PartialEq + std::fmt::Debug {
    /// Its name and keys.
    const DECL: Decl;
    /// What it keeps per bucket key.
    type State: Rule + Clone + std::fmt::Debug;
    /// The algorithm from its checked keys (and the checks the declared
    /// ranges cannot say).
    fn from_keys(k: &Keys) -> R<Self>;
    /// The highest limit it can reach.
    fn max_limit(&self) -> u64;
    /// A fresh bucket's limit and state; `rng` gives the random stream of
    /// an algorithm that draws.
    fn start(&self, rng: impl FnOnce() -> Stream) -> (u64, Self::State);
}

/// What an algorithm does with its limit.
pub trait Rule {
    /// The updates time brings by `now` (Envoy's windows).
    fn catch_up(&mut self, _limit: &mut f64, _now: Ticks) {}
    /// A request's end tells `s` (never [`Sample::Ignore`]).
    fn sample(&mut self, limit: &mut f64, s: Sample, done: Done);
}

impl<T: Rule> Rule for Box<T> {
    fn catch_up(&mut self, limit: &mut f64, now: Ticks) {
        (**self).catch_up(limit, now)
    }
    fn sample(&mut self, limit: &mut f64, s: Sample, done: Done) {
        (**self).sample(limit, s, done)
    }
}

/// The algorithms: `Variant: module::Type`, in the order `algorithm` lists
/// them. Each line declares its module too.
macro_rules! kinds {
    ($($variant:ident: $module:ident::$ty:ident,)*) => {
        $(mod $module;)*

        /// A concurrency limiter's algorithm, with its library's parameters.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum ConcurrencyAlgorithm {
            $(
                #[allow(missing_docs)]
                $variant($module::$ty),
            )*
        }

        /// Every algorithm's declaration, in the order `algorithm` lists them.
        pub const KINDS: &[&Decl] = &[$(&<$module::$ty as Kind>::DECL,)*];

        impl ConcurrencyAlgorithm {
            /// The algorithm's declaration.
            pub fn decl(&self) -> &'static Decl {
                match self {
                    $(ConcurrencyAlgorithm::$variant(_) => &<$module::$ty as Kind>::DECL,)*
                }
            }

            /// The highest limit it can reach (fixed: its limit).
            pub fn max_limit(&self) -> u64 {
                match self {
                    $(ConcurrencyAlgorithm::$variant(a) => a.max_limit(),)*
                }
            }

            fn from_keys(k: &Keys) -> R<ConcurrencyAlgorithm> {
                $(
                    if k.decl().name == <$module::$ty as Kind>::DECL.name {
                        return Ok(ConcurrencyAlgorithm::$variant(<$module::$ty as Kind>::from_keys(k)?));
                    }
                )*
                unreachable!("the reader returns a listed kind")
            }
        }

        /// One bucket key's algorithm state.
        #[derive(Debug, Clone)]
        pub enum AlgorithmState {
            $(
                #[allow(missing_docs)]
                $variant(<$module::$ty as Kind>::State),
            )*
        }

        impl AlgorithmState {
            /// A fresh state of `alg` and its starting limit.
            pub fn new(alg: &ConcurrencyAlgorithm, rng: impl FnOnce() -> Stream) -> (u64, AlgorithmState) {
                match alg {
                    $(ConcurrencyAlgorithm::$variant(a) => {
                        let (limit, s) = a.start(rng);
                        (limit, AlgorithmState::$variant(s))
                    })*
                }
            }

            /// See [`Rule::catch_up`].
            #[inline]
            pub fn catch_up(&mut self, limit: &mut f64, now: Ticks) {
                match self {
                    $(AlgorithmState::$variant(s) => s.catch_up(limit, now),)*
                }
            }

            /// See [`Rule::sample`].
            #[inline]
            pub fn sample(&mut self, limit: &mut f64, s: Sample, done: Done) {
                match self {
                    $(AlgorithmState::$variant(st) => st.sample(limit, s, done),)*
                }
            }
        }
    };
}

kinds! {
    Fixed: fixed::Fixed,
    Aimd: aimd::Aimd,
    Vegas: vegas::Vegas,
    Gradient2: gradient2::Gradient2,
    EnvoyGradient: envoy::EnvoyGradient,
}

impl ConcurrencyAlgorithm {
    /// The name as written in scenario files.
    pub fn name(&self) -> &'static str {
        self.decl().name
    }
}

impl Concurrency {
    /// The concurrency limiter table at `path`; `passed` are the keys of the
    /// limiter around it (`kind`, `key`, `scope`), read by the caller.
    pub fn read(path: &str, t: &toml::Table, passed: &[&str]) -> R<Concurrency> {
        let tag = Tag {
            key: "algorithm",
            default: None,
        };
        let k = read_tagged(path, t, tag, KINDS, passed)?;
        let samples = match k.decl().key("samples") {
            Some(_) => [
                Samples::GrpcServer,
                Samples::GrpcClient,
                Samples::EnvoyFilter,
            ][k.name_index("samples")],
            // `fixed` learns nothing
            None => Samples::GrpcServer,
        };
        Ok(Concurrency {
            algorithm: ConcurrencyAlgorithm::from_keys(&k)?,
            samples,
        })
    }
}

/// A number key in (0, 1] (a smoothing weight).
fn weight(k: &Keys, name: &str) -> R<f64> {
    let v = k.num(name);
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        err(k.at(name), format!("must be > 0 and <= 1 (got {})", num(v)))
    }
}

/// Keys that must not decrease in the order given (`min <= initial <=
/// max`), each compared where both are written, or where `always` says the
/// pair is compared with defaults too.
fn ordered(k: &Keys, names: &[&str], always: bool) -> R<()> {
    for pair in names.windows(2) {
        let (lo_key, hi_key) = (pair[0], pair[1]);
        let written = always || (k.given(lo_key) && k.given(hi_key));
        let (lo, hi) = (k.count(lo_key), k.count(hi_key));
        if written && lo > hi {
            return Err(crate::error::ScenarioError::new(
                k.at(lo_key),
                format!("must be <= {hi_key} = {hi} (got {lo})"),
            )
            .related(k.at(hi_key)));
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod testing {
    //! An algorithm as a table's text gives it, for tests.
    use super::*;

    /// The concurrency limiter of `text` (its `algorithm` and keys).
    pub fn concurrency(text: &str) -> Concurrency {
        let t: toml::Table = text.parse().expect("a TOML table");
        Concurrency::read("c", &t, &[]).expect("a valid concurrency limiter")
    }
}
