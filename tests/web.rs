//! The website over real HTTP (issue 12): pages from the same snapshot as the API,
//! canonical redirects, the 404 page, escaping of feed values, members and sessions,
//! CSRF, ETag/304, compression, static files, and the page-view rate limit.
//! The browser tests (tests/browser/) check the same pages in Chromium.

mod http_support;

use std::io::Read;

use http_support::{
    Options, Response, Server, TEST_PLANS_OPEN_PUBLIC, TempDir, cookie_pair, form_value,
    raw_request, set_cookie,
};
use tldsnap::access::keys::KeysFile;

struct Fixture {
    _dir: TempDir,
    server: Server,
    keys: std::collections::BTreeMap<&'static str, String>,
    keys_path: std::path::PathBuf,
}

fn fixture(plans: &'static str) -> Fixture {
    let dir = TempDir::new("web");
    let snapshot = dir.fixture_snapshot("snap.bin");
    let (keys_path, keys) = dir.keys();
    let mut opts = Options::new(&snapshot, &keys_path);
    opts.plans = plans;
    let server = Server::start(opts);
    Fixture {
        _dir: dir,
        server,
        keys,
        keys_path,
    }
}

/// One request on a fresh connection: `method target`, extra header lines, a body.
fn request(
    s: &Server,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response {
    s.send(&raw_request(method, target, headers, body))
        .expect("a response")
}

fn page(s: &Server, target: &str, cookie: Option<&str>) -> Response {
    let mut h = vec![("Accept", "text/html")];
    if let Some(c) = cookie {
        h.push(("Cookie", c));
    }
    request(s, "GET", target, &h, "")
}

fn html(r: &Response) -> String {
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    r.text()
}

fn dollars(v: &serde_json::Value) -> String {
    let cents = (v.as_f64().unwrap() * 100.0).round() as u64;
    format!("${}.{:02}", cents / 100, cents % 100)
}

/// Signs in with `key`; returns the `Cookie` header value (session and CSRF cookies).
fn sign_in(s: &Server, key: &str) -> String {
    let form = page(s, "/signin", None);
    assert_eq!(form.status, 200);
    // The form says how to get a key.
    assert!(html(&form).contains("tldsnap keys add --keys FILE --plan PLAN"));
    assert!(html(&form).contains("tldsnap serve --keys FILE"));
    let csrf_cookie = cookie_pair(set_cookie(&form, "tldsnap_csrf").expect("a CSRF cookie"));
    let token = form_value(&html(&form), "csrf");
    let r = request(
        s,
        "POST",
        "/signin",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Cookie", &csrf_cookie),
            ("Origin", "http://test"),
        ],
        &format!("csrf={token}&key={key}&next=%2Ftld%2Fmuseum"),
    );
    assert_eq!(r.status, 303, "{}", r.text());
    assert_eq!(r.header("location"), Some("/tld/museum"));
    let session = set_cookie(&r, "tldsnap_session").expect("a session cookie");
    assert!(session.contains("; HttpOnly"), "{session}");
    assert!(session.contains("; SameSite=Lax"), "{session}");
    assert!(!session.contains("Secure"), "plain HTTP: {session}");
    assert!(!session.contains(key), "the cookie holds no key");
    format!("{}; {csrf_cookie}", cookie_pair(session))
}

#[test]
fn every_page_kind_renders_the_api_numbers() {
    let f = fixture(TEST_PLANS_OPEN_PUBLIC);
    let s = &f.server;
    for target in [
        "/",
        "/tld/com",
        "/tld/museum",
        "/tlds",
        "/registrars",
        "/registrars/alpha",
        "/signin",
    ] {
        let r = page(s, target, None);
        assert_eq!(r.status, 200, "{target}");
        let body = html(&r);
        assert_eq!(body.matches("<h1").count(), 1, "{target}: one h1");
        assert!(
            body.starts_with("<!DOCTYPE html><html lang=\"en\">"),
            "{target}"
        );
        assert!(r.header("content-security-policy").is_some());
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(r.header("referrer-policy"), Some("same-origin"));
        assert_eq!(r.header("vary"), Some("Cookie, Accept-Encoding"));
        if target != "/signin" {
            // The cacheable pages: revalidated, tagged by snapshot and plan.
            assert_eq!(
                r.header("cache-control"),
                Some("private, no-cache"),
                "{target}"
            );
            assert!(
                r.header("etag").is_some_and(|t| t.starts_with("W/\"")),
                "{target}"
            );
            assert!(
                r.header("last-modified")
                    .is_some_and(|d| d.ends_with(" GMT")),
                "{target}"
            );
        }
        assert!(
            !body.contains("src=\"http"),
            "{target}: nothing from another host"
        );
        assert!(!body.contains("stylesheet\" href=\"http"), "{target}");
    }
    // The home page: the free TLDs' cheapest price, as the public API says.
    let home = html(&page(s, "/", None));
    let api = s
        .get("/api/v1/prices/cheapest?tlds=com&limit=1", None)
        .json();
    let first = &api["results"]["com"]["cheapest_register"][0];
    assert!(home.contains(&dollars(&first["register_price"])));
    assert!(
        home.contains("action=\"/tlds\""),
        "the search submits to the catalogue"
    );
    // The counts: of the fixture's eight TLDs, seven have a registration price and
    // `aero` renewal prices only.
    assert!(
        home.contains("<strong>7</strong> TLDs on sale from <strong>7</strong> registrars (and renewal prices only of 1 more)"),
        "{home}"
    );
    // The TLD page: every seller with its prices and 5-year cost, as the API says.
    let com = html(&page(s, "/tld/com", None));
    let all = s
        .get("/api/v1/prices/cheapest?tlds=com&limit=100", None)
        .json();
    for e in all["results"]["com"]["cheapest_register"]
        .as_array()
        .unwrap()
    {
        let name = e["registrar_name"]
            .as_str()
            .unwrap()
            .replace('"', "&quot;")
            .replace('&', "&amp;");
        let name = name.replace("&amp;quot;", "&quot;");
        assert!(com.contains(&name), "{name}");
        assert!(com.contains(&dollars(&e["total_cost_5_year"])), "{e}");
    }
    // A visitor sees com's 5 cheapest of 6 sellers: the sixth is counted, not named,
    // and the averages, which would give its prices, are hidden.
    assert_eq!(
        all["results"]["com"]["cheapest_register"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert!(com.contains("1 more registrar sells .com"), "{com}");
    let overview = s.get("/api/v1/overview/tld/com", None).json();
    assert!(overview["avg_prices"]["renew"].is_null(), "{overview}");
    assert_eq!(overview["members_only"], serde_json::json!(["avg_prices"]));
    let net = html(&page(s, "/tld/net", None));
    let overview = s.get("/api/v1/overview/tld/net", None).json();
    assert!(net.contains(&dollars(&overview["avg_prices"]["renew"])));
    // The chart: one line per registrar with a registration price in its history.
    let history = s.get("/api/v1/history/tld/com", None).json();
    let with_price = history["history"]
        .as_object()
        .unwrap()
        .values()
        .filter(|h| {
            h["changes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| !c["register_price"].is_null())
        })
        .count();
    assert!(with_price > 0);
    assert_eq!(
        com.matches("<svg class=\"chart chart-wide\"").count(),
        1,
        "one wide drawing"
    );
    assert_eq!(
        com.matches("class=\"series\"").count(),
        2 * with_price,
        "two drawings"
    );
    assert!(com.contains("<details>"), "the table alternative");
    // Registrars and one registrar.
    let regs = html(&page(s, "/registrars", None));
    for r in s.get("/api/v1/registrars", None).json()["registrars"]
        .as_array()
        .unwrap()
    {
        assert!(regs.contains(&format!(
            "href=\"/registrars/{}\"",
            r["key"].as_str().unwrap()
        )));
    }
    let alpha = html(&page(s, "/registrars/alpha", None));
    assert!(alpha.contains("Alpha Names"));
    assert!(alpha.contains("$9.99"), "com is free: its price is shown");
    // The API keeps its JSON.
    let json = s.get("/api/v1/registrars/alpha", None);
    assert_eq!(json.header("content-type"), Some("application/json"));
}

#[test]
fn names_redirect_to_their_canonical_page_and_unknown_ones_suggest_close_names() {
    let f = fixture(TEST_PLANS_OPEN_PUBLIC);
    let s = &f.server;
    for (from, to) in [
        ("/tld/.com", "/tld/com"),
        ("/tld/COM", "/tld/com"),
        ("/tld/.Co.UK", "/tld/co.uk"),
        ("/tld/%D1%80%D1%84", "/tld/xn--p1ai"),
        ("/registrars/ALPHA", "/registrars/alpha"),
    ] {
        let r = page(s, from, None);
        assert_eq!(r.status, 301, "{from}");
        assert_eq!(r.header("location"), Some(to), "{from}");
    }
    let r = page(s, "/tld/cmo", None);
    assert_eq!(r.status, 404);
    let body = html(&r);
    assert!(body.contains("No TLD .cmo"));
    assert!(
        body.contains("<ul class=\"suggest\"><li><a href=\"/tld/com\">"),
        "com first: {body}"
    );
    // An unknown path: HTML for a browser, the problem document for an API client.
    let r = page(s, "/com", None);
    assert_eq!(r.status, 404);
    assert!(html(&r).contains("href=\"/tld/com\""));
    s.get("/nope", None).assert_problem(404, "not_found");
    let r = page(s, "/registrars/nobody", None);
    assert_eq!(r.status, 404);
    html(&r);
    // Page routes answer GET and HEAD (and POST where there is a form) only.
    let r = request(s, "POST", "/tld/com", &[], "");
    assert_eq!(r.status, 405);
}

#[test]
fn every_value_from_a_feed_is_escaped() {
    let dir = TempDir::new("web-xss");
    let evil = r#"<script>alert("x")</script> & 'q'"#;
    let snapshot = dir.edited_source_snapshot("evil.bin", |file, text| match file {
        "registrars.csv" => text.replace(
            "alpha,Alpha Names,",
            &format!("alpha,\"{}\",", evil.replace('"', "\"\"")),
        ),
        "tlds.csv" => text.replace(
            "VeriSign Global Registry Services",
            "\"<script>alert(1)</script> \"\"Veri\"\" & Sign\"",
        ),
        _ => text.to_owned(),
    });
    let (keys_path, _) = dir.keys();
    let mut opts = Options::new(&snapshot, &keys_path);
    opts.plans = TEST_PLANS_OPEN_PUBLIC;
    let s = Server::start(opts);
    // The data really holds the markup (the API returns it as a JSON string).
    let api = s.get("/api/v1/registrars/alpha", None).json();
    assert_eq!(api["name"], evil);
    for target in [
        "/",
        "/tld/com",
        "/tld/net",
        "/tlds?q=co",
        "/registrars",
        "/registrars/alpha",
        "/tld/%3Cscript%3E",
        "/tlds?q=%3Cscript%3E",
        "/tlds?type=%22%3E%3Cscript%3E",
        "/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "/signin?next=%22%3E%3Cscript%3E",
    ] {
        let r = page(&s, target, None);
        let body = r.text();
        // The only scripts are the site's own, loaded by name.
        assert_eq!(body.matches("<script").count(), 1, "{target}: {body}");
        assert!(!body.contains("alert(\"x\")"), "{target}");
        assert!(!body.contains("alert(1)</"), "{target}");
        if target == "/tld/com" || target == "/registrars/alpha" {
            assert!(
                body.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; 'q'"),
                "{target}: {body}"
            );
        }
    }
    let com = page(&s, "/tld/com", None).text();
    assert!(com.contains("&lt;script&gt;alert(1)&lt;/script&gt; &quot;Veri&quot; &amp; Sign"));
}

#[test]
fn members_see_member_prices_visitors_see_a_placeholder() {
    let f = fixture(TEST_PLANS_OPEN_PUBLIC);
    let s = &f.server;
    let pro = f.keys["pro"].as_str();
    let museum = s
        .get("/api/v1/client/overview/tld/museum", Some(pro))
        .json();
    let cheapest = dollars(&museum["cheapest_register"]["price"]);
    let visitor = html(&page(s, "/tld/museum", None));
    assert!(visitor.contains("class=\"members\""));
    // No seller is named, no price shown: the two sellers are counted.
    assert!(!visitor.contains("id=\"prices\""), "no table: {visitor}");
    for key in ["bravo", "golf"] {
        assert!(
            !visitor.contains(&format!("href=\"/registrars/{key}\"")),
            "{key} named"
        );
    }
    assert!(visitor.contains("The 2 registrars of .museum"));
    assert!(!visitor.contains("$1,234.56"));
    // Counts and averages are for everyone, but the transfer average: one seller
    // quotes a transfer price, which the average would be.
    assert!(visitor.contains(&dollars(&museum["avg_prices"]["register"])));
    assert!(!visitor.contains(&dollars(&museum["avg_prices"]["transfer"])));
    assert!(visitor.contains("href=\"/signin?next=/tld/museum\""));
    // Free TLDs are open, with their 5 cheapest sellers.
    let net = html(&page(s, "/tld/net", None));
    assert!(!net.contains("class=\"members\""), "{net}");

    let cookies = sign_in(s, pro);
    let member = html(&page(s, "/tld/museum", Some(&cookies)));
    assert!(member.contains(&cheapest), "{member}");
    assert!(member.contains("$1,234.56"));
    assert!(!member.contains("class=\"members\""));
    assert!(member.contains("Account (pro)"));
    // The catalogue and the registrar page follow the same rule.
    let golf_visitor = html(&page(s, "/registrars/golf", None));
    assert!(!golf_visitor.contains("$1,234.56"));
    assert!(html(&page(s, "/registrars/golf", Some(&cookies))).contains("$1,234.56"));
    // A free plan's member sees the free TLDs only.
    let free = sign_in(s, &f.keys["free"]);
    let body = html(&page(s, "/tld/museum", Some(&free)));
    assert!(!body.contains("$1,234.56"));
    assert!(body.contains("Account (free)"));
    // Page views spend no credits.
    let (id, _) = s.state.access.identify(pro.as_bytes()).unwrap();
    assert_eq!(
        s.state.access.used_this_month(&id),
        1,
        "only the API call above"
    );
}

#[test]
fn sign_out_and_revoked_keys_end_the_session() {
    let f = fixture(TEST_PLANS_OPEN_PUBLIC);
    let s = &f.server;
    let pro = f.keys["pro"].as_str();
    let cookies = sign_in(s, pro);
    let account = page(s, "/signin", Some(&cookies));
    let body = html(&account);
    assert!(body.contains("Sign out"));
    let token = form_value(&body, "csrf");
    let out = request(
        s,
        "POST",
        "/signout",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Cookie", &cookies),
        ],
        &format!("csrf={token}"),
    );
    assert_eq!(out.status, 303);
    let cleared = set_cookie(&out, "tldsnap_session").unwrap();
    assert!(cleared.starts_with("tldsnap_session=;") && cleared.contains("Max-Age=0"));

    // A revoked key: the very next page view is a visitor's, and the cookie is cleared.
    let cookies = sign_in(s, pro);
    assert!(html(&page(s, "/tld/museum", Some(&cookies))).contains("$1,234.56"));
    let (id, _) = s.state.access.identify(pro.as_bytes()).unwrap();
    let mut file = KeysFile::load(&f.keys_path, None).unwrap();
    file.revoke(&id).unwrap();
    file.save(&f.keys_path).unwrap();
    s.state.access.reload_keys().unwrap();
    let r = page(s, "/tld/museum", Some(&cookies));
    assert!(!html(&r).contains("$1,234.56"));
    assert!(
        set_cookie(&r, "tldsnap_session")
            .unwrap()
            .contains("Max-Age=0")
    );
    // A forged or expired cookie is no session either.
    let forged = cookies.replacen("tldsnap_session=v2.", "tldsnap_session=v2.00", 1);
    assert_ne!(forged, cookies);
    assert!(!html(&page(s, "/tld/museum", Some(&forged))).contains("Account ("));
    // A client's own X-Forwarded-Proto is not believed: plain cookies.
    let over_https = [("Accept", "text/html"), ("X-Forwarded-Proto", "https")];
    let r = request(s, "GET", "/signin", &over_https, "");
    assert!(!set_cookie(&r, "tldsnap_csrf").unwrap().contains("Secure"));
    // Behind a trusted TLS proxy the cookies are Secure, and __Host- cookies.
    let dir = TempDir::new("web-proxy");
    let snapshot = dir.fixture_snapshot("snap.bin");
    let (keys_path, _) = dir.keys();
    let mut opts = Options::new(&snapshot, &keys_path);
    opts.config.trust_proxy = true;
    let s = Server::start(opts);
    let r = request(&s, "GET", "/signin", &over_https, "");
    assert!(
        set_cookie(&r, "__Host-tldsnap_csrf")
            .unwrap()
            .ends_with("; Secure")
    );
}

#[test]
fn forged_form_posts_are_refused() {
    let f = fixture(TEST_PLANS_OPEN_PUBLIC);
    let s = &f.server;
    let pro = f.keys["pro"].as_str();
    let form = page(s, "/signin", None);
    let csrf_cookie = cookie_pair(set_cookie(&form, "tldsnap_csrf").unwrap());
    let token = form_value(&html(&form), "csrf");
    let other = page(s, "/signin", None);
    let other_cookie = cookie_pair(set_cookie(&other, "tldsnap_csrf").unwrap());
    let post = |headers: &[(&str, &str)], body: &str| {
        let mut h = vec![("Content-Type", "application/x-www-form-urlencoded")];
        h.extend_from_slice(headers);
        request(s, "POST", "/signin", &h, body)
    };
    let good = format!("csrf={token}&key={pro}");
    for (why, r) in [
        (
            "no token",
            post(&[("Cookie", &csrf_cookie)], &format!("key={pro}")),
        ),
        ("no cookie", post(&[], &good)),
        (
            "another visitor's cookie",
            post(&[("Cookie", &other_cookie)], &good),
        ),
        (
            "another site",
            post(
                &[("Cookie", &csrf_cookie), ("Origin", "http://evil.example")],
                &good,
            ),
        ),
        (
            "a cross-site fetch",
            post(
                &[("Cookie", &csrf_cookie), ("Sec-Fetch-Site", "cross-site")],
                &good,
            ),
        ),
        (
            "an opaque origin",
            post(&[("Cookie", &csrf_cookie), ("Origin", "null")], &good),
        ),
    ] {
        assert_eq!(r.status, 403, "{why}");
        assert!(set_cookie(&r, "tldsnap_session").is_none(), "{why}");
        assert!(html(&r).contains("Form refused"), "{why}");
    }
    // A wrong key with a good token: refused, no session.
    let r = post(
        &[("Cookie", &csrf_cookie)],
        &format!("csrf={token}&key=tsk_nope"),
    );
    assert_eq!(r.status, 403);
    assert!(html(&r).contains("not valid"));
    assert!(set_cookie(&r, "tldsnap_session").is_none());
    // Not a form.
    let r = request(
        s,
        "POST",
        "/signin",
        &[("Content-Type", "application/json")],
        "{}",
    );
    assert_eq!(r.status, 415);
    // Sign-out needs the session's own token.
    let cookies = sign_in(s, pro);
    let r = request(
        s,
        "POST",
        "/signout",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Cookie", &cookies),
        ],
        &format!("csrf={token}"),
    );
    assert_eq!(r.status, 403, "the pre-session token does not sign out");
    assert!(html(&page(s, "/tld/museum", Some(&cookies))).contains("$1,234.56"));
}

#[test]
fn etags_answer_304_and_pages_are_compressed_on_request() {
    let f = fixture(TEST_PLANS_OPEN_PUBLIC);
    let s = &f.server;
    let first = page(s, "/tld/com", None);
    let etag = first.header("etag").unwrap().to_owned();
    assert!(etag.starts_with("W/\""));
    let last_modified = first.header("last-modified").unwrap().to_owned();
    assert!(last_modified.ends_with(" GMT"));
    let again = request(s, "GET", "/tld/com", &[("If-None-Match", &etag)], "");
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    let since = request(
        s,
        "GET",
        "/tld/com",
        &[("If-Modified-Since", &last_modified)],
        "",
    );
    assert_eq!(since.status, 304);
    // Another page of the same viewer and snapshot shares the tag but not the cache entry;
    // a member's tag differs.
    let cookies = sign_in(s, &f.keys["pro"]);
    let member = page(s, "/tld/com", Some(&cookies));
    assert_ne!(member.header("etag").unwrap(), etag);
    // And a visitor after the member has the visitor's again (the headers a thread keeps
    // are the last viewer's: issue 20).
    let visitor = page(s, "/tld/com", None);
    assert_eq!(visitor.header("etag"), Some(etag.as_str()));
    assert_eq!(
        visitor.header("last-modified"),
        Some(last_modified.as_str())
    );
    let r = request(
        s,
        "GET",
        "/tld/com",
        &[("If-None-Match", &etag), ("Cookie", &cookies)],
        "",
    );
    assert_eq!(r.status, 200, "a member's page is not the visitor's");
    // gzip when accepted, the same HTML inside.
    let gz = request(s, "GET", "/tld/com", &[("Accept-Encoding", "gzip, br")], "");
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(gz.header("vary"), Some("Cookie, Accept-Encoding"));
    assert!(gz.body.len() * 3 < first.body.len());
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&gz.body[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(plain, first.body);
    let identity = request(s, "GET", "/tld/com", &[("Accept-Encoding", "gzip;q=0")], "");
    assert_eq!(identity.header("content-encoding"), None);
}

#[test]
fn static_files_have_hashed_names_and_long_cache_headers() {
    let f = fixture(TEST_PLANS_OPEN_PUBLIC);
    let s = &f.server;
    let home = html(&page(s, "/", None));
    for (ext, ty) in [
        ("css", "text/css"),
        ("js", "text/javascript"),
        ("svg", "image/svg+xml"),
    ] {
        let at = home.find(&format!(".{ext}\"")).unwrap();
        let start = home[..at].rfind("\"/static/").unwrap() + 1;
        let path = &home[start..at + ext.len() + 1];
        let r = s.get(path, None);
        assert_eq!(r.status, 200, "{path}");
        assert!(r.header("content-type").unwrap().starts_with(ty));
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=31536000, immutable")
        );
        let stale = path.replacen(".", ".0", 1);
        assert_eq!(s.get(&stale, None).status, 404, "{stale}");
    }
}

#[test]
fn page_views_are_rate_limited_per_address() {
    // The default public plan: 10 a second, bursts of 20, per address.
    let f = fixture(http_support::TEST_PLANS);
    let s = &f.server;
    let statuses: Vec<u16> = (0..30).map(|_| page(s, "/tld/com", None).status).collect();
    assert!(statuses[..20].iter().all(|&c| c == 200), "{statuses:?}");
    let r = page(s, "/tld/com", None);
    assert_eq!(r.status, 429);
    assert!(r.header("retry-after").is_some());
    assert!(html(&r).contains("Too many requests"));
    // The time passes; pages come back.
    s.clock.advance(5_000);
    assert_eq!(page(s, "/tld/com", None).status, 200);
}

#[test]
fn malformed_page_requests_get_a_page_not_a_crash() {
    let f = fixture(TEST_PLANS_OPEN_PUBLIC);
    let s = &f.server;
    for (target, status) in [
        ("/tld/%ff", 404),
        ("/tld/%00", 404),
        ("/tld/-com", 404),
        ("/tld/a..b", 404),
        ("/tlds?q=%ff", 400),
        ("/tlds?q=a%20b", 400),
        ("/tlds?limit=0", 400),
        ("/tlds?sort=price", 400),
        ("/tlds?cursor=zzz", 400),
        ("/tlds?q=co&q=com", 400),
        ("/registrars/%ff", 404),
        ("/registrars/alpha?cursor=c1", 400),
    ] {
        let r = page(s, target, None);
        assert_eq!(r.status, status, "{target}: {}", r.text());
        html(&r);
    }
    assert_eq!(
        page(s, "/static/site.css", None).status,
        404,
        "no unhashed name"
    );
    // An empty filter is no filter (a form sends every field).
    assert_eq!(
        page(s, "/tlds?q=&type=&sort=&limit=&cursor=", None).status,
        200
    );
    // A form body over 4 KiB is refused before it is read.
    let big = "k=".to_owned() + &"x".repeat(5000);
    let r = request(
        s,
        "POST",
        "/signin",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &big,
    );
    assert_eq!(r.status, 413);
    // HEAD: the headers of GET, no body.
    let mut conn = http_support::Conn::open(s.addr);
    conn.write(b"HEAD /tld/com HTTP/1.1\r\nHost: t\r\n\r\n");
    let r = conn.read_response(true).unwrap().unwrap();
    assert_eq!(r.status, 200);
    assert!(r.header("etag").is_some());
}

#[test]
fn pages_rendered_ahead_are_the_pages_a_request_renders() {
    let warmed = fixture(TEST_PLANS_OPEN_PUBLIC);
    let cold = fixture(TEST_PLANS_OPEN_PUBLIC);
    let n = tldsnap::web::warm(&warmed.server.state);
    // Home, catalogue, registrars and the free TLDs the fixture has.
    assert!(n >= 4, "{n}");
    assert_eq!(warmed.server.state.web.cache.len(), n);
    assert_eq!(tldsnap::web::warm(&warmed.server.state), 0, "nothing twice");
    for target in ["/", "/tlds", "/registrars", "/tld/com", "/tld/de"] {
        let a = page(&warmed.server, target, None);
        let b = page(&cold.server, target, None);
        assert_eq!(a.status, 200, "{target}");
        // The two servers load the same snapshot file format; their pages differ only
        // if warm() rendered something else than a request does.
        assert_eq!(a.text(), b.text(), "{target}");
    }
    assert_eq!(
        warmed.server.state.web.cache.len(),
        n,
        "served from the cache"
    );
}

/// The `d` of the first chart's path of registrar `key` on a page.
fn series_path<'a>(page: &'a str, key: &str) -> &'a str {
    let g = page
        .find(&format!("<g class=\"registrar\" data-key=\"{key}\">"))
        .unwrap_or_else(|| panic!("no line for {key}"));
    let at = g + page[g..].find(" d=\"").unwrap() + 4;
    &page[at..at + page[at..].find('"').unwrap()]
}

fn last_x(d: &str) -> f64 {
    d.rsplit('H').next().unwrap().parse().unwrap()
}

#[test]
fn a_registrar_line_ends_where_its_data_ends_and_old_prices_are_marked() {
    // The real data: Cloudflare's com prices end on 2024-01-07, the data on 2026-08-22;
    // the server's clock says 2026-11-21 and its age limit is the default.
    let dir = TempDir::new("web_chart_end");
    let (keys_path, _) = dir.keys();
    let mut opts = Options::new(&keys_path, &keys_path);
    opts.snapshot = None;
    opts.config.max_age_days = tldsnap::query::DEFAULT_MAX_AGE_DAYS;
    let s = Server::start(opts);
    let body = html(&page(&s, "/tld/com", None));
    // The table lists Cloudflare, marked; a seller with this year's prices is not.
    let row = |key: &str| {
        let at = body
            .find(&format!("<a href=\"/registrars/{key}\">"))
            .unwrap_or_else(|| panic!("no row for {key}"));
        body[at..at + body[at..].find("</tr>").unwrap()].to_owned()
    };
    assert!(
        row("cloudflare").contains("class=\"stale\""),
        "{}",
        row("cloudflare")
    );
    assert!(
        !row("spaceship").contains("class=\"stale\""),
        "{}",
        row("spaceship")
    );
    let first_chart = &body[..body.find("chart-wide").unwrap_or(body.len())];
    let history = s.get("/api/v1/history/tld/com", None).json();
    let cf = &history["history"]["cloudflare"];
    assert_eq!(cf["coverage"]["last"], "2024-01-07", "{cf}");
    let d0 = cf["changes"][0]["date"].as_str().unwrap();
    let day = |d: &str| tldsnap::time::parse_date(d).unwrap() as f64;
    let path = series_path(first_chart, "cloudflare");
    let x0: f64 = path[1..].split(' ').next().unwrap().parse().unwrap();
    // The chart's right edge: where the lines of registrars current at the data date end.
    let keys: Vec<&str> = history["history"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let x_hi = keys
        .iter()
        .filter(|k| first_chart.contains(&format!("data-key=\"{k}\"")))
        .map(|k| last_x(series_path(first_chart, k)))
        .fold(f64::MIN, f64::max);
    let hi = day("2026-08-23");
    // x is linear in the day: the line's end is the end of 2024-01-07.
    let want = x0 + (day("2024-01-08") - day(d0)) * (x_hi - x0) / (hi - day(d0));
    let got = last_x(path);
    assert!(
        (got - want).abs() < 0.6,
        "ends at x={got}, want {want} ({path})"
    );
    assert!(got < x_hi - 50.0, "{got} vs {x_hi}");
}

/// The real server on the built-in data (the shipped price source, its promotions,
/// ICANN fees and ECB rates).
fn real_fixture() -> Fixture {
    let dir = TempDir::new("web-real");
    let (keys_path, keys) = dir.keys();
    let mut opts = Options::new(&dir.path("unused.snap"), &keys_path);
    opts.snapshot = None;
    opts.plans = TEST_PLANS_OPEN_PUBLIC;
    let server = Server::start(opts);
    Fixture {
        _dir: dir,
        server,
        keys,
        keys_path,
    }
}

/// The first `limit` cheapest entries of the public API for `tld` and `query`
/// (`&sort=..`), stale ones included.
fn api_cheapest(s: &Server, tld: &str, limit: usize, query: &str) -> Vec<serde_json::Value> {
    let r = s.get(
        &format!("/api/v1/prices/cheapest?tlds={tld}&include_stale=true&limit={limit}{query}"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["results"][tld]["cheapest_register"]
        .as_array()
        .unwrap()
        .clone()
}

/// The table of a page whose `<table` tag carries `marker` (`id="prices"`), to its end.
fn table<'a>(body: &'a str, marker: &str) -> &'a str {
    let start = body.find(marker).unwrap_or_else(|| panic!("no {marker}"));
    let end = body[start..].find("</table>").unwrap() + start;
    &body[start..end]
}

/// The rows of a table, each from `<tr>` to `</tr>`, the header's left out.
fn body_rows(table: &str) -> Vec<&str> {
    let tbody = &table[table.find("<tbody>").unwrap()..];
    tbody
        .split("<tr>")
        .skip(1)
        .map(|r| &r[..r.find("</tr>").unwrap()])
        .collect()
}

/// The registrar named by a row of a TLD page's table.
fn row_registrar(row: &str) -> &str {
    let a = row.find("<a href=\"/registrars/").unwrap();
    let name = &row[a..];
    let name = &name[name.find('>').unwrap() + 1..];
    &name[..name.find("</a>").unwrap()]
}

/// `amount` (a JSON number of yen) as the page writes it: `¥1,234`.
fn yen(v: &serde_json::Value) -> String {
    let n = v.as_f64().unwrap();
    assert_eq!(n.fract(), 0.0, "a yen amount has no decimals: {n}");
    let digits = (n as u64).to_string();
    let mut out = String::from("¥");
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[test]
fn promotions_are_marked_with_their_regular_price_and_the_icann_fee_is_stated() {
    let f = real_fixture();
    let s = &f.server;
    let pro = &f.keys["pro"];
    // .net's Namecheap offer is a promotion (every seller: a pro member's page).
    let api = s.get(
        "/api/v1/client/prices?tlds=net&registrars=namecheap",
        Some(pro),
    );
    let offer = &api.json()["results"]["net"]["namecheap"];
    assert_eq!(offer["promotion"], true, "{offer}");
    let regular = dollars(&offer["regular_register_price"]);
    let first = dollars(&offer["register_price"]);
    let cookies = sign_in(s, pro);
    let body = html(&page(s, "/tld/net", Some(&cookies)));
    let rows = body_rows(table(&body, "id=\"prices\""));
    let row = rows
        .iter()
        .find(|r| row_registrar(r) == "Namecheap")
        .expect("a Namecheap row");
    assert!(
        row.contains(&format!(
            "{first} <span class=\"promo\"><abbr title=\"A promotional first-year price; the regular first-year price is {regular}\">Promo</abbr>, regular {regular}</span>"
        )),
        "{row}"
    );
    // Every other row is marked exactly when the API says it is a promotion.
    let every = s.get("/api/v1/client/prices?tlds=net", Some(pro)).json();
    for row in &rows {
        let name = row_registrar(row);
        let key = row[row.find("/registrars/").unwrap() + 12..]
            .split('"')
            .next()
            .unwrap();
        let promo = every["results"]["net"][key]["promotion"] == true;
        assert_eq!(row.contains("Promo</abbr>"), promo, "{name}");
    }
    // The ICANN fee, where a list states it: Cloudflare's .com prices include it.
    let cf = &s
        .get(
            "/api/v1/client/prices?tlds=com&registrars=cloudflare",
            Some(pro),
        )
        .json()["results"]["com"]["cloudflare"];
    assert_eq!(cf["icann_fee_included"], true, "{cf}");
    let body = html(&page(s, "/tld/com", Some(&cookies)));
    let rows = body_rows(table(&body, "id=\"prices\""));
    let row = rows
        .iter()
        .find(|r| row_registrar(r) == "Cloudflare")
        .unwrap();
    assert!(
        row.contains(&format!(
            "<span class=\"fee\">ICANN fee {} included</span>",
            dollars(&cf["icann_fee"])
        )),
        "{row}"
    );
    assert!(body.contains("says whether its prices include it"));
    // Openprovider's member price stands beside the price for everyone, which is ranked.
    let op = &s
        .get(
            "/api/v1/client/prices?tlds=com&registrars=openprovider",
            Some(pro),
        )
        .json()["results"]["com"]["openprovider"];
    let row = rows
        .iter()
        .find(|r| row_registrar(r) == "Openprovider")
        .expect("an Openprovider row");
    assert!(
        row.contains(&format!(
            "<span class=\"member\">members: {}</span>",
            dollars(&op["member_prices"]["register"])
        )),
        "{row}"
    );
    // A visitor's pages: .app's Namecheap offer on the TLD page and on the registrar's
    // price list.
    let app = &s
        .get("/api/v1/prices?tlds=app&registrars=namecheap", None)
        .json()["results"]["app"]["namecheap"];
    assert_eq!(app["promotion"], true, "{app}");
    let mark = format!(
        "{} <span class=\"promo\"><abbr title=\"A promotional first-year price; the regular first-year price is {regular}\">Promo</abbr>, regular {regular}</span>",
        dollars(&app["register_price"]),
        regular = dollars(&app["regular_register_price"])
    );
    let body = html(&page(s, "/tld/app", None));
    assert!(body.contains(&mark), "the TLD page");
    let body = html(&page(s, "/registrars/namecheap", None));
    let row = body_rows(table(&body, "<table"))
        .into_iter()
        .find(|r| r.contains("href=\"/tld/app\""))
        .unwrap();
    assert!(row.contains(&mark), "the registrar's page: {row}");
    // The home page marks a free TLD's cheapest registration when it is a promotion.
    let home = html(&page(s, "/", None));
    let rows = body_rows(table(&home, "id=\"free\""));
    for tld in tldsnap::tld::FREE_TLDS {
        let first = &api_cheapest(s, tld, 1, "")[0];
        let row = rows
            .iter()
            .find(|r| r.contains(&format!("href=\"/tld/{tld}\"")))
            .unwrap();
        assert_eq!(
            row.contains("Promo</abbr>"),
            first.get("promotion") == Some(&serde_json::Value::Bool(true)),
            "{tld}: {first} / {row}"
        );
    }
}

#[test]
fn a_tld_page_ranks_by_first_year_renewal_3_or_5_years_as_the_api_does() {
    let f = real_fixture();
    let s = &f.server;
    for (sort, label) in [
        ("register", "First year"),
        ("renew", "Renewal"),
        ("total_3_year", "3 years"),
        ("total_5_year", "5 years"),
    ] {
        let target = format!("/tld/net?sort={sort}");
        let r = page(s, &target, None);
        assert_eq!(r.status, 200, "{target}");
        let body = html(&r);
        let rows = body_rows(table(&body, "id=\"prices\""));
        let names: Vec<&str> = rows.iter().map(|r| row_registrar(r)).collect();
        let api = api_cheapest(s, "net", 100, &format!("&sort={sort}"));
        let expected: Vec<&str> = api
            .iter()
            .map(|e| e["registrar_name"].as_str().unwrap())
            .collect();
        assert_eq!(names, expected, "{sort}");
        // Both totals in every row, as the API sums them.
        for (row, e) in rows.iter().zip(&api) {
            for total in ["total_cost_3_year", "total_cost_5_year"] {
                assert!(
                    row.contains(&format!(">{}</td>", dollars(&e[total]))),
                    "{sort} {total}: {row}"
                );
            }
        }
        // The current choice is marked.
        let nav = &body[body.find("<nav class=\"ranking\"").unwrap()..];
        let nav = &nav[..nav.find("</nav>").unwrap()];
        assert_eq!(nav.matches("aria-current").count(), 1, "{nav}");
        assert!(
            nav.contains(&format!("aria-current=\"true\">{label}</a>")),
            "{sort}: {nav}"
        );
    }
    // The first-year ranking is the bare page; a bad ranking is the 400 page.
    assert_eq!(
        body_rows(table(&html(&page(s, "/tld/net", None)), "id=\"prices\"")),
        body_rows(table(
            &html(&page(s, "/tld/net?sort=register", None)),
            "id=\"prices\""
        ))
    );
    let bad = page(s, "/tld/net?sort=cheapest", None);
    assert_eq!(bad.status, 400);
    assert!(html(&bad).contains("<h1>Bad request</h1>"));
}

#[test]
fn prices_are_shown_in_the_chosen_currency_kept_in_a_cookie() {
    let f = real_fixture();
    let s = &f.server;
    let usd = page(s, "/tld/com", None);
    assert!(set_cookie(&usd, "tldsnap_currency").is_none());
    assert!(html(&usd).contains("Prices in <strong>US dollars</strong>."));
    // ?currency=JPY: every price in yen, without decimals, at the API's conversion.
    let jpy = page(s, "/tld/com?currency=jpy", None);
    assert_eq!(jpy.status, 200);
    let kept = set_cookie(&jpy, "tldsnap_currency").expect("the choice is kept");
    assert!(kept.starts_with("tldsnap_currency=JPY;"), "{kept}");
    for attr in ["Path=/", "Max-Age=31536000", "SameSite=Lax"] {
        assert!(kept.contains(attr), "{kept}");
    }
    let body = html(&jpy);
    let api = s
        .get(
            "/api/v1/prices/cheapest?tlds=com&currency=JPY&include_stale=true&limit=100",
            None,
        )
        .json();
    let rate_date = api["meta"]["currency"]["rate_date"].as_str().unwrap();
    assert!(
        body.contains(&format!(
            "Prices in <strong>JPY</strong>, converted from US dollars at the ECB euro reference rates of {rate_date}."
        )),
        "the rate date"
    );
    let rows = body_rows(table(&body, "id=\"prices\""));
    let entries = api["results"]["com"]["cheapest_register"]
        .as_array()
        .unwrap();
    assert_eq!(rows.len(), entries.len());
    for (row, e) in rows.iter().zip(entries) {
        for field in [
            "register_price",
            "renew_price",
            "total_cost_3_year",
            "total_cost_5_year",
        ] {
            assert!(
                row.contains(&yen(&e[field])),
                "{field}: {} in {row}",
                yen(&e[field])
            );
        }
        assert!(!row.contains('$'), "{row}");
    }
    let cells = table(&body, "id=\"prices\"");
    assert!(
        !cells.split('¥').skip(1).any(|t| {
            let n: String = t
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
                .collect();
            n.contains('.')
        }),
        "no decimals in yen"
    );
    // The cookie alone: the next page is in yen too, without a new cookie.
    let cookie = cookie_pair(kept);
    let again = page(s, "/tld/com", Some(&cookie));
    assert!(set_cookie(&again, "tldsnap_currency").is_none());
    assert!(html(&again).contains("Prices in <strong>JPY</strong>"));
    let home = html(&page(s, "/", Some(&cookie)));
    assert!(home.contains("<option value=\"JPY\" selected>JPY</option>"));
    // ?currency= overrides the cookie (and becomes the kept choice).
    let eur = page(s, "/tld/com?currency=EUR", Some(&cookie));
    assert!(html(&eur).contains("Prices in <strong>EUR</strong>"));
    assert!(
        set_cookie(&eur, "tldsnap_currency")
            .unwrap()
            .starts_with("tldsnap_currency=EUR;")
    );
    // A cached page never reaches a visitor of another currency, and the tags differ.
    let plain = page(s, "/tld/com", None);
    assert_eq!(
        plain.body, usd.body,
        "the USD page, after the yen one was cached"
    );
    assert_ne!(again.header("etag"), usd.header("etag"));
    let r = request(
        s,
        "GET",
        "/tld/com",
        &[
            ("If-None-Match", usd.header("etag").unwrap()),
            ("Cookie", &cookie),
        ],
        "",
    );
    assert_eq!(r.status, 200, "the USD tag does not validate the yen page");
    let r = request(
        s,
        "GET",
        "/tld/com",
        &[
            ("If-Modified-Since", usd.header("last-modified").unwrap()),
            ("Cookie", &cookie),
        ],
        "",
    );
    assert_eq!(
        r.status, 200,
        "a date alone does not validate a chosen currency"
    );
    // A bad cookie is USD, never an error.
    for bad in [
        "tldsnap_currency=XYZ",
        "tldsnap_currency=%3Cb%3E",
        "tldsnap_currency=",
    ] {
        let r = page(s, "/tld/com", Some(bad));
        assert_eq!(r.status, 200, "{bad}");
        assert_eq!(r.body, usd.body, "{bad}");
    }
    // A bad ?currency= is the 400 page every bad parameter gets.
    for bad in ["XYZ", "EURO", "12"] {
        let r = page(s, &format!("/tld/com?currency={bad}"), None);
        assert_eq!(r.status, 400, "{bad}");
        let body = html(&r);
        assert!(body.contains("<h1>Bad request</h1>"), "{bad}");
        assert!(body.contains("currency"), "{bad}");
        assert!(set_cookie(&r, "tldsnap_currency").is_none());
    }
    // Every price page offers the choice and converts.
    for target in [
        "/",
        "/tlds?sort=cheapest",
        "/registrars/namecheap",
        "/tld/net",
    ] {
        let body = html(&page(s, target, Some("tldsnap_currency=EUR")));
        assert!(
            body.contains("<select id=\"currency\" name=\"currency\">"),
            "{target}"
        );
        assert!(body.contains("Prices in <strong>EUR</strong>"), "{target}");
        assert!(body.contains('€'), "{target}");
    }
}

#[test]
fn the_home_page_shows_the_cheapest_three_years_beside_the_first_year() {
    let f = real_fixture();
    let s = &f.server;
    for currency in ["USD", "EUR"] {
        let body = html(&page(s, &format!("/?currency={currency}"), None));
        let rows = body_rows(table(&body, "id=\"free\""));
        assert_eq!(rows.len(), tldsnap::tld::FREE_TLDS.len());
        for tld in tldsnap::tld::FREE_TLDS {
            let row = rows
                .iter()
                .find(|r| r.contains(&format!("href=\"/tld/{tld}\"")))
                .unwrap();
            let query = format!("&sort=total_3_year&currency={currency}");
            let three = &api_cheapest(s, tld, 1, &query)[0];
            let first = &api_cheapest(s, tld, 1, &format!("&currency={currency}"))[0];
            let money = |v: &serde_json::Value| match currency {
                "USD" => dollars(v),
                _ => dollars(v).replace('$', "€"),
            };
            let cells: Vec<&str> = row.split("<td").skip(1).collect();
            assert!(
                cells[0].contains(&money(&first["register_price"])),
                "{tld}: {row}"
            );
            assert!(
                cells[1].contains(first["registrar_name"].as_str().unwrap()),
                "{tld}"
            );
            assert!(
                cells[2].contains(&format!(">{}</td>", money(&three["total_cost_3_year"]))),
                "{tld}: {three} / {row}"
            );
            assert!(
                cells[3].contains(three["registrar_name"].as_str().unwrap()),
                "{tld}"
            );
        }
    }
}
