//! The integration test binary: one module per behaviour.

mod common;
mod golden_ay10;
mod golden_io22;
