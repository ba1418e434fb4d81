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
use crate::http::params::{self, CatalogueParams, HistoryParams, OverviewParams, RegistrarParams};
use crate::http::problem::Problem;
use crate::http::router::Route;
use crate::query::{self, HistoryRequest, OverviewRequest, RegistrarRequest};
use crate::store::Loaded;
use serde_json::{Value, json};

use crate::http::openapi::{merge, ok, optional_key, price_errors, refs, variant};

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
    route: &'static Route,
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
            let values = params::pick(query, HistoryParams::NAMES)?;
            let p = HistoryParams::from_values(&values)?;
            let money = super::prices::money_of(data, p.currency.as_deref())?;
            check_plan(state, caller, std::slice::from_ref(&tld))?;
            let keys = p.registrars.as_deref().map(super::prices::as_strs);
            let req = HistoryRequest {
                tld: &tld,
                registrars: keys.as_deref(),
                from: p.from,
                to: p.to,
                sight: caller.sight(),
            };
            query::history_in(data, &req, money, out).map_err(Problem::from_query)
        }
        Endpoint::Overview => {
            let tld = params::path_tld(segment)?;
            let values = params::pick(query, OverviewParams::NAMES)?;
            let p = OverviewParams::from_values(&values)?;
            let money = super::prices::money_of(data, p.currency.as_deref())?;
            let req = OverviewRequest {
                tld: &tld,
                fresh: super::prices::freshness(state, caller, p.fresh),
                sight: caller.sight(),
            };
            query::overview_in(data, &req, money, out).map_err(Problem::from_query)
        }
        Endpoint::Tlds => {
            let values = params::pick(query, CatalogueParams::NAMES)?;
            let p = CatalogueParams::from_values(&values)?;
            let money = super::prices::money_of(data, p.currency.as_deref())?;
            let req = p.request(caller.sight(), snapshot_id(loaded));
            query::catalogue_in(data, &req, money, out).map_err(Problem::from_query)
        }
        Endpoint::RegistrarList => {
            query::registrars_list(data, &state.config.public_url, out);
            Ok(())
        }
        Endpoint::Registrar => {
            let key = params::path_registrar(segment)?;
            let values = params::pick(query, RegistrarParams::NAMES)?;
            let p = RegistrarParams::from_values(&values)?;
            let money = super::prices::money_of(data, p.currency.as_deref())?;
            let req = RegistrarRequest {
                key: &key,
                limit: p.limit,
                cursor: p.cursor,
                sight: caller.sight(),
                public_url: &state.config.public_url,
                snapshot: snapshot_id(loaded),
            };
            query::registrar_in(data, &req, money, out).map_err(Problem::from_query)
        }
    }
}

/// The OpenAPI operation of a TLD's price history, client or public.
pub(crate) fn history_doc(client: bool) -> Value {
    let mut op = variant(
        client,
        ["clientHistory", "publicHistory"],
        "Price history of a TLD",
        "Per registrar (key order, or the order of `registrars`), its dated price changes oldest first (`null` = not offered; a change to all `null` records that the registrar stopped listing the TLD), the price in effect when the window opens (`price_at_from`: the last change before `from`), and `coverage`: the first and last dated feed version of the registrar, so that a window without changes can be told apart from a window without data. A registrar whose offer of today the caller's plan does not see has no changes (its last change is its price now). A window of any length costs one credit.",
        &[&["tld"][..], &HistoryParams::COMPONENTS].concat(),
        ok("History", "Price changes per registrar."),
    );
    merge(&mut op["responses"], price_errors(true));
    op
}

/// The OpenAPI operation of a TLD's overview, client or public.
pub(crate) fn overview_doc(client: bool) -> Value {
    let mut op = variant(
        client,
        ["clientOverview", "publicOverview"],
        "Overview of a TLD",
        "Registrar count, average prices, cheapest registration, lowest renewal and lowest 5-year cost with their registrars, the TLD's type and manager from the IANA root zone database, and whether it is one of the 22 free TLDs. Answers every TLD of the catalogue; a pick whose registrar the caller's plan does not show, and averages that would give a hidden price (exactly one seller hidden), are null and listed in `members_only`. The picks are chosen among fresh prices (`max_age_days`) unless `include_stale=true`; each carries `last_updated`, and `stale_count` says how many of the sellers the caller sees are stale.",
        &[&["tld"][..], &OverviewParams::COMPONENTS].concat(),
        ok("Overview", "The overview of the TLD."),
    );
    merge(&mut op["responses"], catalogue_errors(&["403"]));
    op
}

/// The OpenAPI operation of the TLD catalogue, client or public.
pub(crate) fn tlds_doc(client: bool) -> Value {
    let mut op = variant(
        client,
        ["clientTlds", "publicTlds"],
        "The TLD catalogue",
        "Every TLD of the IANA root zone list and every TLD with a price, one page at a time. Paging with `next_cursor` yields each TLD exactly once; a cursor of an earlier snapshot or of another listing is a 400 naming `cursor`. For a TLD outside the caller's plan `cheapest_register` is null and listed in `members_only` (and `avg_register_price` too when it would give the one hidden price); with `sort=cheapest` such TLDs come after every price shown, in name order, then the unsold. With `currency`, the prices are converted and `meta.currency` says so; the orders are the stored USD ones, so a page and its cursor are the same in every currency.",
        &CatalogueParams::COMPONENTS,
        ok("Catalogue", "One page of the catalogue."),
    );
    merge(&mut op["responses"], catalogue_errors(&["403", "404"]));
    op
}

/// The OpenAPI operation of the registrar list.
pub(crate) fn registrar_list_doc() -> Value {
    let mut op = json!({
        "operationId": "registrarList",
        "summary": "Every registrar",
        "description": "Key, name, homepage, `website_url`, number of TLDs sold, coverage (first and last dated feed version) and the number of TLDs where it ranks first for registration.",
        "security": optional_key(),
        "responses": { "200": ok("RegistrarList", "Every registrar, by key.") }
    });
    merge(
        &mut op["responses"],
        catalogue_errors(&["400", "403", "404"]),
    );
    op
}

/// The OpenAPI operation of one registrar.
pub(crate) fn registrar_doc() -> Value {
    let mut op = json!({
        "operationId": "registrar",
        "summary": "One registrar and its price list",
        "description": "The registrar's listing fields and its prices, in TLD name order, paged like the catalogue. The list holds the TLDs where the caller's plan shows this registrar's offer; `meta.total` counts them, `tlds_sold` every TLD it sells.",
        "security": optional_key(),
        "parameters": refs(&[&["key"][..], &RegistrarParams::COMPONENTS].concat()),
        "responses": { "200": ok("Registrar", "The registrar and one page of its prices."),
                       "404": { "$ref": "#/components/responses/UnknownRegistrar" } }
    });
    merge(&mut op["responses"], catalogue_errors(&["403", "404"]));
    op
}

/// The price endpoints' refusals, but for those of `left_out`.
fn catalogue_errors(left_out: &[&str]) -> Value {
    let mut errors = price_errors(true);
    if let Some(e) = errors.as_object_mut() {
        for status in left_out {
            e.remove(*status);
        }
    }
    errors
}
