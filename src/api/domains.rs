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

use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Request, StatusCode};

use super::body::{CREDITS_COST, Kind, content_kind, names, read_domains, wants_csv, with_cost};
use super::{
    Connection, HttpResponse, RequestBody, State, begin, finish_costing, read_body, refuse,
};
use crate::audit::LOOKUP_MAX;
use crate::audit::lookup::{self, LookupRequest};
use crate::audit::portfolio::{self, InputError, MAX_NAME_FIELD};
use crate::audit::search::{self, SearchRequest};
use crate::http::params::{self, AuditParams, LookupParams, SearchParams};
use crate::http::problem::{Problem, echo};
use crate::http::router::Route;
use serde_json::{Value, json};

use crate::http::openapi::{AUDIT_CSV, DOLLARS, SEARCH_Q, keyed, merge, ok, price_errors, refs};

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

/// `POST /api/v1/client/portfolio/audit`.
pub async fn audit<B: RequestBody>(
    state: &State,
    req: Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> HttpResponse {
    let (loaded, caller) = match begin(state, &req, route, conn).await {
        Ok(begun) => begun,
        Err(response) => return response,
    };
    let currency = match params::pick(req.uri().query(), AuditParams::NAMES)
        .and_then(|values| AuditParams::from_values(&values))
    {
        Ok(p) => p.currency,
        Err(problem) => return refuse(problem, &caller),
    };
    if let Err(problem) = super::prices::money_of(loaded.snapshot.data(), currency.as_deref()) {
        return refuse(problem, &caller);
    }
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
    // Checked above: a currency the snapshot has.
    let money =
        super::prices::money_of(data, currency.as_deref()).unwrap_or(crate::query::Money::USD);
    if csv_out {
        portfolio::write_csv_in(data, &answer, money.fx, &mut out);
    } else {
        portfolio::write_json_in(data, &answer, Some(caller.tier()), money, &mut out);
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
pub async fn lookup<B: RequestBody>(
    state: &State,
    req: Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> HttpResponse {
    let (loaded, caller) = match begin(state, &req, route, conn).await {
        Ok(begun) => begun,
        Err(response) => return response,
    };
    let data = loaded.snapshot.data();
    let parsed = params::pick(req.uri().query(), LookupParams::NAMES).and_then(|values| {
        let p = LookupParams::from_values(&values)?;
        // A currency the snapshot has no rate for is refused before the body is read.
        let money = super::prices::money_of(data, p.currency.as_deref())?;
        let fresh = super::prices::freshness(state, &caller, p.fresh);
        Ok((p.limit, fresh, money))
    });
    let (limit, fresh, money) = match parsed {
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
    lookup::lookup_in(data, names(), &req, caller.sight(), money, &mut out);
    with_cost(finish_costing(state, route, caller, out, 1).await, 1)
}

/// `GET /api/v1/client/domains/search?q=&max_price=&types=&limit=`.
pub async fn search<B: Sync>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    conn: &Connection,
) -> HttpResponse {
    let (loaded, caller) = match begin(state, req, route, conn).await {
        Ok(begun) => begun,
        Err(response) => return response,
    };
    let values = match params::pick(req.uri().query(), SearchParams::NAMES) {
        Ok(values) => values,
        Err(problem) => return refuse(problem, &caller),
    };
    let SearchParams {
        q,
        max_price,
        types,
        limit,
        check_availability,
        fresh,
        currency,
    } = match SearchParams::from_values(&values) {
        Ok(p) => p,
        Err(problem) => return refuse(problem, &caller),
    };
    let data = loaded.snapshot.data();
    let money = match super::prices::money_of(data, currency.as_deref()) {
        Ok(money) => money,
        Err(problem) => return refuse(problem, &caller),
    };
    let fresh = super::prices::freshness(state, &caller, fresh);
    let mut out = state.body_buffer(route);
    let req = SearchRequest {
        q,
        max_price,
        types: &types,
        limit,
        tier: Some(caller.tier()),
        fresh,
    };
    if let Err(e) = search::search_in(data, names(), &req, caller.sight(), money, &mut out) {
        return refuse(
            Problem::InvalidParameter {
                name: "q",
                value: Some(echo(q)),
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

/// The OpenAPI operation of the portfolio audit.
pub(crate) fn audit_doc() -> Value {
    let mut op = json!({
        "operationId": "portfolioAudit",
        "summary": "Portfolio audit",
        "description": "For each domain of a portfolio: its public suffix, the yearly price paid now (stated, or tldsnap's price at the stated registrar), the cheapest renewal anywhere, the cheapest transfer-then-renew path, the recommendation, yearly and 5-year savings and flags; totals and a per-registrar breakdown. Names that are not domain names are entries with `error: invalid_name`; duplicates are answered once with a `count`. The plan's audit limit (free 500, basic 1,000, pro 2,000, enterprise 10,000) is checked before any work: over it is 413 `too_many_domains`. Costs one credit per started 100 entries (header `X-Credits-Cost`). `Accept: text/csv` answers the per-domain rows as CSV. See docs/AUDIT.md.",
        "security": keyed(),
        "parameters": crate::http::openapi::refs(&AuditParams::COMPONENTS),
        "requestBody": {
            "required": true,
            "description": "At most 4 MiB.",
            "content": {
                "application/json": { "schema": { "$ref": "#/components/schemas/AuditRequest" } },
                "text/csv": { "schema": { "type": "string", "pattern": AUDIT_CSV, "description": "A header row naming the columns `domain` (required), `registrar`, `renew_price`, `expires` (any order, case-insensitive; other columns ignored and listed in `meta.ignored_columns`), then one row per domain. The pattern describes the simplest form, a `domain` column alone; a `renew_price` must be a decimal with at most two decimals and `expires` a day (YYYY-MM-DD), or the body is a 400." },
                              "example": "domain,registrar,renew_price,expires\nexample.com,namecheap,18.48,2026-09-10\n" }
            }
        },
        "responses": { "200": {
            "description": "The audit.",
            "headers": { "X-Credits-Cost": { "$ref": "#/components/headers/X-Credits-Cost" } },
            "content": {
                "application/json": { "schema": { "$ref": "#/components/schemas/AuditAnswer" } },
                "text/csv": { "schema": { "type": "string", "description": "Header `input,domain,suffix,count,registrar_key,expires,current_price,price_source,cheapest_renewal_registrar,cheapest_renewal_price,best_transfer_registrar,best_transfer_price,best_transfer_renew_price,best_transfer_5_year,recommendation,optimal_price,savings_per_year,savings_5_year,flags,error`, one row per distinct domain; flags joined by `;`." } }
            }
        } }
    });
    body_errors(&mut op);
    op
}

/// The OpenAPI operation of the bulk lookup.
pub(crate) fn lookup_doc() -> Value {
    let mut op = json!({
        "operationId": "domainsLookup",
        "summary": "Bulk domain lookup",
        "description": "For up to 100 full domain names: each one's public suffix and the cheapest registrars of that suffix, in the entry shape of the cheapest endpoint (`limit` applies; with `currency`, the prices converted as there, the ranking the same, and `meta.currency`). A name that is not a domain name, whose suffix is unknown, or whose suffix the plan excludes is an entry with `error` (`invalid_name`, `unknown_tld`, `tld_not_in_plan`), not a failed request. 101 names or more: 400 `too_many_values`. One credit.",
        "security": keyed(),
        "parameters": refs(&LookupParams::COMPONENTS),
        "requestBody": { "required": true, "description": "At most 256 KiB.", "content": { "application/json": { "schema": {
            "type": "object", "required": ["domains"], "additionalProperties": false,
            "properties": { "domains": { "type": "array", "minItems": 1, "maxItems": LOOKUP_MAX, "items": { "type": "string", "maxLength": MAX_NAME_FIELD }, "examples": [["shop.example.co.uk", "bücher.de"]] } } } } } },
        "responses": { "200": ok("LookupAnswer", "Per name, its suffix and cheapest registrars.") }
    });
    body_errors(&mut op);
    op
}

/// The OpenAPI operation of the domain search.
pub(crate) fn search_doc() -> Value {
    let mut op = json!({
        "operationId": "domainsSearch",
        "summary": "Domain search",
        "description": "For a wanted name (`bestshop`, or words `best shop`, joined), the candidate domains across the TLDs tldsnap prices, ranked by first-year price (ties: TLD name), each with renewal, 5-year cost, renewal-trap flag and IANA TLD type. With `currency`, the prices are converted (the 5-year cost summed from the converted prices) and `meta.currency` says so; the candidates and their order are the USD answer's, and `max_price` stays in US dollars. A `q` with a suffix (`bestshop.io`) puts that suffix first, marked `requested`, whatever the filters. Availability is not known from prices: every candidate says `\"availability\": \"unknown\"`, unless `check_availability=true` asks for it live. Plans with a daily search limit (free: 5 per UTC day) get 429 `daily_limit` with `Retry-After` until the next UTC midnight; `X-Searches-Remaining` tells what is left. One credit.",
        "security": keyed(),
        "parameters": [
            { "name": "q", "in": "query", "required": true, "description": "The wanted name, words (joined), or a full domain name.", "schema": { "type": "string", "pattern": SEARCH_Q, "examples": ["best shop", "bestshop.io"] } },
            { "name": "max_price", "in": "query", "required": false, "description": "Only candidates whose first-year price is at most this many US dollars (a decimal with at most two decimals), whatever `currency` the prices are shown in.", "schema": { "type": "string", "pattern": DOLLARS, "examples": ["12.50"] } },
            { "name": "types", "in": "query", "required": false, "description": "Comma-separated IANA TLD types to keep.", "style": "form", "explode": false,
              "schema": { "type": "array", "minItems": 1, "items": { "enum": crate::query::TYPES }, "examples": [["generic", "country-code"]] } },
            { "$ref": "#/components/parameters/limit" },
            { "$ref": "#/components/parameters/max_age_days" },
            { "$ref": "#/components/parameters/include_stale" },
            { "name": "check_availability", "in": "query", "required": false, "description": "When true, each candidate's `availability` is looked up live (docs/LIVE.md): `available`, `registered`, `reserved` or `unknown`, with `availability_reason`. Costs the plan's availability credits per candidate on top of the search's (at most `limit`, the bulk limit of 100); needs a plan with availability lookups (403 `lookup_not_in_plan`) and a server started with `--live` (404 `live_unavailable`).", "schema": { "type": "boolean", "default": false } },
            { "$ref": "#/components/parameters/currency" }
        ],
        "responses": { "200": ok("SearchAnswer", "Candidate domains, cheapest first year first.") }
    });
    let responses = &mut op["responses"];
    merge(responses, price_errors(true));
    responses["429"] = json!({ "$ref": "#/components/responses/TooManySearches" });
    if let Some(ok) = responses["200"]["headers"].as_object_mut() {
        ok.insert(
            "X-Credits-Cost".into(),
            json!({ "$ref": "#/components/headers/X-Credits-Cost" }),
        );
        ok.insert("X-Searches-Remaining".into(), json!({ "description": "Searches left today (UTC) on a plan with a daily limit.", "schema": { "type": "integer" } }));
    }
    op
}

/// The refusals of an operation that reads a JSON body, and its credit cost header.
fn body_errors(op: &mut Value) {
    let responses = &mut op["responses"];
    merge(responses, price_errors(true));
    merge(
        responses,
        json!({
            "400": { "$ref": "#/components/responses/BadBody" },
            "408": { "$ref": "#/components/responses/RequestTimeout" },
            "413": { "$ref": "#/components/responses/PayloadTooLarge" },
            "415": { "$ref": "#/components/responses/UnsupportedMediaType" }
        }),
    );
    // The body's problems replace the query's in this operation's 400.
    responses["400"] = json!({ "$ref": "#/components/responses/BadBody" });
    if let Some(ok) = responses["200"]["headers"].as_object_mut() {
        ok.insert(
            "X-Credits-Cost".into(),
            json!({ "$ref": "#/components/headers/X-Credits-Cost" }),
        );
    }
}
