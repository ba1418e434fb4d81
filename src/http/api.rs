//! The request pipeline: one function from a request head to a response.
//!
//! For the price endpoints the checks run in the contract's order:
//!
//! ```text
//!  size (414/431) → route (404) → method (405) → snapshot loaded (503)
//!    → key (401) → rate limit (429) → parameters (400) → plan (403)
//!    → existence (404) → credits (429) → answer (200, one credit spent)
//! ```
//!
//! The snapshot is taken once, at the start, and held (an `Arc`) until the body is
//! written, so a request answered during a swap is answered wholly from one snapshot.
//! The body is written by the query layer into one buffer sized from the route's
//! previous answer and handed to hyper as it is ([`Body`]), without a copy.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response};
use smallvec::SmallVec;

use super::body::Body;
use super::metrics::SnapshotFacts;
use super::problem::Problem;
use super::router::{self, ALLOW, RouteId};
use super::server::State;
use super::{openapi, params};
use crate::access::{Caller, KeyCache, MeterHeaders};
use crate::query::{self, CheapestRequest, PricesRequest, RegistrarsRequest, Shape};
use crate::store::Loaded;

/// The response type of every route.
pub type HttpResponse = Response<Body>;

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const PROMETHEUS_TEXT: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
const RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("ratelimit-limit");
const RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("ratelimit-remaining");
const RATELIMIT_RESET: HeaderName = HeaderName::from_static("ratelimit-reset");
const CREDITS_REMAINING: HeaderName = HeaderName::from_static("x-credits-remaining");
const API_KEY: HeaderName = HeaderName::from_static("x-api-key");

/// Smallest body buffer reserved for an answer; answers of one TLD fit.
const MIN_BODY_CAPACITY: usize = 1024;
/// Largest reservation taken from the hint, so one huge answer (100 TLDs, limit 100)
/// does not make every later small answer reserve as much; bigger bodies still grow.
const MAX_BODY_CAPACITY: usize = 64 * 1024;

/// What the requests of one connection share.
#[derive(Debug)]
pub struct Connection {
    /// The client's address (IPv4-mapped IPv6 addresses canonicalised), for per-address
    /// rate limits.
    pub client: IpAddr,
    /// The last API key this connection sent: hashed once, not once per request.
    key_cache: Mutex<KeyCache>,
    /// Bumped when a request starts being answered and again when its answer is ready:
    /// odd while one is being answered. The server's watchdog reads it to tell an idle
    /// or slow client from a busy one.
    stamp: AtomicU64,
}

impl Connection {
    /// The context of a new connection from `client`.
    pub fn new(client: IpAddr) -> Connection {
        Connection {
            client,
            key_cache: Mutex::new(KeyCache::default()),
            stamp: AtomicU64::new(0),
        }
    }

    /// The progress stamp: it changes whenever a request starts or finishes.
    pub fn stamp(&self) -> u64 {
        self.stamp.load(Relaxed)
    }

    /// Whether a request was being answered when `stamp` was read.
    pub fn is_answering(stamp: u64) -> bool {
        stamp % 2 == 1
    }

    /// Takes the key cache out (HTTP/1 answers a connection's requests one at a time,
    /// so it is always there); [`Connection::put_key_cache`] puts it back. The lock is
    /// never held across an `.await`.
    fn take_key_cache(&self) -> KeyCache {
        std::mem::take(&mut *self.key_cache.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn put_key_cache(&self, cache: KeyCache) {
        *self.key_cache.lock().unwrap_or_else(|e| e.into_inner()) = cache;
    }
}

/// Answers one request and records it in the metrics. Never fails: every error is a
/// problem response.
pub async fn handle<B>(state: &State, req: Request<B>, conn: &Connection) -> HttpResponse {
    let started = Instant::now();
    // One task serves the connection, so a plain load and store is enough.
    conn.stamp.store(conn.stamp() + 1, Relaxed);
    let (route, response) = dispatch(state, &req, conn, started).await;
    conn.stamp.store(conn.stamp() + 1, Relaxed);
    state.metrics.record(
        route.map(|r| r as usize),
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

async fn dispatch<B>(
    state: &State,
    req: &Request<B>,
    conn: &Connection,
    started: Instant,
) -> (Option<RouteId>, HttpResponse) {
    let config = &state.config;
    // hyper refuses request lines past its own buffer (a bare 414/431 and a close);
    // below that, these limits answer with a problem and keep the connection.
    let target_len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if target_len > config.max_url_bytes {
        return (
            None,
            Problem::UriTooLong {
                max: config.max_url_bytes,
            }
            .into_response(),
        );
    }
    let header_bytes: usize = req
        .headers()
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len() + 4)
        .sum();
    if header_bytes > config.max_header_bytes {
        return (
            None,
            Problem::HeadersTooLarge {
                max: config.max_header_bytes,
            }
            .into_response(),
        );
    }
    let Some((route, segment)) = router::find(req.uri().path()) else {
        return (None, Problem::NotFound.into_response());
    };
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return (
            Some(route),
            Problem::MethodNotAllowed { allow: ALLOW }.into_response(),
        );
    }
    let response = match route {
        RouteId::Healthz => json_response(Body::from(b"{\"status\":\"ok\"}".as_slice())),
        RouteId::Readyz => readyz(state),
        RouteId::Metrics => metrics(state),
        RouteId::OpenApi => json_response(Body::from(openapi::document())),
        RouteId::ClientCheapest
        | RouteId::PublicCheapest
        | RouteId::ClientPrices
        | RouteId::PublicPrices
        | RouteId::PublicPricesV1
        | RouteId::ClientRegistrars => {
            price_endpoint(state, req, route, segment, conn, started).await
        }
    };
    (Some(route), response)
}

fn readyz(state: &State) -> HttpResponse {
    let Some(loaded) = state.store.load() else {
        return Problem::NotReady.into_response();
    };
    let header = loaded.snapshot.header();
    let mut body = Vec::with_capacity(160);
    body.extend_from_slice(b"{\"status\":\"ready\",\"snapshot\":{\"hash\":\"");
    body.extend_from_slice(header.hash_hex().as_bytes());
    body.extend_from_slice(b"\",\"data_updated\":\"");
    crate::time::write_iso_millis(header.data_updated_ms, &mut body);
    body.extend_from_slice(b"\",\"loaded_at\":\"");
    crate::time::write_iso_millis(loaded.loaded_at_ms, &mut body);
    body.extend_from_slice(b"\"}}");
    json_response(Body::from(body))
}

fn metrics(state: &State) -> HttpResponse {
    let facts = state.store.load().map(|loaded| facts(&loaded));
    let reloads = super::metrics::ReloadFacts {
        successes: state.store.reload_successes(),
        failures: state.store.reload_failures(),
    };
    let text = state.metrics.render(facts.as_ref(), reloads);
    let mut response = Response::new(Body::from(text.into_bytes()));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, PROMETHEUS_TEXT);
    response
}

/// What `/metrics` reports of a loaded snapshot.
pub fn facts(loaded: &Loaded) -> SnapshotFacts {
    let header = loaded.snapshot.header();
    let data = loaded.snapshot.data();
    SnapshotFacts {
        hash_hex: header.hash_hex(),
        format_version: header.version,
        data_updated_ms: header.data_updated_ms,
        loaded_at_ms: loaded.loaded_at_ms,
        tlds: data.tld_count(),
        registrars: data.registrar_count(),
        offers: data.offer_count(),
    }
}

async fn price_endpoint<B>(
    state: &State,
    req: &Request<B>,
    route: RouteId,
    segment: &str,
    conn: &Connection,
    started: Instant,
) -> HttpResponse {
    // One snapshot for the whole request.
    let Some(loaded) = state.store.load() else {
        return Problem::NotReady.into_response();
    };

    // Key (401) and rate limit (429).
    // A scan of the few request headers costs less than hashing the name for a lookup.
    let mut keys = req
        .headers()
        .iter()
        .filter_map(|(name, value)| (*name == API_KEY).then_some(value));
    let key = match (keys.next(), keys.next()) {
        (None, _) => None,
        // Two keys in one request: refuse rather than guess which one was meant.
        (Some(_), Some(_)) => return Problem::InvalidApiKey.into_response(),
        (Some(v), None) if v.is_empty() => None,
        (Some(v), None) => Some(v.as_bytes()),
    };
    let mut cache = conn.take_key_cache();
    let admitted = state
        .access
        .admit_cached(&mut cache, key, conn.client, route.route().requires_key)
        .await;
    conn.put_key_cache(cache);
    let mut caller = match admitted {
        Ok(caller) => caller,
        Err(denial) => {
            let (problem, meter) = Problem::from_denial(denial);
            return with_meter(problem.into_response(), meter.as_ref());
        }
    };

    // Parameters (400), plan (403), existence (404): all in `answer`, which writes the
    // body into `out`.
    let hint = &state.body_size_hints[route as usize];
    let capacity = hint
        .load(Relaxed)
        .clamp(MIN_BODY_CAPACITY, MAX_BODY_CAPACITY);
    let mut out = Vec::with_capacity(capacity);
    if let Err(problem) = answer(
        state,
        &loaded,
        &caller,
        req.uri().query(),
        route,
        segment,
        started,
        &mut out,
    ) {
        return with_meter(problem.into_response(), caller.headers.as_ref());
    }

    // Credits (429), then the answer with one credit spent.
    if let Err(denial) = state.access.spend(&mut caller).await {
        let (problem, meter) = Problem::from_denial(denial);
        return with_meter(
            problem.into_response(),
            meter.as_ref().or(caller.headers.as_ref()),
        );
    }
    hint.store(out.len(), Relaxed);
    let mut response = Response::new(Body::from(out));
    *response.headers_mut() = answer_headers(caller.headers.as_ref());
    response
}

/// Parses the parameters of `route`, applies the plan, and writes the answer.
#[allow(clippy::too_many_arguments)]
fn answer(
    state: &State,
    loaded: &Loaded,
    caller: &Caller,
    query: Option<&str>,
    route: RouteId,
    segment: &str,
    started: Instant,
    out: &mut Vec<u8>,
) -> Result<(), Problem> {
    let data = loaded.snapshot.data();
    match route {
        RouteId::ClientCheapest | RouteId::PublicCheapest => {
            let [tlds, limit] = params::pick(query, ["tlds", "limit"])?;
            let tlds = params::tlds(tlds.as_deref())?;
            let limit = params::limit(limit.as_deref())?;
            check_plan(caller, &tlds)?;
            let names = as_strs(&tlds);
            let client = route == RouteId::ClientCheapest;
            let req = CheapestRequest {
                tlds: &names,
                limit,
                shape: if client { Shape::Client } else { Shape::Public },
                tier: client.then(|| caller.tier()),
            };
            query::cheapest(data, &req, out).map_err(Problem::from_query)
        }
        RouteId::ClientPrices | RouteId::PublicPrices | RouteId::PublicPricesV1 => {
            let [tlds, registrars] = params::pick(query, ["tlds", "registrars"])?;
            let tlds = params::tlds(tlds.as_deref())?;
            let registrars = params::registrars(registrars.as_deref())?;
            check_plan(caller, &tlds)?;
            let names = as_strs(&tlds);
            let keys = registrars.as_deref().map(as_strs);
            let req = PricesRequest {
                tlds: &names,
                registrars: keys.as_deref(),
                started,
            };
            query::prices(data, &req, out).map_err(Problem::from_query)
        }
        RouteId::ClientRegistrars => {
            let tld = params::path_tld(segment)?;
            let [include_prices] = params::pick(query, ["include_prices"])?;
            let include_prices =
                params::boolean("include_prices", include_prices.as_deref(), false)?;
            check_plan(caller, std::slice::from_ref(&tld))?;
            let req = RegistrarsRequest {
                tld: &tld,
                include_prices,
                limit: caller.registrar_list_limit(),
                public_url: &state.config.public_url,
            };
            query::registrars(data, &req, out).map_err(Problem::from_query)
        }
        RouteId::Healthz | RouteId::Readyz | RouteId::Metrics | RouteId::OpenApi => Ok(()),
    }
}

/// The names as `&str`s, up to 16 inline, so the usual request allocates no second
/// list.
fn as_strs<'a>(items: &'a [Cow<'_, str>]) -> SmallVec<[&'a str; 16]> {
    items.iter().map(|item| item.as_ref()).collect()
}

/// 403 `tld_not_in_plan` when any TLD asked for is outside the caller's plan (checked
/// before existence: a free caller learns nothing about paid TLDs).
fn check_plan(caller: &Caller, tlds: &[Cow<'_, str>]) -> Result<(), Problem> {
    if tlds.iter().all(|t| caller.tld_allowed(t)) {
        return Ok(());
    }
    Err(Problem::TldNotInPlan {
        tlds: tlds
            .iter()
            .filter(|t| !caller.tld_allowed(t))
            .map(|t| t.to_string())
            .collect(),
        plan: caller.tier().to_owned(),
    })
}

/// A 200 JSON answer without metering headers.
fn json_response(body: Body) -> HttpResponse {
    let mut response = Response::new(body);
    *response.headers_mut() = answer_headers(None);
    response
}

/// The headers of a 200 answer: `Content-Type`, then the metering headers of a keyed
/// (or metered public) request.
///
/// The map is cloned from a template built once and its values are set by position,
/// so no header name is hashed per response (inserting the four metering headers one
/// by one was ~900 instructions of a ~16,000-instruction request; see
/// `docs/PERFORMANCE.md`).
fn answer_headers(meter: Option<&MeterHeaders>) -> HeaderMap {
    /// Without metering; with the rate-limit headers; with those and the credits.
    static TEMPLATES: OnceLock<[HeaderMap; 3]> = OnceLock::new();
    let [plain, rate, credits] = TEMPLATES.get_or_init(|| {
        let zero = HeaderValue::from_static("0");
        let mut plain = HeaderMap::with_capacity(1);
        plain.insert(header::CONTENT_TYPE, JSON);
        let mut rate = HeaderMap::with_capacity(4);
        rate.insert(header::CONTENT_TYPE, JSON);
        rate.insert(RATELIMIT_LIMIT, zero.clone());
        rate.insert(RATELIMIT_REMAINING, zero.clone());
        rate.insert(RATELIMIT_RESET, zero.clone());
        let mut credits = HeaderMap::with_capacity(5);
        credits.clone_from(&rate);
        credits.insert(CREDITS_REMAINING, zero);
        [plain, rate, credits]
    });
    let Some(m) = meter else {
        return plain.clone();
    };
    let mut headers = match m.credits_remaining {
        Some(_) => credits.clone(),
        None => rate.clone(),
    };
    // The template's order: content type, limit, remaining, reset[, credits].
    let values = [
        Some(u64::from(m.limit)),
        Some(u64::from(m.remaining)),
        Some(m.reset_secs),
        m.credits_remaining,
    ];
    for (slot, value) in headers
        .values_mut()
        .skip(1)
        .zip(values.into_iter().flatten())
    {
        *slot = int_header(value);
    }
    headers
}

/// Adds the metering headers of a keyed (or metered public) request to a problem.
fn with_meter(mut response: HttpResponse, meter: Option<&MeterHeaders>) -> HttpResponse {
    if let Some(m) = meter {
        let headers: &mut HeaderMap = response.headers_mut();
        headers.insert(RATELIMIT_LIMIT, int_header(m.limit.into()));
        headers.insert(RATELIMIT_REMAINING, int_header(m.remaining.into()));
        headers.insert(RATELIMIT_RESET, int_header(m.reset_secs));
        if let Some(credits) = m.credits_remaining {
            headers.insert(CREDITS_REMAINING, int_header(credits));
        }
    }
    response
}

/// Integers up to this are served from a table of static header values: every burst
/// of the default plans, every `RateLimit-Remaining` and `RateLimit-Reset` under them.
const SMALL_INT_HEADERS: u64 = 1024;

/// A header value holding `v`. Small values come from a table built once, whose entries
/// clone without allocating; larger ones (credits left) are formatted.
fn int_header(v: u64) -> HeaderValue {
    static TABLE: OnceLock<Vec<HeaderValue>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..=SMALL_INT_HEADERS)
            .map(|i| HeaderValue::from_static(Box::leak(i.to_string().into_boxed_str())))
            .collect()
    });
    match table.get(v as usize) {
        Some(h) => h.clone(),
        // What an unlimited rate reports as its limit and remaining requests.
        None if v == u64::from(u32::MAX) => HeaderValue::from_static("4294967295"),
        None => HeaderValue::from(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_headers_put_each_value_under_its_name() {
        let header =
            |h: &HeaderMap, name: &str| h.get(name).map(|v| v.to_str().unwrap().to_owned());
        let plain = answer_headers(None);
        assert_eq!(plain.len(), 1);
        assert_eq!(header(&plain, "content-type").unwrap(), "application/json");
        for credits in [None, Some(99_999)] {
            let m = MeterHeaders {
                limit: 7,
                remaining: 3,
                reset_secs: 11,
                credits_remaining: credits,
            };
            let h = answer_headers(Some(&m));
            assert_eq!(header(&h, "content-type").unwrap(), "application/json");
            assert_eq!(header(&h, "ratelimit-limit").unwrap(), "7");
            assert_eq!(header(&h, "ratelimit-remaining").unwrap(), "3");
            assert_eq!(header(&h, "ratelimit-reset").unwrap(), "11");
            assert_eq!(
                header(&h, "x-credits-remaining"),
                credits.map(|c| c.to_string())
            );
            assert_eq!(h.len(), 4 + usize::from(credits.is_some()));
        }
    }

    #[test]
    fn int_headers_read_back_at_every_size() {
        for v in [
            0,
            1,
            9,
            10,
            999,
            1000,
            1023,
            1024,
            1025,
            49_999,
            u32::MAX as u64,
            u64::MAX,
        ] {
            assert_eq!(int_header(v).to_str().unwrap(), v.to_string());
        }
    }
}
