//! History, overview, the TLD catalogue and the registrars: parameters in,
//! a call into [`crate::query`], a body out, under the same rules as the price
//! endpoints (key 401, rate 429, parameters 400, plan 403, existence 404, credits 429,
//! one credit per answer).
//!
//! Member rules: history follows the price endpoints (a plan that covers the 22 free
//! TLDs only gets 403 for the others). The overview and the catalogue answer every TLD,
//! as the spec's public pages do; what the caller's plan does not see is `null` and
//! named in `members_only`. Every query here takes the caller's [`crate::sight::Sight`]:
//! the plan matrix of `docs/API.md` lives there, not here.

use hyper::Request;

use super::prices::check_plan;
use super::{Connection, Reuse, State, Step, answered};
use crate::access::Caller;
use crate::http::params;
use crate::http::problem::Problem;
use crate::http::router::RouteId;
use crate::query::{self, CatalogueRequest, HistoryRequest, OverviewRequest, RegistrarRequest};
use crate::store::Loaded;

/// The endpoints of this file, as the router tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// Price history of the `{tld}` segment.
    History,
    /// Overview of the `{tld}` segment.
    Overview,
    /// The TLD catalogue.
    Tlds,
    /// Every registrar.
    RegistrarList,
    /// One registrar (the `{key}` segment) and its price list.
    Registrar,
}

/// Answers one endpoint: snapshot, key, rate, parameters, plan, existence, credits,
/// answer (a credit kept in Redis is left to [`Step::finish`]).
pub fn endpoint<B>(
    state: &State,
    req: &Request<B>,
    route: RouteId,
    endpoint: Endpoint,
    segment: &str,
    conn: &Connection,
) -> Step {
    // Every answer here depends only on the snapshot, the plan and the target.
    answered(
        state,
        req,
        route,
        segment,
        conn,
        Reuse::Whole,
        |loaded, caller, out| {
            answer(
                state,
                loaded,
                caller,
                req.uri().query(),
                endpoint,
                segment,
                out,
            )
        },
    )
}

/// The snapshot's identity in cursors: the low 64 bits of its content hash.
fn snapshot_id(loaded: &Loaded) -> u64 {
    loaded.snapshot.header().content_hash as u64
}

fn answer(
    state: &State,
    loaded: &Loaded,
    caller: &Caller,
    query: Option<&str>,
    endpoint: Endpoint,
    segment: &str,
    out: &mut Vec<u8>,
) -> Result<(), Problem> {
    let data = loaded.snapshot.data();
    match endpoint {
        Endpoint::History => {
            let tld = params::path_tld(segment)?;
            let [registrars, from, to] = params::pick(query, ["registrars", "from", "to"])?;
            let registrars = params::registrars(registrars.as_deref())?;
            let (from, to) = params::window(from.as_deref(), to.as_deref())?;
            check_plan(state, caller, std::slice::from_ref(&tld))?;
            let keys = registrars.as_deref().map(super::prices::as_strs);
            let req = HistoryRequest {
                tld: &tld,
                registrars: keys.as_deref(),
                from,
                to,
                sight: caller.sight(),
            };
            query::history(data, &req, out).map_err(Problem::from_query)
        }
        Endpoint::Overview => {
            let tld = params::path_tld(segment)?;
            let [max_age, include_stale] = params::pick(query, ["max_age_days", "include_stale"])?;
            let fresh = super::prices::freshness(
                state,
                caller,
                max_age.as_deref(),
                include_stale.as_deref(),
            )?;
            let req = OverviewRequest {
                tld: &tld,
                fresh,
                sight: caller.sight(),
            };
            query::overview(data, &req, out).map_err(Problem::from_query)
        }
        Endpoint::Tlds => {
            let [q, kind, sort, limit, cursor] =
                params::pick(query, ["q", "type", "sort", "limit", "cursor"])?;
            let q = params::search(q.as_deref())?;
            let kind = params::tld_type(kind.as_deref())?;
            let sort = params::sort(sort.as_deref())?;
            let limit = params::page_limit(limit.as_deref())?;
            let cursor = params::cursor(cursor.as_deref())?;
            let req = CatalogueRequest {
                q: q.as_deref(),
                kind,
                sort,
                limit,
                cursor,
                sight: caller.sight(),
                snapshot: snapshot_id(loaded),
            };
            query::catalogue(data, &req, out).map_err(Problem::from_query)
        }
        Endpoint::RegistrarList => {
            query::registrars_list(data, &state.config.public_url, out);
            Ok(())
        }
        Endpoint::Registrar => {
            let key = params::path_registrar(segment)?;
            let [limit, cursor] = params::pick(query, ["limit", "cursor"])?;
            let limit = params::page_limit(limit.as_deref())?;
            let cursor = params::cursor(cursor.as_deref())?;
            let req = RegistrarRequest {
                key: &key,
                limit,
                cursor,
                sight: caller.sight(),
                public_url: &state.config.public_url,
                snapshot: snapshot_id(loaded),
            };
            query::registrar(data, &req, out).map_err(Problem::from_query)
        }
    }
}
