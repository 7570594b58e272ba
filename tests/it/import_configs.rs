//! `resim import` of configuration files: a gRPC service config and a
//! resilience4j configuration become scenarios that load and run, every field
//! accounted for in the report; bad files are exit code 2 naming the file and
//! the field's path, and nothing is written.

use crate::common::{resim, root};
use std::path::{Path, PathBuf};

pub(crate) fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/configs").join(name)
}

/// `resim import FILES --out DIR/out.toml`: (exit code, stderr, scenario text
/// if written, report text if written).
pub(crate) fn import(
    dir: &Path,
    files: &[&Path],
    args: &[&str],
) -> (i32, String, Option<String>, Option<String>) {
    let out = resim()
        .arg("import")
        .args(files)
        .arg("--out")
        .arg(dir.join("out.toml"))
        .args(args)
        .output()
        .expect("resim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        std::fs::read_to_string(dir.join("out.toml")).ok(),
        std::fs::read_to_string(dir.join("out.import.md")).ok(),
    )
}

pub(crate) fn at<'a>(t: &'a toml::Table, path: &str) -> &'a toml::Value {
    let mut v: Option<&toml::Value> = None;
    let mut table = t;
    for (i, k) in path.split('.').enumerate() {
        let x = table.get(k).unwrap_or_else(|| panic!("no {path} (at {k})"));
        v = Some(x);
        if i + 1 < path.split('.').count() {
            table = x
                .as_table()
                .unwrap_or_else(|| panic!("{path}: {k} is not a table"));
        }
    }
    v.unwrap()
}

pub(crate) fn f(t: &toml::Table, path: &str) -> f64 {
    match at(t, path) {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(x) => *x,
        other => panic!("{path} is {other}"),
    }
}

pub(crate) fn s<'a>(t: &'a toml::Table, path: &str) -> &'a str {
    at(t, path)
        .as_str()
        .unwrap_or_else(|| panic!("{path} is not a string"))
}

/// Checks the imported scenario (`resim check`) and runs it for a short
/// while: it must load and run.
pub(crate) fn runs(scenario: &Path, sets: &[&str]) {
    resim().arg("check").arg(scenario).assert().success();
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = resim();
    cmd.arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(dir.path())
        .args(["-q", "--no-report"]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    cmd.assert().success();
    assert!(dir.path().join("outcomes.csv").exists());
}

/// The rows of the report's "Every field" table: (field, fate).
pub(crate) fn ledger(report: &str) -> Vec<(String, String)> {
    let part = report
        .split("## Every field")
        .nth(1)
        .expect("an Every field section");
    part.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| file"))
        .map(|l| {
            let c: Vec<&str> = l.split(" | ").collect();
            (c[1].to_string(), c[3].to_string())
        })
        .collect()
}

#[test]
fn a_resilience4j_configuration_becomes_a_scenario_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, toml_text, report) = import(dir.path(), &[&fixture("resilience4j.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let text = toml_text.expect("the scenario is written");
    let t: toml::Table = text.parse().expect("TOML");
    // payments: time limiter (per attempt), retry and breaker in one policy
    assert_eq!(f(&t, "policies.payments.timeout_ms"), 800.0);
    let retry = at(&t, "policies.payments.retry").as_table().unwrap();
    assert_eq!(retry["max_attempts"].as_integer(), Some(2));
    assert_eq!(f(retry, "backoff.base_ms"), 200.0, "PT0.2S");
    assert_eq!(s(retry, "backoff.kind"), "constant");
    let breaker = at(&t, "policies.payments.breaker").as_table().unwrap();
    assert_eq!(f(breaker, "window.count"), 20.0);
    assert_eq!(f(breaker, "min_calls"), 10.0);
    assert_eq!(f(breaker, "failure_rate"), 0.5);
    assert_eq!(f(breaker, "open_ms"), 10_000.0);
    assert_eq!(f(breaker, "half_open_calls"), 3.0);
    // inventory: the shared config's kebab-case keys, then its own. Its own
    // wait fields do not act: resilience4j builds the wait only where
    // waitDuration is set (CommonRetryConfigurationProperties
    // .configureRetryIntervalFunction), here in configs.default, from that
    // level's fields: a constant 100 ms, not the exponential wait the
    // instance's flags would ask for
    let inv = at(&t, "policies.inventory.retry").as_table().unwrap();
    assert_eq!(
        inv["max_attempts"].as_integer(),
        Some(3),
        "from configs.default"
    );
    assert_eq!(s(inv, "backoff.kind"), "constant");
    assert_eq!(f(inv, "backoff.base_ms"), 100.0);
    assert!(inv["backoff"].get("jitter_factor").is_none());
    assert_eq!(f(&t, "limiters.inventory.limit"), 100.0);
    assert_eq!(f(&t, "limiters.inventory.window_ms"), 1000.0);
    assert_eq!(f(&t, "limiters.inventory-bulkhead.limit"), 10.0);
    assert_eq!(s(&t, "limiters.inventory-bulkhead.kind"), "concurrency");
    assert_eq!(f(&t, "limiters.inventory-bulkhead.limit"), 10.0);
    assert_eq!(s(&t, "limiters.inventory-bulkhead.kind"), "concurrency");
    assert!(text.contains("# set me:"), "placeholders are marked");
    // every leaf of the file is accounted for, by a rule (none by the safety net)
    let report = report.expect("the report is written");
    let rows = ledger(&report);
    for (field, fate) in [
        ("spring", "ignored"),
        (
            "resilience4j.bulkhead.instances.inventory.maxConcurrentCalls",
            "approximated",
        ),
        (
            "resilience4j.circuitbreaker.instances.payments.slowCallRateThreshold",
            "ignored",
        ),
        (
            "resilience4j.circuitbreaker.instances.payments.permittedNumberOfCallsInHalfOpenState",
            "approximated",
        ),
        ("resilience4j.retry.configs.default.max-attempts", "mapped"),
        (
            "resilience4j.retry.instances.inventory.enableExponentialBackoff",
            "ignored",
        ),
    ] {
        assert!(
            rows.iter().any(|(f, x)| f == field && x == fate),
            "{field} should be {fate}: {rows:?}"
        );
    }
    assert!(!report.contains("not read by the importer"), "{report}");
    runs(
        &dir.path().join("out.toml"),
        &[
            "workloads.inventory.duration_ms=2000",
            "workloads.payments.duration_ms=2000",
        ],
    );
}

#[test]
fn a_grpc_service_config_becomes_a_scenario_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, toml_text, report) = import(
        dir.path(),
        &[&fixture("grpc-retry-throttling.json")],
        &["--from", "grpc"],
    );
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = toml_text.unwrap().parse().unwrap();
    let p = at(&t, "policies.method-config-1.retry").as_table().unwrap();
    assert_eq!(p["max_attempts"].as_integer(), Some(4));
    // gRFC A6 as grpc-go, C-core and grpc-java 1.80+ wait: the capped
    // exponential back-off x U(0.8, 1.2)
    assert_eq!(s(p, "backoff.kind"), "exponential");
    assert_eq!(f(p, "backoff.jitter_factor"), 0.2);
    assert_eq!(f(p, "backoff.base_ms"), 10.0);
    assert_eq!(f(p, "backoff.cap_ms"), 100.0);
    assert_eq!(s(p, "budget.kind"), "grpc_throttle");
    assert_eq!(f(p, "budget.max_tokens"), 10.0);
    assert_eq!(f(p, "budget.token_ratio"), 0.1);
    let on: Vec<&str> = p["on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(on, ["error", "shed", "rejected"], "UNAVAILABLE");
    let h = at(&t, "policies.method-config-2.hedge").as_table().unwrap();
    assert_eq!(f(h, "delay_ms"), 50.0);
    assert_eq!(f(h, "max_attempts"), 3.0);
    // nonFatalStatusCodes UNAVAILABLE and 4 (DEADLINE_EXCEEDED)
    let non_fatal: Vec<&str> = h["non_fatal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(non_fatal, ["timeout", "error", "shed", "rejected"]);
    assert_eq!(f(&t, "workloads.shop-catalog-getitem.timeout_ms"), 500.0);
    assert_eq!(
        s(&t, "workloads.shop-catalog-getitem.route"),
        "/shop.Catalog/GetItem"
    );
    assert_eq!(f(&t, "workloads.shop-catalog-search.timeout_ms"), 1000.0);
    assert_eq!(s(&t, "services.shop-catalog.balancer"), "round_robin");
    let report = report.unwrap();
    let rows = ledger(&report);
    assert!(
        rows.iter()
            .any(|(f, x)| f == "/methodConfig/1/waitForReady" && x == "ignored"),
        "{rows:?}"
    );
    assert!(!report.contains("not read by the importer"), "{report}");
    runs(
        &dir.path().join("out.toml"),
        &[
            "workloads.shop-catalog-getitem.duration_ms=2000",
            "workloads.shop-catalog-search.duration_ms=2000",
        ],
    );
}

/// The back-off rule of grpc-java before 1.80 on request; a hedge without
/// `nonFatalStatusCodes` ends the call at its first failure (every status is
/// fatal); two services whose names read alike stay two servers.
#[test]
fn grpc_clients_back_off_and_hedge_as_their_code_does() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sc.json");
    std::fs::write(
        &file,
        r#"{"methodConfig": [
        {"name": [{"service": "shop_v1.Catalog"}], "retryPolicy": {"maxAttempts": 3,
         "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
         "retryableStatusCodes": ["UNAVAILABLE"]}},
        {"name": [{"service": "shop.v1.Catalog"}], "hedgingPolicy": {"maxAttempts": 2,
         "hedgingDelay": "0.1s"}}]}"#,
    )
    .unwrap();
    let (code, err, text, report) =
        import(dir.path(), &[&file], &["--grpc-backoff", "full-jitter"]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    let p = at(&t, "policies.method-config-1.retry").as_table().unwrap();
    assert_eq!(s(p, "backoff.kind"), "full_jitter");
    assert!(p["backoff"].get("jitter_factor").is_none());
    let h = at(&t, "policies.method-config-2.hedge").as_table().unwrap();
    assert_eq!(h["non_fatal"].as_array().map(Vec::len), Some(0));
    let rows = ledger(&report.unwrap());
    assert!(
        rows.iter().any(
            |(f, x)| f == "/methodConfig/1/hedgingPolicy/nonFatalStatusCodes" && x == "default"
        ),
        "{rows:?}"
    );
    assert_eq!(
        s(&t, "workloads.shop-v1-catalog.route"),
        "/shop_v1.Catalog/*"
    );
    assert_eq!(
        at(&t, "services.shop-v1-catalog.routes")
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        at(&t, "services.shop-v1-catalog-2.routes")
            .as_array()
            .unwrap()[0]
            .as_str(),
        Some("/shop.v1.Catalog/*")
    );
}

#[test]
fn grpc_clamps_max_attempts_to_five_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sc.json");
    std::fs::write(
        &file,
        r#"{"methodConfig": [{"name": [{"service": "a.B"}], "retryPolicy": {"maxAttempts": 9,
        "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 1.5,
        "retryableStatusCodes": ["unavailable", 13]}}]}"#,
    )
    .unwrap();
    let (code, err, text, _) = import(dir.path(), &[&file], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    let p = at(&t, "policies.method-config-1.retry").as_table().unwrap();
    assert_eq!(p["max_attempts"].as_integer(), Some(5));
    assert_eq!(f(p, "backoff.multiplier"), 1.5);
    assert!(
        err.contains("approximated: 5: gRPC clamps maxAttempts to 5"),
        "{err}"
    );
    assert_eq!(s(&t, "workloads.a-b.route"), "/a.B/*");
}

#[test]
fn bad_configuration_files_exit_2_naming_the_file_and_the_field() {
    let cases: [(&str, &str, &[&str]); 9] = [
        (
            "a.json",
            r#"{"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": {"maxAtempts": 3}}]}"#,
            &[
                "a.json",
                "/methodConfig/0/retryPolicy/maxAtempts",
                "did you mean `maxAttempts`",
            ],
        ),
        (
            "b.json",
            r#"{"methodConfig": [{"name": [{"service": "s"}], "timeout": "100ms"}]}"#,
            &["/methodConfig/0/timeout", "\"0.1s\""],
        ),
        (
            "c.json",
            r#"{"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": {"maxAttempts": "many",
            "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            &[
                "/methodConfig/0/retryPolicy/maxAttempts",
                "must be a number",
            ],
        ),
        (
            "d.json",
            r#"{"methodConfig": [{"name": [{"service": "s"}], "hedgingPolicy": {"maxAttempts": 2},
            "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
            &["/methodConfig/0", "both `retryPolicy` and `hedgingPolicy`"],
        ),
        (
            "e.json",
            r#"{"methodConfig": [{"name": [{"service": "s"}], "retryPolicy": {"maxAttempts": 2,
            "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILBLE"]}}]}"#,
            &[
                "/methodConfig/0/retryPolicy/retryableStatusCodes/0",
                "did you mean `UNAVAILABLE`",
            ],
        ),
        (
            "f.yaml",
            "resilience4j:\n  retry:\n    instances:\n      a:\n        maxAttempts: 0\n",
            &[
                "f.yaml",
                "resilience4j.retry.instances.a.maxAttempts",
                "must be at least 1",
            ],
        ),
        (
            "g.yaml",
            "resilience4j:\n  retry:\n    instances:\n      a:\n        baseConfig: shared\n",
            &[
                "resilience4j.retry.instances.a.baseConfig",
                "no config `shared`",
            ],
        ),
        (
            "h.yaml",
            "resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n        failureRateThreshold: 150\n",
            &[
                "resilience4j.circuitbreaker.instances.a.failureRateThreshold",
                "between 1 and 100",
            ],
        ),
        (
            "i.yaml",
            "server:\n  port: 8080\n",
            &["i.yaml", "not a format resim import knows"],
        ),
    ];
    for (name, body, expect) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(name);
        std::fs::write(&file, body).unwrap();
        let (code, err, text, report) = import(dir.path(), &[&file], &[]);
        assert_eq!(code, 2, "{name}: {err}");
        for e in expect {
            assert!(err.contains(e), "{name}: `{e}` not in: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            text.is_none() && report.is_none(),
            "{name}: nothing is written"
        );
    }
}

#[test]
fn configuration_and_trace_files_are_not_mixed() {
    let dir = tempfile::tempdir().unwrap();
    let traces = root().join("tests/fixtures/traces");
    let trace = std::fs::read_dir(&traces)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a trace fixture");
    let (code, err, text, _) = import(dir.path(), &[&fixture("resilience4j.yaml"), &trace], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be imported together"), "{err}");
    assert!(text.is_none());
}

#[test]
fn an_envoy_bootstrap_becomes_a_scenario_with_envoys_rules_and_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, report) = import(dir.path(), &[&fixture("envoy-bootstrap.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let text = text.unwrap();
    let t: toml::Table = text.parse().unwrap();
    // the /orders route: its own retry policy and the cluster's retry budget
    let p = at(&t, "policies.orders-orders").as_table().unwrap();
    assert_eq!(f(p, "timeout_ms"), 500.0, "per_try_timeout");
    let r = p["retry"].as_table().unwrap();
    assert_eq!(r["max_attempts"].as_integer(), Some(4), "num_retries 3");
    assert_eq!(s(r, "backoff.kind"), "envoy");
    assert_eq!(f(r, "backoff.base_ms"), 50.0);
    assert_eq!(f(r, "backoff.cap_ms"), 1000.0);
    assert_eq!(s(r, "budget.kind"), "envoy");
    assert_eq!(f(r, "budget.percent"), 25.0);
    assert_eq!(f(r, "budget.min_retry_concurrency"), 5.0);
    assert_eq!(f(&t, "workloads.orders-orders.timeout_ms"), 2000.0);
    // the /stock route: Envoy's defaults
    let d = at(&t, "policies.stock-stock.retry").as_table().unwrap();
    assert_eq!(
        d["max_attempts"].as_integer(),
        Some(2),
        "one retry by default"
    );
    assert_eq!(f(d, "backoff.base_ms"), 25.0);
    assert_eq!(f(d, "backoff.cap_ms"), 250.0);
    assert_eq!(f(d, "budget.min_retry_concurrency"), 3.0, "max_retries 3");
    assert_eq!(f(d, "budget.percent"), 0.0);
    assert_eq!(
        f(&t, "workloads.stock-stock.timeout_ms"),
        15_000.0,
        "the default route timeout"
    );
    // clusters: endpoints, balancing, limits, outlier detection
    assert_eq!(f(&t, "services.orders.replicas"), 3.0);
    assert_eq!(s(&t, "services.orders.balancer.kind"), "least_request");
    assert_eq!(s(&t, "services.orders.balancer.view"), "caller");
    assert_eq!(f(&t, "limiters.orders-max-requests.limit"), 200.0);
    assert_eq!(
        f(&t, "limiters.stock-max-requests.limit"),
        1024.0,
        "the default max_requests"
    );
    assert_eq!(
        f(&t, "services.orders.outlier_detection.consecutive_failures"),
        3.0
    );
    assert_eq!(
        f(&t, "services.orders.outlier_detection.base_ejection_ms"),
        10_000.0
    );
    assert_eq!(
        f(&t, "services.orders.outlier_detection.max_ejection_ms"),
        60_000.0
    );
    assert_eq!(
        at(
            &t,
            "services.orders.outlier_detection.always_eject_one_host"
        )
        .as_bool(),
        Some(true)
    );
    assert_eq!(s(&t, "services.stock.balancer"), "round_robin");
    let report = report.unwrap();
    let rows = ledger(&report);
    assert!(
        rows.iter().any(|(f, x)| f == "admin" && x == "ignored"),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|(f, x)| f.ends_with("max_pending_requests") && x == "ignored"),
        "{rows:?}"
    );
    assert!(!report.contains("not read by the importer"), "{report}");

    // Envoy's defaults at work: a stock host that always fails gets at most
    // two attempts per call (one retry), every call retried unless the three
    // retries in flight at once are taken
    let faulty = format!(
        "{text}\n[[faults]]\ntarget = \"stock\"\nkind = \"error_rate\"\nvalue = 1.0\nat_ms = 0\nfor_ms = 100000\n"
    );
    let file = dir.path().join("faulty.toml");
    std::fs::write(&file, faulty).unwrap();
    let out = tempfile::tempdir().unwrap();
    resim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(out.path())
        .args(["-q", "--no-report"])
        .args([
            "--set",
            "workloads.stock-stock.rate_rps=20",
            "--set",
            "workloads.stock-stock.duration_ms=20000",
        ])
        .args(["--set", "workloads.orders-orders.duration_ms=1000"])
        .assert()
        .success();
    let calls = crate::common::Csv::read(&out.path().join("calls.csv"));
    let row = calls.row(&[("caller", "stock-stock")]);
    let first = crate::common::num(row, "first_tries");
    let attempts = crate::common::num(row, "attempts");
    assert!(first > 300.0, "{row:?}");
    assert!(
        attempts <= 2.0 * first,
        "at most two attempts per call: {row:?}"
    );
    assert!(
        attempts >= 1.95 * first,
        "nearly every call retried once: {row:?}"
    );
}

#[test]
fn istio_resources_become_one_scenario_with_istios_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, report) = import(dir.path(), &[&fixture("istio-reviews.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    let p = at(&t, "policies.reviews-main").as_table().unwrap();
    assert_eq!(f(p, "timeout_ms"), 300.0, "perTryTimeout");
    let r = p["retry"].as_table().unwrap();
    assert_eq!(
        r["max_attempts"].as_integer(),
        Some(4),
        "attempts 3 are retries"
    );
    let on: Vec<&str> = r["on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        on,
        ["timeout", "error", "shed"],
        "gateway-error, connect-failure, 503"
    );
    assert_eq!(f(r, "budget.min_retry_concurrency"), 4.0, "maxRetries");
    assert_eq!(f(&t, "workloads.reviews-main.timeout_ms"), 1000.0);
    assert_eq!(s(&t, "services.reviews.balancer.kind"), "least_request");
    assert_eq!(f(&t, "limiters.reviews-max-requests.limit"), 500.0);
    assert_eq!(
        f(&t, "services.reviews.outlier_detection.max_ejection_pct"),
        50.0
    );
    let report = report.unwrap();
    assert!(!report.contains("not read by the importer"), "{report}");
    let rows = ledger(&report);
    assert!(
        rows.iter()
            .any(|(f, x)| f.ends_with("connectionPool.tcp") && x == "ignored"),
        "{rows:?}"
    );
}

/// gRPC's throttling, imported: with maxTokens 10 and tokenRatio 0.1 the
/// tokens drift by (1 - f) x 0.1 - f per attempt at a failure share f, so
/// retries go on below f = 0.1 / 1.1 = 9.09 % and stop (all but a few) above.
#[test]
fn an_imported_grpc_throttle_stops_retrying_above_its_failure_share() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, _) = import(dir.path(), &[&fixture("grpc-retry-throttling.json")], &[]);
    assert_eq!(code, 0, "{err}");
    let faulty = format!(
        "{}\n[[faults]]\ntarget = \"shop-catalog\"\nkind = \"error_rate\"\nvalue = 0.05\nat_ms = 0\nfor_ms = 1000000\n",
        text.unwrap()
    );
    let file = dir.path().join("faulty.toml");
    std::fs::write(&file, faulty).unwrap();
    let refused_share = |f: f64| {
        let out = tempfile::tempdir().unwrap();
        resim()
            .arg("run")
            .arg(&file)
            .arg("--out")
            .arg(out.path())
            .args(["-q", "--no-report"])
            .args(["--set", &format!("faults.0.value={f}")])
            .args(["--set", "workloads.shop-catalog-getitem.duration_ms=300000"])
            .args(["--set", "workloads.shop-catalog-search.duration_ms=1000"])
            .assert()
            .success();
        let calls = crate::common::Csv::read(&out.path().join("calls.csv"));
        let row = calls.row(&[("caller", "shop-catalog-getitem")]);
        let refused = crate::common::num(row, "budget_refused");
        let retries = crate::common::num(row, "retries");
        refused / (refused + retries)
    };
    // 30,000 calls. Near the threshold the tokens are a random walk held
    // below the cap: at drift mu and step variance s2 per attempt they sit
    // below half the cap (5 tokens) about exp(-5 x 2 mu / s2) of the time:
    // 6 % at f = 7 % (mu 0.023, s2 0.079; measured 6.2 %), 0.01 % at f = 5 %
    // (mu 0.045, s2 0.050). At 12 % the drift is -0.032: engaged for good.
    let below = refused_share(0.05);
    let above = refused_share(0.12);
    assert!(
        below < 0.01,
        "at 5 % failures {below:.3} of the wanted retries were refused"
    );
    assert!(
        above > 0.9,
        "at 12 % failures only {:.3} of the wanted retries were refused",
        above
    );
}

/// The DestinationRule's outlier detection, imported, at work: a pod that
/// fails every request is ejected after 5 failures in a row and gets little
/// of the traffic, the two healthy ones the rest.
#[test]
fn an_imported_istio_outlier_detection_ejects_a_failing_replica() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, _) = import(dir.path(), &[&fixture("istio-reviews.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let faulty = format!(
        "{}\n[[faults]]\ntarget = \"reviews#2\"\nkind = \"error_rate\"\nvalue = 1.0\nat_ms = 0\nfor_ms = 100000\n",
        text.unwrap()
    );
    let file = dir.path().join("faulty.toml");
    std::fs::write(&file, faulty).unwrap();
    let out = tempfile::tempdir().unwrap();
    resim()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(out.path())
        .args([
            "-q",
            "--no-report",
            "--set",
            "workloads.reviews-main.duration_ms=20000",
        ])
        .assert()
        .success();
    let replicas = crate::common::Csv::read(&out.path().join("replicas.csv"));
    let bad = replicas.row(&[("replica", "2")]);
    let good = replicas.row(&[("replica", "1")]);
    assert!(crate::common::num(bad, "ejections") >= 1.0, "{bad:?}");
    // 2,000 requests: ejected for 30 s after its first 5 failures (and their
    // retries), it is sent a few dozen at most
    assert!(crate::common::num(bad, "arrived") < 60.0, "{bad:?}");
    assert!(crate::common::num(good, "arrived") > 900.0, "{good:?}");
}

/// An admin config dump: clusters and routes found in their dump sections,
/// the virtual host's retry policy applied to its route, a hash balancer
/// approximated, the discovered hosts a placeholder.
#[test]
fn an_envoy_config_dump_imports_its_dynamic_clusters_and_routes() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, report) = import(dir.path(), &[&fixture("envoy-config-dump.json")], &[]);
    assert_eq!(code, 0, "{err}");
    let text = text.unwrap();
    let t: toml::Table = text.parse().unwrap();
    let r = at(&t, "policies.payments-pay.retry").as_table().unwrap();
    assert_eq!(r["max_attempts"].as_integer(), Some(3));
    let on: Vec<&str> = r["on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        on,
        ["error", "shed", "rejected"],
        "connect-failure, 503, 429"
    );
    assert_eq!(f(r, "budget.min_retry_concurrency"), 2.0, "max_retries");
    assert_eq!(s(&t, "services.payments.balancer"), "random", "RING_HASH");
    assert_eq!(f(&t, "limiters.payments-max-requests.limit"), 64.0);
    assert!(
        text.contains("replicas = 3") && text.contains("set me: the cluster's hosts"),
        "{text}"
    );
    let w = at(&t, "workloads.payments-pay").as_table().unwrap();
    assert!(!w.contains_key("timeout_ms"), "timeout 0s: none");
    assert!(err.contains("RING_HASH") || report.unwrap().contains("RING_HASH"));
    runs(
        &dir.path().join("out.toml"),
        &["workloads.payments-pay.duration_ms=2000"],
    );
}

/// The strings of a list key.
fn strs<'a>(t: &'a toml::Table, path: &str) -> Vec<&'a str> {
    at(t, path)
        .as_array()
        .unwrap_or_else(|| panic!("{path} is not a list"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default())
        .collect()
}

/// (first tries, attempts) of a workload's calls, from `resim run FILE`.
fn attempts(file: &Path, workload: &str, sets: &[&str]) -> (f64, f64) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = resim();
    cmd.arg("run")
        .arg(file)
        .arg("--out")
        .arg(out.path())
        .args(["-q", "--no-report"]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    cmd.assert().success();
    let calls = crate::common::Csv::read(&out.path().join("calls.csv"));
    let row = calls.row(&[("caller", workload)]);
    (
        crate::common::num(row, "first_tries"),
        crate::common::num(row, "attempts"),
    )
}

/// Istio's default retryOn (connect-failure, refused-stream, unavailable,
/// cancelled, retriable-status-codes 503) does not cover a per-try timeout:
/// Envoy resets the timed-out attempt and retries a reset only under 5xx,
/// gateway-error or reset. A dependency slower than the per-try timeout is
/// tried once per call, not three times.
#[test]
fn istios_default_retry_conditions_do_not_retry_a_per_try_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, _) = import(dir.path(), &[&fixture("istio-per-try-timeout.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let text = text.unwrap();
    let t: toml::Table = text.parse().unwrap();
    let p = at(&t, "policies.ratings-main").as_table().unwrap();
    assert_eq!(f(p, "timeout_ms"), 100.0, "perTryTimeout");
    assert_eq!(f(p, "retry.max_attempts"), 3.0, "attempts 2");
    assert_eq!(strs(p, "retry.on"), ["error", "shed"]);
    // every request takes 50 x its service time (p50 1 s): each attempt
    // times out at 100 ms; 5 a second stay well within the 8 slots
    let slow = format!(
        "{text}\n[[faults]]\ntarget = \"ratings\"\nkind = \"latency_factor\"\nvalue = 50.0\nat_ms = 0\nfor_ms = 1000000\n"
    );
    let file = dir.path().join("slow.toml");
    std::fs::write(&file, slow).unwrap();
    let (first, all) = attempts(
        &file,
        "ratings-main",
        &[
            "workloads.ratings-main.rate_rps=5",
            "workloads.ratings-main.duration_ms=20000",
        ],
    );
    assert!(first > 90.0, "{first}");
    assert_eq!(all, first, "a timed-out attempt is not retried");
}

/// A DestinationRule's maxRetries bounds the retries of the default policy
/// that mesh traffic to a host without a VirtualService takes.
#[test]
fn istio_max_retries_bounds_the_default_policy_of_a_host_without_routes() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, _) = import(dir.path(), &[&fixture("istio-destination-only.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    let r = at(&t, "policies.ratings.retry").as_table().unwrap();
    assert_eq!(f(r, "max_attempts"), 3.0, "Istio's 2 retries");
    assert_eq!(s(r, "budget.kind"), "envoy");
    assert_eq!(f(r, "budget.percent"), 0.0);
    assert_eq!(f(r, "budget.min_retry_concurrency"), 5.0, "maxRetries");
}

/// Istio reads consecutive5xxErrors only: the deprecated consecutiveErrors
/// is not read, so Envoy's 5 applies.
#[test]
fn istio_does_not_read_the_deprecated_consecutive_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, report) =
        import(dir.path(), &[&fixture("istio-destination-only.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    assert_eq!(
        f(
            &t,
            "services.ratings.outlier_detection.consecutive_failures"
        ),
        5.0,
        "Envoy's default, not consecutiveErrors' 2"
    );
    let rows = ledger(&report.unwrap());
    assert!(
        rows.iter()
            .any(|(f, x)| f.ends_with("outlierDetection.consecutiveErrors") && x == "ignored"),
        "{rows:?}"
    );
}

/// Istio cannot tell 0 from unset and reads these numbers only above 0:
/// http2MaxRequests 0 and maxRetries 0 are no limit, maxEjectionPercent 0 is
/// Envoy's 10 %; an empty retryOn keeps Istio's default conditions.
#[test]
fn istio_zero_and_empty_values_are_unset() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, _) = import(dir.path(), &[&fixture("istio-destination-only.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    assert!(!t.contains_key("limiters"), "http2MaxRequests 0: no limit");
    assert_eq!(
        f(&t, "services.ratings.outlier_detection.max_ejection_pct"),
        10.0
    );
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, _) = import(dir.path(), &[&fixture("istio-zero-values.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    let r = at(&t, "policies.details-main.retry").as_table().unwrap();
    assert_eq!(
        strs(r, "on"),
        ["error", "shed"],
        "retryOn \"\": the default"
    );
    assert_eq!(f(r, "max_attempts"), 2.0, "attempts 1");
    assert!(!r.contains_key("budget"), "maxRetries 0: no limit");
    runs(
        &dir.path().join("out.toml"),
        &["workloads.details-main.duration_ms=1000"],
    );
}

/// Two listeners that carry one route configuration, a route met again in
/// another listener, a second route of one cluster and path with its own
/// policy, a route to a cluster the file does not define, DNS clusters: one
/// scenario that loads and runs.
#[test]
fn an_envoy_file_whose_listeners_share_routes_is_imported() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, report) =
        import(dir.path(), &[&fixture("envoy-shared-routes.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let text = text.unwrap();
    let t: toml::Table = text.parse().unwrap();
    let mut w: Vec<&String> = at(&t, "workloads").as_table().unwrap().keys().collect();
    w.sort();
    assert_eq!(
        w,
        ["api-api", "api-api-2", "billing-billing", "legacy-legacy"]
    );
    assert_eq!(
        strs(&t, "policies.api-api.retry.on"),
        ["timeout", "error", "shed"]
    );
    assert_eq!(strs(&t, "policies.api-api-2.retry.on"), ["error"]);
    assert_eq!(s(&t, "workloads.api-api-2.route"), "/api");
    // DNS clusters and the undefined one: placeholders to set
    for (svc, n, why) in [
        ("api", 2, "STRICT_DNS"),
        ("legacy", 1, "LOGICAL_DNS"),
        ("billing", 1, "not in this file"),
    ] {
        let line = text
            .lines()
            .skip_while(|l| *l != format!("[services.{svc}]"))
            .find(|l| l.starts_with("replicas"))
            .unwrap_or_else(|| panic!("no replicas for {svc}"));
        assert!(
            line.starts_with(&format!("replicas = {n} "))
                && line.contains("set me")
                && line.contains(why),
            "{line}"
        );
    }
    assert!(err.contains("cluster `billing` is not defined"), "{err}");
    let report = report.unwrap();
    assert!(!report.contains("not read by the importer"), "{report}");
    runs(
        &dir.path().join("out.toml"),
        &[
            "workloads.api-api.duration_ms=1000",
            "workloads.api-api-2.duration_ms=1000",
            "workloads.billing-billing.duration_ms=1000",
            "workloads.legacy-legacy.duration_ms=1000",
        ],
    );
}

/// Envoy refuses an inline route configuration that names a cluster it does
/// not have (`route: unknown cluster`), and a LOGICAL_DNS cluster of more
/// than one endpoint: so does the import.
#[test]
fn envoy_configurations_envoy_refuses_are_refused() {
    let cases = [
        (
            "unknown.yaml",
            "static_resources:\n  listeners:\n  - name: l\n    filter_chains:\n    - filters:\n      - name: hcm\n        typed_config:\n          route_config:\n            name: r\n            virtual_hosts:\n            - name: v\n              domains: [\"*\"]\n              routes:\n              - match: { prefix: \"/\" }\n                route: { cluster: nowhere }\n  clusters:\n  - name: somewhere\n    connect_timeout: 1s\n",
            "route: unknown cluster 'nowhere'",
        ),
        (
            "logical.yaml",
            "static_resources:\n  clusters:\n  - name: legacy\n    type: LOGICAL_DNS\n    load_assignment:\n      endpoints:\n      - lb_endpoints:\n        - endpoint: { address: { socket_address: { address: a.example.com, port_value: 80 } } }\n        - endpoint: { address: { socket_address: { address: b.example.com, port_value: 80 } } }\n",
            "LOGICAL_DNS clusters must have a single",
        ),
    ];
    for (name, body, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(name);
        std::fs::write(&file, body).unwrap();
        let (code, err, text, _) = import(dir.path(), &[&file], &[]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(want) && err.contains(name), "{name}: {err}");
        assert!(!err.contains("panicked") && text.is_none(), "{err}");
    }
}

/// Envoy's least request draws `choice_count` hosts with replacement
/// (`least_request_lb.cc`, `LeastRequestLoadBalancer::unweightedHostPickNChoices`),
/// so more draws than hosts is what the proxy does: the import keeps 5 draws
/// over 3 hosts, and the scenario it writes loads. Below 2 Envoy's proto
/// refuses, and so does the import, naming the field.
#[test]
fn envoy_least_request_keeps_more_draws_than_hosts_and_refuses_one() {
    let body = std::fs::read_to_string(fixture("envoy-bootstrap.yaml")).unwrap();
    assert!(body.contains("choice_count: 2"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("five.yaml");
    std::fs::write(&file, body.replace("choice_count: 2", "choice_count: 5")).unwrap();
    let (code, err, text, _) = import(dir.path(), &[&file], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    assert_eq!(f(&t, "services.orders.balancer.choice_count"), 5.0);
    let check = resim()
        .arg("check")
        .arg(dir.path().join("out.toml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(check.status.success(), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.yaml");
    std::fs::write(&file, body.replace("choice_count: 2", "choice_count: 1")).unwrap();
    let (code, err, text, _) = import(dir.path(), &[&file], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("choice_count") && err.contains("at least 2"),
        "{err}"
    );
    assert!(err.contains("one.yaml") && text.is_none(), "{err}");
}
