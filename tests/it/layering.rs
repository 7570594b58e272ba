//! The top-level modules form layers: each may use the modules below it in
//! [`LAYERS`] (and the leaves in [`LEAVES`]), never one above it. The test reads
//! every file under `src/`, finds each `crate::X` (and, in `lib.rs`, each `X::`
//! path that starts at the crate root) and names the file and line of every
//! reference that goes up.

use std::path::{Path, PathBuf};

/// Small modules any module may use; they use only each other.
const LEAVES: &[&str] = &["engine", "error", "format", "memory", "progress", "table"];

/// The layers, lowest first. `lib` stands for the items of `lib.rs` itself (the
/// run of one scenario); `main.rs` uses the library only through `resim::`.
///
/// The data flows scenario file -> scenario -> model -> sim -> metrics ->
/// analysis -> report. Imports follow it except where a stage builds the types
/// of the next: `scenario` (validation) builds `model` values, and `sim` fills
/// `metrics`' sample sets, so `model` and `metrics` sit below their producers.
const LAYERS: &[&str] = &[
    "kinds",
    "model",
    "scenario",
    "metrics",
    "sim",
    "traces",
    "analysis",
    "report",
    "thresholds",
    "lib",
    "sweep",
    "boundary",
    "import",
    "tune",
    "cli",
];

/// Modules `report` must not use though they come before it: the report renders
/// plain view structs (tables, headings, windows) that the modules owning the
/// data fill in, and reads no scenario, no simulation record.
const NOT_IN_REPORT: &[&str] = &["scenario", "sim", "traces"];

fn rank(module: &str) -> Option<usize> {
    if LEAVES.contains(&module) {
        return Some(0);
    }
    LAYERS.iter().position(|m| *m == module).map(|i| i + 1)
}

/// Fails with each offender on a line of its own, after how many there are and
/// what they do wrong.
fn none_of(bad: &[String], what: &str) {
    assert!(bad.is_empty(), "{} {what}:\n{}", bad.len(), bad.join("\n"));
}

pub(crate) fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to: `src/sweep/mod.rs` is `sweep`,
/// `src/thresholds.rs` is `thresholds`, `src/lib.rs` is `lib`.
fn module_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .expect("a path under src")
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.strip_suffix(".rs").unwrap_or(&first).to_string()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The top-level modules a line of code names: `crate::X` (an item of `lib.rs`
/// itself, `crate::run_files`, is `lib`) and, in the crate root, a path that
/// starts with a module's name (`report::to_csv`). Comments are left out.
fn references(line: &str, in_root: bool) -> Vec<String> {
    let code = match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    };
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let before = rest[..i].chars().next_back();
        let name: String = after.chars().take_while(|c| is_ident(*c)).collect();
        if !before.is_some_and(|c| is_ident(c) || c == '$') && !name.is_empty() {
            // `crate::run_files` is an item of the crate root; `pub(in crate::sim)`
            // names a module without a path after it
            let is_module = after[name.len()..].starts_with("::") || rank(&name).is_some();
            out.push(if is_module { name } else { "lib".to_string() });
        }
        rest = after;
    }
    if in_root {
        let chars: Vec<(usize, char)> = code.char_indices().collect();
        for (k, &(i, c)) in chars.iter().enumerate() {
            let starts = is_ident(c)
                && !c.is_ascii_digit()
                && (k == 0 || {
                    let p = chars[k - 1].1;
                    !is_ident(p) && p != ':'
                });
            if !starts {
                continue;
            }
            let name: String = code[i..].chars().take_while(|c| is_ident(*c)).collect();
            if name != "crate" && rank(&name).is_some() && code[i + name.len()..].starts_with("::")
            {
                out.push(name);
            }
        }
    }
    out
}

/// Every reference in `src` from a module to one above it, as
/// `file:line: from -> to: the line`.
fn upward(src: &Path) -> Vec<String> {
    let mut all = Vec::new();
    files(src, &mut all);
    let mut bad = Vec::new();
    for path in &all {
        let rel = path.strip_prefix(src).expect("under src");
        let from = module_of(rel);
        if from == "main" {
            continue;
        }
        let from_rank = rank(&from)
            .unwrap_or_else(|| panic!("{}: add `{from}` to LAYERS or LEAVES", rel.display()));
        let text = std::fs::read_to_string(path).expect("a source file reads");
        for (n, line) in text.lines().enumerate() {
            for to in references(line, from == "lib") {
                if to == from {
                    continue;
                }
                let Some(to_rank) = rank(&to) else {
                    bad.push(format!(
                        "{}:{}: `crate::{to}` is no module in LAYERS or LEAVES",
                        rel.display(),
                        n + 1
                    ));
                    continue;
                };
                if from == "report" && NOT_IN_REPORT.contains(&to.as_str()) {
                    bad.push(format!(
                        "{}:{}: report uses {to}, whose data it should get as a view: {}",
                        rel.display(),
                        n + 1,
                        line.trim()
                    ));
                } else if to_rank > 0 && to_rank >= from_rank {
                    bad.push(format!(
                        "{}:{}: {from} uses {to}, which comes after it: {}",
                        rel.display(),
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    bad
}

#[test]
fn no_module_uses_one_above_it() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    assert!(all.len() > 100, "{} holds the sources", src.display());
    let bad = upward(&src);
    none_of(
        &bad,
        &format!(
            "references go up the layers ({}, leaves {})",
            LAYERS.join(" < "),
            LEAVES.join(", ")
        ),
    );
}

#[test]
fn references_are_found_in_paths_and_the_crate_root() {
    assert_eq!(
        references("use crate::sweep::{Named, RowRunner};", false),
        ["sweep"]
    );
    assert_eq!(
        references(
            "    crate::report::format_number(x) + crate::run_files(s)",
            false
        ),
        ["report", "lib"]
    );
    assert_eq!(
        references("// see crate::sweep::merge", false),
        Vec::<String>::new()
    );
    assert_eq!(
        references("let y = sweep::merge(x);", false),
        Vec::<String>::new()
    );
    assert_eq!(references("let y = sweep::merge(x);", true), ["sweep"]);
    assert_eq!(references("use report::html::RowTimes;", true), ["report"]);
    // a path inside another one is not the crate's module
    assert_eq!(
        references("a::report::b(my_sim::c)", true),
        Vec::<String>::new()
    );
    assert_eq!(references("pub(in crate::sim) fn f()", false), ["sim"]);
}

#[test]
fn a_module_using_one_above_it_is_named_with_its_line() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let src = dir.path();
    std::fs::create_dir_all(src.join("report")).unwrap();
    std::fs::write(
        src.join("report/mod.rs"),
        "use crate::table::Table;\nuse crate::analysis::X;\n\nfn f() { crate::sweep::merge(); }\n",
    )
    .unwrap();
    std::fs::write(src.join("sweep.rs"), "use crate::report::Folder;\n").unwrap();
    std::fs::write(
        src.join("report/json.rs"),
        "use crate::scenario::Scenario;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "pub mod cli;\nfn g() { cli::main(); }\n",
    )
    .unwrap();
    assert_eq!(
        upward(src),
        [
            "lib.rs:2: lib uses cli, which comes after it: fn g() { cli::main(); }",
            "report/json.rs:1: report uses scenario, whose data it should get as a view: use crate::scenario::Scenario;",
            "report/mod.rs:4: report uses sweep, which comes after it: fn f() { crate::sweep::merge(); }",
        ]
    );
}

/// Every file under `sim` but the test modules kept in files of their own
/// (`tests.rs`, `*_tests.rs`): its path under `sim`, and its whole path.
fn sim_code_files(sim: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut all = Vec::new();
    files(sim, &mut all);
    all.into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(sim).expect("under src/sim").to_path_buf();
            let name = rel.file_name()?.to_string_lossy().into_owned();
            (name != "tests.rs" && !name.ends_with("_tests.rs")).then_some((rel, path))
        })
        .collect()
}

/// The modules `sim/mod.rs` declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`).
fn sim_modules(face: &str) -> Vec<String> {
    face.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_suffix(';')?;
            let name = rest.rsplit_once("mod ")?.1;
            (rest.ends_with(&format!("mod {name}")) && name.chars().all(is_ident))
                .then(|| name.to_string())
        })
        .collect()
}

/// Every place in `src/sim` (outside `mod.rs` and test modules, inline or in
/// `tests.rs` / `*_tests.rs` files) that takes an
/// item from the simulation's face, `sim/mod.rs`, rather than from a module
/// under it: `crate::sim::X` or a `super::` chain that ends at `sim` followed by
/// a name that is no module. The face sits on top of the simulation (the run
/// functions, what the crate outside sees); actors take their words from
/// `vocab`. As `file:line: the line`.
fn face_users(sim: &Path) -> Vec<String> {
    let face = std::fs::read_to_string(sim.join("mod.rs")).expect("sim/mod.rs reads");
    let modules = sim_modules(&face);
    let mut bad = Vec::new();
    for (rel, path) in sim_code_files(sim) {
        if rel == Path::new("mod.rs") {
            continue; // the face itself
        }
        // how many `super::` reach the sim root from this file's module
        let depth = rel.components().count() - usize::from(rel.ends_with("mod.rs"));
        let root = "super::".repeat(depth);
        let text = std::fs::read_to_string(path).expect("a source file reads");
        // a `use` list may span lines: read statements, numbered by their first line
        let code: String = text
            .lines()
            .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
            .map(|l| l.find("//").map_or(l, |i| &l[..i]))
            .collect::<Vec<_>>()
            .join("\n");
        for prefix in ["crate::sim::".to_string(), root] {
            let mut from = 0;
            while let Some(i) = code[from..].find(&prefix) {
                let at = from + i;
                from = at + prefix.len();
                let before = code[..at].chars().next_back();
                if before.is_some_and(|c| is_ident(c) || c == ':') {
                    continue; // part of a longer path (`super::super::x` from a deeper file)
                }
                let after = &code[from..];
                if after.starts_with("super::") {
                    continue;
                }
                let names: Vec<&str> = if let Some(list) = after.strip_prefix('{') {
                    let list = &list[..list.find('}').unwrap_or(list.len())];
                    list.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .collect()
                } else {
                    vec![after]
                };
                let to_face = names.iter().any(|n| {
                    let name: String = n.chars().take_while(|c| is_ident(*c)).collect();
                    !modules.contains(&name)
                });
                if to_face {
                    let line = code[..at].matches('\n').count();
                    let shown = code.lines().nth(line).unwrap_or("").trim();
                    bad.push(format!("{}:{}: {shown}", rel.display(), line + 1));
                }
            }
        }
    }
    bad
}

#[test]
fn sim_files_take_their_words_from_vocab_not_the_face() {
    let sim = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let face = std::fs::read_to_string(sim.join("mod.rs")).expect("sim/mod.rs reads");
    assert!(
        sim_modules(&face).len() > 20,
        "sim/mod.rs declares the modules"
    );
    let bad = face_users(&sim);
    none_of(
        &bad,
        "places take an item from sim/mod.rs, which sits above every file of the \
         simulation; import it from the module that defines it (`vocab`, `result`, ...)",
    );
}

#[test]
fn a_sim_file_using_the_face_is_named_with_its_line() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let sim = dir.path();
    std::fs::create_dir_all(sim.join("server")).unwrap();
    std::fs::write(
        sim.join("mod.rs"),
        "mod server;\nmod vocab;\npub(crate) mod world;\npub fn run() {}\n",
    )
    .unwrap();
    std::fs::write(
        sim.join("vocab.rs"),
        "pub(crate) use super::world::World;\n",
    )
    .unwrap();
    std::fs::write(
        sim.join("server/mod.rs"),
        "use super::vocab::World;\nuse super::{vocab, Event};\n\n#[cfg(test)]\nmod tests { use crate::sim::run; }\n",
    )
    .unwrap();
    std::fs::write(
        sim.join("server/queue.rs"),
        "use super::Servers; // the parent, not the face\nuse super::super::vocab::{\n    Event,\n};\nfn f() { crate::sim::run(); }\n",
    )
    .unwrap();
    std::fs::write(sim.join("server/tests.rs"), "use crate::sim::run;\n").unwrap();
    assert_eq!(
        face_users(sim),
        [
            "server/mod.rs:2: use super::{vocab, Event};",
            "server/queue.rs:5: fn f() { crate::sim::run(); }",
        ]
    );
}

/// The fields of `World` in `world/mod.rs` that reach past the world module
/// (`pub(super)` or wider): the actors' states are the world's alone.
fn world_fields(world: &str) -> Vec<String> {
    let start = world
        .find("pub(crate) struct World<")
        .expect("world/mod.rs defines World");
    let body = &world[start..];
    let body = &body[..body.find("\n}").expect("World's definition ends")];
    body.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("pub")?;
            let rest = rest.split_once(' ')?.1;
            let (name, _) = rest.split_once(':')?;
            name.chars().all(is_ident).then(|| name.to_string())
        })
        .collect()
}

#[test]
fn world_keeps_every_field_private() {
    let sim = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let world = std::fs::read_to_string(sim.join("world/mod.rs")).expect("world/mod.rs reads");
    assert!(
        world.contains("\n    servers: Servers,"),
        "World's definition reads as this test expects"
    );
    none_of(
        &world_fields(&world),
        "fields of World reach past the world module; keep the actor's state \
         private to the world and give it methods that take what they need",
    );
}

#[test]
fn a_field_of_world_that_reaches_past_it_is_named() {
    let world = "pub(crate) struct World<'m> {\n    model: &'m Model,\n    pub(super) servers: Servers,\n    pub(crate) calls: Calls,\n    plain: bool,\n}\nfn f() {}\n";
    assert_eq!(world_fields(world), ["servers", "calls"]);
}

/// The lines of `text` ahead of its tests that name `World` in code (comments
/// left out), as `line: the line`.
fn names_of_world(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    code.lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.split("//").next().unwrap_or("");
            l.match_indices("World").any(|(at, _)| {
                let before = l[..at].chars().next_back();
                let after = l[at + "World".len()..].chars().next();
                !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
            })
        })
        .map(|(i, l)| format!("{}: {}", i + 1, l.trim()))
        .collect()
}

/// The files under `src/sim` that may name `World`: the world's own
/// (`world/`) and the face (`mod.rs`), which runs it. Every actor knows
/// nothing of it: its state answers for the instant and the records it is
/// given, and the world carries out what it says.
fn may_name_world(rel: &Path) -> bool {
    rel.starts_with("world") || rel == Path::new("mod.rs")
}

#[test]
fn no_actor_knows_the_world() {
    let sim = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut bad = Vec::new();
    let mut actors = 0;
    for (rel, path) in sim_code_files(&sim) {
        if may_name_world(&rel) {
            continue;
        }
        actors += 1;
        let text = std::fs::read_to_string(&path).expect("a sim file reads");
        bad.extend(
            names_of_world(&text)
                .into_iter()
                .map(|l| format!("{}:{l}", rel.display())),
        );
    }
    assert!(actors > 20, "the actors' files are found ({actors})");
    none_of(
        &bad,
        "places name World outside the world module; give the actor's state a \
         method that takes what it needs, and call it from a file under world/",
    );
}

#[test]
fn a_name_of_world_in_code_is_found_and_one_in_a_comment_or_a_longer_name_is_not() {
    let text = "use super::vocab::World;\n/// the World asks\nstruct WorldView;\nimpl World<'_> {}\n#[cfg(test)]\nmod tests { use World; }\n";
    assert_eq!(
        names_of_world(text),
        ["1: use super::vocab::World;", "4: impl World<'_> {}"]
    );
}
