//! Each operation of `/openapi.json` documents the problems it answers: a battery of
//! bad requests to every operation (no key, a bad key, a plan that excludes the TLD,
//! spent credits, each documented query parameter malformed, repeated, empty or too
//! long, bad path segments, bad bodies, an unanswered method) gets only problem codes
//! that the operation documents under the status they came with; every documented
//! code is a row of the problem table; and every code of the table is documented by
//! some operation.

mod http_support;

use std::collections::{BTreeMap, BTreeSet};

use http_support::{Options, Response, Server, TempDir, raw_request};
use serde_json::Value;
use tldsnap::http::problem::Kind;

/// The codes a response description names ("… Codes: a, b.").
fn codes_of(description: &str) -> BTreeSet<String> {
    description
        .rsplit_once("Codes: ")
        .map(|(_, list)| {
            list.trim_end_matches('.')
                .split(", ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// `v`, or what its `$ref` points at.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => doc.pointer(&r[1..]).expect("a $ref that resolves"),
        None => v,
    }
}

/// Per status, the problem codes an operation documents.
fn documented(doc: &Value, op: &Value) -> BTreeMap<u16, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (status, r) in op["responses"].as_object().unwrap() {
        let r = resolve(doc, r);
        let Ok(status) = status.parse::<u16>() else {
            continue;
        };
        if r["content"].get("application/problem+json").is_some() {
            out.insert(
                status,
                codes_of(r["description"].as_str().unwrap_or_default()),
            );
        }
    }
    out
}

/// A path of the document with its parameters filled with `segment` for each name.
fn fill(template: &str, segment: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest.find('}').unwrap();
        out.push_str(&rest[..open]);
        out.push_str(&segment(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A path parameter's ordinary value.
fn good(name: &str) -> String {
    match name {
        "tld" => "com",
        "key" => "alpha",
        "domain" => "example.com",
        "id" => "wh_0123456789abcdef01234567",
        _ => "x",
    }
    .to_owned()
}

/// Bad values of a path parameter.
fn bad_segments(name: &str) -> Vec<&'static str> {
    match name {
        "tld" => vec!["zzzz", "-bad-", "%ff", "%zz", "museum"],
        "key" => vec!["zzzz", "-", "%ff", "a%20b"],
        "domain" => vec!["co.uk", "-", "%ff", "a..b", "1.2.3.4"],
        "id" => vec!["x", "wh_", "%ff"],
        _ => vec!["%ff"],
    }
}

/// Bad values of a query parameter, and one value for a list parameter with 101
/// distinct items.
fn bad_values(name: &str) -> Vec<String> {
    let mut v: Vec<String> = ["%zz", "%ff", "", "x", "-1", "0", "99999999999", "a,,b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if matches!(name, "tlds" | "registrars" | "types") {
        v.push(
            (0..101)
                .map(|i| format!("a{i}"))
                .collect::<Vec<_>>()
                .join(","),
        );
        v.push("museum".to_owned());
        v.push("zzzz".to_owned());
    }
    v
}

/// One request of the battery.
struct Probe<'a> {
    method: String,
    target: String,
    key: Option<&'a str>,
    headers: Vec<(&'a str, &'a str)>,
    body: String,
}

/// The body of an ordinary request to an operation that reads one.
fn good_body(path: &str, method: &str) -> &'static str {
    if path.ends_with("/webhooks") {
        r#"{"url":"https://example.com/hook"}"#
    } else if method == "patch" {
        r#"{"description":"x"}"#
    } else {
        r#"{"domains":["example.com","bücher.de"]}"#
    }
}

#[test]
fn every_problem_an_operation_answers_is_documented_there() {
    let dir = TempDir::new("problem-codes");
    let snapshot = dir.fixture_snapshot("s.snap");
    let (keys_path, keys) = dir.keys();
    let mut opts = Options::new(&snapshot, &keys_path);
    opts.data_dir = Some(dir.path("data"));
    let server = Server::start(opts);
    let doc = server.get("/openapi.json", None).json();

    let table: BTreeSet<&str> = Kind::ALL.iter().map(|k| k.code()).collect();
    let mut documented_anywhere = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut failures = Vec::new();
    let mut probes = 0;

    for (template, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let codes = documented(&doc, op);
            for list in codes.values() {
                for code in list {
                    assert!(
                        table.contains(code.as_str()),
                        "{method} {template} documents {code}, which no row of the problem table has"
                    );
                    documented_anywhere.insert(code.clone());
                }
            }
            let names: Vec<&str> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| resolve(&doc, p))
                .filter(|p| p["in"] == "query")
                .filter_map(|p| p["name"].as_str())
                .collect();
            let m = method.to_uppercase();
            let reads_body = op.get("requestBody").is_some();
            let path = fill(template, &good);
            let body = if reads_body {
                good_body(template, method)
            } else {
                ""
            };
            let json = [("content-type", "application/json")];
            let headers: &[(&str, &str)] = if reads_body { &json } else { &[] };
            let mut tries: Vec<Probe> = Vec::new();
            let mut probe =
                |target: String, key, headers: Vec<(&'static str, &'static str)>, body: &str| {
                    tries.push(Probe {
                        method: m.clone(),
                        target,
                        key,
                        headers,
                        body: body.to_owned(),
                    })
                };
            let pro = Some(keys["pro"].as_str());
            probe(path.clone(), pro, headers.to_vec(), body);
            probe(path.clone(), None, headers.to_vec(), body);
            probe(path.clone(), Some("nope"), headers.to_vec(), body);
            // The tiny plan has two credits a month: its third call has none left (the
            // clock moves a minute a probe, not a month).
            for plan in ["free", "tiny", "tiny", "tiny"] {
                let target = if names.contains(&"tlds") {
                    format!("{path}?tlds=museum,com")
                } else {
                    fill(template, &|n| {
                        if n == "tld" { "museum".into() } else { good(n) }
                    })
                };
                probe(target, Some(keys[plan].as_str()), headers.to_vec(), body);
            }
            for name in &names {
                for value in bad_values(name) {
                    let given = if names.contains(&"tlds") && *name != "tlds" {
                        format!("tlds=com&{name}={value}")
                    } else {
                        format!("{name}={value}")
                    };
                    probe(format!("{path}?{given}"), pro, headers.to_vec(), body);
                }
                probe(
                    format!("{path}?{name}=1&{name}=1"),
                    pro,
                    headers.to_vec(),
                    body,
                );
            }
            let mut segments: Vec<&str> = Vec::new();
            let mut rest = template.as_str();
            while let Some(open) = rest.find('{') {
                let close = rest.find('}').unwrap();
                segments.push(&rest[open + 1..close]);
                rest = &rest[close + 1..];
            }
            for name in &segments {
                for bad in bad_segments(name) {
                    let target = fill(template, &|n| {
                        if n == *name { bad.to_owned() } else { good(n) }
                    });
                    probe(target, pro, headers.to_vec(), body);
                }
            }
            if reads_body {
                for bad in [
                    "",
                    "{",
                    "[]",
                    "{\"domains\":[]}",
                    "{\"domains\":7}",
                    "{\"url\":\"ftp://x\"}",
                    "\u{0}",
                ] {
                    probe(path.clone(), pro, json.to_vec(), bad);
                }
                probe(
                    path.clone(),
                    pro,
                    vec![("content-type", "text/plain")],
                    body,
                );
                probe(path.clone(), pro, vec![], body);
            }
            tries.push(Probe {
                method: "PUT".to_owned(),
                target: path.clone(),
                key: pro,
                headers: vec![],
                body: String::new(),
            });

            for Probe {
                method: method_sent,
                target,
                key,
                headers: extra,
                body,
            } in tries
            {
                // A minute between probes refills every rate limit: a probe's answer is
                // its own, not the limit the probes before it spent.
                server.clock.advance(60_000);
                let mut headers: Vec<(&str, &str)> = extra.clone();
                if let Some(k) = key {
                    headers.push(("x-api-key", k));
                }
                let raw = raw_request(&method_sent, &target, &headers, &body);
                let Some(r): Option<Response> = server.send(&raw) else {
                    failures.push(format!("{method_sent} {target}: no answer"));
                    continue;
                };
                probes += 1;
                if r.status < 400 {
                    continue;
                }
                let code = r.json()["code"].as_str().unwrap_or_default().to_owned();
                seen.insert(code.clone());
                let ok = codes.get(&r.status).is_some_and(|c| c.contains(&code));
                if !ok {
                    failures.push(format!(
                        "{method_sent} {target} (for {method} {template}): {} {code}, documented: {:?}",
                        r.status,
                        codes.get(&r.status)
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {probes} probes:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The probes reach the common refusals of every kind.
    for code in [
        "missing_api_key",
        "invalid_api_key",
        "invalid_parameter",
        "missing_parameter",
        "too_many_values",
        "tld_not_in_plan",
        "credits_exhausted",
        "unknown_tld",
        "method_not_allowed",
        "invalid_body",
        "unsupported_media_type",
        "live_unavailable",
    ] {
        assert!(seen.contains(code), "no probe got {code}: {seen:?}");
    }
    // Every problem of the table is documented somewhere, but those the connection
    // layer answers before any operation (a full server, too many connections from
    // one address, a head it cannot parse): the API's introduction names them.
    let before_routes = ["server_busy", "too_many_connections", "malformed_request"];
    for code in &table {
        if !before_routes.contains(code) {
            assert!(
                documented_anywhere.contains(*code),
                "{code} is in the problem table but no operation documents it"
            );
        }
    }
    server.stop().unwrap();
}
