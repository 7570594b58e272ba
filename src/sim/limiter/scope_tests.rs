//! A limiter in the middleware of a service reached by calls: its refusals
//! are the client's rejections, end to end.

use crate::sim::result::RunResult;

fn run(text: &str) -> (crate::model::Model, RunResult) {
    let s = crate::scenario::load_str(
        text,
        std::path::Path::new("test.toml"),
        &crate::scenario::LoadOptions::default(),
    )
    .unwrap();
    let m = s.rows[0].model.clone();
    let r = crate::sim::run(&m, 0).unwrap();
    (m, r)
}

/// front calls back (through mid, with `MID`); back's middleware holds at
/// most 2 in flight; 10 requests 10 ms apart each hold back 100 ms.
const CALLEE: &str = r#"
[scenario]
name = "callee"
[services.front]
routes = ["/a"]
[services.front.handler]
type = "server"
slots = 100
queue = 0
service = { constant = 1 }
branches = [{ name = "b", calls = ["NEXT"] }]
budget = 1000
[services.mid]
[services.mid.handler]
type = "server"
slots = 100
queue = 0
service = { constant = 1 }
branches = [{ name = "b", calls = ["back"] }]
[services.back]
middleware = ["cap"]
[services.back.handler]
type = "server"
slots = 100
queue = 0
service = { constant = 100 }
[limiters.cap]
kind = "concurrency"
algorithm = "fixed"
limit = 2
[workload]
type = "open"
rate_rps = 100
arrivals = "uniform"
requests = 10
"#;

#[test]
fn a_callees_limiter_refusals_are_the_clients_rejections() {
    // front -> back, and front -> mid -> back: the 429 travels back up
    for next in ["back", "mid"] {
        let (_, r) = run(&CALLEE.replace("NEXT", next));
        let o = &r.outcomes;
        assert_eq!(
            (o.requests, o.answered, o.rejected, o.dropped),
            (10, 2, 8, 0),
            "{next}"
        );
        let cap = &r.limiters.limiters[0];
        assert_eq!((cap.passed, cap.rejected), (2, 8), "{next}");
        // the member's tally: 2 admitted end to end, 8 rejected by `cap`
        let m = &r.limiters.members[0];
        assert_eq!((m.requests, m.admitted), (10, 2), "{next}");
        assert_eq!(m.rejected_by, [8], "{next}");
    }
}

#[test]
fn a_failed_call_that_no_limiter_refused_still_drops() {
    // back sheds instead (2 slots, no queue, no limiter): dropped, not rejected
    let text = CALLEE
        .replace("NEXT", "back")
        .replace("middleware = [\"cap\"]\n", "")
        .replace(
            "slots = 100\nqueue = 0\nservice = { constant = 100 }",
            "slots = 2\nqueue = 0\nservice = { constant = 100 }",
        );
    let (_, r) = run(&text);
    let o = &r.outcomes;
    assert_eq!((o.answered, o.rejected, o.dropped), (2, 0, 8));
}
