//! Actors report the steps of a request's or a call's life only through
//! `World::note` (`src/sim/world/fanout.rs`), which hands each note to its listeners:
//! the books (`observe.rs`), the time series, the request tracer (`trace/`)
//! and the limiters' done notices. The test reads every file under `src/sim/`
//! and names the file and line of every listener reached another way: a
//! `trace!(` hook, a call on the books (`.obs.name(`, also split over lines)
//! that is not one of the [`QUERIES`], the time series taken outside
//! [`SERIES_READERS`], a limiter's done notice called outside the limiter
//! (and `world/limiter.rs`, which puts the requests to it).

use std::path::{Path, PathBuf};

/// The files that are the fan-out and its listeners (a name ending in `/`:
/// every file under that folder): they may do all of it.
const LISTENERS: &[&str] = &["world/fanout.rs", "observe.rs", "trace/"];

/// Calls on the books that change nothing a note would: reads, the run's end
/// and a test's set-up.
const QUERIES: &[&str] = &[
    // requests in flight now (the runaway guard)
    "in_flight",
    // whether the books take their slow path (an actor skips work they do not need)
    "slow_path",
    // how far the time series may run (the loop's end)
    "series_end",
    // the time series' row of a dependency
    "dependency_row",
    // the time series, read where SERIES_READERS says
    "series",
    // the books handed over at the end of the run
    "finish",
    // a unit test's ladder steps
    "track_steps",
];

/// The files that may take the time series (`.obs.series()`), to read it:
/// `world/mod.rs` (whether a run is plain, the first window's end).
const SERIES_READERS: &[&str] = &["world/mod.rs"];

/// The limiters' notices of a request's life, given by notes only.
const LIMITER_NOTICES: &[&str] = &[
    "limiting_sent(",
    "limiting_responded(",
    "limiting_outcome(",
    "limiting_given_up(",
];

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every lifecycle step reported around the notes in `text` (a file at `rel`
/// under `src/sim/`), as `rel:line: what: the line`.
fn outside_notes(rel: &str, text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    if LISTENERS
        .iter()
        .any(|l| rel == *l || (l.ends_with('/') && rel.starts_with(l)))
    {
        return bad;
    }
    // comments out, lines kept: a call may be split over lines
    let code: Vec<&str> = text
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect();
    let joined = code.join("\n");
    let line_of = |at: usize| joined[..at].matches('\n').count();
    let mut say = |at: usize, what: String| {
        let n = line_of(at);
        bad.push(format!("{rel}:{}: {what}: {}", n + 1, code[n].trim()));
    };
    for (at, _) in joined.match_indices("trace!(") {
        say(at, "a tracer hook outside the fan-out".to_string());
    }
    for (at, _) in joined.match_indices("trace.as_deref_mut(") {
        say(at, "the tracer taken outside the fan-out".to_string());
    }
    // the limiter, and the world's file that puts requests to it
    if !rel.starts_with("limiter/") && rel != "world/limiter.rs" {
        for notice in LIMITER_NOTICES {
            for (at, _) in joined.match_indices(notice) {
                say(
                    at,
                    format!("a limiter notice (`{notice}`) outside the fan-out"),
                );
            }
        }
    }
    for (at, _) in joined.match_indices(".obs") {
        let after = &joined[at + ".obs".len()..];
        if after.starts_with(is_ident) {
            continue; // `.observers`, `.obs_x`: another name
        }
        let Some(rest) = after.trim_start().strip_prefix('.') else {
            continue; // the books themselves, handed over or moved
        };
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if !QUERIES.contains(&name.as_str()) {
            say(at, format!("the books' `{name}` outside the fan-out"));
        } else if name == "series" && !SERIES_READERS.contains(&rel) {
            say(at, "the time series taken outside the fan-out".to_string());
        }
    }
    bad
}

/// [`outside_notes`] for every file under `sim` (the `src/sim` folder).
fn all_outside_notes(sim: &Path) -> Vec<String> {
    let mut all = Vec::new();
    super::layering::files(sim, &mut all);
    let mut bad = Vec::new();
    for path in &all {
        let rel = path.strip_prefix(sim).expect("under src/sim");
        let rel = rel.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(path).expect("a source file reads");
        bad.extend(outside_notes(&rel, &text));
    }
    bad
}

#[test]
fn actors_report_lifecycle_steps_only_through_notes() {
    let sim = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut all = Vec::new();
    super::layering::files(&sim, &mut all);
    assert!(all.len() > 30, "{} holds the simulation", sim.display());
    assert!(
        all.iter().any(|p| p.ends_with("world/fanout.rs")),
        "src/sim/world/fanout.rs holds the fan-out"
    );
    let bad = all_outside_notes(&sim);
    assert!(
        bad.is_empty(),
        "{} lifecycle steps reach a listener around World::note (add a variant to \
         src/sim/notes.rs, hear it in src/sim/world/fanout.rs and call `self.note(...)`; queries allowed: {}):\n{}",
        bad.len(),
        QUERIES.join(", "),
        bad.join("\n")
    );
}

#[test]
fn a_step_reported_around_the_notes_is_named_with_its_line() {
    let text = "fn f(&mut self) {\n    trace!(self, sent(id, route, owner));\n    \
                if self.obs.in_flight() > 3 {}\n    self.obs\n        .wasted(now, dep, w);\n    \
                // self.obs.answered(now, o, r) in a comment\n    \
                if let Some(t) = self.obs.series() {}\n    self.limiting_sent(id);\n    \
                let obs = self.observers.len();\n}\n";
    assert_eq!(
        outside_notes("call.rs", text),
        [
            "call.rs:2: a tracer hook outside the fan-out: trace!(self, sent(id, route, owner));",
            "call.rs:8: a limiter notice (`limiting_sent(`) outside the fan-out: self.limiting_sent(id);",
            "call.rs:4: the books' `wasted` outside the fan-out: self.obs",
            "call.rs:7: the time series taken outside the fan-out: if let Some(t) = self.obs.series() {}",
        ]
    );
    // the listeners themselves, and the limiter's own files, are free
    assert!(outside_notes("world/fanout.rs", text).is_empty());
    assert_eq!(
        outside_notes("limiter/actor.rs", "self.limiting_sent(id);\n"),
        Vec::<String>::new()
    );
    assert_eq!(
        outside_notes("world/mod.rs", "let s = self.obs.series().is_none();\n"),
        Vec::<String>::new()
    );
}
