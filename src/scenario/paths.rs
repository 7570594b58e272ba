//! Dotted key paths into a TOML document: setting values (for `--set`, variants and
//! compare rows) and finding where a path is written (for error positions).

use crate::error::ScenarioError;
use toml::Value;

/// Splits `a.b.0.c` into its segments. A segment in double quotes may hold dots:
/// `compare."services.s.handler.policy"` has two segments.
pub fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for ch in path.chars() {
        match ch {
            '"' => quoted = !quoted,
            '.' if !quoted => out.push(std::mem::take(&mut current)),
            _ => current.push(ch),
        }
    }
    out.push(current);
    out
}

/// The most segments a key path may have: far more than any key of the format
/// needs, and few enough that the nested tables a path creates cannot exhaust the
/// stack when they are read back (50,000 segments did).
pub const MAX_SEGMENTS: usize = 64;

/// Sets `path` to `value` inside `root`, creating missing tables on the way. Array
/// items are addressed by index and must exist.
pub fn set(root: &mut toml::Table, path: &str, value: Value) -> Result<(), ScenarioError> {
    let segs = segments(path);
    if segs.len() > MAX_SEGMENTS {
        let head: Vec<&str> = segs.iter().take(4).map(String::as_str).collect();
        return Err(ScenarioError::new(
            format!("{}...", head.join(".")),
            format!(
                "a key path has at most {MAX_SEGMENTS} parts (this one has {})",
                segs.len()
            ),
        ));
    }
    if segs.iter().any(|s| s.is_empty()) {
        return Err(ScenarioError::new(path, "empty segment in key path"));
    }
    let mut wrapped = Value::Table(std::mem::take(root));
    let result = set_in(&mut wrapped, &segs, path, value);
    if let Value::Table(t) = wrapped {
        *root = t;
    }
    result
}

fn set_in(
    root: &mut Value,
    segs: &[String],
    path: &str,
    value: Value,
) -> Result<(), ScenarioError> {
    let Some((last, parents)) = segs.split_last() else {
        return Err(ScenarioError::new(path, "empty key path"));
    };
    let mut here = root;
    for (i, seg) in parents.iter().enumerate() {
        here = step(here, seg, &segs[..=i].join("."), true)?;
    }
    match here {
        Value::Table(t) => {
            t.insert((*last).to_string(), value);
            Ok(())
        }
        Value::Array(a) => {
            let idx = index(last, a.len(), path)?;
            a[idx] = value;
            Ok(())
        }
        _ => Err(ScenarioError::new(
            parents.join("."),
            "is a single value, not a table: it has no keys to set",
        )),
    }
}

/// Reads `path` from `root`, if present.
pub fn get<'a>(root: &'a toml::Table, path: &str) -> Option<&'a Value> {
    let mut segs = segments(path).into_iter();
    let mut here = root.get(&segs.next()?)?;
    for seg in segs {
        here = match here {
            Value::Table(t) => t.get(&seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(here)
}

fn step<'a>(
    here: &'a mut Value,
    seg: &str,
    so_far: &str,
    create: bool,
) -> Result<&'a mut Value, ScenarioError> {
    match here {
        Value::Table(t) => {
            if !t.contains_key(seg) && create {
                t.insert(seg.to_string(), Value::Table(toml::Table::new()));
            }
            t.get_mut(seg)
                .ok_or_else(|| ScenarioError::new(so_far, "no such key"))
        }
        Value::Array(a) => {
            let len = a.len();
            let idx = index(seg, len, so_far)?;
            Ok(&mut a[idx])
        }
        _ => Err(ScenarioError::new(
            so_far,
            "is a single value, not a table: it has no keys below it",
        )),
    }
}

fn index(seg: &str, len: usize, path: &str) -> Result<usize, ScenarioError> {
    let idx: usize = seg
        .parse()
        .map_err(|_| ScenarioError::new(path, format!("`{seg}` is not a list index (0..{len})")))?;
    if idx >= len {
        return Err(ScenarioError::new(
            path,
            format!("index {idx} is out of range: the list has {len} items"),
        ));
    }
    Ok(idx)
}

/// 1-based (line, column) of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, col)
}

/// A place in a parsed document, for finding spans.
enum Node<'a> {
    Item(&'a toml_edit::Item),
    Table(&'a toml_edit::Table),
    Value(&'a toml_edit::Value),
}

impl<'a> Node<'a> {
    fn span(&self) -> Option<std::ops::Range<usize>> {
        match self {
            Node::Item(i) => i.span(),
            Node::Table(t) => t.span(),
            Node::Value(v) => v.span(),
        }
    }

    /// The child at `seg`, with the span of its key when it is a table entry.
    fn child(&self, seg: &str) -> Option<(Node<'a>, Option<std::ops::Range<usize>>)> {
        let idx = seg.parse::<usize>().ok();
        match *self {
            Node::Item(toml_edit::Item::Table(t)) | Node::Table(t) => {
                t.get_key_value(seg).map(|(k, v)| (Node::Item(v), k.span()))
            }
            Node::Item(toml_edit::Item::ArrayOfTables(a)) => {
                a.get(idx?).map(|t| (Node::Table(t), None))
            }
            Node::Item(toml_edit::Item::Value(v)) | Node::Value(v) => match v {
                toml_edit::Value::InlineTable(t) => {
                    let key = t.key(seg).and_then(|k| k.span());
                    t.get(seg).map(|v| (Node::Value(v), key))
                }
                toml_edit::Value::Array(a) => a.get(idx?).map(|v| (Node::Value(v), None)),
                _ => None,
            },
            Node::Item(_) => None,
        }
    }
}

/// Where a key path is written in a document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// Byte offset of the value at the path, or of the nearest enclosing value
    /// that is written.
    pub value: Option<usize>,
    /// Every segment of the path is written in the text.
    pub exact: bool,
    /// Byte offset of the last segment's key, when the path is written exactly and
    /// ends in a table key.
    pub key: Option<usize>,
}

/// Finds the key path given as segments (which may themselves hold dots, like the
/// keys of `[compare]`) in `text`.
pub fn find<S: AsRef<str>>(text: &str, segs: &[S]) -> Found {
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return Found::default();
    };
    let mut node = Node::Table(doc.as_table());
    let mut found = Found {
        exact: true,
        ..Found::default()
    };
    for seg in segs {
        let Some((next, key)) = node.child(seg.as_ref()) else {
            found.exact = false;
            found.key = None;
            break;
        };
        if let Some(span) = next.span() {
            found.value = Some(span.start);
        }
        found.key = key.map(|k| k.start);
        node = next;
    }
    found
}

/// Where the value at `path` is written in `text`, or else the nearest enclosing
/// key that is written there.
pub fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    find(text, &segments(path)).value.map(|o| line_col(text, o))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "[a]\nx = 1\nlist = [{ y = 2 }, { y = 3 }]\n\n[b.c]\nz = { w = 5 }\n";

    #[test]
    fn set_creates_tables_and_replaces_list_items() {
        let mut t: toml::Table = toml::from_str(DOC).unwrap();
        set(&mut t, "a.x", Value::Integer(7)).unwrap();
        set(&mut t, "a.list.1.y", Value::Integer(9)).unwrap();
        set(&mut t, "new.deep.key", Value::Boolean(true)).unwrap();
        assert_eq!(get(&t, "a.x"), Some(&Value::Integer(7)));
        assert_eq!(get(&t, "a.list.1.y"), Some(&Value::Integer(9)));
        assert_eq!(get(&t, "new.deep.key"), Some(&Value::Boolean(true)));
        let err = set(&mut t, "a.list.5.y", Value::Integer(1)).unwrap_err();
        assert!(err.message.contains("out of range"), "{err}");
        let err = set(&mut t, "a.x.y", Value::Integer(1)).unwrap_err();
        assert_eq!(err.path, "a.x");
    }

    #[test]
    fn locate_finds_values_in_tables_inline_tables_and_lists() {
        assert_eq!(locate(DOC, "a.x"), Some((2, 5)));
        assert_eq!(locate(DOC, "a.list.1.y"), Some((3, 26)));
        assert_eq!(locate(DOC, "b.c.z.w"), Some((6, 11)));
        // a key that is not written: the nearest written parent (table `a`)
        assert_eq!(locate(DOC, "a.nope").map(|p| p.0), Some(1));
    }

    #[test]
    fn very_long_paths_are_refused() {
        let mut t = toml::Table::new();
        let deep = vec!["a"; MAX_SEGMENTS + 1].join(".");
        let err = set(&mut t, &deep, Value::Integer(1)).unwrap_err();
        assert_eq!(err.path, "a.a.a.a...");
        assert!(t.is_empty());
        let ok = vec!["a"; MAX_SEGMENTS].join(".");
        assert!(set(&mut t, &ok, Value::Integer(1)).is_ok());
    }

    #[test]
    fn line_col_is_one_based() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
