//! A kind's keys, declared once: each key's name, its default (or that it is
//! required) and the values it takes. The one reader here checks a table
//! against the declarations of a family's kinds (which kind, which keys,
//! their types and ranges, a key of another kind, a misspelt one), and the
//! same declaration writes the docs' key table.

use super::check::{self, R, err};
use crate::engine::Ticks;
use crate::error::{did_you_mean, list, num};
use toml::Value;

/// The values a key takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// A finite number >= 0.
    NonNegative,
    /// A finite number > 0.
    Positive,
    /// A number in [0, 1].
    Fraction,
    /// A whole number >= this, at most 2^32 - 1.
    Whole(u32),
    /// A whole number >= this, at most 2^53 (a limit or a count kept in 64
    /// bits).
    Count(u32),
    /// A finite number >= this.
    AtLeast(f64),
    /// A number in [lo, hi]; `why` (may be empty) says whose bound it is.
    Between {
        /// The least value.
        lo: f64,
        /// The largest value.
        hi: f64,
        /// Whose rule it is, said in the error.
        why: &'static str,
    },
    /// A time in milliseconds > 0 that fits the virtual clock.
    PositiveMs,
    /// A finite number the kind checks itself; the text says which (for the
    /// docs).
    Own(&'static str),
    /// One of these names (kept as its index; a default is an index too).
    Names(&'static [&'static str]),
    /// A list of positive numbers (left out: empty, unless required).
    Weights,
}

impl Range {
    /// [`Range::Between`] `lo` and `hi`, `why` saying whose bound it is (may
    /// be empty).
    pub const fn between(lo: f64, hi: f64, why: &'static str) -> Range {
        Range::Between { lo, hi, why }
    }

    /// The range as the docs' key table writes it.
    fn text(self) -> String {
        match self {
            Range::NonNegative => ">= 0".into(),
            Range::Positive | Range::PositiveMs => "> 0".into(),
            Range::Fraction => "in [0, 1]".into(),
            Range::Whole(min) | Range::Count(min) => format!("a whole number >= {min}"),
            Range::AtLeast(lo) => format!(">= {}", num(lo)),
            Range::Between { lo, hi, .. } => format!("in [{}, {}]", num(lo), num(hi)),
            Range::Own(text) => text.into(),
            Range::Names(names) => format!("one of {}", list(names.iter().copied())),
            Range::Weights => "positive numbers".into(),
        }
    }

    /// `v` checked at `path`.
    fn check(self, path: &str, v: f64) -> R<f64> {
        match self {
            Range::NonNegative => check::non_negative(path, v),
            Range::Positive => check::positive(path, v),
            Range::Fraction => check::fraction(path, v),
            Range::Whole(min) => check::whole(path, v, min).map(f64::from),
            Range::Count(min) => check::count(path, v, min).map(|n| n as f64),
            Range::AtLeast(lo) => check::at_least(path, v, lo),
            Range::Between { lo, hi, why } => check::between(path, v, lo, hi, why),
            Range::PositiveMs => check::positive_ticks(path, v).map(|_| v),
            Range::Own(_) | Range::Names(_) | Range::Weights => check::finite(path, v),
        }
    }
}

/// One key a kind reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    /// As written in the table.
    pub name: &'static str,
    /// The value when the key is left out (None: required).
    pub default: Option<f64>,
    /// The values it takes.
    pub range: Range,
}

impl Key {
    /// A key that may be left out, taking `default`.
    pub const fn with(name: &'static str, default: f64, range: Range) -> Key {
        Key {
            name,
            default: Some(default),
            range,
        }
    }

    /// A key the table must give.
    pub const fn required(name: &'static str, range: Range) -> Key {
        Key {
            name,
            default: None,
            range,
        }
    }
}

impl Key {
    /// The default as the docs write it: a number, a name in quotes (as
    /// code), `none` for an empty list, or `required`.
    pub fn default_text(&self) -> String {
        match (self.default, self.range) {
            (None, _) => "required".into(),
            (Some(_), Range::Weights) => "none".into(),
            (Some(i), Range::Names(names)) => format!("`\"{}\"`", names[i as usize]),
            (Some(v), _) => num(v),
        }
    }
}

/// A kind of a family (one retry budget, ...): its name and its keys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decl {
    /// As written in `kind`.
    pub name: &'static str,
    /// The family, as messages name it ("budget").
    pub family: &'static str,
    /// The keys it reads besides `kind`.
    pub keys: &'static [Key],
    /// Said after a missing required key, e.g. that the system it follows has
    /// no default (may be empty).
    pub required_because: &'static str,
}

impl Decl {
    /// The docs' "keys (defaults)" cell: "`max` (0.1, in [0, 1]), ...";
    /// "none" for a kind without keys of its own.
    pub fn keys_cell(&self) -> String {
        if self.keys.is_empty() {
            return "none".into();
        }
        self.keys
            .iter()
            .map(|k| format!("`{}` ({}, {})", k.name, k.default_text(), k.range.text()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The key named `name`.
    pub fn key(&self, name: &str) -> Option<&'static Key> {
        self.keys.iter().find(|k| k.name == name)
    }
}

/// The checked values of one table, in its kind's declared order, defaults
/// filled in.
#[derive(Debug)]
pub struct Keys<'a> {
    path: &'a str,
    decl: &'static Decl,
    values: Vec<f64>,
    /// Which keys the table gives (the others took their default).
    given: Vec<bool>,
    /// The lists ([`Range::Weights`]), empty for the other keys.
    lists: Vec<Vec<f64>>,
}

impl Keys<'_> {
    /// The kind the table names.
    pub fn decl(&self) -> &'static Decl {
        self.decl
    }

    /// The key path of key `name` (for a check the kind makes itself).
    pub fn at(&self, name: &str) -> String {
        format!("{}.{name}", self.path)
    }

    /// The table's own key path.
    pub fn path(&self) -> &str {
        self.path
    }

    fn index(&self, name: &str) -> usize {
        let i = self.decl.keys.iter().position(|k| k.name == name);
        i.unwrap_or_else(|| panic!("`{}` declares no key `{name}`", self.decl.name))
    }

    /// The value of key `name` (checked against its range).
    pub fn num(&self, name: &str) -> f64 {
        self.values[self.index(name)]
    }

    /// The index of a names key's value ([`Range::Names`]).
    pub fn name_index(&self, name: &str) -> usize {
        self.num(name) as usize
    }

    /// A list key's values ([`Range::Weights`]; empty when left out).
    pub fn list(&self, name: &str) -> &[f64] {
        &self.lists[self.index(name)]
    }

    /// A whole-number key's value.
    pub fn whole(&self, name: &str) -> u32 {
        self.num(name) as u32
    }

    /// A [`Range::Count`] key's value.
    pub fn count(&self, name: &str) -> u64 {
        self.num(name) as u64
    }

    /// Whether the table gives key `name` (else it took its default).
    pub fn given(&self, name: &str) -> bool {
        self.given[self.index(name)]
    }

    /// A time key's value in ticks.
    pub fn ticks(&self, name: &str) -> R<Ticks> {
        check::ticks(&self.at(name), self.num(name))
    }
}

/// How serde names a value of the wrong type (the words users see for
/// every other key).
fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("string {s:?}"),
        Value::Integer(i) => format!("integer `{i}`"),
        Value::Float(f) => format!("floating point `{f}`"),
        Value::Boolean(b) => format!("boolean `{b}`"),
        Value::Datetime(_) => "a date-time".into(),
        Value::Array(_) => "sequence".into(),
        Value::Table(_) => "map".into(),
    }
}

/// The key that names a table's kind, and the kind taken when it is left
/// out (None: it must be given).
#[derive(Debug, Clone, Copy)]
pub struct Tag {
    /// As written in the table (`kind`, `algorithm`).
    pub key: &'static str,
    /// The kind when the key is left out.
    pub default: Option<&'static str>,
}

impl Tag {
    /// `kind`, required.
    pub const KIND: Tag = Tag {
        key: "kind",
        default: None,
    };
}

/// Reads the table `t` at `path` as one of `kinds` (a family's
/// declarations): its `kind`, then each key it gives (a number in its range;
/// a key of another kind or a misspelt one is an error naming the kinds that
/// read it or the closest), then the required keys. `shared` are keys every
/// kind of the family takes, read by the caller: they are passed over here.
pub fn read<'a>(
    path: &'a str,
    t: &toml::Table,
    kinds: &[&'static Decl],
    shared: &[&str],
) -> R<Keys<'a>> {
    read_tagged(path, t, Tag::KIND, kinds, shared)
}

/// [`read`], the kind named by `tag` (`algorithm = "..."`, say).
pub fn read_tagged<'a>(
    path: &'a str,
    t: &toml::Table,
    tag: Tag,
    kinds: &[&'static Decl],
    shared: &[&str],
) -> R<Keys<'a>> {
    let names: Vec<&str> = kinds.iter().map(|d| d.name).collect();
    let family = kinds.first().map_or("kind", |d| d.family);
    let kind = match (t.get(tag.key), tag.default) {
        (None, Some(default)) => default,
        (None, None) => {
            return err(
                path,
                format!(
                    "missing `{}`: a {family} is one of {}",
                    tag.key,
                    list(names)
                ),
            );
        }
        (Some(Value::String(s)), _) => check::choice(&format!("{path}.{}", tag.key), s, &names)?,
        (Some(v), _) => {
            return err(format!("{path}.{}", tag.key), invalid(v, "a string"));
        }
    };
    let decl = *kinds
        .iter()
        .find(|d| d.name == kind)
        .expect("choice returns a listed name");
    let skip = |name: &str| name == tag.key || shared.contains(&name);
    let own = |name: &str| not_read(name, tag.key, decl, kinds, shared);
    keys_of(path, t, decl, skip, own)
}

/// Reads the keys of `decl` that `t` gives, every other key passed over
/// (the family reads it): the keys a family's kinds share, read once.
pub fn read_shared<'a>(path: &'a str, t: &toml::Table, decl: &'static Decl) -> R<Keys<'a>> {
    keys_of(
        path,
        t,
        decl,
        |name| decl.key(name).is_none(),
        |_| String::new(),
    )
}

/// The keys of `decl` in `t`: `skip` names the keys read elsewhere,
/// `unread` says what is wrong with any other.
fn keys_of<'a>(
    path: &'a str,
    t: &toml::Table,
    decl: &'static Decl,
    skip: impl Fn(&str) -> bool,
    unread: impl Fn(&str) -> String,
) -> R<Keys<'a>> {
    let mut given: Vec<Option<f64>> = vec![None; decl.keys.len()];
    let mut lists: Vec<Vec<f64>> = vec![Vec::new(); decl.keys.len()];
    for (name, v) in t {
        if skip(name) {
            continue;
        }
        let at = format!("{path}.{name}");
        let Some(i) = decl.keys.iter().position(|k| k.name == *name) else {
            return err(at, unread(name));
        };
        given[i] = Some(match decl.keys[i].range {
            Range::Names(names) => match v {
                Value::String(s) => check::choice(&at, s, names)
                    .map(|n| names.iter().position(|m| *m == n).unwrap_or_default() as f64)?,
                other => return err(at, invalid(other, "a string")),
            },
            Range::Weights => {
                lists[i] = weights(&at, v)?;
                0.0
            }
            Range::Whole(_) | Range::Count(_) => match v {
                Value::Integer(_) | Value::Float(_) => number(&at, v)?,
                other => return err(at, invalid(other, "a whole number")),
            },
            _ => number(&at, v)?,
        });
    }
    let missing: Vec<&str> = decl
        .keys
        .iter()
        .zip(&given)
        .filter(|(k, g)| k.default.is_none() && g.is_none())
        .map(|(k, _)| k.name)
        .collect();
    if !missing.is_empty() {
        let because = if decl.required_because.is_empty() {
            String::new()
        } else {
            format!(" ({})", decl.required_because)
        };
        return err(
            path,
            format!(
                "{} {} needs {}{because}",
                a_named(decl.name),
                decl.family,
                and_list(&missing)
            ),
        );
    }
    let mut values = Vec::with_capacity(decl.keys.len());
    for (k, g) in decl.keys.iter().zip(&given) {
        let v = g.or(k.default).expect("required keys are given");
        values.push(k.range.check(&format!("{path}.{}", k.name), v)?);
    }
    Ok(Keys {
        path,
        decl,
        values,
        given: given.iter().map(Option::is_some).collect(),
        lists,
    })
}

/// A text key of the table `t` at `path`, if given (another type is an
/// error naming `path.key`).
pub fn text<'a>(path: &str, t: &'a toml::Table, key: &str) -> R<Option<&'a str>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => err(format!("{path}.{key}"), invalid(v, "a string")),
    }
}

/// "invalid type: string \"3\", expected a whole number" (serde's words).
pub fn invalid(v: &Value, expected: &str) -> String {
    format!("invalid type: {}, expected {expected}", describe(v))
}

/// A number (an integer or a float).
pub fn number(at: &str, v: &Value) -> R<f64> {
    match v {
        Value::Integer(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        other => err(at, invalid(other, "a number")),
    }
}

/// A list of positive numbers, each checked at `at.i`.
fn weights(at: &str, v: &Value) -> R<Vec<f64>> {
    let Value::Array(items) = v else {
        return err(at, invalid(v, "a sequence"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let p = format!("{at}.{i}");
            check::positive(&p, number(&p, x)?)
        })
        .collect()
}

/// "`a`", "`a` and `b`", "`a`, `b` and `c`".
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [rest @ .., last] => format!("{} and `{last}`", list(rest.iter().copied())),
    }
}

/// "a `name`" or "an `name`", as the name is said.
fn a_named(name: &str) -> String {
    let vowel = name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} `{name}`", if vowel { "an" } else { "a" })
}

/// The message for key `name`, which `decl` does not read: the kinds that
/// read it, or the closest name; and the keys `decl` reads.
fn not_read(name: &str, tag: &str, decl: &Decl, kinds: &[&Decl], shared: &[&str]) -> String {
    let own: Vec<&str> = std::iter::once(tag)
        .chain(shared.iter().copied())
        .chain(decl.keys.iter().map(|k| k.name))
        .collect();
    let owners: Vec<&str> = kinds
        .iter()
        .filter(|d| d.key(name).is_some())
        .map(|d| d.name)
        .collect();
    if let Some(first) = owners.first() {
        let others = match &owners[1..] {
            [] => String::new(),
            [rest @ .., last] => rest
                .iter()
                .map(|o| format!(", `{o}`"))
                .chain(std::iter::once(format!(" or `{last}`")))
                .collect(),
        };
        return format!(
            "`{name}` belongs to {}{others} {}, not to `{}`, which reads {}",
            a_named(first),
            decl.family,
            decl.name,
            and_list(&own)
        );
    }
    let every: Vec<&str> = kinds
        .iter()
        .flat_map(|d| d.keys.iter().map(|k| k.name))
        .chain(own.iter().copied())
        .collect();
    format!(
        "unknown key `{name}`: {} {} reads {}{}",
        a_named(decl.name),
        decl.family,
        and_list(&own),
        did_you_mean(name, every)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Decl = Decl {
        name: "a",
        family: "thing",
        keys: &[
            Key::with("max", 0.5, Range::Fraction),
            Key::required("count", Range::Whole(1)),
        ],
        required_because: "",
    };
    const B: Decl = Decl {
        name: "b",
        family: "thing",
        keys: &[Key::with("window_ms", 10.0, Range::PositiveMs)],
        required_because: "its source has no default",
    };

    fn table(text: &str) -> toml::Table {
        text.parse().expect("a TOML table")
    }

    fn message(text: &str) -> String {
        read("p", &table(text), &[&A, &B], &[])
            .expect_err("an error")
            .message
    }

    #[test]
    fn reads_the_kind_its_keys_and_the_defaults() {
        let t = table("kind = \"a\"\ncount = 3");
        let k = read("p", &t, &[&A, &B], &[]).expect("valid");
        assert_eq!(k.decl().name, "a");
        assert_eq!(k.num("max"), 0.5);
        assert_eq!(k.whole("count"), 3);
        let t = table("kind = \"b\"");
        let k = read("p", &t, &[&A, &B], &[]).expect("valid");
        assert_eq!(k.ticks("window_ms").expect("fits"), Ticks::from_ms(10.0));
    }

    #[test]
    fn names_what_is_wrong() {
        assert_eq!(
            message("kind = \"c\""),
            "unknown value `c`, expected one of `a`, `b`"
        );
        assert_eq!(
            message("count = 1"),
            "missing `kind`: a thing is one of `a`, `b`"
        );
        assert_eq!(message("kind = \"a\""), "an `a` thing needs `count`");
        assert_eq!(
            message("kind = \"a\"\ncount = 1\nwindow_ms = 3"),
            "`window_ms` belongs to a `b` thing, not to `a`, which reads `kind`, `max` and `count`"
        );
        assert_eq!(
            message("kind = \"a\"\ncount = 1\ncout = 3"),
            "unknown key `cout`: an `a` thing reads `kind`, `max` and `count` (did you mean `count`?)"
        );
        assert_eq!(
            message("kind = \"a\"\ncount = \"3\""),
            "invalid type: string \"3\", expected a whole number"
        );
        assert_eq!(
            message("kind = \"a\"\ncount = 1.5"),
            "must be a whole number (got 1.5)"
        );
        assert_eq!(
            message("kind = \"a\"\ncount = 1\nmax = 2"),
            "must be between 0 and 1 (got 2)"
        );
        assert_eq!(
            message("kind = 1"),
            "invalid type: integer `1`, expected a string"
        );
    }

    #[test]
    fn writes_the_docs_cell() {
        assert_eq!(
            A.keys_cell(),
            "`max` (0.5, in [0, 1]), `count` (required, a whole number >= 1)"
        );
        assert_eq!(B.keys_cell(), "`window_ms` (10, > 0)");
    }
}
