//! An independent recomputation of the issue 17 answers from `snapshots/source/*.csv`:
//! plain CSV reading and arithmetic here, nothing of the code under test but the query
//! calls whose bodies are checked. For every TLD of the shipped data: history (whole and
//! windowed), overview (members and non-members), prices as of several days (both
//! cheapest shapes) and the catalogue (every page, every order).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Value, json};
use tldsnap::query::{
    self, CatalogueRequest, CatalogueSort, CheapestRequest, HistoryRequest, OverviewRequest, Shape,
};
use tldsnap::snapshot::Snapshot;

const FREE: [&str; 22] = [
    "com", "net", "org", "co", "io", "ai", "me", "info", "us", "tech", "dev", "biz", "so",
    "online", "site", "store", "shop", "app", "blog", "xyz", "uk", "de",
];

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/source")
}

fn rows(file: &str) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(dir().join(file)).unwrap();
    r.records()
        .map(|rec| rec.unwrap().iter().map(str::to_owned).collect())
        .collect()
}

/// "10.88" -> 1088; "" -> None.
fn cents(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let frac = format!("{frac:0<2}");
    Some(whole.parse::<u64>().unwrap() * 100 + frac.parse::<u64>().unwrap())
}

fn usd(c: Option<u64>) -> Value {
    c.map_or(Value::Null, |c| json!(c as f64 / 100.0))
}

/// Days since 1970-01-01 of "YYYY-MM-DD" (Howard Hinnant's days_from_civil).
fn day(s: &str) -> i64 {
    let (y, m, d): (i64, i64, i64) = (
        s[0..4].parse().unwrap(),
        s[5..7].parse().unwrap(),
        s[8..10].parse().unwrap(),
    );
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

#[derive(Clone, Debug)]
struct Offer {
    registrar: String,
    register: Option<u64>,
    renew: Option<u64>,
    transfer: Option<u64>,
    /// The quote in the registrar's own currency, when it was not USD:
    /// (currency, register, renew, rate date).
    original: Option<(String, Option<u64>, Option<u64>, String)>,
    /// `updated_at` as `prices.csv` gives it (empty for a history row).
    updated: String,
}

struct Data {
    names: BTreeMap<String, String>,
    /// tld -> (type, manager)
    info: BTreeMap<String, (String, String)>,
    prices: BTreeMap<String, Vec<Offer>>,
    /// tld -> registrar -> [(date text, offer)] in date order
    history: BTreeMap<String, BTreeMap<String, Vec<(String, Offer)>>>,
    /// registrar -> (first, last) version day
    coverage: BTreeMap<String, (String, String)>,
    /// registrar -> its latest `updated_at`
    latest: BTreeMap<String, String>,
    /// registrar -> the days of its versions (history days and the current day)
    versions: BTreeMap<String, BTreeSet<String>>,
}

impl Data {
    /// The `last_updated` of registrar `reg`'s prices as of day `at`: its latest
    /// `updated_at` when the version in effect is its current one, else midnight of the
    /// version's day.
    fn updated_at(&self, reg: &str, at: &str) -> String {
        let day = self.versions[reg]
            .range(..=at.to_owned())
            .next_back()
            .unwrap()
            .clone();
        let latest = &self.latest[reg];
        if latest[..10] == day {
            latest.clone()
        } else {
            format!("{day}T00:00:00.000Z")
        }
    }
}

fn load() -> Data {
    let names = rows("registrars.csv")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    let info = rows("tlds.csv")
        .into_iter()
        .map(|r| (r[0].clone(), (r[1].clone(), r[2].clone())))
        .collect();
    let mut prices: BTreeMap<String, Vec<Offer>> = BTreeMap::new();
    let mut coverage: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut widen = |reg: &str, date: &str| {
        let e = coverage
            .entry(reg.to_owned())
            .or_insert((date.to_owned(), date.to_owned()));
        if date < e.0.as_str() {
            e.0 = date.to_owned();
        }
        if date > e.1.as_str() {
            e.1 = date.to_owned();
        }
    };
    let mut latest: BTreeMap<String, String> = BTreeMap::new();
    let mut versions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in rows("prices.csv") {
        widen(&r[1], &r[6][..10]);
        let l = latest.entry(r[1].clone()).or_default();
        if r[6] > *l {
            *l = r[6].clone();
        }
        let original = r
            .get(7)
            .filter(|c| !c.is_empty())
            .map(|c| (c.clone(), cents(&r[8]), cents(&r[9]), r[11].clone()));
        prices.entry(r[0].clone()).or_default().push(Offer {
            registrar: r[1].clone(),
            register: cents(&r[2]),
            renew: cents(&r[3]),
            transfer: cents(&r[4]),
            original,
            updated: r[6].clone(),
        });
    }
    for (reg, l) in &latest {
        versions
            .entry(reg.clone())
            .or_default()
            .insert(l[..10].to_owned());
    }
    let mut history: BTreeMap<String, BTreeMap<String, Vec<(String, Offer)>>> = BTreeMap::new();
    for r in rows("history.csv") {
        widen(&r[2], &r[0]);
        versions
            .entry(r[2].clone())
            .or_default()
            .insert(r[0].clone());
        history
            .entry(r[1].clone())
            .or_default()
            .entry(r[2].clone())
            .or_default()
            .push((
                r[0].clone(),
                Offer {
                    registrar: r[2].clone(),
                    register: cents(&r[3]),
                    renew: cents(&r[4]),
                    transfer: cents(&r[5]),
                    original: None,
                    updated: String::new(),
                },
            ));
    }
    for regs in history.values_mut() {
        for list in regs.values_mut() {
            list.sort_by(|a, b| a.0.cmp(&b.0));
        }
    }
    Data {
        names,
        info,
        prices,
        history,
        coverage,
        latest,
        versions,
    }
}

fn avg(values: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    let v: Vec<u64> = values.flatten().collect();
    (!v.is_empty()).then(|| (v.iter().sum::<u64>() + v.len() as u64 / 2) / v.len() as u64)
}

/// Sellers ranked: register, renew, key.
fn ranked(offers: &[Offer]) -> Vec<Offer> {
    let mut s: Vec<Offer> = offers
        .iter()
        .filter(|o| o.register.is_some())
        .cloned()
        .collect();
    s.sort_by(|a, b| (a.register, a.renew, &a.registrar).cmp(&(b.register, b.renew, &b.registrar)));
    s
}

/// A pick: `price` computes the amount from (register, renew), in USD and, when the
/// registrar quoted another currency, in that one too (`original_price`).
fn pick(
    d: &Data,
    o: Option<&Offer>,
    price: impl Fn(Option<u64>, Option<u64>) -> Option<u64>,
) -> Value {
    match o {
        None => Value::Null,
        Some(o) => {
            let mut v = json!({"price": usd(price(o.register, o.renew)), "registrar_key": o.registrar, "registrar_name": d.names[&o.registrar]});
            if let Some((currency, register, renew, rate_date)) = &o.original {
                v["original_price"] = json!({"currency": currency, "price": usd(price(*register, *renew)), "rate_date": rate_date});
            }
            v["last_updated"] = json!(o.updated);
            v
        }
    }
}

fn snapshot() -> Snapshot {
    tldsnap::build::default_snapshot().unwrap()
}

fn body(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap()
}

/// `v` without the offers' terms (`promotion`, `regular_register_price`, `icann_fee`,
/// `icann_fee_included`, `coupon`, `member_prices`), anywhere in it.
fn without_terms(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in [
                    "promotion",
                    "regular_register_price",
                    "icann_fee",
                    "icann_fee_included",
                    "coupon",
                    "member_prices",
                ] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

fn change(date: &str, o: &Offer) -> Value {
    json!({"date": date, "register_price": usd(o.register), "renew_price": usd(o.renew), "transfer_price": usd(o.transfer)})
}

#[test]
fn history_of_every_tld() {
    let d = load();
    let snap = snapshot();
    let mut out = Vec::new();
    let windows = [(None, None), (Some("2025-10-01"), Some("2026-01-31"))];
    for (tld, regs) in &d.history {
        for (from, to) in windows {
            let req = HistoryRequest {
                sight: tldsnap::sight::Sight::ALL,
                tld,
                registrars: None,
                from: from.map(day),
                to: to.map(day),
            };
            query::history(snap.data(), &req, &mut out).unwrap();
            let mut expected = serde_json::Map::new();
            for (reg, list) in regs {
                let (first, last) = &d.coverage[reg];
                let before =
                    from.and_then(|f| list.iter().rev().find(|(date, _)| date.as_str() < f));
                let changes: Vec<Value> = list
                    .iter()
                    .filter(|(date, _)| {
                        from.is_none_or(|f| date.as_str() >= f)
                            && to.is_none_or(|t| date.as_str() <= t)
                    })
                    .map(|(date, o)| change(date, o))
                    .collect();
                expected.insert(
                    reg.clone(),
                    json!({
                        "coverage": {"first": first, "last": last},
                        "price_at_from": before.map_or(Value::Null, |(date, o)| change(date, o)),
                        "changes": changes,
                    }),
                );
            }
            let expected = json!({"tld": tld, "from": from, "to": to, "history": expected});
            assert_eq!(body(&out), expected, "{tld} {from:?}..{to:?}");
        }
    }
}

fn catalogue_names(d: &Data) -> BTreeSet<String> {
    d.info
        .keys()
        .chain(d.prices.keys())
        .chain(d.history.keys())
        .cloned()
        .collect()
}

fn facts(d: &Data, tld: &str) -> serde_json::Map<String, Value> {
    let top = tld.rsplit('.').next().unwrap();
    let kind = d
        .info
        .get(top)
        .map(|i| i.0.as_str())
        .filter(|k| !k.is_empty());
    let manager = d
        .info
        .get(tld)
        .filter(|_| top == tld)
        .map(|i| i.1.as_str())
        .filter(|m| !m.is_empty());
    let unicode = if tld.split('.').any(|l| l.starts_with("xn--")) {
        idna::domain_to_unicode(tld).0
    } else {
        tld.to_owned()
    };
    let v = json!({"tld": tld, "unicode": unicode, "type": kind, "manager": manager, "free": FREE.contains(&tld)});
    v.as_object().unwrap().clone()
}

#[test]
fn overview_of_every_tld() {
    let d = load();
    let snap = snapshot();
    let mut out = Vec::new();
    for tld in catalogue_names(&d) {
        let offers = d.prices.get(&tld).cloned().unwrap_or_default();
        let sellers = ranked(&offers);
        for members in [true, false] {
            query::overview(
                snap.data(),
                &OverviewRequest {
                    fresh: tldsnap::query::Freshness::ANY_AGE,
                    tld: &tld,
                    sight: tldsnap::sight::Sight::new(members, None),
                },
                &mut out,
            )
            .unwrap();
            let shown = members || FREE.contains(&tld.as_str());
            // A non-member sees no seller of a paid TLD: an average is hidden when it is
            // one seller's price (of the sellers that quote a transfer price, for that).
            let average = shown || sellers.len() != 1;
            let quoting = sellers.iter().filter(|o| o.transfer.is_some()).count();
            let transfer_average = shown || quoting != 1;
            let mut e = facts(&d, &tld);
            e.insert("registrar_count".into(), json!(sellers.len()));
            let avg = |shown: bool, f: fn(&Offer) -> Option<u64>| {
                if shown {
                    usd(avg(sellers.iter().map(f)))
                } else {
                    Value::Null
                }
            };
            e.insert(
                "avg_prices".into(),
                json!({
                    "register": avg(average, |o| o.register),
                    "renew": avg(average, |o| o.renew),
                    "transfer": avg(transfer_average, |o| o.transfer),
                }),
            );
            let low_renew = sellers
                .iter()
                .min_by(|a, b| (a.renew, &a.registrar).cmp(&(b.renew, &b.registrar)));
            let five = |o: &Offer| o.register.unwrap() + 4 * o.renew.unwrap();
            let low_5 = sellers
                .iter()
                .min_by(|a, b| (five(a), &a.registrar).cmp(&(five(b), &b.registrar)));
            let hide = |v: Value| if shown { v } else { Value::Null };
            e.insert(
                "cheapest_register".into(),
                hide(pick(&d, sellers.first(), |r, _| r)),
            );
            e.insert("lowest_renew".into(), hide(pick(&d, low_renew, |_, n| n)));
            e.insert(
                "lowest_5_year".into(),
                hide(pick(&d, low_5, |r, n| Some(r? + 4 * n?))),
            );
            let mut members_only = Vec::new();
            if !(average && transfer_average) {
                members_only.push("avg_prices");
            }
            if !shown && !sellers.is_empty() {
                members_only.extend(["cheapest_register", "lowest_renew", "lowest_5_year"]);
            }
            if !members_only.is_empty() {
                e.insert("members_only".into(), json!(members_only));
            }
            assert_eq!(body(&out), Value::Object(e), "{tld} members={members}");
        }
    }
}

#[test]
fn cheapest_as_of_days_for_every_tld() {
    let d = load();
    let snap = snapshot();
    let mut out = Vec::new();
    for at in [
        "2021-11-22",
        "2023-12-31",
        "2025-06-30",
        "2025-10-01",
        "2025-12-02",
        "2026-03-01",
        "2026-08-22",
    ] {
        for (tld, regs) in &d.history {
            // The state of each registrar on `at`; a TLD without any change yet is unknown.
            let states: Vec<Offer> = regs
                .values()
                .filter_map(|list| list.iter().rev().find(|(date, _)| date.as_str() <= at))
                .map(|(_, o)| o.clone())
                .collect();
            let known = regs.values().any(|l| l[0].0.as_str() <= at);
            for shape in [Shape::Client, Shape::Public] {
                let req = CheapestRequest {
                    fresh: tldsnap::query::Freshness::ANY_AGE,
                    sight: tldsnap::sight::Sight::ALL,
                    tlds: &[tld.as_str()],
                    limit: 100,
                    shape,
                    tier: Some("pro"),
                };
                let got = query::cheapest_at(snap.data(), &req, day(at), &mut out);
                if !known {
                    assert!(got.is_err(), "{tld} at {at}: known too early");
                    continue;
                }
                got.unwrap();
                let sellers = ranked(&states);
                let entries: Vec<Value> = sellers
                    .iter()
                    .enumerate()
                    .map(|(i, o)| {
                        let (r, n) = (o.register.unwrap(), o.renew.unwrap());
                        let updated = d.updated_at(&o.registrar, at);
                        match shape {
                            Shape::Client => json!({"rank": i + 1, "registrar_name": d.names[&o.registrar], "registrar_key": o.registrar,
                                "register_price": usd(Some(r)), "renew_price": usd(Some(n)), "total_cost_5_year": usd(Some(r + 4 * n)),
                                "last_updated": updated}),
                            Shape::Public => json!({"rank": i + 1, "registrar_name": d.names[&o.registrar],
                                "register_price": usd(Some(r)), "renew_price": usd(Some(n)), "transfer_price": usd(o.transfer),
                                "total_cost_1_year": usd(Some(r)), "total_cost_3_year": usd(Some(r + 2 * n)), "total_cost_5_year": usd(Some(r + 4 * n)),
                                "last_updated": updated}),
                        }
                    })
                    .collect();
                let mut result =
                    json!({"cheapest_register": entries, "registrar_count": sellers.len()});
                let expected = match shape {
                    Shape::Client => {
                        json!({"results": {tld.as_str(): result}, "meta": {"total_tlds": 1, "tier": "pro"}})
                    }
                    Shape::Public => {
                        result["avg_prices"] = json!({
                            "register": usd(avg(sellers.iter().map(|o| o.register))),
                            "renew": usd(avg(sellers.iter().map(|o| o.renew))),
                            "transfer": usd(avg(sellers.iter().map(|o| o.transfer))),
                        });
                        json!({"results": {tld.as_str(): result}})
                    }
                };
                // The terms a current state carries (promotion, ICANN fee) are the
                // snapshot's, not the history's: tests/history_at.rs checks them.
                assert_eq!(
                    without_terms(body(&out)),
                    expected,
                    "{tld} at {at} {shape:?}"
                );
            }
        }
    }
}

#[test]
fn catalogue_pages_in_every_order() {
    let d = load();
    let snap = snapshot();
    let id = snap.header().content_hash as u64;
    let names = catalogue_names(&d);
    let cheapest = |tld: &str| d.prices.get(tld).and_then(|o| ranked(o).first().cloned());
    let sellers = |tld: &str| d.prices.get(tld).map_or(0, |o| ranked(o).len());
    let entry = |tld: &str, members: bool| {
        let mut e = facts(&d, tld);
        let offers = d.prices.get(tld).cloned().unwrap_or_default();
        let s = ranked(&offers);
        let shown = members || FREE.contains(&tld);
        let average = shown || s.len() != 1;
        e.insert("registrar_count".into(), json!(s.len()));
        e.insert(
            "avg_register_price".into(),
            if average {
                usd(avg(s.iter().map(|o| o.register)))
            } else {
                Value::Null
            },
        );
        let c = s.first();
        e.insert(
            "cheapest_register".into(),
            if shown {
                pick(&d, c, |r, _| r)
            } else {
                Value::Null
            },
        );
        match (average, shown || s.is_empty()) {
            (true, true) => {}
            (true, false) => {
                e.insert("members_only".into(), json!(["cheapest_register"]));
            }
            (false, _) => {
                e.insert(
                    "members_only".into(),
                    json!(["avg_register_price", "cheapest_register"]),
                );
            }
        }
        Value::Object(e)
    };
    let mut by_name: Vec<&String> = names.iter().collect();
    by_name.sort();
    let mut by_cheapest = by_name.clone();
    by_cheapest.sort_by_key(|t| {
        (
            cheapest(t).map_or(u64::MAX, |o| o.register.unwrap()),
            t.as_str(),
        )
    });
    // A non-member's order by price: the prices it sees, then the sold TLDs whose
    // price it does not see by name, then the unsold by name.
    let mut by_cheapest_shown = by_name.clone();
    by_cheapest_shown.sort_by_key(|t| {
        let sold = sellers(t) > 0;
        let shown = FREE.contains(&t.as_str());
        match (sold, shown) {
            (true, true) => (0, cheapest(t).unwrap().register.unwrap(), t.as_str()),
            (true, false) => (1, 0, t.as_str()),
            (false, _) => (2, 0, t.as_str()),
        }
    });
    let mut by_registrars = by_name.clone();
    by_registrars.sort_by_key(|t| (std::cmp::Reverse(sellers(t)), t.as_str()));
    let mut out = Vec::new();
    for (sort, order) in [
        (CatalogueSort::Name, &by_name),
        (CatalogueSort::Cheapest, &by_cheapest),
        (CatalogueSort::Registrars, &by_registrars),
    ] {
        for members in [true, false] {
            let mut got: Vec<Value> = Vec::new();
            let mut cursor = None;
            for _ in 0..100 {
                let req = CatalogueRequest {
                    q: None,
                    kind: None,
                    sort,
                    limit: 500,
                    cursor,
                    sight: tldsnap::sight::Sight::new(members, None),
                    snapshot: id,
                };
                query::catalogue(snap.data(), &req, &mut out).unwrap();
                let page = body(&out);
                assert_eq!(page["meta"]["total"], names.len());
                got.extend(page["tlds"].as_array().unwrap().iter().cloned());
                match page["meta"]["next_cursor"].as_str() {
                    Some(c) => cursor = Some(query::Cursor::decode(c).unwrap()),
                    None => break,
                }
            }
            let order = if sort == CatalogueSort::Cheapest && !members {
                &by_cheapest_shown
            } else {
                order
            };
            let expected: Vec<Value> = order.iter().map(|t| entry(t, members)).collect();
            assert_eq!(got.len(), expected.len(), "{sort:?}");
            for (g, e) in got.iter().zip(&expected) {
                assert_eq!(g, e, "{sort:?} members={members}");
            }
        }
    }
    // Every IANA TLD is there, sold or not.
    assert!(d.info.keys().all(|t| names.contains(t)));
    // Filters: substring of either form, and the type.
    for (q, kind) in [
        (Some("co"), None),
        (Some("рф"), None),
        (None, Some("sponsored")),
        (Some("xn--"), Some("country-code")),
    ] {
        let req = CatalogueRequest {
            q,
            kind,
            sort: CatalogueSort::Name,
            limit: 500,
            cursor: None,
            sight: tldsnap::sight::Sight::new(true, None),
            snapshot: id,
        };
        query::catalogue(snap.data(), &req, &mut out).unwrap();
        let page = body(&out);
        let expected: Vec<&String> = by_name
            .iter()
            .copied()
            .filter(|t| {
                let f = facts(&d, t);
                q.is_none_or(|q| t.contains(q) || f["unicode"].as_str().unwrap().contains(q))
                    && kind.is_none_or(|k| f["type"] == k)
            })
            .collect();
        let got: Vec<&str> = page["tlds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tld"].as_str().unwrap())
            .collect();
        assert_eq!(got, expected, "q={q:?} type={kind:?}");
        assert_eq!(page["meta"]["total"], expected.len());
        assert!(!got.is_empty(), "q={q:?} type={kind:?} matched nothing");
    }
    // A cursor of another snapshot is refused, naming the parameter.
    let req = CatalogueRequest {
        q: None,
        kind: None,
        sort: CatalogueSort::Name,
        limit: 1,
        cursor: None,
        sight: tldsnap::sight::Sight::new(true, None),
        snapshot: id,
    };
    query::catalogue(snap.data(), &req, &mut out).unwrap();
    let c = query::Cursor::decode(body(&out)["meta"]["next_cursor"].as_str().unwrap()).unwrap();
    let other = CatalogueRequest {
        cursor: Some(c),
        snapshot: id ^ 1,
        ..req
    };
    let err = query::catalogue(snap.data(), &other, &mut out).unwrap_err();
    assert!(
        matches!(
            err,
            query::QueryError::InvalidParameter { name: "cursor", .. }
        ),
        "{err:?}"
    );
}
