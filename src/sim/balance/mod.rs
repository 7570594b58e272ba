//! Balancers: how a caller of a replicated target picks one of its replicas.
//!
//! A balancer knows nothing of servers, dependencies or requests. It is given a
//! view of the replicas (how many requests each has outstanding, as its caller
//! sees them: in slots and in line for a server's replicas) and picks an index
//! into it; whatever state it needs (a turn, a random stream) it owns. So the
//! same kinds serve any caller of replicas, each with the view it keeps.
//!
//! One file per kind, each a small type implementing [`Balance`]; [`of`] makes
//! the one a scenario names ([`Balancer`], `services.NAME.balancer`).
//! [`Picker`] (`view.rs`) holds a target's balancing: one balancer reading the
//! replicas' own counts (`view = "global"`), or one per caller with the
//! caller's own counts (`view = "caller"`), and hears when each pick is over.
//! With `outlier_detection` each view also holds a [`Detector`]
//! (`outlier.rs`): it hears whether each pick failed ([`Picker::heard`]) and
//! keeps the replicas it ejected out of the view's picks. With `max_conn`
//! the picker also holds the queue in front of the replicas
//! ([`ProxyQueue`], `queue.rs`): a full replica is passed over, and a
//! request no replica has room for waits there.

mod callers;
mod haproxy_random;
mod least_outstanding;
mod least_request;
mod outlier;
mod peak_ewma;
mod queue;
mod random;
mod round_robin;
mod two_choices;
mod view;
mod weighted_round_robin;

pub(crate) use callers::{caller_name, instance_key};
pub(crate) use haproxy_random::HaproxyRandom;
pub(crate) use least_outstanding::LeastOutstanding;
pub(crate) use least_request::LeastRequest;
pub(crate) use outlier::{Detector, Ejection};
pub(crate) use peak_ewma::PeakEwma;
pub(crate) use queue::{Placed, ProxyQueue};
pub(crate) use random::Random;
pub(crate) use round_robin::RoundRobin;
pub(crate) use two_choices::TwoChoices;
pub(crate) use view::Picker;
pub(crate) use weighted_round_robin::WeightedRoundRobin;

use crate::engine::{Stream, Ticks};
use crate::model::{BalanceKeys, Balancer};

/// A rule that picks one of N replicas.
pub(crate) trait Balance {
    /// The index (below `outstanding.len()`, which is at least 1) of the
    /// replica the next request goes to, given the requests each replica has
    /// outstanding now.
    fn pick(&mut self, outstanding: &[u32]) -> usize;

    /// `pick` at `now`, for the kinds whose state ages (`peak_ewma`); the
    /// others ignore the clock.
    fn pick_at(&mut self, outstanding: &[u32], _now: Ticks) -> usize {
        self.pick(outstanding)
    }

    /// `pick_at` among the replicas `among` only (indices into
    /// `outstanding`, in order, at least one): the replicas outlier
    /// detection has not ejected. A kind without state per replica picks in
    /// the view of those alone; a kind with (weights, costs) overrides it.
    fn pick_among(&mut self, outstanding: &[u32], among: &[usize], now: Ticks) -> usize {
        let view: Vec<u32> = among.iter().map(|&r| outstanding[r]).collect();
        among[self.pick_at(&view, now).min(among.len() - 1)]
    }

    /// Whether it learns from answers ([`Balance::on_done`]); when no kind of
    /// a run does (and no view is per caller), nothing is recorded per pick.
    fn hears(&self) -> bool {
        false
    }

    /// A request sent to `replica` is over for its caller at `now`,
    /// `latency` after it was sent: answered, failed, or given up on.
    fn on_done(&mut self, _replica: usize, _now: Ticks, _latency: Ticks) {}

    /// Whether it breaks ties by when each replica's count last changed
    /// (`least_outstanding` with `tie_break = "first_reached"`): then its
    /// owner gives it those stamps before each pick ([`Balance::since`]).
    fn reads_since(&self) -> bool {
        false
    }

    /// Before a pick: per replica, a stamp of when its count last changed,
    /// larger for later changes.
    fn since(&mut self, _since: &[u64]) {}

    /// With `max_conn`: whether it picks among the replicas with room
    /// (true), or picks among all and sends the request to the queue when
    /// its pick is full (`haproxy_random`, as HAProxy's `random`).
    fn skips_full(&self) -> bool {
        true
    }

    /// With `max_conn`: whether a new request waits behind anyone in the
    /// queue even when a replica has room (HAProxy's `roundrobin`).
    fn queue_first(&self) -> bool {
        false
    }
}

/// The balancer of kind `kind` over `n` replicas, with its `keys`; `rng` is
/// its own random stream, for the kinds that draw (the others drop it).
pub(crate) fn of(kind: Balancer, keys: &BalanceKeys, n: usize, rng: Stream) -> Box<dyn Balance> {
    match kind {
        Balancer::RoundRobin => Box::new(RoundRobin::default()),
        Balancer::Random => Box::new(Random::new(rng)),
        Balancer::LeastOutstanding => Box::new(LeastOutstanding::new(keys.tie_break)),
        Balancer::TwoChoices => Box::new(TwoChoices::new(rng)),
        Balancer::LeastRequest => Box::new(LeastRequest::new(
            rng,
            keys.choice_count as usize,
            &keys.weights,
            keys.active_request_bias,
        )),
        Balancer::PeakEwma => Box::new(PeakEwma::new(rng, n, keys.decay)),
        Balancer::WeightedRoundRobin => Box::new(WeightedRoundRobin::new(&keys.weights)),
        Balancer::HaproxyRandom => Box::new(HaproxyRandom::new(rng, n, keys.draws, &keys.weights)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    /// `of` makes the kind each name stands for: the deterministic kinds show
    /// their rule on a view that tells them apart from the others.
    #[test]
    fn each_name_makes_its_kind() {
        let view = [3, 0, 5];
        let picks = |kind: Balancer| {
            let mut b = of(
                kind,
                &BalanceKeys::default(),
                view.len(),
                stream(1, 0, "balancer:t"),
            );
            (0..3).map(|_| b.pick(&view)).collect::<Vec<_>>()
        };
        assert_eq!(picks(Balancer::RoundRobin), [0, 1, 2]);
        assert_eq!(picks(Balancer::LeastOutstanding), [1, 1, 1]);
        let mut random = Random::new(stream(1, 0, "balancer:t"));
        let expected: Vec<usize> = (0..3).map(|_| random.pick(&view)).collect();
        assert_eq!(picks(Balancer::Random), expected);
        let mut two = TwoChoices::new(stream(1, 0, "balancer:t"));
        let expected: Vec<usize> = (0..3).map(|_| two.pick(&view)).collect();
        assert_eq!(picks(Balancer::TwoChoices), expected);
    }
}
