//! The API's handlers and what they share: the server's [`State`], a [`Connection`]'s
//! context, and the steps every endpoint takes. The route table ([`crate::app::routes`])
//! calls a route's handler in a file of its own here. Handlers take parameters
//! in, call one room ([`crate::query`], ...) and put a body out; they share the helpers
//! here for the order of checks (docs/API.md, "Order of checks"):
//!
//! ```text
//!  size (414/431) → route (404) → method (405) → snapshot loaded (503)
//!    → key (401) → rate limit (429) → key's requests in flight (429)
//!    → parameters (400) → plan (403) → existence (404) → credits (429)
//!    → answer (200, one credit spent)
//! ```
//!
//! # Layout
//!
//! | file | routes |
//! |---|---|
//! | `prices` | cheapest, prices, registrars by TLD (client and public variants) |
//! | `catalogue` | history, overview, the TLD catalogue, the registrars |
//! | `domains` | portfolio audit, bulk domain lookup, domain search |
//! | `ops` | `/healthz`, `/readyz`, `/metrics`, `/openapi.json` |
//! | `events` | price-change events: polling and Server-Sent Events |
//! | `webhooks` | webhook subscriptions: create, list, show, change, delete, test, rotate the secret |
//! | `live` | live domain data: registration data, status, DNS, availability, TLS ([`crate::live`]) |
//! | [`crate::web`] | the website's pages (routes marked `page` in the router) |
//!
//! A new resource adds its handler and OpenAPI operation in a file here and one row in
//! [`crate::app::routes`].
//!
//! The snapshot is taken once per request and held (an `Arc`) until the body is
//! written, so a request answered during a swap is answered wholly from one snapshot.

use std::net::IpAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, OnceLock};

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response};

use crate::access::{Access, Caller, KeyCache, MeterHeaders};
use crate::http::body::Body;
use crate::http::metrics::Metrics;
use crate::http::problem::Problem;
use crate::http::router::{MAX_ROUTES, Route};
use crate::store::{Loaded, Store};
use crate::time::Stamp;

pub(crate) mod answers;
pub(crate) mod body;
pub(crate) mod catalogue;
pub(crate) mod domains;
pub(crate) mod events;
pub(crate) mod export;
pub(crate) mod live;
pub(crate) mod ops;
pub(crate) mod prices;
pub mod webhooks;

/// The response type of every route.
pub type HttpResponse = Response<Body>;

/// The body of a request a handler reads: hyper's `Incoming` from a connection, or a
/// body made in the process (a tool call of the MCP endpoint, answered by the same
/// handler as the REST request it stands for).
pub trait RequestBody:
    hyper::body::Body<Data = bytes::Bytes, Error: std::error::Error + Send + Sync + 'static>
    + Send
    + Sync
    + Unpin
    + 'static
{
}

impl<B> RequestBody for B where
    B: hyper::body::Body<Data = bytes::Bytes, Error: std::error::Error + Send + Sync + 'static>
        + Send
        + Sync
        + Unpin
        + 'static
{
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");
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

/// Request-handling settings. [`Config::default`] gives the values `tldsnap serve` uses.
#[derive(Debug, Clone)]
pub struct Config {
    /// Base of `website_url` in registrar listings, without a trailing slash. Must be
    /// JSON-safe: see [`validate_public_url`]. Default `https://tldsnap.dev`.
    pub public_url: String,
    /// Longest request target (path and query) answered; longer gets 414. Default
    /// 8 KiB: 100 TLDs of 63 characters, percent-encoded, still fit.
    pub max_url_bytes: usize,
    /// Largest header section answered (names + values); larger gets 431. Default
    /// 16 KiB.
    pub max_header_bytes: usize,
    /// Silence after which an event stream sends a heartbeat comment. Default 15 s.
    pub event_heartbeat: std::time::Duration,
    /// Time a request body has to arrive in full once its endpoint starts reading it;
    /// later gets 408 `request_timeout` and the connection is closed. Default 30 s.
    /// (The connection layer's watchdog times the head and idle keep-alive, not a
    /// request being answered: without this, a client that stops mid-body would hold
    /// its connection for ever.)
    pub body_timeout: std::time::Duration,
    /// Event streams one key may hold open at once; one more is answered 429
    /// `too_many_streams`. Default 10. (A stream keeps its connection busy, and a busy
    /// connection is never evicted: without a cap, one key opening streams it never
    /// reads would hold every connection place of the server.)
    pub max_streams_per_key: usize,
    /// Requests of one key answered at once across the server; one more is answered
    /// 429 `too_many_in_flight` at once. Default 64. (A request whose handler waits, on
    /// a webhook receiver, a registry or Redis, keeps its connection busy, and a busy
    /// connection is never evicted: without a cap, one key could hold every connection
    /// place of the server with requests that wait. Requests without a key are held by
    /// the per-address connection cap instead.)
    pub max_in_flight_per_key: usize,
    /// Signs the website's session cookies and CSRF tokens. Default: random, in memory
    /// (sessions end with the process); `serve` reads `--session-secret-file` or keeps
    /// one in `--data-dir`.
    pub session_secret: crate::web::session::Secret,
    /// The session generation of each API key, which a sign-out moves on. Default: in
    /// memory; `serve` keeps them in `--data-dir`.
    pub sign_outs: Arc<crate::web::session::SignOuts>,
    /// Whether every request comes through a proxy that ends TLS and sets
    /// `X-Forwarded-Proto` (`serve --trust-proxy`): only then is a request taken to have
    /// come over HTTPS ([`crate::http::came_over_https`]), which gives it HSTS and the
    /// `__Host-` cookies. Default false.
    pub trust_proxy: bool,
    /// Age in days past which a price is stale (`serve --max-age-days`), unless a
    /// request gives `max_age_days`. Default [`crate::query::DEFAULT_MAX_AGE_DAYS`].
    pub max_age_days: u32,
    /// The day (days since 1970-01-01) that staleness, `expires_soon` and the latest
    /// `at=` count from instead of the clock's (`serve --today`: reproducible answers,
    /// as the docs' examples need). Default `None`: the clock's day.
    pub today: Option<i64>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            public_url: DEFAULT_PUBLIC_URL.to_owned(),
            max_url_bytes: 8 * 1024,
            max_header_bytes: 16 * 1024,
            event_heartbeat: std::time::Duration::from_secs(15),
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_streams_per_key: DEFAULT_MAX_STREAMS_PER_KEY,
            max_in_flight_per_key: DEFAULT_MAX_IN_FLIGHT_PER_KEY,
            session_secret: crate::web::session::Secret::random(),
            sign_outs: Arc::default(),
            trust_proxy: false,
            max_age_days: crate::query::DEFAULT_MAX_AGE_DAYS,
            today: None,
        }
    }
}

/// `--body-timeout` when not given: 30 s, time for a 4 MiB audit body at ~140 KB/s.
pub const DEFAULT_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// `--max-streams-per-key` when not given: room for a client's few subscriptions (one
/// per filter, a reconnect overlapping the stream it replaces), not for a fleet.
pub const DEFAULT_MAX_STREAMS_PER_KEY: usize = 10;

/// `--max-in-flight-per-key` when not given: more than a client's parallel requests
/// (and its event streams, which count while they open), far fewer than the server's
/// connections (1,024 by default).
pub const DEFAULT_MAX_IN_FLIGHT_PER_KEY: usize = 64;

/// `--public-url` when not given.
pub const DEFAULT_PUBLIC_URL: &str = crate::query::DEFAULT_PUBLIC_URL;

/// Checks a `--public-url`: `http://` or `https://`, no spaces, quotes, backslashes or
/// control characters (it is copied into JSON bodies as is), at most 512 bytes.
/// Returns it without trailing slashes.
pub fn validate_public_url(url: &str) -> Result<String, String> {
    let trimmed = url.trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .ok_or_else(|| format!("--public-url {url:?} must start with http:// or https://"))?;
    if rest.is_empty() {
        return Err(format!("--public-url {url:?} has no host"));
    }
    if trimmed.len() > 512 {
        return Err("--public-url is longer than 512 bytes".to_owned());
    }
    if let Some(c) = trimmed
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || matches!(c, '"' | '\\' | '<' | '>'))
    {
        return Err(format!(
            "--public-url {url:?} contains {c:?}, which is not allowed in a URL here"
        ));
    }
    Ok(trimmed.to_owned())
}

/// Source of [`State`]'s `id`.
static NEXT_STATE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Everything the request path shares: one per server.
pub struct State {
    /// The snapshot being served.
    pub store: Arc<Store>,
    /// Keys, plans, rate limits and credits.
    pub access: Arc<Access>,
    /// Request and connection counters.
    pub metrics: Metrics,
    /// Settings.
    pub config: Config,
    /// The price-change event log, when the server keeps one (`--data-dir`).
    pub events: Option<Arc<crate::events::EventLog>>,
    /// The webhook subscriptions and their deliveries (with the event log).
    pub webhooks: Option<Arc<crate::webhooks::Webhooks>>,
    /// Raised when the server starts draining: open event streams end.
    streams_closing: tokio::sync::watch::Sender<bool>,
    /// The event streams each key holds open ([`Config::max_streams_per_key`]).
    streams_per_key: Arc<events::StreamsPerKey>,
    /// Size of each route's last answer, to reserve the next body buffer in one go.
    body_size_hints: [AtomicUsize; MAX_ROUTES],
    /// The website's rendered pages.
    pub web: crate::web::cache::Site,
    /// The MCP endpoint's sessions and counters.
    pub mcp: crate::mcp::state::Mcp,
    /// Unique per state made in this process: whose answers a thread's
    /// [`answers`] cache holds.
    id: u64,
    /// How the replica stands with object storage, when it serves a snapshot from there
    /// (`serve --snapshot s3://…`): `/readyz` and `/metrics` report it.
    pub remote: Option<Arc<crate::remote::replica::Status>>,
    /// The live lookups, when the server makes them (`serve --live`).
    pub live: Option<Arc<crate::live::Live>>,
    /// The feeds directory the registrars are collected into (`serve --feeds`):
    /// `/readyz` and `/metrics` report each registrar's last collection attempt from it.
    pub feeds: Option<std::path::PathBuf>,
}

impl State {
    /// State for a server over `store` and `access`.
    pub fn new(store: Arc<Store>, access: Arc<Access>, config: Config) -> State {
        // The Public Suffix List is parsed here, at start, not by the first request.
        body::names();
        State {
            store,
            access,
            metrics: Metrics::new(),
            config,
            events: None,
            webhooks: None,
            streams_closing: tokio::sync::watch::Sender::new(false),
            streams_per_key: Arc::default(),
            body_size_hints: std::array::from_fn(|_| AtomicUsize::new(0)),
            web: crate::web::cache::Site::default(),
            mcp: crate::mcp::state::Mcp::default(),
            remote: None,
            live: None,
            feeds: None,
            id: NEXT_STATE_ID.fetch_add(1, Relaxed),
        }
    }

    /// What answers and pages of `loaded` are kept under at `now_ms`: its content hash,
    /// moved on every day, since which prices are stale depends on the date.
    pub fn generation(&self, loaded: &Loaded, now_ms: i64) -> u128 {
        let today = self.day_ms(now_ms).div_euclid(crate::time::MS_PER_DAY);
        loaded.snapshot.header().content_hash ^ today as u128
    }

    /// The clock reading `now_ms` as the staleness rule takes it: on the day of
    /// [`Config::today`] when one is set.
    pub fn day_ms(&self, now_ms: i64) -> i64 {
        match self.config.today {
            Some(day) => day * crate::time::MS_PER_DAY + now_ms.rem_euclid(crate::time::MS_PER_DAY),
            None => now_ms,
        }
    }

    /// The staleness rule of the pages today: the server's age; `include_stale` as
    /// given.
    pub fn freshness(&self, include_stale: bool) -> crate::query::Freshness {
        crate::query::Freshness::new(
            self.day_ms(self.access.now_ms()),
            self.config.max_age_days,
            include_stale,
        )
    }

    /// The same state, answering the live lookups with `live`.
    pub fn with_live(mut self, live: Arc<crate::live::Live>) -> State {
        self.live = Some(live);
        self
    }

    /// The same state, reporting the collection attempts recorded under `feeds`.
    pub fn with_feeds(mut self, feeds: std::path::PathBuf) -> State {
        self.feeds = Some(feeds);
        self
    }

    /// The same state, reporting how the replica stands with object storage.
    pub fn with_remote(mut self, status: Arc<crate::remote::replica::Status>) -> State {
        self.remote = Some(status);
        self
    }

    /// The same state, serving the price-change events of `log`.
    pub fn with_events(mut self, log: Arc<crate::events::EventLog>) -> State {
        self.events = Some(log);
        self
    }

    /// The same state, managing the webhook subscriptions of `hooks`.
    pub fn with_webhooks(mut self, hooks: Arc<crate::webhooks::Webhooks>) -> State {
        self.webhooks = Some(hooks);
        self
    }

    /// Ends the open event streams (the server is draining: they never finish by
    /// themselves).
    pub fn close_streams(&self) {
        self.streams_closing.send_replace(true);
    }

    /// A buffer for the answer of `route`, sized from its previous answer.
    fn body_buffer(&self, route: &'static Route) -> Vec<u8> {
        let capacity = self.body_size_hints[route.index]
            .load(Relaxed)
            .clamp(MIN_BODY_CAPACITY, MAX_BODY_CAPACITY);
        Vec::with_capacity(capacity)
    }
}

/// What the requests of one connection share.
#[derive(Debug)]
pub struct Connection {
    /// The client's address (IPv4-mapped IPv6 addresses canonicalised), for per-address
    /// rate limits.
    pub client: IpAddr,
    /// The last API key this connection sent: hashed once, not once per request.
    key_cache: Mutex<KeyCache>,
}

impl Connection {
    /// The context of a new connection from `client`.
    pub fn new(client: IpAddr) -> Connection {
        Connection {
            client,
            key_cache: Mutex::new(KeyCache::default()),
        }
    }

    /// The key cache, locked for one admission (HTTP/1 answers a connection's requests
    /// one at a time, so the lock is never contended). Admission never waits, so the
    /// guard is never held across an `.await`.
    fn key_cache(&self) -> std::sync::MutexGuard<'_, KeyCache> {
        self.key_cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Takes the snapshot for the whole request (503 when none is loaded).
///
/// The helpers here return the response to send as their error: it is moved once, to
/// the caller that returns it, and boxing it would allocate on every refusal.
#[allow(clippy::result_large_err)]
pub fn snapshot(state: &State) -> Result<Arc<Loaded>, HttpResponse> {
    state
        .store
        .load()
        .ok_or_else(|| Problem::NotReady.into_response())
}

/// The key (401) and rate-limit (429) checks of a metered route: the caller, or the
/// problem response to send.
#[allow(clippy::result_large_err)]
pub async fn admit<B>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> Result<Caller, HttpResponse> {
    admit_now(state, req, route, conn)
}

/// [`admit`], which never waits (admission reads only memory).
#[allow(clippy::result_large_err)]
fn admit_now<B>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> Result<Caller, HttpResponse> {
    // A scan of the few request headers costs less than hashing the name for a lookup.
    let mut keys = req
        .headers()
        .iter()
        .filter_map(|(name, value)| (*name == API_KEY).then_some(value));
    let key = match (keys.next(), keys.next()) {
        (None, _) => None,
        // Two keys in one request: refuse rather than guess which one was meant.
        (Some(_), Some(_)) => return Err(Problem::InvalidApiKey.into_response()),
        (Some(v), None) if v.is_empty() => None,
        (Some(v), None) => Some(v.as_bytes()),
    };
    // The connection's key cache is locked only when a key came (a lock less for every
    // public request).
    let mut cache = key.map(|_| conn.key_cache());
    let admitted = state.access.admit_now(
        key.zip(cache.as_deref_mut()),
        conn.client,
        route.requires_key,
    );
    drop(cache);
    let mut caller = admitted.map_err(|denial| {
        let (problem, meter) = Problem::from_denial(denial);
        with_meter(problem.into_response(), meter.as_ref())
    })?;
    // Counted until the caller is dropped with the answer (or with the request's
    // future, when its client leaves).
    let max = state.config.max_in_flight_per_key;
    if !caller.enter(max) {
        return Err(refuse(Problem::TooManyInFlight { max }, &caller));
    }
    Ok(caller)
}

/// The start of every metered endpoint: the snapshot for the whole request (503), then
/// the key (401) and rate limit (429); or the response to send instead.
#[allow(clippy::result_large_err)]
pub async fn begin<B>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> Result<(Arc<Loaded>, Caller), HttpResponse> {
    let loaded = snapshot(state)?;
    let caller = admit_now(state, req, route, conn)?;
    Ok((loaded, caller))
}

/// Whether an endpoint's answers may be kept and served again (`answers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Never: the answer depends on more than the snapshot, the plan and the target.
    No,
    /// The whole body.
    Whole,
    /// The body, with `stats.time_elapsed` measured anew from this request's start.
    Elapsed(Stamp),
}

/// A whole metered JSON endpoint: [`begin`] (snapshot, key, rate), then `answer` writes
/// the body into a buffer sized from the route's last answer, or says which problem
/// (parameters 400, plan 403, existence 404) to send; then [`finish`] spends the credit
/// (429 when none is left) and answers 200.
///
/// With `reuse`, an answer already written for the same route, `segment`, query string
/// and plan on the same snapshot is served again instead of calling `answer` (only
/// answers that passed every check are kept, so the checks it skips would pass again).
///
/// Nothing here waits (admission and the answer read memory; the embedded usage store
/// spends a credit with one compare-and-swap), so it is a plain function, not a
/// future: a nested future costs its moves and polls on every request. Only a credit
/// kept in Redis is left to the caller, as [`Step::Spend`].
pub fn answered<B>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    segment: &str,
    conn: &Connection,
    reuse: Reuse,
    answer: impl FnOnce(&Loaded, &Caller, &mut Vec<u8>) -> Result<(), Problem>,
) -> Step {
    let loaded = match snapshot(state) {
        Ok(loaded) => loaded,
        Err(response) => return Step::Done(response),
    };
    let caller = match admit_now(state, req, route, conn) {
        Ok(caller) => caller,
        Err(response) => return Step::Done(response),
    };
    let snapshot = state.generation(&loaded, caller.admitted_ms());
    let target = answers::Target {
        route,
        plan: caller.tier(),
        segment,
        query: req.uri().query().unwrap_or_default(),
    };
    if reuse != Reuse::No
        && let Some(kept) = answers::get(state.id, snapshot, &target)
    {
        let body = match reuse {
            Reuse::Elapsed(started) => kept.with_elapsed(started),
            _ => Body::from(kept.body),
        };
        return spend_and_respond(state, caller, body);
    }
    let mut out = state.body_buffer(route);
    if let Err(problem) = answer(&loaded, &caller, &mut out) {
        return Step::Done(refuse(problem, &caller));
    }
    match reuse {
        Reuse::No => {}
        Reuse::Whole => answers::put(state.id, snapshot, &target, &out, None),
        Reuse::Elapsed(_) => {
            // Kept only when the part to rewrite is found (it always is).
            if let Some(span) = crate::query::elapsed_span(&out) {
                answers::put(state.id, snapshot, &target, &out, Some(span));
            }
        }
    }
    finish_now(state, route, caller, out)
}

/// [`finish`] without a future: the route's size hint kept, then one credit spent at
/// once and the answer made, or, for a credit kept in Redis, left to [`Step::finish`].
pub(super) fn finish_now(
    state: &State,
    route: &'static Route,
    caller: Caller,
    out: Vec<u8>,
) -> Step {
    state.body_size_hints[route.index].store(out.len(), Relaxed);
    spend_and_respond(state, caller, Body::from(out))
}

/// What [`answered`] leaves to do.
#[derive(Debug)]
pub enum Step {
    /// Nothing: the response.
    Done(HttpResponse),
    /// Spend the caller's credit in Redis, then answer the body ([`Step::finish`]).
    Spend(Caller, Body),
}

impl Step {
    /// The response, once the credit is spent.
    pub async fn finish(self, state: &State) -> HttpResponse {
        match self {
            Step::Done(response) => response,
            Step::Spend(caller, body) => finish_body(state, caller, body, 1).await,
        }
    }
}

/// One credit, then the answer: at once with the embedded usage store; left to
/// [`Step::finish`] (which waits for Redis) otherwise.
fn spend_and_respond(state: &State, mut caller: Caller, body: Body) -> Step {
    match state.access.spend_now(&mut caller, 1) {
        Some(spent) => Step::Done(respond(caller, body, spent)),
        None => Step::Spend(caller, body),
    }
}

/// A problem answer to an admitted caller, with its metering headers.
pub fn refuse(problem: Problem, caller: &Caller) -> HttpResponse {
    with_meter(problem.into_response(), caller.headers.as_ref())
}

/// Spends the caller's credit (429 when none is left) and answers 200 with `out` as
/// the JSON body and the metering headers.
pub async fn finish(
    state: &State,
    route: &'static Route,
    caller: Caller,
    out: Vec<u8>,
) -> HttpResponse {
    finish_costing(state, route, caller, out, 1).await
}

/// Like [`finish`], for an answer that costs `credits` credits.
pub async fn finish_costing(
    state: &State,
    route: &'static Route,
    caller: Caller,
    out: Vec<u8>,
    credits: u64,
) -> HttpResponse {
    state.body_size_hints[route.index].store(out.len(), Relaxed);
    finish_body(state, caller, Body::from(out), credits).await
}

/// Spends `credits` of the caller's credits (429 when they are not left) and answers 200
/// with `body` and the metering headers. Waits only when the credits are in Redis.
async fn finish_body(state: &State, mut caller: Caller, body: Body, credits: u64) -> HttpResponse {
    let spent = match state.access.spend_now(&mut caller, credits) {
        Some(spent) => spent,
        None => state.access.spend_n(&mut caller, credits).await,
    };
    respond(caller, body, spent)
}

/// The answer once the credits are spent: 200 with `body`, or the refusal.
fn respond(caller: Caller, body: Body, spent: Result<(), crate::access::Denial>) -> HttpResponse {
    if let Err(denial) = spent {
        let (problem, meter) = Problem::from_denial(denial);
        return with_meter(
            problem.into_response(),
            meter.as_ref().or(caller.headers.as_ref()),
        );
    }
    with_headers(body, answer_headers(caller.headers.as_ref()))
}

/// A 200 response of `body` with `headers`.
fn with_headers(body: Body, headers: HeaderMap) -> HttpResponse {
    let mut response = Response::new(body);
    // `Response::new` made an empty map, which holds no allocation (`HeaderMap::new`
    // allocates nothing; a test holds the http crate to it): forgetting it instead of
    // dropping it leaks nothing and skips ~50 instructions of drop glue a request.
    let empty = std::mem::replace(response.headers_mut(), headers);
    debug_assert_eq!(empty.capacity(), 0);
    std::mem::forget(empty);
    response
}

/// Reads a request body of at most `max` bytes within `timeout`: a `Content-Length`
/// above `max` is refused (413) before a byte of the body is read, and a body without
/// one (chunked) is refused as soon as it passes `max`; nothing larger is ever held in
/// memory. A body still incomplete after `timeout` (a client that stopped sending) is
/// refused with 408, which closes the connection ([`Config::body_timeout`]).
pub async fn read_body<B: RequestBody>(
    req: Request<B>,
    max: usize,
    timeout: std::time::Duration,
) -> Result<(hyper::http::request::Parts, bytes::Bytes), Problem> {
    use http_body_util::BodyExt;
    let (parts, body) = req.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > max as u64) {
        return Err(Problem::BodyTooLarge { max });
    }
    // While the client owes the body, a full server may take the connection for a
    // new one (`BodyWait`).
    let _waiting = parts
        .extensions
        .get::<crate::http::server::BodyWait>()
        .map(|w| w.waiting());
    let read = tokio::time::timeout(timeout, http_body_util::Limited::new(body, max).collect());
    let Ok(collected) = read.await else {
        return Err(Problem::BodyTimeout {
            secs: timeout.as_secs(),
        });
    };
    match collected {
        Ok(collected) => Ok((parts, collected.to_bytes())),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(Problem::BodyTooLarge { max }),
        Err(e) => Err(Problem::InvalidBody {
            reason: format!("the body could not be read: {e}"),
        }),
    }
}

/// A 200 JSON answer without metering headers.
pub fn json_response(body: Body) -> HttpResponse {
    with_headers(body, answer_headers(None))
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
    // The template's order: content type, limit, remaining, reset[, credits] (the
    // template has the credits' slot only when they are set). A plain zip: `skip(1)`
    // and `flatten` over the values cost ~80 instructions more.
    let values = [
        u64::from(m.limit),
        u64::from(m.remaining),
        m.reset_secs,
        m.credits_remaining.unwrap_or_default(),
    ];
    let mut slots = headers.values_mut();
    slots.next();
    for (slot, &value) in slots.zip(&values) {
        *slot = int_header(value);
    }
    headers
}

/// Adds the metering headers of a keyed (or metered public) request to a problem.
pub fn with_meter(mut response: HttpResponse, meter: Option<&MeterHeaders>) -> HttpResponse {
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
        None => formatted_header(v),
    }
}

/// A header value holding `v`, its digits cut from a page of bytes kept per thread:
/// one reference count per value where `HeaderValue::from(v)` allocates a buffer and
/// frees it once the answer is written (a value a request: the credits left).
fn formatted_header(v: u64) -> HeaderValue {
    /// Bytes a page holds: a few hundred values.
    const PAGE: usize = 4096;
    thread_local! {
        static DIGITS: std::cell::RefCell<bytes::BytesMut> =
            std::cell::RefCell::new(bytes::BytesMut::new());
    }
    let mut buffer = itoa::Buffer::new();
    let text = buffer.format(v).as_bytes();
    DIGITS.with(|page| {
        let mut page = page.borrow_mut();
        if page.capacity() < text.len() {
            // The full page is freed when the last value cut from it is dropped.
            *page = bytes::BytesMut::with_capacity(PAGE);
        }
        page.extend_from_slice(text);
        let digits = page.split().freeze();
        // SAFETY: `digits` are the ASCII digits itoa wrote, which are valid header value
        // bytes (http checks them again in debug builds).
        unsafe { HeaderValue::from_maybe_shared_unchecked(digits) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_response_has_a_header_map_without_an_allocation() {
        // `with_headers` forgets this map rather than drop it: it must hold nothing.
        let response = Response::new(Body::default());
        assert_eq!(response.headers().capacity(), 0);
        assert_eq!(HeaderMap::<HeaderValue>::new().capacity(), 0);
        let answered = with_headers(Body::default(), answer_headers(None));
        assert_eq!(answered.headers().len(), 1);
    }

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

    #[test]
    fn formatted_headers_keep_their_digits_across_pages() {
        // Enough values to fill several pages, all alive at once, then all read back.
        let values: Vec<u64> = (0..2_000).map(|i| 1_000_000_007 * i + 5).collect();
        let headers: Vec<HeaderValue> = values.iter().map(|&v| formatted_header(v)).collect();
        for (v, h) in values.iter().zip(&headers) {
            assert_eq!(h.to_str().unwrap(), v.to_string());
        }
    }
}
