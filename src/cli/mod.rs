//! The command line. Only this module knows clap: arguments are turned into plain
//! option structs and handed to the library.

use crate::error::{Error, ScenarioError};
use crate::scenario::{self, LoadOptions, Override};
use clap::Parser;
use std::path::{Path, PathBuf};

mod args;
mod run;
mod spans;

use args::{Cli, Command};

/// Parses the process arguments, runs, prints errors; returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 2,
            };
        }
    };
    match dispatch(cli.command) {
        Ok(()) => 0,
        Err(e) => {
            // Not eprintln!: a closed stderr must not turn an error into a panic.
            // Paths and values quoted from files reach the terminal escaped.
            use std::io::Write;
            let text = e.to_string();
            let _ = writeln!(
                std::io::stderr().lock(),
                "error: {}",
                crate::error::printable(&text)
            );
            e.exit_code()
        }
    }
}

/// A run that stopped on a limit (`scenario.max_sim_time_ms = 0.5`) whose value a
/// `--set` gave says so, as a load error does: `(from --set KEY=VALUE)`.
fn limit_origin(e: Error, overrides: &[Override]) -> Error {
    let Error::Limit(message) = e else {
        return e;
    };
    let names = |o: &&Override| {
        message.match_indices(o.path.as_str()).any(|(at, p)| {
            let next = message[at + p.len()..].chars().next();
            !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
    };
    match overrides.iter().rev().find(names) {
        Some(o) => Error::Limit(format!(
            "{message} (from --set {})",
            crate::scenario::shorten(&o.text)
        )),
        None => Error::Limit(message),
    }
}

fn overrides(set: &[String]) -> Result<Vec<Override>, Error> {
    Ok(set
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>, _>>()?)
}

/// Expands folders into their *.toml files (sorted), keeping files as given.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let entries = std::fs::read_dir(p).map_err(|e| Error::Io {
                context: format!("cannot read the folder {}", p.display()),
                source: e,
                user_path: true,
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "toml"))
                .collect();
            found.sort();
            // a link to a scenario that is gone is named, not skipped (the
            // folder's other scenarios would run without it, unsaid)
            if let Some(link) = found.iter().find(|f| !f.exists() && f.is_symlink()) {
                let to = std::fs::read_link(link).unwrap_or_default();
                return Err(ScenarioError::new(
                    "",
                    format!(
                        "is a broken link (to {}): the scenario it named is gone; remove the link or restore its file",
                        to.display()
                    ),
                )
                .in_file(link)
                .into());
            }
            found.retain(|f| f.is_file());
            if found.is_empty() {
                return Err(
                    ScenarioError::new("", "the folder holds no scenario files (*.toml)")
                        .in_file(p)
                        .into(),
                );
            }
            files.extend(found);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(ScenarioError::new("", crate::scenario::missing_reason(p))
                .in_file(p)
                .into());
        }
    }
    Ok(files)
}

fn dispatch(command: Command) -> Result<(), Error> {
    if let Command::Run(args::RunArgs { out: Some(out), .. })
    | Command::Sweep(args::SweepArgs { out: Some(out), .. })
    | Command::Boundary(args::BoundaryArgs { out: Some(out), .. })
    | Command::Tune(args::TuneArgs { out: Some(out), .. })
    | Command::Merge { out: Some(out), .. } = &command
    {
        crate::report::target::check_folder_name("--out", out)?;
    }
    match command {
        Command::Run(args) => run::run(args),
        Command::Sweep(a) => sweep(a),
        Command::Boundary(a) => boundary(a),
        Command::Tune(a) => tune(a),
        Command::Merge {
            dirs,
            out,
            quiet,
            no_report,
            all_metrics,
        } => {
            let report = crate::sweep::merge(&crate::sweep::MergeOptions {
                dirs,
                out,
                command: command_line(),
                report: !no_report,
                all_metrics,
            })?;
            if !quiet {
                out_text(&report.text)?;
            }
            report.thresholds_result()
        }
        Command::New { name, from, list } => match name {
            Some(name) if !list => new_scenario(&name, &from),
            _ => {
                for n in scenario::bundled::names() {
                    let title = scenario::bundled::scenario(n)
                        .and_then(|(_, text)| text.parse::<toml::Table>().ok())
                        .and_then(|t| t.get("scenario")?.get("name")?.as_str().map(String::from))
                        .unwrap_or_default();
                    out_line(&format!("{n:<36} {title}"))?;
                }
                Ok(())
            }
        },
        Command::Import(a) => import(a),
        Command::Check { paths, set } => {
            let files = scenario_files(&paths)?;
            let opts = LoadOptions {
                overrides: overrides(&set)?,
                ..LoadOptions::default()
            };
            for f in &files {
                let s = scenario::load(f, &opts)?;
                crate::sweep::check_metric_names(&s)?;
                for w in scenario::warnings(&s) {
                    warn(&format!("{}: {w}", f.display()));
                }
                out_line(&format!(
                    "ok: {} ({} compare rows)",
                    f.display(),
                    s.rows.len()
                ))?;
            }
            Ok(())
        }
    }
}

/// `--shard K/N|auto` and `--shards N`: this process's slice (`auto` read
/// from the scheduler's variables, said on stderr unless `quiet`).
fn shard(
    text: Option<&str>,
    shards: Option<u64>,
    quiet: bool,
) -> Result<Option<crate::sweep::Shard>, Error> {
    if shards.is_some() && text != Some("auto") {
        return Err(crate::error::ScenarioError::new(
            "",
            "--shards N goes with --shard auto (with --shard K/N the count is N)",
        )
        .into());
    }
    Ok(match text {
        None => None,
        Some("auto") => {
            let (slice, from) =
                crate::sweep::Shard::from_env(|name| std::env::var(name).ok(), shards)?;
            if !quiet {
                note(&format!(
                    "--shard auto: {}/{} from {from}",
                    slice.index, slice.count
                ));
            }
            Some(slice)
        }
        Some(text) => Some(crate::sweep::Shard::parse(text)?),
    })
}

/// `resim sweep`: the options from the arguments (`--shard auto` read from
/// the scheduler's variables), the sweep, its summary printed.
fn sweep(a: args::SweepArgs) -> Result<(), Error> {
    use std::io::IsTerminal;
    let shard = shard(a.shard.as_deref(), a.shards, a.quiet)?;
    let opts = crate::sweep::SweepOptions {
        file: a.file,
        overrides: overrides(&a.set)?,
        seed: a.seed,
        replications: a.replications,
        jobs: a.jobs,
        vary: a.vary,
        baseline: a.baseline,
        shard,
        out: a.out,
        progress: !a.quiet && std::io::stderr().is_terminal(),
        command: command_line(),
        report: !a.no_report,
        all_metrics: a.all_metrics,
    };
    let report = crate::sweep::sweep(&opts).map_err(|e| limit_origin(e, &opts.overrides))?;
    if !a.quiet {
        out_text(&report.text)?;
    }
    report.thresholds_result()
}

/// `resim boundary`: the search, its answer printed as text or JSON.
fn boundary(a: args::BoundaryArgs) -> Result<(), Error> {
    let opts = crate::boundary::BoundaryOptions {
        file: a.file,
        overrides: overrides(&a.common.set)?,
        seed: a.common.seed,
        axes: a.axis,
        metric: a.metric,
        target: a.target,
        replications: a.replications,
        max_replications: a.max_replications,
        tolerance: a.tolerance,
        max_points: a.max_points,
        grid: a.grid,
        jobs: a.common.jobs,
        out: a.out,
        report: !a.common.no_report,
        once: a.once,
    };
    let report = crate::boundary::boundary(&opts).map_err(|e| limit_origin(e, &opts.overrides))?;
    if a.common.json {
        out_text(&report.json)?;
    } else if !a.common.quiet {
        out_text(&report.text)?;
    }
    Ok(())
}

/// `resim tune`: the search, its recommendation printed as text or JSON.
fn tune(a: args::TuneArgs) -> Result<(), Error> {
    let objective = match (a.maximize, a.minimize) {
        (Some(m), None) => Some((m, true)),
        (None, Some(m)) => Some((m, false)),
        _ => None,
    };
    let opts = crate::tune::TuneOptions {
        file: a.file,
        overrides: overrides(&a.common.set)?,
        seed: a.common.seed,
        vary: a.vary,
        objective,
        constraints: a.constraint,
        over: a.over,
        replications: a.replications,
        max_replications: a.max_replications,
        budget: a.budget,
        jobs: a.common.jobs,
        out: a.out,
        report: !a.common.no_report,
        write_back: a.write_back,
        shard: shard(
            a.shard.as_deref(),
            a.shards,
            a.common.quiet || a.common.json,
        )?,
        shard_wait: a.shard_wait,
    };
    let report = crate::tune::tune(&opts).map_err(|e| limit_origin(e, &opts.overrides))?;
    let shard = opts.shard.filter(|s| s.index > 1);
    if let Some(s) = shard
        && !a.common.quiet
        && !a.common.json
    {
        // the same answer as shard 1's, which writes it
        out_line(&format!(
            "Shard {} of {}: the search is done; shard 1 writes its results.",
            s.index, s.count
        ))?;
    } else if a.common.json {
        out_text(&report.json)?;
    } else if !a.common.quiet {
        out_text(&report.text)?;
    }
    // the tuning's files are written; writing back was refused
    report.refused.map_or(Ok(()), Err)
}

/// `resim import`: the scenario written, then what was written and what to
/// run next (only the warnings with `--quiet`).
fn import(a: args::ImportArgs) -> Result<(), Error> {
    let done = crate::import::import(&crate::import::ImportOptions {
        files: a.files,
        out: a.out,
        from: a.from,
        sample_rate: a.sample_rate,
        tail: a.tail,
        force: a.force,
        choices: crate::import::config::Choices {
            grpc_backoff: a.grpc_backoff,
        },
    })?;
    if a.quiet {
        import_warnings(&done);
        return Ok(());
    }
    note(done.report.short().trim_end());
    import_warnings(&done);
    match &done.data_dir {
        Some(d) => note(&format!(
            "wrote {}, {} and {}/",
            done.scenario.display(),
            done.report_file.display(),
            d.display()
        )),
        None => note(&format!(
            "wrote {} and {}",
            done.scenario.display(),
            done.report_file.display()
        )),
    }
    note(&format!(
        "next: resim run {} (and read {})",
        done.scenario.display(),
        done.report_file.display()
    ));
    Ok(())
}

/// What a run owns in a folder without a record (written by an older resim): the
/// page `--no-report` always removed.
const RUN_LEGACY: &[&str] = &[crate::report::html::FILE];

/// Reads a data file a scenario names (relative to its folder).
type DataFiles = Box<dyn Fn(&str) -> Option<Vec<u8>>>;

/// `resim new NAME --from SCENARIO`: writes NAME.toml from a bundled scenario
/// (or a scenario file), with the data files it reads beside it; refuses to
/// overwrite anything, and checks the result loads.
fn new_scenario(name: &Path, from: &str) -> Result<(), Error> {
    crate::report::target::check_file_name("resim new", name)?;
    let target = if name.extension().is_some_and(|e| e == "toml") {
        name.to_path_buf()
    } else {
        let mut t = name.as_os_str().to_owned();
        t.push(".toml");
        PathBuf::from(t)
    };
    let usage = |message: String| Error::from(crate::error::ScenarioError::new("", message));
    // a bundled scenario by name, else a file; its data files come from beside it
    let (text, origin, data): (String, String, DataFiles) = match scenario::bundled::scenario(from)
    {
        Some((path, text)) => {
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            let data = move |rel: &str| {
                let at = if dir.is_empty() {
                    rel.to_string()
                } else {
                    format!("{dir}/{rel}")
                };
                scenario::bundled::file(&at).map(|t| t.as_bytes().to_vec())
            };
            (
                text.to_string(),
                format!("the bundled scenario scenarios/{path}"),
                Box::new(data),
            )
        }
        None if Path::new(from).is_file() => {
            let text = std::fs::read_to_string(from).map_err(|e| Error::Io {
                context: format!("cannot read {from}"),
                source: e,
                user_path: true,
            })?;
            // a scenario that does not load is refused with its own lines
            // named, before anything is written
            scenario::load_str(&text, Path::new(from), &LoadOptions::default())?;
            let dir = Path::new(from)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            (
                text,
                from.to_string(),
                Box::new(move |rel: &str| std::fs::read(dir.join(rel)).ok()),
            )
        }
        None => {
            let names = scenario::bundled::names();
            return Err(usage(format!(
                "--from {from}: no bundled scenario or file of that name{}; `resim new --list` lists them",
                crate::error::did_you_mean(from, names.iter().copied())
            )));
        }
    };
    let stem = target
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (text, files) = scenario::starting_point(&text, &stem, &origin).map_err(usage)?;
    let dir = target.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut writes = vec![(target.clone(), text.into_bytes())];
    for rel in files {
        // an absolute path reads the same file from the new scenario: nothing
        // to copy; a path out of the folder (`../data/x.csv`) would be copied
        // out of the new one's, wherever that leads
        if Path::new(&rel).is_absolute() {
            continue;
        }
        if Path::new(&rel)
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        {
            return Err(usage(format!(
                "{origin} reads {rel}, outside its folder: resim new copies only the files in its folder and below; copy it by hand and change the path"
            )));
        }
        let bytes = data(&rel).ok_or_else(|| {
            usage(format!(
                "{origin} reads {rel}, which is not beside it: copy it by hand"
            ))
        })?;
        writes.push((dir.join(&rel), bytes));
    }
    put_new(&writes, &target)?;
    for (path, _) in &writes {
        out_line(&format!("wrote {}", path.display()))?;
    }
    out_line(&format!(
        "next: resim run {} (then open the report it names)",
        target.display()
    ))
}

/// Writes the files of a new scenario (`target` the scenario): none may
/// exist, and the scenario must load; on a failure none is left behind.
fn put_new(writes: &[(PathBuf, Vec<u8>)], target: &Path) -> Result<(), Error> {
    // a broken link counts: writing through it would put the file elsewhere
    for (path, _) in writes {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(Error::from(crate::error::ScenarioError::new(
                "",
                format!(
                    "{} exists already: choose another name (resim new never overwrites)",
                    path.display()
                ),
            )));
        }
    }
    let mut written = Vec::new();
    let done = write_new(writes, &mut written)
        // what it wrote must load
        .and_then(|()| {
            scenario::load(target, &LoadOptions::default())
                .map(drop)
                .map_err(Error::from)
        });
    if let Err(e) = done {
        // nothing left behind: every file written was new
        for path in written {
            let _ = std::fs::remove_file(path);
        }
        return Err(e);
    }
    Ok(())
}

/// Writes each new file (never one that exists, nor through a link), noting
/// in `written` those it created.
fn write_new<'a>(
    writes: &'a [(PathBuf, Vec<u8>)],
    written: &mut Vec<&'a Path>,
) -> Result<(), Error> {
    use std::io::Write;
    for (path, bytes) in writes {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::Io {
                context: format!("cannot create {}", parent.display()),
                source: e,
                user_path: true,
            })?;
        }
        let io = |e| Error::Io {
            context: format!("cannot write {}", path.display()),
            source: e,
            user_path: true,
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(io)?;
        written.push(path);
        file.write_all(bytes).map_err(io)?;
    }
    Ok(())
}

/// The import's warnings on stderr: the first [`SHOWN_WARNINGS`], then how
/// many more the import report holds (it holds every one).
fn import_warnings(done: &crate::import::Imported) {
    let all = &done.report.warnings;
    for w in all.iter().take(SHOWN_WARNINGS) {
        warn(w);
    }
    if all.len() > SHOWN_WARNINGS {
        warn(&format!(
            "{} more warnings; every one is in {} (its Warnings section)",
            all.len() - SHOWN_WARNINGS,
            done.report_file.display()
        ));
    }
}

/// The warnings of an import stderr shows before it points to the report.
const SHOWN_WARNINGS: usize = 20;

/// A warning on stderr, `warning: ` first, escaped like errors; a closed stderr
/// is not an error (nor a panic, as with `eprintln!`).
fn warn(text: &str) {
    note(&format!("warning: {text}"));
}

/// A line on stderr, escaped like errors, never a panic.
fn note(text: &str) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        crate::error::printable(text)
    );
}

/// Prints a line on stdout (see [`out_text`]).
fn out_line(text: &str) -> Result<(), Error> {
    out_text(&format!("{text}\n"))
}

/// Prints text on stdout. A reader that went away (`resim run ... | head`) is not
/// an error: the rest of the report is simply not printed (the files are written
/// already). Any other failure (a full disk behind `>file`) is exit code 1 with a
/// message, never a panic as `print!` would give.
fn out_text(text: &str) -> Result<(), Error> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            context: "cannot write the report to stdout".into(),
            source: e,
            user_path: false,
        }),
        _ => Ok(()),
    }
}

/// Two scenarios whose files share a name (`a/x.toml b/x.toml`) would write into
/// the same folder, the second silently replacing the first: refused before
/// anything runs.
fn check_distinct_outputs(
    scenarios: &[scenario::Scenario],
    out: Option<&Path>,
    several: bool,
) -> Result<(), Error> {
    let mut seen: std::collections::HashMap<PathBuf, &Path> = std::collections::HashMap::new();
    for s in scenarios {
        let dir = output_dir(out, &s.stem(), several);
        // a folder named after the file that is no folder of its own: `..toml`
        // writes into the folder above, `index.html.toml` where the index of
        // several goes, `.resim-files.toml` where the record of resim's files is
        let stem = s.stem();
        let named = out.is_none() || several;
        if named
            && [
                "",
                ".",
                "..",
                crate::report::html::INDEX,
                crate::report::folder::RECORD,
            ]
            .contains(&stem.as_str())
        {
            return Err(ScenarioError::new(
                "",
                format!(
                    "its output folder would be {}, named after the file, which is not a folder of its own there: rename the file{}",
                    dir.display(),
                    if several { "" } else { ", or give --out" }
                ),
            )
            .in_file(&s.file)
            .into());
        }
        if let Some(first) = seen.insert(dir.clone(), &s.file) {
            return Err(ScenarioError::new(
                "",
                format!(
                    "writes its CSV files into {}, as {} does: run them separately with their own --out, or rename one",
                    dir.display(),
                    first.display()
                ),
            )
            .in_file(&s.file)
            .into());
        }
    }
    Ok(())
}

/// `out/<stem>` by default; `--out DIR` itself for one scenario, `DIR/<stem>` for several.
pub(crate) fn output_dir(out: Option<&Path>, stem: &str, several: bool) -> PathBuf {
    match out {
        None => Path::new("out").join(stem),
        Some(d) if several => d.join(stem),
        Some(d) => d.to_path_buf(),
    }
}

/// The process's command line, each argument quoted for a POSIX shell when needed.
fn command_line() -> String {
    std::env::args()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
