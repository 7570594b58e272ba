//! Reading one trace file: its format told by its content, its spans streamed
//! into the store. The long arrays (OTLP's resources and spans, Jaeger's
//! traces, Zipkin's spans) are read element by element, serde's "stream an
//! array" recipe ([`super::stream::List`]); every element (a span, a Jaeger
//! trace) is derived whole and kept as a compact record (the streaming pieces
//! are [`super::stream`]'s). The shapes are those Jaeger's UI opens
//! (jaeger-ui `FileLoader.tsx`, `loadTracesFromFile`, and
//! `utils/readJsonFile.ts`): `{"data": [traces]}`, `{"data": {trace}}`, a
//! bare trace object, a list of traces, one document a line, and a list of
//! OTLP documents read as one. A file that ends in the middle (a collector
//! killed while writing) keeps the elements read whole before the cut, and
//! the cut is reported; any other error stops the import naming the file, the
//! line and column, and the JSON pointer of the value at fault.

use super::spans::Kept;
use super::spans::SpanStore;
use super::stream::{Ctx, Whole, refuse};
use super::{Format, jaeger, otlp, zipkin};
use crate::error::{Error, ScenarioError};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::io::BufRead;
use std::marker::PhantomData;
use std::path::Path;

/// What one file gave.
#[derive(Debug, Clone)]
pub struct FileRead {
    /// Its format, from its content.
    pub format: Format,
    /// Its size in bytes.
    pub bytes: u64,
    /// Spans kept from it.
    pub spans: u64,
    /// Where it was cut off (`line:column, in /pointer`), if it was.
    pub truncated: Option<String>,
}

/// Reads `path` into `store`. `forced`: the format `--from` names (the
/// content must agree).
pub fn read_file(
    path: &Path,
    forced: Option<Format>,
    store: &mut SpanStore,
) -> Result<FileRead, Error> {
    let bad = |message: String| Error::from(ScenarioError::new("", message).in_file(path));
    let io = |e: std::io::Error| Error::Io {
        context: format!("cannot read {}", path.display()),
        source: e,
        user_path: true,
    };
    let meta = std::fs::metadata(path).map_err(|_| {
        bad(format!(
            "cannot read it: {}",
            crate::scenario::missing_reason(path)
        ))
    })?;
    if meta.is_dir() {
        return Err(bad("is a folder, not a trace file".into()));
    }
    let mut reader =
        std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path).map_err(io)?);
    let bom = check_head(reader.fill_buf().map_err(io)?).map_err(bad)?;
    reader.consume(bom);
    let before = store.spans.len();
    let mut ctx = Ctx {
        store,
        path: Vec::new(),
        inner: String::new(),
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut found = None;
    let mut truncated = None;
    loop {
        let top = Top {
            ctx: &mut ctx,
            forced,
            found: &mut found,
        };
        if let Err(e) = top.deserialize(&mut de) {
            use serde_json::error::Category;
            let at = format!("{}:{}", e.line(), e.column());
            match e.classify() {
                Category::Eof if found.is_some() => {
                    truncated = Some(format!("{at}, in {}", ctx.pointer()));
                    break;
                }
                Category::Io => return Err(bad(format!("cannot read it: {e}"))),
                Category::Eof => {
                    return Err(bad(format!(
                        "{at}: the file ends before any trace data: not a trace file"
                    )));
                }
                _ => {}
            }
            let message = e.to_string();
            let message = message
                .rfind(" at line ")
                .map_or(&*message, |i| &message[..i]);
            let pointer = if ctx.path.is_empty() && ctx.inner.is_empty() {
                String::new()
            } else {
                ctx.pointer()
            };
            return Err(ScenarioError::new(pointer, message)
                .in_file(path)
                .at(Some((e.line(), e.column())))
                .into());
        }
        // one document, or one a line (the collector's file exporter)
        if de.end().is_ok() {
            break;
        }
    }
    Ok(FileRead {
        format: found.unwrap_or(forced.unwrap_or(Format::Otlp)),
        bytes: meta.len(),
        spans: (ctx.store.spans.len() - before) as u64,
        truncated,
    })
}

/// The file's first bytes: what they say it is not (Ok: the bytes of a byte
/// order mark to skip).
pub fn check_head(head: &[u8]) -> Result<usize, String> {
    if head.is_empty() {
        return Err("the file is empty".into());
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Err("the file is compressed (gzip): decompress it first (gunzip)".into());
    }
    if head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]) {
        return Err("the file is UTF-16: save it as UTF-8".into());
    }
    if head.len() >= 2 && (head[0] == 0 || head[1] == 0) {
        return Err("the file is UTF-16 (or binary): save it as UTF-8".into());
    }
    Ok(if head.starts_with(&[0xef, 0xbb, 0xbf]) {
        3
    } else {
        0
    })
}

/// The top of a document: an object (OTLP's `resourceSpans` or Tempo's
/// `batches`; Jaeger's `data`, or one Jaeger trace) or a list (Zipkin's spans,
/// Jaeger traces, OTLP documents).
struct Top<'c, 's, 'f> {
    ctx: &'c mut Ctx<'s>,
    forced: Option<Format>,
    found: &'f mut Option<Format>,
}

/// The content says `format`: the same as `--from` and as the documents
/// before it in the file.
fn agree<E: de::Error>(
    found: &mut Option<Format>,
    forced: Option<Format>,
    format: Format,
    what: &str,
) -> Result<(), E> {
    if let Some(f) = forced
        && f != format
    {
        return Err(E::custom(format!(
            "--from {} was given, but the file holds {} ({what})",
            f.flag(),
            format.title()
        )));
    }
    match *found {
        Some(f) if f != format => Err(E::custom(format!(
            "the file holds {} before, and {} ({what}) here: one format a file",
            f.title(),
            format.title()
        ))),
        _ => {
            *found = Some(format);
            Ok(())
        }
    }
}

impl<'de> DeserializeSeed<'de> for Top<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(
            "a trace file: OTLP JSON ({\"resourceSpans\": [...]}), Jaeger JSON ({\"data\": [...]}) or Zipkin v2 JSON (a list of spans)",
        )
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (ctx, found) = (self.ctx, self.found);
        let mut trace = jaeger::Trace::default();
        let mut single = false;
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(super::json_keys::repeated(&key)));
            }
            let format = match key.as_str() {
                "resourceSpans" | "batches" => Format::Otlp,
                "data" | "traceID" | "spans" | "processes" => Format::Jaeger,
                "traceId" | "id" => {
                    return Err(de::Error::custom(
                        "a single span: Zipkin v2 JSON is a list of spans ([{...}, ...])",
                    ));
                }
                _ => {
                    ctx.at(&key, |_| map.next_value::<IgnoredAny>())?;
                    continue;
                }
            };
            let what = if key == "data" || format == Format::Otlp {
                format!("`{key}`")
            } else {
                "a trace object".into()
            };
            agree(found, self.forced, format, &what)?;
            ctx.at(&key, |c| match key.as_str() {
                "data" => map.next_value_seed(jaeger::Data(c)),
                "traceID" => map
                    .next_value_seed(Whole(&mut c.inner, PhantomData))
                    .map(|v| trace.id = v),
                "spans" => map
                    .next_value_seed(Whole(&mut c.inner, PhantomData))
                    .map(|v| trace.spans = v),
                "processes" => map
                    .next_value_seed(Whole(&mut c.inner, PhantomData))
                    .map(|v| trace.processes = v),
                _ => map.next_value_seed(otlp::ResourceList(c, 0)),
            })?;
            single |= !matches!(key.as_str(), "data" | "resourceSpans" | "batches");
        }
        if single {
            trace.keep(ctx).map_err(|e| refuse(ctx, e))?;
        } else if found.is_none() {
            return Err(de::Error::custom(
                "not a trace file: a JSON object without `resourceSpans` (OTLP JSON) or `data` (Jaeger JSON)",
            ));
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // what the list holds, told by its first element's keys
        let ctx = self.ctx;
        ctx.path.push("0".into());
        // strict: a repeated key would be lost in a `Value` silently
        let first: Option<serde_json::Value> = seq
            .next_element_seed(Whole(
                &mut ctx.inner,
                PhantomData::<super::json_keys::Strict>,
            ))?
            .map(|s| s.0);
        ctx.path.pop();
        let format = match &first {
            Some(serde_json::Value::Object(o)) if o.contains_key("resourceSpans") => Format::Otlp,
            Some(serde_json::Value::Object(o))
                if ["traceID", "spans", "processes"]
                    .iter()
                    .any(|k| o.contains_key(*k)) =>
            {
                Format::Jaeger
            }
            _ => Format::Zipkin,
        };
        let what = match format {
            Format::Otlp => "a list of OTLP documents",
            Format::Jaeger => "a list of traces",
            _ => "a list of spans",
        };
        agree(self.found, self.forced, format, what)?;
        let Some(first) = first else { return Ok(()) };
        match format {
            Format::Otlp => rest::<A, otlp::Document>(seq, ctx, first, otlp::Document::keep),
            Format::Jaeger => rest::<A, jaeger::Trace>(seq, ctx, first, jaeger::Trace::keep),
            _ => rest::<A, zipkin::Span>(seq, ctx, first, zipkin::Span::keep),
        }
    }
}

/// A bare list's elements as `T`: the first (read as a value to tell the
/// format), then the rest streamed.
fn rest<'de, A: SeqAccess<'de>, T: Deserialize<'de>>(
    mut seq: A,
    ctx: &mut Ctx<'_>,
    first: serde_json::Value,
    keep: fn(T, &mut Ctx<'_>) -> Kept,
) -> Result<(), A::Error> {
    ctx.path.push("0".into());
    let item = Whole(&mut ctx.inner, PhantomData::<T>)
        .deserialize(first)
        .map_err(de::Error::custom)?;
    keep(item, ctx).map_err(|e| refuse(ctx, e))?;
    ctx.path.pop();
    for i in 1.. {
        ctx.path.push(i.to_string());
        let Some(item) = seq.next_element_seed(Whole(&mut ctx.inner, PhantomData::<T>))? else {
            ctx.path.pop();
            return Ok(());
        };
        keep(item, ctx).map_err(|e| refuse(ctx, e))?;
        ctx.path.pop();
    }
    Ok(())
}
