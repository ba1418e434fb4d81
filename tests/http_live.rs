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
fn upstream_failures_are_named_problems_that_cost_nothing() {
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

    // None of these cost a credit.
    let after = credits(&server.get("/api/v1/client/domains/taken.lvt/status", key));
    assert_eq!(after, start - 1);
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
}
