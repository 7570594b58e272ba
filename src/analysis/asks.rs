//! The words in which the tables declare which percentiles of a run's
//! statistics they read: each table module has an `asks` beside its table
//! (`budget`, `latency`, `services`), and [`super::select_ahead`] selects exactly
//! these, on every core,
//! before the tables are built; a table that reads a percentile it did not
//! declare still gets the right value (a statistic selects what it is asked when
//! asked), only later and on one core.

use crate::metrics::Samples;
use crate::sim::RunResult;

/// One of a run's statistics that holds exact values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stat {
    /// Every response time.
    Response,
    /// The answered requests' response times.
    Answered,
    /// One workload's response times.
    WorkloadResponse(usize),
    /// One workload's answered response times.
    WorkloadAnswered(usize),
    /// One server's queue waits.
    Waits(usize),
    /// One server's response times.
    ServerResponse(usize),
    /// One replica's response times: (server, replica).
    Replica(usize, usize),
}

/// What a table reads of one statistic: nearest-rank quantiles, and the upper
/// median when `median`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ask {
    pub stat: Stat,
    pub quantiles: Vec<f64>,
    pub median: bool,
}

impl Ask {
    pub fn new(stat: Stat, quantiles: &[f64], median: bool) -> Ask {
        Ask {
            stat,
            quantiles: quantiles.to_vec(),
            median,
        }
    }
}

/// Every statistic of `run` that a [`Stat`] names, each once, mutable at the
/// same time.
pub(super) fn stats_mut(run: &mut RunResult) -> Vec<(Stat, &mut Samples)> {
    let mut all = vec![
        (Stat::Response, &mut run.response),
        (Stat::Answered, &mut run.answered_response),
    ];
    for (i, w) in run.workloads.iter_mut().enumerate() {
        all.push((Stat::WorkloadResponse(i), &mut w.response));
        all.push((Stat::WorkloadAnswered(i), &mut w.answered_response));
    }
    for (i, st) in run.servers.iter_mut().enumerate() {
        all.push((Stat::Waits(i), &mut st.waits));
        all.push((Stat::ServerResponse(i), &mut st.response));
        for (j, rep) in st.replicas.iter_mut().enumerate() {
            all.push((Stat::Replica(i, j), &mut rep.response));
        }
    }
    all
}
