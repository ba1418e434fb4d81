//! The shipped snapshot against an independent recomputation of the new feeds.
//!
//! Nothing here uses the importers: the feed files and the ECB rate table are read with
//! plain CSV reading, prices are computed with exact integer arithmetic written here,
//! and the results are compared with what `tldsnap query` answers from a snapshot built
//! from `snapshots/source` (the shipped price source, itself checked to be a fresh
//! import by `tests/import.rs`):
//!
//! - every row of every `domainpricing/` file (USD, rounded half-even to the cent),
//! - every row of every Glauca version (GBP × USD / GBP of the last ECB row on or before
//!   the row's date, half-even), against the price history, and the latest version
//!   against the current prices,
//! - the cheapest rankings of com, net, org, io and xyz (client and public shapes,
//!   several limits) against a ranking computed from `prices.csv`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn root(rel: &str) -> PathBuf {
    Path::new(ROOT).join(rel)
}

/// The registrar key of each domainpricing file, as docs/IMPORT.md lists them.
const DOMAINPRICING: [(&str, &str); 11] = [
    ("101domain.com.csv", "101domain"),
    ("dreamhost.com.csv", "dreamhost"),
    ("gandi.net.csv", "gandi"),
    ("godaddy.com.csv", "godaddy"),
    ("hostinger.com.csv", "hostinger"),
    ("hover.com.csv", "hover"),
    ("ionos.com.csv", "ionos"),
    ("name.com.csv", "namecom"),
    ("namesilo.com.csv", "namesilo"),
    ("sav.com.csv", "sav"),
    ("spaceship.com.csv", "spaceship"),
];

/// Rows of the new feeds that are not prices, each for a documented reason
/// (docs/IMPORT.md): `l.lc` and `p.lc` are not public suffixes.
const KNOWN_DROPS: [(&str, &str); 2] = [("glauca", "l.lc"), ("glauca", "p.lc")];

/// A decimal string as (digits, number of decimals): `"26.9913"` -> (269913, 4).
fn decimal(s: &str) -> (i128, u32) {
    let s = s.trim();
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = format!("{whole}{frac}");
    assert!(
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()),
        "not a decimal: {s:?}"
    );
    (digits.parse().unwrap(), frac.len() as u32)
}

/// `n / d` to the nearest integer, ties to even.
fn half_even(n: i128, d: i128) -> i64 {
    let (q, r) = (n / d, n % d);
    let q = if 2 * r > d || (2 * r == d && q % 2 == 1) {
        q + 1
    } else {
        q
    };
    q as i64
}

/// A decimal price in cents, rounded half-even; `None` for an empty field.
fn cents(s: &str) -> Option<i64> {
    if s.trim().is_empty() {
        return None;
    }
    let (m, scale) = decimal(s);
    Some(half_even(m * 100, 10i128.pow(scale)))
}

/// The ECB table: day (`YYYY-MM-DD`, sortable as text) -> (USD, GBP) per EUR.
fn rates() -> BTreeMap<String, (String, String)> {
    let mut reader = csv::Reader::from_path(root("snapshots/fx/eurofxref-hist.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (usd, gbp) = (col("USD"), col("GBP"));
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_string(), (r[usd].to_string(), r[gbp].to_string()))
        })
        .collect()
}

/// GBP `amount` dated `day` in USD cents: × USD / GBP of the last row on or before
/// `day`, half-even.
fn gbp_to_usd(rates: &BTreeMap<String, (String, String)>, amount: &str, day: &str) -> i64 {
    let (_, (usd, gbp)) = rates
        .range(..=day.to_string())
        .next_back()
        .unwrap_or_else(|| panic!("no rate on or before {day}"));
    let (a, sa) = decimal(amount);
    let (u, su) = decimal(usd);
    let (g, sg) = decimal(gbp);
    // a/10^sa × u/10^su ÷ (g/10^sg) × 100
    half_even(
        a * u * 10i128.pow(sg) * 100,
        10i128.pow(sa) * 10i128.pow(su) * g,
    )
}

fn query(args: &[&str]) -> Value {
    let out = Command::new(BIN).arg("query").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "query {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn to_cents(v: &Value) -> Option<i64> {
    v.as_f64().map(|f| (f * 100.0).round() as i64)
}

/// Builds the shipped source into a snapshot file.
fn shipped_snapshot() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("import-recompute-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let snap = dir.join("shipped.tldsnap");
    let out = Command::new(BIN)
        .args(["build", "--input"])
        .arg(root("snapshots/source"))
        .arg("--output")
        .arg(&snap)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    snap
}

/// (register, renew, transfer) in cents, as served.
type Served = (Option<i64>, Option<i64>, Option<i64>);

/// What `query prices` serves for `tlds` at `registrar`, by canonical name.
fn served_prices(
    snap: &str,
    registrar: &str,
    tlds: &[String],
) -> HashMap<String, (Served, String)> {
    let mut out = HashMap::new();
    for batch in tlds.chunks(100) {
        let list = batch.join(",");
        let body = query(&[
            "prices",
            "--snapshot",
            snap,
            "--tlds",
            &list,
            "--registrars",
            registrar,
        ]);
        for (tld, by_registrar) in body["results"].as_object().unwrap() {
            let Some(p) = by_registrar.get(registrar) else {
                continue;
            };
            out.insert(
                tld.clone(),
                (
                    (
                        to_cents(&p["register_price"]),
                        to_cents(&p["renew_price"]),
                        to_cents(&p["transfer_price"]),
                    ),
                    p["last_updated"].as_str().unwrap_or("").to_string(),
                ),
            );
        }
    }
    out
}

fn canonical(name: &str) -> String {
    tldsnap::tld::normalize(name).unwrap().into_owned()
}

#[test]
fn new_feeds_are_served_as_recomputed_independently() {
    let snap = shipped_snapshot();
    let snap = snap.to_str().unwrap();
    let rates = rates();
    let mut compared = 0usize;

    // Every domainpricing row: USD, half-even to the cent, no transfer, dated 2026-08-16.
    for (file, key) in DOMAINPRICING {
        let mut reader =
            csv::Reader::from_path(root("snapshots/feeds/domainpricing").join(file)).unwrap();
        let mut expected: Vec<(String, Served)> = Vec::new();
        for r in reader.records() {
            let r = r.unwrap();
            expected.push((canonical(&r[0]), (cents(&r[1]), cents(&r[2]), None)));
        }
        assert!(expected.len() > 300, "{file}");
        let names: Vec<String> = expected.iter().map(|(n, _)| n.clone()).collect();
        let served = served_prices(snap, key, &names);
        for (name, want) in &expected {
            let Some((got, date)) = served.get(name) else {
                panic!("{key} {name} is not served");
            };
            assert_eq!(got, want, "{key} {name}");
            assert_eq!(date, "2026-08-16T00:00:00.000Z", "{key} {name}");
            compared += 1;
        }
    }

    // Every Glauca row of every version, converted at its own date.
    let dir = root("snapshots/feeds/glauca");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 12);
    // (tld, version day) -> expected USD prices
    let mut versions: Vec<(String, Vec<(String, Served)>)> = Vec::new();
    for file in &files {
        let mut reader = csv::Reader::from_path(dir.join(file)).unwrap();
        let mut rows = Vec::new();
        let mut day = String::new();
        for r in reader.records() {
            let r = r.unwrap();
            assert_eq!(&r[2], "GBP");
            day = r[0].to_string();
            let usd = |s: &str| (!s.is_empty()).then(|| gbp_to_usd(&rates, s, &r[0]));
            rows.push((r[1].to_string(), (usd(&r[3]), usd(&r[4]), usd(&r[5]))));
        }
        versions.push((day, rows));
    }
    let mut histories: HashMap<String, Vec<(String, Served)>> = HashMap::new();
    let mut glauca_rows = 0;
    for (day, rows) in &versions {
        for (tld, want) in rows {
            if KNOWN_DROPS.contains(&("glauca", tld.as_str())) {
                continue;
            }
            let history = histories.entry(tld.clone()).or_insert_with(|| {
                let body = query(&[
                    "history",
                    "--snapshot",
                    snap,
                    "--tld",
                    tld,
                    "--registrars",
                    "glauca",
                ]);
                body["history"]["glauca"]["changes"]
                    .as_array()
                    .unwrap_or_else(|| panic!("no Glauca history for {tld}: {body}"))
                    .iter()
                    .map(|h| {
                        (
                            h["date"].as_str().unwrap().to_string(),
                            (
                                to_cents(&h["register_price"]),
                                to_cents(&h["renew_price"]),
                                to_cents(&h["transfer_price"]),
                            ),
                        )
                    })
                    .collect()
            });
            // The state on `day`: the last change on or before it.
            let state = history
                .iter()
                .rev()
                .find(|(d, _)| d.as_str() <= day.as_str())
                .map(|(_, p)| *p);
            assert_eq!(state, Some(*want), "glauca {tld} on {day}: {history:?}");
            glauca_rows += 1;
        }
    }
    // The latest version is the current price list.
    let (last_day, last_rows) = versions.last().unwrap();
    let names: Vec<String> = last_rows.iter().map(|(n, _)| n.clone()).collect();
    let served = served_prices(snap, "glauca", &names);
    for (tld, want) in last_rows {
        if KNOWN_DROPS.contains(&("glauca", tld.as_str())) {
            assert!(!served.contains_key(tld), "{tld} is a known drop");
            continue;
        }
        let (got, date) = &served[tld];
        assert_eq!(got, want, "glauca {tld}");
        assert_eq!(date, &format!("{last_day}T00:00:00.000Z"));
    }
    assert!(glauca_rows > 200, "{glauca_rows} Glauca rows");
    compared += glauca_rows;
    assert!(compared >= 5000, "{compared} pairs compared");
}

/// The cheapest ranking computed from `prices.csv`: sellers by (register, renew, key).
fn ranking(tld: &str) -> Vec<(String, i64, i64)> {
    let mut reader = csv::Reader::from_path(root("snapshots/source/prices.csv")).unwrap();
    let mut sellers: Vec<(String, i64, i64)> = reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[0] == tld && !r[2].is_empty())
        .map(|r| {
            (
                r[1].to_string(),
                cents(&r[2]).unwrap(),
                cents(&r[3]).unwrap(),
            )
        })
        .collect();
    sellers.sort_by(|a, b| (a.1, a.2, &a.0).cmp(&(b.1, b.2, &b.0)));
    sellers
}

#[test]
fn cheapest_ranks_every_registrar_by_the_same_rules() {
    let snap = shipped_snapshot();
    let snap = snap.to_str().unwrap();
    let names: HashMap<String, String> = {
        let mut reader = csv::Reader::from_path(root("snapshots/source/registrars.csv")).unwrap();
        reader
            .records()
            .map(|r| {
                let r = r.unwrap();
                (r[0].to_string(), r[1].to_string())
            })
            .collect()
    };
    assert_eq!(names.len(), 19);
    for tld in ["com", "net", "org", "io", "xyz"] {
        let want = ranking(tld);
        assert!(want.len() >= 17, "{tld}: {} sellers", want.len());
        // A tie on the first-year price is broken by renewal, then key: com has some.
        for limit in [1, 3, 10, 100] {
            // Every registrar, whatever the age of its prices (the staleness rule is
            // tested in tests/engine.rs).
            let client = query(&[
                "cheapest",
                "--include-stale",
                "--snapshot",
                snap,
                "--tlds",
                tld,
                "--limit",
                &limit.to_string(),
            ]);
            let public = query(&[
                "cheapest",
                "--include-stale",
                "--public",
                "--snapshot",
                snap,
                "--tlds",
                tld,
                "--limit",
                &limit.to_string(),
            ]);
            for body in [&client, &public] {
                let r = &body["results"][tld];
                assert_eq!(r["registrar_count"], want.len(), "{tld}");
                let entries = r["cheapest_register"].as_array().unwrap();
                assert_eq!(entries.len(), want.len().min(limit), "{tld} limit {limit}");
                for (i, (e, (key, register, renew))) in entries.iter().zip(&want).enumerate() {
                    assert_eq!(e["rank"], i + 1);
                    assert_eq!(e["registrar_name"], names[key].as_str(), "{tld} #{i}");
                    assert_eq!(to_cents(&e["register_price"]), Some(*register));
                    assert_eq!(to_cents(&e["renew_price"]), Some(*renew));
                    assert_eq!(
                        to_cents(&e["total_cost_5_year"]),
                        Some(register + 4 * renew),
                        "{tld} {key}"
                    );
                }
            }
            for (e, (key, _, _)) in client["results"][tld]["cheapest_register"]
                .as_array()
                .unwrap()
                .iter()
                .zip(&want)
            {
                assert_eq!(e["registrar_key"], key.as_str());
            }
        }
    }
    // The ties of com are there and broken as documented: 9.99 at DreamHost and
    // Hostinger (both 19.99 to renew: by key), 12.99 at Name.com and GoDaddy (renewal).
    let com: Vec<String> = ranking("com").into_iter().map(|(k, _, _)| k).collect();
    let pos = |k: &str| com.iter().position(|x| x == k).unwrap();
    assert_eq!(pos("dreamhost") + 1, pos("hostinger"));
    assert_eq!(pos("namecom") + 1, pos("godaddy"));
}
