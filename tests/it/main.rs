//! The integration test binary: one module per behaviour.

mod cli;
mod common;
mod golden_ay10;
mod sweep;
