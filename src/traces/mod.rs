//! The files that show a run's traced requests (see [`sim::trace`](crate::sim::trace)):
//! `trace.json` for Perfetto ([`chrome`], `resim run --trace N`) and OpenTelemetry
//! OTLP JSON ([`otlp`], `resim run --spans FILE`). They read the tracer's record
//! directly, so they sit just above `sim`, below the report.

pub mod chrome;
pub mod otlp;
