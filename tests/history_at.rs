//! `at=DAY` on the real shipped data: the answer computed from the history equals, byte
//! for byte, the answer of a snapshot built from the price source as it stood that day.
//!
//! "The source as it stood that day" is made here from `snapshots/source` by the rules of
//! the import (docs/IMPORT.md): history rows up to the day; for each (TLD, registrar) the
//! last of them, if it offers anything, as its price row; dated by the registrar's feed
//! version of that day (the latest day its history shows a change, or the day of its
//! current prices with their exact timestamp).

use std::collections::BTreeMap;
use std::path::Path;

use tldsnap::build::{BuildOptions, build};
use tldsnap::query::{self, CheapestRequest, PricesRequest, QueryError, Shape};
use tldsnap::snapshot::Snapshot;
use tldsnap::source::{self, PriceRow, Source};
use tldsnap::time::{self, MS_PER_DAY};

fn shipped() -> Source {
    source::read_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/source")).unwrap()
}

fn snapshot(source: &Source) -> Snapshot {
    let (bytes, _) = build(source, &BuildOptions::default()).unwrap();
    Snapshot::from_bytes(&bytes).unwrap()
}

/// The price source as it stood at the end of `day`.
fn as_of(source: &Source, day: i64) -> Source {
    let history: Vec<_> = source
        .history
        .iter()
        .filter(|h| h.date as i64 <= day)
        .cloned()
        .collect();
    // Feed version of each registrar on `day`.
    let mut current: BTreeMap<&str, i64> = BTreeMap::new();
    for p in &source.prices {
        let ms = current.entry(p.registrar.as_str()).or_insert(p.updated_ms);
        *ms = (*ms).max(p.updated_ms);
    }
    let mut version: BTreeMap<&str, i64> = BTreeMap::new();
    for h in &history {
        let v = version.entry(h.registrar.as_str()).or_insert(i64::MIN);
        *v = (*v).max(h.date as i64 * MS_PER_DAY);
    }
    for (reg, ms) in &current {
        let cur_day = ms.div_euclid(MS_PER_DAY);
        if cur_day <= day {
            let v = version.entry(reg).or_insert(i64::MIN);
            if cur_day * MS_PER_DAY >= *v {
                *v = *ms;
            }
        }
    }
    let mut last: BTreeMap<(&str, &str), &source::HistoryRow> = BTreeMap::new();
    for h in &history {
        let e = last
            .entry((h.tld.as_str(), h.registrar.as_str()))
            .or_insert(h);
        if h.date >= e.date {
            *e = h;
        }
    }
    // A state that is still the current one (no later change) with the current prices
    // keeps the current row's terms (promotion, ICANN fee); the history has no terms.
    let mut latest: BTreeMap<(&str, &str), i32> = BTreeMap::new();
    for h in &source.history {
        let d = latest
            .entry((h.tld.as_str(), h.registrar.as_str()))
            .or_insert(h.date);
        *d = (*d).max(h.date);
    }
    let rows: BTreeMap<(&str, &str), &PriceRow> = source
        .prices
        .iter()
        .map(|p| ((p.tld.as_str(), p.registrar.as_str()), p))
        .collect();
    let prices = last
        .into_iter()
        .filter(|(_, h)| h.register.is_some() || h.renew.is_some())
        .map(|((tld, reg), h)| PriceRow {
            tld: tld.to_string(),
            registrar: reg.to_string(),
            register: h.register,
            renew: h.renew,
            transfer: h.transfer,
            updated_ms: version[reg],
            original: None,
            terms: match rows.get(&(tld, reg)) {
                Some(p)
                    if latest[&(tld, reg)] == h.date
                        && (p.register, p.renew, p.transfer)
                            == (h.register, h.renew, h.transfer) =>
                {
                    p.terms.clone()
                }
                _ => Default::default(),
            },
        })
        .collect();
    Source {
        registrars: source.registrars.clone(),
        prices,
        history,
        tlds: source.tlds.clone(),
        rates: source.rates.clone(),
    }
}

fn mask_elapsed(body: &[u8]) -> String {
    let mut text = String::from_utf8(body.to_vec()).unwrap();
    if let Some(i) = text.find("\"time_elapsed\":\"") {
        let start = i + "\"time_elapsed\":\"".len();
        let end = start + text[start..].find('"').unwrap();
        text.replace_range(start..end, "");
    }
    text
}

fn answer(f: impl FnOnce(&mut Vec<u8>) -> Result<(), QueryError>) -> Result<String, QueryError> {
    let mut out = Vec::new();
    f(&mut out).map(|()| mask_elapsed(&out))
}

#[test]
fn at_equals_a_snapshot_built_from_the_source_of_that_day() {
    let source = shipped();
    let now = snapshot(&source);
    let d = now.data();
    let names: Vec<String> = (0..d.tld_count())
        .map(|i| d.span_str(&d.tlds[i].name).to_string())
        .chain(["nope".to_string()])
        .collect();
    let days = [
        "2020-01-01", // before any data: nothing is known
        "2021-11-22", // Dynadot's first version
        "2023-10-17",
        "2024-01-01",
        "2025-03-22",
        "2025-09-29",
        "2025-10-01",
        "2025-12-02", // Openprovider stopped listing 228 names
        "2026-01-01",
        "2026-02-15",
        "2026-08-22", // the data date
    ];
    let mut compared = 0usize;
    for day_text in days {
        let day = time::parse_date(day_text).unwrap();
        let then_source = as_of(&source, day);
        let then = snapshot(&then_source);
        let t = then.data();
        for (i, name) in names.iter().enumerate() {
            // One TLD at a time, and in groups of three with an unknown name.
            let group: Vec<&str> = if i % 3 == 0 {
                names[i..(i + 3).min(names.len())]
                    .iter()
                    .map(String::as_str)
                    .chain(["nope"])
                    .collect()
            } else {
                vec![name.as_str()]
            };
            for shape in [Shape::Client, Shape::Public] {
                let req = CheapestRequest {
                    fresh: tldsnap::query::Freshness::ANY_AGE,
                    sight: tldsnap::sight::Sight::ALL,
                    tlds: &group,
                    limit: if i % 2 == 0 { 100 } else { 3 },
                    shape,
                    tier: Some("pro"),
                };
                let expected = answer(|out| query::cheapest(t, &req, out));
                let got = answer(|out| query::cheapest_at(d, &req, day, out));
                assert_eq!(got, expected, "cheapest {shape:?} {group:?} at {day_text}");
            }
            let chosen = ["porkbun", "openprovider", "nobody", "dynadot", "route53"];
            for registrars in [None, Some(&chosen[..])] {
                let req = PricesRequest {
                    fresh: tldsnap::query::Freshness::ANY_AGE,
                    sight: tldsnap::sight::Sight::ALL,
                    tlds: &group,
                    registrars,
                    started: tldsnap::time::Stamp::now(),
                };
                let expected = answer(|out| query::prices(t, &req, out));
                let got = answer(|out| query::prices_at(d, &req, day, out));
                assert_eq!(
                    got, expected,
                    "prices {registrars:?} {group:?} at {day_text}"
                );
            }
            compared += 1;
        }
    }
    assert_eq!(compared, names.len() * days.len());
    // The latest day answers exactly what the snapshot answers today.
    let today = time::parse_date("2026-08-22").unwrap();
    let req = CheapestRequest {
        fresh: tldsnap::query::Freshness::ANY_AGE,
        sight: tldsnap::sight::Sight::ALL,
        tlds: &["com", "io", "xyz"],
        limit: 100,
        shape: Shape::Public,
        tier: None,
    };
    assert_eq!(
        answer(|out| query::cheapest_at(d, &req, today, out)),
        answer(|out| query::cheapest(d, &req, out))
    );
}

#[test]
fn a_day_after_the_data_date_is_refused_naming_at() {
    let snap = snapshot(&shipped());
    let req = CheapestRequest {
        fresh: tldsnap::query::Freshness::ANY_AGE,
        sight: tldsnap::sight::Sight::ALL,
        tlds: &["com"],
        limit: 5,
        shape: Shape::Client,
        tier: None,
    };
    let day = time::parse_date("2026-08-23").unwrap();
    let err = answer(|out| query::cheapest_at(snap.data(), &req, day, out)).unwrap_err();
    assert!(
        matches!(&err, QueryError::InvalidParameter { name: "at", value, .. } if value == "2026-08-23"),
        "{err:?}"
    );
}
