//! resilience4j configurations as Spring Boot applications write them:
//! dotted top-level keys, `.properties` files, profile documents, the older
//! map names, chains of configs, keys Spring ignores; and resilience4j's own
//! rules for the breaker's minimum, the retry's wait and the exceptions a
//! retry follows.

use crate::common::{Csv, num, resim};
use crate::import_configs::{at, f, fixture, import, ledger, runs, s};
use std::path::Path;

/// The strings of a TOML list.
fn strs<'a>(t: &'a toml::Table, path: &str) -> Vec<&'a str> {
    at(t, path)
        .as_array()
        .unwrap_or_else(|| panic!("{path} is not a list"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default())
        .collect()
}

/// Imports `body` written to `dir/name`: (exit code, stderr, scenario, report).
fn import_text(
    dir: &Path,
    name: &str,
    body: &str,
) -> (i32, String, Option<toml::Table>, Option<String>) {
    let file = dir.join(name);
    std::fs::write(&file, body).unwrap();
    let (code, err, text, report) = import(dir, &[&file], &[]);
    (code, err, text.map(|t| t.parse().expect("TOML")), report)
}

fn has(rows: &[(String, String)], field: &str, fate: &str) -> bool {
    rows.iter().any(|(f, x)| f == field && x == fate)
}

#[test]
fn dotted_top_level_keys_bind_as_the_nested_map() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, report) = import(dir.path(), &[&fixture("resilience4j-dotted.yml")], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    // catalog: retry from configs.default, breaker from its own and default
    let c = at(&t, "policies.catalog").as_table().unwrap();
    assert_eq!(f(c, "retry.max_attempts"), 3.0);
    assert_eq!(f(c, "retry.backoff.base_ms"), 250.0);
    assert_eq!(
        strs(c, "retry.on"),
        ["timeout", "error"],
        "IOException, TimeoutException"
    );
    assert_eq!(f(c, "breaker.window.ms"), 30_000.0, "TIME_BASED, 30 s");
    assert_eq!(
        f(c, "breaker.min_calls"),
        20.0,
        "as written for a time window"
    );
    assert_eq!(f(c, "breaker.failure_rate"), 0.4);
    assert_eq!(f(c, "breaker.open_ms"), 15_000.0);
    // pricing: its own exponential wait, and the one-line dotted time limiter
    let p = at(&t, "policies.pricing").as_table().unwrap();
    assert_eq!(s(p, "retry.backoff.kind"), "exponential");
    assert_eq!(f(p, "retry.backoff.base_ms"), 40.0);
    assert_eq!(f(p, "retry.backoff.multiplier"), 3.0);
    assert_eq!(f(p, "retry.backoff.cap_ms"), 1000.0);
    assert_eq!(f(p, "timeout_ms"), 300.0);
    // the profile document is not applied: catalog keeps 3 attempts
    let report = report.unwrap();
    let rows = ledger(&report);
    assert!(has(&rows, "(document 2) (top)", "ignored"), "{rows:?}");
    assert!(report.contains("profile `load-test`"), "{report}");
    // paths are the property names the file wrote
    for (field, fate) in [
        (
            "(document 1) resilience4j.timelimiter.instances.pricing.timeoutDuration",
            "mapped",
        ),
        (
            "(document 1) management.endpoints.web.exposure.include",
            "ignored",
        ),
        ("(document 1) resilience4j.circuitbreaker.tags", "ignored"),
        (
            "(document 1) resilience4j.circuitbreaker.configs.default.registerHealthIndicator",
            "ignored",
        ),
    ] {
        assert!(
            has(&rows, field, fate),
            "{field} should be {fate}: {rows:?}"
        );
    }
    // resim's breaker has no outcome filter: the list is ignored, and the
    // warning says what resilience4j would count
    assert!(
        has(
            &rows,
            "(document 1) resilience4j.circuitbreaker.configs.default.recordExceptions",
            "ignored"
        ),
        "{rows:?}"
    );
    assert!(
        err.contains("these lists would count timeout, error"),
        "{err}"
    );
    assert!(!report.contains("not read by the importer"), "{report}");
    runs(
        &dir.path().join("out.toml"),
        &[
            "workloads.catalog.duration_ms=2000",
            "workloads.pricing.duration_ms=2000",
        ],
    );
}

#[test]
fn a_dotted_key_in_json_is_a_path_shown_as_the_property_name() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, t, report) = import_text(
        dir.path(),
        "r4j.json",
        r#"{"resilience4j.retry.instances.a": {"maxAttempts": 4}, "resilience4j": {"retry": {"instances": {"a": {"waitDuration": "10ms"}}}}}"#,
    );
    assert_eq!(code, 0, "{err}");
    let t = t.unwrap();
    assert_eq!(f(&t, "policies.a.retry.max_attempts"), 4.0);
    assert_eq!(f(&t, "policies.a.retry.backoff.base_ms"), 10.0);
    let rows = ledger(&report.unwrap());
    assert!(
        has(
            &rows,
            "resilience4j.retry.instances.a.maxAttempts",
            "mapped"
        ),
        "{rows:?}"
    );
}

#[test]
fn a_properties_file_imports_with_the_older_names_and_a_chain_of_configs() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, report) = import(dir.path(), &[&fixture("resilience4j.properties")], &[]);
    assert_eq!(code, 0, "{err}");
    let t: toml::Table = text.unwrap().parse().unwrap();
    let p = at(&t, "policies.stock").as_table().unwrap();
    // stock -> slow -> default: 4 attempts from default, the wait from slow
    assert_eq!(f(p, "retry.max_attempts"), 4.0);
    assert_eq!(s(p, "retry.backoff.kind"), "exponential");
    assert_eq!(f(p, "retry.backoff.base_ms"), 200.0);
    assert_eq!(f(p, "retry.backoff.cap_ms"), 2000.0);
    assert_eq!(
        f(p, "retry.backoff.multiplier"),
        1.5,
        "IntervalFunction.DEFAULT_MULTIPLIER"
    );
    // TimeoutException and HttpServerErrorException, less its 500s
    assert_eq!(strs(p, "retry.on"), ["timeout", "shed"]);
    assert_eq!(f(p, "breaker.window.count"), 6.0);
    assert_eq!(f(p, "breaker.min_calls"), 6.0);
    assert_eq!(
        f(p, "breaker.failure_rate"),
        0.5,
        "the misspelt key is not read"
    );
    assert_eq!(f(&t, "limiters.stock.limit"), 20.0);
    assert_eq!(f(&t, "limiters.stock.window_ms"), 1000.0);
    assert_eq!(f(&t, "limiters.stock.max_delay_ms"), 100.0);
    assert_eq!(s(&t, "limiters.stock.overflow"), "hold");
    let report = report.unwrap();
    let rows = ledger(&report);
    for (field, fate) in [
        ("logging.level.io.github", "ignored"),
        ("logging.level.io.github.resilience4j", "ignored"),
        ("resilience4j.retry.configs.slow.baseConfig", "mapped"),
        (
            "resilience4j.retry.backends.stock.retryExceptions",
            "approximated",
        ),
        (
            "resilience4j.circuitbreaker.backends.stock.failureRateTreshold",
            "ignored",
        ),
        (
            "resilience4j.ratelimiter.limiters.stock.subscribeForEvents",
            "ignored",
        ),
        ("resilience4j.circuitbreaker.metrics", "ignored"),
        // the breaker outside the retry: resim's breaker is exact
        ("resilience4j.circuitbreaker.backends.stock", "mapped"),
    ] {
        assert!(
            has(&rows, field, fate),
            "{field} should be {fate}: {rows:?}"
        );
    }
    // an unknown key is ignored, as Spring ignores it, with a warning
    assert!(
        err.contains("failureRateTreshold") && err.contains("did you mean `failureRateThreshold`"),
        "{err}"
    );
    assert!(
        report.contains(
            "com.acme.OutOfStockException (not retried): a class the import does not know"
        ),
        "{report}"
    );
    assert!(!report.contains("not read by the importer"), "{report}");
    runs(
        &dir.path().join("out.toml"),
        &["workloads.stock.duration_ms=2000"],
    );
}

/// resilience4j opens a COUNT_BASED breaker after min(minimumNumberOfCalls,
/// slidingWindowSize) calls (CircuitBreakerMetrics). Read as written, the
/// default minimum of 100 with a window of 6 never opens: the window never
/// holds more than 6 calls. Imported by the rule, it opens against a backend
/// that always fails.
#[test]
fn a_small_count_window_opens_after_its_size_as_resilience4j_opens_it() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, report) =
        import(dir.path(), &[&fixture("resilience4j-window6.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let text = text.unwrap();
    let t: toml::Table = text.parse().unwrap();
    assert_eq!(f(&t, "policies.ledger.breaker.window.count"), 6.0);
    assert_eq!(f(&t, "policies.ledger.breaker.min_calls"), 6.0);
    assert!(
        report
            .unwrap()
            .contains("min(minimumNumberOfCalls 100, slidingWindowSize 6)"),
        "the ledger says why"
    );
    let faulty = format!(
        "{text}\n[[faults]]\ntarget = \"ledger\"\nkind = \"error_rate\"\nvalue = 1.0\nat_ms = 0\nfor_ms = 100000\n"
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
        .args(["--set", "workloads.ledger.rate_rps=20"])
        .args(["--set", "workloads.ledger.duration_ms=20000"])
        .assert()
        .success();
    let calls = Csv::read(&out.path().join("calls.csv"));
    let row = calls.row(&[("caller", "ledger")]);
    // about 400 calls over 20 s; open 2 s at a time after 6 failures, then
    // 10 failing trials reopen it: it opens about every 2.5 s
    assert!(num(row, "breaker_opened") >= 5.0, "{row:?}");
    assert!(
        num(row, "breaker_refused") > num(row, "attempts"),
        "{row:?}"
    );
}

#[test]
fn resim_check_warns_of_a_breaker_that_can_never_open() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, text, _) = import(dir.path(), &[&fixture("resilience4j-window6.yaml")], &[]);
    assert_eq!(code, 0, "{err}");
    let file = dir.path().join("out.toml");
    let check = |sets: &[&str]| {
        let mut cmd = resim();
        cmd.arg("check").arg(&file);
        for s in sets {
            cmd.args(["--set", s]);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert!(text.is_some());
    let (code, stderr) = check(&[]);
    assert_eq!(code, Some(0));
    assert!(stderr.is_empty(), "{stderr}");
    let (code, stderr) = check(&["policies.ledger.breaker.min_calls=100"]);
    assert_eq!(code, Some(0), "a warning, not an error");
    assert!(
        stderr.starts_with("warning: ")
            && stderr.contains(
                "policies.ledger.breaker.min_calls = 100 is above its window's count (6)"
            )
            && stderr.contains("never opens"),
        "{stderr}"
    );
}

#[test]
fn retry_exceptions_choose_the_outcomes_retried() {
    let cases: [(&str, &[&str]); 6] = [
        (
            "retryExceptions: [java.util.concurrent.TimeoutException]",
            &["timeout"],
        ),
        (
            "retryExceptions: [java.io.IOException]",
            &["timeout", "error"],
        ),
        (
            "retryExceptions: org.springframework.web.client.HttpServerErrorException",
            &["error", "shed"],
        ),
        (
            "retryExceptions: [java.lang.RuntimeException]",
            &["error", "shed", "rejected"],
        ),
        (
            "ignoreExceptions: [java.util.concurrent.TimeoutException, java.io.IOException]",
            &["error", "shed", "rejected"],
        ),
        ("retryExceptions: [com.acme.PaymentDeclined]", &[]),
    ];
    for (line, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let body = format!(
            "resilience4j:\n  retry:\n    instances:\n      pay:\n        maxAttempts: 3\n        {line}\n"
        );
        let (code, err, t, _) = import_text(dir.path(), "a.yaml", &body);
        assert_eq!(code, 0, "{line}: {err}");
        let t = t.unwrap();
        assert_eq!(strs(&t, "policies.pay.retry.on"), want, "{line}");
        if want.is_empty() {
            assert!(
                err.contains(
                    "com.acme.PaymentDeclined (retried): a class the import does not know"
                ),
                "{err}"
            );
        }
    }
}

/// resilience4j-framework-common's inheritance: a retry config may name its
/// own base, and a config naming none inherits `default`; a circuit breaker
/// chain ends at the config naming none, and an instance naming none takes
/// the config of its own name.
#[test]
fn configs_inherit_as_resilience4j_resolves_them() {
    let dir = tempfile::tempdir().unwrap();
    let body = "resilience4j:
  retry:
    configs:
      default: {maxAttempts: 7, waitDuration: 5ms}
      mid: {waitDuration: 20ms}
      top: {baseConfig: mid}
    instances:
      a: {baseConfig: top}
  circuitbreaker:
    configs:
      default: {slidingWindowSize: 50, minimumNumberOfCalls: 40}
      shared: {failureRateThreshold: 25}
      b: {waitDurationInOpenState: 3s}
    instances:
      a: {baseConfig: shared}
      b: {}
";
    let (code, err, t, report) = import_text(dir.path(), "c.yaml", body);
    assert_eq!(code, 0, "{err}");
    let t = t.unwrap();
    // a -> top -> mid -> default: default's attempts, mid's wait
    assert_eq!(f(&t, "policies.a.retry.max_attempts"), 7.0);
    assert_eq!(f(&t, "policies.a.retry.backoff.base_ms"), 20.0);
    // the breaker's chain a -> shared does not reach default
    assert_eq!(f(&t, "policies.a.breaker.failure_rate"), 0.25);
    assert_eq!(f(&t, "policies.a.breaker.window.count"), 100.0);
    // b takes configs.b, not default
    assert_eq!(f(&t, "policies.b.breaker.open_ms"), 3000.0);
    assert_eq!(f(&t, "policies.b.breaker.min_calls"), 100.0);
    let report = report.unwrap();
    assert!(
        has(
            &ledger(&report),
            "resilience4j.circuitbreaker.configs.default",
            "ignored"
        ),
        "no breaker inherits it: {report}"
    );
    assert!(!report.contains("not read by the importer"), "{report}");
}

/// Spring's aspect orders decide what the time limiter and the breaker
/// cover: a time limiter outside the retry bounds the whole call.
#[test]
fn aspect_orders_decide_what_the_time_limit_covers() {
    let dir = tempfile::tempdir().unwrap();
    let body = "resilience4j:
  retry:
    retryAspectOrder: 2
    instances:
      a: {maxAttempts: 3, waitDuration: 10ms}
  timelimiter:
    timeLimiterAspectOrder: 1
    instances:
      a: {timeoutDuration: 300ms}
";
    let (code, err, t, report) = import_text(dir.path(), "o.yaml", body);
    assert_eq!(code, 0, "{err}");
    let t = t.unwrap();
    assert_eq!(
        f(&t, "workloads.a.timeout_ms"),
        300.0,
        "the call's deadline"
    );
    assert!(at(&t, "policies.a").get("timeout_ms").is_none());
    let rows = ledger(&report.unwrap());
    assert!(
        has(
            &rows,
            "resilience4j.timelimiter.timeLimiterAspectOrder",
            "mapped"
        ),
        "{rows:?}"
    );
}

#[test]
fn bad_resilience4j_configurations_exit_2_naming_the_field() {
    let cases: [(&str, &str, &[&str]); 8] = [
        (
            "cycle.yaml",
            "resilience4j:\n  retry:\n    configs:\n      first: {baseConfig: second}\n      second: {baseConfig: first}\n    instances:\n      a: {baseConfig: first}\n",
            &[
                "resilience4j.retry.configs.first",
                "inherited in a circle: a -> first -> second -> first",
            ],
        ),
        (
            "self.yaml",
            "resilience4j:\n  circuitbreaker:\n    configs:\n      a: {slidingWindowSize: 5}\n    instances:\n      a: {baseConfig: a}\n",
            &[
                "resilience4j.circuitbreaker.instances.a.baseConfig",
                "circular reference",
            ],
        ),
        (
            "factor.yaml",
            "resilience4j:\n  retry:\n    instances:\n      a: {waitDuration: 1s, enableRandomizedWait: true, randomizedWaitFactor: 1}\n",
            &[
                "resilience4j.retry.instances.a.randomizedWaitFactor",
                "below 1",
            ],
        ),
        (
            "window.yaml",
            "resilience4j:\n  circuitbreaker:\n    instances:\n      a: {slidingWindowType: SLIDING}\n",
            &[
                "resilience4j.circuitbreaker.instances.a.slidingWindowType",
                "COUNT_BASED, TIME_BASED",
            ],
        ),
        (
            "both.yaml",
            "resilience4j:\n  circuitbreaker:\n    instances:\n      a: {waitDurationInOpenState: 1s, enableExponentialBackoff: true, enableRandomizedWait: true}\n",
            &[
                "resilience4j.circuitbreaker.instances.a.enableRandomizedWait",
                "refuses both",
            ],
        ),
        (
            "twice.yaml",
            "resilience4j.retry.instances.a.maxAttempts: 2\nresilience4j:\n  retry:\n    instances:\n      a:\n        maxAttempts: 3\n",
            &[
                "twice.yaml",
                "resilience4j.retry.instances.a.maxAttempts",
                "given twice",
            ],
        ),
        (
            "alias.yaml",
            "resilience4j:\n  retry:\n    instances:\n      a: {maxAttempts: 2}\n    backends:\n      a: {maxAttempts: 3}\n",
            &["resilience4j.retry.backends.a", "also under `instances`"],
        ),
        (
            "gap.properties",
            "resilience4j.retry.instances.a.retryExceptions[0]=java.io.IOException\nresilience4j.retry.instances.a.retryExceptions[2]=java.lang.Exception\n",
            &["gap.properties", "retryExceptions[2]", "no [1]"],
        ),
    ];
    for (name, body, expect) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (code, err, t, report) = import_text(dir.path(), name, body);
        assert_eq!(code, 2, "{name}: {err}");
        for e in expect {
            assert!(err.contains(e), "{name}: `{e}` not in: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            t.is_none() && report.is_none(),
            "{name}: nothing is written"
        );
    }
}

#[test]
fn a_repeated_property_is_an_error_naming_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, _, _) = import_text(
        dir.path(),
        "app.properties",
        "resilience4j.retry.instances.a.maxAttempts=2\n# again\nresilience4j.retry.instances.a.maxAttempts=5\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("app.properties:3:1: resilience4j.retry.instances.a.maxAttempts: is given twice (lines 1 and 3)"),
        "{err}"
    );
}
