//! Engine benchmarks: build, open and every query, at the seed's scale (S) and 10x (L).
//!
//! Each query is measured beside a baseline in the same run: copying a body of the same
//! length into the same kind of buffer (`baseline_copy`), the floor of any server that
//! answers with those bytes. Quote ratios, not absolute times: this machine is shared.
//!
//! `cargo bench --bench engine` runs everything; `TLDSNAP_BENCH_SIZES=S` skips L (the L
//! source takes ~10 s to generate and build). Criterion filters work as usual:
//! `cargo bench --bench engine -- query/cheapest`.

#[path = "../tools/synth/gen.rs"]
mod synth;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use tldsnap::build::{BuildOptions, build};
use tldsnap::query::{
    self, CatalogueRequest, CatalogueSort, CheapestRequest, HistoryRequest, OverviewRequest,
    PricesRequest, RegistrarRequest, RegistrarsRequest, Shape,
};
use tldsnap::snapshot::{Opening, Snapshot};
use tldsnap::source::{self, Source};

struct Size {
    name: &'static str,
    source: Source,
    path: PathBuf,
}

fn sizes() -> Vec<Size> {
    let wanted = std::env::var("TLDSNAP_BENCH_SIZES").unwrap_or_else(|_| "S,L".into());
    let mut out = Vec::new();
    for (name, cfg) in [("S", synth::Config::small()), ("L", synth::Config::large())] {
        if !wanted.split(',').any(|w| w.eq_ignore_ascii_case(name)) {
            continue;
        }
        let dir = std::env::temp_dir().join(format!("tldsnap-bench-{name}"));
        let t = Instant::now();
        synth::write_source(&cfg, &dir).expect("generate");
        let source = source::read_dir(&dir).expect("read generated source");
        let (bytes, report) = build(&source, &BuildOptions::default()).expect("build");
        let path = dir.join("bench.tldsnap");
        tldsnap::build::write_atomic(&path, &bytes).expect("write");
        eprintln!(
            "{name}: {} TLDs x {} registrars, {} offers, snapshot {:.1} MB (prepared in {:.1?})",
            report.tlds,
            report.registrars,
            report.offers,
            report.bytes as f64 / 1e6,
            t.elapsed()
        );
        out.push(Size { name, source, path });
    }
    out
}

fn benches(c: &mut Criterion) {
    let sizes = sizes();

    let mut g = c.benchmark_group("build");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for s in &sizes {
        g.bench_function(BenchmarkId::from_parameter(s.name), |b| {
            b.iter(|| black_box(build(&s.source, &BuildOptions::default()).expect("build")))
        });
    }
    g.finish();

    // Opening is bounded below by one pass over the bytes (the content hash must read
    // every byte): `hash_only` measures that pass alone on the same file, for the ratio.
    let mut g = c.benchmark_group("open");
    g.sample_size(20);
    for s in &sizes {
        g.bench_function(BenchmarkId::from_parameter(s.name), |b| {
            b.iter(|| black_box(Snapshot::open(&s.path).expect("open")))
        });
        let bytes = std::fs::read(&s.path).expect("read");
        g.bench_function(BenchmarkId::new("hash_only", s.name), |b| {
            b.iter(|| black_box(tldsnap::snapshot::content_hash(black_box(&bytes[64..]))))
        });
    }
    // A reload in steps (`Opening`, as `Store::reload_async` runs it between requests):
    // each step after the hash that does not itself step (bytecheck, then the four
    // checks of `PIECES`), and one step of the TLDs' text, on the shipped data too.
    let real = std::env::temp_dir().join("tldsnap-bench-real.tldsnap");
    let shipped = source::read_dir(std::path::Path::new("snapshots/source")).expect("source");
    let (bytes, _) = build(&shipped, &BuildOptions::default()).expect("build real");
    tldsnap::build::write_atomic(&real, &bytes).expect("write");
    let files: Vec<(&str, &std::path::Path)> = std::iter::once(("real", real.as_path()))
        .chain(sizes.iter().map(|s| (s.name, s.path.as_path())))
        .collect();
    let steps = [
        "bytecheck",
        "structure",
        "orders",
        "layout",
        "registrar_text",
        "text_step",
    ];
    for (name, path) in files {
        for (k, step) in steps.iter().enumerate() {
            // Hashed, then the `k` steps before this one.
            let before = || {
                let mut o = Opening::start(path).expect("start");
                o.step(usize::MAX);
                for _ in 0..k {
                    assert!(!o.step(0), "a check before {step} failed");
                }
                o
            };
            g.bench_function(BenchmarkId::new(format!("step_{step}"), name), |b| {
                b.iter_batched(before, |mut o| (o.step(0), o), BatchSize::LargeInput)
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("query");
    for s in &sizes {
        let snap = Snapshot::open(&s.path).expect("open");
        let d = snap.data();
        // The first 22 generated names are the free TLDs, the same in S and L; the
        // first registrars are the same too, so S and L answer the same questions.
        let ten: Vec<&str> = [
            "com", "net", "org", "io", "ai", "dev", "app", "xyz", "shop", "de",
        ]
        .to_vec();
        let keys = ["dynadot", "porkbun", "namecheap"];
        // `at` a month before the data date: history that day, not today's offers.
        let at_day = d.data_updated_ms.to_native().div_euclid(86_400_000) - 30;
        let mut out = Vec::with_capacity(64 * 1024);
        type Case<'a> = (&'static str, Box<dyn Fn(&mut Vec<u8>) + 'a>);
        let cases: Vec<Case> = vec![
            (
                "cheapest_1_limit5",
                Box::new(|out| {
                    let r = CheapestRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        sight: tldsnap::sight::Sight::ALL,
                        tlds: &["com"],
                        limit: 5,
                        shape: Shape::Client,
                        tier: Some("enterprise"),
                    };
                    query::cheapest(d, &r, out).expect("known");
                }),
            ),
            (
                "cheapest_10_limit10",
                Box::new(|out| {
                    let r = CheapestRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        sight: tldsnap::sight::Sight::ALL,
                        tlds: &ten,
                        limit: 10,
                        shape: Shape::Client,
                        tier: Some("enterprise"),
                    };
                    query::cheapest(d, &r, out).expect("known");
                }),
            ),
            (
                "public_cheapest_1_limit5",
                Box::new(|out| {
                    let r = CheapestRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        sight: tldsnap::sight::Sight::ALL,
                        tlds: &["com"],
                        limit: 5,
                        shape: Shape::Public,
                        tier: None,
                    };
                    query::cheapest(d, &r, out).expect("known");
                }),
            ),
            (
                "prices_3x3",
                Box::new(|out| {
                    let r = PricesRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        sight: tldsnap::sight::Sight::ALL,
                        tlds: &["com", "net", "org"],
                        registrars: Some(&keys),
                        started: tldsnap::time::Stamp::now(),
                    };
                    query::prices(d, &r, out).expect("known");
                }),
            ),
            (
                "registrars_with_prices",
                Box::new(|out| {
                    let r = RegistrarsRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        tld: "com",
                        include_prices: true,
                        sight: tldsnap::sight::Sight::ALL,
                        public_url: "https://tldsnap.dev",
                    };
                    query::registrars(d, &r, out).expect("known");
                }),
            ),
            // Issue 17: history, overview, prices as of a day, catalogue, registrars.
            (
                "history_com_all",
                Box::new(|out| {
                    let r = HistoryRequest {
                        sight: tldsnap::sight::Sight::ALL,
                        tld: "com",
                        registrars: None,
                        from: None,
                        to: None,
                    };
                    query::history(d, &r, out).expect("known");
                }),
            ),
            (
                "history_com_window_3",
                Box::new(|out| {
                    let r = HistoryRequest {
                        sight: tldsnap::sight::Sight::ALL,
                        tld: "com",
                        registrars: Some(&keys),
                        from: Some(at_day - 90),
                        to: Some(at_day),
                    };
                    query::history(d, &r, out).expect("known");
                }),
            ),
            (
                "overview_com",
                Box::new(|out| {
                    let r = OverviewRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        tld: "com",
                        sight: tldsnap::sight::Sight::new(true, None),
                    };
                    query::overview(d, &r, out).expect("known");
                }),
            ),
            (
                "cheapest_at_1_limit5",
                Box::new(|out| {
                    let r = CheapestRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        sight: tldsnap::sight::Sight::ALL,
                        tlds: &["com"],
                        limit: 5,
                        shape: Shape::Client,
                        tier: Some("enterprise"),
                    };
                    query::cheapest_at(d, &r, at_day, out).expect("known");
                }),
            ),
            (
                "cheapest_at_10_limit10",
                Box::new(|out| {
                    let r = CheapestRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        sight: tldsnap::sight::Sight::ALL,
                        tlds: &ten,
                        limit: 10,
                        shape: Shape::Client,
                        tier: Some("enterprise"),
                    };
                    query::cheapest_at(d, &r, at_day, out).expect("known");
                }),
            ),
            (
                "prices_at_3x3",
                Box::new(|out| {
                    let r = PricesRequest {
                        fresh: tldsnap::query::Freshness::ANY_AGE,
                        sight: tldsnap::sight::Sight::ALL,
                        tlds: &["com", "net", "org"],
                        registrars: Some(&keys),
                        started: tldsnap::time::Stamp::now(),
                    };
                    query::prices_at(d, &r, at_day, out).expect("known");
                }),
            ),
            (
                "catalogue_page100",
                Box::new(|out| {
                    let r = CatalogueRequest {
                        q: None,
                        kind: None,
                        sort: CatalogueSort::Cheapest,
                        limit: 100,
                        cursor: None,
                        sight: tldsnap::sight::Sight::new(false, None),
                        snapshot: 0,
                    };
                    query::catalogue(d, &r, out).expect("page");
                }),
            ),
            (
                "catalogue_q_co",
                Box::new(|out| {
                    let r = CatalogueRequest {
                        q: Some("co"),
                        kind: None,
                        sort: CatalogueSort::Name,
                        limit: 100,
                        cursor: None,
                        sight: tldsnap::sight::Sight::new(true, None),
                        snapshot: 0,
                    };
                    query::catalogue(d, &r, out).expect("page");
                }),
            ),
            (
                "registrars_list",
                Box::new(|out| query::registrars_list(d, "https://tldsnap.dev", out)),
            ),
            (
                "registrar_page100",
                Box::new(|out| {
                    let r = RegistrarRequest {
                        key: "dynadot",
                        limit: 100,
                        cursor: None,
                        sight: tldsnap::sight::Sight::new(true, None),
                        public_url: "https://tldsnap.dev",
                        snapshot: 0,
                    };
                    query::registrar(d, &r, out).expect("known");
                }),
            ),
        ];
        for (name, run) in &cases {
            run(&mut out);
            let body = out.clone();
            g.bench_function(BenchmarkId::new(*name, s.name), |b| {
                b.iter(|| {
                    run(&mut out);
                    black_box(out.len())
                })
            });
            g.bench_function(
                BenchmarkId::new(format!("{name}/baseline_copy"), s.name),
                |b| {
                    b.iter(|| {
                        out.clear();
                        out.extend_from_slice(black_box(&body));
                        black_box(out.len())
                    })
                },
            );
        }
        g.bench_function(BenchmarkId::new("tld_lookup_miss", s.name), |b| {
            b.iter(|| black_box(d.tld_index(black_box("no-such-tld"))))
        });
    }
    g.finish();
}

criterion_group!(engine, benches);
criterion_main!(engine);
