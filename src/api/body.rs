//! What the handlers that take domain names share ([`super::domains`], [`super::live`]):
//! the media type of a request body, the reading of a JSON list of names, the Public
//! Suffix List the names are split with, and the `X-Credits-Cost` header of an answer
//! whose price depends on the request.

use std::sync::OnceLock;

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, StatusCode};

use super::{HttpResponse, State, read_body};
use crate::audit::portfolio::InputError;
use crate::audit::{LOOKUP_MAX, Names, lookup};
use crate::http::problem::Problem;

/// Largest lookup body read (a bulk lookup, a bulk availability check): 100 names of
/// the longest Unicode form still fit.
pub const LOOKUP_MAX_BODY: usize = 256 << 10;

/// What the JSON-only bodies (lookup, bulk availability) take.
const JSON_ACCEPTS: &str = "application/json";

/// What an answer cost, in credits, on a 200 whose price depends on the request.
pub(super) const CREDITS_COST: HeaderName = HeaderName::from_static("x-credits-cost");

/// The Public Suffix List, parsed once per process (at server
/// start: [`super::State::new`] calls this).
pub fn names() -> &'static Names {
    static NAMES: OnceLock<Names> = OnceLock::new();
    NAMES.get_or_init(Names::embedded)
}

/// What a body's `Content-Type` says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Json,
    Csv,
}

/// `application/json` (or any `+json`) and `text/csv` / `application/csv`, parameters
/// such as `charset` ignored; anything else, or none, is not taken.
pub(super) fn content_kind(headers: &HeaderMap) -> Option<Kind> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let media = value.split(';').next()?.trim().to_ascii_lowercase();
    match media.as_str() {
        "application/json" => Some(Kind::Json),
        m if m.starts_with("application/") && m.ends_with("+json") => Some(Kind::Json),
        "text/csv" | "application/csv" => Some(Kind::Csv),
        _ => None,
    }
}

/// Whether a body's `Content-Type` says JSON (the rules of [`content_kind`]).
fn is_json(headers: &HeaderMap) -> bool {
    content_kind(headers) == Some(Kind::Json)
}

/// Whether the caller asked for CSV: `Accept` names `text/csv` before (or without)
/// `application/json`.
pub(super) fn wants_csv(headers: &HeaderMap) -> bool {
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",")
        .to_ascii_lowercase();
    match (accept.find("text/csv"), accept.find("application/json")) {
        (Some(c), Some(j)) => c < j,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The names of a `{"domains": [...]}` body (a bulk lookup, a bulk availability check),
/// or the refusal: not JSON (415), more than [`LOOKUP_MAX_BODY`] bytes (413), not sent
/// in time (408), more than [`LOOKUP_MAX`] names (400 `too_many_values`), not such a body
/// (400 `invalid_body`).
pub(super) async fn read_domains<B: super::RequestBody>(
    state: &State,
    req: Request<B>,
) -> Result<Vec<String>, Problem> {
    if !is_json(req.headers()) {
        return Err(Problem::UnsupportedMediaType {
            accept: JSON_ACCEPTS,
        });
    }
    let (_, body) = read_body(req, LOOKUP_MAX_BODY, state.config.body_timeout).await?;
    lookup::parse_body(&body).map_err(|e| match e {
        InputError::TooMany { .. } => Problem::TooManyItems {
            name: "domains",
            max: LOOKUP_MAX,
        },
        InputError::Invalid(reason) => Problem::InvalidBody { reason },
    })
}

/// `X-Credits-Cost` on a 200: what the answer cost.
pub(super) fn with_cost(mut response: HttpResponse, credits: u64) -> HttpResponse {
    if response.status() == StatusCode::OK {
        response
            .headers_mut()
            .insert(CREDITS_COST, HeaderValue::from(credits));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(*n, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn content_types_and_accept() {
        let kind = |v: &'static str| content_kind(&headers(&[("content-type", v)]));
        assert_eq!(kind("application/json"), Some(Kind::Json));
        assert_eq!(kind("Application/JSON; charset=utf-8"), Some(Kind::Json));
        assert_eq!(kind("application/vnd.x+json"), Some(Kind::Json));
        assert_eq!(kind("text/csv"), Some(Kind::Csv));
        assert_eq!(kind("application/csv;header=present"), Some(Kind::Csv));
        assert_eq!(kind("text/plain"), None);
        assert_eq!(kind("multipart/form-data; boundary=x"), None);
        assert_eq!(content_kind(&HeaderMap::new()), None);
        let csv = |v: &'static str| wants_csv(&headers(&[("accept", v)]));
        assert!(csv("text/csv"));
        assert!(csv("text/csv, application/json;q=0.5"));
        assert!(!csv("application/json, text/csv"));
        assert!(!csv("*/*"));
        assert!(!wants_csv(&HeaderMap::new()));
    }
}
