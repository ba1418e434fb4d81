//! The website's sessions on the real binary (`tldsnap serve`): a sign-out ends the
//! session for good, a copied cookie and a restart included; over HTTPS (a trusted
//! proxy's `X-Forwarded-Proto`) answers carry HSTS and the cookies are `__Host-`
//! cookies, and over plain HTTP, or from an untrusted client's header, neither.

mod http_support;

use std::path::Path;

use http_support::{
    Binary, Conn, Response, TEST_PLANS_OPEN_PUBLIC, TempDir, cookie_pair, form_value, raw_request,
    set_cookie,
};

/// A member price of the fixture: shown to a signed-in `pro` key, not to a visitor.
const MEMBER_PRICE: &str = "$1,234.56";

/// `method target` on a fresh connection to `bin`, with `headers` and a form `body`.
fn request(
    bin: &Binary,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response {
    let mut headers = headers.to_vec();
    if method == "POST" {
        headers.push(("Content-Type", "application/x-www-form-urlencoded"));
    }
    let mut conn = Conn::open(bin.addr.parse().unwrap());
    conn.write(&raw_request(method, target, &headers, body));
    conn.read_response(false).unwrap().expect("a response")
}

/// A page, as a browser asks for it, with `cookie` and `extra` headers.
fn page(bin: &Binary, target: &str, cookie: Option<&str>, extra: &[(&str, &str)]) -> Response {
    let mut h = vec![("Accept", "text/html")];
    if let Some(c) = cookie {
        h.push(("Cookie", c));
    }
    h.extend_from_slice(extra);
    request(bin, "GET", target, &h, "")
}

/// Cookie names of one scheme.
struct Names {
    session: &'static str,
    csrf: &'static str,
}

const PLAIN: Names = Names {
    session: "tldsnap_session",
    csrf: "tldsnap_csrf",
};
const HOST: Names = Names {
    session: "__Host-tldsnap_session",
    csrf: "__Host-tldsnap_csrf",
};

/// Signs in with `key`, sending `extra` headers throughout; returns the `Cookie`
/// header value (session and CSRF cookies) and the session's `Set-Cookie`.
fn sign_in(bin: &Binary, key: &str, names: &Names, extra: &[(&str, &str)]) -> (String, String) {
    let form = page(bin, "/signin", None, extra);
    assert_eq!(form.status, 200, "{}", form.text());
    let csrf = cookie_pair(set_cookie(&form, names.csrf).expect("a CSRF cookie"));
    let token = form_value(&form.text(), "csrf");
    let mut h = vec![("Cookie", csrf.as_str()), ("Origin", "http://test")];
    h.extend_from_slice(extra);
    let r = request(
        bin,
        "POST",
        "/signin",
        &h,
        &format!("csrf={token}&key={key}&next=%2Ftld%2Fmuseum"),
    );
    assert_eq!(r.status, 303, "{}", r.text());
    let session = set_cookie(&r, names.session)
        .unwrap_or_else(|| panic!("a {} cookie in {:?}", names.session, r.headers))
        .to_owned();
    (format!("{}; {csrf}", cookie_pair(&session)), session)
}

/// Signs out the session in `cookies` with the account page's own token.
fn sign_out(bin: &Binary, cookies: &str, extra: &[(&str, &str)]) -> Response {
    let account = page(bin, "/signin", Some(cookies), extra);
    let body = account.text();
    assert!(body.contains("Sign out"), "{body}");
    let token = form_value(&body, "csrf");
    let mut h = vec![("Cookie", cookies)];
    h.extend_from_slice(extra);
    let out = request(bin, "POST", "/signout", &h, &format!("csrf={token}"));
    assert_eq!(out.status, 303, "{}", out.text());
    out
}

fn is_member(bin: &Binary, cookies: &str, extra: &[(&str, &str)]) -> bool {
    let r = page(bin, "/tld/museum", Some(cookies), extra);
    assert_eq!(r.status, 200);
    r.text().contains(MEMBER_PRICE)
}

fn serve_args(dir: &TempDir, extra: &[&str]) -> Vec<String> {
    let snapshot = dir.path("snap.bin");
    if !snapshot.exists() {
        dir.fixture_snapshot("snap.bin");
    }
    let plans = dir.path("plans.json");
    std::fs::write(&plans, TEST_PLANS_OPEN_PUBLIC).unwrap();
    let p = |p: &Path| p.to_str().unwrap().to_owned();
    let mut args = vec![
        "--snapshot".to_owned(),
        p(&snapshot),
        "--keys".to_owned(),
        p(&dir.path("keys.json")),
        "--plans".to_owned(),
        p(&plans),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

fn start(args: &[String]) -> Binary {
    Binary::start(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn a_signed_out_cookie_is_a_visitor_also_after_a_restart() {
    let dir = TempDir::new("sessions");
    let (_, keys) = dir.keys();
    let pro = keys["pro"].as_str();
    let data = dir.path("data");
    let args = serve_args(&dir, &["--data-dir", data.to_str().unwrap()]);
    let bin = start(&args);

    // Two browsers signed in with one key; the first signs out.
    let (first, _) = sign_in(&bin, pro, &PLAIN, &[]);
    let (second, _) = sign_in(&bin, pro, &PLAIN, &[]);
    assert!(is_member(&bin, &first, &[]) && is_member(&bin, &second, &[]));
    let out = sign_out(&bin, &first, &[]);
    let cleared = set_cookie(&out, PLAIN.session).unwrap();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");

    // The cookie replayed as it was (a copy the browser did not delete): a visitor,
    // and told to drop it; the key's other session ended with it.
    for replayed in [&first, &second] {
        let r = page(&bin, "/tld/museum", Some(replayed), &[]);
        assert!(
            !r.text().contains(MEMBER_PRICE),
            "signed out, still a member"
        );
        assert!(
            set_cookie(&r, PLAIN.session).is_some_and(|c| c.contains("Max-Age=0")),
            "{:?}",
            r.headers
        );
        let account = page(&bin, "/signin", Some(replayed), &[]).text();
        assert!(!account.contains("Sign out"), "{account}");
    }
    // Signing in again works, and is a new session.
    let (again, _) = sign_in(&bin, pro, &PLAIN, &[]);
    assert!(is_member(&bin, &again, &[]));

    // A crash and a restart on the same data directory: the sign-out holds, the
    // session made after it still does.
    drop(bin);
    let bin = start(&args);
    assert!(
        !is_member(&bin, &first, &[]),
        "a restart revived a signed-out cookie"
    );
    assert!(!is_member(&bin, &second, &[]));
    assert!(
        is_member(&bin, &again, &[]),
        "the later session survives the restart"
    );
    // The generations are kept owner-only beside the session secret.
    use std::os::unix::fs::PermissionsExt;
    let file = data.join("session-generations.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{}", file.display());

    // Signing out again after the restart ends that one too, and so on.
    sign_out(&bin, &again, &[]);
    assert!(!is_member(&bin, &again, &[]));
}

/// Has `r` the HSTS header, exactly once and with its value?
fn hsts(r: &Response) -> bool {
    let values: Vec<&str> = r
        .headers
        .iter()
        .filter(|(n, _)| n == "strict-transport-security")
        .map(|(_, v)| v.as_str())
        .collect();
    match values.as_slice() {
        [] => false,
        [v] => {
            assert_eq!(*v, "max-age=31536000");
            true
        }
        more => panic!("HSTS {} times: {more:?}", more.len()),
    }
}

/// Requests of every kind of answer: a page, a static-file-free API answer, a problem,
/// an answer made later (a form post), an unknown path.
fn every_kind(bin: &Binary, extra: &[(&str, &str)]) -> Vec<(&'static str, Response)> {
    let get = |target: &str, accept: &str| {
        let mut h = vec![("Accept", accept)];
        h.extend_from_slice(extra);
        request(bin, "GET", target, &h, "")
    };
    let mut post = vec![("Cookie", "x=1")];
    post.extend_from_slice(extra);
    vec![
        ("page", get("/tld/com", "text/html")),
        ("sign-in page", get("/signin", "text/html")),
        ("API", get("/api/v1/prices?tlds=com", "application/json")),
        ("problem", get("/api/v1/prices?tlds=", "application/json")),
        ("health", get("/healthz", "*/*")),
        ("404 page", get("/no/such/page", "text/html")),
        (
            "form post",
            request(bin, "POST", "/signin", &post, "csrf=x"),
        ),
        (
            "client endpoint, later",
            get("/api/v1/client/webhooks", "application/json"),
        ),
    ]
}

#[test]
fn hsts_and_host_cookies_exactly_when_a_trusted_proxy_says_https() {
    let dir = TempDir::new("sessions-https");
    let (_, keys) = dir.keys();
    let pro = keys["pro"].as_str();
    let https = [("X-Forwarded-Proto", "https")];

    // Behind a trusted proxy.
    let bin = start(&serve_args(&dir, &["--trust-proxy"]));
    for (what, r) in every_kind(&bin, &https) {
        assert!(hsts(&r), "{what} over HTTPS: {:?}", r.headers);
    }
    for proto in [None, Some("http"), Some("http, https")] {
        let extra: Vec<(&str, &str)> = proto
            .map(|p| ("X-Forwarded-Proto", p))
            .into_iter()
            .collect();
        for (what, r) in every_kind(&bin, &extra) {
            assert!(!hsts(&r), "{what} over {proto:?}: {:?}", r.headers);
        }
    }
    // The cookies over HTTPS: __Host-, Secure, Path=/, no Domain.
    let (cookies, session) = sign_in(&bin, pro, &HOST, &https);
    let form = page(&bin, "/signin", None, &https);
    let csrf = set_cookie(&form, HOST.csrf).unwrap();
    for c in [session.as_str(), csrf] {
        let attrs: Vec<&str> = c.split("; ").collect();
        assert!(attrs.contains(&"Secure"), "{c}");
        assert!(attrs.contains(&"Path=/"), "{c}");
        assert!(attrs.contains(&"HttpOnly"), "{c}");
        assert!(!c.to_ascii_lowercase().contains("domain="), "{c}");
    }
    assert!(set_cookie(&form, PLAIN.csrf).is_none());
    assert!(is_member(&bin, &cookies, &https));
    // The __Host- session is not read over plain HTTP, nor a plain one over HTTPS.
    assert!(!is_member(&bin, &cookies, &[]));
    let (plain, plain_set) = sign_in(&bin, pro, &PLAIN, &[]);
    assert!(!plain_set.contains("Secure"), "{plain_set}");
    assert!(is_member(&bin, &plain, &[]));
    assert!(!is_member(&bin, &plain, &https));
    // Signing out over HTTPS clears the __Host- cookie (and ends the key's sessions).
    let out = sign_out(&bin, &cookies, &https);
    assert!(
        set_cookie(&out, HOST.session)
            .is_some_and(|c| c.contains("Max-Age=0") && c.contains("Secure"))
    );
    assert!(!is_member(&bin, &cookies, &https));
    drop(bin);

    // Without --trust-proxy the header is anyone's: no HSTS, plain cookies, no Secure.
    let bin = start(&serve_args(&dir, &[]));
    for (what, r) in every_kind(&bin, &https) {
        assert!(!hsts(&r), "{what}, proxy not trusted: {:?}", r.headers);
    }
    let form = page(&bin, "/signin", None, &https);
    assert!(set_cookie(&form, HOST.csrf).is_none(), "{:?}", form.headers);
    let csrf = set_cookie(&form, PLAIN.csrf).unwrap();
    assert!(!csrf.contains("Secure"), "{csrf}");
    let (cookies, session) = sign_in(&bin, pro, &PLAIN, &https);
    assert!(!session.contains("Secure"), "{session}");
    assert!(is_member(&bin, &cookies, &https));
}
