//! Percentiles of every replication's requests pooled (`pooled.csv`), and the
//! histograms they come from (`histograms.csv`), which shards carry to a merge.
//!
//! The mean of per-replication p99s is not a percentile of anything: with p99s
//! of 10 ms and 1000 ms it says 505 ms, a time no request took. `pooled.csv`
//! gives, per compare row, the percentiles of all the answered requests of all
//! replications together (`p50_ms`..`p999_ms`), and the time within which that
//! share of all requests sent got an answer, a request never answered counting
//! as beyond every time (`p50_all_ms`..`p999_all_ms`: empty when more than that
//! share got no answer, i.e. answered < ceil(q x requests)). Nearest rank: the
//! value of rank ceil(q x n) (1-based), q x n computed exactly.
//!
//! Each replication's answered times go into the log-linear buckets of
//! [`crate::metrics`] (1024 per power of two of the time in ns), each bucket
//! keeping its count and its largest value. A percentile is the largest value of
//! its bucket: never below the true value and at most 1/1024 (0.1 %) above it,
//! and exact when the bucket holds one distinct value (a constant latency).
//! Counts add and largest values take the maximum, so replications combine in
//! any order, on any thread or shard, into the same bytes; memory is one map per
//! compare row of the buckets in use (at most 65 x 1024), whatever the number of
//! replications.

use crate::error::{Error, ScenarioError};
use crate::metrics::{bucket_low, bucket_of};
use crate::report::{Cell, Table};
use crate::sim::FastMap;
use std::path::Path;

/// The file that carries the histograms (every sweep folder, shards included).
pub const HISTOGRAMS: &str = "histograms.csv";

/// The manifest's `histograms`: the bucket scheme of `histograms.csv`.
pub const SCHEME: &str = "log-linear, 1024 buckets per power of two, ns";

/// The pooled percentiles: (column suffix, q as a fraction num / den).
const QUANTILES: [(&str, u64, u64); 4] = [
    ("p50", 1, 2),
    ("p90", 9, 10),
    ("p99", 99, 100),
    ("p999", 999, 1000),
];

/// What one replication adds: its requests sent and its answered requests'
/// end-to-end times, by bucket.
#[derive(Debug, Clone, Default)]
pub struct UnitCounts {
    requests: u64,
    /// (bucket, count, largest value in ns), in any order.
    buckets: Vec<(u32, u64, u64)>,
}

impl UnitCounts {
    /// The counts of a finished run (requests after any warm-up, as its
    /// `outcomes` table counts them).
    pub fn of(run: &crate::sim::RunResult) -> UnitCounts {
        UnitCounts {
            requests: run.outcomes.requests,
            buckets: run.answered_response.bucket_counts(),
        }
    }
}

/// One compare row's pooled counts.
#[derive(Debug, Clone, Default, PartialEq)]
struct RowCounts {
    replications: u64,
    requests: u64,
    answered: u64,
    /// bucket -> (count, largest value in ns); a hash map, since every
    /// replication adds to it (sorted only when read, see [`Self::sorted`])
    buckets: FastMap<u32, (u64, u64)>,
}

impl RowCounts {
    fn add_bucket(&mut self, b: u32, count: u64, max: u64) {
        let e = self.buckets.entry(b).or_insert((0, max));
        e.0 += count;
        e.1 = e.1.max(max);
        self.answered += count;
    }

    fn absorb(&mut self, other: &RowCounts) {
        self.replications += other.replications;
        self.requests += other.requests;
        for (&b, &(count, max)) in &other.buckets {
            self.add_bucket(b, count, max);
        }
    }

    /// (bucket, count, largest value), in bucket order.
    fn sorted(&self) -> Vec<(u32, u64, u64)> {
        let mut out: Vec<_> = self.buckets.iter().map(|(&b, &(n, m))| (b, n, m)).collect();
        out.sort_unstable();
        out
    }

    /// The value (ns) of 0-based rank `rank` among the answered times, in
    /// `sorted` (this row's [`Self::sorted`] buckets).
    fn at_rank(sorted: &[(u32, u64, u64)], rank: u64) -> Option<u64> {
        let mut seen = 0;
        for &(_, count, max) in sorted {
            seen += count;
            if seen > rank {
                return Some(max);
            }
        }
        None
    }

    /// The 0-based rank of the nearest-rank quantile num / den of `n` values:
    /// ceil(num x n / den) - 1, exactly; `None` when `n` is 0.
    fn rank(n: u64, num: u64, den: u64) -> Option<u64> {
        let need = (u128::from(n) * u128::from(num)).div_ceil(u128::from(den));
        (n > 0).then(|| need.max(1) as u64 - 1)
    }

    /// `p50_ms`..`p999_ms`, then `p50_all_ms`..`p999_all_ms`.
    fn percentiles(&self) -> Vec<Cell> {
        let sorted = self.sorted();
        let at = |r: u64| Self::at_rank(&sorted, r);
        let ms = |ns: Option<u64>| Cell::from(ns.map(|v| crate::engine::Ticks(v).as_ms()));
        let answered = QUANTILES
            .iter()
            .map(|&(_, num, den)| ms(Self::rank(self.answered, num, den).and_then(at)));
        let all = QUANTILES.iter().map(|&(_, num, den)| {
            // rank among every request sent, the unanswered ones last
            ms(Self::rank(self.requests, num, den)
                .filter(|&r| r < self.answered)
                .and_then(at))
        });
        answered.chain(all).collect()
    }
}

/// The pooled counts of every compare row of a sweep (or a shard of it).
#[derive(Debug, Clone)]
pub struct Pooled {
    labels: Vec<Vec<String>>,
    rows: Vec<RowCounts>,
}

impl Pooled {
    /// Empty counts for the compare rows with these axis labels, in order.
    pub fn new(labels: Vec<Vec<String>>) -> Pooled {
        let rows = vec![RowCounts::default(); labels.len()];
        Pooled { labels, rows }
    }

    /// Adds one replication of compare row `row`.
    pub fn add(&mut self, row: usize, unit: &UnitCounts) {
        let r = &mut self.rows[row];
        r.replications += 1;
        r.requests += unit.requests;
        for &(b, count, max) in &unit.buckets {
            r.add_bucket(b, count, max);
        }
    }

    /// `histograms.csv`: per compare row, its replications, requests, answered
    /// requests and `buckets`, space-separated `low_ns:count:max_ns` (the
    /// bucket's lower edge, its answered requests, the largest time among them).
    pub fn histograms(&self, axis_columns: &[String]) -> Table {
        let mut t = Table::new(
            "histograms",
            "Per compare row: the answered requests' end-to-end times by log-linear bucket (low_ns:count:max_ns), for resim merge",
            axis_columns
                .iter()
                .cloned()
                .chain(["replications", "requests", "answered", "buckets"].map(String::from))
                .collect(),
        );
        for (labels, r) in self.labels.iter().zip(&self.rows) {
            let mut cells: Vec<Cell> = labels.iter().map(|l| Cell::Text(l.clone())).collect();
            let buckets: Vec<String> = r
                .sorted()
                .iter()
                .map(|&(b, count, max)| format!("{}:{count}:{max}", bucket_low(b as usize)))
                .collect();
            cells.extend([
                r.replications.into(),
                r.requests.into(),
                r.answered.into(),
                buckets.join(" ").into(),
            ]);
            t.push(cells);
        }
        t
    }

    /// `pooled.csv`: per compare row, the percentiles over every replication.
    pub fn table(&self, axis_columns: &[String]) -> Table {
        let mut headers: Vec<String> = axis_columns.to_vec();
        headers.extend(["replications", "requests", "answered"].map(String::from));
        headers.extend(QUANTILES.iter().map(|q| format!("{}_ms", q.0)));
        headers.extend(QUANTILES.iter().map(|q| format!("{}_all_ms", q.0)));
        let mut t = Table::new(
            "pooled",
            "Percentiles over the requests of every replication together (nearest rank, within 0.1 %): of the \
             answered requests (p50_ms..p999_ms), and the time within which that share of all requests got an \
             answer (p50_all_ms..p999_all_ms; empty when more than that share got none)",
            headers,
        );
        for (labels, r) in self.labels.iter().zip(&self.rows) {
            let mut cells: Vec<Cell> = labels.iter().map(|l| Cell::Text(l.clone())).collect();
            cells.extend([r.replications.into(), r.requests.into(), r.answered.into()]);
            cells.extend(r.percentiles());
            t.push(cells);
        }
        t
    }

    /// Adds the counts of `other` (a later shard of the same sweep).
    fn absorb(&mut self, other: &Pooled) {
        for (mine, theirs) in self.rows.iter_mut().zip(&other.rows) {
            mine.absorb(theirs);
        }
    }

    /// Reads the `histograms.csv` of each shard folder in `dirs` (in shard order)
    /// and adds them up. Every file must have the compare rows `labels`, in order,
    /// after the axis columns `axis_columns`.
    pub fn read_all(
        dirs: &[&Path],
        axis_columns: &[String],
        labels: &[Vec<String>],
    ) -> Result<Pooled, Error> {
        let mut total = Pooled::new(labels.to_vec());
        for dir in dirs {
            total.absorb(&read(&dir.join(HISTOGRAMS), axis_columns, labels)?);
        }
        Ok(total)
    }
}

/// One shard's `histograms.csv`; errors name the file and line.
fn read(path: &Path, axis_columns: &[String], labels: &[Vec<String>]) -> Result<Pooled, Error> {
    let bad = |line: Option<usize>, m: String| -> Error {
        let at = line.map_or(String::new(), |l| format!("line {l}: "));
        ScenarioError::new("", format!("{at}{m}"))
            .in_file(path)
            .into()
    };
    let reader = csv::Reader::from_path(path).map_err(|e| {
        bad(
            None,
            format!("cannot read: {e} (every shard writes one when it ends: copy it with replications.csv, or run the shard again)"),
        )
    })?;
    read_from(path, reader, axis_columns, labels)
}

impl Pooled {
    /// Counts in `histograms.csv` form held in memory (`bytes`, read from
    /// `path`): a stopped sweep's, for a rerun that resumes it.
    pub fn read_bytes(
        path: &Path,
        bytes: &[u8],
        axis_columns: &[String],
        labels: &[Vec<String>],
    ) -> Result<Pooled, Error> {
        read_from(path, csv::Reader::from_reader(bytes), axis_columns, labels)
    }
}

/// A `buckets` cell (`low_ns:count:max_ns` triples in bucket order) into
/// row `r`; the message says what is wrong.
fn read_buckets(cell: &str, r: &mut RowCounts) -> Result<(), String> {
    let mut last = None;
    for triple in cell.split_whitespace() {
        let fields: Vec<&str> = triple.split(':').collect();
        let parsed: Vec<u64> = fields.iter().filter_map(|f| f.parse().ok()).collect();
        let [low, count, max] = parsed[..] else {
            return Err(format!("buckets: `{triple}` is not low_ns:count:max_ns"));
        };
        let b = bucket_of(low);
        if fields.len() != 3 || bucket_low(b) != low || bucket_of(max) != b || count == 0 {
            return Err(format!(
                "buckets: `{triple}` is not a bucket's lower edge, a count >= 1 and a value in that bucket"
            ));
        }
        if last.is_some_and(|l| l >= b) {
            return Err(format!("buckets: `{triple}` is out of order"));
        }
        last = Some(b);
        r.add_bucket(b as u32, count, max);
    }
    Ok(())
}

fn read_from<R: std::io::Read>(
    path: &Path,
    mut reader: csv::Reader<R>,
    axis_columns: &[String],
    labels: &[Vec<String>],
) -> Result<Pooled, Error> {
    let bad = |line: Option<usize>, m: String| -> Error {
        let at = line.map_or(String::new(), |l| format!("line {l}: "));
        ScenarioError::new("", format!("{at}{m}"))
            .in_file(path)
            .into()
    };
    let header = reader
        .headers()
        .map_err(|e| bad(None, format!("cannot read the header: {e}")))?
        .clone();
    let axes = axis_columns.len();
    let expected = axis_columns.iter().map(String::as_str).chain([
        "replications",
        "requests",
        "answered",
        "buckets",
    ]);
    if !header.iter().eq(expected) {
        return Err(bad(
            Some(1),
            "the header does not match the sweep's axis columns and `replications,requests,answered,buckets`".into(),
        ));
    }
    let mut out = Pooled::new(labels.to_vec());
    let mut rows = 0;
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| bad(Some(line), e.to_string()))?;
        let Some(want) = labels.get(i) else {
            return Err(bad(
                Some(line),
                format!("more lines than the sweep's {} compare rows", labels.len()),
            ));
        };
        if !record.iter().take(axes).eq(want.iter().map(String::as_str)) {
            return Err(bad(
                Some(line),
                format!("compare row {} should be `{}`", i + 1, want.join(", ")),
            ));
        }
        let number = |k: usize, name: &str| -> Result<u64, Error> {
            let text = record.get(axes + k).unwrap_or("");
            text.parse().map_err(|_| {
                bad(
                    Some(line),
                    format!("{name}: `{text}` is not a whole number"),
                )
            })
        };
        let r = &mut out.rows[i];
        r.replications = number(0, "replications")?;
        r.requests = number(1, "requests")?;
        let answered = number(2, "answered")?;
        read_buckets(record.get(axes + 3).unwrap_or(""), r).map_err(|m| bad(Some(line), m))?;
        if r.answered != answered || answered > r.requests {
            return Err(bad(
                Some(line),
                format!(
                    "answered is {answered} but the buckets hold {} (of {} requests)",
                    r.answered, r.requests
                ),
            ));
        }
        rows += 1;
    }
    if rows != labels.len() {
        return Err(bad(
            None,
            format!("{rows} lines for the sweep's {} compare rows", labels.len()),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(requests: u64, ms: &[u64]) -> UnitCounts {
        let mut s = crate::metrics::Samples::default();
        for &v in ms {
            s.push(crate::engine::Ticks::from_ms(v as f64));
        }
        UnitCounts {
            requests,
            buckets: s.bucket_counts(),
        }
    }

    #[test]
    fn pooled_percentiles_are_those_of_every_request_together() {
        let mut p = Pooled::new(vec![vec!["a".into()]]);
        // two replications whose own p99 are 10 and 1000 ms: 99 of 100 at 10 ms,
        // one at 1000 ms, then 100 at 1000 ms (and 10 never answered)
        let mut fast = vec![10; 99];
        fast.push(1000);
        p.add(0, &unit(100, &fast));
        p.add(0, &unit(110, &[1000; 100]));
        let t = p.table(&["policy".to_string()]);
        let cells: Vec<String> = t.rows[0].iter().map(Cell::render).collect();
        // 200 answered of 210: sorted 99 x 10, 101 x 1000
        assert_eq!(
            cells,
            [
                "a", "2", "210", "200", "1000", "1000", "1000", "1000", "1000", "1000", "", ""
            ]
        );
        let t = p.histograms(&["policy".to_string()]);
        let csv = String::from_utf8(crate::report::to_csv(&t).unwrap()).unwrap();
        assert_eq!(
            csv,
            format!(
                "policy,replications,requests,answered,buckets\na,2,210,200,{}:99:10000000 {}:101:1000000000\n",
                bucket_low(bucket_of(10_000_000)),
                bucket_low(bucket_of(1_000_000_000))
            )
        );
    }

    #[test]
    fn ranks_are_exact_nearest_ranks() {
        assert_eq!(RowCounts::rank(0, 1, 2), None);
        assert_eq!(RowCounts::rank(1, 999, 1000), Some(0));
        assert_eq!(RowCounts::rank(10, 9, 10), Some(8));
        assert_eq!(RowCounts::rank(1000, 999, 1000), Some(998));
        assert_eq!(RowCounts::rank(1001, 999, 1000), Some(999));
        assert_eq!(RowCounts::rank(7, 1, 2), Some(3));
        assert_eq!(RowCounts::rank(u64::MAX, 1, 2), Some(u64::MAX / 2));
    }

    #[test]
    fn all_requests_percentiles_need_enough_answers() {
        let mut p = Pooled::new(vec![vec![]]);
        // 10 sent, 9 answered at 1..9 ms: p90 of all is the 9th answer, p99 none
        p.add(0, &unit(10, &[1, 2, 3, 4, 5, 6, 7, 8, 9]));
        let cells: Vec<String> = p.table(&[]).rows[0].iter().map(Cell::render).collect();
        assert_eq!(
            cells,
            ["1", "10", "9", "5", "9", "9", "9", "5", "9", "", ""]
        );
        // nothing answered
        let mut p = Pooled::new(vec![vec![]]);
        p.add(0, &unit(3, &[]));
        let cells: Vec<String> = p.table(&[]).rows[0].iter().map(Cell::render).collect();
        assert_eq!(cells, ["1", "3", "0", "", "", "", "", "", "", "", ""]);
    }

    #[test]
    fn histograms_read_back_and_bad_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let labels = vec![vec!["a".to_string()], vec!["b".to_string()]];
        let axes = vec!["policy".to_string()];
        let mut p = Pooled::new(labels.clone());
        p.add(0, &unit(5, &[3, 3, 200]));
        p.add(1, &unit(4, &[]));
        std::fs::write(
            dir.path().join(HISTOGRAMS),
            crate::report::to_csv(&p.histograms(&axes)).unwrap(),
        )
        .unwrap();
        let back = Pooled::read_all(&[dir.path(), dir.path()], &axes, &labels).unwrap();
        let mut twice = p.clone();
        twice.absorb(&p);
        assert_eq!(back.rows, twice.rows);

        let path = dir.path().join(HISTOGRAMS);
        let good = std::fs::read_to_string(&path).unwrap();
        let low = bucket_low(bucket_of(3_000_000));
        for (bad, says) in [
            (
                good.replace("a,1,5,3,", "a,1,5,4,"),
                "line 2: answered is 4 but the buckets hold 3",
            ),
            (
                good.replace("a,1", "x,1"),
                "line 2: compare row 1 should be `a`",
            ),
            (
                good.replace(&format!("{low}:2:"), &format!("{}:2:", low + 1)),
                "is not a bucket's lower edge",
            ),
            (
                good.replace(&format!("{low}:2:"), "x:2:"),
                "is not low_ns:count:max_ns",
            ),
            (
                good.replace("policy,", "variant,"),
                "line 1: the header does not match",
            ),
            (
                good.lines().take(2).collect::<Vec<_>>().join("\n"),
                "1 lines for the sweep's 2 compare rows",
            ),
        ] {
            std::fs::write(&path, bad).unwrap();
            let e = Pooled::read_all(&[dir.path()], &axes, &labels)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(says) && e.contains("histograms.csv"), "{e}");
        }
    }
}
