//! A tuning split over shards (`--shard K/N`): every shard runs the same
//! search, and the runs each step asks for are split among them.
//!
//! The search is deterministic: its candidates depend only on the values of
//! the runs, and a run's values only on (candidate, replication). So each
//! shard runs the search from the start on the runs known so far; where a
//! step asks for runs nobody has made, the step's missing runs (the same list
//! in every shard) are cut into N slices in order, this shard makes its slice
//! and writes it into `runs/` of the output folder (one file per step and
//! shard, written whole), waits for the other slices, and runs the search
//! again. When no run is missing, every shard holds the same answer, and
//! shard 1 writes it: the same bytes as one process would.
//!
//! `runs/tuning.txt` names the tuning the runs belong to (a hash of the
//! scenario, the settings and the seed); runs of another tuning are refused.
//! Runs already in the folder are used (a shard run again goes on where it
//! stopped).

use super::TuneOptions;
use super::eval::Evaluator;
use super::race::{Evaluate, Goal, Runs};
use super::space::{Point, set_lines};
use crate::error::{Error, ScenarioError};
use crate::sweep::Shard;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One replication of one candidate: every row's metric values.
type Rows = Vec<Vec<Option<f64>>>;

/// The evaluator of a shard.
pub struct Sharded<'a> {
    inner: Evaluator<'a>,
    shard: Shard,
    /// `DIR/runs`.
    dir: PathBuf,
    /// Every run known: (candidate's `--set` lines, replication) -> rows.
    known: HashMap<(String, u64), Rows>,
    /// The files read into `known`.
    read: HashSet<String>,
    /// The runs of this step asked for and not known: (candidate index,
    /// point, replication), in the order asked.
    missing: Vec<(usize, Point, u64)>,
    rows: usize,
    metrics: usize,
    wait: Duration,
    /// The inner evaluator's index of each candidate run (its runner is
    /// kept by index, and an index of the race names one candidate only
    /// within one pass).
    ids: HashMap<String, usize>,
    /// The candidate each index of the race's present pass names.
    names: HashMap<usize, String>,
}

/// The identity of the runs: a hash of what a run's values depend on (the
/// scenario's text `text`, `--set`, the seed) and of the metrics kept, with those
/// settings written out for a person reading `tuning.txt`. The search's own
/// settings (keys, limits, budget) are not in it: a run is named by its
/// candidate's values, so a tuning run again with a larger budget or other
/// ranges uses the runs it shares.
pub fn fingerprint(opts: &TuneOptions, text: &str, goal: &Goal, rows: usize) -> String {
    // the file's path is said, not hashed: shards may reach it by other paths
    let what = format!(
        "set {:?}\nseed {:?}\nmetrics {} {:?}\nrows {rows}\n",
        opts.overrides.iter().map(|o| &o.text).collect::<Vec<_>>(),
        opts.seed,
        goal.objective,
        goal.constraints
            .iter()
            .map(|c| &c.metric)
            .collect::<Vec<_>>(),
    );
    let mut h = std::hash::DefaultHasher::new();
    (text, &what).hash(&mut h);
    format!("{:016x}\nfile {}\n{what}", h.finish(), opts.file.display())
}

fn io(context: String) -> impl Fn(std::io::Error) -> Error {
    move |e| Error::Io {
        context: context.clone(),
        source: e,
        user_path: true,
    }
}

impl<'a> Sharded<'a> {
    /// The shard's evaluator over `dir/runs`, with the runs already there.
    pub fn new(
        inner: Evaluator<'a>,
        shard: Shard,
        dir: &Path,
        fingerprint: String,
        rows: usize,
        wait_seconds: u64,
    ) -> Result<Sharded<'a>, Error> {
        let runs = dir.join("runs");
        std::fs::create_dir_all(&runs)
            .map_err(io(format!("cannot create the folder {}", runs.display())))?;
        let id = runs.join("tuning.txt");
        match std::fs::read_to_string(&id) {
            // the first line, the hash, names the tuning
            Ok(t) if t.lines().next() == fingerprint.lines().next() => {}
            Ok(_) => {
                return Err(ScenarioError::new(
                    "--shard",
                    format!(
                        "{} holds the runs of another tuning (another scenario, settings or seed): pass another --out, or remove that folder",
                        runs.display()
                    ),
                )
                .into());
            }
            Err(_) => crate::report::target::write_whole(&id, fingerprint.as_bytes())?,
        }
        let metrics = inner.metrics.len();
        let mut s = Sharded {
            inner,
            shard,
            dir: runs,
            known: HashMap::new(),
            read: HashSet::new(),
            missing: Vec::new(),
            rows,
            metrics,
            wait: Duration::from_secs(wait_seconds),
            ids: HashMap::new(),
            names: HashMap::new(),
        };
        s.read_new()?;
        Ok(s)
    }

    /// A candidate's name in the runs files: its `--set` lines.
    fn name(&self, p: &Point) -> String {
        set_lines(self.inner.keys, p).join(" ")
    }

    /// Reads the runs files not read yet.
    fn read_new(&mut self) -> Result<(), Error> {
        let entries = std::fs::read_dir(&self.dir)
            .map_err(io(format!("cannot read {}", self.dir.display())))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".csv") && !n.starts_with('.'))
            .filter(|n| !self.read.contains(n))
            .collect();
        names.sort();
        for name in names {
            self.read_file(&name)?;
            self.read.insert(name);
        }
        Ok(())
    }

    /// Reads one runs file: `candidate,replication,row,<metric>...`.
    fn read_file(&mut self, name: &str) -> Result<(), Error> {
        let path = self.dir.join(name);
        let bad = |m: String| -> Error {
            ScenarioError::new("", format!("not a runs file of this tuning: {m}"))
                .in_file(&path)
                .into()
        };
        let mut r = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
        for rec in r.records() {
            let rec = rec.map_err(|e| bad(e.to_string()))?;
            if rec.len() != 3 + self.metrics {
                return Err(bad(format!("a line of {} fields", rec.len())));
            }
            let num = |i: usize| -> Result<u64, Error> {
                rec[i].parse().map_err(|_| bad(format!("`{}`", &rec[i])))
            };
            let (rep, row) = (num(1)?, num(2)? as usize);
            if row >= self.rows {
                return Err(bad(format!("row {row}")));
            }
            let mut values = Vec::with_capacity(self.metrics);
            for v in rec.iter().skip(3) {
                values.push(match v {
                    "" => None,
                    v => Some(v.parse::<f64>().map_err(|_| bad(format!("`{v}`")))?),
                });
            }
            let (rows, metrics) = (self.rows, self.metrics);
            let slot = self
                .known
                .entry((rec[0].to_string(), rep))
                .or_insert_with(|| vec![vec![None; metrics]; rows]);
            slot[row] = values;
        }
        Ok(())
    }

    /// This shard's slice of the step's missing runs, made and written; then
    /// the other slices waited for (a slice no shard has taken is made here:
    /// shards that do not all run at once still end) and read.
    pub fn resolve(&mut self) -> Result<(), Error> {
        let mut seen = HashSet::new();
        let missing: Vec<_> = std::mem::take(&mut self.missing)
            .into_iter()
            .filter(|(_, p, r)| seen.insert((self.name(p), *r)))
            .collect();
        // the step's name: the same list in every shard
        let mut h = std::hash::DefaultHasher::new();
        for (_, p, r) in &missing {
            (self.name(p), r).hash(&mut h);
        }
        let step = format!("{:016x}", h.finish());
        let (k, n) = (self.shard.index, self.shard.count);
        let dir = self.dir.clone();
        let file = |j: u64| dir.join(format!("step-{step}-shard-{j}-of-{n}.csv"));
        let claim = |j: u64| {
            // taken by the first to create it; a shard's own slice is made by
            // it whatever the claim says (a shard that stopped leaves one)
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(dir.join(format!("step-{step}-shard-{j}-of-{n}.claim")))
                .is_ok()
        };
        if !file(k).exists() {
            claim(k);
            let bytes = self.slice(&missing, k)?;
            crate::report::target::write_whole(&file(k), &bytes)?;
        }
        let began = Instant::now();
        let mut told = Instant::now();
        loop {
            let absent: Vec<u64> = (1..=n).filter(|j| !file(*j).exists()).collect();
            if absent.is_empty() {
                break;
            }
            if let Some(&j) = absent.iter().find(|&&j| claim(j)) {
                let bytes = self.slice(&missing, j)?;
                crate::report::target::write_whole(&file(j), &bytes)?;
                continue;
            }
            let which = || {
                let list: Vec<String> = absent.iter().map(|j| j.to_string()).collect();
                format!(
                    "shard{} {}",
                    if absent.len() > 1 { "s" } else { "" },
                    list.join(", ")
                )
            };
            if began.elapsed() > self.wait {
                // a shard that took a slice and stopped leaves its claim:
                // the slice is made here (the same bytes, if it comes after all)
                eprintln!(
                    "shard {k} of {n}: no runs from {} after {} s: making them here",
                    which(),
                    self.wait.as_secs()
                );
                for &j in &absent {
                    let bytes = self.slice(&missing, j)?;
                    crate::report::target::write_whole(&file(j), &bytes)?;
                }
                continue;
            }
            if told.elapsed() > Duration::from_secs(60) {
                eprintln!("shard {k} of {n}: waiting for the runs of {}", which());
                told = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.read_new()?;
        if let Some((_, p, r)) = missing
            .iter()
            .find(|(_, p, r)| !self.known.contains_key(&(self.name(p), *r)))
        {
            return Err(Error::Other(format!(
                "the shards' runs miss replication {r} of {} in {}",
                self.name(p),
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// Slice `j` of the step's missing runs (cut in order into N), made: the
    /// runs file's bytes, `candidate,replication,row,<metric>...`.
    fn slice(&mut self, missing: &[(usize, Point, u64)], j: u64) -> Result<Vec<u8>, Error> {
        let (n, len) = (self.shard.count, missing.len() as u64);
        let mine = &missing[(len * (j - 1) / n) as usize..(len * j / n) as usize];
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut head = vec!["candidate".to_string(), "replication".into(), "row".into()];
        head.extend(self.inner.metrics.iter().cloned());
        let csv_err = |e: csv::Error| Error::Other(format!("cannot write the runs: {e}"));
        w.write_record(&head).map_err(csv_err)?;
        let mut i = 0;
        while i < mine.len() {
            // consecutive replications of one candidate run as one range
            let (index, point, from) = &mine[i];
            let mut len = 1;
            while i + len < mine.len()
                && mine[i + len].0 == *index
                && mine[i + len].2 == from + len as u64
            {
                len += 1;
            }
            let to = from + len as u64;
            let name = self.name(point);
            let next = self.ids.len();
            let id = *self.ids.entry(name.clone()).or_insert(next);
            let values = self.inner.run(id, point, *from, to)?;
            for rep in *from..to {
                for (row, metrics) in values.iter().enumerate() {
                    let mut rec = vec![name.clone(), rep.to_string(), row.to_string()];
                    rec.extend(metrics.iter().map(|m| {
                        m[(rep - from) as usize].map_or(String::new(), |v| v.to_string())
                    }));
                    w.write_record(&rec).map_err(csv_err)?;
                }
            }
            i += len;
        }
        w.into_inner().map_err(|e| Error::Other(e.to_string()))
    }
}

impl Evaluate for Sharded<'_> {
    fn run(&mut self, index: usize, point: &Point, from: u64, to: u64) -> Result<Runs, Error> {
        let name = self.name(point);
        self.names.insert(index, name.clone());
        let mut out = vec![vec![Vec::new(); self.metrics]; self.rows];
        for rep in from..to {
            match self.known.get(&(name.clone(), rep)) {
                Some(rows) => {
                    for (o, row) in out.iter_mut().zip(rows) {
                        for (m, v) in o.iter_mut().zip(row) {
                            m.push(*v);
                        }
                    }
                }
                None => {
                    // a stand-in: the step is run again once the run is in
                    self.missing.push((index, point.clone(), rep));
                    for o in out.iter_mut() {
                        for m in o.iter_mut() {
                            m.push(None);
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    fn forget(&mut self, index: usize) {
        if let Some(id) = self.names.get(&index).and_then(|n| self.ids.get(n)) {
            self.inner.forget(*id);
        }
    }

    fn stop(&self) -> bool {
        !self.missing.is_empty()
    }
}
