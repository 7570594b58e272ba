//! Errors. A scenario error names the file, the line and column where known, the
//! key path and what is wrong, like a compiler does:
//! `scenarios/x.toml:14:9: dependencies.tariff.latency.p99_ms: must be >= p50_ms`.

use std::fmt;
use std::path::PathBuf;

/// Something wrong with a scenario or the way it was asked to run (exit code 2).
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The file concerned, when known.
    pub file: Option<PathBuf>,
    /// 1-based line and column.
    pub position: Option<(usize, usize)>,
    /// Dotted key path of the value concerned ("" for the whole file).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// Other key paths whose values the check read (a cross-field check): when
    /// an override wrote one of them, the message says so (see `scenario::blame`).
    pub related: Vec<String>,
}

impl ScenarioError {
    /// An error at key path `path` ("" for the whole file), no file or position yet.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            file: None,
            position: None,
            path: path.into(),
            message: message.into(),
            related: Vec::new(),
        }
    }

    /// Names another key path the check read, besides [`Self::path`].
    pub fn related(mut self, path: impl Into<String>) -> Self {
        self.related.push(path.into());
        self
    }

    /// Names `file`, unless a file is named already.
    pub fn in_file(mut self, file: &std::path::Path) -> Self {
        if self.file.is_none() {
            self.file = Some(file.to_path_buf());
        }
        self
    }

    /// Sets the 1-based line and column, unless a position is set already.
    pub fn at(mut self, position: Option<(usize, usize)>) -> Self {
        if self.position.is_none() {
            self.position = position;
        }
        self
    }

    /// Prefixes the message with where an override came from.
    pub fn context(mut self, context: &str) -> Self {
        if !context.is_empty() {
            self.message = format!("{} ({context})", self.message);
        }
        self
    }
}

impl fmt::Display for ScenarioError {
    /// The file, the key path and the message may quote what a file holds: control
    /// characters and bidirectional controls in them are escaped ([`printable`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}:", printable(&file.display().to_string()))?;
            if let Some((line, col)) = self.position {
                write!(f, "{line}:{col}:")?;
            }
            write!(f, " ")?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", printable(&self.path))?;
        }
        write!(f, "{}", printable(&self.message))
    }
}

/// Characters that must never reach a terminal, a CSV cell or a report raw: C0
/// and C1 control characters (ESC starts a terminal escape sequence, NUL ends a
/// C string), DEL, and the bidirectional controls that make text display in
/// another order than it is stored (U+202E RIGHT-TO-LEFT OVERRIDE and its kin).
pub fn is_hidden_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// The Unicode name of a character [`is_hidden_char`] finds, for messages.
pub fn hidden_char_name(c: char) -> &'static str {
    match c {
        '\0' => "NUL",
        '\t' => "TAB",
        '\n' => "LINE FEED",
        '\r' => "CARRIAGE RETURN",
        '\u{1B}' => "ESCAPE, which starts terminal escape sequences",
        '\u{7F}' => "DELETE",
        '\u{061C}' => "ARABIC LETTER MARK",
        '\u{200E}' => "LEFT-TO-RIGHT MARK",
        '\u{200F}' => "RIGHT-TO-LEFT MARK",
        '\u{202A}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202B}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202C}' => "POP DIRECTIONAL FORMATTING",
        '\u{202D}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202E}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        _ => "a control character",
    }
}

/// `text` with every [`is_hidden_char`] but the line break written as `\u{XXXX}`,
/// so that an error message quoting a file's value cannot move the cursor, clear
/// the screen or reorder the line it is printed on.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && is_hidden_char(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c != '\n' && is_hidden_char(c) {
            out.push_str(&format!("\\u{{{:04X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A number as messages quote it: the shortest text that reads back as the same
/// number, in scientific form when it is huge or tiny (`1e308`, not 309 digits).
pub fn num(x: f64) -> String {
    let a = x.abs();
    if x.is_finite() && x != 0.0 && !(1e-6..1e15).contains(&a) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

impl std::error::Error for ScenarioError {}

/// Every failure resim reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad scenario, argument or path the user gave (exit code 2).
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// A run passed one of its runaway limits (exit code 2: the scenario asks for it).
    #[error("{0}")]
    Limit(String),
    /// Reading or writing files failed (exit code 1 unless the user named the path).
    #[error("{context}: {source}")]
    Io {
        /// What was being read or written (the file named).
        context: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
        /// The user named the path (exit code 2 then).
        user_path: bool,
    },
    /// A `[thresholds]` condition failed (exit code 3); every file was written.
    #[error("{0}")]
    Thresholds(String),
    /// Anything else that fails while writing output (CSV, HTML, JSON, charts).
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// The process exit code: 2 for anything the user can fix in the input, 3 for
    /// a failed threshold, 1 else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Thresholds(_) => 3,
            Error::Scenario(_) | Error::Limit(_) => 2,
            Error::Io { user_path, .. } if *user_path => 2,
            _ => 1,
        }
    }
}

/// A result whose error is [`Error`] by default.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Names longer than this get no "did you mean" (see [`closest`]).
pub const SUGGEST_MAX_CHARS: usize = 256;

/// The closest of `candidates` to `word`, if it is close enough to be a likely typo.
///
/// The edit distance costs length x length, so names longer than
/// [`SUGGEST_MAX_CHARS`] get no suggestion, and candidates whose length alone
/// rules out a score of 0.5 are skipped: a misspelt 30 KB name took seconds.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let n = word.chars().count();
    if n > SUGGEST_MAX_CHARS {
        return None;
    }
    candidates
        .into_iter()
        .filter(|c| {
            let m = c.chars().count();
            // the distance is at least |n - m|, the score 1 - distance / max(n, m)
            m <= SUGGEST_MAX_CHARS && 2 * n.abs_diff(m) <= n.max(m)
        })
        .map(|c| (strsim::normalized_damerau_levenshtein(word, c), c))
        .filter(|(score, _)| *score >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Names in backticks, comma-separated: "`a`, `b`" (how messages list valid choices).
pub fn list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// " (did you mean `x`?)" or "" when nothing is close.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_position_and_path() {
        let e = ScenarioError::new("dependencies.tariff.latency.p99_ms", "must be >= p50_ms")
            .in_file(std::path::Path::new("scenarios/x.toml"))
            .at(Some((14, 9)));
        assert_eq!(
            e.to_string(),
            "scenarios/x.toml:14:9: dependencies.tariff.latency.p99_ms: must be >= p50_ms"
        );
    }

    #[test]
    fn messages_escape_control_and_bidi_characters() {
        let e = ScenarioError::new("services.a\u{202E}b", "name `\u{1b}[2Jx\0`");
        assert_eq!(
            e.to_string(),
            "services.a\\u{202E}b: name `\\u{001B}[2Jx\\u{0000}`"
        );
        assert_eq!(printable("two\nlines"), "two\nlines");
    }

    #[test]
    fn huge_and_tiny_numbers_are_quoted_in_scientific_form() {
        assert_eq!(num(1e308), "1e308");
        assert_eq!(num(-2.5e20), "-2.5e20");
        assert_eq!(num(5e-7), "5e-7");
        assert_eq!(num(12.5), "12.5");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(f64::NAN), "NaN");
    }

    #[test]
    fn suggestions_pick_the_closest_name() {
        assert_eq!(closest("polcy", ["policy", "budget"]), Some("policy"));
        assert_eq!(closest("zzzzzz", ["policy", "budget"]), None);
    }
}
