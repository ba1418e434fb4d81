//! The website: HTML pages of the same snapshot the API answers from, served by the
//! same process.
//!
//! | file | what |
//! |---|---|
//! | `data` | the pages' data, read from the query layer's answers (no price logic here) |
//! | `pages` | the templates (maud: compiled, escaping by default) |
//! | `chart` | the price-history step chart, an SVG drawn on the server |
//! | `session` | signed session cookies, their generations (sign-out), CSRF tokens (HMAC-SHA256) |
//! | `assets` | the stylesheet, script and icon, under content-hashed names |
//! | `cache` | rendered pages per snapshot and viewer plan |
//! | `format`(mod@format) | how prices, counts and dates read |
//!
//! [`answer_now`] answers every page route but the two that read a form body (the
//! sign-in form's post and the sign-out: [`handle`]), as a plain function the API's
//! request path calls: static files first (no limit, they are immutable), then the
//! per-address rate limit of the public API (page views spend no credits), the
//! snapshot, the viewer (session cookie → key id and generation → plan, checked against
//! the sign-outs and the keys in force on every request), then the page. Price pages are
//! shown in a currency (`?currency=`, else the `tldsnap_currency` cookie, else USD).
//! Pages that depend only on the path, the snapshot, the viewer's plan and the currency
//! are rendered once and served from `cache`; their `ETag` is made of the snapshot's
//! content hash, the viewer's plan and currency and the assets' version, so `If-None-Match` is answered 304 before any
//! rendering, and their headers are made once per thread for a snapshot and plan
//! (`Heads`), not per request.

pub(crate) mod assets;
pub(crate) mod cache;
pub(crate) mod chart;
pub(crate) mod data;
pub(crate) mod format;
pub(crate) mod pages;
pub(crate) mod reference;
pub mod session;

use std::sync::Arc;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use maud::Markup;

use crate::access::Denial;
use crate::api::{Connection, HttpResponse, State};
use crate::http::FORWARDED_PROTO;
use crate::http::body::Body;
use crate::http::params::{self, CatalogueParams, RegistrarParams};
use crate::http::problem::Problem;
use crate::http::router::Route;
use crate::query::{QueryError, Ranking, RegistrarRequest};
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::OfferTerms;
use crate::store::Loaded;
pub use cache::Site;
use cache::{Page, gzip};
use format::Cash;
use pages::{CatalogueFilters, Chrome, SignIn, Viewer};
use session::{SESSION_SECS, Secret, Session, csrf_cookie, session_cookie};

/// Largest sign-in or sign-out form body read.
pub const MAX_FORM_BYTES: usize = 4 * 1024;
/// Prices per page of a registrar's page.
pub const REGISTRAR_PAGE: usize = 200;

const HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");
/// No script, style or image from anywhere but this origin; no inline script or style;
/// no framing; forms post only here.
const CSP: HeaderValue = HeaderValue::from_static(
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
);
const CSP_NAME: HeaderName = HeaderName::from_static("content-security-policy");
const NOSNIFF: HeaderName = HeaderName::from_static("x-content-type-options");
const REFERRER: HeaderName = HeaderName::from_static("referrer-policy");

/// The pages and files of the website, one per page route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageKind {
    /// `/`
    Home,
    /// `/tld/{tld}`
    Tld,
    /// `/tlds`
    Catalogue,
    /// `/registrars`
    Registrars,
    /// `/registrars/{key}`
    Registrar,
    /// `/signin`: the form (GET) and signing in (POST).
    SignIn,
    /// `/signout`
    SignOut,
    /// `/static/{file}`
    Asset,
    /// `/docs/api`: the API reference, drawn from this OpenAPI document.
    Reference(&'static serde_json::Value),
}

/// Whether the request's `Accept-Encoding` takes gzip (`q=0` refuses it).
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
            });
            !refused
                && (coding.eq_ignore_ascii_case("gzip")
                    || coding.eq_ignore_ascii_case("x-gzip")
                    || coding == "*")
        })
}

/// Whether a request for an unknown path should get the HTML 404 page (a browser's
/// navigation: `Accept` names `text/html`) rather than the API's problem document.
pub fn wants_html<B>(req: &Request<B>) -> bool {
    let path = req.uri().path();
    !path.starts_with("/api/")
        && !path.starts_with("/v1/")
        && req
            .headers()
            .get_all(header::ACCEPT)
            .iter()
            .any(|v| v.as_bytes().windows(9).any(|w| w == b"text/html"))
}

/// Which of the request headers a page reads came at all: one pass over the request's
/// few header names, so that an absent one costs no lookup (a lookup hashes the name:
/// ~100 instructions each, six of them for a page).
#[derive(Clone, Copy, Debug)]
struct Sent(u8);

impl Sent {
    const COOKIE: u8 = 1;
    const ACCEPT_ENCODING: u8 = 2;
    /// `If-None-Match` or `If-Modified-Since`.
    const CONDITIONAL: u8 = 4;
    const FORWARDED_PROTO: u8 = 8;

    fn of(headers: &HeaderMap) -> Sent {
        let mut bits = 0;
        for name in headers.keys() {
            bits |= if *name == header::COOKIE {
                Sent::COOKIE
            } else if *name == header::ACCEPT_ENCODING {
                Sent::ACCEPT_ENCODING
            } else if *name == header::IF_NONE_MATCH || *name == header::IF_MODIFIED_SINCE {
                Sent::CONDITIONAL
            } else if *name == FORWARDED_PROTO {
                Sent::FORWARDED_PROTO
            } else {
                0
            };
        }
        Sent(bits)
    }

    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// Whether the answer may be gzip-compressed ([`accepts_gzip`]).
    fn gzip(self, headers: &HeaderMap) -> bool {
        self.has(Sent::ACCEPT_ENCODING) && accepts_gzip(headers)
    }
}

/// Who is asking, from the session cookie.
struct Visit {
    /// The headers that came.
    sent: Sent,
    viewer: Viewer,
    session: Option<Session>,
    /// The session cookie was present but is no longer good (expired, forged, signed
    /// out, or its key revoked): clear it.
    clear_session: bool,
    csrf_nonce: Option<String>,
    /// The request came over HTTPS ([`crate::http::came_over_https`]): cookies are
    /// `Secure` and named `__Host-…`.
    secure: bool,
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    session::cookie(
        headers.get_all(header::COOKIE).iter().map(|v| v.as_bytes()),
        name,
    )
}

fn visit(state: &State, headers: &HeaderMap, sent: Sent) -> Visit {
    let secret = &state.config.session_secret;
    // The service speaks plain HTTP; TLS ends at a proxy, which says so (when trusted).
    let secure = sent.has(Sent::FORWARDED_PROTO)
        && crate::http::came_over_https(headers, state.config.trust_proxy);
    let mut clear_session = false;
    let mut found = None;
    let cookies = sent.has(Sent::COOKIE);
    if let Some(value) = cookies
        .then(|| cookie(headers, session_cookie(secure)))
        .flatten()
    {
        let now = state.access.now_ms().div_euclid(1000);
        match secret
            .open(value, now)
            .filter(|s| state.config.sign_outs.is_current(s))
            .and_then(|s| state.access.plan_of(&s.key_id).map(|p| (s, p)))
        {
            Some(pair) => found = Some(pair),
            None => clear_session = true,
        }
    }
    let viewer = match &found {
        Some((_, plan)) => Viewer::of(plan, true),
        None => Viewer::of(&state.access.plans().public(), false),
    };
    Visit {
        sent,
        viewer,
        session: found.map(|(s, _)| s),
        clear_session,
        csrf_nonce: cookies
            .then(|| cookie(headers, csrf_cookie(secure)))
            .flatten()
            .filter(|n| session::is_nonce(n))
            .map(str::to_owned),
        secure,
    }
}

/// What a page handler answers.
enum Outcome {
    /// A page that depends only on path, snapshot and plan: cache it.
    Cacheable(Markup),
    /// A page for this request only.
    Private(StatusCode, Markup),
    /// A redirect.
    Redirect(StatusCode, String),
}

/// A page that could not be shown.
struct Failure {
    status: StatusCode,
    title: String,
    detail: String,
}

impl Failure {
    fn new(status: StatusCode, title: &str, detail: impl Into<String>) -> Failure {
        Failure {
            status,
            title: title.to_owned(),
            detail: detail.into(),
        }
    }
}

fn bad_request(problem: Problem) -> Failure {
    Failure::new(StatusCode::BAD_REQUEST, "Bad request", problem.detail())
}

fn data_failure(e: QueryError) -> Failure {
    match e {
        QueryError::InvalidParameter { name, reason, .. } => Failure::new(
            StatusCode::BAD_REQUEST,
            "Bad request",
            format!("{name}: {reason}"),
        ),
        other => Failure::new(StatusCode::NOT_FOUND, "Not found", other.to_string()),
    }
}

/// The page routes answered at once, without a future: every page and static file but
/// the sign-in form's post and the sign-out, which read a form body (`None` for those:
/// [`handle`] answers them). What the API's request path calls for a page.
pub fn answer_now(
    state: &State,
    req: &Request<Incoming>,
    route: &'static Route,
    page: PageKind,
    conn: &Connection,
) -> Option<HttpResponse> {
    let post = req.method() == Method::POST;
    if page == PageKind::SignOut || page == PageKind::SignIn && post {
        return None;
    }
    if page == PageKind::Asset {
        return Some(asset(req));
    }
    let sent = Sent::of(req.headers());
    let gz = sent.gzip(req.headers());
    let loaded = match admitted(state, conn, gz) {
        Ok(loaded) => loaded,
        Err(refusal) => return Some(refusal),
    };
    let visit = visit(state, req.headers(), sent);
    let response = match page {
        PageKind::SignIn => signin_get(state, req, &loaded, &visit, gz),
        _ => answer_page(state, req, route, page, &loaded, &visit, gz),
    };
    Some(with_cleared_session(response, &visit))
}

/// The HTML answer to one page route: [`answer_now`], or for the sign-in form's post
/// and the sign-out, which read a form body, their answer.
pub async fn handle(
    state: &State,
    req: Request<Incoming>,
    route: &'static Route,
    page: PageKind,
    conn: &Connection,
) -> HttpResponse {
    if let Some(response) = answer_now(state, &req, route, page, conn) {
        return response;
    }
    let sent = Sent::of(req.headers());
    let gz = sent.gzip(req.headers());
    let loaded = match admitted(state, conn, gz) {
        Ok(loaded) => loaded,
        Err(refusal) => return refusal,
    };
    let visit = visit(state, req.headers(), sent);
    let response = match page {
        PageKind::SignIn => signin_post(state, req, &loaded, &visit).await,
        _ => signout(state, req, &loaded, &visit).await,
    };
    with_cleared_session(response, &visit)
}

/// The per-address rate limit of the public API (page views spend no credits), then
/// the snapshot; or the page to answer instead (moved once, to the caller that returns
/// it, as the API's helpers do).
#[allow(clippy::result_large_err)]
fn admitted(state: &State, conn: &Connection, gz: bool) -> Result<Arc<Loaded>, HttpResponse> {
    if let Err(denial) = state.access.admit_now(None, conn.client, false) {
        return Err(refused(denial, gz));
    }
    crate::api::snapshot(state).map_err(|_| {
        let mut r = simple_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Starting up",
            "No price data is loaded yet. Try again in a moment.",
            gz,
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        r
    })
}

/// `response`, clearing a session cookie that is no longer good (unless it sets the
/// session cookie itself).
fn with_cleared_session(mut response: HttpResponse, visit: &Visit) -> HttpResponse {
    if visit.clear_session {
        let name = session_cookie(visit.secure);
        let already = response
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .any(|v| v.as_bytes().starts_with(name.as_bytes()));
        if !already {
            add_cookie(
                &mut response,
                &session::set_cookie(name, "", 0, visit.secure),
            );
        }
    }
    response
}

/// The HTML 404 for a path no route matches.
pub async fn not_found(state: &State, req: Request<Incoming>, conn: &Connection) -> HttpResponse {
    let sent = Sent::of(req.headers());
    let gz = sent.gzip(req.headers());
    if let Err(denial) = state.access.admit_now(None, conn.client, false) {
        return refused(denial, gz);
    }
    let Ok(loaded) = crate::api::snapshot(state) else {
        return simple_page(
            StatusCode::NOT_FOUND,
            "Page not found",
            "There is no page here.",
            gz,
        );
    };
    let visit = visit(state, req.headers(), sent);
    let snap = loaded.snapshot.data();
    let date = data::data_date(snap);
    let path = req.uri().path();
    // `/com` or `/.com`: perhaps a TLD.
    let last = path.rsplit('/').next().unwrap_or("");
    let guess = params::percent_decode(last, false)
        .ok()
        .filter(|s| !s.is_empty() && s.len() <= 63)
        .map(|s| s.into_owned());
    let close = guess
        .as_deref()
        .map(|g| {
            let mut names = Vec::new();
            if let Ok(name) = crate::tld::normalize(g)
                && snap.catalogue_entry(&name).is_some()
            {
                names.push(name.into_owned());
            }
            for n in crate::query::close_names(snap, g, 5) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            names.truncate(5);
            names
        })
        .unwrap_or_default();
    let chrome = Chrome {
        viewer: &visit.viewer,
        data_date: &date,
        path,
        cash: Cash::USD,
        currencies: &[],
    };
    let markup = pages::not_found(&chrome, None, &close);
    html_response(StatusCode::NOT_FOUND, markup.into_string().into(), gz, &[])
}

fn refused(denial: Denial, gz: bool) -> HttpResponse {
    let retry = denial.retry_after_secs().unwrap_or(1);
    let mut r = simple_page(
        StatusCode::TOO_MANY_REQUESTS,
        "Too many requests",
        &format!("This address has asked for too many pages at once. Try again in {retry} s."),
        gz,
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry));
    r
}

/// A page without data (errors before the snapshot or the viewer are known).
fn simple_page(status: StatusCode, title: &str, detail: &str, gz: bool) -> HttpResponse {
    let viewer = Viewer::visitor();
    let chrome = Chrome {
        viewer: &viewer,
        data_date: "unknown",
        path: "/",
        cash: Cash::USD,
        currencies: &[],
    };
    html_response(
        status,
        pages::error(&chrome, title, detail).into_string().into(),
        gz,
        &[],
    )
}

fn add_cookie(response: &mut HttpResponse, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// The headers every HTML answer carries.
fn html_headers(headers: &mut HeaderMap) {
    headers.insert(header::CONTENT_TYPE, HTML);
    headers.insert(CSP_NAME, CSP);
    headers.insert(NOSNIFF, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER, HeaderValue::from_static("same-origin"));
    headers.insert(
        header::VARY,
        HeaderValue::from_static("Cookie, Accept-Encoding"),
    );
}

/// An HTML answer, compressed when `gz`, not cached by anyone.
fn html_response(status: StatusCode, html: Bytes, gz: bool, cookies: &[String]) -> HttpResponse {
    let body = if gz { Bytes::from(gzip(&html)) } else { html };
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    html_headers(h);
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if gz {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    for c in cookies {
        add_cookie(&mut r, c);
    }
    r
}

fn redirect(status: StatusCode, to: &str) -> HttpResponse {
    let mut r = Response::new(Body::default());
    *r.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn asset(req: &Request<Incoming>) -> HttpResponse {
    let Some(a) = assets::find(req.uri().path()) else {
        return Problem::NotFound.into_response();
    };
    let not_modified = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| etag_matches(v, &a.etag));
    let gz = accepts_gzip(req.headers());
    let mut r = Response::new(if not_modified {
        Body::default()
    } else if gz {
        Body::from(a.gzip.clone())
    } else {
        Body::from(a.body.clone())
    });
    if not_modified {
        *r.status_mut() = StatusCode::NOT_MODIFIED;
    }
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(a.content_type),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    h.insert(NOSNIFF, HeaderValue::from_static("nosniff"));
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    if let Ok(v) = HeaderValue::from_str(&a.etag) {
        h.insert(header::ETAG, v);
    }
    if gz && !not_modified {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    r
}

/// Whether an `If-None-Match` value matches `etag` (weak comparison, RFC 9110 13.1.2).
pub fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    let bare = |t: &str| t.trim().trim_start_matches("W/").to_owned();
    let ours = bare(etag);
    if_none_match
        .split(',')
        .any(|t| t.trim() == "*" || bare(t) == ours)
}

/// The `ETag` of every cacheable page of this snapshot, on this day (`generation`:
/// [`State::generation`]), for this viewer, in this currency.
fn page_etag(generation: u128, viewer: &Viewer, currency: &str) -> String {
    let hash = generation;
    let who = if currency == "USD" {
        format!("{}:{}", viewer.signed_in, viewer.plan)
    } else {
        format!("{}:{}:{currency}", viewer.signed_in, viewer.plan)
    };
    format!(
        "W/\"{:016x}-{:08x}-{}\"",
        hash as u64,
        twox_hash::XxHash3_64::oneshot(who.as_bytes()) as u32,
        assets::assets().version
    )
}

/// What a cacheable page's answer carries besides its body, which depends only on the
/// snapshot as loaded and on the viewer's plan: made once per thread for each, instead
/// of formatting the `ETag` and the date and inserting nine headers for every request
/// (they were two thirds of a page's cost).
struct Heads {
    generation: u128,
    loaded_at_ms: i64,
    signed_in: bool,
    plan: String,
    currency: String,
    etag: String,
    last_modified: String,
    /// A 200's headers: without, then with `Content-Encoding: gzip`.
    ok: [HeaderMap; 2],
}

impl Heads {
    fn new(loaded: &Loaded, viewer: &Viewer, generation: u128, currency: &str) -> Heads {
        let etag = page_etag(generation, viewer, currency);
        let last_modified = crate::time::http_date(loaded.loaded_at_ms);
        let mut plain = HeaderMap::with_capacity(9);
        html_headers(&mut plain);
        plain.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, no-cache"),
        );
        if let Ok(v) = HeaderValue::from_str(&etag) {
            plain.insert(header::ETAG, v);
        }
        if let Ok(v) = HeaderValue::from_str(&last_modified) {
            plain.insert(header::LAST_MODIFIED, v);
        }
        let mut gzip = plain.clone();
        gzip.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        Heads {
            generation,
            loaded_at_ms: loaded.loaded_at_ms,
            signed_in: viewer.signed_in,
            plan: viewer.plan.to_string(),
            currency: currency.to_owned(),
            etag,
            last_modified,
            ok: [plain, gzip],
        }
    }

    /// Those of `loaded` on the day of `generation` for `viewer` in `currency`: the ones
    /// this thread made last if they are these.
    fn of(
        loaded: &Loaded,
        viewer: &Viewer,
        generation: u128,
        currency: &str,
    ) -> std::rc::Rc<Heads> {
        thread_local! {
            static LAST: std::cell::RefCell<Option<std::rc::Rc<Heads>>> =
                const { std::cell::RefCell::new(None) };
        }
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            match &*last {
                Some(h)
                    if h.generation == generation
                        && h.loaded_at_ms == loaded.loaded_at_ms
                        && h.signed_in == viewer.signed_in
                        && *h.plan == *viewer.plan
                        && h.currency == currency =>
                {
                    std::rc::Rc::clone(h)
                }
                _ => {
                    let h = std::rc::Rc::new(Heads::new(loaded, viewer, generation, currency));
                    *last = Some(std::rc::Rc::clone(&h));
                    h
                }
            }
        })
    }
}

/// The currency cookie: the code of the currency the price pages are shown in.
pub const CURRENCY_COOKIE: &str = "tldsnap_currency";
/// How long the currency cookie is kept: a year.
const CURRENCY_SECS: i64 = 365 * 24 * 60 * 60;

/// The pages that show prices, and so offer the currency choice.
fn shows_prices(page: PageKind) -> bool {
    matches!(
        page,
        PageKind::Home | PageKind::Tld | PageKind::Catalogue | PageKind::Registrar
    )
}

/// The currency a price page is shown in.
struct Choice<'s> {
    cash: Cash<'s>,
    /// A cookie or `?currency=` named a currency (not left to the default).
    chosen: bool,
    /// The currency to keep in the cookie: `?currency=` named one the cookie does not
    /// hold.
    keep: Option<String>,
}

impl Choice<'static> {
    const USD: Choice<'static> = Choice {
        cash: Cash::USD,
        chosen: false,
        keep: None,
    };
}

/// `?currency=` (checked as the API checks it: a bad code is a 400 page), else the
/// currency cookie (a value that is not a currency of the snapshot is USD), else USD.
fn currency_choice<'s>(
    snap: &'s ArchivedSnapshotData,
    query: Option<&str>,
    headers: &HeaderMap,
    sent: Sent,
) -> Result<Choice<'s>, Failure> {
    let kept = if sent.has(Sent::COOKIE) {
        cookie(headers, CURRENCY_COOKIE)
    } else {
        None
    };
    let [asked] = params::pick(query, ["currency"]).map_err(bad_request)?;
    if let Some(asked) = non_empty(asked) {
        let code = params::currency(Some(&asked))
            .map_err(bad_request)?
            .unwrap_or_default();
        let money = crate::query::money(snap, &code).map_err(data_failure)?;
        let keep = (kept != Some(money.code())).then(|| money.code().to_owned());
        return Ok(Choice {
            cash: Cash::new(money),
            chosen: true,
            keep,
        });
    }
    let money = kept
        .and_then(|v| params::currency(Some(v)).ok().flatten())
        .and_then(|code| crate::query::money(snap, &code).ok());
    Ok(Choice {
        cash: money.map_or(Cash::USD, Cash::new),
        chosen: kept.is_some(),
        keep: None,
    })
}

/// The ranking of a TLD page: `?sort=`, checked as the API's cheapest endpoints check
/// it.
fn tld_ranking(query: Option<&str>) -> Result<Ranking, Failure> {
    let [sort] = params::pick(query, ["sort"]).map_err(bad_request)?;
    params::ranking(non_empty(sort).as_deref()).map_err(bad_request)
}

#[allow(clippy::too_many_arguments)]
fn answer_page(
    state: &State,
    req: &Request<Incoming>,
    route: &'static Route,
    page: PageKind,
    loaded: &Arc<Loaded>,
    visit: &Visit,
    gz: bool,
) -> HttpResponse {
    let path = req.uri().path();
    let query = req.uri().query();
    let snap = loaded.snapshot.data();
    // The data's date and the currency list are only shown: made when a page is drawn.
    let date = std::cell::OnceCell::new();
    let currencies = std::cell::OnceCell::new();
    let offers_choice = shows_prices(page);
    let chrome = || {
        let list: &[&str] = if offers_choice {
            currencies.get_or_init(|| crate::query::money::currencies(snap).collect::<Vec<_>>())
        } else {
            &[]
        };
        Chrome {
            viewer: &visit.viewer,
            data_date: date.get_or_init(|| data::data_date(snap)),
            path,
            cash: Cash::USD,
            currencies: list,
        }
    };
    // Canonical names first: a redirect depends on the path alone.
    let segment = route.segment(path);
    // A redirect or a 404 is decided before the conditional check, so a 304 is only
    // ever sent for a page that exists.
    let precheck = match page {
        PageKind::Tld => canonical_tld(segment),
        PageKind::Registrar => canonical_registrar(segment),
        _ => Ok(None),
    };
    match precheck {
        Ok(Some(to)) => return redirect(StatusCode::MOVED_PERMANENTLY, &to),
        Ok(None) => {}
        Err(outcome) => return finish_failure(&chrome(), outcome, gz, visit, snap),
    }
    // The page's currency and (of a TLD page) ranking: a bad value is a 400 page.
    let choice = if offers_choice {
        currency_choice(snap, query, req.headers(), visit.sent)
    } else {
        Ok(Choice::USD)
    };
    let ranking = match page {
        PageKind::Tld => tld_ranking(query),
        _ => Ok(Ranking::Register),
    };
    let (choice, ranking) = match (choice, ranking) {
        (Ok(c), Ok(r)) => (c, r),
        (Err(f), _) | (_, Err(f)) => {
            return finish_failure(&chrome(), f, gz, visit, snap);
        }
    };
    let mut response = answer_in(
        state, req, page, segment, loaded, visit, gz, &choice, ranking, &chrome,
    );
    if let Some(code) = &choice.keep {
        add_cookie(
            &mut response,
            &session::set_cookie(CURRENCY_COOKIE, code, CURRENCY_SECS, visit.secure),
        );
    }
    response
}

/// [`answer_page`] once the page's currency and ranking are known: the cached page, a
/// 304, or the page rendered (and cached).
#[allow(clippy::too_many_arguments)]
fn answer_in<'c>(
    state: &State,
    req: &Request<Incoming>,
    page: PageKind,
    segment: &str,
    loaded: &Arc<Loaded>,
    visit: &Visit,
    gz: bool,
    choice: &Choice<'c>,
    ranking: Ranking,
    chrome: &dyn Fn() -> Chrome<'c>,
) -> HttpResponse {
    let path = req.uri().path();
    let query = req.uri().query();
    let snap = loaded.snapshot.data();
    let code = choice.cash.code();
    // Pages mark stale prices, which depend on the day: kept pages and their ETag are
    // the day's.
    let content_hash = state.generation(loaded, state.access.now_ms());
    let heads = Heads::of(loaded, &visit.viewer, content_hash, code);
    let (etag, last_modified) = (&heads.etag, &heads.last_modified);
    // The catalogue and a registrar's pages key on their query string; a TLD page on
    // its ranking; every page on its currency.
    let key_query = match page {
        PageKind::Catalogue | PageKind::Registrar => query.unwrap_or(""),
        PageKind::Tld if ranking != Ranking::Register => ranking.name(),
        _ => "",
    };
    let key = CacheKey::of(&visit.viewer, code, path, key_query);
    // `If-Modified-Since` alone cannot tell currencies apart: honoured for the default.
    let by_date = !choice.chosen;
    let cached = state.web.cache.get(content_hash, key.as_str());
    if (cached.is_some()
        || matches!(
            page,
            PageKind::Home | PageKind::Registrars | PageKind::Reference(_)
        ))
        && let Some(r) = not_modified(req, etag, last_modified, visit, by_date)
    {
        return r;
    }
    let page = match cached {
        Some(p) => p,
        None => {
            let chrome = Chrome {
                cash: choice.cash,
                ..chrome()
            };
            let outcome = render(state, page, segment, query, ranking, snap, &chrome, loaded);
            match outcome {
                Ok(Outcome::Cacheable(markup)) => {
                    let p = Arc::new(Page::new(markup.into_string()));
                    state
                        .web
                        .cache
                        .insert(content_hash, key.as_str().to_owned(), Arc::clone(&p));
                    if let Some(r) = not_modified(req, etag, last_modified, visit, by_date) {
                        return r;
                    }
                    p
                }
                Ok(Outcome::Private(status, markup)) => {
                    return html_response(status, markup.into_string().into(), gz, &[]);
                }
                Ok(Outcome::Redirect(status, to)) => return redirect(status, &to),
                Err(f) => return finish_failure(&chrome, f, gz, visit, snap),
            }
        }
    };
    let body = if gz {
        page.gzip().clone()
    } else {
        page.html.clone()
    };
    let mut r = Response::new(Body::from(body));
    *r.headers_mut() = heads.ok[usize::from(gz)].clone();
    r
}

/// A 304 when the client already has this page: `If-None-Match` with our `ETag`, or
/// (without `If-None-Match`, only for visitors, whose page cannot change with a
/// sign-in, and only when `by_date`: no currency was chosen) `If-Modified-Since` equal
/// to our `Last-Modified`.
fn not_modified(
    req: &Request<Incoming>,
    etag: &str,
    last_modified: &str,
    visit: &Visit,
    by_date: bool,
) -> Option<HttpResponse> {
    if !visit.sent.has(Sent::CONDITIONAL) {
        return None;
    }
    let headers = req.headers();
    let hit = match headers.get(header::IF_NONE_MATCH) {
        Some(v) => v.to_str().is_ok_and(|v| etag_matches(v, etag)),
        None => {
            by_date
                && !visit.viewer.signed_in
                && !visit.clear_session
                && headers
                    .get(header::IF_MODIFIED_SINCE)
                    .is_some_and(|v| v.as_bytes() == last_modified.as_bytes())
        }
    };
    if !hit {
        return None;
    }
    let mut r = Response::new(Body::default());
    *r.status_mut() = StatusCode::NOT_MODIFIED;
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    if let Ok(v) = HeaderValue::from_str(last_modified) {
        h.insert(header::LAST_MODIFIED, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    h.insert(
        header::VARY,
        HeaderValue::from_static("Cookie, Accept-Encoding"),
    );
    Some(r)
}

fn finish_failure(
    chrome: &Chrome<'_>,
    f: Failure,
    gz: bool,
    _visit: &Visit,
    snap: &ArchivedSnapshotData,
) -> HttpResponse {
    let markup = if f.status == StatusCode::NOT_FOUND && f.title.starts_with('.') {
        // An unknown TLD: its close names.
        let name = &f.title[1..];
        let close = crate::query::close_names(snap, name, 5);
        pages::not_found(chrome, Some(name), &close)
    } else {
        pages::error(chrome, &f.title, &f.detail)
    };
    html_response(f.status, markup.into_string().into(), gz, &[])
}

/// `/tld/.COM` → `/tld/com`; `None` when the segment is canonical already.
fn canonical_tld(segment: &str) -> Result<Option<String>, Failure> {
    match params::path_tld(segment) {
        Ok(name) if name == segment => Ok(None),
        Ok(name) => Ok(Some(format!("/tld/{name}"))),
        Err(_) => {
            let shown = params::percent_decode(segment, false)
                .map(|s| s.into_owned())
                .unwrap_or_else(|_| segment.to_owned());
            Err(Failure::new(
                StatusCode::NOT_FOUND,
                &format!(".{}", shown.trim_start_matches('.')),
                "not a TLD",
            ))
        }
    }
}

fn canonical_registrar(segment: &str) -> Result<Option<String>, Failure> {
    match params::path_registrar(segment) {
        Ok(key) if key == segment => Ok(None),
        Ok(key) => Ok(Some(format!("/registrars/{key}"))),
        Err(_) => Err(unknown_registrar()),
    }
}

fn unknown_registrar() -> Failure {
    Failure::new(
        StatusCode::NOT_FOUND,
        "No such registrar",
        "No registrar has this key in this data; the list of registrars is at /registrars.",
    )
}

/// An empty form field is the same as a field left out.
fn non_empty(v: Option<std::borrow::Cow<'_, str>>) -> Option<std::borrow::Cow<'_, str>> {
    v.filter(|s| !s.trim().is_empty())
}

/// The cache key of a page (the viewer's plan, the currency, the path, the query it
/// reads), written
/// into a buffer this thread keeps (given back when the key is dropped), so that
/// looking a page up allocates nothing.
struct CacheKey(String);

thread_local! {
    static KEY_BUFFER: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

impl CacheKey {
    fn of(viewer: &Viewer, currency: &str, path: &str, query: &str) -> CacheKey {
        let mut key = KEY_BUFFER.take();
        key.clear();
        key.push_str(if viewer.signed_in { "true:" } else { "false:" });
        key.push_str(&viewer.plan);
        key.push('|');
        key.push_str(currency);
        key.push('|');
        key.push_str(path);
        key.push('?');
        key.push_str(query);
        CacheKey(key)
    }

    fn as_str(&self) -> &str {
        &self.0
    }
}

impl Drop for CacheKey {
    fn drop(&mut self) {
        KEY_BUFFER.set(std::mem::take(&mut self.0));
    }
}

/// Renders, ahead of the first visitor, the pages visitors ask for most: the home page,
/// the catalogue's first page, the registrars and the page of each free TLD; a page a
/// request rendered first is left as it is. Returns how many pages were rendered.
/// `serve` runs [`warm_in_steps`] instead, between requests.
pub fn warm(state: &State) -> usize {
    let Some(loaded) = state.store.load() else {
        return 0;
    };
    warm_list()
        .into_iter()
        .filter(|(page, path, segment)| warm_one(state, &loaded, *page, path, segment))
        .count()
}

/// [`warm`] one page at a time, yielding to the runtime after each page rendered (a page
/// is ~0.1 ms of work; all of them ~3 ms), so that requests are answered in between:
/// what `serve` runs when a snapshot is loaded (at start and after each reload).
pub async fn warm_in_steps(state: &State) -> usize {
    let Some(loaded) = state.store.load() else {
        return 0;
    };
    let mut rendered = 0;
    for (page, path, segment) in warm_list() {
        if warm_one(state, &loaded, page, &path, &segment) {
            rendered += 1;
            tokio::task::yield_now().await;
        }
    }
    rendered
}

/// The pages [`warm`] renders: page, path and the path's parameter.
fn warm_list() -> Vec<(PageKind, String, String)> {
    let mut paths: Vec<(PageKind, String, String)> = vec![
        (PageKind::Home, "/".to_owned(), String::new()),
        (PageKind::Catalogue, "/tlds".to_owned(), String::new()),
        (
            PageKind::Registrars,
            "/registrars".to_owned(),
            String::new(),
        ),
    ];
    paths.extend(
        crate::tld::FREE_TLDS
            .iter()
            .map(|t| (PageKind::Tld, format!("/tld/{t}"), (*t).to_owned())),
    );
    paths
}

/// Renders the page at `path` of the snapshot `loaded` for a visitor and caches it,
/// unless it is cached already. True if it rendered it.
fn warm_one(state: &State, loaded: &Loaded, page: PageKind, path: &str, segment: &str) -> bool {
    let snap = loaded.snapshot.data();
    let content_hash = state.generation(loaded, state.access.now_ms());
    let viewer = Viewer::of(&state.access.plans().public(), false);
    let key = CacheKey::of(&viewer, "USD", path, "");
    if state.web.cache.get(content_hash, key.as_str()).is_some() {
        return false;
    }
    let date = data::data_date(snap);
    let currencies: Vec<&str> = if shows_prices(page) {
        crate::query::money::currencies(snap).collect()
    } else {
        Vec::new()
    };
    let chrome = Chrome {
        viewer: &viewer,
        data_date: &date,
        path,
        cash: Cash::USD,
        currencies: &currencies,
    };
    match render(
        state,
        page,
        segment,
        None,
        Ranking::Register,
        snap,
        &chrome,
        loaded,
    ) {
        Ok(Outcome::Cacheable(markup)) => {
            let page = Arc::new(Page::new(markup.into_string()));
            state
                .web
                .cache
                .insert(content_hash, key.as_str().to_owned(), page);
            true
        }
        _ => false,
    }
}

#[allow(clippy::too_many_arguments)]
fn render(
    state: &State,
    page: PageKind,
    segment: &str,
    query: Option<&str>,
    ranking: Ranking,
    snap: &ArchivedSnapshotData,
    chrome: &Chrome<'_>,
    loaded: &Loaded,
) -> Result<Outcome, Failure> {
    let public_url = &state.config.public_url;
    let sight = chrome.viewer.sight;
    let snapshot_id = loaded.snapshot.header().content_hash as u64;
    match page {
        PageKind::Home => {
            let rows =
                data::cheapest_of(snap, &crate::tld::FREE_TLDS, state.freshness(false), sight)
                    .map_err(data_failure)?;
            // One entry is enough: the page wants the total.
            let none = params::values_of([None; 6]);
            let one = CatalogueParams {
                limit: 1,
                ..CatalogueParams::from_values(&none).map_err(bad_request)?
            };
            let total = crate::query::catalogue_view(snap, &one.request(sight, snapshot_id))
                .map_err(data_failure)?
                .total;
            Ok(Outcome::Cacheable(pages::home(
                chrome,
                &rows,
                snap.sold_tld_count(),
                snap.tld_count(),
                total as usize,
                snap.registrar_count(),
            )))
        }
        PageKind::Tld => {
            let page = data::tld_page(
                snap,
                segment,
                sight,
                state.freshness(false),
                ranking,
                chrome.cash,
            )
            .map_err(|e| match e {
                QueryError::UnknownTlds(_) => {
                    Failure::new(StatusCode::NOT_FOUND, &format!(".{segment}"), "unknown")
                }
                other => data_failure(other),
            })?;
            let end = crate::time::parse_date(&page.data_date).unwrap_or(0) + 1;
            Ok(Outcome::Cacheable(pages::tld(chrome, &page, end)))
        }
        PageKind::Catalogue => {
            // A form sends its empty fields: an empty value is an absent one here. Its
            // `currency` is the page's choice, already made (`currency_choice`).
            let values = params::pick(query, CatalogueParams::NAMES)
                .map_err(bad_request)?
                .map(non_empty);
            let p = CatalogueParams::from_values(&values).map_err(bad_request)?;
            let page = crate::query::catalogue_view(snap, &p.request(sight, snapshot_id))
                .map_err(data_failure)?;
            let q = p.q.clone();
            let exact = q.as_deref().and_then(|q| {
                let name = crate::tld::normalize(q).ok()?;
                crate::query::tld_facts(snap, &name)
            });
            let filters = CatalogueFilters {
                q: q.clone(),
                kind: p.kind.map(str::to_owned),
                sort: p.sort,
                limit: p.limit,
                paged: p.cursor.is_some(),
            };
            let terms: Vec<_> = page
                .tlds
                .iter()
                .map(|e| {
                    e.cheapest_register.as_ref().map_or(OfferTerms::NONE, |p| {
                        data::terms_of(snap, e.facts.tld, p.registrar_key)
                    })
                })
                .collect();
            Ok(Outcome::Cacheable(pages::catalogue(
                chrome,
                &filters,
                &page,
                &terms,
                exact.map(|f| (f.tld, f.unicode)),
            )))
        }
        PageKind::Reference(doc) => Ok(Outcome::Cacheable(reference::render(chrome, doc))),
        PageKind::Registrars => {
            let list: Vec<_> = crate::query::registrars_view(snap).collect();
            Ok(Outcome::Cacheable(pages::registrars(chrome, &list)))
        }
        PageKind::Registrar => {
            // The page's own length, not the API's `limit`: only the cursor is read.
            let [cursor] = params::pick(query, ["cursor"]).map_err(bad_request)?;
            let values = [None, non_empty(cursor), None];
            let cursor = RegistrarParams::from_values(&values)
                .map_err(bad_request)?
                .cursor;
            let req = RegistrarRequest {
                key: segment,
                limit: REGISTRAR_PAGE,
                cursor,
                sight,
                public_url,
                snapshot: snapshot_id,
            };
            let page = match crate::query::registrar_view(snap, &req) {
                Ok(p) => p,
                Err(QueryError::UnknownRegistrar(_)) => {
                    return Err(unknown_registrar());
                }
                Err(QueryError::InvalidParameter { .. }) => {
                    // A page link from older data: start again.
                    return Ok(Outcome::Redirect(
                        StatusCode::SEE_OTHER,
                        format!("/registrars/{segment}"),
                    ));
                }
                Err(e) => return Err(data_failure(e)),
            };
            let terms = data::registrar_terms(snap, &page);
            let cursor_text = cursor.map(|c| c.to_string());
            Ok(Outcome::Cacheable(pages::registrar(
                chrome,
                &page,
                &terms,
                cursor.is_some(),
                cursor_text.as_deref(),
            )))
        }
        _ => Ok(Outcome::Private(
            StatusCode::NOT_FOUND,
            pages::not_found(chrome, None, &[]),
        )),
    }
}

/// `next` of the sign-in form: a path on this site, nothing else.
fn safe_next(next: Option<&str>) -> Option<&str> {
    next.filter(|n| {
        n.starts_with('/')
            && !n.starts_with("//")
            && !n.starts_with("/\\")
            && n.len() <= 512
            && n.bytes().all(|b| b.is_ascii_graphic())
    })
}

fn signin_get(
    state: &State,
    req: &Request<Incoming>,
    loaded: &Loaded,
    visit: &Visit,
    gz: bool,
) -> HttpResponse {
    let snap = loaded.snapshot.data();
    let date = data::data_date(snap);
    let chrome = Chrome {
        viewer: &visit.viewer,
        data_date: &date,
        path: req.uri().path(),
        cash: Cash::USD,
        currencies: &[],
    };
    let secret = &state.config.session_secret;
    let (nonce, new_cookie) = match &visit.csrf_nonce {
        Some(n) => (n.clone(), None),
        None => {
            let n = session::new_nonce();
            let c = session::set_cookie(csrf_cookie(visit.secure), &n, SESSION_SECS, visit.secure);
            (n, Some(c))
        }
    };
    let next = params::pick(req.uri().query(), ["next"])
        .ok()
        .and_then(|[n]| n)
        .map(|n| n.into_owned());
    let markup = match &visit.session {
        Some(s) => {
            let csrf = secret.csrf_token(&nonce, Some(&s.nonce));
            pages::signin(
                &chrome,
                &SignIn::Account {
                    csrf: &csrf,
                    key_id: &s.key_id,
                },
            )
        }
        None => {
            let csrf = secret.csrf_token(&nonce, None);
            pages::signin(
                &chrome,
                &SignIn::Form {
                    csrf: &csrf,
                    next: safe_next(next.as_deref()),
                    error: None,
                },
            )
        }
    };
    let cookies: Vec<String> = new_cookie.into_iter().collect();
    html_response(StatusCode::OK, markup.into_string().into(), gz, &cookies)
}

/// Whether a form post comes from this site with a good token.
fn csrf_ok(
    secret: &Secret,
    parts: &hyper::http::request::Parts,
    token: Option<&str>,
    visit: &Visit,
) -> bool {
    let headers = &parts.headers;
    // A browser says where a form was sent from; another origin is refused outright.
    if let Some(site) = headers.get("sec-fetch-site")
        && !matches!(site.as_bytes(), b"same-origin" | b"none")
    {
        return false;
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers
            .get(header::HOST)
            .map(|h| h.as_bytes())
            .unwrap_or_default();
        let origin = origin.as_bytes();
        let same = [&b"http://"[..], b"https://"]
            .iter()
            .any(|scheme| origin.strip_prefix(*scheme) == Some(host));
        if !same {
            return false;
        }
    }
    let (Some(token), Some(nonce)) = (token, visit.csrf_nonce.as_deref()) else {
        return false;
    };
    secret.check_csrf(
        token,
        nonce,
        visit.session.as_ref().map(|s| s.nonce.as_str()),
    )
}

/// Reads a form body (`application/x-www-form-urlencoded`, at most
/// [`MAX_FORM_BYTES`], within `timeout`).
async fn read_form(
    req: Request<Incoming>,
    timeout: std::time::Duration,
) -> Result<(hyper::http::request::Parts, String), Failure> {
    let form = req.headers().get(header::CONTENT_TYPE).is_some_and(|v| {
        v.as_bytes()
            .starts_with(b"application/x-www-form-urlencoded")
    });
    if !form {
        return Err(Failure::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Not a form",
            "This address takes a form (application/x-www-form-urlencoded).",
        ));
    }
    let (parts, body) = crate::api::read_body(req, MAX_FORM_BYTES, timeout)
        .await
        .map_err(|p| Failure::new(p.status(), p.title(), p.detail()))?;
    let text = String::from_utf8(body.to_vec()).map_err(|_| {
        Failure::new(
            StatusCode::BAD_REQUEST,
            "Bad request",
            "The form is not UTF-8.",
        )
    })?;
    Ok((parts, text))
}

fn forged(chrome: &Chrome<'_>) -> HttpResponse {
    let markup = pages::error(
        chrome,
        "Form refused",
        "This form was not sent from this site's own page, or the page was too old. \
         Reload the page and send the form again.",
    );
    html_response(
        StatusCode::FORBIDDEN,
        markup.into_string().into(),
        false,
        &[],
    )
}

/// A form posted to a page: the form, and what the page's chrome shows (the data date,
/// the path).
struct Posted {
    date: String,
    path: String,
    parts: hyper::http::request::Parts,
    body: String,
}

impl Posted {
    /// Reads the form of `req`; one that cannot be read is answered with its error
    /// page.
    async fn read(
        state: &State,
        req: Request<Incoming>,
        loaded: &Loaded,
        visit: &Visit,
    ) -> Result<Posted, HttpResponse> {
        let date = data::data_date(loaded.snapshot.data());
        let path = req.uri().path().to_owned();
        match read_form(req, state.config.body_timeout).await {
            Ok((parts, body)) => Ok(Posted {
                date,
                path,
                parts,
                body,
            }),
            Err(f) => {
                let chrome = Chrome {
                    viewer: &visit.viewer,
                    data_date: &date,
                    path: &path,
                    cash: Cash::USD,
                    currencies: &[],
                };
                Err(html_response(
                    f.status,
                    pages::error(&chrome, &f.title, &f.detail)
                        .into_string()
                        .into(),
                    false,
                    &[],
                ))
            }
        }
    }

    fn chrome<'a>(&'a self, visit: &'a Visit) -> Chrome<'a> {
        Chrome {
            viewer: &visit.viewer,
            data_date: &self.date,
            path: &self.path,
            cash: Cash::USD,
            currencies: &[],
        }
    }
}

async fn signin_post(
    state: &State,
    req: Request<Incoming>,
    loaded: &Loaded,
    visit: &Visit,
) -> HttpResponse {
    let form = match Posted::read(state, req, loaded, visit).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let (chrome, parts, body) = (form.chrome(visit), &form.parts, &form.body);
    let Ok([csrf, key, next]) = params::pick(Some(body), ["csrf", "key", "next"]) else {
        return forged(&chrome);
    };
    let secret = &state.config.session_secret;
    if !csrf_ok(secret, parts, csrf.as_deref(), visit) {
        return forged(&chrome);
    }
    let next = safe_next(next.as_deref()).unwrap_or("/signin").to_owned();
    let key = key.as_deref().map(str::trim).unwrap_or("");
    match state
        .access
        .identify(key.as_bytes())
        .filter(|_| !key.is_empty())
    {
        Some((id, _plan)) => {
            let now = state.access.now_ms().div_euclid(1000);
            let generation = state.config.sign_outs.generation(&id);
            let cookie = secret.seal(&Session::new(&id, generation, now));
            let mut r = redirect(StatusCode::SEE_OTHER, &next);
            let name = session_cookie(visit.secure);
            add_cookie(
                &mut r,
                &session::set_cookie(name, &cookie, SESSION_SECS, visit.secure),
            );
            r
        }
        None => {
            let nonce = visit.csrf_nonce.clone().unwrap_or_default();
            let csrf = secret.csrf_token(&nonce, visit.session.as_ref().map(|s| s.nonce.as_str()));
            let markup = pages::signin(
                &chrome,
                &SignIn::Form {
                    csrf: &csrf,
                    next: Some(&next)
                        .filter(|n| n.as_str() != "/signin")
                        .map(|n| n.as_str()),
                    error: Some("That API key is not valid. Check it and try again."),
                },
            );
            html_response(
                StatusCode::FORBIDDEN,
                markup.into_string().into(),
                false,
                &[],
            )
        }
    }
}

async fn signout(
    state: &State,
    req: Request<Incoming>,
    loaded: &Loaded,
    visit: &Visit,
) -> HttpResponse {
    let form = match Posted::read(state, req, loaded, visit).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let (chrome, parts, body) = (form.chrome(visit), &form.parts, &form.body);
    let Ok([csrf]) = params::pick(Some(body), ["csrf"]) else {
        return forged(&chrome);
    };
    if !csrf_ok(&state.config.session_secret, parts, csrf.as_deref(), visit) {
        return forged(&chrome);
    }
    // The key's sessions end here, a copy of the cookie included: in force at once, and
    // on disk (when kept there) before the answer, so a restart does not revive them.
    if let Some(s) = &visit.session {
        let sign_outs = Arc::clone(&state.config.sign_outs);
        let key_id = s.key_id.clone();
        let written = crate::blocking::run(move || sign_outs.end_sessions(&key_id)).await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!(
                "tldsnap: a sign-out could not be saved (it holds until the server stops): {e}"
            ),
            Err(_) => eprintln!("tldsnap: a sign-out could not be saved: the write panicked"),
        }
    }
    let mut r = redirect(StatusCode::SEE_OTHER, "/");
    add_cookie(
        &mut r,
        &session::set_cookie(session_cookie(visit.secure), "", 0, visit.secure),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_key_written_into_the_threads_buffer_is_the_key() {
        let visitor = Viewer::visitor();
        let member = Viewer::of(
            crate::access::plans::Plans::default().get("pro").unwrap(),
            true,
        );
        for (viewer, path, query) in [
            (&visitor, "/", ""),
            (&member, "/tlds", "q=co&sort=price"),
            (&visitor, "/registrars/namecheap", "cursor=abc"),
        ] {
            let expected = format!(
                "{}:{}|EUR|{}?{}",
                viewer.signed_in, viewer.plan, path, query
            );
            // Twice: the second key is written into the first one's buffer.
            for _ in 0..2 {
                assert_eq!(CacheKey::of(viewer, "EUR", path, query).as_str(), expected);
            }
        }
    }

    #[test]
    fn gzip_is_taken_unless_refused() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            accepts_gzip(&m)
        };
        assert!(h("gzip, deflate, br"));
        assert!(h("br;q=1.0, gzip;q=0.8"));
        assert!(h("*"));
        assert!(!h("gzip;q=0"));
        assert!(!h("br"));
        assert!(!h("identity"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn etags_compare_weakly() {
        assert!(etag_matches("W/\"a\"", "W/\"a\""));
        assert!(etag_matches("\"x\", W/\"a\"", "W/\"a\""));
        assert!(etag_matches("*", "W/\"a\""));
        assert!(!etag_matches("W/\"b\"", "W/\"a\""));
    }

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/tld/museum")), Some("/tld/museum"));
        for bad in [
            "//evil.example",
            "https://evil.example",
            "/\\evil",
            "/a b",
            "",
        ] {
            assert_eq!(safe_next(Some(bad)), None, "{bad}");
        }
    }
}
