//! IO22-IO25 (seed 003, finding the capacity limit): every number of the digest,
//! asserted from the CSV files the bundled scenarios write; then the same ladder
//! with other slots, queue, service time, steps, waves and timeouts (hand-computed
//! expectations), and the abandon extension on a case small enough to trace.

use crate::common::*;
use std::collections::HashMap;

const LADDER: &str = "scenarios/io22-capacity-ladder.toml";
const QUEUE: &str = "scenarios/io22-queue-length.toml";
const ABANDON: &str = "scenarios/io22-abandon.toml";

/// c, sent, processed, rejected, p95 wait rounds, successful, timed out.
type StepRow = (u32, u32, u32, u32, u32, u32, u32);

/// The seed's ladder table; timed out = processed - successful.
const SEED_STEPS: [StepRow; 9] = [
    (1, 5, 5, 0, 0, 5, 0),
    (2, 10, 10, 0, 0, 10, 0),
    (4, 20, 20, 0, 0, 20, 0),
    (8, 40, 40, 0, 1, 40, 0),
    (12, 60, 60, 0, 2, 40, 20),
    (16, 80, 80, 0, 3, 40, 40),
    (20, 100, 100, 0, 4, 40, 60),
    (24, 120, 100, 20, 4, 40, 60),
    (32, 160, 100, 60, 4, 40, 60),
];

/// rule, declared limit, false pass, false fail.
const SEED_RULES: [(&str, &str, &str, &str); 6] = [
    ("p95<=0", "4", "0", "1"),
    ("p95<=1", "8", "0", "0"),
    ("p95<=2", "12", "1", "0"),
    ("p95<=3", "16", "2", "0"),
    ("p95<=4", "32", "5", "0"),
    ("throughput", "20", "3", "0"),
];

fn cell<'a>(row: &'a HashMap<String, String>, col: &str) -> &'a str {
    row.get(col)
        .unwrap_or_else(|| panic!("no column {col} in {row:?}"))
}

fn assert_steps(csv: &Csv, filter: &[(&str, &str)], expected: &[StepRow]) {
    let rows = csv.select(filter);
    assert_eq!(rows.len(), expected.len(), "step rows for {filter:?}");
    for (row, &(c, sent, processed, rejected, p95, successful, timed_out)) in
        rows.iter().zip(expected)
    {
        let want = [
            ("concurrency", c),
            ("sent", sent),
            ("processed", processed),
            ("rejected", rejected),
            ("p95_wait_rounds", p95),
            ("successful", successful),
            ("timed_out", timed_out),
        ];
        for (col, v) in want {
            assert_eq!(num(row, col), f64::from(v), "c = {c}, column {col}");
        }
    }
}

fn assert_rules(csv: &Csv, expected: &[(&str, &str, &str, &str)]) {
    assert_eq!(csv.rows.len(), expected.len(), "rule rows");
    for (row, (rule, declared, pass, fail)) in csv.rows.iter().zip(expected) {
        assert_eq!(cell(row, "rule"), *rule);
        assert_eq!(cell(row, "declared_limit"), *declared, "{rule}");
        assert_eq!(cell(row, "false_pass"), *pass, "{rule}");
        assert_eq!(cell(row, "false_fail"), *fail, "{rule}");
    }
}

#[test]
fn the_ladder_matches_the_seed_table_step_by_step() {
    let dir = run_into(&scenario(LADDER), &["--quiet"]);
    let ladder = Csv::read(&dir.path().join("ladder.csv"));
    assert_eq!(
        ladder.headers,
        [
            "concurrency",
            "sent",
            "processed",
            "rejected",
            "p95_wait_rounds",
            "successful",
            "timed_out"
        ]
    );
    assert_steps(&ladder, &[], &SEED_STEPS);
    // the prose's slip: the last five steps processed 440 (not 400), 240 timed out
    let last_five = &ladder.rows[4..];
    let processed: f64 = last_five.iter().map(|r| num(r, "processed")).sum();
    let timed_out: f64 = last_five.iter().map(|r| num(r, "timed_out")).sum();
    assert_eq!((processed, timed_out), (440.0, 240.0));

    let findings = Csv::read(&dir.path().join("findings.csv"));
    assert_eq!(
        findings.headers,
        [
            "saturation_concurrency",
            "knee_concurrency",
            "true_limit",
            "max_wait_rounds",
            "slots_full_concurrency",
            "queue_full_concurrency"
        ]
    );
    let f = findings.row(&[]);
    assert_eq!(cell(f, "saturation_concurrency"), "24");
    assert_eq!(cell(f, "knee_concurrency"), "12");
    assert_eq!(cell(f, "true_limit"), "8");
    assert_eq!(cell(f, "max_wait_rounds"), "1", "IO24: at most one round");
    // 4 slots fill at c = 8 (c = 4 exactly fits them), a queue of 16 overflows
    // at c = 24 (4 + 16 = 20 < 24): where saturation_concurrency = 24 comes from
    assert_eq!(cell(f, "slots_full_concurrency"), "8");
    assert_eq!(cell(f, "queue_full_concurrency"), "24");

    let rules = Csv::read(&dir.path().join("limit_rules.csv"));
    assert_eq!(
        rules.headers,
        ["rule", "declared_limit", "false_pass", "false_fail"]
    );
    assert_rules(&rules, &SEED_RULES);

    let totals = Csv::read(&dir.path().join("totals.csv"));
    let t = totals.row(&[]);
    assert_eq!(cell(t, "steps"), "9");
    assert_eq!(cell(t, "sent"), "595");
    assert_eq!(cell(t, "accepted"), "515");
    assert_eq!(cell(t, "rejected"), "80");
    assert_eq!(cell(t, "timed_out"), "240");

    let services = Csv::read(&dir.path().join("services.csv"));
    assert_eq!(
        services.headers,
        [
            "service",
            "arrived",
            "processed",
            "shed",
            "abandoned",
            "mean_wait_ms",
            "p95_wait_ms",
            "p99_wait_ms",
            "mean_response_ms",
            "p95_response_ms",
            "mean_busy_slots",
            "mean_queue",
            "waited_pct",
            "p50_wait_ms",
            "p90_wait_ms",
            "p50_response_ms",
            "p90_response_ms",
            "p99_response_ms",
            "cancelled"
        ]
    );
    let s = services.row(&[("service", "loan")]);
    assert_eq!(
        (num(s, "arrived"), num(s, "processed"), num(s, "shed")),
        (595.0, 515.0, 80.0)
    );
    assert_eq!(num(s, "abandoned"), 0.0);
}

#[test]
fn the_report_gives_a_verdict_per_rule() {
    let out = resim()
        .arg("run")
        .arg(scenario(LADDER))
        .arg("--out")
        .arg(tempfile::tempdir().expect("temp dir").path())
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "p95<=1: declares c = 8; it agrees with the successful share on every step",
        "throughput: declares c = 20, but passes 3 step(s) whose successful share is below 99 % (c = 12, 16, 20)",
        "p95<=0: declares c = 4, but fails 1 step(s) that meet 99 % (c = 8)",
    ] {
        assert!(text.contains(line), "missing `{line}` in\n{text}");
    }
}

#[test]
fn a_longer_queue_raises_throughput_but_not_success() {
    let dir = run_into(&scenario(QUEUE), &["--quiet"]);
    let ladder = Csv::read(&dir.path().join("ladder.csv"));
    assert_eq!(ladder.headers[0], "queue", "axis column first");
    assert_steps(
        &ladder,
        &[("queue", "16")],
        &[(32, 160, 100, 60, 4, 40, 60)],
    );
    assert_steps(
        &ladder,
        &[("queue", "64")],
        &[(32, 160, 160, 0, 7, 40, 120)],
    );
    let ratios = Csv::read(&dir.path().join("ladder_ratios.csv"));
    assert_eq!(
        ratios.headers,
        [
            "queue",
            "processed",
            "successful",
            "processed_ratio",
            "successful_ratio"
        ]
    );
    let q64 = ratios.row(&[("queue", "64")]);
    assert_rounded(q64, "processed_ratio", 1.60, 2);
    assert_rounded(q64, "successful_ratio", 1.00, 2);
    assert_eq!(cell(q64, "processed_ratio"), "1.60");
    let q16 = ratios.row(&[("queue", "16")]);
    assert_eq!(
        (cell(q16, "processed_ratio"), cell(q16, "successful_ratio")),
        ("1", "1")
    );
}

/// The ladder of `LADDER` reshaped from the command line: 3 slots, queue 9,
/// 2 waves, steps 1, 3, 6, 9, 12, 15. Capacity 12 per wave; a request admitted at
/// occupancy k waits floor(k / 3) rounds.
fn reshaped(service_ms: u32, timeout_ms: u32) -> tempfile::TempDir {
    let service = format!("services.loan.handler.service={{ constant = {service_ms} }}");
    let timeout = format!("workload.timeout_ms={timeout_ms}");
    run_into(
        &scenario(LADDER),
        &[
            "--quiet",
            "--set",
            "services.loan.handler.slots=3",
            "--set",
            "services.loan.handler.queue=9",
            "--set",
            &service,
            "--set",
            "workload.waves=2",
            "--set",
            "workload.steps=[1, 3, 6, 9, 12, 15]",
            "--set",
            &timeout,
            "--set",
            "analysis.p95_rules_rounds=[0, 1, 2, 3]",
        ],
    )
}

/// Hand-computed for the reshaped ladder when at most 2 whole rounds of waiting
/// still answer in time: per wave, c = 6 waits 0,0,0,1,1,1 rounds; c = 9 adds three
/// 2s; c = 12 adds three 3s (late); c = 15 sheds 3.
const RESHAPED_STEPS: [StepRow; 6] = [
    (1, 2, 2, 0, 0, 2, 0),
    (3, 6, 6, 0, 0, 6, 0),
    (6, 12, 12, 0, 1, 12, 0),
    (9, 18, 18, 0, 2, 18, 0),
    (12, 24, 24, 0, 3, 18, 6),
    (15, 30, 24, 6, 3, 18, 6),
];

const RESHAPED_RULES: [(&str, &str, &str, &str); 5] = [
    ("p95<=0", "3", "0", "2"),
    ("p95<=1", "6", "0", "1"),
    ("p95<=2", "9", "0", "0"),
    ("p95<=3", "15", "2", "0"),
    ("throughput", "12", "1", "0"),
];

fn assert_reshaped(dir: &tempfile::TempDir, duration_ms: &str) {
    let ladder = Csv::read(&dir.path().join("ladder.csv"));
    assert_steps(&ladder, &[], &RESHAPED_STEPS);
    let f = Csv::read(&dir.path().join("findings.csv"));
    let f = f.row(&[]);
    assert_eq!(cell(f, "saturation_concurrency"), "15");
    assert_eq!(cell(f, "knee_concurrency"), "12");
    assert_eq!(cell(f, "true_limit"), "9");
    assert_eq!(cell(f, "max_wait_rounds"), "2");
    assert_rules(
        &Csv::read(&dir.path().join("limit_rules.csv")),
        &RESHAPED_RULES,
    );
    let t = Csv::read(&dir.path().join("totals.csv"));
    let t = t.row(&[]);
    assert_eq!(
        [
            cell(t, "sent"),
            cell(t, "accepted"),
            cell(t, "rejected"),
            cell(t, "timed_out"),
            cell(t, "duration_ms")
        ],
        ["92", "86", "6", "12", duration_ms]
    );
}

#[test]
fn a_timeout_that_is_not_a_multiple_of_the_service_time() {
    // 90 ms with a 25 ms service: (90 - 25) / 25 = 2.6, so 2 whole rounds (75 ms
    // answers in time, 100 ms does not); waves take 1, 1, 2, 3, 4, 4 rounds
    assert_reshaped(&reshaped(25, 90), "750");
}

#[test]
fn a_reply_at_the_timeout_is_in_time_on_the_ladder() {
    // 120 ms with a 40 ms service: a request that waited 2 rounds answers at
    // exactly 120 ms and succeeds (the seed's ceil(120/40) - 2 = 1 would say no)
    assert_reshaped(&reshaped(40, 120), "1200");
    // 119 ms: the same request is late, so only 1 round is acceptable
    let dir = reshaped(40, 119);
    let f = Csv::read(&dir.path().join("findings.csv"));
    let f = f.row(&[]);
    assert_eq!(cell(f, "max_wait_rounds"), "1");
    assert_eq!(cell(f, "knee_concurrency"), "9");
    assert_eq!(cell(f, "true_limit"), "6");
    let ladder = Csv::read(&dir.path().join("ladder.csv"));
    assert_eq!(
        cell(ladder.row(&[("concurrency", "9")]), "successful"),
        "12"
    );
}

#[test]
fn abandon_drops_queued_requests_nobody_waits_for() {
    // c = 12 for 5 waves, 4 slots, queue 16, 40 ms, timeout 100 ms, abandon on.
    // Wave 1 (t 0): 8 answered, 4 start at 80 and are late; the clients leave at
    // 100 and the next wave comes while those 4 are in service until 120. Wave 2:
    // starts at 120 and 160 answer (60, 100 ms), 4 start at 200, late. Wave 3 (t 200,
    // slots busy until 240): 4 answer at 80 ms, 4 start at 280 (late), 4 are still
    // queued at 300 and dropped. Waves 4 and 5 repeat waves 2 and 3.
    let dir = run_into(
        &scenario(ABANDON),
        &["--quiet", "--set", "workload.steps=[12]"],
    );
    let ladder = Csv::read(&dir.path().join("ladder.csv"));
    assert_eq!(ladder.headers[0], "abandon");
    let row = ladder.row(&[("abandon", "true")]);
    let got: Vec<&str> = [
        "sent",
        "processed",
        "rejected",
        "p95_wait_rounds",
        "successful",
        "timed_out",
    ]
    .iter()
    .map(|c| cell(row, c))
    .collect();
    // p95 wait 100 ms = 2.5 rounds; timed out = 20 late + 8 dropped
    assert_eq!(got, ["60", "52", "0", "2.50", "32", "28"]);
    let work = Csv::read(&dir.path().join("server_work.csv"));
    let on = work.row(&[("abandon", "true")]);
    assert_eq!(
        [
            cell(on, "work_ms"),
            cell(on, "late_work_ms"),
            cell(on, "saved_ms")
        ],
        ["2080", "800", "320"]
    );
    let off = work.row(&[("abandon", "false")]);
    // without abandon every wave is 3 rounds and 4 of 12 answer late
    assert_eq!(
        [
            cell(off, "work_ms"),
            cell(off, "late_work_ms"),
            cell(off, "saved_ms")
        ],
        ["2400", "800", "0"]
    );
    let services = Csv::read(&dir.path().join("services.csv"));
    assert_eq!(cell(services.row(&[("abandon", "true")]), "abandoned"), "8");
    let totals = Csv::read(&dir.path().join("totals.csv"));
    assert_eq!(
        cell(totals.row(&[("abandon", "true")]), "duration_ms"),
        "520"
    );
    assert_eq!(
        cell(totals.row(&[("abandon", "false")]), "duration_ms"),
        "600"
    );
}

#[test]
fn the_open_ladder_meets_the_queueing_the_closed_one_backs_off_from() {
    let dir = run_into(&scenario("scenarios/io22-open-ladder.toml"), &["--quiet"]);
    let ladder = Csv::read(&dir.path().join("ladder.csv"));
    // c x 25 requests per second for 1 s, evenly spaced: up to c = 4 (100 per
    // second, the capacity of 4 slots x 40 ms) nobody waits
    let calm = ladder.rows[..3].to_vec();
    let calm = Csv {
        headers: ladder.headers.clone(),
        rows: calm,
    };
    assert_steps(
        &calm,
        &[],
        &[
            (1, 25, 25, 0, 0, 25, 0),
            (2, 50, 50, 0, 0, 50, 0),
            (4, 100, 100, 0, 0, 100, 0),
        ],
    );
    // past capacity the step still sends c x 25 and the queue stays full: a
    // second of arrivals gets 100 processed, the rest is shed
    for c in [12u32, 16, 20, 24, 32] {
        let r = ladder.row(&[("concurrency", &c.to_string())]);
        let sent = f64::from(c * 25);
        assert_eq!(num(r, "sent"), sent, "c = {c}");
        assert_eq!(num(r, "processed"), 100.0, "c = {c}");
        assert_eq!(num(r, "rejected"), sent - 100.0, "c = {c}");
    }
    // the closed ladder sheds nothing and answers everything at c = 8; at
    // 200 requests per second the open one sheds and misses the acceptance share
    let c8 = ladder.row(&[("concurrency", "8")]);
    assert_eq!(num(c8, "sent"), 200.0);
    assert!(num(c8, "rejected") > 0.0);
    assert!(num(c8, "successful") < 200.0 * 0.99);
    let f = Csv::read(&dir.path().join("findings.csv"));
    assert_eq!(cell(f.row(&[]), "true_limit"), "4");
}

#[test]
fn a_runaway_ladder_stops_with_an_error_naming_the_limit() {
    let out = resim()
        .arg("run")
        .arg(scenario(LADDER))
        .args(["--quiet", "--set", "workload.steps=[1000000000000]"])
        .arg("--out")
        .arg(tempfile::tempdir().expect("temp dir").path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("scenario.max_events"), "{err}");
}
