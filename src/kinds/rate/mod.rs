//! Rate limiter algorithms (`[limiters.NAME] algorithm = "..."`), one module
//! per algorithm. Each is a pure function of (time, bucket state): a kind is a
//! type of its own keys implementing [`Kind`] (its declaration, the state a
//! fresh bucket starts with) and a state implementing [`Rule`] (the first
//! instant one more request may pass, and what a pass changes). [`decide`]
//! turns that instant into a decision. The list below makes the rest: the
//! model's [`RateAlgorithm`], the bucket's state, the reader's kinds.
//!
//! The keys every algorithm reads (`limit`, `window_ms`, `mode`,
//! `max_delay_ms`, `overflow`) are declared once in [`SHARED`] and held in
//! [`Rate`]; an algorithm declares only its own. `refill` is shared too,
//! though only the token bucket reads it: a file that varies `algorithm`
//! (the algorithm comparisons do) keeps one table.
//!
//! To add an algorithm: write its module here and add one line to the list.

use super::admit::Decision;
use super::check::R;
use super::keys::{Decl, Key, Keys, Range, Tag, read_shared, read_tagged};
use crate::engine::Ticks;

/// What a limiter does with a request over the limit (`mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimiterMode {
    /// 429 at once.
    Reject,
    /// Held until it may pass within `max_delay_ms`, else rejected (see [`Overflow`]).
    Throttle,
}

impl LimiterMode {
    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        MODES[self as usize]
    }
}

const MODES: &[&str] = &["reject", "throttle"];

/// Throttle mode: what happens to a request whose wait would pass max_delay_ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Held max_delay_ms, then rejected (Resilience4j's RateLimiter).
    Hold,
    /// Rejected at once (nginx `limit_req`, Guava `tryAcquire(timeout)`).
    RejectNow,
}

/// The keys every rate algorithm reads.
pub const SHARED: Decl = Decl {
    name: "rate",
    family: "limiter",
    keys: &[
        Key::required("limit", Range::Count(1)),
        Key::required("window_ms", Range::PositiveMs),
        Key::with("mode", 0.0, Range::Names(MODES)),
        Key::with("max_delay_ms", 0.0, Range::NonNegative),
        Key::with("overflow", 0.0, Range::Names(&["hold", "reject-now"])),
        Key::with("refill", 0.0, Range::Names(&["continuous", "discrete"])),
    ],
    required_because: "`limit` requests per `window_ms`",
};

/// A rate limiter's rule: its algorithm and the keys every algorithm reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// The algorithm and its own keys.
    pub algorithm: RateAlgorithm,
    /// Requests per bucket per window (token bucket and GCRA: the burst).
    pub limit: u64,
    /// The window (`window_ms`), in ticks.
    pub window: Ticks,
    /// Reject or throttle.
    pub mode: LimiterMode,
    /// Throttle: the longest hold (`max_delay_ms`), in ticks.
    pub max_delay: Ticks,
    /// Throttle: what happens to a request that cannot pass within `max_delay`.
    pub overflow: Overflow,
    /// How a token bucket refills; the other algorithms ignore it.
    pub refill: Refill,
}

/// An algorithm: its keys, checked, and the state a fresh bucket starts with.
pub trait Kind: Copy + PartialEq + std::fmt::Debug {
    /// Its name and keys.
    const DECL: Decl;
    /// What it keeps per bucket.
    type State: Rule + Clone + std::fmt::Debug;
    /// The algorithm from its checked keys.
    fn from_keys(k: &Keys) -> R<Self>;
    /// A fresh bucket's state.
    fn start(&self, rate: &Rate) -> Self::State;
}

/// What an algorithm does with a bucket's state.
pub trait Rule {
    /// Drops what can no longer matter at or after `now`.
    fn forget(&mut self, _rate: &Rate, _now: Ticks) {}
    /// The first instant at or after `t0` when one more request may pass.
    fn earliest(&self, rate: &Rate, t0: Ticks) -> Ticks;
    /// Records a request let through at `at` (a value `earliest` returned).
    fn take(&mut self, rate: &Rate, at: Ticks);
}

/// The algorithms: `Variant: module::Type`, in the order `algorithm` lists
/// them. Each line declares its module too.
macro_rules! kinds {
    ($($variant:ident: $module:ident::$ty:ident,)*) => {
        $(mod $module;)*

        /// A rate limiter's algorithm and its own keys.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum RateAlgorithm {
            $(
                #[allow(missing_docs)]
                $variant($module::$ty),
            )*
        }

        /// Every algorithm's declaration, in the order `algorithm` lists them.
        pub const KINDS: &[&Decl] = &[$(&<$module::$ty as Kind>::DECL,)*];

        impl RateAlgorithm {
            /// The algorithm's declaration.
            pub fn decl(&self) -> &'static Decl {
                match self {
                    $(RateAlgorithm::$variant(_) => &<$module::$ty as Kind>::DECL,)*
                }
            }

            fn from_keys(k: &Keys) -> R<RateAlgorithm> {
                $(
                    if k.decl().name == <$module::$ty as Kind>::DECL.name {
                        return Ok(RateAlgorithm::$variant(<$module::$ty as Kind>::from_keys(k)?));
                    }
                )*
                unreachable!("the reader returns a listed kind")
            }
        }

        /// One bucket's algorithm state.
        #[derive(Debug, Clone)]
        enum State {
            $($variant(<$module::$ty as Kind>::State),)*
        }

        impl State {
            fn new(rate: &Rate) -> State {
                match &rate.algorithm {
                    $(RateAlgorithm::$variant(a) => State::$variant(a.start(rate)),)*
                }
            }

            #[inline]
            fn forget(&mut self, rate: &Rate, now: Ticks) {
                match self {
                    $(State::$variant(s) => s.forget(rate, now),)*
                }
            }

            #[inline]
            fn earliest(&self, rate: &Rate, t0: Ticks) -> Ticks {
                match self {
                    $(State::$variant(s) => s.earliest(rate, t0),)*
                }
            }

            #[inline]
            fn take(&mut self, rate: &Rate, at: Ticks) {
                match self {
                    $(State::$variant(s) => s.take(rate, at),)*
                }
            }
        }
    };
}

kinds! {
    FixedWindow: fixed_window::FixedWindow,
    SlidingLog: sliding_log::SlidingLog,
    SlidingCounter: sliding_counter::SlidingCounter,
    TokenBucket: token_bucket::TokenBucket,
    Gcra: gcra::Gcra,
}

pub use token_bucket::Refill;

impl RateAlgorithm {
    /// The name as written in scenario files.
    pub fn name(&self) -> &'static str {
        self.decl().name
    }
}

impl Rate {
    /// The rate limiter table at `path`; `passed` are the keys of the
    /// limiter around it (`kind`, `key`, `scope`), read by the caller.
    pub fn read(path: &str, t: &toml::Table, passed: &[&str]) -> R<Rate> {
        let shared = read_shared(path, t, &SHARED)?;
        let mut skip: Vec<&str> = passed.to_vec();
        skip.extend(SHARED.keys.iter().map(|k| k.name));
        let tag = Tag {
            key: "algorithm",
            default: Some("fixed-window"),
        };
        let algorithm = RateAlgorithm::from_keys(&read_tagged(path, t, tag, KINDS, &skip)?)?;
        Ok(Rate {
            algorithm,
            limit: shared.count("limit"),
            window: shared.ticks("window_ms")?,
            mode: [LimiterMode::Reject, LimiterMode::Throttle][shared.name_index("mode")],
            max_delay: shared.ticks("max_delay_ms")?,
            overflow: [Overflow::Hold, Overflow::RejectNow][shared.name_index("overflow")],
            refill: [Refill::Continuous, Refill::Discrete][shared.name_index("refill")],
        })
    }
}

/// A `u128` of ticks, at most the clock's end.
fn clamp_ticks(v: u128) -> Ticks {
    Ticks(u64::try_from(v).unwrap_or(u64::MAX))
}

/// One bucket: its algorithm's state. Token and GCRA levels are exact
/// integers (no floats), so a decision never depends on rounding.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// The latest time a request was let through or is held to: held requests
    /// leave in FIFO order, never before it.
    last: Ticks,
    state: State,
}

impl Bucket {
    /// A fresh bucket: empty windows and log, a full token bucket.
    pub fn new(rate: &Rate) -> Bucket {
        Bucket {
            last: Ticks::ZERO,
            state: State::new(rate),
        }
    }

    /// The first instant at or after `t` (and after every request already let
    /// through or held) when one more request may pass.
    pub fn earliest(&self, rate: &Rate, t: Ticks) -> Ticks {
        self.state.earliest(rate, t.max(self.last))
    }
}

/// Decides one request arriving at `now` and updates the bucket.
pub fn decide(rate: &Rate, b: &mut Bucket, now: Ticks) -> Decision {
    b.state.forget(rate, now);
    let at = b.earliest(rate, now);
    let decision = if at == now {
        Decision::Pass
    } else if rate.mode == LimiterMode::Throttle && at - now <= rate.max_delay {
        Decision::Delay(at)
    } else {
        return Decision::Reject;
    };
    b.state.take(rate, at);
    b.last = at;
    decision
}

#[cfg(test)]
pub(super) mod testing {
    //! A rate of each algorithm and a bucket's decisions for a list of
    //! arrivals, for the algorithms' tests.
    use super::*;

    /// `algorithm` (its keys as written, e.g. `refill = "discrete"`), with
    /// `limit` per `window_ms`.
    pub fn rate(algorithm: &str, limit: u64, window_ms: f64) -> Rate {
        let text = format!("algorithm = \"{algorithm}\"\nlimit = {limit}\nwindow_ms = {window_ms}");
        with(&text)
    }

    /// The rate a table's text gives.
    pub fn with(text: &str) -> Rate {
        Rate::read("l", &text.parse().expect("a TOML table"), &[]).expect("a valid rate")
    }

    pub fn throttled(mut r: Rate, max_delay_ms: f64) -> Rate {
        r.mode = LimiterMode::Throttle;
        r.max_delay = Ticks::from_ms(max_delay_ms);
        r
    }

    /// Decisions for arrivals at `times_ms` on one bucket: "P", "R" or "D<ms>"
    /// (held, let through at that time).
    pub fn run(r: &Rate, times_ms: &[f64]) -> Vec<String> {
        let mut b = Bucket::new(r);
        times_ms
            .iter()
            .map(|t| match decide(r, &mut b, Ticks::from_ms(*t)) {
                Decision::Pass => "P".to_string(),
                Decision::Reject => "R".to_string(),
                Decision::Delay(at) => format!("D{}", at.as_ms()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::with;

    #[test]
    fn reads_the_shared_keys_and_the_algorithms_own() {
        let r = with("limit = 3\nwindow_ms = 100\nmode = \"throttle\"\nmax_delay_ms = 5");
        assert_eq!(r.algorithm.name(), "fixed-window");
        assert_eq!((r.limit, r.mode.name()), (3, "throttle"));
        // `refill` is read whatever the algorithm (only the token bucket
        // uses it), so a file that varies the algorithm keeps one table
        let r = with("algorithm = \"gcra\"\nlimit = 3\nwindow_ms = 100\nrefill = \"discrete\"");
        assert_eq!(r.algorithm.name(), "gcra");
        let t: toml::Table = "algorithm = \"gcra\"\nlimit = 3\nwindow_ms = 100\nburst = 2"
            .parse()
            .expect("a table");
        let e = super::Rate::read("l", &t, &[]).expect_err("no algorithm reads burst");
        assert_eq!(e.path, "l.burst");
    }
}
