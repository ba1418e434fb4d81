//! The request counters every answer adds to (`Metrics::record`: requests by route and
//! status, the latency histogram), from one thread and from several at once: on a
//! many-core server every worker thread records every request it answers, and counters
//! shared by all of them would move one cache line from core to core on each
//! (issue 20, `docs/PERFORMANCE.md`, "Metrics on many cores").
//!
//! `cargo bench --bench metrics`. `metrics/record/threads=N`: N threads each record
//! the same route and status as fast as they can; the figure is the time for one
//! record on each thread (N records in all happen in that time).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use tldsnap::http::metrics::Metrics;

fn bench(c: &mut Criterion) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = vec![1];
    if cores > 1 {
        threads.push(cores);
    }
    for n in threads {
        let metrics = Metrics::new();
        c.bench_function(&format!("metrics/record/threads={n}"), |b| {
            b.iter_custom(|iters| {
                let start = std::sync::Barrier::new(n);
                let took = std::sync::Mutex::new(Duration::ZERO);
                std::thread::scope(|s| {
                    for _ in 0..n {
                        s.spawn(|| {
                            start.wait();
                            let t = Instant::now();
                            for _ in 0..iters {
                                metrics.record(
                                    black_box(Some(0)),
                                    black_box(200),
                                    black_box(Duration::from_micros(40)),
                                );
                            }
                            let t = t.elapsed();
                            let mut took = took.lock().unwrap();
                            *took = (*took).max(t);
                        });
                    }
                });
                took.into_inner().unwrap()
            });
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
