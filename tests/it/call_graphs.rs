//! Call graphs (services calling services): the bundled scenarios' figures, and
//! properties of random call trees.

use crate::common::{Csv, num, run_into, scenario};
use proptest::prelude::*;
use resim::scenario::{LoadOptions, load_str};
use std::fmt::Write;
use std::path::Path;

fn csv(dir: &tempfile::TempDir, table: &str) -> Csv {
    Csv::read(&dir.path().join(format!("{table}.csv")))
}

/// front (5 ms, budget 200) -> mid (10 ms) -> store (500 ms): the front's deadline
/// is t = 5 + 200 = 205 for every request, and the store is far too slow.
#[test]
fn three_tiers_end_at_the_fronts_deadline_and_cancellation_stops_the_work_below() {
    let dir = run_into(&scenario("scenarios/three-tier-deadline.toml"), &[]);
    let outcomes = csv(&dir, "outcomes");
    let work = csv(&dir, "server_work");
    let services = csv(&dir, "services");
    for budget in ["deadline", "1000"] {
        for cancel in ["false", "true"] {
            let key = [("budget", budget), ("cancellation", cancel)];
            let o = outcomes.row(&key);
            // the front gives up at its deadline whatever happens below
            assert_eq!(num(o, "worst_ms"), 205.0, "{key:?}");
            assert_eq!(num(o, "median_ms"), 205.0, "{key:?}");
            assert_eq!(num(o, "dropped"), 10.0, "{key:?}");
            let mid = [key[0], key[1], ("service", "mid")];
            let late = num(work.row(&mid), "late_work_ms");
            let wasted = num(o, "wasted_ms");
            match (budget, cancel) {
                // the deadline travels down: mid's call to the store gives up at
                // 205 too (its budget R = 205 - 15 = 190), but without
                // cancellation the store works on: 500 - 190 = 310 ms each
                ("deadline", "false") => {
                    assert_eq!(wasted, 3100.0);
                    assert_eq!(late, 2000.0, "mid holds its slot 15 -> 205");
                    assert_eq!(num(services.row(&mid), "mean_response_ms"), 200.0);
                    assert_eq!(num(o, "failed_store"), 10.0);
                }
                // mid's own budget of 1000 ms keeps it (and its slot) waiting for
                // the whole 500 ms of the store: 510 ms at mid, all for nobody
                ("1000", "false") => {
                    assert_eq!(wasted, 0.0, "mid waited for the store");
                    assert_eq!(late, 5100.0);
                    assert_eq!(num(services.row(&mid), "mean_response_ms"), 510.0);
                }
                // cancellation travels down the tree: mid's request is cancelled
                // in its calls (slot freed at 205) and so is its call to the store
                (_, "true") => {
                    assert_eq!(wasted, 0.0, "{key:?}");
                    assert_eq!(late, 2000.0, "{key:?}");
                    assert_eq!(num(services.row(&mid), "cancelled"), 10.0);
                    assert_eq!(num(services.row(&mid), "processed"), 0.0);
                }
                _ => unreachable!(),
            }
        }
    }
}

/// auth 20 ms, then catalog (inventory || pricing); SLO 250 ms. Inventory at
/// 200 ms: greedy leaves the catalog 230 ms, equal 125 ms, weighted (20:60) 187.5.
#[test]
fn checkout_composition_split_policies() {
    let dir = run_into(&scenario("scenarios/checkout-composition.toml"), &[]);
    let outcomes = csv(&dir, "outcomes");
    for policy in ["greedy", "equal", "weighted"] {
        let o = outcomes.row(&[("variant", "baseline"), ("policy", policy)]);
        assert_eq!(num(o, "answered"), 20.0, "{policy}");
        assert_eq!(num(o, "median_ms"), 60.0, "auth 20 + max(40, 30)");
    }
    let slow = |p: &str| {
        outcomes
            .row(&[("variant", "inventory-slow"), ("policy", p)])
            .clone()
    };
    assert_eq!(num(&slow("greedy"), "answered"), 20.0);
    assert_eq!(num(&slow("greedy"), "median_ms"), 220.0);
    assert_eq!(num(&slow("equal"), "answered"), 0.0);
    assert_eq!(num(&slow("equal"), "median_ms"), 145.0, "20 + 125");
    assert_eq!(num(&slow("weighted"), "answered"), 0.0);
    assert_eq!(num(&slow("weighted"), "median_ms"), 207.5, "20 + 187.5");
    let shares = csv(&dir, "shares");
    let share = |p: &str, d: &str| {
        num(
            shares.row(&[("variant", "baseline"), ("policy", p), ("dependency", d)]),
            "share_ms",
        )
    };
    assert_eq!(
        (share("weighted", "auth"), share("weighted", "catalog")),
        (62.5, 187.5)
    );
    // the catalog splits a deadline known only at run time: no fixed share
    let inv = shares.row(&[
        ("variant", "baseline"),
        ("policy", "greedy"),
        ("dependency", "inventory"),
    ]);
    assert_eq!(inv["share_ms"], "");
}

/// A random call tree: `n` services, service i calling services > i and
/// dependencies (no cycles), every one with cancellation or not.
/// One service of a tree: slots, queue, branches (call targets), cancellation,
/// service time in ms.
type Node = (u8, u8, Vec<Vec<usize>>, bool, u8);

#[derive(Debug, Clone)]
struct Tree {
    services: Vec<Node>,
    deps: Vec<(u8, u8)>, // latency ms, slots
    rate: u16,
    timeout: Option<u16>,
    budget: u16,
    seed: u64,
}

fn tree() -> impl Strategy<Value = Tree> {
    let service = (
        1u8..4,
        0u8..4,
        prop::collection::vec(prop::collection::vec(0usize..100, 1..3), 1..3),
        any::<bool>(),
        0u8..20,
    );
    (
        prop::collection::vec(service, 1..5),
        prop::collection::vec((1u8..80, 0u8..3), 1..4),
        20u16..300,
        prop::option::of(20u16..300),
        10u16..300,
        any::<u64>(),
    )
        .prop_map(|(services, deps, rate, timeout, budget, seed)| Tree {
            services,
            deps,
            rate,
            timeout,
            budget,
            seed,
        })
}

impl Tree {
    fn toml(&self, cancel_all: bool) -> String {
        let n = self.services.len();
        let mut t = format!("[scenario]\nname = \"tree\"\nseed = {}\n", self.seed >> 1);
        for (i, (slots, queue, branches, cancel, ms)) in self.services.iter().enumerate() {
            let _ = writeln!(t, "\n[services.s{i}]");
            if i == 0 {
                t.push_str("routes = [\"/x\"]\n");
            }
            let _ = write!(
                t,
                "[services.s{i}.handler]\ntype = \"server\"\nslots = {slots}\nqueue = {queue}\nservice = {{ constant = {ms} }}\ncancellation = {}\n",
                *cancel || cancel_all
            );
            if i == 0 {
                let _ = writeln!(t, "budget = {}", self.budget);
            }
            t.push_str("branches = [");
            for (b, calls) in branches.iter().enumerate() {
                // a call goes to a later service or to a dependency: no cycles
                let names: Vec<String> = calls
                    .iter()
                    .map(|&c| {
                        let later = n - i - 1;
                        if later > 0 && c % 2 == 0 {
                            format!("\"s{}\"", i + 1 + c / 2 % later)
                        } else {
                            format!("\"d{}\"", c % self.deps.len())
                        }
                    })
                    .collect();
                let _ = write!(t, "{{ name = \"b{b}\", calls = [{}] }}, ", names.join(", "));
            }
            t.push_str("]\n");
        }
        for (j, (ms, slots)) in self.deps.iter().enumerate() {
            let _ = writeln!(
                t,
                "\n[dependencies.d{j}]\nslots = {slots}\nlatency = {{ exponential = {{ mean_ms = {ms} }} }}"
            );
        }
        let _ = write!(
            t,
            "\n[workload]\ntype = \"open\"\nrate_rps = {}\nduration_ms = 2000\n",
            self.rate
        );
        if let Some(to) = self.timeout {
            let _ = writeln!(t, "timeout_ms = {to}");
        }
        t
    }
}

fn load(text: &str) -> resim::model::Model {
    let s = load_str(text, Path::new("tree.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("a generated tree must load: {e}\n{text}"));
    s.rows[0].model.clone()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every request and every call ends exactly once (nothing is held when the
    /// run ends), every server's arrivals are accounted for, and the time at each
    /// server matches its time averages (Little's law on the sample path).
    #[test]
    fn random_call_trees_end_every_request_and_call_once(tree in tree()) {
        let text = tree.toml(false);
        let model = load(&text);
        let r = resim::sim::run(&model, 0).unwrap_or_else(|e| panic!("{e}\n{text}"));
        prop_assert_eq!(r.leaked, 0, "requests or calls never ended\n{}", text);
        prop_assert_eq!(
            r.outcomes.requests,
            r.outcomes.ended(),
            "every client request ends once\n{}", text
        );
        for s in &r.servers {
            prop_assert_eq!(
                s.arrived,
                s.processed + s.shed + s.abandoned + s.cancelled,
                "a server lost a request\n{}", text
            );
            let little = s.in_server_ms / r.sim_time_ms;
            let averages = s.mean_busy_slots + s.mean_queue;
            prop_assert!(
                (little - averages).abs() <= 1e-6 * averages.max(1.0),
                "Little's law at a server: {} vs {}\n{}", little, averages, text
            );
        }
    }

    /// With cancellation everywhere and no client timeout, every give-up is a
    /// caller's cancellation: no dependency works after its caller gave up.
    #[test]
    fn after_a_cancellation_no_work_below_it_continues(mut tree in tree()) {
        tree.timeout = None;
        let text = tree.toml(true);
        let model = load(&text);
        let r = resim::sim::run(&model, 0).unwrap_or_else(|e| panic!("{e}\n{text}"));
        prop_assert_eq!(r.leaked, 0);
        prop_assert_eq!(r.wasted_ms, 0.0, "a dependency worked for nobody\n{}", text);
    }
}
