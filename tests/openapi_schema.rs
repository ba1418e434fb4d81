//! The OpenAPI document against what the server really does, with a JSON Schema
//! validator (boon, draft 2020-12, formats asserted):
//!
//! - every golden body of `tests/golden/` is valid against the 200 schema of the
//!   operation that answered it, and a broken body is not;
//! - every operation of the document is called on a real server (events, webhooks, live
//!   lookups, the audit and lookup bodies, operations included), and each answer, errors
//!   too, is valid against the schema the document gives for its status and content
//!   type: the document is the one description of every shape, the renderers answer to
//!   it, and an operation added without an answer checked here fails the test;
//! - each parameter's schema takes what the parameter parser takes: exactly, where a
//!   regular expression can say it, and never more than the parser where it cannot
//!   (Unicode names: the document names the letters IDNA always maps).
//!
//! tools/apicheck runs schemathesis against the served document for the same two
//! questions on generated requests; this test keeps them answered in `cargo test`.

mod http_support;
mod live_support;

use std::collections::BTreeSet;
use std::path::Path;

use boon::{Compiler, Draft, SchemaIndex, Schemas};
use serde_json::Value;
use tldsnap::app::routes as router;
use tldsnap::http::params;

use http_support::{Conn, GOLDEN_CASES, Options, Server, TempDir, fixture_edit, publish};
use live_support::Upstreams;

const DOC: &str = "http://tldsnap.test/openapi.json";

/// The document, loaded once into a compiler; schemas compiled by JSON pointer.
struct Doc {
    doc: Value,
    compiler: Compiler,
    schemas: Schemas,
}

impl Doc {
    fn new() -> Doc {
        let doc = router::openapi();
        let mut compiler = Compiler::new();
        compiler.set_default_draft(Draft::V2020_12);
        compiler.enable_format_assertions();
        compiler.add_resource(DOC, doc.clone()).unwrap();
        Doc {
            doc,
            compiler,
            schemas: Schemas::new(),
        }
    }

    /// The schema at `pointer` (into the document).
    fn schema(&mut self, pointer: &str) -> SchemaIndex {
        assert!(
            self.doc.pointer(pointer).is_some(),
            "no schema at {pointer}"
        );
        self.compiler
            .compile(&format!("{DOC}#{pointer}"), &mut self.schemas)
            .unwrap_or_else(|e| panic!("{pointer}: {e:#}"))
    }

    fn valid(&self, schema: SchemaIndex, value: &Value) -> Result<(), String> {
        self.schemas
            .validate(value, schema)
            .map_err(|e| format!("{e:#}"))
    }
}

/// A JSON pointer token (`/` and `~` escaped).
fn token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The pointer of the 200 `application/json` schema of the GET operation on `path`.
fn ok_schema_pointer(path: &str) -> String {
    let (id, _) = router::find(path).unwrap_or_else(|| panic!("no route for {path}"));
    let template = id.route().path;
    format!(
        "/paths/{}/get/responses/200/content/application~1json/schema",
        token(template)
    )
}

/// The server's defaults that the document states in words. The document is built by
/// the HTTP layer, below the API whose defaults these are (it cannot read them): this
/// keeps the two equal, so changing a default without its description fails here.
#[test]
fn the_document_states_the_servers_defaults() {
    let doc = router::openapi();
    let config = tldsnap::api::Config::default();
    let stream = doc["paths"]["/api/v1/client/events/stream"]["get"]["description"]
        .as_str()
        .expect("the event stream's description");
    let heartbeat = format!("every {} s of silence", config.event_heartbeat.as_secs());
    assert!(
        stream.contains(&heartbeat),
        "{heartbeat:?} not in {stream:?}"
    );
    let streams = format!(
        "at most {} streams open at once",
        config.max_streams_per_key
    );
    assert!(stream.contains(&streams), "{streams:?} not in {stream:?}");
    let timeout = doc["components"]["responses"]["RequestTimeout"]["description"]
        .as_str()
        .expect("the request timeout's description");
    let secs = format!("{} s unless configured", config.body_timeout.as_secs());
    assert!(timeout.contains(&secs), "{secs:?} not in {timeout:?}");
}

#[test]
fn every_golden_body_matches_its_response_schema() {
    let mut doc = Doc::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
        .collect();
    let cases: BTreeSet<String> = GOLDEN_CASES.iter().map(|c| c.0.to_owned()).collect();
    assert_eq!(
        files, cases,
        "tests/golden/ and GOLDEN_CASES name the same bodies"
    );
    for (name, target, _) in GOLDEN_CASES {
        let path = target.split('?').next().unwrap();
        let schema = doc.schema(&ok_schema_pointer(path));
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
        // The golden files mask the one value that changes between runs.
        let text = text.replace("\"<masked>\"", "\"0.05ms\"");
        let body: Value = serde_json::from_str(&text).unwrap();
        if let Err(e) = doc.valid(schema, &body) {
            panic!("golden {name} ({target}) does not match its schema: {e}");
        }
    }
}

#[test]
fn the_validator_refuses_a_body_that_breaks_the_schema() {
    let mut doc = Doc::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let read = |name: &str| -> Value {
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
        serde_json::from_str(&text.replace("\"<masked>\"", "\"0.05ms\"")).unwrap()
    };
    let cheapest = doc.schema(&ok_schema_pointer("/api/v1/client/prices/cheapest"));
    let prices = doc.schema(&ok_schema_pointer("/api/v1/client/prices"));
    let good = read("client_cheapest_com");
    assert!(doc.valid(cheapest, &good).is_ok());
    type Breakage = (&'static str, fn(&mut Value));
    let breakages: [Breakage; 5] = [
        ("meta missing", |v| {
            v.as_object_mut().unwrap().remove("meta");
        }),
        ("rank 0", |v| {
            v["results"]["com"]["cheapest_register"][0]["rank"] = 0.into()
        }),
        ("negative price", |v| {
            v["results"]["com"]["cheapest_register"][0]["register_price"] = (-1.0).into()
        }),
        ("price as a string", |v| {
            v["results"]["com"]["cheapest_register"][0]["renew_price"] = "9.99".into()
        }),
        ("registrar_count missing", |v| {
            v["results"]["com"]
                .as_object_mut()
                .unwrap()
                .remove("registrar_count");
        }),
    ];
    for (what, break_it) in breakages {
        let mut bad = good.clone();
        break_it(&mut bad);
        assert!(doc.valid(cheapest, &bad).is_err(), "{what} passed");
    }
    let mut bad = read("client_prices_all");
    bad["stats"]["last_updated"] = "yesterday".into();
    assert!(
        doc.valid(prices, &bad).is_err(),
        "a date-time format passed"
    );
}

/// The pointer of the schema the document gives for answering `method` on `template`
/// with `status` and `content_type` (a response `$ref` followed); `None` when the
/// document does not give that status or content type.
fn answer_schema_pointer(
    doc: &Value,
    template: &str,
    method: &str,
    status: u16,
    content_type: &str,
) -> Option<String> {
    let response = format!(
        "/paths/{}/{}/responses/{status}",
        token(template),
        method.to_ascii_lowercase()
    );
    let response = match doc.pointer(&response)?.get("$ref") {
        Some(r) => r.as_str()?.strip_prefix('#')?.to_owned(),
        None => response,
    };
    let pointer = format!("{response}/content/{}/schema", token(content_type));
    doc.pointer(&pointer).is_some().then_some(pointer)
}

/// One call of an operation and the status it must get.
struct Call {
    method: &'static str,
    target: String,
    key: Option<String>,
    /// Content type and bytes of the request body.
    body: Option<(&'static str, Vec<u8>)>,
    accept: &'static str,
    status: u16,
}

impl Call {
    fn get(target: &str, key: Option<&str>, status: u16) -> Call {
        Call {
            method: "GET",
            target: target.to_owned(),
            key: key.map(str::to_owned),
            body: None,
            accept: "*/*",
            status,
        }
    }

    fn with(
        method: &'static str,
        target: &str,
        key: &str,
        body: Option<Value>,
        status: u16,
    ) -> Call {
        Call {
            method,
            target: target.to_owned(),
            key: Some(key.to_owned()),
            body: body.map(|b| ("application/json", b.to_string().into_bytes())),
            accept: "*/*",
            status,
        }
    }

    fn raw(&self) -> Vec<u8> {
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: t\r\nAccept: {}\r\nConnection: close\r\n",
            self.method, self.target, self.accept
        );
        if let Some(key) = &self.key {
            head.push_str(&format!("X-API-Key: {key}\r\n"));
        }
        let mut raw = match &self.body {
            Some((ctype, body)) => {
                head.push_str(&format!(
                    "Content-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                ));
                let mut raw = head.into_bytes();
                raw.extend_from_slice(body);
                raw
            }
            None if self.method == "GET" => (head + "\r\n").into_bytes(),
            None => (head + "Content-Length: 0\r\n\r\n").into_bytes(),
        };
        raw.shrink_to_fit();
        raw
    }
}

/// Every operation of the document, on a server with every room (event log, webhooks,
/// live lookups against the loopback upstreams of tests/live_support): each answer's
/// status is the expected one and its body is valid against the document's schema for
/// that status and content type. Together with the golden bodies, every operation is
/// answered at least once with a success.
#[test]
fn every_operation_answers_what_its_schema_says() {
    let mut doc = Doc::new();
    let dir = TempDir::new("openapi-every");
    let up = Upstreams::start();
    let (keys_path, keys) = dir.keys();
    let snapshot = dir.fixture_snapshot("s.tldsnap");
    let mut opts = Options::new(&snapshot, &keys_path);
    opts.data_dir = Some(dir.path("data"));
    opts.live = Some(up.config());
    let server = Server::start(opts);
    let pro = keys["pro"].as_str();
    let free = keys["free"].as_str();
    let hooks = "/api/v1/client/webhooks";
    // A swap with price changes, so that the event log has events to answer with.
    publish(
        &dir.edited_snapshot("edited.s.tldsnap", fixture_edit),
        &snapshot,
    );
    server.state.store.reload().unwrap();

    let mut calls = vec![
        Call::get("/api/v1/client/events?after=0&limit=10", Some(pro), 200),
        Call::get(
            "/api/v1/client/domains/search?q=best%20shop&limit=3",
            Some(pro),
            200,
        ),
        Call::get("/api/v1/client/domains/taken.lvt/rdap", Some(pro), 200),
        Call::get("/api/v1/client/domains/taken.lvt/status", Some(pro), 200),
        Call::get(
            "/api/v1/client/domains/taken.lvt/dns?types=A",
            Some(pro),
            200,
        ),
        Call::get(
            "/api/v1/client/domains/taken.lvt/availability",
            Some(pro),
            200,
        ),
        Call::get("/api/v1/client/domains/secure.lvt/tls", Some(pro), 200),
        Call::with(
            "POST",
            "/api/v1/client/domains/availability",
            pro,
            Some(serde_json::json!({"domains": ["taken.lvt", "free.lvt"]})),
            200,
        ),
        Call::with(
            "POST",
            "/api/v1/client/domains/lookup?limit=2",
            pro,
            Some(serde_json::json!({"domains": ["www.brand.com", "shop.example.co.uk", "x.nope"]})),
            200,
        ),
        Call::with(
            "POST",
            "/api/v1/client/portfolio/audit",
            pro,
            Some(serde_json::json!({"domains": [
                {"name": "example.com", "registrar": "alpha", "expires": "2026-09-01"},
                {"name": "bücher.de"},
                {"name": "x.nope"}
            ]})),
            200,
        ),
        Call {
            body: Some((
                "text/csv",
                b"Domain,Registrar\nexample.com,alpha\nshop.example.co.uk,\n".to_vec(),
            )),
            accept: "text/csv",
            ..Call::with("POST", "/api/v1/client/portfolio/audit", pro, None, 200)
        },
        Call::with(
            "POST",
            hooks,
            pro,
            Some(serde_json::json!({"url": "http://127.0.0.1:9/openapi", "description": "schema"})),
            201,
        ),
        Call::get(hooks, Some(pro), 200),
        // Refusals: each a problem of the status the document gives.
        Call::get("/api/v1/client/prices/cheapest?tlds=com", None, 401),
        Call::get(
            "/api/v1/client/prices/cheapest?tlds=com&limit=0",
            Some(pro),
            400,
        ),
        Call::get("/api/v1/client/prices/cheapest?tlds=nope", Some(pro), 404),
        Call::get("/api/v1/client/events", Some(free), 403),
        Call::get("/api/v1/client/events?after=999999", Some(pro), 410),
        Call::get(&format!("{hooks}/wh_nope"), Some(pro), 404),
        Call::with(
            "POST",
            hooks,
            pro,
            Some(serde_json::json!({"url": "ftp://x"})),
            400,
        ),
        Call::get("/api/v1/client/domains/taken.lvt/rdap", Some(free), 403),
        Call::get("/api/v1/registrars/nobody", None, 404),
        Call::with("POST", "/healthz", pro, None, 405),
        Call::get(
            &format!("/api/v1/prices/cheapest?tlds=com&x={}", "a".repeat(9_000)),
            None,
            414,
        ),
    ];
    // The subscription the POST above creates, through every operation on it.
    let mut answered: BTreeSet<(String, String)> = BTreeSet::new();
    let mut check = |doc: &mut Doc, call: &Call| -> http_support::Response {
        let r = server.send(&call.raw()).expect("an answer");
        assert_eq!(
            r.status,
            call.status,
            "{} {}: {}",
            call.method,
            call.target,
            r.text()
        );
        let path = call.target.split('?').next().unwrap();
        let (id, _) = router::find(path).unwrap_or_else(|| panic!("no route for {path}"));
        let template = id.route().path;
        if r.status == 204 {
            assert!(r.body.is_empty(), "{template}: a 204 with a body");
        } else {
            let ctype = r
                .header("content-type")
                .unwrap_or_default()
                .split(';')
                .next()
                .unwrap()
                .trim()
                .to_owned();
            // A method the path does not answer (405) is documented on the methods it
            // does answer.
            let documented = doc.doc["paths"][template]
                .get(call.method.to_ascii_lowercase())
                .map_or_else(
                    || {
                        let ops = doc.doc["paths"][template].as_object().unwrap();
                        ops.keys().next().unwrap().to_ascii_uppercase()
                    },
                    |_| call.method.to_owned(),
                );
            let pointer = answer_schema_pointer(&doc.doc, template, &documented, r.status, &ctype)
                .unwrap_or_else(|| {
                    panic!(
                        "{} {template}: the document gives no {} {ctype} answer",
                        call.method, r.status
                    )
                });
            let schema = doc.schema(&pointer);
            let body = if ctype.ends_with("json") {
                r.json()
            } else {
                Value::String(r.text())
            };
            if let Err(e) = doc.valid(schema, &body) {
                panic!(
                    "{} {} ({} {ctype}) does not match {pointer}: {e}",
                    call.method, call.target, r.status
                );
            }
        }
        if (200..300).contains(&r.status) {
            answered.insert((template.to_owned(), call.method.to_owned()));
        }
        r
    };
    // Every GET operation that takes no path parameter and needs no parameter is called
    // as it is, with a key (a new operation of that kind needs no line here).
    for (path, item) in doc.doc["paths"].as_object().unwrap() {
        let Some(op) = item.get("get") else { continue };
        let needs_parameter = op["parameters"].as_array().into_iter().flatten().any(|p| {
            let p = match p["$ref"].as_str() {
                Some(r) => doc.doc.pointer(&r[1..]).unwrap(),
                None => p,
            };
            p["required"] == true
        });
        let streams = op["responses"]["200"]["content"]
            .get("text/event-stream")
            .is_some();
        if path.contains('{') || needs_parameter || streams {
            continue;
        }
        if !calls
            .iter()
            .any(|c| c.method == "GET" && c.target.split('?').next() == Some(path))
        {
            calls.push(Call::get(path, Some(pro), 200));
        }
    }
    let mut id = String::new();
    for call in calls.drain(..) {
        let r = check(&mut doc, &call);
        if call.status == 201 {
            id = r.json()["id"].as_str().unwrap().to_owned();
        }
        if call.target.starts_with("/api/v1/client/events?") && call.status == 200 {
            let events = r.json()["events"].as_array().unwrap().len();
            assert!(
                events > 0,
                "the events checked against their schema are none"
            );
        }
    }
    let one = format!("{hooks}/{id}");
    for call in [
        Call::get(&one, Some(pro), 200),
        Call::with(
            "PATCH",
            &one,
            pro,
            Some(serde_json::json!({"description": "renamed", "tlds": ["com"]})),
            200,
        ),
        Call::with("POST", &format!("{one}/test"), pro, None, 200),
        Call::with("POST", &format!("{one}/rotate-secret"), pro, None, 200),
        Call::with("DELETE", &one, pro, None, 204),
    ] {
        check(&mut doc, &call);
    }
    // The stream answers with its head at once and then stays open: its status and
    // content type, which is all a schema says of an event stream.
    let mut conn = Conn::open(server.addr);
    conn.write(
        format!("GET /api/v1/client/events/stream HTTP/1.1\r\nHost: t\r\nX-API-Key: {pro}\r\n\r\n")
            .as_bytes(),
    );
    let head = conn.read_response(true).unwrap().expect("a head");
    assert_eq!(head.status, 200);
    let ctype = head.header("content-type").unwrap_or_default().to_owned();
    let template = "/api/v1/client/events/stream";
    assert!(
        answer_schema_pointer(&doc.doc, template, "GET", 200, &ctype).is_some(),
        "the stream's {ctype} is not documented"
    );
    answered.insert((template.to_owned(), "GET".to_owned()));
    drop(conn);
    for (_, target, _) in GOLDEN_CASES {
        let path = target.split('?').next().unwrap();
        let (id, _) = router::find(path).unwrap();
        answered.insert((id.route().path.to_owned(), "GET".to_owned()));
    }
    // Every operation of the document was answered with a success and checked.
    let mut operations = BTreeSet::new();
    for (path, ops) in doc.doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                operations.insert((path.clone(), method.to_ascii_uppercase()));
            }
        }
    }
    let missing: Vec<_> = operations.difference(&answered).collect();
    assert!(
        missing.is_empty(),
        "operations never answered and checked: {missing:?}"
    );
}

/// Every operation that lists the `currency` parameter, answered in yen on the shipped
/// data (the fixture has no exchange rates): its answer is valid against its schema and
/// carries the `currency` object; and every operation that answers prices is among them.
#[test]
fn every_answer_in_another_currency_matches_its_schema() {
    let mut doc = Doc::new();
    let dir = TempDir::new("openapi-currency");
    let (keys_path, keys) = dir.keys();
    let snapshot = dir.real_snapshot("real.tldsnap", str::to_owned);
    let server = Server::start(Options::new(&snapshot, &keys_path));
    let pro = keys["pro"].as_str();
    let calls = [
        Call::get(
            "/api/v1/client/prices/cheapest?tlds=com,net&currency=JPY",
            Some(pro),
            200,
        ),
        Call::get("/api/v1/prices/cheapest?tlds=com&currency=JPY", None, 200),
        Call::get(
            "/api/v1/client/prices?tlds=com&currency=JPY",
            Some(pro),
            200,
        ),
        Call::get("/api/v1/prices?tlds=com&currency=JPY", None, 200),
        Call::get("/v1/prices?tlds=com&currency=JPY", None, 200),
        Call::get(
            "/api/v1/client/registrars/tld/com?include_prices=true&currency=JPY",
            Some(pro),
            200,
        ),
        Call::get("/api/v1/client/history/tld/io?currency=JPY", Some(pro), 200),
        Call::get("/api/v1/history/tld/com?currency=JPY", None, 200),
        Call::get(
            "/api/v1/client/overview/tld/com?currency=JPY",
            Some(pro),
            200,
        ),
        Call::get("/api/v1/overview/tld/com?currency=JPY", None, 200),
        Call::get(
            "/api/v1/client/tlds?sort=cheapest&limit=20&currency=JPY",
            Some(pro),
            200,
        ),
        Call::get("/api/v1/tlds?limit=20&currency=JPY", None, 200),
        Call::get("/api/v1/registrars/porkbun?limit=5&currency=JPY", None, 200),
        Call::get(
            "/api/v1/client/domains/search?q=bestshop.io&limit=10&currency=JPY",
            Some(pro),
            200,
        ),
        Call::with(
            "POST",
            "/api/v1/client/domains/lookup?limit=3&currency=JPY",
            pro,
            Some(serde_json::json!({"domains": ["www.brand.com", "shop.example.co.uk", "x.nope"]})),
            200,
        ),
        Call::with(
            "POST",
            "/api/v1/client/portfolio/audit?currency=JPY",
            pro,
            Some(
                serde_json::json!({"domains": [{"name": "example.com", "registrar": "namecheap"}]}),
            ),
            200,
        ),
        Call::get(
            "/api/v1/client/export?tlds=com&currency=JPY",
            Some(pro),
            200,
        ),
    ];
    // Whether `v` holds the `currency` object of an answer in yen.
    fn says_yen(v: &Value) -> bool {
        match v {
            Value::Object(m) => {
                m.get("currency")
                    .is_some_and(|c| c["code"] == "JPY" && c["per_usd"].is_number())
                    || m.values().any(says_yen)
            }
            Value::Array(a) => a.iter().any(says_yen),
            _ => false,
        }
    }
    let mut called = BTreeSet::new();
    for call in &calls {
        let r = server.send(&call.raw()).expect("an answer");
        assert_eq!(r.status, call.status, "{}: {}", call.target, r.text());
        let path = call.target.split('?').next().unwrap();
        let template = router::find(path).unwrap().0.route().path;
        called.insert((template.to_owned(), call.method.to_ascii_lowercase()));
        let ctype = r.header("content-type").unwrap_or_default();
        let ctype = ctype.split(';').next().unwrap().trim().to_owned();
        let pointer = answer_schema_pointer(&doc.doc, template, call.method, 200, &ctype)
            .unwrap_or_else(|| panic!("{template}: no 200 {ctype} answer documented"));
        let schema = doc.schema(&pointer);
        let body = if ctype.ends_with("json") {
            let body = r.json();
            assert!(
                says_yen(&body),
                "{}: no currency object in {body}",
                call.target
            );
            body
        } else {
            assert!(r.text().contains(",JPY,"), "{}", call.target);
            Value::String(r.text())
        };
        if let Err(e) = doc.valid(schema, &body) {
            panic!("{} does not match {pointer}: {e}", call.target);
        }
    }
    let listing: BTreeSet<(String, String)> = doc.doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .iter()
                .filter(|(_, op)| {
                    op["parameters"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|p| p["$ref"] == "#/components/parameters/currency")
                })
                .map(move |(method, _)| (path.clone(), method.clone()))
        })
        .collect();
    assert_eq!(
        listing, called,
        "the operations listing `currency`, and those called here"
    );
}

/// Inputs for the parameter checks: well-formed, malformed, edge lengths, Unicode.
fn inputs() -> Vec<String> {
    let mut v: Vec<String> = [
        "com",
        "COM",
        "co.uk",
        " .com ",
        "\t.net\t",
        ".com",
        "..com",
        "a..b",
        "com.",
        "-com",
        "com-",
        "a-b",
        "a--b",
        "xn--p1ai",
        "XN--P1AI",
        "0",
        "123",
        "a_b",
        "a b",
        "a,b",
        "",
        " ",
        ".",
        "\0",
        "com\0",
        "%",
        "é",
        "É",
        "рф",
        "РФ",
        "中国",
        "ŝ",
        "ß",
        "α",
        "א",
        "a\u{202e}",
        "\u{200d}",
        "é.com",
        "a.b.c.d",
        "a.b.c.d.e",
        "dynadot",
        "DynaDot",
        "name_com",
        "-dynadot",
        "_x",
        "9",
        "12",
        "12.5",
        "12.50",
        "12.505",
        ".5",
        "5.",
        "-1",
        "1e3",
        "0012",
        "99999999",
        "12345678.9",
        "generic",
        "country-code",
        "test",
        "unknown",
        "GENERIC",
        "c1",
        "c1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "c1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "c1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "c2aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "!",
        "a!",
        "é!",
        "中国!",
        "A",
        "aaaa",
        " MX ",
        "\tTxt",
        "CAA",
        "ptr",
        "ANY",
        "a\n",
        "\nA",
        "127.0.0.1",
        "a.1b",
        "a.b1",
        " a.com ",
        ".a.com",
        "a.com.",
        "a.b.c.d.e",
        "a.b.c.d.e.f",
        "a.xn--p1ai",
        "a.é1",
        "a.1é",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for n in [62, 63, 64, 65, 252, 253, 254] {
        v.push("a".repeat(n));
    }
    let label = "a".repeat(63);
    v.push(format!("{label}.{label}.{label}.{}", "a".repeat(61)));
    v.push(format!("{label}.{label}.{label}.{}", "a".repeat(62)));
    v.push("é".repeat(8));
    v.push("é".repeat(9));
    v.push("中".repeat(8));
    v.push(format!(
        "{}.{}.{}.{}",
        "中".repeat(8),
        "中".repeat(8),
        "é".repeat(8),
        "ж".repeat(8)
    ));
    v
}

/// Checks one parameter: the schema never takes what the parser refuses; where `exact`,
/// it takes everything the parser takes, else what it leaves out must be `narrowed`.
fn check_parameter(
    doc: &mut Doc,
    what: &str,
    pointer: &str,
    parser: impl Fn(&str) -> bool,
    exact: bool,
    narrowed: impl Fn(&str) -> bool,
) {
    let schema = doc.schema(pointer);
    for input in inputs() {
        let documented = doc.valid(schema, &Value::String(input.clone())).is_ok();
        let taken = parser(&input);
        assert!(
            !documented || taken,
            "{what}: the document takes {input:?}, the server refuses it"
        );
        if taken && !documented {
            assert!(
                !exact && narrowed(&input),
                "{what}: the server takes {input:?}, the document refuses it"
            );
        }
    }
}

#[test]
fn parameter_schemas_take_what_the_parser_takes() {
    let mut doc = Doc::new();
    // A Unicode name outside the documented letters, or one of more than four labels.
    let unicode_or_deep = |s: &str| !s.is_ascii() || s.trim().split('.').count() > 4;
    check_parameter(
        &mut doc,
        "tlds item",
        "/components/parameters/tlds/schema/items",
        |s| tldsnap::tld::normalize(s).is_ok(),
        false,
        unicode_or_deep,
    );
    check_parameter(
        &mut doc,
        "{tld}",
        "/components/parameters/tld/schema",
        |s| tldsnap::tld::normalize(s).is_ok(),
        false,
        unicode_or_deep,
    );
    check_parameter(
        &mut doc,
        "registrars item",
        "/components/parameters/registrars/schema/items",
        |s| !s.contains(',') && params::registrars(Some(s)).is_ok(),
        true,
        |_| false,
    );
    check_parameter(
        &mut doc,
        "{key}",
        "/components/parameters/key/schema",
        |s| params::path_registrar(s).is_ok(),
        true,
        |_| false,
    );
    check_parameter(
        &mut doc,
        "catalogue q",
        "/components/parameters/q/schema",
        |s| params::search(Some(s)).is_ok(),
        true,
        |_| false,
    );
    check_parameter(
        &mut doc,
        "cursor",
        "/components/parameters/cursor/schema",
        |s| params::cursor(Some(s)).is_ok(),
        true,
        |_| false,
    );
    // The live lookups' {domain}: the PSL decides which names are a suffix alone (a
    // 400 the description states and tools/apicheck's hook avoids), so the check is
    // "a name, or a suffix alone of more than one label".
    let names = tldsnap::audit::Names::embedded();
    check_parameter(
        &mut doc,
        "{domain}",
        "/components/parameters/domain/schema",
        |s| {
            let top = |n: &str| {
                n.rsplit('.')
                    .next()
                    .and_then(|l| l.bytes().next())
                    .is_some_and(|b| b.is_ascii_alphabetic())
            };
            match names.split(s, |_| false) {
                Ok(split) => top(split.suffix()),
                Err(tldsnap::audit::NameError::SuffixOnly) => {
                    s.trim().trim_matches('.').contains('.')
                        && tldsnap::audit::names::canonical(s).is_ok_and(|c| top(&c))
                }
                Err(_) => false,
            }
        },
        false,
        // Unicode outside the documented letters (or a top-level label of a digit and
        // Unicode, which IDNA turns into xn--), and more than five labels, are taken by
        // the server and left out of the pattern.
        |s| !s.is_ascii() || s.trim_matches([' ', '\t', '.']).split('.').count() > 5,
    );
    check_parameter(
        &mut doc,
        "dns types item",
        &format!(
            "/paths/{}/get/parameters/1/schema/items",
            token("/api/v1/client/domains/{domain}/dns")
        ),
        |s| !s.contains(',') && params::dns_types(Some(s)).is_ok(),
        true,
        |_| false,
    );
    let search = format!(
        "/paths/{}/get/parameters",
        token("/api/v1/client/domains/search")
    );
    check_parameter(
        &mut doc,
        "max_price",
        &format!("{search}/1/schema"),
        |s| matches!(tldsnap::price::parse_cents(s), Ok(Some(_))),
        false,
        // Prices of ten million dollars or more, and blanks around the number.
        |s| {
            s.trim() != s
                || s.trim()
                    .split('.')
                    .next()
                    .unwrap()
                    .trim_start_matches('0')
                    .len()
                    > 7
        },
    );
    check_parameter(
        &mut doc,
        "types item",
        &format!("{search}/2/schema/items"),
        |s| tldsnap::audit::search::parse_types(s).is_ok(),
        false,
        // Blanks around a type are trimmed by the server.
        |s| s.trim() != s,
    );
}

/// The live endpoints' answers and problems (against the test upstreams of
/// tests/live_support) are valid against the document's schemas.
#[test]
fn every_live_answer_matches_its_schema() {
    let mut doc = Doc::new();
    let dir = http_support::TempDir::new("openapi-live");
    let up = live_support::Upstreams::start();
    let (keys_path, keys) = dir.keys();
    let snapshot = dir.fixture_snapshot("s.tldsnap");
    let mut opts = http_support::Options::new(&snapshot, &keys_path);
    opts.live = Some(up.config());
    let server = http_support::Server::start(opts);
    let key = Some(keys["pro"].as_str());
    let problem = doc.schema("/components/schemas/Problem");
    for target in [
        "/api/v1/client/domains/taken.lvt/rdap",
        "/api/v1/client/domains/free.lvt/rdap",
        "/api/v1/client/domains/nic.lvt/rdap",
        "/api/v1/client/domains/odd.lvw/rdap",
        "/api/v1/client/domains/taken.lvw/status",
        "/api/v1/client/domains/taken.lvt/status",
        "/api/v1/client/domains/taken.lvt/dns",
        "/api/v1/client/domains/free.lvt/dns?types=A",
        "/api/v1/client/domains/servfail.lvt/dns?types=NS",
        "/api/v1/client/domains/signed.lvt/dns?dnssec=true",
        "/api/v1/client/domains/www.signed.lvt/dns?types=A&dnssec=true",
        "/api/v1/client/domains/bogus.lvt/dns?types=A,MX&dnssec=true",
        "/api/v1/client/domains/taken.lvt/dns?types=A&dnssec=true",
        "/api/v1/client/domains/taken.lvt/availability",
        "/api/v1/client/domains/free.lvt/availability",
        "/api/v1/client/domains/a.lvs/availability",
        "/api/v1/client/domains/secure.lvt/tls",
        "/api/v1/client/domains/expired.lvt/tls",
        // Problems: 424, 404, 422.
        "/api/v1/client/domains/a.lvs/rdap",
        "/api/v1/client/domains/a.lvr/rdap",
        "/api/v1/client/domains/a.lvx/rdap",
        "/api/v1/client/domains/intranet.lvt/tls",
    ] {
        let r = server.get(target, key);
        let body = r.json();
        let path = target.split('?').next().unwrap();
        let schema = if r.status == 200 {
            doc.schema(&ok_schema_pointer(path))
        } else {
            let (id, _) = router::find(path).unwrap();
            let op = &doc.doc["paths"][id.route().path]["get"];
            assert!(
                op["responses"][r.status.to_string()].is_object(),
                "{target}: {} is not documented",
                r.status
            );
            problem
        };
        if let Err(e) = doc.valid(schema, &body) {
            panic!("{target} ({}): {e}\n{body}", r.status);
        }
    }
    let names = serde_json::json!({ "domains": ["taken.lvt", "free.lvt", "bad..name", "a.lvs"] })
        .to_string();
    let raw = format!(
        "POST /api/v1/client/domains/availability HTTP/1.1\r\nHost: t\r\nX-API-Key: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{names}",
        keys["pro"],
        names.len()
    );
    let r = server.send(raw.as_bytes()).unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let schema = doc.schema(&format!(
        "/paths/{}/post/responses/200/content/application~1json/schema",
        token("/api/v1/client/domains/availability")
    ));
    if let Err(e) = doc.valid(schema, &r.json()) {
        panic!("bulk availability: {e}\n{}", r.text());
    }
}
