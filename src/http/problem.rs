//! Problems: the one place that maps an error to an HTTP status and an RFC 9457
//! `application/problem+json` body.
//!
//! Every error the API answers goes through [`Problem::into_response`], so the status,
//! the `code`, the `type` URI and the extra members (`tlds`, `retry_after`, ...) of one
//! error are decided here and nowhere else. The bodies are small and rare compared with
//! answers; they are written by hand in the RFC's member order, with every string that
//! echoes the request escaped by [`crate::json::write_str`].
//!
//! What every problem of a kind shares (code, HTTP status, title, `type` URI) is one row
//! of one table, [`Kind`]; [`Problem::kind`] is the one match from a variant to its
//! row, and [`Kind::ALL`] lists the rows. The `detail` and the extra members come from
//! the variant's fields.
//!
//! ```text
//! HTTP/1.1 400 Bad Request
//! content-type: application/problem+json
//!
//! {"type":"https://tldsnap.dev/errors/invalid_parameter","title":"Invalid parameter",
//!  "status":400,"detail":"limit must be an integer from 1 to 100","code":"invalid_parameter",
//!  "parameter":"limit","value":"0"}
//! ```

use super::body::Body;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use crate::json::write_str;

use crate::access::{Denial, MeterHeaders};
use crate::query::QueryError;

/// [`TYPE_BASE`] as a literal, for the table's `concat!`.
macro_rules! type_base {
    () => {
        "https://tldsnap.dev/errors/"
    };
}

/// Where the `type` URIs of problems point. A fixed, documented identifier rather than
/// the deployment's `--public-url`, so a client can match on it whatever host answered.
pub const TYPE_BASE: &str = type_base!();

/// The content type of every problem body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Longest part of a request value echoed back in a problem, in characters. An echo
/// helps a user find the bad value; echoing a 64 KiB value back helps nobody.
const ECHO_MAX_CHARS: usize = 100;

/// What every problem of one [`Kind`] has in common.
struct Row {
    code: &'static str,
    status: StatusCode,
    title: &'static str,
    type_url: &'static str,
}

/// Declares [`Kind`], one variant per row `Kind: STATUS, "code", "Title";`, with its row
/// (the `type` URL is [`TYPE_BASE`] and the code) and [`Kind::ALL`].
macro_rules! kinds {
    ($($(#[$doc:meta])* $kind:ident: $status:ident, $code:literal, $title:literal;)*) => {
        /// The kinds of problem: one row of the table each, with the code, HTTP status,
        /// title and `type` URL that every [`Problem`] of the kind answers with
        /// ([`Problem::kind`]). A code is one kind, except `request_too_large`, which is
        /// answered with the status of what was too large (413, 414, 431).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind {
            $($(#[$doc])* $kind,)*
        }

        impl Kind {
            /// Every kind, in the table's order.
            pub const ALL: &[Kind] = &[$(Kind::$kind),*];

            /// This kind's row of the table.
            const fn row(self) -> &'static Row {
                match self {
                    $(Kind::$kind => &Row {
                        code: $code,
                        status: StatusCode::$status,
                        title: $title,
                        type_url: concat!(type_base!(), $code),
                    },)*
                }
            }
        }
    };
}

kinds! {
    /// A required query parameter is absent or empty.
    MissingParameter: BAD_REQUEST, "missing_parameter", "Missing parameter";
    /// A value that cannot be used.
    InvalidParameter: BAD_REQUEST, "invalid_parameter", "Invalid parameter";
    /// More values than a list parameter or a body's list takes.
    TooManyValues: BAD_REQUEST, "too_many_values", "Too many values";
    /// A client endpoint called without `X-API-Key`.
    MissingApiKey: UNAUTHORIZED, "missing_api_key", "Missing API key";
    /// An `X-API-Key` that matches no key.
    InvalidApiKey: UNAUTHORIZED, "invalid_api_key", "Invalid API key";
    /// TLDs the caller's plan does not cover.
    TldNotInPlan: FORBIDDEN, "tld_not_in_plan", "TLD not in plan";
    /// No route has this path.
    NotFound: NOT_FOUND, "not_found", "Not found";
    /// None of the TLDs asked for is in the snapshot.
    UnknownTld: NOT_FOUND, "unknown_tld", "Unknown TLD";
    /// The registrar asked for is not in the snapshot.
    UnknownRegistrar: NOT_FOUND, "unknown_registrar", "Unknown registrar";
    /// The path exists, the method does not.
    MethodNotAllowed: METHOD_NOT_ALLOWED, "method_not_allowed", "Method not allowed";
    /// The request target is too long.
    UriTooLong: URI_TOO_LONG, "request_too_large", "Request too large";
    /// The request head (its header section) is too large.
    HeadersTooLarge: REQUEST_HEADER_FIELDS_TOO_LARGE, "request_too_large", "Request too large";
    /// The request body is larger than the endpoint reads.
    BodyTooLarge: PAYLOAD_TOO_LARGE, "request_too_large", "Request too large";
    /// A request body that is not what the endpoint takes.
    InvalidBody: BAD_REQUEST, "invalid_body", "Invalid request body";
    /// A portfolio larger than the caller's plan audits.
    TooManyDomains: PAYLOAD_TOO_LARGE, "too_many_domains", "Too many domains";
    /// A body whose `Content-Type` the endpoint does not take.
    UnsupportedMediaType:
        UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", "Unsupported media type";
    /// The plan's domain searches of the UTC day are used up.
    DailyLimit: TOO_MANY_REQUESTS, "daily_limit", "Daily limit reached";
    /// The caller's token bucket is empty.
    RateLimited: TOO_MANY_REQUESTS, "rate_limited", "Rate limited";
    /// The caller's monthly credits are spent.
    CreditsExhausted: TOO_MANY_REQUESTS, "credits_exhausted", "Credits exhausted";
    /// No snapshot is loaded yet.
    NotReady: SERVICE_UNAVAILABLE, "not_ready", "Not ready";
    /// The client's address holds as many connections as one address may.
    TooManyConnections: TOO_MANY_REQUESTS, "too_many_connections", "Too many connections";
    /// Every connection the server takes is busy answering.
    ServerBusy: SERVICE_UNAVAILABLE, "server_busy", "Server busy";
    /// The caller's plan does not include price-change events.
    EventsNotInPlan: FORBIDDEN, "events_not_in_plan", "Events not in plan";
    /// The server keeps no event log.
    EventsUnavailable: SERVICE_UNAVAILABLE, "events_unavailable", "Events unavailable";
    /// An event cursor the server cannot resume from.
    CursorExpired: GONE, "cursor_expired", "Cursor expired";
    /// The caller's plan has no webhook subscriptions.
    WebhooksNotInPlan: FORBIDDEN, "webhooks_not_in_plan", "Webhooks not in plan";
    /// The caller's plan may not export the price grid.
    ExportNotInPlan: FORBIDDEN, "export_not_in_plan", "Export not in plan";
    /// The key has as many webhook subscriptions as its plan allows.
    WebhookLimit: FORBIDDEN, "webhook_limit", "Webhook limit reached";
    /// The key has no webhook subscription with this id.
    UnknownWebhook: NOT_FOUND, "unknown_webhook", "Unknown webhook";
    /// A webhook URL the server will not deliver to.
    InvalidWebhookUrl: BAD_REQUEST, "invalid_webhook_url", "Invalid webhook URL";
    /// A change could not be written to the data directory.
    NotSaved: SERVICE_UNAVAILABLE, "not_saved", "Not saved";
    /// A live lookup the caller's plan does not include.
    LookupNotInPlan: FORBIDDEN, "lookup_not_in_plan", "Lookup not in plan";
    /// The server makes no live lookups.
    LiveUnavailable: NOT_FOUND, "live_unavailable", "Live lookups unavailable";
    /// No registration data service is known for the TLD.
    NoRdapService: NOT_FOUND, "no_rdap_service", "No registration data service";
    /// The domain resolves to an address tldsnap does not connect to.
    TargetRefused: UNPROCESSABLE_ENTITY, "target_refused", "Target refused";
    /// An upstream did not answer within the lookup's time.
    UpstreamTimeout: FAILED_DEPENDENCY, "upstream_timeout", "Upstream timeout";
    /// An upstream answered with an error, could not be reached, or is held back from.
    UpstreamError: FAILED_DEPENDENCY, "upstream_error", "Upstream error";
    /// Bytes that are not an HTTP/1.1 request.
    MalformedRequest: BAD_REQUEST, "malformed_request", "Malformed request";
    /// A request body that did not arrive in full in time.
    RequestTimeout: REQUEST_TIMEOUT, "request_timeout", "Request timeout";
    /// The key holds as many event streams open as one key may.
    TooManyStreams: TOO_MANY_REQUESTS, "too_many_streams", "Too many event streams";
    /// The key has as many requests being answered at once as one key may.
    TooManyInFlight: TOO_MANY_REQUESTS, "too_many_in_flight", "Too many requests in flight";
    /// A test message to this webhook subscription is being sent.
    WebhookTestInFlight: CONFLICT, "webhook_test_in_flight", "Webhook test in flight";
}

impl Kind {
    /// The machine-readable code: the last segment of `type` and the `code` member.
    pub fn code(&self) -> &'static str {
        self.row().code
    }

    /// The HTTP status every problem of this kind is answered with.
    pub fn status(&self) -> StatusCode {
        self.row().status
    }

    /// A short, fixed summary of the problem type (RFC 9457 `title`).
    pub fn title(&self) -> &'static str {
        self.row().title
    }

    /// The problem type's URI (RFC 9457 `type`): [`TYPE_BASE`] and the code.
    pub fn type_url(&self) -> &'static str {
        self.row().type_url
    }
}

/// Whether two strings are equal, in a constant expression.
const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `Kind::ALL[i]` is the first kind of its code.
const fn first_of_its_code(i: usize) -> bool {
    let mut j = 0;
    while j < i {
        if same_str(Kind::ALL[j].row().code, Kind::ALL[i].row().code) {
            return false;
        }
        j += 1;
    }
    true
}

/// How many codes the table has.
const CODE_COUNT: usize = {
    let (mut n, mut i) = (0, 0);
    while i < Kind::ALL.len() {
        if first_of_its_code(i) {
            n += 1;
        }
        i += 1;
    }
    n
};

/// Every `code` a problem can carry, once each, in the table's order.
pub const CODES: [&str; CODE_COUNT] = {
    let mut codes = [""; CODE_COUNT];
    let (mut n, mut i) = (0, 0);
    while i < Kind::ALL.len() {
        if first_of_its_code(i) {
            codes[n] = Kind::ALL[i].row().code;
            n += 1;
        }
        i += 1;
    }
    codes
};

/// Every error the API can answer with, one variant per situation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// 400 `missing_parameter`: a required query parameter is absent or empty.
    MissingParameter {
        /// The parameter's name.
        name: &'static str,
    },
    /// 400 `invalid_parameter`: a value that cannot be used (not a number, out of
    /// range, bad syntax, bad percent-encoding, a parameter given twice).
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The offending value as received (decoded when possible), cut to 100 characters.
        value: Option<String>,
        /// What is wrong, for a person.
        reason: String,
    },
    /// 400 `too_many_values`: more values than a list parameter takes.
    TooManyValues {
        /// The parameter's name.
        name: &'static str,
        /// The most it takes.
        max: usize,
    },
    /// 401 `missing_api_key`: a client endpoint called without `X-API-Key`.
    MissingApiKey,
    /// 401 `invalid_api_key`: an `X-API-Key` that matches no key.
    InvalidApiKey,
    /// 403 `tld_not_in_plan`: TLDs the caller's plan does not cover.
    TldNotInPlan {
        /// The TLDs refused, in request order.
        tlds: Vec<String>,
        /// The caller's plan.
        plan: String,
        /// The plans in force that cover every TLD (`plans_covering_all`).
        covering: Vec<String>,
    },
    /// 404 `not_found`: no route has this path.
    NotFound,
    /// 404 `unknown_tld`: none of the TLDs asked for is in the snapshot.
    UnknownTld {
        /// The TLDs asked for, in request order.
        tlds: Vec<String>,
    },
    /// 404 `unknown_registrar`: the registrar asked for is not in the snapshot.
    UnknownRegistrar {
        /// The key asked for.
        key: String,
    },
    /// 405 `method_not_allowed`: the path exists, the method does not.
    MethodNotAllowed {
        /// The value of the `Allow` header.
        allow: &'static str,
    },
    /// 414 `request_too_large`: the request target is longer than the server takes.
    UriTooLong {
        /// The most the server takes, in bytes.
        max: usize,
    },
    /// 431 `request_too_large`: the header section is larger than the server takes.
    HeadersTooLarge {
        /// The most the server takes, in bytes.
        max: usize,
    },
    /// 431 `request_too_large`: a request head the connection layer does not read at
    /// all (more header fields, or more bytes, than it buffers); the connection closes.
    HeadTooLarge {
        /// The most bytes of a request head read, in bytes.
        max_bytes: usize,
        /// The most header fields read.
        max_headers: usize,
    },
    /// 400 `malformed_request`: bytes that are not an HTTP/1.1 request (a broken request
    /// line or header, HTTP/0.9, conflicting `Content-Length`s, TLS or HTTP/2 on this
    /// plain HTTP/1.1 port); answered by the connection layer, which then closes the
    /// connection.
    MalformedRequest {
        /// What could not be read, for a person.
        reason: String,
    },
    /// 429 `rate_limited`: the caller's token bucket is empty.
    RateLimited {
        /// Seconds until a request will be admitted again.
        retry_after_secs: u64,
    },
    /// 429 `credits_exhausted`: the caller's monthly credits are spent.
    CreditsExhausted {
        /// Seconds until the credits reset (the next calendar month in UTC).
        retry_after_secs: u64,
    },
    /// 503 `not_ready`: no snapshot is loaded yet.
    NotReady,
    /// 429 `too_many_connections`: the client's address holds as many connections as
    /// one address may (sent before any request is read, then the connection closes).
    TooManyConnections,
    /// 429 `too_many_streams`: the key holds as many event streams open as one key may
    /// (`--max-streams-per-key`); one must end before another opens. No credit is spent.
    TooManyStreams {
        /// The most streams one key holds open.
        max: usize,
    },
    /// 429 `too_many_in_flight`: the key has as many requests being answered at once,
    /// across the server, as one key may (`--max-in-flight-per-key`); one must be
    /// answered before another is taken. Sent at once, with `Retry-After: 1`; no credit
    /// is spent.
    TooManyInFlight {
        /// The most requests of one key answered at once.
        max: usize,
    },
    /// 409 `webhook_test_in_flight`: a test message to this subscription is being sent;
    /// one test at a time per subscription. Sent at once, with `Retry-After`; no credit
    /// is spent.
    WebhookTestInFlight {
        /// Seconds until the test in flight has ended at the latest (the delivery
        /// timeout).
        retry_after_secs: u64,
    },
    /// 503 `server_busy`: every connection the server takes is busy answering (sent
    /// before any request is read, then the connection closes).
    ServerBusy,
    /// 400 `invalid_body`: a request body that is empty, not UTF-8, not the JSON or CSV
    /// the endpoint takes, or with a bad field (a bad domain *name* is not this: it is
    /// an entry of the answer).
    InvalidBody {
        /// What is wrong and where, for a person.
        reason: String,
    },
    /// 400 `too_many_values`: more entries in a request body's list than it takes.
    TooManyItems {
        /// The list's name in the body.
        name: &'static str,
        /// The most it takes.
        max: usize,
    },
    /// 413 `request_too_large`: a request body larger than the endpoint reads (refused
    /// from `Content-Length` before reading, or once the limit is passed).
    BodyTooLarge {
        /// The most the endpoint reads, in bytes.
        max: usize,
    },
    /// 408 `request_timeout`: a request body that did not arrive in full within the
    /// server's body timeout after the endpoint began reading it (a client that stalls
    /// mid-body); the connection is closed.
    BodyTimeout {
        /// The body timeout, in seconds.
        secs: u64,
    },
    /// 413 `too_many_domains`: a portfolio larger than the caller's plan audits
    /// (checked before any work; no credit is spent).
    TooManyDomains {
        /// The plan's audit limit.
        limit: usize,
        /// The caller's plan.
        plan: String,
    },
    /// 415 `unsupported_media_type`: a body whose `Content-Type` the endpoint does not
    /// take.
    UnsupportedMediaType {
        /// What the endpoint takes (the value of `Accept-Post`).
        accept: &'static str,
    },
    /// 429 `daily_limit`: the plan's domain searches for this UTC day are used up.
    DailyLimit {
        /// The plan's searches per day.
        limit: u32,
        /// Seconds until the next UTC midnight.
        retry_after_secs: u64,
    },
    /// 403 `events_not_in_plan`: the caller's plan does not include price-change events.
    EventsNotInPlan {
        /// The caller's plan.
        plan: String,
        /// The plans in force that include them.
        including: Vec<String>,
    },
    /// 503 `events_unavailable`: the server keeps no event log (no `--data-dir`).
    EventsUnavailable,
    /// 410 `cursor_expired`: events after `after` were removed by the retention, so
    /// resuming there would miss some; or `after` is past the last event id (a cursor
    /// of another data directory).
    CursorExpired {
        /// The `after` asked for.
        after: u64,
        /// The oldest event id still kept (the log's next id when none is kept).
        oldest: u64,
    },
    /// 403 `webhooks_not_in_plan`: the caller's plan has no webhook subscriptions.
    WebhooksNotInPlan {
        /// The caller's plan.
        plan: String,
        /// The plans in force that include them.
        including: Vec<String>,
    },
    /// 403 `export_not_in_plan`: the caller's plan may not export the price grid.
    ExportNotInPlan {
        /// The caller's plan.
        plan: String,
        /// The plans in force that include it.
        including: Vec<String>,
    },
    /// 403 `webhook_limit`: the key has as many webhook subscriptions as its plan allows.
    WebhookLimit {
        /// The caller's plan.
        plan: String,
        /// Its subscriptions per key.
        limit: u32,
    },
    /// 404 `unknown_webhook`: the key has no webhook subscription with this id.
    UnknownWebhook {
        /// The id asked for, cut to 100 characters.
        id: String,
    },
    /// 400 `invalid_webhook_url`: a webhook URL the server will not deliver to (not
    /// https, a private or metadata address, not a URL).
    InvalidWebhookUrl {
        /// Why, for a person.
        reason: String,
    },
    /// 503 `not_saved`: a change could not be written to the data directory (disk full,
    /// I/O error); nothing changed.
    NotSaved {
        /// The error, for a person.
        reason: String,
    },
    /// 403 `lookup_not_in_plan`: a live lookup the caller's plan does not include.
    LookupNotInPlan {
        /// The lookup (`rdap`, `tls`, ...).
        lookup: &'static str,
        /// The caller's plan.
        plan: String,
        /// The plans in force that include it.
        including: Vec<String>,
    },
    /// 404 `live_unavailable`: this server makes no live lookups (it was started
    /// without `--live`).
    LiveUnavailable,
    /// 404 `no_rdap_service`: no registration data service is known for the TLD (no
    /// RDAP server in the bootstrap data, and IANA names no WHOIS server).
    NoRdapService {
        /// The TLD.
        tld: String,
    },
    /// 422 `target_refused`: the domain resolves to an address tldsnap does not connect
    /// to (loopback, private, link-local, metadata, ...).
    TargetRefused {
        /// The target.
        target: String,
        /// Why, for a person.
        reason: String,
    },
    /// 424 `upstream_timeout`: an upstream (registry, name server, web server) did not
    /// answer within the lookup's time.
    UpstreamTimeout {
        /// The upstream.
        upstream: String,
        /// The step that ran out of time.
        detail: String,
    },
    /// 424 `upstream_error`: an upstream answered with an error or garbage, could not
    /// be reached, or tldsnap holds back from it (its `Retry-After`, the breaker, the
    /// pace toward it).
    UpstreamError {
        /// The upstream.
        upstream: String,
        /// What went wrong, for a person.
        detail: String,
        /// When asking again makes sense, when known (also `Retry-After`).
        retry_after_secs: Option<u64>,
    },
}

impl Problem {
    /// This problem's kind: its row of the table, which gives its code, status, title
    /// and `type`.
    pub fn kind(&self) -> Kind {
        match self {
            Problem::MissingParameter { .. } => Kind::MissingParameter,
            Problem::InvalidParameter { .. } => Kind::InvalidParameter,
            Problem::TooManyValues { .. } | Problem::TooManyItems { .. } => Kind::TooManyValues,
            Problem::MissingApiKey => Kind::MissingApiKey,
            Problem::InvalidApiKey => Kind::InvalidApiKey,
            Problem::TldNotInPlan { .. } => Kind::TldNotInPlan,
            Problem::NotFound => Kind::NotFound,
            Problem::UnknownTld { .. } => Kind::UnknownTld,
            Problem::UnknownRegistrar { .. } => Kind::UnknownRegistrar,
            Problem::MethodNotAllowed { .. } => Kind::MethodNotAllowed,
            Problem::UriTooLong { .. } => Kind::UriTooLong,
            Problem::HeadersTooLarge { .. } | Problem::HeadTooLarge { .. } => Kind::HeadersTooLarge,
            Problem::BodyTooLarge { .. } => Kind::BodyTooLarge,
            Problem::MalformedRequest { .. } => Kind::MalformedRequest,
            Problem::RateLimited { .. } => Kind::RateLimited,
            Problem::CreditsExhausted { .. } => Kind::CreditsExhausted,
            Problem::NotReady => Kind::NotReady,
            Problem::TooManyConnections => Kind::TooManyConnections,
            Problem::TooManyStreams { .. } => Kind::TooManyStreams,
            Problem::TooManyInFlight { .. } => Kind::TooManyInFlight,
            Problem::WebhookTestInFlight { .. } => Kind::WebhookTestInFlight,
            Problem::ServerBusy => Kind::ServerBusy,
            Problem::InvalidBody { .. } => Kind::InvalidBody,
            Problem::BodyTimeout { .. } => Kind::RequestTimeout,
            Problem::TooManyDomains { .. } => Kind::TooManyDomains,
            Problem::UnsupportedMediaType { .. } => Kind::UnsupportedMediaType,
            Problem::DailyLimit { .. } => Kind::DailyLimit,
            Problem::EventsNotInPlan { .. } => Kind::EventsNotInPlan,
            Problem::EventsUnavailable => Kind::EventsUnavailable,
            Problem::CursorExpired { .. } => Kind::CursorExpired,
            Problem::WebhooksNotInPlan { .. } => Kind::WebhooksNotInPlan,
            Problem::ExportNotInPlan { .. } => Kind::ExportNotInPlan,
            Problem::WebhookLimit { .. } => Kind::WebhookLimit,
            Problem::UnknownWebhook { .. } => Kind::UnknownWebhook,
            Problem::InvalidWebhookUrl { .. } => Kind::InvalidWebhookUrl,
            Problem::NotSaved { .. } => Kind::NotSaved,
            Problem::LookupNotInPlan { .. } => Kind::LookupNotInPlan,
            Problem::LiveUnavailable => Kind::LiveUnavailable,
            Problem::NoRdapService { .. } => Kind::NoRdapService,
            Problem::TargetRefused { .. } => Kind::TargetRefused,
            Problem::UpstreamTimeout { .. } => Kind::UpstreamTimeout,
            Problem::UpstreamError { .. } => Kind::UpstreamError,
        }
    }

    /// The HTTP status of this problem (its [`Kind`]'s).
    pub fn status(&self) -> StatusCode {
        self.kind().status()
    }

    /// The machine-readable code: the last segment of `type` and the `code` member.
    pub fn code(&self) -> &'static str {
        self.kind().code()
    }

    /// A short, fixed summary of the problem type (RFC 9457 `title`).
    pub fn title(&self) -> &'static str {
        self.kind().title()
    }

    /// The explanation of this occurrence (RFC 9457 `detail`), for a person.
    pub fn detail(&self) -> String {
        match self {
            Problem::MissingParameter { name } => {
                format!("the query parameter '{name}' is required and must not be empty")
            }
            Problem::InvalidParameter { name, reason, .. } => {
                format!("the query parameter '{name}' is invalid: {reason}")
            }
            Problem::TooManyValues { name, max } => format!(
                "the query parameter '{name}' takes at most {max} distinct comma-separated values"
            ),
            Problem::MissingApiKey => {
                "this endpoint needs an API key in the X-API-Key request header".to_owned()
            }
            Problem::InvalidApiKey => "the API key in X-API-Key is not a valid key".to_owned(),
            Problem::TldNotInPlan {
                tlds,
                plan,
                covering,
            } => {
                let free = crate::tld::FREE_TLDS.len();
                let upgrade = if covering.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", covering.join(", "))
                };
                if plan == crate::access::plans::PUBLIC_PLAN {
                    format!(
                        "without an API key only the {free} free TLDs are served; {} need{} the \
                         API key of a plan that covers every TLD{upgrade}",
                        tlds.join(", "),
                        if tlds.len() == 1 { "s" } else { "" },
                    )
                } else {
                    format!(
                        "the {plan} plan covers only the {free} free TLDs, not {}; these plans \
                         cover every TLD{upgrade}",
                        tlds.join(", ")
                    )
                }
            }
            Problem::NotFound => "no endpoint has this path; see /openapi.json".to_owned(),
            Problem::UnknownTld { tlds } => {
                format!("none of the TLDs asked for is known: {}", tlds.join(", "))
            }
            Problem::UnknownRegistrar { key } => {
                format!(
                    "no registrar has the key {:?}; GET /api/v1/registrars lists them",
                    echo(key)
                )
            }
            Problem::MethodNotAllowed { allow } => {
                format!("this endpoint answers only {allow}")
            }
            Problem::UriTooLong { max } => {
                format!("the request target is longer than {max} bytes")
            }
            Problem::HeadersTooLarge { max } => {
                format!("the request header section is larger than {max} bytes")
            }
            Problem::HeadTooLarge {
                max_bytes,
                max_headers,
            } => format!(
                "the request head has more than {max_headers} header fields or is larger than \
                 {max_bytes} bytes; the connection is closed"
            ),
            Problem::MalformedRequest { reason } => {
                format!("the request is not valid HTTP/1.1 ({reason}); the connection is closed")
            }
            Problem::RateLimited { retry_after_secs } => format!(
                "too many requests; the rate limit admits the next one in {retry_after_secs} s"
            ),
            Problem::CreditsExhausted { retry_after_secs } => format!(
                "the monthly API credits of this key are spent; they renew in {retry_after_secs} s \
                 (the next calendar month, UTC)"
            ),
            Problem::NotReady => "no price snapshot is loaded yet".to_owned(),
            Problem::TooManyConnections => "this client address has as many connections open \
                as one address may; reuse them (keep-alive) or close some"
                .to_owned(),
            Problem::TooManyStreams { max } => format!(
                "this key has as many event streams open as one key may ({max}); close one \
                 before opening another (one stream carries every event its filters match)"
            ),
            Problem::TooManyInFlight { max } => format!(
                "this key has as many requests being answered at once as one key may \
                 ({max}); send the next when one has been answered"
            ),
            Problem::WebhookTestInFlight { retry_after_secs } => format!(
                "a test message to this webhook is being sent; one test at a time per \
                 webhook: retry within {retry_after_secs} s"
            ),
            Problem::ServerBusy => {
                "every connection the server takes is busy answering; try again".to_owned()
            }
            Problem::InvalidBody { reason } => format!("the request body is invalid: {reason}"),
            Problem::TooManyItems { name, max } => {
                format!("the request body's '{name}' list takes at most {max} entries")
            }
            Problem::BodyTooLarge { max } => {
                format!("the request body is larger than the {max} bytes this endpoint reads")
            }
            Problem::BodyTimeout { secs } => format!(
                "the request body did not arrive in full within {secs} s; the connection is \
                 closed"
            ),
            Problem::TooManyDomains { limit, plan } => format!(
                "the {plan} plan audits at most {limit} domains at once; split the portfolio \
                 or use a plan with a higher audit limit"
            ),
            Problem::UnsupportedMediaType { accept } => {
                format!("send the body as one of: {accept}")
            }
            Problem::DailyLimit {
                limit,
                retry_after_secs,
            } => format!(
                "this key's {limit} domain searches of today (UTC) are used; they renew in \
                 {retry_after_secs} s, at midnight UTC"
            ),
            Problem::EventsNotInPlan { plan, including } => format!(
                "the {plan} plan does not include price-change events; these plans do: {}",
                or_none(including)
            ),
            Problem::EventsUnavailable => "this server keeps no event log (it was started \
                without --data-dir), so it has no price-change events to serve"
                .to_owned(),
            Problem::CursorExpired { after, oldest } => format!(
                "{after} is not a position this server can resume from (events after it were \
                 removed by the retention, or it is past the last event id; the oldest kept \
                 is {oldest}); start again from after=0 and reconcile with the prices endpoints"
            ),
            Problem::WebhooksNotInPlan { plan, including } => format!(
                "the {plan} plan does not include webhooks; these plans do: {} (polling and \
                 streaming come with every plan that includes events)",
                or_none(including)
            ),
            Problem::ExportNotInPlan { plan, including } => format!(
                "the {plan} plan does not include the price grid export; these plans do: {} \
                 (the price endpoints answer up to 100 TLDs a request on every plan)",
                or_none(including)
            ),
            Problem::WebhookLimit { plan, limit } => format!(
                "this key has the {limit} webhook subscriptions the {plan} plan allows; delete \
                 one, or use a plan that allows more"
            ),
            Problem::UnknownWebhook { id } => format!(
                "this key has no webhook subscription {:?}; GET /api/v1/client/webhooks lists them",
                echo(id)
            ),
            Problem::InvalidWebhookUrl { reason } => {
                format!("the webhook url is not one this server delivers to: {reason}")
            }
            Problem::NotSaved { reason } => {
                format!("the change could not be saved, nothing changed; try again: {reason}")
            }
            Problem::LookupNotInPlan {
                lookup,
                plan,
                including,
            } => format!(
                "the {plan} plan does not include {lookup} lookups; these plans do: {}",
                or_none(including)
            ),
            Problem::LiveUnavailable => "this server makes no live lookups of registries, name \
                servers or web servers (it was started without --live)"
                .to_owned(),
            Problem::NoRdapService { tld } => format!(
                "no registration data service is known for .{tld}: IANA lists no RDAP server \
                 for it and names no WHOIS server"
            ),
            Problem::TargetRefused { target, reason } => format!(
                "{}: {reason}; tldsnap connects only to public addresses",
                echo(target)
            ),
            Problem::UpstreamTimeout { upstream, detail } => format!(
                "{upstream} did not answer in time ({detail}); nothing is known from it, \
                 try again later"
            ),
            Problem::UpstreamError {
                upstream, detail, ..
            } => format!("{upstream}: {detail}"),
        }
    }

    /// The complete problem document: the RFC 9457 members in their usual order
    /// (`type`, `title`, `status`, `detail`), then `code` and the members that help.
    /// Strings that echo the request are escaped by [`crate::json::write_str`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let kind = self.kind();
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(kind.type_url().as_bytes());
        out.extend_from_slice(b"\",\"title\":");
        write_str(kind.title(), &mut out);
        out.extend_from_slice(b",\"status\":");
        crate::json::write_int(u64::from(kind.status().as_u16()), &mut out);
        out.extend_from_slice(b",\"detail\":");
        write_str(&self.detail(), &mut out);
        out.extend_from_slice(b",\"code\":\"");
        out.extend_from_slice(kind.code().as_bytes());
        out.push(b'"');
        let num = |name: &str, n: u64, out: &mut Vec<u8>| {
            member(name, out);
            crate::json::write_int(n, out);
        };
        match self {
            Problem::MissingParameter { name } => {
                member("parameter", &mut out);
                write_str(name, &mut out);
            }
            Problem::TooManyValues { name, max } => {
                member("parameter", &mut out);
                write_str(name, &mut out);
                num("max", *max as u64, &mut out);
            }
            Problem::InvalidParameter { name, value, .. } => {
                member("parameter", &mut out);
                write_str(name, &mut out);
                if let Some(value) = value {
                    member("value", &mut out);
                    write_str(value, &mut out);
                }
            }
            Problem::TldNotInPlan {
                tlds,
                plan,
                covering,
            } => {
                member("tlds", &mut out);
                write_list(tlds, &mut out);
                member("plan", &mut out);
                write_str(plan, &mut out);
                member("plans_covering_all", &mut out);
                write_list(covering, &mut out);
            }
            Problem::UnknownTld { tlds } => {
                member("tlds", &mut out);
                write_list(tlds, &mut out);
            }
            Problem::UnknownRegistrar { key } => {
                member("registrar", &mut out);
                write_str(key, &mut out);
            }
            Problem::MethodNotAllowed { allow } => {
                member("allow", &mut out);
                write_str(allow, &mut out);
            }
            Problem::UriTooLong { max } | Problem::HeadersTooLarge { max } => {
                num("max_bytes", *max as u64, &mut out);
            }
            Problem::HeadTooLarge {
                max_bytes,
                max_headers,
            } => {
                num("max_bytes", *max_bytes as u64, &mut out);
                num("max_headers", *max_headers as u64, &mut out);
            }
            Problem::RateLimited { retry_after_secs }
            | Problem::CreditsExhausted { retry_after_secs } => {
                num("retry_after", *retry_after_secs, &mut out);
            }
            Problem::InvalidBody { .. } => {}
            Problem::TooManyItems { name, max } => {
                member("parameter", &mut out);
                write_str(name, &mut out);
                num("max", *max as u64, &mut out);
            }
            Problem::BodyTooLarge { max } => num("max_bytes", *max as u64, &mut out),
            Problem::BodyTimeout { secs } => num("timeout_secs", *secs, &mut out),
            Problem::TooManyStreams { max } | Problem::TooManyInFlight { max } => {
                num("limit", *max as u64, &mut out)
            }
            Problem::WebhookTestInFlight { retry_after_secs } => {
                num("retry_after", *retry_after_secs, &mut out)
            }
            Problem::TooManyDomains { limit, plan } => {
                num("limit", *limit as u64, &mut out);
                member("plan", &mut out);
                write_str(plan, &mut out);
            }
            Problem::UnsupportedMediaType { accept } => {
                member("accept", &mut out);
                write_str(accept, &mut out);
            }
            Problem::DailyLimit {
                limit,
                retry_after_secs,
            } => {
                num("limit", u64::from(*limit), &mut out);
                num("retry_after", *retry_after_secs, &mut out);
            }
            Problem::EventsNotInPlan { plan, including } => {
                member("plan", &mut out);
                write_str(plan, &mut out);
                member("plans_including", &mut out);
                write_list(including, &mut out);
            }
            Problem::CursorExpired { after, oldest } => {
                num("after", *after, &mut out);
                num("oldest_id", *oldest, &mut out);
            }
            Problem::WebhooksNotInPlan { plan, including }
            | Problem::ExportNotInPlan { plan, including } => {
                member("plan", &mut out);
                write_str(plan, &mut out);
                member("plans_including", &mut out);
                write_list(including, &mut out);
            }
            Problem::WebhookLimit { plan, limit } => {
                member("plan", &mut out);
                write_str(plan, &mut out);
                num("limit", u64::from(*limit), &mut out);
            }
            Problem::UnknownWebhook { id } => {
                member("webhook", &mut out);
                write_str(&echo(id), &mut out);
            }
            Problem::InvalidWebhookUrl { .. }
            | Problem::NotSaved { .. }
            | Problem::MalformedRequest { .. } => {}
            Problem::LookupNotInPlan {
                lookup,
                plan,
                including,
            } => {
                member("lookup", &mut out);
                write_str(lookup, &mut out);
                member("plan", &mut out);
                write_str(plan, &mut out);
                member("plans_including", &mut out);
                write_list(including, &mut out);
            }
            Problem::NoRdapService { tld } => {
                member("tld", &mut out);
                write_str(tld, &mut out);
            }
            Problem::TargetRefused { target, .. } => {
                member("target", &mut out);
                write_str(&echo(target), &mut out);
            }
            Problem::UpstreamTimeout { upstream, .. } => {
                member("upstream", &mut out);
                write_str(upstream, &mut out);
            }
            Problem::UpstreamError {
                upstream,
                retry_after_secs,
                ..
            } => {
                member("upstream", &mut out);
                write_str(upstream, &mut out);
                if let Some(secs) = retry_after_secs {
                    num("retry_after", *secs, &mut out);
                }
            }
            Problem::MissingApiKey
            | Problem::LiveUnavailable
            | Problem::EventsUnavailable
            | Problem::InvalidApiKey
            | Problem::NotFound
            | Problem::NotReady
            | Problem::TooManyConnections
            | Problem::ServerBusy => {}
        }
        out.push(b'}');
        out
    }

    /// The HTTP response for this problem: status, `content-type:
    /// application/problem+json`, `Allow` for 405, `Retry-After` for 429, `Connection:
    /// close` for 408, and the body.
    /// The caller adds the metering headers of a keyed request.
    pub fn into_response(self) -> Response<Body> {
        let body = self.to_bytes();
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        match &self {
            Problem::MethodNotAllowed { allow } => {
                headers.insert(header::ALLOW, HeaderValue::from_static(allow));
            }
            Problem::RateLimited { retry_after_secs }
            | Problem::CreditsExhausted { retry_after_secs }
            | Problem::WebhookTestInFlight { retry_after_secs }
            | Problem::DailyLimit {
                retry_after_secs, ..
            } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            Problem::UnsupportedMediaType { accept } => {
                headers.insert(
                    header::HeaderName::from_static("accept-post"),
                    HeaderValue::from_static(accept),
                );
            }
            Problem::NotReady
            | Problem::TooManyConnections
            | Problem::TooManyInFlight { .. }
            | Problem::ServerBusy
            | Problem::NotSaved { .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            Problem::UpstreamError {
                retry_after_secs: Some(secs),
                ..
            } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*secs));
            }
            // The rest of the body may still come: the connection cannot carry another
            // request, and hyper closes it after this answer.
            Problem::BodyTimeout { .. } => {
                headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        response
    }
}

impl Problem {
    /// 403 `tld_not_in_plan` for the TLDs of `tlds` that `plan` does not cover, naming the
    /// plans of `plans` that cover them all; `None` when it covers every one. The one
    /// plan check of the API and the CLI.
    pub fn tld_not_in_plan<'a>(
        plans: &crate::access::plans::Plans,
        plan: &crate::access::plans::Plan,
        tlds: impl IntoIterator<Item = &'a str>,
    ) -> Option<Problem> {
        let outside = plan.outside(tlds);
        (!outside.is_empty()).then(|| Problem::TldNotInPlan {
            tlds: outside,
            plan: plan.name.clone(),
            covering: plans.covering_all(),
        })
    }

    /// This problem as a complete HTTP/1.1 response that closes the connection: for a
    /// connection refused before any request was read, written to the socket as is.
    pub fn to_closing_response_bytes(&self) -> Vec<u8> {
        let response = self.clone().into_response();
        let body = response.body().bytes();
        let status = response.status();
        let mut out = Vec::with_capacity(256 + body.len());
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(status.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in response.headers() {
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"content-length: ");
        out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
        out.extend_from_slice(b"\r\nconnection: close\r\ndate: ");
        out.extend_from_slice(crate::time::http_date(crate::time::now_ms()).as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(body);
        out
    }

    /// The problem for an access denial, with the metering headers the denial carries.
    pub fn from_denial(denial: Denial) -> (Problem, Option<MeterHeaders>) {
        match denial {
            Denial::MissingKey => (Problem::MissingApiKey, None),
            Denial::InvalidKey => (Problem::InvalidApiKey, None),
            Denial::RateLimited {
                retry_after_secs,
                headers,
            } => (Problem::RateLimited { retry_after_secs }, headers),
            Denial::CreditsExhausted {
                retry_after_secs,
                headers,
            } => (
                Problem::CreditsExhausted { retry_after_secs },
                Some(headers),
            ),
        }
    }

    /// The problem for a query that could not be answered.
    pub fn from_query(err: QueryError) -> Problem {
        match err {
            QueryError::UnknownTlds(tlds) => Problem::UnknownTld { tlds },
            QueryError::UnknownRegistrar(key) => Problem::UnknownRegistrar { key },
            QueryError::InvalidParameter {
                name,
                value,
                reason,
            } => Problem::InvalidParameter {
                name,
                value: Some(echo(&value)),
                reason,
            },
        }
    }
}

/// Writes `,"name":`.
fn member(name: &str, out: &mut Vec<u8>) {
    out.push(b',');
    write_str(name, out);
    out.push(b':');
}

/// `items` joined by commas, or `none`.
fn or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

fn write_list(items: &[String], out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(item, out);
    }
    out.push(b']');
}

/// `value` cut to at most 100 characters (on a character boundary), with `…` when cut,
/// for echoing a bad request value back in a problem. Control characters (C0, DEL,
/// C1) and bidirectional formatting characters (U+202E and its kin, which make a
/// terminal or log show text in another order than it was sent) are written as visible
/// `\u{…}` escapes, so a log line or terminal that shows the problem cannot be tricked.
pub fn echo(value: &str) -> String {
    let mut out = String::with_capacity(value.len().min(4 * ECHO_MAX_CHARS));
    for (i, c) in value.chars().enumerate() {
        if i == ECHO_MAX_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() || is_bidi_control(c) {
            use std::fmt::Write as _;
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// The Unicode bidirectional formatting characters (UAX #9): marks, embeddings,
/// overrides and isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Problem> {
        vec![
            Problem::MissingParameter { name: "tlds" },
            Problem::InvalidParameter {
                name: "limit",
                value: Some("0".into()),
                reason: "x".into(),
            },
            Problem::TooManyValues {
                name: "tlds",
                max: 100,
            },
            Problem::MissingApiKey,
            Problem::InvalidApiKey,
            Problem::TldNotInPlan {
                tlds: vec!["museum".into()],
                plan: "free".into(),
                covering: vec!["basic".into(), "pro".into()],
            },
            Problem::NotFound,
            Problem::UnknownTld {
                tlds: vec!["nope".into()],
            },
            Problem::UnknownRegistrar { key: "nope".into() },
            Problem::MethodNotAllowed { allow: "GET, HEAD" },
            Problem::UriTooLong { max: 8192 },
            Problem::HeadersTooLarge { max: 16384 },
            Problem::HeadTooLarge {
                max_bytes: 65536,
                max_headers: 100,
            },
            Problem::MalformedRequest {
                reason: "invalid HTTP method parsed".into(),
            },
            Problem::RateLimited {
                retry_after_secs: 1,
            },
            Problem::CreditsExhausted {
                retry_after_secs: 86400,
            },
            Problem::NotReady,
            Problem::TooManyConnections,
            Problem::TooManyStreams { max: 10 },
            Problem::TooManyInFlight { max: 64 },
            Problem::WebhookTestInFlight {
                retry_after_secs: 10,
            },
            Problem::ServerBusy,
            Problem::InvalidBody { reason: "x".into() },
            Problem::TooManyItems {
                name: "domains",
                max: 100,
            },
            Problem::BodyTooLarge { max: 4 << 20 },
            Problem::BodyTimeout { secs: 30 },
            Problem::TooManyDomains {
                limit: 500,
                plan: "free".into(),
            },
            Problem::UnsupportedMediaType {
                accept: "application/json",
            },
            Problem::DailyLimit {
                limit: 5,
                retry_after_secs: 60,
            },
            Problem::EventsNotInPlan {
                plan: "free".into(),
                including: vec!["basic".into(), "pro".into()],
            },
            Problem::EventsUnavailable,
            Problem::CursorExpired {
                after: 3,
                oldest: 10,
            },
            Problem::WebhooksNotInPlan {
                plan: "basic".into(),
                including: vec![],
            },
            Problem::ExportNotInPlan {
                plan: "basic".into(),
                including: vec!["pro".into()],
            },
            Problem::WebhookLimit {
                plan: "pro".into(),
                limit: 10,
            },
            Problem::UnknownWebhook { id: "wh_x".into() },
            Problem::InvalidWebhookUrl { reason: "x".into() },
            Problem::NotSaved { reason: "x".into() },
            Problem::LookupNotInPlan {
                lookup: "tls",
                plan: "free".into(),
                including: vec!["pro".into()],
            },
            Problem::LiveUnavailable,
            Problem::NoRdapService { tld: "lvx".into() },
            Problem::TargetRefused {
                target: "intranet.example".into(),
                reason: "refused: intranet.example resolves to a non-public address".into(),
            },
            Problem::UpstreamTimeout {
                upstream: "rdap.verisign.com".into(),
                detail: "first byte".into(),
            },
            Problem::UpstreamError {
                upstream: "rdap.verisign.com".into(),
                detail: "answered HTTP 429".into(),
                retry_after_secs: Some(120),
            },
        ]
    }

    #[test]
    fn the_plan_problem_names_the_plans_in_force() {
        use crate::access::plans::Plans;
        let plans = Plans::from_json(
            r#"{"gold": {"credits_per_month": 5, "rate_per_second": 1, "burst": 1, "tlds": "all", "registrar_list_limit": null}}"#,
        )
        .unwrap();
        let free = plans.get("free").unwrap();
        let p = Problem::tld_not_in_plan(&plans, free, ["com", "museum", "ninja"]).unwrap();
        let detail = p.detail();
        assert!(detail.contains("museum, ninja"), "{detail}");
        assert!(detail.contains("gold"), "{detail}");
        assert!(detail.contains("22 free TLDs"), "{detail}");
        let doc: serde_json::Value = serde_json::from_slice(&p.to_bytes()).unwrap();
        assert!(
            doc["plans_covering_all"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p == "gold")
        );
        assert!(Problem::tld_not_in_plan(&plans, free, ["com", "de"]).is_none());
    }

    #[test]
    fn every_kind_is_some_variant_and_codes_lists_their_codes() {
        let kinds: std::collections::BTreeSet<Kind> = all().iter().map(Problem::kind).collect();
        let table: std::collections::BTreeSet<Kind> = Kind::ALL.iter().copied().collect();
        assert_eq!(kinds, table);
        assert_eq!(table.len(), Kind::ALL.len(), "a kind is listed twice");
        let listed: std::collections::BTreeSet<&str> = CODES.into_iter().collect();
        let used: std::collections::BTreeSet<&str> = all().iter().map(|p| p.code()).collect();
        assert_eq!(listed, used);
        assert_eq!(listed.len(), CODES.len(), "a code is listed twice");
    }

    #[test]
    fn codes_are_unique_and_types_follow_one_pattern() {
        // A code is one kind, but for `request_too_large`: one kind per status.
        for (i, a) in Kind::ALL.iter().enumerate() {
            for b in &Kind::ALL[..i] {
                if a.code() == b.code() {
                    assert_eq!(a.code(), "request_too_large", "{a:?} and {b:?}");
                    assert_ne!(a.status(), b.status(), "{a:?} and {b:?}");
                    assert_eq!(a.title(), b.title(), "{a:?} and {b:?}");
                }
            }
        }
        let too_large: Vec<u16> = Kind::ALL
            .iter()
            .filter(|k| k.code() == "request_too_large")
            .map(|k| k.status().as_u16())
            .collect();
        assert_eq!(too_large, [414, 431, 413]);
        for k in Kind::ALL {
            let code = k.code();
            assert_eq!(k.type_url(), format!("{TYPE_BASE}{code}"), "{k:?}");
            assert!(
                code.split('_')
                    .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
                "{k:?}: {code}"
            );
            assert!(!k.title().is_empty() && k.title().len() <= 40, "{k:?}");
            assert!(k.status().is_client_error() || k.status().is_server_error());
        }
    }

    #[test]
    fn every_problem_has_the_rfc9457_members_and_a_matching_code() {
        for p in all() {
            let doc: serde_json::Value = serde_json::from_slice(&p.to_bytes()).unwrap();
            let code = p.code();
            assert_eq!(doc["type"], format!("https://tldsnap.dev/errors/{code}"));
            assert_eq!(doc["code"], code);
            assert_eq!(doc["status"], p.status().as_u16());
            assert!(doc["title"].as_str().is_some_and(|t| !t.is_empty()));
            assert!(doc["detail"].as_str().is_some_and(|t| !t.is_empty()));
            assert!(
                p.status().is_client_error()
                    || matches!(
                        p,
                        Problem::NotReady
                            | Problem::ServerBusy
                            | Problem::EventsUnavailable
                            | Problem::NotSaved { .. }
                    )
            );
            let resp = p.clone().into_response();
            assert_eq!(resp.status(), p.status());
            assert_eq!(resp.headers()[header::CONTENT_TYPE], PROBLEM_JSON);
        }
    }

    #[test]
    fn retry_after_and_allow_headers() {
        let r = Problem::RateLimited {
            retry_after_secs: 7,
        }
        .into_response();
        assert_eq!(r.headers()[header::RETRY_AFTER], "7");
        let r = Problem::MethodNotAllowed { allow: "GET, HEAD" }.into_response();
        assert_eq!(r.headers()[header::ALLOW], "GET, HEAD");
        let r = Problem::UpstreamError {
            upstream: "rdap.test".into(),
            detail: "x".into(),
            retry_after_secs: Some(120),
        }
        .into_response();
        assert_eq!(r.status(), 424);
        assert_eq!(r.headers()[header::RETRY_AFTER], "120");
        let r = Problem::TooManyInFlight { max: 64 }.into_response();
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()[header::RETRY_AFTER], "1");
        let r = Problem::WebhookTestInFlight {
            retry_after_secs: 10,
        }
        .into_response();
        assert_eq!(r.status(), 409);
        assert_eq!(r.headers()[header::RETRY_AFTER], "10");
    }

    #[test]
    fn closing_response_bytes_are_one_complete_http_answer() {
        let bytes = Problem::TooManyConnections.to_closing_response_bytes();
        let text = String::from_utf8(bytes).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nconnection: close"));
        assert!(head.contains("\r\nretry-after: 1"));
        assert!(head.contains("\r\ndate: "), "{head}");
        assert!(head.contains(&format!("\r\ncontent-length: {}", body.len())));
        let doc: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(doc["code"], "too_many_connections");
        assert_eq!(doc["status"], 429);
    }

    #[test]
    fn echo_makes_control_and_bidi_characters_visible() {
        assert_eq!(echo("co\u{202e}m"), "co\\u{202e}m");
        assert_eq!(
            echo("a\u{0}b\u{7f}c\u{85}"),
            "a\\u{0000}b\\u{007f}c\\u{0085}"
        );
        assert_eq!(echo("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
        assert_eq!(echo("рф.com"), "рф.com");
    }

    #[test]
    fn echo_cuts_long_values_on_a_char_boundary() {
        assert_eq!(echo("com"), "com");
        let long = "é".repeat(300);
        let cut = echo(&long);
        assert_eq!(cut.chars().count(), 101);
        assert!(cut.ends_with('…'));
    }
}
