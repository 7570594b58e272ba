//! Fuzz target: arbitrary bytes as a scenario file. The loader must answer with a
//! scenario or a `ScenarioError`, never panic; a scenario that loads must run (with a
//! small event cap so one input cannot hang the fuzzer) to a result or an error.
//!
//! An optional first line `#set key.path=VALUE` is applied as a `--set` override, so
//! the fuzzer also exercises overrides on every kind of document.

#![no_main]

use libfuzzer_sys::fuzz_target;
use resim::scenario::{LoadOptions, Override, load_str};
use std::path::Path;

/// Events one fuzzed run may process: enough to reach every actor, small enough
/// that thousands of inputs run per second.
const FUZZ_MAX_EVENTS: u64 = 20_000;
/// Compare rows run per input (the loader still expands and validates them all).
const FUZZ_MAX_ROWS: usize = 4;
/// Senders (open clients, closed users) one fuzzed run may start. Setting them
/// up is linear work outside the event cap (the accepted maximum of 10^6 clients
/// takes about 3 s and 1.1 GB in a release build, far longer in this one); the
/// loader still validates larger populations up to their limits.
const FUZZ_MAX_SENDERS: u64 = 10_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut opts = LoadOptions {
        max_rows: 256,
        ..LoadOptions::default()
    };
    if let Some(rest) = text.strip_prefix("#set ") {
        let line = rest.lines().next().unwrap_or_default();
        match Override::parse(line) {
            Ok(o) => opts.overrides.push(o),
            Err(e) => {
                let _ = e.to_string();
                return;
            }
        }
    }
    let scenario = match load_str(text, Path::new("fuzz.toml"), &opts) {
        Ok(s) => s,
        Err(e) => {
            // Rendering the message must not panic either.
            let _ = e.to_string();
            return;
        }
    };
    // Run a few rows through the engine, the analyses and the report, as `resim run`
    // does (without touching the disk).
    let mut scenario = scenario;
    scenario.rows.truncate(FUZZ_MAX_ROWS);
    let senders = |m: &resim::model::Model| -> u64 {
        m.workloads
            .iter()
            .map(|w| match w.workload {
                resim::model::Workload::Open { clients, .. } => clients,
                resim::model::Workload::Closed { users, .. } => users,
                _ => 1,
            })
            .fold(0u64, u64::saturating_add)
    };
    if scenario.rows.iter().any(|r| senders(&r.model) > FUZZ_MAX_SENDERS) {
        return;
    }
    for row in &mut scenario.rows {
        let limits = &mut row.model.limits;
        limits.max_events = limits.max_events.min(FUZZ_MAX_EVENTS);
    }
    if let Ok(tables) = resim::run_scenario(&scenario) {
        let _ = resim::render_report(&scenario, &tables);
        for t in &tables {
            let _ = resim::report::to_csv(t);
        }
    }
});
