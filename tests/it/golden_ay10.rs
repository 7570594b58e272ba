//! AY10 (seed 000, timeout budgets): every number of the digest, asserted from the
//! CSV files the bundled scenario writes.

use crate::common::*;

const FILE: &str = "scenarios/ay10-tariff-slowdown.toml";

/// One line of the seed's outcome tables: (regime, policy, answered, dropped,
/// fail tariff, fail measure, median, worst, mean (1 decimal), held slots
/// (1 decimal), wasted ms).
type SeedLine = (
    &'static str,
    &'static str,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
);

const OUTCOMES: [SeedLine; 6] = [
    (
        "baseline", "greedy", 48., 0., 0., 0., 40., 200., 46.2, 19.2, 0.,
    ),
    (
        "baseline", "equal", 46., 2., 0., 2., 40., 190., 45.8, 19.1, 20.,
    ),
    (
        "baseline", "weighted", 46., 2., 2., 0., 40., 180., 45.3, 18.9, 40.,
    ),
    (
        "tariff-slow",
        "greedy",
        6.,
        42.,
        36.,
        42.,
        200.,
        200.,
        197.8,
        82.4,
        5540.,
    ),
    (
        "tariff-slow",
        "equal",
        0.,
        48.,
        48.,
        2.,
        123.,
        200.,
        126.0,
        52.5,
        9700.,
    ),
    (
        "tariff-slow",
        "weighted",
        0.,
        48.,
        48.,
        0.,
        93.,
        180.,
        96.4,
        40.2,
        11120.,
    ),
];

#[test]
fn outcomes_match_the_seed_tables() {
    let csv = run_csv(FILE, "outcomes");
    assert_eq!(
        csv.headers,
        [
            "variant",
            "policy",
            "cancellation",
            "requests",
            "answered",
            "dropped",
            "failed_delivery",
            "failed_tariff",
            "failed_measure",
            "median_ms",
            "worst_ms",
            "mean_ms",
            "held_slots",
            "wasted_ms",
            "abandoned_slots",
            "total_slots",
            "answered_pct",
            "p50_ms",
            "p90_ms",
            "p99_ms",
            "p999_ms",
            "answered_mean_ms",
            "failed",
            "timed_out",
            "shed",
            "rejected",
            "errors",
            "refused",
            "not_found",
            "p50_all_ms",
            "p90_all_ms",
            "p99_all_ms",
            "p999_all_ms"
        ]
    );
    assert_eq!(
        csv.rows.len(),
        12,
        "2 regimes x 3 policies x 2 cancellation settings"
    );
    for (
        regime,
        policy,
        answered,
        dropped,
        f_tariff,
        f_measure,
        median,
        worst,
        mean,
        held,
        wasted,
    ) in OUTCOMES
    {
        for cancellation in ["false", "true"] {
            let row = csv.row(&[
                ("variant", regime),
                ("policy", policy),
                ("cancellation", cancellation),
            ]);
            assert_eq!(num(row, "requests"), 48.0);
            assert_eq!(num(row, "answered"), answered, "{regime}/{policy}");
            assert_eq!(num(row, "dropped"), dropped, "{regime}/{policy}");
            assert_eq!(num(row, "failed_delivery"), 0.0);
            assert_eq!(num(row, "failed_tariff"), f_tariff, "{regime}/{policy}");
            assert_eq!(num(row, "failed_measure"), f_measure, "{regime}/{policy}");
            assert_eq!(num(row, "median_ms"), median, "{regime}/{policy}");
            assert_eq!(num(row, "worst_ms"), worst, "{regime}/{policy}");
            assert_rounded(row, "mean_ms", mean, 1);
            assert_rounded(row, "held_slots", held, 1);
            // Without cancellation the store keeps working; with it nothing is wasted.
            let expected_waste = if cancellation == "false" { wasted } else { 0.0 };
            assert_eq!(
                num(row, "wasted_ms"),
                expected_waste,
                "{regime}/{policy}/{cancellation}"
            );
        }
    }
}

#[test]
fn abandoned_and_total_slots_match_the_seed() {
    let csv = run_csv(FILE, "outcomes");
    // Under "tariff slow": abandoned slots 48.1 / 84.2 / 96.5; total without
    // cancellation 130.5 / 136.7 / 136.7, with cancellation 82.4 / 52.5 / 40.2.
    for (policy, abandoned, total_without, total_with) in [
        ("greedy", 48.1, 130.5, 82.4),
        ("equal", 84.2, 136.7, 52.5),
        ("weighted", 96.5, 136.7, 40.2),
    ] {
        let without = csv.row(&[
            ("variant", "tariff-slow"),
            ("policy", policy),
            ("cancellation", "false"),
        ]);
        assert_rounded(without, "abandoned_slots", abandoned, 1);
        assert_rounded(without, "total_slots", total_without, 1);
        let with = csv.row(&[
            ("variant", "tariff-slow"),
            ("policy", policy),
            ("cancellation", "true"),
        ]);
        assert_rounded(with, "abandoned_slots", 0.0, 1);
        assert_rounded(with, "total_slots", total_with, 1);
    }
}

#[test]
fn shares_are_greedy_equal_and_weighted_by_medians() {
    let csv = run_csv(FILE, "shares");
    assert_eq!(
        csv.headers,
        [
            "variant",
            "policy",
            "cancellation",
            "branch",
            "dependency",
            "share_ms"
        ]
    );
    for (policy, tariff, measure) in [
        ("greedy", 180.0, 180.0),
        ("equal", 90.0, 90.0),
        ("weighted", 60.0, 120.0),
    ] {
        let f = |dep| {
            num(
                csv.row(&[
                    ("variant", "baseline"),
                    ("policy", policy),
                    ("cancellation", "false"),
                    ("dependency", dep),
                ]),
                "share_ms",
            )
        };
        assert_eq!(f("tariff"), tariff, "{policy}");
        assert_eq!(f("measure"), measure, "{policy}");
        assert_eq!(f("delivery"), 180.0, "{policy}");
    }
}

#[test]
fn deadline_field_cost_matches_the_seed() {
    let csv = run_csv(FILE, "deadline_cost");
    assert_eq!(
        csv.headers,
        [
            "subcalls",
            "bytes_per_request",
            "share_of_response_pct",
            "bytes_per_s",
            "kib_per_s"
        ]
    );
    let row = &csv.rows[0];
    assert_eq!(num(row, "subcalls"), 5.0);
    assert_eq!(num(row, "bytes_per_request"), 40.0);
    assert_rounded(row, "share_of_response_pct", 8.3, 1);
    assert_rounded(row, "bytes_per_s", 20555.60, 2);
    assert_rounded(row, "kib_per_s", 20.07, 2);
}

#[test]
fn tight_splits_drop_two_of_48_more_than_greedy() {
    let csv = run_csv(FILE, "false_drops");
    assert_eq!(
        csv.headers,
        [
            "policy",
            "extra_drops",
            "requests",
            "extra_drop_pct",
            "extra_drop_rps"
        ]
    );
    assert_eq!(csv.rows.len(), 2);
    for policy in ["equal", "weighted"] {
        let row = csv.row(&[("policy", policy)]);
        assert_eq!(num(row, "extra_drops"), 2.0);
        assert_eq!(num(row, "requests"), 48.0);
        assert_rounded(row, "extra_drop_pct", 4.17, 2);
        assert_rounded(row, "extra_drop_rps", 17.36, 2);
    }
}

#[test]
fn error_budget_sensitivity_matches_the_seed() {
    let csv = run_csv(FILE, "error_budget");
    assert_eq!(
        csv.headers,
        [
            "minutes",
            "per_month",
            "monthly_minutes",
            "share_of_budget_pct"
        ]
    );
    let expected = [
        (12.0, 1.0, 12.0, 42.6),
        (12.0, 2.0, 24.0, 85.1),
        (24.0, 1.0, 24.0, 85.1),
    ];
    assert_eq!(csv.rows.len(), expected.len());
    for (row, (minutes, per_month, monthly, pct)) in csv.rows.iter().zip(expected) {
        assert_eq!(num(row, "minutes"), minutes);
        assert_eq!(num(row, "per_month"), per_month);
        assert_eq!(num(row, "monthly_minutes"), monthly);
        assert_rounded(row, "share_of_budget_pct", pct, 1);
    }
}

#[test]
fn the_same_seed_gives_byte_identical_csv() {
    let a = run_into(&scenario(FILE), &["--quiet"]);
    let b = run_into(&scenario(FILE), &["--quiet"]);
    for table in [
        "shares",
        "outcomes",
        "deadline_cost",
        "false_drops",
        "error_budget",
    ] {
        let x = std::fs::read(a.path().join(format!("{table}.csv"))).unwrap();
        let y = std::fs::read(b.path().join(format!("{table}.csv"))).unwrap();
        assert_eq!(x, y, "{table}.csv differs between two runs");
    }
}
