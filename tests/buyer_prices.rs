//! Prices as buyers read them, on the shipped data, against recomputations that use
//! none of tldsnap's code: the feeds and the price source are read with plain JSON and
//! CSV reading, the ECB table with exact integer arithmetic written here, and the
//! answers are what `tldsnap query` prints from the built-in snapshot.
//!
//! - every promotion the Namecheap feed marks (a sale price below the regular price)
//!   is shown as one, with its regular price, and no other offer is;
//! - the rankings by renewal, 3-year and 5-year cost equal a ranking recomputed from
//!   `prices.csv`, for every TLD, and differ from the first-year ranking where a
//!   renewal trap makes them (`.net` among them);
//! - prices in five currencies equal a conversion recomputed from
//!   `eurofxref-hist.csv`, for hundreds of prices, and every ranking is the same in
//!   every currency of the table.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_tldsnap");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The shipped price source built once into a snapshot file (what the binary embeds):
/// opening a file is faster than building the embedded source for every query.
fn snapshot() -> &'static Path {
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("tldsnap-buyer-{}.snap", std::process::id()));
        let out = Command::new(BIN)
            .args(["build", "--input"])
            .arg(Path::new(ROOT).join("snapshots/source"))
            .arg("--output")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        path
    })
}

/// Runs `tldsnap query ARGS` on the shipped data with no price stale.
fn query(args: &[&str]) -> Value {
    let out = Command::new(BIN)
        .arg("query")
        .args(args)
        .args(["--max-age-days", "36500", "--snapshot"])
        .arg(snapshot())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `prices.csv` of the shipped price source, as maps of column to value.
fn price_source() -> Vec<HashMap<String, String>> {
    let mut reader =
        csv::Reader::from_path(Path::new(ROOT).join("snapshots/source/prices.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// `12.34` -> 1234; empty -> None.
fn cents(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let frac = format!("{frac:0<2}");
    Some(whole.parse::<u64>().unwrap() * 100 + frac[..2].parse::<u64>().unwrap())
}

/// A JSON price (`12.5`) in hundredths.
fn json_cents(v: &Value) -> u64 {
    (v.as_f64().unwrap() * 100.0).round() as u64
}

fn chunks(names: &[String]) -> Vec<String> {
    names.chunks(100).map(|c| c.join(",")).collect()
}

#[test]
fn every_promotion_the_feed_marks_is_shown_as_one_with_its_regular_price() {
    // The Namecheap feed, read here: a sale price below the regular first-year price
    // is a promotion.
    let feed: Value = serde_json::from_slice(
        &std::fs::read(Path::new(ROOT).join("snapshots/feeds/namecheap/namecheap-prices.json"))
            .unwrap(),
    )
    .unwrap();
    let mut marked: BTreeMap<String, u64> = BTreeMap::new();
    for (tld, p) in feed["data"].as_object().unwrap() {
        let (sale, regular) = (&p["sale-price"]["create"], &p["regular-price"]["create"]);
        if let (Some(s), Some(r)) = (sale.as_f64(), regular.as_f64())
            && s > 0.0
            && r > s
        {
            marked.insert(tld.clone(), (r * 100.0).round() as u64);
        }
    }
    let sold: Vec<String> = price_source()
        .into_iter()
        .filter(|r| r["registrar"] == "namecheap" && !r["register"].is_empty())
        .map(|r| r["tld"].clone())
        .collect();
    let marked_sold = marked.keys().filter(|t| sold.contains(t)).count();
    assert!(marked_sold > 300, "{marked_sold} promotions in the feed");
    let mut shown = 0;
    for list in chunks(&sold) {
        let body = query(&["prices", "--tlds", &list, "--registrars", "namecheap"]);
        for (tld, by_registrar) in body["results"].as_object().unwrap() {
            let r = &by_registrar["namecheap"];
            match marked.get(tld) {
                Some(regular) => {
                    assert_eq!(r["promotion"], Value::Bool(true), "{tld}: {r}");
                    assert_eq!(json_cents(&r["regular_register_price"]), *regular, "{tld}");
                    assert!(json_cents(&r["register_price"]) < *regular, "{tld}");
                    shown += 1;
                }
                None => assert!(r.get("promotion").is_none(), "{tld}: {r}"),
            }
        }
    }
    assert_eq!(shown, marked_sold);
    // The cheapest rankings say so too: .net's Namecheap offer is a promotion there.
    let body = query(&["cheapest", "--tlds", "net", "--limit", "100", "--public"]);
    let entries = body["results"]["net"]["cheapest_register"]
        .as_array()
        .unwrap();
    let promoted = entries.iter().filter(|e| e["promotion"] == true).count();
    assert_eq!(
        promoted,
        usize::from(marked.contains_key("net")),
        "{entries:?}"
    );
}

/// The sellers of every TLD from `prices.csv`: (tld, [(key, register, renew)]).
fn sellers() -> BTreeMap<String, Vec<(String, u64, u64)>> {
    let mut by_tld: BTreeMap<String, Vec<(String, u64, u64)>> = BTreeMap::new();
    for r in price_source() {
        if let (Some(reg), Some(ren)) = (cents(&r["register"]), cents(&r["renew"])) {
            by_tld
                .entry(r["tld"].clone())
                .or_default()
                .push((r["registrar"].clone(), reg, ren));
        }
    }
    by_tld
}

#[test]
fn rankings_by_real_cost_equal_a_recomputation_from_the_price_source() {
    let by_tld = sellers();
    let names: Vec<String> = by_tld.keys().cloned().collect();
    let mut differing = Vec::new();
    for (sort, key) in [
        ("renew", (|_r: u64, n: u64| n) as fn(u64, u64) -> u64),
        ("total_3_year", |r, n| r + 2 * n),
        ("total_5_year", |r, n| r + 4 * n),
    ] {
        for list in chunks(&names) {
            let body = query(&[
                "cheapest", "--tlds", &list, "--limit", "100", "--sort", sort, "--public",
            ]);
            for (tld, result) in body["results"].as_object().unwrap() {
                let mut expected = by_tld[tld].clone();
                expected
                    .sort_by(|a, b| (key(a.1, a.2), a.1, &a.0).cmp(&(key(b.1, b.2), b.1, &b.0)));
                let mut first_year = by_tld[tld].clone();
                first_year.sort_by(|a, b| (a.1, a.2, &a.0).cmp(&(b.1, b.2, &b.0)));
                let entries = result["cheapest_register"].as_array().unwrap();
                assert_eq!(entries.len(), expected.len(), "{tld} {sort}");
                for (i, (e, x)) in entries.iter().zip(&expected).enumerate() {
                    assert_eq!(e["rank"], i + 1);
                    assert_eq!(json_cents(&e["register_price"]), x.1, "{tld} {sort} #{i}");
                    assert_eq!(json_cents(&e["renew_price"]), x.2, "{tld} {sort} #{i}");
                    let total = |n: u64| json_cents(&e[format!("total_cost_{n}_year")]);
                    assert_eq!(total(3), x.1 + 2 * x.2);
                    assert_eq!(total(5), x.1 + 4 * x.2);
                }
                if sort == "total_3_year"
                    && expected
                        .iter()
                        .map(|x| &x.0)
                        .ne(first_year.iter().map(|x| &x.0))
                {
                    differing.push(tld.clone());
                }
            }
        }
    }
    // A renewal trap: .net's cheapest first year (a low promotion) is not its cheapest
    // three years.
    assert!(differing.contains(&"net".to_string()), "{differing:?}");
    let net = query(&["cheapest", "--tlds", "net", "--limit", "1", "--public"]);
    let net3 = query(&[
        "cheapest",
        "--tlds",
        "net",
        "--limit",
        "1",
        "--public",
        "--sort",
        "total_3_year",
    ]);
    let first = |b: &Value| b["results"]["net"]["cheapest_register"][0].clone();
    assert_ne!(
        first(&net)["registrar_name"],
        first(&net3)["registrar_name"]
    );
    assert!(
        json_cents(&first(&net3)["total_cost_3_year"])
            < json_cents(&first(&net)["total_cost_3_year"])
    );
    assert!(differing.len() > 100, "{} TLDs", differing.len());
}

/// The ECB table, read here: (day, {currency: (mantissa, scale)}) rows, newest first.
type EcbRow = (String, HashMap<String, (u128, u32)>);

fn ecb_table() -> Vec<EcbRow> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(Path::new(ROOT).join("snapshots/fx/eurofxref-hist.csv"))
        .unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            let mut rates = HashMap::new();
            for (code, v) in header.iter().zip(r.iter()).skip(1) {
                if let Some((w, f)) = v
                    .split_once('.')
                    .or(Some((v, "")))
                    .filter(|_| v != "N/A" && !v.is_empty())
                {
                    let m: u128 = format!("{w}{f}").parse().unwrap();
                    rates.insert(code.clone(), (m, f.len() as u32));
                }
            }
            (r[0].to_string(), rates)
        })
        .collect()
}

/// `cents` USD in hundredths of a currency at `usd` and `other` (units per euro),
/// rounded half to even to whole units when `whole`, else to hundredths.
fn convert(cents: u64, usd: (u128, u32), other: (u128, u32), whole: bool) -> u64 {
    let step: u128 = if whole { 100 } else { 1 };
    let num = cents as u128 * other.0 * 10u128.pow(usd.1);
    let den = usd.0 * 10u128.pow(other.1) * step;
    let (q, r) = (num / den, num % den);
    let q = if 2 * r > den || (2 * r == den && q % 2 == 1) {
        q + 1
    } else {
        q
    };
    (q * step) as u64
}

#[test]
fn conversions_equal_a_recomputation_from_the_ecb_table_and_never_reorder() {
    // The data date is the newest price's day; its rate is the last ECB row on or
    // before it that quotes USD.
    let source = price_source();
    let data_day = source
        .iter()
        .map(|r| r["updated_at"][..10].to_string())
        .max()
        .unwrap();
    let table = ecb_table();
    let (rate_day, rates) = table
        .iter()
        .find(|(d, r)| *d <= data_day && r.contains_key("USD"))
        .unwrap();
    let usd = rates["USD"];
    let sellers = sellers();
    let tlds: Vec<String> = sellers.keys().take(100).cloned().collect();
    let list = tlds.join(",");
    let usd_body = query(&["prices", "--tlds", &list]);
    let mut checked = 0;
    for code in ["EUR", "GBP", "JPY", "INR", "CHF"] {
        let other = if code == "EUR" { (1, 0) } else { rates[code] };
        let body = query(&["prices", "--tlds", &list, "--currency", code]);
        let currency = &body["stats"]["currency"];
        assert_eq!(currency["code"], code);
        assert_eq!(currency["rate_date"], rate_day.as_str());
        for (tld, by_registrar) in usd_body["results"].as_object().unwrap() {
            for (key, record) in by_registrar.as_object().unwrap() {
                let converted = &body["results"][tld][key];
                for field in ["register_price", "renew_price", "transfer_price"] {
                    let (Some(price), shown) = (record[field].as_f64(), &converted[field]) else {
                        assert!(converted[field].is_null(), "{tld} {key} {field}");
                        continue;
                    };
                    let cents = (price * 100.0).round() as u64;
                    let expected = convert(cents, usd, other, code == "JPY");
                    assert_eq!(
                        json_cents(shown),
                        expected,
                        "{code} {tld} {key} {field}: {price}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 1000, "{checked} prices checked");

    // The overview, the history and a registrar's price list convert the same way.
    let gbp = rates["GBP"];
    let to_gbp = |v: &Value| {
        convert(
            (v.as_f64().unwrap() * 100.0).round() as u64,
            usd,
            gbp,
            false,
        )
    };
    let (o_usd, o_gbp) = (
        query(&["overview", "--tld", "com"]),
        query(&["overview", "--tld", "com", "--currency", "GBP"]),
    );
    for pick in ["cheapest_register", "lowest_renew", "lowest_5_year"] {
        assert_eq!(
            json_cents(&o_gbp[pick]["price"]),
            to_gbp(&o_usd[pick]["price"]),
            "{pick}"
        );
        assert_eq!(o_gbp[pick]["registrar_key"], o_usd[pick]["registrar_key"]);
    }
    assert_eq!(o_gbp["currency"]["rate_date"], rate_day.as_str());
    let (h_usd, h_gbp) = (
        query(&["history", "--tld", "io"]),
        query(&["history", "--tld", "io", "--currency", "GBP"]),
    );
    let mut changes = 0;
    for (key, r) in h_usd["history"].as_object().unwrap() {
        for (a, b) in r["changes"]
            .as_array()
            .unwrap()
            .iter()
            .zip(h_gbp["history"][key]["changes"].as_array().unwrap())
        {
            if a["register_price"].is_number() {
                assert_eq!(
                    json_cents(&b["register_price"]),
                    to_gbp(&a["register_price"])
                );
                changes += 1;
            }
        }
    }
    assert!(changes > 10, "{changes}");

    // A ranking is the same in every currency the snapshot has.
    let ranking = |body: &Value| -> Vec<(String, Vec<String>)> {
        body["results"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(tld, r)| {
                let names = r["cheapest_register"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["registrar_name"].as_str().unwrap().to_string())
                    .collect();
                (tld.clone(), names)
            })
            .collect()
    };
    for sort in ["register", "total_3_year"] {
        let args = [
            "cheapest", "--tlds", &list, "--limit", "100", "--sort", sort,
        ];
        let in_usd = ranking(&query(&args));
        for code in rates.keys().chain(std::iter::once(&"EUR".to_string())) {
            let mut with = args.to_vec();
            with.extend(["--currency", code]);
            assert_eq!(ranking(&query(&with)), in_usd, "{sort} in {code}");
        }
    }
}

#[test]
fn every_member_price_of_the_openprovider_feed_is_kept_apart_and_never_ranked() {
    // The feed, read here: `member-price` beside `regular-price`, the price for everyone.
    let feed: Value = serde_json::from_slice(
        &std::fs::read(
            Path::new(ROOT).join("snapshots/feeds/openprovider/openprovider-prices.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let feed = feed["data"].as_object().unwrap();
    let sold: Vec<String> = price_source()
        .into_iter()
        .filter(|r| r["registrar"] == "openprovider" && !r["register"].is_empty())
        .map(|r| r["tld"].clone())
        .collect();
    assert!(sold.len() > 1_500, "{} Openprovider TLDs", sold.len());
    let mut checked = 0;
    for list in chunks(&sold) {
        let body = query(&["prices", "--tlds", &list, "--registrars", "openprovider"]);
        for (tld, by_registrar) in body["results"].as_object().unwrap() {
            let r = &by_registrar["openprovider"];
            let entry = &feed[tld.as_str()];
            let regular = &entry["regular-price"];
            assert_eq!(
                json_cents(&r["register_price"]),
                (regular["create"].as_f64().unwrap() * 100.0).round() as u64,
                "{tld}: the ranked price is the price for everyone"
            );
            let member = &entry["member-price"];
            let shown = &r["member_prices"];
            for (op, field) in [("create", "register"), ("renew", "renew")] {
                let feed_cents = (member[op].as_f64().unwrap() * 100.0).round() as u64;
                if feed_cents == 0 {
                    assert!(
                        shown.get(field).is_none_or(Value::is_null),
                        "{tld}: {shown}"
                    );
                } else {
                    assert_eq!(json_cents(&shown[field]), feed_cents, "{tld} {op}: {shown}");
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, sold.len());
    // The cheapest ranking is by the price for everyone: an Openprovider entry is where
    // its regular price puts it, its member prices beside it.
    let body = query(&["cheapest", "--tlds", "com", "--limit", "100", "--public"]);
    let entries = body["results"]["com"]["cheapest_register"]
        .as_array()
        .unwrap();
    let prices: Vec<u64> = entries
        .iter()
        .map(|e| json_cents(&e["register_price"]))
        .collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]), "{prices:?}");
    assert!(
        entries.iter().any(|e| e.get("member_prices").is_some()),
        "{entries:?}"
    );
}

#[test]
fn a_past_day_ranked_by_real_cost_orders_that_days_sellers_by_it() {
    for sort in ["renew", "total_3_year", "total_5_year"] {
        for tld in ["com", "net", "xyz", "io"] {
            let by_year = query(&[
                "cheapest",
                "--tlds",
                tld,
                "--limit",
                "100",
                "--at",
                "2025-10-01",
            ]);
            let sorted = query(&[
                "cheapest",
                "--tlds",
                tld,
                "--limit",
                "100",
                "--at",
                "2025-10-01",
                "--sort",
                sort,
            ]);
            let list = |v: &Value| {
                v["results"][tld]["cheapest_register"]
                    .as_array()
                    .unwrap()
                    .clone()
            };
            let (a, b) = (list(&by_year), list(&sorted));
            assert!(!a.is_empty(), "{tld} on 2025-10-01");
            let key = |e: &Value| {
                let (reg, ren) = (
                    json_cents(&e["register_price"]),
                    json_cents(&e["renew_price"]),
                );
                let k = match sort {
                    "renew" => ren,
                    "total_3_year" => reg + 2 * ren,
                    _ => reg + 4 * ren,
                };
                (k, reg, e["registrar_key"].as_str().unwrap().to_string())
            };
            let mut expected: Vec<_> = a.iter().map(key).collect();
            expected.sort();
            let got: Vec<_> = b.iter().map(key).collect();
            assert_eq!(got, expected, "{tld} sorted by {sort} on 2025-10-01");
        }
    }
}
