//! The domain owner's endpoints (docs/AUDIT.md): portfolio audit, bulk domain lookup and
//! domain search. Bodies and parameters in, a call into [`crate::audit`], a body out.
//!
//! | route | body | answer | credits |
//! |---|---|---|---|
//! | `POST /api/v1/client/portfolio/audit` | JSON or CSV, at most [`AUDIT_MAX_BODY`] | JSON, or CSV with `Accept: text/csv` | one per started [`DOMAINS_PER_CREDIT`] entries |
//! | `POST /api/v1/client/domains/lookup` | JSON, at most [`LOOKUP_MAX_BODY`](super::body::LOOKUP_MAX_BODY) | JSON | one |
//! | `GET /api/v1/client/domains/search` | — | JSON | one, and one of the plan's daily searches; with `check_availability=true`, the plan's availability credits per candidate too (`docs/LIVE.md`) |
//!
//! The order of checks follows the price endpoints: key (401), rate (429), content type
//! (415), body size (413, from `Content-Length` before reading), body syntax (400), the
//! plan's audit limit (413 `too_many_domains`, before any audit work), daily searches
//! (429 `daily_limit`), credits (429), answer. `X-Credits-Cost` on every 200 says what
//! the answer cost.

use hyper::body::Incoming;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Request, StatusCode};

use super::body::{CREDITS_COST, Kind, content_kind, read_domains, wants_csv, with_cost};
use super::{Connection, HttpResponse, State, begin, finish_costing, read_body, refuse};
use crate::audit::lookup::{self, LookupRequest};
use crate::audit::portfolio::{self, InputError};
use crate::audit::search::{self, SearchRequest};
use crate::http::params;
use crate::http::problem::{Problem, echo};
use crate::http::router::RouteId;

/// Largest portfolio body read: 10,000 CSV rows with a registrar, a price, a date and a
/// few export columns fit with room to spare.
pub const AUDIT_MAX_BODY: usize = 4 << 20;
/// An audit costs one credit per started block of this many entries (duplicates and
/// invalid names included: they are work too), so 1 to 100 domains cost 1 credit,
/// 101 cost 2, 10,000 cost 100.
pub const DOMAINS_PER_CREDIT: usize = 100;

const SEARCHES_REMAINING: HeaderName = HeaderName::from_static("x-searches-remaining");
const CSV: HeaderValue = HeaderValue::from_static("text/csv; charset=utf-8");
const AUDIT_ACCEPTS: &str = "application/json, text/csv";

/// The Public Suffix List every domain endpoint splits names with.
pub use super::body::names;

/// `POST /api/v1/client/portfolio/audit`.
pub async fn audit(state: &State, req: Request<Incoming>, conn: &Connection) -> HttpResponse {
    let route = RouteId::PortfolioAudit;
    let (loaded, caller) = match begin(state, &req, route, conn).await {
        Ok(begun) => begun,
        Err(response) => return response,
    };
    let Some(kind) = content_kind(req.headers()) else {
        return refuse(
            Problem::UnsupportedMediaType {
                accept: AUDIT_ACCEPTS,
            },
            &caller,
        );
    };
    let csv_out = wants_csv(req.headers());
    let body = match read_body(req, AUDIT_MAX_BODY, state.config.body_timeout).await {
        Ok((_, body)) => body,
        Err(problem) => return refuse(problem, &caller),
    };
    // The plan's limit stops the parser at the first entry too many: no audit work.
    let limit = caller.plan().audit_limit as usize;
    let parsed = match kind {
        Kind::Json => portfolio::parse_json(&body, limit),
        Kind::Csv => portfolio::parse_csv(&body, limit),
    };
    let parsed = match parsed {
        Ok(p) => p,
        Err(InputError::TooMany { limit }) => {
            let plan = caller.tier().to_owned();
            return refuse(Problem::TooManyDomains { limit, plan }, &caller);
        }
        Err(InputError::Invalid(reason)) => {
            return refuse(Problem::InvalidBody { reason }, &caller);
        }
    };
    drop(body);
    let data = loaded.snapshot.data();
    let answer = portfolio::audit(
        data,
        names(),
        &parsed,
        state.freshness(false),
        caller.sight(),
    );
    let credits = parsed.holdings.len().div_ceil(DOMAINS_PER_CREDIT).max(1) as u64;
    let mut out = state.body_buffer(route);
    if csv_out {
        portfolio::write_csv(data, &answer, &mut out);
    } else {
        portfolio::write_json(data, &answer, Some(caller.tier()), &mut out);
    }
    let mut response = finish_costing(state, route, caller, out, credits).await;
    if response.status() == StatusCode::OK {
        let headers = response.headers_mut();
        if csv_out {
            headers.insert(header::CONTENT_TYPE, CSV);
        }
        headers.insert(CREDITS_COST, HeaderValue::from(credits));
    }
    response
}

/// `POST /api/v1/client/domains/lookup?limit=`.
pub async fn lookup(state: &State, req: Request<Incoming>, conn: &Connection) -> HttpResponse {
    let route = RouteId::DomainsLookup;
    let (loaded, caller) = match begin(state, &req, route, conn).await {
        Ok(begun) => begun,
        Err(response) => return response,
    };
    let parsed = params::pick(
        req.uri().query(),
        ["limit", "max_age_days", "include_stale"],
    )
    .and_then(|[limit, max_age, include_stale]| {
        let fresh =
            super::prices::freshness(state, &caller, max_age.as_deref(), include_stale.as_deref())?;
        Ok((params::limit(limit.as_deref())?, fresh))
    });
    let (limit, fresh) = match parsed {
        Ok(p) => p,
        Err(problem) => return refuse(problem, &caller),
    };
    let domains = match read_domains(state, req).await {
        Ok(domains) => domains,
        Err(problem) => return refuse(problem, &caller),
    };
    let mut out = state.body_buffer(route);
    let req = LookupRequest {
        names: &domains,
        limit,
        tier: Some(caller.tier()),
        fresh,
    };
    lookup::lookup(
        loaded.snapshot.data(),
        names(),
        &req,
        caller.sight(),
        &mut out,
    );
    with_cost(finish_costing(state, route, caller, out, 1).await, 1)
}

/// `GET /api/v1/client/domains/search?q=&max_price=&types=&limit=`.
pub async fn search(state: &State, req: &Request<Incoming>, conn: &Connection) -> HttpResponse {
    let route = RouteId::DomainsSearch;
    let (loaded, caller) = match begin(state, req, route, conn).await {
        Ok(begun) => begun,
        Err(response) => return response,
    };
    let parsed = params::pick(
        req.uri().query(),
        [
            "q",
            "max_price",
            "types",
            "limit",
            "check_availability",
            "max_age_days",
            "include_stale",
        ],
    )
    .and_then(
        |[
            q,
            max_price,
            types,
            limit,
            check_availability,
            max_age,
            include_stale,
        ]| {
            let fresh = super::prices::freshness(
                state,
                &caller,
                max_age.as_deref(),
                include_stale.as_deref(),
            )?;
            let q = q
                .filter(|q| !q.trim().is_empty())
                .ok_or(Problem::MissingParameter { name: "q" })?;
            let max_price = match max_price.as_deref() {
                None => None,
                Some(m) => {
                    let bad = |reason: String| Problem::InvalidParameter {
                        name: "max_price",
                        value: Some(echo(m)),
                        reason,
                    };
                    match crate::price::parse_cents(m) {
                        Ok(Some(c)) => Some(c),
                        Ok(None) => return Err(bad("must not be empty".into())),
                        Err(e) => return Err(bad(format!("must be a price in dollars: {e}"))),
                    }
                }
            };
            let types = match types.as_deref() {
                None => Vec::new(),
                Some(t) => search::parse_types(t).map_err(|reason| Problem::InvalidParameter {
                    name: "types",
                    value: Some(echo(t)),
                    reason,
                })?,
            };
            let check =
                params::boolean("check_availability", check_availability.as_deref(), false)?;
            let limit = params::limit(limit.as_deref())?;
            Ok((q, max_price, types, limit, check, fresh))
        },
    );
    let (q, max_price, types, limit, check_availability, fresh) = match parsed {
        Ok(p) => p,
        Err(problem) => return refuse(problem, &caller),
    };
    let mut out = state.body_buffer(route);
    let req = SearchRequest {
        q: &q,
        max_price,
        types: &types,
        limit,
        tier: Some(caller.tier()),
        fresh,
    };
    if let Err(e) = search::search(
        loaded.snapshot.data(),
        names(),
        &req,
        caller.sight(),
        &mut out,
    ) {
        return refuse(
            Problem::InvalidParameter {
                name: "q",
                value: Some(echo(&q)),
                reason: e.0,
            },
            &caller,
        );
    }
    // Live availability of the candidates, when asked: the plan, the server and the
    // credits are checked before the day's search is counted.
    let availability = if check_availability {
        match super::live::SearchAvailability::prepare(state, &caller, &out, 1) {
            Ok(a) => Some(a),
            Err(problem) => return refuse(problem, &caller),
        }
    } else {
        None
    };
    // A valid search counts against the day's searches, whatever it found.
    let left = match state.access.take_search(&caller) {
        Ok(left) => left,
        Err(retry_after_secs) => {
            let limit = caller.plan().searches_per_day.unwrap_or(0);
            return refuse(
                Problem::DailyLimit {
                    limit,
                    retry_after_secs,
                },
                &caller,
            );
        }
    };
    let mut credits = 1;
    if let Some(a) = availability {
        credits += a.credits;
        a.fill(state, &mut out).await;
    }
    let mut response = with_cost(
        finish_costing(state, route, caller, out, credits).await,
        credits,
    );
    if let (Some(left), true) = (left, response.status() == StatusCode::OK) {
        response
            .headers_mut()
            .insert(SEARCHES_REMAINING, HeaderValue::from(left));
    }
    response
}
