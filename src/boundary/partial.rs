//! `boundary.partial.csv`: every replication value a boundary search has
//! evaluated, written (and flushed) as each point's batch of replications
//! finishes, so a search that is interrupted (Ctrl-C, a kill, an error) keeps
//! what it evaluated. The same command run again reads the values back instead
//! of running those replications, and gives the same points and bytes as a
//! search that was never interrupted (a replication's value depends only on
//! the file, the settings, the seed and the replication). A complete search
//! removes the file with the rest of its folder's previous set.
//!
//! ```text
//! # resim boundary <fingerprint>     the file and the settings the values belong to
//! search,grid,x,replication,value    search: 1, or 2 at twice the run's length
//! 1,,12.5,0,0.25                     x and value exact (shortest round trip);
//! 1,,12.5,1,                         empty value: the metric had none
//! ```

use crate::error::Error;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's name in the output folder.
pub const FILE: &str = "boundary.partial.csv";

const HEADER: &str = "search,grid,x,replication,value";

/// FNV-1a 64 of the parts, each ended by a zero byte.
pub fn fingerprint<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for part in parts {
        for b in part.iter().chain(&[0u8]) {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    format!("{h:016x}")
}

/// Which replication of which point: (search, grid value's bits, x's bits, replication).
type Key = (u8, Option<u64>, u64, u64);

/// The values kept from an earlier run, and the file new ones go to.
pub struct Partial {
    path: PathBuf,
    file: std::fs::File,
    kept: HashMap<Key, Option<f64>>,
    /// How many of `kept` were read from an earlier run.
    pub resumed: u64,
    /// Why an earlier run's file was not used, when there was one.
    pub note: Option<String>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        context: format!("cannot write {}", path.display()),
        source,
        user_path: true,
    }
}

/// The values an earlier run's file holds, if it belongs to `fingerprint`:
/// `Err` says why not (a row that does not read names its line).
fn read(text: &str, fingerprint: &str) -> Result<HashMap<Key, Option<f64>>, String> {
    // a line cut short (a kill during a write) is left out: its replications
    // run again
    let text = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut lines = text.lines();
    if lines.next() != Some(&format!("# resim boundary {fingerprint}")) {
        return Err("it belongs to another file, settings or resim".into());
    }
    if lines.next() != Some(HEADER) {
        return Err("line 2 is not its header".into());
    }
    let mut kept = HashMap::new();
    for (i, line) in lines.enumerate() {
        let bad = || format!("line {} (`{line}`) does not read", i + 3);
        let cells: Vec<&str> = line.split(',').collect();
        let [search, grid, x, rep, value] = cells[..] else {
            return Err(bad());
        };
        let number = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite());
        let search: u8 = search
            .parse()
            .ok()
            .filter(|s| *s == 1 || *s == 2)
            .ok_or_else(bad)?;
        let grid = match grid {
            "" => None,
            g => Some(number(g).ok_or_else(bad)?.to_bits()),
        };
        let x = number(x).ok_or_else(bad)?.to_bits();
        let rep: u64 = rep.parse().map_err(|_| bad())?;
        let value = match value {
            "" => None,
            v => Some(number(v).ok_or_else(bad)?),
        };
        kept.insert((search, grid, x, rep), value);
    }
    Ok(kept)
}

impl Partial {
    /// Opens the file in `dir`: the values of an earlier run of the same search
    /// (`fingerprint`) are kept and new ones added after them; anything else
    /// starts it afresh, with a note saying why.
    pub fn open(dir: &Path, fingerprint: &str) -> Result<Partial, Error> {
        let path = dir.join(FILE);
        let (kept, note) = match std::fs::read_to_string(&path) {
            Err(_) => (HashMap::new(), None),
            Ok(text) => match read(&text, fingerprint) {
                Ok(kept) => (kept, None),
                Err(why) => (
                    HashMap::new(),
                    Some(format!(
                        "the values an earlier search left in {} were not reused: {why}",
                        path.display()
                    )),
                ),
            },
        };
        let mut file = std::fs::File::create(&path).map_err(io(&path))?;
        let mut text = format!("# resim boundary {fingerprint}\n{HEADER}\n");
        let mut rows: Vec<(&Key, &Option<f64>)> = kept.iter().collect();
        rows.sort_by(|a, b| a.0.cmp(b.0));
        for (k, v) in rows {
            text.push_str(&row(k, *v));
        }
        file.write_all(text.as_bytes()).map_err(io(&path))?;
        Ok(Partial {
            path,
            file,
            resumed: kept.len() as u64,
            kept,
            note,
        })
    }

    /// The values of replications `from..to` at `x` of search `search` (on grid
    /// value `grid`), when an earlier run evaluated all of them.
    pub fn get(
        &self,
        search: u8,
        grid: Option<f64>,
        x: f64,
        from: u64,
        to: u64,
    ) -> Option<Vec<Option<f64>>> {
        (from..to)
            .map(|r| {
                self.kept
                    .get(&(search, grid.map(f64::to_bits), x.to_bits(), r))
                    .copied()
            })
            .collect()
    }

    /// Adds the values of replications `from..` at `x`, on disk at once.
    pub fn add(
        &mut self,
        search: u8,
        grid: Option<f64>,
        x: f64,
        from: u64,
        values: &[Option<f64>],
    ) -> Result<(), Error> {
        let mut text = String::new();
        for (r, v) in (from..).zip(values) {
            let key = (search, grid.map(f64::to_bits), x.to_bits(), r);
            text.push_str(&row(&key, *v));
            self.kept.insert(key, *v);
        }
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(io(&self.path))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn row(key: &Key, value: Option<f64>) -> String {
    let (search, grid, x, rep) = *key;
    let grid = grid.map_or(String::new(), |g| format!("{:?}", f64::from_bits(g)));
    let value = value.map_or(String::new(), |v| format!("{v:?}"));
    format!("{search},{grid},{:?},{rep},{value}\n", f64::from_bits(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_exactly_and_a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = Partial::open(dir.path(), "f").unwrap();
        let values = [Some(0.1 + 0.2), None, Some(-1e300)];
        p.add(1, Some(2.5), 1.0 / 3.0, 0, &values).unwrap();
        drop(p);
        let p = Partial::open(dir.path(), "f").unwrap();
        assert_eq!(p.resumed, 3);
        assert_eq!(p.get(1, Some(2.5), 1.0 / 3.0, 0, 3), Some(values.to_vec()));
        assert_eq!(p.get(1, Some(2.5), 1.0 / 3.0, 0, 4), None);
        assert_eq!(p.get(2, Some(2.5), 1.0 / 3.0, 0, 1), None);
        drop(p);
        let other = Partial::open(dir.path(), "g").unwrap();
        assert_eq!(other.resumed, 0);
        assert!(other.note.unwrap().contains("another file"));
        let path = dir.path().join(FILE);
        std::fs::write(
            &path,
            format!("# resim boundary g\n{HEADER}\n1,,1.0,0,0.5\n1,,x,1,\n"),
        )
        .unwrap();
        let p = Partial::open(dir.path(), "g").unwrap();
        assert_eq!(p.resumed, 0);
        assert!(p.note.unwrap().contains("line 4 (`1,,x,1,`)"));
        // a last line cut short is left out, the others kept
        std::fs::write(
            &path,
            format!("# resim boundary g\n{HEADER}\n1,,1.0,0,0.5\n1,,1.0,1,0.2"),
        )
        .unwrap();
        let p = Partial::open(dir.path(), "g").unwrap();
        assert_eq!(p.resumed, 1);
        assert_eq!(p.get(1, None, 1.0, 0, 1), Some(vec![Some(0.5)]));
    }
}
