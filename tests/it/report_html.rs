//! `report.html`: written beside the CSV files, self-contained, the same bytes for
//! the same inputs, skipped with `--no-report`, and the latency table behind its
//! distribution chart.

use crate::common::{Csv, num, resim, scenario};
use std::path::Path;

fn run(file: &str, out: &Path, extra: &[&str]) {
    resim()
        .arg("run")
        .arg(scenario(file))
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .args(extra)
        .assert()
        .success();
}

fn page(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("report.html"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Every `src="..."` / `href="..."` value of the page.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            out.push(rest[..rest.find('"').unwrap_or(rest.len())].to_string());
        }
    }
    out
}

#[test]
fn a_run_writes_a_self_contained_report_with_its_charts() {
    let dir = tempfile::tempdir().unwrap();
    run("scenarios/io22-capacity-ladder.toml", dir.path(), &[]);
    let html = page(dir.path());
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    let links = links(&html);
    assert!(!links.is_empty(), "the contents list links to sections");
    for l in &links {
        assert!(l.starts_with('#'), "a link leaves the page: {l}");
    }
    assert!(!html.contains("<script"), "no script");
    assert!(!html.contains("<link"), "no stylesheet from elsewhere");
    // two ladder charts (throughput, p95 wait), the outcomes (written for every
    // scenario) and its failed requests on their own scale (the ladder's top
    // steps shed), and the distribution; no tail chart: fewer than 90 % of the
    // requests were answered, so no line reaches it
    assert_eq!(html.matches("<svg").count(), 5);
    assert!(html.contains("Failed requests on their own scale"));
    assert!(!html.contains("Response-time tail"));
    for text in [
        "Ladder: processed and successful requests per step",
        "knee: concurrency = 12",
        "saturation: concurrency = 24",
        "true limit: concurrency = 8",
        "response time (ms)",
    ] {
        assert!(html.contains(text), "missing {text:?}");
    }
    // every printed table and the distribution table are on the page
    for t in ["ladder", "findings", "totals", "latency_cdf"] {
        assert!(html.contains(&format!("<section id=\"{t}\">")), "{t}");
    }
}

#[test]
fn the_same_run_gives_the_same_report_bytes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    run("scenarios/dy13-limiter-keys.toml", a.path(), &[]);
    run("scenarios/dy13-limiter-keys.toml", b.path(), &[]);
    assert_eq!(page(a.path()), page(b.path()));
    // and another seed changes nothing here but the heading's seed
    let c = tempfile::tempdir().unwrap();
    run(
        "scenarios/dy13-limiter-keys.toml",
        c.path(),
        &["--seed", "7"],
    );
    assert_ne!(page(a.path()), page(c.path()));
    let html = page(a.path());
    assert!(html.contains("Limiter passes and rejects per member"));
    assert!(html.contains("[], loan-limiter, u5"), "bar labels");
}

#[test]
fn no_report_writes_the_csv_files_only_and_removes_an_old_page() {
    let dir = tempfile::tempdir().unwrap();
    run("scenarios/ay10-tariff-slowdown.toml", dir.path(), &[]);
    assert!(dir.path().join("report.html").exists());
    run(
        "scenarios/ay10-tariff-slowdown.toml",
        dir.path(),
        &["--no-report"],
    );
    assert!(!dir.path().join("report.html").exists());
    assert!(dir.path().join("outcomes.csv").exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| e.file_name() != ".resim-files")
        .collect();
    assert!(leftovers.is_empty(), "temporaries left: {leftovers:?}");
}

#[test]
fn the_latency_table_holds_each_rows_response_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    run("scenarios/ay10-tariff-slowdown.toml", dir.path(), &[]);
    let cdf = Csv::read(&dir.path().join("latency_cdf.csv"));
    assert_eq!(
        cdf.headers,
        [
            "variant",
            "policy",
            "cancellation",
            "percentile",
            "latency_ms"
        ]
    );
    let outcomes = Csv::read(&dir.path().join("outcomes.csv"));
    // 19 percentiles, and one more row at the answered share where some failed
    let partly = outcomes
        .rows
        .iter()
        .filter(|o| o["answered"] != o["requests"] && o["answered"] != "0")
        .count();
    assert!(partly > 0, "some row of AY10 drops requests");
    assert_eq!(cdf.rows.len(), outcomes.rows.len() * 19 + partly);
    for o in &outcomes.rows {
        let key = [
            ("variant", o["variant"].as_str()),
            ("policy", o["policy"].as_str()),
            ("cancellation", o["cancellation"].as_str()),
        ];
        let rows = cdf.select(&key);
        let at = |p: &str| {
            rows.iter()
                .find(|r| r["percentile"] == p)
                .map(|r| r["latency_ms"].clone())
                .unwrap()
        };
        // the percentiles over every request agree with the outcomes table:
        // empty where more than that share failed
        assert_eq!(at("50"), o["p50_all_ms"], "{key:?}");
        assert_eq!(at("90"), o["p90_all_ms"], "{key:?}");
        assert_eq!(at("99"), o["p99_all_ms"], "{key:?}");
        assert_eq!(at("99.90"), o["p999_all_ms"], "{key:?}");
        let answered: f64 = o["answered"].parse().unwrap();
        let requests: f64 = o["requests"].parse().unwrap();
        let share = answered / requests * 100.0;
        let values: Vec<(f64, Option<f64>)> = rows
            .iter()
            .map(|r| {
                (
                    r["percentile"].parse().unwrap(),
                    r["latency_ms"].parse().ok(),
                )
            })
            .collect();
        // the curve rises and stops at the answered share: a value at every
        // percentile up to it, none above
        for (p, v) in &values {
            assert_eq!(
                v.is_some(),
                *p <= share + 1e-9 && answered > 0.0,
                "{key:?} {p}"
            );
        }
        let shown: Vec<f64> = values.iter().filter_map(|(_, v)| *v).collect();
        assert!(shown.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
        if answered > 0.0 && answered < requests {
            assert!(
                values.iter().any(|(p, _)| (p - share).abs() < 1e-4),
                "a row at the answered share {share}: {values:?}"
            );
        }
    }
    // not printed: the text report stays as it was
    let out = resim()
        .arg("run")
        .arg(scenario("scenarios/ay10-tariff-slowdown.toml"))
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("latency_ms"));
}

#[test]
fn a_sweep_report_has_forest_plots_and_merge_writes_the_same_page() {
    let whole = tempfile::tempdir().unwrap();
    let file = scenario("scenarios/ay10-montecarlo.toml");
    resim()
        .arg("sweep")
        .arg(&file)
        .args(["-n", "3", "--quiet", "--out"])
        .arg(whole.path())
        .assert()
        .success();
    let html = page(whole.path());
    // three report metrics: a mean chart and a paired chart each
    assert_eq!(html.matches("<svg").count(), 6);
    assert!(html.contains("outcomes.answered: paired difference to the reference row"));
    let work = tempfile::tempdir().unwrap();
    for k in 1..=2 {
        resim()
            .arg("sweep")
            .arg(&file)
            .args(["-n", "3", "--quiet", "--shard", &format!("{k}/2"), "--out"])
            .arg(work.path().join(format!("s{k}")))
            .assert()
            .success();
        assert!(!work.path().join(format!("s{k}/report.html")).exists());
    }
    let merged = work.path().join("m");
    resim()
        .arg("merge")
        .arg("--quiet")
        .arg("--out")
        .arg(&merged)
        .arg(work.path().join("s2"))
        .arg(work.path().join("s1"))
        .assert()
        .success();
    assert_eq!(page(&merged), html);
    let again = work.path().join("m2");
    resim()
        .arg("merge")
        .args(["--quiet", "--no-report", "--out"])
        .arg(&again)
        .arg(work.path().join("s1"))
        .arg(work.path().join("s2"))
        .assert()
        .success();
    assert!(!again.join("report.html").exists());
    assert!(again.join("summary.csv").exists());
}

#[test]
fn time_series_charts_shade_each_rows_own_fault_window_one_chart_per_row() {
    let dir = tempfile::tempdir().unwrap();
    run("scenarios/retry-storm.toml", dir.path(), &[]);
    let html = page(dir.path());
    let section = |id: &str| {
        let start = html
            .find(&format!("<section id=\"{id}\">"))
            .unwrap_or_else(|| panic!("no section {id}"));
        let end = start + html[start..].find("</section>").unwrap();
        html[start..end].to_string()
    };
    let ts = section("timeseries");
    // 5 variants x 3 fault lengths: small multiples, side by side
    assert_eq!(ts.matches("<svg").count(), 15);
    assert!(ts.contains("class=\"charts grid\""), "small multiples");
    // each compare row's own fault window (faults.0.for_ms is a compare axis)
    for (for_ms, end_s) in [(500, "10.50"), (2000, "12"), (10000, "20")] {
        assert!(
            ts.contains(&format!("variant = baseline, for_ms = {for_ms}")),
            "{for_ms}"
        );
        assert!(
            ts.contains(&format!(
                "fault 0: latency_factor 3 on backend (10 to {end_s} s)"
            )),
            "{for_ms}"
        );
    }
    // the recovery of the rows that recover (recovery.csv) is marked
    let recovery = Csv::read(&dir.path().join("recovery.csv"));
    let recovered = recovery
        .rows
        .iter()
        .filter(|r| !r["recovered_at_ms"].is_empty())
        .count();
    assert!(recovered > 0 && recovered < 15, "{recovered}");
    assert_eq!(ts.matches("recovered from fault 0").count(), recovered);
    for axis in [
        "time (s)",
        "requests per second",
        "answered (goodput) per s",
    ] {
        assert!(ts.contains(axis), "{axis}");
    }
}

#[test]
fn limiter_windows_sum_to_the_totals_and_are_charted_per_key() {
    let dir = tempfile::tempdir().unwrap();
    run("scenarios/noisy-neighbour.toml", dir.path(), &[]);
    let windows = Csv::read(&dir.path().join("timeseries_limiters.csv"));
    let totals = Csv::read(&dir.path().join("limiters.csv"));
    let total = totals.row(&[("limiter", "per-client")]);
    for column in ["passed", "rejected"] {
        let sum: f64 = windows
            .select(&[("key", "all")])
            .iter()
            .map(|r| num(r, column))
            .sum();
        assert_eq!(sum, num(total, column), "{column}");
        let keys: f64 = windows
            .rows
            .iter()
            .filter(|r| r["key"] != "all")
            .map(|r| num(r, column))
            .sum();
        assert_eq!(keys, sum, "the keys' rows add up to the limiter's");
    }
    // the small keys are never rejected; the large one is held near its 100/s
    for key in ["key-a", "key-b"] {
        assert!(
            windows
                .select(&[("key", key)])
                .iter()
                .all(|r| num(r, "rejected") == 0.0)
        );
    }
    for start in (1..10).map(|s| (s * 1000).to_string()) {
        let large = windows.row(&[("key", "key-c"), ("window_start_ms", &start)]);
        let passed = num(large, "passed");
        assert!((99.0..=101.0).contains(&passed), "{start}: {passed}");
    }
    let html = page(dir.path());
    assert!(html.contains("Limiter per-client: passes and rejects per second per key"));
    assert!(html.contains("key-c: rejected per s"));
    assert!(
        !html.contains("key-a: rejected per s"),
        "an all-zero line is left out"
    );
}

/// The servers' and dependencies' arrivals and every call site's attempts
/// get a chart per compare row: a line per server or dependency, and per
/// site, on shared scales; each row's fault window shaded and its recovery
/// marked.
#[test]
fn servers_and_call_sites_get_a_rate_chart_per_row() {
    let dir = tempfile::tempdir().unwrap();
    let window = ["--set", "output.window_ms=1000"];
    run("scenarios/retry-amplification.toml", dir.path(), &window);
    let html = page(dir.path());
    let calls = section(&html, "timeseries_calls");
    assert_eq!(calls.matches("<svg").count(), 3, "one chart per variant");
    assert!(calls.contains("class=\"charts grid\""), "small multiples");
    assert!(calls.contains("attempts per second"));
    for site in ["main", "layer1", "layer2", "layer3"] {
        // a legend entry: its text on a line of its own
        let line = format!("\n{site} -&gt; ");
        assert_eq!(calls.matches(&line).count(), 3, "{site}: a line per chart");
    }
    assert!(calls.contains("layer3 -&gt; database"));
    let services = section(&html, "timeseries_services");
    assert_eq!(services.matches("<svg").count(), 3);
    assert!(services.contains("arrivals per second"));
    assert_eq!(services.matches("\ndatabase\n</text>").count(), 3);

    let dir = tempfile::tempdir().unwrap();
    run("scenarios/retry-storm.toml", dir.path(), &[]);
    let html = page(dir.path());
    let recovered = Csv::read(&dir.path().join("recovery.csv"))
        .rows
        .iter()
        .filter(|r| !r["recovered_at_ms"].is_empty())
        .count();
    for id in ["timeseries_services", "timeseries_calls"] {
        let s = section(&html, id);
        assert_eq!(s.matches("<svg").count(), 15, "{id}: 5 variants x 3 faults");
        for (for_ms, end_s) in [(500, "10.50"), (2000, "12"), (10000, "20")] {
            let title = format!("variant = baseline, for_ms = {for_ms}");
            assert!(s.contains(&title), "{id} {for_ms}");
            let band = format!("fault 0: latency_factor 3 on backend (10 to {end_s} s)");
            assert!(s.contains(&band), "{id} {for_ms}");
        }
        assert_eq!(
            s.matches("recovered from fault 0").count(),
            recovered,
            "{id}"
        );
    }
    assert_eq!(
        section(&html, "timeseries_calls")
            .matches("\nmain -&gt; backend\n</text>")
            .count(),
        15
    );
}

/// The `<section id="..">` of a page, up to its end.
fn section(html: &str, id: &str) -> String {
    let start = html
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let end = start + html[start..].find("</section>").unwrap();
    html[start..end].to_string()
}

#[test]
fn a_sweeps_time_series_shades_each_rows_own_fault_and_merge_draws_the_same_page() {
    let file = scenario("scenarios/retry-storm.toml");
    let short = ["--set", "workload.duration_ms=15000", "-n", "3", "--quiet"];
    let whole = tempfile::tempdir().unwrap();
    resim()
        .arg("sweep")
        .arg(&file)
        .args(short)
        .arg("--out")
        .arg(whole.path())
        .assert()
        .success();
    let html = page(whole.path());
    let ts = section(&html, "timeseries");
    // one chart per compare row (5 variants x 3 fault lengths), side by side
    assert_eq!(ts.matches("<svg").count(), 15);
    assert!(ts.contains("class=\"charts grid\""), "small multiples");
    for (for_ms, end_s) in [(500, "10.50"), (2000, "12"), (10000, "20")] {
        assert!(ts.contains(&format!("variant = codel, for_ms = {for_ms}")));
        let band = format!("fault 0: latency_factor 3 on backend (10 to {end_s} s)");
        assert_eq!(ts.matches(&band).count(), 5, "{band}: one per variant");
    }
    for text in [
        "answered (goodput) per s",
        "attempts sent per s",
        "timed out per s",
        "95 % interval",
    ] {
        assert!(ts.contains(text), "{text}");
    }
    // summary.csv holds the windows only when asked; the page is the same
    let summary = Csv::read(&whole.path().join("summary.csv"));
    assert!(
        !summary
            .rows
            .iter()
            .any(|r| r["metric"].contains("window_start_ms_")),
        "no per-window line by default"
    );
    let windows = tempfile::tempdir().unwrap();
    resim()
        .arg("sweep")
        .arg(&file)
        .args(short)
        .args(["--set", "montecarlo.windows=true", "--out"])
        .arg(windows.path())
        .assert()
        .success();
    assert_eq!(page(windows.path()), html);
    // the table beside the charts: summary.csv's window means, per second
    let summary = Csv::read(&windows.path().join("summary.csv"));
    for (variant, for_ms, start) in [("baseline", "2000", 13000), ("codel", "500", 3000)] {
        let cell = |column: &str| {
            let metric = format!("timeseries.window_start_ms_{start}.{column}");
            let row = summary.row(&[
                ("variant", variant),
                ("for_ms", for_ms),
                ("metric", metric.as_str()),
            ]);
            let half = (num(row, "ci_high") - num(row, "ci_low")) / 2.0;
            // per second of a 1000 ms window; the page escapes the slash
            format!("<td>{:.1} +&#x2f;- {half:.1}</td>", num(row, "mean"))
        };
        let line = format!(
            "<td>{variant}</td><td>{for_ms}</td><td class=\"num\">{start}</td><td class=\"num\">1000</td>{}{}",
            cell("answered"),
            cell("attempts")
        );
        assert!(ts.contains(&line), "{line}");
    }
    let manifest = std::fs::read_to_string(whole.path().join("manifest.toml")).unwrap();
    assert_eq!(manifest.matches("[[timelines]]").count(), 15);

    // the shards' merge has the fault windows from the manifest: same bytes
    let work = tempfile::tempdir().unwrap();
    for k in 1..=2 {
        resim()
            .arg("sweep")
            .arg(&file)
            .args(short)
            .args(["--shard", &format!("{k}/2"), "--out"])
            .arg(work.path().join(format!("s{k}")))
            .assert()
            .success();
    }
    let merged = work.path().join("m");
    resim()
        .args(["merge", "--quiet", "--out"])
        .arg(&merged)
        .arg(work.path().join("s1"))
        .arg(work.path().join("s2"))
        .assert()
        .success();
    assert_eq!(page(&merged), html);
}

#[test]
fn the_last_window_is_as_wide_as_the_run_lasted_in_it() {
    let dir = tempfile::tempdir().unwrap();
    run(
        "scenarios/goodput-collapse.toml",
        dir.path(),
        &["--set", "workload.duration_ms=20000"],
    );
    let series = Csv::read(&dir.path().join("timeseries.csv"));
    let run = Csv::read(&dir.path().join("run.csv"));
    for abandon in ["false", "true"] {
        let rows = series.select(&[("abandon", abandon)]);
        let end = num(run.row(&[("abandon", abandon)]), "sim_time_ms");
        let (last, full) = rows.split_last().unwrap();
        assert!(full.iter().all(|r| num(r, "width_ms") == 1000.0));
        let width = num(last, "width_ms");
        assert!(width > 0.0 && width <= 1000.0, "{width}");
        assert!(
            (num(last, "window_start_ms") + width - end).abs() < 1e-6,
            "{abandon}: the last window ends at the run's end {end}"
        );
    }
}

/// A long run's time series: the page shows the first rows of the table and
/// says so, the CSV keeps every row, and each chart line stays at most about a
/// thousand steps (neighbouring windows merged), so the page stays small.
#[test]
fn a_long_time_series_is_cut_on_the_page_not_in_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    // 10 ms windows over goodput-collapse's 120 s: 12,000 windows per compare row
    run(
        "scenarios/goodput-collapse.toml",
        dir.path(),
        &["--set", "output.window_ms=10"],
    );
    let csv = std::fs::read_to_string(dir.path().join("timeseries.csv")).unwrap();
    let rows = csv.lines().count() - 1;
    assert!(rows > 20_000, "{rows} rows in the CSV");
    let html = page(dir.path());
    let note = format!("the first 2000 of {rows} rows are shown here; timeseries.csv has them all");
    assert!(html.contains(&note), "missing {note:?}");
    // the longest polyline of the page: at most two points per step
    let longest = html
        .split("<polyline")
        .skip(1)
        .map(|p| p[..p.find("/>").unwrap_or(p.len())].matches(',').count())
        .max()
        .unwrap_or(0);
    assert!(
        (1000..=2_100).contains(&longest),
        "{longest} points in one line"
    );
    assert!(html.len() < 8_000_000, "{} bytes", html.len());
}

/// A sweep over numbers charts each metric against them: one numeric axis a
/// line per value of the others, two a heatmap; rows are labelled key=value.
#[test]
fn a_sweep_over_numbers_draws_lines_and_heatmaps_with_labelled_rows() {
    let sweep = |extra: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        resim()
            .arg("sweep")
            .arg(scenario("scenarios/retry-storm.toml"))
            .args(["-n", "2", "--quiet"])
            .args(["--set", "workload.duration_ms=20000"])
            .args(["--set", r#"compare."faults.0.for_ms"=[250, 1000, 4000]"#])
            .args(["--set", r#"montecarlo={ report = ["recovery.stuck"] }"#])
            .args(extra)
            .arg("--out")
            .arg(dir.path())
            .assert()
            .success();
        section(&page(dir.path()), "summary")
    };
    let lines = sweep(&["--set", r#"compare.variant=["baseline", "codel"]"#]);
    // a forest plot and the line chart
    assert_eq!(lines.matches("<svg").count(), 2, "{lines}");
    assert!(lines.contains("recovery.stuck against for_ms"));
    assert!(lines.contains("variant=codel, for_ms=4000"));
    // the legend names each line by the other axes
    assert!(lines.contains("\nvariant=baseline\n</text>"));
    assert!(!lines.contains(">baseline, 250<"));
    let grid = sweep(&[
        "--set",
        r#"compare.variant=["baseline"]"#,
        "--vary",
        "faults.0.value=[1.5, 2, 3]",
    ]);
    assert_eq!(grid.matches("<svg").count(), 2, "{grid}");
    assert!(grid.contains("recovery.stuck: mean over value and for_ms (variant=baseline)"));
    assert!(grid.contains("mean recovery.stuck (share of replications)"));
}

/// The page answers at a glance: its tables' numbers rounded (the CSV files
/// keep every digit), the latency tail on its own axis when the rows' tails
/// differ, the failed requests on their own scale, and a table with nothing in
/// it left out with a line that names it (its CSV file still written).
#[test]
fn the_page_rounds_charts_the_tail_and_failures_and_leaves_out_empty_tables() {
    let dir = tempfile::tempdir().unwrap();
    run(
        "scenarios/hedging.toml",
        dir.path(),
        &["--set", "workload.duration_ms=20000"],
    );
    let html = page(dir.path());
    // budget shares: no fixed budget in this scenario, so every share is empty
    let shares = std::fs::read_to_string(dir.path().join("shares.csv")).unwrap();
    assert!(shares.lines().skip(1).all(|l| l.ends_with(',')), "{shares}");
    assert!(!html.contains("<section id=\"shares\">"));
    assert!(!html.contains("href=\"#shares\""), "not in the contents");
    assert!(
        html.contains("Left out, empty in every row (their CSV files are written): Budget shares (shares.csv)."),
        "the line under the tables"
    );
    // the tail: the rows without hedging wait for the slow answers from p99 on
    let cdf = section(&html, "latency_cdf");
    assert_eq!(
        cdf.matches("<svg").count(),
        2,
        "the distribution and its tail"
    );
    for text in [
        "Response-time tail per row (call_policy)",
        "99.9 %",
        "99.99 %",
    ] {
        assert!(cdf.contains(text), "{text}");
    }
    // the CSV keeps its digits; the page shows four figures
    let out = Csv::read(&dir.path().join("outcomes.csv"));
    let mean = out.row(&[("call_policy", "none")])["mean_ms"].clone();
    assert!(
        mean.split('.').nth(1).is_some_and(|d| d.len() > 3),
        "{mean}"
    );
    let x: f64 = mean.parse().unwrap();
    let digits = 3 - x.abs().log10().floor() as usize;
    let shown = format!("<td class=\"num\">{x:.digits$}</td>");
    assert!(section(&html, "outcomes").contains(&shown), "{shown}");
}
