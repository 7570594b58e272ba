//! Micro-benchmarks of the engine core: event queue operations at growing numbers
//! of pending events, and one latency draw per model. Run with `cargo bench`;
//! CI only compiles them, unoptimised (`cargo build --benches`).

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use resim::engine::{EventQueue, Lane, Ticks, stream};
use resim::model::Latency;
use resim::sim::latency::Sampler;
use std::hint::black_box;

/// A queue holding `n` pending events spread over time.
fn filled(n: u64) -> EventQueue<u64> {
    let mut q = EventQueue::new();
    for i in 0..n {
        let _ = q.schedule(
            Ticks(i.wrapping_mul(2_654_435_761) % (n * 10 + 1)),
            Lane::Normal,
            i,
        );
    }
    q
}

fn queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue");
    for n in [100u64, 10_000, 1_000_000] {
        // One pop and one push at steady size n: the hold model of a DES.
        g.bench_with_input(BenchmarkId::new("hold", n), &n, |b, &n| {
            let mut q = filled(n);
            let mut t = 0u64;
            b.iter(|| {
                let (at, e) = q.pop().expect("non-empty");
                t = at.0 + 1 + (e % 97);
                let _ = q.schedule(Ticks(t), Lane::Normal, e);
            })
        });
        // The hold step plus a timeout scheduled and cancelled (a call answered in
        // time): the cancelled entry stays until it comes up (lazy cancellation),
        // so the steady state also pops the dead entries.
        g.bench_with_input(BenchmarkId::new("hold_schedule_cancel", n), &n, |b, &n| {
            let mut q = filled(n);
            b.iter(|| {
                let (at, e) = q.pop().expect("non-empty");
                let k = q.schedule(Ticks(at.0 + n * 5), Lane::Deadline, u64::MAX);
                let _ = q.schedule(Ticks(at.0 + 1 + (e % 97)), Lane::Normal, e);
                black_box(q.cancel(k))
            })
        });
    }
    // A constant delay (a service time, a timeout): through the heap, and through
    // a FIFO lane registered for it (EventQueue::add_fifo).
    for (name, lane) in [
        ("constant_delay_heap", false),
        ("constant_delay_fifo", true),
    ] {
        g.bench_function(name, |b| {
            let mut q = EventQueue::new();
            if lane {
                let _ = q.add_fifo(Ticks(1_000));
            }
            // one pending event per tick of the delay: the steady state
            for i in 0..1_000u64 {
                let _ = q.schedule(Ticks(i), Lane::Normal, i);
            }
            b.iter(|| {
                let (at, e) = q.pop().expect("non-empty");
                let _ = q.schedule(Ticks(at.0 + 1_000), Lane::Normal, e);
            })
        });
    }
    g.bench_function("fill_and_drain_10000", |b| {
        b.iter_batched(
            || (),
            |_| {
                let mut q = filled(10_000);
                while let Some(e) = q.pop() {
                    black_box(e);
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn latency(c: &mut Criterion) {
    let mut g = c.benchmark_group("latency_draw");
    let models = [
        ("constant", Latency::Constant(Ticks::from_ms(40.0))),
        (
            "cycle",
            Latency::Cycle {
                values: (1..=17).map(|v| Ticks::from_ms(v as f64)).collect(),
                random_start: false,
            },
        ),
        ("exponential", Latency::Exponential { mean_ms: 40.0 }),
        (
            "lognormal",
            Latency::LogNormal {
                mu: 6f64.ln(),
                sigma: 0.5,
            },
        ),
    ];
    for (name, model) in models {
        let mut rng = stream(1, 0, name);
        let mut s = Sampler::new(&model, &mut rng);
        g.bench_function(name, |b| b.iter(|| black_box(s.sample(&mut rng))));
    }
    g.finish();
}

criterion_group!(benches, queue, latency);
criterion_main!(benches);
