//! Reading an input file a user names (a scenario, a sweep manifest): at most
//! [`MAX_INPUT_BYTES`], as UTF-8 (a UTF-16 file or invalid bytes are named as
//! such), with the reason a path cannot be opened said in words.

use super::paths;
use crate::error::ScenarioError;
use std::path::Path;

/// The largest input file resim reads into memory (a scenario or a sweep
/// manifest): 16 MiB, far above any real scenario, so a huge or endless file is
/// refused at once instead of filling the memory.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Why a path cannot be opened, in words: a loop of symbolic links (ELOOP) is
/// said as such, not as the bare OS text or as "no such file".
fn io_reason(e: &std::io::Error) -> String {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const ELOOP: i32 = 40;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const ELOOP: i32 = 62;
    if e.raw_os_error() == Some(ELOOP) {
        "too many levels of symbolic links (the path is a loop of symbolic links)".to_string()
    } else if e.kind() == std::io::ErrorKind::NotFound {
        "no such file or folder".to_string()
    } else {
        e.to_string()
    }
}

/// Why `path` cannot be read, when it does not exist as far as
/// `Path::exists` can tell: a loop of symbolic links, a link to nothing, or no
/// such file or folder.
pub(crate) fn missing_reason(path: &Path) -> String {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::read_link(path) {
            Ok(to) => format!(
                "a symbolic link to {}, which does not exist",
                crate::error::printable(&to.display().to_string())
            ),
            Err(_) => io_reason(&e),
        },
        Err(e) => io_reason(&e),
        Ok(_) => "no such file or folder".to_string(),
    }
}

/// Reads an input file whole (`what` names it in messages: "scenario file"). Only
/// a regular file is read: a FIFO, a device or a socket would block or never
/// end, so it is refused at once; so is a file larger than [`MAX_INPUT_BYTES`].
pub fn read_input(file: &Path, what: &str) -> Result<Vec<u8>, ScenarioError> {
    use std::io::Read;
    let fail = |message: String| ScenarioError::new("", message).in_file(file);
    let meta = std::fs::metadata(file)
        .map_err(|e| fail(format!("cannot read the {what}: {}", io_reason(&e))))?;
    if !meta.is_file() {
        return Err(fail(format!(
            "cannot read the {what}: not a regular file (a folder, a named pipe or a device)"
        )));
    }
    let too_big = || {
        fail(format!(
            "the {what} is larger than {} MiB, the most resim reads into memory",
            MAX_INPUT_BYTES / (1024 * 1024)
        ))
    };
    if meta.len() > MAX_INPUT_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| fail(format!("cannot read the {what}: {e}")))?;
    // The file may have grown between the size check and the read.
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_big());
    }
    Ok(bytes)
}

/// [`read_input`] as UTF-8 text (see [`decode_text`]).
pub(crate) fn read_input_text(file: &Path, what: &str) -> Result<String, ScenarioError> {
    decode_text(read_input(file, what)?, what).map_err(|e| e.in_file(file))
}

/// The text of an input file (`what` names it in messages): UTF-8, with a
/// leading UTF-8 byte order mark dropped. A UTF-16 file (a UTF-16 byte order
/// mark, or ASCII with every other byte 0) is called so, and other bytes that are
/// not UTF-8 are placed by line and column.
pub(crate) fn decode_text(mut bytes: Vec<u8>, what: &str) -> Result<String, ScenarioError> {
    let fail = |why: String| ScenarioError::new("", format!("cannot read the {what}: {why}"));
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
    }
    let utf16 = "save it as UTF-8 (most editors offer the encoding under \"Save as\")";
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(fail(format!(
            "the file is UTF-16 (it starts with a UTF-16 byte order mark): {utf16}"
        )));
    }
    if looks_utf16(&bytes) {
        return Err(fail(format!(
            "the file is UTF-16 without a byte order mark (every other byte is 0): {utf16}"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // the valid part is text: count lines and characters in it
        let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        let (line, col) = paths::line_col(before, before.len());
        let col = before[before.len() + 1 - col..].chars().count() + 1;
        fail(format!(
            "it is not UTF-8 text (byte 0x{:02X} at line {line}, column {col}): save it as UTF-8",
            bytes[at]
        ))
    })
}

/// ASCII text in UTF-16 without a byte order mark: among the first 512 byte
/// pairs, most hold one 0 byte on the same side and a byte that is not 0 on the
/// other. (A scenario file never holds a 0 byte: TOML refuses it.)
fn looks_utf16(bytes: &[u8]) -> bool {
    let pairs: Vec<&[u8]> = bytes.chunks_exact(2).take(512).collect();
    if pairs.len() < 2 {
        return false;
    }
    let side = |first: bool| {
        pairs
            .iter()
            .filter(|p| (p[0] == 0) == first && (p[1] == 0) != first)
            .count()
    };
    let most = side(true).max(side(false));
    most * 10 >= pairs.len() * 9
}
