//! Which line of the file to blame for an error.
//!
//! A row's model is the file plus `--set` overrides, a variant's patches and the
//! compare row's values. When validation fails on a key path, the culprit is the
//! last of those that wrote that path (or a table around it, or a key inside it),
//! so the message points at the `[compare]` value or the variant line, or names the
//! `--set`, instead of the value in the file that was overridden. Paths nobody
//! overrode are located in the file itself.
//!
//! It also recovers key paths that serde loses inside internally tagged tables
//! (`handler`, `workload`: `type = "..."`), and refuses overrides that would invent a
//! service, dependency or limiter by misspelling its name.

use super::paths;
use crate::error::{ScenarioError, did_you_mean, list};
use std::path::Path;
use toml::Value;

/// One value written on top of the file.
#[derive(Debug, Clone)]
pub struct Source {
    /// The dotted key path it writes.
    pub path: String,
    /// Where it is written in the file (`None` for the command line).
    pub position: Option<(usize, usize)>,
    /// Said after the message: `from --set x=1`, `in variant `slow``.
    pub origin: String,
}

/// Is one path equal to, or inside, the other (segment-wise)?
fn overlaps(a: &str, b: &str) -> bool {
    let (a, b) = (paths::segments(a), paths::segments(b));
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// Gives `e` its file, its position and the origin of the value it is about; when
/// nothing overrode that value, `fallback` (the compare row, if any) is said.
pub fn blame(
    text: &str,
    file: &Path,
    e: ScenarioError,
    sources: &[Source],
    fallback: &str,
) -> ScenarioError {
    let culprit = if e.path.is_empty() {
        None
    } else {
        sources.iter().rev().find(|s| overlaps(&s.path, &e.path))
    };
    // A cross-field check blames the value to change, but an override of another
    // value it read may be what broke it: say so, at the position of the value
    // blamed (`slo.threshold_ms` ... `(gateway.share_ms from --set ...)`).
    let other = || {
        sources.iter().rev().find(|s| {
            e.related
                .iter()
                .any(|r| !r.is_empty() && overlaps(&s.path, r))
        })
    };
    match (culprit, other()) {
        (Some(s), _) => {
            let position = s.position;
            e.context(&s.origin).at(position).in_file(file)
        }
        (None, Some(s)) => {
            let position = paths::locate(text, &e.path).or(s.position);
            // `--set` and compare rows name the key they set already
            let origin = if s.origin.starts_with("from ") || s.origin.starts_with("compare row") {
                s.origin.clone()
            } else if s.origin.starts_with("in ") {
                format!("`{}` {}", s.path, s.origin)
            } else {
                format!("`{}` from {}", s.path, s.origin)
            };
            e.context(&origin).at(position).in_file(file)
        }
        (None, None) => {
            let position = paths::locate(text, &e.path);
            e.context(fallback).at(position).in_file(file)
        }
    }
}

/// Expands scenario `text` (named `file` in messages) with the overrides,
/// variants and compare rows of `opts`.
///
/// An error that names no override though `--set` gave some (a check that
/// reads more than its own key: `--set services={}` leaves the workload's
/// route nowhere) is the overrides' doing when the file loads without them:
/// the message then names them, and no line of the file (none is at fault).
pub fn load_str(
    text: &str,
    file: &Path,
    opts: &super::LoadOptions,
) -> Result<super::Scenario, ScenarioError> {
    let e = match super::expand(text, file, opts) {
        Err(e) if !opts.overrides.is_empty() && !e.message.contains("(from --set ") => e,
        done => return done,
    };
    let without = super::LoadOptions {
        overrides: Vec::new(),
        ..opts.clone()
    };
    if super::expand(text, file, &without).is_err() {
        return Err(e);
    }
    // the overrides that fail on their own, else all of them (together)
    let alone: Vec<&super::Override> = opts
        .overrides
        .iter()
        .filter(|o| {
            let one = super::LoadOptions {
                overrides: vec![(*o).clone()],
                ..without.clone()
            };
            opts.overrides.len() > 1 && super::expand(text, file, &one).is_err()
        })
        .collect();
    let named = if alone.is_empty() {
        opts.overrides.iter().collect()
    } else {
        alone
    };
    let sets: Vec<String> = named
        .iter()
        .map(|o| format!("--set {}", super::shorten(&o.text)))
        .collect();
    let mut e = e.context(&format!(
        "from {}: the file loads without {}",
        sets.join(", "),
        if sets.len() == 1 { "it" } else { "them" }
    ));
    e.position = None;
    Err(e)
}

/// Maps of user-named entries: an override may change an entry, not invent one.
const NAMED: [(&str, &str); 5] = [
    ("services", "service"),
    ("dependencies", "dependency"),
    ("limiters", "limiter"),
    ("policies", "policy"),
    ("workloads", "workload"),
];

/// Refuses a path that reaches into a service, dependency, limiter, policy or
/// workload the document does not define: a typo would otherwise create a new,
/// incomplete entry (a policy nobody names, a sweep axis of identical rows). A
/// path of two parts (`policies.new={ ... }`) gives a whole new entry on purpose
/// and is allowed; the entry is then validated as if the file had it.
pub fn check_target(doc: &toml::Table, path: &str) -> Result<(), ScenarioError> {
    let segs = paths::segments(path);
    let (Some(first), Some(name)) = (segs.first(), segs.get(1)) else {
        return Ok(());
    };
    // `limiters.new={ ... }` defines a whole new entry on purpose; only a path that
    // reaches into an entry (`dependencies.tarif.median_ms`) must name one that exists.
    if segs.len() == 2 {
        return Ok(());
    }
    let Some((_, kind)) = NAMED.iter().find(|(section, _)| section == first) else {
        return Ok(());
    };
    let names: Vec<&str> = match doc.get(first.as_str()) {
        Some(Value::Table(t)) => t.keys().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    if names.contains(&name.as_str()) {
        return Ok(());
    }
    let known = if names.is_empty() && *first == "workloads" && doc.contains_key("workload") {
        "the file's one workload is [workload]: set `workload.KEY`".to_string()
    } else if names.is_empty() {
        format!("the file defines no {kind}")
    } else {
        format!("defined: {}", list(names.iter().copied()))
    };
    Err(ScenarioError::new(
        format!("{first}.{name}"),
        format!(
            "no {kind} named `{name}` ({known}){}",
            did_you_mean(name, names.iter().copied())
        ),
    ))
}

/// How serde describes a value in "invalid type" messages.
fn describe(v: &Value) -> String {
    use serde::de::Unexpected as U;
    match v {
        Value::String(s) => U::Str(s).to_string(),
        Value::Integer(i) => U::Signed(*i).to_string(),
        Value::Float(f) => U::Float(*f).to_string(),
        Value::Boolean(b) => U::Bool(*b).to_string(),
        Value::Array(_) => U::Seq.to_string(),
        Value::Table(_) => U::Map.to_string(),
        Value::Datetime(_) => String::new(),
    }
}

fn collect<'a>(v: &'a Value, prefix: String, out: &mut Vec<(String, &'a Value)>) {
    let children: Vec<(String, &Value)> = match v {
        Value::Table(t) => t.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => return,
    };
    for (k, child) in children {
        let p = format!("{prefix}.{k}");
        out.push((p.clone(), child));
        collect(child, p, out);
    }
}

/// Inside an internally tagged table (one with a `type` key) serde reports an
/// unknown key at the table itself: finds the one key named `field` below it
/// (e.g. in an inline call table of a branch) and returns its path; otherwise
/// `path.field`.
pub fn unknown_key_path(doc: &toml::Table, path: &str, field: &str) -> String {
    let direct = format!("{path}.{field}");
    let Some(table @ Value::Table(t)) = paths::get(doc, path) else {
        return direct;
    };
    if t.contains_key(field) || !t.contains_key("type") {
        return direct;
    }
    let mut all = Vec::new();
    collect(table, path.to_string(), &mut all);
    let suffix = format!(".{field}");
    let hits: Vec<&String> = all
        .iter()
        .map(|(p, _)| p)
        .filter(|p| p.ends_with(&suffix))
        .collect();
    match hits.as_slice() {
        [one] => (*one).clone(),
        _ => direct,
    }
}

/// The path of a required key serde found missing in the table at `path`: that
/// table's own key, unless the table is internally tagged (a `type` key), where
/// serde names the tagged table for a key missing in a table inside it too: then
/// the table's own key only when no table is inside it, else `None` (the caller
/// says "in this table or a table inside it").
pub fn missing_key_path(doc: &toml::Table, path: &str, field: &str) -> Option<String> {
    let direct = if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    };
    match paths::get(doc, path) {
        _ if path.is_empty() => Some(direct),
        Some(table @ Value::Table(t)) if t.contains_key("type") => {
            let mut all = Vec::new();
            collect(table, path.to_string(), &mut all);
            let nested = all.iter().any(|(_, v)| v.is_table());
            (!nested).then_some(direct)
        }
        _ => Some(direct),
    }
}

/// Inside an internally tagged table (one with a `type` key) serde reports type
/// errors at the table itself. Finds the one value below it that the message
/// describes and returns its path; otherwise `path` unchanged.
pub fn refine(doc: &toml::Table, path: &str, message: &str) -> String {
    let Some(rest) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
    else {
        return path.to_string();
    };
    let Some((unexpected, _)) = rest.rsplit_once(", expected") else {
        return path.to_string();
    };
    let Some(table @ Value::Table(t)) = paths::get(doc, path) else {
        return path.to_string();
    };
    if !t.contains_key("type") {
        return path.to_string();
    }
    let mut all = Vec::new();
    collect(table, path.to_string(), &mut all);
    let hits: Vec<&String> = all
        .iter()
        .filter(|(_, v)| describe(v) == unexpected)
        .map(|(p, _)| p)
        .collect();
    match hits.as_slice() {
        [one] => (*one).clone(),
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> toml::Table {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn refine_finds_the_value_a_tagged_table_complains_about() {
        let d = doc("[workload]\ntype = \"sequence\"\nrequests = \"three\"\n");
        assert_eq!(
            refine(
                &d,
                "workload",
                "invalid type: string \"three\", expected i64"
            ),
            "workload.requests"
        );
        let d = doc("[h]\ntype = \"plan\"\nbranches = [{ name = \"a\", calls = \"db\" }]\n");
        assert_eq!(
            refine(&d, "h", "invalid type: string \"db\", expected a sequence"),
            "h.branches.0.calls"
        );
        // ambiguous or untagged: unchanged
        let d = doc("[w]\ntype = \"x\"\na = 1\nb = 1\n");
        assert_eq!(
            refine(&d, "w", "invalid type: integer `1`, expected a string"),
            "w"
        );
    }

    #[test]
    fn overrides_may_not_invent_named_entries() {
        let d = doc("[services.api]\nroutes = [\"/a\"]\n");
        assert!(check_target(&d, "services.api.handler.policy").is_ok());
        assert!(check_target(&d, "workload.requests").is_ok());
        let e = check_target(&d, "services.apx.handler.policy").unwrap_err();
        assert_eq!(e.path, "services.apx");
        assert!(e.message.contains("did you mean `api`"), "{}", e.message);
        let d = doc("[policies.fast]\ntimeout_ms = 5\n[workload]\ntype = \"sequence\"\n");
        let e = check_target(&d, "policies.fsat.timeout_ms").unwrap_err();
        assert!(e.message.contains("did you mean `fast`"), "{}", e.message);
        assert!(check_target(&d, "policies.other").is_ok());
        let e = check_target(&d, "workloads.main.requests").unwrap_err();
        assert!(e.message.contains("`workload.KEY`"), "{}", e.message);
    }

    #[test]
    fn the_last_override_of_a_path_is_blamed() {
        let sources = vec![
            Source {
                path: "a.b".into(),
                position: None,
                origin: "from --set a.b=1".into(),
            },
            Source {
                path: "a".into(),
                position: Some((9, 3)),
                origin: "compare row".into(),
            },
        ];
        let e = blame(
            "a = 1\n",
            Path::new("f.toml"),
            ScenarioError::new("a.b.c", "bad"),
            &sources,
            "row",
        );
        assert_eq!(e.to_string(), "f.toml:9:3: a.b.c: bad (compare row)");
        let e = blame(
            "x = 1\n",
            Path::new("f.toml"),
            ScenarioError::new("x", "bad"),
            &sources,
            "row",
        );
        assert_eq!(e.to_string(), "f.toml:1:5: x: bad (row)");
    }

    #[test]
    fn an_override_of_a_value_a_check_compared_with_is_named() {
        let sources = vec![Source {
            path: "gateway.share_ms".into(),
            position: None,
            origin: "from --set gateway.share_ms=300".into(),
        }];
        let text = "[slo]\nthreshold_ms = 200\n";
        let e =
            ScenarioError::new("slo.threshold_ms", "leaves no budget").related("gateway.share_ms");
        assert_eq!(
            blame(text, Path::new("f.toml"), e, &sources, "").to_string(),
            "f.toml:2:16: slo.threshold_ms: leaves no budget (from --set gateway.share_ms=300)"
        );
        let e = ScenarioError::new("slo.threshold_ms", "bad").related("gateway.rules");
        assert_eq!(
            blame(text, Path::new("f.toml"), e, &sources, "").to_string(),
            "f.toml:2:16: slo.threshold_ms: bad"
        );
    }
}
