//! Retry budgets (`retry.budget`, `hedge.budget`), one module per kind. A
//! kind is a type of its checked keys implementing [`Kind`] (its declaration,
//! how its keys become the type, and the state it starts per policy state),
//! and a state implementing [`Rule`] (what it counts and when it refuses a
//! retry). The list below makes the rest: the model's [`RetryBudget`], the
//! running [`BudgetState`], the reader's kinds and the docs' key table.
//!
//! A budget that holds something for a retry it allows (the AWS quota its
//! cost, Envoy a place among the retries open) says what with a number the
//! policy call keeps until that retry's attempt ends or the call is over.
//!
//! The kinds named after real clients (`grpc_throttle`, `finagle`,
//! `aws_standard`, `envoy`) follow those clients' code; the project, file
//! and function of each, and where resim differs, are in docs/scenarios.md
//! ("Retry budgets real clients ship").
//!
//! To add a kind: write its module here and add one line to the list.

use super::check::{R, err};
use super::keys::{Decl, read};
use super::outcome::{AttemptOutcome, OutcomeSet};
use crate::engine::Ticks;

/// A budget kind: its keys, checked, and what it starts with.
pub trait Kind: Copy + PartialEq + std::fmt::Debug {
    /// Its name and keys.
    const DECL: Decl;
    /// Why a hedge may use it too (None: retries only).
    const HEDGES: Option<&'static str> = None;
    /// What it keeps per policy state.
    type State: Rule + Clone + std::fmt::Debug;
    /// The kind from its checked keys (and the checks the declared ranges
    /// cannot say).
    fn from_keys(k: &super::keys::Keys) -> R<Self>;
    /// A policy state's budget at the start of a run; `counted` are the
    /// failed outcomes the policy retries (a hedge: its non-fatal ones).
    fn start(&self, counted: OutcomeSet) -> Self::State;
}

/// What a budget does in a run.
pub trait Rule {
    /// A call makes its first try now.
    fn first_try(&mut self, _now: Ticks) {}
    /// An attempt ended with `o`; `held` is what the budget held for it (a
    /// retry's), given back here.
    fn ended(&mut self, _o: AttemptOutcome, _held: u32) {}
    /// A call over before its retry's attempt ended gives back what the
    /// budget held for it.
    fn release(&mut self, _held: u32) {}
    /// The most retries open at once (0 unless the kind counts them).
    fn most_open(&self) -> u64 {
        0
    }
    /// May a retry (or a further hedge) go now, after an attempt that ended
    /// with `after`, with `in_flight` attempts of the policy state in flight?
    /// When it may, it is counted, paid or held: Some(what the budget holds
    /// for it, 0 for nothing); None when the budget refuses it.
    fn allow_retry(&mut self, now: Ticks, after: AttemptOutcome, in_flight: u64) -> Option<u32>;
}

impl<T: Rule> Rule for Box<T> {
    fn first_try(&mut self, now: Ticks) {
        (**self).first_try(now)
    }
    fn ended(&mut self, o: AttemptOutcome, held: u32) {
        (**self).ended(o, held)
    }
    fn release(&mut self, held: u32) {
        (**self).release(held)
    }
    fn most_open(&self) -> u64 {
        (**self).most_open()
    }
    fn allow_retry(&mut self, now: Ticks, after: AttemptOutcome, in_flight: u64) -> Option<u32> {
        (**self).allow_retry(now, after, in_flight)
    }
}

/// The kinds: `Variant: module::Type`, in the order `kind` lists them.
macro_rules! kinds {
    ($($variant:ident: $module:ident::$ty:ident,)*) => {
        $(mod $module;)*

        /// A retry budget, one per policy state: its kind and checked keys.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum RetryBudget {
            $(
                #[allow(missing_docs)]
                $variant($module::$ty),
            )*
        }

        /// Every kind's declaration, in the order `kind` lists them.
        pub const KINDS: &[&Decl] = &[$(&<$module::$ty as Kind>::DECL,)*];

        /// Each kind's name and why a hedge may use it (None: it may not).
        const HEDGING: &[(&str, Option<&str>)] =
            &[$((<$module::$ty as Kind>::DECL.name, <$module::$ty as Kind>::HEDGES),)*];

        impl RetryBudget {
            /// The kind's declaration.
            pub fn decl(&self) -> &'static Decl {
                match self {
                    $(RetryBudget::$variant(_) => &<$module::$ty as Kind>::DECL,)*
                }
            }

            /// Why a hedge may use this kind (None: retries only).
            pub fn hedges(&self) -> Option<&'static str> {
                match self {
                    $(RetryBudget::$variant(_) => <$module::$ty as Kind>::HEDGES,)*
                }
            }

            fn from_keys(k: &super::keys::Keys) -> R<RetryBudget> {
                $(
                    if k.decl().name == <$module::$ty as Kind>::DECL.name {
                        let kind = <$module::$ty as Kind>::from_keys(k)?;
                        return Ok(RetryBudget::$variant(kind));
                    }
                )*
                unreachable!("the reader returns a listed kind")
            }
        }

        /// A policy state's budget in a run.
        #[derive(Debug, Clone)]
        pub enum BudgetState {
            /// No budget: every retry is allowed.
            Unlimited,
            $(
                #[allow(missing_docs)]
                $variant(<$module::$ty as Kind>::State),
            )*
        }

        impl BudgetState {
            /// The state of budget `b`; `counted` are the failed outcomes
            /// it counts (the policy's retried ones, or a hedge's
            /// non-fatal ones).
            pub fn new(b: Option<&RetryBudget>, counted: OutcomeSet) -> BudgetState {
                match b {
                    None => BudgetState::Unlimited,
                    $(Some(RetryBudget::$variant(p)) => BudgetState::$variant(p.start(counted)),)*
                }
            }

            /// A call makes its first try now.
            pub fn first_try(&mut self, now: Ticks) {
                match self {
                    BudgetState::Unlimited => {}
                    $(BudgetState::$variant(s) => s.first_try(now),)*
                }
            }

            /// An attempt ended with `o`; `held` is what the budget held for
            /// it (a retry's), and is given back here.
            #[inline(never)]
            pub fn ended(&mut self, o: AttemptOutcome, held: u32) {
                match self {
                    BudgetState::Unlimited => {}
                    $(BudgetState::$variant(s) => s.ended(o, held),)*
                }
            }

            /// A call over before its retry's attempt ended gives back what
            /// the budget held for it.
            pub fn release(&mut self, held: u32) {
                match self {
                    BudgetState::Unlimited => {}
                    $(BudgetState::$variant(s) => s.release(held),)*
                }
            }

            /// The most retries open at once (Envoy's budget; 0 for the others).
            pub fn most_open(&self) -> u64 {
                match self {
                    BudgetState::Unlimited => 0,
                    $(BudgetState::$variant(s) => s.most_open(),)*
                }
            }

            /// See [`Rule::allow_retry`]; with no budget every retry goes.
            pub fn allow_retry(
                &mut self,
                now: Ticks,
                after: AttemptOutcome,
                in_flight: u64,
            ) -> Option<u32> {
                match self {
                    BudgetState::Unlimited => Some(0),
                    $(BudgetState::$variant(s) => s.allow_retry(now, after, in_flight),)*
                }
            }
        }
    };
}

kinds! {
    Ratio: ratio::Ratio,
    TokenBucket: token_bucket::TokenBucket,
    Breaker: breaker::Breaker,
    GrpcThrottle: grpc_throttle::GrpcThrottle,
    Finagle: finagle::Finagle,
    AwsStandard: aws_standard::AwsStandard,
    Envoy: envoy::Envoy,
}

impl BudgetState {
    /// Whether [`BudgetState::ended`] does anything (the policy skips it, and
    /// what it would read, without a budget).
    #[inline(always)]
    pub fn hears_attempts(&self) -> bool {
        !matches!(self, BudgetState::Unlimited)
    }
}

impl RetryBudget {
    /// The budget table at `path` (a retry's or, with `hedge`, a hedge's).
    pub fn read(path: &str, t: &toml::Table, hedge: bool) -> R<RetryBudget> {
        let b = RetryBudget::from_keys(&read(path, t, KINDS, &[])?)?;
        if hedge && b.hedges().is_none() {
            let why: Vec<String> = HEDGING
                .iter()
                .filter_map(|(name, why)| why.map(|why| format!("`{name}` budget ({why}")))
                .collect();
            return err(
                format!("{path}.kind"),
                format!(
                    "a hedge takes only a {}; `{}` bounds retries: put it under `retry`)",
                    why.join(", or a "),
                    b.decl().name
                ),
            );
        }
        Ok(b)
    }
}
