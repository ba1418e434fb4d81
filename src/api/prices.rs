//! The price endpoints (docs/API.md, "Endpoints"): cheapest, prices and registrars by TLD, in their
//! client and public variants. Parameters in, a call into [`crate::query`], a body out.

use std::borrow::Cow;

use hyper::Request;
use smallvec::SmallVec;

use super::{Connection, Reuse, State, Step, answered};
use crate::access::Caller;
use crate::http::params;
use crate::http::problem::Problem;
use crate::http::router::RouteId;
use crate::query::{self, CheapestRequest, PricesRequest, RegistrarsRequest, Shape};
use crate::store::Loaded;
use crate::time::Stamp;

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
    route: RouteId,
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
            let [tlds, limit, at, max_age, include_stale] = params::pick(
                query,
                ["tlds", "limit", "at", "max_age_days", "include_stale"],
            )?;
            let tlds = params::tlds(tlds.as_deref())?;
            let limit = params::limit(limit.as_deref())?;
            let at = params::day("at", at.as_deref())?;
            let fresh = freshness(state, caller, max_age.as_deref(), include_stale.as_deref())?;
            check_plan(state, caller, &tlds)?;
            let names = as_strs(&tlds);
            let req = CheapestRequest {
                tlds: &names,
                limit,
                shape,
                tier: (shape == Shape::Client).then(|| caller.tier()),
                fresh,
                sight: caller.sight(),
            };
            match at {
                None => query::cheapest(data, &req, out),
                Some(day) => query::cheapest_at(data, &req, day, out),
            }
            .map_err(Problem::from_query)
        }
        Endpoint::Prices => {
            let [tlds, registrars, at, max_age] =
                params::pick(query, ["tlds", "registrars", "at", "max_age_days"])?;
            let tlds = params::tlds(tlds.as_deref())?;
            let registrars = params::registrars(registrars.as_deref())?;
            let at = params::day("at", at.as_deref())?;
            let fresh = freshness(state, caller, max_age.as_deref(), None)?;
            check_plan(state, caller, &tlds)?;
            let names = as_strs(&tlds);
            let keys = registrars.as_deref().map(as_strs);
            let req = PricesRequest {
                tlds: &names,
                registrars: keys.as_deref(),
                started,
                fresh,
                sight: caller.sight(),
            };
            match at {
                None => query::prices(data, &req, out),
                Some(day) => query::prices_at(data, &req, day, out),
            }
            .map_err(Problem::from_query)
        }
        Endpoint::Registrars => {
            let tld = params::path_tld(segment)?;
            let [include_prices, max_age, include_stale] =
                params::pick(query, ["include_prices", "max_age_days", "include_stale"])?;
            let include_prices =
                params::boolean("include_prices", include_prices.as_deref(), false)?;
            let fresh = freshness(state, caller, max_age.as_deref(), include_stale.as_deref())?;
            check_plan(state, caller, std::slice::from_ref(&tld))?;
            let req = RegistrarsRequest {
                tld: &tld,
                include_prices,
                sight: caller.sight(),
                public_url: &state.config.public_url,
                fresh,
            };
            query::registrars(data, &req, out).map_err(Problem::from_query)
        }
    }
}

/// The request's staleness rule: its `max_age_days` and `include_stale`, the server's
/// default age, today as of the caller's admission.
pub fn freshness(
    state: &State,
    caller: &Caller,
    max_age_days: Option<&str>,
    include_stale: Option<&str>,
) -> Result<query::Freshness, Problem> {
    params::freshness(
        max_age_days,
        include_stale,
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
