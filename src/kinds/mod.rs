//! Kinds: the rules a scenario picks by name (`kind = "..."`), each declared
//! once with its keys, their defaults and ranges. A family (the retry
//! budgets in [`budget`], the balancers in [`balance`], the fault kinds in
//! [`fault`], the rate and the concurrency limiters' algorithms in [`rate`]
//! and [`concurrency`]) lists its kinds in one place; the reader in [`keys`] checks a table against
//! their declarations, and the docs' key table is written from them. The
//! checks of single values every key goes through are in [`check`], shared
//! with the rest of validation.
//!
//! This module sits below `model`: the model holds a family's kinds as
//! values, validation reads them, and the simulation runs their rules.

pub mod admit;
pub mod balance;
pub mod budget;
pub mod check;
pub mod concurrency;
pub mod fault;
pub mod keys;
pub mod outcome;
pub mod rate;
