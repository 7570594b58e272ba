//! A format's fields as data. Each mapping a configuration format documents
//! is a [`Table`] of [`Field`]s: the field's name, what it means in the
//! system that reads it, what the import makes of it (a scenario key and the
//! real rule followed, an approximation and how, or why it is ignored) and
//! the system's default when it is absent.
//!
//! An importer reads a mapping through its table ([`read`]): the keys are
//! checked against the table (refused with the closest known field, or, for a
//! format whose system ignores unknown keys, listed as ignored with the
//! closest one named), and every field is put in the ledger from its table
//! row: a present field with its rule, an absent one with its default. So the
//! report's "Every field" table, the mapping the importer carries out and the
//! field tables of the docs ([`Table::markdown`]) come from one declaration.
//! Where a value changes what becomes of a field (gRPC's clamp of
//! `maxAttempts` to 5), the importer says so with [`Read::amend`].

use super::draft::{Fate, Ledger};
use super::tree::{Node, relaxed};
use crate::error::{Error, did_you_mean, list};

/// What becomes of a field that is present.
#[derive(Debug, Clone, Copy)]
pub enum Rule {
    /// Taken as it is to the scenario key `key` (`{}` stands for the scope the
    /// table is read in: the policy's or the service's name); `how` is the
    /// real system's rule it follows.
    Maps {
        /// The scenario key.
        key: &'static str,
        /// The rule followed.
        how: &'static str,
    },
    /// Taken to `key` with a change `how` explains.
    Approx {
        /// The scenario key ("" when the field changes no key).
        key: &'static str,
        /// What differs from the real system.
        how: &'static str,
    },
    /// Read and not used, for this reason.
    Ignored(&'static str),
    /// A mapping read through its own table.
    Nested(&'static Table),
    /// A list of mappings, each read through this table by the importer.
    Items(&'static Table),
    /// A mapping of names (instances, configs) to mappings, each read
    /// through this table by the importer.
    Named(&'static Table),
    /// Read by the importer's own code, which notes what became of it (a
    /// list of names, a value whose meaning depends on others); `how` is what
    /// the docs say of it.
    Code {
        /// The scenario key ("" when none).
        key: &'static str,
        /// What the import does with it.
        how: &'static str,
    },
}

/// One field of a mapping.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Its name, as the format spells it.
    pub name: &'static str,
    /// What it means in the system that reads it.
    pub meaning: &'static str,
    /// What the import makes of it.
    pub rule: Rule,
    /// When absent: the system's default as the file would write it, and
    /// what the import does then. None: its absence is not noted.
    pub absent: Option<(&'static str, &'static str)>,
}

impl Field {
    /// A field taken as it is to `key`.
    pub const fn maps(
        name: &'static str,
        meaning: &'static str,
        key: &'static str,
        how: &'static str,
    ) -> Field {
        Field {
            name,
            meaning,
            rule: Rule::Maps { key, how },
            absent: None,
        }
    }

    /// A field taken to `key` with a change.
    pub const fn approx(
        name: &'static str,
        meaning: &'static str,
        key: &'static str,
        how: &'static str,
    ) -> Field {
        Field {
            name,
            meaning,
            rule: Rule::Approx { key, how },
            absent: None,
        }
    }

    /// A field read and not used.
    pub const fn ignored(name: &'static str, meaning: &'static str, why: &'static str) -> Field {
        Field {
            name,
            meaning,
            rule: Rule::Ignored(why),
            absent: None,
        }
    }

    /// A mapping read through its own table.
    pub const fn nested(name: &'static str, meaning: &'static str, table: &'static Table) -> Field {
        Field {
            name,
            meaning,
            rule: Rule::Nested(table),
            absent: None,
        }
    }

    /// A list of mappings, each read through `table`.
    pub const fn items(name: &'static str, meaning: &'static str, table: &'static Table) -> Field {
        Field {
            name,
            meaning,
            rule: Rule::Items(table),
            absent: None,
        }
    }

    /// A mapping of names, each name's mapping read through `table`.
    pub const fn named(name: &'static str, meaning: &'static str, table: &'static Table) -> Field {
        Field {
            name,
            meaning,
            rule: Rule::Named(table),
            absent: None,
        }
    }

    /// A field the importer's code reads and notes itself.
    pub const fn code(
        name: &'static str,
        meaning: &'static str,
        key: &'static str,
        how: &'static str,
    ) -> Field {
        Field {
            name,
            meaning,
            rule: Rule::Code { key, how },
            absent: None,
        }
    }

    /// The same field with the system's `default` when absent, and what the
    /// import does then.
    pub const fn or(self, default: &'static str, then: &'static str) -> Field {
        Field {
            absent: Some((default, then)),
            ..self
        }
    }
}

/// How a mapping's keys are matched with its table's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// Exactly as written.
    Exact,
    /// As Spring Boot binds properties: `max-attempts`, `max_attempts` and
    /// `maxAttempts` are one key.
    Relaxed,
    /// As protobuf's JSON mapping reads a message: the lowerCamelCase name
    /// or the field's own snake_case name.
    Proto,
}

/// What a key the table does not name does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// It is an error, as the system refuses it.
    Refuse,
    /// It is listed as ignored with this reason and a warning (the system
    /// ignores keys it does not know, as Spring Boot does).
    Ignore(&'static str),
    /// It is listed as ignored with this reason, without a warning: the
    /// system defines many more fields here than the table lists (Envoy's
    /// `Cluster` has dozens), and none of the others changes what resim
    /// models.
    Unlisted(&'static str),
}

/// The fields of one kind of mapping.
#[derive(Debug)]
pub struct Table {
    /// Where such mappings sit, as the docs name them
    /// (`methodConfig[].retryPolicy`).
    pub at: &'static str,
    /// How keys are matched.
    pub binding: Binding,
    /// What an unknown key does.
    pub unknown: Unknown,
    /// Its fields.
    pub fields: &'static [Field],
}

impl Table {
    /// The field named `name` (as the table spells it).
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    fn matches(&self, known: &str, key: &str) -> bool {
        match self.binding {
            Binding::Exact => known == key,
            Binding::Relaxed => relaxed(known) == relaxed(key),
            Binding::Proto => known == key || snake(known) == key,
        }
    }

    /// The table's rows for the docs, nested tables after it: a heading line
    /// per table and a Markdown table of its fields.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let mut seen: Vec<*const Table> = Vec::new();
        self.markdown_into(&mut out, &mut seen);
        out
    }

    fn markdown_into(&self, out: &mut String, seen: &mut Vec<*const Table>) {
        if seen.contains(&(self as *const Table)) {
            return;
        }
        seen.push(self as *const Table);
        out.push_str(&format!("`{}`:\n\n", self.at));
        out.push_str("| field | meaning | default | becomes | rule |\n|---|---|---|---|---|\n");
        for f in self.fields {
            let default = f.absent.map(|(d, _)| d).unwrap_or("");
            let (becomes, rule) = match f.rule {
                Rule::Maps { key, how } => (key.replace("{}", "NAME"), how.to_string()),
                Rule::Approx { key, how } => {
                    (key.replace("{}", "NAME"), format!("approximated: {how}"))
                }
                Rule::Code { key, how } => (key.replace("{}", "NAME"), how.to_string()),
                Rule::Ignored(why) => (String::new(), format!("ignored: {why}")),
                Rule::Nested(t) | Rule::Items(t) | Rule::Named(t) => {
                    (String::new(), format!("see `{}`", t.at))
                }
            };
            let absent = match f.absent {
                Some((_, then)) if !then.is_empty() => {
                    format!("{}absent: {then}", if rule.is_empty() { "" } else { "; " })
                }
                _ => String::new(),
            };
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {}{} |\n",
                f.name,
                cell(f.meaning),
                cell(default),
                if becomes.is_empty() {
                    String::new()
                } else {
                    format!("`{becomes}`")
                },
                cell(&rule),
                cell(&absent)
            ));
        }
        if let Unknown::Unlisted(why) = self.unknown {
            out.push_str(&format!("\nAny other field: ignored: {}\n", cell(why)));
        }
        out.push('\n');
        for f in self.fields {
            if let Rule::Nested(t) | Rule::Items(t) | Rule::Named(t) = f.rule {
                t.markdown_into(out, seen);
            }
        }
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// `lowerCamelCase` as protobuf's snake_case field name.
fn snake(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A mapping read through its table.
#[derive(Debug, Clone)]
pub struct Read<'a> {
    /// The mapping.
    pub node: Node<'a>,
    table: &'static Table,
    scope: String,
    /// The fields in effect: each from the nearest mapping that has it.
    found: Vec<(&'static Field, Node<'a>)>,
    /// Each mapping's own fields, the mapping first, then those it inherits
    /// from ([`read_chain`]).
    levels: Vec<Vec<(&'static Field, Node<'a>)>>,
}

/// Reads the mapping `node` through `table`, in `scope` (what `{}` stands
/// for in its keys), and puts every field in the ledger: a present field
/// with its rule (a nested one through its own table when it is read), an
/// absent one with its default. An unknown key is refused or ignored as the
/// table says.
pub fn read<'a>(
    node: &Node<'a>,
    table: &'static Table,
    scope: &str,
    led: &mut Ledger,
) -> Result<Read<'a>, Error> {
    let mut found = Vec::new();
    for (k, v) in node.named()? {
        match table.fields.iter().find(|f| table.matches(f.name, &k)) {
            Some(f) => found.push((f, v)),
            None => unknown(table, &k, &v, led)?,
        }
    }
    let r = Read {
        node: node.clone(),
        table,
        scope: scope.to_string(),
        levels: vec![found.clone()],
        found,
    };
    for (f, v) in &r.found {
        match f.rule {
            Rule::Maps { key, how } => led.note(v, Fate::Mapped, r.scoped(key), how),
            Rule::Approx { key, how } => led.note(v, Fate::Approximated, r.scoped(key), how),
            Rule::Ignored(why) => led.note(v, Fate::Ignored, "", why),
            Rule::Nested(_) | Rule::Items(_) | Rule::Named(_) | Rule::Code { .. } => {}
        }
    }
    for f in table.fields {
        if let Some((default, then)) = f.absent
            && !r.has(f.name)
        {
            let key = match f.rule {
                Rule::Maps { key, .. } | Rule::Approx { key, .. } | Rule::Code { key, .. } => {
                    r.scoped(key)
                }
                Rule::Ignored(_) | Rule::Nested(_) | Rule::Items(_) | Rule::Named(_) => {
                    String::new()
                }
            };
            led.absent(node, f.name, default, key, then);
        }
    }
    Ok(r)
}

/// Reads a mapping that inherits from others, as Spring configurations do
/// (resilience4j's `baseConfig`): `chain` is the mapping, then those it
/// inherits from, nearest first. A field takes its value from the nearest
/// mapping that has it. The ledger gets every present field with its rule
/// (in `scope`: the mapping's), a field a nearer mapping sets again as
/// ignored ("overridden"), and a field no mapping has with its default, at
/// the first mapping. A mapping read before (a shared config, read once per
/// mapping inheriting from it) adds no second line for an ignored or unknown
/// field. `Code` fields are the importer's to note, at every level
/// ([`Read::all`]). A null mapping (`name:` with nothing after it) has no
/// fields.
pub fn read_chain<'a>(
    chain: &[Node<'a>],
    table: &'static Table,
    scope: &str,
    led: &mut Ledger,
) -> Result<Read<'a>, Error> {
    let Some(first) = chain.first() else {
        return Err(Error::from(crate::error::ScenarioError::new(
            table.at,
            "nothing to read",
        )));
    };
    let mut levels = Vec::with_capacity(chain.len());
    for node in chain {
        let mut own = Vec::new();
        if !node.v.is_null() {
            for (k, v) in node.named()? {
                match table.fields.iter().find(|f| table.matches(f.name, &k)) {
                    Some(f) => own.push((f, v)),
                    None if led.noted(&v) => {}
                    None => unknown(table, &k, &v, led)?,
                }
            }
        }
        levels.push(own);
    }
    let mut found: Vec<(&'static Field, Node<'a>)> = Vec::new();
    for own in &levels {
        for (f, v) in own {
            if !found.iter().any(|(g, _)| g.name == f.name) {
                found.push((f, v.clone()));
            }
        }
    }
    let r = Read {
        node: first.clone(),
        table,
        scope: scope.to_string(),
        found,
        levels,
    };
    for own in &r.levels {
        for (f, v) in own {
            let nearest = r.get(f.name);
            let shadowed = nearest.as_ref().is_some_and(|n| n.steps != v.steps);
            match (f.rule, shadowed) {
                (Rule::Ignored(why), _) if !led.noted(v) => led.note(v, Fate::Ignored, "", why),
                (Rule::Ignored(_), _) => {}
                (Rule::Maps { .. } | Rule::Approx { .. }, true) => {
                    let by = nearest.map(|n| n.path()).unwrap_or_default();
                    led.note(
                        v,
                        Fate::Ignored,
                        "",
                        format!("overridden by `{by}`, which {scope} reads first"),
                    );
                }
                (Rule::Maps { key, how }, false) => led.note(v, Fate::Mapped, r.scoped(key), how),
                (Rule::Approx { key, how }, false) => {
                    led.note(v, Fate::Approximated, r.scoped(key), how)
                }
                (Rule::Nested(_) | Rule::Items(_) | Rule::Named(_) | Rule::Code { .. }, _) => {}
            }
        }
    }
    for f in table.fields {
        if let Some((default, then)) = f.absent
            && !r.has(f.name)
        {
            led.absent(first, f.name, default, r.key(f.name), then);
        }
    }
    Ok(r)
}

fn unknown(table: &Table, key: &str, v: &Node<'_>, led: &mut Ledger) -> Result<(), Error> {
    let names = table.fields.iter().map(|f| f.name);
    match table.unknown {
        Unknown::Refuse => Err(v.err(format!(
            "not a field this importer knows here{}; known: {}",
            did_you_mean(key, names.clone()),
            list(names)
        ))),
        Unknown::Ignore(why) => {
            led.note(
                v,
                Fate::Ignored,
                "",
                format!("{why}{}", did_you_mean(key, names)),
            );
            led.warn_last();
            Ok(())
        }
        Unknown::Unlisted(why) => {
            led.note(v, Fate::Ignored, "", why);
            Ok(())
        }
    }
}

impl<'a> Read<'a> {
    /// `key` with the scope in place of `{}`.
    pub fn scoped(&self, key: &str) -> String {
        key.replacen("{}", &self.scope, 1)
    }

    /// The field `name`, if present.
    pub fn get(&self, name: &str) -> Option<Node<'a>> {
        debug_assert!(
            self.table.field(name).is_some(),
            "`{name}` is not in the table of {}",
            self.table.at
        );
        self.found
            .iter()
            .find(|(f, _)| f.name == name)
            .map(|(_, n)| n.clone())
    }

    /// The field `name` as the mapping at `level` of the chain and those it
    /// inherits from give it: (the level it comes from, its node).
    pub fn from_level(&self, name: &str, level: usize) -> Option<(usize, Node<'a>)> {
        self.levels
            .iter()
            .enumerate()
            .skip(level)
            .find_map(|(i, own)| {
                own.iter()
                    .find(|(f, _)| f.name == name)
                    .map(|(_, n)| (i, n.clone()))
            })
    }

    /// The field `name` in every mapping of the chain that has it, nearest
    /// first: (level, node).
    pub fn all(&self, name: &str) -> Vec<(usize, Node<'a>)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(i, own)| {
                own.iter()
                    .filter(|(f, _)| f.name == name)
                    .map(move |(_, n)| (i, n.clone()))
            })
            .collect()
    }

    /// The named mappings of the present field `name` (a `Named` field).
    pub fn named(&self, name: &str) -> Result<Vec<(String, Node<'a>)>, Error> {
        match self.get(name) {
            Some(n) if n.v.is_null() => Ok(Vec::new()),
            Some(n) => n.named(),
            None => Ok(Vec::new()),
        }
    }

    /// Whether the field `name` is present.
    pub fn has(&self, name: &str) -> bool {
        self.found.iter().any(|(f, _)| f.name == name)
    }

    /// The field `name`, or an error saying the mapping needs it (`why`: the
    /// system's rule).
    pub fn need(&self, name: &str, why: &str) -> Result<Node<'a>, Error> {
        self.get(name)
            .ok_or_else(|| self.node.err(format!("needs `{name}` ({why})")))
    }

    /// The scenario key of field `name`, in this scope ("" when none).
    pub fn key(&self, name: &str) -> String {
        match self.table.field(name).map(|f| f.rule) {
            Some(Rule::Maps { key, .. } | Rule::Approx { key, .. } | Rule::Code { key, .. }) => {
                self.scoped(key)
            }
            _ => String::new(),
        }
    }

    /// Says what became of the present field `name` where its value changes
    /// the table's rule: its ledger line now has `fate` and `how`.
    pub fn amend(&self, led: &mut Ledger, name: &str, fate: Fate, how: impl Into<String>) {
        if let Some(n) = self.get(name) {
            let key = self.key(name);
            led.renote(&n, fate, key, how);
        }
    }

    /// Says what became of the absent field `name` where other fields
    /// decide it: its default line takes `key` and `how`.
    pub fn amend_absent(
        &self,
        led: &mut Ledger,
        name: &str,
        key: impl Into<String>,
        how: impl Into<String>,
    ) {
        if !self.has(name) {
            led.renote_absent(&self.node, name, key, how);
        }
    }

    /// Notes the present field `name` (a `Code` field) with `fate` and `how`.
    pub fn note(&self, led: &mut Ledger, name: &str, fate: Fate, how: impl Into<String>) {
        self.amend(led, name, fate, how)
    }

    /// The mappings of the present list field `name` (an `Items` field),
    /// each to be read through [`Read::item`].
    pub fn items(&self, name: &str) -> Result<Vec<Node<'a>>, Error> {
        match self.get(name) {
            Some(n) => n.items(),
            None => Ok(Vec::new()),
        }
    }

    /// Reads `item`, one mapping of the list field `name`, through the list's
    /// table, in `scope`.
    pub fn item(
        &self,
        name: &str,
        item: &Node<'a>,
        scope: &str,
        led: &mut Ledger,
    ) -> Result<Read<'a>, Error> {
        match self.table.field(name).map(|f| f.rule) {
            Some(Rule::Items(t)) => read(item, t, scope, led),
            _ => Err(item.err(format!("`{name}` is not a list of mappings here"))),
        }
    }

    /// Reads the present nested field `name` through its table, in `scope`.
    pub fn nested(
        &self,
        name: &str,
        scope: &str,
        led: &mut Ledger,
    ) -> Result<Option<Read<'a>>, Error> {
        let Some(n) = self.get(name) else {
            return Ok(None);
        };
        let Some(Rule::Nested(t)) = self.table.field(name).map(|f| f.rule) else {
            return Ok(None);
        };
        read(&n, t, scope, led).map(Some)
    }

    /// The fields present, in the file's order.
    pub fn present(&self) -> impl Iterator<Item = (&'static str, &Node<'a>)> {
        self.found.iter().map(|(f, n)| (f.name, n))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tree::Source;
    use super::*;

    static INNER: Table = Table {
        at: "outer.inner",
        binding: Binding::Exact,
        unknown: Unknown::Refuse,
        fields: &[Field::maps(
            "depth",
            "how deep",
            "policies.{}.depth",
            "as written",
        )],
    };
    static OUTER: Table = Table {
        at: "outer",
        binding: Binding::Proto,
        unknown: Unknown::Refuse,
        fields: &[
            Field::maps(
                "maxAttempts",
                "attempts",
                "policies.{}.max_attempts",
                "as written",
            )
            .or("3", "3, the default"),
            Field::ignored("waitForReady", "waits for a channel", "no channels"),
            Field::nested("inner", "a nested table", &INNER),
        ],
    };
    static SPRING: Table = Table {
        at: "r4j",
        binding: Binding::Relaxed,
        unknown: Unknown::Ignore("Spring Boot ignores keys it does not bind"),
        fields: &[Field::maps("maxAttempts", "attempts", "k", "as written")],
    };

    fn src(v: serde_json::Value) -> Source {
        Source::new(std::path::Path::new("f.json"), vec![v], false, 0, "")
    }

    #[test]
    fn every_field_is_in_the_ledger_from_its_row() {
        let s = src(serde_json::json!({"wait_for_ready": true, "inner": {"depth": 2}}));
        let mut led = Ledger::default();
        let r = read(&s.root(0), &OUTER, "p", &mut led).unwrap();
        assert!(r.has("waitForReady"), "the proto name binds too");
        r.nested("inner", "p", &mut led).unwrap();
        let lines: Vec<(String, Fate, String)> = led
            .lines
            .iter()
            .map(|l| (l.field.clone(), l.fate, l.key.clone()))
            .collect();
        assert_eq!(
            lines,
            [
                ("/wait_for_ready".into(), Fate::Ignored, String::new()),
                (
                    "/maxAttempts".into(),
                    Fate::Defaulted,
                    "policies.p.max_attempts".into()
                ),
                (
                    "/inner/depth".into(),
                    Fate::Mapped,
                    "policies.p.depth".into()
                ),
            ]
        );
    }

    #[test]
    fn an_amended_field_keeps_one_line() {
        let s = src(serde_json::json!({"maxAttempts": 9}));
        let mut led = Ledger::default();
        let r = read(&s.root(0), &OUTER, "p", &mut led).unwrap();
        r.amend(&mut led, "maxAttempts", Fate::Approximated, "5: clamped");
        assert_eq!(led.lines.len(), 1);
        assert_eq!(led.lines[0].fate, Fate::Approximated);
        assert_eq!(led.lines[0].how, "5: clamped");
    }

    #[test]
    fn unknown_keys_are_refused_or_ignored_as_the_table_says() {
        let s = src(serde_json::json!({"maxAtempts": 3}));
        let mut led = Ledger::default();
        let e = read(&s.root(0), &OUTER, "p", &mut led)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `maxAttempts`"), "{e}");
        let s = src(serde_json::json!({"max-atempts": 3, "max-attempts": 2}));
        let mut led = Ledger::default();
        let r = read(&s.root(0), &SPRING, "p", &mut led).unwrap();
        assert!(r.has("maxAttempts"), "kebab-case binds");
        let ignored = &led.lines[0];
        assert_eq!(ignored.fate, Fate::Ignored);
        assert!(
            ignored.warn && ignored.how.contains("did you mean"),
            "{ignored:?}"
        );
    }

    static ENVOYISH: Table = Table {
        at: "cluster",
        binding: Binding::Exact,
        unknown: Unknown::Unlisted("not modelled"),
        fields: &[Field::maps("name", "its name", "k", "as written")],
    };

    #[test]
    fn an_unlisted_key_is_ignored_without_a_warning_and_the_docs_say_so() {
        let s = src(serde_json::json!({"name": "a", "connect_timeout": "1s"}));
        let mut led = Ledger::default();
        read(&s.root(0), &ENVOYISH, "p", &mut led).unwrap();
        let l = led
            .lines
            .iter()
            .find(|l| l.field == "/connect_timeout")
            .unwrap();
        assert_eq!(
            (l.fate, l.warn, l.how.as_str()),
            (Fate::Ignored, false, "not modelled")
        );
        assert!(
            ENVOYISH
                .markdown()
                .contains("Any other field: ignored: not modelled")
        );
    }

    #[test]
    fn a_chain_takes_each_field_from_the_nearest_mapping_that_has_it() {
        let s = src(serde_json::json!({
            "inst": {"max-attempts": 2, "tpyo": 1},
            "base": {"maxAttempts": 5, "tpyo": 1},
            "root": {"wait": true}
        }));
        let root = s.root(0);
        let f: Vec<Node<'_>> = root.named().unwrap().into_iter().map(|(_, n)| n).collect();
        static CHAINED: Table = Table {
            at: "chained",
            binding: Binding::Relaxed,
            unknown: Unknown::Ignore("ignored"),
            fields: &[
                Field::maps("maxAttempts", "attempts", "p.{}.n", "as written").or("3", "3"),
                Field::ignored("wait", "waits", "no waits"),
                Field::maps("other", "other", "p.{}.o", "as written").or("1", "1"),
            ],
        };
        let mut led = Ledger::default();
        let r = read_chain(&f, &CHAINED, "a", &mut led).unwrap();
        assert_eq!(
            r.get("maxAttempts").map(|n| n.path()),
            Some("/inst/max-attempts".into())
        );
        assert_eq!(r.from_level("maxAttempts", 1).map(|(l, _)| l), Some(1));
        assert_eq!(r.all("maxAttempts").len(), 2);
        let lines: Vec<(&str, Fate, &str)> = led
            .lines
            .iter()
            .map(|l| (l.field.as_str(), l.fate, l.key.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                ("/inst/tpyo", Fate::Ignored, ""),
                ("/base/tpyo", Fate::Ignored, ""),
                ("/inst/max-attempts", Fate::Mapped, "p.a.n"),
                ("/base/maxAttempts", Fate::Ignored, ""),
                ("/root/wait", Fate::Ignored, ""),
                ("/inst/other", Fate::Defaulted, "p.a.o"),
            ]
        );
        assert!(
            led.lines[3]
                .how
                .contains("overridden by `/inst/max-attempts`")
        );
        // a shared mapping read again adds no second line for its unknown
        // or ignored fields
        let n = led.lines.len();
        read_chain(&f[1..], &CHAINED, "b", &mut led).unwrap();
        let again: Vec<&str> = led.lines[n..].iter().map(|l| l.field.as_str()).collect();
        assert_eq!(again, ["/base/maxAttempts", "/base/other"]);
    }

    #[test]
    fn the_docs_table_names_every_field_and_its_nested_table() {
        let md = OUTER.markdown();
        assert!(md.contains("| `maxAttempts` | attempts | 3 | `policies.NAME.max_attempts` |"));
        assert!(md.contains("ignored: no channels"));
        assert!(md.contains("`outer.inner`:") && md.contains("| `depth` |"));
    }
}
