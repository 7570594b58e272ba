//! The checks a resumed sweep makes of each row an earlier run left in the
//! staging file before it keeps it: a row cut short, a label or replication
//! number that is not the unit's, a metric cell that is no number, or bytes
//! changed since they were written (the state's checksum of them) make the
//! sweep start again, saying which row and why, rather than keep a wrong row
//! in its results.

use super::extract::parse_value;

/// FNV-1a 64 of `bytes`, going on from `h` (start with [`FNV_START`]).
pub fn fnv_update(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// The FNV-1a 64 offset basis.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Where the kept rows start and what each must say.
pub struct Expected<'a> {
    /// The first unit of this sweep (of its shard).
    pub first_unit: u64,
    /// The compare rows' labels, in row order.
    pub labels: &'a [Vec<String>],
    /// Columns of labels before the replication number.
    pub axes: usize,
    /// The metric columns' names.
    pub metrics: &'a [String],
}

impl Expected<'_> {
    /// Why the `i`-th kept row (0-based, at `line` of the file) cannot be kept,
    /// or `None`.
    pub fn problem(&self, i: u64, line: u64, record: &csv::StringRecord) -> Option<String> {
        let at = format!("row {} (line {line})", i + 1);
        let cells = self.axes + 1 + self.metrics.len();
        if record.len() != cells {
            return Some(format!(
                "{at} has {} cells, not {cells} (cut short or changed?)",
                record.len()
            ));
        }
        let rows = self.labels.len().max(1) as u64;
        let unit = self.first_unit.checked_add(i)?;
        let (rep, row) = (unit / rows, (unit % rows) as usize);
        let labels: Vec<&str> = record.iter().take(self.axes).collect();
        let want: Vec<&str> = self
            .labels
            .get(row)
            .map(|l| l.iter().map(String::as_str).collect())
            .unwrap_or_default();
        if labels != want || record[self.axes] != *rep.to_string() {
            return Some(format!(
                "{at} is compare row [{}] replication `{}`, where unit {unit} is [{}] replication {rep}",
                labels.join(", "),
                &record[self.axes],
                want.join(", ")
            ));
        }
        for (name, text) in self.metrics.iter().zip(record.iter().skip(self.axes + 1)) {
            if parse_value(text).is_err() {
                return Some(format!("{at}: `{name}` = `{text}` is not a number"));
            }
        }
        None
    }
}
