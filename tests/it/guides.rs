//! Every guide in docs/guides/ is followed as a reader would follow it, and
//! what it says it shows is checked.
//!
//! - **Commands.** Each line of a `sh` block is a command (a line ending in
//!   `\` goes on on the next), run in order in one fresh folder per guide,
//!   where `scenarios/`, `tests/` and `docs/` are the repository's: what one
//!   command writes (`out/...`, an imported scenario) the next one reads, as
//!   on the reader's machine. Every command is `resim ...` (the debug binary
//!   runs it); it must end with exit code 0, or with the code its comment
//!   gives (`# exit code 3: ...`).
//! - **What it printed.** A `text` block after the comment `<!-- output -->`
//!   is what the command before it printed (stdout, then stderr): each of its
//!   lines, but for a line `...`, must be a line of that output, in the same
//!   order (trailing spaces aside). A block after `<!-- file: PATH -->` is
//!   checked so against that file, as the commands before it left it.
//! - **Figures.** A number the prose quotes is a claim below, as
//!   doc_figures.rs writes them: the guide's text with the number in braces,
//!   the command (as the guide writes it, white space aside) and where to
//!   read the number, the path relative to the guide's folder
//!   (`out/gc-pauses-sweep/summary.csv [balancer=round_robin,
//!   metric=outcomes.answered_pct] mean`). It is read right after that
//!   command ran, before a later command writes the folder again.
//!
//! The guides keep their runs short (a few seeds, `--set
//! workload.duration_ms=...`) so that the debug build follows all of them in
//! about a minute; where randomness matters they quote a sweep's means with
//! their intervals, not one seed.

use crate::common::{Csv, resim, root};
use crate::doc_figures::{compare_numbers, one_space, split_numbers};
use std::collections::HashMap;

/// A figure a guide quotes: its text with the numbers in braces, the command
/// that computes it (as the guide writes it, a line may end in `\`) and where
/// to read each number.
struct Figure {
    text: &'static str,
    after: &'static str,
    nums: Vec<String>,
}

impl Figure {
    /// The command, one line, white space as one space.
    fn command(&self) -> String {
        one_space(&self.after.replace("\\\n", " "))
    }
}

fn figure(text: &'static str, after: &'static str, nums: &[&str]) -> Figure {
    Figure {
        text,
        after,
        nums: nums.iter().map(|s| s.to_string()).collect(),
    }
}

/// What a guide holds, in order.
#[derive(Debug)]
enum Step {
    /// A command: its line in the guide, its text (one line, white space as
    /// one space), its words and the exit code it must end with.
    Command {
        line: usize,
        text: String,
        words: Vec<String>,
        code: i32,
    },
    /// An excerpt of the output of the command before it (`None`) or of a
    /// file, with the guide's line where it starts.
    Excerpt {
        line: usize,
        of: Option<String>,
        lines: Vec<String>,
    },
}

/// The words of a command as a POSIX shell splits them (single quotes, double
/// quotes with `\"` and `\\`, a backslash outside quotes), without its
/// comment (from a `#` that starts a word).
fn words(command: &str) -> Result<(Vec<String>, String), String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' if word.is_none() => {
                return Ok((words, chars.collect::<String>().trim().to_string()));
            }
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("an unclosed ' in `{command}`")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            w.push(chars.next().expect("peeked"));
                        }
                        Some('$' | '`') => {
                            return Err(format!("a shell expansion in `{command}`"));
                        }
                        Some(c) => w.push(c),
                        None => return Err(format!("an unclosed \" in `{command}`")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err(format!("a lone \\ ending `{command}`")),
            },
            '|' | '>' | '<' | '&' | ';' | '$' | '`' | '*' | '?' => {
                return Err(format!(
                    "`{c}` in `{command}`: a guide's commands are plain"
                ));
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok((words, String::new()))
}

/// The exit code a command's comment gives (`exit code N`), else 0.
fn exit_code(comment: &str) -> Result<i32, String> {
    match comment.split_once("exit code ") {
        None => Ok(0),
        Some((_, rest)) => {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits
                .parse()
                .map_err(|_| format!("`{comment}`: no number after `exit code`"))
        }
    }
}

/// A guide's commands and excerpts, in order.
fn steps(guide: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut lines = guide.lines().enumerate().peekable();
    // the marker (`<!-- output -->`, `<!-- file: PATH -->`) of the next block
    let mut marker: Option<Option<String>> = None;
    while let Some((i, line)) = lines.next() {
        let line_no = i + 1;
        let trimmed = line.trim();
        if let Some(inner) = trimmed
            .strip_prefix("<!--")
            .and_then(|r| r.strip_suffix("-->"))
        {
            let inner = inner.trim();
            if inner == "output" {
                marker = Some(None);
            } else if let Some(path) = inner.strip_prefix("file:") {
                marker = Some(Some(path.trim().to_string()));
            }
            continue;
        }
        let Some(info) = trimmed.strip_prefix("```") else {
            if !trimmed.is_empty() {
                marker = None;
            }
            continue;
        };
        let mut body = Vec::new();
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push(l.to_string());
        }
        match (info.trim(), marker.take()) {
            (_, Some(of)) => steps.push(Step::Excerpt {
                line: line_no,
                of,
                lines: body,
            }),
            ("sh", None) => {
                let mut pending = String::new();
                let mut start = line_no + 1;
                for (k, l) in body.iter().enumerate() {
                    if pending.is_empty() {
                        start = line_no + 1 + k;
                    }
                    if let Some(head) = l.trim_end().strip_suffix('\\') {
                        pending.push_str(head);
                        pending.push(' ');
                        continue;
                    }
                    pending.push_str(l);
                    let (w, comment) = words(&pending).map_err(|e| format!("line {start}: {e}"))?;
                    if !w.is_empty() {
                        if w[0] != "resim" {
                            return Err(format!(
                                "line {start}: `{}` is not a resim command",
                                pending.trim()
                            ));
                        }
                        steps.push(Step::Command {
                            line: start,
                            text: one_space(pending.split(" #").next().unwrap_or("")),
                            words: w,
                            code: exit_code(&comment).map_err(|e| format!("line {start}: {e}"))?,
                        });
                    }
                    pending.clear();
                }
                if !pending.is_empty() {
                    return Err(format!("line {start}: a command ends in `\\`"));
                }
            }
            _ => {}
        }
    }
    Ok(steps)
}

/// Whether `excerpt`'s lines (but `...`) are lines of `text`, in order.
fn holds_excerpt(text: &str, excerpt: &[String]) -> Result<(), String> {
    let mut have = text.lines().map(str::trim_end);
    for want in excerpt.iter().map(|l| l.trim_end()) {
        if want.trim() == "..." || want.is_empty() {
            continue;
        }
        if !have.any(|l| l == want) {
            return Err(format!(
                "no line (after the ones before it) reads\n    {want}"
            ));
        }
    }
    Ok(())
}

/// Every `toml` block that is no excerpt is valid TOML (a reader copies it).
fn toml_blocks_parse(name: &str, guide: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut lines = guide.lines().enumerate();
    let mut after_marker = false;
    while let Some((i, line)) = lines.next() {
        let t = line.trim();
        if t.starts_with("<!--") {
            after_marker = true;
            continue;
        }
        if t == "```toml" {
            let body: Vec<&str> = lines
                .by_ref()
                .map(|(_, l)| l)
                .take_while(|l| !l.trim_start().starts_with("```"))
                .collect();
            if let (false, Err(e)) = (after_marker, body.join("\n").parse::<toml::Table>()) {
                problems.push(format!(
                    "{name}:{}: the TOML block does not parse: {e}",
                    i + 1
                ));
            }
        }
        if !t.is_empty() {
            after_marker = false;
        }
    }
    problems
}

/// Every repository file a guide names (`scenarios/...`, `tests/fixtures/...`,
/// `docs/...`) exists, so a file it only mentions is there too.
fn named_files_exist(name: &str, guide: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, line) in guide.lines().enumerate() {
        for word in line.split(|c: char| c.is_whitespace() || "`'\"(),;:<>[]".contains(c)) {
            let word = word.trim_end_matches('.');
            let named = ["scenarios/", "tests/fixtures/", "docs/"]
                .iter()
                .any(|p| word.starts_with(p));
            if named && word.contains('.') && !root().join(word).exists() {
                problems.push(format!(
                    "{name}:{}: `{word}` is not in the repository",
                    i + 1
                ));
            }
        }
    }
    problems
}

/// A fresh folder where `scenarios/`, `tests/` and `docs/` are the
/// repository's, as in a checkout.
fn reader_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for name in ["scenarios", "tests", "docs"] {
        std::os::unix::fs::symlink(root().join(name), dir.path().join(name))
            .expect("a link to the repository");
    }
    dir
}

/// Follows a guide (docs/guides/NAME) and checks its figures; fails with every
/// problem found.
fn follow(name: &str, figures: Vec<Figure>) {
    let path = root().join("docs/guides").join(name);
    let guide = std::fs::read_to_string(&path).expect("the guide");
    let steps = steps(&guide).unwrap_or_else(|e| panic!("{name}: {e}"));
    let commands: Vec<&String> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Command { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert!(!commands.is_empty(), "{name}: no command to follow");
    let mut problems = Vec::new();
    let prose = one_space(&guide);
    for f in &figures {
        let (plain, numbers) = split_numbers(f.text);
        let plain = one_space(&plain);
        if !prose.contains(&plain) {
            problems.push(format!("{name} no longer says:\n  {plain}"));
        }
        if numbers.len() != f.nums.len() {
            problems.push(format!(
                "{name}: {} numbers in braces but {} readings in:\n  {plain}",
                numbers.len(),
                f.nums.len()
            ));
        }
        let after = f.command();
        if commands.iter().filter(|c| ***c == after).count() != 1 {
            problems.push(format!("{name}: not one command of the guide is `{after}`"));
        }
    }
    problems.extend(toml_blocks_parse(name, &guide));
    problems.extend(named_files_exist(name, &guide));
    let dir = reader_folder();
    let mut printed = String::new();
    for step in &steps {
        match step {
            Step::Command {
                line,
                text,
                words,
                code,
            } => {
                let out = resim()
                    .current_dir(dir.path())
                    .args(&words[1..])
                    .output()
                    .expect("resim runs");
                printed = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                if out.status.code() != Some(*code) {
                    problems.push(format!(
                        "{name}:{line}: `{text}` ended with {:?}, not exit code {code}:\n{printed}",
                        out.status.code()
                    ));
                    continue;
                }
                let mut files: HashMap<std::path::PathBuf, Csv> = HashMap::new();
                for f in figures.iter().filter(|f| f.command() == *text) {
                    let (plain, numbers) = split_numbers(f.text);
                    if numbers.len() != f.nums.len() {
                        continue;
                    }
                    for p in compare_numbers(&mut files, dir.path(), &numbers, &f.nums, text) {
                        problems.push(format!("{name}: {p}\n  {}", one_space(&plain)));
                    }
                }
            }
            Step::Excerpt { line, of, lines } => {
                let (what, text) = match of {
                    None => ("the output before it".to_string(), printed.clone()),
                    Some(file) => (
                        file.clone(),
                        std::fs::read_to_string(dir.path().join(file))
                            .unwrap_or_else(|e| format!("({file}: {e})")),
                    ),
                };
                if let Err(e) = holds_excerpt(&text, lines) {
                    problems.push(format!(
                        "{name}:{line}: the block is not in {what}: {e}\n{what}:\n{text}"
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) following docs/guides/{name}:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

// ------------------------------------------------------------------ the guides

/// The guides, each with the test that follows it.
const GUIDES: [&str; 8] = [
    "choose-a-balancer.md",
    "retries-and-budgets.md",
    "tipping-point.md",
    "per-pod-limits.md",
    "ci-gate.md",
    "import-your-mesh.md",
    "scenario-from-traces.md",
    "tune-retries.md",
];

#[test]
fn choose_a_balancer() {
    let gc_run = "resim run scenarios/gc-pauses.toml";
    let pod1 =
        |b: &str| format!("out/gc-pauses/replicas.csv [balancer={b}, replica=1] arrived_pct");
    let gc_sweep = "resim sweep scenarios/gc-pauses.toml -n 10 --set workload.duration_ms=30000";
    let faster = |b: &str| {
        format!(
            "out/gc-pauses-sweep/paired.csv [balancer={b}, versus=round_robin, \
             metric=outcomes.p99_all_ms] mean; x -1"
        )
    };
    let maxconn = "resim run scenarios/balancers-haproxy-maxconn.toml";
    let slow = |v: &str| {
        format!("out/balancers-haproxy-maxconn/replicas.csv [variant={v}, replica=4] arrived_pct")
    };
    let queue = |col: &str| {
        format!("out/balancers-haproxy-maxconn/proxy_queue.csv [variant=maxconn] {col}")
    };
    follow(
        "choose-a-balancer.md",
        vec![
            figure(
                "round robin sends it {16.67} %, least request {15.75} % and peak EWMA \
                 {10.45} %.",
                gc_run,
                &[
                    &pod1("round_robin"),
                    &pod1("least_request"),
                    &pod1("peak_ewma"),
                ],
            ),
            figure(
                "the least-loaded balancers take {35} ms (least request) and {38} ms (peak EWMA) \
                 off the p99 over all requests",
                gc_sweep,
                &[&faster("least_request"), &faster("peak_ewma")],
            ),
            figure(
                "Plain round robin sends the slow backend its quarter, {25} % of the requests;",
                maxconn,
                &[&slow("round-robin")],
            ),
            figure(
                "With `max_conn = 4` it gets {5.70} %",
                maxconn,
                &[&slow("maxconn")],
            ),
            figure(
                "{228} of {9052} requests, {4.60} ms on average.",
                maxconn,
                &[&queue("queued"), &queue("requests"), &queue("mean_wait_ms")],
            ),
        ],
    );
}

#[test]
fn every_guide_is_followed_by_a_test() {
    let mut found: Vec<String> = std::fs::read_dir(root().join("docs/guides"))
        .expect("docs/guides")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md") && n != "README.md")
        .collect();
    found.sort();
    let mut listed: Vec<String> = GUIDES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "docs/guides/ against the guides this file follows"
    );
}

/// The parsing a guide's commands and excerpts rests on.
#[test]
fn a_guide_is_read_as_a_reader_reads_it() {
    let (w, comment) =
        words(r#"resim run a.toml --set 'x=["a", "b"]' --set "y=\"z\"" # exit code 3: fails"#)
            .unwrap();
    assert_eq!(
        w,
        [
            "resim",
            "run",
            "a.toml",
            "--set",
            r#"x=["a", "b"]"#,
            "--set",
            r#"y="z""#
        ]
    );
    assert_eq!(exit_code(&comment), Ok(3));
    assert_eq!(exit_code(""), Ok(0));
    assert!(words("resim run a.toml | head").is_err());
    let guide = "text\n\n```sh\nresim run a.toml \\\n  --set x=1   # a comment\n\nresim sweep b.toml # exit code 3\n```\n\n<!-- output -->\n```text\nline one\n...\nline three\n```\n\n```toml\nnot = \"run\"\n```\n";
    let s = steps(guide).unwrap();
    assert_eq!(s.len(), 3, "{s:?}");
    match &s[0] {
        Step::Command {
            text, words, code, ..
        } => {
            assert_eq!(text, "resim run a.toml --set x=1");
            assert_eq!(words.len(), 5);
            assert_eq!(*code, 0);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&s[1], Step::Command { code: 3, .. }));
    match &s[2] {
        Step::Excerpt {
            of: None, lines, ..
        } => {
            assert!(holds_excerpt("line one\nline two\nline three  \n", lines).is_ok());
            assert!(holds_excerpt("line three\nline one\n", lines).is_err());
        }
        other => panic!("{other:?}"),
    }
    assert!(steps("```sh\nls out\n```\n").is_err());
}

#[test]
fn retries_and_budgets() {
    let storm = r#"resim run scenarios/retry-storm.toml --set 'compare."faults.0.for_ms"=[2000]'"#;
    let back = |v: &str| format!("out/retry-storm/recovery.csv [variant={v}] recovery_ms");
    let sweep =
        r#"resim sweep scenarios/retry-storm.toml -n 10 --set 'compare."faults.0.for_ms"=[2000]'"#;
    let summary = |v: &str, metric: &str, col: &str| {
        format!("out/retry-storm-sweep/summary.csv [variant={v}, metric={metric}] {col}")
    };
    let band = "resim boundary scenarios/metastable-band.toml \
                --axis policies.retry3.retry.max_attempts=1..8 \
                --metric recovery.stuck --target 0.5 -n 10 --set workload.duration_ms=60000";
    let budgets = r#"resim run scenarios/retry-budgets.toml --set 'compare."dependencies.store.error_rate"=[0.05, 1.0]'"#;
    let calls = |policy: &str, rate: &str, col: &str| {
        format!(
            "out/retry-budgets/calls.csv [workload.call_policy={policy}, error_rate={rate}, \
             caller=main] {col}"
        )
    };
    let same_retries = ["no-budget", "grpc", "finagle", "aws"]
        .map(|p| calls(p, "0.05", "retries"))
        .join(" = ");
    follow(
        "retries-and-budgets.md",
        vec![
            figure(
                "Without a mitigation, 2 s of slowdown cost {88} % of the run's requests.",
                storm,
                &["out/retry-storm/outcomes.csv [variant=baseline] answered_pct; 100 minus"],
            ),
            figure(
                "with the 10 % retry budget it came back {6000} ms after the slowdown ended",
                storm,
                &[&back("retry-budget")],
            ),
            figure(
                "came back within the first window (`recovery_ms` {0}).",
                storm,
                &[&format!("{} = {}", back("codel"), back("adaptive-lifo"))],
            ),
            figure(
                "the budget brings the system back in {7} of 10 seeds, and the median over all ten \
                 (a stuck seed counting as never) is {17} s.",
                sweep,
                &[
                    &summary("retry-budget", "recovery.recovery_ms", "recovered"),
                    &format!(
                        "{}; ms to s",
                        summary("retry-budget", "recovery.recovery_ms", "p50")
                    ),
                ],
            ),
            figure(
                "CoDel and adaptive LIFO recover in {10} of 10.",
                sweep,
                &[&format!(
                    "{} = {}",
                    summary("codel", "recovery.recovery_ms", "recovered"),
                    summary("adaptive-lifo", "recovery.recovery_ms", "recovered")
                )],
            ),
            figure(
                "(`answered_pct` {91.22} % here, the fault included)",
                sweep,
                &[&summary("codel", "outcomes.answered_pct", "mean")],
            ),
            figure(
                "(its `p99_all_ms` above {2} s)",
                sweep,
                &[&format!(
                    "{}; ms to s",
                    summary("adaptive-lifo", "outcomes.p99_all_ms", "mean")
                )],
            ),
            figure(
                "with 4 attempts no run stays stuck, with 5 {9} of 10 do.",
                band,
                &[
                    "out/metastable-band-boundary/boundary.csv [max_attempts=5, run_length=1] estimate; x 10",
                ],
            ),
            figure(
                "{823} retries of {14945} calls without a budget",
                budgets,
                &[&same_retries, &calls("no-budget", "0.05", "first_tries")],
            ),
            figure(
                "refuses a few: {802}.",
                budgets,
                &[&calls("envoy", "0.05", "retries")],
            ),
            figure(
                "no budget means {3.00} attempts per call",
                budgets,
                &[&calls("no-budget", "1", "amplification")],
            ),
            figure(
                "gRPC's retry throttling stops retrying ({1.003}), the AWS SDKs' quota lets {100} \
                 retries through and then none ({1.007}), Finagle's budget keeps 20 % plus 10 a \
                 second ({1.30}), and Envoy's bounds the retries in flight ({1.29}).",
                budgets,
                &[
                    &calls("grpc", "1", "amplification"),
                    &calls("aws", "1", "retries"),
                    &calls("aws", "1", "amplification"),
                    &calls("finagle", "1", "amplification"),
                    &calls("envoy", "1", "amplification"),
                ],
            ),
        ],
    );
}

#[test]
fn tipping_point() {
    let closed = "resim run scenarios/io22-capacity-ladder.toml";
    let step =
        |c: &str, col: &str| format!("out/io22-capacity-ladder/ladder.csv [concurrency={c}] {col}");
    let open = "resim run scenarios/io22-open-ladder.toml";
    let open_step =
        |c: &str, col: &str| format!("out/io22-open-ladder/ladder.csv [concurrency={c}] {col}");
    let starter = "resim boundary scenarios/examples/starter.toml --set 'faults=[]' \
                   --set workload.duration_ms=10000 --axis workload.rate_rps=100..1000 \
                   --metric outcomes.answered_pct --target 99 -n 5 --tolerance 2%";
    let crossing = |col: &str| format!("out/starter-boundary/crossing.csv [] {col}");
    let band = "resim boundary scenarios/metastable-band.toml --axis workload.rate_rps=10..40 \
                --metric recovery.stuck --target 0.5 -n 10 --set workload.duration_ms=60000";
    follow(
        "tipping-point.md",
        vec![
            figure(
                "At c = 12 every request is still processed, yet {20} of {60} come after their \
                 client gave up",
                closed,
                &[&step("12", "timed_out"), &step("12", "sent")],
            ),
            figure(
                "the last step where at least 99 % of the requests succeed (`[analysis] \
                 acceptance`), is c = {8}",
                closed,
                &["out/io22-capacity-ladder/findings.csv [] true_limit"],
            ),
            figure(
                "A limit declared by \"throughput still grows\" would say {20};",
                closed,
                &["out/io22-capacity-ladder/limit_rules.csv [rule=throughput] declared_limit"],
            ),
            figure(
                "at 200 only {13} of {200} do.",
                open,
                &[&open_step("8", "successful"), &open_step("8", "sent")],
            ),
            figure(
                "The crossing is at {515} requests a second (`out/starter-boundary/crossing.csv`, \
                 `boundary`), between {508} and {522}.",
                starter,
                &[
                    &crossing("boundary"),
                    &crossing("bracket_low"),
                    &crossing("bracket_high"),
                ],
            ),
            figure(
                "At 1000 requests a second {53} % are answered.",
                starter,
                &["out/starter-boundary/boundary.csv [rate_rps=1000] estimate"],
            ),
            figure(
                "The edge it finds, {22.2}, is below the theory's 25",
                band,
                &["out/metastable-band-boundary/crossing.csv [run_length=1] boundary"],
            ),
            figure(
                "on 120 s runs the crossing is at {24.06}",
                band,
                &["out/metastable-band-boundary/crossing.csv [run_length=2] boundary"],
            ),
        ],
    );
}

#[test]
fn per_pod_limits() {
    let adaptive = "resim run scenarios/adaptive-per-pod.toml";
    let limit =
        |filter: &str, col: &str| format!("out/adaptive-per-pod/concurrency.csv [{filter}] {col}");
    let sweep = "resim sweep scenarios/adaptive-per-pod.toml -n 5";
    let quota = "resim sweep docs/guides/per-pod-quota.toml -n 10";
    let failed = |b: &str| {
        format!(
            "out/per-pod-quota-sweep/summary.csv [variant=per-pod, balancer={b}, \
             metric=outcomes.answered_pct] mean; 100 minus"
        )
    };
    follow(
        "per-pod-limits.md",
        vec![
            figure(
                "the shared limit's mean is {20.9}, and its most requests in flight at once {28}, \
                 against at most {20} in any one pod.",
                adaptive,
                &[
                    &limit("scope=service", "mean_limit"),
                    &limit("scope=service", "max_in_flight"),
                    &limit("scope=replica", "max max_in_flight"),
                ],
            ),
            figure(
                "costs more than a quarter of the traffic ({27.81} points, paired)",
                sweep,
                &[
                    "out/adaptive-per-pod-sweep/paired.csv [scope=service, versus=replica, \
                   metric=outcomes.answered_pct] mean; x -1",
                ],
            ),
            figure(
                "{3.54} % of the requests behind random picks, and {1.62} % behind Envoy's least \
                 request",
                quota,
                &[&failed("random"), &failed("least_request")],
            ),
        ],
    );
}

#[test]
fn ci_gate() {
    let headroom = "resim boundary scenarios/examples/starter.toml \
                    --axis workload.rate_rps=100..400 --metric thresholds.pass --target 0.5 \
                    -n 5 --tolerance 5%";
    let point = |col: &str| format!("out/starter-boundary/boundary.csv [rate_rps=250] {col}");
    follow(
        "ci-gate.md",
        vec![figure(
            "At 250 requests a second the gate passes in {12} of {20} seeds",
            headroom,
            &[
                &format!("{}; x 20", point("estimate")),
                &point("replications"),
            ],
        )],
    );
}

#[test]
fn import_your_mesh() {
    let pod_down = r#"resim run reviews.toml \
        --set 'faults=[{ target = "reviews#2", kind = "down", at_ms = 10000, for_ms = 30000 }]' \
        --set 'compare={ "services.reviews.outlier_detection.max_ejection_pct" = [10, 50] }'"#;
    let slow = r#"resim run catalog.toml \
        --set 'faults=[{ target = "shop-catalog", kind = "latency_factor", value = 3.0, at_ms = 20000, for_ms = 10000 }]'"#;
    let search = |col: &str| format!("out/catalog/calls.csv [workload=shop-catalog-search] {col}");
    follow(
        "import-your-mesh.md",
        vec![
            figure(
                "the down pod is ejected at its fifth failure, {10.016} s into the run",
                pod_down,
                &[
                    "out/reviews/ejections.csv [max_ejection_pct=50, replica=2] ejected_at_ms; ms to s",
                ],
            ),
            figure(
                "least request sends it more than its share: {42.93} % of the attempts",
                pod_down,
                &["out/reviews/replicas.csv [max_ejection_pct=10, replica=2] arrived_pct"],
            ),
            figure(
                "Envoy's budget of 4 retries in flight refuses {373} of them (`calls.csv`, \
                 `budget_refused`), and {514} requests fail.",
                pod_down,
                &[
                    "out/reviews/calls.csv [max_ejection_pct=10] budget_refused",
                    "out/reviews/outcomes.csv [max_ejection_pct=10] failed",
                ],
            ),
            figure(
                "counts {1263} hedged copies for {6038} calls, {1.21} attempts per call",
                slow,
                &[
                    &search("hedges"),
                    &search("first_tries"),
                    &search("amplification"),
                ],
            ),
            figure(
                "`retryThrottling` counts failed copies (`budget_refused` is {0})",
                slow,
                &[&search("budget_refused")],
            ),
        ],
    );
}

#[test]
fn scenario_from_traces() {
    let traced = "resim run scenarios/examples/starter.toml --set 'faults=[]' --spans spans.json \
                  --spans-sample 0.1";
    let what_if = r#"resim run api.toml --set services.api.handler.slots=8 --set services.api.handler.queue=32 \
        --set 'faults=[{ target = "store", kind = "latency_factor", value = 4.0, at_ms = 10000, for_ms = 5000 }]'"#;
    let starter = |col: &str| format!("out/starter/outcomes.csv [] {col}");
    let api = |col: &str| format!("out/api/outcomes.csv [] {col}");
    follow(
        "scenario-from-traces.md",
        vec![
            figure(
                "Only {66.76} % of the requests are answered",
                "resim run shop.toml --set workload.rate_rps=50 --set workload.duration_ms=20000",
                &["out/shop/outcomes.csv [] answered_pct"],
            ),
            figure(
                "The original run answered half its requests within {13.10} ms and 99 % within \
                 {47.63} ms;",
                traced,
                &[&starter("p50_all_ms"), &starter("p99_all_ms")],
            ),
            figure(
                "the model built from a tenth of its requests, within {12.54} ms and {48.54} ms.",
                "resim run api.toml",
                &[&api("p50_all_ms"), &api("p99_all_ms")],
            ),
            figure(
                "The model answers {97.82} % of its requests, shedding {134} when its queue is full.",
                what_if,
                &[&api("answered_pct"), &api("shed")],
            ),
            figure(
                "answers {97.23} % and sheds {168}.",
                "resim run scenarios/examples/starter.toml",
                &[&starter("answered_pct"), &starter("shed")],
            ),
        ],
    );
}

#[test]
fn tune_retries() {
    let sweep =
        "resim sweep scenarios/retry-storm.toml --set 'compare.variant=[\"baseline\"]' -n 24";
    let tune = "resim tune scenarios/retry-storm.toml --set 'compare.variant=[\"baseline\"]' \\
  --vary policies.retry3.timeout_ms=250..3000 --vary policies.retry3.retry.max_attempts=1..4 \\
  --maximize outcomes.answered_pct --constraint \"recovery.stuck <= 0.2\" \\
  -n 6 --max-replications 24 --budget 1000";
    let fresh = |col: &str| {
        format!(
            "out/retry-storm-tune/fresh.csv [row=baseline 10000, \
             figure=maximize outcomes.answered_pct] {col}"
        )
    };
    follow(
        "tune-retries.md",
        vec![
            figure(
                "the load stays near twice what the backend can do, and {11.6} % of the \
                 requests are answered.",
                sweep,
                &[
                    "out/retry-storm-sweep/summary.csv [variant=baseline, for_ms=2000, \
                   metric=outcomes.answered_pct] mean",
                ],
            ),
            figure(
                "infeasible ({11} were:",
                tune,
                &["out/retry-storm-tune/tune.csv [status=infeasible, row=baseline 500] count"],
            ),
            figure(
                "was dropped as beaten ({18}).",
                tune,
                &["out/retry-storm-tune/tune.csv [status=beaten, row=baseline 500] count"],
            ),
            figure(
                "{56.0} % answered [{52.5}, {59.6}] in the worst row",
                tune,
                &[&fresh("mean"), &fresh("low"), &fresh("high")],
            ),
        ],
    );
}
