//! The plan matrix (docs/API.md, "What each plan sees"), walked through every door on
//! the real binary and the shipped real data: each price endpoint in its public and
//! client variants (today and `at` the data date), the registrar listing, the overview,
//! the history, the catalogue, every registrar's price list, the lookup, the audit and
//! the search, and the pages (`/tld/X`, the catalogue, every registrar's page, home),
//! for each plan and without a key. For each door and viewer it collects the registrars
//! named with a price of a TLD and checks them against the matrix: a door that lists
//! sellers lists exactly the ones the plan sees, in rank order; any other door names
//! only those. Averages that would give a hidden price are hidden, the catalogue sorted
//! by price places every hidden price after the shown ones, and a TLD nobody sells
//! shows no "Members" badge.

mod http_support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use http_support::{Binary, Conn, Response, TempDir};
use serde_json::{Value, json};
use tldsnap::access::plans::{Plans, TldScope};

/// The matrix: per viewer, whether it sees the prices of every TLD (else the 22 free
/// ones) and how many sellers of a TLD (`None`: all).
const MATRIX: [(&str, bool, Option<usize>); 5] = [
    ("public", false, Some(5)),
    ("free", false, Some(5)),
    ("basic", true, Some(5)),
    ("pro", true, None),
    ("enterprise", true, None),
];

/// `com` (17 sellers), a paid TLD with many (`xxx`, 14), a paid one with six (`ae`:
/// the basic plan hides exactly one), one with a single seller (`рф`).
const TLDS: [&str; 4] = ["com", "xxx", "ae", "xn--p1ai"];

/// The plans the server runs: the default plans' visibility (checked against
/// `Plans::default()` below), without rate, credit or search limits, so that the walk
/// is not refused for its number of requests.
fn plans_file() -> String {
    let mut m = serde_json::Map::new();
    for (name, all, sellers) in MATRIX {
        m.insert(
            name.into(),
            json!({"credits_per_month": null, "rate_per_second": null, "burst": null,
                   "tlds": if all { "all" } else { "free" }, "registrar_list_limit": sellers,
                   "searches_per_day": null}),
        );
    }
    Value::Object(m).to_string()
}

struct World {
    bin: Binary,
    keys: BTreeMap<&'static str, String>,
    /// Per TLD, every seller's key in rank order (what pro sees).
    ranking: BTreeMap<&'static str, Vec<String>>,
    /// Registrar name → key.
    by_name: BTreeMap<String, String>,
    /// Every registrar key.
    registrars: Vec<String>,
    data_date: String,
}

impl World {
    fn key(&self, viewer: &str) -> Option<&str> {
        self.keys.get(viewer).map(String::as_str)
    }

    fn get(&self, target: &str, viewer: &str) -> Response {
        self.bin.get(target, self.key(viewer))
    }

    fn json(&self, target: &str, viewer: &str) -> Option<Value> {
        let r = self.get(target, viewer);
        match r.status {
            200 => Some(r.json()),
            403 => None,
            s => panic!("{viewer} {target}: {s} {}", r.text()),
        }
    }

    fn post(&self, target: &str, viewer: &str, body: &Value) -> Option<Value> {
        let r = http_support::request(
            self.bin.addr.parse().unwrap(),
            "POST",
            target,
            self.key(viewer),
            Some(body),
        );
        match r.status {
            200 => Some(r.json()),
            403 => None,
            s => panic!("{viewer} POST {target}: {s} {}", r.text()),
        }
    }

    /// Every page of a listing, following `meta.next_cursor`.
    fn pages(&self, target: &str, viewer: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut cursor = String::new();
        loop {
            let d = self.json(&format!("{target}{cursor}"), viewer).unwrap();
            let next = d["meta"]["next_cursor"].as_str().map(str::to_owned);
            out.push(d);
            match next {
                Some(c) => cursor = format!("&cursor={c}"),
                None => return out,
            }
        }
    }

    /// A page as a browser asks for it, with the viewer's session cookie.
    fn page(&self, target: &str, cookie: Option<&str>) -> String {
        let cookie = cookie
            .map(|c| format!("Cookie: {c}\r\n"))
            .unwrap_or_default();
        let r = raw(
            &self.bin.addr,
            &format!(
                "GET {target} HTTP/1.1\r\nHost: t\r\nAccept: text/html\r\n{cookie}Connection: close\r\n\r\n"
            ),
        );
        assert_eq!(r.status, 200, "{target}: {}", r.text());
        r.text()
    }

    /// What `viewer` must see of `tld`: the first N sellers of the ranking.
    fn visible(&self, viewer: &str, tld: &str) -> Vec<String> {
        let (_, all, sellers) = MATRIX.iter().find(|m| m.0 == viewer).unwrap();
        let ranking = &self.ranking[tld];
        if !*all && !tldsnap::tld::is_free(tld) {
            return Vec::new();
        }
        ranking[..sellers.map_or(ranking.len(), |n| n.min(ranking.len()))].to_vec()
    }
}

fn raw(addr: &str, request: &str) -> Response {
    let mut conn = Conn::open(addr.parse().unwrap());
    conn.stream.get_mut().write_all(request.as_bytes()).unwrap();
    conn.read_response(false).unwrap().unwrap()
}

/// Signs in on the website with `key`: the session and CSRF cookies.
fn sign_in(addr: &str, key: &str) -> String {
    let form = raw(
        addr,
        "GET /signin HTTP/1.1\r\nHost: t\r\nAccept: text/html\r\nConnection: close\r\n\r\n",
    );
    let cookie = |r: &Response, name: &str| {
        r.headers
            .iter()
            .find(|(n, v)| n == "set-cookie" && v.starts_with(&format!("{name}=")))
            .map(|(_, v)| v.split(';').next().unwrap().to_owned())
            .unwrap_or_else(|| panic!("no {name} cookie"))
    };
    let csrf = cookie(&form, "tldsnap_csrf");
    let html = form.text();
    let at = html.find("name=\"csrf\" value=\"").unwrap() + 19;
    let token = &html[at..at + html[at..].find('"').unwrap()];
    let body = format!("csrf={token}&key={key}&next=%2F");
    let r = raw(
        addr,
        &format!(
            "POST /signin HTTP/1.1\r\nHost: t\r\nOrigin: http://t\r\nCookie: {csrf}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!(r.status, 303, "{}", r.text());
    format!("{}; {csrf}", cookie(&r, "tldsnap_session"))
}

/// The registrar keys of a ranked list of entries (`registrar_key`, or by name).
fn keys_of(w: &World, entries: &Value) -> Vec<String> {
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| match e.get("registrar_key") {
            Some(k) => k.as_str().unwrap().to_owned(),
            None => w.by_name[e["registrar_name"].as_str().unwrap()].clone(),
        })
        .collect()
}

/// Every `/registrars/KEY` link in an HTML fragment, in order.
fn linked_registrars(html: &str) -> Vec<String> {
    html.match_indices("href=\"/registrars/")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect()
}

/// What one door showed a viewer of one TLD.
enum Seen {
    /// A listing of sellers: exactly the visible ones, in rank order.
    Listing(Vec<String>),
    /// Registrars named with a price: a subset of the visible ones.
    Some(Vec<String>),
    /// Refused (403): nothing shown.
    Refused,
}

fn start() -> (TempDir, World) {
    // The matrix is the default plans' (the server runs them without rate limits).
    let defaults = Plans::default();
    for (name, all, sellers) in MATRIX {
        let p = defaults.get(name).unwrap();
        assert_eq!(p.tlds == TldScope::All, all, "{name}");
        assert_eq!(
            p.registrar_list_limit.map(|n| n as usize),
            sellers,
            "{name}"
        );
    }
    let dir = TempDir::new("matrix");
    let keys_path = dir.path("keys.json");
    let mut file = tldsnap::access::keys::KeysFile::default();
    let mut keys = BTreeMap::new();
    for (plan, _, _) in &MATRIX[1..] {
        keys.insert(*plan, file.add(plan, plan).unwrap().0);
    }
    file.save(&keys_path).unwrap();
    let plans = dir.path("plans.json");
    std::fs::write(&plans, plans_file()).unwrap();
    // No price is stale here: the staleness rule within a plan's sellers is
    // tests/engine.rs `a_plan_that_sees_five_sellers_sees_the_fresh_ones_of_the_stored_five`.
    let bin = Binary::start(&[
        "--max-age-days",
        "36500",
        "--keys",
        keys_path.to_str().unwrap(),
        "--plans",
        plans.to_str().unwrap(),
    ]);
    let mut w = World {
        bin,
        keys,
        ranking: BTreeMap::new(),
        by_name: BTreeMap::new(),
        registrars: Vec::new(),
        data_date: String::new(),
    };
    let list = w.json("/api/v1/registrars", "public").unwrap();
    for r in list["registrars"].as_array().unwrap() {
        let key = r["key"].as_str().unwrap().to_owned();
        w.by_name
            .insert(r["name"].as_str().unwrap().to_owned(), key.clone());
        w.registrars.push(key);
    }
    for tld in TLDS {
        let d = w
            .json(
                &format!("/api/v1/client/prices/cheapest?tlds={tld}&limit=100"),
                "enterprise",
            )
            .unwrap();
        let entries = &d["results"][tld]["cheapest_register"];
        assert_eq!(
            entries.as_array().unwrap().len() as u64,
            d["results"][tld]["registrar_count"].as_u64().unwrap(),
            "{tld}: the full ranking"
        );
        let ranking = keys_of(&w, entries);
        w.ranking.insert(tld, ranking);
    }
    assert_eq!(w.ranking["com"].len(), 17);
    assert_eq!(w.ranking["ae"].len(), 6);
    assert_eq!(w.ranking["xn--p1ai"].len(), 1);
    let ready = w.json("/readyz", "public").unwrap();
    w.data_date = ready["snapshot"]["data_updated"].as_str().unwrap()[..10].to_owned();
    (dir, w)
}

/// Every door, for `viewer` and `tld`.
fn doors(w: &World, viewer: &str, tld: &str, cookie: Option<&str>) -> Vec<(String, Seen)> {
    let keyed = viewer != "public";
    let mut out: Vec<(String, Seen)> = Vec::new();
    let mut door = |name: String, seen: Seen| out.push((name, seen));
    let at = &w.data_date;
    let all_keys = w.registrars.join(",");
    // The cheapest endpoints, public and client, today and on the data date.
    let mut cheapest = vec![
        format!("/api/v1/prices/cheapest?tlds={tld}&limit=100"),
        format!("/api/v1/prices/cheapest?tlds={tld}&limit=100&at={at}"),
    ];
    if keyed {
        cheapest.push(format!(
            "/api/v1/client/prices/cheapest?tlds={tld}&limit=100"
        ));
        cheapest.push(format!(
            "/api/v1/client/prices/cheapest?tlds={tld}&limit=100&at={at}"
        ));
    }
    for target in cheapest {
        let seen = match w.json(&target, viewer) {
            None => Seen::Refused,
            Some(d) => Seen::Listing(keys_of(w, &d["results"][tld]["cheapest_register"])),
        };
        door(target, seen);
    }
    // The prices endpoints: every seller, and every registrar by key.
    let mut prices = Vec::new();
    for base in ["/api/v1/prices", "/v1/prices", "/api/v1/client/prices"] {
        if base.contains("client") && !keyed {
            continue;
        }
        prices.push(format!("{base}?tlds={tld}"));
        prices.push(format!("{base}?tlds={tld}&at={at}"));
        prices.push(format!("{base}?tlds={tld}&registrars={all_keys}"));
        prices.push(format!("{base}?tlds={tld}&registrars={all_keys}&at={at}"));
    }
    for target in prices {
        let seen = match w.json(&target, viewer) {
            None => Seen::Refused,
            Some(d) => {
                let names: Vec<String> = d["results"][tld]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(_, r)| !r["register_price"].is_null())
                    .map(|(k, _)| k.clone())
                    .collect();
                // The records are keyed by registrar (a JSON object): compared in rank
                // order.
                let mut names = names;
                names.sort_by_key(|k| w.ranking[tld].iter().position(|r| r == k));
                Seen::Listing(names)
            }
        };
        door(target, seen);
    }
    if keyed {
        let target = format!("/api/v1/client/registrars/tld/{tld}?include_prices=true");
        let seen = match w.json(&target, viewer) {
            None => Seen::Refused,
            Some(d) => Seen::Listing(
                d["registrars"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["key"].as_str().unwrap().to_owned())
                    .collect(),
            ),
        };
        door(target, seen);
    }
    // The overview's picks, the history's registrars.
    let mut overview = vec![format!("/api/v1/overview/tld/{tld}")];
    let mut history = vec![format!("/api/v1/history/tld/{tld}")];
    if keyed {
        overview.push(format!("/api/v1/client/overview/tld/{tld}"));
        history.push(format!("/api/v1/client/history/tld/{tld}"));
        history.push(format!(
            "/api/v1/client/history/tld/{tld}?registrars={all_keys}"
        ));
    }
    for target in overview {
        let d = w.json(&target, viewer).unwrap();
        let picks = ["cheapest_register", "lowest_renew", "lowest_5_year"]
            .iter()
            .filter(|f| !d[**f].is_null())
            .map(|f| d[*f]["registrar_key"].as_str().unwrap().to_owned())
            .collect();
        door(target, Seen::Some(picks));
    }
    for target in history {
        let seen = match w.json(&target, viewer) {
            None => Seen::Refused,
            Some(d) => Seen::Some(
                d["history"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(_, h)| !h["changes"].as_array().unwrap().is_empty())
                    .map(|(k, _)| k.clone())
                    // Registrars that no longer sell the TLD hide nothing of today.
                    .filter(|k| w.ranking[tld].contains(k))
                    .collect(),
            ),
        };
        door(target, seen);
    }
    // The catalogue entry.
    for base in ["/api/v1/tlds", "/api/v1/client/tlds"] {
        if base.contains("client") && !keyed {
            continue;
        }
        let target = format!("{base}?q={tld}&limit=500");
        let d = w.json(&target, viewer).unwrap();
        let e = d["tlds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["tld"] == tld)
            .unwrap();
        let named = match &e["cheapest_register"] {
            Value::Null => Vec::new(),
            p => vec![p["registrar_key"].as_str().unwrap().to_owned()],
        };
        door(target, Seen::Some(named));
    }
    // Every registrar's price list: the registrars that list the TLD with a price.
    let mut listed = Vec::new();
    for key in &w.registrars {
        for d in w.pages(&format!("/api/v1/registrars/{key}?limit=500"), viewer) {
            for p in d["prices"].as_array().unwrap() {
                if p["tld"] == tld && !p["register_price"].is_null() {
                    listed.push(key.clone());
                }
            }
        }
    }
    listed.sort_by_key(|k| w.ranking[tld].iter().position(|r| r == k));
    door(
        "every /api/v1/registrars/{key}".into(),
        Seen::Listing(listed),
    );
    if keyed {
        // Lookup: the cheapest registrars of a domain of the TLD.
        let d = w
            .post(
                "/api/v1/client/domains/lookup?limit=100",
                viewer,
                &json!({"domains": [format!("example.{tld}")]}),
            )
            .unwrap();
        let r = &d["results"][0];
        let seen = match r.get("cheapest_register") {
            None => Seen::Refused,
            Some(entries) => Seen::Listing(keys_of(w, entries)),
        };
        door("POST /api/v1/client/domains/lookup".into(), seen);
        // Audit: a domain renewing dearly at no stated registrar, and one at each
        // registrar (a hidden one is taken as not selling the TLD).
        let mut holdings = vec![json!({"name": format!("a.{tld}"), "renew_price": "9999"})];
        for (i, key) in w.registrars.iter().enumerate() {
            holdings.push(json!({"name": format!("r{i}.{tld}"), "registrar": key}));
        }
        let d = w
            .post(
                "/api/v1/client/portfolio/audit",
                viewer,
                &json!({ "domains": holdings }),
            )
            .unwrap();
        let mut named = Vec::new();
        for row in d["domains"].as_array().unwrap() {
            for f in ["cheapest_renewal", "best_transfer"] {
                if let Some(k) = row[f]["registrar_key"].as_str() {
                    named.push(k.to_owned());
                }
            }
            // A current price taken from the stated registrar's offer.
            if row["price_source"] == "registrar" {
                named.push(row["registrar_key"].as_str().unwrap().to_owned());
            }
        }
        door(
            "POST /api/v1/client/portfolio/audit".into(),
            Seen::Some(named),
        );
        // Search: the candidate of the TLD asked for by name.
        let d = w
            .json(
                &format!("/api/v1/client/domains/search?q=example.{tld}&limit=100"),
                viewer,
            )
            .unwrap();
        let named = d["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["tld"] == tld)
            .map(|c| c["registrar_key"].as_str().unwrap().to_owned())
            .collect();
        door(
            "GET /api/v1/client/domains/search".into(),
            Seen::Some(named),
        );
    }
    // The pages: the TLD's table and history legend, every registrar's page.
    let html = w.page(&format!("/tld/{tld}"), cookie);
    let table = html
        .find("id=\"prices\"")
        .map(|at| &html[at..at + html[at..].find("</table>").unwrap()])
        .unwrap_or("");
    door(
        format!("page /tld/{tld}"),
        Seen::Listing(linked_registrars(table)),
    );
    let legend = html
        .find("class=\"legend\"")
        .map(|at| &html[at..at + html[at..].find("</ul>").unwrap()])
        .unwrap_or("");
    let mut charted: Vec<String> = w
        .by_name
        .iter()
        .filter(|(name, _)| legend.contains(&format!(">{name}<")) || legend.contains(name.as_str()))
        .map(|(_, k)| k.clone())
        .filter(|k| w.ranking[tld].contains(k))
        .collect();
    charted.sort();
    door(format!("page /tld/{tld} history"), Seen::Some(charted));
    // Home: the free TLDs with their cheapest registration.
    let home = w.page("/", cookie);
    let row = home
        .find(&format!("href=\"/tld/{tld}\""))
        .map(|at| &home[at..at + home[at..].find("</tr>").unwrap_or(home.len() - at)])
        .unwrap_or("");
    door("page /".into(), Seen::Some(linked_registrars(row)));
    let mut paged = Vec::new();
    for key in &w.registrars {
        let mut target = format!("/registrars/{key}");
        loop {
            let html = w.page(&target, cookie);
            if html.contains(&format!(
                "href=\"/tld/{tld}\">.{tld}</a></th><td class=\"num\" data-value=\""
            )) {
                let at = html.find(&format!("href=\"/tld/{tld}\">")).unwrap();
                let row = &html[at..at + html[at..].find("</tr>").unwrap()];
                if row.contains('$') {
                    paged.push(key.clone());
                }
            }
            let next = html.find("rel=\"next\"").map(|at| {
                let start = html[..at].rfind("href=\"").unwrap() + 6;
                html[start..start + html[start..].find('"').unwrap()].replace("&amp;", "&")
            });
            match next {
                Some(n) => target = n,
                None => break,
            }
        }
    }
    paged.sort_by_key(|k| w.ranking[tld].iter().position(|r| r == k));
    door("every page /registrars/{key}".into(), Seen::Listing(paged));
    out
}

#[test]
fn every_door_shows_each_plan_what_the_matrix_says_and_nothing_more() {
    let (_dir, w) = start();
    let mut failures = Vec::new();
    for (viewer, _, _) in MATRIX {
        let cookie = w.key(viewer).map(|k| sign_in(&w.bin.addr, k));
        for tld in TLDS {
            let visible = w.visible(viewer, tld);
            let hidden: BTreeSet<&String> = w.ranking[tld]
                .iter()
                .filter(|k| !visible.contains(k))
                .collect();
            for (door, seen) in doors(&w, viewer, tld, cookie.as_deref()) {
                let problem = match &seen {
                    Seen::Listing(got) if *got != visible => Some(format!(
                        "lists {} sellers {got:?}, the matrix says {} {visible:?}",
                        got.len(),
                        visible.len()
                    )),
                    Seen::Some(got) if got.iter().any(|k| hidden.contains(k)) => Some(format!(
                        "names {:?}, hidden from this plan",
                        got.iter()
                            .filter(|k| hidden.contains(k))
                            .collect::<Vec<_>>()
                    )),
                    Seen::Refused if !visible.is_empty() => {
                        Some("refused, but the plan sees sellers".to_owned())
                    }
                    _ => None,
                };
                if let Some(p) = problem {
                    failures.push(format!("{viewer} {tld} {door}: {p}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} doors show what the matrix withholds (or not what it shows):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn no_figure_orders_or_badges_give_a_hidden_price_away() {
    let (_dir, w) = start();
    let mut failures = Vec::new();
    // An average over the sellers with exactly one hidden is that seller's price plus
    // what is shown: hidden. With two or more hidden it is shown.
    for (viewer, _, _) in MATRIX {
        for tld in TLDS {
            let sellers = w.ranking[tld].len();
            let hidden = sellers - w.visible(viewer, tld).len();
            let want_shown = hidden != 1;
            let full = w
                .json(&format!("/api/v1/overview/tld/{tld}"), "pro")
                .unwrap();
            let o = w
                .json(&format!("/api/v1/overview/tld/{tld}"), viewer)
                .unwrap();
            let c = w
                .json(&format!("/api/v1/tlds?q={tld}&limit=500"), viewer)
                .unwrap();
            let entry = c["tlds"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["tld"] == tld)
                .unwrap()
                .clone();
            let mut shown = vec![
                ("overview", o["avg_prices"]["register"].clone()),
                ("catalogue", entry["avg_register_price"].clone()),
            ];
            if let Some(p) = w.json(&format!("/api/v1/prices/cheapest?tlds={tld}"), viewer) {
                shown.push((
                    "cheapest",
                    p["results"][tld]["avg_prices"]["register"].clone(),
                ));
            }
            for (door, v) in shown {
                let ok = if want_shown {
                    v == full["avg_prices"]["register"]
                } else {
                    v.is_null()
                };
                if !ok {
                    failures.push(format!(
                        "{viewer} {tld} {door}: average {v} with {hidden} of {sellers} sellers hidden"
                    ));
                }
            }
            // The transfer average: over the sellers that quote a transfer price.
            let records = w
                .json(&format!("/api/v1/prices?tlds={tld}"), "pro")
                .unwrap();
            let visible = w.visible(viewer, tld);
            let hidden_transfers = w.ranking[tld]
                .iter()
                .filter(|k| !visible.contains(k))
                .filter(|k| !records["results"][tld][k.as_str()]["transfer_price"].is_null())
                .count();
            let transfer = &o["avg_prices"]["transfer"];
            let ok = if hidden_transfers == 1 {
                transfer.is_null()
            } else {
                *transfer == full["avg_prices"]["transfer"]
            };
            if !ok {
                failures.push(format!(
                    "{viewer} {tld} overview: transfer average {transfer} with {hidden_transfers} hidden transfer prices"
                ));
            }
            let html = w.page(&format!("/tld/{tld}"), None);
            let average = full["avg_prices"]["register"].as_f64().unwrap();
            if viewer == "public" && !want_shown && html.contains(&format!("${average:.2}")) {
                failures.push(format!("page /tld/{tld}: shows the average {average}"));
            }
        }
    }
    // The catalogue by price: every price shown comes before every one hidden, in
    // order; a TLD nobody sells is not a member's secret.
    for (viewer, _, _) in MATRIX {
        let (mut last, mut hidden_seen, mut n) = (0.0f64, false, 0);
        for d in w.pages("/api/v1/tlds?sort=cheapest&limit=500", viewer) {
            for e in d["tlds"].as_array().unwrap() {
                n += 1;
                let sold = e["registrar_count"].as_u64().unwrap() > 0;
                let badge = e.get("members_only").is_some();
                if !sold && badge {
                    failures.push(format!(
                        "{viewer} catalogue: {} unsold, members_only",
                        e["tld"]
                    ));
                }
                match e["cheapest_register"]["price"].as_f64() {
                    Some(p) => {
                        if hidden_seen || p < last {
                            failures.push(format!(
                                "{viewer} catalogue: {} at {p} after a hidden price or a dearer one",
                                e["tld"]
                            ));
                        }
                        last = p;
                    }
                    None => hidden_seen |= sold,
                }
            }
        }
        if n != w.json("/api/v1/tlds?limit=1", viewer).unwrap()["meta"]["total"] {
            failures.push(format!("{viewer} catalogue: {n} entries walked"));
        }
    }
    // The same on the catalogue page, and no badge on a TLD nobody sells.
    let html = w.page("/tlds?sort=cheapest&limit=500", None);
    let mut hidden_seen = false;
    for row in html.split("<tr>").skip(2) {
        let members = row.contains("class=\"members\"");
        let priced = row.contains(" at <a href=\"/registrars/");
        if priced && hidden_seen {
            failures.push(format!("catalogue page: a price after a hidden one: {row}"));
        }
        hidden_seen |= members;
    }
    for target in ["/tld/aarp", "/tlds?q=aarp"] {
        if w.page(target, None).contains("class=\"members\"") {
            failures.push(format!("{target}: a Members badge where nobody sells"));
        }
    }
    let o = w.json("/api/v1/overview/tld/aarp", "public").unwrap();
    if o.get("members_only").is_some() {
        failures.push(format!("overview of aarp: {o}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
