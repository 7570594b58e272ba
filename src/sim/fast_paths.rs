//! The switch behind the fast paths that leave an event out, or a guard's run
//! (docs/performance.md): a call's timer that cannot fire, a completion that
//! would be cancelled, and the held-work check every 1,024 / B events rather
//! than on every one. Outside the library's own tests the switch is the
//! constant `true` and costs nothing; the tests turn it off to compare a run
//! with the slow way each path stands for.

#[cfg(not(test))]
#[inline(always)]
pub(super) fn on() -> bool {
    true
}

#[cfg(test)]
thread_local! {
    /// Whether this test thread runs the slow way.
    static SLOW: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
pub(super) fn on() -> bool {
    !SLOW.with(std::cell::Cell::get)
}

#[cfg(test)]
mod tests {
    use super::SLOW;
    use crate::sim::world::World;
    use rayon::prelude::*;
    use std::path::Path;

    /// One run of `model`, the fast or the slow way: its result, as its debug
    /// text (every figure, every sample), and how many events it scheduled.
    fn run(model: &crate::model::Model, slow: bool) -> (String, u64) {
        SLOW.with(|s| s.set(slow));
        let mut world = World::new(model, 0);
        let ran = world.start().and_then(|()| world.run_loop());
        let scheduled = world.take_seq();
        SLOW.with(|s| s.set(false));
        let text = match ran {
            Ok(()) => format!("{:?}", world.finish_run()),
            Err(e) => format!("error: {e}"),
        };
        (text, scheduled)
    }

    /// Every row of every bundled scenario (the benchmark models aside: the
    /// same parts, larger; and one more, below) gives the same result the fast
    /// and the slow way:
    /// with every call's timer scheduled, every cancellable completion
    /// scheduled, and the held work checked on every event. The slow way
    /// schedules more events where a fast path left one out, and does in the
    /// scenarios with deadlines.
    #[test]
    fn the_fast_paths_give_what_the_slow_way_gives() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["scenarios", "scenarios/examples"] {
            for entry in std::fs::read_dir(root.join(dir)).expect("the scenarios folder reads") {
                let path = entry.expect("an entry").path();
                // (supermarket.toml: no call, no deadline, and the longest
                // run, most of this test's time in a debug build)
                if path.extension().is_some_and(|e| e == "toml")
                    && !path.ends_with("supermarket.toml")
                {
                    files.push(path);
                }
            }
        }
        files.sort();
        assert!(files.len() > 30, "the bundled scenarios: {}", files.len());
        let mut models = Vec::new();
        for file in &files {
            let opts = crate::scenario::LoadOptions::default();
            let scenario = crate::scenario::load(file, &opts)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let stem = file.file_stem().expect("a file name").to_string_lossy();
            for row in scenario.rows {
                models.push((format!("{stem} ({})", row.labels.join(", ")), row.model));
            }
        }
        let rows = models.len();
        // each row on one thread of the pool: the switch is the thread's own
        let fewer: Vec<String> = models
            .par_iter()
            .filter_map(|(name, model)| {
                let (fast, fast_events) = run(model, false);
                let (slow, slow_events) = run(model, true);
                assert!(fast == slow, "{name}: the fast paths change the result");
                assert!(slow_events >= fast_events, "{name}");
                (slow_events > fast_events).then(|| name.clone())
            })
            .collect();
        eprintln!("{} of {rows} rows leave events out: {fewer:?}", fewer.len());
        assert!(rows > 100, "{rows} rows compared");
        // the seed's budget tables, a chain of deadlines, hedges with cancellation
        for seed in [
            "ay10-tariff-slowdown",
            "three-tier-deadline",
            "fanout-tail (hedged)",
        ] {
            assert!(
                fewer.iter().any(|n| n.contains(seed)),
                "{seed}: the fast paths leave events out ({} rows do)",
                fewer.len()
            );
        }
    }
}
