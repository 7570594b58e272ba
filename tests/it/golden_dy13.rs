//! DY13 (seed 002, rate limiting placement and keys): every number of the digest,
//! asserted from the CSV files the bundled scenarios write; then the same scenarios
//! changed from outside (`--set`, temp files) to show that moving a limiter,
//! changing a prefix or key, or adding a limiter needs no code change.

use crate::common::*;
use predicates::prelude::*;
use std::path::Path;

const PLACEMENT: &str = "scenarios/dy13-limiter-placement.toml";
const KEYS: &str = "scenarios/dy13-limiter-keys.toml";
const TWO: &str = "scenarios/dy13-two-limiters.toml";
const ALGORITHMS: &str = "scenarios/dy13-algorithms.toml";

/// Runs `file` with `--set` overrides and returns the output folder.
fn run_with(file: &Path, sets: &[&str]) -> tempfile::TempDir {
    let mut args = vec!["--quiet"];
    for s in sets {
        args.extend(["--set", s]);
    }
    run_into(file, &args)
}

fn read(dir: &tempfile::TempDir, table: &str) -> Csv {
    Csv::read(&dir.path().join(format!("{table}.csv")))
}

fn cell<'a>(row: &'a std::collections::HashMap<String, String>, col: &str) -> &'a str {
    row.get(col)
        .unwrap_or_else(|| panic!("no column {col} in {row:?}"))
}

/// Coverage rows as (route, access, gateway, middleware) cells, in file order.
fn coverage_rows(csv: &Csv, limiters: &[&str]) -> Vec<Vec<String>> {
    csv.rows
        .iter()
        .map(|r| {
            let mut v = vec![cell(r, "route").to_string(), cell(r, "access").to_string()];
            v.extend(limiters.iter().map(|l| cell(r, l).to_string()));
            v
        })
        .collect()
}

fn strings(rows: &[[&str; 4]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

/// The seed's coverage table: gateway at prefix /odunc/, middleware on loan.
const SEED_COVERAGE: [[&str; 4]; 8] = [
    ["/odunc/al", "gateway", "counted", "counted"],
    ["/odunc/al", "direct", "skipped", "counted"],
    ["/odunc/liste", "gateway", "counted", "counted"],
    ["/odunc/liste", "direct", "skipped", "counted"],
    ["/odunc-toplu/liste", "gateway", "skipped", "counted"],
    ["/odunc-toplu/liste", "direct", "skipped", "counted"],
    ["/katalog/ara", "gateway", "skipped", "skipped"],
    ["/katalog/ara", "direct", "skipped", "skipped"],
];

const LIMITERS: [&str; 2] = ["gateway-limiter", "middleware-limiter"];

#[test]
fn coverage_matches_the_seed_table_and_totals() {
    let dir = run_with(&scenario(PLACEMENT), &[]);
    let cov = read(&dir, "coverage");
    assert_eq!(
        cov.headers,
        ["route", "access", "gateway-limiter", "middleware-limiter"]
    );
    assert_eq!(coverage_rows(&cov, &LIMITERS), strings(&SEED_COVERAGE));
    let totals = read(&dir, "coverage_totals");
    assert_eq!(
        totals.headers,
        [
            "pairs",
            "gateway-limiter",
            "middleware-limiter",
            "unlimited"
        ]
    );
    let t = &totals.rows[0];
    // 8 pairs: the gateway sees 2, the middleware 6, 2 are outside both
    assert_eq!(
        [
            num(t, "pairs"),
            num(t, "gateway-limiter"),
            num(t, "middleware-limiter"),
            num(t, "unlimited")
        ],
        [8., 2., 6., 2.]
    );
    // unreachable limits: nothing rejected, every probe answered
    let rejects = read(&dir, "rejects");
    let all = rejects.row(&[("member", "(all)")]);
    assert_eq!(
        [
            num(all, "requests"),
            num(all, "admitted"),
            num(all, "rejected")
        ],
        [8., 8., 0.]
    );
}

/// (key, buckets, ceiling, passed, rejected, [(passed, rejected) of u1..u5])
type KeyRow = (&'static str, f64, f64, f64, f64, [(f64, f64); 5]);

const SEED_KEYS: [KeyRow; 4] = [
    (
        "constant",
        1.,
        20.,
        20.,
        50.,
        [(0., 12.), (0., 8.), (0., 4.), (0., 6.), (20., 20.)],
    ),
    (
        "client",
        3.,
        60.,
        46.,
        24.,
        [(12., 0.), (8., 0.), (0., 4.), (6., 0.), (20., 20.)],
    ),
    (
        "member",
        5.,
        100.,
        50.,
        20.,
        [(12., 0.), (8., 0.), (4., 0.), (6., 0.), (20., 20.)],
    ),
    (
        "client+route",
        5.,
        100.,
        50.,
        20.,
        [(12., 0.), (8., 0.), (4., 0.), (6., 0.), (20., 20.)],
    ),
];

#[test]
fn keys_match_the_seed_table_and_the_dy14_projection() {
    let dir = run_with(&scenario(KEYS), &[]);
    let lim = read(&dir, "limiters");
    assert_eq!(
        lim.headers,
        [
            "key",
            "limiter",
            "bucket_key",
            "buckets",
            "ceiling",
            "passed",
            "rejected",
            "projected_ceiling"
        ]
    );
    let members = read(&dir, "members");
    assert_eq!(
        members.headers,
        ["key", "limiter", "member", "passed", "rejected"]
    );
    let keys: Vec<&str> = lim.rows.iter().map(|r| cell(r, "key")).collect();
    // the compare axis shows the empty key list as written; the bucket key
    // names it `constant`
    assert_eq!(keys, ["[]", "client", "member", "client+route"]);
    let axis = |key: &'static str| if key == "constant" { "[]" } else { key };
    for (bucket_key, buckets, ceiling, passed, rejected, per_member) in SEED_KEYS {
        let key = axis(bucket_key);
        let r = lim.row(&[("key", key)]);
        assert_eq!(cell(r, "bucket_key"), bucket_key);
        assert_eq!(
            [
                num(r, "buckets"),
                num(r, "ceiling"),
                num(r, "passed"),
                num(r, "rejected")
            ],
            [buckets, ceiling, passed, rejected],
            "key {key}"
        );
        for (i, (p, rej)) in per_member.iter().enumerate() {
            let member = format!("u{}", i + 1);
            let m = members.row(&[("key", key), ("member", &member)]);
            assert_eq!(
                [num(m, "passed"), num(m, "rejected")],
                [*p, *rej],
                "key {key}, {member}"
            );
        }
        assert_eq!(members.select(&[("key", key)]).len(), 5);
        // 70 requests, every one counted
        assert_eq!(passed + rejected, 70.);
    }
    // DY14: 20 per bucket x 5 buckets x 5000 active / 5 members seen
    assert_eq!(
        num(lim.row(&[("key", "member")]), "projected_ceiling"),
        100000.
    );
    for key in ["[]", "client", "client+route"] {
        assert_eq!(cell(lim.row(&[("key", key)]), "projected_ceiling"), "");
    }
}

#[test]
fn two_limiters_reject_per_member_and_per_reason_and_order_matters() {
    let dir = run_with(&scenario(TWO), &[]);
    let rejects = read(&dir, "rejects");
    assert_eq!(
        rejects.headers,
        [
            "middleware",
            "member",
            "requests",
            "admitted",
            "rejected",
            "rejected_by_global",
            "rejected_by_per-member",
            "not_found"
        ]
    );
    // (middleware, member, admitted, by global, by per-member), hand-computed on
    // the DY13 plan: global 50 in one bucket, per-member 20
    let expect = [
        ("global", "u1", 10., 2., 0.),
        ("global", "u2", 0., 8., 0.),
        ("global", "u5", 40., 0., 0.),
        ("global", "(all)", 50., 20., 0.),
        ("per-member", "u5", 20., 0., 20.),
        ("per-member", "(all)", 50., 0., 20.),
        // both, per-member first: only the batch job is limited, the global
        // bucket takes exactly its 50
        ("per-member+global", "u1", 12., 0., 0.),
        ("per-member+global", "u3", 4., 0., 0.),
        ("per-member+global", "u5", 20., 0., 20.),
        ("per-member+global", "(all)", 50., 0., 20.),
        // both, global first: the batch job's rejected surplus used the global
        // bucket, so members behind it are refused: 30 pass instead of 50
        ("global+per-member", "u1", 10., 2., 0.),
        ("global+per-member", "u4", 0., 6., 0.),
        ("global+per-member", "u5", 20., 0., 20.),
        ("global+per-member", "(all)", 30., 20., 20.),
    ];
    for (mw, member, admitted, by_global, by_member) in expect {
        let r = rejects.row(&[("middleware", mw), ("member", member)]);
        assert_eq!(
            [
                num(r, "admitted"),
                num(r, "rejected_by_global"),
                num(r, "rejected_by_per-member"),
                num(r, "rejected"),
            ],
            [admitted, by_global, by_member, by_global + by_member],
            "{mw} {member}"
        );
    }
    // the per-member limiter alone would allow 100000 per window at DY14's size;
    // the global one holds the total at 50
    let lim = read(&dir, "limiters");
    let pm = lim.row(&[
        ("middleware", "per-member+global"),
        ("limiter", "per-member"),
    ]);
    assert_eq!(num(pm, "projected_ceiling"), 100000.);
    let g = lim.row(&[("middleware", "per-member+global"), ("limiter", "global")]);
    assert_eq!((num(g, "ceiling"), num(g, "passed")), (50., 50.));
}

#[test]
fn fixed_window_passes_twice_its_limit_at_the_boundary_and_the_others_do_not() {
    let dir = run_with(&scenario(ALGORITHMS), &[]);
    let bursts = read(&dir, "bursts");
    // (algorithm variant, passed, peak within a window) in reject mode, limit 10
    let expect = [
        ("fixed-window", 20., 20.),
        ("sliding-log", 10., 10.),
        ("sliding-counter", 10., 10.),
        ("token-bucket", 10., 10.),
        ("token-bucket-discrete", 11., 11.),
        ("gcra", 10., 10.),
    ];
    for (variant, passed, peak) in expect {
        let r = bursts.row(&[("variant", variant), ("mode", "reject")]);
        assert_eq!(
            [num(r, "passed"), num(r, "peak_passed_in_window")],
            [passed, peak],
            "{variant}"
        );
    }
    // throttle (hold 200 ms, then reject): the sliding log would make the second
    // group wait until 1950 ms, so its first four are each held 200 ms and rejected
    // (the closed script sends the next 5 ms after each 429: 1000, 1205, 1410,
    // 1615); the fifth, sent at 1820, is held 130 ms; the rest pass at once
    let log = bursts.row(&[("variant", "sliding-log"), ("mode", "throttle")]);
    assert_eq!(
        [
            num(log, "passed"),
            num(log, "rejected"),
            num(log, "delayed"),
            num(log, "max_delay_ms")
        ],
        [16., 4., 1., 130.]
    );
    // the token bucket paces the second group out, 50 ms for the first held
    // request and 95 ms for each later one
    let tb = bursts.row(&[("variant", "token-bucket"), ("mode", "throttle")]);
    assert_eq!(
        [
            num(tb, "passed"),
            num(tb, "delayed"),
            num(tb, "mean_delay_ms"),
            num(tb, "max_delay_ms")
        ],
        [20., 10., 90.5, 95.]
    );
}

// ---- the same scenarios changed from outside: no code change ----

/// Coverage totals as [pairs, <limiters>..., unlimited].
fn totals(dir: &tempfile::TempDir, limiters: &[&str]) -> Vec<f64> {
    let t = read(dir, "coverage_totals");
    let r = &t.rows[0];
    let mut v = vec![num(r, "pairs")];
    v.extend(limiters.iter().map(|l| num(r, l)));
    v.push(num(r, "unlimited"));
    v
}

#[test]
fn a_prefix_that_matches_the_later_route_widens_the_gateway() {
    // `/odunc` (no slash) also matches /odunc-toplu/liste
    let dir = run_with(&scenario(PLACEMENT), &["gateway.rules.0.prefix=/odunc"]);
    assert_eq!(totals(&dir, &LIMITERS), [8., 3., 6., 2.]);
    let cov = read(&dir, "coverage");
    let r = cov.row(&[("route", "/odunc-toplu/liste"), ("access", "gateway")]);
    assert_eq!(cell(r, "gateway-limiter"), "counted");
}

#[test]
fn moving_the_gateway_limiter_into_the_middleware() {
    let dir = run_with(
        &scenario(PLACEMENT),
        &[
            "gateway.rules.0.limiters=[]",
            r#"services.loan.middleware=["gateway-limiter"]"#,
        ],
    );
    // now it sees every loan pair, and the unplaced one sees nothing
    assert_eq!(totals(&dir, &LIMITERS), [8., 6., 0., 2.]);
}

#[test]
fn adding_a_limiter_to_the_catalog_closes_the_last_gap() {
    let dir = run_with(
        &scenario(PLACEMENT),
        &[
            "limiters.catalog-limiter={ limit = 1000000000, window_ms = 60000 }",
            r#"services.catalog.middleware=["catalog-limiter"]"#,
        ],
    );
    let cov = read(&dir, "coverage");
    assert_eq!(
        cov.headers,
        [
            "route",
            "access",
            "gateway-limiter",
            "middleware-limiter",
            "catalog-limiter"
        ]
    );
    for access in ["gateway", "direct"] {
        let r = cov.row(&[("route", "/katalog/ara"), ("access", access)]);
        assert_eq!(cell(r, "catalog-limiter"), "counted");
    }
    assert_eq!(
        totals(
            &dir,
            &["gateway-limiter", "middleware-limiter", "catalog-limiter"]
        ),
        [8., 2., 6., 2., 0.]
    );
}

#[test]
fn a_route_key_makes_one_bucket_per_route() {
    // hand-computed: /odunc/liste gets toplu 40, then u1 4, u2 3, u3 1, web 6 and
    // is full after 20; /odunc/al and /odunc-toplu/liste never fill
    let dir = run_with(
        &scenario(KEYS),
        &[r#"compare."limiters.loan-limiter.key"=[["route"]]"#],
    );
    let lim = read(&dir, "limiters");
    let r = lim.row(&[("key", "route")]);
    assert_eq!(
        [
            num(r, "buckets"),
            num(r, "ceiling"),
            num(r, "passed"),
            num(r, "rejected")
        ],
        [3., 60., 36., 34.]
    );
    assert_eq!(cell(r, "projected_ceiling"), "", "no member in the key");
    let members = read(&dir, "members");
    let got: Vec<(String, f64, f64)> = members
        .rows
        .iter()
        .map(|m| {
            (
                cell(m, "member").to_string(),
                num(m, "passed"),
                num(m, "rejected"),
            )
        })
        .collect();
    let want = [
        ("u1", 8., 4.),
        ("u2", 5., 3.),
        ("u3", 3., 1.),
        ("u4", 0., 6.),
        ("u5", 20., 20.),
    ];
    let want: Vec<(String, f64, f64)> = want
        .iter()
        .map(|(m, p, r)| (m.to_string(), *p, *r))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_new_topology_with_stacked_gateway_rules_and_a_404_route() {
    // Three services, two gateway rules that both match /shop/cart, a throttling
    // limiter, and a route no service owns: written as a file, no code involved.
    let (_d, path) = file_with(
        r#"
[scenario]
name = "stacked rules"
[gateway]
rules = [
  { prefix = "/shop", limiters = ["edge"] },
  { prefix = "/shop/cart", limiters = ["cart", "edge"] },
]
[services.shop]
routes = ["/shop/cart", "/shop/list"]
middleware = ["per-client"]
[services.auth]
routes = ["/auth"]
[limiters.edge]
limit = 1000
window_ms = 1000
[limiters.cart]
algorithm = "gcra"
limit = 1000
window_ms = 1000
[limiters.per-client]
algorithm = "sliding-log"
key = ["client"]
limit = 1000
window_ms = 1000
mode = "throttle"
max_delay_ms = 10
[workload]
type = "probe"
client = "app"
member = "m1"
unowned_routes = ["/shop/old"]
"#,
    );
    let dir = run_into(&path, &["--quiet"]);
    let cov = read(&dir, "coverage");
    let rows = coverage_rows(&cov, &["edge", "cart", "per-client"]);
    let want: Vec<Vec<String>> = [
        ["/shop/cart", "gateway", "counted", "counted", "counted"],
        ["/shop/cart", "direct", "skipped", "skipped", "counted"],
        ["/shop/list", "gateway", "counted", "skipped", "counted"],
        ["/shop/list", "direct", "skipped", "skipped", "counted"],
        ["/auth", "gateway", "skipped", "skipped", "skipped"],
        ["/auth", "direct", "skipped", "skipped", "skipped"],
        ["/shop/old", "gateway", "skipped", "skipped", "skipped"],
        ["/shop/old", "direct", "skipped", "skipped", "skipped"],
    ]
    .iter()
    .map(|r| r.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(rows, want);
    // edge is in both matching rules but counts /shop/cart once
    let lim = read(&dir, "limiters");
    assert_eq!(num(lim.row(&[("limiter", "edge")]), "passed"), 2.);
    let rejects = read(&dir, "rejects");
    let all = rejects.row(&[("member", "(all)")]);
    assert_eq!(
        [
            num(all, "requests"),
            num(all, "admitted"),
            num(all, "not_found")
        ],
        [8., 6., 2.]
    );
}

#[test]
fn an_unknown_route_is_an_error_that_names_the_way_to_send_404s() {
    resim()
        .args(["check"])
        .arg(scenario(KEYS))
        .args(["--set", r#"workload.groups.0.routes=["/odunc/lste"]"#])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("workload.groups.0.routes.0"))
        .stderr(predicate::str::contains("did you mean `/odunc/liste`"))
        .stderr(predicate::str::contains("workload.unowned_routes"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn limiter_mistakes_are_errors_that_name_the_key() {
    let check = |set: &str, path: &str, says: &str| {
        resim()
            .args(["check"])
            .arg(scenario(PLACEMENT))
            .args(["--set", set])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(path))
            .stderr(predicate::str::contains(says))
            .stderr(predicate::str::contains("panicked").not());
    };
    check(
        r#"limiters.gateway-limiter.key=["member", "member"]"#,
        "limiters.gateway-limiter.key.1",
        "already in the key",
    );
    check(
        r#"services.loan.middleware=["midleware-limiter"]"#,
        "services.loan.middleware.0",
        "did you mean `middleware-limiter`",
    );
    check(
        "limiters.gateway-limiter.overflow=later",
        "limiters.gateway-limiter.overflow",
        "`hold`, `reject-now`",
    );
    check(
        r#"workload.unowned_routes=["/odunc/al"]"#,
        "workload.unowned_routes.0",
        "is owned by a service",
    );
}
