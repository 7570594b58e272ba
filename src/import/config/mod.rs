//! `resim import` of configuration files: the resilience settings a system
//! already runs with (a gRPC service config, a resilience4j configuration),
//! turned into a scenario that runs them.
//!
//! ```text
//! files -> tree::read (JSON or YAML, into one tree) -> the format's importer
//!       -> draft::Draft (the scenario's tables) + draft::Ledger (every field)
//!       -> SCENARIO.toml (placeholders marked `# set me`) + SCENARIO.import.md
//! ```
//!
//! Each importer reads the fields its system documents, refuses a field it
//! does not know (naming its path and the closest known field) and records
//! what became of every field it read: mapped to a scenario key, approximated
//! (how), defaulted (the system's documented default, where the field is
//! absent) or ignored (why). [`draft::Ledger::close`] then lists any leaf of
//! the file no importer accounted for, so nothing is dropped silently.

pub mod draft;
pub mod duration;
pub mod envoy;
pub mod envoy_cluster;
pub mod envoy_retry;
pub mod grpc;
pub mod istio;
pub mod istio_rule;
pub mod locate;
pub mod resilience4j;
pub mod spec;
pub mod spring;
pub mod sweep_period;
pub mod tree;

use super::Format;
use super::report::{ImportReport, Section, Source as ReportSource, Table};
use crate::error::{Error, ScenarioError};
use std::path::Path;

/// The configuration format of a read file, from its content.
pub fn detect(src: &tree::Source) -> Option<Format> {
    let first = src.docs.first()?;
    if grpc::looks_like(first) {
        Some(Format::Grpc)
    } else if resilience4j::looks_like(first) {
        Some(Format::Resilience4j)
    } else if envoy::looks_like(first) {
        Some(Format::Envoy)
    } else if src.docs.iter().any(istio::looks_like) {
        Some(Format::Istio)
    } else {
        None
    }
}

/// Is `path` a configuration file (rather than traces)? Told from its first
/// 4 KiB: a `.yaml`/`.yml` file, or UTF-8 text that names a configuration's
/// top-level key (`methodConfig`, `resilience4j`, ...). Anything else (JSON
/// traces, a compressed or empty file) goes to the trace reader, whose
/// messages name what is wrong with a trace file.
pub fn sniff(path: &Path) -> bool {
    use std::io::Read;
    if path.extension().is_some_and(|x| {
        x.eq_ignore_ascii_case("yaml")
            || x.eq_ignore_ascii_case("yml")
            || x.eq_ignore_ascii_case("properties")
    }) {
        return true;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(4096);
    if f.take(4096).read_to_end(&mut head).is_err() {
        return false;
    }
    // a cut in the middle of a character at the 4 KiB mark is still text
    let text = match std::str::from_utf8(&head) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => return false,
    };
    const KEYS: [&str; 7] = [
        "methodConfig",
        "method_config",
        "retryThrottling",
        "loadBalancingConfig",
        "resilience4j",
        "static_resources",
        "apiVersion",
    ];
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        KEYS.iter().any(|k| t.contains(&format!("\"{k}\"")))
            || t.contains("\"resilience4j.")
            || (t.contains("\"configs\"") && t.contains("type.googleapis.com/envoy.admin"))
    } else {
        // YAML: a top-level key at the start of a line; Spring's dotted keys
        // (`resilience4j.retry:`) and properties (`resilience4j.retry...=3`)
        t.lines().any(|l| {
            l.starts_with("resilience4j.")
                || KEYS
                    .iter()
                    .any(|k| l.starts_with(k) && l[k.len()..].trim_start().starts_with(':'))
        })
    }
}

/// Choices where the real systems differ and the files do not say which.
#[derive(Debug, Clone, Copy, Default)]
pub struct Choices {
    /// How the gRPC clients spread their retry back-off.
    pub grpc_backoff: grpc::Backoff,
}

/// Reads the configuration files and builds the scenario's text and report.
pub fn build(
    files: &[std::path::PathBuf],
    forced: Option<Format>,
    choices: Choices,
    scenario: &Path,
) -> Result<(String, ImportReport), Error> {
    let (sources, srcs) = read_all(files, forced, &tree::read)?;
    let (draft, led) = drafted(files, &srcs, choices, scenario)?;
    let report = report(&draft, &led, sources, &srcs, scenario);
    Ok((draft.toml(), report))
}

/// The scenario the files read make (`scenario`: the path it is written
/// to, named in its head) and the ledger of their fields.
fn drafted(
    files: &[std::path::PathBuf],
    srcs: &[(Format, tree::Source)],
    choices: Choices,
    scenario: &Path,
) -> Result<(draft::Draft, draft::Ledger), Error> {
    let mut draft = draft::Draft::default();
    let mut led = draft::Ledger::default();
    head(&mut draft, files, srcs, scenario);
    import_all(srcs, choices, &mut draft, &mut led)?;
    // one importer per run: two files that each build the scenario would collide
    let mut heads: Vec<&str> = draft.tabs.iter().map(|t| t.header.as_str()).collect();
    heads.sort_unstable();
    if let Some(w) = heads.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::from(ScenarioError::new(
            "",
            format!(
                "two of these files both define [{}]: import them one at a time",
                w[0]
            ),
        )));
    }
    Ok((draft, led))
}

/// A field of a configuration file and the scenario key it went to.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The file, as given.
    pub file: std::path::PathBuf,
    /// The file's format.
    pub format: Format,
    /// Its document in the file.
    pub doc: usize,
    /// Its path, as steps.
    pub steps: Vec<tree::Step>,
    /// Its path as the report shows it.
    pub field: String,
    /// What became of it.
    pub fate: draft::Fate,
    /// The scenario key it went to.
    pub key: String,
}

/// The scenario [`build`] makes of `texts` (each a file as given and its
/// content), and the field behind each scenario key: what writing a value
/// back into the files needs. Every file's format is told by its content.
pub fn origins(texts: &[(std::path::PathBuf, Vec<u8>)]) -> Result<(String, Vec<Origin>), Error> {
    let files: Vec<_> = texts.iter().map(|(f, _)| f.clone()).collect();
    let read = |p: &Path| -> Result<tree::Source, Error> {
        let (_, bytes) = texts.iter().find(|(f, _)| f == p).expect("a file given");
        tree::parse(p, bytes)
    };
    let (_, srcs) = read_all(&files, None, &read)?;
    let (draft, led) = drafted(&files, &srcs, Choices::default(), Path::new("tuned.toml"))?;
    let origins = led
        .lines
        .into_iter()
        .filter(|l| !l.key.is_empty())
        .filter_map(|l| {
            let (format, src) = srcs
                .iter()
                .find(|(_, s)| s.file.display().to_string() == l.file)?;
            Some(Origin {
                file: src.file.clone(),
                format: *format,
                doc: l.doc,
                steps: l.steps,
                field: l.field,
                fate: l.fate,
                key: l.key,
            })
        })
        .collect();
    Ok((draft.toml(), origins))
}

/// The files read: the report's sources, and each file's format and tree.
type Read = (Vec<ReportSource>, Vec<(Format, tree::Source)>);

/// Reads each file and tells its format: the report's sources and the trees.
fn read_all(
    files: &[std::path::PathBuf],
    forced: Option<Format>,
    read: &dyn Fn(&Path) -> Result<tree::Source, Error>,
) -> Result<Read, Error> {
    let mut sources = Vec::new();
    let mut srcs = Vec::new();
    for f in files {
        let mut src = read(f)?;
        let format = match (forced, detect(&src)) {
            (Some(want), Some(got)) if want != got => {
                return Err(ScenarioError::new(
                    "",
                    format!(
                        "--from {} was given, but this is a {} file",
                        want.flag(),
                        got.title()
                    ),
                )
                .in_file(f)
                .into());
            }
            (Some(want), _) => want,
            (None, Some(got)) => got,
            (None, None) => {
                return Err(ScenarioError::new(
                    "",
                    "not a format resim import knows: a gRPC service config (JSON with `methodConfig`), an Envoy bootstrap (`static_resources`) or config dump (`configs`), Istio resources (`apiVersion: networking.istio.io/...`), a resilience4j configuration (a `resilience4j` key, in YAML, JSON or a `.properties` file), or traces (OTLP, Jaeger or Zipkin JSON)",
                )
                .in_file(f)
                .into());
            }
        };
        sources.push(ReportSource {
            file: f.display().to_string(),
            format: format.title().into(),
            bytes: src.bytes,
            read: format!(
                "{} document{}",
                src.docs.len(),
                if src.docs.len() == 1 { "" } else { "s" }
            ),
            note: None,
        });
        if format == Format::Resilience4j {
            // Spring binds `resilience4j.retry: {...}` and the properties
            // `resilience4j.retry.instances...` as the nested keys
            src = tree::spring(src, &resilience4j::wanted)?;
        }
        srcs.push((format, src));
    }
    Ok((sources, srcs))
}

/// The scenario's head comments and its `[scenario]` table.
fn head(
    draft: &mut draft::Draft,
    files: &[std::path::PathBuf],
    srcs: &[(Format, tree::Source)],
    scenario: &Path,
) {
    let stem = scenario
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".into());
    let names: Vec<String> = files
        .iter()
        .map(|f| {
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let mut titles: Vec<&str> = srcs.iter().map(|(f, _)| f.title()).collect();
    titles.dedup();
    let (names, titles) = (names.join(", "), titles.join(", "));
    draft.head.push(format!(
        "Imported by `resim import` from {names} ({titles})."
    ));
    draft.head.push(
        "Keys marked `# set me` are placeholders: the files do not say them. Check them, then run."
            .into(),
    );
    draft.head.push(format!(
        "What became of every field: {stem}.import.md beside this file."
    ));
    let mut scen = draft::Tab::new("scenario");
    scen.put("name", draft::Val::s(&format!("Imported: {names}")));
    scen.put(
        "about",
        draft::Val::s(&format!(
            "The resilience settings of {names} ({titles}), with placeholder traffic and service times."
        )),
    );
    scen.put("seed", draft::Val::n(1.0));
    draft.tabs.push(scen);
}

/// Runs each file's importer (Istio's once, over all its files).
fn import_all(
    srcs: &[(Format, tree::Source)],
    choices: Choices,
    draft: &mut draft::Draft,
    led: &mut draft::Ledger,
) -> Result<(), Error> {
    let istio: Vec<&tree::Source> = srcs
        .iter()
        .filter(|(f, _)| *f == Format::Istio)
        .map(|(_, s)| s)
        .collect();
    if !istio.is_empty() {
        istio::import(&istio, draft, led)?;
    }
    for (format, src) in srcs {
        // Istio reads every document, resilience4j picks its own
        if src.docs.len() > 1 && !matches!(format, Format::Istio | Format::Resilience4j) {
            for d in 1..src.docs.len() {
                let n = src.root(d);
                led.note(
                    &n,
                    draft::Fate::Ignored,
                    "",
                    "a further YAML document: this format takes one",
                );
            }
        }
        match format {
            Format::Grpc => grpc::import(src, choices.grpc_backoff, draft, led)?,
            Format::Resilience4j => resilience4j::import(src, draft, led)?,
            Format::Envoy => envoy::import(src, draft, led)?,
            Format::Istio => {}
            other => {
                return Err(ScenarioError::new(
                    "",
                    format!(
                        "is {}: traces cannot be imported together with configuration files",
                        other.title()
                    ),
                )
                .in_file(&src.file)
                .into());
            }
        }
        led.close(src);
    }
    Ok(())
}

/// The import report: the summary, the warnings, the placeholders and the
/// ledger.
fn report(
    draft: &draft::Draft,
    led: &draft::Ledger,
    sources: Vec<ReportSource>,
    srcs: &[(Format, tree::Source)],
    scenario: &Path,
) -> ImportReport {
    let mut report = ImportReport {
        scenario: scenario.display().to_string(),
        sources,
        ..Default::default()
    };
    report.summary.push(format!(
        "{} fields: {} mapped, {} approximated, {} defaults used, {} ignored",
        led.lines.len() - led.count(draft::Fate::Defaulted),
        led.count(draft::Fate::Mapped),
        led.count(draft::Fate::Approximated),
        led.count(draft::Fate::Defaulted),
        led.count(draft::Fate::Ignored)
    ));
    let set_mes = draft.set_mes();
    report.summary.push(format!(
        "{} placeholders marked `# set me` in the scenario (rates, service times, slots: the files do not say them)",
        set_mes.len()
    ));
    for l in &led.lines {
        // where the field is written, as an error names it: FILE:LINE:COLUMN
        let at = || {
            let src = srcs
                .iter()
                .find(|(_, s)| s.file.display().to_string() == l.file);
            match src.and_then(|(_, s)| s.position(l.doc, &l.steps)) {
                Some((line, col)) => format!("{}:{line}:{col}", l.file),
                None => l.file.clone(),
            }
        };
        if l.fate == draft::Fate::Approximated {
            let w = format!("{}: {}: approximated: {}", at(), l.field, l.how);
            report.warnings.push(w);
        }
        if l.warn {
            report
                .warnings
                .push(format!("{}: {}: {}", at(), l.field, l.how));
        }
    }
    let mut t = Table::new(&["key", "why"]);
    for s in &set_mes {
        let (k, why) = s.split_once(": ").unwrap_or((s, ""));
        t.push(vec![k.to_string(), why.to_string()]);
    }
    report.sections.push(Section {
        heading: "Placeholders (`# set me`)".into(),
        text: vec!["The files say nothing of these: the scenario holds a guess for each. Set them to your system's figures.".into()],
        table: Some(t),
    });
    report.sections.push(led.section());
    report
}

/// Each format's field tables, as the docs show them: `(format, tables)`.
/// The docs' "Scenarios from configurations" section holds each between
/// `<!-- fields: FORMAT -->` and `<!-- end fields -->`.
pub fn field_docs() -> Vec<(&'static str, String)> {
    let tables = |ts: &[&spec::Table]| ts.iter().map(|t| t.markdown()).collect::<String>();
    vec![
        ("grpc", tables(&grpc::TABLES)),
        ("envoy", tables(&envoy::TABLES)),
        ("istio", tables(&istio::TABLES)),
        ("resilience4j", resilience4j::docs()),
    ]
}

#[cfg(test)]
mod tests {
    /// The docs' field tables are the ones the importers read by: set
    /// `RESIM_WRITE_FIELD_DOCS=1` to write them into docs/scenarios.md.
    #[test]
    fn the_docs_field_tables_are_the_importers_own() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scenarios.md");
        let mut docs = std::fs::read_to_string(path).expect("docs/scenarios.md");
        let write = std::env::var_os("RESIM_WRITE_FIELD_DOCS").is_some();
        for (format, want) in super::field_docs() {
            let begin = format!("<!-- fields: {format} -->\n");
            let end = "<!-- end fields -->";
            let at = docs
                .find(&begin)
                .unwrap_or_else(|| panic!("docs/scenarios.md has no `{}`", begin.trim()))
                + begin.len();
            let len = docs[at..]
                .find(end)
                .unwrap_or_else(|| panic!("no `{end}` after `{}`", begin.trim()));
            let got = &docs[at..at + len];
            if write {
                docs.replace_range(at..at + len, &want);
            } else {
                assert_eq!(
                    got, want,
                    "the {format} field tables of docs/scenarios.md differ from the importer's: run `RESIM_WRITE_FIELD_DOCS=1 cargo test --lib the_docs_field_tables` and read the change"
                );
            }
        }
        if write {
            std::fs::write(path, docs).expect("write docs/scenarios.md");
        }
    }
}
