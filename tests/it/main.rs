//! The integration test binary: one module per behaviour.

mod accounting;
mod bad_input;
mod call_graphs;
mod cli;
mod common;
mod faults_time;
mod golden_ay10;
mod golden_dy13;
mod golden_io22;
mod hostile;
mod latency_files;
mod metric_names;
mod output_safety;
mod peers;
mod policies;
mod policy_properties;
mod properties;
mod queueing;
mod report_html;
mod runaway;
mod sweep;
mod sweep_stats;
mod tables;
mod thresholds_json;
mod trace;
mod workloads;
