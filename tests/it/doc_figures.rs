//! The figures README.md and docs/scenarios.md quote for bundled scenarios that
//! draw random numbers, recomputed: when a change to the engine, a scenario or
//! the docs moves one, a test here fails and names the sentence.
//!
//! A claim is a piece of a doc's text with every checked number in braces
//! (`{38.9}`), the command that computes it (`resim sweep FILE -n N`, `resim
//! run FILE` for a "seed 1, one run" figure, or `resim boundary FILE ...` for a
//! boundary's points, with any `--set`) and, per number,
//! where to read it in the command's output folder:
//!
//! ```text
//! summary.csv [abandon=false, metric=recovery.recovery_ms] mean; ms to s
//! ```
//!
//! is the column `mean` of the one row of `summary.csv` whose `abandon` is
//! `false` and `metric` is `recovery.recovery_ms`, in seconds. Besides a column,
//! a reading may be `half-width` (`(ci_high - ci_low) / 2`, the printed report's
//! "+/-"), `count` (how many rows the selector picks: replications stuck),
//! `max COLUMN` or `min COLUMN` (over the rows it picks, empty cells left out);
//! two readings joined by ` / ` are a ratio, and readings joined by ` = ` must
//! all give the doc's number (one "20 of 20" for several rows). After `; `
//! comes what turns the reading into the doc's number: `ms to s`, `x N`, `100
//! minus` (the failed share from `answered_pct`) or `% above 1` (1.0099
//! attempts per call is "0.99 % more").
//!
//! The test asserts that the doc still holds the text (braces removed, a run of
//! white space read as one space, so a sentence may wrap anywhere), and that
//! every recomputed number, written with as many decimals as the doc gives it
//! (and its thousands separators), is the doc's number. A run is the same bytes
//! for the same seed, so exact equality after rounding is right.
//!
//! Some commands run fewer compare rows than the doc's sweep (`--set
//! 'compare...'`): a row's numbers do not depend on the other rows (one random
//! stream per seed, replication and actor), so they are the full sweep's.
//! Deterministic figures (the AY10, DY13 and IO22 seed tables, formulas,
//! `breaker-recovery.toml`) are the golden tests' business, not this file's.

use crate::common::{Csv, resim, root, scenario};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What computes the figures: `resim run` or `resim sweep` on a bundled
/// scenario, with its arguments (the output folder, `--quiet` and `--no-report`
/// are added).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Cmd {
    Run(&'static str, &'static [&'static str]),
    Sweep(&'static str, &'static [&'static str]),
    Boundary(&'static str, &'static [&'static str]),
}

impl Cmd {
    fn file(self) -> &'static str {
        match self {
            Cmd::Run(f, _) | Cmd::Sweep(f, _) | Cmd::Boundary(f, _) => f,
        }
    }
}

/// A piece of a doc's text, its command and where each of its numbers is read.
struct Claim {
    doc: &'static str,
    text: String,
    cmd: Cmd,
    nums: Vec<String>,
}

fn claim(doc: &'static str, text: &str, cmd: Cmd, nums: &[&str]) -> Claim {
    Claim {
        doc,
        text: text.to_string(),
        cmd,
        nums: nums.iter().map(|s| s.to_string()).collect(),
    }
}

const README: &str = "README.md";
const DOCS: &str = "docs/scenarios.md";

// ---------------------------------------------------------------- the commands

const GOODPUT: &str = "scenarios/goodput-collapse.toml";
const GOODPUT_20: Cmd = Cmd::Sweep(GOODPUT, &["-n", "20"]);
const GOODPUT_RUN: Cmd = Cmd::Run(GOODPUT, &[]);

const STORM: &str = "scenarios/retry-storm.toml";
const STORM_20: Cmd = Cmd::Sweep(STORM, &["-n", "20"]);
/// The mitigations on a day without a fault: the slowdown's factor is 1.
const STORM_NO_FAULT_20: Cmd = Cmd::Sweep(
    STORM,
    &[
        "-n",
        "20",
        "--set",
        "faults.0.value=1",
        "--set",
        r#"compare.variant=["baseline", "codel", "adaptive-lifo"]"#,
        "--set",
        r#"compare."faults.0.for_ms"=[500]"#,
    ],
);
/// docs/scenarios.md's boundary: the fault's duration and factor, 40 s runs.
const STORM_BOUNDARY_10: Cmd = Cmd::Sweep(
    STORM,
    &[
        "-n",
        "10",
        "--set",
        r#"compare.variant=["baseline"]"#,
        "--set",
        r#"compare."faults.0.for_ms"=[250, 500, 1000, 2000, 4000, 8000]"#,
        "--vary",
        "faults.0.value=[1.25, 1.5, 2, 3, 5]",
        "--set",
        "workload.duration_ms=40000",
    ],
);

const LIFO_20: Cmd = Cmd::Sweep("scenarios/lifo-after-spike.toml", &["-n", "20"]);
const REPLICAS_20: Cmd = Cmd::Sweep("scenarios/replicas.toml", &["-n", "20"]);
const NOISY_20: Cmd = Cmd::Sweep("scenarios/noisy-neighbour.toml", &["-n", "20"]);

/// The first window and the window at 50 s are the same in both compare rows
/// (a warm-up never filters the time series): one row is enough.
const WARMUP_40: Cmd = Cmd::Sweep(
    "scenarios/warmup.toml",
    &[
        "-n",
        "40",
        "--set",
        "workload.duration_ms=60000",
        "--set",
        r#"compare."scenario.warmup_ms"=[0]"#,
    ],
);

/// 10 seeds, not 20: 10^5 first tries per row and seed are slow in a debug
/// build, and the loads vary in the fourth decimal only.
const POLICIES_10: Cmd = Cmd::Sweep(
    "scenarios/retry-policies.toml",
    &[
        "-n",
        "10",
        "--set",
        r#"compare."workload.call_policy"=["retry3", "bucket", "retry-breaker"]"#,
    ],
);

const CLIENTS_20: Cmd = Cmd::Sweep("scenarios/retry-clients.toml", &["-n", "20"]);

const AMPLIFICATION_20: Cmd = Cmd::Sweep(
    "scenarios/retry-amplification.toml",
    &["-n", "20", "--set", r#"compare.variant=["budget"]"#],
);

/// docs/scenarios.md's window-by-window reading of the three layers' retries.
const AMPLIFICATION_WINDOWS_RUN: Cmd = Cmd::Run(
    "scenarios/retry-amplification.toml",
    &[
        "--set",
        "output.window_ms=1000",
        "--set",
        r#"compare.variant=["baseline"]"#,
    ],
);

const HEDGING_20: Cmd = Cmd::Sweep(
    "scenarios/hedging.toml",
    &[
        "-n",
        "20",
        "--set",
        r#"compare."services.api.handler.branches.0.calls.0.call_policy"=["none", "hedge-10ms"]"#,
    ],
);

const BREAKER: &str = "scenarios/circuit-breaker.toml";
const BREAKER_20: Cmd = Cmd::Sweep(
    BREAKER,
    &[
        "-n",
        "20",
        "--set",
        r#"compare."services.api.handler.branches.0.calls.0.call_policy"=["breaker"]"#,
    ],
);
/// The first 4 s: the breaker opens within the first second and stays open for
/// 5 s, so the store's calls in them are the calls before it first opened.
const BREAKER_FIRST_OPEN_20: Cmd = Cmd::Sweep(
    BREAKER,
    &[
        "-n",
        "20",
        "--set",
        "workload.duration_ms=4000",
        "--set",
        r#"compare."services.api.handler.branches.0.calls.0.call_policy"=["breaker"]"#,
    ],
);

const SHARDS_20: Cmd = Cmd::Sweep("scenarios/breaker-shards.toml", &["-n", "20"]);

const THROTTLING_20: Cmd = Cmd::Sweep(
    "scenarios/adaptive-throttling.toml",
    &[
        "-n",
        "20",
        "--set",
        r#"compare."workload.call_policy"=["k2", "k1-1"]"#,
    ],
);

/// The file's own `[montecarlo]`: 1000 replications, seed 42.
const AY10_MC_1000: Cmd = Cmd::Sweep("scenarios/ay10-montecarlo.toml", &[]);

const BAND: &str = "scenarios/metastable-band.toml";
/// The docs' boundary command: 20 replications per point, tolerance 1 %.
/// The band's edge as the docs search it (`--once`: the docs' figures are
/// the first search's, which the second at twice the run's length leaves as
/// they are; that one has a claim of its own, on shorter runs).
const BAND_EDGE: Cmd = Cmd::Boundary(
    BAND,
    &[
        "--axis",
        "workload.rate_rps=10..40",
        "--metric",
        "recovery.stuck",
        "--target",
        "0.5",
        "--once",
    ],
);
/// The edge on 60 s runs, and again on 120 s runs.
const BAND_EDGE_TWICE: Cmd = Cmd::Boundary(
    BAND,
    &[
        "--set",
        "workload.duration_ms=60000",
        "--axis",
        "workload.rate_rps=10..40",
        "--metric",
        "recovery.stuck",
        "--target",
        "0.5",
        "-n",
        "4",
        "--tolerance",
        "5%",
    ],
);
/// The drain at 20 req/s, the file's rate.
const BAND_DRAIN_40: Cmd = Cmd::Sweep(BAND, &["-n", "40", "--set", "workload.duration_ms=90000"]);

const FANOUT_RUN: Cmd = Cmd::Run("scenarios/fanout-tail.toml", &[]);

// ------------------------------------------------------------------ the claims

fn goodput_collapse() -> Vec<Claim> {
    let no = "summary.csv [abandon=false, metric=recovery.recovery_ms]";
    let yes = "summary.csv [abandon=true, metric=recovery.recovery_ms]";
    vec![
        claim(
            README,
            "goodput recovers {38.9} s after the fault without `abandon` (mean of 20 seeds, \
             95 % interval {34.7}-{43.0}; {24} s to {53} s), {1.45} s with it",
            GOODPUT_20,
            &[
                &format!("{no} mean; ms to s"),
                &format!("{no} ci_low; ms to s"),
                &format!("{no} ci_high; ms to s"),
                &format!("{no} min; ms to s"),
                &format!("{no} max; ms to s"),
                &format!("{yes} mean; ms to s"),
            ],
        ),
        claim(
            DOCS,
            "Over 20 seeds (`resim sweep scenarios/goodput-collapse.toml -n 20`) it falls to 0 \
             in {20} of 20 runs (`min_goodput_per_s`) and {20} of 20 recover, `recovery_ms` \
             {38850} on average (95 % interval {34735} to {42965}; from {24000} to {53000}).",
            GOODPUT_20,
            &[
                "replications.csv [abandon=false, recovery.min_goodput_per_s=0] count",
                &format!("{no} recovered"),
                &format!("{no} mean"),
                &format!("{no} ci_low"),
                &format!("{no} ci_high"),
                &format!("{no} min"),
                &format!("{no} max"),
            ],
        ),
        claim(
            DOCS,
            "Seed 1's run (one run) is the slowest of them: the queue peaks at {428} requests \
             (`timeseries_services.csv`, `mean_queue`) and `recovery_ms` = {53000}.",
            GOODPUT_RUN,
            &[
                "timeseries_services.csv [abandon=false, service=backend] max mean_queue",
                "recovery.csv [abandon=false] recovery_ms",
            ],
        ),
        claim(
            DOCS,
            "With `abandon = true` `recovery_ms` is {1450} on average (median {1000}, at most \
             {6000})",
            GOODPUT_20,
            &[
                &format!("{yes} mean"),
                &format!("{yes} p50"),
                &format!("{yes} max"),
            ],
        ),
    ]
}

/// `summary.csv`'s line of a retry-storm row and metric.
fn storm(variant: &str, for_ms: &str, metric: &str) -> String {
    format!("summary.csv [variant={variant}, for_ms={for_ms}, metric=recovery.{metric}]")
}

/// The replications of a retry-storm row that stayed stuck.
fn stuck(variant: &str, for_ms: &str) -> String {
    format!("replications.csv [variant={variant}, for_ms={for_ms}, recovery.stuck=1] count")
}

/// Every CoDel and adaptive-LIFO row recovered in 20 of 20.
fn queue_mitigations_recovered() -> String {
    let mut all = Vec::new();
    for variant in ["codel", "adaptive-lifo"] {
        for for_ms in ["500", "2000", "10000"] {
            all.push(format!(
                "{} recovered",
                storm(variant, for_ms, "recovery_ms")
            ));
        }
    }
    all.join(" = ")
}

fn retry_storm() -> Vec<Claim> {
    let codel_calm = "summary.csv [variant=codel, metric=outcomes.answered_pct]";
    let mut claims = vec![
        claim(
            README,
            "clients retrying on timeout, 20 seeds: a 0.5 s slowdown recovers in {20} of 20 \
             runs, 2 s and 10 s stay stuck in {20} of 20; CoDel and adaptive LIFO bring it back \
             in {20} of 20",
            STORM_20,
            &[
                &format!("{} recovered", storm("baseline", "500", "recovery_ms")),
                &format!(
                    "{} = {}",
                    stuck("baseline", "2000"),
                    stuck("baseline", "10000")
                ),
                &queue_mitigations_recovered(),
            ],
        ),
        claim(
            README,
            "(but CoDel sheds {7.3} % of the requests even without a fault)",
            STORM_NO_FAULT_20,
            &[&format!("{codel_calm} mean; 100 minus")],
        ),
        claim(
            README,
            "a 10 % retry budget only in {12} of 20 after 2 s and in {0} of 20 after 10 s; \
             abandon alone in {0} of 20 after 2 s or 10 s",
            STORM_20,
            &[
                &format!("{} recovered", storm("retry-budget", "2000", "recovery_ms")),
                &format!(
                    "{} recovered",
                    storm("retry-budget", "10000", "recovery_ms")
                ),
                &format!(
                    "{} recovered = {} recovered",
                    storm("abandon", "2000", "recovery_ms"),
                    storm("abandon", "10000", "recovery_ms")
                ),
            ],
        ),
        claim(
            DOCS,
            "after 0.5 s every run recovers (`recovery_ms` {500} in {20} of 20); after 2 s and \
             10 s every run stays stuck ({20} of 20), with retries amplifying the load more than \
             3x (`peak_amplification` {3.46} +/- {0.07} and {3.39} +/- {0.07}).",
            STORM_20,
            &[
                &format!("{0} min = {0} max", storm("baseline", "500", "recovery_ms")),
                &format!("{} recovered", storm("baseline", "500", "recovery_ms")),
                &format!(
                    "{} = {}",
                    stuck("baseline", "2000"),
                    stuck("baseline", "10000")
                ),
                &format!("{} mean", storm("baseline", "2000", "peak_amplification")),
                &format!(
                    "{} half-width",
                    storm("baseline", "2000", "peak_amplification")
                ),
                &format!("{} mean", storm("baseline", "10000", "peak_amplification")),
                &format!(
                    "{} half-width",
                    storm("baseline", "10000", "peak_amplification")
                ),
            ],
        ),
        claim(
            DOCS,
            "after 2 s it stays stuck in {8} of 20 runs (Wilson 95 %: {0.22}-{0.61}), and the \
             {12} that recover take from {4000} to {69000} ms (median over all 20: {55000} ms; \
             `peak_amplification` {1.78} +/- {0.06}). Seed 1's run (one run) is one of the lucky \
             ones: it recovers from 2 s in {6000} ms. After 10 s the budget stays stuck in {20} \
             of 20",
            STORM_20,
            &[
                &stuck("retry-budget", "2000"),
                &format!("{} ci_low", storm("retry-budget", "2000", "stuck")),
                &format!("{} ci_high", storm("retry-budget", "2000", "stuck")),
                &format!("{} recovered", storm("retry-budget", "2000", "recovery_ms")),
                &format!("{} min", storm("retry-budget", "2000", "recovery_ms")),
                "replications.csv [variant=retry-budget, for_ms=2000] max recovery.recovery_ms",
                &format!("{} p50", storm("retry-budget", "2000", "recovery_ms")),
                &format!(
                    "{} mean",
                    storm("retry-budget", "2000", "peak_amplification")
                ),
                &format!(
                    "{} half-width",
                    storm("retry-budget", "2000", "peak_amplification")
                ),
                // replication 0 of a sweep without a seed of its own is `resim run`
                "replications.csv [variant=retry-budget, for_ms=2000, replication=0] \
                 recovery.recovery_ms",
                &stuck("retry-budget", "10000"),
            ],
        ),
        claim(
            DOCS,
            "Abandon alone stays stuck after 2 s and 10 s in {20} of 20 (FIFO still serves the \
             oldest attempts first). CoDel (target 5 ms, interval 100 ms) and adaptive LIFO \
             recover at every duration in {20} of 20, CoDel at most {1500} ms after the \
             slowdown's end (the second window), adaptive LIFO at most {500} ms (the first).",
            STORM_20,
            &[
                &format!(
                    "{} = {}",
                    stuck("abandon", "2000"),
                    stuck("abandon", "10000")
                ),
                &queue_mitigations_recovered(),
                "replications.csv [variant=codel] max recovery.recovery_ms",
                "replications.csv [variant=adaptive-lifo] max recovery.recovery_ms",
            ],
        ),
        claim(
            DOCS,
            "CoDel sheds {7.3} % of the requests at this 90 % load (95 % interval {7.0}-{7.6} %), \
             where FIFO answers {100} %; adaptive LIFO answers {99.9} %, but the p99 of all 20 \
             runs' answered requests together (`pooled.csv`) is {1,221} ms against FIFO's {644} \
             ms.",
            STORM_NO_FAULT_20,
            &[
                &format!("{codel_calm} mean; 100 minus"),
                &format!("{codel_calm} ci_high; 100 minus"),
                &format!("{codel_calm} ci_low; 100 minus"),
                "summary.csv [variant=baseline, metric=outcomes.answered_pct] mean",
                "summary.csv [variant=adaptive-lifo, metric=outcomes.answered_pct] mean",
                "pooled.csv [variant=adaptive-lifo] p99_ms",
                "pooled.csv [variant=baseline] p99_ms",
            ],
        ),
    ];
    // the boundary table: stuck runs of 10, per duration (rows) and factor (columns)
    for (for_ms, stuck_runs) in [
        ("250", "0 0 0 0 1"),
        ("500", "0 0 0 0 3"),
        ("1000", "0 0 2 5 10"),
        ("2000", "0 5 7 10 10"),
        ("4000", "5 7 10 10 10"),
        ("8000", "7 10 10 10 10"),
    ] {
        let cells: Vec<String> = stuck_runs.split(' ').map(|n| format!("{{{n}}}")).collect();
        let nums: Vec<String> = ["1.25", "1.50", "2", "3", "5"]
            .iter()
            .map(|value| {
                format!(
                    "summary.csv [for_ms={for_ms}, value={value}, metric=recovery.stuck] mean; x 10"
                )
            })
            .collect();
        let nums: Vec<&str> = nums.iter().map(String::as_str).collect();
        claims.push(claim(
            DOCS,
            &format!("| {for_ms} | {} |", cells.join(" | ")),
            STORM_BOUNDARY_10,
            &nums,
        ));
    }
    claims
}

fn lifo_after_spike() -> Vec<Claim> {
    let failed = |order: &str, col: &str| {
        format!("summary.csv [order={order}, metric=outcomes.answered_pct] {col}; 100 minus")
    };
    vec![
        claim(
            README,
            "LIFO and adaptive LIFO fail {1.17} % and {1.16} % of the requests, a fifth of \
             FIFO's {5.66} % (means of 20 seeds)",
            LIFO_20,
            &[
                &failed("lifo", "mean"),
                &failed("adaptive_lifo", "mean"),
                &failed("fifo", "mean"),
            ],
        ),
        claim(
            DOCS,
            "FIFO {5.66} % ({5.05}-{6.27}), LIFO {1.17} % ({1.08}-{1.25}), adaptive LIFO {1.16} % \
             ({1.07}-{1.24}); on the same arrivals LIFO fails {4.49} points fewer than FIFO \
             (paired, {3.94}-{5.05}).",
            LIFO_20,
            &[
                &failed("fifo", "mean"),
                &failed("fifo", "ci_high"),
                &failed("fifo", "ci_low"),
                &failed("lifo", "mean"),
                &failed("lifo", "ci_high"),
                &failed("lifo", "ci_low"),
                &failed("adaptive_lifo", "mean"),
                &failed("adaptive_lifo", "ci_high"),
                &failed("adaptive_lifo", "ci_low"),
                "paired.csv [order=lifo, versus=fifo, metric=outcomes.answered_pct] mean",
                "paired.csv [order=lifo, versus=fifo, metric=outcomes.answered_pct] ci_low",
                "paired.csv [order=lifo, versus=fifo, metric=outcomes.answered_pct] ci_high",
            ],
        ),
    ]
}

fn replicas() -> Vec<Claim> {
    let slow = |b: &str| {
        format!("summary.csv [balancer={b}, metric=replicas.api.replica_2.arrived_pct] mean")
    };
    let p99 = |b: &str| format!("pooled.csv [balancer={b}] p99_ms");
    let shed = |b: &str| format!("summary.csv [balancer={b}, metric=services.shed] mean");
    vec![
        claim(
            README,
            "least_outstanding and two_choices send the slow instance {9.7} % and {10.6} % of \
             the requests instead of {25} % and cut the p99 from {2.36} s (round_robin, which \
             also sheds {12} % of the requests) to {184} and {198} ms (20 seeds)",
            REPLICAS_20,
            &[
                &slow("least_outstanding"),
                &slow("two_choices"),
                &slow("round_robin"),
                &format!("{}; ms to s", p99("round_robin")),
                &format!(
                    "{} / summary.csv [balancer=round_robin, metric=outcomes.requests] mean; x 100",
                    shed("round_robin")
                ),
                &p99("least_outstanding"),
                &p99("two_choices"),
            ],
        ),
        claim(
            DOCS,
            "round_robin and random send the slow replica {25.0} % and {24.9} % of the requests, \
             shed {1,386} and {1,377} of {11,991}, and answer with a p99 of {2,363} and {2,357} \
             ms; least_outstanding {9.7} % and two_choices {10.6} %, nothing shed, p99 {184} ms \
             and {198} ms.",
            REPLICAS_20,
            &[
                &slow("round_robin"),
                &slow("random"),
                &shed("round_robin"),
                &shed("random"),
                "summary.csv [balancer=round_robin, metric=outcomes.requests] mean",
                &p99("round_robin"),
                &p99("random"),
                &slow("least_outstanding"),
                &slow("two_choices"),
                &p99("least_outstanding"),
                &p99("two_choices"),
            ],
        ),
    ]
}

fn balancers_linkerd() -> Vec<Claim> {
    let run = Cmd::Run("scenarios/balancers-linkerd.toml", &[]);
    let pct = |v: &str| format!("outcomes.csv [variant={v}] answered_pct");
    vec![
        claim(
            README,
            "round robin answers {95.50} %, Envoy's least request {98.99} % and peak EWMA \
             {99.68} %",
            run,
            &[
                &pct("round-robin"),
                &pct("least-request"),
                &pct("peak-ewma"),
            ],
        ),
        claim(
            DOCS,
            "Answered: round robin {95.50} % (1/11 of half the run fails: 95.45 %;",
            run,
            &[&pct("round-robin")],
        ),
        claim(
            DOCS,
            "least request {98.99} %, peak EWMA {99.68} % (seeds 1-5",
            run,
            &[&pct("least-request"), &pct("peak-ewma")],
        ),
        claim(
            README,
            "(`release = \"replica\"`) {99.46} % and {99.90} %",
            run,
            &[&pct("least-request-held"), &pct("peak-ewma-held")],
        ),
        claim(
            DOCS,
            "Least request then answers {99.46} % and peak EWMA {99.90} % (seeds 1-5",
            run,
            &[&pct("least-request-held"), &pct("peak-ewma-held")],
        ),
    ]
}

const LEAST_REQUEST_10: Cmd = Cmd::Sweep(
    "scenarios/balancers-envoy-least-request.toml",
    &["-n", "10"],
);
const LEASTCONN_20: Cmd = Cmd::Sweep("scenarios/balancers-haproxy-leastconn.toml", &["-n", "20"]);
const HAPROXY_RANDOM_20: Cmd = Cmd::Sweep("scenarios/balancers-haproxy-random.toml", &["-n", "20"]);
const MAXCONN: &str = "scenarios/balancers-haproxy-maxconn.toml";
const MAXCONN_20: Cmd = Cmd::Sweep(MAXCONN, &["-n", "20"]);

fn balancers_envoy_least_request() -> Vec<Claim> {
    let run = Cmd::Run("scenarios/balancers-envoy-least-request.toml", &[]);
    let out = |v: &str, col: &str| format!("outcomes.csv [variant={v}] {col}");
    let mean = |v: &str| format!("summary.csv [variant={v}, metric=outcomes.mean_ms] mean");
    let paired = |col: &str| {
        format!(
            "paired.csv [variant=two-choices, versus=least-request, metric=outcomes.mean_ms] {col}; x -1"
        )
    };
    let pooled = |v: &str| format!("pooled.csv [variant={v}] p99_ms");
    let rows = ["least-request", "two-choices", "least-request-3"];
    vec![
        claim(
            DOCS,
            "(`outcomes.csv`): mean response {46.65} ms, {42.04} ms and {41.45} ms; p99 \
             {197.9}, {166.9} and {171.1} ms.",
            run,
            &[
                &out(rows[0], "mean_ms"),
                &out(rows[1], "mean_ms"),
                &out(rows[2], "mean_ms"),
                &out(rows[0], "p99_ms"),
                &out(rows[1], "p99_ms"),
                &out(rows[2], "p99_ms"),
            ],
        ),
        claim(
            DOCS,
            "the means are {45.92}, {42.92} and {42.44} ms, and paired on the same arrivals \
             distinct draws are {3.00} ms faster than Envoy's (95 % interval {2.14} to {3.86}),",
            LEAST_REQUEST_10,
            &[
                &mean(rows[0]),
                &mean(rows[1]),
                &mean(rows[2]),
                &paired("mean"),
                &paired("ci_high"),
                &paired("ci_low"),
            ],
        ),
        claim(
            DOCS,
            "(`pooled.csv`) are {189.9}, {182.7} and {182.6} ms:",
            LEAST_REQUEST_10,
            &[&pooled(rows[0]), &pooled(rows[1]), &pooled(rows[2])],
        ),
        claim(
            README,
            "give a mean response {3.00} ms longer than two distinct draws",
            LEAST_REQUEST_10,
            &[&paired("mean")],
        ),
    ]
}

const GC: &str = "scenarios/gc-pauses.toml";
const GC_20: Cmd = Cmd::Sweep(GC, &["-n", "20"]);
/// The same pods without their pauses: the fault never acts.
const GC_CALM_RUN: Cmd = Cmd::Run(GC, &["--set", "faults.0.for_ms=0"]);

fn gc_pauses() -> Vec<Claim> {
    let m = |b: &str, metric: &str, col: &str| {
        format!("summary.csv [balancer={b}, metric=outcomes.{metric}] {col}")
    };
    let calm = |b: &str| format!("outcomes.csv [balancer={b}] p99_all_ms");
    let mut nums = Vec::new();
    for b in ["round_robin", "least_request", "peak_ewma"] {
        for metric in ["answered_pct", "p99_all_ms"] {
            for col in ["mean", "ci_low", "ci_high"] {
                nums.push(m(b, metric, col));
            }
        }
    }
    let nums: Vec<&str> = nums.iter().map(String::as_str).collect();
    vec![
        claim(
            DOCS,
            "every request is answered and the p99 over all requests is {51.1} ms in each row.",
            GC_CALM_RUN,
            &[&format!(
                "{} = {} = {}",
                calm("round_robin"),
                calm("least_request"),
                calm("peak_ewma")
            )],
        ),
        claim(
            DOCS,
            "round robin answers {99.149} % ({99.130} to {99.167}) with a p99 over all requests \
             of {90.7} ms ({89.5} to {91.9}); least request {99.580} % ({99.573} to {99.588}), \
             p99 {55.3} ms ({55.0} to {55.6}); peak EWMA {99.764} % ({99.759} to {99.769}), \
             p99 {52.5} ms ({52.3} to {52.8}).",
            GC_20,
            &nums,
        ),
        claim(
            DOCS,
            "So round robin's failed share lies between (2 + 5) / 200 / 6 = 0.58 % and (2 + \
             15) / 200 / 6 = 1.42 %; the sweep's is {0.851} %.",
            GC_20,
            &[&format!(
                "{}; 100 minus",
                m("round_robin", "answered_pct", "mean")
            )],
        ),
    ]
}

/// The README's first run: the file as it is, seed 1.
const GC_RUN: Cmd = Cmd::Run(GC, &[]);
/// The README's "change one number": pauses of 400 ms.
const GC_LONG_PAUSES_RUN: Cmd = Cmd::Run(GC, &["--set", "faults.0.pause_ms=400"]);

/// The README's five minutes: a run of `gc-pauses.toml`, one number changed,
/// and its 20-seed sweep (the docs' sweep, run once for both).
fn five_minutes() -> Vec<Claim> {
    let row = |b: &str| {
        let col = |c: &str| format!("outcomes.csv [balancer={b}] {c}");
        [
            col("requests"),
            col("answered_pct"),
            col("p50_all_ms"),
            col("p99_all_ms"),
            col("timed_out"),
        ]
    };
    let long = |b: &str, c: &str| format!("outcomes.csv [balancer={b}] {c}");
    let line = |metric: &str| -> Vec<String> {
        ["round_robin", "least_request", "peak_ewma"]
            .iter()
            .flat_map(|b| {
                let m = format!("summary.csv [balancer={b}, metric=outcomes.{metric}]");
                [format!("{m} mean"), format!("{m} half-width")]
            })
            .collect()
    };
    let paired = |c: &str| {
        format!(
            "paired.csv [balancer=least_request, versus=round_robin, \
             metric=outcomes.p99_all_ms] {c}; x -1"
        )
    };
    let mut claims = Vec::new();
    for (b, text) in [
        (
            "round_robin",
            "round_robin {35668} {99.100} {18.691} {92.430} timed out {321}",
        ),
        (
            "least_request",
            "least_request {35668} {99.588} {18.542} {54.910} timed out {147}",
        ),
        (
            "peak_ewma",
            "peak_ewma {35668} {99.762} {18.534} {52.803} timed out {85}",
        ),
    ] {
        let nums = row(b);
        let nums: Vec<&str> = nums.iter().map(String::as_str).collect();
        claims.push(claim(README, text, GC_RUN, &nums));
    }
    claims.push(claim(
        README,
        "Round robin then answers {97.006} % and has no p99 over all requests left (more than 1 % \
         failed); least request answers {99.022} % (p99 {88.549} ms) and peak EWMA {99.577} % \
         (p99 {54.611} ms).",
        GC_LONG_PAUSES_RUN,
        &[
            &long("round_robin", "answered_pct"),
            &long("least_request", "answered_pct"),
            &long("least_request", "p99_all_ms"),
            &long("peak_ewma", "answered_pct"),
            &long("peak_ewma", "p99_all_ms"),
        ],
    ));
    for (metric, text) in [
        (
            "answered_pct",
            "answered_pct {99.15} +/- {0.02} {99.58} +/- {0.01} {99.76} +/- {0.00}",
        ),
        (
            "p50_all_ms",
            "p50_all_ms {18.65} +/- {0.03} {18.53} +/- {0.03} {18.53} +/- {0.03}",
        ),
        (
            "p99_all_ms",
            "p99_all_ms {90.72} +/- {1.19} {55.29} +/- {0.31} {52.53} +/- {0.25}",
        ),
    ] {
        let nums = line(metric);
        let nums: Vec<&str> = nums.iter().map(String::as_str).collect();
        claims.push(claim(README, text, GC_20, &nums));
    }
    claims.push(claim(
        README,
        "\"p99 over all requests {35.43} ms lower (CI {34.28} to {36.58} ms, excludes 0)\"",
        GC_20,
        &[&paired("mean"), &paired("ci_high"), &paired("ci_low")],
    ));
    claims
}

fn balancers_haproxy_leastconn() -> Vec<Claim> {
    let share = |t: &str, v: &str, r: u32| {
        format!(
            "summary.csv [target=api#{t}, variant={v}, metric=replicas.api.replica_{r}.arrived_pct] mean"
        )
    };
    let p99 = |t: &str, v: &str| format!("pooled.csv [target=api#{t}, variant={v}] p99_ms");
    let (low, first) = ("lowest-index", "first-reached");
    vec![
        claim(
            DOCS,
            "backends get {40.78}, {30.47} and {20.77} % when the slow one is first (it gets \
             {7.98} %), and {42.41}, {31.73} and {21.83} % when it is last (it gets {4.03} %); \
             the p99 of all 20 runs together (`pooled.csv`) is {418.0} and {281.0} ms:",
            LEASTCONN_20,
            &[
                &share("1", low, 2),
                &share("1", low, 3),
                &share("1", low, 4),
                &share("1", low, 1),
                &share("4", low, 1),
                &share("4", low, 2),
                &share("4", low, 3),
                &share("4", low, 4),
                &p99("1", low),
                &p99("4", low),
            ],
        ),
        claim(
            DOCS,
            "With HAProxy's rule the fast backends get {30.91}, {31.05} and {30.70} % and \
             {30.93}, {30.92} and {30.97} %, the slow one {7.34} % and {7.18} %, and the p99 is \
             {399.0} and {404.1} ms wherever it sits.",
            LEASTCONN_20,
            &[
                &share("1", first, 2),
                &share("1", first, 3),
                &share("1", first, 4),
                &share("4", first, 1),
                &share("4", first, 2),
                &share("4", first, 3),
                &share("1", first, 1),
                &share("4", first, 4),
                &p99("1", first),
                &p99("4", first),
            ],
        ),
        claim(
            README,
            "the three fast ones get {40.78}, {30.47} and {20.77} % of the requests; with \
             HAProxy's rule (`tie_break = \"first_reached\"`) {30.91}, {31.05} and {30.70} %",
            LEASTCONN_20,
            &[
                &share("1", low, 2),
                &share("1", low, 3),
                &share("1", low, 4),
                &share("1", first, 2),
                &share("1", first, 3),
                &share("1", first, 4),
            ],
        ),
    ]
}

fn balancers_haproxy_random() -> Vec<Claim> {
    let share = |t: &str, v: &str, r: u32| {
        format!(
            "summary.csv [target=api#{t}, variant={v}, metric=replicas.api.replica_{r}.arrived_pct] mean"
        )
    };
    let p99 = |t: &str, v: &str| format!("pooled.csv [target=api#{t}, variant={v}] p99_ms");
    let (two, distinct, one) = ("haproxy-random-2", "two-choices", "haproxy-random-1");
    vec![
        claim(
            DOCS,
            "the slow backend 1 gets {12.10} % with HAProxy's draws against {8.16} % with two \
             distinct uniform draws, and the p99 of all runs together (`pooled.csv`) is {493.0} \
             against {420.2} ms; the slow backend 2 gets {8.71} % against {8.24} % ({432.1} \
             against {421.2} ms). With one draw the shares are the ring's arcs: {28.99}, \
             {18.52}, {24.47} and {28.02} %, and the slow backend gets its arc whatever it holds \
             (p99 {677.6} ms as backend 1).",
            HAPROXY_RANDOM_20,
            &[
                &share("1", two, 1),
                &share("1", distinct, 1),
                &p99("1", two),
                &p99("1", distinct),
                &share("2", two, 2),
                &share("2", distinct, 2),
                &p99("2", two),
                &p99("2", distinct),
                &share("1", one, 1),
                &share("1", one, 2),
                &share("1", one, 3),
                &share("1", one, 4),
                &p99("1", one),
            ],
        ),
        claim(
            README,
            "the slow backend of four gets {12.10} % with HAProxy's draws against {8.16} % with \
             two distinct uniform draws; one draw gives the ring's uneven arcs, {28.99}, {18.52}, \
             {24.47} and {28.02} %",
            HAPROXY_RANDOM_20,
            &[
                &share("1", two, 1),
                &share("1", distinct, 1),
                &share("1", one, 1),
                &share("1", one, 2),
                &share("1", one, 3),
                &share("1", one, 4),
            ],
        ),
    ]
}

fn balancers_haproxy_maxconn() -> Vec<Claim> {
    let run = Cmd::Run(MAXCONN, &[]);
    let answered =
        |v: &str| format!("summary.csv [variant={v}, metric=outcomes.answered_pct] mean");
    let near = "maxconn-near-capacity";
    let queue = |col: &str| format!("proxy_queue.csv [variant={near}] {col}");
    let taken = |r: u32| format!("replicas.csv [variant={near}, replica={r}] from_queue");
    vec![
        claim(
            DOCS,
            "`outcomes.answered_pct`) {75.35} % are answered. With `max_conn = 4` and \
             `queue_timeout_ms = 1000` a full backend is passed over, the slow one gets {6.24} % \
             of the requests (`replicas.csv`), and {99.95} % are answered.",
            MAXCONN_20,
            &[
                &answered("round-robin"),
                "summary.csv [variant=maxconn, metric=replicas.api.replica_4.arrived_pct] mean",
                &answered("maxconn"),
            ],
        ),
        claim(
            DOCS,
            "the queue stands, and {98.47} % are answered,",
            MAXCONN_20,
            &[&answered(near)],
        ),
        claim(
            DOCS,
            "(`proxy_queue.csv`): {14,928} of {18,024} requests waited in the queue ({82.82} %), \
             {383} of them were refused at the 50 ms timeout, the others waited {23.45} ms on \
             average, and the three fast backends took {4,760}, {4,654} and {4,716} requests from \
             the queue",
            run,
            &[
                &queue("queued"),
                &format!(
                    "{} = outcomes.csv [variant={near}] requests",
                    queue("requests")
                ),
                &queue("queued_pct"),
                &format!(
                    "{} = outcomes.csv [variant={near}] shed",
                    queue("timed_out")
                ),
                &queue("mean_wait_ms"),
                &taken(1),
                &taken(2),
                &taken(3),
            ],
        ),
        claim(
            README,
            "plain round robin answers {75.35} %, round robin with `max_conn = 4` {99.95} %",
            MAXCONN_20,
            &[&answered("round-robin"), &answered("maxconn")],
        ),
    ]
}

fn noisy_neighbour() -> Vec<Claim> {
    vec![claim(
        README,
        "two keys at 50 req/s keep every request ({100} % answered in each of 20 seeds)",
        NOISY_20,
        &["summary.csv [metric=outcomes.small-a.answered_pct] min \
           = summary.csv [metric=outcomes.small-b.answered_pct] min"],
    )]
}

fn warmup() -> Vec<Claim> {
    let queue = |window: &str, col: &str| {
        format!(
            "summary.csv [warmup_ms=0, \
             metric=timeseries_services.window_start_ms_{window}.store.mean_queue] {col}"
        )
    };
    vec![claim(
        DOCS,
        "Over 40 replications of 60 s (`resim sweep scenarios/warmup.toml -n 40 --set \
         workload.duration_ms=60000`) the first window's mean queue is {4.2} [{3.1}, {5.3}], well \
         below the steady state's 8.1, against {6.9} [{4.3}, {9.5}] at 50 s (one 1 s window at \
         load 0.9 varies a lot: its standard deviation over the runs is {8.2})",
        WARMUP_40,
        &[
            &queue("0", "mean"),
            &queue("0", "ci_low"),
            &queue("0", "ci_high"),
            &queue("50000", "mean"),
            &queue("50000", "ci_low"),
            &queue("50000", "ci_high"),
            &queue("50000", "sd"),
        ],
    )]
}

fn retry_policies() -> Vec<Claim> {
    let load = |p: &str| {
        format!("summary.csv [call_policy={p}, metric=calls.main.api.amplification] mean")
    };
    vec![
        claim(
            README,
            "three retries send {1.876}x the load (1.875 in theory), a token bucket {1.10}x, a \
             retry breaker {1.00}x (means of 10 seeds)",
            POLICIES_10,
            &[&load("retry3"), &load("bucket"), &load("retry-breaker")],
        ),
        claim(
            DOCS,
            "(1 - p^4)/(1 - p) = 1.875 in theory, {93.69} % and {1.876} measured; a token bucket \
             {1.10}; the retry breaker {1.00} (means of 10 seeds: `resim sweep \
             scenarios/retry-policies.toml -n 10`)",
            POLICIES_10,
            &[
                "summary.csv [call_policy=retry3, metric=outcomes.answered_pct] mean",
                &load("retry3"),
                &load("bucket"),
                &load("retry-breaker"),
            ],
        ),
    ]
}

/// One run of the file (seed 11): a row's figures do not depend on the others.
const BUDGETS_RUN: Cmd = Cmd::Run("scenarios/retry-budgets.toml", &[]);

fn retry_budgets() -> Vec<Claim> {
    let client = |policy: &str, f: &str, col: &str| {
        format!("calls.csv [workload.call_policy={policy}, error_rate={f}, caller=main] {col}")
    };
    vec![
        claim(
            DOCS,
            "In the file's 150 s run, 9.6 % refuses {1,152} retries and lets {320} go",
            BUDGETS_RUN,
            &[
                &client("grpc", "0.096", "budget_refused"),
                &client("grpc", "0.096", "retries"),
            ],
        ),
        claim(
            DOCS,
            "(over the file's 150 s: {1.302})",
            BUDGETS_RUN,
            &[&client("finagle", "1", "amplification")],
        ),
        claim(
            DOCS,
            "but for the moments when 17 or more are in flight: {1.289}.",
            BUDGETS_RUN,
            &[&client("envoy", "1", "amplification")],
        ),
    ]
}

fn retry_clients() -> Vec<Claim> {
    let load = |p: &str, clients: &str| {
        format!(
            "summary.csv [call_policy={p}, clients={clients}, \
             metric=calls.main.api.amplification] mean"
        )
    };
    vec![claim(
        DOCS,
        "the per-client bucket rises {1.10} -> {1.14} -> {1.49}, the retry breaker stays at \
         {1.00} (means of 20 seeds)",
        CLIENTS_20,
        &[
            &load("bucket", "10"),
            &load("bucket", "100"),
            &load("bucket", "1000"),
            &format!(
                "{} = {} = {}",
                load("retry-breaker", "10"),
                load("retry-breaker", "100"),
                load("retry-breaker", "1000")
            ),
        ],
    )]
}

fn retry_amplification() -> Vec<Claim> {
    let at_database = "summary.csv [variant=budget, metric=calls.layer3.database.attempts] mean \
                       / summary.csv [variant=budget, metric=calls.main.layer1.first_tries] mean";
    let layer = |site: &str| {
        format!("summary.csv [variant=budget, metric=calls.{site}.amplification] mean")
    };
    let database = "timeseries_calls.csv [variant=baseline, caller=layer3, target=database]";
    vec![
        claim(
            DOCS,
            "(not exactly: a request's attempts may cross a window's end; at the database from \
             {61.3} to {66.3} per window in the file's seed 3, one run)",
            AMPLIFICATION_WINDOWS_RUN,
            &[
                &format!("{database} min attempts_per_request"),
                &format!("{database} max attempts_per_request"),
            ],
        ),
        claim(
            README,
            "4 with retries at the top only, {1.33} with 10 % retry budgets (mean of 20 seeds)",
            AMPLIFICATION_20,
            &[at_database],
        ),
        claim(
            DOCS,
            "{1.1} per layer and {1.33} at the database with a 10 % ratio budget (means of 20 \
             seeds).",
            AMPLIFICATION_20,
            &[
                &format!(
                    "{} = {} = {}",
                    layer("layer1.layer2"),
                    layer("layer2.layer3"),
                    layer("layer3.database")
                ),
                at_database,
            ],
        ),
    ]
}

fn hedging() -> Vec<Claim> {
    let p999 = |p: &str| {
        format!(
            "summary.csv [call_policy={p}, metric=outcomes.p999_ms] min \
             = summary.csv [call_policy={p}, metric=outcomes.p999_ms] max"
        )
    };
    let more = "summary.csv [call_policy=hedge-10ms, metric=calls.api.store.amplification] mean; % above 1";
    vec![
        claim(
            README,
            "a second copy after 10 ms takes the p99.9 from {1,000} ms to {11} ms (in each of 20 \
             seeds) for ~{1} % more attempts",
            HEDGING_20,
            &[&p999("none"), &p999("hedge-10ms"), more],
        ),
        claim(
            DOCS,
            "hedging after 10 ms takes the p99.9 from {1,000} to {11} ms (in each of 20 seeds) \
             for {0.99} % more attempts (mean of 20 seeds);",
            HEDGING_20,
            &[&p999("none"), &p999("hedge-10ms"), more],
        ),
    ]
}

fn circuit_breaker() -> Vec<Claim> {
    let twenty = "replications.csv [call_policy=breaker, calls.api.store.attempts=20] count";
    let most = "replications.csv [call_policy=breaker] max calls.api.store.attempts";
    let store = "summary.csv [call_policy=breaker, metric=calls.api.store.attempts] mean";
    let calls = "summary.csv [call_policy=breaker, metric=calls.api.store.first_tries] mean";
    vec![
        claim(
            README,
            "the breaker opens after 20 calls (in {14} of 20 seeds; after at most {42})",
            BREAKER_FIRST_OPEN_20,
            &[twenty, most],
        ),
        claim(
            README,
            "only its trial calls reach the store: {44} of {5,977} calls in a minute (means of \
             20 seeds)",
            BREAKER_20,
            &[store, calls],
        ),
        claim(
            DOCS,
            "the breaker opens after `min_calls` (20) calls in {14} of 20 seeds (after at most \
             {42}, when fewer than half of the first 20 failed; counted as the calls the store \
             gets in the first 4 s, `--set workload.duration_ms=4000`)",
            BREAKER_FIRST_OPEN_20,
            &[twenty, most],
        ),
        claim(
            DOCS,
            "from then on only its trials reach the store: {44} of {5,977} calls in 60 s (means \
             of 20 seeds)",
            BREAKER_20,
            &[store, calls],
        ),
    ]
}

fn breaker_shards() -> Vec<Claim> {
    let failed = |p: &str| {
        format!("summary.csv [call_policy={p}, metric=outcomes.answered_pct] mean; 100 minus")
    };
    vec![
        claim(
            README,
            "a {10} % error rate from one bad replica becomes a {98} % outage behind one breaker \
             with a 5 % threshold (means of 20 seeds)",
            SHARDS_20,
            &[&failed("none"), &failed("breaker")],
        ),
        claim(
            DOCS,
            "without a policy {10.0} % of requests fail; one breaker at `failure_rate = 0.05` in \
             front of the whole store fails {98.2} %, the good shards' calls too (means of 20 \
             seeds)",
            SHARDS_20,
            &[&failed("none"), &failed("breaker")],
        ),
    ]
}

fn adaptive_throttling() -> Vec<Claim> {
    let service =
        |p: &str, col: &str| format!("summary.csv [call_policy={p}, metric=services.{col}] mean");
    let received = |p: &str| format!("{} / {}", service(p, "arrived"), service(p, "processed"));
    vec![
        claim(
            README,
            "under 5x overload the backend receives {2.00}x what it accepts with K = 2 and \
             {1.10}x with K = 1.1 (means of 20 seeds)",
            THROTTLING_20,
            &[&received("k2"), &received("k1-1")],
        ),
        claim(
            DOCS,
            "{2.00}x with K = 2, {1.10}x with K = 1.1 (arrived / processed in `services.csv`, \
             means of 20 seeds); K = 1.1 costs a little throughput, {11,902} accepted against \
             {12,019} with K = 2",
            THROTTLING_20,
            &[
                &received("k2"),
                &received("k1-1"),
                &service("k1-1", "processed"),
                &service("k2", "processed"),
            ],
        ),
    ]
}

fn metastable_band() -> Vec<Claim> {
    let edge = |col: &str| format!("crossing.csv [metric=recovery.stuck] {col}");
    let undecided = "boundary.csv [side=undecided] replications";
    let stuck = "boundary.csv [side=undecided] estimate; x 80";
    vec![
        claim(
            README,
            "`resim boundary` finds the edge at {24.5}",
            BAND_EDGE,
            &[&edge("boundary")],
        ),
        claim(
            README,
            "# rate_rps = {24.53125}: recovery.stuck crosses 0.50 between {24.0625} (0.000 [0.000, \
             0.161]) # and {25} (0.900 [0.699, 0.972]) (...; {8} points)",
            BAND_EDGE,
            &[
                &edge("boundary"),
                &edge("bracket_low"),
                &edge("bracket_high"),
                &edge("points"),
            ],
        ),
        claim(
            DOCS,
            "(`rate_rps = {24.53125}: recovery.stuck crosses 0.50 between {24.0625} (0.000 \
             [0.000, 0.161]) and {25} (0.900 [0.699, 0.972]) (...)`)",
            BAND_EDGE,
            &[
                &edge("boundary"),
                &edge("bracket_low"),
                &edge("bracket_high"),
            ],
        ),
        claim(
            DOCS,
            "places it at {24.53} req/s, 1.9 % below 25, in {8} points ({220} runs; bracket \
             {24.06} to {25}, the middle point undecided with {80} replications: {35} of 80 \
             stuck)",
            BAND_EDGE,
            &[
                &edge("boundary"),
                &edge("points"),
                &edge("replications"),
                &edge("bracket_low"),
                &edge("bracket_high"),
                undecided,
                stuck,
            ],
        ),
        claim(
            DOCS,
            "the half-stuck crossing is at {22.19} req/s for 60 s runs and at {24.06} req/s for \
             120 s runs",
            BAND_EDGE_TWICE,
            &[
                "crossing.csv [run_length=1] boundary",
                "crossing.csv [run_length=2] boundary",
            ],
        ),
        claim(
            DOCS,
            "the mean `recovery.recovery_ms` is {17.15} s against 16.31 s predicted (+5 %; the \
             mean queue then is {296} attempts)",
            BAND_DRAIN_40,
            &[
                "summary.csv [metric=recovery.recovery_ms] mean; ms to s",
                "summary.csv [metric=timeseries_services.window_start_ms_13000.api.mean_queue] mean",
            ],
        ),
    ]
}

fn fanout_tail() -> Vec<Claim> {
    let failed = |v: &str| format!("outcomes.csv [variant={v}] answered_pct; 100 minus");
    let leaf = |col: &str| format!("calls.csv [variant=hedged, target=leaf] {col}");
    vec![
        claim(
            README,
            "hedged leaf calls bring it to {1} % for {1} % more calls",
            FANOUT_RUN,
            &[
                &failed("hedged"),
                &format!("{}; % above 1", leaf("amplification")),
            ],
        ),
        claim(
            DOCS,
            "Seed 1: {63.125} % of requests fail (answered_pct {36.875}), against 63.40 %",
            FANOUT_RUN,
            &[
                &failed("baseline"),
                "outcomes.csv [variant=baseline] answered_pct",
            ],
        ),
        claim(
            DOCS,
            "{1.035} % of requests against 1 - 0.9999^100 = 0.995 % (0.3 pp allowed, four \
             standard errors), for `amplification` {1.009998} at the leaf in `calls.csv` \
             ({2,019,996} attempts for {2,000,000} calls)",
            FANOUT_RUN,
            &[
                &failed("hedged"),
                &leaf("amplification"),
                &leaf("attempts"),
                &leaf("first_tries"),
            ],
        ),
    ]
}

fn ay10_montecarlo() -> Vec<Claim> {
    let out = |v: &str, p: &str, m: &str| {
        format!("summary.csv [variant={v}, policy={p}, metric=outcomes.{m}]")
    };
    let more_waste = |v: &str, p: &str| {
        format!("paired.csv [variant={v}, policy={p}, axis=policy, metric=outcomes.wasted_ms]")
    };
    let dropped_pair = "paired.csv [variant=baseline, policy=weighted, axis=policy, \
                        metric=outcomes.dropped]";
    let healthy = [
        format!("{0} mean = {0} min", out("baseline", "greedy", "answered")),
        format!("{} mean", out("baseline", "equal", "dropped")),
        format!("{} half-width", out("baseline", "equal", "dropped")),
        format!("{} mean", out("baseline", "weighted", "dropped")),
        format!("{} half-width", out("baseline", "weighted", "dropped")),
        format!("{} mean", out("tariff-slow", "greedy", "answered")),
        format!("{} half-width", out("tariff-slow", "greedy", "answered")),
    ];
    let least = format!("{} mean", more_waste("tariff-slow", "equal"));
    let most = format!("{} mean", more_waste("lognormal-tariff-slow", "weighted"));
    let lognormal = format!(
        "{0} mean = {0} max",
        out("lognormal-tariff-slow", "greedy", "answered")
    );
    let h: Vec<&str> = healthy.iter().map(String::as_str).collect();
    let readme_nums: Vec<&str> = h
        .iter()
        .copied()
        .chain([lognormal.as_str(), least.as_str(), most.as_str()])
        .collect();
    vec![
        claim(
            README,
            "healthy, greedy answers all {48} and equal and weighted drop {2.84} +/- {0.10} and \
             {2.83} +/- {0.10}; with the slow tariff store greedy answers {5.39} +/- {0.14} (the \
             seed's single cycle says 6, and with lognormal latencies it is {0}), while equal and \
             weighted answer none and waste {4,152}-{5,774} ms more than greedy in every latency \
             model.",
            AY10_MC_1000,
            &readme_nums,
        ),
        claim(
            DOCS,
            "on a healthy day greedy answers all {48} in every replication, while equal and \
             weighted drop {2.84} +/- {0.10} and {2.83} +/- {0.10} (the seed's single cycle says \
             2). With the slow tariff store greedy answers {5.39} +/- {0.14}, not 6,",
            AY10_MC_1000,
            &h,
        ),
        claim(
            DOCS,
            "waste {4,152} to {5,774} ms more work per 48 requests than greedy (paired, +/- {5.4} \
             ms at most).",
            AY10_MC_1000,
            &[
                &least,
                &most,
                &format!("{} half-width", more_waste("tariff-slow", "weighted")),
            ],
        ),
        claim(
            DOCS,
            "The line `baseline,weighted,policy,greedy,outcomes.dropped,{2.83},{1.661283},\
             {2.72691},{2.93309},{1000},t` of `resim sweep scenarios/ay10-montecarlo.toml` reads: \
             on a healthy day weighted drops {2.83} more requests (of 48) than greedy, 95 % \
             interval {2.73} to {2.93}, over {1000} replications.",
            AY10_MC_1000,
            &[
                &format!("{dropped_pair} mean"),
                &format!("{dropped_pair} sd"),
                &format!("{dropped_pair} ci_low"),
                &format!("{dropped_pair} ci_high"),
                &format!("{dropped_pair} n"),
                &format!("{dropped_pair} mean"),
                &format!("{dropped_pair} ci_low"),
                &format!("{dropped_pair} ci_high"),
                &format!("{dropped_pair} n"),
            ],
        ),
    ]
}

// --------------------------------------------------------------- the checking

/// Runs a command into `out`.
fn run(cmd: Cmd, out: &Path) {
    let (verb, file, args) = match cmd {
        Cmd::Run(f, a) => ("run", f, a),
        Cmd::Sweep(f, a) => ("sweep", f, a),
        Cmd::Boundary(f, a) => ("boundary", f, a),
    };
    resim()
        .arg(verb)
        .arg(scenario(file))
        .args(args)
        .arg("--out")
        .arg(out)
        .args(["--quiet", "--no-report"])
        // the docs quote per-window means of summary.csv too
        .args(match cmd {
            Cmd::Sweep(..) => &["--set", "montecarlo.windows=true"][..],
            _ => &[][..],
        })
        .assert()
        .success();
}

/// The output folders of the commands run so far, and their CSV files read.
struct Outputs {
    scratch: tempfile::TempDir,
    folders: Vec<(Cmd, PathBuf)>,
    files: HashMap<PathBuf, Csv>,
}

impl Outputs {
    fn new() -> Outputs {
        Outputs {
            scratch: tempfile::tempdir().expect("a temporary folder"),
            folders: Vec::new(),
            files: HashMap::new(),
        }
    }

    /// The folder of `cmd`'s output, running it the first time.
    fn folder(&mut self, cmd: Cmd) -> PathBuf {
        if let Some((_, f)) = self.folders.iter().find(|(c, _)| *c == cmd) {
            return f.clone();
        }
        let folder = self.scratch.path().join(self.folders.len().to_string());
        run(cmd, &folder);
        self.folders.push((cmd, folder.clone()));
        folder
    }
}

/// One reading of a number spec (see the module doc), before its map; `files`
/// keeps the CSV files read so far.
fn read_one(files: &mut HashMap<PathBuf, Csv>, folder: &Path, spec: &str) -> Result<f64, String> {
    let spec = spec.trim();
    let (file, rest) = spec
        .split_once(" [")
        .ok_or_else(|| format!("`{spec}`: no `FILE [selector]`"))?;
    let (selector, what) = rest
        .split_once("] ")
        .ok_or_else(|| format!("`{spec}`: no `] what`"))?;
    let filter: Vec<(&str, &str)> = selector
        .split(", ")
        .filter(|s| !s.is_empty())
        .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
        .collect();
    let csv = files
        .entry(folder.join(file))
        .or_insert_with_key(|p| Csv::read(p));
    // a misspelt column would select nothing, and "0 of 20" would hold
    if let Some((col, _)) = filter
        .iter()
        .find(|(k, _)| !csv.headers.iter().any(|h| h == k))
    {
        return Err(format!("`{spec}`: {file} has no column `{col}`"));
    }
    let rows = csv.select(&filter);
    let number = |row: &HashMap<String, String>, col: &str| -> Result<Option<f64>, String> {
        let cell = row
            .get(col)
            .ok_or_else(|| format!("`{spec}`: {file} has no column `{col}`"))?;
        if cell.is_empty() {
            return Ok(None);
        }
        cell.parse()
            .map(Some)
            .map_err(|_| format!("`{spec}`: `{cell}` is not a number"))
    };
    if what == "count" {
        return Ok(rows.len() as f64);
    }
    let extreme = match what.split_once(' ') {
        Some(("max", col)) => Some((col, f64::max as fn(f64, f64) -> f64)),
        Some(("min", col)) => Some((col, f64::min as fn(f64, f64) -> f64)),
        _ => None,
    };
    if let Some((col, pick)) = extreme {
        let mut found: Option<f64> = None;
        for row in &rows {
            if let Some(v) = number(row, col)? {
                found = Some(found.map_or(v, |m| pick(m, v)));
            }
        }
        return found.ok_or_else(|| format!("`{spec}`: no value in {} rows", rows.len()));
    }
    let [row] = rows[..] else {
        return Err(format!(
            "`{spec}`: the selector picks {} rows of {file}, not one",
            rows.len()
        ));
    };
    let value = |col: &str| -> Result<f64, String> {
        number(row, col)?.ok_or_else(|| format!("`{spec}`: the cell `{col}` is empty"))
    };
    if what == "half-width" {
        return Ok((value("ci_high")? - value("ci_low")?) / 2.0);
    }
    value(what)
}

/// A reading: one, or a ratio of two joined by ` / `.
fn read(files: &mut HashMap<PathBuf, Csv>, folder: &Path, spec: &str) -> Result<f64, String> {
    match spec.split_once(" / ") {
        Some((a, b)) => Ok(read_one(files, folder, a)? / read_one(files, folder, b)?),
        None => read_one(files, folder, spec),
    }
}

/// Applies a map (`ms to s`, `x N`, `100 minus`, `% above 1`).
fn apply(map: &str, v: f64) -> Result<f64, String> {
    match map {
        "ms to s" => Ok(v / 1000.0),
        "100 minus" => Ok(100.0 - v),
        "% above 1" => Ok((v - 1.0) * 100.0),
        _ => match map.strip_prefix("x ").map(str::parse::<f64>) {
            Some(Ok(k)) => Ok(v * k),
            _ => Err(format!("unknown map `{map}`")),
        },
    }
}

/// `v` written as `like` is: as many decimals, thousands separated by commas
/// when `like` separates them.
fn written_as(like: &str, v: f64) -> String {
    let decimals = like.split_once('.').map_or(0, |(_, d)| d.len());
    let text = format!("{v:.decimals$}");
    let text = if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches('-').to_string()
    } else {
        text
    };
    if !like.contains(',') {
        return text;
    }
    let (sign, unsigned) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (int, frac) = match unsigned.split_once('.') {
        Some((i, f)) => (i, format!(".{f}")),
        None => (unsigned, String::new()),
    };
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}{frac}")
}

/// A claim's text without its braces, and the numbers that were in them.
pub(crate) fn split_numbers(text: &str) -> (String, Vec<String>) {
    let mut plain = String::new();
    let mut numbers = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        plain.push_str(&rest[..open]);
        let number = &rest[open + 1..close];
        plain.push_str(number);
        numbers.push(number.to_string());
        rest = rest.get(close + 1..).unwrap_or("");
    }
    plain.push_str(rest);
    (plain, numbers)
}

/// Runs of white space as one space.
pub(crate) fn one_space(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Checks one claim; the problems found, each on its own lines.
fn check_claim(out: &mut Outputs, docs: &HashMap<&str, String>, claim: &Claim) -> Vec<String> {
    let mut problems = Vec::new();
    let (plain, numbers) = split_numbers(&claim.text);
    let plain = one_space(&plain);
    if !docs[claim.doc].contains(&plain) {
        problems.push(format!("{} no longer says:\n  {plain}", claim.doc));
    }
    if numbers.len() != claim.nums.len() {
        problems.push(format!(
            "{}: {} numbers in braces but {} readings in:\n  {plain}",
            claim.doc,
            numbers.len(),
            claim.nums.len()
        ));
        return problems;
    }
    let folder = out.folder(claim.cmd);
    let source = format!("{:?}", claim.cmd);
    for problem in compare_numbers(&mut out.files, &folder, &numbers, &claim.nums, &source) {
        problems.push(format!("{}: {problem}\n  {plain}", claim.doc));
    }
    problems
}

/// Compares each number a doc gives (`numbers`, as written) with what its
/// reading (`specs`, one per number: see the module doc) gives in `folder`,
/// the output of `source`; one problem per number that does not hold.
pub(crate) fn compare_numbers(
    files: &mut HashMap<PathBuf, Csv>,
    folder: &Path,
    numbers: &[String],
    specs: &[String],
    source: &str,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (doc_number, spec) in numbers.iter().zip(specs) {
        let (readings, map) = spec.split_once("; ").unwrap_or((spec, "x 1"));
        for reading in readings.split(" = ") {
            let got = read(files, folder, reading).and_then(|v| apply(map, v));
            match got {
                Ok(v) if written_as(doc_number, v) == *doc_number => {}
                Ok(v) => problems.push(format!(
                    "the doc says {doc_number} where {source} gives {} ({v}); reading: {reading}",
                    written_as(doc_number, v)
                )),
                Err(e) => problems.push(e),
            }
        }
    }
    problems
}

/// Checks every claim of a group, each command run once; fails with every
/// problem found.
fn check(claims: Vec<Claim>) {
    let mut docs = HashMap::new();
    for doc in [README, DOCS] {
        let text = std::fs::read_to_string(root().join(doc)).expect("the doc");
        docs.insert(doc, one_space(&text));
    }
    let mut out = Outputs::new();
    let problems: Vec<String> = claims
        .iter()
        .flat_map(|c| check_claim(&mut out, &docs, c))
        .collect();
    assert!(
        problems.is_empty(),
        "{} figure(s) of the docs no longer hold:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

#[test]
fn goodput_collapse_figures_hold() {
    check(goodput_collapse());
}

#[test]
fn retry_storm_figures_hold() {
    check(retry_storm());
}

#[test]
fn lifo_after_spike_figures_hold() {
    check(lifo_after_spike());
}

#[test]
fn replicas_figures_hold() {
    check(replicas());
}

/// With the README's five minutes: one run of the 20-seed sweep for both.
#[test]
fn gc_pauses_figures_hold() {
    check(gc_pauses().into_iter().chain(five_minutes()).collect());
}

#[test]
fn balancers_linkerd_figures_hold() {
    check(balancers_linkerd());
}

#[test]
fn balancers_after_the_proxies_code_figures_hold() {
    check(
        balancers_envoy_least_request()
            .into_iter()
            .chain(balancers_haproxy_leastconn())
            .chain(balancers_haproxy_random())
            .chain(balancers_haproxy_maxconn())
            .collect(),
    );
}

#[test]
fn noisy_neighbour_and_warmup_figures_hold() {
    check(noisy_neighbour().into_iter().chain(warmup()).collect());
}

#[test]
fn retry_policies_clients_and_amplification_figures_hold() {
    check(
        retry_policies()
            .into_iter()
            .chain(retry_budgets())
            .chain(retry_clients())
            .chain(retry_amplification())
            .collect(),
    );
}

#[test]
fn hedging_and_breaker_figures_hold() {
    check(
        hedging()
            .into_iter()
            .chain(circuit_breaker())
            .chain(breaker_shards())
            .chain(adaptive_throttling())
            .collect(),
    );
}

#[test]
fn metastable_band_and_fanout_tail_figures_hold() {
    check(metastable_band().into_iter().chain(fanout_tail()).collect());
}

#[test]
fn ay10_montecarlo_figures_hold() {
    check(ay10_montecarlo());
}

/// The numbers are written as the docs write them: same decimals, thousands
/// separated when the doc separates them, no "-0".
#[test]
fn numbers_are_written_as_the_doc_writes_them() {
    assert_eq!(written_as("4,152", 4151.83), "4,152");
    assert_eq!(written_as("1,000", 1000.0), "1,000");
    assert_eq!(written_as("644", 644.336584), "644");
    assert_eq!(written_as("0.10", 0.1031), "0.10");
    assert_eq!(written_as("12,019", 12019.4), "12,019");
    assert_eq!(written_as("0.00", -0.001), "0.00");
    assert_eq!(written_as("38.9", 38850.0 / 1000.0), "38.9");
    let (plain, numbers) = split_numbers("from {24} s to {1,000} ms.");
    assert_eq!(plain, "from 24 s to 1,000 ms.");
    assert_eq!(numbers, ["24", "1,000"]);
}

/// Every stochastic bundled scenario whose figures the docs quote has claims
/// here, and every claim runs a bundled scenario.
#[test]
fn every_claim_runs_a_bundled_scenario() {
    let all: Vec<Claim> = [
        goodput_collapse(),
        retry_storm(),
        lifo_after_spike(),
        replicas(),
        noisy_neighbour(),
        warmup(),
        retry_policies(),
        retry_budgets(),
        retry_clients(),
        retry_amplification(),
        hedging(),
        circuit_breaker(),
        breaker_shards(),
        adaptive_throttling(),
        ay10_montecarlo(),
        metastable_band(),
        fanout_tail(),
        five_minutes(),
    ]
    .into_iter()
    .flatten()
    .collect();
    for c in &all {
        assert!(scenario(c.cmd.file()).is_file(), "{:?}", c.cmd);
        assert!(
            !split_numbers(&c.text).1.is_empty(),
            "no number in {}",
            c.text
        );
    }
}
