//! Tables read each compare row's own model: what a row runs decides its cells,
//! whatever set it (a compare axis, a variant), and whichever row comes first.

use crate::common::{Csv, file_with, run_into};
use std::path::Path;

/// The AY10 chain (cycles: every run gives the same numbers), with `extra` TOML
/// appended: variants, compare axes, more services.
fn ay10(extra: &str) -> String {
    format!(
        r#"
[scenario]
name = "tables"
seed = 1

[slo]
threshold_ms = 200
peak_read_rps = 416.67

[gateway]
share_ms = 20

[services.tracking]
routes = ["/track"]

[services.tracking.handler]
type = "plan"
budget = "slo"
policy = "greedy"
cancellation = false
on_failure = "continue"
branches = [
  {{ name = "delivery-op", calls = ["delivery"] }},
  {{ name = "pricing", calls = ["tariff", "measure"] }},
]

[dependencies.delivery]
median_ms = 8
latency = {{ cycle = [8, 9, 8, 10, 8, 9, 8, 10, 8, 9, 8, 10, 8, 9, 8, 10, 40] }}

[dependencies.tariff]
median_ms = 6
latency = {{ cycle = [6, 7, 6, 8, 6, 7, 6, 8, 6, 7, 6, 8, 6, 7, 6, 8, 80] }}

[dependencies.measure]
median_ms = 12
latency = {{ cycle = [12, 13, 12, 14, 12, 13, 12, 14, 12, 13, 12, 14, 12, 13, 12, 14, 100] }}

[workload]
type = "sequence"
route = "/track"
requests = 48
{extra}"#
    )
}

/// Runs scenario `text`; the output folder (kept alive by the guard).
fn run(text: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let (file_dir, file) = file_with(text);
    let out = run_into(&file, &["--quiet"]);
    (file_dir, out)
}

fn read(dir: &Path, table: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{table}.csv")))
        .unwrap_or_else(|e| panic!("{table}.csv: {e}"))
}

#[test]
fn false_drops_are_the_same_when_a_variant_sets_the_policy() {
    let (_f1, axis) = run(&ay10(
        r#"
[compare]
"services.tracking.handler.policy" = ["greedy", "equal", "weighted"]
"#,
    ));
    let (_f2, variant) = run(&ay10(
        r#"
[variants.equal]
"services.tracking.handler.policy" = "equal"

[variants.weighted]
"services.tracking.handler.policy" = "weighted"

[compare]
variant = ["baseline", "equal", "weighted"]
"#,
    ));
    let expected = "policy,extra_drops,requests,extra_drop_pct,extra_drop_rps\n\
                    equal,2,48,4.166667,17.36125\n\
                    weighted,2,48,4.166667,17.36125\n";
    assert_eq!(read(axis.path(), "false_drops"), expected);
    assert_eq!(read(variant.path(), "false_drops"), expected);
}

#[test]
fn false_drops_compare_rows_that_differ_in_the_policy_alone() {
    // greedy comes last and a second axis changes something else: the reference is
    // the greedy row with the first row's other settings, as with an axis first
    let (_f, out) = run(&ay10(
        r#"
[variants.equal]
"services.tracking.handler.policy" = "equal"

[variants.slow-greedy]
"dependencies.tariff.latency" = { constant = 500 }

[compare]
variant = ["equal", "slow-greedy", "baseline"]
"#,
    ));
    assert_eq!(
        read(out.path(), "false_drops"),
        "policy,extra_drops,requests,extra_drop_pct,extra_drop_rps\n\
         equal,2,48,4.166667,17.36125\n"
    );
}

#[test]
fn false_drops_tell_two_plan_services_apart() {
    // `archive` takes no traffic: its policy changes nothing; `tracking`'s does
    let (_f, out) = run(&ay10(
        r#"
[services.archive]
routes = ["/archive"]
handler = { type = "plan", budget = "slo", policy = "greedy", branches = [
  { name = "a", calls = ["delivery", "tariff"] },
] }

[compare]
"services.archive.handler.policy" = ["greedy", "equal"]
"services.tracking.handler.policy" = ["greedy", "equal", "weighted"]
"#,
    ));
    assert_eq!(
        read(out.path(), "false_drops"),
        "policy,extra_drops,requests,extra_drop_pct,extra_drop_rps,service\n\
         equal,2,48,4.166667,17.36125,tracking\n\
         weighted,2,48,4.166667,17.36125,tracking\n\
         equal,0,48,0,0,archive\n"
    );
    let outcomes = Csv::read(&out.path().join("outcomes.csv"));
    assert_eq!(outcomes.rows.len(), 6);
}

#[test]
fn a_variant_that_adds_a_dependency_gets_its_own_column() {
    let (_f, out) = run(&ay10(
        r#"
[variants.more]
"dependencies.discount" = { median_ms = 5, latency = { constant = 500 } }
"services.tracking.handler.branches" = [
  { name = "delivery-op", calls = ["delivery"] },
  { name = "pricing", calls = ["tariff", "measure", "discount"] },
]

[compare]
variant = ["baseline", "more"]
"#,
    ));
    let outcomes = Csv::read(&out.path().join("outcomes.csv"));
    let failed: Vec<&str> = outcomes
        .headers
        .iter()
        .map(String::as_str)
        .filter(|h| h.starts_with("failed_"))
        .collect();
    assert_eq!(
        failed,
        [
            "failed_delivery",
            "failed_tariff",
            "failed_measure",
            "failed_discount"
        ]
    );
    // the baseline has no discount store: no figure, not zero
    let base = outcomes.row(&[("variant", "baseline")]);
    assert_eq!(base["failed_discount"], "");
    assert_eq!(base["dropped"], "0");
    let more = outcomes.row(&[("variant", "more")]);
    assert_eq!(more["failed_discount"], "48");
    assert_eq!(more["dropped"], "48");
    let shares = Csv::read(&out.path().join("shares.csv"));
    shares.row(&[("variant", "more"), ("dependency", "discount")]);
    assert!(
        shares
            .select(&[("variant", "baseline"), ("dependency", "discount")])
            .is_empty()
    );
}

#[test]
fn reordered_dependencies_keep_their_failures_in_their_own_column() {
    let base = ay10("").replace(
        "[dependencies.delivery]",
        "[dependencies.slow]\nmedian_ms = 5\nlatency = { constant = 500 }\n\n[dependencies.delivery]",
    );
    // the variant writes the dependencies anew, in another order, and makes
    // delivery the slow one
    let text = format!(
        r#"{base}
[variants.reordered]
"dependencies" = {{ measure = {{ median_ms = 12, latency = {{ constant = 12 }} }}, slow = {{ median_ms = 5, latency = {{ constant = 5 }} }}, tariff = {{ median_ms = 6, latency = {{ constant = 6 }} }}, delivery = {{ median_ms = 8, latency = {{ constant = 500 }} }} }}

[compare]
variant = ["baseline", "reordered"]
"#
    );
    let (_f, out) = run(&text);
    let outcomes = Csv::read(&out.path().join("outcomes.csv"));
    let row = outcomes.row(&[("variant", "reordered")]);
    assert_eq!(row["dropped"], "48");
    assert_eq!(row["failed_delivery"], "48", "{row:?}");
    for other in ["failed_slow", "failed_tariff", "failed_measure"] {
        assert_eq!(row[other], "0", "{other}: {row:?}");
    }
}

#[test]
fn a_variant_that_changes_the_handler_type_gets_its_tables() {
    // the first row has no server: the server tables come from the second row
    let (_f, out) = run(&ay10(
        r#"
[variants.queued]
"services.tracking.handler" = { type = "server", slots = 1, queue = 4, service = { constant = 5 } }

[compare]
variant = ["baseline", "queued"]
"#,
    ));
    let services = Csv::read(&out.path().join("services.csv"));
    assert_eq!(services.rows.len(), 1);
    let row = services.row(&[("variant", "queued"), ("service", "tracking")]);
    assert_eq!(row["arrived"], "48");
    assert_eq!(row["processed"], "48");
    Csv::read(&out.path().join("server_work.csv")).row(&[("variant", "queued")]);
    // the plan's tables keep both rows
    let outcomes = Csv::read(&out.path().join("outcomes.csv"));
    assert_eq!(outcomes.rows.len(), 2);
}

#[test]
fn a_variant_that_changes_the_workload_type_gets_its_tables() {
    let (_f, out) = run(&ay10(
        r#"
[variants.open]
"workload" = { type = "open", route = "/track", rate_rps = 100, requests = 48 }

[compare]
variant = ["baseline", "open"]
"#,
    ));
    let run = Csv::read(&out.path().join("run.csv"));
    assert_eq!(run.rows.len(), 1);
    assert_eq!(run.row(&[("variant", "open")])["requests"], "48");
}

/// `answered_mean_ms` is the mean end-to-end time of the answered requests only,
/// next to `mean_ms` over every response: a store alternating 10 ms and 300 ms
/// against a 200 ms budget answers every other request in 10 ms and drops the
/// others at their 200 ms timeout.
#[test]
fn answered_mean_ms_leaves_the_failed_responses_out() {
    let text = r#"
[scenario]
name = "answered mean"
seed = 1

[slo]
threshold_ms = 200

[services.api]
routes = ["/work"]
handler = { type = "plan", budget = "slo", branches = [{ name = "b", calls = ["store"] }] }

[dependencies.store]
latency = { cycle = [10, 300] }

[workload]
type = "sequence"
requests = 4
"#;
    let (_file_dir, file) = file_with(text);
    let out = run_into(&file, &["--quiet"]);
    let csv = Csv::read(&out.path().join("outcomes.csv"));
    // appended after the seed's columns and the answered percentiles, before
    // the failure counts and the percentiles over every request
    let at = |h: &str| csv.headers.iter().position(|c| c == h);
    assert_eq!(at("answered_mean_ms").map(|i| i + 1), at("failed"));
    assert_eq!(at("p999_ms").map(|i| i + 1), at("answered_mean_ms"));
    let row = &csv.rows[0];
    let num = |c: &str| crate::common::num(row, c);
    assert_eq!((num("answered"), num("dropped")), (2.0, 2.0));
    assert_eq!(num("mean_ms"), 105.0, "(10 + 200) / 2 over every response");
    assert_eq!(num("answered_mean_ms"), 10.0, "the answered ones only");
    assert_eq!(num("p50_ms"), 10.0);

    // nothing answered: the cell is empty, as the percentiles' are
    let (_d, file) = file_with(&text.replace("[10, 300]", "[300]"));
    let out = run_into(&file, &["--quiet"]);
    let csv = Csv::read(&out.path().join("outcomes.csv"));
    assert_eq!(csv.rows[0]["answered"], "0");
    assert_eq!(csv.rows[0]["answered_mean_ms"], "");
    assert_eq!(csv.rows[0]["p50_ms"], "");
}
