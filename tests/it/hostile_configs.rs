//! Hostile configuration imports: numbers beyond the range of the field's
//! type or of the virtual clock, values whose meaning the source system
//! defines (0 as "off", a percentage above 100), things that must stay apart
//! or be refused, and many routes. Each case is refused with exit code 2
//! naming the file, the field's path and the value, or is imported with the
//! meaning the real system gives it: never a scenario resim's own loader
//! refuses ("a bug in resim import").

use crate::common::resim;
use crate::import_configs::{f, fixture, import};
use std::path::{Path, PathBuf};

/// A copy of the fixture `name` in `dir` with `from` replaced by `to` (which
/// must be in it once), under the file name `out`.
fn variant(dir: &Path, name: &str, out: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(fixture(name)).expect("the fixture");
    for (from, to) in edits {
        assert_eq!(text.matches(from).count(), 1, "{from} once in {name}");
        text = text.replace(from, to);
    }
    let p = dir.join(out);
    std::fs::write(&p, text).unwrap();
    p
}

/// A fresh folder for the import of `file`.
fn out_dir(dir: &Path, file: &Path) -> PathBuf {
    let d = dir.join(format!(
        "out-{}",
        file.file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Imports `file`: exit code 2, the message names the file, each of `names`
/// (the field's path and its value), on one line; no scenario is written.
fn refused(dir: &Path, file: &Path, names: &[&str]) -> String {
    let dir = &out_dir(dir, file);
    let (code, err, scenario, _) = import(dir, &[file], &[]);
    assert_eq!(code, 2, "{}: {err}", file.display());
    assert!(!err.contains("bug in resim import"), "{err}");
    let line = err.trim_end();
    assert_eq!(line.lines().count(), 1, "one line: {err}");
    assert!(line.contains(&file.display().to_string()), "{err}");
    for n in names {
        assert!(line.contains(n), "`{n}` in: {err}");
    }
    assert!(scenario.is_none(), "nothing written");
    err
}

/// Imports `file`: exit code 0, and the scenario loads (`resim check`).
/// Returns the scenario and the report.
fn imported(dir: &Path, file: &Path) -> (toml::Table, String) {
    let dir = &out_dir(dir, file);
    let (code, err, scenario, report) = import(dir, &[file], &[]);
    assert_eq!(code, 0, "{}: {err}", file.display());
    let out = resim()
        .arg("check")
        .arg(dir.join("out.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the imported scenario loads: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = scenario.unwrap().parse().expect("TOML");
    (t, report.unwrap())
}

/// Numbers that no TOML integer holds are written as floats: a gRPC
/// backoffMultiplier of 1e300 is imported as it is, and the scenario loads.
#[test]
fn a_huge_multiplier_is_written_as_a_number_toml_holds() {
    let dir = tempfile::tempdir().unwrap();
    let file = variant(
        dir.path(),
        "grpc-retry-throttling.json",
        "g.json",
        &[("\"backoffMultiplier\": 2", "\"backoffMultiplier\": 1e300")],
    );
    let (t, _) = imported(dir.path(), &file);
    assert_eq!(
        f(&t, "policies.method-config-1.retry.backoff.multiplier"),
        1e300
    );
}

/// Counts beyond the range of the field's type in the system that reads it
/// (a protobuf uint32 or int32, a Java int) are refused naming the field and
/// the value: the system itself refuses them.
#[test]
fn counts_beyond_their_types_range_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(PathBuf, Vec<&str>)> = vec![
        (
            variant(
                d,
                "envoy-bootstrap.yaml",
                "e1.yaml",
                &[("num_retries: 3", "num_retries: 5000000000")],
            ),
            vec!["retry_policy.num_retries", "5000000000", "uint32"],
        ),
        (
            // the most a uint32 holds, but one attempt more than resim counts
            variant(
                d,
                "envoy-bootstrap.yaml",
                "e2.yaml",
                &[("num_retries: 3", "num_retries: 4294967295")],
            ),
            vec!["retry_policy.num_retries", "4294967295"],
        ),
        (
            variant(
                d,
                "envoy-bootstrap.yaml",
                "e3.yaml",
                &[("consecutive_5xx: 3", "consecutive_5xx: 5000000000")],
            ),
            vec!["outlier_detection.consecutive_5xx", "5000000000"],
        ),
        (
            variant(
                d,
                "envoy-bootstrap.yaml",
                "e4.yaml",
                &[("min_retry_concurrency: 5", "min_retry_concurrency: 1e15")],
            ),
            vec!["retry_budget.min_retry_concurrency", "1e15"],
        ),
        (
            variant(
                d,
                "envoy-bootstrap.yaml",
                "e5.yaml",
                &[("max_requests: 200", "max_requests: 1e15")],
            ),
            vec!["thresholds[0].max_requests", "1e15"],
        ),
        (
            variant(
                d,
                "envoy-bootstrap.yaml",
                "e6.yaml",
                &[(
                    "- endpoint: { address: { socket_address: { address: 10.0.0.1,",
                    "- load_balancing_weight: 1e308\n          endpoint: { address: { socket_address: { address: 10.0.0.1,",
                )],
            ),
            vec!["lb_endpoints[0].load_balancing_weight", "1e308"],
        ),
        (
            variant(
                d,
                "istio-reviews.yaml",
                "i1.yaml",
                &[("attempts: 3", "attempts: 5000000000")],
            ),
            vec!["spec.http[0].retries.attempts", "5000000000", "int32"],
        ),
        (
            variant(
                d,
                "istio-reviews.yaml",
                "i2.yaml",
                &[(
                    "consecutive5xxErrors: 5",
                    "consecutive5xxErrors: 5000000000",
                )],
            ),
            vec!["outlierDetection.consecutive5xxErrors", "5000000000"],
        ),
        (
            variant(
                d,
                "istio-reviews.yaml",
                "i3.yaml",
                &[("http2MaxRequests: 500", "http2MaxRequests: 1e15")],
            ),
            vec!["http.http2MaxRequests", "1e15"],
        ),
        (
            variant(
                d,
                "resilience4j.yaml",
                "r1.yaml",
                &[("maxAttempts: 2", "maxAttempts: 5000000000")],
            ),
            vec![
                "resilience4j.retry.instances.payments.maxAttempts",
                "5000000000",
                "Java int",
            ],
        ),
        (
            variant(
                d,
                "resilience4j.yaml",
                "r2.yaml",
                &[("slidingWindowSize: 20", "slidingWindowSize: 1e15")],
            ),
            vec!["payments.slidingWindowSize", "1e15"],
        ),
        (
            variant(
                d,
                "resilience4j.yaml",
                "r3.yaml",
                &[("maxConcurrentCalls: 10", "maxConcurrentCalls: 3000000000")],
            ),
            vec![
                "bulkhead.instances.inventory.maxConcurrentCalls",
                "3000000000",
            ],
        ),
    ];
    for (file, names) in cases {
        refused(d, &file, &names);
    }
}

/// Durations beyond the virtual clock (about 146 years) are refused naming
/// the field and the value as written.
#[test]
fn durations_beyond_the_virtual_clock_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(PathBuf, Vec<&str>)> = vec![
        (
            variant(
                d,
                "grpc-retry-throttling.json",
                "g1.json",
                &[("\"timeout\": \"0.5s\"", "\"timeout\": \"315576000000s\"")],
            ),
            vec!["/methodConfig/0/timeout", "315576000000s", "virtual clock"],
        ),
        (
            variant(
                d,
                "grpc-retry-throttling.json",
                "g2.json",
                &[(
                    "\"maxBackoff\": \"0.1s\"",
                    "\"maxBackoff\": \"315576000000s\"",
                )],
            ),
            vec!["/methodConfig/0/retryPolicy/maxBackoff", "315576000000s"],
        ),
        (
            variant(
                d,
                "envoy-bootstrap.yaml",
                "e1.yaml",
                &[("per_try_timeout: 0.5s", "per_try_timeout: 315576000000s")],
            ),
            vec!["retry_policy.per_try_timeout", "315576000000s"],
        ),
        (
            variant(
                d,
                "envoy-bootstrap.yaml",
                "e2.yaml",
                &[(
                    "base_ejection_time: 10s",
                    "base_ejection_time: 315576000000s",
                )],
            ),
            vec!["outlier_detection.base_ejection_time", "315576000000s"],
        ),
        (
            variant(
                d,
                "istio-reviews.yaml",
                "i1.yaml",
                &[("timeout: 1s", "timeout: 2600000000h")],
            ),
            vec!["spec.http[0].timeout", "2600000000h"],
        ),
        (
            variant(
                d,
                "resilience4j.yaml",
                "r1.yaml",
                &[(
                    "waitDurationInOpenState: 10s",
                    "waitDurationInOpenState: 999999999999999ms",
                )],
            ),
            vec!["payments.waitDurationInOpenState", "999999999999999ms"],
        ),
    ];
    for (file, names) in cases {
        refused(d, &file, &names);
    }
}

/// gRPC keeps three decimals of tokenRatio (its core reads the digits): a
/// ratio that keeps none is refused, as gRPC refuses it; one written with
/// three decimals is kept exactly (4.35, not 4.349 from 4.35 * 1000 in
/// binary).
#[test]
fn a_token_ratio_is_read_to_grpcs_three_decimals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tiny = variant(
        d,
        "grpc-retry-throttling.json",
        "g1.json",
        &[("\"tokenRatio\": 0.1", "\"tokenRatio\": 0.0004")],
    );
    refused(
        d,
        &tiny,
        &["/retryThrottling/tokenRatio", "0.0004", "0.001"],
    );
    let exact = variant(
        d,
        "grpc-retry-throttling.json",
        "g2.json",
        &[("\"tokenRatio\": 0.1", "\"tokenRatio\": 4.35")],
    );
    let (t, _) = imported(d, &exact);
    assert_eq!(
        f(&t, "policies.method-config-1.retry.budget.token_ratio"),
        4.35
    );
    // gRPC core keeps the thousandths in an int: 3,000,000 would wrap there
    let huge = variant(
        d,
        "grpc-retry-throttling.json",
        "g3.json",
        &[("\"tokenRatio\": 0.1", "\"tokenRatio\": 3000000")],
    );
    refused(
        d,
        &huge,
        &["/retryThrottling/tokenRatio", "3000000", "2147483647"],
    );
}

/// Envoy's own reading of values it defines: consecutive_5xx 0 never
/// ejects (a run of one or more never equals 0), max_ejection_percent above
/// 100 acts as 100 (the ejected share is compared against it), and an
/// endpoint weight of 0 is refused as Envoy refuses it.
#[test]
fn envoy_outlier_values_mean_what_envoy_makes_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let off = variant(
        d,
        "envoy-bootstrap.yaml",
        "e1.yaml",
        &[("consecutive_5xx: 3", "consecutive_5xx: 0")],
    );
    let (t, report) = imported(d, &off);
    assert!(
        t["services"]["orders"].get("outlier_detection").is_none(),
        "no ejection: {t:?}"
    );
    assert!(report.contains("consecutive_5xx"), "{report}");
    let over = variant(
        d,
        "envoy-bootstrap.yaml",
        "e2.yaml",
        &[("max_ejection_percent: 50", "max_ejection_percent: 150")],
    );
    let (t, _) = imported(d, &over);
    assert_eq!(
        f(&t, "services.orders.outlier_detection.max_ejection_pct"),
        100.0
    );
    let zero = variant(
        d,
        "envoy-bootstrap.yaml",
        "e3.yaml",
        &[(
            "- endpoint: { address: { socket_address: { address: 10.0.0.1,",
            "- load_balancing_weight: 0\n          endpoint: { address: { socket_address: { address: 10.0.0.1,",
        )],
    );
    refused(
        d,
        &zero,
        &["lb_endpoints[0].load_balancing_weight", "0", "at least 1"],
    );
}

/// Istio refuses a maxEjectionPercent outside 0 to 100; so does the import,
/// naming the field.
#[test]
fn istio_max_ejection_percent_above_100_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = variant(
        d,
        "istio-reviews.yaml",
        "i.yaml",
        &[("maxEjectionPercent: 50", "maxEjectionPercent: 150")],
    );
    refused(d, &file, &["outlierDetection.maxEjectionPercent", "150"]);
}

/// Writes `text` to `dir/name`.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The server names of a scenario.
fn services(t: &toml::Table) -> Vec<String> {
    let mut v: Vec<String> = t["services"].as_table().unwrap().keys().cloned().collect();
    v.sort();
    v
}

/// Two hosts are two servers: Istio resolves a short name in the
/// resource's namespace (`reviews` in `a` and in `b` are two hosts), and two
/// hosts with one first label (`reviews.prod...`, `reviews.other...`) stay
/// apart; likewise two gRPC services whose names read alike.
#[test]
fn hosts_and_services_that_read_alike_stay_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let vs = |name: &str, ns: &str, host: &str| {
        format!(
            "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  hosts: [{host}]\n  http:\n  - route:\n    - destination:\n        host: {host}\n"
        )
    };
    let short = file(
        d,
        "short.yaml",
        &format!(
            "{}---\n{}",
            vs("r1", "a", "reviews"),
            vs("r2", "b", "reviews")
        ),
    );
    let (t, _) = imported(d, &short);
    assert_eq!(services(&t), ["reviews", "reviews-b"], "{t:?}");
    let long = file(
        d,
        "long.yaml",
        &format!(
            "{}---\n{}",
            vs("r1", "x", "reviews.prod.svc.cluster.local"),
            vs("r2", "x", "reviews.other.svc.cluster.local")
        ),
    );
    let (t, _) = imported(d, &long);
    assert_eq!(services(&t), ["reviews", "reviews-other"], "{t:?}");
    // the same host, short and long, is one server
    let same = file(
        d,
        "same.yaml",
        &format!(
            "{}---\n{}",
            vs("r1", "prod", "reviews"),
            vs("r2", "x", "reviews.prod.svc.cluster.local")
        ),
    );
    let (t, _) = imported(d, &same);
    assert_eq!(services(&t), ["reviews"], "{t:?}");
    let grpc = file(
        d,
        "g.json",
        r#"{"methodConfig":[{"name":[{"service":"shop_v1.Catalog"}],"timeout":"1s"},{"name":[{"service":"shop.v1.Catalog"}],"timeout":"2s"}]}"#,
    );
    let (t, _) = imported(d, &grpc);
    assert_eq!(services(&t).len(), 2, "{t:?}");
}

/// Names made from one file never give two tables one header (which was
/// refused as "two of these files"): an Istio host `reviews-main` beside
/// the route `main` of VirtualService `reviews`; resilience4j backends
/// `inventory-bulkhead` (a rate limiter) and `inventory` (a bulkhead), and
/// `shop.v1` and `shop_v1` as JSON keys.
#[test]
fn names_made_from_one_file_do_not_collide() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let istio = file(
        d,
        "i.yaml",
        "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: reviews\nspec:\n  hosts: [reviews]\n  http:\n  - name: main\n    route:\n    - destination:\n        host: reviews\n---\napiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: rm\nspec:\n  host: reviews-main\n  trafficPolicy:\n    connectionPool:\n      http:\n        maxRetries: 3\n",
    );
    let (t, _) = imported(d, &istio);
    assert_eq!(services(&t), ["reviews", "reviews-main"]);
    assert_eq!(t["workloads"].as_table().unwrap().len(), 2);
    let r4j = file(
        d,
        "r.yaml",
        "resilience4j:\n  ratelimiter:\n    instances:\n      inventory-bulkhead:\n        limitForPeriod: 5\n  bulkhead:\n    instances:\n      inventory:\n        maxConcurrentCalls: 10\n",
    );
    let (t, _) = imported(d, &r4j);
    assert_eq!(t["limiters"].as_table().unwrap().len(), 2, "{t:?}");
    let json = file(
        d,
        "r.json",
        r#"{"resilience4j":{"bulkhead":{"instances":{"shop.v1":{"maxConcurrentCalls":3},"shop_v1":{"maxConcurrentCalls":4}}}}}"#,
    );
    let (t, _) = imported(d, &json);
    assert_eq!(t["limiters"].as_table().unwrap().len(), 2, "{t:?}");
}

/// A route after one whose bare prefix covers it is never matched (Envoy
/// takes the first route of the virtual host that matches): it is reported
/// as such, with no workload of its own.
#[test]
fn an_envoy_route_shadowed_by_an_earlier_prefix_gets_no_workload() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = variant(
        d,
        "envoy-bootstrap.yaml",
        "e.yaml",
        &[(
            "              - match: { prefix: \"/orders\" }",
            "              - match: { prefix: \"/\" }\n                route: { cluster: stock }\n              - match: { prefix: \"/orders\" }",
        )],
    );
    let out = out_dir(d, &file);
    let (code, err, text, report) = import(&out, &[&file], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("routes[1]: never matched: routes[0] (prefix \"/\")"),
        "{err}"
    );
    resim()
        .arg("check")
        .arg(out.join("out.toml"))
        .assert()
        .success();
    let t: toml::Table = text.unwrap().parse().unwrap();
    let routes: Vec<&str> = t["workloads"]
        .as_table()
        .unwrap()
        .values()
        .map(|w| w["route"].as_str().unwrap())
        .collect();
    assert_eq!(routes, ["/"], "{t:?}");
    assert!(report.unwrap().contains("never matched"));
}

/// Values the source defines, already read as it reads them: a
/// single-endpoint Envoy cluster's outlier detection (nothing to eject
/// among one host), Istio's consecutive5xxErrors 0 (detection off),
/// resilience4j's permittedNumberOfCallsInHalfOpenState 0 (refused, as
/// resilience4j refuses it).
#[test]
fn values_the_source_defines_keep_their_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let one = variant(
        d,
        "envoy-bootstrap.yaml",
        "one.yaml",
        &[
            (
                "        - endpoint: { address: { socket_address: { address: 10.0.0.2, port_value: 8080 } } }\n",
                "",
            ),
            (
                "        - endpoint: { address: { socket_address: { address: 10.0.0.3, port_value: 8080 } } }\n",
                "",
            ),
        ],
    );
    let (t, _) = imported(d, &one);
    assert!(t["services"]["orders"].get("outlier_detection").is_none());
    let off = variant(
        d,
        "istio-reviews.yaml",
        "i.yaml",
        &[("consecutive5xxErrors: 5", "consecutive5xxErrors: 0")],
    );
    let (t, _) = imported(d, &off);
    assert!(t["services"]["reviews"].get("outlier_detection").is_none());
    let half = variant(
        d,
        "resilience4j.yaml",
        "r.yaml",
        &[(
            "permittedNumberOfCallsInHalfOpenState: 3",
            "permittedNumberOfCallsInHalfOpenState: 0",
        )],
    );
    refused(
        d,
        &half,
        &[
            "payments.permittedNumberOfCallsInHalfOpenState",
            "at least 1",
        ],
    );
}

/// A JSON mapping holding one key twice is refused, naming the key and its
/// JSON pointer (serde_json kept the last value without a word); YAML's
/// duplicate keys are refused too, without the YAML reader's advice about
/// its own options.
#[test]
fn a_key_given_twice_is_refused_naming_its_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = file(
        d,
        "g.json",
        r#"{"methodConfig":[{"name":[{"service":"a.B"}],"timeout":"1s","timeout":"5s"}]}"#,
    );
    refused(d, &json, &["/methodConfig/0/timeout", "`timeout`", "twice"]);
    let top = variant(
        d,
        "envoy-config-dump.json",
        "dump.json",
        &[(
            "\"version_info\": \"7\",\n      \"dynamic_active_clusters\"",
            "\"version_info\": \"7\",\n      \"version_info\": \"8\",\n      \"dynamic_active_clusters\"",
        )],
    );
    refused(d, &top, &["/configs/1/version_info", "twice"]);
    let yaml = file(
        d,
        "r.yaml",
        "resilience4j:\n  retry:\n    instances:\n      a:\n        maxAttempts: 3\n        maxAttempts: 5\n",
    );
    let err = refused(d, &yaml, &["duplicate mapping key: maxAttempts", "line 6"]);
    assert!(!err.contains("DuplicateKeyPolicy"), "{err}");
}

/// A configuration of `n` routes (Envoy: 100 clusters; Istio: one
/// VirtualService; gRPC: one method each), as JSON.
fn many_routes(kind: &str, n: usize) -> String {
    use serde_json::json;
    let v = match kind {
        "envoy" => {
            let routes: Vec<_> = (0..n)
                .map(|i| json!({"match": {"prefix": format!("/r{i}")}, "route": {"cluster": format!("c{}", i % 100), "timeout": "1s", "retry_policy": {"retry_on": "5xx", "num_retries": 2}}}))
                .collect();
            let clusters: Vec<_> = (0..100)
                .map(|j| json!({"name": format!("c{j}"), "type": "STATIC", "load_assignment": {"cluster_name": format!("c{j}"), "endpoints": [{"lb_endpoints": [{"endpoint": {"address": {"socket_address": {"address": "10.0.0.1", "port_value": 80}}}}]}]}}))
                .collect();
            json!({"static_resources": {"listeners": [{"name": "l", "filter_chains": [{"filters": [{"name": "envoy.filters.network.http_connection_manager", "typed_config": {"@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager", "stat_prefix": "x", "route_config": {"name": "rc", "virtual_hosts": [{"name": "v", "domains": ["*"], "routes": routes}]}}}]}]}], "clusters": clusters}})
        }
        "istio" => {
            let http: Vec<_> = (0..n)
                .map(|i| json!({"name": format!("h{i}"), "match": [{"uri": {"prefix": format!("/r{i}")}}], "route": [{"destination": {"host": format!("s{}", i % 100)}}], "timeout": "1s", "retries": {"attempts": 2}}))
                .collect();
            json!({"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "metadata": {"name": "vs"}, "spec": {"hosts": ["x"], "http": http}})
        }
        _ => {
            let mc: Vec<_> = (0..n)
                .map(|i| json!({"name": [{"service": format!("s{}.S", i % 100), "method": format!("M{i}")}], "timeout": "1s"}))
                .collect();
            json!({"methodConfig": mc})
        }
    };
    v.to_string()
}

/// `resim import FILE --out OUT/out.toml`, stopped after a minute.
fn import_within_a_minute(file: &Path, out: &Path) -> std::process::Output {
    resim()
        .arg("import")
        .arg(file)
        .arg("--out")
        .arg(out.join("out.toml"))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap()
}

/// Imports of many routes take time in proportion to their size: 5,000
/// routes of each format are imported (and the scenario loaded) well within
/// a bound that the former searches through every route read so far, for
/// each route, went far past (Envoy's 2,000 routes took 14 s in a release
/// build).
#[test]
fn many_routes_import_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for kind in ["envoy", "istio", "grpc"] {
        let f = file(d, &format!("{kind}.json"), &many_routes(kind, 5000));
        let out = out_dir(d, &f);
        let started = std::time::Instant::now();
        let run = import_within_a_minute(&f, &out);
        let took = started.elapsed();
        assert!(
            run.status.success(),
            "{kind}: 5,000 routes: {} after {took:?}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(took.as_secs() < 60, "{kind}: {took:?}");
    }
}

/// Warnings name their line without searching the file for each: 5,000
/// misspelt properties, each a warning, import well within a bound that a
/// search per warning went far past (3,000 took 8.9 s in a release build).
#[test]
fn many_warnings_import_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text: String = (0..5000)
        .map(|i| format!("resilience4j.retry.instances.b{i}.maxAttempts=3\nresilience4j.retry.instances.b{i}.maxAtempts=3\n"))
        .collect();
    let f = file(d, "many.properties", &text);
    let out = out_dir(d, &f);
    let run = import_within_a_minute(&f, &out);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    // stderr shows the first 20 and points to the report, which has all
    assert_eq!(
        err.matches("Spring Boot binds no property").count(),
        20,
        "{err}"
    );
    assert!(err.contains("4980 more warnings; every one is in"), "{err}");
    let report = std::fs::read_to_string(out.join("out.import.md")).unwrap();
    let listed = report
        .lines()
        .filter(|l| l.starts_with("- ") && l.contains("Spring Boot binds no property"));
    assert_eq!(
        listed.count(),
        5000,
        "every warning in the Warnings section"
    );
    let last = format!("{}:10000:", f.display());
    assert!(report.contains(&last), "the last warning names its line");
}

/// resilience4j's durations are read as Spring Boot binds them
/// (`DurationStyle.detectAndParse`): a fraction in the simple form or a
/// fraction of minutes in ISO-8601 is refused, as Spring refuses it to start;
/// a unit in capitals, ISO-8601 days and a decimal comma mean what they mean
/// to Spring.
#[test]
fn spring_durations_read_as_spring_binds_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r4j = "resilience4j.yaml";
    let open = "waitDurationInOpenState: 10s";
    let cases = [
        ("s1.yaml", (open, "waitDurationInOpenState: 1.5s"), "1.5s"),
        ("s2.yaml", (open, "waitDurationInOpenState: 1.5"), "1.5"),
        (
            "s3.yaml",
            ("waitDuration: PT0.2S", "waitDuration: PT0.2M"),
            "PT0.2M",
        ),
        ("s4.yaml", (open, "waitDurationInOpenState: 10 s"), "10 s"),
    ];
    for (out, edit, value) in cases {
        let file = variant(d, r4j, out, &[edit]);
        let err = refused(d, &file, &[value, "a whole number"]);
        assert!(err.contains("Duration"), "{err}");
    }
    let (mut same, _) = imported(d, &variant(d, r4j, "s5.yaml", &[]));
    let alike = variant(
        d,
        r4j,
        "s6.yaml",
        &[
            (open, "waitDurationInOpenState: 10S"),
            ("waitDuration: PT0.2S", "waitDuration: P0DT0,2S"),
            ("timeoutDuration: 800ms", "timeoutDuration: 800"),
        ],
    );
    let (mut t, _) = imported(d, &alike);
    // the scenario's name and about name the file
    t.remove("scenario");
    same.remove("scenario");
    assert_eq!(t, same, "the same scenario from Spring's other spellings");
}

/// The line and column of `needle` (once in `file`), 1-based, in characters.
fn line_col_of(file: &Path, needle: &str) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    assert_eq!(text.matches(needle).count(), 1, "{needle} once");
    let at = text.find(needle).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let col = text[start..at].chars().count() + 1;
    format!("{}:{line}:{col}: ", file.display())
}

/// A refused value is named by its line and column in every notation: a
/// JSON pointer's, a YAML path's and a property's value.
#[test]
fn a_refused_value_is_named_by_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (
            "grpc-retry-throttling.json",
            "p1.json",
            ("\"timeout\": \"0.5s\"", "\"timeout\": \"fast\""),
            "\"fast\"",
        ),
        (
            "istio-reviews.yaml",
            "p2.yaml",
            ("timeout: 1s", "timeout: 1x"),
            "1x",
        ),
        (
            "resilience4j.yaml",
            "p3.yaml",
            (
                "waitDurationInOpenState: 10s",
                "waitDurationInOpenState: 1.5s",
            ),
            "1.5s",
        ),
        (
            "resilience4j.properties",
            "p4.properties",
            (
                "exponentialMaxWaitDuration = 2s",
                "exponentialMaxWaitDuration = 2.5s",
            ),
            "2.5s",
        ),
    ];
    for (fixture_name, out, edit, value) in cases {
        let file = variant(d, fixture_name, out, &[edit]);
        let err = refused(d, &file, &[]);
        let at = line_col_of(&file, value);
        assert!(err.contains(&at), "`{at}` in: {err}");
    }
}

/// A warning names where its field is written the way an error does: a key
/// Spring Boot ignores, at its value's line and column.
#[test]
fn a_warning_names_its_fields_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = variant(d, "resilience4j.properties", "w.properties", &[]);
    let (code, err, _, _) = import(&out_dir(d, &file), &[&file], &[]);
    assert_eq!(code, 0, "{err}");
    // the value's column: after the key's `Treshold=`
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("Treshold=60"))
        .unwrap()
        + 1;
    let col = text.lines().nth(line - 1).unwrap().find("60").unwrap() + 1;
    let at = format!("{}:{line}:{col}: ", file.display());
    let warning = err
        .lines()
        .find(|l| l.contains("failureRateTreshold"))
        .unwrap_or_else(|| panic!("a warning of the misspelt key in: {err}"));
    assert!(warning.starts_with(&format!("warning: {at}")), "{warning}");
}
