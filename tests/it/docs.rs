//! The docs describe the product as it is: every bundled scenario is in one of
//! the README's tables, and README, docs and `--help` use no words of how the
//! project was made (issue numbers, landings, briefs, sessions).

use crate::common::{resim, root};

/// The README's tables of bundled scenarios: the general one and the course's.
const SCENARIO_TABLES: [&str; 2] = [
    "## The bundled scenarios, in plain English",
    "### The course's scenarios",
];

#[test]
fn every_bundled_scenario_is_in_the_readme_table() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut table: Vec<&str> = Vec::new();
    let (mut inside, mut in_code) = (false, false);
    for l in readme.lines() {
        if l.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code && l.starts_with('#') {
            // a heading ends the section before it
            inside = SCENARIO_TABLES.contains(&l);
        } else if inside && l.starts_with("| `") {
            table.push(l);
        }
    }
    for heading in SCENARIO_TABLES {
        assert!(
            readme.lines().any(|l| l == heading),
            "no `{heading}` in the README"
        );
    }
    let missing: Vec<&str> = resim::scenario::bundled::names()
        .into_iter()
        .filter(|n| !table.iter().any(|row| row.contains(&format!("`{n}.toml`"))))
        .collect();
    assert!(missing.is_empty(), "not in the README's table: {missing:?}");
}

/// The README's tour of the format shows a whole scenario: it loads.
#[test]
fn the_readme_tour_is_a_scenario_that_loads() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("## A short tour"))
        .skip_while(|l| *l != "```toml")
        .skip(1)
        .take_while(|l| *l != "```")
        .collect();
    assert!(!block.is_empty(), "no TOML block in the README's tour");
    let (_dir, path) = crate::common::file_with(&block.join("\n"));
    resim().arg("check").arg(&path).assert().success();
}

/// Words that belong to the project's history, not to its user docs.
const PROCESS_WORDS: [&str; 10] = [
    "issue ",
    "landing",
    "the brief",
    "project brief",
    "session",
    "m3 release",
    "release m3",
    "not on main",
    "once client policies land",
    "performance landing",
];

fn process_words(name: &str, text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    PROCESS_WORDS
        .iter()
        .filter(|w| {
            lower.match_indices(*w).any(|(i, _)| {
                // "issue 13" and "Issue 17" are process words; an issue a user
                // files upstream ("finagle#946") is not written so
                **w != "issue " || lower[i + 6..].starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .map(|w| format!("{name}: `{w}`"))
        .collect()
}

#[test]
fn user_docs_and_help_speak_of_the_product_only() {
    let mut found = Vec::new();
    let mut files = vec![root().join("README.md")];
    for folder in ["docs", "docs/guides"] {
        for e in std::fs::read_dir(root().join(folder)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_some_and(|x| x == "md") {
                files.push(path);
            }
        }
    }
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        found.extend(process_words(&f.display().to_string(), &text));
    }
    for cmd in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["sweep", "--help"],
        vec!["merge", "--help"],
        vec!["boundary", "--help"],
        vec!["check", "--help"],
        vec!["new", "--help"],
    ] {
        let out = resim().args(&cmd).output().unwrap();
        found.extend(process_words(
            &cmd.join(" "),
            &String::from_utf8_lossy(&out.stdout),
        ));
    }
    assert!(found.is_empty(), "process words in user docs: {found:#?}");
}

/// Each kind's row in docs/scenarios.md starts with its name and its keys
/// as its declaration gives them (the one validation reads): a key added,
/// renamed or given another default or range shows here until the docs say
/// it too. `section` names the table in the failure.
fn rows_are_the_declarations(kinds: &[&resim::kinds::keys::Decl], section: &str) {
    let docs = std::fs::read_to_string(root().join("docs/scenarios.md")).unwrap();
    let wrong: Vec<String> = kinds
        .iter()
        .map(|d| format!("| `{}` | {} |", d.name, d.keys_cell()))
        .filter(|row| !docs.lines().any(|l| l.starts_with(row)))
        .collect();
    assert!(
        wrong.is_empty(),
        "docs/scenarios.md ({section}) should start these rows so:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_budget_key_table_is_the_kinds_declarations() {
    rows_are_the_declarations(resim::kinds::budget::KINDS, "`retry.budget`");
}

#[test]
fn the_concurrency_key_table_is_the_kinds_declarations() {
    rows_are_the_declarations(resim::kinds::concurrency::KINDS, "concurrency limiters");
}

#[test]
fn the_fault_table_is_the_kinds_declarations() {
    rows_are_the_declarations(resim::kinds::fault::KINDS, "`[[faults]]`");
}

/// docs/scenarios.md's `[limiters.NAME]` table gives each key every rate
/// algorithm reads with its declared default (`required` where it has none),
/// and lists the algorithms in the order the reader offers them.
#[test]
fn the_rate_limiter_table_is_the_declarations() {
    use resim::kinds::rate::{KINDS, SHARED};
    let docs = std::fs::read_to_string(root().join("docs/scenarios.md")).unwrap();
    let mut wrong: Vec<String> = SHARED
        .keys
        .iter()
        .map(|k| format!("| `{}` | {}", k.name, k.default_text()))
        .filter(|row| !docs.lines().any(|l| l.starts_with(row.as_str())))
        .collect();
    let names: Vec<String> = KINDS.iter().map(|d| format!("`{}`", d.name)).collect();
    let (last, rest) = names.split_last().unwrap();
    let algorithm = format!(
        "| `algorithm` | `\"{}\"` | {} or {last} ",
        KINDS[0].name,
        rest.join(", ")
    );
    if !docs.lines().any(|l| l.starts_with(&algorithm)) {
        wrong.push(algorithm);
    }
    assert!(
        wrong.is_empty(),
        "docs/scenarios.md (`[limiters.NAME]`) should start these rows so:\n{}",
        wrong.join("\n")
    );
}

/// docs/scenarios.md's balancer table gives each key of a kind as the
/// kinds' declarations do: its default (`required` where no kind has one) and
/// the kinds that read it, `(required)` after a kind that needs it.
#[test]
fn the_balancer_key_table_is_the_kinds_declarations() {
    use resim::kinds::balance::KINDS;
    let docs = std::fs::read_to_string(root().join("docs/scenarios.md")).unwrap();
    let mut names: Vec<&str> = Vec::new();
    for k in KINDS.iter().flat_map(|d| d.keys) {
        if !names.contains(&k.name) {
            names.push(k.name);
        }
    }
    let mut wrong = Vec::new();
    for name in names {
        let readers: Vec<_> = KINDS
            .iter()
            .filter_map(|d| d.key(name).map(|k| (d.name, k)))
            .collect();
        let default = readers
            .iter()
            .find(|(_, k)| k.default.is_some())
            .map_or("required".to_string(), |(_, k)| k.default_text());
        let kinds: Vec<String> = readers
            .iter()
            .map(|(kind, k)| match k.default {
                None => format!("`{kind}` (required)"),
                Some(_) => format!("`{kind}`"),
            })
            .collect();
        let row = format!("| `{name}` | {default} | {} |", kinds.join(", "));
        if !docs.lines().any(|l| l.starts_with(&row)) {
            wrong.push(row);
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/scenarios.md (Balancers) should start these rows so:\n{}",
        wrong.join("\n")
    );
}
