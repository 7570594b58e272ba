//! A file the user names on the command line (`--spans FILE`, `resim import
//! --out`, `resim new NAME`): what the name may be, and how it is written.
//!
//! - **A name names a file.** A name ending in `/` (or naming `.`, `..` or a
//!   root) names a folder, and a name holding a control character (a line
//!   break, ESC) would reach file listings and terminals: both are refused
//!   before anything is written (else `--out d/` writes the hidden `d/.toml`).
//! - **A regular file is replaced whole**: written to a temporary beside it,
//!   renamed over it, so a failure leaves the old file as it was.
//! - **Anything else is written into, never replaced**: renaming over a
//!   character device (`/dev/null`, which root may replace for the whole
//!   machine) or a named pipe (whose reader would wait forever on the node
//!   removed) is wrong, so such a file is opened and written as a shell's
//!   `>` does.
//! - **A link is followed**: a link to a regular file replaces that file (the
//!   link stays); a link to a device or a pipe (`/dev/stdout`,
//!   `/proc/self/fd/N`) is written into; a broken link, or one to a folder, is
//!   refused.

use crate::error::{Error, ScenarioError};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

fn usage(message: String) -> Error {
    Error::from(ScenarioError::new("", message))
}

/// A path as a message quotes it: control characters written as `\u{XXXX}`,
/// the line break too (a name holding one would split the message).
pub fn shown(path: &Path) -> String {
    let text = path.to_string_lossy();
    crate::error::printable(&text).replace('\n', "\\u{000A}")
}

/// Refuses a name given with `flag` that does not name a file: one ending in
/// `/` or naming `.`, `..` or a root, and one holding a control character or
/// a bidirectional control. Checked before anything is written.
pub fn check_file_name(flag: &str, path: &Path) -> Result<(), Error> {
    let text = path.to_string_lossy();
    if let Some(c) = text.chars().find(|c| crate::error::is_hidden_char(*c)) {
        return Err(usage(format!(
            "{flag} {}: the name holds U+{:04X} ({}); name the file without control characters",
            shown(path),
            u32::from(c),
            crate::error::hidden_char_name(c)
        )));
    }
    let folder = text.is_empty()
        || text.ends_with('/')
        || text.ends_with(std::path::MAIN_SEPARATOR)
        // `x/.`: the components leave the trailing `.` out
        || text.ends_with("/.")
        || !matches!(path.components().next_back(), Some(Component::Normal(_)));
    if folder {
        return Err(usage(format!(
            "{flag} {}: names a folder, not a file; name the file to write (as {})",
            shown(path),
            shown(&path.join("NAME"))
        )));
    }
    Ok(())
}

/// Refuses a folder given with `flag` (`--out DIR`) whose name holds a
/// control character, or that exists and is not a folder (a file, a device):
/// checked before the run, which would else be lost to a folder it cannot
/// create.
pub fn check_folder_name(flag: &str, path: &Path) -> Result<(), Error> {
    let text = path.to_string_lossy();
    if let Some(c) = text.chars().find(|c| crate::error::is_hidden_char(*c)) {
        return Err(usage(format!(
            "{flag} {}: the name holds U+{:04X} ({}); name the folder without control characters",
            shown(path),
            u32::from(c),
            crate::error::hidden_char_name(c)
        )));
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_dir()) {
        return Err(usage(format!(
            "{flag} {}: exists and is not a folder; name a folder (it is created when missing)",
            shown(path)
        )));
    }
    Ok(())
}

/// How a named file is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A regular file (or none yet) at this path: replaced whole.
    Whole(PathBuf),
    /// A device, a pipe or a socket: written into, never replaced.
    Into(PathBuf),
}

impl Target {
    /// The path written.
    pub fn path(&self) -> &Path {
        match self {
            Target::Whole(p) | Target::Into(p) => p,
        }
    }
}

/// What `path` (given with `flag`) is, and so how it is written; a folder, a
/// link to one and a broken link are refused.
pub fn target(flag: &str, path: &Path) -> Result<Target, Error> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Target::Whole(path.to_path_buf()));
        }
        Err(e) => {
            return Err(Error::Io {
                context: format!("{flag} {}", shown(path)),
                source: e,
                user_path: true,
            });
        }
    };
    if meta.is_dir() {
        return Err(usage(format!(
            "{flag} {}: is a folder; name the file to write",
            shown(path)
        )));
    }
    if meta.is_file() {
        return Ok(Target::Whole(path.to_path_buf()));
    }
    if !meta.file_type().is_symlink() {
        return Ok(Target::Into(path.to_path_buf()));
    }
    let to = std::fs::read_link(path).map_or_else(|_| "?".into(), |t| shown(&t));
    match std::fs::metadata(path) {
        Err(_) => Err(usage(format!(
            "{flag} {}: is a broken link (to {to}); name a file, or make the link's target",
            shown(path)
        ))),
        Ok(m) if m.is_dir() => Err(usage(format!(
            "{flag} {}: is a link to the folder {to}; name the file to write",
            shown(path)
        ))),
        Ok(m) if m.is_file() => match std::fs::canonicalize(path) {
            // `/dev/stdout` (or `/dev/fd/N`, `/proc/self/fd/N`) redirected to a
            // file: the file the shell holds open is written into, at its end
            // (`>>`); replacing it would leave the shell's copy as it was
            Ok(real) if !through_open_file(path) => Ok(Target::Whole(real)),
            _ => Ok(Target::Into(path.to_path_buf())),
        },
        Ok(_) => Ok(Target::Into(path.to_path_buf())),
    }
}

/// A link that leads through a process's open files (`/dev/stdout` ->
/// `/proc/self/fd/1`), not to a file by its name.
fn through_open_file(path: &Path) -> bool {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        if at.starts_with("/proc") || at.starts_with("/dev/fd") {
            return true;
        }
        match std::fs::read_link(&at) {
            Ok(to) => at = at.parent().unwrap_or(Path::new("/")).join(to),
            Err(_) => return false,
        }
    }
    false
}

/// Writes `bytes` to `target`: a regular file whole or not at all (a
/// temporary beside it, renamed over it), anything else written into.
pub fn write(target: &Target, bytes: &[u8]) -> Result<(), Error> {
    match target {
        Target::Whole(path) => write_whole(path, bytes),
        // appended: a device or a pipe has no end to seek, and a file reached
        // through a process's open files (`>> log`) keeps what it holds
        Target::Into(path) => std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()))
            .map_err(|e| Error::Io {
                context: format!("cannot write {}", shown(path)),
                source: e,
                user_path: true,
            }),
    }
}

/// Writes `bytes` to the regular file `path` whole or not at all (a
/// temporary beside it, renamed over it).
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let io = |e: std::io::Error| {
        // a full disk: no half-written temporary left behind
        let _ = std::fs::remove_file(&tmp);
        Error::Io {
            context: format!("cannot write {}", shown(path)),
            source: e,
            user_path: true,
        }
    };
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_name_no_file_are_refused() {
        for bad in [
            "d/",
            "a/b/",
            "a/.",
            ".",
            "..",
            "a/..",
            "/",
            "",
            "x\ny",
            "z\u{1}",
            "r\u{202E}",
        ] {
            assert!(
                check_file_name("--out", Path::new(bad)).is_err(),
                "{bad:?} accepted"
            );
        }
        for good in ["d", "a/b.toml", "./x", "../x.json", "dir/.hidden"] {
            check_file_name("--out", Path::new(good)).unwrap();
        }
    }

    #[test]
    fn a_name_with_a_line_break_is_quoted_on_one_line() {
        let e = check_file_name("--out", Path::new("n\nl")).unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
        assert!(e.to_string().contains("n\\u{000A}l"), "{e}");
    }
}
