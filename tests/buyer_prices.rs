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
//!   every currency of the table;
//! - over HTTP, the catalogue (pages of 300 and 500 TLDs, by price and by name, and the
//!   next page by its cursor), the bulk lookup (50 names) and the domain search (its
//!   candidates) in EUR, GBP, JPY and CHF are the USD answers with every price converted
//!   as recomputed here, in the same order, at the same cost, and an unknown currency
//!   is a 400 on each.

mod http_support;

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

/// The rates the snapshot converts at: the data date is the newest price's day, and
/// its rates are the last ECB row on or before it that quotes USD.
fn data_date_rates() -> EcbRow {
    let data_day = price_source()
        .iter()
        .map(|r| r["updated_at"][..10].to_string())
        .max()
        .unwrap();
    ecb_table()
        .into_iter()
        .find(|(d, r)| *d <= data_day && r.contains_key("USD"))
        .unwrap()
}

#[test]
fn conversions_equal_a_recomputation_from_the_ecb_table_and_never_reorder() {
    let (rate_day, rates) = &data_date_rates();
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

/// The price members of the answers checked below (each converted on its own); the
/// `total_cost_N_year` members are sums of the converted prices of their object, and
/// `original_*` members (as the registrar quoted) are the same in every currency.
const PRICE_MEMBERS: [&str; 7] = [
    "register_price",
    "renew_price",
    "transfer_price",
    "price",
    "avg_register_price",
    "regular_register_price",
    "icann_fee",
];

/// Asserts that `conv` is `usd` with each price converted by `to` (USD cents to
/// hundredths of the currency) and nothing else changed: the same members, arrays in
/// the same order. Counts the prices checked.
fn assert_converted(
    usd: &Value,
    conv: &Value,
    to: &dyn Fn(u64) -> u64,
    at: &str,
    checked: &mut usize,
) {
    match (usd, conv) {
        (Value::Object(a), Value::Object(b)) => {
            assert_eq!(
                a.keys().collect::<Vec<_>>(),
                b.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (k, v) in a {
                let (w, here) = (&b[k], format!("{at}.{k}"));
                if k.starts_with("original_") {
                    assert_eq!(v, w, "{here}");
                } else if k == "member_prices" {
                    for op in ["register", "renew", "transfer"] {
                        let (v, w) = (&v[op], &w[op]);
                        if v.is_null() {
                            assert!(w.is_null(), "{here}.{op}: {w}");
                        } else {
                            assert_eq!(json_cents(w), to(json_cents(v)), "{here}.{op}");
                            *checked += 1;
                        }
                    }
                } else if PRICE_MEMBERS.contains(&k.as_str()) {
                    if v.is_null() {
                        assert!(w.is_null(), "{here}: {w}");
                    } else {
                        assert_eq!(json_cents(w), to(json_cents(v)), "{here}: {v} -> {w}");
                        *checked += 1;
                    }
                } else if let Some(n) = k
                    .strip_prefix("total_cost_")
                    .and_then(|r| r.strip_suffix("_year"))
                {
                    let renewals: u64 = n.parse::<u64>().unwrap() - 1;
                    let (register, renew) = (
                        json_cents(&b["register_price"]),
                        json_cents(&b["renew_price"]),
                    );
                    assert_eq!(json_cents(w), register + renewals * renew, "{here}");
                    *checked += 1;
                } else {
                    assert_converted(v, w, to, &here, checked);
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{at}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_converted(x, y, to, &format!("{at}[{i}]"), checked);
            }
        }
        _ => assert_eq!(usd, conv, "{at}"),
    }
}

/// `body` without its `meta.currency`, which must name `code` at the data date's rate.
fn without_currency(body: &Value, code: &str, rate_day: &str) -> Value {
    let mut body = body.clone();
    let member = body["meta"]
        .as_object_mut()
        .and_then(|m| m.remove("currency"))
        .unwrap_or_else(|| panic!("no meta.currency in {code}"));
    assert_eq!(member["code"], code);
    assert_eq!(member["rate_date"], rate_day);
    assert_eq!(
        member["source"],
        "ECB euro foreign exchange reference rates"
    );
    body
}

/// The test plans, `unlimited` without a daily search limit either.
const PLANS: &str = r#"{
  "unlimited": {"credits_per_month": null, "rate_per_second": null, "burst": null, "tlds": "all", "registrar_list_limit": null, "searches_per_day": null},
  "tiny": {"credits_per_month": 2, "rate_per_second": null, "burst": null, "tlds": "all", "registrar_list_limit": 5}
}"#;

/// The built snapshot of the shipped data served over HTTP; the keys of the plans
/// `unlimited` (every TLD, every seller, any number of requests) and `pro`.
fn server() -> (http_support::TempDir, Server, String, String) {
    let dir = http_support::TempDir::new("buyer-currency");
    let (keys_path, keys) = dir.keys();
    let server = Server::start(http_support::Options {
        plans: PLANS,
        ..http_support::Options::new(snapshot(), &keys_path)
    });
    let (unlimited, pro) = (keys["unlimited"].clone(), keys["pro"].clone());
    (dir, server, unlimited, pro)
}

use http_support::{Response, Server};

fn ok(r: Response, what: &str) -> Response {
    assert_eq!(r.status, 200, "{what}: {}", r.text());
    r
}

/// The currencies the HTTP answers are checked in: two with cents beside the euro, and
/// the yen, without decimals.
const CURRENCIES: [&str; 4] = ["EUR", "GBP", "JPY", "CHF"];

#[test]
fn catalogue_lookup_and_search_convert_every_price_and_keep_their_order() {
    let (rate_day, rates) = &data_date_rates();
    let usd = rates["USD"];
    let (_dir, server, key, pro) = server();
    let key = Some(key.as_str());
    let get = |target: &str| ok(server.get(target, key), target);
    let post =
        |target: &str, body: &Value| ok(server.request("POST", target, key, Some(body)), target);

    // The USD answers: catalogue pages, a bulk of 50 names, two searches.
    let pages = [
        "/api/v1/client/tlds?sort=cheapest&limit=300",
        "/api/v1/client/tlds?limit=500",
        "/api/v1/tlds?sort=registrars&limit=250",
    ];
    let page_usd: Vec<Value> = pages.iter().map(|p| get(p).json()).collect();
    let by_price = &page_usd[0]["tlds"];
    assert_eq!(by_price.as_array().unwrap().len(), 300);
    let sold: Vec<String> = page_usd[2]["tlds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["registrar_count"].as_u64() > Some(0))
        .map(|e| e["tld"].as_str().unwrap().to_owned())
        .collect();
    let mut domains: Vec<String> = sold
        .iter()
        .take(44)
        .enumerate()
        .map(|(i, t)| {
            if i % 3 == 0 {
                format!("www.brand{i}.{t}")
            } else {
                format!("brand{i}.{t}")
            }
        })
        .collect();
    // Others: a second-level suffix, Unicode, an unknown suffix, not a name, a name
    // given twice (answered once).
    domains.extend(
        [
            "shop.example.co.uk",
            "bücher.de",
            "x.nope",
            "not a name",
            "example.com",
        ]
        .map(String::from),
    );
    domains.push(format!("BRAND1.{}", sold[1]));
    assert_eq!(domains.len(), 50);
    let bulk = serde_json::json!({ "domains": domains });
    let lookup = "/api/v1/client/domains/lookup?limit=100";
    let lookup_usd = post(lookup, &bulk);
    let searches = [
        "/api/v1/client/domains/search?q=best%20shop&limit=100",
        "/api/v1/client/domains/search?q=bestshop.io&limit=40&max_price=5",
    ];
    let search_usd: Vec<Response> = searches.iter().map(|s| get(s)).collect();
    assert_eq!(
        search_usd[0].json()["results"].as_array().unwrap().len(),
        100
    );

    let (mut in_catalogue, mut in_lookup, mut in_search) = (0, 0, 0);
    for code in CURRENCIES {
        let other = if code == "EUR" { (1, 0) } else { rates[code] };
        let to = move |cents: u64| convert(cents, usd, other, code == "JPY");
        let with = |target: &str| format!("{target}&currency={}", code.to_lowercase());

        // The catalogue: every entry of each page, in the same order, the same cursor.
        for (page, usd_body) in pages.iter().zip(&page_usd) {
            let body = without_currency(&get(&with(page)).json(), code, rate_day);
            assert_converted(usd_body, &body, &to, page, &mut in_catalogue);
        }
        // By price, the order is the stored USD one, and so non-decreasing converted.
        let body = get(&with(pages[0])).json();
        let shown: Vec<u64> = body["tlds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| json_cents(&e["cheapest_register"]["price"]))
            .collect();
        assert!(shown.windows(2).all(|w| w[0] <= w[1]), "{code}: {shown:?}");
        // The next page, by the cursor of a page in this currency.
        let cursor = body["meta"]["next_cursor"].as_str().unwrap();
        let next = format!("/api/v1/client/tlds?sort=cheapest&limit=300&cursor={cursor}");
        let next_usd = get(&next).json();
        let next_conv = without_currency(&get(&with(&next)).json(), code, rate_day);
        assert_converted(&next_usd, &next_conv, &to, &next, &mut in_catalogue);

        // The bulk lookup: each name's cheapest registrars, converted, same ranking.
        let r = post(&with(lookup), &bulk);
        assert_eq!(
            r.header("x-credits-cost"),
            lookup_usd.header("x-credits-cost")
        );
        let body = without_currency(&r.json(), code, rate_day);
        assert_converted(&lookup_usd.json(), &body, &to, lookup, &mut in_lookup);
        // Each name's entries are the cheapest endpoint's in the same currency.
        let com = body["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["input"] == "example.com")
            .unwrap();
        let cheapest = get(&with("/api/v1/client/prices/cheapest?tlds=com&limit=100")).json();
        for member in ["cheapest_register", "registrar_count"] {
            assert_eq!(
                com[member], cheapest["results"]["com"][member],
                "{code} {member}"
            );
        }

        // The domain search: the same candidates in the same order, converted.
        for (target, usd_r) in searches.iter().zip(&search_usd) {
            let r = get(&with(target));
            assert_eq!(r.header("x-credits-cost"), usd_r.header("x-credits-cost"));
            let body = without_currency(&r.json(), code, rate_day);
            assert_converted(&usd_r.json(), &body, &to, target, &mut in_search);
        }
    }
    // Every price of every page, entry and candidate was checked, in each currency.
    assert!(in_catalogue > 4 * 1000, "{in_catalogue} catalogue prices");
    assert!(in_lookup > 4 * 1000, "{in_lookup} lookup prices");
    assert!(in_search > 4 * 300, "{in_search} search prices");
    let looked_up = lookup_usd.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("cheapest_register").is_some())
        .count();
    assert!(looked_up >= 45, "{looked_up} names priced");

    // `tldsnap query tlds --currency` prints the API's page.
    let cli = query(&[
        "tlds",
        "--sort",
        "cheapest",
        "--limit",
        "300",
        "--currency",
        "JPY",
    ]);
    let api = get(&format!("{}&currency=JPY", pages[0])).json();
    assert_eq!(cli, api);

    // A currency the snapshot has no rate for is a 400 naming the parameter, before
    // the lookup's body is read.
    for target in [
        "/api/v1/client/tlds?currency=XXX",
        "/api/v1/tlds?currency=euro",
        "/api/v1/client/domains/search?q=bestshop&currency=XXX",
    ] {
        let doc = server
            .get(target, key)
            .assert_problem(400, "invalid_parameter");
        assert_eq!(doc["parameter"], "currency", "{target}");
    }
    for body in [bulk.clone(), serde_json::json!({ "nope": 1 })] {
        let r = server.request(
            "POST",
            "/api/v1/client/domains/lookup?currency=XXX",
            key,
            Some(&body),
        );
        let doc = r.assert_problem(400, "invalid_parameter");
        assert_eq!(doc["parameter"], "currency");
    }
    // And the catalogue's credits are one an answer, in any currency.
    let remaining = |target: &str| -> u64 {
        let r = ok(server.get(target, Some(&pro)), target);
        r.header("x-credits-remaining").unwrap().parse().unwrap()
    };
    let a = remaining("/api/v1/client/tlds?limit=5");
    let b = remaining("/api/v1/client/tlds?limit=5&currency=JPY");
    let c = remaining("/api/v1/client/tlds?limit=5&currency=JPY");
    assert_eq!((a - b, b - c), (1, 1));
}
