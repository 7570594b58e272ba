//! The bundled scenarios, built into the binary: `resim new` copies one as a
//! starting point wherever resim was installed (`cargo install` leaves the
//! repository's `scenarios/` folder behind). A test keeps this list equal to the
//! folder, byte for byte.

/// Every file under `scenarios/` (scenarios and the data files they read), by
/// its path below `scenarios/`.
pub const FILES: &[(&str, &str)] = &[
    (
        "adaptive-limits.toml",
        include_str!("../../scenarios/adaptive-limits.toml"),
    ),
    (
        "adaptive-per-pod.toml",
        include_str!("../../scenarios/adaptive-per-pod.toml"),
    ),
    (
        "adaptive-throttling.toml",
        include_str!("../../scenarios/adaptive-throttling.toml"),
    ),
    (
        "ay10-montecarlo.toml",
        include_str!("../../scenarios/ay10-montecarlo.toml"),
    ),
    (
        "ay10-open-arrivals.toml",
        include_str!("../../scenarios/ay10-open-arrivals.toml"),
    ),
    (
        "ay10-tariff-slowdown.toml",
        include_str!("../../scenarios/ay10-tariff-slowdown.toml"),
    ),
    (
        "balancers-envoy-least-request.toml",
        include_str!("../../scenarios/balancers-envoy-least-request.toml"),
    ),
    (
        "balancers-haproxy-leastconn.toml",
        include_str!("../../scenarios/balancers-haproxy-leastconn.toml"),
    ),
    (
        "balancers-haproxy-maxconn.toml",
        include_str!("../../scenarios/balancers-haproxy-maxconn.toml"),
    ),
    (
        "balancers-haproxy-random.toml",
        include_str!("../../scenarios/balancers-haproxy-random.toml"),
    ),
    (
        "balancers-linkerd.toml",
        include_str!("../../scenarios/balancers-linkerd.toml"),
    ),
    (
        "breaker-recovery.toml",
        include_str!("../../scenarios/breaker-recovery.toml"),
    ),
    (
        "breaker-shards.toml",
        include_str!("../../scenarios/breaker-shards.toml"),
    ),
    (
        "checkout-composition.toml",
        include_str!("../../scenarios/checkout-composition.toml"),
    ),
    (
        "circuit-breaker.toml",
        include_str!("../../scenarios/circuit-breaker.toml"),
    ),
    (
        "dy13-algorithms.toml",
        include_str!("../../scenarios/dy13-algorithms.toml"),
    ),
    (
        "dy13-limiter-keys.toml",
        include_str!("../../scenarios/dy13-limiter-keys.toml"),
    ),
    (
        "dy13-limiter-placement.toml",
        include_str!("../../scenarios/dy13-limiter-placement.toml"),
    ),
    (
        "dy13-montecarlo.toml",
        include_str!("../../scenarios/dy13-montecarlo.toml"),
    ),
    (
        "dy13-two-limiters.toml",
        include_str!("../../scenarios/dy13-two-limiters.toml"),
    ),
    (
        "fanout-tail.toml",
        include_str!("../../scenarios/fanout-tail.toml"),
    ),
    (
        "gc-pauses.toml",
        include_str!("../../scenarios/gc-pauses.toml"),
    ),
    (
        "goodput-collapse.toml",
        include_str!("../../scenarios/goodput-collapse.toml"),
    ),
    ("hedging.toml", include_str!("../../scenarios/hedging.toml")),
    (
        "io22-abandon.toml",
        include_str!("../../scenarios/io22-abandon.toml"),
    ),
    (
        "io22-capacity-ladder.toml",
        include_str!("../../scenarios/io22-capacity-ladder.toml"),
    ),
    (
        "io22-montecarlo.toml",
        include_str!("../../scenarios/io22-montecarlo.toml"),
    ),
    (
        "io22-open-ladder.toml",
        include_str!("../../scenarios/io22-open-ladder.toml"),
    ),
    (
        "io22-queue-length.toml",
        include_str!("../../scenarios/io22-queue-length.toml"),
    ),
    (
        "lifo-after-spike.toml",
        include_str!("../../scenarios/lifo-after-spike.toml"),
    ),
    (
        "metastable-band.toml",
        include_str!("../../scenarios/metastable-band.toml"),
    ),
    (
        "noisy-neighbour.toml",
        include_str!("../../scenarios/noisy-neighbour.toml"),
    ),
    (
        "outlier-ejection.toml",
        include_str!("../../scenarios/outlier-ejection.toml"),
    ),
    (
        "replicas.toml",
        include_str!("../../scenarios/replicas.toml"),
    ),
    (
        "retry-amplification.toml",
        include_str!("../../scenarios/retry-amplification.toml"),
    ),
    (
        "retry-clients.toml",
        include_str!("../../scenarios/retry-clients.toml"),
    ),
    (
        "retry-budgets.toml",
        include_str!("../../scenarios/retry-budgets.toml"),
    ),
    (
        "retry-policies.toml",
        include_str!("../../scenarios/retry-policies.toml"),
    ),
    (
        "retry-storm.toml",
        include_str!("../../scenarios/retry-storm.toml"),
    ),
    (
        "supermarket.toml",
        include_str!("../../scenarios/supermarket.toml"),
    ),
    (
        "three-tier-deadline.toml",
        include_str!("../../scenarios/three-tier-deadline.toml"),
    ),
    ("warmup.toml", include_str!("../../scenarios/warmup.toml")),
    (
        "examples/ay10-three-call-pricing.toml",
        include_str!("../../scenarios/examples/ay10-three-call-pricing.toml"),
    ),
    (
        "examples/measured-latencies.toml",
        include_str!("../../scenarios/examples/measured-latencies.toml"),
    ),
    (
        "examples/starter.toml",
        include_str!("../../scenarios/examples/starter.toml"),
    ),
    (
        "examples/tariff-latencies.csv",
        include_str!("../../scenarios/examples/tariff-latencies.csv"),
    ),
    (
        "examples/tune-deadline-retries.toml",
        include_str!("../../scenarios/examples/tune-deadline-retries.toml"),
    ),
    (
        "bench/m1-ladder-server.toml",
        include_str!("../../scenarios/bench/m1-ladder-server.toml"),
    ),
    (
        "bench/m2-budget-chain.toml",
        include_str!("../../scenarios/bench/m2-budget-chain.toml"),
    ),
    (
        "bench/m3-retry-chain.toml",
        include_str!("../../scenarios/bench/m3-retry-chain.toml"),
    ),
];

/// The bundled file at `rel` (below `scenarios/`), if there is one.
pub fn file(rel: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == rel).map(|(_, text)| *text)
}

/// The bundled scenario `name`: a path below `scenarios/` with or without
/// `.toml` (`retry-storm`, `examples/starter`, `bench/m3-retry-chain.toml`), or
/// a file name alone when only one folder has it. Its path and text.
pub fn scenario(name: &str) -> Option<(&'static str, &'static str)> {
    let name = name.strip_prefix("scenarios/").unwrap_or(name);
    let with = if name.ends_with(".toml") {
        name.to_string()
    } else {
        format!("{name}.toml")
    };
    FILES
        .iter()
        .find(|(p, _)| *p == with)
        .or_else(|| {
            let mut by_file = FILES
                .iter()
                .filter(|(p, _)| p.rsplit('/').next() == Some(with.as_str()));
            match (by_file.next(), by_file.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            }
        })
        .copied()
}

/// The bundled scenarios' paths (below `scenarios/`, without `.toml`).
pub fn names() -> Vec<&'static str> {
    FILES
        .iter()
        .filter_map(|(p, _)| p.strip_suffix(".toml"))
        .collect()
}
