//! The integration test binary: one module per behaviour.

mod bad_input;
mod common;
mod golden_ay10;
mod output_safety;
mod properties;
mod runaway;
