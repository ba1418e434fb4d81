//! The HTTP API over a real socket: every endpoint against golden bodies, every error
//! code, the plan rules, metering headers, HEAD, keep-alive and pipelining, metrics,
//! and the OpenAPI document against the router.

mod http_support;

use std::collections::BTreeSet;
use std::path::Path;

use http_support::{Conn, GOLDEN_CASES, Options, Server, TempDir, assert_golden};
use tldsnap::app::routes::TABLE;

struct Fixture {
    _dir: TempDir,
    server: Server,
    keys: std::collections::BTreeMap<&'static str, String>,
}

fn fixture(tag: &str) -> Fixture {
    let dir = TempDir::new(tag);
    let snap = dir.fixture_snapshot("fixture.snap");
    let (keys_path, keys) = dir.keys();
    let server = Server::start(Options::new(&snap, &keys_path));
    Fixture {
        _dir: dir,
        server,
        keys,
    }
}

impl Fixture {
    fn key(&self, plan: &str) -> Option<&str> {
        Some(self.keys[plan].as_str())
    }
}

#[test]
fn every_endpoint_matches_its_golden_body() {
    let f = fixture("golden");
    let pro = f.key("pro");
    for (name, target, plan) in GOLDEN_CASES {
        let r = f.server.get(target, plan.and_then(|p| f.key(p)));
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"), "{name}");
        assert_golden(name, &r.body);
    }
    // The public prices variants answer exactly what the client variant answers.
    let client = f.server.get(
        "/api/v1/client/prices?tlds=com,io&registrars=charlie,alpha",
        pro,
    );
    let public = f
        .server
        .get("/v1/prices?tlds=com,io&registrars=charlie,alpha", None);
    assert_eq!(
        http_support::mask_elapsed(&client.body),
        http_support::mask_elapsed(&public.body)
    );
}

#[test]
fn shapes_follow_the_seed() {
    let f = fixture("shapes");
    let pro = f.key("pro");
    // Client: rank 1..n by price, registrar_count counts every seller, meta.tier.
    let doc = f
        .server
        .get("/api/v1/client/prices/cheapest?tlds=com&limit=2", pro)
        .json();
    let com = &doc["results"]["com"];
    assert_eq!(com["registrar_count"], 6);
    let entries = com["cheapest_register"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["rank"], 1);
    assert_eq!(entries[0]["registrar_key"], "delta");
    assert_eq!(entries[0]["total_cost_5_year"], 68.88);
    assert!(entries[0].get("transfer_price").is_none());
    assert_eq!(doc["meta"]["tier"], "pro");
    assert_eq!(doc["meta"]["total_tlds"], 1);
    // Limit above the number of sellers returns them all.
    let doc = f
        .server
        .get("/api/v1/client/prices/cheapest?tlds=net&limit=100", pro)
        .json();
    assert_eq!(
        doc["results"]["net"]["cheapest_register"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Public: no registrar_key, no meta, totals and averages.
    let doc = f
        .server
        .get("/api/v1/prices/cheapest?tlds=com&limit=1", None)
        .json();
    let e = &doc["results"]["com"]["cheapest_register"][0];
    assert!(e.get("registrar_key").is_none());
    assert_eq!(e["total_cost_1_year"], e["register_price"]);
    assert!(doc.get("meta").is_none());
    assert!(doc["results"]["com"]["avg_prices"].is_object());
    // Prices: stats.total_tlds counts results; only the requested registrars appear.
    let doc = f
        .server
        .get("/api/v1/client/prices?tlds=com,net&registrars=bravo", pro)
        .json();
    assert_eq!(doc["stats"]["total_tlds"], 2);
    assert_eq!(
        doc["results"]["net"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["bravo"]
    );
    let elapsed = doc["stats"]["time_elapsed"].as_str().unwrap();
    assert!(elapsed.ends_with("ms"), "{elapsed}");
    // website_url uses --public-url.
    let doc = f
        .server
        .get("/api/v1/client/registrars/tld/net", pro)
        .json();
    assert_eq!(
        doc["registrars"][0]["website_url"],
        "https://tldsnap.test/registrars/alpha"
    );
    assert!(doc["registrars"][0].get("prices").is_none());
}

#[test]
fn every_error_code() {
    let f = fixture("errors");
    let s = &f.server;
    let pro = f.key("pro");
    let free = f.key("free");

    // 400
    let d = s
        .get("/api/v1/client/prices/cheapest", pro)
        .assert_problem(400, "missing_parameter");
    assert_eq!(d["parameter"], "tlds");
    let d = s
        .get("/api/v1/client/prices/cheapest?tlds=com&limit=0", pro)
        .assert_problem(400, "invalid_parameter");
    assert_eq!(
        (d["parameter"].as_str(), d["value"].as_str()),
        (Some("limit"), Some("0"))
    );
    let d = s
        .get("/api/v1/client/prices/cheapest?tlds=a..b", pro)
        .assert_problem(400, "invalid_parameter");
    assert_eq!(d["value"], "a..b");
    s.get("/api/v1/client/prices/cheapest?tlds=%ff", pro)
        .assert_problem(400, "invalid_parameter");
    s.get("/api/v1/client/prices?tlds=com&tlds=net", pro)
        .assert_problem(400, "invalid_parameter");
    s.get("/api/v1/client/registrars/tld/com?include_prices=yes", pro)
        .assert_problem(400, "invalid_parameter");
    let many: Vec<String> = (0..101).map(|i| format!("t{i}")).collect();
    let d = s
        .get(
            &format!("/api/v1/client/prices/cheapest?tlds={}", many.join(",")),
            pro,
        )
        .assert_problem(400, "too_many_values");
    assert_eq!(d["max"], 100);
    // 401: no key, wrong key, two keys.
    let r = s.get("/api/v1/client/prices/cheapest?tlds=com", None);
    r.assert_problem(401, "missing_api_key");
    assert!(r.header("ratelimit-limit").is_none());
    s.get("/api/v1/client/prices/cheapest?tlds=com", Some("tsk_nope"))
        .assert_problem(401, "invalid_api_key");
    s.get("/api/v1/prices/cheapest?tlds=com", Some("tsk_nope"))
        .assert_problem(401, "invalid_api_key");
    let raw = format!(
        "GET /api/v1/client/prices/cheapest?tlds=com HTTP/1.1\r\nHost: t\r\nX-API-Key: {}\r\nX-API-Key: {}\r\nConnection: close\r\n\r\n",
        f.keys["pro"], f.keys["free"]
    );
    s.send(raw.as_bytes())
        .unwrap()
        .assert_problem(401, "invalid_api_key");
    // 403: lists exactly the TLDs outside the plan; co.uk is not uk.
    let r = s.get(
        "/api/v1/client/prices/cheapest?tlds=com,museum,co.uk,uk,nope",
        free,
    );
    let d = r.assert_problem(403, "tld_not_in_plan");
    assert_eq!(d["tlds"], serde_json::json!(["museum", "co.uk", "nope"]));
    assert_eq!(d["plan"], "free");
    assert!(
        r.header("x-credits-remaining").is_some(),
        "keyed errors carry the meter"
    );
    // 404
    s.get("/nope", None).assert_problem(404, "not_found");
    s.get("/api/v1/client/prices/cheapest/", pro)
        .assert_problem(404, "not_found");
    let d = s
        .get("/api/v1/client/prices/cheapest?tlds=nope,zz", pro)
        .assert_problem(404, "unknown_tld");
    assert_eq!(d["tlds"], serde_json::json!(["nope", "zz"]));
    s.get("/api/v1/client/registrars/tld/nope", pro)
        .assert_problem(404, "unknown_tld");
    s.get("/api/v1/client/prices?tlds=nope", pro)
        .assert_problem(404, "unknown_tld");
    // 405 with Allow
    for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "get"] {
        let raw = format!(
            "{method} /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let r = s.send(raw.as_bytes()).unwrap();
        r.assert_problem(405, "method_not_allowed");
        assert_eq!(r.header("allow"), Some("GET, HEAD"), "{method}");
    }
    // 414 (our limit, below hyper's) and 431 (our limit, below hyper's buffer)
    let long = format!("/api/v1/prices/cheapest?tlds=com&pad={}", "a".repeat(9000));
    let d = s.get(&long, None).assert_problem(414, "request_too_large");
    assert_eq!(d["max_bytes"], 8192);
    let mut raw = String::from("GET /healthz HTTP/1.1\r\nHost: t\r\n");
    for i in 0..5 {
        raw.push_str(&format!("X-Pad-{i}: {}\r\n", "b".repeat(4000)));
    }
    raw.push_str("Connection: close\r\n\r\n");
    s.send(raw.as_bytes())
        .unwrap()
        .assert_problem(431, "request_too_large");
    // 429 rate_limited: the free plan's burst is 5; the manual clock does not move.
    let mut statuses = Vec::new();
    for _ in 0..7 {
        statuses.push(
            s.get(
                "/api/v1/client/prices/cheapest?tlds=io",
                f.key("enterprise"),
            )
            .status,
        );
    }
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    let free_url = "/api/v1/client/prices/cheapest?tlds=net";
    let mut last = None;
    for _ in 0..6 {
        last = Some(s.get(free_url, free));
    }
    // The 403 above took one token of free's 5; 4 more answered, then 429.
    let r = last.unwrap();
    let d = r.assert_problem(429, "rate_limited");
    let retry: u64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!(retry >= 1);
    assert_eq!(d["retry_after"], retry);
    assert_eq!(r.header("ratelimit-remaining"), Some("0"));
    assert_eq!(r.header("ratelimit-limit"), Some("5"));
    // Time passes (the manual clock): admitted again.
    s.clock.advance(1_000 * retry as i64);
    assert_eq!(s.get(free_url, free).status, 200);
    // 429 credits_exhausted: the tiny plan has 2 credits. Errors cost none.
    let tiny = f.key("tiny");
    let r = s.get("/api/v1/client/prices/cheapest?tlds=com", tiny);
    assert_eq!(
        (r.status, r.header("x-credits-remaining")),
        (200, Some("1"))
    );
    let r = s.get("/api/v1/client/prices/cheapest?tlds=nope", tiny);
    assert_eq!(
        (r.status, r.header("x-credits-remaining")),
        (404, Some("1"))
    );
    let r = s.get("/api/v1/client/prices/cheapest?tlds=com&limit=x", tiny);
    assert_eq!(
        (r.status, r.header("x-credits-remaining")),
        (400, Some("1"))
    );
    let r = s.get("/api/v1/client/registrars/tld/com", tiny);
    assert_eq!(
        (r.status, r.header("x-credits-remaining")),
        (200, Some("0"))
    );
    let r = s.get("/api/v1/client/prices/cheapest?tlds=com", tiny);
    let d = r.assert_problem(429, "credits_exhausted");
    assert!(r.header("retry-after").is_some());
    assert!(d["retry_after"].as_u64().unwrap() > 0);
    // Parameters are checked before credits: a bad request is still a 400.
    s.get("/api/v1/client/prices/cheapest?tlds=", tiny)
        .assert_problem(400, "missing_parameter");
}

#[test]
fn not_ready_until_a_snapshot_is_loaded() {
    let dir = TempDir::new("notready");
    let (keys_path, keys) = dir.keys();
    let snap = dir.path("later.snap");
    let mut opts = Options::new(&snap, &keys_path);
    opts.empty = true;
    let server = Server::start(opts);
    server.get("/readyz", None).assert_problem(503, "not_ready");
    server
        .get(
            "/api/v1/client/prices/cheapest?tlds=com",
            Some(&keys["pro"]),
        )
        .assert_problem(503, "not_ready");
    assert_eq!(server.get("/healthz", None).status, 200);
    let metrics = server.get("/metrics", None).text();
    assert!(metrics.contains("tldsnap_snapshot_loaded 0\n"), "{metrics}");
    // A reload with no file is refused and counted; then the file appears.
    assert!(server.state.store.reload().is_err());
    dir.fixture_snapshot("later.snap");
    server.state.store.reload().unwrap();
    let r = server.get("/readyz", None);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["status"], "ready");
    let metrics = server.get("/metrics", None).text();
    assert!(
        metrics.contains("tldsnap_snapshot_reloads_total{result=\"failure\"} 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("tldsnap_snapshot_reloads_total{result=\"success\"} 1\n"),
        "{metrics}"
    );
}

#[test]
fn plan_rules_for_every_plan() {
    let f = fixture("plans");
    let s = &f.server;
    // (plan, may see paid TLDs, registrar listing cut to 5)
    let plans = [
        ("public", false, true),
        ("free", false, true),
        ("basic", true, true),
        ("pro", true, false),
        ("enterprise", true, false),
    ];
    for (plan, paid, cut) in plans {
        let key = (plan != "public").then(|| f.keys[plan].as_str());
        s.clock.advance(60_000); // refill every bucket
        // The 22 free TLDs are open to every plan.
        let r = s.get("/api/v1/prices/cheapest?tlds=com,net,io,de", key);
        assert_eq!(r.status, 200, "{plan}: {}", r.text());
        // Paid TLDs need a paid plan.
        let r = s.get("/api/v1/prices/cheapest?tlds=museum,co.uk", key);
        if paid {
            assert_eq!(r.status, 200, "{plan}");
        } else {
            let d = r.assert_problem(403, "tld_not_in_plan");
            assert_eq!(d["tlds"], serde_json::json!(["museum", "co.uk"]), "{plan}");
            assert_eq!(d["plan"], plan);
        }
        if plan == "public" {
            s.get("/api/v1/client/registrars/tld/com", None)
                .assert_problem(401, "missing_api_key");
            continue;
        }
        // meta.tier is the plan's name.
        let doc = s.get("/api/v1/client/prices/cheapest?tlds=com", key).json();
        assert_eq!(doc["meta"]["tier"], plan);
        // The registrar listing: com has 6 sellers.
        let doc = s.get("/api/v1/client/registrars/tld/com", key).json();
        assert_eq!(doc["registrar_count"], 6, "{plan}");
        let listed = doc["registrars"].as_array().unwrap().len();
        if cut {
            assert_eq!(listed, 5, "{plan}");
            assert_eq!(
                doc["message"],
                "Showing 5 of 6 registrars. The full list is available via the API on the Pro and Enterprise plans."
            );
        } else {
            assert_eq!(listed, 6, "{plan}");
            assert!(doc.get("message").is_none());
        }
        // net has 2 sellers: never a message.
        let doc = s.get("/api/v1/client/registrars/tld/net", key).json();
        assert!(doc.get("message").is_none(), "{plan}");
    }
}

#[test]
fn metering_headers_on_keyed_responses() {
    let f = fixture("meter");
    let s = &f.server;
    let r = s.get("/api/v1/client/prices/cheapest?tlds=com", f.key("basic"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("ratelimit-limit"), Some("20"));
    assert_eq!(r.header("ratelimit-remaining"), Some("19"));
    assert!(r.header("ratelimit-reset").unwrap().parse::<u64>().is_ok());
    assert_eq!(r.header("x-credits-remaining"), Some("999"));
    // Errors carry them too.
    let r = s.get(
        "/api/v1/client/prices/cheapest?tlds=com&limit=0",
        f.key("basic"),
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.header("ratelimit-remaining"), Some("18"));
    assert_eq!(r.header("x-credits-remaining"), Some("999"));
    // The unmetered endpoints carry none.
    let r = s.get("/healthz", None);
    assert!(r.header("ratelimit-limit").is_none());
}

#[test]
fn head_is_get_without_the_body() {
    let f = fixture("head");
    let target = "/api/v1/prices/cheapest?tlds=com,io&limit=4";
    let get = f.server.get(target, None);
    let mut conn = Conn::open(f.server.addr);
    conn.write(format!("HEAD {target} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
    let head = conn.read_response(true).unwrap().unwrap();
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-length"),
        Some(get.body.len().to_string().as_str())
    );
    assert_eq!(head.header("content-type"), Some("application/json"));
    // The connection is still in step: the next response is the next request's.
    conn.get("/healthz", None);
    let next = conn.read_response(false).unwrap().unwrap();
    assert_eq!(next.body, b"{\"status\":\"ok\"}");
}

#[test]
fn keep_alive_and_pipelining() {
    let f = fixture("pipeline");
    let mut conn = Conn::open(f.server.addr);
    // Three requests in one write; three answers, in order, on one connection.
    let targets = [
        "/healthz",
        "/api/v1/prices/cheapest?tlds=com&limit=1",
        "/nope",
    ];
    let mut raw = String::new();
    for t in targets {
        raw.push_str(&format!("GET {t} HTTP/1.1\r\nHost: t\r\n\r\n"));
    }
    conn.write(raw.as_bytes());
    let statuses: Vec<u16> = (0..3)
        .map(|_| conn.read_response(false).unwrap().unwrap().status)
        .collect();
    assert_eq!(statuses, [200, 200, 404]);
    // And the connection stays open for more.
    let key = Some(f.keys["unlimited"].as_str());
    for _ in 0..20 {
        conn.get("/api/v1/prices/cheapest?tlds=net&limit=1", key);
        assert_eq!(conn.read_response(false).unwrap().unwrap().status, 200);
    }
    // A 400 keeps the connection too.
    conn.get("/api/v1/prices/cheapest?tlds=", None);
    assert_eq!(conn.read_response(false).unwrap().unwrap().status, 400);
    conn.get("/healthz", None);
    assert_eq!(conn.read_response(false).unwrap().unwrap().status, 200);
}

#[test]
fn answers_written_while_the_client_does_not_read_arrive_whole() {
    // Small answers go out as one copied buffer (`send`), large ones as head and body
    // (`writev`); both must survive the socket filling up, when a write takes only part
    // of what it was given or none of it.
    let f = fixture("unread");
    let small = "/api/v1/client/prices/cheapest?tlds=com&limit=1";
    let large = "/openapi.json";
    let key = f.keys["unlimited"].clone();
    let expected_small = f.server.get(small, Some(&key)).json()["data"].clone();
    let expected_large = f.server.get(large, None).body;
    assert!(
        expected_large.len() > 64 * 1024,
        "the large answer is past any copy"
    );
    let targets: Vec<&str> = (0..12_000)
        .map(|i| match i {
            11_000.. if i % 100 == 0 => large,
            _ if i % 10 == 5 => "/healthz",
            _ => small,
        })
        .collect();
    let mut conn = Conn::open(f.server.addr);
    // A fixed receive window (no autotuning), so the server's socket fills while it
    // writes small answers: ~4.5 MB of them before the large ones, where the socket
    // took ~3 MB (a send buffer of at most 4 MB: Linux's default `tcp_wmem`). Seen with
    // strace: a small answer's `send` took 175 of its 435 bytes, and its rest followed.
    socket2::SockRef::from(conn.stream.get_ref())
        .set_recv_buffer_size(256 * 1024)
        .unwrap();
    let mut writer = conn.stream.get_ref().try_clone().unwrap();
    let raw: String = targets
        .iter()
        .map(|t| format!("GET {t} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\n\r\n"))
        .collect();
    let sending = std::thread::spawn(move || {
        use std::io::Write;
        writer.write_all(raw.as_bytes()).unwrap();
    });
    // Nothing read for a while: the server's writes meet a full socket.
    std::thread::sleep(std::time::Duration::from_millis(300));
    for (i, target) in targets.iter().enumerate() {
        let r = conn.read_response(false).unwrap().unwrap();
        assert_eq!(r.status, 200, "answer {i} ({target})");
        match *target {
            "/healthz" => assert_eq!(r.body, b"{\"status\":\"ok\"}", "answer {i}"),
            t if t == large => assert!(
                r.body == expected_large,
                "answer {i}: the large answer differs"
            ),
            _ => assert_eq!(r.json()["data"], expected_small, "answer {i}"),
        }
    }
    sending.join().unwrap();
}

#[test]
fn openapi_document_matches_the_router() {
    let f = fixture("openapi");
    let r = f.server.get("/openapi.json", None);
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert_eq!(doc["openapi"], "3.1.0");
    let documented: BTreeSet<String> = doc["paths"].as_object().unwrap().keys().cloned().collect();
    // The website's pages are not part of the API document.
    let routed: BTreeSet<String> = TABLE
        .routes()
        .iter()
        .filter(|r| r.documented)
        .map(|r| r.path.to_owned())
        .collect();
    assert_eq!(documented, routed);
    // Every documented path is answered (not 404 not_found) with its method and refuses
    // the other one.
    for path in &documented {
        let concrete = path
            .replace("{tld}", "com")
            .replace("{key}", "alpha")
            .replace("{domain}", "example.com");
        let key = &f.keys["unlimited"];
        if path.starts_with("/api/v1/client/webhooks") {
            // Several methods per path; the test plan `unlimited` has no webhooks (403,
            // documented), which every method says after reading its body.
            let concrete = concrete.replace("{id}", "wh_0123456789abcdef01234567");
            let body = serde_json::json!({"url": "https://hooks.example.com/x"});
            for (method, op) in doc["paths"][path].as_object().unwrap() {
                let r = http_support::request(
                    f.server.addr,
                    &method.to_uppercase(),
                    &concrete,
                    Some(key),
                    op.get("requestBody").map(|_| &body),
                );
                r.assert_problem(403, "webhooks_not_in_plan");
                assert!(op["responses"]["403"].is_object(), "{path} {method}");
            }
            http_support::request(f.server.addr, "PUT", &concrete, Some(key), None)
                .assert_problem(405, "method_not_allowed");
            continue;
        }
        if let Some(op) = doc["paths"][path].get("post") {
            assert!(op["responses"]["200"].is_object(), "{path}");
            let body = r#"{"domains":["example.com"]}"#;
            let raw = format!(
                "POST {concrete} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let r = f.server.send(raw.as_bytes()).unwrap();
            // This server makes no live lookups (404 live_unavailable, documented).
            let expected = if path.ends_with("/availability") {
                404
            } else {
                200
            };
            assert_eq!(r.status, expected, "{path}: {}", r.text());
            assert!(op["responses"][expected.to_string()].is_object(), "{path}");
            f.server
                .get(&concrete, Some(key))
                .assert_problem(405, "method_not_allowed");
            continue;
        }
        let target = format!("{concrete}?tlds=com&q=bestshop");
        let r = f.server.get(&target, Some(key));
        // The test plan `unlimited` has no price-change events, no export and, of the
        // live lookups, the free plan's (403, documented); this server makes no live
        // lookups (404 live_unavailable, documented).
        let expected = if path.starts_with("/api/v1/client/events")
            || path == "/api/v1/client/export"
            || path.ends_with("/rdap")
            || path.ends_with("/dns")
            || path.ends_with("/tls")
        {
            403
        } else if path.contains("{domain}") {
            404
        } else {
            200
        };
        assert_eq!(r.status, expected, "{path}: {}", r.text());
        let op = &doc["paths"][path]["get"];
        assert!(op["responses"][expected.to_string()].is_object(), "{path}");
        let raw = format!(
            "POST {target} HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        f.server
            .send(raw.as_bytes())
            .unwrap()
            .assert_problem(405, "method_not_allowed");
    }
    // Every problem code the server can send is in the document's enum.
    let codes: BTreeSet<&str> =
        doc["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
    let all: BTreeSet<&str> = tldsnap::http::problem::CODES.into_iter().collect();
    assert_eq!(codes, all);
    assert!(codes.contains("unknown_registrar"));
}

#[test]
fn metrics_count_requests_and_describe_the_snapshot() {
    let f = fixture("metrics");
    for _ in 0..3 {
        f.server.get("/api/v1/prices/cheapest?tlds=com", None);
    }
    f.server.get("/nowhere", None);
    f.server.get("/api/v1/client/registrars/tld/com", None);
    f.server.get("/api/v1/overview/tld/com", None);
    let hash = f.server.get("/readyz", None).json()["snapshot"]["hash"]
        .as_str()
        .unwrap()
        .to_owned();
    // Earlier requests' connections close on the server a moment after their answers
    // arrive; poll until only the /metrics connection itself is open.
    let mut r = f.server.get("/metrics", None);
    for _ in 0..400 {
        if r.text().contains("tldsnap_http_connections_open 1\n") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        r = f.server.get("/metrics", None);
    }
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = r.text();
    for needle in [
        "tldsnap_http_requests_total{route=\"/api/v1/prices/cheapest\",status=\"200\"} 3\n".to_owned(),
        "tldsnap_http_requests_total{route=\"unmatched\",status=\"404\"} 1\n".to_owned(),
        "tldsnap_http_requests_total{route=\"/api/v1/client/registrars/tld/{tld}\",status=\"401\"} 1\n".to_owned(),
        "tldsnap_http_requests_total{route=\"/api/v1/overview/tld/{tld}\",status=\"200\"} 1\n".to_owned(),
        "tldsnap_http_request_duration_seconds_count{route=\"/api/v1/prices/cheapest\"} 3\n".to_owned(),
        format!("tldsnap_snapshot_info{{hash=\"{hash}\",format_version=\"{}\"}} 1\n",
            tldsnap::snapshot::FORMAT_VERSION),
        "tldsnap_snapshot_tlds 8\n".to_owned(),
        "tldsnap_snapshot_offers 17\n".to_owned(),
        "tldsnap_snapshot_registrars 7\n".to_owned(),
        "tldsnap_snapshot_data_updated_timestamp_seconds 1787381205.031\n".to_owned(),
        "tldsnap_snapshot_reloads_total{result=\"failure\"} 0\n".to_owned(),
        "tldsnap_http_connections_open 1\n".to_owned(),
    ] {
        assert!(text.contains(&needle), "missing {needle:?} in\n{text}");
    }
}

/// Issue 17: every new keyed endpoint spends exactly one credit per 200, whatever the
/// window or page size, and none on a refusal.
#[test]
fn new_endpoints_spend_one_credit_per_answer() {
    let f = fixture("credits17");
    let key = f.key("pro");
    let credits = |r: &http_support::Response| -> u64 {
        r.header("x-credits-remaining").unwrap().parse().unwrap()
    };
    let mut last = credits(&f.server.get("/api/v1/client/overview/tld/com", key));
    for target in [
        "/api/v1/client/history/tld/com",
        "/api/v1/client/history/tld/com?from=2000-01-01&to=2026-12-31",
        "/api/v1/client/overview/tld/museum",
        "/api/v1/client/tlds?limit=500",
        "/api/v1/client/prices/cheapest?tlds=com&at=2025-07-01",
        "/api/v1/client/prices?tlds=com&at=2025-07-01",
    ] {
        f.server.clock.advance(60_000);
        let r = f.server.get(target, key);
        assert_eq!(r.status, 200, "{target}: {}", r.text());
        let now = credits(&r);
        assert_eq!(now + 1, last, "{target}");
        last = now;
    }
    f.server.clock.advance(60_000);
    let r = f.server.get("/api/v1/client/tlds?limit=0", key);
    r.assert_problem(400, "invalid_parameter");
    assert_eq!(credits(&r), last, "a 400 spends nothing");
}

/// Paging the catalogue through the server yields every TLD exactly once.
#[test]
fn catalogue_pages_yield_every_tld_once() {
    let f = fixture("pages17");
    let key = f.key("unlimited");
    for sort in ["name", "cheapest", "registrars"] {
        let mut seen = Vec::new();
        let mut target = format!("/api/v1/client/tlds?limit=2&sort={sort}");
        for _ in 0..100 {
            let r = f.server.get(&target, key);
            assert_eq!(r.status, 200, "{target}: {}", r.text());
            let doc = r.json();
            for t in doc["tlds"].as_array().unwrap() {
                seen.push(t["tld"].as_str().unwrap().to_owned());
            }
            match doc["meta"]["next_cursor"].as_str() {
                Some(c) => target = format!("/api/v1/client/tlds?limit=2&sort={sort}&cursor={c}"),
                None => break,
            }
        }
        let total = f.server.get("/api/v1/client/tlds", key).json()["meta"]["total"]
            .as_u64()
            .unwrap() as usize;
        let mut unique = seen.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), seen.len(), "{sort}: {seen:?}");
        assert_eq!(seen.len(), total, "{sort}");
    }
}

/// A kept answer (issue 20, `api::answers`) is the answer: the same bytes as the first
/// time, one credit spent each time, and every plan checked as if it were the first.
#[test]
fn repeated_answers_are_the_same_and_still_metered_and_checked() {
    let f = fixture("answers");
    let s = &f.server;
    let credits = |r: &http_support::Response| -> u64 {
        r.header("x-credits-remaining").unwrap().parse().unwrap()
    };
    for target in [
        "/api/v1/client/prices/cheapest?tlds=com,museum&limit=3",
        "/api/v1/client/registrars/tld/com?include_prices=true",
        "/api/v1/client/overview/tld/museum",
        "/api/v1/client/prices?tlds=com,net&registrars=alpha,bravo",
    ] {
        let first = s.get(target, f.key("pro"));
        assert_eq!(first.status, 200, "{target}: {}", first.text());
        let mut last = credits(&first);
        for _ in 0..3 {
            s.clock.advance(60_000);
            let again = s.get(target, f.key("pro"));
            assert_eq!(again.status, 200, "{target}");
            assert_eq!(
                http_support::mask_elapsed(&again.body),
                http_support::mask_elapsed(&first.body),
                "{target}"
            );
            assert_eq!(credits(&again) + 1, last, "{target}: one credit each time");
            last = credits(&again);
        }
    }
    // What pro may ask, free may not: the same target is checked for each plan.
    let target = "/api/v1/client/prices/cheapest?tlds=com,museum&limit=3";
    s.get(target, f.key("free"))
        .assert_problem(403, "tld_not_in_plan");
    // And what the plan shows differs: the tier is the caller's.
    let basic = s.get(target, f.key("basic")).json();
    assert_eq!(basic["meta"]["tier"], "basic");
    assert_eq!(s.get(target, f.key("pro")).json()["meta"]["tier"], "pro");
}

#[test]
fn stale_prices_are_marked_and_left_out_of_rankings_unless_asked() {
    // The real data, on the server's clock (2026-11-21), with the default age limit:
    // Cloudflare's com price of 2024-01-07 is nearly three years old.
    let dir = TempDir::new("stale_api");
    let (keys_path, keys) = dir.keys();
    let mut opts = Options::new(Path::new("/nonexistent"), &keys_path);
    opts.snapshot = None;
    opts.config.max_age_days = tldsnap::query::DEFAULT_MAX_AGE_DAYS;
    let s = Server::start(opts);
    let pro = Some(keys["pro"].as_str());
    let names = |doc: &serde_json::Value| -> Vec<String> {
        doc["results"]["com"]["cheapest_register"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["registrar_name"].as_str().unwrap().to_owned())
            .collect()
    };
    for path in ["/api/v1/client/prices/cheapest", "/api/v1/prices/cheapest"] {
        let doc = s.get(&format!("{path}?tlds=com&limit=100"), pro).json();
        assert!(!names(&doc).contains(&"Cloudflare".to_owned()), "{doc}");
        assert!(doc["results"]["com"]["stale_count"].as_u64().unwrap() > 0);
        let doc = s
            .get(
                &format!("{path}?tlds=com&limit=100&include_stale=true"),
                pro,
            )
            .json();
        let entries = doc["results"]["com"]["cheapest_register"]
            .as_array()
            .unwrap();
        let cf = entries
            .iter()
            .find(|e| e["registrar_name"] == "Cloudflare")
            .unwrap_or_else(|| panic!("{doc}"));
        assert_eq!(cf["stale"], true);
        assert_eq!(cf["last_updated"], "2024-01-07T06:15:23.000Z");
        // A long enough max_age_days takes it back in, unmarked.
        let doc = s
            .get(&format!("{path}?tlds=com&limit=100&max_age_days=2000"), pro)
            .json();
        assert!(names(&doc).contains(&"Cloudflare".to_owned()), "{doc}");
        s.get(&format!("{path}?tlds=com&max_age_days=0"), pro)
            .assert_problem(400, "invalid_parameter");
        s.get(&format!("{path}?tlds=com&include_stale=yes"), pro)
            .assert_problem(400, "invalid_parameter");
    }
    let doc = s
        .get("/api/v1/client/prices?tlds=com&registrars=cloudflare", pro)
        .json();
    assert_eq!(doc["results"]["com"]["cloudflare"]["stale"], true, "{doc}");
    let doc = s.get("/api/v1/client/registrars/tld/com", pro).json();
    let listed = doc["registrars"].as_array().unwrap();
    assert!(listed.iter().all(|e| e["key"] != "cloudflare"), "{doc}");
    assert!(
        listed.iter().all(|e| e["last_updated"].is_string()),
        "{doc}"
    );
    let doc = s.get("/api/v1/overview/tld/com", pro).json();
    assert!(doc["cheapest_register"].get("stale").is_none(), "{doc}");
    // at= accepts today (after the data date of 2026-08-22), not tomorrow.
    let today = s
        .get("/api/v1/client/prices/cheapest?tlds=com&at=2026-11-21", pro)
        .json();
    assert!(today["results"]["com"].is_object(), "{today}");
    s.get("/api/v1/client/prices/cheapest?tlds=com&at=2026-11-22", pro)
        .assert_problem(400, "invalid_parameter");
}
