//! Queueing theory checks of the `services` table: an M/M/c server (Poisson
//! arrivals, exponential service, an unbounded queue) against Erlang C.

use crate::common::*;

/// Erlang C: the probability that an arrival waits, for `c` servers offered `a`
/// erlangs (a = lambda x mean service time, a < c).
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut term = 1.0; // a^k / k!
    let mut below = 0.0;
    for k in 0..c {
        below += term;
        term *= a / f64::from(k + 1);
    }
    let top = term * f64::from(c) / (f64::from(c) - a);
    top / (below + top)
}

#[test]
fn erlang_c_formula_matches_the_textbook_value() {
    // c = 2, a = 1: (1/2 x 2) / (1 + 1 + 1) = 1/3
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
}

#[test]
fn an_mmc_server_waits_as_erlang_c_says() {
    // M/M/4: 300 req/s, 10 ms mean service: a = 3 erlangs, utilisation 75 %
    let (c, rate, mean_s) = (4u32, 300.0, 0.010);
    let (_dir, file) = file_with(&format!(
        r#"
[scenario]
name = "M/M/4 at 75 %"
seed = 7

[services.s]
routes = ["/x"]

[services.s.handler]
type = "server"
slots = {c}
queue = 100000
service = {{ exponential = {{ mean_ms = {} }} }}

[workload]
type = "open"
rate_rps = {rate}
requests = 200000
arrivals = "poisson"
"#,
        mean_s * 1000.0
    ));
    let out = run_into(&file, &["--quiet"]);
    let services = Csv::read(&out.path().join("services.csv"));
    let s = services.row(&[("service", "s")]);
    let a = rate * mean_s;
    let pc = erlang_c(c, a); // 0.5094
    let waited = num(s, "waited_pct") / 100.0;
    assert!(
        (waited - pc).abs() < 0.015,
        "P(wait > 0) = {waited}, Erlang C = {pc}"
    );
    // P(Wq > t) = C exp(-(c mu - lambda) t): the mean and the p90 of the wait
    let drain = f64::from(c) / mean_s - rate; // per second
    let mean_wait_ms = pc / drain * 1000.0;
    let p90_wait_ms = (pc / 0.1).ln() / drain * 1000.0;
    assert!(
        (num(s, "mean_wait_ms") - mean_wait_ms).abs() < 0.5,
        "mean wait {} ms, theory {mean_wait_ms}",
        num(s, "mean_wait_ms")
    );
    assert!(
        (num(s, "p90_wait_ms") - p90_wait_ms).abs() < 1.5,
        "p90 wait {} ms, theory {p90_wait_ms}",
        num(s, "p90_wait_ms")
    );
    // the order of the percentiles, and response = wait + service
    assert!(num(s, "p50_wait_ms") <= num(s, "p90_wait_ms"));
    assert!(num(s, "p90_wait_ms") <= num(s, "p95_wait_ms"));
    assert!(num(s, "p50_response_ms") <= num(s, "p90_response_ms"));
    assert!(num(s, "p90_response_ms") <= num(s, "p95_response_ms"));
    assert!(num(s, "p95_response_ms") <= num(s, "p99_response_ms"));
}
