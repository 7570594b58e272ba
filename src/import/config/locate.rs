//! Where a field's value is written in a configuration file: the bytes of the
//! scalar at a path, so that a new value replaces those bytes and nothing
//! else in the file changes (`resim tune --write-back`), and its line and
//! column, which the import's errors and warnings name ([`Written`]). YAML
//! and JSON are read with a YAML parser that
//! keeps positions (JSON is YAML's flow style); a `.properties` file line by
//! line. A key written with dots (`a.b: 1`, a property name) stands for the
//! path a -> b, as Spring Boot binds it.

use granit_parser::{Event, Parser, ScalarStyle};
use std::collections::HashMap;
use std::ops::Range;

/// One step of a path in a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// A key of a mapping.
    Key(String),
    /// An index of a list.
    Index(usize),
}

/// A scalar as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// Its bytes in the file, quotes included.
    pub range: Range<usize>,
    /// Its value (quotes and escapes removed).
    pub value: String,
    /// The quote it is written in, if any.
    pub quote: Option<char>,
}

impl Scalar {
    /// The bytes to replace to give it a new value: inside its quotes.
    pub fn inner(&self) -> Range<usize> {
        match self.quote {
            Some(_) => self.range.start + 1..self.range.end - 1,
            None => self.range.clone(),
        }
    }
}

/// A node of a YAML document, with its position.
#[derive(Debug)]
enum Yaml {
    Scalar(Scalar, bool),
    Seq(Vec<Yaml>),
    Map(Vec<(Yaml, Yaml)>),
    Alias,
}

/// The scalar at `steps` of document `doc` (counting only documents that are
/// not empty, as the reader does) of `text`, a YAML or JSON file.
pub fn in_yaml(text: &str, doc: usize, steps: &[Step]) -> Result<Scalar, String> {
    let docs = documents(text)?;
    let root = docs
        .iter()
        .filter(|d| !matches!(d, Yaml::Scalar(s, true) if is_null(&s.value)))
        .nth(doc)
        .ok_or("the document is not in the file")?;
    walk(root, steps)
}

/// Whether a plain scalar is YAML's null (an empty document).
fn is_null(v: &str) -> bool {
    matches!(v, "" | "~" | "null" | "Null" | "NULL")
}

/// A collection being read: its children so far (a mapping's key waiting
/// for its value apart).
enum Frame {
    Seq(Vec<Yaml>),
    Map(Vec<(Yaml, Yaml)>, Option<Yaml>),
}

/// Every document of `text`, as trees with positions.
fn documents(text: &str) -> Result<Vec<Yaml>, String> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut docs = Vec::new();
    for ev in Parser::new_from_str(text) {
        let (ev, span) = ev.map_err(|e| format!("not valid YAML: {e}"))?;
        let node = match ev {
            Event::Scalar(v, style, _, _) => {
                let at = |m: granit_parser::Marker| m.byte_offset().ok_or("no byte position");
                let quote = match style {
                    ScalarStyle::SingleQuoted => Some('\''),
                    ScalarStyle::DoubleQuoted => Some('"'),
                    _ => None,
                };
                if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
                    // a block scalar's bytes are not its value: never edited
                    Yaml::Alias
                } else {
                    let s = Scalar {
                        range: at(span.start)?..at(span.end)?,
                        value: v.into_owned(),
                        quote,
                    };
                    Yaml::Scalar(s, style == ScalarStyle::Plain)
                }
            }
            Event::SequenceStart(..) => {
                stack.push(Frame::Seq(Vec::new()));
                continue;
            }
            Event::MappingStart(..) => {
                stack.push(Frame::Map(Vec::new(), None));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq(items)) => Yaml::Seq(items),
                Some(Frame::Map(pairs, _)) => Yaml::Map(pairs),
                None => return Err("an unbalanced collection".into()),
            },
            Event::Alias(_) | Event::UnresolvedAlias(_) => Yaml::Alias,
            _ => continue,
        };
        match stack.last_mut() {
            None => docs.push(node),
            Some(Frame::Seq(items)) => items.push(node),
            Some(Frame::Map(pairs, key)) => match key.take() {
                Some(k) => pairs.push((k, node)),
                None => *key = Some(node),
            },
        }
    }
    Ok(docs)
}

/// The scalar at `steps` below `node`.
fn walk(node: &Yaml, steps: &[Step]) -> Result<Scalar, String> {
    let Some(first) = steps.first() else {
        return match node {
            Yaml::Scalar(s, _) => Ok(s.clone()),
            Yaml::Alias => Err("written through an alias or as a block scalar".into()),
            _ => Err("not a single value (a list or a mapping)".into()),
        };
    };
    match (node, first) {
        (Yaml::Seq(items), Step::Index(i)) => walk(
            items.get(*i).ok_or("the list is shorter than the path")?,
            &steps[1..],
        ),
        (Yaml::Map(pairs), _) => {
            let mut why = None;
            for (k, v) in pairs {
                let Yaml::Scalar(k, _) = k else { continue };
                if let Some(n) = covers(&k.value, steps) {
                    match walk(v, &steps[n..]) {
                        Ok(s) => return Ok(s),
                        Err(e) => why = why.or(Some(e)),
                    }
                }
            }
            Err(why.unwrap_or_else(|| {
                "the path is not in the file as written (through an alias or a merge key?)".into()
            }))
        }
        (Yaml::Alias, _) => Err("written through an alias".into()),
        _ => Err("the file's structure differs from the path".into()),
    }
}

/// How many of `steps` the key `key` stands for: 1 when it is the first
/// step's key, more when it is several steps joined with dots.
fn covers(key: &str, steps: &[Step]) -> Option<usize> {
    if matches!(&steps[0], Step::Key(k) if k == key) {
        return Some(1);
    }
    let parts = split(key);
    (parts.len() > 1 && parts.len() <= steps.len() && parts.iter().zip(steps).all(|(p, s)| p == s))
        .then_some(parts.len())
}

/// A dotted name's steps: `a.b[0].c` is a -> b -> 0 -> c.
fn split(name: &str) -> Vec<Step> {
    let mut out = Vec::new();
    for part in name.split('.') {
        let (key, rest) = part.split_once('[').unwrap_or((part, ""));
        if !key.is_empty() {
            out.push(Step::Key(key.to_string()));
        }
        for idx in rest.split('[') {
            let idx = idx.trim_end_matches(']');
            match idx.parse() {
                Ok(i) => out.push(Step::Index(i)),
                Err(_) if idx.is_empty() => {}
                Err(_) => out.push(Step::Key(idx.to_string())),
            }
        }
    }
    out
}

/// One property of a `.properties` file, as written on its line.
struct Property<'t> {
    /// Where its name starts.
    at: usize,
    /// Its name.
    name: &'t str,
    /// Its value's bytes (on this line).
    value: Range<usize>,
    /// Whether its line continues on the next (a backslash at its end).
    continues: bool,
}

/// The properties of `text`, a `.properties` file, in order (the lines
/// that continue another, comments and blank lines left out).
fn properties(text: &str) -> impl Iterator<Item = Property<'_>> {
    let mut offset = 0;
    let mut continued = false;
    text.split_inclusive('\n').filter_map(move |line| {
        let start = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let was_continued = std::mem::replace(
            &mut continued,
            body.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1,
        );
        let t = body.trim_start();
        if was_continued || t.is_empty() || t.starts_with(['#', '!']) {
            return None;
        }
        let at = start + body.len() - t.len();
        let end = t.find(['=', ':', ' ', '\t', '\x0c']).unwrap_or(t.len());
        let rest = &t[end..];
        let sep = rest.len()
            - rest
                .trim_start_matches([' ', '\t', '\x0c'])
                .trim_start_matches(['=', ':'])
                .trim_start_matches([' ', '\t', '\x0c'])
                .len();
        let value = at + end + sep;
        Some(Property {
            at,
            name: &t[..end],
            value: value..value + rest[sep..].trim_end().len(),
            continues: continued,
        })
    })
}

/// The value of the property at `steps` in `text`, a `.properties` file:
/// the last line whose name stands for the path (a line continued with a
/// backslash is refused).
pub fn in_properties(text: &str, steps: &[Step]) -> Result<Scalar, String> {
    let mut found = None;
    for p in properties(text) {
        if p.name.contains('\\') || split(p.name) != steps {
            continue;
        }
        if p.continues {
            return Err("its line continues on the next (a backslash at its end)".into());
        }
        found = Some(Scalar {
            value: text[p.value.clone()].to_string(),
            range: p.value,
            quote: None,
        });
    }
    found.ok_or_else(|| "no line of the file names it".into())
}

/// A file's values with their positions, read once for the positions of its
/// errors: where the value at a path is written, or, when the path goes
/// where the file holds no single value (a mapping, a list, a key it lacks),
/// the key nearest above it.
#[derive(Debug)]
pub struct Written {
    /// A YAML or JSON file's documents (None: a `.properties` file).
    docs: Option<Vec<Yaml>>,
    /// A `.properties` file's paths: where the value of each property is
    /// written (the last line naming it; none when a line naming it
    /// continues), and where the first property under each path starts.
    properties: HashMap<Vec<Step>, (Option<usize>, usize)>,
    /// The byte offset of each line's start.
    lines: Vec<usize>,
}

impl Written {
    /// Reads `text` (`properties`: a `.properties` file); None when it does
    /// not read (its positions are then not given).
    pub fn read(text: &str, properties: bool) -> Option<Written> {
        let (docs, properties) = if properties {
            (None, property_index(text))
        } else {
            (Some(documents(text).ok()?), HashMap::new())
        };
        let lines = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Some(Written {
            docs,
            properties,
            lines,
        })
    }

    /// The 1-based line and column (in characters) of the value at `steps`
    /// of document `doc`, or of the key nearest above it.
    pub fn line_col(&self, text: &str, doc: usize, steps: &[Step]) -> Option<(usize, usize)> {
        let at = match &self.docs {
            Some(docs) => {
                let root = docs
                    .iter()
                    .filter(|d| !matches!(d, Yaml::Scalar(s, true) if is_null(&s.value)))
                    .nth(doc)?;
                nearest(root, steps)?
            }
            None => match self.properties.get(steps)? {
                (Some(value), _) => *value,
                (_, first) => *first,
            },
        };
        let line = self.lines.partition_point(|&start| start <= at);
        let start = self.lines[line - 1];
        Some((line, text.get(start..at)?.chars().count() + 1))
    }
}

/// The byte where the value at `steps` below `node` is written, or the key
/// nearest above it (None: not even the first step's key is in the file).
fn nearest(node: &Yaml, steps: &[Step]) -> Option<usize> {
    let Some(first) = steps.first() else {
        return match node {
            Yaml::Scalar(s, _) => Some(s.range.start),
            _ => None,
        };
    };
    match (node, first) {
        (Yaml::Seq(items), Step::Index(i)) => nearest(items.get(*i)?, &steps[1..]),
        (Yaml::Map(pairs), _) => pairs.iter().find_map(|(k, v)| {
            let Yaml::Scalar(k, _) = k else { return None };
            let n = covers(&k.value, steps)?;
            Some(nearest(v, &steps[n..]).unwrap_or(k.range.start))
        }),
        _ => None,
    }
}

/// Each path of `text`, a `.properties` file, and below it each path above
/// it: where its value is written (the last line naming it, none when one
/// naming it continues on the next) and where the first property under it
/// starts.
fn property_index(text: &str) -> HashMap<Vec<Step>, (Option<usize>, usize)> {
    let mut index: HashMap<Vec<Step>, (Option<usize>, usize)> = HashMap::new();
    let mut refused = std::collections::HashSet::new();
    for p in properties(text) {
        let steps = split(p.name);
        for n in 1..steps.len() {
            index.entry(steps[..n].to_vec()).or_insert((None, p.at));
        }
        let e = index.entry(steps.clone()).or_insert((None, p.at));
        if p.name.contains('\\') {
            // an escaped name: its path is not read here (as `in_properties`)
        } else if p.continues {
            refused.insert(steps);
            e.0 = None;
        } else if !refused.contains(&steps) {
            e.0 = Some(p.value.start);
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Step {
        Step::Key(s.into())
    }

    #[test]
    fn finds_plain_quoted_and_dotted_scalars_in_yaml() {
        let t = "a:\n  b: \"0.3s\" # c\n  list:\n  - x: 300ms\n---\n---\nr.s.t: 4\n";
        let s = in_yaml(t, 0, &[k("a"), k("b")]).unwrap();
        assert_eq!((&t[s.range.clone()], &t[s.inner()]), ("\"0.3s\"", "0.3s"));
        let s = in_yaml(t, 0, &[k("a"), k("list"), Step::Index(0), k("x")]).unwrap();
        assert_eq!(&t[s.range], "300ms");
        // the empty document between the two is not counted, as the reader skips it
        let s = in_yaml(t, 1, &[k("r"), k("s"), k("t")]).unwrap();
        assert_eq!((&t[s.range], s.value.as_str()), ("4", "4"));
        assert!(
            in_yaml(t, 0, &[k("a")])
                .unwrap_err()
                .contains("not a single value")
        );
        assert!(in_yaml(t, 0, &[k("a"), k("c")]).is_err());
    }

    #[test]
    fn positions_name_the_value_or_the_key_nearest_above_it() {
        let t = "a:\n  b: \"0.3s\"\n  list:\n  - x: 300ms\n  é: 1\n";
        let w = Written::read(t, false).unwrap();
        assert_eq!(w.line_col(t, 0, &[k("a"), k("b")]), Some((2, 6)));
        assert_eq!(w.line_col(t, 0, &[k("a"), k("list")]), Some((3, 3)));
        let x = [k("a"), k("list"), Step::Index(0), k("x")];
        assert_eq!(w.line_col(t, 0, &x), Some((4, 8)));
        // a key the file lacks: the key above it; columns count characters
        assert_eq!(w.line_col(t, 0, &[k("a"), k("missing")]), Some((1, 1)));
        assert_eq!(w.line_col(t, 0, &[k("a"), k("é")]), Some((5, 6)));
        assert_eq!(w.line_col(t, 0, &[k("z")]), None);
        let p = "# c\nr.retry.x.maxAttempts = 3\nr.retry.x.waitDuration: 1s\n";
        let w = Written::read(p, true).unwrap();
        let wait = [k("r"), k("retry"), k("x"), k("waitDuration")];
        assert_eq!(w.line_col(p, 0, &wait), Some((3, 25)));
        assert_eq!(w.line_col(p, 0, &wait[..3]), Some((2, 1)));
    }

    #[test]
    fn finds_json_values() {
        let t = "{\n\t\"m\": [ {\"timeout\": \"1.5s\", \"n\": 3} ]\n}\n";
        let s = in_yaml(t, 0, &[k("m"), Step::Index(0), k("n")]).unwrap();
        assert_eq!(&t[s.range], "3");
        let s = in_yaml(t, 0, &[k("m"), Step::Index(0), k("timeout")]).unwrap();
        assert_eq!(&t[s.inner()], "1.5s");
    }

    #[test]
    fn refuses_aliases_and_block_scalars() {
        let t = "base: &b 5\nx: *b\ny: |\n  7\n";
        assert!(in_yaml(t, 0, &[k("x")]).unwrap_err().contains("alias"));
        assert!(in_yaml(t, 0, &[k("y")]).is_err());
        assert_eq!(in_yaml(t, 0, &[k("base")]).unwrap().value, "5");
    }

    #[test]
    fn finds_the_last_property_line() {
        let t = "# c\na.b = 1\na.b:2\n  a.c\t3  \nl[0].x=9\nlong=1\\\n  2\n";
        let s = in_properties(t, &[k("a"), k("b")]).unwrap();
        assert_eq!(&t[s.range], "2");
        let s = in_properties(t, &[k("a"), k("c")]).unwrap();
        assert_eq!(&t[s.range], "3");
        let s = in_properties(t, &[k("l"), Step::Index(0), k("x")]).unwrap();
        assert_eq!(&t[s.range], "9");
        assert!(
            in_properties(t, &[k("long")])
                .unwrap_err()
                .contains("continues")
        );
        assert!(in_properties(t, &[k("nope")]).is_err());
    }
}
