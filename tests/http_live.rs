//! The live endpoints over real sockets: tldsnap's server on loopback, configured (as
//! `serve --live --rdap-bootstrap FILE --tls-roots FILE --allow-private-targets` would
//! configure it) against the real upstreams of tests/live_support. What a client sees:
//! answers, credits, plan refusals, and every upstream failure as a problem naming the
//! upstream, never a 5xx.

mod http_support;
mod live_support;

use std::time::Instant;

use http_support::{Options, Response, Server, TempDir};
use live_support::Upstreams;

fn start(
    dir: &TempDir,
    up: Option<&Upstreams>,
) -> (Server, std::collections::BTreeMap<&'static str, String>) {
    let (keys_path, keys) = dir.keys();
    let snapshot = dir.fixture_snapshot("s.tldsnap");
    let mut opts = Options::new(&snapshot, &keys_path);
    opts.live = up.map(Upstreams::config);
    (Server::start(opts), keys)
}

fn credits(r: &Response) -> u64 {
    r.header("x-credits-remaining").unwrap().parse().unwrap()
}

#[test]
fn registration_data_and_status_cost_what_the_plan_says() {
    let dir = TempDir::new("live-rdap");
    let up = Upstreams::start();
    let (server, keys) = start(&dir, Some(&up));
    let key = Some(keys["pro"].as_str());

    let r = server.get("/api/v1/client/domains/www.TAKEN.lvt/rdap", key);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("x-credits-cost"), Some("2"));
    let v = r.json();
    assert_eq!(v["domain"], "taken.lvt");
    assert_eq!(v["registered"], true);
    assert_eq!(v["source"]["protocol"], "rdap");
    assert_eq!(v["registration"]["registrar"]["name"], "Test Registrar");
    assert_eq!(v["registration"]["expires"], "2030-02-03T04:05:06.000Z");
    assert_eq!(
        v["registration"]["registrant"]["name"],
        "REDACTED FOR PRIVACY"
    );
    assert_eq!(
        v["registration"]["redacted"][1]["field"],
        "Registrant Email"
    );
    let before = credits(&r);

    let r = server.get("/api/v1/client/domains/taken.lvt/status", key);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-credits-cost"), Some("1"));
    assert_eq!(credits(&r), before - 1);
    let v = r.json();
    assert_eq!(v["statuses"][0]["code"], "clientTransferProhibited");
    assert_eq!(v["statuses"][1]["state"], "grace");
    assert_eq!(v["grace_period"], true);
    assert_eq!(v["on_hold"], false);
    // One registry request served both endpoints (the cache).
    assert_eq!(up.hits("/rdap/domain/taken.lvt"), 1);

    let r = server.get("/api/v1/client/domains/free.lvt/rdap", key);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["registered"], false);
    assert_eq!(r.json()["registration"], serde_json::Value::Null);

    // WHOIS where the TLD has no RDAP; raw text when it is not recognised.
    let r = server.get("/api/v1/client/domains/taken.lvw/status", key);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["on_hold"], true);
    assert_eq!(r.json()["source"]["protocol"], "whois");
    let r = server.get("/api/v1/client/domains/odd.lvw/rdap", key);
    assert_eq!(r.json()["registered"], serde_json::Value::Null);
    assert!(r.json()["raw"].as_str().unwrap().contains("holder"));
}

#[test]
fn upstream_failures_are_named_problems_that_cost_one_credit() {
    let dir = TempDir::new("live-fail");
    let up = Upstreams::start();
    let (server, keys) = start(&dir, Some(&up));
    let key = Some(keys["pro"].as_str());
    let start = credits(&server.get("/api/v1/client/domains/taken.lvt/status", key));

    let started = Instant::now();
    let r = server.get("/api/v1/client/domains/a.lvs/rdap", key);
    println!("slow upstream: {} in {:?}", r.status, started.elapsed());
    assert_eq!(r.status, 424, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/problem+json"));
    assert_eq!(r.header("x-credits-cost"), Some("1"));
    assert_eq!(credits(&r), start - 1);
    let v = r.json();
    assert_eq!(v["code"], "upstream_timeout");
    assert_eq!(
        v["upstream"],
        format!("localhost:{}", up.rdap["slow"].port())
    );

    for (name, code) in [("x.lvg", "upstream_error"), ("huge.lvg", "upstream_error")] {
        let r = server.get(&format!("/api/v1/client/domains/{name}/rdap"), key);
        assert_eq!(r.status, 424, "{name}: {}", r.text());
        assert_eq!(r.json()["code"], code);
    }

    let r = server.get("/api/v1/client/domains/a.lvr/status", key);
    assert_eq!(r.status, 424);
    assert_eq!(r.json()["code"], "upstream_error");
    assert_eq!(r.header("retry-after"), Some("120"));
    assert_eq!(r.json()["retry_after"], 120);

    let r = server.get("/api/v1/client/domains/a.lvx/rdap", key);
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["code"], "no_rdap_service");
    assert_eq!(r.json()["tld"], "lvx");

    // Each of the five failures cost one credit (registration data costs two when
    // answered), and the status answer one.
    let after = credits(&server.get("/api/v1/client/domains/taken.lvt/status", key));
    assert_eq!(after, start - 5 - 1);
}

#[test]
fn plans_names_and_servers_without_live_lookups() {
    let dir = TempDir::new("live-plan");
    let up = Upstreams::start();
    let (server, keys) = start(&dir, Some(&up));
    let free = Some(keys["free"].as_str());

    let r = server.get("/api/v1/client/domains/taken.lvt/rdap", free);
    assert_eq!(r.status, 403);
    let v = r.json();
    assert_eq!(v["code"], "lookup_not_in_plan");
    assert_eq!(v["lookup"], "rdap");
    assert_eq!(v["plans_including"][0], "basic");
    // The free plan has status lookups, for its free TLDs only.
    let r = server.get("/api/v1/client/domains/taken.lvt/status", free);
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["code"], "tld_not_in_plan");
    assert_eq!(r.json()["tlds"][0], "lvt");
    assert_eq!(up.hits("/rdap/domain/taken.lvt"), 0);

    let pro = Some(keys["pro"].as_str());
    for bad in ["co.uk", "-a.com", "a..com", "%ff.com", "a%20b.com"] {
        let r = server.get(&format!("/api/v1/client/domains/{bad}/rdap"), pro);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        assert_eq!(r.json()["parameter"], "domain", "{bad}");
    }
    assert_eq!(
        server
            .get("/api/v1/client/domains/taken.lvt/rdap", None)
            .status,
        401
    );

    // A server started without --live answers quickly, with a problem, not a 5xx.
    let plain_dir = TempDir::new("live-none");
    let (plain, keys) = start(&plain_dir, None);
    let r = plain.get(
        "/api/v1/client/domains/example.com/rdap",
        Some(keys["pro"].as_str()),
    );
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["code"], "live_unavailable");
}

#[test]
fn dns_records_over_http() {
    let dir = TempDir::new("live-dns");
    let up = Upstreams::start();
    let (server, keys) = start(&dir, Some(&up));
    let key = Some(keys["pro"].as_str());

    let r = server.get("/api/v1/client/domains/TAKEN.lvt/dns?types=mx,A", key);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-credits-cost"), Some("1"));
    let v = r.json();
    assert_eq!(v["name"], "taken.lvt");
    assert_eq!(v["status"], "NOERROR");
    assert_eq!(v["records"][0]["type"], "MX");
    assert_eq!(v["records"][0]["records"][0]["exchange"], "mail.taken.lvt");
    assert_eq!(v["records"][1]["type"], "A");
    assert_eq!(v["records"][1]["records"][0]["address"], "127.0.0.1");
    assert_eq!(v["records"][1]["ttl"], 300);

    // Every type by default; a subdomain is its own name here.
    let r = server.get("/api/v1/client/domains/www.free.lvt/dns", key);
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["name"], "www.free.lvt");
    assert_eq!(v["status"], "NXDOMAIN");
    assert_eq!(v["records"].as_array().unwrap().len(), 7);

    let r = server.get("/api/v1/client/domains/servfail.lvt/dns?types=NS", key);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["status"], "SERVFAIL");
    assert_eq!(r.json()["records"][0]["status"], "SERVFAIL");

    let started = Instant::now();
    let r = server.get("/api/v1/client/domains/slowdns.lvt/dns?types=A", key);
    println!(
        "silent resolver over HTTP: {} in {:?}",
        r.status,
        started.elapsed()
    );
    assert_eq!(r.status, 424, "{}", r.text());
    assert_eq!(r.json()["code"], "upstream_timeout");
    assert_eq!(r.json()["upstream"], format!("resolver {}", up.dns));

    for bad in ["PTR", "A,,MX", ""] {
        let r = server.get(
            &format!("/api/v1/client/domains/taken.lvt/dns?types={bad}"),
            key,
        );
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["parameter"], "types");
    }

    // The resolver's DNSSEC verdict, when asked for: a signed zone (its records and its
    // NXDOMAIN), an unsigned one, records whose validation fails, a broken name.
    let verdict = |target: &str| {
        let r = server.get(target, key);
        assert_eq!(r.status, 200, "{target}: {}", r.text());
        assert_eq!(r.header("x-credits-cost"), Some("1"));
        r.json()
    };
    let v = verdict("/api/v1/client/domains/signed.lvt/dns?types=A,NS&dnssec=true");
    assert_eq!(
        v["dnssec"],
        serde_json::json!({"verdict": "secure", "resolver_validates": true})
    );
    assert_eq!(v["records"][0]["dnssec"], "secure");
    assert_eq!(v["records"][1]["dnssec"], "secure");
    let v = verdict("/api/v1/client/domains/www.signed.lvt/dns?types=A&dnssec=true");
    assert_eq!(
        (&v["status"], &v["dnssec"]["verdict"]),
        (&"NXDOMAIN".into(), &"secure".into())
    );
    let v = verdict("/api/v1/client/domains/taken.lvt/dns?types=A,MX&dnssec=true");
    assert_eq!(v["dnssec"]["verdict"], "insecure");
    assert_eq!(v["records"][1]["records"][0]["exchange"], "mail.taken.lvt");
    let v = verdict("/api/v1/client/domains/bogus.lvt/dns?types=A&dnssec=true");
    assert_eq!(v["status"], "SERVFAIL");
    assert_eq!(v["records"][0]["dnssec"], "bogus");
    assert_eq!(v["dnssec"]["verdict"], "bogus");
    let v = verdict("/api/v1/client/domains/servfail.lvt/dns?types=A&dnssec=true");
    assert_eq!(v["dnssec"]["verdict"], "indeterminate");
    // Not asked (or asked not to): no verdict in the answer.
    for target in [
        "/api/v1/client/domains/bogus.lvt/dns?types=A",
        "/api/v1/client/domains/signed.lvt/dns?types=A&dnssec=false",
    ] {
        let v = verdict(target);
        assert!(v.get("dnssec").is_none(), "{target}: {v}");
        assert!(v["records"][0].get("dnssec").is_none(), "{target}: {v}");
    }
    for bad in ["1", "yes", "TRUE", ""] {
        let r = server.get(
            &format!("/api/v1/client/domains/taken.lvt/dns?dnssec={bad}"),
            key,
        );
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["parameter"], "dnssec");
    }
}

fn post_json(server: &Server, path: &str, key: &str, body: &str) -> Response {
    let raw = format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    server.send(raw.as_bytes()).expect("an answer")
}

#[test]
fn availability_of_one_name_is_always_an_answer() {
    let dir = TempDir::new("live-avail");
    let up = Upstreams::start();
    let (server, keys) = start(&dir, Some(&up));
    let key = Some(keys["pro"].as_str());
    for (name, want) in [
        ("www.taken.lvt", "registered"),
        ("nic.lvt", "reserved"),
        ("free.lvt", "available"),
        ("a.lvs", "unknown"),
        ("a.lvr", "unknown"),
    ] {
        let r = server.get(&format!("/api/v1/client/domains/{name}/availability"), key);
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        assert_eq!(r.header("x-credits-cost"), Some("1"));
        let v = r.json();
        assert_eq!(v["availability"], want, "{name}: {v}");
        assert_eq!(v["evidence"].as_array().unwrap().len(), 2, "{name}");
    }
    let v = server
        .get("/api/v1/client/domains/a.lvs/availability", key)
        .json();
    assert_eq!(
        v["evidence"][0]["upstream"],
        format!("localhost:{}", up.rdap["slow"].port())
    );
    assert!(
        v["evidence"][0]["answer"]
            .as_str()
            .unwrap()
            .starts_with("timeout")
    );
}

#[test]
fn a_hundred_names_at_once_with_every_kind_of_answer() {
    let dir = TempDir::new("live-bulk");
    let up = Upstreams::start();
    let (server, keys) = start(&dir, Some(&up));
    let key = keys["pro"].as_str();
    let mut names: Vec<String> = Vec::new();
    let mut add = |n: usize, label: &str, tld: &str| {
        for i in 0..n {
            names.push(format!("{label}{i}.{tld}"));
        }
    };
    add(15, "taken", "lvt"); // registered (RDAP, DNS delegated)
    add(10, "nic", "lvt"); // reserved
    add(17, "free", "lvt"); // available (RDAP 404, NXDOMAIN)
    add(5, "servfail", "lvt"); // RDAP 404 but SERVFAIL: unknown
    add(8, "x", "lvs"); // slow registry: unknown
    add(6, "x", "lvg"); // HTML: unknown
    add(2, "huge", "lvg"); // 10 MiB: unknown
    add(2, "flood", "lvg"); // 10 MiB chunked: unknown
    add(8, "x", "lvr"); // 429: unknown
    add(8, "taken", "lvw"); // registered (WHOIS)
    add(5, "free", "lvw"); // available (WHOIS no match, NXDOMAIN)
    add(3, "held", "lvw"); // reserved (WHOIS)
    add(3, "odd", "lvw"); // unrecognised WHOIS: unknown
    add(5, "x", "lvx"); // no service: unknown
    names.push("bad..name".into());
    names.push("co.uk".into());
    names.push("TAKEN0.lvt".into()); // the same name as taken0.lvt
    assert_eq!(names.len(), 100);
    let body = serde_json::json!({ "domains": names }).to_string();

    let before = credits(&server.get("/api/v1/client/domains/taken0.lvt/status", Some(key)));
    let started = Instant::now();
    let r = post_json(&server, "/api/v1/client/domains/availability", key, &body);
    let took = started.elapsed();
    println!("100-name bulk availability: {} in {took:?}", r.status);
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    println!("meta: {}", v["meta"]);
    assert_eq!(v["meta"]["total"], 100);
    assert_eq!(v["meta"]["checked"], 97);
    let counts = &v["meta"]["counts"];
    assert_eq!(counts["registered"], 23, "{counts}");
    assert_eq!(counts["reserved"], 13, "{counts}");
    assert_eq!(counts["available"], 22, "{counts}");
    assert_eq!(counts["unknown"], 39, "{counts}");
    // One credit per distinct name looked up.
    assert_eq!(r.header("x-credits-cost"), Some("97"));
    assert_eq!(credits(&r), before - 97);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 99, "the repeated name is answered once");
    assert_eq!(results[0]["input"], "taken0.lvt");
    assert_eq!(results[0]["availability"], "registered");
    let bad = results.iter().find(|e| e["input"] == "bad..name").unwrap();
    assert_eq!(bad["error"], "invalid_name");
    // Never "available" for a name whose registry or resolver failed.
    for e in results {
        let input = e["input"].as_str().unwrap();
        if e["availability"] == "available" {
            assert!(input.starts_with("free"), "{e}");
        }
        if input.ends_with(".lvs") || input.ends_with(".lvr") || input.ends_with(".lvg") {
            assert_eq!(e["availability"], "unknown", "{e}");
        }
    }

    // 101 names: refused before any lookup.
    let many: Vec<String> = (0..101).map(|i| format!("n{i}.lvt")).collect();
    let r = post_json(
        &server,
        "/api/v1/client/domains/availability",
        key,
        &serde_json::json!({ "domains": many }).to_string(),
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["code"], "too_many_values");
    assert_eq!(up.hits("/rdap/domain/n0.lvt"), 0);

    // Not enough credits for the names: refused before any lookup.
    let tiny = keys["tiny"].as_str();
    let five: Vec<String> = (0..5).map(|i| format!("credit{i}.lvt")).collect();
    let r = post_json(
        &server,
        "/api/v1/client/domains/availability",
        tiny,
        &serde_json::json!({ "domains": five }).to_string(),
    );
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(r.json()["code"], "credits_exhausted");
    assert_eq!(up.hits("/rdap/domain/credit0.lvt"), 0);

    // The free plan: names outside its TLDs are entries, not a failed request.
    let r = post_json(
        &server,
        "/api/v1/client/domains/availability",
        keys["free"].as_str(),
        r#"{"domains": ["taken0.lvt"]}"#,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["results"][0]["error"], "tld_not_in_plan");
    assert_eq!(r.json()["meta"]["checked"], 0);
}

#[test]
fn tls_certificates_over_http() {
    let dir = TempDir::new("live-tls");
    let up = Upstreams::start();
    let (server, keys) = start(&dir, Some(&up));
    let key = Some(keys["pro"].as_str());

    let r = server.get("/api/v1/client/domains/secure.lvt/tls", key);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-credits-cost"), Some("2"));
    let v = r.json();
    assert_eq!(v["valid"], true);
    assert_eq!(v["error"], serde_json::Value::Null);
    assert_eq!(v["certificate"]["sans"][0], "secure.lvt");
    assert_eq!(v["protocol"], "TLS 1.3");

    for (name, error) in [
        ("expired.lvt", "expired"),
        ("wronghost.lvt", "not_valid_for_name"),
        ("selfsigned.lvt", "unknown_issuer"),
    ] {
        let r = server.get(&format!("/api/v1/client/domains/{name}/tls"), key);
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        assert_eq!(r.json()["valid"], false, "{name}");
        assert_eq!(r.json()["error"], error, "{name}");
    }
    let r = server.get("/api/v1/client/domains/expired.lvt/tls", key);
    assert!(r.json()["certificate"]["days_to_expiry"].as_i64().unwrap() < 0);

    let r = server.get("/api/v1/client/domains/intranet.lvt/tls", key);
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json()["code"], "target_refused");
    assert_eq!(r.json()["target"], "intranet.lvt");

    let r = server.get(
        "/api/v1/client/domains/secure.lvt/tls",
        Some(keys["free"].as_str()),
    );
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["code"], "lookup_not_in_plan");
}

#[test]
fn domain_search_fills_availability_when_asked() {
    let dir = TempDir::new("live-search");
    let up = Upstreams::start();
    let (keys_path, keys) = dir.keys();
    // The fixture prices, and the two test TLDs priced cheapest of all.
    let snapshot = dir.edited_snapshot("s.tldsnap", |prices| {
        format!(
            "{}\nlvt,alpha,0.50,1.00,1.00,USD,2026-01-01T00:00:00Z\nlvw,alpha,0.60,1.00,1.00,USD,2026-01-01T00:00:00Z\n",
            prices.trim_end()
        )
    });
    let mut opts = Options::new(&snapshot, &keys_path);
    opts.live = Some(up.config());
    let server = Server::start(opts);
    let key = Some(keys["pro"].as_str());

    let r = server.get("/api/v1/client/domains/search?q=taken3&limit=2", key);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-credits-cost"), Some("1"));
    assert_eq!(r.json()["results"][0]["availability"], "unknown");

    let r = server.get(
        "/api/v1/client/domains/search?q=taken3&limit=2&check_availability=true",
        key,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    // The search, and one availability credit per candidate.
    assert_eq!(r.header("x-credits-cost"), Some("3"));
    let v = r.json();
    assert_eq!(v["results"][0]["domain"], "taken3.lvt");
    assert_eq!(v["results"][0]["availability"], "registered");
    assert_eq!(v["results"][1]["domain"], "taken3.lvw");
    assert_eq!(v["results"][1]["availability"], "registered");
    assert!(
        v["meta"]["availability"]
            .as_str()
            .unwrap()
            .starts_with("checked live")
    );

    let r = server.get(
        "/api/v1/client/domains/search?q=free3&limit=1&check_availability=true",
        key,
    );
    assert_eq!(r.json()["results"][0]["availability"], "available");

    let r = server.get(
        "/api/v1/client/domains/search?q=x&check_availability=maybe",
        key,
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["parameter"], "check_availability");
}

/// The real binary with the command-line flags an operator (or a test) gives: `serve
/// --live --rdap-bootstrap FILE --resolver ADDR --tls-port PORT --tls-roots FILE
/// --allow-private-targets --whois-referral HOST:PORT --whois-port PORT`, against the
/// test upstreams.
#[test]
fn the_binary_takes_the_live_flags() {
    let dir = TempDir::new("live-bin");
    let up = Upstreams::start();
    let (keys_path, keys) = dir.keys();
    let bootstrap = dir.path("dns.json");
    std::fs::write(&bootstrap, up.bootstrap_json()).unwrap();
    let roots = up.ca.write_pem(&dir.0);
    let plans = dir.path("plans.json");
    std::fs::write(&plans, http_support::TEST_PLANS).unwrap();
    let whois = format!("127.0.0.1:{}", up.whois.port());
    let whois_port = up.whois.port().to_string();
    let resolver = up.dns.to_string();
    let tls_port = up.tls.port().to_string();
    let bin = http_support::Binary::start(&[
        "--keys",
        keys_path.to_str().unwrap(),
        "--plans",
        plans.to_str().unwrap(),
        "--live",
        "--rdap-bootstrap",
        bootstrap.to_str().unwrap(),
        "--resolver",
        &resolver,
        "--tls-port",
        &tls_port,
        "--tls-roots",
        roots.to_str().unwrap(),
        "--allow-private-targets",
        "--whois-referral",
        &whois,
        "--whois-port",
        &whois_port,
    ]);
    let key = Some(keys["pro"].as_str());
    let r = bin.get("/api/v1/client/domains/free.lvt/availability", key);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["availability"], "available");
    let r = bin.get("/api/v1/client/domains/taken.lvw/rdap", key);
    assert_eq!(r.json()["source"]["protocol"], "whois");
    let r = bin.get("/api/v1/client/domains/secure.lvt/tls", key);
    assert_eq!(r.json()["valid"], true, "{}", r.text());
    let r = bin.get("/api/v1/client/domains/taken.lvt/dns?types=NS", key);
    assert_eq!(
        r.json()["records"][0]["records"][0]["host"],
        "ns1.taken.lvt"
    );
}

/// `GET target` with `key` on a fresh connection to `addr` (from any thread).
fn get_at(addr: &str, target: &str, key: &str) -> Response {
    let mut conn = http_support::Conn::open(addr.parse().unwrap());
    conn.write(
        format!(
            "GET {target} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    conn.read_response(false).unwrap().unwrap()
}

/// Twenty names of one domain that all resolve to one address are one upstream: the
/// real binary, asked for their certificates at once, connects to that address at most
/// its burst (plus its pace over the time the test took), and asks the registry once
/// for the one registrable domain.
#[test]
fn twenty_subdomains_of_one_address_get_that_address_s_burst() {
    let dir = TempDir::new("live-amplify");
    let up = Upstreams::start();
    let (keys_path, keys) = dir.keys();
    let bootstrap = dir.path("dns.json");
    std::fs::write(&bootstrap, up.bootstrap_json()).unwrap();
    let roots = up.ca.write_pem(&dir.0);
    let plans = dir.path("plans.json");
    std::fs::write(&plans, http_support::TEST_PLANS).unwrap();
    let (resolver, tls_port) = (up.dns.to_string(), up.tls.port().to_string());
    let (burst, rate) = (3, 1);
    let bin = http_support::Binary::start(&[
        "--keys",
        keys_path.to_str().unwrap(),
        "--plans",
        plans.to_str().unwrap(),
        "--live",
        "--rdap-bootstrap",
        bootstrap.to_str().unwrap(),
        "--resolver",
        &resolver,
        "--tls-port",
        &tls_port,
        "--tls-roots",
        roots.to_str().unwrap(),
        "--allow-private-targets",
        "--upstream-burst",
        &burst.to_string(),
        "--upstream-rate",
        &rate.to_string(),
        "--live-budget-ms",
        "500",
    ]);
    let key = keys["pro"].as_str();
    let names: Vec<String> = (1..=20).map(|n| format!("n{n}.victim.lvt")).collect();
    let ask_all = |endpoint: &str| {
        let started = Instant::now();
        let answers: Vec<Response> = std::thread::scope(|s| {
            let asks: Vec<_> = names
                .iter()
                .map(|name| {
                    let target = format!("/api/v1/client/domains/{name}/{endpoint}");
                    let addr = &bin.addr;
                    s.spawn(move || get_at(addr, &target, key))
                })
                .collect();
            asks.into_iter().map(|a| a.join().unwrap()).collect()
        });
        (answers, started.elapsed())
    };

    let (answers, took) = ask_all("tls");
    let accepted = up.tls_accepts.load(std::sync::atomic::Ordering::SeqCst);
    let allowed = burst + (took.as_secs_f64() * f64::from(rate)) as usize;
    let ok = answers.iter().filter(|r| r.status == 200).count();
    println!(
        "20 TLS lookups in {took:?}: {ok} answered, {accepted} connections accepted (at most {allowed})"
    );
    assert!(
        accepted <= allowed,
        "{accepted} connections to one address for 20 names of it (at most {allowed})"
    );
    assert!(ok >= 1 && ok <= accepted, "{ok} answered");
    for r in &answers {
        match r.status {
            200 => assert_eq!(r.json()["valid"], true, "{}", r.text()),
            // Held back: a problem naming the upstream, with when to come back, and
            // the one credit a failed lookup costs.
            424 => {
                assert_eq!(r.json()["code"], "upstream_error", "{}", r.text());
                assert!(r.header("retry-after").is_some(), "{}", r.text());
                assert_eq!(r.header("x-credits-cost"), Some("1"));
            }
            other => panic!("{other}: {}", r.text()),
        }
    }

    // The registration data of any of them is the registrable domain's: one request.
    let (answers, _) = ask_all("rdap");
    for r in &answers {
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["domain"], "victim.lvt");
    }
    assert_eq!(up.hits("/rdap/domain/victim.lvt"), 1);
    assert_eq!(up.hits("/rdap/domain/n1.victim.lvt"), 0);
}

/// `POST target` of the JSON `body` with `key` on a fresh connection to `addr`.
fn post_at(addr: &str, target: &str, key: &str, body: &str) -> Response {
    let mut conn = http_support::Conn::open(addr.parse().unwrap());
    conn.write(
        format!(
            "POST {target} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    conn.read_response(false).unwrap().unwrap()
}

/// One key's bulk lookups do not spend a registry's pace for everyone: while a bulk
/// availability of 30 names of one registry waits for that registry's tokens (one a
/// second), another key's lookup of it waits behind at most the bulk key's share (2)
/// and is answered within its budget.
#[test]
fn a_bulk_key_leaves_other_keys_their_turn_at_a_registry() {
    let dir = TempDir::new("live-share");
    let up = Upstreams::start();
    let (keys_path, keys) = dir.keys();
    let snapshot = dir.fixture_snapshot("s.tldsnap");
    let mut opts = Options::new(&snapshot, &keys_path);
    let mut config = up.config();
    config.limits.rate_per_second = 1;
    config.limits.burst = 1;
    config.limits.concurrency = 4;
    config.limits.per_key = 2;
    config.budget = std::time::Duration::from_millis(3500);
    opts.live = Some(config);
    let server = Server::start(opts);
    let addr = server.addr.to_string();
    let names: Vec<String> = (0..30).map(|i| format!("\"free{i}.lvt\"")).collect();
    let body = format!("{{\"domains\": [{}]}}", names.join(","));
    let asked = || (0..30).any(|i| up.hits(&format!("/rdap/domain/free{i}.lvt")) > 0);
    std::thread::scope(|s| {
        let bulk = s.spawn(|| {
            post_at(
                &addr,
                "/api/v1/client/domains/availability",
                &keys["enterprise"],
                &body,
            )
        });
        // Once the registry has the bulk key's first request, its other names are
        // waiting for the registry's next tokens.
        let waited = Instant::now();
        while !asked() {
            assert!(
                waited.elapsed() < std::time::Duration::from_secs(20),
                "the bulk lookup never reached the registry"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let r = get_at(
            &addr,
            "/api/v1/client/domains/freeb.lvt/availability",
            &keys["pro"],
        );
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["availability"], "available", "{}", r.text());
        let bulk = bulk.join().unwrap();
        assert_eq!(bulk.status, 200, "{}", bulk.text());
        let counts = bulk.json()["meta"]["counts"].clone();
        println!("the other key: available; the bulk key's 30 names: {counts}");
        // The bulk key got the registry's pace, not more: most of its names are unknown.
        assert!(counts["unknown"].as_u64().unwrap() >= 20, "{counts}");
    });
}

/// The value of one series (`name{labels}`) in a Prometheus text body; 0 when absent.
fn series(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .map_or(0.0, |v| v.parse().unwrap())
}

#[test]
fn live_metrics_count_every_request_and_the_cache() {
    let dir = TempDir::new("live-metrics");
    let up = Upstreams::start();
    let (server, keys) = start(&dir, Some(&up));
    let key = Some(keys["pro"].as_str());
    let metrics = || {
        let r = server.get("/metrics", None);
        assert_eq!(r.status, 200);
        r.text()
    };
    let before = metrics();
    for (target, status) in [
        ("taken.lvt/rdap", 200),           // rdap ok; cache registry miss
        ("taken.lvt/rdap", 200),           // cache registry hit, no request
        ("free.lvt/rdap", 200),            // rdap not_found
        ("a.lvs/rdap", 424),               // rdap timeout
        ("x.lvg/rdap", 424),               // rdap error (HTML)
        ("a.lvr/rdap", 424),               // rdap rate_limited (429)
        ("b.lvr/rdap", 424),               // rdap refused (its Retry-After runs)
        ("taken.lvw/rdap", 200),           // whois ok twice: IANA's referral, the registry
        ("free.lvw/rdap", 200),            // whois not_found; the referral from the cache
        ("taken.lvt/dns?types=A", 200),    // dns ok
        ("free.lvt/dns?types=A", 200),     // dns not_found
        ("servfail.lvt/dns?types=A", 200), // dns error
        ("slowdns.lvt/dns?types=A", 424),  // dns timeout
        ("secure.lvt/tls", 200),           // dns ok twice (A, AAAA), tls ok
        ("intranet.lvt/tls", 422),         // dns ok twice, tls refused (metadata address)
    ] {
        let r = server.get(&format!("/api/v1/client/domains/{target}"), key);
        assert_eq!(r.status, status, "{target}: {}", r.text());
    }
    let after = metrics();
    let moved = |name: &str| series(&after, name) - series(&before, name);
    let requests = |u: &str, o: &str| {
        moved(&format!(
            "tldsnap_live_upstream_requests_total{{upstream=\"{u}\",outcome=\"{o}\"}}"
        ))
    };
    for (upstream, outcome, n) in [
        ("rdap", "ok", 1.0),
        ("rdap", "not_found", 1.0),
        ("rdap", "timeout", 1.0),
        ("rdap", "error", 1.0),
        ("rdap", "rate_limited", 1.0),
        ("rdap", "refused", 1.0),
        ("whois", "ok", 2.0),
        ("whois", "not_found", 1.0),
        ("whois", "error", 0.0),
        ("dns", "ok", 5.0),
        ("dns", "not_found", 1.0),
        ("dns", "error", 1.0),
        ("dns", "timeout", 1.0),
        ("tls", "ok", 1.0),
        ("tls", "refused", 1.0),
        ("tls", "error", 0.0),
    ] {
        assert_eq!(
            requests(upstream, outcome),
            n,
            "{upstream} {outcome}\n{after}"
        );
    }
    // Durations: every request sent (not the refused one), in the histogram.
    let count = |u: &str| {
        moved(&format!(
            "tldsnap_live_upstream_request_duration_seconds_count{{upstream=\"{u}\"}}"
        ))
    };
    assert_eq!(count("rdap"), 5.0);
    assert_eq!(count("whois"), 3.0);
    assert_eq!(count("tls"), 1.0);
    let inf = moved(
        "tldsnap_live_upstream_request_duration_seconds_bucket{upstream=\"rdap\",le=\"+Inf\"}",
    );
    assert_eq!(inf, 5.0);
    // The slow registry took at least the first-byte timeout (1 s).
    assert!(moved("tldsnap_live_upstream_request_duration_seconds_sum{upstream=\"rdap\"}") >= 1.0);
    let cache = |c: &str, r: &str| {
        moved(&format!(
            "tldsnap_live_cache_lookups_total{{cache=\"{c}\",result=\"{r}\"}}"
        ))
    };
    assert_eq!(cache("registry", "hit"), 1.0);
    assert_eq!(cache("registry", "miss"), 8.0);
    assert_eq!(cache("whois_referral", "miss"), 1.0);
    assert_eq!(cache("whois_referral", "hit"), 1.0);
    assert_eq!(cache("tls", "miss"), 2.0);
    assert!(series(&after, "tldsnap_live_cache_entries") >= 1.0);

    // The exposition stays valid for Prometheus (promtool, as tools/apicheck runs it).
    http_support::promtool_check(&after);
}
