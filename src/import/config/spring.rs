//! Spring Boot's property sources read into one tree, as Spring binds them.
//!
//! Spring flattens every source into property names (`a.b.c`, `list[0]`,
//! `map[key.with.dots]`) before it binds them, so a YAML key `a.b` is the
//! path a -> b wherever it sits, and a `.properties` line
//! `resilience4j.retry.instances.backendA.maxAttempts=3` is the same field as
//! the nested YAML. [`properties`] reads a `.properties` file
//! (`java.util.Properties.load`'s syntax) as a mapping of property names;
//! [`expand`] turns that, or a YAML or JSON document, into the tree (keys
//! split at their dots), under the top-level keys the format reads. Paths
//! are then shown as Spring's property names, which are what the user wrote.
//!
//! Where two keys give the same field (`a.b: 1` and `a: {b: 2}`, a property
//! twice), Spring takes the last without a word; here it is an error naming
//! both, so that nothing is dropped silently. A list given by indices must
//! start at `[0]` and have no gap, as Spring's binder requires
//! (`IndexedElementsBinder` stops at the first missing index and refuses the
//! rest).

use serde_json::{Map, Value};

/// One element of a property name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A property name's elements, as Spring splits it: at dots outside
/// brackets; `[N]` is a list index; `[a.b]` a map key holding dots (kept
/// with its brackets, so that it is shown as written); `[key]` without dots
/// is the key `key`. A name Spring would not parse is one literal key.
fn segments(name: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = name.chars().peekable();
    let literal = || vec![Seg::Key(name.to_string())];
    let mut after_bracket = false;
    while let Some(c) = chars.next() {
        let bracket = std::mem::take(&mut after_bracket);
        match c {
            '.' => {
                if cur.is_empty() {
                    // `a..b`, `.a`, `a[0].` : not a name Spring splits
                    if !bracket || chars.peek().is_none() {
                        return literal();
                    }
                } else {
                    out.push(Seg::Key(std::mem::take(&mut cur)));
                }
            }
            '[' => {
                if !cur.is_empty() {
                    out.push(Seg::Key(std::mem::take(&mut cur)));
                }
                let mut inner = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == ']' {
                        closed = true;
                        break;
                    }
                    inner.push(d);
                }
                if !closed || inner.is_empty() {
                    return literal();
                }
                after_bracket = true;
                out.push(match inner.parse::<usize>() {
                    Ok(i) if inner.bytes().all(|b| b.is_ascii_digit()) => Seg::Index(i),
                    _ if inner.contains('.') => Seg::Key(format!("[{inner}]")),
                    _ => Seg::Key(inner),
                });
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(Seg::Key(cur));
    }
    if out.is_empty() {
        return literal();
    }
    out
}

/// The tree being built: a value, a mapping (in the order first met) or a
/// list given by indices.
#[derive(Debug)]
enum T {
    Leaf(Value),
    Map(Vec<(String, T)>),
    List(Vec<(usize, T)>),
}

/// What went wrong: the property name (as Spring would name it) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The field, as a property name.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn shown(segs: &[Seg]) -> String {
    let mut s = String::new();
    for (i, seg) in segs.iter().enumerate() {
        match seg {
            Seg::Key(k) if i == 0 => s.push_str(k),
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(n) => s.push_str(&format!("[{n}]")),
        }
    }
    s
}

/// The child of `t` at `seg`, made (as nothing yet) when absent; None when
/// `t` is not that kind of container.
fn child<'t>(t: &'t mut T, seg: &Seg) -> Option<&'t mut T> {
    match (t, seg) {
        (T::Map(m), Seg::Key(k)) => {
            let i = match m.iter().position(|(x, _)| x == k) {
                Some(i) => i,
                None => {
                    m.push((k.clone(), T::Leaf(Value::Null)));
                    m.len() - 1
                }
            };
            Some(&mut m[i].1)
        }
        (T::List(l), Seg::Index(n)) => {
            let i = match l.iter().position(|(x, _)| x == n) {
                Some(i) => i,
                None => {
                    l.push((*n, T::Leaf(Value::Null)));
                    l.len() - 1
                }
            };
            Some(&mut l[i].1)
        }
        _ => None,
    }
}

/// Nothing yet, or an empty mapping or list: what a later value replaces
/// or fills.
fn placeholder(t: &T) -> bool {
    match t {
        T::Leaf(Value::Null) => true,
        T::Leaf(Value::Object(m)) => m.is_empty(),
        T::Leaf(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

/// Puts `v` at `segs` under `t` (whose own path is `at`). `origin` says
/// where `v` was written, for the message when a field is given twice.
fn insert(t: &mut T, at: &mut Vec<Seg>, segs: &[Seg], v: T, origin: &str) -> Result<(), Fault> {
    let Some((first, rest)) = segs.split_first() else {
        return merge(t, at, v, origin);
    };
    if placeholder(t) {
        *t = match first {
            Seg::Key(_) => T::Map(Vec::new()),
            Seg::Index(_) => T::List(Vec::new()),
        };
    }
    at.push(first.clone());
    let r = match child(t, first) {
        Some(c) => insert(c, at, rest, v, origin),
        None => Err(twice(at, origin)),
    };
    at.pop();
    r
}

/// Merges `v` into `t` at `at`: two mappings (or two lists) merge field by
/// field; a placeholder takes the value, or is taken by it; anything else is
/// a field given twice.
fn merge(t: &mut T, at: &mut Vec<Seg>, v: T, origin: &str) -> Result<(), Fault> {
    if placeholder(t) {
        *t = v;
        return Ok(());
    }
    if placeholder(&v) && !matches!(t, T::Leaf(_)) {
        return Ok(());
    }
    let parts: Vec<(Seg, T)> = match v {
        T::Map(n) if matches!(t, T::Map(_)) => {
            n.into_iter().map(|(k, x)| (Seg::Key(k), x)).collect()
        }
        T::List(n) if matches!(t, T::List(_)) => {
            n.into_iter().map(|(i, x)| (Seg::Index(i), x)).collect()
        }
        _ => return Err(twice(at, origin)),
    };
    for (seg, x) in parts {
        at.push(seg.clone());
        let r = match child(t, &seg) {
            Some(c) => merge(c, at, x, origin),
            None => Err(twice(at, origin)),
        };
        at.pop();
        r?;
    }
    Ok(())
}

fn twice(at: &[Seg], origin: &str) -> Fault {
    Fault {
        path: shown(at),
        message: format!(
            "is given twice (again {origin}): Spring takes the last without a word; write it once"
        ),
    }
}

/// A parsed YAML or JSON value as a tree, its keys split at their dots.
fn from_value(
    v: &Value,
    at: &mut Vec<Seg>,
    origin: &mut dyn FnMut(&str) -> String,
) -> Result<T, Fault> {
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut t = T::Map(Vec::new());
            for (k, x) in m {
                let segs = segments(k);
                at.extend(segs.iter().cloned());
                let child = from_value(x, at, origin);
                at.truncate(at.len() - segs.len());
                let o = origin(k);
                insert(&mut t, at, &segs, child?, &o)?;
            }
            Ok(t)
        }
        Value::Array(a) if !a.is_empty() => {
            let mut items = Vec::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                at.push(Seg::Index(i));
                let child = from_value(x, at, origin);
                at.pop();
                items.push((i, child?));
            }
            Ok(T::List(items))
        }
        v => Ok(T::Leaf(v.clone())),
    }
}

/// The tree as a value; a list given by indices must run from `[0]` with
/// no gap.
fn to_value(t: T, at: &mut Vec<Seg>) -> Result<Value, Fault> {
    match t {
        T::Leaf(v) => Ok(v),
        T::Map(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, x) in m {
                at.push(Seg::Key(k.clone()));
                let v = to_value(x, at)?;
                at.pop();
                out.insert(k, v);
            }
            Ok(Value::Object(out))
        }
        T::List(mut l) => {
            l.sort_by_key(|(i, _)| *i);
            let mut out = Vec::with_capacity(l.len());
            for (want, (i, x)) in l.into_iter().enumerate() {
                if i != want {
                    at.push(Seg::Index(i));
                    let path = shown(at);
                    at.pop();
                    return Err(Fault {
                        path,
                        message: format!(
                            "has no [{want}] before it: Spring binds a list from [0] up, stops at the first missing index and refuses the rest"
                        ),
                    });
                }
                at.push(Seg::Index(i));
                let v = to_value(x, at)?;
                at.pop();
                out.push(v);
            }
            Ok(Value::Array(out))
        }
    }
}

/// A YAML or JSON document as Spring binds it: every key split at its dots
/// (`resilience4j.circuitbreaker: {...}` is `resilience4j: {circuitbreaker:
/// {...}}`), merged with the nested keys it meets. Only the top-level keys
/// whose first element `wanted` accepts are read so; the others stay as
/// written (another part of the application's configuration, where a
/// package name may be both a key and the start of another, as
/// `logging.level` has them). Returns the tree and whether any key was split.
pub fn expand(doc: &Value, wanted: &dyn Fn(&str) -> bool) -> Result<(Value, bool), Fault> {
    let Value::Object(top) = doc else {
        return Ok((doc.clone(), false));
    };
    let mut split = false;
    let mut origin = |k: &str| {
        if segments(k).len() > 1 {
            split = true;
        }
        format!("as `{k}`")
    };
    let mut t = T::Map(Vec::new());
    let mut at = Vec::new();
    for (k, x) in top {
        let segs = segments(k);
        let read = matches!(segs.first(), Some(Seg::Key(first)) if wanted(first));
        if !read {
            insert(
                &mut t,
                &mut at,
                &[Seg::Key(k.clone())],
                T::Leaf(x.clone()),
                &origin(k),
            )?;
            continue;
        }
        at.extend(segs.iter().cloned());
        let child = from_value(x, &mut at, &mut origin);
        at.clear();
        let o = origin(k);
        insert(&mut t, &mut at, &segs, child?, &o)?;
    }
    Ok((to_value(t, &mut Vec::new())?, split))
}

/// A `.properties` file's documents (Spring Boot splits a file at a line
/// `#---` or `!---`), each a mapping of property names to their values in
/// the file's order, to be read as a tree by [`expand`]. A property given
/// twice in a document is a fault at its second line (1-based).
pub fn properties(text: &str) -> Result<Vec<Value>, (Fault, usize)> {
    let mut docs = Vec::new();
    let mut doc = Map::new();
    let mut lines: Vec<(String, usize)> = Vec::new();
    for (line, key, value) in logical_lines(text) {
        let Some(key) = key else {
            // a document separator
            if !doc.is_empty() {
                docs.push(Value::Object(std::mem::take(&mut doc)));
            }
            lines.clear();
            continue;
        };
        if let Some((_, first)) = lines.iter().find(|(k, _)| *k == key) {
            let message = format!(
                "is given twice (lines {first} and {line}): Spring takes the last without a word; write it once"
            );
            return Err((Fault { path: key, message }, line));
        }
        lines.push((key.clone(), line));
        doc.insert(key, Value::String(value));
    }
    if !doc.is_empty() {
        docs.push(Value::Object(doc));
    }
    Ok(docs)
}

/// The logical lines of a properties text, as `java.util.Properties.load`
/// reads them: (line number, key, value); a key of None is a document
/// separator. Comments (`#`, `!`) and blank lines are skipped; a line ending
/// in an odd number of backslashes goes on in the next, whose leading
/// whitespace is dropped; the key ends at the first unescaped `=`, `:` or
/// whitespace, and one `=` or `:` (with whitespace around it) separates it
/// from the value; `\t`, `\n`, `\r`, `\f`, `\uXXXX` and `\` before any other
/// character are escapes.
fn logical_lines(text: &str) -> Vec<(usize, Option<String>, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, raw)) = lines.next() {
        let first = raw.trim_start_matches([' ', '\t', '\u{c}']);
        if first.is_empty() {
            continue;
        }
        if first.starts_with('#') || first.starts_with('!') {
            if first == "#---" || first == "!---" {
                out.push((i + 1, None, String::new()));
            }
            continue;
        }
        let mut logical = String::new();
        let mut cur = first.to_string();
        loop {
            let trailing = cur.len() - cur.trim_end_matches('\\').len();
            if trailing % 2 == 1 {
                logical.push_str(&cur[..cur.len() - 1]);
                match lines.next() {
                    Some((_, next)) => {
                        cur = next.trim_start_matches([' ', '\t', '\u{c}']).to_string();
                    }
                    None => break,
                }
            } else {
                logical.push_str(&cur);
                break;
            }
        }
        let (key, value) = split_key(&logical);
        out.push((i + 1, Some(key), value.trim_end().to_string()));
    }
    out
}

/// A logical line's key and value, escapes undone.
fn split_key(line: &str) -> (String, String) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut key_raw = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            key_raw.push(c);
            key_raw.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\u{c}' {
            break;
        }
        key_raw.push(c);
        i += 1;
    }
    while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\u{c}') {
        i += 1;
    }
    if i < chars.len() && (chars[i] == '=' || chars[i] == ':') {
        i += 1;
        while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\u{c}') {
            i += 1;
        }
    }
    let value_raw: String = chars[i.min(chars.len())..].iter().collect();
    (unescape(&key_raw), unescape(&value_raw))
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == 4 => out.push(ch),
                    _ => {
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_split_as_spring_splits_them() {
        let k = |s: &str| Seg::Key(s.into());
        assert_eq!(segments("a.b"), [k("a"), k("b")]);
        assert_eq!(
            segments("a.list[2].c"),
            [k("a"), k("list"), Seg::Index(2), k("c")]
        );
        assert_eq!(segments("m[x.y].z"), [k("m"), k("[x.y]"), k("z")]);
        assert_eq!(segments("m[x].z"), [k("m"), k("x"), k("z")]);
        assert_eq!(segments("a..b"), [k("a..b")]);
        assert_eq!(segments("plain"), [k("plain")]);
    }

    #[test]
    fn a_dotted_key_is_the_nested_path_and_merges_with_it() {
        let doc = json!({
            "resilience4j.circuitbreaker": {"instances": {"a": {"slidingWindowSize": 6}}},
            "resilience4j": {"retry.instances.a": {"maxAttempts": 2}},
            "spring": {"application.name": "x"},
            "logging": {"level.io.github": "INFO", "level.io.github.resilience4j": "DEBUG"}
        });
        let (v, split) = expand(&doc, &|k| k != "logging").unwrap();
        assert!(split);
        assert_eq!(
            v,
            json!({
                "resilience4j": {
                    "circuitbreaker": {"instances": {"a": {"slidingWindowSize": 6}}},
                    "retry": {"instances": {"a": {"maxAttempts": 2}}}
                },
                "spring": {"application": {"name": "x"}},
                "logging": {"level.io.github": "INFO", "level.io.github.resilience4j": "DEBUG"}
            })
        );
        let (_, split) = expand(&json!({"a": {"b": 1}}), &|_| true).unwrap();
        assert!(!split);
    }

    #[test]
    fn a_field_given_twice_is_an_error_naming_it() {
        let doc = json!({"a": {"b": 1}, "a.b": 2});
        let f = expand(&doc, &|_| true).unwrap_err();
        assert_eq!(f.path, "a.b");
        assert!(f.message.contains("given twice (again as `a.b`)"), "{f:?}");
    }

    #[test]
    fn properties_read_as_java_reads_them() {
        let text = "# a comment\n! another\n\
            resilience4j.retry.instances.backendA.maxAttempts=3\n\
            resilience4j.retry.instances.backendA.waitDuration : 500ms\n\
            resilience4j.retry.instances.backendA.retryExceptions[0]=java.io.IOException\n\
            resilience4j.retry.instances.backendA.retryExceptions[1]  java.util.concurrent.\\\n    TimeoutException\n\
            logging.level.io.github=INFO\n\
            logging.level.io.github.resilience4j=DEBUG\n\
            key\\ with\\ space=v\\u0041\n";
        let docs = properties(text).unwrap();
        let (v, split) = expand(&docs[0], &|k| k == "resilience4j").unwrap();
        assert!(split);
        assert_eq!(
            v,
            json!({
                "resilience4j": {"retry": {"instances": {"backendA": {
                    "maxAttempts": "3",
                    "waitDuration": "500ms",
                    "retryExceptions": ["java.io.IOException", "java.util.concurrent.TimeoutException"]
                }}}},
                "logging.level.io.github": "INFO",
                "logging.level.io.github.resilience4j": "DEBUG",
                "key with space": "vA"
            })
        );
    }

    #[test]
    fn properties_documents_gaps_and_repeats() {
        let docs = properties("a.b=1\n#---\na.b=2\n").unwrap();
        assert_eq!(docs, [json!({"a.b": "1"}), json!({"a.b": "2"})]);
        let docs = properties("a.l[0]=x\na.l[2]=y\n").unwrap();
        let f = expand(&docs[0], &|_| true).unwrap_err();
        assert_eq!(f.path, "a.l[2]");
        assert!(f.message.contains("no [1]"), "{f:?}");
        let (f, line) = properties("a.b=1\na.b=2\n").unwrap_err();
        assert_eq!((f.path.as_str(), line), ("a.b", 2));
        assert!(f.message.contains("lines 1 and 2"), "{f:?}");
    }
}
