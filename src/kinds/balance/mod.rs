//! Balancers (`services.NAME.balancer`, `dependencies.NAME.balancer`): how
//! a caller of a replicated target picks one of its replicas, one module per
//! kind. A kind is a type of its checked keys implementing [`Kind`] (its
//! declaration, how its keys become the type, and the balancer it makes over
//! N replicas) and a balancer implementing [`Balance`]. The list below makes
//! the rest: the model's [`Balancer`], the reader's kinds and the docs' key
//! table.
//!
//! A balancer knows nothing of servers, dependencies or requests. It is given a
//! view of the replicas (how many requests each has outstanding, as its caller
//! sees them: in slots and in line for a server's replicas) and picks an index
//! into it; whatever state it needs (a turn, a random stream) it owns. So the
//! same kinds serve any caller of replicas, each with the view it keeps (the
//! views, outlier ejection and the queue in front are the simulation's:
//! `sim::balance`).
//!
//! To add a kind: write its module here and add one line to the list.

use super::check::{R, err};
use super::keys::{Decl, Keys, read};
use crate::engine::{Stream, Ticks};
use crate::error::num;

/// The keys every kind takes, read by validation besides the kind's own.
pub const SHARED: &[&str] = &[
    "view",
    "release",
    "max_conn",
    "max_queue",
    "queue_timeout_ms",
];

/// A balancer kind: its keys, checked, and the balancer it makes.
pub trait Kind: Clone + PartialEq + std::fmt::Debug {
    /// Its name and keys.
    const DECL: Decl;
    /// The kind from its checked keys, for `replicas` replicas (and the
    /// checks the declared ranges cannot say).
    fn from_keys(k: &Keys, replicas: u32) -> R<Self>;
    /// Its balancer over `n` replicas; `rng` is its own random stream, for
    /// the kinds that draw (the others drop it).
    fn make(&self, n: usize, rng: Stream) -> Box<dyn Balance>;
}

/// A rule that picks one of N replicas.
pub trait Balance {
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

/// The kinds: `Variant: module::Type`, in the order `kind` lists them.
macro_rules! kinds {
    ($($variant:ident: $module:ident::$ty:ident,)*) => {
        $(mod $module;)*

        /// How a request to a replicated target picks its replica: the kind
        /// and its checked keys.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Balancer {
            $(
                #[allow(missing_docs)]
                $variant($module::$ty),
            )*
        }

        /// Every kind's declaration, in the order `kind` lists them.
        pub const KINDS: &[&Decl] = &[$(&<$module::$ty as Kind>::DECL,)*];

        impl Balancer {
            /// The kind's declaration.
            pub fn decl(&self) -> &'static Decl {
                match self {
                    $(Balancer::$variant(_) => &<$module::$ty as Kind>::DECL,)*
                }
            }

            /// Its balancer over `n` replicas, drawing from `rng`.
            pub fn make(&self, n: usize, rng: Stream) -> Box<dyn Balance> {
                match self {
                    $(Balancer::$variant(s) => s.make(n, rng),)*
                }
            }

            fn from_keys(k: &Keys, replicas: u32) -> R<Balancer> {
                $(
                    if k.decl().name == <$module::$ty as Kind>::DECL.name {
                        let kind = <$module::$ty as Kind>::from_keys(k, replicas)?;
                        return Ok(Balancer::$variant(kind));
                    }
                )*
                unreachable!("the reader returns a listed kind")
            }
        }
    };
}

kinds! {
    RoundRobin: round_robin::RoundRobinKind,
    Random: random::RandomKind,
    LeastOutstanding: least_outstanding::LeastOutstandingKind,
    TwoChoices: two_choices::TwoChoicesKind,
    LeastRequest: least_request::LeastRequestKind,
    PeakEwma: peak_ewma::PeakEwmaKind,
    WeightedRoundRobin: weighted_round_robin::WeightedRoundRobinKind,
    HaproxyRandom: haproxy_random::HaproxyRandomKind,
}

pub use least_outstanding::TieBreak;

impl Default for Balancer {
    /// Replicas in turn.
    fn default() -> Balancer {
        Balancer::RoundRobin(round_robin::RoundRobinKind)
    }
}

impl Balancer {
    /// The kind's name, as written in `kind`.
    pub fn name(&self) -> &'static str {
        self.decl().name
    }

    /// The balancer table at `path` for `replicas` replicas (the keys in
    /// [`SHARED`] are passed over: validation reads them).
    pub fn read(path: &str, t: &toml::Table, replicas: u32) -> R<Balancer> {
        Balancer::from_keys(&read(path, t, KINDS, SHARED)?, replicas)
    }

    /// Ties among the fewest go to the one that reached its count first
    /// (`least_outstanding`'s `tie_break = "first_reached"`).
    pub fn breaks_ties_by_time(&self) -> bool {
        matches!(self, Balancer::LeastOutstanding(s) if s.tie_break == TieBreak::FirstReached)
    }
}

/// The most draws a pick may make (`choice_count`, `draws`): Envoy and
/// HAProxy set no bound, but past a few dozen more draws change nothing but
/// the run's time.
const MAX_DRAWS: u32 = 1000;

/// A number of draws per pick (`choice_count`, `draws`), already a whole
/// number at least its minimum: at most [`MAX_DRAWS`], with replacement, so
/// it may exceed the replicas.
fn draws(k: &Keys, key: &str) -> R<u32> {
    let n = k.whole(key);
    if n > MAX_DRAWS {
        return err(
            k.at(key),
            format!(
                "{n} draws per pick: must be at most {MAX_DRAWS} (draws are with replacement; a few dozen already find the least loaded of any few replicas)"
            ),
        );
    }
    Ok(n)
}

/// HAProxy's largest server `weight`.
const HAPROXY_MAX_WEIGHT: f64 = 256.0;

/// `weights`: none, or one positive weight per replica; `haproxy` weights
/// are HAProxy's server weights, whole numbers from 1 to 256 (its ring holds
/// 16 points per unit).
fn weights(k: &Keys, replicas: u32, haproxy: bool) -> R<Vec<f64>> {
    let w = k.list("weights");
    let at = k.at("weights");
    if w.is_empty() {
        return Ok(Vec::new());
    }
    if w.len() != replicas as usize {
        return err(
            at,
            format!(
                "{} weights for {replicas} replicas: one weight per replica",
                w.len()
            ),
        );
    }
    for (i, &x) in w.iter().enumerate() {
        if haproxy && (x.fract() != 0.0 || x > HAPROXY_MAX_WEIGHT) {
            return err(
                format!("{at}.{i}"),
                format!(
                    "{}: HAProxy's weights are whole numbers from 1 to 256",
                    num(x)
                ),
            );
        }
    }
    // nginx's smooth weighted round robin (src/http/ngx_http_upstream_round_robin.c,
    // ngx_http_upstream_get_peer) takes the sum of the weights off the picked
    // peer: a sum past the largest double is infinite, and every pick then
    // went to the first replica. Only ratios count, so the bound holds for
    // every kind that takes weights.
    if !w.iter().sum::<f64>().is_finite() {
        return err(
            at,
            format!(
                "the weights add up to more than {}: only their ratios count, so divide them all by the same number",
                num(f64::MAX)
            ),
        );
    }
    Ok(w.to_vec())
}

/// The balancer a table's text names, over `n` replicas (for tests).
#[cfg(test)]
pub(crate) fn of_text(text: &str, n: usize, rng: Stream) -> Box<dyn Balance> {
    let t: toml::Table = text.parse().expect("a table");
    Balancer::read("b", &t, n as u32)
        .expect("a kind")
        .make(n, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    /// `read` and `make` make the kind each name stands for: the deterministic kinds show
    /// their rule on a view that tells them apart from the others.
    #[test]
    fn each_name_makes_its_kind() {
        let view = [3, 0, 5];
        let picks = |name: &str| {
            let t: toml::Table = format!("kind = \"{name}\"").parse().expect("a table");
            let kind = Balancer::read("b", &t, 3).expect("a kind");
            let mut b = kind.make(view.len(), stream(1, 0, "balancer:t"));
            (0..3).map(|_| b.pick(&view)).collect::<Vec<_>>()
        };
        assert_eq!(picks("round_robin"), [0, 1, 2]);
        assert_eq!(picks("least_outstanding"), [1, 1, 1]);
        let mut random = random::Random::new(stream(1, 0, "balancer:t"));
        let expected: Vec<usize> = (0..3).map(|_| random.pick(&view)).collect();
        assert_eq!(picks("random"), expected);
        let mut two = two_choices::TwoChoices::new(stream(1, 0, "balancer:t"));
        let expected: Vec<usize> = (0..3).map(|_| two.pick(&view)).collect();
        assert_eq!(picks("two_choices"), expected);
    }
}
