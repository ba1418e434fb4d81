//! Portfolio audit benchmark (issue 13): a 10,000-domain portfolio (the Enterprise
//! limit) on the real data shipped in the binary, through the query functions the
//! server calls: parse the JSON body, audit, write the JSON answer; and the CSV input
//! and output path. Target: under 20 ms for the whole 10,000-domain request.
//!
//! `cargo bench --bench audit`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tldsnap::audit::Names;
use tldsnap::audit::portfolio;
use tldsnap::audit::search::{self, SearchRequest};

/// 10,000 real-looking entries: every TLD with a seller in turn, a registrar on most,
/// a stated price on some, subdomains, upper case, duplicates and a few invalid names.
fn portfolio_body(snap: &tldsnap::snapshot::ArchivedSnapshotData, n: usize) -> (Vec<u8>, Vec<u8>) {
    let tlds: Vec<&str> = snap
        .tlds
        .iter()
        .filter(|t| t.sellers.to_native() > 0)
        .map(|t| snap.span_str(&t.name))
        .collect();
    let regs = [
        "namecheap",
        "porkbun",
        "",
        "dynadot",
        "godaddy",
        "cloudflare",
        "openprovider",
    ];
    let mut json = Vec::new();
    let mut csv = b"domain,registrar,renew_price,expires\n".to_vec();
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        let t = tlds[i % tlds.len()];
        let name = match i % 10 {
            0 => format!("www.brand{i}.{t}"),
            1 => format!("Brand{}.{t}", i - 1),
            9 => format!("bad..name{i}.{t}"),
            _ => format!("brand{i}.{t}"),
        };
        let reg = regs[i % regs.len()];
        let price = if i % 4 == 0 { "14.99" } else { "" };
        let expires = if i % 3 == 0 { "2026-09-01" } else { "" };
        csv.extend_from_slice(format!("{name},{reg},{price},{expires}\n").as_bytes());
        let mut o = serde_json::json!({ "name": name });
        if !reg.is_empty() {
            o["registrar"] = reg.into();
        }
        if !price.is_empty() {
            o["renew_price"] = 14.99.into();
        }
        if !expires.is_empty() {
            o["expires"] = expires.into();
        }
        items.push(o);
    }
    serde_json::to_writer(&mut json, &serde_json::json!({ "domains": items })).unwrap();
    (json, csv)
}

fn bench(c: &mut Criterion) {
    let snapshot = tldsnap::build::default_snapshot().expect("shipped data");
    let snap = snapshot.data();
    let names = Names::embedded();
    let (json, csv) = portfolio_body(snap, 10_000);
    eprintln!(
        "10,000 domains: JSON body {} bytes, CSV body {} bytes",
        json.len(),
        csv.len()
    );
    let mut g = c.benchmark_group("audit");
    g.sample_size(30).measurement_time(Duration::from_secs(8));
    let mut out = Vec::new();
    g.bench_function("json_10000", |b| {
        b.iter(|| {
            let p = portfolio::parse_json(black_box(&json), 10_000).unwrap();
            let a = portfolio::audit(
                snap,
                &names,
                &p,
                tldsnap::query::Freshness::new(1_787_356_800_000, 36_500, false),
                tldsnap::sight::Sight::ALL,
            );
            portfolio::write_json(snap, &a, Some("enterprise"), &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("csv_10000", |b| {
        b.iter(|| {
            let p = portfolio::parse_csv(black_box(&csv), 10_000).unwrap();
            let a = portfolio::audit(
                snap,
                &names,
                &p,
                tldsnap::query::Freshness::new(1_787_356_800_000, 36_500, false),
                tldsnap::sight::Sight::ALL,
            );
            portfolio::write_csv(snap, &a, &mut out);
            black_box(out.len())
        })
    });
    let parsed = portfolio::parse_json(&json, 10_000).unwrap();
    g.bench_function("audit_only_10000", |b| {
        b.iter(|| {
            black_box(
                portfolio::audit(
                    snap,
                    &names,
                    black_box(&parsed),
                    tldsnap::query::Freshness::new(1_787_356_800_000, 36_500, false),
                    tldsnap::sight::Sight::ALL,
                )
                .rows
                .len(),
            )
        })
    });
    g.finish();
    let mut g = c.benchmark_group("search");
    g.bench_function("bestshop_limit_20", |b| {
        b.iter(|| {
            let req = SearchRequest {
                fresh: tldsnap::query::Freshness::ANY_AGE,
                q: "best shop",
                max_price: None,
                types: &[],
                limit: 20,
                tier: None,
            };
            search::search(snap, &names, &req, tldsnap::sight::Sight::ALL, &mut out).unwrap();
            black_box(out.len())
        })
    });
    g.bench_function("bestshop_country_code_under_5_limit_100", |b| {
        b.iter(|| {
            let req = SearchRequest {
                fresh: tldsnap::query::Freshness::ANY_AGE,
                q: "best shop",
                max_price: Some(500),
                types: &["country-code"],
                limit: 100,
                tier: None,
            };
            search::search(snap, &names, &req, tldsnap::sight::Sight::ALL, &mut out).unwrap();
            black_box(out.len())
        })
    });
    g.finish();
    c.bench_function("names/embedded_load", |b| {
        b.iter(|| black_box(Names::embedded()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
