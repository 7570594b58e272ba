//! The server's behaviour end to end: requests sent into a world with one
//! server, and the figures it books.

use super::super::result::RunResult;
use super::super::vocab::Tag;
use super::super::world::World;
use crate::engine::Ticks;
use crate::model::{Access, Model};
use crate::scenario::{LoadOptions, load_str};
use std::path::Path;

/// A model with one server `loan` (the given handler keys) and a workload that
/// sends nothing: the tests send their own requests.
fn model(handler: &str) -> Model {
    let text = format!(
        "[scenario]\nname = \"t\"\n[services.loan]\nroutes = [\"/loan\"]\n\
         [services.loan.handler]\ntype = \"server\"\n{handler}\n\
         [workload]\ntype = \"script\"\ngroups = [ {{ count = 0 }} ]\n"
    );
    let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    s.rows[0].model.clone()
}

/// Sends `n` requests at t = 0, request i tagged as step i, with an optional
/// client timeout; runs to the end.
fn burst(model: &Model, n: u32, timeout_ms: Option<f64>) -> RunResult {
    let mut w = World::new(model, 0);
    w.track_steps(n as usize);
    let timeout = timeout_ms.map(Ticks::from_ms);
    for i in 0..n {
        let tag = Tag {
            step: Some(i),
            patience: timeout,
        };
        w.send(0, Access::Direct, 0, 0, timeout, tag);
    }
    w.run_loop().unwrap_or_else(|e| panic!("{e}"));
    w.finish_run()
}

/// Each request's queue wait in ms (None: never started).
fn waits(r: &RunResult) -> Vec<Option<f64>> {
    r.steps
        .iter()
        .map(|s| {
            let mut w = s.waits.clone();
            (w.count() > 0).then(|| w.quantile_ms(1.0))
        })
        .collect()
}

/// Every event fits in 8 bytes: it travels in a register into its slab slot.
#[test]
fn events_are_eight_bytes() {
    assert_eq!(std::mem::size_of::<super::super::vocab::Event>(), 8);
    assert_eq!(std::mem::size_of::<Option<super::super::vocab::Event>>(), 8);
}

#[test]
fn queue_position_sets_the_wait_in_rounds() {
    let m = model("slots = 2\nqueue = 3\nservice = { constant = 40 }");
    let r = burst(&m, 6, None);
    // occupancy at admission 0..4 -> floor(k / 2) rounds; the sixth is shed
    assert_eq!(
        waits(&r),
        [Some(0.), Some(0.), Some(40.), Some(40.), Some(80.), None]
    );
    let rejected: Vec<u64> = r.steps.iter().map(|s| s.rejected).collect();
    assert_eq!(rejected, [0, 0, 0, 0, 0, 1]);
    let s = &r.servers[0];
    assert_eq!((s.arrived, s.processed, s.shed), (6, 5, 1));
    assert_eq!(r.outcomes.shed, 1);
    assert_eq!(r.sim_time_ms, 120.0);
    // busy slots: 2 for 80 ms, 1 for 40 ms over 120 ms
    assert!((s.mean_busy_slots - 200.0 / 120.0).abs() < 1e-9);
    // queued: 3 for 40 ms, 1 for 40 ms
    assert!((s.mean_queue - 160.0 / 120.0).abs() < 1e-9);
}

#[test]
fn full_slots_and_queue_shed_at_once_and_a_zero_queue_only_has_slots() {
    let m = model("slots = 1\nqueue = 0\nservice = { constant = 10 }");
    let r = burst(&m, 3, None);
    assert_eq!((r.servers[0].processed, r.servers[0].shed), (1, 2));
    assert_eq!((r.outcomes.answered, r.outcomes.shed), (1, 2));
    let m = model("slots = 3\nqueue = 2\nservice = { constant = 10 }");
    let r = burst(&m, 9, None);
    assert_eq!((r.servers[0].processed, r.servers[0].shed), (5, 4));
}

#[test]
fn the_queue_is_first_in_first_out() {
    // demands 30, 10, 20 in arrival order: FIFO serves them in that order
    let m = model("slots = 1\nqueue = 3\nservice = { cycle = [30, 10, 20] }");
    let r = burst(&m, 3, None);
    assert_eq!(waits(&r), [Some(0.), Some(30.), Some(40.)]);
    let mut resp = r.servers[0].response.clone();
    assert_eq!(resp.quantile_ms(1.0), 60.0);
    assert_eq!(r.servers[0].work_ms, 60.0);
}

#[test]
fn abandon_drops_queued_work_when_the_client_gives_up() {
    // r0 0-40 in time; r1 40-80 in service when its client gives up at 50;
    // r2 still queued at 50
    let on = model("slots = 1\nqueue = 2\nservice = { constant = 40 }\nabandon = true");
    let r = burst(&on, 3, Some(50.0));
    let s = &r.servers[0];
    assert_eq!((s.processed, s.abandoned), (2, 1));
    assert_eq!((s.work_ms, s.late_work_ms, s.saved_ms), (80.0, 40.0, 40.0));
    assert_eq!(waits(&r), [Some(0.), Some(40.), None]);
    assert_eq!(r.steps[2].abandoned, 1);
    assert_eq!((r.outcomes.answered, r.outcomes.timed_out), (1, 2));
    assert_eq!(r.sim_time_ms, 80.0);

    let off = model("slots = 1\nqueue = 2\nservice = { constant = 40 }");
    let r = burst(&off, 3, Some(50.0));
    let s = &r.servers[0];
    assert_eq!((s.processed, s.abandoned), (3, 0));
    assert_eq!((s.work_ms, s.late_work_ms, s.saved_ms), (120.0, 80.0, 0.0));
}

#[test]
fn a_reply_at_the_client_deadline_is_in_time() {
    let on = model("slots = 1\nqueue = 2\nservice = { constant = 40 }\nabandon = true");
    // r1 answers at 80 = its deadline; r2 starts at 80, before its timeout runs
    let r = burst(&on, 3, Some(80.0));
    let successful: Vec<u64> = r.steps.iter().map(|s| s.successful).collect();
    assert_eq!(successful, [1, 1, 0]);
    assert_eq!(r.servers[0].abandoned, 0);
    assert_eq!(r.servers[0].late_work_ms, 40.0);
}

/// Runs a scenario with one server `loan` (the given handler keys), a
/// workload and extra tables (faults).
fn run_with(handler: &str, workload: &str, extra: &str) -> RunResult {
    let text = format!(
        "[scenario]\nname = \"t\"\n[services.loan]\nroutes = [\"/loan\"]\n\
         [services.loan.handler]\ntype = \"server\"\n{handler}\n\
         [workload]\n{workload}\n{extra}\n"
    );
    let s = load_str(&text, Path::new("t.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    crate::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"))
}

/// Requests at 0, 1, 2, ... ms (`gap` ms apart), `n` of them.
fn every(gap_ms: f64, n: u32) -> String {
    format!(
        "type = \"open\"\narrivals = \"uniform\"\nrate_rps = {}\nrequests = {n}",
        1000.0 / gap_ms
    )
}

fn fault(kind: &str, at: f64, len: f64, value: Option<f64>) -> String {
    let value = value.map_or(String::new(), |v| format!("value = {v}\n"));
    format!(
        "[[faults]]\ntarget = \"loan\"\nkind = \"{kind}\"\nat_ms = {at}\nfor_ms = {len}\n{value}"
    )
}

fn script_at(times: &[f64]) -> String {
    let groups: Vec<String> = times
        .iter()
        .map(|t| format!("{{ count = 1, at_ms = {t} }}"))
        .collect();
    format!("type = \"script\"\ngroups = [{}]", groups.join(", "))
}

#[test]
fn a_latency_fault_stretches_service_that_starts_at_its_first_tick_not_its_last() {
    // arrivals exactly at the window's start (100) and end (150)
    let r = run_with(
        "slots = 1\nqueue = 5\nservice = { constant = 10 }",
        &script_at(&[100.0, 150.0]),
        &fault("latency_factor", 100.0, 50.0, Some(3.0)),
    );
    let mut resp = r.servers[0].response.clone();
    assert_eq!(
        resp.quantile_ms(0.0),
        10.0,
        "the one at the end tick: not stretched"
    );
    assert_eq!(
        resp.quantile_ms(1.0),
        30.0,
        "the one at the start tick: stretched"
    );
}

#[test]
fn a_down_server_fails_arrivals_at_its_first_tick_and_serves_at_its_end_tick() {
    let r = run_with(
        "slots = 1\nqueue = 5\nservice = { constant = 10 }",
        &script_at(&[100.0, 150.0]),
        &fault("down", 100.0, 50.0, None),
    );
    // a fault's failure is an error answer, not a drop (the seed's meaning)
    assert_eq!(
        (r.outcomes.errors, r.outcomes.dropped, r.outcomes.answered),
        (1, 0, 1)
    );
    assert_eq!(r.servers[0].processed, 1);
}

#[test]
fn down_fails_queued_and_running_work_at_its_start() {
    // r0 in service 0-100, r1 and r2 queued: all fail at 50
    let r = run_with(
        "slots = 1\nqueue = 5\nservice = { constant = 100 }",
        &every(1.0, 3),
        &fault("down", 50.0, 10.0, None),
    );
    assert_eq!(
        (r.outcomes.errors, r.outcomes.dropped, r.outcomes.answered),
        (3, 0, 0)
    );
    assert_eq!(r.last_exit_ms, 50.0);
    assert_eq!(r.servers[0].work_ms, 50.0, "r0 worked 0-50");
    // a fault of length 0 never acts: the neutral compare row
    let r = run_with(
        "slots = 1\nqueue = 5\nservice = { constant = 100 }",
        &every(1.0, 3),
        &fault("down", 50.0, 0.0, None),
    );
    assert_eq!((r.outcomes.errors, r.outcomes.answered), (0, 3));
}

#[test]
fn a_slots_fault_holds_waiters_until_it_ends_and_running_work_finishes() {
    // 2 slots cut to 1 from 0 to 250: r0 0-100, r1 100-200, r2 200-300;
    // at 250 the second slot returns and r3 starts: 250-350
    let r = run_with(
        "slots = 2\nqueue = 5\nservice = { constant = 100 }",
        &every(1.0, 4),
        &fault("slots", 0.0, 250.0, Some(1.0)),
    );
    let mut waits = r.servers[0].waits.clone();
    assert_eq!(waits.quantile_ms(1.0), 247.0);
    assert_eq!(r.sim_time_ms, 350.0);
    // cut to 1 at 50 while r0 and r1 run: both finish; r2 starts only once
    // no slot is busy (limit 1), when r1 ends at 101
    let r = run_with(
        "slots = 2\nqueue = 5\nservice = { constant = 100 }",
        &every(1.0, 3),
        &fault("slots", 50.0, 1000.0, Some(1.0)),
    );
    assert_eq!(r.servers[0].processed, 3);
    assert_eq!(r.last_exit_ms, 201.0, "r2 starts at 101 when r1 ends");
}

#[test]
fn an_error_rate_fault_fails_requests_after_their_service_time() {
    let r = run_with(
        "slots = 1\nqueue = 5\nservice = { constant = 10 }",
        &every(20.0, 10),
        &fault("error_rate", 0.0, 100.0, Some(1.0)),
    );
    // sent at 0, 20, .. 180: the five done before 100 fail
    assert_eq!(
        (r.outcomes.errors, r.outcomes.dropped, r.outcomes.answered),
        (5, 0, 5)
    );
    assert_eq!(r.servers[0].processed, 10);
    assert_eq!(
        r.servers[0].work_ms, 100.0,
        "failures still took their time"
    );
}

#[test]
fn codel_gives_the_interval_while_the_queue_was_recently_empty_then_the_target() {
    let codel = "slots = 1\nqueue = 50\nservice = { constant = 100 }\n\
                 codel = { target_ms = 5, interval_ms = 100 }";
    // 1: the queue empties within the interval: timeouts of 100 ms
    let r = run_with(codel, &every(1.0, 4), "");
    assert_eq!((r.outcomes.answered, r.outcomes.shed), (2, 2));
    let mut resp = r.response.clone();
    assert_eq!(resp.quantile_ms(0.0), 100.0, "shed after the interval");
    // 2: a standing queue (non-empty for more than 100 ms): newcomers get 5 ms
    let r = run_with(codel, &every(10.0, 30), "");
    let mut resp = r.response.clone();
    assert_eq!(resp.quantile_ms(0.0), 5.0, "shed after the target");
    assert!(r.outcomes.shed > 20, "shed {}", r.outcomes.shed);
    assert_eq!(r.servers[0].shed, r.outcomes.shed);
}

#[test]
fn adaptive_lifo_serves_fifo_until_the_queue_stands_for_an_interval() {
    // r0 0-100; r1..r5 queue at 10..50 (empty last at 10)
    let max_wait = |order: &str| {
        let r = run_with(
            &format!("slots = 1\nqueue = 10\nservice = {{ constant = 100 }}\norder = \"{order}\""),
            &every(10.0, 6),
            "",
        );
        let mut w = r.servers[0].waits.clone();
        w.quantile_ms(1.0)
    };
    // FIFO: r5 last, starts at 500
    assert_eq!(max_wait("fifo"), 450.0);
    // LIFO: r1 last
    assert_eq!(max_wait("lifo"), 490.0);
    // adaptive: at 100 the queue had been empty 90 ms ago: FIFO takes r1; at
    // 200 it has stood for 190 ms: LIFO takes r5, r4, r3, then r2 at 500
    assert_eq!(max_wait("adaptive_lifo"), 480.0);
}
