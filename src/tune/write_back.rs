//! `--write-back`: the tuned values written into the configuration files a
//! scenario was imported from, each in the field it came from and in that
//! field's own notation (`300ms`, `"0.3s"`, `PT0.3S`, a retry count one less
//! than the attempts), the rest of each file byte for byte.
//!
//! The files are imported again in memory to learn which field gave each
//! tuned key (the import's ledger). Before the search, every tuned key must
//! come from a field the import took as it is ("mapped"), written as one
//! value; the field's notation is found from its text and the value the
//! import made of it. After the search, the edited files are imported again
//! and must give the first import's scenario with only the tuned keys
//! changed, to the tuned values: a value that would mean something else to
//! the system (Istio's `attempts: 0` drops the whole retry policy) is refused,
//! not written.

use super::space::{Domain, Key, Point, number};
use crate::error::{Error, ScenarioError};
use crate::import::config::duration::{Syntax, parse, unit_ms};
use crate::import::config::locate::{self, Scalar};
use crate::import::config::{self, Origin};
use std::path::{Path, PathBuf};

/// Everything the write-back needs, checked before the search.
pub struct WriteBack {
    /// The files, as given, and their contents.
    files: Vec<(PathBuf, Vec<u8>)>,
    /// The scenario they import to.
    imported: toml::Table,
    /// Each tuned key's fields (a key may come from several, all set alike).
    targets: Vec<Target>,
}

/// One field to write a key's value into.
struct Target {
    /// The key's index among the tuned keys.
    key: usize,
    origin: Origin,
    scalar: Scalar,
    form: Form,
}

/// How a field's text gives the key's value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    /// A number: the key's value less `less` (Envoy's `num_retries` and
    /// Istio's `attempts` count retries, the key counts attempts); `whole`
    /// when written without a point.
    Number { less: f64, whole: bool },
    /// A duration with a unit, in a system's syntax (`300ms`, `1.5s`).
    Unit(Syntax, &'static str),
    /// An ISO-8601 duration (`PT0.3S`).
    Iso,
    /// A Spring Boot duration written as a bare number of milliseconds,
    /// which Spring reads whole only (`800`; 300.9 ms is written `300900us`).
    SpringMillis,
}

/// A file written back.
pub struct Written {
    /// The file, as given.
    pub file: PathBuf,
    /// The tuned copy's name in the output folder.
    pub name: String,
    /// Its new content.
    pub text: String,
    /// The change, as a unified diff of the file.
    pub diff: String,
}

/// An error about `--write-back`.
fn wb_error(m: impl Into<String>) -> Error {
    ScenarioError::new("--write-back", m).into()
}

/// A number shown short: at most nine decimals, no trailing zeros.
fn short(x: f64) -> String {
    let r = (x * 1e9).round() / 1e9;
    if r.fract() == 0.0 && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

impl Form {
    /// The form of `text` (a field's value as written, durations in
    /// `syntax`) that gives `v`.
    fn of(text: &str, v: f64, syntax: Syntax) -> Option<Form> {
        let t = text.trim();
        let close = |x: f64| (x - v).abs() <= 1e-9 * v.abs().max(1.0);
        if let Ok(n) = t.parse::<f64>() {
            let whole = !t.contains(['.', 'e', 'E']);
            return [0.0, 1.0]
                .into_iter()
                .find(|less| close(n + less))
                .map(|less| Form::Number { less, whole });
        }
        if syntax == Syntax::Spring && t.len() > 2 && t[..2].eq_ignore_ascii_case("PT") {
            return parse(t, syntax).filter(|x| close(*x)).map(|_| Form::Iso);
        }
        let unit = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        let unit = ["ns", "us", "ms", "s", "m", "h", "d"]
            .into_iter()
            .find(|u| *u == unit)?;
        parse(t, syntax)
            .is_some_and(close)
            .then_some(Form::Unit(syntax, unit))
    }

    /// `v` in this form.
    fn render(self, v: f64) -> String {
        match self {
            Form::Number { less, whole } => {
                let x = v - less;
                if whole && x.fract() == 0.0 {
                    format!("{}", x as i64)
                } else {
                    short(x)
                }
            }
            Form::Iso => format!("PT{}S", short(v / 1e3)),
            Form::SpringMillis if v.fract() == 0.0 => format!("{}", v as i64),
            Form::SpringMillis => Form::Unit(Syntax::Spring, "ms").render(v),
            Form::Unit(Syntax::Protobuf, _) => format!("{}s", short(v / 1e3)),
            Form::Unit(syntax, unit) => {
                let whole = |u: &str| {
                    // every unit tried is one `syntax` reads (the text's own, ms, us, ns)
                    let x = v / unit_ms(u, syntax)?;
                    ((x - x.round()).abs() < 1e-9).then(|| format!("{}{u}", x.round() as i64))
                };
                let fallback = match syntax {
                    // Spring's simple form is a whole number and a unit
                    // (spring-boot convert/DurationStyle.java, SIMPLE's pattern);
                    // Go's time.ParseDuration takes decimals
                    Syntax::Spring => ["ms", "us", "ns"].into_iter().find_map(whole),
                    _ => Some(format!("{}ms", short(v))),
                };
                whole(unit)
                    .or_else(|| whole("ms"))
                    .or(fallback)
                    .unwrap_or_else(|| format!("{}ns", (v * 1e6).round() as i64))
            }
        }
    }
}

/// Reads the files and the scenario they import to.
fn import(files: &[(PathBuf, Vec<u8>)]) -> Result<(toml::Table, Vec<Origin>), Error> {
    let (text, origins) = config::origins(files)?;
    let table = text
        .parse::<toml::Table>()
        .map_err(|e| wb_error(format!("the files' scenario does not read back: {e}")))?;
    Ok((table, origins))
}

/// The scalar of `o` in its file's text.
fn locate(text: &str, o: &Origin) -> Result<Scalar, String> {
    if config::tree::is_properties(&o.file) {
        locate::in_properties(text, &o.steps)
    } else {
        locate::in_yaml(
            text.strip_prefix('\u{feff}').unwrap_or(text),
            o.doc,
            &o.steps,
        )
        .map(|mut s| {
            let bom = text.len() - text.trim_start_matches('\u{feff}').len();
            s.range = s.range.start + bom..s.range.end + bom;
            s
        })
    }
}

impl WriteBack {
    /// Checks that every tuned key comes from one field of `files` that a
    /// value can be written into (None: no file to write back into).
    pub fn prepare(files: &[PathBuf], keys: &[Key]) -> Result<Option<WriteBack>, Error> {
        if files.is_empty() {
            return Ok(None);
        }
        let mut read = Vec::new();
        for f in files {
            let bytes = config::tree::read_bytes(f)?;
            if std::str::from_utf8(&bytes).is_err() {
                return Err(wb_error(format!(
                    "{} is not UTF-8 text: a tuned copy could not keep its other bytes as they are",
                    f.display()
                )));
            }
            if read
                .iter()
                .any(|(g, _): &(PathBuf, _)| g.file_name() == f.file_name())
            {
                return Err(wb_error(format!(
                    "two files are named {}: their tuned copies would have one name",
                    f.file_name().unwrap_or_default().to_string_lossy()
                )));
            }
            read.push((f.clone(), bytes));
        }
        let (imported, origins) = import(&read)?;
        let names = files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let mut targets = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let mine: Vec<&Origin> = origins.iter().filter(|o| o.key == k.key).collect();
            if mine.is_empty() {
                return Err(wb_error(format!(
                    "`{}` is not set from a field of {names}: the import sets it as a placeholder or from several fields, so there is no field to write its value into",
                    k.key
                )));
            }
            for o in mine {
                targets.push(target(i, k, o, &read, &imported)?);
            }
        }
        Ok(Some(WriteBack {
            files: read,
            imported,
            targets,
        }))
    }

    /// The files with `point`'s values written in, each checked by importing
    /// it again; only the files that change.
    pub fn write(&self, keys: &[Key], point: &Point) -> Result<Vec<Written>, Error> {
        let mut texts = Vec::new();
        for (f, bytes) in &self.files {
            let old = String::from_utf8_lossy(bytes).into_owned();
            let mut edits: Vec<(std::ops::Range<usize>, String)> = self
                .targets
                .iter()
                .filter(|t| &t.origin.file == f)
                .map(|t| (t.scalar.inner(), t.form.render(number(&point[t.key]))))
                .collect();
            edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
            edits.dedup_by_key(|e| e.0.start);
            let mut new = old.clone();
            for (range, text) in edits {
                new.replace_range(range, &text);
            }
            texts.push((f.clone(), old, new));
        }
        let again: Vec<(PathBuf, Vec<u8>)> = texts
            .iter()
            .map(|(f, _, new)| (f.clone(), new.clone().into_bytes()))
            .collect();
        let (got, _) = import(&again).map_err(|e| {
            wb_error(format!(
                "the files with the tuned values written in do not import: {e}; nothing was written back"
            ))
        })?;
        let mut want = self.imported.clone();
        for (k, v) in keys.iter().zip(point) {
            crate::scenario::paths::set(&mut want, &k.key, v.clone())
                .map_err(|e| wb_error(e.message))?;
        }
        if let Some(d) = differ(&toml::Value::Table(want), &toml::Value::Table(got), "") {
            return Err(wb_error(format!(
                "the files with the tuned values written in import to another scenario: {d}; nothing was written back"
            )));
        }
        Ok(texts
            .into_iter()
            .filter(|(_, old, new)| old != new)
            .map(|(file, old, new)| {
                let shown = file.display().to_string();
                let name = format!(
                    "tuned-{}",
                    file.file_name().unwrap_or_default().to_string_lossy()
                );
                let diff = similar::udiff::unified_diff(
                    similar::Algorithm::Myers,
                    &old,
                    &new,
                    3,
                    Some((&shown, &shown)),
                );
                Written {
                    file,
                    name,
                    text: new,
                    diff,
                }
            })
            .collect())
    }
}

/// Where `o` (the field of key `k`, number `i`) is written and in what form.
fn target(
    i: usize,
    k: &Key,
    o: &Origin,
    files: &[(PathBuf, Vec<u8>)],
    imported: &toml::Table,
) -> Result<Target, Error> {
    let what = format!("`{}` comes from {} {}", k.key, o.file.display(), o.field);
    if o.fate != config::draft::Fate::Mapped {
        return Err(wb_error(format!(
            "{what}, {}: {}",
            o.fate.word(),
            match o.fate {
                config::draft::Fate::Defaulted => {
                    "the field is absent and the system's default was used; write the field into the file, import it again, then tune"
                }
                _ => "the key's value is not the field's, so a tuned value cannot be written back",
            }
        )));
    }
    let (_, bytes) = files.iter().find(|(f, _)| *f == o.file).expect("read");
    let text = String::from_utf8_lossy(bytes);
    let scalar = locate(&text, o).map_err(|e| wb_error(format!("{what}: {e}")))?;
    let v0 = crate::scenario::paths::get(imported, &k.key)
        .and_then(|v| v.as_integer().map(|i| i as f64).or_else(|| v.as_float()))
        .ok_or_else(|| wb_error(format!("{what}, but it is not a number there")))?;
    let syntax = match o.format {
        crate::import::Format::Istio => Syntax::Go,
        crate::import::Format::Resilience4j => Syntax::Spring,
        _ => Syntax::Protobuf,
    };
    let form = Form::of(&scalar.value, v0, syntax)
        .map(|f| match f {
            // a time (the scenario's `_ms` keys) as Spring's bare milliseconds
            Form::Number { less, whole: true }
                if less == 0.0 && syntax == Syntax::Spring && k.key.ends_with("_ms") =>
            {
                Form::SpringMillis
            }
            f => f,
        })
        .filter(|f| Form::of(&f.render(v0), v0, syntax).is_some())
        .ok_or_else(|| {
            wb_error(format!(
                "{what}: its text `{}` gave {} by a rule that cannot be undone",
                scalar.value,
                short(v0)
            ))
        })?;
    if let Domain::List(vs) = &k.domain
        && vs.iter().any(|v| !v.is_integer() && !v.is_float())
    {
        return Err(wb_error(format!("{what}: only numbers are written back")));
    }
    Ok(Target {
        key: i,
        origin: o.clone(),
        scalar,
        form,
    })
}

/// The first difference between two scenarios, as `key: A -> B`; numbers
/// equal within a billionth.
fn differ(a: &toml::Value, b: &toml::Value, at: &str) -> Option<String> {
    use toml::Value as V;
    let num = |v: &V| v.as_integer().map(|i| i as f64).or_else(|| v.as_float());
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match (a, b) {
        (V::Table(x), V::Table(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) => {
                        if let Some(d) = differ(v, w, &join(k)) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{} would be gone", join(k))),
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{} would appear", join(k)))
        }
        (V::Array(x), V::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| differ(v, w, &format!("{at}[{i}]"))),
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) if (x - y).abs() <= 1e-9 * x.abs().max(1.0) => None,
            _ if a == b => None,
            _ => Some(format!("{at} would be {b} instead of {a}")),
        },
    }
}

/// The unified diff of every file written, one after another.
pub fn diffs(written: &[Written]) -> String {
    written.iter().map(|w| w.diff.as_str()).collect()
}

/// The tuned copies' paths in `dir`.
pub fn paths(written: &[Written], dir: &Path) -> Vec<String> {
    written
        .iter()
        .map(|w| dir.join(&w.name).display().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_found_from_the_text_and_render_alike() {
        let f = |t: &str, v: f64, s: Syntax| Form::of(t, v, s).map(|f| f.render(v * 1.5));
        let go = Syntax::Go;
        assert_eq!(f("3", 4.0, go).as_deref(), Some("5")); // attempts 4 -> 6: 5 retries
        assert_eq!(f("3", 3.0, go).as_deref(), Some("4.5"));
        assert_eq!(f("300ms", 300.0, go).as_deref(), Some("450ms"));
        assert_eq!(f("1s", 1000.0, go).as_deref(), Some("1500ms"));
        assert_eq!(f("1s", 1000.0, Syntax::Protobuf).as_deref(), Some("1.5s"));
        assert_eq!(f("2s", 2000.0, go).as_deref(), Some("3s"));
        assert_eq!(
            f("0.25s", 250.0, Syntax::Protobuf).as_deref(),
            Some("0.375s")
        );
        assert_eq!(
            f("PT0.5S", 500.0, Syntax::Spring).as_deref(),
            Some("PT0.75S")
        );
        assert_eq!(f("100ms", 100.0, Syntax::Protobuf), None, "not protobuf");
        assert_eq!(f("3", 7.0, go), None, "no rule gives 7 from 3");
        assert_eq!(f("fast", 1.0, go), None);
        // Spring's simple form takes whole numbers only
        assert_eq!(Form::Unit(Syntax::Spring, "s").render(300.9), "300900us");
        assert_eq!(Form::SpringMillis.render(300.0), "300");
        assert_eq!(Form::SpringMillis.render(300.9), "300900us");
        assert_eq!(Form::Unit(Syntax::Go, "s").render(300.9), "300.9ms");
        assert_eq!(Form::Unit(Syntax::Protobuf, "s").render(300.9), "0.3009s");
    }

    #[test]
    fn scenarios_differ_by_key() {
        let a: toml::Value = toml::from_str("[p]\nx = 1\ny = { z = 2.0 }").unwrap();
        let b: toml::Value = toml::from_str("[p]\nx = 1.0\ny = { z = 3 }").unwrap();
        assert_eq!(differ(&a, &a, ""), None);
        assert_eq!(
            differ(&a, &b, "").unwrap(),
            "p.y.z would be 3 instead of 2.0"
        );
    }
}
