//! Stop-the-world pauses at a server and a dependency, end to end, against a
//! reference (and the per-replica time series that shows them): a
//! single-slot FIFO server written out here, where nothing starts during a
//! pause and work in service makes no progress in one.

use super::super::faults::{Subject, pauses_of};
use super::super::pauses::Pauses;
use crate::engine::Ticks;
use crate::model::Model;
use crate::scenario::{LoadOptions, load_str};
use std::path::Path;

/// One server `api` (one slot, `queue` places, constant `service_ms`),
/// requests every `gap_ms` from 0 (`n` of them, client timeout `timeout`),
/// and `faults` (TOML of `[[faults]]` tables).
fn model(queue: u32, service_ms: f64, gap_ms: f64, n: u32, timeout: &str, faults: &str) -> Model {
    let text = format!(
        "[scenario]\nname = \"t\"\nseed = 7\n[services.api]\nroutes = [\"/a\"]\n\
         [services.api.handler]\ntype = \"server\"\nslots = 1\nqueue = {queue}\nabandon = true\n\
         service = {{ constant = {service_ms} }}\n\
         [workload]\ntype = \"open\"\narrivals = \"uniform\"\nrate_rps = {}\nrequests = {n}\n{timeout}\n\
         {faults}\n",
        1000.0 / gap_ms
    );
    let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    s.rows[0].model.clone()
}

fn pause_fault(at: f64, len: f64, every: f64, pause: f64) -> String {
    format!(
        "[[faults]]\ntarget = \"api\"\nkind = \"pause\"\nat_ms = {at}\nfor_ms = {len}\n\
         every_ms = {every}\npause_ms = {pause}\n"
    )
}

/// The pauses the run draws for `api` (the same stream, drawn again here).
fn pauses(model: &Model) -> Pauses {
    let subject = Subject::Server {
        service: 0,
        replica: 0,
    };
    Pauses::new(model.seed, 0, "api#1", pauses_of(model, subject))
}

/// The reference: each request's response (None: shed) at a one-slot FIFO
/// server with `places` queue places, nothing starting in a pause and
/// service standing still in one.
fn reference(
    p: &mut Pauses,
    places: usize,
    arrivals: &[Ticks],
    service: Ticks,
) -> Vec<Option<Ticks>> {
    let mut free_at = Ticks::ZERO; // when the slot is free again
    let mut line: Vec<Ticks> = Vec::new(); // starts of those ahead, not yet begun
    let mut out = Vec::new();
    for &a in arrivals {
        line.retain(|&s| s > a);
        // it may start now only if the slot is free and no pause holds
        let starts_now = free_at <= a && p.holding(a).is_none();
        if !starts_now && line.len() >= places {
            out.push(None);
            continue;
        }
        let mut start = a.max(free_at);
        if let Some(end) = p.holding(start) {
            start = end;
        }
        let end = p.finish(start, service);
        if start > a {
            line.push(start);
        }
        free_at = end;
        out.push(Some(end - a));
    }
    out
}

fn arrivals(gap_ms: f64, n: u32) -> Vec<Ticks> {
    (0..n)
        .map(|k| Ticks::from_ms(gap_ms * f64::from(k)))
        .collect()
}

/// Work in service waits out a pause, and work that would start in one
/// waits for its end: the run's responses are the reference's, for several
/// pauses' phases (and without the fault, none of them is longer than its
/// service).
#[test]
fn responses_wait_out_the_pauses_as_the_reference_says() {
    let faults = pause_fault(0.0, 3000.0, 1000.0, 150.0);
    let m = model(100, 30.0, 40.0, 75, "", &faults);
    let expected = reference(
        &mut pauses(&m),
        100,
        &arrivals(40.0, 75),
        Ticks::from_ms(30.0),
    );
    let r = crate::sim::run(&m, 0).unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<Ticks> = expected.iter().flatten().copied().collect();
    assert_eq!(r.outcomes.answered, want.len() as u64);
    let sum: f64 = want.iter().map(|t| t.as_ms()).sum();
    let max = want.iter().max().copied().unwrap_or_default();
    assert!(
        (r.response.sum_ms() - sum).abs() < 1e-6,
        "{} {sum}",
        r.response.sum_ms()
    );
    assert!((r.response.max_ms() - max.as_ms()).abs() < 1e-6);
    assert!(max.as_ms() > 150.0, "some request met a pause");
    let mut plain = crate::sim::run(&model(100, 30.0, 40.0, 75, "", ""), 0).unwrap();
    assert!(plain.response.quantile_ms(1.0) < 150.0);
}

/// Nothing starts during a pause: with no queue places, a request arriving
/// in one finds no slot and is shed, though the slot stands free.
#[test]
fn arrivals_in_a_pause_queue_or_are_shed_as_at_a_full_server() {
    let faults = pause_fault(0.0, 4000.0, 1000.0, 200.0);
    let m = model(0, 5.0, 50.0, 100, "", &faults);
    let expected = reference(
        &mut pauses(&m),
        0,
        &arrivals(50.0, 100),
        Ticks::from_ms(5.0),
    );
    let shed = expected.iter().filter(|r| r.is_none()).count() as u64;
    // 4 pauses of 200 ms: 4 arrivals (every 50 ms) in each, and perhaps the
    // one just after a pause that finds the slot still held
    assert!((16..=20).contains(&shed), "{shed}");
    let r = crate::sim::run(&m, 0).unwrap();
    assert_eq!(r.outcomes.shed, shed);
    assert_eq!(r.outcomes.answered, 100 - shed);
}

/// A client that gives up during a pause takes its request out of the queue
/// (`abandon`), as at any time: it times out, and its work is never done.
#[test]
fn a_client_giving_up_in_a_pause_leaves_the_queue() {
    let faults = pause_fault(0.0, 1000.0, 1000.0, 300.0);
    let m = model(100, 5.0, 10.0, 200, "timeout_ms = 100", &faults);
    let r = crate::sim::run(&m, 0).unwrap();
    let server = &r.servers[0];
    // the pause's first 200 ms of arrivals wait more than 100 ms: about 20
    assert!(r.outcomes.timed_out >= 18, "{}", r.outcomes.timed_out);
    assert!(server.abandoned >= 18, "{}", server.abandoned);
    assert!(server.abandoned <= r.outcomes.timed_out);
    assert_eq!(
        server.processed,
        200 - server.abandoned,
        "the rest were served"
    );
    let plain = crate::sim::run(&model(100, 5.0, 10.0, 200, "timeout_ms = 100", ""), 0).unwrap();
    assert_eq!(plain.outcomes.timed_out, 0);
}

/// A pause fault that never acts (for_ms = 0) leaves every draw as it was:
/// the pauses' streams are their own.
#[test]
fn pauses_draw_from_streams_of_their_own() {
    let m = |f: &str| {
        let text = format!(
            "[scenario]\nname = \"t\"\nseed = 3\n[services.api]\nroutes = [\"/a\"]\nreplicas = 2\n\
             balancer = \"random\"\n[services.api.handler]\ntype = \"server\"\nslots = 2\nqueue = 50\n\
             service = {{ exponential = {{ mean_ms = 10 }} }}\n\
             [workload]\ntype = \"open\"\nrate_rps = 150\nrequests = 2000\n{f}"
        );
        load_str(&text, Path::new("t.toml"), &LoadOptions::default())
            .unwrap()
            .rows[0]
            .model
            .clone()
    };
    let idle = "[[faults]]\ntarget = \"api#2\"\nkind = \"pause\"\nat_ms = 0\nfor_ms = 0\n\
                every_ms = 100\npause_ms = 10\narrivals = \"poisson\"\n";
    let mut a = crate::sim::run(&m(""), 0).unwrap();
    let mut b = crate::sim::run(&m(idle), 0).unwrap();
    assert_eq!(a.response.sum_ms(), b.response.sum_ms());
    assert_eq!(a.response.quantile_ms(0.99), b.response.quantile_ms(0.99));
    let acting = idle.replace("for_ms = 0", "for_ms = 100000");
    let c = crate::sim::run(&m(&acting), 0).unwrap();
    assert_ne!(a.response.sum_ms(), c.response.sum_ms());
}

/// Two replicas behind round robin (constant 10 ms, one slot each), requests
/// every 100 ms: `extra` adds TOML (replica settings, faults).
fn pair(extra: &str) -> crate::sim::result::RunResult {
    let text = format!(
        "[scenario]\nname = \"t\"\n[services.api]\nroutes = [\"/a\"]\nreplicas = 2\n\
         [services.api.handler]\ntype = \"server\"\nslots = 1\nqueue = 10\n\
         service = {{ constant = 10 }}\n\
         [workload]\ntype = \"open\"\narrivals = \"uniform\"\nrate_rps = 10\nrequests = 20\n{extra}"
    );
    let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    crate::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"))
}

/// The mean time at each replica, in ms.
fn replica_means(r: &crate::sim::result::RunResult) -> Vec<f64> {
    r.servers[0]
        .replicas
        .iter()
        .map(|x| x.response.mean_ms())
        .collect()
}

/// `[services.NAME.replica.K]` changes replica K alone: its factor, then its
/// addition, its own service model.
#[test]
fn replica_settings_change_their_replica_alone() {
    assert_eq!(replica_means(&pair("")), [10.0, 10.0]);
    let r = pair("[services.api.replica.2]\nlatency_factor = 3\nlatency_add_ms = 5\n");
    assert_eq!(replica_means(&r), [10.0, 35.0], "10 x 3 + 5");
    let r = pair("[services.api.replica.1]\nservice = { constant = 4 }\n");
    assert_eq!(replica_means(&r), [4.0, 10.0]);
}

/// A `latency_add` fault adds its ms to work that starts in its window, at a
/// server replica and at a dependency; factors multiply first.
#[test]
fn latency_add_adds_to_work_starting_in_its_window() {
    let add = "[[faults]]\ntarget = \"api#1\"\nkind = \"latency_add\"\nat_ms = 0\nfor_ms = 1000\nvalue = 7\n\
               [[faults]]\ntarget = \"api#1\"\nkind = \"latency_factor\"\nat_ms = 0\nfor_ms = 1000\nvalue = 2\n";
    let r = pair(add);
    // replica 1 gets the requests at 0, 200, ..., 1800: five in the window (27 ms), five after (10)
    assert_eq!(replica_means(&r), [18.5, 10.0]);
    let text = "[scenario]\nname = \"t\"\n[services.api]\nroutes = [\"/a\"]\n\
        [services.api.handler]\ntype = \"plan\"\nbudget = \"none\"\n\
        branches = [ { name = \"b\", calls = [\"store\"] } ]\n\
        [dependencies.store]\nlatency = { constant = 10 }\n\
        [workload]\ntype = \"open\"\narrivals = \"uniform\"\nrate_rps = 10\nrequests = 4\n\
        [[faults]]\ntarget = \"store\"\nkind = \"latency_add\"\nat_ms = 100\nfor_ms = 100\nvalue = 15\n";
    let s = load_str(text, Path::new("t.toml"), &LoadOptions::default()).unwrap();
    let mut r = crate::sim::run(&s.rows[0].model, 0).unwrap();
    assert_eq!(r.response.sum_ms(), 10.0 * 4.0 + 15.0);
    assert_eq!(r.response.quantile_ms(1.0), 25.0);
}

/// The time series' replica rows add up to their service's row in every
/// window (counts and time averages), and a pause shows on its replica.
#[test]
fn replica_rows_add_up_to_their_service_and_show_a_pause() {
    let text = "[scenario]\nname = \"t\"\nwarmup_ms = 1500\n[services.api]\nroutes = [\"/a\"]\nreplicas = 3\n\
        balancer = \"random\"\n[services.api.handler]\ntype = \"server\"\nslots = 2\nqueue = 3\n\
        service = { exponential = { mean_ms = 20 } }\n\
        [workload]\ntype = \"open\"\nrate_rps = 200\nduration_ms = 6000\ntimeout_ms = 80\n\
        [output]\nwindow_ms = 500\n\
        [[faults]]\ntarget = \"api#3\"\nkind = \"pause\"\nat_ms = 0\nfor_ms = 6000\nevery_ms = 1000\npause_ms = 200\n";
    let s = load_str(text, Path::new("t.toml"), &LoadOptions::default()).unwrap();
    let r = crate::sim::run(&s.rows[0].model, 0).unwrap();
    let ts = r.timeseries.expect("a time series");
    assert_eq!(
        ts.replica_names,
        [("api".into(), 1), ("api".into(), 2), ("api".into(), 3)]
    );
    let n = ts.names.len();
    let mut shed = 0;
    for k in 0..ts.windows.len() {
        let service = &ts.services[k * n];
        let rows = &ts.replicas[k * 3..k * 3 + 3];
        let sum = |f: &dyn Fn(&super::super::timeseries::ServiceWindow) -> f64| {
            rows.iter().map(f).sum::<f64>()
        };
        assert_eq!(sum(&|w| w.arrivals as f64), service.arrivals as f64);
        assert_eq!(sum(&|w| w.processed as f64), service.processed as f64);
        assert_eq!(sum(&|w| w.shed as f64), service.shed as f64);
        assert!((sum(&|w| w.mean_busy) - service.mean_busy).abs() < 1e-9);
        assert!((sum(&|w| w.mean_queue) - service.mean_queue).abs() < 1e-9);
        shed += rows[2].shed;
    }
    let queue = |j: usize| -> f64 {
        (0..ts.windows.len())
            .map(|k| ts.replicas[k * 3 + j].mean_queue)
            .sum()
    };
    assert!(
        queue(2) > queue(0).max(queue(1)),
        "the paused replica's line"
    );
    assert!(shed > 0, "its queue overflows in its pauses");
}

/// A dependency's pauses hold its calls as a server's hold its requests:
/// behind a plan that only calls it, each response is the reference's (a
/// one-slot FIFO line with no bound), for the dependency and for one of its
/// replicas named `store#2` (the other replica never pauses).
#[test]
fn a_dependencys_pauses_hold_its_calls_as_the_reference_says() {
    let run = |replicas: u32, target: &str| {
        let text = format!(
            "[scenario]\nname = \"t\"\nseed = 5\n[services.api]\nroutes = [\"/a\"]\n\
             [services.api.handler]\ntype = \"plan\"\nbudget = \"none\"\n\
             branches = [ {{ name = \"b\", calls = [\"store\"] }} ]\n\
             [dependencies.store]\nslots = 1\nreplicas = {replicas}\n\
             latency = {{ constant = 30 }}\n\
             [workload]\ntype = \"open\"\narrivals = \"uniform\"\nrate_rps = 25\nrequests = 75\n\
             [[faults]]\ntarget = \"{target}\"\nkind = \"pause\"\nat_ms = 0\nfor_ms = 3000\n\
             every_ms = 1000\npause_ms = 150\n"
        );
        let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let m = s.rows[0].model.clone();
        let r = crate::sim::run(&m, 0).unwrap_or_else(|e| panic!("{e}"));
        (m, r)
    };
    let (m, mut r) = run(1, "store");
    let subject = Subject::Dependency { dep: 0, replica: 0 };
    let mut p = Pauses::new(m.seed, 0, "store#1", pauses_of(&m, subject));
    let want = reference(
        &mut p,
        usize::MAX,
        &arrivals(40.0, 75),
        Ticks::from_ms(30.0),
    );
    let want: Vec<Ticks> = want.into_iter().flatten().collect();
    assert_eq!(want.len(), 75);
    assert_eq!(r.outcomes.answered, 75);
    let sum: f64 = want.iter().map(|t| t.as_ms()).sum();
    assert!(
        (r.response.sum_ms() - sum).abs() < 1e-6,
        "{} {sum}",
        r.response.sum_ms()
    );
    let max = want.iter().max().copied().unwrap_or_default().as_ms();
    assert_eq!(r.response.quantile_ms(1.0), max);
    assert!(max > 150.0, "some call met a pause: {max}");
    // replica 2 of two pauses; round robin sends it every other call
    let (m, mut r) = run(2, "store#2");
    let subject = Subject::Dependency { dep: 0, replica: 1 };
    let mut p = Pauses::new(m.seed, 0, "store#2", pauses_of(&m, subject));
    let second: Vec<Ticks> = arrivals(40.0, 75).into_iter().skip(1).step_by(2).collect();
    let want = reference(&mut p, usize::MAX, &second, Ticks::from_ms(30.0));
    let paused: f64 = want.iter().flatten().map(|t| t.as_ms()).sum();
    let sum = paused + 30.0 * (75 - second.len()) as f64;
    assert!(
        (r.response.sum_ms() - sum).abs() < 1e-6,
        "{} {sum}",
        r.response.sum_ms()
    );
    assert!(r.response.quantile_ms(1.0) > 150.0);
}

/// A replicated dependency has time series rows per replica after the
/// servers' replicas: they add up to its own row in every window (calls
/// sent, work ended, time averages), and a pause shows on its replica.
#[test]
fn dependency_replica_rows_add_up_and_show_a_pause() {
    let text = "[scenario]\nname = \"t\"\nwarmup_ms = 1000\n[services.api]\nroutes = [\"/a\"]\n\
        [services.api.handler]\ntype = \"plan\"\nbudget = \"none\"\n\
        branches = [ { name = \"b\", calls = [\"store\"] } ]\n\
        [dependencies.store]\nslots = 2\nreplicas = 3\nbalancer = \"random\"\n\
        latency = { exponential = { mean_ms = 15 } }\n\
        [workload]\ntype = \"open\"\nrate_rps = 150\nduration_ms = 6000\n\
        [output]\nwindow_ms = 500\n\
        [[faults]]\ntarget = \"store#2\"\nkind = \"pause\"\nat_ms = 0\nfor_ms = 6000\nevery_ms = 1000\npause_ms = 200\n";
    let s = load_str(text, Path::new("t.toml"), &LoadOptions::default()).unwrap();
    let r = crate::sim::run(&s.rows[0].model, 0).unwrap();
    let ts = r.timeseries.expect("a time series");
    assert_eq!(
        ts.replica_names,
        [
            ("store".into(), 1),
            ("store".into(), 2),
            ("store".into(), 3)
        ]
    );
    let n = ts.names.len();
    let row = ts.names.iter().position(|x| x == "store").unwrap();
    let mut sent = 0;
    for k in 0..ts.windows.len() {
        let whole = &ts.services[k * n + row];
        let rows = &ts.replicas[k * 3..k * 3 + 3];
        let sum = |f: &dyn Fn(&super::super::timeseries::ServiceWindow) -> f64| {
            rows.iter().map(f).sum::<f64>()
        };
        assert_eq!(
            sum(&|w| w.arrivals as f64),
            whole.arrivals as f64,
            "window {k}"
        );
        assert_eq!(sum(&|w| w.processed as f64), whole.processed as f64);
        assert!((sum(&|w| w.mean_busy) - whole.mean_busy).abs() < 1e-9);
        assert!((sum(&|w| w.mean_queue) - whole.mean_queue).abs() < 1e-9);
        sent += whole.arrivals;
    }
    assert!(sent > 800, "{sent}");
    let queue = |j: usize| -> f64 {
        (0..ts.windows.len())
            .map(|k| ts.replicas[k * 3 + j].mean_queue)
            .sum()
    };
    assert!(
        queue(1) > 5.0 * queue(0).max(queue(2)),
        "{} {} {}",
        queue(0),
        queue(1),
        queue(2)
    );
}
