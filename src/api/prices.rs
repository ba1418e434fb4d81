//! The price endpoints (docs/API.md, "Endpoints"): cheapest, prices and registrars by TLD, in their
//! client and public variants. Parameters in, a call into [`crate::query`], a body out.

use std::borrow::Cow;

use hyper::Request;
use smallvec::SmallVec;

use super::{Connection, Reuse, State, Step, answered};
use crate::access::Caller;
use crate::http::params::{self, CheapestParams, FreshnessParams, PricesParams, RegistrarsParams};
use crate::http::problem::Problem;
use crate::http::router::Route;
use crate::query::{self, CheapestRequest, Presentation, PricesRequest, RegistrarsRequest, Shape};
use crate::store::Loaded;
use crate::time::Stamp;
use serde_json::{Value, json};

use crate::http::openapi::{keyed, merge, ok, optional_key, price_errors, refs};

/// The price endpoints, as the router tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// The cheapest registrars per TLD, in the client or the public shape.
    Cheapest(Shape),
    /// The prices of chosen registrars (every variant answers alike).
    Prices,
    /// The registrars that sell a TLD, with the raw `{tld}` path segment.
    Registrars,
}

/// Answers one price endpoint: snapshot, key, rate, parameters, plan, existence,
/// credits, answer (a credit kept in Redis is left to [`Step::finish`]).
#[allow(clippy::too_many_arguments)]
pub fn endpoint<B>(
    state: &State,
    req: &Request<B>,
    route: &'static Route,
    endpoint: Endpoint,
    segment: &str,
    conn: &Connection,
    started: Stamp,
) -> Step {
    // One snapshot for the whole request; parameters (400), plan (403) and existence
    // (404) are all in `answer`, which writes the body. Every answer here depends only
    // on the snapshot, the plan and the target, but for the prices' elapsed time.
    let reuse = match endpoint {
        Endpoint::Prices => Reuse::Elapsed(started),
        Endpoint::Cheapest(_) | Endpoint::Registrars => Reuse::Whole,
    };
    answered(
        state,
        req,
        route,
        segment,
        conn,
        reuse,
        |loaded, caller, out| {
            answer(
                state,
                loaded,
                caller,
                req.uri().query(),
                endpoint,
                segment,
                started,
                out,
            )
        },
    )
}

/// Parses the parameters of `route`, applies the plan, and writes the answer.
#[allow(clippy::too_many_arguments)]
fn answer(
    state: &State,
    loaded: &Loaded,
    caller: &Caller,
    query: Option<&str>,
    endpoint: Endpoint,
    segment: &str,
    started: Stamp,
    out: &mut Vec<u8>,
) -> Result<(), Problem> {
    let data = loaded.snapshot.data();
    match endpoint {
        Endpoint::Cheapest(shape) => {
            let values = params::pick(query, CheapestParams::NAMES)?;
            let p = CheapestParams::from_values(&values)?;
            let money = money_of(data, p.currency.as_deref())?;
            let fresh = freshness(state, caller, p.fresh);
            check_plan(state, caller, &p.tlds)?;
            let names = as_strs(&p.tlds);
            let req = CheapestRequest {
                tlds: &names,
                limit: p.limit,
                shape,
                tier: (shape == Shape::Client).then(|| caller.tier()),
                fresh,
                sight: caller.sight(),
            };
            let how = Presentation {
                ranking: p.sort,
                money,
            };
            match p.at {
                None => query::cheapest_in(data, &req, how, out),
                Some(day) => query::cheapest_at_in(data, &req, day, how, out),
            }
            .map_err(Problem::from_query)
        }
        Endpoint::Prices => {
            let values = params::pick(query, PricesParams::NAMES)?;
            let p = PricesParams::from_values(&values)?;
            let money = money_of(data, p.currency.as_deref())?;
            let fresh = freshness(state, caller, p.fresh);
            check_plan(state, caller, &p.tlds)?;
            let names = as_strs(&p.tlds);
            let keys = p.registrars.as_deref().map(as_strs);
            let req = PricesRequest {
                tlds: &names,
                registrars: keys.as_deref(),
                started,
                fresh,
                sight: caller.sight(),
            };
            match p.at {
                None => query::prices_in(data, &req, money, out),
                Some(day) => query::prices_at_in(data, &req, day, money, out),
            }
            .map_err(Problem::from_query)
        }
        Endpoint::Registrars => {
            let tld = params::path_tld(segment)?;
            let values = params::pick(query, RegistrarsParams::NAMES)?;
            let p = RegistrarsParams::from_values(&values)?;
            let money = money_of(data, p.currency.as_deref())?;
            let fresh = freshness(state, caller, p.fresh);
            check_plan(state, caller, std::slice::from_ref(&tld))?;
            let req = RegistrarsRequest {
                tld: &tld,
                include_prices: p.include_prices,
                sight: caller.sight(),
                public_url: &state.config.public_url,
                fresh,
            };
            query::registrars_in(data, &req, money, out).map_err(Problem::from_query)
        }
    }
}

/// The money of a request's `currency` (USD when it gave none): a code the snapshot
/// has no rate for is the request's fault, answered before the plan is looked at.
pub fn money_of<'s>(
    data: &'s crate::snapshot::ArchivedSnapshotData,
    currency: Option<&str>,
) -> Result<query::Money<'s>, Problem> {
    currency.map_or(Ok(query::Money::USD), |c| {
        query::money(data, c).map_err(Problem::from_query)
    })
}

/// The request's staleness rule: the `max_age_days` and `include_stale` it asked for,
/// the server's default age, today as of the caller's admission.
pub fn freshness(state: &State, caller: &Caller, asked: FreshnessParams) -> query::Freshness {
    asked.at(
        state.config.max_age_days,
        state.day_ms(caller.admitted_ms()),
    )
}

/// The names as `&str`s, up to 16 inline, so the usual request allocates no second
/// list.
pub fn as_strs<'a>(items: &'a [Cow<'_, str>]) -> SmallVec<[&'a str; 16]> {
    items.iter().map(|item| item.as_ref()).collect()
}

/// 403 `tld_not_in_plan` when any TLD asked for is outside the caller's plan (checked
/// before existence: a free caller learns nothing about paid TLDs).
pub fn check_plan(state: &State, caller: &Caller, tlds: &[Cow<'_, str>]) -> Result<(), Problem> {
    match Problem::tld_not_in_plan(
        state.access.plans(),
        caller.plan(),
        tlds.iter().map(|t| t.as_ref()),
    ) {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// The OpenAPI operation of the cheapest endpoint, client or public.
pub(crate) fn cheapest_doc(shape: Shape) -> Value {
    let mut op = match shape {
        Shape::Client => json!({
            "operationId": "clientCheapest",
            "summary": "Cheapest registrars for TLDs",
            "description": "Per TLD, the registrars that sell it ranked by first-year registration price (ties: renewal price, then registrar key), cut to `limit` and to the sellers the caller's plan shows; `registrar_count` counts every seller. `meta.tier` is the caller's plan; `meta.not_found` lists TLDs that are not known. What each plan sees is the plan matrix of docs/API.md: a plan that shows N sellers of a TLD (public, free, basic: 5) gets at most N entries whatever `limit` says.",
            "security": keyed(),
            "parameters": refs(&CheapestParams::COMPONENTS),
            "responses": { "200": ok("CheapestClient", "Cheapest registrars per TLD.") }
        }),
        Shape::Public => json!({
            "operationId": "publicCheapest",
            "summary": "Cheapest registrars for TLDs (public overview)",
            "description": "Like the client variant, with transfer prices, 1-, 3- and 5-year totals and per-TLD averages. Without a key only the 22 free TLDs are served, metered per client address. The averages are null when exactly one seller is hidden from the caller (they would give its price).",
            "security": optional_key(),
            "parameters": refs(&CheapestParams::COMPONENTS),
            "responses": { "200": ok("CheapestPublic", "Cheapest registrars per TLD, with averages.") }
        }),
    };
    merge(&mut op["responses"], price_errors(true));
    op
}

/// The OpenAPI operation of the prices endpoint: `operation_id` is `clientPrices`,
/// `publicPrices` or `publicPricesV1`.
pub(crate) fn prices_doc(operation_id: &str) -> Value {
    let client = operation_id == "clientPrices";
    let mut op = json!({
        "operationId": operation_id,
        "summary": if client { "Prices of selected registrars" } else { "Prices of selected registrars (public variant)" },
        "description": "Per TLD, the price record of each requested registrar that has one (every registrar with a price for the TLD when `registrars` is absent), among the sellers the caller's plan shows: a registrar it does not show is answered as one without a price. Unknown TLDs and registrar keys are listed in `stats.not_found`.",
        "security": if client { keyed() } else { optional_key() },
        "parameters": refs(&PricesParams::COMPONENTS),
        "responses": { "200": ok("Prices", "Price records per TLD and registrar.") }
    });
    merge(&mut op["responses"], price_errors(true));
    op
}

/// The OpenAPI operation of the registrars-by-TLD listing.
pub(crate) fn registrars_doc() -> Value {
    let mut op = json!({
        "operationId": "clientRegistrars",
        "summary": "Registrars that sell a TLD",
        "description": "Registrars ordered by ascending registration price. Free and basic plans get at most 5 entries and a `message` when more exist; pro and enterprise get all.",
        "security": keyed(),
        "parameters": refs(&[&["tld"][..], &RegistrarsParams::COMPONENTS].concat()),
        "responses": { "200": ok("Registrars", "Registrars selling the TLD.") }
    });
    merge(&mut op["responses"], price_errors(true));
    op
}
