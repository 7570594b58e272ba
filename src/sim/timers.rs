//! Which delays get a FIFO lane in the event queue: the constant ones the model
//! names (a constant service time or latency, the gateway's share, a plan call's
//! share, which is its timeout unless the branch's budget runs short, a call's
//! own timeout, a policy's per-attempt timeout, a client timeout). Events scheduled that far ahead arrive in time order, so their lane
//! skips the heap; see `engine::EventQueue::add_fifo`. Only speed depends on this
//! list: the order of events is the same with any choice.

use crate::engine::{EventQueue, Ticks};
use crate::model::{Handler, Latency, Model, Workload};

/// The model's constant delays, most frequent kinds first, without repeats.
pub(super) fn constant_delays(model: &Model) -> Vec<Ticks> {
    let mut delays = Vec::new();
    let mut add = |t: Ticks| {
        if t > Ticks::ZERO && !delays.contains(&t) {
            delays.push(t);
        }
    };
    for s in &model.services {
        match &s.handler {
            Handler::Server(server) => {
                if let Latency::Constant(t) = server.service {
                    add(t);
                }
            }
            Handler::Plan(_) | Handler::Respond => {}
        }
        for call in s
            .handler
            .plan()
            .iter()
            .flat_map(|p| &p.branches)
            .flat_map(|b| &b.calls)
        {
            add(call.share);
            if let Some(t) = call.timeout {
                add(t);
            }
        }
    }
    for d in &model.dependencies {
        if let Latency::Constant(t) = d.latency {
            add(t);
        }
    }
    // an attempt's timer is the policy's timeout unless its call's deadline is nearer
    for p in &model.policies {
        if let Some(t) = p.timeout {
            add(t);
        }
    }
    if let Some(g) = &model.gateway {
        add(g.share);
    }
    for w in &model.workloads {
        match &w.workload {
            Workload::Open {
                timeout: Some(t), ..
            }
            | Workload::Closed {
                timeout: Some(t), ..
            } => add(*t),
            Workload::Ladder(l) => add(l.timeout),
            _ => {}
        }
    }
    delays
}

/// Whether the model schedules events for the current instant: a call into a
/// service reaches it one event later at the same tick, and a policy reports an
/// attempt that failed at once the same way.
fn zero_delay_events(model: &Model) -> bool {
    !model.policies.is_empty() || model.calls_a_service()
}

/// Gives each constant delay of `model` a FIFO lane (as many as the queue takes),
/// and events for the current instant one first where the model has them.
pub(super) fn register<E>(queue: &mut EventQueue<E>, model: &Model) {
    if zero_delay_events(model) {
        let _ = queue.add_fifo(Ticks::ZERO);
    }
    for d in constant_delays(model) {
        if !queue.add_fifo(d) {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{LoadOptions, load_str};
    use std::path::Path;

    #[test]
    fn the_budget_chain_has_lanes_for_its_shares_and_the_gateway() {
        let text = std::fs::read_to_string("scenarios/bench/m2-budget-chain.toml")
            .unwrap_or_else(|e| panic!("{e}"));
        let s = load_str(&text, Path::new("m2.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<f64> = constant_delays(&s.rows[0].model)
            .iter()
            .map(|t| t.as_ms())
            .collect();
        // delivery 180, tariff and measure 90 (equal split), gateway 20
        assert_eq!(got, [180.0, 90.0, 20.0]);
    }

    #[test]
    fn the_retry_chain_has_lanes_for_its_attempt_timeouts() {
        let text = std::fs::read_to_string("scenarios/bench/m3-retry-chain.toml")
            .unwrap_or_else(|e| panic!("{e}"));
        let s = load_str(&text, Path::new("m3.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut got: Vec<f64> = constant_delays(&s.rows[0].model)
            .iter()
            .map(|t| t.as_ms())
            .collect();
        got.sort_by(f64::total_cmp);
        // exponential services: only the client's 60 ms and the backend call's 25 ms
        assert_eq!(got, [25.0, 60.0]);
    }
}
