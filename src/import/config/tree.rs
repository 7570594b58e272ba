//! A parsed configuration file (JSON or YAML, read into one tree) and the
//! nodes of it an importer reads: each knows its path in the file, so every
//! error and every line of the import report names the field it is about, as
//! a JSON pointer (`/methodConfig/0/timeout`) in a JSON file and as a YAML path
//! (`resilience4j.retry.instances.backendA.maxAttempts`) in a YAML file.

pub use super::locate::Step;
use super::locate::Written;
use crate::error::{Error, ScenarioError, did_you_mean, list};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// One configuration file, read.
#[derive(Debug)]
pub struct Source {
    /// The file, as given.
    pub file: PathBuf,
    /// Its documents (a YAML file may hold several, split by `---`).
    pub docs: Vec<Value>,
    /// YAML (paths shown dotted) or JSON (paths shown as pointers).
    pub yaml: bool,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its text (as read, for the positions of its errors).
    text: String,
    /// Its values' positions, read from `text` at the first error that asks.
    written: std::cell::OnceCell<Option<Written>>,
}

/// A value of a file, with its path.
#[derive(Debug, Clone)]
pub struct Node<'a> {
    /// The value.
    pub v: &'a Value,
    /// Where it is.
    pub steps: Vec<Step>,
    /// The file it is in.
    pub src: &'a Source,
    /// Which document of the file (0 for most files).
    pub doc: usize,
}

impl Source {
    /// A file read: its documents, `yaml` (paths shown dotted; JSON's as
    /// pointers), its size and its text.
    pub fn new(file: &Path, docs: Vec<Value>, yaml: bool, bytes: u64, text: &str) -> Source {
        Source {
            file: file.to_path_buf(),
            docs,
            yaml,
            bytes,
            text: text.to_string(),
            written: std::cell::OnceCell::new(),
        }
    }

    /// The 1-based line and column where the value at `steps` of document
    /// `doc` is written (or the key nearest above it); None where the file
    /// does not show it.
    pub fn position(&self, doc: usize, steps: &[Step]) -> Option<(usize, usize)> {
        let properties = is_properties(&self.file);
        let written = self
            .written
            .get_or_init(|| Written::read(&self.text, properties));
        written.as_ref()?.line_col(&self.text, doc, steps)
    }

    /// The root of document `i`.
    pub fn root(&self, i: usize) -> Node<'_> {
        Node {
            v: &self.docs[i],
            steps: Vec::new(),
            src: self,
            doc: i,
        }
    }

    /// `steps` shown as this file's kind of path.
    pub fn shown(&self, doc: usize, steps: &[Step]) -> String {
        let mut s = String::new();
        if self.yaml {
            if self.docs.len() > 1 {
                s.push_str(&format!("(document {}) ", doc + 1));
            }
            for (i, st) in steps.iter().enumerate() {
                match st {
                    Step::Key(k) if i == 0 => s.push_str(k),
                    Step::Key(k) => {
                        s.push('.');
                        s.push_str(k)
                    }
                    Step::Index(n) => s.push_str(&format!("[{n}]")),
                }
            }
            if steps.is_empty() {
                s.push_str("(top)");
            }
        } else {
            s = pointer(steps);
        }
        s
    }
}

/// `steps` as a JSON pointer (`/methodConfig/0/timeout`; `/` for the top).
fn pointer(steps: &[Step]) -> String {
    let mut s = String::new();
    for st in steps {
        s.push('/');
        match st {
            Step::Key(k) => s.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Step::Index(n) => s.push_str(&n.to_string()),
        }
    }
    if steps.is_empty() {
        s.push('/');
    }
    s
}

/// A key compared the way Spring Boot binds properties ("relaxed binding"):
/// `max-attempts`, `max_attempts` and `maxAttempts` are one key.
pub fn relaxed(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl<'a> Node<'a> {
    /// Its path, as the file's kind shows paths.
    pub fn path(&self) -> String {
        self.src.shown(self.doc, &self.steps)
    }

    /// An error about this value: the file, the path and what is wrong.
    pub fn err(&self, message: impl Into<String>) -> Error {
        ScenarioError::new(self.path(), message)
            .in_file(&self.src.file)
            .at(self.src.position(self.doc, &self.steps))
            .into()
    }

    fn child(&self, v: &'a Value, step: Step) -> Node<'a> {
        let mut steps = self.steps.clone();
        steps.push(step);
        Node {
            v,
            steps,
            src: self.src,
            doc: self.doc,
        }
    }

    /// Its value as a mapping.
    pub fn map(&self) -> Result<&'a Map<String, Value>, Error> {
        self.v
            .as_object()
            .ok_or_else(|| self.err(format!("must be a mapping (got {})", kind(self.v))))
    }

    /// Its entries, each key checked against `known` (by relaxed binding when
    /// `relax`): an unknown key is an error naming it, with the closest known
    /// one. Returns (the known name, the node) in the file's order.
    pub fn fields(
        &self,
        known: &[&'static str],
        relax: bool,
    ) -> Result<Vec<(&'static str, Node<'a>)>, Error> {
        let m = self.map()?;
        let mut out = Vec::with_capacity(m.len());
        for (k, v) in m {
            let hit = known.iter().find(|n| {
                if relax {
                    relaxed(n) == relaxed(k)
                } else {
                    **n == k.as_str()
                }
            });
            let node = self.child(v, Step::Key(k.clone()));
            match hit {
                Some(n) => out.push((*n, node)),
                None => {
                    return Err(node.err(format!(
                        "not a field this importer knows here{}; known: {}",
                        did_you_mean(k, known.iter().copied()),
                        list(known.iter().copied())
                    )));
                }
            }
        }
        Ok(out)
    }

    /// The entries of a mapping whose keys are names (instances, configs).
    pub fn named(&self) -> Result<Vec<(String, Node<'a>)>, Error> {
        Ok(self
            .map()?
            .iter()
            .map(|(k, v)| (k.clone(), self.child(v, Step::Key(k.clone()))))
            .collect())
    }

    /// Its value as a list.
    pub fn items(&self) -> Result<Vec<Node<'a>>, Error> {
        let a = self
            .v
            .as_array()
            .ok_or_else(|| self.err(format!("must be a list (got {})", kind(self.v))))?;
        Ok(a.iter()
            .enumerate()
            .map(|(i, v)| self.child(v, Step::Index(i)))
            .collect())
    }

    /// Its value as a string.
    pub fn str(&self) -> Result<&'a str, Error> {
        self.v
            .as_str()
            .ok_or_else(|| self.err(format!("must be a string (got {})", kind(self.v))))
    }

    /// Its value as a finite number (a string holding one is accepted, as
    /// protobuf's JSON mapping and YAML files write them).
    pub fn num(&self) -> Result<f64, Error> {
        let n = match self.v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match n {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(self.err(format!("must be a number (got {})", kind(self.v)))),
        }
    }

    /// Its value as a whole number >= 0.
    pub fn whole(&self) -> Result<u64, Error> {
        let x = self.num()?;
        if x < 0.0 || x.fract() != 0.0 || x > 1e15 {
            return Err(self.err(format!(
                "must be a whole number >= 0 (got {})",
                crate::error::num(x)
            )));
        }
        Ok(x as u64)
    }

    /// Its value as a whole number from 0 to `max`, the range of the field's
    /// type in the system that reads it (`kind` names it, as "a protobuf
    /// uint32"): a larger value is refused there, so it is refused here.
    pub fn whole_to(&self, max: u64, kind: &str) -> Result<u64, Error> {
        let x = self.num()?;
        if x >= 0.0 && x.fract() == 0.0 && x > max as f64 {
            return Err(self.err(format!(
                "{} is beyond {kind}'s range (at most {max})",
                crate::error::num(x)
            )));
        }
        self.whole()
    }

    /// A protobuf `uint32` (Envoy's and Istio's counts): 0 to 4294967295.
    pub fn u32(&self) -> Result<u64, Error> {
        self.whole_to(u32::MAX as u64, "a protobuf uint32")
    }

    /// A 32-bit signed integer (protobuf `int32`, Java `int`), >= 0.
    pub fn i32(&self, kind: &str) -> Result<u64, Error> {
        self.whole_to(i32::MAX as u64, kind)
    }

    /// Its value as a boolean (`"true"`/`"false"` strings accepted).
    pub fn bool(&self) -> Result<bool, Error> {
        match self.v {
            Value::Bool(b) => Ok(*b),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(self.err(format!("must be true or false (got {})", kind(self.v)))),
        }
    }

    /// The value as it is shown in the report (short).
    pub fn shown_value(&self) -> String {
        let s = match self.v {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        if s.chars().count() > 60 {
            format!("{}...", s.chars().take(57).collect::<String>())
        } else {
            s
        }
    }
}

/// What a value is, for messages.
pub fn kind(v: &Value) -> String {
    match v {
        Value::Null => "nothing".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {:?}", crate::error::printable(s)),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a mapping".into(),
    }
}

/// Every leaf of `v` (a scalar, or an empty list or mapping) with its path.
pub fn leaves(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                at.push(Step::Key(k.clone()));
                leaves(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                at.push(Step::Index(i));
                leaves(x, at, out);
                at.pop();
            }
        }
        _ => out.push(at.clone()),
    }
}

/// Reads `path` as JSON (when it parses as JSON) or YAML.
pub fn read(path: &Path) -> Result<Source, Error> {
    parse(path, &read_bytes(path)?)
}

/// The bytes of the configuration file `path`: a missing file, a folder
/// and a file of more than 64 MiB are refused, naming the file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, Error> {
    let bad = |m: String| Error::from(ScenarioError::new("", m).in_file(path));
    let meta = std::fs::metadata(path).map_err(|_| {
        bad(format!(
            "cannot read it: {}",
            crate::scenario::missing_reason(path)
        ))
    })?;
    if meta.is_dir() {
        return Err(bad("is a folder, not a configuration file".into()));
    }
    if meta.len() > 64 << 20 {
        return Err(bad(format!(
            "is {} bytes: a configuration file of more than 64 MiB is refused",
            meta.len()
        )));
    }
    std::fs::read(path).map_err(|e| Error::Io {
        context: format!("cannot read {}", path.display()),
        source: e,
        user_path: true,
    })
}

/// Whether `path` is a Java `.properties` file (read line by line, not as
/// JSON or YAML).
pub fn is_properties(path: &Path) -> bool {
    path.extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("properties"))
}

/// `bytes`, the content of `path`, read as [`read`] reads a file.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Source, Error> {
    let bad = |m: String| Error::from(ScenarioError::new("", m).in_file(path));
    let meta_len = bytes.len() as u64;
    if is_properties(path) {
        return read_properties(path, bytes, meta_len);
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|e| bad(format!("is not UTF-8 text (byte {})", e.valid_up_to())))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let json_like = text.trim_start().starts_with(['{', '[']);
    if json_like {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => {
                if let Err(e) = no_duplicate_keys(text) {
                    return Err(ScenarioError::new("", strip_position(e.to_string()))
                        .in_file(path)
                        .at(Some((e.line(), e.column())))
                        .into());
                }
                return Ok(Source::new(path, vec![v], false, meta_len, text));
            }
            Err(e) if !path.extension().is_some_and(|x| x == "yaml" || x == "yml") => {
                let m = e.to_string();
                let m = m
                    .rfind(" at line ")
                    .map(|i| m[..i].to_string())
                    .unwrap_or(m);
                return Err(ScenarioError::new("", format!("not valid JSON: {m}"))
                    .in_file(path)
                    .at(Some((e.line(), e.column())))
                    .into());
            }
            Err(_) => {}
        }
    }
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| {
        let m = e.to_string();
        let first = m.lines().next().unwrap_or("");
        // the YAML reader's advice is about its own options, not the file
        let first = first
            .split(", set DuplicateKeyPolicy")
            .next()
            .unwrap_or(first)
            .to_string();
        bad(format!("not valid YAML (nor JSON): {first}"))
    })?;
    let docs: Vec<Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
    if docs.is_empty() {
        return Err(bad("is empty: no configuration in it".into()));
    }
    Ok(Source::new(path, docs, true, meta_len, text))
}

/// `serde_json`'s message without its " at line L column C" (the position
/// is given apart).
fn strip_position(m: String) -> String {
    m.rfind(" at line ")
        .map(|i| m[..i].to_string())
        .unwrap_or(m)
}

/// Refuses a JSON text in which a mapping holds one key twice, naming the
/// key's JSON pointer: a parser keeps one of the two values (serde_json and
/// protobuf's JSON parsing the last, some the first), so which setting
/// the system runs with is not what the file seems to say.
fn no_duplicate_keys(text: &str) -> Result<(), serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    Dups(&mut Vec::new()).deserialize(&mut de)?;
    de.end()
}

/// A walk over a JSON value that checks each mapping's keys, knowing the
/// path to it.
struct Dups<'p>(&'p mut Vec<Step>);

impl<'de> serde::de::DeserializeSeed<'de> for Dups<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Dups<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            self.0.push(Step::Index(i));
            let more = a.next_element_seed(Dups(self.0))?;
            self.0.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(k) = a.next_key::<String>()? {
            self.0.push(Step::Key(k.clone()));
            if !keys.insert(k.clone()) {
                let at = pointer(self.0);
                return Err(serde::de::Error::custom(format!(
                    "{at}: the key `{}` is given twice in one mapping: which value a system takes differs (the last in most JSON readers), so remove one",
                    crate::error::printable(&k)
                )));
            }
            a.next_value_seed(Dups(self.0))?;
            self.0.pop();
        }
        Ok(())
    }
}

/// Reads a `.properties` file (UTF-8, or ISO-8859-1 as `java.util.Properties`
/// reads a file that is not UTF-8): one mapping of property names per
/// document ([`super::spring::properties`]), which [`spring`] reads as a
/// tree; its paths are shown as the property names.
fn read_properties(path: &Path, bytes: &[u8], len: u64) -> Result<Source, Error> {
    let text: String = match std::str::from_utf8(bytes) {
        Ok(t) => t.to_string(),
        Err(_) => bytes.iter().map(|b| char::from(*b)).collect(),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let docs = super::spring::properties(text).map_err(|(f, line)| {
        Error::from(
            ScenarioError::new(f.path, f.message)
                .in_file(path)
                .at((line > 0).then_some((line, 1))),
        )
    })?;
    if docs.is_empty() {
        return Err(ScenarioError::new("", "is empty: no property in it")
            .in_file(path)
            .into());
    }
    Ok(Source::new(path, docs, true, len, text))
}

/// `src` as Spring Boot binds it: every key under the top-level keys
/// `wanted` accepts split at its dots ([`super::spring::expand`]). A JSON
/// file whose keys were split shows its paths as property names too
/// (`resilience4j.retry.instances.a`), the names Spring gives them.
pub fn spring(src: Source, wanted: &dyn Fn(&str) -> bool) -> Result<Source, Error> {
    let mut docs = Vec::with_capacity(src.docs.len());
    let mut split = false;
    for (i, d) in src.docs.iter().enumerate() {
        let (v, s) = super::spring::expand(d, wanted).map_err(|f| {
            let at = if src.docs.len() > 1 && src.yaml {
                format!("(document {}) {}", i + 1, f.path)
            } else {
                f.path
            };
            Error::from(ScenarioError::new(at, f.message).in_file(&src.file))
        })?;
        split |= s;
        docs.push(v);
    }
    Ok(Source {
        docs,
        yaml: src.yaml || split,
        ..src
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(v: Value, yaml: bool) -> Source {
        Source::new(Path::new("f"), vec![v], yaml, 0, "")
    }

    #[test]
    fn paths_are_pointers_in_json_and_dotted_in_yaml() {
        let v = serde_json::json!({"a": [{"b/c": 1}]});
        let steps = vec![
            Step::Key("a".into()),
            Step::Index(0),
            Step::Key("b/c".into()),
        ];
        assert_eq!(src(v.clone(), false).shown(0, &steps), "/a/0/b~1c");
        assert_eq!(src(v, true).shown(0, &steps), "a[0].b/c");
    }

    #[test]
    fn an_unknown_field_is_named_with_the_closest_known_one() {
        let s = src(serde_json::json!({"maxAtempts": 3}), false);
        let e = s
            .root(0)
            .fields(&["maxAttempts", "timeout"], false)
            .unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("/maxAtempts") && m.contains("did you mean `maxAttempts`"),
            "{m}"
        );
        // relaxed binding: kebab-case is the same key
        let s = src(serde_json::json!({"max-attempts": 3}), true);
        let f = s.root(0).fields(&["maxAttempts"], true).unwrap();
        assert_eq!(f[0].0, "maxAttempts");
    }
}
