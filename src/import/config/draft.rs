//! The scenario an import writes, as tables of keys (each with a comment where
//! a value is a guess the user must check: `# set me:`), and the ledger of what
//! became of every field read: mapped, approximated, defaulted or ignored.

use super::tree::{Node, Source, Step, leaves};
use crate::import::report::{Section, Table};
use std::collections::{HashMap, HashSet};

/// A TOML value, written as it will appear.
#[derive(Debug, Clone)]
pub struct Val(pub String);

impl Val {
    /// A string.
    pub fn s(s: &str) -> Val {
        Val(toml::Value::String(s.to_string()).to_string())
    }
    /// A number: whole numbers without a decimal point (they also fill
    /// integer keys), others as the shortest exact decimal.
    pub fn n(x: f64) -> Val {
        if x.fract() == 0.0 && x.abs() < 1e15 {
            Val(format!("{}", x as i64))
        } else if x.abs() >= 1e15 {
            // Rust writes 1e300 as 301 digits, which TOML reads as an
            // integer that overflows: write the exponent, a TOML float
            Val(format!("{x:e}"))
        } else {
            Val(format!("{x}"))
        }
    }
    /// A boolean.
    pub fn b(b: bool) -> Val {
        Val(b.to_string())
    }
    /// A list of strings.
    pub fn strs<'a>(xs: impl IntoIterator<Item = &'a str>) -> Val {
        Val(format!(
            "[{}]",
            xs.into_iter()
                .map(|x| Val::s(x).0)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
    /// An inline table of `(key, value)`.
    pub fn table(entries: &[(&str, Val)]) -> Val {
        Val(format!(
            "{{ {} }}",
            entries
                .iter()
                .map(|(k, v)| format!("{k} = {}", v.0))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// One `key = value` line.
#[derive(Debug, Clone)]
pub struct Item {
    /// The key (dotted keys are not used).
    pub key: String,
    /// The value.
    pub value: Val,
    /// A comment after it; `set_me` makes it `# set me: ...`.
    pub note: Option<String>,
    /// A value the files did not give: a placeholder the user should set.
    pub set_me: bool,
}

/// One `[header]` table.
#[derive(Debug, Clone, Default)]
pub struct Tab {
    /// `services.api.handler`.
    pub header: String,
    /// Comment lines above it.
    pub notes: Vec<String>,
    /// Its keys.
    pub items: Vec<Item>,
}

impl Tab {
    /// A table with this header.
    pub fn new(header: impl Into<String>) -> Tab {
        Tab {
            header: header.into(),
            ..Tab::default()
        }
    }
    /// Adds a key from the files.
    pub fn put(&mut self, key: &str, value: Val) -> &mut Tab {
        self.items.push(Item {
            key: key.into(),
            value,
            note: None,
            set_me: false,
        });
        self
    }
    /// Adds a key with a comment.
    pub fn put_noted(&mut self, key: &str, value: Val, note: impl Into<String>) -> &mut Tab {
        self.items.push(Item {
            key: key.into(),
            value,
            note: Some(note.into()),
            set_me: false,
        });
        self
    }
    /// Adds a placeholder the user should set (`# set me: why`).
    pub fn set_me(&mut self, key: &str, value: Val, why: impl Into<String>) -> &mut Tab {
        self.items.push(Item {
            key: key.into(),
            value,
            note: Some(why.into()),
            set_me: true,
        });
        self
    }
}

/// An open workload sending to `route` at `workloads.NAME`, whose rate and
/// duration no configuration gives: 100 per second for 60 s, each marked `set
/// me` with `rate` and `duration` saying what they are.
pub fn placeholder_workload(name: &str, route: &str, rate: &str, duration: &str) -> Tab {
    let mut w = Tab::new(format!("workloads.{name}"));
    w.put("type", Val::s("open"));
    w.put("route", Val::s(route));
    w.set_me("rate_rps", Val::n(100.0), rate);
    w.set_me("duration_ms", Val::n(60_000.0), duration);
    w
}

/// A replica's server handler whose numbers no configuration gives, at
/// `services.SERVICE.handler`: 8 slots, a queue of 64 and a lognormal service
/// time (p50 20 ms, p99 100 ms), each marked `set me`. `each` says what one
/// replica handles at once ("requests each pod handles at once"), `waiting`
/// what waits ("requests"), `own` whose time the service is ("a pod's own
/// time per request").
pub fn placeholder_server(service: &str, each: &str, waiting: &str, own: &str) -> Tab {
    let mut h = Tab::new(format!("services.{service}.handler"));
    h.put("type", Val::s("server"));
    h.set_me("slots", Val::n(8.0), each);
    h.set_me(
        "queue",
        Val::n(64.0),
        format!("{waiting} waiting beyond the slots; more are shed (503)"),
    );
    h.set_me(
        "service",
        Val::table(&[(
            "lognormal",
            Val::table(&[("p50_ms", Val::n(20.0)), ("p99_ms", Val::n(100.0))]),
        )]),
        own,
    );
    h
}

/// The scenario being built.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    /// Comment lines at the top of the file.
    pub head: Vec<String>,
    /// Its tables, in order.
    pub tabs: Vec<Tab>,
}

impl Draft {
    /// The scenario file's text.
    pub fn toml(&self) -> String {
        let mut out = String::new();
        for h in &self.head {
            out.push_str(&comment(h));
        }
        for t in &self.tabs {
            out.push('\n');
            for n in &t.notes {
                out.push_str(&comment(n));
            }
            out.push_str(&format!("[{}]\n", t.header));
            for i in &t.items {
                let line = format!("{} = {}", i.key, i.value.0);
                match (&i.note, i.set_me) {
                    (Some(n), true) => {
                        out.push_str(&format!("{line:<40} # set me: {}\n", one_line(n)))
                    }
                    (Some(n), false) => out.push_str(&format!("{line:<40} # {}\n", one_line(n))),
                    (None, _) => out.push_str(&format!("{line}\n")),
                }
            }
        }
        out
    }

    /// The placeholders, as `table.key: why`.
    pub fn set_mes(&self) -> Vec<String> {
        self.tabs
            .iter()
            .flat_map(|t| {
                t.items.iter().filter(|i| i.set_me).map(move |i| {
                    format!(
                        "{}.{} = {}: {}",
                        t.header,
                        i.key,
                        i.value.0,
                        i.note.as_deref().unwrap_or("")
                    )
                })
            })
            .collect()
    }
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn comment(s: &str) -> String {
    s.lines()
        .map(|l| format!("# {l}\n").replace("#  \n", "#\n"))
        .collect()
}

/// What became of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fate {
    /// Taken as it is, to a key.
    Mapped,
    /// Taken with a change the report explains.
    Approximated,
    /// Absent from the file: the system's documented default was used.
    Defaulted,
    /// Read and not used, for the reason given.
    Ignored,
}

impl Fate {
    /// Its word in the report.
    pub fn word(self) -> &'static str {
        match self {
            Fate::Mapped => "mapped",
            Fate::Approximated => "approximated",
            Fate::Defaulted => "default",
            Fate::Ignored => "ignored",
        }
    }
}

/// One line of the ledger.
#[derive(Debug, Clone)]
pub struct Line {
    /// The file.
    pub file: String,
    /// The field's path (for a default: the path it would have).
    pub field: String,
    /// Its document in the file.
    pub doc: usize,
    /// Its path, as steps.
    pub steps: Vec<Step>,
    /// Its value as written (for a default: the default).
    pub value: String,
    /// What became of it.
    pub fate: Fate,
    /// The scenario key it went to ("" when none).
    pub key: String,
    /// How, or why not.
    pub how: String,
    /// Said among the report's warnings too (a key the system ignores
    /// without a word, named so that a misspelt key is seen).
    pub warn: bool,
}

/// Every field read and what became of it.
#[derive(Debug, Default)]
pub struct Ledger {
    /// The lines, in the order the fields were read.
    pub lines: Vec<Line>,
    /// The (file, document, path) of every field accounted for: a set, so
    /// that a file of many routes is accounted for in time linear in its
    /// size (a field is covered when its path or one above it is here).
    seen: HashSet<(String, usize, Vec<Step>)>,
    /// The lines of each (file, field), in order.
    at: HashMap<(String, String), Vec<usize>>,
}

impl Ledger {
    /// Adds a line, indexed by its file and field.
    fn push(&mut self, line: Line) {
        self.at
            .entry((line.file.clone(), line.field.clone()))
            .or_default()
            .push(self.lines.len());
        self.lines.push(line);
    }

    /// The last line of (file, field) that `pick` accepts.
    fn last_of(
        &mut self,
        file: String,
        field: String,
        pick: impl Fn(&Line) -> bool,
    ) -> Option<&mut Line> {
        let i = *self
            .at
            .get(&(file, field))?
            .iter()
            .rev()
            .find(|i| pick(&self.lines[**i]))?;
        Some(&mut self.lines[i])
    }

    /// Whether `steps` of `file`'s document `doc`, or a path above it, is
    /// accounted for.
    fn covered(&self, file: &str, doc: usize, steps: &[Step]) -> bool {
        let mut key = (file.to_string(), doc, steps.to_vec());
        loop {
            if self.seen.contains(&key) {
                return true;
            }
            if key.2.pop().is_none() {
                return false;
            }
        }
    }

    /// Records what became of `node`.
    pub fn note(
        &mut self,
        node: &Node<'_>,
        fate: Fate,
        key: impl Into<String>,
        how: impl Into<String>,
    ) {
        let file = node.src.file.display().to_string();
        self.seen
            .insert((file.clone(), node.doc, node.steps.clone()));
        self.push(Line {
            file,
            field: node.path(),
            doc: node.doc,
            steps: node.steps.clone(),
            value: node.shown_value(),
            fate,
            key: key.into(),
            how: how.into(),
            warn: false,
        });
    }

    /// Says again what became of `node`, already noted: its line takes the
    /// new fate, key and how (a value that changes the table's rule).
    pub fn renote(
        &mut self,
        node: &Node<'_>,
        fate: Fate,
        key: impl Into<String>,
        how: impl Into<String>,
    ) {
        let file = node.src.file.display().to_string();
        let field = node.path();
        match self.last_of(file, field, |_| true) {
            Some(l) => {
                l.fate = fate;
                l.key = key.into();
                l.how = how.into();
            }
            None => self.note(node, fate, key, how),
        }
    }

    /// Whether `node` (or a field above it) already has a line.
    pub fn noted(&self, node: &Node<'_>) -> bool {
        let file = node.src.file.display().to_string();
        self.covered(&file, node.doc, &node.steps)
    }

    /// Says again what became of the absent field `field` under `parent`
    /// (a default whose effect depends on other fields): its line takes
    /// `key` and `how`.
    pub fn renote_absent(
        &mut self,
        parent: &Node<'_>,
        field: &str,
        key: impl Into<String>,
        how: impl Into<String>,
    ) {
        let mut steps = parent.steps.clone();
        steps.push(Step::Key(field.into()));
        let file = parent.src.file.display().to_string();
        let path = parent.src.shown(parent.doc, &steps);
        if let Some(l) = self.last_of(file, path, |l| l.fate == Fate::Defaulted) {
            l.key = key.into();
            l.how = how.into();
        }
    }

    /// The last line of `node` is also a warning.
    pub fn warn_on(&mut self, node: &Node<'_>) {
        let file = node.src.file.display().to_string();
        let field = node.path();
        if let Some(l) = self.last_of(file, field, |_| true) {
            l.warn = true;
        }
    }

    /// The last line is also a warning.
    pub fn warn_last(&mut self) {
        if let Some(l) = self.lines.last_mut() {
            l.warn = true;
        }
    }

    /// Records a default: `field` (under `parent`) was absent, `value` was used.
    pub fn absent(
        &mut self,
        parent: &Node<'_>,
        field: &str,
        value: &str,
        key: impl Into<String>,
        how: impl Into<String>,
    ) {
        let mut steps = parent.steps.clone();
        steps.push(Step::Key(field.into()));
        self.push(Line {
            file: parent.src.file.display().to_string(),
            field: parent.src.shown(parent.doc, &steps),
            doc: parent.doc,
            steps,
            value: value.into(),
            fate: Fate::Defaulted,
            key: key.into(),
            how: how.into(),
            warn: false,
        });
    }

    /// Every leaf of `src` that no line accounts for, as an ignored line
    /// (an importer that forgot a field still says so).
    pub fn close(&mut self, src: &Source) {
        let file = src.file.display().to_string();
        for (d, doc) in src.docs.iter().enumerate() {
            let mut all = Vec::new();
            leaves(doc, &mut Vec::new(), &mut all);
            for leaf in all {
                if !self.covered(&file, d, &leaf) {
                    let node = walk(src, d, &leaf);
                    self.push(Line {
                        file: file.clone(),
                        field: src.shown(d, &leaf),
                        doc: d,
                        steps: leaf,
                        value: node,
                        fate: Fate::Ignored,
                        key: String::new(),
                        how: "not read by the importer".into(),
                        warn: true,
                    });
                }
            }
        }
    }

    /// How many lines have each fate.
    pub fn count(&self, fate: Fate) -> usize {
        self.lines.iter().filter(|l| l.fate == fate).count()
    }

    /// The report's section: every line.
    pub fn section(&self) -> Section {
        let mut t = Table::new(&[
            "file",
            "field",
            "value",
            "became",
            "scenario key",
            "how / why",
        ]);
        for l in &self.lines {
            t.push(vec![
                l.file.clone(),
                l.field.clone(),
                l.value.clone(),
                l.fate.word().into(),
                l.key.clone(),
                l.how.clone(),
            ]);
        }
        Section {
            heading: "Every field".into(),
            text: vec![format!(
                "Each field read, and each default used where a field was absent: {} mapped, {} approximated, {} defaults, {} ignored. Nothing else was in the files.",
                self.count(Fate::Mapped),
                self.count(Fate::Approximated),
                self.count(Fate::Defaulted),
                self.count(Fate::Ignored)
            )],
            table: Some(t),
        }
    }
}

fn walk(src: &Source, doc: usize, steps: &[Step]) -> String {
    let mut v = &src.docs[doc];
    for s in steps {
        v = match s {
            Step::Key(k) => &v[k.as_str()],
            Step::Index(i) => &v[*i],
        };
    }
    match v {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// `base`, or `base-2`, `base-3`, ... : the first that `taken` does not
/// hold (two things whose names read alike as scenario names stay two).
pub fn unique(base: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut n = base.to_string();
    let mut k = 2;
    while taken(&n) {
        n = format!("{base}-{k}");
        k += 1;
    }
    n
}

/// A name usable as a scenario name (services, workloads, policies): lower
/// case letters, digits and `-`.
pub fn name(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "default".into()
    } else {
        out
    }
}
