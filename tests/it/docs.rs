//! The docs describe the product as it is: every bundled scenario is in the
//! README's table, and README, docs and `--help` use no words of how the
//! project was made (issue numbers, landings, briefs, sessions).

use crate::common::{resim, root};

#[test]
fn every_bundled_scenario_is_in_the_readme_table() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("### The bundled scenarios"))
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `"))
        .collect();
    let missing: Vec<&str> = resim::scenario::bundled::names()
        .into_iter()
        .filter(|n| !table.iter().any(|row| row.contains(&format!("`{n}.toml`"))))
        .collect();
    assert!(missing.is_empty(), "not in the README's table: {missing:?}");
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
