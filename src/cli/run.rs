//! `resim run`: every scenario is loaded first (a bad file stops the run
//! before any output), then each is run, its folder written whole and its
//! digest (or tables, or JSON) printed; with several, an index page links
//! their reports.

use super::args::RunArgs;
use super::{
    RUN_LEGACY, check_distinct_outputs, limit_origin, note, out_line, out_text, output_dir,
    overrides, scenario_files, spans, warn,
};
use crate::error::{Error, ScenarioError};
use crate::scenario::{self, LoadOptions, Scenario};
use std::path::Path;

/// What every scenario's run adds for the end: the thresholds it failed, its
/// JSON document, its entry on the index page.
#[derive(Default)]
struct Gathered {
    failed: Vec<String>,
    documents: Vec<serde_json::Value>,
    index: Vec<crate::report::html::IndexEntry>,
}

/// What each scenario's run shares.
struct Shared<'a> {
    args: &'a RunArgs,
    opts: LoadOptions,
    record: crate::Record,
    progress: bool,
    several: bool,
    span_targets: Vec<crate::report::target::Target>,
}

pub(super) fn run(args: RunArgs) -> Result<(), Error> {
    let files = scenario_files(&args.paths)?;
    if let Some(r) = args.spans_sample
        && !(r > 0.0 && r <= 1.0)
    {
        return Err(ScenarioError::new(
            "",
            format!(
                "--spans-sample: the share of requests to write, above 0 and at most 1 (got {})",
                crate::error::num(r)
            ),
        )
        .into());
    }
    let record = crate::Record {
        trace: args.trace,
        spans: args
            .spans
            .as_ref()
            .map(|_| args.spans_sample.unwrap_or(1.0)),
    };
    let opts = LoadOptions {
        overrides: overrides(&args.set)?,
        seed: args.seed,
        ..LoadOptions::default()
    };
    // Load everything first: a bad file stops the run before any output.
    let scenarios = files
        .iter()
        .map(|f| scenario::load(f, &opts))
        .collect::<Result<Vec<_>, _>>()?;
    let several = scenarios.len() > 1;
    let out = args.out.as_deref();
    check_distinct_outputs(&scenarios, out, several)?;
    let span_targets = match &args.spans {
        Some(path) => spans::targets(path, &scenarios, out, !args.quiet || args.json)?,
        None => Vec::new(),
    };
    for s in &scenarios {
        crate::sweep::check_metric_names(s)?;
    }
    let progress = {
        use std::io::IsTerminal;
        !args.quiet && !args.json && std::io::stderr().is_terminal()
    };
    let shared = Shared {
        args: &args,
        opts,
        record,
        progress,
        several,
        span_targets,
    };
    let mut gathered = Gathered::default();
    for s in &scenarios {
        shared.one(s, &mut gathered)?;
    }
    if several {
        shared.index_page(&gathered.index)?;
    }
    if args.json {
        out_line(&crate::report::json::document(gathered.documents)?)?;
    }
    match gathered.failed.is_empty() {
        true => Ok(()),
        false => Err(Error::Thresholds(gathered.failed.join("\n"))),
    }
}

impl Shared<'_> {
    /// Runs scenario `s`, writes its folder and spans, prints what it found.
    fn one(&self, s: &Scenario, gathered: &mut Gathered) -> Result<(), Error> {
        let args = self.args;
        let (output, trace_file, span_files) =
            crate::run_scenario_recorded(s, self.progress, self.record, args.draw_ahead)
                .map_err(|e| limit_origin(e, &self.opts.overrides))?;
        for warning in crate::fault_warnings(s, &output.runs)
            .iter()
            .chain(&output.warnings)
        {
            warn(warning);
        }
        let verdict = crate::thresholds::check_run(s, || {
            let runner = crate::sweep::RowRunner::new(s);
            let runs = output.runs.iter().enumerate();
            runs.map(|(i, run)| runner.metrics_of(i, run.clone()))
                .collect()
        })?;
        let dir = output_dir(args.out.as_deref(), &s.stem(), self.several);
        let mut written = crate::run_files(
            s,
            &output,
            verdict.as_ref().map(crate::thresholds::html_view),
            !args.no_report,
        )?;
        if let Some(v) = &verdict {
            written.push(("thresholds.csv".into(), crate::report::to_csv(&v.table)?));
        }
        if let Some(bytes) = trace_file {
            written.push((crate::traces::chrome::FILE.into(), bytes));
        }
        let csv_files = written.iter().filter(|(n, _)| n.ends_with(".csv")).count();
        let where_files = if args.no_report {
            format!("Files: {} ({csv_files} CSV files)", dir.display())
        } else {
            format!(
                "Files: {} ({csv_files} CSV files); report: {}",
                dir.display(),
                dir.join(crate::report::html::FILE).display()
            )
        };
        // The folder's complete set: a file of an earlier run that this one
        // does not write again (report.html with --no-report, recovery.csv
        // without faults) is removed.
        crate::report::Folder::open(&dir, RUN_LEGACY)?.replace(
            written
                .into_iter()
                .map(|(name, bytes)| (name, crate::report::Content::Bytes(bytes)))
                .collect(),
        )?;
        for (target, bytes) in self.span_targets.iter().zip(&span_files) {
            crate::report::target::write(target, bytes)?;
            if !args.quiet && !args.json {
                note(&format!("spans: {}", target.path().display()));
            }
        }
        if self.several {
            gathered.index.push(crate::report::html::IndexEntry {
                title: s.base().name.clone(),
                folder: s.stem(),
                report: !args.no_report,
                headline: crate::report::digest::headline(&output.tables),
                about: s.base().about.clone(),
            });
        }
        if args.json {
            let entry = crate::report::json::Entry {
                file: s.file.display().to_string(),
                name: &s.base().name,
                seed: s.base().seed,
                compare_rows: s.rows.len(),
                thresholds: verdict.as_ref().map(|v| (&v.table, v.failed)),
            };
            gathered
                .documents
                .push(crate::report::json::scenario(&entry, output.all_tables()));
        } else if !args.quiet {
            if args.tables {
                out_line(&crate::render_report(s, &output.tables))?;
            } else {
                out_text(&crate::render_digest(s, &output.tables, &where_files))?;
            }
            if let Some(v) = &verdict {
                out_line(&format!(
                    "\n{}Thresholds: {}",
                    v.table.render_text(),
                    v.summary()
                ))?;
            }
            if args.tables {
                out_line(&crate::error::printable(&where_files))?;
            }
        }
        if let Some(e) = verdict.and_then(|v| v.error(&s.file.display().to_string())) {
            gathered.failed.push(e.to_string());
        }
        Ok(())
    }

    /// Every scenario's report, one link each, beside their folders.
    fn index_page(&self, index: &[crate::report::html::IndexEntry]) -> Result<(), Error> {
        let base = self.args.out.as_deref().unwrap_or(Path::new("out"));
        let page = crate::report::html::index_page(index);
        crate::report::Folder::open(base, &[])?.replace(vec![(
            crate::report::html::INDEX.into(),
            crate::report::Content::Bytes(page.into_bytes()),
        )])?;
        if !self.args.quiet && !self.args.json {
            out_line(&format!(
                "\nIndex of every scenario's report: {}",
                base.join(crate::report::html::INDEX).display()
            ))?;
        }
        Ok(())
    }
}
