//! Scenario files: read, override, expand into compare rows, validate.
//!
//! ```text
//! file text --toml--> document --(--set, variant, compare row)--> raw structs --validate--> Model
//! ```
//!
//! Every value can be addressed by its dotted key path (`services.tracking.handler.policy`,
//! `branches.1.calls`), which is how `--set`, `[variants.*]` and `[compare]` change it.

pub(crate) mod blame;
pub mod bundled;
mod input;
mod latency_file;
pub(crate) mod paths;
pub(crate) mod raw;
pub mod tail;
pub(crate) mod validate;
mod warnings;

pub use input::{MAX_INPUT_BYTES, read_input};
pub(crate) use input::{decode_text, missing_reason, read_input_text};
pub use {blame::load_str, warnings::warnings};

use crate::error::{ScenarioError, did_you_mean, list};
use crate::model::Model;
use blame::Source;
use raw::RawScenario;
use std::path::{Path, PathBuf};
use toml::Value;

/// A `--set key.path=VALUE` override, VALUE in TOML syntax (a bare word is a string).
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The dotted key path it sets.
    pub path: String,
    /// The value it sets there.
    pub value: Value,
    /// As the user wrote it, for messages and the manifest.
    pub text: String,
}

impl Override {
    /// Parses `key.path=VALUE` (VALUE in TOML syntax; a bare word is a string).
    pub fn parse(s: &str) -> Result<Override, ScenarioError> {
        let Some((path, value)) = s.split_once('=') else {
            return Err(ScenarioError::new(
                "",
                format!("`--set {s}`: expected key.path=VALUE"),
            ));
        };
        let path = path.trim();
        if path.is_empty() {
            return Err(ScenarioError::new(
                "",
                format!("`--set {s}`: the key path is empty"),
            ));
        }
        let value = try_value(value.trim()).map_err(|message| {
            ScenarioError::new(path, message).context(&format!("from --set {}", shorten(s)))
        })?;
        Ok(Override {
            path: path.to_string(),
            value,
            text: s.to_string(),
        })
    }
}

/// Parses a TOML value; anything that is not valid TOML is taken as a plain
/// string, except text written as a TOML table, list or quoted string: that is
/// an error (the TOML message), so `{ a = 1, a = 2 }` is a duplicate key, not
/// the string "{ a = 1, a = 2 }".
fn try_value(text: &str) -> Result<Value, String> {
    let doc = format!("v = {text}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => Ok(t
            .remove("v")
            .unwrap_or_else(|| Value::String(text.to_string()))),
        Err(e) if text.starts_with(['{', '[', '"', '\'']) => {
            let mut message = e.message().trim().to_string();
            if message == "duplicate key"
                && let Some(key) = e.span().and_then(|s| doc.get(s))
            {
                message = format!("duplicate key `{}`", key.trim());
            }
            Err(format!("the value is not valid TOML: {message}"))
        }
        Err(_) => Ok(Value::String(text.to_string())),
    }
}

/// One comparison axis: a column of the output tables.
#[derive(Debug, Clone)]
pub struct Axis {
    /// `variant`, or the key path it varies.
    pub path: String,
    /// The column name: `variant` or the last segment of the path.
    pub column: String,
    /// The values it takes, in order.
    pub values: Vec<Value>,
}

/// One compare row: a label per axis and the model it runs.
#[derive(Debug, Clone)]
pub struct Row {
    /// One label per axis, in axis order.
    pub labels: Vec<String>,
    /// The validated model this row runs.
    pub model: Model,
}

/// A loaded scenario: its compare rows, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The scenario file, as given.
    pub file: PathBuf,
    /// Comparison axes (`[compare]`, then extra axes), first axis outermost.
    pub axes: Vec<Axis>,
    /// Every combination of axis values, first axis outermost.
    pub rows: Vec<Row>,
}

impl Scenario {
    /// The file name without extension: the output folder's name.
    pub fn stem(&self) -> String {
        self.file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into())
    }

    /// The axis column names, in axis order.
    pub fn columns(&self) -> Vec<String> {
        self.axes.iter().map(|a| a.column.clone()).collect()
    }

    /// The first row's model: what every row shares apart from the axes.
    pub fn base(&self) -> &Model {
        &self.rows[0].model
    }
}

/// What a scenario is loaded for: a sweep's rows take `[montecarlo] seed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Purpose {
    /// `resim run` (and `check`): `[montecarlo] seed` is not used.
    #[default]
    Run,
    /// `resim sweep`: `[montecarlo] seed` comes before `scenario.seed`.
    Sweep,
}

/// The master seed a compare row runs with, decided here and nowhere else:
/// `--seed`, then (for a sweep) `[montecarlo] seed`, then `scenario.seed`, then 1.
pub(crate) fn seed(raw: &RawScenario, cli: Option<u64>, purpose: Purpose) -> u64 {
    let montecarlo = match purpose {
        Purpose::Sweep => raw.montecarlo.as_ref().and_then(|m| m.seed),
        Purpose::Run => None,
    };
    cli.or(montecarlo).or(raw.scenario.seed).unwrap_or(1)
}

/// Options that change how a file is read.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--set` overrides, applied in order before variants and compare rows.
    pub overrides: Vec<Override>,
    /// `--seed`: beats every seed the file gives (see `scenario::seed`).
    pub seed: Option<u64>,
    /// Which seed of the file the rows take (see `scenario::seed`).
    pub purpose: Purpose,
    /// Extra axes (sweep `--vary`), after the file's `[compare]` axes.
    pub extra_axes: Vec<(String, Vec<Value>)>,
    /// Refuse grids with more rows than this.
    pub max_rows: usize,
}

/// The row limit when `max_rows` is 0.
pub const DEFAULT_MAX_ROWS: usize = 10_000;

/// Reads and expands a scenario file.
pub fn load(file: &Path, opts: &LoadOptions) -> Result<Scenario, ScenarioError> {
    let text = read_input_text(file, "scenario file")?;
    load_str(&text, file, opts)
}

/// Expands scenario `text` (named `file` in messages); see [`load_str`].
fn expand(text: &str, file: &Path, opts: &LoadOptions) -> Result<Scenario, ScenarioError> {
    let mut doc: toml::Table =
        toml::from_str(text).map_err(|e| toml_error(text, &e).in_file(file))?;
    // Check the file as written first, so its own mistakes get exact positions.
    let written = deserialize_str(text, &doc).map_err(|e| e.in_file(file))?;

    // Everything written on top of the file, in order, to blame the right line.
    let mut sources: Vec<Source> = Vec::new();
    for o in &opts.overrides {
        let origin = format!("from --set {}", shorten(&o.text));
        blame::check_target(&doc, &o.path)
            .and_then(|()| paths::set(&mut doc, &o.path, o.value.clone()))
            .map_err(|e| e.context(&origin).in_file(file))?;
        sources.push(Source {
            path: o.path.clone(),
            position: None,
            origin,
        });
    }
    let base = if opts.overrides.is_empty() {
        written
    } else {
        deserialize(&doc).map_err(|e| blame::blame(text, file, e, &sources, ""))?
    };

    let mut axes = compare_axes(&base, &doc, text).map_err(|e| e.in_file(file))?;
    check_variants(&base, &doc, text).map_err(|e| e.in_file(file))?;
    add_vary_axes(&base, &doc, &opts.extra_axes, &mut axes).map_err(|e| e.in_file(file))?;
    // A --set inside a compare axis would be overwritten in every row: say so
    // rather than ignore it.
    for o in &opts.overrides {
        let inside = |axis: &&Axis| {
            let (a, p) = (paths::segments(&axis.path), paths::segments(&o.path));
            axis.path != "variant" && p.len() >= a.len() && p[..a.len()] == a[..]
        };
        if let Some(axis) = axes.iter().find(inside) {
            return Err(ScenarioError::new(
                o.path.as_str(),
                format!(
                    "every compare row sets `{}`, so this override would be ignored: change the values of {} instead",
                    axis.path,
                    compare_path(&axis.path, None)
                ),
            )
            .context(&format!("from --set {}", shorten(&o.text)))
            .at(compare_position(text, &axis.path, None))
            .in_file(file));
        }
    }
    // A base value that every compare row overrides is still the file's value:
    // check it as written (with --set), so a typo there is not hidden by the rows.
    // Its errors name the file's line and no compare row.
    let dir = file.parent().unwrap_or(Path::new(""));
    if !axes.is_empty() {
        validate::validate(&base, dir).map_err(|e| blame::blame(text, file, e, &sources, ""))?;
    }
    name_columns(&mut axes);
    let total = row_count(&axes, opts.max_rows)
        .map_err(|e| e.at(paths::locate(text, "compare")).in_file(file))?;

    let mut row_base = doc.clone();
    row_base.remove("compare");
    row_base.remove("variants");
    let mut rows = Vec::with_capacity(total);
    let expander = Expander {
        text,
        file,
        dir,
        base: &base,
        axes: &axes,
        row_base,
        sources: &sources,
        opts,
    };
    for index in 0..total {
        rows.push(expander.row(index)?);
    }
    let mut models: Vec<Model> = rows.iter().map(|r| r.model.clone()).collect();
    validate::share_series_rows(&mut models)
        .map_err(|e| e.at(paths::locate(text, "output.window_ms")).in_file(file))?;
    for (row, model) in rows.iter_mut().zip(models) {
        row.model.limits = model.limits;
    }
    Ok(Scenario {
        file: file.to_path_buf(),
        axes,
        rows,
    })
}

/// The `--vary` axes, each checked (values given, distinct, a key the file
/// has, not an axis already), after the file's own.
fn add_vary_axes(
    base: &RawScenario,
    doc: &toml::Table,
    extra: &[(String, Vec<Value>)],
    axes: &mut Vec<Axis>,
) -> Result<(), ScenarioError> {
    for (path, values) in extra {
        if values.is_empty() {
            return Err(ScenarioError::new(
                path.as_str(),
                "--vary needs at least one value",
            ));
        }
        blame::check_target(doc, path).map_err(|e| e.context(&format!("in --vary {path}")))?;
        if axes.iter().any(|a| a.path == *path) {
            return Err(ScenarioError::new(
                path.as_str(),
                "is already a comparison axis ([compare] or an earlier --vary): give its values once",
            ));
        }
        check_distinct(values).map_err(|(i, message)| {
            ScenarioError::new(format!("{path}.{i}"), message).context(&format!("in --vary {path}"))
        })?;
        if path == "variant" {
            check_variant_names(base, values)
                .map_err(|(i, message)| ScenarioError::new(format!("{path}.{i}"), message))?;
        }
        axes.push(Axis {
            column: column_name(path),
            path: path.clone(),
            values: values.clone(),
        });
    }
    Ok(())
}

/// The compare rows the axes make (their product), at most `max_rows`
/// (0: [`DEFAULT_MAX_ROWS`]).
fn row_count(axes: &[Axis], max_rows: usize) -> Result<usize, ScenarioError> {
    let total: usize = axes
        .iter()
        .map(|a| a.values.len())
        .try_fold(1usize, |acc, n| acc.checked_mul(n))
        .unwrap_or(usize::MAX);
    let max_rows = if max_rows == 0 {
        DEFAULT_MAX_ROWS
    } else {
        max_rows
    };
    if total > max_rows {
        let sizes = axes
            .iter()
            .map(|a| a.values.len().to_string())
            .collect::<Vec<_>>()
            .join(" x ");
        return Err(ScenarioError::new(
            "compare",
            format!(
                "the grid has {sizes} = {total} rows, more than the limit of {max_rows}: drop an axis or some values"
            ),
        ));
    }
    Ok(total)
}

/// What every compare row is made from: the file, its table without the
/// axes and variants, what `--set` wrote on it.
struct Expander<'a> {
    text: &'a str,
    file: &'a Path,
    dir: &'a Path,
    base: &'a RawScenario,
    axes: &'a [Axis],
    /// The file's table with `--set` applied: a row needs neither the axes
    /// nor the variants themselves (they are applied per row), and copying
    /// them into every row made a 10^4-value axis quadratic.
    row_base: toml::Table,
    sources: &'a [Source],
    opts: &'a LoadOptions,
}

impl Expander<'_> {
    /// Compare row `index`: the file with that row's axis values and
    /// variant applied, validated; an error names the row and the line that
    /// set the value.
    fn row(&self, index: usize) -> Result<Row, ScenarioError> {
        let picks = pick(self.axes, index);
        let mut row_doc = self.row_base.clone();
        let mut row_sources = self.sources.to_vec();
        // Where each row source is written, found only when an error needs it:
        // searching the text for every row made large grids quadratic.
        let mut wanted: Vec<Option<(Vec<String>, bool)>> = vec![None; self.sources.len()];
        let labels: Vec<String> = picks.iter().map(|(v, _)| label(v)).collect();
        let row = if self.axes.is_empty() {
            String::new()
        } else {
            let cells: Vec<String> = self
                .axes
                .iter()
                .zip(&labels)
                .map(|(a, l)| format!("{} = {l}", a.column))
                .collect();
            format!("compare row {}", cells.join(", "))
        };
        let locate = |segs: &[String], exact: bool| {
            let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
            let at = paths::find(self.text, &segs);
            if exact {
                at.value.filter(|_| at.exact)
            } else {
                at.key.or(at.value)
            }
            .map(|o| paths::line_col(self.text, o))
        };
        for (axis, (value, i)) in self.axes.iter().zip(&picks) {
            if axis.path == "variant" {
                let name = value.as_str().unwrap_or_default();
                for (p, v) in self.base.variants.get(name).into_iter().flatten() {
                    let origin = format!("in variant `{name}`, {row}");
                    let segs = vec!["variants".to_string(), name.to_string(), p.clone()];
                    paths::set(&mut row_doc, p, v.clone()).map_err(|e| {
                        e.context(&origin)
                            .at(locate(&segs, false))
                            .in_file(self.file)
                    })?;
                    row_sources.push(Source {
                        path: p.clone(),
                        position: None,
                        origin,
                    });
                    wanted.push(Some((segs, false)));
                }
            } else {
                let segs = vec!["compare".to_string(), axis.path.clone(), i.to_string()];
                paths::set(&mut row_doc, &axis.path, (*value).clone())
                    .map_err(|e| e.context(&row).at(locate(&segs, true)).in_file(self.file))?;
                row_sources.push(Source {
                    path: axis.path.clone(),
                    position: None,
                    origin: row.clone(),
                });
                wanted.push(Some((segs, true)));
            }
        }
        let blame = |e| {
            let mut located = row_sources.clone();
            for (source, want) in located.iter_mut().zip(&wanted) {
                if let Some((segs, exact)) = want {
                    source.position = locate(segs, *exact);
                }
            }
            blame::blame(self.text, self.file, e, &located, &row)
        };
        let raw = deserialize(&row_doc).map_err(blame)?;
        let mut model = validate::validate(&raw, self.dir).map_err(blame)?;
        model.seed = seed(&raw, self.opts.seed, self.opts.purpose);
        Ok(Row { labels, model })
    }
}

/// Command-line text as quoted in messages: long pastes are cut.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// The values of each axis for grid row `index` (first axis outermost), with the
/// index of each value in its axis.
fn pick(axes: &[Axis], mut index: usize) -> Vec<(&Value, usize)> {
    let mut out = vec![None; axes.len()];
    for (i, axis) in axes.iter().enumerate().rev() {
        let n = axis.values.len();
        out[i] = Some((&axis.values[index % n], index % n));
        index /= n;
    }
    out.into_iter().flatten().collect()
}

fn column_name(path: &str) -> String {
    path.rsplit('.').next().unwrap_or(path).to_string()
}

/// The shortest dotted suffix of `path` (at least its last segment) that differs
/// from the same-length suffix of every path in `others` and from every name in
/// `taken`; the whole path when none does.
pub(crate) fn column_for(path: &str, others: &[&str], taken: &[&str]) -> String {
    let segs = paths::segments(path);
    let suffix =
        |segs: &[String], k: usize| -> String { segs[segs.len().saturating_sub(k)..].join(".") };
    for k in 1..=segs.len() {
        let mine = suffix(&segs, k);
        let shared = others
            .iter()
            .any(|o| suffix(&paths::segments(o), k) == mine);
        if !shared && !taken.contains(&mine.as_str()) {
            return mine;
        }
    }
    segs.join(".")
}

/// Section 7's rule for axis columns: the last segment of the key path, unless two
/// axes share it: then the shortest unique dotted suffix (`faults.0.value`,
/// `retry.max_attempts`). `variant` stays `variant`.
fn name_columns(axes: &mut [Axis]) {
    let paths: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
    for (i, axis) in axes.iter_mut().enumerate() {
        if axis.path == "variant" {
            continue;
        }
        let others: Vec<&str> = paths
            .iter()
            .enumerate()
            .filter(|(j, p)| *j != i && p.as_str() != "variant")
            .map(|(_, p)| p.as_str())
            .collect();
        axis.column = column_for(&axis.path, &others, &[]);
    }
}

/// A `[compare]` key as a path: `compare."a.b"` (quoted: the key holds dots).
fn compare_path(key: &str, index: Option<usize>) -> String {
    let key = if key.contains('.') {
        format!("compare.\"{key}\"")
    } else {
        format!("compare.{key}")
    };
    match index {
        Some(i) => format!("{key}.{i}"),
        None => key,
    }
}

/// Where `[compare]`'s `key` (or its value `index`) is written.
fn compare_position(text: &str, key: &str, index: Option<usize>) -> Option<(usize, usize)> {
    let i = index.map(|i| i.to_string());
    let mut segs = vec!["compare", key];
    segs.extend(i.as_deref());
    let at = paths::find(text, &segs);
    at.key.or(at.value).map(|o| paths::line_col(text, o))
}

fn compare_axes(
    raw: &RawScenario,
    doc: &toml::Table,
    text: &str,
) -> Result<Vec<Axis>, ScenarioError> {
    let mut axes = Vec::new();
    for (path, values) in &raw.compare {
        let fail = |index: Option<usize>, message: String| {
            ScenarioError::new(compare_path(path, index), message)
                .at(compare_position(text, path, index))
        };
        let Value::Array(values) = values else {
            return Err(fail(None, "a compare axis is a list of values".into()));
        };
        if values.is_empty() {
            return Err(fail(None, "a compare axis needs at least one value".into()));
        }
        check_distinct(values).map_err(|(i, message)| fail(Some(i), message))?;
        if path == "variant" {
            check_variant_names(raw, values).map_err(|(i, message)| fail(Some(i), message))?;
        } else {
            blame::check_target(doc, path).map_err(|e| {
                let message = format!("{}: {}", e.path, e.message);
                fail(None, message)
            })?;
        }
        axes.push(Axis {
            path: path.clone(),
            column: column_name(path),
            values: values.clone(),
        });
    }
    Ok(axes)
}

/// Every path a variant patches must name entries the file defines.
fn check_variants(raw: &RawScenario, doc: &toml::Table, text: &str) -> Result<(), ScenarioError> {
    validate::distinct_looking(
        raw.variants
            .keys()
            .map(|n| (format!("variants.{n}"), n.as_str())),
    )
    .map_err(|e| {
        let at = paths::find(text, &paths::segments(&e.path));
        e.at(at.key.or(at.value).map(|o| paths::line_col(text, o)))
    })?;
    for (name, patch) in &raw.variants {
        validate::csv_name(&format!("variants.{name}"), name).map_err(|e| {
            let at = paths::find(text, &["variants", name]);
            e.at(at.key.or(at.value).map(|o| paths::line_col(text, o)))
        })?;
        for p in patch.keys() {
            blame::check_target(doc, p).map_err(|e| {
                let at = paths::find(text, &["variants", name, p]);
                let key = if p.contains('.') {
                    format!("variants.{name}.\"{p}\"")
                } else {
                    format!("variants.{name}.{p}")
                };
                ScenarioError::new(key, format!("{}: {}", e.path, e.message))
                    .at(at.key.or(at.value).map(|o| paths::line_col(text, o)))
            })?;
        }
    }
    Ok(())
}

/// The values of an axis are distinct as the tables show them (two rows with the
/// same labels could not be told apart), and their labels hold no control
/// characters (they are CSV cells); else the index of the first that fails.
fn check_distinct(values: &[Value]) -> Result<(), (usize, String)> {
    let mut seen = std::collections::HashMap::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let shown = label(v);
        if let Err(e) = validate::plain_text("", &shown, &[]) {
            return Err((i, format!("the label {}", e.message)));
        }
        // labels equal after NFC normalisation look the same in the tables
        let key: String =
            unicode_normalization::UnicodeNormalization::nfc(shown.as_str()).collect();
        if let Some(first) = seen.insert(key, i) {
            return Err((
                i,
                format!("`{shown}` is already value {first} of this axis: give each value once"),
            ));
        }
    }
    Ok(())
}

/// Every value of a `variant` axis names a variant or `baseline`; else the index of
/// the first that does not, with the message.
fn check_variant_names(raw: &RawScenario, values: &[Value]) -> Result<(), (usize, String)> {
    let known: Vec<&str> = std::iter::once("baseline")
        .chain(raw.variants.keys().map(String::as_str))
        .collect();
    for (i, v) in values.iter().enumerate() {
        let name = v.as_str().unwrap_or_default();
        if !known.contains(&name) {
            return Err((
                i,
                format!(
                    "no variant named `{}`{}",
                    label(v),
                    did_you_mean(name, known.iter().copied())
                ),
            ));
        }
    }
    Ok(())
}

/// How an axis value is shown in tables: strings bare, lists of strings
/// joined by `+`, the empty list as written (`[]`: an empty middleware list
/// means no limiter, an empty key a constant one, so no one word fits).
pub(crate) fn label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Array(a) if a.iter().all(|x| x.is_str()) => a
            .iter()
            .filter_map(|x| x.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        Value::Float(f) => crate::format::format_number(*f),
        other => other.to_string(),
    }
}

fn toml_error(text: &str, e: &toml::de::Error) -> ScenarioError {
    let pos = e.span().map(|s| paths::line_col(text, s.start));
    let mut message = e.message().trim().to_string();
    // "duplicate key" alone does not say which one.
    if message == "duplicate key"
        && let Some(key) = e.span().and_then(|s| text.get(s))
    {
        message = format!("duplicate key `{}`", key.trim());
    }
    ScenarioError::new("", message).at(pos)
}

/// Deserializes the file text itself: errors carry exact positions. `doc` is the
/// same text parsed, to recover paths serde loses in tagged tables.
fn deserialize_str(text: &str, doc: &toml::Table) -> Result<RawScenario, ScenarioError> {
    let de = toml::Deserializer::parse(text).map_err(|e| toml_error(text, &e))?;
    let mut track = serde_path_to_error::Track::new();
    let result = RawScenario::deserialize_tracked(de, &mut track);
    result.map_err(|e| {
        let span = e.span().map(|s| s.start);
        let err = explain(doc, &track.path().to_string(), e.message());
        // Prefer the exact key or value the error is about when it is written.
        let at = paths::find(text, &paths::segments(&err.path));
        let unknown_key = e.message().trim().starts_with("unknown field");
        let offset = match (at.exact, unknown_key) {
            (true, true) => at.key.or(span),
            (true, false) => at.value.or(span),
            (false, _) => span.or(at.value),
        };
        err.at(offset.map(|o| paths::line_col(text, o)))
    })
}

/// Deserializes an (overridden) document: errors carry key paths.
fn deserialize(doc: &toml::Table) -> Result<RawScenario, ScenarioError> {
    let mut track = serde_path_to_error::Track::new();
    RawScenario::deserialize_tracked(Value::Table(doc.clone()), &mut track)
        .map_err(|e| explain(doc, &track.path().to_string(), e.message()))
}

trait DeserializeTracked: Sized {
    fn deserialize_tracked<'de, D: serde::Deserializer<'de>>(
        de: D,
        track: &mut serde_path_to_error::Track,
    ) -> Result<Self, D::Error>;
}

impl DeserializeTracked for RawScenario {
    fn deserialize_tracked<'de, D: serde::Deserializer<'de>>(
        de: D,
        track: &mut serde_path_to_error::Track,
    ) -> Result<Self, D::Error> {
        serde::Deserialize::deserialize(serde_path_to_error::Deserializer::new(de, track))
    }
}

/// Turns a serde message into a scenario error: the unknown key joins the path and
/// the closest valid key is suggested.
fn explain(doc: &toml::Table, path: &str, message: &str) -> ScenarioError {
    let path = if path == "." || path == "?" { "" } else { path };
    let message = message.trim();
    let refined = blame::refine(doc, path, message);
    let path = refined.as_str();
    let ticked: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    // `[workloads]` with keys of one workload: meant `[workload]`.
    if let ["workloads", name] = paths::segments(path)
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()[..]
        && !matches!(paths::get(doc, path), Some(Value::Table(_)))
    {
        return ScenarioError::new(
            path,
            format!(
                "[workloads] holds one table per workload ([workloads.NAME]), and `{name}` is not a table: for one workload write [workload]"
            ),
        );
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let field = rest.split('`').next().unwrap_or_default();
        // serde_path_to_error includes the field in the path, except inside
        // tagged tables.
        let full = if path.is_empty() {
            field.to_string()
        } else if path.rsplit('.').next() == Some(field) {
            path.to_string()
        } else {
            blame::unknown_key_path(doc, path, field)
        };
        let expected: Vec<&str> = ticked.iter().skip(1).copied().collect();
        let hint = did_you_mean(field, expected.iter().copied());
        let listing = if expected.is_empty() {
            "this table takes no keys".to_string()
        } else {
            format!("valid keys here: {}", list(expected.iter().copied()))
        };
        return ScenarioError::new(full, format!("unknown key{hint}; {listing}"));
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or_default();
        return match blame::missing_key_path(doc, path, field) {
            Some(full) => ScenarioError::new(full, "missing: this key is required"),
            None => ScenarioError::new(
                path,
                format!("missing key `{field}` (in this table or a table inside it)"),
            ),
        };
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let word = rest.split('`').next().unwrap_or_default();
        let expected: Vec<&str> = ticked.iter().skip(1).copied().collect();
        let hint = did_you_mean(word, expected.iter().copied());
        return ScenarioError::new(path, format!("{message}{hint}"));
    }
    ScenarioError::new(path, plain_types(message))
}

/// Serde names Rust types ("expected i64"); say what a scenario writer knows.
fn plain_types(message: &str) -> String {
    message
        .replace("expected i64", "expected a whole number")
        .replace("expected u64", "expected a whole number >= 0")
        .replace("expected f64", "expected a number")
}

/// A new scenario file's text from `text` (the scenario it starts from, named
/// `from`), comments and layout kept: `[scenario] name` becomes `name`, and a
/// first line says where it came from. Also the data files it reads (`file` keys,
/// relative to its folder), so that they can be copied beside it.
pub fn starting_point(text: &str, name: &str, from: &str) -> Result<(String, Vec<String>), String> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("{from} is not valid TOML: {e}"))?;
    if let Some(scenario) = doc.get_mut("scenario").and_then(|t| t.as_table_like_mut()) {
        if let Some(old) = scenario.get_mut("name") {
            // the value's own spacing and comment stay
            let decor = old.as_value().map(|v| v.decor().clone());
            *old = toml_edit::value(name);
            if let (Some(d), Some(v)) = (decor, old.as_value_mut()) {
                *v.decor_mut() = d;
            }
        } else {
            scenario.insert("name", toml_edit::value(name));
        }
    }
    /// A `file = "..."` entry, once each.
    fn note(key: &str, v: &toml_edit::Value, files: &mut Vec<String>) {
        if key == "file"
            && let Some(s) = v.as_str()
            && !files.iter().any(|f| f == s)
        {
            files.push(s.to_string());
        }
    }
    fn walk_value(v: &toml_edit::Value, files: &mut Vec<String>) {
        match v {
            toml_edit::Value::InlineTable(t) => {
                for (k, v) in t.iter() {
                    note(k, v, files);
                    walk_value(v, files);
                }
            }
            toml_edit::Value::Array(a) => a.iter().for_each(|v| walk_value(v, files)),
            _ => {}
        }
    }
    fn walk_table(t: &toml_edit::Table, files: &mut Vec<String>) {
        for (k, i) in t.iter() {
            match i {
                toml_edit::Item::Value(v) => {
                    note(k, v, files);
                    walk_value(v, files);
                }
                toml_edit::Item::Table(t) => walk_table(t, files),
                toml_edit::Item::ArrayOfTables(a) => a.iter().for_each(|t| walk_table(t, files)),
                toml_edit::Item::None => {}
            }
        }
    }
    let mut files = Vec::new();
    walk_table(doc.as_table(), &mut files);
    let text = format!(
        "# Started from {from} (resim new): change what you need, then `resim run` it.\n{doc}"
    );
    Ok((text, files))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_values_are_toml_or_bare_strings() {
        let o = Override::parse("a.b=[1, 2]").unwrap();
        assert_eq!(o.path, "a.b");
        assert_eq!(
            o.value,
            Value::Array(vec![Value::Integer(1), Value::Integer(2)])
        );
        assert_eq!(
            Override::parse("x=equal").unwrap().value,
            Value::String("equal".into())
        );
        assert_eq!(
            Override::parse("x=true").unwrap().value,
            Value::Boolean(true)
        );
        assert!(Override::parse("novalue").is_err());
        let e = Override::parse("x={ a = 1, a = 2 }").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x: the value is not valid TOML: duplicate key `a` (from --set x={ a = 1, a = 2 })"
        );
    }

    #[test]
    fn grid_rows_put_the_first_axis_outermost() {
        let axes = vec![
            Axis {
                path: "a".into(),
                column: "a".into(),
                values: vec![Value::Integer(1), Value::Integer(2)],
            },
            Axis {
                path: "b".into(),
                column: "b".into(),
                values: vec![Value::Boolean(false), Value::Boolean(true)],
            },
        ];
        let rows: Vec<String> = (0..4)
            .map(|i| {
                pick(&axes, i)
                    .iter()
                    .map(|(v, _)| label(v))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect();
        assert_eq!(rows, ["1,false", "1,true", "2,false", "2,true"]);
    }

    #[test]
    fn one_rule_decides_the_seed() {
        let seeds = |file: &str, cli: Option<u64>, purpose: Purpose| -> u64 {
            let text = format!(
                "{file}\n[services.s]\nroutes = [\"/x\"]\nhandler = {{ type = \"respond\" }}\n\
                 [workload]\ntype = \"sequence\"\nroute = \"/x\"\nrequests = 1\n"
            );
            let opts = LoadOptions {
                seed: cli,
                purpose,
                ..LoadOptions::default()
            };
            let s = load_str(&text, Path::new("t.toml"), &opts).unwrap();
            s.base().seed
        };
        let both = "[scenario]\nname = \"t\"\nseed = 5\n[montecarlo]\nseed = 42";
        assert_eq!(seeds(both, None, Purpose::Run), 5);
        assert_eq!(seeds(both, None, Purpose::Sweep), 42);
        assert_eq!(seeds(both, Some(7), Purpose::Run), 7);
        assert_eq!(seeds(both, Some(7), Purpose::Sweep), 7);
        let file_only = "[scenario]\nname = \"t\"\nseed = 5";
        assert_eq!(seeds(file_only, None, Purpose::Sweep), 5);
        let none = "[scenario]\nname = \"t\"";
        assert_eq!(seeds(none, None, Purpose::Run), 1);
    }

    #[test]
    fn key_lists_are_labelled_with_plus_and_the_empty_list_as_written() {
        assert_eq!(label(&try_value("[]").unwrap()), "[]");
        assert_eq!(
            label(&try_value(r#"["client", "route"]"#).unwrap()),
            "client+route"
        );
    }

    #[test]
    fn unknown_keys_name_the_path_and_suggest() {
        let e = explain(
            &toml::Table::new(),
            "services.tracking.handler",
            "unknown field `polcy`, expected one of `budget`, `policy`",
        );
        assert_eq!(e.path, "services.tracking.handler.polcy");
        assert!(
            e.message.contains("did you mean `policy`?"),
            "{}",
            e.message
        );
    }

    /// A one-service model: a plan calling a store, with `extra` TOML.
    fn cancelling_model(cancellation: bool, extra: &str, policy: &str) -> crate::model::Model {
        let text = format!(
            r#"
[scenario]
name = "cancels work"
[services.api]
routes = ["/x"]
handler = {{ type = "plan", budget = 100, cancellation = {cancellation}, branches = [{{ name = "b", calls = [{{ to = "store"{policy} }}] }}] }}
[dependencies.store]
latency = {{ constant = 10 }}
[workload]
type = "sequence"
requests = 1
{extra}
"#
        );
        let s = load_str(
            &text,
            std::path::Path::new("test.toml"),
            &LoadOptions::default(),
        )
        .expect("valid scenario");
        s.rows[0].model.clone()
    }

    /// Each root of a cancellation makes the model one that cancels work, and
    /// a model with none of them is not (its completions are posted unkeyed).
    #[test]
    fn cancels_work_names_every_root_of_a_cancellation() {
        assert!(!cancelling_model(false, "", "").cancels_work());
        assert!(cancelling_model(true, "", "").cancels_work());
        let down = "[[faults]]\ntarget = \"store\"\nkind = \"down\"\nat_ms = 5\nfor_ms = 5";
        assert!(cancelling_model(false, down, "").cancels_work());
        let slow = "[[faults]]\ntarget = \"store\"\nkind = \"latency_factor\"\nat_ms = 5\nfor_ms = 5\nvalue = 2.0";
        assert!(!cancelling_model(false, slow, "").cancels_work());
        let hedge = |cancel: bool| {
            format!(
                "[policies.h]\nhedge = {{ delay_ms = 5, max_attempts = 2, cancel_losers = {cancel} }}"
            )
        };
        let uses = r#", call_policy = "h""#;
        assert!(cancelling_model(false, &hedge(true), uses).cancels_work());
        assert!(!cancelling_model(false, &hedge(false), uses).cancels_work());
    }
}
