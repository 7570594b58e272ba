//! Server analyses (IO22, IO23): per server, what arrived and what became of it,
//! how long requests waited in the queue and stayed at the server, how busy the
//! slots and how long the queue were on average; and how much of the server's work
//! went to requests nobody waited for (late or given up) against the work that
//! `abandon = true` never did.

use super::Results;
use super::asks::{Ask, Stat};
use super::ejections;
use crate::metrics::approximate_note;
use crate::model::Handler;
use crate::table::{Cell, Table};

/// The percentiles (besides the median) of a server's waits and times at the
/// server that the `services` table gives.
pub(super) const SERVER_QUANTILES: [f64; 3] = [0.9, 0.95, 0.99];

/// The percentiles of a replica's times at the server (`replicas` table).
pub(super) const REPLICA_QUANTILES: [f64; 2] = [0.5, 0.99];

/// What `services` reads of each server's waits and responses
/// ([`SERVER_QUANTILES`] and the median) and `replicas` of each replica's
/// responses ([`REPLICA_QUANTILES`]).
pub(super) fn asks(run: &crate::sim::RunResult, out: &mut Vec<Ask>) {
    for (i, st) in run.servers.iter().enumerate() {
        out.push(Ask::new(Stat::Waits(i), &SERVER_QUANTILES, true));
        out.push(Ask::new(Stat::ServerResponse(i), &SERVER_QUANTILES, true));
        for j in 0..st.replicas.len() {
            out.push(Ask::new(Stat::Replica(i, j), &REPLICA_QUANTILES, false));
        }
    }
}

fn has_servers(results: &Results) -> bool {
    results.any(|m| {
        m.services
            .iter()
            .any(|s| matches!(s.handler, Handler::Server(_)))
    })
}

pub fn tables(results: &mut Results, out: &mut Vec<Table>) {
    if !has_servers(results) {
        return;
    }
    out.push(services(results));
    out.push(server_work(results));
    if results
        .runs
        .iter()
        .any(|r| r.servers.iter().any(|s| !s.replicas.is_empty()))
    {
        out.push(replicas(results));
    }
    if any_queue(results) {
        out.push(proxy_queues(results));
    }
    if ejections::any_service(results) {
        let dependencies = ejections::any_dependency(results);
        out.push(ejections::table(results, dependencies));
        out.push(replica_windows(results));
    }
}

/// Per sweep interval of outlier detection and replica: the requests the
/// balancer sent it and the time it spent ejected.
fn replica_windows(results: &mut Results) -> Table {
    let mut t = results.table(
        "timeseries_replicas",
        "Per outlier-detection interval and replica: requests the balancer sent it, time it was ejected",
        &["window_start_ms", "replica"],
        &["sent", "ejected_ms"],
    );
    t.printed = false;
    for i in 0..results.runs.len() {
        let axis = results.axis_cells(i);
        let model = &results.scenario.rows[i].model;
        for st in &results.runs[i].servers {
            let Some(series) = &st.replica_series else {
                continue;
            };
            let service = &model.services[st.service];
            let n = st.replicas.len();
            for (at, sent) in series.sent.iter().enumerate() {
                let mut cells = axis.clone();
                cells.extend([
                    Cell::Num((at / n) as f64 * series.window_ms),
                    format!("{}#{}", service.name, at % n + 1).into(),
                    (*sent).into(),
                    series.ejected_ms[at].into(),
                ]);
                t.push(cells);
            }
        }
    }
    t
}

/// Each replica of a replicated server: what the balancer sent it and how it
/// fared; with outlier detection (any service's), how often and how long it
/// was ejected (empty for a service without).
fn replicas(results: &mut Results) -> Table {
    let ejects = results
        .runs
        .iter()
        .any(|r| r.servers.iter().any(|s| s.ejections.is_some()));
    let mut columns = vec![
        "balancer",
        "arrived",
        "arrived_pct",
        "processed",
        "shed",
        "p50_response_ms",
        "p99_response_ms",
        "mean_busy_slots",
    ];
    if ejects {
        columns.extend(["ejections", "ejected_ms"]);
    }
    let queues = any_queue(results);
    if queues {
        columns.push("from_queue");
    }
    let mut t = results.table(
        "replicas",
        "Replicas: the requests the balancer sent each instance and its time per request",
        &["service", "replica"],
        &columns,
    );
    for i in 0..results.runs.len() {
        let axis = results.axis_cells(i);
        let model = &results.scenario.rows[i].model;
        for st in &mut results.runs[i].servers {
            let service = &model.services[st.service];
            let total: u64 = st.replicas.iter().map(|r| r.arrived).sum();
            for (k, r) in st.replicas.iter_mut().enumerate() {
                let mut cells = axis.clone();
                let pct = (total > 0).then(|| r.arrived as f64 / total as f64 * 100.0);
                let n = r.response.count();
                cells.extend([
                    service.name.as_str().into(),
                    Cell::from((k + 1) as u64),
                    service.balancer.name().into(),
                    r.arrived.into(),
                    pct.into(),
                    r.processed.into(),
                    r.shed.into(),
                    when_any(n, r.response.quantile_ms(REPLICA_QUANTILES[0])),
                    when_any(n, r.response.quantile_ms(REPLICA_QUANTILES[1])),
                    r.mean_busy_slots.into(),
                ]);
                if ejects {
                    let on = st.ejections.is_some();
                    cells.push(if on { r.ejections.into() } else { Cell::Empty });
                    cells.push(if on { r.ejected_ms.into() } else { Cell::Empty });
                }
                if queues {
                    let on = st.proxy.is_some();
                    cells.push(if on { r.from_queue.into() } else { Cell::Empty });
                }
                t.push(cells);
            }
        }
    }
    t
}

/// Whether some service of some run has a queue in front of its replicas
/// (`max_conn`).
fn any_queue(results: &Results) -> bool {
    results
        .runs
        .iter()
        .any(|r| r.servers.iter().any(|s| s.proxy.is_some()))
}

/// The queue in front of each service's replicas (`max_conn`): what joined
/// it and what became of it.
fn proxy_queues(results: &mut Results) -> Table {
    let mut t = results.table(
        "proxy_queue",
        "The queue in front of the replicas (max_conn): requests that found no replica with room",
        &["service"],
        &[
            "balancer",
            "max_conn",
            "requests",
            "queued",
            "queued_pct",
            "dispatched",
            "timed_out",
            "refused",
            "abandoned",
            "mean_wait_ms",
            "p99_wait_ms",
            "mean_queue",
            "peak_queue",
        ],
    );
    for i in 0..results.runs.len() {
        let axis = results.axis_cells(i);
        let model = &results.scenario.rows[i].model;
        for st in &mut results.runs[i].servers {
            let service = &model.services[st.service];
            let reached: u64 = st.replicas.iter().map(|r| r.arrived).sum();
            let Some(p) = st.proxy.as_mut() else {
                continue;
            };
            // every request: those a replica took (at once or from the
            // queue), and those the queue refused or lost
            let requests = reached + p.refused + p.timed_out + p.abandoned + p.length.level();
            let n = p.waits.count();
            let mut cells = axis.clone();
            cells.extend([
                service.name.as_str().into(),
                service.balancer.name().into(),
                u64::from(p.max_conn).into(),
                requests.into(),
                p.queued.into(),
                (requests > 0)
                    .then(|| p.queued as f64 / requests as f64 * 100.0)
                    .into(),
                p.dispatched.into(),
                p.timed_out.into(),
                p.refused.into(),
                p.abandoned.into(),
                when_any(n, p.waits.mean_ms()),
                when_any(n, p.waits.quantile_ms(0.99)),
                p.mean_queue.into(),
                p.peak.into(),
            ]);
            t.push(cells);
        }
    }
    t.notes.push(
        "requests = every request of the service: those a replica took at once or from the queue \
         (the replicas' arrived), those the queue refused when full (refused) or at its \
         queue_timeout_ms (timed_out, both answered 503), those whose caller gave up while \
         they waited (abandoned) and those still waiting at the end; wait = time in this queue \
         of the requests a replica took from it"
            .into(),
    );
    t
}

/// A figure of the processed requests, empty when none was processed.
fn when_any(n: u64, v: f64) -> Cell {
    if n == 0 { Cell::Empty } else { v.into() }
}

fn services(results: &mut Results) -> Table {
    let mut t = results.table(
        "services",
        "Servers: arrivals, what became of them, queue waits and time at the server",
        &["service"],
        &[
            "arrived",
            "processed",
            "shed",
            "abandoned",
            "mean_wait_ms",
            "p95_wait_ms",
            "p99_wait_ms",
            "mean_response_ms",
            "p95_response_ms",
            "mean_busy_slots",
            "mean_queue",
            "waited_pct",
            "p50_wait_ms",
            "p90_wait_ms",
            "p50_response_ms",
            "p90_response_ms",
            "p99_response_ms",
            "cancelled",
        ],
    );
    for i in 0..results.runs.len() {
        let axis = results.axis_cells(i);
        let model = &results.scenario.rows[i].model;
        for st in &mut results.runs[i].servers {
            let (nw, nr) = (st.waits.count(), st.response.count());
            // the columns' percentiles, selected in their cheapest order (the
            // columns ask p95 and p99 before the median)
            st.waits.select_for(&SERVER_QUANTILES, true);
            st.response.select_for(&SERVER_QUANTILES, true);
            let mut cells = axis.clone();
            cells.extend([
                model.services[st.service].name.as_str().into(),
                st.arrived.into(),
                st.processed.into(),
                st.shed.into(),
                st.abandoned.into(),
                when_any(nw, st.waits.mean_ms()),
                when_any(nw, st.waits.quantile_ms(0.95)),
                when_any(nw, st.waits.quantile_ms(0.99)),
                when_any(nr, st.response.mean_ms()),
                when_any(nr, st.response.quantile_ms(0.95)),
                st.mean_busy_slots.into(),
                st.mean_queue.into(),
                when_any(
                    nw,
                    st.waits.count_positive() as f64 / nw.max(1) as f64 * 100.0,
                ),
                when_any(nw, st.waits.median_ms()),
                when_any(nw, st.waits.quantile_ms(0.90)),
                when_any(nr, st.response.median_ms()),
                when_any(nr, st.response.quantile_ms(0.90)),
                when_any(nr, st.response.quantile_ms(0.99)),
                st.cancelled.into(),
            ]);
            t.push(cells);
        }
    }
    t.notes.push(
        "wait = time in the queue before a slot; response = wait + service time at the server; \
         busy slots and queue length are time averages over the whole run; waited_pct = share of \
         the requests given a slot that waited for it at all (P(wait > 0), Erlang C's C(c, a)); cancelled = requests their caller cancelled \
         while they held a slot; \
         p50 = the upper median sorted[n/2], p90/p95/p99 nearest rank"
            .into(),
    );
    let samples = results.runs.iter().flat_map(|r| &r.servers);
    if let Some(note) = approximate_note(samples.flat_map(|st| [&st.waits, &st.response])) {
        t.notes.push(note);
    }
    t
}

fn server_work(results: &Results) -> Table {
    let mut t = results.table(
        "server_work",
        "Server work nobody waited for: service time spent on requests answered after their client's timeout, and the work dropping abandoned requests saved",
        &["service"],
        &["work_ms", "late_work_ms", "late_work_pct", "saved_ms"],
    );
    for (i, run) in results.runs.iter().enumerate() {
        let model = &results.scenario.rows[i].model;
        for st in &run.servers {
            let mut cells = results.axis_cells(i);
            let pct = (st.work_ms > 0.0).then(|| st.late_work_ms / st.work_ms * 100.0);
            cells.extend([
                model.services[st.service].name.as_str().into(),
                st.work_ms.into(),
                st.late_work_ms.into(),
                pct.into(),
                st.saved_ms.into(),
            ]);
            t.push(cells);
        }
    }
    t.notes.push(
        "late work: the request's answer came after its client's timeout (or the client had \
         given up); saved: the service demand of queued requests dropped by abandon = true"
            .into(),
    );
    t
}
