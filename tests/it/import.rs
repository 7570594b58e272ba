//! `resim import`: trace files of each format become the same scenario, and it
//! runs; broken traces are counted and repaired, never a panic; bad input is
//! exit code 2 naming the file, the line and column and the JSON pointer; and a
//! run written with `--spans` comes back through `resim import` with the same
//! call graph, own times and arrival rate.

use crate::common::{resim, root};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/traces").join(name)
}

/// `resim import FILE --out DIR/NAME.toml ARGS`: (exit code, stderr).
fn import(dir: &Path, name: &str, file: &Path, args: &[&str]) -> (i32, String) {
    let out = resim()
        .arg("import")
        .arg(file)
        .arg("--out")
        .arg(dir.join(format!("{name}.toml")))
        .args(args)
        .output()
        .expect("resim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An imported scenario read back.
#[derive(Debug)]
struct Imported {
    /// Per service, its branches of calls (branches sorted): `callee`, or
    /// `callee?` when made with a probability below 1, then ` nowait` for a
    /// call not waited for.
    plans: BTreeMap<String, Vec<Vec<String>>>,
    /// Per service, the probability of each call that has one.
    probabilities: BTreeMap<String, Vec<f64>>,
    /// Dependencies and their error rates.
    dependencies: BTreeMap<String, f64>,
    /// Per service and dependency, its measured milliseconds, sorted.
    times: BTreeMap<String, Vec<f64>>,
    /// The workloads' rates, in file order (None: too few arrivals).
    rates: Vec<Option<f64>>,
    /// Per service with routes, its routes.
    routes: BTreeMap<String, Vec<String>>,
}

fn read_column(file: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut v: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.parse().expect("a number"))
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

impl Imported {
    fn read(scenario: &Path) -> Imported {
        let text = std::fs::read_to_string(scenario).expect("the scenario");
        let doc: toml::Table = text.parse().expect("TOML");
        let dir = scenario.parent().unwrap();
        let file_of = |latency: &toml::Value| {
            dir.join(
                latency["empirical"]["file"]
                    .as_str()
                    .expect("an empirical file"),
            )
        };
        let mut plans = BTreeMap::new();
        let mut probabilities = BTreeMap::new();
        let mut times = BTreeMap::new();
        let mut routes = BTreeMap::new();
        for (name, svc) in doc["services"].as_table().unwrap() {
            if let Some(r) = svc.get("routes").and_then(|r| r.as_array()) {
                let r = r.iter().map(|v| v.as_str().unwrap().to_string()).collect();
                routes.insert(name.clone(), r);
            }
            let handler = &svc["handler"];
            times.insert(name.clone(), read_column(&file_of(&handler["service"])));
            let mut branches = Vec::new();
            let mut ps = Vec::new();
            for b in handler
                .get("branches")
                .and_then(|b| b.as_array())
                .cloned()
                .unwrap_or_default()
            {
                let calls = b["calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| match c {
                        toml::Value::String(s) => s.clone(),
                        t => {
                            let mut call = t["to"].as_str().unwrap().to_string();
                            if let Some(p) = t.get("probability") {
                                ps.push(p.as_float().unwrap());
                                call.push('?');
                            }
                            if t.get("wait").and_then(|w| w.as_bool()) == Some(false) {
                                call.push_str(" nowait");
                            }
                            call
                        }
                    })
                    .collect();
                branches.push(calls);
            }
            // branches run in parallel: their order says nothing
            branches.sort();
            plans.insert(name.clone(), branches);
            probabilities.insert(name.clone(), ps);
        }
        let mut dependencies = BTreeMap::new();
        for (name, d) in doc
            .get("dependencies")
            .and_then(|d| d.as_table())
            .cloned()
            .unwrap_or_default()
        {
            times.insert(name.clone(), read_column(&file_of(&d["latency"])));
            let rate = d
                .get("error_rate")
                .and_then(|r| r.as_float())
                .unwrap_or(0.0);
            dependencies.insert(name, rate);
        }
        // in file order; None: `# set me` (too few arrivals for a rate)
        let rates = text
            .lines()
            .filter_map(|l| l.strip_prefix("rate_rps = "))
            .map(|v| (!v.contains("# set me")).then(|| v.parse().expect("a rate")))
            .collect();
        Imported {
            plans,
            probabilities,
            dependencies,
            times,
            rates,
            routes,
        }
    }
}

/// The plans as `(service, [[call, ...], ...])` literals.
fn plans(list: &[(&str, &[&[&str]])]) -> BTreeMap<String, Vec<Vec<String>>> {
    list.iter()
        .map(|(s, branches)| {
            (
                s.to_string(),
                branches
                    .iter()
                    .map(|b| b.iter().map(|c| c.to_string()).collect())
                    .collect(),
            )
        })
        .collect()
}

/// Nearest rank, as the report takes it.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn runs(scenario: &Path, dir: &Path) {
    resim()
        .args(["run", "-q", "--no-report", "--out"])
        .arg(dir)
        .arg(scenario)
        .assert()
        .success();
}

#[test]
fn otlp_jaeger_and_zipkin_traces_of_one_system_give_one_scenario_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let shop = plans(&[
        ("frontend", &[&["auth", "inventory"], &["pricing?"]]),
        ("pricing", &[&["postgresql"]]),
    ]);
    for (format, file) in [
        ("OTLP JSON", "shop.otlp.json"),
        ("Jaeger JSON", "shop.jaeger.json"),
        ("Zipkin v2 JSON", "shop.zipkin.json"),
    ] {
        let name = file.replace('.', "-");
        let (code, err) = import(dir.path(), &name, &fixture(file), &[]);
        assert_eq!(code, 0, "{file}: {err}");
        assert!(err.contains(&format!("({format})")), "{file}: {err}");
        let got = Imported::read(&dir.path().join(format!("{name}.toml")));
        assert_eq!(got.plans, shop, "{file}");
        assert_eq!(
            got.dependencies.keys().collect::<Vec<_>>(),
            ["auth", "inventory", "postgresql"],
            "{file}"
        );
        runs(
            &dir.path().join(format!("{name}.toml")),
            &dir.path().join(format!("{name}-out")),
        );
    }
    // the OTLP file's three checkouts, by hand: 100 - (5..60), 80 - (4..20, 22..50),
    // 120 - (6..90): own times 45, 36, 36 ms; pricing 43 - 30, 82 - 70
    let otlp = Imported::read(&dir.path().join("shop-otlp-json.toml"));
    assert_eq!(otlp.times["frontend"], [36.0, 36.0, 45.0]);
    assert_eq!(otlp.times["pricing"], [12.0, 13.0]);
    assert_eq!(otlp.probabilities["frontend"], [0.666667]);
    // postgresql failed one call of two (its client span's status)
    assert_eq!(otlp.dependencies["postgresql"], 0.5);
    // three arrivals over 2 s are too few for a rate
    assert_eq!(otlp.rates, [None]);
    // Jaeger's traces say they were sampled at 0.5: two arrivals stand for
    // four requests
    let jaeger = Imported::read(&dir.path().join("shop-jaeger-json.toml"));
    assert_eq!(jaeger.rates, [None]);
    let report = std::fs::read_to_string(dir.path().join("shop-jaeger-json.import.md")).unwrap();
    assert!(
        report.contains("| workload | frontend | /checkout | 2 | 4 |"),
        "{report}"
    );
    // inventory's span in error (otel.status_code = ERROR) in one of two
    assert_eq!(jaeger.dependencies["inventory"], 0.5);
    // Zipkin's client and server halves of one shared id are one call
    let zipkin = Imported::read(&dir.path().join("shop-zipkin-json.toml"));
    assert_eq!(zipkin.times["auth"], [14.0, 18.0]);
    // --sample-rate beats what the traces say
    let (code, err) = import(
        dir.path(),
        "rated",
        &fixture("shop.jaeger.json"),
        &["--sample-rate", "0.1"],
    );
    assert_eq!(code, 0, "{err}");
    let report = std::fs::read_to_string(dir.path().join("rated.import.md")).unwrap();
    assert!(
        report.contains("| workload | frontend | /checkout | 2 | 20 |"),
        "{report}"
    );
}

#[test]
fn the_report_gives_every_inference_with_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = import(dir.path(), "shop", &fixture("shop.otlp.json"), &[]);
    assert_eq!(code, 0, "{err}");
    let report = std::fs::read_to_string(dir.path().join("shop.import.md")).unwrap();
    for line in [
        "| traces | 3 | read |",
        "| orphans (parent missing) | 0 | kept; a server or consumer span is an arrival, others not |",
        "| clock-skew repairs | 0 | moved into the parent |",
        "| frontend | service (entry) | 3 | 36.000 | 45.000 | 39.000 | 33.33 % | 0.00 % | 1 |",
        "| frontend | pricing | 2 | 3 | 2 | 0.6667 | 50.00 % | 2 |",
        "| pricing | postgresql | 2 | 2 | 2 | 1.0000 | 50.00 % | 0 |",
        "| frontend | b2 |  | 1 | pricing | 1 | 0.666667 |  | yes | probability |",
        "| workload | frontend | /checkout | 3 | 3 |  | request | 0 |",
    ] {
        assert!(report.contains(line), "{line} not in the report:\n{report}");
    }
    assert!(
        err.contains("3 traces, 21 spans: 11 handling spans, 10 calls, 3 arrivals"),
        "{err}"
    );
    assert!(
        err.contains("built 2 services, 3 dependencies, 4 calls between them and 1 workload\n"),
        "{err}"
    );
}

/// Imports a broken fixture: it succeeds, says `warnings`, and the scenario runs.
fn broken(file: &str, warnings: &[&str]) -> Imported {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = import(dir.path(), "broken", &fixture(file), &[]);
    assert_eq!(code, 0, "{file}: {err}");
    for w in warnings {
        assert!(err.contains(w), "{file}: `{w}` not in\n{err}");
    }
    let scenario = dir.path().join("broken.toml");
    runs(&scenario, &dir.path().join("out"));
    Imported::read(&scenario)
}

#[test]
fn broken_traces_are_counted_repaired_and_reported_never_a_panic() {
    let got = broken(
        "broken-orphans.zipkin.json",
        &[
            "warning: 1 spans name a parent that is not in their trace (orphans)",
            "warning: 1 spans without a usable trace or span id were left out",
            "warning: 1 spans have no end and no duration: kept in place",
            "4 traces, 7 spans: 5 handling spans, 2 calls, 4 arrivals (1 at server or consumer spans whose parent is not in the file: requests entered there)",
        ],
    );
    // the orphan is a server span: requests entered backend there
    assert_eq!(got.routes["backend"], ["/order"]);
    // the orphan's own call still counts: backend calls mysql, in one of its
    // two spans (the orphan's; the other one, under frontend, calls nothing)
    assert_eq!(got.plans["backend"], [["mysql?"]]);
    assert_eq!(got.probabilities["backend"], [0.5]);
    // a root span named "get /orders" with no http.route: the route /orders
    assert_eq!(got.routes["frontend"], ["/orders"]);
    broken(
        "broken-cycle.zipkin.json",
        &[
            "warning: 2 parent links loop: cut at the span where the loop closes",
            "1 arrivals",
        ],
    );
    let skew = broken(
        "broken-skew.jaeger.json",
        &[
            "warning: 1 spans of another service started outside their parent (clock skew)",
            "warning: 1 spans name no service",
        ],
    );
    // backend's clock is 120 ms behind: its own time (30 - 20) is its own
    assert_eq!(skew.times["backend"], [10.0]);
    let unknown = broken(
        "broken-unknown.otlp.json",
        &["warning: 2 spans name no service: left out, their children hung under the span above"],
    );
    // the unnamed proxy between them is left out: frontend calls backend
    assert_eq!(unknown.plans["frontend"], [["backend"]]);
    broken(
        "call-cycle.zipkin.json",
        &[
            "warning: the call backend -> frontend (1 calls) is left out: it closes the cycle frontend -> backend -> frontend",
        ],
    );
    let cut = fixture("broken-truncated.otlp.json");
    broken(
        "broken-truncated.otlp.json",
        &[&format!(
            "warning: {} is cut off at 226:10, in /resourceSpans/3/scopeSpans/0/spans/2: the 19 spans before it are used, the rest is lost",
            cut.display()
        )],
    );
}

/// Spans whose top server span names a parent outside the file (a service
/// behind an untraced gateway, a trace cut out of a longer one): requests
/// entered there. Before, such a file was refused ("no request arrives").
#[test]
fn server_spans_whose_parent_is_outside_the_file_are_where_requests_enter() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = import(dir.path(), "gw", &fixture("behind-gateway.otlp.json"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("3 arrivals (3 at server or consumer spans whose parent is not in the file"),
        "{err}"
    );
    let got = Imported::read(&dir.path().join("gw.toml"));
    assert_eq!(got.routes["orders"], ["/orders", "/orders/{id}"]);
    assert_eq!(got.plans["orders"], [["postgresql?"]]);
    let report = std::fs::read_to_string(dir.path().join("gw.import.md")).unwrap();
    assert!(
        report.contains("| orders | /orders | 2 | 2 |") && report.contains("| request | 2 |"),
        "{report}"
    );
    runs(&dir.path().join("gw.toml"), &dir.path().join("out"));
}

/// A Jaeger trace read in every shape Jaeger's UI opens (jaeger-ui
/// `FileLoader.tsx`, `loadTracesFromFile`; `readJsonFile.ts`): a bare trace
/// object (what it downloads), `{"data": {trace}}`, `{"data": [traces]}`, a
/// list of traces, one trace a line; and a list of OTLP documents read as
/// one. Before, the bare object and a trace a line were refused, `{"data":
/// {..}}` was a type error and a list of traces was read as Zipkin spans.
#[test]
fn a_jaeger_trace_imports_in_every_shape_jaegers_ui_opens() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(fixture("one-trace.jaeger.json")).unwrap();
    let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
    let line = serde_json::to_string(&trace).unwrap();
    let shapes = [
        ("object", text.clone()),
        ("data-object", format!("{{\"data\": {text}}}")),
        ("data-list", format!("{{\"data\": [{text}]}}")),
        ("list", format!("[{text}]")),
        ("lines", format!("{line}\n{line}\n")),
    ];
    for (name, body) in shapes {
        let file = d.join(format!("{name}.json"));
        std::fs::write(&file, body).unwrap();
        let (code, err) = import(d, name, &file, &[]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(err.contains("(Jaeger JSON)"), "{name}: {err}");
        let got = Imported::read(&d.join(format!("{name}.toml")));
        assert_eq!(
            got.plans,
            plans(&[("cart", &[&["redis", "pricing"]])]),
            "{name}"
        );
        assert_eq!(got.routes["cart"], ["/cart"], "{name}");
    }
    // a list of OTLP documents: their resources together
    let otlp = std::fs::read_to_string(fixture("shop.otlp.json")).unwrap();
    let file = d.join("otlp-list.json");
    std::fs::write(&file, format!("[{otlp}]")).unwrap();
    let (code, err) = import(d, "otlp-list", &file, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(OTLP JSON): 21 spans"), "{err}");
}

/// Messages and calls nobody waits for. A consumer under its producer
/// (Zipkin messaging, an OTLP consumer span), a span linked to the message
/// that started it, and the consumers of a producer with no request above it
/// each arrive at their service as a workload of their own, at the rate they
/// happened; the consumer that starts after its producer ended is no clock
/// skew. A call that outlives its caller's answer is `wait = false`, and
/// takes no time from the caller. Before: the consumers were "repaired" as
/// skew, a second consumer group was a client's retry and its service left
/// out, and the audit call blocked the answer (own time 15 ms, not 20).
#[test]
fn messages_and_calls_nobody_waits_for_are_no_blocking_calls() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = import(dir.path(), "async", &fixture("async.otlp.json"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("clock skew"), "{err}");
    let got = Imported::read(&dir.path().join("async.toml"));
    assert_eq!(got.plans["orders"], [["audit nowait"]]);
    assert_eq!(
        got.times["orders"], [20.0; 4],
        "the audit call took no time from orders"
    );
    assert_eq!(got.plans["billing"], [["postgresql?"]]);
    assert_eq!(
        got.rates.len(),
        3,
        "orders, and billing's consumer and linked batch"
    );
    let report = std::fs::read_to_string(dir.path().join("async.import.md")).unwrap();
    assert!(report.contains("| orders | billing | 8 |"), "{report}");
    runs(&dir.path().join("async.toml"), &dir.path().join("out"));

    let (code, err) = import(dir.path(), "mq", &fixture("messaging.zipkin.json"), &[]);
    assert_eq!(code, 0, "{err}");
    for no in ["clock skew", "retries", "left out"] {
        assert!(!err.contains(no), "{no}: {err}");
    }
    assert!(err.contains("built 3 services, 2 dependencies"), "{err}");
    let got = Imported::read(&dir.path().join("mq.toml"));
    assert_eq!(got.plans["mailer"], [["smtp"]]);
    assert_eq!(got.rates.len(), 3);
}

/// Client spans named for their callee (their local service is the service
/// they call, as some instrumentations write them): calls of the handling
/// span above, as Zipkin's DependencyLinker links them (from the first remote
/// ancestor to the name; one naming a remote besides links on to it). Before,
/// their calls were not counted: routing's own time was its whole span
/// (140 to 172 ms) and geo, traffic, tiles, pricing, cache and redis were
/// lost.
#[test]
fn client_spans_named_for_their_callee_are_calls_of_the_span_above() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = import(dir.path(), "m", &fixture("mislabelled.zipkin.json"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: 25 client spans name another service"),
        "{err}"
    );
    let got = Imported::read(&dir.path().join("m.toml"));
    let want = plans(&[
        ("cache", &[&["redis"]]),
        (
            "routing",
            &[&["geo", "traffic", "tiles", "pricing", "cache"]],
        ),
    ]);
    assert_eq!(got.plans, want);
    // 140 + 8k ms, less its five calls (115 + 8k + 4 ms): 21 ms each
    assert_eq!(got.times["routing"], [21.0; 5]);
    assert_eq!(got.times["traffic"], [40.0, 42.0, 44.0, 46.0, 48.0]);
    runs(&dir.path().join("m.toml"), &dir.path().join("out"));
}

/// Spans without a duration (optional in Zipkin v2) stay in place with the
/// spans below them; no time is measured from them. Before, they were left
/// out and the spans below them were orphans: one arrival of three was lost,
/// frontend called backend in half its spans, not in all.
#[test]
fn spans_without_a_duration_keep_the_spans_below_them_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = import(dir.path(), "nd", &fixture("no-duration.zipkin.json"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("3 traces, 12 spans: 6 handling spans, 6 calls, 3 arrivals"),
        "{err}"
    );
    assert!(!err.contains("orphans"), "{err}");
    let got = Imported::read(&dir.path().join("nd.toml"));
    assert_eq!(got.plans["frontend"], [["backend"]]);
    // the server span without a duration gives no own time; the client span
    // without one ends with backend's span (50 - (26 - 5)): 29, and 50 - 22
    assert_eq!(got.times["frontend"], [28.0, 29.0]);
    assert_eq!(got.times["backend"], [10.0; 3]);
    runs(&dir.path().join("nd.toml"), &dir.path().join("out"));
}

/// No rate from a handful of arrivals, or from a moment: one request whose
/// consumer runs 53 ms after it gave two workloads 250 requests a second each
/// ((2 - 1) / 2 over 2 ms, the consumer moved into its producer as skew).
/// Now: `rate_rps = 1 # set me`, and a warning.
#[test]
fn no_rate_is_measured_from_a_few_arrivals_or_a_moment() {
    let dir = tempfile::tempdir().unwrap();
    let all: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("async.otlp.json")).unwrap()).unwrap();
    // the first request only: its trace, without the batch job
    let mut one = all.clone();
    for r in one["resourceSpans"].as_array_mut().unwrap() {
        r["scopeSpans"][0]["spans"]
            .as_array_mut()
            .unwrap()
            .retain(|s| s["traceId"] == "0000000000000000000000000000a000");
    }
    let file = dir.path().join("one.json");
    std::fs::write(&file, one.to_string()).unwrap();
    let (code, err) = import(dir.path(), "one", &file, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("1 arrivals over 53 ms are too few for a rate (at least 20 over at least 1000 ms): rate_rps = 1 is written, marked `# set me`"),
        "{err}"
    );
    let got = Imported::read(&dir.path().join("one.toml"));
    assert_eq!(got.rates, [None, None]);
    let text = std::fs::read_to_string(dir.path().join("one.toml")).unwrap();
    assert!(
        text.contains("duration_ms = 1000 # set me: the traces span 53 ms"),
        "{text}"
    );
    runs(&dir.path().join("one.toml"), &dir.path().join("out"));
}

#[test]
fn a_file_cut_anywhere_imports_or_is_refused_never_a_panic() {
    // every 37th byte of each format's file, read in this process: a panic
    // fails the test, an error must be a user's error (exit code 2)
    let dir = tempfile::tempdir().unwrap();
    for name in ["shop.otlp.json", "shop.jaeger.json", "shop.zipkin.json"] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        for cut in (1..bytes.len()).step_by(37) {
            let file = dir.path().join(format!("cut-{cut}.json"));
            std::fs::write(&file, &bytes[..cut]).unwrap();
            let out = dir.path().join(format!("cut-{cut}.toml"));
            let done = resim::import::import(&resim::import::ImportOptions {
                files: vec![file],
                out,
                from: None,
                sample_rate: None,
                tail: Default::default(),
                force: false,
                choices: Default::default(),
            });
            if let Err(e) = done {
                assert_eq!(e.exit_code(), 2, "{name} cut at {cut}: {e}");
            }
        }
    }
}

#[test]
fn bad_input_is_exit_2_naming_the_file_the_position_and_the_json_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let expect = |file: &Path, args: &[&str], message: &str| {
        let (code, err) = import(dir.path(), "bad", file, args);
        assert_eq!(code, 2, "{}: {err}", file.display());
        assert_eq!(err, format!("error: {message}\n"), "{}", file.display());
        assert!(!dir.path().join("bad.toml").exists(), "nothing written");
    };
    let f = fixture("bad-syntax.otlp.json");
    expect(
        &f,
        &[],
        &format!(
            "{}:4:24: /resourceSpans/0/scopeSpans/0/spans/0: expected `,` or `}}`",
            f.display()
        ),
    );
    let f = fixture("bad-type.otlp.json");
    expect(
        &f,
        &[],
        &format!(
            "{}:3:15: /resourceSpans/0/scopeSpans/0/spans: invalid type: map, expected a list of spans",
            f.display()
        ),
    );
    let f = fixture("not-traces.json");
    expect(
        &f,
        &[],
        &format!(
            "{}:1:30: not a trace file: a JSON object without `resourceSpans` (OTLP JSON) or `data` (Jaeger JSON)",
            f.display()
        ),
    );
    let f = fixture("shop.otlp.json");
    expect(
        &f,
        &["--from", "jaeger"],
        &format!(
            "{}:2:18: --from jaeger was given, but the file holds OTLP JSON (`resourceSpans`)",
            f.display()
        ),
    );
    expect(
        &f,
        &["--sample-rate", "0"],
        "--sample-rate: the share of requests the traces hold, above 0 and at most 1 (got 0)",
    );
    let cases: [(&str, &[u8], &str); 4] = [
        ("empty.json", b"", "the file is empty"),
        (
            "gz.json",
            &[0x1f, 0x8b, 8, 0],
            "the file is compressed (gzip): decompress it first (gunzip)",
        ),
        (
            "utf16.json",
            &[0xff, 0xfe, b'{', 0],
            "the file is UTF-16: save it as UTF-8",
        ),
        ("words.json", b"hello", ""),
    ];
    for (name, bytes, message) in cases {
        let f = dir.path().join(name);
        std::fs::write(&f, bytes).unwrap();
        let message = if message.is_empty() {
            format!("{}:1:1: expected value", f.display())
        } else {
            format!("{}: {message}", f.display())
        };
        expect(&f, &[], &message);
    }
    let missing = dir.path().join("missing.json");
    expect(
        &missing,
        &[],
        &format!(
            "{}: cannot read it: no such file or folder",
            missing.display()
        ),
    );
    expect(
        dir.path(),
        &[],
        &format!("{}: is a folder, not a trace file", dir.path().display()),
    );
    // an earlier import is not replaced without --force
    let (code, _) = import(dir.path(), "shop", &fixture("shop.otlp.json"), &[]);
    assert_eq!(code, 0);
    let (code, err) = import(dir.path(), "shop", &fixture("shop.zipkin.json"), &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("exists already: choose another --out, or give --force"),
        "{err}"
    );
    let (code, err) = import(
        dir.path(),
        "shop",
        &fixture("shop.zipkin.json"),
        &["--force"],
    );
    assert_eq!(code, 0, "{err}");
}

/// The spans of `scenario` run with `--spans FILE ARGS`, as JSON.
fn spans(scenario: &Path, dir: &Path, file: &str, args: &[&str]) -> serde_json::Value {
    let path = dir.join(file);
    resim()
        .args(["run", "-q", "--no-report", "--out"])
        .arg(dir.join("out"))
        .arg("--spans")
        .arg(&path)
        .args(args)
        .arg(scenario)
        .assert()
        .success();
    serde_json::from_slice(&std::fs::read(&path).unwrap()).expect("OTLP JSON")
}

/// Every span of an OTLP document, with its resource's service.
fn all_spans(doc: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for r in doc["resourceSpans"].as_array().unwrap() {
        let service = r["resource"]["attributes"][0]["value"]["stringValue"]
            .as_str()
            .unwrap()
            .to_string();
        for s in r["scopeSpans"][0]["spans"].as_array().unwrap() {
            out.push((service.clone(), s.clone()));
        }
    }
    out
}

#[test]
fn spans_are_otlp_json_with_a_server_span_per_request_and_a_client_span_per_call() {
    let dir = tempfile::tempdir().unwrap();
    // one compare row (several write one file each); 400 requests, so that a
    // quarter of them are enough for a rate
    let doc = spans(
        &root().join("scenarios/three-tier-deadline.toml"),
        dir.path(),
        "all.json",
        &["--set", "compare={}", "--set", "workload.requests=400"],
    );
    let all = all_spans(&doc);
    let ids: std::collections::HashSet<(&str, &str)> = all
        .iter()
        .map(|(_, s)| {
            (
                s["traceId"].as_str().unwrap(),
                s["spanId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids.len(),
        all.len(),
        "span ids are unique within their trace"
    );
    for (service, s) in &all {
        assert!(matches!(s["kind"].as_u64(), Some(1..=3)), "{s}");
        let start: u64 = s["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let end: u64 = s["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
        assert!(end >= start && start >= 1_704_067_200_000_000_000, "{s}");
        // every parent is a span of the same trace
        if let Some(p) = s["parentSpanId"].as_str() {
            assert!(
                ids.contains(&(s["traceId"].as_str().unwrap(), p)),
                "{service}: {s}"
            );
        }
        if s["kind"] == 3 {
            assert!(s["attributes"][0]["key"] == "peer.service", "{s}");
        }
    }
    // one root per trace: the front's server span
    let roots: Vec<_> = all
        .iter()
        .filter(|(_, s)| s.get("parentSpanId").is_none())
        .collect();
    let traces: std::collections::HashSet<&str> = all
        .iter()
        .map(|(_, s)| s["traceId"].as_str().unwrap())
        .collect();
    assert_eq!(roots.len(), traces.len());
    assert!(
        roots
            .iter()
            .all(|(svc, s)| svc == "front" && s["kind"] == 2)
    );
    // a quarter of them, every fourth in send order, each saying so
    let quarter = spans(
        &root().join("scenarios/three-tier-deadline.toml"),
        dir.path(),
        "quarter.json",
        &[
            "--set",
            "compare={}",
            "--set",
            "workload.requests=400",
            "--spans-sample",
            "0.25",
        ],
    );
    let q = all_spans(&quarter);
    let qtraces: std::collections::BTreeSet<&str> = q
        .iter()
        .map(|(_, s)| s["traceId"].as_str().unwrap())
        .collect();
    assert_eq!(qtraces.len(), traces.len() / 4);
    assert!(q.iter().all(|(_, s)| s["traceState"] == "ot=th:c"));
    // and the import reads the sampling back: the same rate
    let (code, err) = import(dir.path(), "all", &dir.path().join("all.json"), &[]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = import(dir.path(), "quarter", &dir.path().join("quarter.json"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("sampling probabilities the traces say: 0.25"),
        "{err}"
    );
    let full = Imported::read(&dir.path().join("all.toml")).rates[0].unwrap();
    let sampled = Imported::read(&dir.path().join("quarter.toml")).rates[0].unwrap();
    assert!((sampled / full - 1.0).abs() < 0.02, "{sampled} vs {full}");
}

#[test]
fn spans_of_retries_hedges_and_a_client_policy_import_and_run() {
    let dir = tempfile::tempdir().unwrap();
    // a workload retrying through its own policy, hedged calls, retries on
    // three layers: two seconds of each, one compare row
    for scenario in [
        "scenarios/retry-policies.toml",
        "scenarios/hedging.toml",
        "scenarios/retry-amplification.toml",
    ] {
        let stem = Path::new(scenario)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let file = dir.path().join(format!("{stem}.json"));
        resim()
            .args(["run", "-q", "--no-report", "--out"])
            .arg(dir.path().join(format!("{stem}-out")))
            .arg("--spans")
            .arg(&file)
            .args(["--set", "compare={}", "--set", "workload.duration_ms=2000"])
            .arg(root().join(scenario))
            .assert()
            .success();
        let (code, err) = import(dir.path(), &stem, &file, &[]);
        assert_eq!(code, 0, "{scenario}: {err}");
        runs(
            &dir.path().join(format!("{stem}.toml")),
            &dir.path().join(format!("{stem}-again")),
        );
    }
}

#[test]
fn several_compare_rows_write_one_spans_file_each() {
    let dir = tempfile::tempdir().unwrap();
    resim()
        .args(["run", "-q", "--no-report", "--out"])
        .arg(dir.path().join("out"))
        .arg("--spans")
        .arg(dir.path().join("ay10.json"))
        .arg(root().join("scenarios/ay10-tariff-slowdown.toml"))
        .assert()
        .success();
    let rows: Vec<String> = (1..=12)
        .map(|k| format!("ay10-row{k}.json"))
        .filter(|f| dir.path().join(f).exists())
        .collect();
    assert_eq!(rows.len(), 12, "one file per compare row");
    assert!(!dir.path().join("ay10.json").exists());
}

/// The round trip: run -> spans -> import -> run -> spans -> import.
///
/// The system (tests/fixtures/traces/roundtrip.toml) has calls in sequence,
/// a call made by half the requests in parallel with them, a count of two and
/// a failing dependency; 300 requests a second for 100 s, about 30,000.
///
/// Tolerances: an arrival rate measured from N Poisson arrivals is off by
/// about 1/sqrt(N) = 0.58 % (one standard deviation), so 2 % is 3.5 of them;
/// the second run's rate is drawn again around the first's estimate, so the
/// two differ by about sqrt(2) x 0.58 = 0.82 %, and 2 % is 2.4 of those. A p99
/// of n draws from a lognormal with p99 = 2 p50 (sigma = 0.298) is off by about
/// 3.73 sigma / sqrt(n) = 0.9 % at n = 15,000 (the fewest: pricing's spans),
/// the p50 by 0.3 %; 5 % is over 5 of them, and over 3.9 for the difference of
/// two runs. The seeds are fixed, so the figures are the same every time (the
/// test prints them: within 1.5 % of each other, 0.25 % for the rate).
#[test]
fn a_run_imported_from_its_spans_runs_again_with_the_same_graph_own_times_and_rate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scenario = fixture("roundtrip.toml");
    spans_file(&scenario, &d.join("a.json"), &d.join("run1"));
    let (code, err) = import(d, "a", &d.join("a.json"), &["-q"]);
    assert_eq!(code, 0, "{err}");
    spans_file(&d.join("a.toml"), &d.join("b.json"), &d.join("run2"));
    let (code, err) = import(d, "b", &d.join("b.json"), &["-q"]);
    assert_eq!(code, 0, "{err}");
    let a = Imported::read(&d.join("a.toml"));
    let b = Imported::read(&d.join("b.toml"));
    // the same edges and kinds of fan-out: sequence (one branch), parallel (two),
    // a probability, a count of two
    let graph = plans(&[
        ("front", &[&["auth", "catalog"], &["pricing?"]]),
        ("pricing", &[&["db", "db"]]),
    ]);
    assert_eq!(a.plans, graph);
    assert_eq!(b.plans, graph);
    assert_eq!(
        a.dependencies.keys().collect::<Vec<_>>(),
        ["auth", "catalog", "db"]
    );
    assert_eq!(
        a.dependencies.keys().collect::<Vec<_>>(),
        b.dependencies.keys().collect::<Vec<_>>()
    );
    // pricing: half the requests (0.29 % a standard deviation)
    assert!(
        (a.probabilities["front"][0] - 0.5).abs() < 0.02,
        "{:?}",
        a.probabilities
    );
    assert!((b.probabilities["front"][0] - a.probabilities["front"][0]).abs() < 0.02);
    // own times and latencies: p50 and p99 within 5 % of the first run's, and of
    // the scenario's own lognormals
    let declared = [
        ("front", 4.0, 8.0),
        ("pricing", 2.0, 4.0),
        ("auth", 3.0, 6.0),
        ("catalog", 5.0, 10.0),
        ("db", 1.0, 2.0),
    ];
    for (name, p50, p99) in declared {
        let (ta, tb) = (&a.times[name], &b.times[name]);
        let figures = [
            (percentile(ta, 0.5), percentile(tb, 0.5), p50),
            (percentile(ta, 0.99), percentile(tb, 0.99), p99),
        ];
        for (q, (first, second, want)) in ["p50", "p99"].iter().zip(figures) {
            eprintln!(
                "round trip {name} {q}: declared {want} ms, first run {first:.4} ms ({} values), second run {second:.4} ms ({} values): {:+.2} %",
                ta.len(),
                tb.len(),
                100.0 * (second / first - 1.0)
            );
            assert!(
                (second / first - 1.0).abs() <= 0.05,
                "{name} {q}: {first} -> {second}"
            );
            assert!(
                (first / want - 1.0).abs() <= 0.05,
                "{name} {q}: {first} vs {want}"
            );
        }
    }
    // the arrival rate: within 2 % of the scenario's and of the first run's
    let (ra, rb) = (a.rates[0].unwrap(), b.rates[0].unwrap());
    eprintln!(
        "round trip rate: declared 300 rps, first run {ra} rps ({:+.2} %), second run {rb} rps ({:+.2} %)",
        100.0 * (ra / 300.0 - 1.0),
        100.0 * (rb / ra - 1.0)
    );
    assert!((ra / 300.0 - 1.0).abs() <= 0.02, "{ra}");
    assert!((rb / ra - 1.0).abs() <= 0.02, "{ra} -> {rb}");
    // the failing dependency fails as often (2 %, 0.08 % a standard deviation)
    assert!(
        (a.dependencies["catalog"] - 0.02).abs() < 0.005,
        "{:?}",
        a.dependencies
    );
    assert!((b.dependencies["catalog"] - a.dependencies["catalog"]).abs() < 0.005);
}

fn spans_file(scenario: &Path, file: &Path, out: &Path) {
    resim()
        .args(["run", "-q", "--no-report", "--out"])
        .arg(out)
        .arg("--spans")
        .arg(file)
        .arg(scenario)
        .assert()
        .success();
}

#[test]
fn a_spans_file_that_cannot_be_written_stops_the_run_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder/spans.json");
    let cases: [(&Path, &str, String); 3] = [
        (
            &missing,
            "tests/fixtures/traces/roundtrip.toml",
            format!(
                "--spans {}: the folder {} does not exist",
                missing.display(),
                dir.path().join("no-such-folder").display()
            ),
        ),
        (
            dir.path(),
            "tests/fixtures/traces/roundtrip.toml",
            format!(
                "--spans {}: is a folder; name the file to write",
                dir.path().display()
            ),
        ),
        (
            &missing,
            "scenarios/examples",
            "--spans writes the requests of one scenario: run the others separately".into(),
        ),
    ];
    for (spans, scenario, message) in cases {
        let out = dir.path().join("out");
        let got = resim()
            .args(["run", "-q", "--no-report", "--out"])
            .arg(&out)
            .arg("--spans")
            .arg(spans)
            .arg(root().join(scenario))
            .output()
            .expect("resim runs");
        assert_eq!(got.status.code(), Some(2), "{scenario}");
        assert_eq!(
            String::from_utf8_lossy(&got.stderr),
            format!("error: {message}\n")
        );
        assert!(!out.exists(), "no run was written");
    }
}

#[test]
fn spans_leave_trace_json_and_the_csv_files_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/three-tier-deadline.toml");
    let run = |out: &str, spans: bool| {
        let mut cmd = resim();
        cmd.args(["run", "-q", "--no-report", "--trace", "3", "--out"])
            .arg(dir.path().join(out));
        if spans {
            cmd.arg("--spans")
                .arg(dir.path().join("spans.json"))
                .args(["--spans-sample", "0.5"]);
        }
        cmd.arg(&scenario).assert().success();
    };
    run("plain", false);
    run("with-spans", true);
    assert!(dir.path().join("spans-row1.json").exists());
    for f in ["trace.json", "outcomes.csv"] {
        let a = std::fs::read(dir.path().join("plain").join(f)).unwrap();
        let b = std::fs::read(dir.path().join("with-spans").join(f)).unwrap();
        assert!(a == b, "{f} differs with --spans");
    }
}
