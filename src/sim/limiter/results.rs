//! What the limiters measured in one run, named and in a stable order: per
//! limiter, per (route, access) pair, per member.

use super::actor::{LimiterActor, Limiting};
use crate::engine::Ticks;
use crate::model::{Access, Field, Limiter, Model, RouteId};
use std::cmp::Ordering;

/// One limiter's figures for the run.
#[derive(Debug, Clone, Default)]
pub struct LimiterRun {
    /// Requests counted (= passed + rejected).
    pub seen: u64,
    /// Let through, at once or after a throttle hold.
    pub passed: u64,
    /// Rejected (429).
    pub rejected: u64,
    /// Passed after a throttle hold.
    pub delayed: u64,
    /// Throttle holds of the delayed requests, summed, in ms.
    pub delay_total_ms: f64,
    /// The longest throttle hold, in ms.
    pub delay_max_ms: f64,
    /// Distinct bucket keys the limiter saw.
    pub buckets: u64,
    /// The most requests it let through within any window_ms (t - window, t].
    pub peak_passed_in_window: u64,
    /// Per member, in natural name order.
    pub members: Vec<MemberCount>,
    /// Passes and rejects per time-series window (None: the run keeps no time
    /// series).
    pub windows: Option<LimiterWindows>,
    /// A concurrency limiter's limit and in flight (None: a rate limiter).
    pub concurrency: Option<ConcurrencyRun>,
}

/// A concurrency limiter's limit and requests in flight over the run: the
/// sums over its bucket keys, from the first request it met to the run's end.
#[derive(Debug, Clone, Default)]
pub struct ConcurrencyRun {
    /// The algorithm's name.
    pub algorithm: &'static str,
    /// The whole run's gauges.
    pub run: super::Gauges,
    /// Per time-series window from t = 0 (None before its first request;
    /// empty without a time series).
    pub windows: Vec<Option<super::Gauges>>,
    /// A limiter kept per replica of a replicated service: the same per
    /// replica, from replica 1 (empty: one state for the whole service).
    pub replicas: Vec<ReplicaConcurrency>,
}

/// One replica's state of a concurrency limiter kept per replica.
#[derive(Debug, Clone, Default)]
pub struct ReplicaConcurrency {
    /// Let through at this replica.
    pub passed: u64,
    /// Rejected at this replica.
    pub rejected: u64,
    /// The whole run's gauges.
    pub run: super::Gauges,
    /// Per time-series window, as [`ConcurrencyRun::windows`].
    pub windows: Vec<Option<super::Gauges>>,
}

/// One limiter's passes and rejects per time-series window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimiterWindows {
    /// [passed, rejected] per window from t = 0, up to its last decision's window.
    pub total: Vec<[u64; 2]>,
    /// The same per bucket key, in natural name order; empty when the key has no
    /// fields (one bucket) or the limiter met more than
    /// [`KEYED_WINDOWS_MAX`](super::KEYED_WINDOWS_MAX) keys (`too_many_keys`).
    pub keys: Vec<KeyWindows>,
    /// More keys than per-key rows are kept for.
    pub too_many_keys: bool,
    /// A limiter kept per replica of a replicated service: [passed,
    /// rejected] per window of each replica's state, from replica 1 (empty
    /// otherwise).
    pub replicas: Vec<Vec<[u64; 2]>>,
}

/// One bucket key's passes and rejects per window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyWindows {
    /// The key's values joined by `+`, in the order of the limiter's `key`.
    pub key: String,
    /// [passed, rejected] per window, as [`LimiterWindows::total`].
    pub counts: Vec<[u64; 2]>,
}

/// One member's requests at one limiter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberCount {
    /// The `member` label.
    pub member: String,
    /// Let through.
    pub passed: u64,
    /// Rejected.
    pub rejected: u64,
}

/// The requests of one (route, access) pair and how many each limiter counted.
#[derive(Debug, Clone, Default)]
pub struct RouteTraffic {
    /// The route.
    pub route: RouteId,
    /// The access path (gateway or direct).
    pub access: Option<Access>,
    /// Requests sent on this pair.
    pub requests: u64,
    /// Per limiter (declaration order).
    pub counted: Vec<u64>,
}

/// End-to-end outcomes of one member's requests.
#[derive(Debug, Clone, Default)]
pub struct MemberOutcome {
    /// The `member` label.
    pub member: String,
    /// Requests sent.
    pub requests: u64,
    /// Passed every limiter and reached the handler.
    pub admitted: u64,
    /// Rejected (429), per limiter that rejected first.
    pub rejected_by: Vec<u64>,
    /// Answered 404: no service owns the route.
    pub not_found: u64,
}

/// What the limiters measured in one run (empty when the scenario has none).
#[derive(Debug, Clone, Default)]
pub struct LimiterResults {
    /// Per limiter, declaration order.
    pub limiters: Vec<LimiterRun>,
    /// Every (route, access) pair that got requests, route then access order.
    pub traffic: Vec<RouteTraffic>,
    /// Per member, natural name order.
    pub members: Vec<MemberOutcome>,
}

impl Limiting {
    /// The run's limiter figures at its `end`, with the names of `symbols`.
    pub(in crate::sim) fn results(
        &self,
        model: &Model,
        symbols: &[String],
        end: Ticks,
    ) -> LimiterResults {
        if !self.enabled() {
            return LimiterResults::default();
        }
        let n = model.limiters.len();
        let name = |id: &u32| symbols.get(*id as usize).cloned().unwrap_or_default();
        let window = self.window;
        let limiters = self
            .actors
            .iter()
            .zip(&model.limiters)
            .map(|(a, limiter)| {
                let mut members: Vec<MemberCount> = a
                    .members
                    .iter()
                    .map(|(m, (passed, rejected))| MemberCount {
                        member: name(m),
                        passed: *passed,
                        rejected: *rejected,
                    })
                    .collect();
                members.sort_by(|x, y| natural_cmp(&x.member, &y.member));
                LimiterRun {
                    seen: a.passed + a.rejected,
                    passed: a.passed,
                    rejected: a.rejected,
                    delayed: a.delayed,
                    delay_total_ms: a.delay_total.as_ms(),
                    delay_max_ms: a.delay_max.as_ms(),
                    buckets: a.states.len() as u64,
                    peak_passed_in_window: a.peak,
                    members,
                    windows: window.map(|_| LimiterWindows {
                        total: a.windows.total.clone(),
                        keys: key_windows(model, limiter, symbols, &a.windows.keys),
                        too_many_keys: a.windows.overflow,
                        replicas: a.windows.replicas.clone(),
                    }),
                    concurrency: concurrency_run(a, limiter, end),
                }
            })
            .collect();
        let traffic = self
            .traffic
            .iter()
            .enumerate()
            .filter(|(_, (requests, _))| *requests > 0)
            .map(|(i, (requests, counted))| RouteTraffic {
                route: i / 2,
                access: Some(if i % 2 == 0 {
                    Access::Gateway
                } else {
                    Access::Direct
                }),
                requests: *requests,
                counted: counted.clone(),
            })
            .collect();
        let mut members: Vec<MemberOutcome> = self
            .members
            .iter()
            .map(|(m, t)| {
                let mut rejected_by = t.rejected_by.clone();
                rejected_by.resize(n, 0);
                MemberOutcome {
                    member: name(m),
                    requests: t.requests,
                    admitted: t.admitted,
                    rejected_by,
                    not_found: t.not_found,
                }
            })
            .collect();
        members.sort_by(|x, y| natural_cmp(&x.member, &y.member));
        LimiterResults {
            limiters,
            traffic,
            members,
        }
    }
}

/// A concurrency limiter's limit and in flight over the run, overall and per
/// replica, at its `end` (None for a rate limiter).
fn concurrency_run(a: &LimiterActor, limiter: &Limiter, end: Ticks) -> Option<ConcurrencyRun> {
    let mut t = a.track.as_deref()?.clone();
    t.finish(end);
    let replicas = (a.replica_tracks.iter().zip(&a.replica_counts))
        .map(|(t, &[passed, rejected])| {
            let mut t = t.clone();
            t.finish(end);
            ReplicaConcurrency {
                passed,
                rejected,
                run: t.run,
                windows: t.windows,
            }
        })
        .collect();
    Some(ConcurrencyRun {
        algorithm: limiter.concurrency()?.algorithm.name(),
        run: t.run,
        windows: t.windows,
        replicas,
    })
}

/// Per-key windows with their keys written out, in natural key order.
fn key_windows(
    model: &Model,
    limiter: &Limiter,
    symbols: &[String],
    keys: &[([u32; 4], Vec<[u64; 2]>)],
) -> Vec<KeyWindows> {
    let mut out: Vec<KeyWindows> = keys
        .iter()
        .map(|(key, counts)| {
            let parts: Vec<&str> = limiter
                .key
                .iter()
                .zip(key)
                .map(|(f, &v)| match f {
                    Field::Client | Field::Member => {
                        symbols.get(v as usize).map_or("", String::as_str)
                    }
                    Field::Route => model.routes.get(v as usize).map_or("", |r| r.path.as_str()),
                    Field::Access => {
                        if v == Access::Gateway as u32 {
                            Access::Gateway.name()
                        } else {
                            Access::Direct.name()
                        }
                    }
                })
                .collect();
            KeyWindows {
                key: parts.join("+"),
                counts: counts.clone(),
            }
        })
        .collect();
    out.sort_by(|x, y| natural_cmp(&x.key, &y.key));
    out
}

/// Orders names with their digit runs compared as numbers (u2 before u10).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for ((da, xa), (db, xb)) in pa.iter().zip(&pb) {
        let ord = if *da && *db {
            let (ta, tb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb))
        } else {
            xa.cmp(xb)
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;

    #[test]
    fn natural_order_compares_digit_runs_as_numbers() {
        let mut v = vec!["u10", "u2", "u1", "toplu", "u02x"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["toplu", "u1", "u2", "u02x", "u10"]);
    }
}
