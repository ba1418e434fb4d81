//! No input breaks the server: a catalogue of malformed, hostile and mis-encoded
//! requests, each answered with a 4xx problem document (also the requests hyper cannot
//! parse: the connection layer answers those with the status hyper chose and a problem
//! body) or a clean close, never a 5xx; the server healthy afterwards. Plus the header
//! read timeout and the connection limit.

mod http_support;

use std::time::Duration;

use http_support::{Conn, Options, Server, TEST_PLANS_OPEN_PUBLIC, TempDir};
use tldsnap::http::server::Config;

/// What a catalogue entry must get.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// This status with this problem code.
    Problem(u16, &'static str),
    /// Any 4xx problem, or a close.
    FourxxOrClose,
    /// This status with this problem code, then the connection closed: a request head
    /// hyper could not parse, answered by the connection layer (`docs/API.md`).
    Closing(u16, &'static str),
    /// A 200 or a 4xx problem: input a lenient reader may take, never a 5xx.
    FourxxOrOk,
}

use Expect::{Closing, FourxxOrClose, FourxxOrOk, Problem};

/// A head hyper could not parse as HTTP/1.1.
const MALFORMED: Expect = Closing(400, "malformed_request");

fn get(target: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").into_bytes()
}

fn get_key(target: &str, key: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nConnection: close\r\n\r\n")
        .into_bytes()
}

fn catalogue(key: &str) -> Vec<(String, Vec<u8>, Expect)> {
    let mut c: Vec<(String, Vec<u8>, Expect)> = Vec::new();
    let mut add = |name: &str, raw: Vec<u8>, e: Expect| c.push((name.to_owned(), raw, e));
    const BAD: Expect = Problem(400, "invalid_parameter");
    const MISSING: Expect = Problem(400, "missing_parameter");
    let public = "/api/v1/prices/cheapest";

    // tlds: empty, repeated, malformed names, encodings.
    for (name, q, e) in [
        ("tlds absent", "", MISSING),
        ("tlds empty", "?tlds=", MISSING),
        ("tlds no value", "?tlds", MISSING),
        ("tlds blank", "?tlds=%20%20", MISSING),
        ("tlds plus only", "?tlds=+", MISSING),
        ("tlds lone comma", "?tlds=,", BAD),
        ("tlds empty item", "?tlds=com,,net", BAD),
        ("tlds trailing comma", "?tlds=com,", BAD),
        ("tlds double dot", "?tlds=a..b", BAD),
        ("tlds dot only", "?tlds=.", BAD),
        ("tlds two leading dots", "?tlds=..com", BAD),
        ("tlds trailing dot", "?tlds=com.", BAD),
        ("tlds NUL", "?tlds=%00", BAD),
        ("tlds embedded NUL", "?tlds=co%00m", BAD),
        ("tlds newline", "?tlds=com%0a", BAD),
        ("tlds CR LF", "?tlds=com%0d%0aX-Injected:%201", BAD),
        ("tlds DEL", "?tlds=%7f", BAD),
        ("tlds control", "?tlds=%01com", BAD),
        ("tlds invalid UTF-8", "?tlds=%ff", BAD),
        ("tlds overlong UTF-8", "?tlds=%c0%af", BAD),
        ("tlds truncated UTF-8", "?tlds=%e2%82", BAD),
        ("tlds surrogate UTF-8", "?tlds=%ed%a0%80", BAD),
        ("tlds bad escape", "?tlds=%zz", BAD),
        ("tlds lone percent", "?tlds=%", BAD),
        ("tlds half escape", "?tlds=co%6", BAD),
        ("tlds leading hyphen", "?tlds=-com", BAD),
        ("tlds trailing hyphen", "?tlds=com-", BAD),
        ("tlds slash", "?tlds=com/net", BAD),
        ("tlds star", "?tlds=*", BAD),
        ("tlds quote", "?tlds=%22com%22", BAD),
        ("tlds backslash", "?tlds=com%5c", BAD),
        ("tlds angle", "?tlds=%3Cscript%3E", BAD),
        ("tlds underscore", "?tlds=co_m", BAD),
        ("tlds space inside", "?tlds=co%20m", BAD),
        ("tlds semicolon", "?tlds=com;net", BAD),
        ("tlds repeated", "?tlds=com&tlds=net", BAD),
        ("tlds repeated encoded name", "?tlds=com&%74lds=net", BAD),
        ("tlds repeated empty", "?tlds=&tlds=", BAD),
        ("tlds repeated bad encoding", "?tlds=com&tlds=%ff", BAD),
        (
            "tlds unknown only",
            "?tlds=no-such-tld",
            Problem(403, "tld_not_in_plan"),
        ),
        (
            "tlds paid only",
            "?tlds=museum",
            Problem(403, "tld_not_in_plan"),
        ),
    ] {
        add(name, get(&format!("{public}{q}")), e);
    }
    add(
        "tlds label 64",
        get(&format!("{public}?tlds={}", "a".repeat(64))),
        BAD,
    );
    add(
        "tlds name 300",
        get(&format!("{public}?tlds={}", ["abc"; 75].join("."))),
        BAD,
    );
    let hundred_one: Vec<String> = (0..101).map(|i| format!("t{i}")).collect();
    add(
        "tlds 101",
        get(&format!("{public}?tlds={}", hundred_one.join(","))),
        Problem(400, "too_many_values"),
    );
    let thousand: Vec<String> = (0..1000).map(|i| format!("x{i}")).collect();
    add(
        "tlds 1000",
        get(&format!("{public}?tlds={}", thousand.join(","))),
        Problem(400, "too_many_values"),
    );
    add(
        "tlds 1500 duplicates then 101",
        get(&format!(
            "{public}?tlds={},{}",
            vec!["com"; 1500].join(","),
            hundred_one.join(",")
        )),
        Problem(400, "too_many_values"),
    );

    // limit: out of range, not a number.
    for (name, v) in [
        ("limit 0", "0"),
        ("limit 101", "101"),
        ("limit negative", "-1"),
        ("limit plus sign", "%2B5"),
        ("limit letters", "abc"),
        ("limit empty", ""),
        ("limit decimal", "1.5"),
        ("limit exponent", "1e2"),
        ("limit hex", "0x10"),
        ("limit space", "%205"),
        ("limit huge", "99999999999999999999999999"),
        ("limit u64 max", "18446744073709551615"),
        ("limit arabic digit", "%D9%A1"),
        ("limit fullwidth digit", "%EF%BC%95"),
        ("limit NUL", "5%00"),
        ("limit bad UTF-8", "%ff"),
        ("limit 1000", "1000"),
    ] {
        add(name, get(&format!("{public}?tlds=com&limit={v}")), BAD);
    }
    add(
        "limit repeated",
        get(&format!("{public}?tlds=com&limit=5&limit=6")),
        BAD,
    );

    // registrars on prices.
    let prices = "/api/v1/prices?tlds=com";
    for (name, v) in [
        ("registrars empty", ""),
        ("registrars comma", ","),
        ("registrars empty item", "alpha,,bravo"),
        ("registrars leading hyphen", "-x"),
        ("registrars space inside", "a%20b"),
        ("registrars slash", "a/b"),
        ("registrars bad UTF-8", "%ff"),
        ("registrars unicode", "%C3%A9cho"),
        ("registrars 65 chars", &"k".repeat(65)),
        ("registrars NUL", "alpha%00"),
    ] {
        add(name, get(&format!("{prices}&registrars={v}")), BAD);
    }
    let keys101: Vec<String> = (0..101).map(|i| format!("r{i}")).collect();
    add(
        "registrars 101",
        get(&format!("{prices}&registrars={}", keys101.join(","))),
        Problem(400, "too_many_values"),
    );
    add(
        "registrars repeated",
        get(&format!("{prices}&registrars=alpha&registrars=bravo")),
        BAD,
    );
    add(
        "v1 prices tlds missing",
        get("/v1/prices?registrars=alpha"),
        MISSING,
    );

    // include_prices and the path TLD (client endpoint, with a key).
    let reg = "/api/v1/client/registrars/tld";
    for (name, v) in [
        ("include_prices yes", "yes"),
        ("include_prices 1", "1"),
        ("include_prices TRUE", "TRUE"),
        ("include_prices empty", ""),
        ("include_prices bad UTF-8", "%ff"),
    ] {
        add(
            name,
            get_key(&format!("{reg}/com?include_prices={v}"), key),
            BAD,
        );
    }
    add(
        "include_prices repeated",
        get_key(
            &format!("{reg}/com?include_prices=true&include_prices=false"),
            key,
        ),
        BAD,
    );
    for (name, seg, e) in [
        ("path tld dotdot", "..", BAD),
        ("path tld encoded dotdot", "%2e%2e", BAD),
        ("path tld encoded slash", "com%2fnet", BAD),
        ("path tld bad UTF-8", "%ff", BAD),
        ("path tld double dot", "a..b", BAD),
        ("path tld NUL", "%00", BAD),
        ("path tld bad escape", "%zz", BAD),
        ("path tld 300 chars", &"a".repeat(300), BAD),
        (
            "path tld unknown",
            "no-such-tld",
            Problem(404, "unknown_tld"),
        ),
    ] {
        add(name, get_key(&format!("{reg}/{seg}"), key), e);
    }

    // Path tricks.
    for (name, target) in [
        ("empty static file name", "/static/"),
        ("double slash", "//healthz"),
        ("trailing slash", "/healthz/"),
        ("upper case", "/HEALTHZ"),
        ("dot segments", "/api/v1/../healthz"),
        ("encoded dot segments", "/api/v1/%2e%2e/healthz"),
        ("encoded path", "/%68ealthz"),
        ("registrars no tld", "/api/v1/client/registrars/tld/"),
        (
            "registrars extra segment",
            "/api/v1/client/registrars/tld/com/extra",
        ),
        ("cheapest trailing slash", "/api/v1/client/prices/cheapest/"),
        ("encoded NUL path", "/%00"),
        ("bad escape path", "/%zz"),
        ("semicolon path params", "/healthz;x=1"),
        ("version 2", "/api/v2/prices/cheapest?tlds=com"),
        ("dot", "/."),
        ("backslash", "/api\\v1\\prices"),
    ] {
        add(name, get(target), Problem(404, "not_found"));
    }

    // Wrong methods.
    for method in [
        "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FOO", "get", "Get",
    ] {
        add(
            &format!("method {method}"),
            format!("{method} /api/v1/prices/cheapest?tlds=com HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes(),
            Problem(405, "method_not_allowed"),
        );
    }
    add(
        "POST with body",
        b"POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
            .to_vec(),
        Problem(405, "method_not_allowed"),
    );

    // Keys.
    add(
        "client no key",
        get("/api/v1/client/prices?tlds=com"),
        Problem(401, "missing_api_key"),
    );
    add("client empty key", b"GET /api/v1/client/prices?tlds=com HTTP/1.1\r\nHost: t\r\nX-API-Key:\r\nConnection: close\r\n\r\n".to_vec(), Problem(401, "missing_api_key"));
    add(
        "client wrong key",
        get_key("/api/v1/client/prices?tlds=com", "tsk_0000"),
        Problem(401, "invalid_api_key"),
    );
    add(
        "client 8 KiB key",
        get_key("/api/v1/client/prices?tlds=com", &"k".repeat(8000)),
        Problem(401, "invalid_api_key"),
    );
    let mut raw = b"GET /api/v1/client/prices?tlds=com HTTP/1.1\r\nHost: t\r\nX-API-Key: tsk_\xff\xfe\x80\r\nConnection: close\r\n\r\n".to_vec();
    add(
        "client non-UTF-8 key",
        std::mem::take(&mut raw),
        Problem(401, "invalid_api_key"),
    );
    add("client two keys", format!("GET /api/v1/client/prices?tlds=com HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nX-API-Key: {key}\r\nConnection: close\r\n\r\n").into_bytes(), Problem(401, "invalid_api_key"));

    // Sizes: our 414 and 431, then past hyper's own limits.
    add(
        "URL 9 KB",
        get(&format!("{public}?tlds=com&x={}", "a".repeat(9_000))),
        Problem(414, "request_too_large"),
    );
    add(
        "URL 60 KB",
        get(&format!("{public}?tlds=com&x={}", "a".repeat(60_000))),
        Problem(414, "request_too_large"),
    );
    add(
        "URL 200 KB",
        get(&format!("{public}?tlds={}", "a".repeat(200_000))),
        FourxxOrClose,
    );
    let mut big = String::from("GET /healthz HTTP/1.1\r\nHost: t\r\n");
    for i in 0..10 {
        big.push_str(&format!("X-Pad-{i}: {}\r\n", "v".repeat(2_000)));
    }
    big.push_str("Connection: close\r\n\r\n");
    add(
        "headers 20 KB",
        big.into_bytes(),
        Problem(431, "request_too_large"),
    );
    add(
        "one header 100 KB",
        format!(
            "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n",
            "v".repeat(100_000)
        )
        .into_bytes(),
        FourxxOrClose,
    );
    let mut flood = String::from("GET /healthz HTTP/1.1\r\nHost: t\r\n");
    for i in 0..10_000 {
        flood.push_str(&format!("X-F{i}: 1\r\n"));
    }
    flood.push_str("\r\n");
    add(
        "header flood 10000",
        flood.into_bytes(),
        Closing(431, "request_too_large"),
    );
    let mut many = String::from("GET /healthz HTTP/1.1\r\nHost: t\r\n");
    for i in 0..150 {
        many.push_str(&format!("X-M{i}: 1\r\n"));
    }
    many.push_str("\r\n");
    add(
        "150 headers",
        many.into_bytes(),
        Closing(431, "request_too_large"),
    );

    // Bytes that are not HTTP/1.1 at all.
    let tls_client_hello: Vec<u8> = [
        &[
            0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03,
        ][..],
        &[0x42; 32][..],
        &[
            0x00, 0x00, 0x20, 0xcc, 0xa8, 0xcc, 0xa9, 0xc0, 0x2f, 0xc0, 0x30,
        ][..],
        &[0u8; 120][..],
    ]
    .concat();
    add("TLS ClientHello", tls_client_hello, MALFORMED);
    add(
        "HTTP/2 preface",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
        MALFORMED,
    );
    add("empty lines", b"\r\n\r\n\r\n\r\n".to_vec(), FourxxOrClose);
    add("garbage", b"hello there\r\n\r\n".to_vec(), MALFORMED);
    add(
        "binary noise",
        (0u8..=255).cycle().take(4096).collect(),
        FourxxOrClose,
    );
    add("HTTP/0.9", b"GET /healthz\r\n\r\n".to_vec(), MALFORMED);
    let mut line = b"GET /".to_vec();
    line.extend(std::iter::repeat_n(b'a', 70_000));
    line.extend_from_slice(b" HTTP/1.1\r\nHost: t\r\n\r\n");
    add(
        "request line over hyper's 64 KiB buffer",
        line,
        Closing(414, "request_too_large"),
    );
    add(
        "HTTP/9.9",
        b"GET /healthz HTTP/9.9\r\nHost: t\r\n\r\n".to_vec(),
        MALFORMED,
    );
    add(
        "NUL in request line",
        b"GET /heal\0thz HTTP/1.1\r\nHost: t\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "control in path",
        b"GET /a\x01b HTTP/1.1\r\nHost: t\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "space in path",
        b"GET /a b HTTP/1.1\r\nHost: t\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "UTF-8 raw in path",
        "GET /api/v1/client/registrars/tld/рф HTTP/1.1\r\nHost: t\r\n\r\n"
            .as_bytes()
            .to_vec(),
        FourxxOrClose,
    );
    add(
        "header without colon",
        b"GET /healthz HTTP/1.1\r\nHost t\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "bad header name",
        b"GET /healthz HTTP/1.1\r\nHo st: t\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "NUL in header value",
        b"GET /healthz HTTP/1.1\r\nHost: t\0x\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "bad content-length",
        b"GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n".to_vec(),
        MALFORMED,
    );
    add(
        "negative content-length",
        b"GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "two content-lengths",
        b"GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
            .to_vec(),
        MALFORMED,
    );
    add(
        "bad chunk",
        b"POST /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "unknown transfer-encoding",
        b"GET /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "absolute-form unknown path",
        b"GET http://x/nope HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".to_vec(),
        Problem(404, "not_found"),
    );
    add(
        "asterisk form",
        b"OPTIONS * HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "CONNECT",
        b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n".to_vec(),
        FourxxOrClose,
    );
    add("upgrade h2c", b"GET /nope HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n".to_vec(), FourxxOrClose);
    add(
        "bare LF line endings",
        b"GET /nope HTTP/1.1\nHost: t\n\n".to_vec(),
        FourxxOrClose,
    );
    add(
        "half a request then close",
        b"GET /healthz HTTP/1.1\r\nHost:".to_vec(),
        FourxxOrClose,
    );
    domain_endpoints(key, &mut add);
    live_endpoints(key, &mut add);

    // The event endpoints: parameters are checked before the plan, so the test key
    // (whose plan has no events) still gets each parameter's 400.
    for path in ["/api/v1/client/events", "/api/v1/client/events/stream"] {
        for (name, q) in [
            ("after negative", "?after=-1"),
            ("after not a number", "?after=abc"),
            ("after with sign", "?after=%2B5"),
            ("after over u64", "?after=18446744073709551616"),
            ("after empty", "?after="),
            ("after twice", "?after=1&after=2"),
            ("limit zero", "?limit=0"),
            ("limit over max", "?limit=1001"),
            ("types unknown", "?types=price"),
            ("types empty", "?types="),
            ("types empty item", "?types=price.changed,"),
            ("tlds empty", "?tlds="),
            ("tlds malformed", "?tlds=a..b"),
            ("registrars empty", "?registrars="),
            ("registrars malformed", "?registrars=no%20way"),
            ("bad escape", "?types=%zz"),
        ] {
            add(
                &format!("{path} {name}"),
                get_key(&format!("{path}{q}"), key),
                BAD,
            );
        }
        add(
            &format!("{path} bad Last-Event-ID"),
            format!(
                "GET {path} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nLast-Event-ID: 1e3\r\nConnection: close\r\n\r\n"
            )
            .into_bytes(),
            BAD,
        );
        add(
            &format!("{path} without a key"),
            get(path),
            Problem(401, "missing_api_key"),
        );
        add(
            &format!("{path} on a plan without events"),
            get_key(path, key),
            Problem(403, "events_not_in_plan"),
        );
        add(
            &format!("{path} POST"),
            format!(
                "POST {path} HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            .into_bytes(),
            Problem(405, "method_not_allowed"),
        );
    }
    webhook_endpoints(key, &mut add);
    c
}

/// Malformed bodies, ids and methods of the webhook endpoints. Bodies are checked before
/// the plan, so the test key (whose plan has no webhooks) gets each body's own problem;
/// anything that passes the body is that plan's 403.
fn webhook_endpoints(key: &str, add: &mut impl FnMut(&str, Vec<u8>, Expect)) {
    const HOOKS: &str = "/api/v1/client/webhooks";
    const ONE: &str = "/api/v1/client/webhooks/wh_0123456789abcdef01234567";
    const JSON: Option<&str> = Some("application/json");
    const BODY: Expect = Problem(400, "invalid_body");
    let raw = |method: &str, path: &str, ct: Option<&str>, body: &[u8]| {
        let ct = ct
            .map(|t| format!("Content-Type: {t}\r\n"))
            .unwrap_or_default();
        let mut raw = format!(
            "{method} {path} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\n{ct}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        raw.extend_from_slice(body);
        raw
    };
    let big = format!("{{\"url\":\"https://a.example/{}\"}}", "a".repeat(20_000));
    for (name, ct, body, expect) in [
        ("bad JSON", JSON, b"{".to_vec(), BODY),
        ("a list", JSON, b"[]".to_vec(), BODY),
        ("empty body", JSON, Vec::new(), BODY),
        ("no url", JSON, b"{}".to_vec(), BODY),
        ("url null", JSON, br#"{"url":null}"#.to_vec(), BODY),
        ("url a number", JSON, br#"{"url":5}"#.to_vec(), BODY),
        (
            "unknown field",
            JSON,
            br#"{"url":"https://a.example","x":1}"#.to_vec(),
            BODY,
        ),
        (
            "tlds a string",
            JSON,
            br#"{"url":"https://a.example","tlds":"com"}"#.to_vec(),
            BODY,
        ),
        (
            "tlds malformed",
            JSON,
            br#"{"url":"https://a.example","tlds":["a..b"]}"#.to_vec(),
            BODY,
        ),
        (
            "registrars malformed",
            JSON,
            br#"{"url":"https://a.example","registrars":["a b"]}"#.to_vec(),
            BODY,
        ),
        (
            "types unknown",
            JSON,
            br#"{"url":"https://a.example","types":["price"]}"#.to_vec(),
            BODY,
        ),
        (
            "status on create",
            JSON,
            br#"{"url":"https://a.example","status":"paused"}"#.to_vec(),
            BODY,
        ),
        ("not UTF-8", JSON, b"{\"url\":\"\xff\"}".to_vec(), BODY),
        (
            "text/plain",
            Some("text/plain"),
            b"{}".to_vec(),
            Problem(415, "unsupported_media_type"),
        ),
        (
            "no content type",
            None,
            b"{}".to_vec(),
            Problem(415, "unsupported_media_type"),
        ),
        (
            "over 16 KiB",
            JSON,
            big.into_bytes(),
            Problem(413, "request_too_large"),
        ),
        (
            "well formed",
            JSON,
            br#"{"url":"https://a.example"}"#.to_vec(),
            Problem(403, "webhooks_not_in_plan"),
        ),
    ] {
        add(
            &format!("webhook POST {name}"),
            raw("POST", HOOKS, ct, &body),
            expect,
        );
    }
    for (name, body) in [
        ("empty object", b"{}".to_vec()),
        ("status disabled", br#"{"status":"disabled"}"#.to_vec()),
        ("status a number", br#"{"status":1}"#.to_vec()),
        ("description null", br#"{"description":null}"#.to_vec()),
    ] {
        add(
            &format!("webhook PATCH {name}"),
            raw("PATCH", ONE, JSON, &body),
            BODY,
        );
    }
    for (name, method, path, expect) in [
        (
            "empty id",
            "GET",
            format!("{HOOKS}//test"),
            Problem(404, "not_found"),
        ),
        (
            "trailing slash",
            "GET",
            format!("{HOOKS}/"),
            Problem(404, "not_found"),
        ),
        (
            "PUT",
            "PUT",
            ONE.to_owned(),
            Problem(405, "method_not_allowed"),
        ),
        (
            "GET test",
            "GET",
            format!("{ONE}/test"),
            Problem(405, "method_not_allowed"),
        ),
        (
            "DELETE rotate",
            "DELETE",
            format!("{ONE}/rotate-secret"),
            Problem(405, "method_not_allowed"),
        ),
        (
            "unknown action",
            "POST",
            format!("{ONE}/other"),
            Problem(404, "not_found"),
        ),
        (
            "bad id",
            "GET",
            format!("{HOOKS}/%zz"),
            Problem(403, "webhooks_not_in_plan"),
        ),
    ] {
        add(
            &format!("webhook {name}"),
            raw(method, &path, None, b""),
            expect,
        );
    }
    add(
        "webhooks without a key",
        format!("GET {HOOKS} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").into_bytes(),
        Problem(401, "missing_api_key"),
    );
}

/// A POST with a body (`content_type: None` sends no Content-Type).
fn post(path: &str, key: &str, content_type: Option<&str>, body: &[u8]) -> Vec<u8> {
    let ct = content_type
        .map(|t| format!("Content-Type: {t}\r\n"))
        .unwrap_or_default();
    let mut raw = format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\n{ct}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(body);
    raw
}

/// Malformed bodies and parameters of the audit, lookup and search endpoints: every one
/// a 4xx problem, never a 5xx (issue 13).
fn domain_endpoints(key: &str, add: &mut impl FnMut(&str, Vec<u8>, Expect)) {
    const AUDIT: &str = "/api/v1/client/portfolio/audit";
    const LOOKUP: &str = "/api/v1/client/domains/lookup";
    const SEARCH: &str = "/api/v1/client/domains/search";
    const JSON: Option<&str> = Some("application/json");
    const CSV: Option<&str> = Some("text/csv");
    const BODY: Expect = Problem(400, "invalid_body");
    let long = "a".repeat(100_000);
    for (name, ct, body, e) in [
        ("audit bad JSON", JSON, b"{".to_vec(), BODY),
        ("audit JSON array", JSON, b"[]".to_vec(), BODY),
        (
            "audit JSON string",
            JSON,
            br#""example.com""#.to_vec(),
            BODY,
        ),
        ("audit empty body", JSON, Vec::new(), BODY),
        ("audit blank body", JSON, b" \r\n ".to_vec(), BODY),
        (
            "audit no domains",
            JSON,
            br#"{"domains":[]}"#.to_vec(),
            BODY,
        ),
        (
            "audit domains null",
            JSON,
            br#"{"domains":null}"#.to_vec(),
            BODY,
        ),
        (
            "audit unknown field",
            JSON,
            br#"{"domains":[{"name":"a.com","renewal_price":1}]}"#.to_vec(),
            BODY,
        ),
        (
            "audit negative price",
            JSON,
            br#"{"domains":[{"name":"a.com","renew_price":-1}]}"#.to_vec(),
            BODY,
        ),
        (
            "audit price 3 decimals",
            JSON,
            br#"{"domains":[{"name":"a.com","renew_price":1.999}]}"#.to_vec(),
            BODY,
        ),
        (
            "audit huge price",
            JSON,
            br#"{"domains":[{"name":"a.com","renew_price":1e300}]}"#.to_vec(),
            BODY,
        ),
        (
            "audit bad date",
            JSON,
            br#"{"domains":[{"name":"a.com","expires":"2026-02-30"}]}"#.to_vec(),
            BODY,
        ),
        (
            "audit name a number",
            JSON,
            br#"{"domains":[42]}"#.to_vec(),
            BODY,
        ),
        (
            "audit raw NUL in JSON",
            JSON,
            b"{\"domains\":[\"a\0.com\"]}".to_vec(),
            BODY,
        ),
        ("audit NUL bytes only", JSON, vec![0; 64], BODY),
        (
            "audit invalid UTF-8 JSON",
            JSON,
            b"{\"domains\":[\"\xff.com\"]}".to_vec(),
            BODY,
        ),
        (
            "audit 100,000-character name JSON",
            JSON,
            format!(r#"{{"domains":["{long}"]}}"#).into_bytes(),
            BODY,
        ),
        (
            "audit deep nesting",
            JSON,
            format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)).into_bytes(),
            BODY,
        ),
        (
            "audit CSV without domain column",
            CSV,
            b"name,registrar\na.com,x\n".to_vec(),
            BODY,
        ),
        ("audit CSV header only", CSV, b"domain\n".to_vec(), BODY),
        ("audit CSV empty", CSV, Vec::new(), BODY),
        (
            "audit CSV bad price",
            CSV,
            b"domain,renew_price\na.com,ten\n".to_vec(),
            BODY,
        ),
        (
            "audit CSV bad date",
            CSV,
            b"domain,expires\na.com,tomorrow\n".to_vec(),
            BODY,
        ),
        (
            "audit CSV invalid UTF-8",
            CSV,
            b"domain\n\xff\xfe.com\n".to_vec(),
            BODY,
        ),
        (
            "audit CSV NUL byte",
            CSV,
            b"domain\na\0.com\n".to_vec(),
            BODY,
        ),
        (
            "audit CSV 100,000-character name",
            CSV,
            format!("domain\n{long}.com\n").into_bytes(),
            BODY,
        ),
        (
            "audit CSV unbalanced quote",
            CSV,
            b"domain\n\"a.com\n".to_vec(),
            Problem(200, ""),
        ),
        (
            "audit text/plain",
            Some("text/plain"),
            br#"{"domains":["a.com"]}"#.to_vec(),
            Problem(415, "unsupported_media_type"),
        ),
        (
            "audit no content type",
            None,
            br#"{"domains":["a.com"]}"#.to_vec(),
            Problem(415, "unsupported_media_type"),
        ),
        (
            "audit form",
            Some("application/x-www-form-urlencoded"),
            b"domains=a.com".to_vec(),
            Problem(415, "unsupported_media_type"),
        ),
        (
            "audit garbage content type",
            Some("x/\x01;;;"),
            b"x".to_vec(),
            FourxxOrClose,
        ),
        (
            "audit odd content type",
            Some(";;;"),
            b"x".to_vec(),
            Problem(415, "unsupported_media_type"),
        ),
        ("lookup bad JSON", JSON, b"{\"domains\":".to_vec(), BODY),
        (
            "lookup empty list",
            JSON,
            br#"{"domains":[]}"#.to_vec(),
            BODY,
        ),
        (
            "lookup not a list",
            JSON,
            br#"{"domains":"a.com"}"#.to_vec(),
            BODY,
        ),
        ("lookup empty body", JSON, Vec::new(), BODY),
        (
            "lookup 100,000-character name",
            JSON,
            format!(r#"{{"domains":["{long}"]}}"#).into_bytes(),
            BODY,
        ),
        (
            "lookup CSV",
            CSV,
            b"domain\na.com\n".to_vec(),
            Problem(415, "unsupported_media_type"),
        ),
    ] {
        let path = if name.starts_with("lookup") {
            LOOKUP
        } else {
            AUDIT
        };
        // Problem(200, "") marks the one case a CSV reader takes (the quote runs to the
        // end of the body: one field); it must be answered, not refused with a 5xx.
        let e = match e {
            Problem(200, _) => FourxxOrOk,
            e => e,
        };
        add(name, post(path, key, ct, &body), e);
    }
    let names: Vec<String> = (0..101).map(|i| format!("n{i}.com")).collect();
    add(
        "lookup 101 names",
        post(
            LOOKUP,
            key,
            JSON,
            serde_json::json!({ "domains": names })
                .to_string()
                .as_bytes(),
        ),
        Problem(400, "too_many_values"),
    );
    add(
        "lookup limit 0",
        post(
            &format!("{LOOKUP}?limit=0"),
            key,
            JSON,
            br#"{"domains":["a.com"]}"#,
        ),
        Problem(400, "invalid_parameter"),
    );
    // 10 MiB: refused from Content-Length before the body is read.
    let mut declared = format!(
        "POST {AUDIT} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: text/csv\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        10 << 20
    )
    .into_bytes();
    add(
        "audit 10 MiB declared",
        declared.clone(),
        Problem(413, "request_too_large"),
    );
    declared.extend(std::iter::repeat_n(b'a', 10 << 20));
    add(
        "audit 10 MiB body",
        declared,
        Problem(413, "request_too_large"),
    );
    // Chunked, no Content-Length: refused once the limit is passed.
    let mut chunked = format!(
        "POST {LOOKUP} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..40 {
        chunked.extend_from_slice(format!("{:x}\r\n", 8192).as_bytes());
        chunked.extend(std::iter::repeat_n(b' ', 8192));
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    add(
        "lookup chunked over 256 KiB",
        chunked,
        Problem(413, "request_too_large"),
    );
    add(
        "audit chunked bad framing",
        format!("POST {AUDIT} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: text/csv\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nabc\r\n").into_bytes(),
        FourxxOrClose,
    );
    // Methods.
    add(
        "GET audit",
        get_key(AUDIT, key),
        Problem(405, "method_not_allowed"),
    );
    add(
        "GET lookup",
        get_key(LOOKUP, key),
        Problem(405, "method_not_allowed"),
    );
    add(
        "POST search",
        post(&format!("{SEARCH}?q=a"), key, JSON, b"{}"),
        Problem(405, "method_not_allowed"),
    );
    add(
        "audit without key",
        post(AUDIT, "", JSON, br#"{"domains":["a.com"]}"#),
        Problem(401, "missing_api_key"),
    );
    // Search parameters (a refused search does not count against the day's searches).
    for (name, q, e) in [
        ("search q absent", "", Problem(400, "missing_parameter")),
        ("search q empty", "?q=", Problem(400, "missing_parameter")),
        (
            "search q blank",
            "?q=%20+",
            Problem(400, "missing_parameter"),
        ),
        (
            "search q underscore",
            "?q=a_b",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search q NUL",
            "?q=a%00b",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search q invalid UTF-8",
            "?q=%ff",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search q suffix only",
            "?q=co.uk",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search q label too long",
            &format!("?q={}", "a".repeat(64)),
            Problem(400, "invalid_parameter"),
        ),
        (
            "search q repeated",
            "?q=a&q=b",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search max_price negative",
            "?q=a&max_price=-1",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search max_price words",
            "?q=a&max_price=cheap",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search max_price empty",
            "?q=a&max_price=",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search types unknown",
            "?q=a&types=gtld",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search types empty item",
            "?q=a&types=generic,,",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search limit 0",
            "?q=a&limit=0",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search limit 101",
            "?q=a&limit=101",
            Problem(400, "invalid_parameter"),
        ),
        (
            "search q 9,000 characters",
            &format!("?q={}", &long[..9_000]),
            Problem(414, "request_too_large"),
        ),
        // Past hyper's own head buffer: its bare 414, or a close.
        (
            "search q 100,000 characters",
            &format!("?q={long}"),
            FourxxOrClose,
        ),
    ] {
        add(name, get_key(&format!("{SEARCH}{q}"), key), e);
    }
}

/// The live lookups' `{domain}` (issue 15): every malformed name is a 400 naming
/// `domain` before any plan or upstream is consulted; a well-formed one on this server,
/// which makes no live lookups, is 404 `live_unavailable` (or the plan's 403).
fn live_endpoints(key: &str, add: &mut impl FnMut(&str, Vec<u8>, Expect)) {
    const BAD: Expect = Problem(400, "invalid_parameter");
    let long = "a".repeat(300);
    for (name, domain, e) in [
        ("domain suffix only", "co.uk", BAD),
        ("domain one label", "com", BAD),
        ("domain empty label", "a..com", BAD),
        ("domain leading hyphen", "-a.com", BAD),
        ("domain bad escape", "a%zz.com", BAD),
        ("domain not UTF-8", "%ff.com", BAD),
        ("domain NUL", "a%00.com", BAD),
        ("domain space", "a%20b.com", BAD),
        ("domain underscore", "a_b.com", BAD),
        ("domain bidi override", "a%E2%80%AEb.com", BAD),
        ("domain over 253", &format!("{long}.com"), BAD),
        ("domain label over 63", &format!("{}.com", &long[..64]), BAD),
        ("domain URL", "https%3A%2F%2Fexample.com", BAD),
        ("domain with port", "example.com%3A443", BAD),
        ("domain IP address", "127.0.0.1", BAD),
        (
            "domain well formed",
            "example.com",
            Problem(404, "live_unavailable"),
        ),
        (
            "domain Unicode",
            "b%C3%BCcher.de",
            Problem(404, "live_unavailable"),
        ),
    ] {
        add(
            &format!("status: {name}"),
            get_key(&format!("/api/v1/client/domains/{domain}/status"), key),
            e,
        );
    }
    // The DNS lookup's query, checked before the plan (which has no DNS here).
    for (name, query) in [
        ("dns types PTR", "types=PTR"),
        ("dns types empty item", "types=A,,MX"),
        ("dns dnssec yes", "dnssec=yes"),
        ("dns dnssec empty", "dnssec="),
        ("dns dnssec twice", "dnssec=true&dnssec=true"),
    ] {
        add(
            name,
            get_key(
                &format!("/api/v1/client/domains/example.com/dns?{query}"),
                key,
            ),
            BAD,
        );
    }
    add(
        "dns well formed",
        get_key(
            "/api/v1/client/domains/example.com/dns?types=A&dnssec=true",
            key,
        ),
        Problem(403, "lookup_not_in_plan"),
    );
    const BULK: &str = "/api/v1/client/domains/availability";
    let many =
        serde_json::json!({ "domains": (0..101).map(|i| format!("n{i}.com")).collect::<Vec<_>>() })
            .to_string();
    for (name, ct, body, e) in [
        (
            "bulk bad JSON",
            Some("application/json"),
            "{".to_owned(),
            Problem(400, "invalid_body"),
        ),
        (
            "bulk no domains",
            Some("application/json"),
            r#"{"domains":[]}"#.to_owned(),
            Problem(400, "invalid_body"),
        ),
        (
            "bulk a number",
            Some("application/json"),
            r#"{"domains":[7]}"#.to_owned(),
            Problem(400, "invalid_body"),
        ),
        (
            "bulk unknown field",
            Some("application/json"),
            r#"{"domains":["a.com"],"x":1}"#.to_owned(),
            Problem(400, "invalid_body"),
        ),
        (
            "bulk 101 names",
            Some("application/json"),
            many,
            Problem(400, "too_many_values"),
        ),
        (
            "bulk as CSV",
            Some("text/csv"),
            "domain\na.com\n".to_owned(),
            Problem(415, "unsupported_media_type"),
        ),
        (
            "bulk no content type",
            None,
            r#"{"domains":["a.com"]}"#.to_owned(),
            Problem(415, "unsupported_media_type"),
        ),
        (
            "bulk well formed",
            Some("application/json"),
            r#"{"domains":["a.com","bad..name"]}"#.to_owned(),
            Problem(404, "live_unavailable"),
        ),
    ] {
        add(name, post(BULK, key, ct, body.as_bytes()), e);
    }
    add(
        "rdap not in the plan",
        get_key("/api/v1/client/domains/example.com/rdap", key),
        Problem(403, "lookup_not_in_plan"),
    );
    add(
        "rdap POST",
        format!(
            "POST /api/v1/client/domains/example.com/rdap HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into_bytes(),
        Problem(405, "method_not_allowed"),
    );
}

/// The options of a test that sends keyed requests: the fixture snapshot and keys in a
/// directory named after `tag` (which must outlive the server), every plan open to the
/// public TLDs; and the unlimited plan's key.
fn keyed_options(tag: &str) -> (TempDir, Options, String) {
    let dir = TempDir::new(tag);
    let snap = dir.fixture_snapshot("fixture.snap");
    let (keys_path, keys) = dir.keys();
    let mut opts = Options::new(&snap, &keys_path);
    opts.plans = TEST_PLANS_OPEN_PUBLIC;
    let key = keys["unlimited"].clone();
    (dir, opts, key)
}

#[test]
fn malformed_requests_get_a_4xx_or_a_clean_close() {
    let (_dir, opts, key) = keyed_options("malformed");
    let server = Server::start(opts);

    let catalogue = catalogue(&key);
    assert!(
        catalogue.len() >= 100,
        "catalogue has {} entries",
        catalogue.len()
    );
    let mut answered = 0;
    let mut closed = 0;
    for (i, (name, raw, expect)) in catalogue.iter().enumerate() {
        let mut conn = Conn::open(server.addr);
        // The server may answer and close before reading everything (hyper refuses an
        // over-long head early): a failed write is fine, the answer is what counts.
        let _ = std::io::Write::write_all(conn.stream.get_mut(), raw);
        let _ = conn.stream.get_mut().shutdown(std::net::Shutdown::Write);
        let response = conn
            .read_response(false)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        match (expect, response) {
            (Problem(status, code), Some(r)) => {
                if r.status != *status
                    || r.header("content-type") != Some("application/problem+json")
                {
                    panic!(
                        "{name}: expected {status} {code}, got {} {:?}",
                        r.status,
                        r.text()
                    );
                }
                r.assert_problem(*status, code);
                answered += 1;
            }
            (Problem(..), None) => panic!("{name}: closed without an answer"),
            (FourxxOrClose, Some(r)) => {
                assert!(
                    (400..500).contains(&r.status),
                    "{name}: status {}",
                    r.status
                );
                // Never a bare status: every 4xx carries its problem.
                let doc = r.json();
                assert_eq!(doc["status"], r.status, "{name}");
                assert_eq!(
                    r.header("content-type"),
                    Some("application/problem+json"),
                    "{name}"
                );
                answered += 1;
            }
            (FourxxOrClose, None) => closed += 1,
            (Closing(status, code), Some(r)) => {
                assert_eq!(r.status, *status, "{name}: {}", r.text());
                r.assert_problem(*status, code);
                assert_eq!(r.header("connection"), Some("close"), "{name}");
                assert!(conn.is_closed(), "{name}: the connection stays open");
                answered += 1;
            }
            (Closing(..), None) => panic!("{name}: closed without an answer"),
            (FourxxOrOk, Some(r)) => {
                assert!(
                    r.status == 200 || (400..500).contains(&r.status),
                    "{name}: status {}",
                    r.status
                );
                answered += 1;
            }
            (FourxxOrOk, None) => panic!("{name}: closed without an answer"),
        }
        // Healthy throughout.
        if i % 10 == 0 {
            assert_eq!(server.get("/healthz", None).status, 200, "after {name}");
        }
    }
    eprintln!(
        "catalogue: {} requests, {answered} answered with a 4xx, {closed} closed cleanly",
        catalogue.len()
    );
    // Healthy afterwards: real answers, and no 5xx was ever sent.
    assert_eq!(server.get("/healthz", None).status, 200);
    let r = server.get("/api/v1/prices/cheapest?tlds=com&limit=2", None);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["results"]["com"]["registrar_count"], 6);
    let metrics = server.get("/metrics", None).text();
    assert!(
        !metrics.contains("tldsnap_http_connection_errors_total{kind=\"parse\"} 0\n"),
        "hyper's own refusals are counted"
    );
    for line in metrics
        .lines()
        .filter(|l| l.starts_with("tldsnap_http_requests_total"))
    {
        assert!(!line.contains("status=\"5"), "a 5xx was sent: {line}");
    }
}

/// A head hyper cannot parse after good requests on the same connection: the good
/// ones are answered, then the bad one gets its problem in place of hyper's bare
/// status, and the connection closes. HEAD answers (a head and no body, like hyper's
/// bare status) pass untouched.
#[test]
fn an_unparsable_head_after_pipelined_requests_gets_its_problem() {
    let dir = TempDir::new("malformed-pipelined");
    let snap = dir.fixture_snapshot("fixture.snap");
    let (keys_path, _) = dir.keys();
    let server = Server::start(Options::new(&snap, &keys_path));
    for tail in [
        &b"hello there\r\n\r\n"[..],
        b"GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    ] {
        let mut conn = Conn::open(server.addr);
        let mut raw = Vec::new();
        raw.extend_from_slice(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
        raw.extend_from_slice(b"HEAD /nope HTTP/1.1\r\nHost: t\r\n\r\n");
        raw.extend_from_slice(b"HEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
        raw.extend_from_slice(tail);
        conn.write(&raw);
        let ok = conn.read_response(false).unwrap().unwrap();
        assert_eq!(
            (ok.status, ok.text()),
            (200, r#"{"status":"ok"}"#.to_owned())
        );
        let head = conn.read_response(true).unwrap().unwrap();
        assert_eq!(head.status, 404);
        assert_eq!(
            head.header("content-type"),
            Some("application/problem+json")
        );
        let head = conn.read_response(true).unwrap().unwrap();
        assert_eq!(head.status, 200);
        let bad = conn.read_response(false).unwrap().unwrap();
        let doc = bad.assert_problem(400, "malformed_request");
        assert!(
            doc["detail"]
                .as_str()
                .unwrap()
                .contains("not valid HTTP/1.1"),
            "{doc}"
        );
        assert!(bad.header("date").is_some());
        assert!(conn.is_closed());
    }
    assert_eq!(server.get("/healthz", None).status, 200);
}

#[test]
fn a_slow_head_is_cut_off_by_the_header_read_timeout() {
    let dir = TempDir::new("slowloris");
    let snap = dir.fixture_snapshot("fixture.snap");
    let (keys_path, _) = dir.keys();
    let mut opts = Options::new(&snap, &keys_path);
    opts.server = Config {
        idle_timeout: Duration::from_millis(200),
        ..Config::default()
    };
    let server = Server::start(opts);
    // Half a head, then silence: the connection watchdog closes the connection.
    let mut conn = Conn::open(server.addr);
    conn.write(b"GET /healthz HTTP/1.1\r\nHost: t\r\n");
    let answer = conn.read_response(false).unwrap();
    assert!(
        answer.as_ref().is_none_or(|r| r.status == 408),
        "{answer:?}"
    );
    // An idle keep-alive connection is closed the same way.
    let mut idle = Conn::open(server.addr);
    idle.get("/healthz", None);
    assert_eq!(idle.read_response(false).unwrap().unwrap().status, 200);
    assert!(idle.is_closed());
    // A connection that keeps asking, each request within the period, stays open over
    // several periods.
    let mut busy = Conn::open(server.addr);
    for _ in 0..8 {
        busy.get("/healthz", None);
        assert_eq!(busy.read_response(false).unwrap().unwrap().status, 200);
        std::thread::sleep(Duration::from_millis(100));
    }
    // Meanwhile others are served, and the cut-offs are counted.
    assert_eq!(server.get("/healthz", None).status, 200);
    let metrics = server.get("/metrics", None).text();
    let timeouts: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("tldsnap_http_connection_errors_total{kind=\"timeout\"} "))
        .and_then(|n| n.parse().ok())
        .expect("the timeout counter");
    assert!(timeouts >= 2, "{metrics}");
}

#[test]
fn a_body_that_stops_arriving_is_answered_408_and_its_connection_closed() {
    let (_dir, mut opts, key) = keyed_options("slowbody");
    // The connection watchdog would close these connections without an answer (after
    // its 10 s period); a 408 problem `request_timeout` is the body deadline's.
    opts.config.body_timeout = Duration::from_secs(1);
    let server = Server::start(opts);
    let head = |path: &str, content_type: &str, framing: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: {content_type}\r\n{framing}\r\n"
        )
    };
    let json = "application/json";
    let stalled = [
        (
            "audit, Content-Length",
            head(
                "/api/v1/client/portfolio/audit",
                json,
                "Content-Length: 100\r\n",
            ) + "{\"domains\":[",
            true,
        ),
        (
            "lookup, chunked",
            head(
                "/api/v1/client/domains/lookup",
                json,
                "Transfer-Encoding: chunked\r\n",
            ) + "5\r\n{\"dom",
            true,
        ),
        (
            "lookup, head only",
            head(
                "/api/v1/client/domains/lookup",
                json,
                "Content-Length: 30\r\n",
            ),
            true,
        ),
        (
            "webhook subscription",
            head("/api/v1/client/webhooks", json, "Content-Length: 60\r\n") + "{\"url\":",
            true,
        ),
        (
            "website sign-in form",
            head(
                "/signin",
                "application/x-www-form-urlencoded",
                "Content-Length: 40\r\n",
            ) + "csrf=",
            false,
        ),
    ];
    // All at once: each waits out the same second.
    let conns: Vec<_> = stalled
        .iter()
        .map(|(_, raw, _)| {
            let mut conn = Conn::open(server.addr);
            conn.write(raw.as_bytes());
            conn
        })
        .collect();
    for ((name, _, problem), mut conn) in stalled.into_iter().zip(conns) {
        let r = conn
            .read_response(false)
            .unwrap_or_else(|e| panic!("{name}: no answer: {e}"))
            .unwrap_or_else(|| panic!("{name}: closed without an answer"));
        assert_eq!(r.status, 408, "{name}: {}", r.text());
        if problem {
            let p = r.assert_problem(408, "request_timeout");
            assert_eq!(p["timeout_secs"], 1, "{name}: {p}");
            assert_eq!(r.header("connection"), Some("close"), "{name}");
        }
        assert!(conn.is_closed(), "{name}: the connection stays open");
    }
    // A body that comes in pieces, each well within the timeout in all, is read.
    let mut conn = Conn::open(server.addr);
    let body = "{\"domains\":[\"example.com\"]}";
    conn.write(
        head(
            "/api/v1/client/domains/lookup",
            json,
            &format!("Content-Length: {}\r\n", body.len()),
        )
        .as_bytes(),
    );
    let (first, rest) = body.split_at(10);
    conn.write(first.as_bytes());
    std::thread::sleep(Duration::from_millis(50));
    conn.write(rest.as_bytes());
    let r = conn.read_response(false).unwrap().unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    // The server serves others throughout.
    assert_eq!(server.get("/healthz", None).status, 200);
}

/// Reads `tldsnap_http_connection_errors_total{kind=KIND}` from `/metrics`.
fn connection_errors(server: &Server, kind: &str) -> u64 {
    let metrics = server.get("/metrics", None).text();
    let prefix = format!("tldsnap_http_connection_errors_total{{kind=\"{kind}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {kind} counter in {metrics}"))
}

#[test]
fn a_full_server_closes_the_longest_idle_connection_to_make_room() {
    let dir = TempDir::new("connlimit");
    let snap = dir.fixture_snapshot("fixture.snap");
    let (keys_path, _) = dir.keys();
    let mut opts = Options::new(&snap, &keys_path);
    opts.server = Config {
        max_connections: 2,
        ..Config::default()
    };
    let server = Server::start(opts);
    let mut first = Conn::open(server.addr);
    first.get("/healthz", None);
    assert_eq!(first.read_response(false).unwrap().unwrap().status, 200);
    // The clock of idle eviction runs in 100 ms steps: let the first fall behind.
    std::thread::sleep(Duration::from_millis(300));
    let mut second = Conn::open(server.addr);
    second.get("/healthz", None);
    assert_eq!(second.read_response(false).unwrap().unwrap().status, 200);
    // Both places are held by idle keep-alive connections: a third is served at once,
    // and the one idle the longest (the first) is closed to make room.
    let mut third = Conn::open(server.addr);
    third.get("/healthz", None);
    assert_eq!(third.read_response(false).unwrap().unwrap().status, 200);
    assert!(
        first.is_closed(),
        "the longest-idle connection was not closed"
    );
    // The second, idle for a shorter time, still works.
    second.get("/healthz", None);
    assert_eq!(second.read_response(false).unwrap().unwrap().status, 200);
    drop((second, third));
    let evicted = connection_errors(&server, "evicted");
    assert!(evicted >= 1, "evictions counted: {evicted}");
}

#[test]
fn a_full_server_makes_room_by_closing_a_connection_whose_body_never_came() {
    let (_dir, mut opts, key) = keyed_options("connlimit-body");
    opts.server = Config {
        max_connections: 2,
        ..Config::default()
    };
    // Neither the body deadline nor the watchdog (10 s) frees a place during the test.
    opts.config.body_timeout = Duration::from_secs(60);
    let server = Server::start(opts);
    // Both places held by requests whose handlers wait for bodies that never come.
    // hyper answers `100 Continue` when the handler starts reading the body: once it
    // has come on both, both wait for their bodies (before that, a connection whose
    // request the server has not read yet is idle to eviction anyway).
    let stalled: Vec<Conn> = (0..2)
        .map(|_| {
            let mut conn = Conn::open(server.addr);
            conn.write(
                format!(
                    "POST /api/v1/client/domains/lookup HTTP/1.1\r\nHost: t\r\nX-API-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: 30\r\nExpect: 100-continue\r\n\r\n"
                )
                .as_bytes(),
            );
            let interim = conn.read_response(true).unwrap().unwrap();
            assert_eq!(interim.status, 100);
            conn
        })
        .collect();
    // A new client is served, not told the server is busy: one of them made room.
    let mut third = Conn::open(server.addr);
    third.get("/healthz", None);
    let r = third.read_response(false).unwrap().unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let closed = stalled
        .into_iter()
        .filter_map(|mut c| {
            // The one left open is still waited on: give up on it after a second.
            let timeout = Some(Duration::from_secs(1));
            c.stream.get_ref().set_read_timeout(timeout).unwrap();
            c.read_response(false).ok()
        })
        .filter(Option::is_none)
        .count();
    assert!(closed >= 1, "no stalled connection was closed");
    drop(third);
    assert!(connection_errors(&server, "evicted") >= 1);
}

#[test]
fn one_address_holds_at_most_its_cap_and_is_told_why() {
    let dir = TempDir::new("peraddr");
    let snap = dir.fixture_snapshot("fixture.snap");
    let (keys_path, _) = dir.keys();
    let mut opts = Options::new(&snap, &keys_path);
    opts.server = Config {
        max_connections_per_address: 3,
        ..Config::default()
    };
    let server = Server::start(opts);
    let held: Vec<Conn> = (0..3).map(|_| Conn::open(server.addr)).collect();
    // Give the accept loop time to take all three (no answer marks their admission).
    std::thread::sleep(Duration::from_millis(200));
    let mut fourth = Conn::open(server.addr);
    fourth.get("/healthz", None);
    let refused = fourth.read_response(false).unwrap().expect("an answer");
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.header("connection"), Some("close"));
    assert_eq!(refused.json()["code"], "too_many_connections");
    assert!(fourth.is_closed());
    // Once one closes, the address may connect again.
    drop(held);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(server.get("/healthz", None).status, 200);
    assert!(connection_errors(&server, "refused_per_address") >= 1);
}

/// The parameters of the history, overview, catalogue and registrar endpoints and `at`
/// (issue 17): every malformed one is a 400 problem that names it; nothing is a 5xx.
#[test]
fn issue_17_parameters_are_named_when_malformed() {
    let (_dir, opts, key) = keyed_options("malformed-17");
    let server = Server::start(opts);
    let key = key.as_str();
    // A cursor of the right form for another snapshot.
    let stale = format!("c1{}{:08x}{:08x}", "0".repeat(16), 0, 1);
    // A real cursor of the catalogue, used on a registrar's list.
    let page = server.get("/api/v1/tlds?limit=1", None).json();
    let tlds_cursor = page["meta"]["next_cursor"].as_str().unwrap().to_owned();
    /// Target, key, status, code, the parameter the problem must name.
    type Case<'a> = (String, Option<&'a str>, u16, &'a str, Option<&'a str>);
    let cases: Vec<Case> = [
        ("/api/v1/prices/cheapest?tlds=com&at=2025-13-01", None, "at"),
        ("/api/v1/prices/cheapest?tlds=com&at=", None, "at"),
        ("/api/v1/prices/cheapest?tlds=com&at=2099-01-01", None, "at"),
        (
            "/api/v1/prices/cheapest?tlds=com&at=2025-01-01&at=2025-01-02",
            None,
            "at",
        ),
        ("/api/v1/prices?tlds=com&at=20250101", None, "at"),
        ("/v1/prices?tlds=com&at=%ff", None, "at"),
        (
            "/api/v1/client/prices/cheapest?tlds=com&at=x",
            Some(key),
            "at",
        ),
        (
            "/api/v1/client/prices?tlds=com&at=2025-02-29",
            Some(key),
            "at",
        ),
        ("/api/v1/history/tld/com?from=x", None, "from"),
        ("/api/v1/history/tld/com?to=2025-02-30", None, "to"),
        (
            "/api/v1/history/tld/com?from=2025-02-01&to=2025-01-01",
            None,
            "from",
        ),
        (
            "/api/v1/history/tld/com?from=2025-01-01&from=2025-01-01",
            None,
            "from",
        ),
        (
            "/api/v1/history/tld/com?registrars=a,,b",
            None,
            "registrars",
        ),
        ("/api/v1/history/tld/a..b", None, "tld"),
        ("/api/v1/client/history/tld/%ff", Some(key), "tld"),
        ("/api/v1/overview/tld/%zz", None, "tld"),
        ("/api/v1/client/overview/tld/-com", Some(key), "tld"),
        ("/api/v1/tlds?q=", None, "q"),
        ("/api/v1/tlds?q=a%20b", None, "q"),
        ("/api/v1/tlds?q=%ff", None, "q"),
        ("/api/v1/tlds?type=cc", None, "type"),
        ("/api/v1/tlds?sort=price", None, "sort"),
        ("/api/v1/tlds?sort=name&sort=cheapest", None, "sort"),
        ("/api/v1/tlds?limit=0", None, "limit"),
        ("/api/v1/tlds?limit=501", None, "limit"),
        ("/api/v1/client/tlds?limit=abc", Some(key), "limit"),
        ("/api/v1/tlds?cursor=zzz", None, "cursor"),
        ("/api/v1/tlds?cursor=", None, "cursor"),
        ("/api/v1/registrars/-x", None, "key"),
        ("/api/v1/registrars/%ff", None, "key"),
        ("/api/v1/registrars/alpha?limit=501", None, "limit"),
        ("/api/v1/registrars/alpha?cursor=c1", None, "cursor"),
    ]
    .into_iter()
    .map(|(t, k, p)| (t.to_owned(), k, 400, "invalid_parameter", Some(p)))
    .chain([
        (
            format!("/api/v1/tlds?cursor={stale}"),
            None,
            400,
            "invalid_parameter",
            Some("cursor"),
        ),
        (
            format!("/api/v1/tlds?sort=cheapest&cursor={tlds_cursor}"),
            None,
            400,
            "invalid_parameter",
            Some("cursor"),
        ),
        (
            format!("/api/v1/registrars/alpha?cursor={tlds_cursor}"),
            None,
            400,
            "invalid_parameter",
            Some("cursor"),
        ),
        (
            "/api/v1/overview/tld/no-such-tld".to_owned(),
            None,
            404,
            "unknown_tld",
            None,
        ),
        (
            "/api/v1/client/history/tld/no-such-tld".to_owned(),
            Some(key),
            404,
            "unknown_tld",
            None,
        ),
        (
            "/api/v1/registrars/nobody".to_owned(),
            None,
            404,
            "unknown_registrar",
            None,
        ),
        (
            "/api/v1/client/history/tld/com".to_owned(),
            None,
            401,
            "missing_api_key",
            None,
        ),
        (
            "/api/v1/client/overview/tld/com".to_owned(),
            None,
            401,
            "missing_api_key",
            None,
        ),
        (
            "/api/v1/client/tlds".to_owned(),
            None,
            401,
            "missing_api_key",
            None,
        ),
        (
            "/api/v1/history/tld/museum".to_owned(),
            None,
            403,
            "tld_not_in_plan",
            None,
        ),
    ])
    .collect();
    for (target, key, status, code, parameter) in &cases {
        let r = server.get(target, *key);
        let doc = r.assert_problem(*status, code);
        assert_eq!(
            doc["parameter"].as_str(),
            *parameter,
            "{target}: {}",
            r.text()
        );
    }
    // Still healthy, and the real answers still come.
    assert_eq!(server.get("/healthz", None).status, 200);
    assert_eq!(server.get("/api/v1/tlds?limit=1", None).status, 200);
}
