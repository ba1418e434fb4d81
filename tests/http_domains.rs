//! The domain owner's endpoints over real sockets on the real shipped data: the audit's
//! answer is the query function's answer (JSON and CSV), its cost in credits, the plan
//! limits at their edges (free 500 ok / 501 → 413, lookup 100 ok / 101 → 400), and the
//! free plan's 5 searches a UTC day (then 429 daily_limit until midnight).

mod http_support;

use http_support::{Options, Response, Server, T0_MS, TempDir};
use tldsnap::api::Config;
use tldsnap::audit::{Names, portfolio};

fn server(dir: &TempDir) -> (Server, std::collections::BTreeMap<&'static str, String>) {
    let (keys_path, keys) = dir.keys();
    let opts = Options {
        snapshot: None,
        config: Config::default(),
        ..Options::new(std::path::Path::new(""), &keys_path)
    };
    (Server::start(opts), keys)
}

fn post(
    server: &Server,
    path: &str,
    key: &str,
    content_type: &str,
    accept: &str,
    body: &[u8],
) -> Response {
    let mut raw = format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: {content_type}\r\nAccept: {accept}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(body);
    server.send(&raw).expect("an answer")
}

fn portfolio_json(n: usize) -> Vec<u8> {
    let tlds = ["com", "io", "co.uk", "xyz", "de", "nope", "museum"];
    let regs = ["namecheap", "porkbun", "", "dynadot", "godaddy"];
    let list: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let mut o = serde_json::json!({ "name": format!("brand{}.{}", i % (n - n / 10).max(1), tlds[i % tlds.len()]) });
            if !regs[i % regs.len()].is_empty() {
                o["registrar"] = regs[i % regs.len()].into();
            }
            if i % 7 == 0 {
                o["expires"] = "2026-09-01".into();
            }
            o
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({ "domains": list })).unwrap()
}

fn credits(r: &Response) -> u64 {
    r.header("x-credits-remaining").unwrap().parse().unwrap()
}

#[test]
fn the_audit_over_http_is_the_query_functions_answer() {
    let dir = TempDir::new("domains-audit");
    let (server, keys) = server(&dir);
    let key = &keys["pro"];
    let body = portfolio_json(250);
    let r = post(
        &server,
        "/api/v1/client/portfolio/audit",
        key,
        "application/json",
        "application/json",
        &body,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    // 250 entries: three started blocks of 100.
    assert_eq!(r.header("x-credits-cost"), Some("3"));
    assert_eq!(credits(&r), 10_000 - 3);
    // The same bytes as the query function on the same data, for the pro plan.
    let snapshot = tldsnap::build::default_snapshot().unwrap();
    let names = Names::embedded();
    let p = portfolio::parse_json(&body, 2_000).unwrap();
    // This server has the default age limit, on the harness clock.
    let fresh = tldsnap::query::Freshness::new(T0_MS, tldsnap::query::DEFAULT_MAX_AGE_DAYS, false);
    let audit = portfolio::audit(
        snapshot.data(),
        &names,
        &p,
        fresh,
        tldsnap::sight::Sight::ALL,
    );
    let mut want = Vec::new();
    portfolio::write_json(snapshot.data(), &audit, Some("pro"), &mut want);
    assert_eq!(r.text(), String::from_utf8(want).unwrap());
    let doc = r.json();
    assert_eq!(doc["meta"]["entries"], 250);
    assert!(doc["totals"]["savings_5_year"].as_f64().unwrap() > 0.0);
    // CSV in, CSV out (Accept: text/csv), same rows.
    let csv_in = "Domain,Registrar,Renew_Price,Expires,Auto-Renew\nexample.com,namecheap,,2026-09-10,yes\nshop.example.co.uk,dynadot,,,no\nbücher.de,,7.50,,\nexample.com,porkbun,,,\n";
    let r = post(
        &server,
        "/api/v1/client/portfolio/audit",
        key,
        "text/csv; charset=utf-8",
        "text/csv",
        csv_in.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("text/csv; charset=utf-8"));
    assert_eq!(r.header("x-credits-cost"), Some("1"));
    let text = r.text();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(portfolio::CSV_HEADER));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(
        rows[0].starts_with("example.com,example.com,com,2,namecheap,2026-09-10,18.48,registrar,"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].starts_with("shop.example.co.uk,example.co.uk,co.uk,1,dynadot,"),
        "{}",
        rows[1]
    );
    assert!(
        rows[2].starts_with("bücher.de,xn--bcher-kva.de,de,1,,,7.50,stated,"),
        "{}",
        rows[2]
    );
}

#[test]
fn the_free_plan_audits_500_domains_and_refuses_501_before_any_work() {
    let dir = TempDir::new("domains-free");
    let (server, keys) = server(&dir);
    let key = &keys["free"];
    let path = "/api/v1/client/portfolio/audit";
    let r = post(
        &server,
        path,
        key,
        "application/json",
        "*/*",
        &portfolio_json(500),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-credits-cost"), Some("5"));
    assert_eq!(credits(&r), 50 - 5);
    // Paid TLDs are flagged, not priced, on the free plan.
    let doc = r.json();
    let uk = doc["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["suffix"] == "co.uk")
        .unwrap();
    assert_eq!(uk["flags"], serde_json::json!(["tld_not_in_plan"]));
    assert!(uk["cheapest_renewal"].is_null());
    server.clock.advance(1_000);
    let r = post(
        &server,
        path,
        key,
        "application/json",
        "*/*",
        &portfolio_json(501),
    );
    let doc = r.assert_problem(413, "too_many_domains");
    assert_eq!(doc["limit"], 500);
    assert_eq!(doc["plan"], "free");
    // Nothing was spent.
    assert_eq!(credits(&r), 45);
    // The same edge in CSV.
    server.clock.advance(1_000);
    let mut csv = String::from("domain\n");
    for i in 0..501 {
        csv.push_str(&format!("n{i}.com\n"));
    }
    post(&server, path, key, "text/csv", "*/*", csv.as_bytes())
        .assert_problem(413, "too_many_domains");
    // Enterprise audits 10,000.
    let r = post(
        &server,
        path,
        &keys["enterprise"],
        "application/json",
        "*/*",
        &portfolio_json(10_000),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-credits-cost"), Some("100"));
    post(
        &server,
        path,
        &keys["enterprise"],
        "application/json",
        "*/*",
        &portfolio_json(10_001),
    )
    .assert_problem(413, "too_many_domains");
}

#[test]
fn lookup_takes_100_names_and_answers_each() {
    let dir = TempDir::new("domains-lookup");
    let (server, keys) = server(&dir);
    let key = &keys["basic"];
    let names: Vec<String> = (0..100).map(|i| format!("www.brand{i}.com")).collect();
    let body = serde_json::json!({ "domains": names }).to_string();
    let r = post(
        &server,
        "/api/v1/client/domains/lookup?limit=2",
        key,
        "application/json",
        "*/*",
        body.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-credits-cost"), Some("1"));
    let doc = r.json();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 100);
    assert_eq!(results[7]["domain"], "brand7.com");
    assert_eq!(results[7]["cheapest_register"].as_array().unwrap().len(), 2);
    // The entries are the cheapest endpoint's, for the same limit.
    let cheapest = server
        .get("/api/v1/client/prices/cheapest?tlds=com&limit=2", Some(key))
        .json();
    assert_eq!(
        results[7]["cheapest_register"],
        cheapest["results"]["com"]["cheapest_register"]
    );
    let mut more = names.clone();
    more.push("x.com".into());
    let body = serde_json::json!({ "domains": more }).to_string();
    let doc = post(
        &server,
        "/api/v1/client/domains/lookup",
        key,
        "application/json",
        "*/*",
        body.as_bytes(),
    )
    .assert_problem(400, "too_many_values");
    assert_eq!(doc["max"], 100);
    // Per-name answers for what cannot be priced, on the free plan.
    let body = r#"{"domains":["shop.example.co.uk","a..b","x.nope","example.io"]}"#;
    let r = post(
        &server,
        "/api/v1/client/domains/lookup",
        &keys["free"],
        "application/json",
        "*/*",
        body.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let doc = r.json();
    let errors: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["error"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(
        errors,
        ["tld_not_in_plan", "invalid_name", "tld_not_in_plan", "-"]
    );
}

#[test]
fn free_searches_stop_at_5_a_day_until_utc_midnight() {
    let dir = TempDir::new("domains-search");
    let (server, keys) = server(&dir);
    let key = &keys["free"];
    let target = "/api/v1/client/domains/search?q=best%20shop&limit=3";
    for left in (0..5).rev() {
        let r = server.get(target, Some(key));
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("x-searches-remaining"), Some(&*left.to_string()));
        let doc = r.json();
        assert_eq!(doc["name"], "bestshop");
        assert_eq!(doc["results"].as_array().unwrap().len(), 3);
        assert!(
            doc["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["availability"] == "unknown")
        );
        server.clock.advance(1_000); // the free rate limit: one a second
    }
    // A bad search is refused before it counts.
    server
        .get("/api/v1/client/domains/search?q=a_b", Some(key))
        .assert_problem(400, "invalid_parameter");
    server.clock.advance(1_000);
    let r = server.get(target, Some(key));
    let doc = r.assert_problem(429, "daily_limit");
    assert_eq!(doc["limit"], 5);
    // T0 is 12:00:00 UTC; 6 s have passed.
    let until_midnight = 12 * 3600 - 6;
    assert_eq!(r.header("retry-after"), Some(&*until_midnight.to_string()));
    assert_eq!(doc["retry_after"], until_midnight);
    // Pro has no daily limit.
    for _ in 0..8 {
        assert_eq!(server.get(target, Some(&keys["pro"])).status, 200);
    }
    // The next UTC day.
    server.clock.set(T0_MS + 12 * 3_600_000);
    let r = server.get(target, Some(key));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-searches-remaining"), Some("4"));
}
