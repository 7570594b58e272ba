//! Reading one trace file: its format told by its content, its spans streamed
//! into the store. A file that ends in the middle (a collector killed while
//! writing) keeps the spans read before the cut, and the cut is reported; any
//! other error stops the import naming the file, the line and column, and the
//! JSON pointer of the value at fault.

use super::json::{Ctx, check_head, next_key, skip_value};
use super::spans::SpanStore;
use super::{Format, jaeger, otlp, zipkin};
use crate::error::{Error, ScenarioError};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// What one file gave.
#[derive(Debug, Clone)]
pub struct FileRead {
    /// The file.
    pub path: PathBuf,
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
    let meta = std::fs::metadata(path).map_err(|_| {
        bad(format!(
            "cannot read it: {}",
            crate::scenario::missing_reason(path)
        ))
    })?;
    if meta.is_dir() {
        return Err(bad("is a folder, not a trace file".into()));
    }
    let file = std::fs::File::open(path).map_err(|e| Error::Io {
        context: format!("cannot read {}", path.display()),
        source: e,
        user_path: true,
    })?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let head = reader.fill_buf().map_err(|e| Error::Io {
        context: format!("cannot read {}", path.display()),
        source: e,
        user_path: true,
    })?;
    let bom = check_head(head).map_err(bad)?;
    reader.consume(bom);

    let mut ctx = Ctx::new(store);
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut format = None;
    let mut truncated = None;
    loop {
        let top = Top {
            ctx: &mut ctx,
            forced,
            found: &mut format,
        };
        if let Err(e) = top.deserialize(&mut de) {
            let at = format!("{}:{}", e.line(), e.column());
            if e.classify() == serde_json::error::Category::Eof && format.is_some() {
                truncated = Some(format!("{at}, in {}", ctx.pointer()));
                break;
            }
            if e.classify() == serde_json::error::Category::Io {
                return Err(bad(format!("cannot read it: {e}")));
            }
            let message = strip_position(&e.to_string());
            let pointer = if ctx.path.is_empty() {
                String::new()
            } else {
                ctx.pointer()
            };
            let eof = e.classify() == serde_json::error::Category::Eof;
            let message = if eof {
                "the file ends before any trace data: not a trace file".to_string()
            } else {
                message
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
        path: path.to_path_buf(),
        format: format.unwrap_or(forced.unwrap_or(Format::Otlp)),
        bytes: meta.len(),
        spans: ctx.kept,
        truncated,
    })
}

/// serde_json's message without its " at line L column C" (the position is
/// given in front, as every resim error gives it).
fn strip_position(m: &str) -> String {
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m.to_string(),
    }
}

/// The top of a document: an object (OTLP's `resourceSpans` or Tempo's
/// `batches`; Jaeger's `data`) or a list (Zipkin's spans).
struct Top<'c, 's, 'f> {
    ctx: &'c mut Ctx<'s>,
    forced: Option<Format>,
    found: &'f mut Option<Format>,
}

impl Top<'_, '_, '_> {
    /// The content says `format`: the same as `--from` and as the documents
    /// before it in the file.
    fn found<E: de::Error>(&mut self, format: Format, what: &str) -> Result<(), E> {
        if let Some(f) = self.forced
            && f != format
        {
            return Err(E::custom(format!(
                "--from {} was given, but the file holds {} ({what})",
                f.flag(),
                format.title()
            )));
        }
        match *self.found {
            Some(f) if f != format => Err(E::custom(format!(
                "the file holds {} before, and {} ({what}) here: one format a file",
                f.title(),
                format.title()
            ))),
            _ => {
                *self.found = Some(format);
                Ok(())
            }
        }
    }
}

seed_via_visitor!(Top<'_, '_, '_>, deserialize_any);

impl<'de> Visitor<'de> for Top<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(
            "a trace file: OTLP JSON ({\"resourceSpans\": [...]}), Jaeger JSON ({\"data\": [...]}) or Zipkin v2 JSON (a list of spans)",
        )
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        const KEYS: &[&str] = &["resourceSpans", "batches", "data", "traceId", "traceID"];
        let mut any = false;
        while let Some(k) = next_key(&mut map, self.ctx, KEYS)? {
            match k {
                Some(i @ (0 | 1)) => {
                    self.found(Format::Otlp, &format!("`{}`", KEYS[i]))?;
                    any = true;
                    let ctx = &mut *self.ctx;
                    super::json::at(ctx, KEYS[i], |c| {
                        map.next_value_seed(otlp::ResourceSpansList(c))
                    })?;
                }
                Some(2) => {
                    self.found(Format::Jaeger, "`data`")?;
                    any = true;
                    let ctx = &mut *self.ctx;
                    super::json::at(ctx, KEYS[2], |c| map.next_value_seed(jaeger::TraceList(c)))?;
                }
                Some(3) => {
                    return Err(de::Error::custom(
                        "a single span: Zipkin v2 JSON is a list of spans ([{...}, ...])",
                    ));
                }
                Some(_) => {
                    return Err(de::Error::custom(
                        "a single Jaeger trace: Jaeger JSON is {\"data\": [traces]}",
                    ));
                }
                None => skip_value(&mut map, self.ctx)?,
            }
        }
        if !any {
            return Err(de::Error::custom(
                "not a trace file: a JSON object without `resourceSpans` (OTLP JSON) or `data` (Jaeger JSON)",
            ));
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, seq: A) -> Result<(), A::Error> {
        self.found(Format::Zipkin, "a list of spans")?;
        zipkin::spans(seq, self.ctx)
    }
}
