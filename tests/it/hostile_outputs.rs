//! Output paths under attack: `--spans FILE` naming a device, a pipe, a link,
//! the run's own output folder or the scenario; `resim import --out` and
//! `resim new NAME` naming a folder or holding control characters; an import
//! over a data folder written before. Each is written into, or refused
//! before anything is written; nothing is replaced that resim did not write.

use crate::common::{resim, root};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `resim run` of a short run of the starter scenario into `out`, with `args`.
fn run(out: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
    resim()
        .args([
            "run",
            "-q",
            "--no-report",
            "--set",
            "workload.duration_ms=1000",
        ])
        .args(["--set", "faults=[]", "--out"])
        .arg(out)
        .args(args)
        .arg(root().join("scenarios/examples/starter.toml"))
        .output()
        .expect("resim runs")
}

fn spans(out: &Path, file: &Path) -> std::process::Output {
    run(out, &["--spans".as_ref(), file.as_os_str()])
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2 and exactly `message` on stderr.
fn refused(o: &std::process::Output, message: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert_eq!(stderr(o), format!("error: {message}\n"));
}

/// Every path under `dir`, relative to it, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    out.sort();
    out
}

fn otlp(bytes: &[u8]) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_slice(bytes).expect("OTLP JSON");
    assert!(
        doc["resourceSpans"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
    doc
}

#[test]
fn spans_into_a_named_pipe_reach_its_reader_and_the_pipe_stays() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("spans.pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success(), "mkfifo");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = fifo.clone();
    // the reader waits in open() until a writer opens the pipe
    std::thread::spawn(move || tx.send(std::fs::read(&reader).unwrap()).unwrap());
    let o = spans(&dir.path().join("out"), &fifo);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the pipe's reader got the spans (not a file renamed over the pipe)");
    otlp(&got);
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the pipe was replaced: {kind:?}");
}

#[test]
fn spans_into_a_character_device_write_into_it_and_the_device_stays() {
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    // a null device of the test's own (never the machine's /dev/null); making
    // one needs root, as CI runs
    let made = std::process::Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .output()
        .expect("mknod runs");
    if !made.status.success() {
        let root = std::process::Command::new("id").arg("-u").output().unwrap();
        assert_ne!(
            String::from_utf8_lossy(&root.stdout).trim(),
            "0",
            "mknod as root failed"
        );
        eprintln!("skipped: making a device node needs root");
        return;
    }
    let o = spans(&dir.path().join("out"), &null);
    assert!(o.status.success(), "{}", stderr(&o));
    let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
    assert!(kind.is_char_device(), "the device was replaced: {kind:?}");
}

#[test]
fn spans_through_a_link_replace_its_target_and_keep_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let o = spans(&dir.path().join("out"), &link);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    otlp(&std::fs::read(&real).unwrap());
}

#[test]
fn spans_that_would_clobber_or_be_lost_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let broken = dir.path().join("broken.json");
    std::os::unix::fs::symlink("nowhere/spans.json", &broken).unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::copy(root().join("scenarios/examples/starter.toml"), &scenario).unwrap();
    let in_out = out.join("requests.csv");
    let trailing = format!("{}/", dir.path().join("newdir").display());
    let cases: Vec<(PathBuf, String)> = vec![
        (
            in_out.clone(),
            format!(
                "--spans {}: is in the run's output folder {}, whose files the run replaces: name a file outside it",
                in_out.display(),
                out.display()
            ),
        ),
        (
            trailing.clone().into(),
            format!(
                "--spans {trailing}: names a folder, not a file; name the file to write (as {trailing}NAME)"
            ),
        ),
        (
            broken.clone(),
            format!(
                "--spans {}: is a broken link (to nowhere/spans.json); name a file, or make the link's target",
                broken.display()
            ),
        ),
    ];
    for (file, message) in cases {
        refused(&spans(&out, &file), &message);
        // before the run: the output folder is as it was (empty)
        assert!(
            listing(&out).is_empty(),
            "{}: {:?}",
            file.display(),
            listing(&out)
        );
    }
    assert!(
        std::fs::symlink_metadata(&broken)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!dir.path().join("newdir").exists());
    // the scenario itself
    let before = std::fs::read(&scenario).unwrap();
    let o = resim()
        .args(["run", "-q", "--no-report", "--out"])
        .arg(&out)
        .arg("--spans")
        .arg(&scenario)
        .arg(&scenario)
        .output()
        .unwrap();
    refused(
        &o,
        &format!(
            "--spans {}: is the scenario file itself: name another file",
            scenario.display()
        ),
    );
    assert_eq!(std::fs::read(&scenario).unwrap(), before);
    // a data file the scenario reads (its measured latencies)
    let data = dir.path().join("lat.csv");
    std::fs::write(&data, "ms\n5\n6\n7\n").unwrap();
    std::fs::write(
        dir.path().join("measured.toml"),
        "[scenario]\nname = \"m\"\n\n[services.api]\nroutes = [\"/api\"]\n\n\
         [services.api.handler]\ntype = \"server\"\nslots = 1\nqueue = 10\n\
         service = { empirical = { file = \"lat.csv\" } }\n\n\
         [workload]\ntype = \"sequence\"\nrequests = 3\n",
    )
    .unwrap();
    let before = std::fs::read(&data).unwrap();
    let o = resim()
        .args(["run", "-q", "--no-report", "--out"])
        .arg(&out)
        .arg("--spans")
        .arg(&data)
        .arg(dir.path().join("measured.toml"))
        .output()
        .unwrap();
    refused(
        &o,
        &format!(
            "--spans {}: is {}, a data file the scenario reads: name another file",
            data.display(),
            data.display()
        ),
    );
    assert_eq!(std::fs::read(&data).unwrap(), before);
}

#[test]
fn resim_new_refuses_a_name_that_is_no_file_name_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("elsewhere/f.toml", dir.path().join("linked.toml")).unwrap();
    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    let cases = [
        (
            "a/",
            "resim new a/: names a folder, not a file; name the file to write (as a/NAME)",
        ),
        (
            ".",
            "resim new .: names a folder, not a file; name the file to write (as ./NAME)",
        ),
        (
            "b/..",
            "resim new b/..: names a folder, not a file; name the file to write (as b/../NAME)",
        ),
        (
            "x\ny",
            "resim new x\\u{000A}y: the name holds U+000A (LINE FEED); name the file without control characters",
        ),
        (
            "z\u{1b}[2J",
            "resim new z\\u{001B}[2J: the name holds U+001B (ESCAPE, which starts terminal escape sequences); name the file without control characters",
        ),
        (
            "linked",
            "linked.toml exists already: choose another name (resim new never overwrites)",
        ),
    ];
    let before = listing(dir.path());
    for (name, message) in cases {
        let o = resim()
            .current_dir(dir.path())
            .args(["new", name])
            .output()
            .unwrap();
        refused(&o, message);
        assert_eq!(listing(dir.path()), before, "{name:?} left a file behind");
    }
    // a scenario to start from that does not load: its own line named, and
    // nothing written
    let bad = root().join("tests/bad/huge-users.toml");
    let o = resim()
        .current_dir(dir.path())
        .args(["new", "mine", "--from"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(&format!("error: {}:", bad.display())),
        "{}",
        stderr(&o)
    );
    assert_eq!(listing(dir.path()), before, "mine.toml left behind");
}

fn import(dir: &Path, out: &str, extra: &[&str]) -> std::process::Output {
    resim()
        .current_dir(dir)
        .args(["import", "-q", "--out", out])
        .args(extra)
        .arg(root().join("tests/fixtures/traces/shop.otlp.json"))
        .output()
        .unwrap()
}

#[test]
fn import_out_that_is_no_file_name_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::create_dir(dir.path().join("f.toml")).unwrap();
    let cases = [
        (
            "d/",
            &[][..],
            "--out d/: names a folder, not a file; name the file to write (as d/NAME)",
        ),
        (
            "n\nl",
            &[],
            "--out n\\u{000A}l: the name holds U+000A (LINE FEED); name the file without control characters",
        ),
        (
            "f.toml",
            &["--force"],
            "--out f.toml: f.toml is a folder; choose another --out",
        ),
    ];
    std::os::unix::fs::symlink("gone.toml", dir.path().join("b.toml")).unwrap();
    let before = listing(dir.path());
    for (out, extra, message) in cases {
        refused(&import(dir.path(), out, extra), message);
        assert_eq!(listing(dir.path()), before, "{out:?} left a file behind");
    }
    // a broken link is refused before the report beside it is written
    refused(
        &import(dir.path(), "b.toml", &["--force"]),
        "--out b.toml: is a broken link (to gone.toml); name a file, or make the link's target",
    );
    assert_eq!(
        listing(dir.path()),
        before,
        "the broken link left a file behind"
    );
    // a link to a file replaces that file, and stays a link
    std::fs::write(dir.path().join("real.toml"), "old").unwrap();
    std::os::unix::fs::symlink("real.toml", dir.path().join("l.toml")).unwrap();
    let o = import(dir.path(), "l.toml", &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(dir.path().join("l.toml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let written = std::fs::read_to_string(dir.path().join("real.toml")).unwrap();
    assert!(
        written.starts_with("# Built by `resim import`"),
        "{written}"
    );
}

#[test]
fn an_import_over_a_data_folder_written_before_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("s-data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("frontend.csv"), "mine\n").unwrap();
    refused(
        &import(dir.path(), "s", &[]),
        "s-data exists already: choose another --out, or give --force to replace it (with its report and data folder)",
    );
    assert_eq!(
        listing(dir.path()),
        [PathBuf::from("s-data"), "s-data/frontend.csv".into()]
    );
    assert_eq!(std::fs::read(data.join("frontend.csv")).unwrap(), b"mine\n");
    let o = import(dir.path(), "s", &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("s.toml").is_file());
    // a file where the data folder goes is refused even with --force
    std::fs::write(dir.path().join("t-data"), "mine").unwrap();
    refused(
        &import(dir.path(), "t", &["--force"]),
        "--out t: t-data (where the data folder goes) is not a folder; choose another --out",
    );
    assert!(!dir.path().join("t.toml").exists());
}

#[test]
fn an_output_folder_that_cannot_be_one_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, "mine").unwrap();
    let starter = root().join("scenarios/examples/starter.toml");
    for command in [
        &["run"][..],
        &["sweep"],
        &[
            "boundary",
            "--axis",
            "workload.rate_rps=10..100",
            "--metric",
            "outcomes.answered_pct",
            "--target",
            "99",
        ],
    ] {
        let o = resim()
            .args(command)
            .args(["-q", "--out"])
            .arg(&file)
            .arg(&starter)
            .output()
            .unwrap();
        refused(
            &o,
            &format!(
                "--out {}: exists and is not a folder; name a folder (it is created when missing)",
                file.display()
            ),
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    let o = run(&dir.path().join("a\nb"), &[]);
    refused(
        &o,
        &format!(
            "--out {}/a\\u{{000A}}b: the name holds U+000A (LINE FEED); name the folder without control characters",
            dir.path().display()
        ),
    );
    assert_eq!(listing(dir.path()), [PathBuf::from("afile")]);
}

#[test]
fn a_folder_of_broken_links_names_one_instead_of_holding_no_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("scenarios");
    std::fs::create_dir(&folder).unwrap();
    std::os::unix::fs::symlink("gone-a.toml", folder.join("a.toml")).unwrap();
    std::os::unix::fs::symlink("gone-b.toml", folder.join("b.toml")).unwrap();
    let message = format!(
        "{}: is a broken link (to gone-a.toml): the scenario it named is gone; remove the link or restore its file",
        folder.join("a.toml").display()
    );
    for command in ["check", "run"] {
        let o = resim()
            .arg(command)
            .arg(&folder)
            .current_dir(dir.path())
            .output()
            .unwrap();
        refused(&o, &message);
    }
    // beside a scenario that loads, the broken link is named too, not skipped
    std::fs::copy(
        root().join("scenarios/examples/starter.toml"),
        folder.join("c.toml"),
    )
    .unwrap();
    let o = resim().arg("check").arg(&folder).output().unwrap();
    refused(&o, &message);
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_sweep_or_boundary_stopped_by_a_run_limit_names_the_file_and_the_replication() {
    let dir = tempfile::tempdir().unwrap();
    let starter = root().join("scenarios/examples/starter.toml");
    let limit = [
        "--set",
        "workload.duration_ms=2000",
        "--set",
        "scenario.max_sim_time_ms=1500",
    ];
    let boundary = [
        "boundary",
        "--axis",
        "workload.rate_rps=10..100",
        "--metric",
        "outcomes.answered_pct",
        "--target",
        "99",
    ];
    for (command, row) in [
        (&["sweep", "-n", "2"][..], ""),
        (&boundary[..], " (compare row rate_rps = 10)"),
    ] {
        let o = resim()
            .args(command)
            .args(["-q", "--out"])
            .arg(dir.path().join("out"))
            .args(limit)
            .arg(&starter)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(
            stderr(&o).lines().next().unwrap(),
            format!(
                "error: {}: scenario `Starter: an API, a store, a retry policy and a slowdown`: the run passed scenario.max_sim_time_ms = 1500 (raise it in [scenario] if the run is meant to be this long){row} (replication 0) (from --set scenario.max_sim_time_ms=1500)",
                starter.display()
            )
        );
    }
}

#[test]
fn resim_new_copies_no_data_file_out_of_the_new_scenarios_folder() {
    let top = tempfile::tempdir().unwrap();
    // everything below top/x; a copy escaping work/ would land in top/data
    let dir = top.path().join("x");
    let dir = &dir;
    let (from, work) = (dir.join("a/b"), dir.join("work"));
    std::fs::create_dir_all(&from).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::copy(
        root().join("scenarios/examples/tariff-latencies.csv"),
        dir.join("data/t.csv"),
    )
    .unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/examples/measured-latencies.toml"))
        .unwrap()
        .replace("\"tariff-latencies.csv\"", "\"../../data/t.csv\"");
    std::fs::write(from.join("m.toml"), &text).unwrap();
    let before = listing(dir);
    let o = resim()
        .current_dir(&work)
        .args(["new", "mine", "--from", "../a/b/m.toml"])
        .output()
        .unwrap();
    refused(
        &o,
        "../a/b/m.toml reads ../../data/t.csv, outside its folder: resim new copies only the files in its folder and below; copy it by hand and change the path",
    );
    // neither the scenario nor a copy two folders above work/ (dir/../data)
    assert_eq!(listing(dir), before);
    assert!(!top.path().join("data").exists());
    // an absolute path is read where it is: nothing copied, and the new scenario loads
    let absolute = dir.join("data/t.csv");
    std::fs::write(
        from.join("abs.toml"),
        text.replace(
            "\"../../data/t.csv\"",
            &format!("{:?}", absolute.display().to_string()),
        ),
    )
    .unwrap();
    let o = resim()
        .current_dir(&work)
        .args(["new", "mine", "--from", "../a/b/abs.toml"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listing(&work), [PathBuf::from("mine.toml")]);
}

#[test]
fn a_scenario_whose_name_makes_no_folder_of_its_own_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let starter = root().join("scenarios/examples/starter.toml");
    let out = dir.path().join("o");
    for name in ["..toml", "index.html.toml", ".resim-files.toml"] {
        let folder = dir.path().join(format!("sc-{name}"));
        std::fs::create_dir(&folder).unwrap();
        std::fs::copy(&starter, folder.join("a.toml")).unwrap();
        std::fs::copy(&starter, folder.join(name)).unwrap();
        let o = resim()
            .args(["run", "-q", "--no-report", "--out"])
            .arg(&out)
            .arg(&folder)
            .output()
            .unwrap();
        let stem = name.strip_suffix(".toml").unwrap();
        refused(
            &o,
            &format!(
                "{}: its output folder would be {}, named after the file, which is not a folder of its own there: rename the file",
                folder.join(name).display(),
                out.join(stem).display()
            ),
        );
        assert!(!out.exists(), "{name}: a run started");
    }
}

#[test]
fn spans_to_standard_output_append_to_what_it_holds_and_need_quiet() {
    let dir = tempfile::tempdir().unwrap();
    // a link of the test's own to standard output (as /dev/stdout is), so that
    // code renaming over it replaces only this link
    let link = dir.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let log = dir.path().join("log.txt");
    std::fs::write(&log, "first line\n").unwrap();
    let appending = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_resim"))
        .args([
            "run",
            "-q",
            "--no-report",
            "--set",
            "workload.duration_ms=500",
        ])
        .args(["--set", "faults=[]", "--out"])
        .arg(dir.path().join("out"))
        .arg("--spans")
        .arg(&link)
        .arg(root().join("scenarios/examples/starter.toml"))
        .stdout(appending)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = std::fs::read(&log).unwrap();
    let rest = text
        .strip_prefix(b"first line\n".as_slice())
        .expect("the log's first line kept");
    otlp(rest);
    // without -q the report goes there too: refused before the run
    let o = resim()
        .args(["run", "--no-report", "--out"])
        .arg(dir.path().join("out2"))
        .arg("--spans")
        .arg(&link)
        .arg(root().join("scenarios/examples/starter.toml"))
        .output()
        .unwrap();
    refused(
        &o,
        &format!(
            "--spans {}: is standard output, where the report is printed too: add -q (and leave out --json) to have the spans alone there",
            link.display()
        ),
    );
    assert!(!dir.path().join("out2").exists());
}
