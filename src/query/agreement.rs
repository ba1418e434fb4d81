//! [`super::tld_offers`] against the price endpoints' own JSON: for the real built-in
//! snapshot, every TLD, a viewer who sees everything, the free plan (22 free TLDs, 5
//! sellers) and the basic plan (every TLD, 5 sellers), under a staleness rule that
//! leaves stale offers out, one that keeps them, and none, the typed reader and the
//! writers of cheapest (both shapes, several limits), the registrar listing and the
//! price records say the same. The JSON is parsed here only.

use serde_json::Value;

use super::view::{Offered, TldOffers, Triple};
use super::*;

/// A JSON price as cents (`None` for `null`); panics on anything else.
fn cents_of(v: &Value) -> Option<u64> {
    if v.is_null() {
        return None;
    }
    let dollars = v.as_f64().unwrap_or_else(|| panic!("a price: {v}"));
    Some((dollars * 100.0).round() as u64)
}

fn iso(ms: i64) -> Value {
    Value::from(time::iso_millis(ms))
}

fn triple_of(v: &Value) -> Triple {
    Triple {
        register: cents_of(&v["register"]),
        renew: cents_of(&v["renew"]),
        transfer: cents_of(&v["transfer"]),
    }
}

fn stale_of(v: &Value) -> bool {
    match v.get("stale") {
        None => false,
        Some(Value::Bool(true)) => true,
        Some(other) => panic!("\"stale\":{other}: only true is written"),
    }
}

fn stale_count_of(v: &Value) -> usize {
    v.get("stale_count")
        .map_or(0, |n| n.as_u64().expect("a count") as usize)
}

fn parse(out: &[u8]) -> Value {
    serde_json::from_slice(out).expect("JSON")
}

/// What every entry that shows an offer says of it.
fn same_offer(what: &str, e: &Value, o: &Offered<'_>) {
    assert_eq!(e["last_updated"], iso(o.updated_ms), "{what}");
    assert_eq!(stale_of(e), o.stale, "{what}");
}

fn check_cheapest(snap: &ArchivedSnapshotData, v: &TldOffers<'_>, fresh: Freshness, sight: Sight) {
    let ranked: Vec<&Offered<'_>> = v.ranked().collect();
    let tlds = [v.tld];
    let mut out = Vec::new();
    for shape in [Shape::Public, Shape::Client] {
        for limit in [1, 3, 5, usize::MAX] {
            let req = CheapestRequest {
                tlds: &tlds,
                limit,
                shape,
                tier: None,
                fresh,
                sight,
            };
            cheapest(snap, &req, &mut out).expect("a known TLD");
            let body = parse(&out);
            let r = &body["results"][v.tld];
            let what = format!("cheapest {} {shape:?} limit {limit}", v.tld);
            let entries = r["cheapest_register"].as_array().expect("entries");
            assert_eq!(entries.len(), ranked.len().min(limit), "{what}");
            for (i, (e, o)) in entries.iter().zip(&ranked).enumerate() {
                let what = format!("{what} rank {}", i + 1);
                assert_eq!(e["rank"], Value::from(i + 1), "{what}");
                assert_eq!(e["registrar_name"], o.registrar_name, "{what}");
                assert_eq!(cents_of(&e["register_price"]), o.prices.register, "{what}");
                assert_eq!(cents_of(&e["renew_price"]), o.prices.renew, "{what}");
                assert_eq!(
                    cents_of(&e["total_cost_5_year"]),
                    o.total_5_year(),
                    "{what}"
                );
                same_offer(&what, e, o);
                match shape {
                    Shape::Client => assert_eq!(e["registrar_key"], o.registrar_key, "{what}"),
                    Shape::Public => {
                        assert_eq!(cents_of(&e["transfer_price"]), o.prices.transfer, "{what}");
                        assert_eq!(
                            cents_of(&e["total_cost_1_year"]),
                            o.prices.register,
                            "{what}"
                        );
                    }
                }
            }
            assert_eq!(
                r["registrar_count"],
                Value::from(v.registrar_count),
                "{what}"
            );
            assert_eq!(stale_count_of(r), v.stale_count, "{what}");
            if shape == Shape::Public {
                assert_eq!(triple_of(&r["avg_prices"]), v.avg_prices, "{what}");
            }
        }
    }
}

fn check_listing(snap: &ArchivedSnapshotData, v: &TldOffers<'_>, fresh: Freshness, sight: Sight) {
    let ranked: Vec<&Offered<'_>> = v.ranked().collect();
    let mut out = Vec::new();
    let req = RegistrarsRequest {
        tld: v.tld,
        include_prices: true,
        sight,
        public_url: DEFAULT_PUBLIC_URL,
        fresh,
    };
    registrars(snap, &req, &mut out).expect("a known TLD");
    let body = parse(&out);
    let what = format!("registrars of {}", v.tld);
    assert_eq!(body["tld"], v.tld, "{what}");
    assert_eq!(
        body["registrar_count"],
        Value::from(v.registrar_count),
        "{what}"
    );
    let entries = body["registrars"].as_array().expect("entries");
    assert_eq!(entries.len(), ranked.len(), "{what}");
    for (e, o) in entries.iter().zip(&ranked) {
        let what = format!("{what}: {}", o.registrar_key);
        assert_eq!(e["name"], o.registrar_name, "{what}");
        assert_eq!(e["key"], o.registrar_key, "{what}");
        assert_eq!(triple_of(&e["prices"]), o.prices, "{what}");
        let original = &e["original_prices"];
        match &o.original {
            None => assert!(e.get("original_prices").is_none(), "{what}"),
            Some(q) => {
                assert_eq!(original["currency"], q.currency, "{what}");
                assert_eq!(triple_of(original), q.prices, "{what}");
                assert_eq!(
                    original["rate_date"],
                    Value::from(time::date_string(q.rate_date)),
                    "{what}"
                );
            }
        }
        same_offer(&what, e, o);
    }
    assert_eq!(stale_count_of(&body), v.stale_count, "{what}");
    let message = (ranked.len() < v.listed).then(|| listing_message(ranked.len(), v.listed));
    assert_eq!(
        body.get("message").and_then(Value::as_str),
        message.as_deref(),
        "{what}"
    );
}

fn check_records(snap: &ArchivedSnapshotData, v: &TldOffers<'_>, fresh: Freshness, sight: Sight) {
    let tlds = [v.tld];
    let mut out = Vec::new();
    let req = PricesRequest {
        tlds: &tlds,
        registrars: None,
        started: Stamp::now(),
        fresh,
        sight,
    };
    prices(snap, &req, &mut out).expect("a known TLD");
    let body = parse(&out);
    let what = format!("prices of {}", v.tld);
    let records = body["results"][v.tld].as_object().expect("records");
    assert_eq!(records.len(), v.offers.len(), "{what}");
    // In rank order: each key's record starts after the one before.
    let text = std::str::from_utf8(&out).expect("UTF-8");
    let mut at = 0;
    for o in &v.offers {
        let what = format!("{what}: {}", o.registrar_key);
        let r = &records[o.registrar_key];
        assert_eq!(cents_of(&r["register_price"]), o.prices.register, "{what}");
        assert_eq!(cents_of(&r["renew_price"]), o.prices.renew, "{what}");
        assert_eq!(cents_of(&r["transfer_price"]), o.prices.transfer, "{what}");
        same_offer(&what, r, o);
        let head = format!("\"{}\":{{", o.registrar_key);
        at += text[at..].find(&head).expect("in rank order") + head.len();
    }
}

#[test]
fn the_typed_offers_are_what_the_price_endpoints_answer() {
    let snapshot = crate::build::default_snapshot().expect("the built-in snapshot");
    let snap = snapshot.data();
    let now = time::parse_rfc3339("2026-12-01T12:00:00Z").expect("a time");
    let rules = [
        Freshness::new(now, DEFAULT_MAX_AGE_DAYS, false),
        Freshness::new(now, DEFAULT_MAX_AGE_DAYS, true),
        Freshness::ANY_AGE,
    ];
    let sights = [
        Sight::ALL,
        Sight::new(false, Some(5)),
        Sight::new(true, Some(5)),
    ];
    let (mut stale, mut cut, mut hidden_averages) = (0, 0, 0);
    for t in snap.tlds.iter() {
        let tld = snap.span_str(&t.name);
        for sight in sights {
            for fresh in rules {
                let v = tld_offers(snap, tld, fresh, sight).expect("a TLD of the snapshot");
                assert_eq!(v.tld, tld);
                stale += v.offers.iter().filter(|o| o.stale).count();
                cut += usize::from(v.offers.len() < v.registrar_count);
                hidden_averages += usize::from(v.avg_prices.register.is_none());
                check_cheapest(snap, &v, fresh, sight);
                check_listing(snap, &v, fresh, sight);
                check_records(snap, &v, fresh, sight);
            }
        }
    }
    // The walk met stale offers, plans' cuts and hidden averages.
    assert!(stale > 0 && cut > 0 && hidden_averages > 0);
    assert!(tld_offers(snap, "no-such-tld", rules[0], Sight::ALL).is_none());
}
