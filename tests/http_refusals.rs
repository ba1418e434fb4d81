//! Outbound refusals on the real binary (`tldsnap serve`, no private targets allowed):
//! a webhook URL or a live lookup whose host is, or resolves to, an address the server
//! does not connect to is answered `refused` and why in general terms. No answer names
//! an address (the server's resolver answers no one's questions); the server's log
//! does.

mod http_support;
mod live_support;

use std::net::IpAddr;

use http_support::{Binary, Response, TEST_PLANS, TempDir};
use live_support::Upstreams;
use serde_json::json;

/// Every IP address literal in `text`: runs of hex digits, dots and colons that parse
/// as an address, and any run holding `::` (an abbreviated IPv6 address).
fn ip_literals(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_hexdigit() || c == '.' || c == ':'))
        .filter(|run| {
            let trimmed = run.trim_matches(['.', ':']);
            run.contains("::") || trimmed.parse::<IpAddr>().is_ok()
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_address_finder_finds_addresses() {
    assert_eq!(
        ip_literals(r#"{"detail":"runsc resolves to 127.0.0.1, a loopback address"}"#),
        ["127.0.0.1"]
    );
    assert_eq!(ip_literals("[::1] is loopback"), ["::1"]);
    assert_eq!(ip_literals("to ::ffff:10.0.0.1."), ["::ffff:10.0.0.1."]);
    assert_eq!(ip_literals("fd00:ec2::254"), ["fd00:ec2::254"]);
    assert!(ip_literals("localhost:8443 resolves to a non-public address (loopback)").is_empty());
    assert!(ip_literals(r#""status":400,"code":"invalid_webhook_url""#).is_empty());
}

/// The body of `r`, checked: a problem document that says `refused` and names no
/// address.
fn refusal(what: &str, r: &Response, status: u16, code: &str) -> String {
    let doc = r.assert_problem(status, code);
    let body = r.text();
    let named = ip_literals(&body);
    assert!(
        named.is_empty(),
        "{what}: the answer names {named:?}: {body}"
    );
    assert!(
        doc["detail"].as_str().unwrap().contains("refused"),
        "{what}: {doc:#}"
    );
    body
}

#[test]
fn no_refusal_names_an_address() {
    let dir = TempDir::new("refusals");
    let up = Upstreams::start();
    let snap = dir.fixture_snapshot("snap.bin");
    let (keys, raw) = dir.keys();
    let plans = dir.path("plans.json");
    std::fs::write(&plans, TEST_PLANS).unwrap();
    let bootstrap = dir.path("dns.json");
    std::fs::write(&bootstrap, up.bootstrap_json()).unwrap();
    let roots = up.ca.write_pem(&dir.0);
    let p = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let resolver = up.dns.to_string();
    let tls_port = up.tls.port().to_string();
    let args = [
        "--snapshot".to_owned(),
        p(&snap),
        "--keys".to_owned(),
        p(&keys),
        "--plans".to_owned(),
        p(&plans),
        "--data-dir".to_owned(),
        p(&dir.path("data")),
        "--live".to_owned(),
        "--rdap-bootstrap".to_owned(),
        p(&bootstrap),
        "--tls-roots".to_owned(),
        p(&roots),
        "--resolver".to_owned(),
        resolver,
        "--tls-port".to_owned(),
        tls_port,
    ];
    let mut bin = Binary::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let addr = bin.addr.parse().unwrap();
    let pro = raw["pro"].as_str();

    // Webhook URLs: a name that resolves to loopback (from /etc/hosts), literals of a
    // private network, IPv6 loopback, an IPv4-mapped private address, a metadata
    // service, and a name written as a number.
    for url in [
        "https://localhost/",
        "https://localhost:8443/hook",
        "https://10.1.2.3/",
        "https://192.168.0.1/",
        "https://[::1]/",
        "https://[::ffff:10.0.0.1]/",
        "https://169.254.169.254/latest/meta-data/",
        "https://[fd00:ec2::254]/",
        "https://2130706433/",
    ] {
        let r = http_support::request(
            addr,
            "POST",
            "/api/v1/client/webhooks",
            Some(pro),
            Some(&json!({ "url": url })),
        );
        refusal(url, &r, 400, "invalid_webhook_url");
    }
    // The log has what the client was not told.
    let logged = bin.wait_for("outbound connection refused: localhost resolves to");
    assert!(
        logged.contains("127.0.0.1") || logged.contains("::1"),
        "{logged}"
    );

    // Live lookups: the TLS lookup of names that resolve to loopback (IPv4 and IPv6)
    // and to a metadata address; the registration lookup of a TLD whose registry is
    // on loopback.
    for name in ["secure.lvt", "taken.lvt", "intranet.lvt"] {
        let r = bin.get(&format!("/api/v1/client/domains/{name}/tls"), Some(pro));
        let body = refusal(name, &r, 422, "target_refused");
        assert!(body.contains(name), "{body}");
    }
    let logged = bin.wait_for("outbound connection refused: intranet.lvt resolves to");
    assert!(logged.contains("169.254.169.254"), "{logged}");
    let r = bin.get("/api/v1/client/domains/taken.lvt/rdap", Some(pro));
    refusal("rdap of taken.lvt", &r, 424, "upstream_error");
}
