//! The engine does not allocate per request: a run of 10N requests makes about as
//! many heap allocations as a run of N. A counting `#[global_allocator]` applies to
//! a whole binary, so this is a test binary of its own, with one test (the harness
//! runs tests on parallel threads, which would mix their counts).
//!
//! What may still grow with a run is logarithmic: an order statistic's exact values
//! double their buffer up to 2^20 values and then turn into a histogram. A run that
//! allocated anything per request (a boxed event, a per-attempt `Vec`, a cloned
//! name) would add at least 9N allocations between the two sizes; the bound below
//! allows 0.01 per extra request.
//!
//! `cargo test --locked --test alloc -- --nocapture` prints the counts.

use resim::DrawAhead;
use resim::report::{Cell, Table};
use resim::scenario::{self, LoadOptions, Override};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system allocator, counting every allocation and reallocation.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed unchanged to the system allocator, whose contract
// is the same; the counter is an atomic that never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The counter is global: the tests of this file take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The most allocations one extra request may add, on average.
const PER_EXTRA_REQUEST: f64 = 0.01;

fn bench(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/bench")
        .join(file)
}

/// The requests the run table says were sent, over all compare rows.
fn requests_sent(tables: &[Table]) -> f64 {
    let run = tables
        .iter()
        .find(|t| t.name == "run")
        .expect("a run table");
    let col = run
        .headers
        .iter()
        .position(|h| h == "requests")
        .expect("a requests column");
    run.rows
        .iter()
        .map(|r| match &r[col] {
            Cell::Int(n) => *n as f64,
            Cell::Num(x) => *x,
            other => panic!("requests = {other:?}"),
        })
        .sum()
}

/// Loads `file` with `workload.requests = requests` and counts the allocations of
/// running it (every compare row, analyses and tables included; loading is not
/// counted). Returns (allocations, requests sent).
fn count(file: &Path, requests: u64, extra: &[&str], ahead: DrawAhead) -> (u64, f64) {
    let mut overrides = vec![Override::parse(&format!("workload.requests={requests}")).unwrap()];
    overrides.extend(extra.iter().map(|o| Override::parse(o).unwrap()));
    let opts = LoadOptions {
        overrides,
        max_rows: scenario::DEFAULT_MAX_ROWS,
        ..LoadOptions::default()
    };
    let s = scenario::load(file, &opts).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let tables = resim::run_scenario_traced(&s, false, None, ahead)
        .unwrap()
        .0
        .tables;
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    let sent = requests_sent(&tables);
    drop(tables);
    (after - before, sent)
}

/// (allocations at n, at 10n, extra allocations per extra request), after asserting
/// that the runs sent what they were asked to; `extra` overrides more keys.
fn growth(file: &str, n: u64, rows: f64, extra: &[&str], ahead: DrawAhead) -> (u64, u64, f64) {
    let file = bench(file);
    // Warm up: the thread pool and any lazily built statics are not the run's.
    count(&file, 10, extra, ahead);
    let (small, sent_small) = count(&file, n, extra, ahead);
    let (large, sent_large) = count(&file, 10 * n, extra, ahead);
    assert_eq!(sent_small, rows * n as f64, "{}", file.display());
    assert_eq!(sent_large, rows * 10.0 * n as f64, "{}", file.display());
    // The counter sees the run's allocations at all (a run builds its tables).
    assert!(small > 50, "{}: only {small} allocations", file.display());
    let per_extra = (large as f64 - small as f64) / (sent_large - sent_small);
    println!(
        "{} (drawing ahead {ahead:?}): {small} allocations at {n} requests a row, {large} at {}: {per_extra:.6} per extra request",
        file.display(),
        10 * n
    );
    (small, large, per_extra)
}

#[test]
fn allocations_per_request_stay_bounded_as_runs_grow() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Drawing where the draws are used, and ahead on helper threads (whose
    // chunks and channels are counted too: the allocator is global).
    for ahead in [DrawAhead::Off, DrawAhead::On] {
        // M1: one server, Poisson arrivals (one compare row).
        let (_, _, m1) = growth("m1-ladder-server.toml", 10_000, 1.0, &[], ahead);
        // M2: a plan calling three dependencies, with and without cancellation,
        // four rows.
        let (_, _, m2) = growth("m2-budget-chain.toml", 2_000, 4.0, &[], ahead);
        // M3: retries, per-attempt timeouts, a frontend holding its slot across
        // its own retried call, and a backend slowdown from 100 s to 110 s with
        // the time series it brings (one row). 60,000 first tries take 120 s, so
        // both runs pass through the retry storm. The windows are output rows,
        // as many as the run has seconds; one window longer than either run
        // keeps them out of the count.
        let (_, _, m3) = growth(
            "m3-retry-chain.toml",
            60_000,
            1.0,
            &["output.window_ms=100000000"],
            ahead,
        );
        assert!(
            m1 < PER_EXTRA_REQUEST,
            "M1 ({ahead:?}) allocates {m1:.4} times per extra request"
        );
        assert!(
            m2 < PER_EXTRA_REQUEST,
            "M2 ({ahead:?}) allocates {m2:.4} times per extra request"
        );
        assert!(
            m3 < PER_EXTRA_REQUEST,
            "M3 ({ahead:?}) allocates {m3:.4} times per extra first try"
        );
    }
}

/// Retries and hedges allocate nothing per attempt beyond the call's slab slot:
/// a plan calling a store through a jittered retry with a ratio budget and a
/// breaker, and another through a hedge, at n and 10n requests.
#[test]
fn policy_attempts_allocate_nothing_as_runs_grow() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = |requests: u64| -> u64 {
        let text = format!(
            r#"
[scenario]
name = "alloc"
[policies.retry]
timeout_ms = 8
retry = {{ max_attempts = 3, backoff = {{ kind = "full_jitter", base_ms = 1, cap_ms = 5 }}, budget = {{ kind = "ratio", max = 0.5, window_ms = 1000 }} }}
breaker = {{ min_calls = 50, failure_rate = 0.9 }}
[policies.hedge]
hedge = {{ delay_ms = 4, max_attempts = 3 }}
[services.api]
routes = ["/x"]
[services.api.handler]
type = "plan"
budget = "none"
cancellation = true
branches = [{{ name = "a", calls = [{{ to = "store", call_policy = "retry" }}] }},
            {{ name = "b", calls = [{{ to = "store", call_policy = "hedge" }}] }}]
[dependencies.store]
latency = {{ exponential = {{ mean_ms = 5 }} }}
error_rate = 0.2
[workload]
type = "open"
rate_rps = 100
requests = {requests}
route = "/x"
"#
        );
        let s = scenario::load_str(&text, Path::new("alloc.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let before = ALLOCATIONS.load(Ordering::SeqCst);
        let r = resim::sim::run(&s.rows[0].model, 0).unwrap_or_else(|e| panic!("{e}"));
        let after = ALLOCATIONS.load(Ordering::SeqCst);
        assert!(r.calls.iter().any(|c| c.retries > 0 && c.hedges == 0));
        assert!(r.calls.iter().any(|c| c.hedges > 0));
        drop(r);
        after - before
    };
    run(10);
    let (small, large) = (run(5_000), run(50_000));
    // over 45,000 more requests (each a call through each policy): windows and slabs reach
    // their size early, so the growth is a few doublings at most
    let per_extra = (large as f64 - small as f64) / 45_000.0;
    println!("policies: {small} allocations at 5,000 requests, {large} at 50,000");
    assert!(
        per_extra < PER_EXTRA_REQUEST,
        "{per_extra:.4} allocations per extra request"
    );
}
