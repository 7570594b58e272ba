//! The integration test binary: one module per behaviour.

mod bad_input;
mod cli;
mod common;
mod golden_ay10;
mod golden_dy13;
mod golden_io22;
mod hostile;
mod output_safety;
mod peers;
mod properties;
mod runaway;
mod sweep;
