//! The terms columns of the shipped price source (docs/IMPORT.md, "Terms: promotions and
//! the ICANN fee") against an independent reading of the feeds: Namecheap's sale and
//! regular prices (`snapshots/feeds/namecheap/namecheap-prices.json`) and Cloudflare's
//! ICANN fee (`snapshots/feeds/cloudflare/cloudflare_tld_prices.csv`), read here with
//! serde_json and plain CSV, compared with `snapshots/source/prices.csv` read as plain
//! CSV. Nothing here uses the importer or the price source's reader.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn root(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A decimal dollar amount (`14.98`, `25`) as cents; `None` for an empty field.
fn cents(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    assert!(frac.len() <= 2, "{s}");
    let frac = format!("{frac:0<2}");
    Some(whole.parse::<u64>().unwrap() * 100 + frac.parse::<u64>().unwrap())
}

/// A JSON number of dollars as cents (the feed's numbers have at most two decimals).
fn json_cents(v: &serde_json::Value) -> Option<u64> {
    let x = v.as_f64()?;
    Some((x * 100.0).round() as u64)
}

/// The shipped `prices.csv` rows of `registrar`, by TLD: every column by name.
fn shipped(registrar: &str) -> HashMap<String, HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(root("snapshots/source/prices.csv")).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    for column in [
        "regular_register",
        "icann_fee",
        "icann_fee_included",
        "register_years",
    ] {
        assert!(header.iter().any(|h| h == column), "no {column} column");
    }
    let mut rows = HashMap::new();
    for record in reader.records() {
        let record = record.unwrap();
        let row: HashMap<String, String> = header
            .iter()
            .cloned()
            .zip(record.iter().map(str::to_owned))
            .collect();
        if row["registrar"] == registrar {
            rows.insert(row["tld"].clone(), row);
        }
    }
    rows
}

#[test]
fn namecheap_sale_prices_keep_their_regular_price_apart() {
    let feed: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root("snapshots/feeds/namecheap/namecheap-prices.json")).unwrap(),
    )
    .unwrap();
    let rows = shipped("namecheap");
    let (mut promotions, mut checked) = (0, 0);
    for (key, v) in feed["data"].as_object().unwrap() {
        // Names the import keeps under another form (IDNs, case) are looked up as given;
        // the ones it dropped are not in the source.
        let Some(row) = rows.get(&key.to_ascii_lowercase()) else {
            continue;
        };
        checked += 1;
        let sale = json_cents(&v["sale-price"]["create"]).filter(|c| *c > 0);
        let regular = json_cents(&v["regular-price"]["create"]).filter(|c| *c > 0);
        let register = cents(&row["register"]);
        assert_eq!(register, sale.or(regular), "{key}: register");
        let want = match (sale, regular) {
            (Some(s), Some(r)) if r > s => Some(r),
            _ => None,
        };
        promotions += usize::from(want.is_some());
        assert_eq!(
            cents(&row["regular_register"]),
            want,
            "{key}: regular_register"
        );
        assert_eq!(row["icann_fee"], "", "{key}: the feed states no fee");
    }
    // Every shipped Namecheap row is one of the feed's (the rest of the feed's names are
    // Handshake names and others the import drops).
    assert_eq!(checked, rows.len(), "Namecheap rows not found in the feed");
    assert!(
        promotions > 50,
        "only {promotions} promotions in the shipped feed"
    );
}

#[test]
fn cloudflare_prices_include_its_icann_fee_and_say_so() {
    let mut reader =
        csv::Reader::from_path(root("snapshots/feeds/cloudflare/cloudflare_tld_prices.csv"))
            .unwrap();
    let rows = shipped("cloudflare");
    let mut checked = 0;
    for record in reader.records() {
        let record = record.unwrap();
        let (key, price, renewal, fee) = (&record[0], &record[1], &record[2], &record[3]);
        let Some(row) = rows.get(&key.to_ascii_lowercase()) else {
            continue;
        };
        checked += 1;
        let fee = cents(fee).unwrap_or(0);
        let with_fee = |p: &str| cents(p).filter(|c| *c > 0).map(|c| c + fee);
        assert_eq!(cents(&row["register"]), with_fee(price), "{key}: register");
        assert_eq!(cents(&row["renew"]), with_fee(renewal), "{key}: renew");
        if fee > 0 {
            assert_eq!(cents(&row["icann_fee"]), Some(fee), "{key}");
            assert_eq!(row["icann_fee_included"], "true", "{key}");
        } else {
            assert_eq!(
                (
                    row["icann_fee"].as_str(),
                    row["icann_fee_included"].as_str()
                ),
                ("", "")
            );
        }
        assert_eq!(row["regular_register"], "", "{key}");
    }
    assert_eq!(checked, rows.len(), "Cloudflare rows not found in the feed");
}
