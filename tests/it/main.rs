//! The integration test binary: one module per behaviour.

mod cli;
mod common;
mod golden_ay10;
mod golden_dy13;
mod golden_io22;
