//! Fuzz target: arbitrary bytes as a file `resim import` reads (traces: OTLP,
//! Jaeger, Zipkin JSON; settings: gRPC, Envoy, Istio, resilience4j). The
//! import must write a scenario its own loader accepts, or refuse with an
//! error of the input (exit code 2); never panic, and never fail as "a bug in
//! resim import" (an error of exit code 1).
//!
//! The first byte chooses how the file is read: its low three bits the
//! `--from` format (0: told by the content), bit 3 the file's extension
//! (`.yaml` or `.json`), bit 4 `--tail fit`, bit 5 `--sample-rate 0.5`. The
//! rest is the file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use resim::import::{Format, ImportOptions, Tail, import};
use std::path::PathBuf;

/// This process's folder for the file and the scenario written from it.
fn folder() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("resim-fuzz-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else {
        return;
    };
    let from = [
        None,
        Some(Format::Otlp),
        Some(Format::Jaeger),
        Some(Format::Zipkin),
        Some(Format::Grpc),
        Some(Format::Envoy),
        Some(Format::Istio),
        Some(Format::Resilience4j),
    ][usize::from(head & 7)];
    let dir = folder();
    let file = dir.join(if head & 8 != 0 { "in.yaml" } else { "in.json" });
    std::fs::write(&file, body).expect("the input written");
    let opts = ImportOptions {
        files: vec![file],
        out: dir.join("out.toml"),
        from,
        sample_rate: (head & 32 != 0).then_some(0.5),
        tail: if head & 16 != 0 {
            Tail::Fit
        } else {
            Tail::Empirical
        },
        force: true,
        choices: Default::default(),
    };
    if let Err(e) = import(&opts) {
        let message = e.to_string();
        assert!(
            e.exit_code() == 2,
            "an import error of exit code {}: {message}",
            e.exit_code()
        );
    }
});
