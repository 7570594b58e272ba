//! `manifest.toml`: what a sweep folder holds and how to make it again.
//!
//! Every key except `[shard]`, `[[written]]` and `[invocation]` decides the
//! bytes of `replications.csv`; `resim merge` refuses shards that differ in any
//! of them. `[[written]]` holds the hash of each file a merge reads as the sweep
//! wrote it, so that a merge refuses numbers altered since.
//! `[invocation]` records how this folder was made (the command line, the scenario
//! path, the thread count), which naturally differs between shards.

use crate::error::{Error, ScenarioError};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FILE: &str = "manifest.toml";

/// What a sweep folder holds and how it was made (`manifest.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The resim version that wrote it.
    pub resim_version: String,
    /// `scenario.name`.
    pub scenario_name: String,
    /// FNV-1a 64-bit hash of the scenario file's bytes, as 16 hex digits.
    pub scenario_fnv1a64: String,
    /// The master seed of the first compare row (see docs/scenarios.md (Sweeps)).
    pub seed: u64,
    /// Replications of every compare row.
    pub replications: u64,
    /// Two-sided confidence level of the intervals, in (0, 1).
    pub confidence: f64,
    /// Compare rows (grid rows); the run has rows x replications units.
    pub rows: u64,
    /// `--set` overrides, as given.
    pub overrides: Vec<String>,
    /// `--vary` axes, as given.
    pub vary: Vec<String>,
    /// The metric columns of `replications.csv`.
    pub metrics: Vec<String>,
    /// The metrics the printed report shows (`[montecarlo] report`).
    pub report: Vec<String>,
    /// The metrics the report shows when `report` is empty: the answered
    /// share, the times over all requests, the ways of failing, the
    /// amplification and what the compare axes set (see `headline`), chosen
    /// when the sweep starts. Absent with `report`, and in folders of resim
    /// versions before it (a merge then chooses from the metric names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headline: Vec<String>,
    /// `[montecarlo] windows`: `summary.csv`, `paired.csv` and
    /// `summary_wide.csv` hold the per-window metrics of the time series too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub windows: bool,
    /// The metrics whose cells are booleans (0/1 per replication: Wilson
    /// intervals), learnt from replication 0 of every row. Absent when none (and
    /// in folders of resim versions before it: every metric then gets a t
    /// interval).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proportions: Vec<String>,
    /// The bucket scheme of `histograms.csv` (the answered requests' times that
    /// `pooled.csv` pools): a merge adds the shards' histograms. Absent in
    /// folders of resim versions before it, which have no `histograms.csv`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub histograms: String,
    /// `axis=value` rows the paired differences are taken against (`--baseline`,
    /// `[montecarlo] baseline`); absent: each axis's first value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline: Vec<String>,
    /// The files latency models read (`empirical = { file = .. }`), with the hash
    /// of their bytes: a changed file is a different sweep. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_files: Vec<HashedFile>,
    /// `[thresholds]` as (metric, condition): a merge checks them as the sweep does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<(String, String)>,
    /// Each compare row's warm-up and fault windows, for the rows with a time
    /// series: the report's time-series charts shade them (a merge reads them
    /// here). Absent without a time series.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timelines: Vec<crate::report::html::RowTimes>,
    /// The files of this folder `resim merge` reads (`replications.csv`,
    /// `histograms.csv`) with the hash of the bytes the sweep wrote: a merge
    /// refuses a folder whose files were changed since (not compared between
    /// shards). Absent in folders of resim versions before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<HashedFile>,
    /// The units this folder holds, for a `--shard` sweep (not compared by merge).
    pub shard: Option<ShardInfo>,
    /// How it was run (not compared by merge).
    pub invocation: Invocation,
}

/// A file the sweep read, as written in the scenario, and its FNV-1a 64 hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HashedFile {
    /// As written in the scenario.
    pub file: String,
    /// FNV-1a 64-bit hash of its bytes, as 16 hex digits.
    pub fnv1a64: String,
}

/// Which slice of the (row x replication) units a shard folder holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    /// 1-based.
    pub index: u64,
    pub count: u64,
    /// Units [first_unit, end_unit) in replication-major order.
    pub first_unit: u64,
    pub end_unit: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Invocation {
    pub command: String,
    pub scenario_file: String,
    pub jobs: u64,
}

/// FNV-1a, 64 bits.
pub fn fnv1a64(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01B3)
    });
    format!("{h:016x}")
}

/// [`fnv1a64`] of a file's bytes, read in pieces (a sweep's rows can be large).
pub fn fnv1a64_file(path: &Path) -> Result<String, Error> {
    use std::io::Read;
    let fail = |e: std::io::Error| Error::Other(format!("cannot read {}: {e}", path.display()));
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(fail)?;
        if n == 0 {
            break;
        }
        for b in &buf[..n] {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    Ok(format!("{h:016x}"))
}

impl Manifest {
    /// Checks that the files `written` lists in `dir` still hold the bytes the
    /// sweep wrote: a merge must not summarize numbers altered since.
    pub fn check_written(&self, dir: &Path) -> Result<(), Error> {
        for f in &self.written {
            let path = dir.join(&f.file);
            let now = fnv1a64_file(&path)?;
            if now != f.fnv1a64 {
                return Err(ScenarioError::new(
                    "",
                    format!(
                        "was changed after the sweep wrote it: its FNV-1a hash is {now}, {FILE} \
                         records {} (run the sweep or shard again, or restore the file)",
                        f.fnv1a64
                    ),
                )
                .in_file(&path)
                .into());
            }
        }
        Ok(())
    }
}

impl Manifest {
    /// The manifest as TOML, with a comment line on top.
    pub fn to_toml(&self) -> Result<String, Error> {
        let body =
            toml::to_string(self).map_err(|e| Error::Other(format!("cannot write {FILE}: {e}")))?;
        Ok(format!(
            "# Written by resim. `resim merge` compares every key except [shard],\n\
             # [[written]] and [invocation]; see docs/scenarios.md (Sweeps).\n{body}"
        ))
    }

    /// Reads `manifest.toml` from the folder `dir`.
    pub fn read(dir: &Path) -> Result<Manifest, Error> {
        let path = dir.join(FILE);
        let text = crate::scenario::read_input_text(&path, "manifest").map_err(|e| {
            ScenarioError::new(
                "",
                format!("{}: is this a `resim sweep` output folder?", e.message),
            )
            .in_file(&path)
        })?;
        let manifest: Manifest = toml::from_str(&text).map_err(|e| {
            ScenarioError::new("", format!("not a sweep manifest: {}", e.message().trim()))
                .in_file(&path)
        })?;
        // An edited manifest must not turn into inverted intervals with exit 0.
        let c = manifest.confidence;
        if !(c > 0.0 && c < 1.0) {
            return Err(ScenarioError::new(
                "confidence",
                format!("must be in (0, 1), e.g. 0.95 (got {c})"),
            )
            .at(crate::scenario::paths::locate(&text, "confidence"))
            .in_file(&path)
            .into());
        }
        Ok(manifest)
    }

    /// The key where `self` and `other` differ in what decides the output, with
    /// both values, or `None` when they describe the same sweep.
    pub fn difference(&self, other: &Manifest) -> Option<(String, String, String)> {
        let table = |m: &Manifest| -> toml::Table {
            let mut m = m.clone();
            m.shard = None;
            m.written = Vec::new();
            m.invocation = Invocation::default();
            toml::Table::try_from(m).unwrap_or_default()
        };
        let (a, b) = (table(self), table(other));
        a.keys()
            .chain(b.keys())
            .find(|k| a.get(*k) != b.get(*k))
            .map(|k| {
                let show =
                    |v: Option<&toml::Value>| v.map_or("(missing)".into(), |v| v.to_string());
                (k.clone(), show(a.get(k)), show(b.get(k)))
            })
    }
}

/// Refuses to write a shard into `dir` when it holds another shard's results
/// (a merge would then miss that shard). Rerunning the same shard, or a whole
/// sweep where a shard was (or the reverse), replaces it as before; a folder
/// without a manifest that reads is left to the resume checks.
pub fn check_slice(dir: &Path, shard: Option<&ShardInfo>) -> Result<(), Error> {
    if !dir.join(FILE).is_file() {
        return Ok(());
    }
    let Ok(old) = Manifest::read(dir) else {
        return Ok(());
    };
    // a shard 1/1 is the whole sweep
    let slice = |s: Option<&ShardInfo>| s.map(|s| (s.index, s.count)).filter(|&(_, n)| n > 1);
    let (was, now) = (slice(old.shard.as_ref()), slice(shard));
    // a whole sweep over a shard's folder, or a shard over a whole sweep's,
    // replaces it as a sweep of other settings does: only one shard's
    // results replaced by another's are lost to the merge without a word
    if was.is_none() || now.is_none() || was == now {
        return Ok(());
    }
    let name = |s: Option<(u64, u64)>| s.map_or(String::new(), |(k, n)| format!("shard {k}/{n}"));
    Err(ScenarioError::new(
        "",
        format!(
            "{} holds the results of {} ({FILE}), which {} would replace: give each shard its own --out (as the default out/STEM-sweep/shard-K-of-N does), or remove the folder to start again",
            dir.display(),
            name(was),
            name(now)
        ),
    )
    .into())
}

/// `--shard K/N`: the K-th (1-based) of N slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K, 1-based.
    pub index: u64,
    /// N, the number of slices.
    pub count: u64,
}

impl Shard {
    /// Parses `K/N` (1 <= K <= N).
    pub fn parse(s: &str) -> Result<Shard, ScenarioError> {
        let bad = || {
            ScenarioError::new(
                "",
                format!("--shard {s}: expected K/N with 1 <= K <= N, e.g. --shard 2/4"),
            )
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// `--shard auto`: this job's slice from the array job it runs in, read
    /// through `var` (the environment), with `shards` (`--shards N`) for the
    /// schedulers that do not say how many jobs the array has. Tried in order:
    ///
    /// - Slurm job arrays: `SLURM_ARRAY_TASK_ID` and `SLURM_ARRAY_TASK_COUNT`
    ///   (the index counted from `SLURM_ARRAY_TASK_MIN` in steps of
    ///   `SLURM_ARRAY_TASK_STEP`, so `--array=0-3` and `--array=1-4` both work);
    /// - GitLab CI parallel jobs: `CI_NODE_INDEX` (from 1) and `CI_NODE_TOTAL`;
    /// - Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` (from 0);
    /// - AWS Batch array jobs: `AWS_BATCH_JOB_ARRAY_INDEX` (from 0);
    /// - GNU parallel: `PARALLEL_SEQ` (the job's sequence number, from 1).
    ///
    /// The last three need `--shards N` (their jobs are not told the count);
    /// with Slurm it must agree with the array when given. Returns the slice and
    /// where it came from, for the report.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
        shards: Option<u64>,
    ) -> Result<(Shard, &'static str), ScenarioError> {
        let err = |m: String| ScenarioError::new("", format!("--shard auto: {m}"));
        let number = |name: &str| -> Result<Option<u64>, ScenarioError> {
            match var(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| err(format!("{name} = `{v}` is not a whole number >= 0"))),
            }
        };
        let slice = |index: u64, count: u64, from: &'static str| {
            if index == 0 || index > count {
                Err(err(format!(
                    "{from} gives job {index} of {count}: outside 1..={count}"
                )))
            } else {
                Ok((Shard { index, count }, from))
            }
        };
        if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            let count = number("SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| {
                err("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not".into())
            })?;
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(1);
            let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1);
            slurm_grid(id, count, min, step, number("SLURM_ARRAY_TASK_MAX")?).map_err(err)?;
            if let Some(n) = shards
                && n != count
            {
                return Err(err(format!(
                    "--shards {n} but the Slurm array has {count} jobs (SLURM_ARRAY_TASK_COUNT)"
                )));
            }
            let index = id.checked_sub(min).map(|d| d / step + 1).ok_or_else(|| {
                err(format!(
                    "SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
                ))
            })?;
            return slice(index, count, "Slurm (SLURM_ARRAY_TASK_ID)");
        }
        if let Some(k) = number("CI_NODE_INDEX")? {
            let from = "GitLab CI (CI_NODE_INDEX)";
            let count = number("CI_NODE_TOTAL")?
                .ok_or_else(|| err("CI_NODE_INDEX is set but CI_NODE_TOTAL is not".into()))?;
            return slice(k, count, from);
        }
        let from_zero = [
            (
                "JOB_COMPLETION_INDEX",
                "a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)",
            ),
            (
                "AWS_BATCH_JOB_ARRAY_INDEX",
                "an AWS Batch array job (AWS_BATCH_JOB_ARRAY_INDEX)",
            ),
        ];
        let count = |from: &str| {
            shards.ok_or_else(|| {
                err(format!(
                    "{from} gives this job's index but not how many jobs there are: add --shards N"
                ))
            })
        };
        for (name, from) in from_zero {
            if let Some(i) = number(name)? {
                return slice(i.saturating_add(1), count(from)?, from);
            }
        }
        if let Some(seq) = number("PARALLEL_SEQ")? {
            let from = "GNU parallel (PARALLEL_SEQ)";
            return slice(seq, count(from)?, from);
        }
        Err(err(
            "no array job found: none of SLURM_ARRAY_TASK_ID, CI_NODE_INDEX, JOB_COMPLETION_INDEX, \
             AWS_BATCH_JOB_ARRAY_INDEX or PARALLEL_SEQ is set; give the slice as --shard K/N"
                .into(),
        ))
    }

    /// This shard's units of `total`: contiguous, disjoint, together all of them.
    pub fn units(self, total: u64) -> (u64, u64) {
        let at = |k: u64| (u128::from(total) * u128::from(k) / u128::from(self.count)) as u64;
        (at(self.index - 1), at(self.index))
    }
}

/// Checks that Slurm's variables describe the array `--array=MIN-MAX:STEP`
/// that `SLURM_ARRAY_TASK_ID` is counted in: a step of at least 1, a count of
/// at least 1, an id on the step grid and (with `SLURM_ARRAY_TASK_MAX`) as many
/// ids on the grid as the array has jobs. An array given as a list
/// (`--array=1,3,10`) or odd values would otherwise give two jobs one slice.
fn slurm_grid(id: u64, count: u64, min: u64, step: u64, max: Option<u64>) -> Result<(), String> {
    if step == 0 {
        return Err("SLURM_ARRAY_TASK_STEP = `0`: the array's step must be at least 1".into());
    }
    if count == 0 {
        return Err("SLURM_ARRAY_TASK_COUNT = `0`: the array must have at least one job".into());
    }
    if id >= min && !(id - min).is_multiple_of(step) {
        return Err(format!(
            "SLURM_ARRAY_TASK_ID = `{id}` is not on the array's grid (SLURM_ARRAY_TASK_MIN {min} in steps of SLURM_ARRAY_TASK_STEP {step}); give the slice as --shard K/N"
        ));
    }
    if let Some(max) = max {
        if max < min || id > max {
            return Err(format!(
                "SLURM_ARRAY_TASK_ID = `{id}` is outside SLURM_ARRAY_TASK_MIN {min} .. SLURM_ARRAY_TASK_MAX {max}"
            ));
        }
        let on_grid = (max - min) / step + 1;
        if on_grid != count {
            return Err(format!(
                "SLURM_ARRAY_TASK_COUNT = `{count}` but SLURM_ARRAY_TASK_MIN {min} .. SLURM_ARRAY_TASK_MAX {max} in steps of SLURM_ARRAY_TASK_STEP {step} holds {on_grid} jobs (an array given as a list?); give the slice as --shard K/N"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn shards_of_more_than_2_pow_32_units_do_not_wrap() {
        for total in [1u64 << 32, (1 << 40) + 7, u64::MAX] {
            for n in [1, 3, 1000, u64::MAX] {
                let first = Shard { index: 1, count: n }.units(total);
                let last = Shard { index: n, count: n }.units(total);
                assert_eq!(first.0, 0);
                assert_eq!(last.1, total);
                let size = total / n;
                assert!(first.1 - first.0 >= size && first.1 - first.0 <= size.saturating_add(1));
                assert!(last.0 <= last.1);
            }
        }
    }

    #[test]
    fn shards_cover_every_unit_once() {
        for total in [0, 1, 7, 12, 100] {
            for n in 1..6 {
                let mut next = 0;
                for k in 1..=n {
                    let (a, b) = Shard { index: k, count: n }.units(total);
                    assert_eq!(a, next);
                    assert!(b >= a);
                    next = b;
                }
                assert_eq!(next, total);
            }
        }
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        // --shard auto, from each scheduler's variables
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let slurm = |pairs| Shard::from_env(env(pairs), None).map(|(s, _)| (s.index, s.count));
        assert_eq!(
            slurm(&[
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
                ("SLURM_ARRAY_TASK_MIN", "0")
            ])
            .unwrap(),
            (1, 4)
        );
        assert_eq!(
            slurm(&[
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
                ("SLURM_ARRAY_TASK_MIN", "1")
            ])
            .unwrap(),
            (4, 4)
        );
        assert_eq!(
            slurm(&[
                ("SLURM_ARRAY_TASK_ID", "10"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
                ("SLURM_ARRAY_TASK_MIN", "2"),
                ("SLURM_ARRAY_TASK_STEP", "4")
            ])
            .unwrap(),
            (3, 3)
        );
        let k8s = Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "2")]), Some(3)).unwrap();
        assert_eq!((k8s.0.index, k8s.0.count), (3, 3));
        let aws = Shard::from_env(env(&[("AWS_BATCH_JOB_ARRAY_INDEX", "0")]), Some(5)).unwrap();
        assert_eq!((aws.0.index, aws.0.count), (1, 5));
        let gitlab =
            Shard::from_env(env(&[("CI_NODE_INDEX", "2"), ("CI_NODE_TOTAL", "4")]), None).unwrap();
        assert_eq!((gitlab.0.index, gitlab.0.count), (2, 4));
        let gnu = Shard::from_env(env(&[("PARALLEL_SEQ", "2")]), Some(2)).unwrap();
        assert_eq!((gnu.0.index, gnu.0.count), (2, 2));
        for (pairs, shards, message) in [
            (&[][..], None, "no array job found"),
            (&[("JOB_COMPLETION_INDEX", "1")][..], None, "add --shards N"),
            (&[("JOB_COMPLETION_INDEX", "3")][..], Some(3), "job 4 of 3"),
            (&[("PARALLEL_SEQ", "x")][..], Some(3), "not a whole number"),
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "1"),
                    ("SLURM_ARRAY_TASK_COUNT", "4"),
                ][..],
                Some(3),
                "--shards 3 but the Slurm array has 4",
            ),
        ] {
            let pairs: &'static [(&'static str, &'static str)] = pairs;
            let e = Shard::from_env(env(pairs), shards).unwrap_err().to_string();
            assert!(e.contains(message), "{e}");
        }
        for bad in ["0/4", "5/4", "2", "a/b", "1/0"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fnv_matches_the_reference_vectors() {
        assert_eq!(fnv1a64(b""), "cbf29ce484222325");
        assert_eq!(fnv1a64(b"a"), "af63dc4c8601ec8c");
        assert_eq!(fnv1a64(b"foobar"), "85944171f73967e8");
    }

    pub(in crate::sweep) fn manifest() -> Manifest {
        Manifest {
            resim_version: "0.1.0".into(),
            scenario_name: "x".into(),
            scenario_fnv1a64: fnv1a64(b"x"),
            seed: 1,
            replications: 10,
            confidence: 0.95,
            rows: 2,
            overrides: vec![],
            vary: vec![],
            metrics: vec!["outcomes.answered".into(), "recovery.stuck".into()],
            report: vec![],
            headline: vec![],
            windows: false,
            proportions: vec!["recovery.stuck".into()],
            histograms: "log-linear, 1024 buckets per power of two, ns".into(),
            baseline: vec![],
            latency_files: vec![HashedFile {
                file: "latencies.csv".into(),
                fnv1a64: fnv1a64(b"ms\n6\n"),
            }],
            thresholds: vec![],
            timelines: vec![crate::report::html::RowTimes {
                labels: vec!["baseline".into()],
                warmup_ms: 500.0,
                faults: vec![crate::report::html::FaultWindow {
                    what: "down on store".into(),
                    from_ms: 1000.0,
                    to_ms: 3000.0,
                }],
            }],
            written: Vec::new(),
            shard: Some(ShardInfo {
                index: 1,
                count: 2,
                first_unit: 0,
                end_unit: 10,
            }),
            invocation: Invocation {
                command: "resim sweep x.toml --shard 1/2".into(),
                scenario_file: "x.toml".into(),
                jobs: 2,
            },
        }
    }

    #[test]
    fn manifests_round_trip_and_compare_without_shard_and_invocation() {
        let a = manifest();
        let text = a.to_toml().unwrap();
        let back: Manifest = toml::from_str(&text).unwrap();
        assert_eq!(back, a);
        let mut b = a.clone();
        b.shard = None;
        b.invocation.command = "other".into();
        assert_eq!(a.difference(&b), None);
        b.seed = 2;
        assert_eq!(
            a.difference(&b),
            Some(("seed".into(), "1".into(), "2".into()))
        );
        let mut c = a.clone();
        c.latency_files[0].fnv1a64 = fnv1a64(b"ms\n7\n");
        assert_eq!(
            a.difference(&c).map(|d| d.0),
            Some("latency_files".to_string())
        );
    }
}
