//! Queries: pure functions from an archived snapshot and plain parameters to a complete
//! JSON body. They know nothing of HTTP, keys or plans; the caller decides which TLDs a
//! caller may ask for and passes names already in canonical form
//! ([`crate::tld::normalize`]), de-duplicated, in the order of the request.
//!
//! Each function clears `out` and writes the whole body into it, so a server can reuse
//! one buffer per connection. The cost of a price query (cheapest, prices, the
//! registrars of a TLD) is a hash probe per TLD, a binary search per (TLD, registrar)
//! and a few `memcpy`s of pre-rendered fragments: no sorting, no scan of the matrix, no
//! allocation beyond growing `out` (and the list of unknown names, when there are any).
//! The one exception is `at` (prices as of a day, in the private module `at`): it ranks
//! one TLD's offers of that day per request, a few dozen at most.
//!
//! The same answers are there as typed values ([`view`]), for the website: the
//! overview, the catalogue, the registrar list, a registrar's price list and the
//! history are computed into a view (`overview_view`, ...) that their JSON writer then
//! writes; the price queries keep their fragments, and [`tld_offers`] reads the same
//! stored ranking through the same rules.
//!
//! The fragments are written by [`crate::snapshot::render`], the writers the builder
//! stores them with. Submodules: `at` (history as of a day), `catalogue` (the catalogue, registrars, cursors),
//! `suggest` (close names of a mistyped TLD), `view` (the typed answers).

mod at;
mod catalogue;
pub mod export;
pub mod money;
mod suggest;
pub mod view;

#[cfg(test)]
mod agreement;

pub use catalogue::{
    CatalogueRequest, CatalogueSort, Cursor, CursorError, DEFAULT_PAGE, MAX_PAGE, RegistrarRequest,
    TYPES, catalogue, catalogue_in, catalogue_view, registrar, registrar_in, registrar_view,
    registrars_list, registrars_view, tld_facts,
};
pub use money::{Money, money};
pub use suggest::close_names;

use std::fmt;

use smallvec::SmallVec;

use crate::json;
use crate::json::write_int;
use crate::price::Fx;
pub use crate::sight::Sight;
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::render;
pub use crate::snapshot::schema::Ranking;
use crate::snapshot::schema::{ArchivedOffer, ArchivedTld, NONE};
use crate::time;
use crate::time::Stamp;
use crate::time::write_opt_date;

/// The two response shapes of the cheapest endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `/api/v1/client/prices/cheapest`: `registrar_key`, `meta`.
    Client,
    /// `/api/v1/prices/cheapest`: `transfer_price`, 1/3/5-year totals, `avg_prices`.
    Public,
}

/// The staleness rule of a request: an offer whose price is older than the cut-off is
/// stale. Stale offers are marked `"stale":true` wherever they are shown, and rankings
/// (cheapest, the registrar listing, the overview's picks) leave them out unless
/// `include_stale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    /// Offers with `updated_ms` before this are stale ([`i64::MIN`]: none is).
    pub cutoff_ms: i64,
    /// Today, days since 1970-01-01: the last day `at=` may name besides the data date.
    pub today: i64,
    /// Whether rankings keep stale offers (marked).
    pub include_stale: bool,
}

impl Freshness {
    /// No offer is stale: the snapshot's answers as they are stored.
    pub const ANY_AGE: Freshness = Freshness {
        cutoff_ms: i64::MIN,
        today: i64::MIN,
        include_stale: true,
    };

    /// The rule for a request made at `now_ms`: a price is stale when the day it was
    /// published is more than `max_age_days` days before today (UTC).
    pub fn new(now_ms: i64, max_age_days: u32, include_stale: bool) -> Freshness {
        let today = now_ms.div_euclid(time::MS_PER_DAY);
        Freshness {
            cutoff_ms: (today - i64::from(max_age_days)).saturating_mul(time::MS_PER_DAY),
            today,
            include_stale,
        }
    }

    /// Whether a price published at `updated_ms` is stale.
    #[inline]
    pub fn is_stale(&self, updated_ms: i64) -> bool {
        updated_ms < self.cutoff_ms
    }

    /// Whether a ranking shows an offer published at `updated_ms`.
    #[inline]
    pub fn ranks(&self, updated_ms: i64) -> bool {
        self.include_stale || !self.is_stale(updated_ms)
    }

    /// Whether every seller of `t` is fresh (then the stored ranking holds as it is).
    #[inline]
    fn all_fresh(&self, t: &ArchivedTld) -> bool {
        t.oldest_ms.to_native() >= self.cutoff_ms
    }
}

/// The sellers of `t` in rank order.
fn sellers_of<'s>(snap: &'s ArchivedSnapshotData, t: &ArchivedTld) -> &'s [ArchivedOffer] {
    let first = t.first_offer.to_native() as usize;
    &snap.offers[first..first + t.sellers.to_native() as usize]
}

/// How many of the first `visible` sellers of `t` are stale (none without a walk when
/// all are fresh).
fn stale_sellers(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    fresh: Freshness,
    visible: usize,
) -> usize {
    if fresh.all_fresh(t) {
        return 0;
    }
    sellers_of(snap, t)[..visible]
        .iter()
        .filter(|o| fresh.is_stale(o.updated_ms.to_native()))
        .count()
}

/// Adds `,"stale_count":N` before the closing brace `out` ends with, when `stale` is
/// not zero.
fn close_with_stale_count(stale: usize, out: &mut Vec<u8>) {
    if stale == 0 {
        return;
    }
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
    out.extend_from_slice(b",\"stale_count\":");
    write_int(stale as u64, out);
    out.push(b'}');
}

/// Parameters of [`cheapest`].
#[derive(Debug, Clone)]
pub struct CheapestRequest<'a> {
    /// Canonical TLD names, de-duplicated, in request order.
    pub tlds: &'a [&'a str],
    /// Maximum entries per TLD (the HTTP layer enforces 1..=100).
    pub limit: usize,
    /// Which shape to render.
    pub shape: Shape,
    /// `meta.tier` (client shape only); `None` leaves it out.
    pub tier: Option<&'a str>,
    /// Which offers are stale and whether they are ranked.
    pub fresh: Freshness,
    /// What the caller sees: at most [`Sight::shown`] of the ranked entries per TLD.
    pub sight: Sight,
}

/// How an answer presents what it shows: the order of a ranking and the currency of
/// its prices. [`Presentation::STORED`] is the snapshot's own (by first-year price, USD):
/// its answers are the stored fragments.
#[derive(Debug, Clone, Copy)]
pub struct Presentation<'s> {
    /// The order of the cheapest rankings (`sort=`).
    pub ranking: Ranking,
    /// The currency of the prices (`currency=`).
    pub money: Money<'s>,
}

impl Presentation<'_> {
    /// By first-year price, in USD.
    pub const STORED: Presentation<'static> = Presentation {
        ranking: Ranking::Register,
        money: Money::USD,
    };

    /// Whether the stored fragments answer as they are.
    #[inline]
    pub fn is_stored(&self) -> bool {
        self.ranking == Ranking::Register && self.money.is_usd()
    }
}

/// Parameters of [`prices`].
#[derive(Debug, Clone)]
pub struct PricesRequest<'a> {
    /// Canonical TLD names, de-duplicated, in request order.
    pub tlds: &'a [&'a str],
    /// Registrar keys, de-duplicated, in request order; `None` = every seller.
    pub registrars: Option<&'a [&'a str]>,
    /// When the request started, for `stats.time_elapsed`.
    pub started: Stamp,
    /// Which records are marked stale.
    pub fresh: Freshness,
    /// What the caller sees: the records of the offers it sees, no others.
    pub sight: Sight,
}

/// Parameters of [`registrars`].
#[derive(Debug, Clone)]
pub struct RegistrarsRequest<'a> {
    /// Canonical TLD name.
    pub tld: &'a str,
    /// Whether each entry carries `prices`.
    pub include_prices: bool,
    /// What the caller sees: the sellers listed ([`Sight::shown`]).
    pub sight: Sight,
    /// Base of `website_url`; must already be safe inside a JSON string.
    pub public_url: &'a str,
    /// Which offers are stale and whether they are listed.
    pub fresh: Freshness,
}

/// Parameters of [`history`].
#[derive(Debug, Clone)]
pub struct HistoryRequest<'a> {
    /// Canonical TLD name.
    pub tld: &'a str,
    /// Registrar keys; `None` = every registrar with history for the TLD.
    pub registrars: Option<&'a [&'a str]>,
    /// First day included (days since 1970-01-01).
    pub from: Option<i64>,
    /// Last day included.
    pub to: Option<i64>,
    /// What the caller sees: the registrars whose current offer it does not see are
    /// left out.
    pub sight: Sight,
}

/// A query that has nothing to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// None of the TLDs asked for is in the snapshot (HTTP 404 `unknown_tld`).
    UnknownTlds(Vec<String>),
    /// The registrar asked for is not in the snapshot (HTTP 404 `unknown_registrar`).
    UnknownRegistrar(String),
    /// A parameter that is well formed but does not fit this snapshot: a day after its
    /// data date, a cursor of another snapshot or listing (HTTP 400 `invalid_parameter`).
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value as given.
        value: String,
        /// What is wrong, for a person.
        reason: String,
    },
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::UnknownTlds(t) => write!(f, "unknown TLD(s): {}", t.join(", ")),
            QueryError::UnknownRegistrar(k) => write!(f, "unknown registrar: {k}"),
            QueryError::InvalidParameter {
                name,
                value,
                reason,
            } => write!(f, "{name} {value:?}: {reason}"),
        }
    }
}

impl std::error::Error for QueryError {}

/// Age in days past which a price is stale when neither the request
/// (`max_age_days`) nor the server (`serve --max-age-days`) says otherwise.
pub const DEFAULT_MAX_AGE_DAYS: u32 = 365;

/// The most `max_age_days` accepted (100 years).
pub const MAX_AGE_DAYS_LIMIT: u32 = 36_500;

/// The default base of `website_url` (`serve --public-url`).
pub const DEFAULT_PUBLIC_URL: &str = "https://tldsnap.dev";

/// The text of the cut registrar listing (docs/API.md, the registrars by TLD).
pub fn listing_message(shown: usize, total: usize) -> String {
    format!(
        "Showing {shown} of {total} registrars. The full list is available via the API on the Pro and Enterprise plans."
    )
}

fn write_str_list(items: &[String], out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_str(s, out);
    }
    out.push(b']');
}

use crate::price::offered as cents;

/// Writes `{"results":{"tld":…,…}` — each known TLD's key and the value `value` writes —
/// and returns how many TLDs were found and the names that were not. Leaves the
/// `results` object open. With nothing found, `out` is cleared and the unknown names are
/// returned as the error.
fn write_results(
    snap: &ArchivedSnapshotData,
    names: &[&str],
    out: &mut Vec<u8>,
    mut value: impl FnMut(&ArchivedTld, &mut Vec<u8>),
) -> Result<(usize, Vec<String>), QueryError> {
    write_known_results(snap, names, out, |t, out| {
        value(t, out);
        true
    })
}

/// [`write_results`] where `value` may still find a TLD unknown (it returns false; what
/// it wrote is taken back), as the `at` queries do for a TLD without history that day.
fn write_known_results(
    snap: &ArchivedSnapshotData,
    names: &[&str],
    out: &mut Vec<u8>,
    mut value: impl FnMut(&ArchivedTld, &mut Vec<u8>) -> bool,
) -> Result<(usize, Vec<String>), QueryError> {
    out.clear();
    out.extend_from_slice(b"{\"results\":{");
    let mut found = 0usize;
    let mut missing: Vec<String> = Vec::new();
    for name in names {
        let Some(t) = snap.tld(name) else {
            missing.push((*name).to_string());
            continue;
        };
        let mark = out.len();
        if found > 0 {
            out.push(b',');
        }
        out.extend_from_slice(snap.span(&t.key_json));
        out.push(b':');
        if value(t, out) {
            found += 1;
        } else {
            out.truncate(mark);
            missing.push((*name).to_string());
        }
    }
    if found == 0 {
        out.clear();
        return Err(QueryError::UnknownTlds(missing));
    }
    Ok((found, missing))
}

/// Cheapest registrars per TLD, client or public shape.
pub fn cheapest(
    snap: &ArchivedSnapshotData,
    req: &CheapestRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    cheapest_in(snap, req, Presentation::STORED, out)
}

/// [`cheapest`] in another order or currency.
pub fn cheapest_in(
    snap: &ArchivedSnapshotData,
    req: &CheapestRequest<'_>,
    how: Presentation<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    let (found, missing) = write_results(snap, req.tlds, out, |t, out| {
        out.extend_from_slice(b"{\"cheapest_register\":[");
        cheapest_entries_in(
            snap, t, req.limit, req.shape, req.fresh, req.sight, how, out,
        );
    })?;
    cheapest_end(req, found, &missing, how.money, out);
    Ok(())
}

/// [`cheapest`] as it would have answered on `day` (days since 1970-01-01), from the
/// history (the private module `query::at` has the rules). A day after the data date
/// is an error.
pub fn cheapest_at(
    snap: &ArchivedSnapshotData,
    req: &CheapestRequest<'_>,
    day: i64,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    let how = Presentation {
        ranking: Ranking::Register,
        money: Money::USD,
    };
    cheapest_at_in(snap, req, day, how, out)
}

/// [`cheapest_at`] in the order of another ranking and in another currency. The
/// sellers a viewer sees are those of the day's first-year ranking (the plan's cut,
/// as on the current day), shown in the order of `how.ranking`: its key, then the
/// first-year price, then the registrar key, as the builder orders the stored
/// rankings. A day's state is built from the history per request, so its few shown
/// sellers are ordered then.
pub fn cheapest_at_in(
    snap: &ArchivedSnapshotData,
    req: &CheapestRequest<'_>,
    day: i64,
    how: Presentation<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    let (money, ranking) = (how.money, how.ranking);
    let fx = money.fx;
    check_day(snap, day, req.fresh.today)?;
    let mut offers = Vec::new();
    let (found, missing) = write_known_results(snap, req.tlds, out, |t, out| {
        let Some(sellers) = at::offers_at(snap, t, day, &mut offers) else {
            return false;
        };
        let sold = &offers[..sellers];
        let seen = at::seen(snap, t, req.sight, &offers, sellers);
        let seen = &seen[..seen.len().min(sellers)];
        let mut shown = seen.to_vec();
        if ranking != Ranking::Register {
            shown.sort_by_key(|&k| {
                let o = &sold[k];
                (ranking.key(o.register, o.renew), o.register, o.registrar)
            });
        }
        out.extend_from_slice(b"{\"cheapest_register\":[");
        for (i, o) in shown.iter().map(|&k| &sold[k]).take(req.limit).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let r = o.registrar as usize;
            let reg = &snap.registrars[r];
            let name_json = snap.span(&reg.name_json);
            let ms = at::version_at(snap, r, day).map_or(0, |v| v.ms.to_native());
            match req.shape {
                Shape::Client => {
                    let key = snap.span_str(&reg.key);
                    let prices = (o.register, o.renew);
                    render::client_entry(i + 1, name_json, key, prices, o.terms, ms, false, fx, out)
                }
                Shape::Public => render::public_entry(
                    i + 1,
                    name_json,
                    (o.register, o.renew, o.transfer),
                    o.terms,
                    ms,
                    false,
                    fx,
                    out,
                ),
            }
        }
        match req.shape {
            Shape::Client => render::client_tail(sellers, out),
            Shape::Public => {
                let (register, renew, transfer) = at::averages(sold);
                let main = Sight::average_of(sellers - seen.len());
                let hidden_transfers = (0..sellers)
                    .filter(|k| !seen.contains(k) && sold[*k].transfer != NONE)
                    .count();
                let shown = |s: bool, c: u32| if s { c } else { NONE };
                let avg = (
                    shown(main, register),
                    shown(main, renew),
                    shown(Sight::average_of(hidden_transfers), transfer),
                );
                render::public_tail(sellers, avg, fx, out)
            }
        }
        true
    })?;
    cheapest_end(req, found, &missing, money, out);
    Ok(())
}

/// Refuses a day after both the snapshot's data date and today: nothing is known of
/// it. A day between the two is answered with the prices last known (of the data date).
fn check_day(snap: &ArchivedSnapshotData, day: i64, today: i64) -> Result<(), QueryError> {
    let data_day = at::data_day(snap);
    if day > data_day.max(today) {
        return Err(QueryError::InvalidParameter {
            name: "at",
            value: time::date_string(day),
            reason: format!(
                "after today and the data date of this snapshot ({}); prices are known up to that day",
                time::date_string(data_day)
            ),
        });
    }
    Ok(())
}

/// The first seller of `t` a ranking shows `sight` (the cheapest fresh one it sees,
/// unless stale ones are included): the stored cheapest, or a short walk past the stale
/// ones.
pub fn first_ranked<'s>(
    snap: &'s ArchivedSnapshotData,
    t: &ArchivedTld,
    fresh: Freshness,
    sight: Sight,
) -> Option<&'s ArchivedOffer> {
    let visible = sight.shown(snap.span_str(&t.name), t.sellers.to_native() as usize);
    sellers_of(snap, t)[..visible]
        .iter()
        .find(|o| fresh.ranks(o.updated_ms.to_native()))
}

/// What follows `"cheapest_register":[` in a cheapest result: the first `limit` ranked
/// entries of `t` in `shape` that `sight` shows, then the tail that closes the array and
/// the object (`registrar_count`, the public shape's `avg_prices`, `stale_count` when
/// some seller is stale).
pub fn cheapest_entries(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    limit: usize,
    shape: Shape,
    fresh: Freshness,
    sight: Sight,
    out: &mut Vec<u8>,
) {
    cheapest_entries_in(
        snap,
        t,
        limit,
        shape,
        fresh,
        sight,
        Presentation::STORED,
        out,
    )
}

/// [`cheapest_entries`] in the order and currency of `how`. The plan's cut is the same
/// sellers whatever the order (the first [`Sight::shown`] by first-year price); the
/// stored ranking of the order (`SnapshotData::rankings`) is walked past the ones the
/// cut leaves out and the stale ones, and each entry is written from its prices.
#[allow(clippy::too_many_arguments)]
pub fn cheapest_entries_in(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    limit: usize,
    shape: Shape,
    fresh: Freshness,
    sight: Sight,
    how: Presentation<'_>,
    out: &mut Vec<u8>,
) {
    if how.is_stored() {
        return stored_entries(snap, t, limit, shape, fresh, sight, out);
    }
    let fx = how.money.fx;
    let visible = sight.shown(snap.span_str(&t.name), t.sellers.to_native() as usize);
    let positions = ranked_positions(snap, t, visible, how.ranking);
    let mut stale = 0;
    let mut rank = 0;
    for o in positions.map(|p| &snap.offers[p]) {
        let ms = o.updated_ms.to_native();
        let is_stale = fresh.is_stale(ms);
        stale += usize::from(is_stale);
        if rank == limit || !fresh.ranks(ms) {
            continue;
        }
        if rank > 0 {
            out.push(b',');
        }
        let reg = &snap.registrars[o.registrar.to_native() as usize];
        let name_json = snap.span(&reg.name_json);
        match shape {
            Shape::Client => render::client_entry(
                rank + 1,
                name_json,
                snap.span_str(&reg.key),
                (o.register.to_native(), o.renew.to_native()),
                snap.terms(o),
                ms,
                is_stale,
                fx,
                out,
            ),
            Shape::Public => render::public_entry(
                rank + 1,
                name_json,
                (
                    o.register.to_native(),
                    o.renew.to_native(),
                    o.transfer.to_native(),
                ),
                snap.terms(o),
                ms,
                is_stale,
                fx,
                out,
            ),
        }
        rank += 1;
    }
    cheapest_tail(snap, t, shape, sight, fx, out);
    close_with_stale_count(stale, out);
}

/// What closes a TLD's cheapest result: the stored tail, or the public one written
/// in the currency or with the averages the plan hides left out.
fn cheapest_tail(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    shape: Shape,
    sight: Sight,
    fx: Fx,
    out: &mut Vec<u8>,
) {
    match shape {
        Shape::Client => out.extend_from_slice(snap.span(&t.client_tail)),
        Shape::Public => match averages_shown(snap, t, sight) {
            (true, true) if fx.is_usd() => out.extend_from_slice(snap.span(&t.public_tail)),
            (main, transfer) => {
                let avg = |shown: bool, c: u32| if shown { c } else { NONE };
                let avgs = (
                    avg(main, t.avg_register.to_native()),
                    avg(main, t.avg_renew.to_native()),
                    avg(transfer, t.avg_transfer.to_native()),
                );
                render::public_tail(t.sellers.to_native() as usize, avgs, fx, out);
            }
        },
    }
}

/// [`cheapest_entries`] from the stored fragments: one copy of the client entries up
/// to the first stale seller, the rest written one by one.
fn stored_entries(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    limit: usize,
    shape: Shape,
    fresh: Freshness,
    sight: Sight,
    out: &mut Vec<u8>,
) {
    // The plan's cut is the first sellers of the stored ranking; the staleness rule
    // leaves out the stale ones among those (or marks them).
    let visible = sight.shown(snap.span_str(&t.name), t.sellers.to_native() as usize);
    let sellers = &sellers_of(snap, t)[..visible];
    let is_stale = |o: &&ArchivedOffer| fresh.is_stale(o.updated_ms.to_native());
    // The stored entries hold while the ranking has skipped nothing and marked nothing:
    // the leading fresh sellers (all of them, in the common case, known from
    // `oldest_ms` without a look at the offers).
    let stored = if fresh.all_fresh(t) {
        sellers.len()
    } else {
        sellers
            .iter()
            .position(|o| is_stale(&o))
            .unwrap_or(sellers.len())
    };
    let stale = sellers[stored..].iter().filter(is_stale).count();
    let copied = limit.min(stored);
    match shape {
        Shape::Client => {
            // The entries are stored back to back in rank order: one copy.
            if copied > 0 {
                let start = t.client_start.to_native();
                let end = sellers[copied - 1].client_end.to_native();
                out.extend_from_slice(snap.text_range(start, end));
            }
        }
        Shape::Public => {
            for (i, o) in sellers[..copied].iter().enumerate() {
                write_public_entry(snap, i, o, false, out);
            }
        }
    }
    // Past the first stale seller: the rest ranked one by one, skipping (or marking)
    // the stale ones.
    let mut rank = copied;
    for o in &sellers[stored..] {
        if rank == limit {
            break;
        }
        let ms = o.updated_ms.to_native();
        if !fresh.ranks(ms) {
            continue;
        }
        let is_stale = fresh.is_stale(ms);
        match shape {
            Shape::Client => {
                if rank > 0 {
                    out.push(b',');
                }
                let reg = &snap.registrars[o.registrar.to_native() as usize];
                render::client_entry(
                    rank + 1,
                    snap.span(&reg.name_json),
                    snap.span_str(&reg.key),
                    (o.register.to_native(), o.renew.to_native()),
                    snap.terms(o),
                    ms,
                    is_stale,
                    Fx::USD,
                    out,
                );
            }
            Shape::Public => write_public_entry(snap, rank, o, is_stale, out),
        }
        rank += 1;
    }
    cheapest_tail(snap, t, shape, sight, Fx::USD, out);
    close_with_stale_count(stale, out);
}

/// Closes `results` and writes `meta` (client) or `meta.not_found` (public).
fn cheapest_end(
    req: &CheapestRequest<'_>,
    found: usize,
    missing: &[String],
    money: Money<'_>,
    out: &mut Vec<u8>,
) {
    out.push(b'}');
    match req.shape {
        Shape::Client => {
            out.extend_from_slice(b",\"meta\":{\"total_tlds\":");
            write_int(found as u64, out);
            if let Some(tier) = req.tier {
                out.extend_from_slice(b",\"tier\":");
                json::write_str(tier, out);
            }
            if !missing.is_empty() {
                out.extend_from_slice(b",\"not_found\":{\"tlds\":");
                write_str_list(missing, out);
                out.push(b'}');
            }
            if !money.is_usd() {
                out.push(b',');
                money.write_member(out);
            }
            out.push(b'}');
        }
        Shape::Public => {
            if !missing.is_empty() || !money.is_usd() {
                out.extend_from_slice(b",\"meta\":{");
                if !missing.is_empty() {
                    out.extend_from_slice(b"\"not_found\":{\"tlds\":");
                    write_str_list(missing, out);
                    out.push(b'}');
                    if !money.is_usd() {
                        out.push(b',');
                    }
                }
                money.write_member(out);
                out.push(b'}');
            }
        }
    }
    out.push(b'}');
}

/// One public-shape cheapest entry, written from the integer prices (this shape is not
/// pre-rendered: see the schema docs).
fn write_public_entry(
    snap: &ArchivedSnapshotData,
    i: usize,
    o: &ArchivedOffer,
    stale: bool,
    out: &mut Vec<u8>,
) {
    if i > 0 {
        out.push(b',');
    }
    let name_json = snap.span(&snap.registrars[o.registrar.to_native() as usize].name_json);
    render::public_entry(
        i + 1,
        name_json,
        (
            o.register.to_native(),
            o.renew.to_native(),
            o.transfer.to_native(),
        ),
        snap.terms(o),
        o.updated_ms.to_native(),
        stale,
        Fx::USD,
        out,
    );
}

/// Prices of selected registrars, or of every seller, per TLD.
pub fn prices(
    snap: &ArchivedSnapshotData,
    req: &PricesRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    prices_impl(snap, req, None, Money::USD, out)
}

/// [`prices`] in another currency.
pub fn prices_in(
    snap: &ArchivedSnapshotData,
    req: &PricesRequest<'_>,
    money: Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    prices_impl(snap, req, None, money, out)
}

/// [`prices`] as it would have answered on `day` (days since 1970-01-01), from the
/// history (the private module `query::at` has the rules). A day after the data date
/// is an error.
pub fn prices_at(
    snap: &ArchivedSnapshotData,
    req: &PricesRequest<'_>,
    day: i64,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    prices_at_in(snap, req, day, Money::USD, out)
}

/// [`prices_at`] in another currency.
pub fn prices_at_in(
    snap: &ArchivedSnapshotData,
    req: &PricesRequest<'_>,
    day: i64,
    money: Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    check_day(snap, day, req.fresh.today)?;
    prices_impl(snap, req, Some(day), money, out)
}

fn prices_impl(
    snap: &ArchivedSnapshotData,
    req: &PricesRequest<'_>,
    day: Option<i64>,
    money: Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    let fx = money.fx;
    // Registrar keys resolved once for all TLDs; a request names at most 100.
    let mut regs: Vec<usize> = Vec::new();
    let mut unknown_regs: Vec<String> = Vec::new();
    if let Some(keys) = req.registrars {
        regs.reserve_exact(keys.len());
        for k in keys {
            match snap.registrar_index(k) {
                Some(i) => regs.push(i),
                None => unknown_regs.push((*k).to_string()),
            }
        }
    }
    let mut offers = Vec::new();
    let (found, missing) = write_known_results(snap, req.tlds, out, |t, out| {
        let Some(day) = day else {
            prices_value(snap, req, &regs, t, fx, out);
            return true;
        };
        let Some(sellers) = at::offers_at(snap, t, day, &mut offers) else {
            return false;
        };
        let seen = at::seen(snap, t, req.sight, &offers, sellers);
        let record = |o: &at::DayOffer, out: &mut Vec<u8>| {
            let r = o.registrar as usize;
            let ms = at::version_at(snap, r, day).map_or(0, |v| v.ms.to_native());
            let key = snap.span_str(&snap.registrars[r].key);
            let prices = (o.register, o.renew, o.transfer);
            render::record(key, prices, o.terms, ms, fx, out);
        };
        out.push(b'{');
        let mut first = true;
        let mut sep = |out: &mut Vec<u8>| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
        };
        if req.registrars.is_some() {
            for &r in &regs {
                if let Some(&k) = seen.iter().find(|&&k| offers[k].registrar as usize == r) {
                    sep(out);
                    record(&offers[k], out);
                }
            }
        } else {
            for &k in seen.iter().filter(|&&k| k < sellers) {
                sep(out);
                record(&offers[k], out);
            }
        }
        out.push(b'}');
        true
    })?;
    let last_updated = match day {
        None => snap.data_updated_ms.to_native(),
        Some(day) => at::data_updated_at(snap, day),
    };
    prices_end(
        req,
        found,
        &missing,
        &unknown_regs,
        last_updated,
        money,
        out,
    );
    Ok(())
}

fn prices_value(
    snap: &ArchivedSnapshotData,
    req: &PricesRequest<'_>,
    regs: &[usize],
    t: &ArchivedTld,
    fx: Fx,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    let sellers = t.sellers.to_native() as usize;
    let tld = snap.span_str(&t.name);
    if req.registrars.is_some() {
        let mut first = true;
        for &r in regs {
            if let Some((row, o)) = row_of(snap, t, r)
                && req.sight.row_shown(tld, row, sellers)
            {
                if !first {
                    out.push(b',');
                }
                first = false;
                write_record(snap, o, req.fresh, fx, out);
            }
        }
    } else if req.fresh.all_fresh(t) && fx.is_usd() {
        // Every seller fresh: the records are stored back to back in rank order, so
        // the plan's cut is a shorter slice.
        let shown = req.sight.shown(tld, sellers);
        if shown > 0 {
            let first = t.first_offer.to_native() as usize;
            let start = t.records_start.to_native();
            let end = snap.offers[first + shown - 1].record.end.to_native();
            out.extend_from_slice(snap.text_range(start, end));
        }
    } else {
        let shown = req.sight.shown(tld, sellers);
        for (i, o) in sellers_of(snap, t)[..shown].iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_record(snap, o, req.fresh, fx, out);
        }
    }
    out.push(b'}');
}

/// An offer's stored price record (written in the currency of `fx` when it is not
/// USD), with `"stale":true` before its closing brace when it is stale.
fn write_record(
    snap: &ArchivedSnapshotData,
    o: &ArchivedOffer,
    fresh: Freshness,
    fx: Fx,
    out: &mut Vec<u8>,
) {
    let mark = out.len();
    if !fx.is_usd() {
        let key = snap.span_str(&snap.registrars[o.registrar.to_native() as usize].key);
        let prices = (
            o.register.to_native(),
            o.renew.to_native(),
            o.transfer.to_native(),
        );
        render::record(
            key,
            prices,
            snap.terms(o),
            o.updated_ms.to_native(),
            fx,
            out,
        );
        if fresh.is_stale(o.updated_ms.to_native()) {
            out.pop();
            out.extend_from_slice(b",\"stale\":true}");
        }
        debug_assert!(out.len() > mark);
        return;
    }
    let record = snap.span(&o.record);
    if fresh.is_stale(o.updated_ms.to_native()) {
        out.extend_from_slice(&record[..record.len() - 1]);
        out.extend_from_slice(b",\"stale\":true}");
    } else {
        out.extend_from_slice(record);
    }
}

/// Closes `results` and writes `stats` (and `stats.not_found`).
fn prices_end(
    req: &PricesRequest<'_>,
    found: usize,
    missing: &[String],
    unknown_regs: &[String],
    last_updated_ms: i64,
    money: Money<'_>,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"},\"stats\":{\"total_tlds\":");
    write_int(found as u64, out);
    out.extend_from_slice(b",\"time_elapsed\":\"");
    write_elapsed(req.started.elapsed(), out);
    out.extend_from_slice(b"\",\"last_updated\":\"");
    time::write_iso_millis(last_updated_ms, out);
    out.push(b'"');
    if !missing.is_empty() || !unknown_regs.is_empty() {
        out.extend_from_slice(b",\"not_found\":{");
        if !missing.is_empty() {
            out.extend_from_slice(b"\"tlds\":");
            write_str_list(missing, out);
        }
        if !unknown_regs.is_empty() {
            if !missing.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(b"\"registrars\":");
            write_str_list(unknown_regs, out);
        }
        out.push(b'}');
    }
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.extend_from_slice(b"}}");
}

/// Where the value of `stats.time_elapsed` (`0.04ms`) is in a body written by [`prices`]
/// or [`prices_at`]: the answer's one part that differs from request to request. The key
/// cannot occur earlier unescaped (a quote inside a JSON string is always escaped), so
/// the last occurrence is the one.
pub fn elapsed_span(body: &[u8]) -> Option<std::ops::Range<usize>> {
    const KEY: &[u8] = b"\"time_elapsed\":\"";
    let at = body.windows(KEY.len()).rposition(|w| w == KEY)? + KEY.len();
    let len = body[at..].iter().position(|&b| b == b'"')?;
    Some(at..at + len)
}

/// Room enough for any value [`write_elapsed`] writes (at most 19 bytes:
/// `18446744073709.55ms`).
pub const ELAPSED_ROOM: usize = 24;

/// Writes `stats.time_elapsed` (`0.04ms`): milliseconds with two decimals, or three
/// below 0.005 ms so that a fast answer does not read as zero.
pub fn write_elapsed(elapsed: std::time::Duration, out: &mut Vec<u8>) {
    let nanos = elapsed.as_nanos().min(u64::MAX as u128) as u64;
    // Hundredths of a millisecond, rounded; thousandths when that would read as zero.
    let (value, decimals) = if nanos >= 5_000 {
        (nanos.saturating_add(5_000) / 10_000, 2)
    } else {
        ((nanos + 500) / 1_000, 3)
    };
    let scale = if decimals == 2 { 100 } else { 1_000 };
    write_int(value / scale, out);
    out.push(b'.');
    let frac = value % scale;
    let digits = itoa::Buffer::new().format(frac).len();
    out.extend(std::iter::repeat_n(b'0', decimals - digits));
    write_int(frac, out);
    out.extend_from_slice(b"ms");
}

/// Registrars that sell a TLD, cheapest first.
pub fn registrars(
    snap: &ArchivedSnapshotData,
    req: &RegistrarsRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    registrars_in(snap, req, Money::USD, out)
}

/// [`registrars`] with the prices in another currency.
pub fn registrars_in(
    snap: &ArchivedSnapshotData,
    req: &RegistrarsRequest<'_>,
    money: Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    out.clear();
    let Some(t) = snap.tld(req.tld) else {
        return Err(QueryError::UnknownTlds(vec![req.tld.to_string()]));
    };
    let sellers = t.sellers.to_native() as usize;
    let fresh = req.fresh;
    // The sellers the plan shows (the first of the stored ranking), of which the
    // listing ranks the fresh ones unless stale ones are included.
    let visible = req.sight.shown(req.tld, sellers);
    let stale = stale_sellers(snap, t, fresh, visible);
    let ranks = |o: &&ArchivedOffer| fresh.ranks(o.updated_ms.to_native());
    let listed = if fresh.include_stale {
        sellers
    } else {
        sellers - stale_sellers(snap, t, fresh, sellers)
    };
    let mut shown = 0;
    out.extend_from_slice(b"{\"tld\":");
    out.extend_from_slice(snap.span(&t.key_json));
    out.extend_from_slice(b",\"registrar_count\":");
    write_int(sellers as u64, out);
    out.extend_from_slice(b",\"registrars\":[");
    for (i, o) in sellers_of(snap, t)[..visible]
        .iter()
        .filter(ranks)
        .enumerate()
    {
        if i > 0 {
            out.push(b',');
        }
        shown += 1;
        let reg = &snap.registrars[o.registrar.to_native() as usize];
        out.extend_from_slice(snap.span(&reg.listing_head));
        out.extend_from_slice(req.public_url.as_bytes());
        out.extend_from_slice(snap.span(&reg.listing_path));
        if req.include_prices && money.is_usd() {
            out.extend_from_slice(snap.span(&o.listing_prices));
        } else if req.include_prices {
            let prices = (
                o.register.to_native(),
                o.renew.to_native(),
                o.transfer.to_native(),
            );
            let original = snap.original_prices(o);
            render::listing_prices(prices, original, snap.terms(o), money.fx, out);
        }
        let ms = o.updated_ms.to_native();
        render::age(ms, fresh.is_stale(ms), out);
    }
    out.push(b']');
    if stale > 0 {
        out.extend_from_slice(b",\"stale_count\":");
        write_int(stale as u64, out);
    }
    if shown < listed {
        out.extend_from_slice(b",\"message\":");
        json::write_str(&listing_message(shown, listed), out);
    }
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.push(b'}');
    Ok(())
}

/// The sellers of `tld` (canonical) that `sight` sees, in rank order, as the price
/// endpoints show them: the first [`Sight::shown`] of the stored ranking, each marked
/// stale by `fresh`. [`view::TldOffers::ranked`] is the ranking of [`cheapest`] and
/// [`registrars`] (the fresh ones, unless stale ones are included), the offers are the
/// records of [`prices`], and the averages are the ones the public cheapest shape
/// shows. `None` when nobody prices the TLD.
pub fn tld_offers<'s>(
    snap: &'s ArchivedSnapshotData,
    tld: &str,
    fresh: Freshness,
    sight: Sight,
) -> Option<view::TldOffers<'s>> {
    tld_offers_in(snap, tld, fresh, sight, Ranking::Register)
}

/// The positions of the first `visible` sellers of `t` (the plan's cut, by first-year
/// price) in the order of `ranking`, from the stored ranking: no sort.
fn ranked_positions<'s>(
    snap: &'s ArchivedSnapshotData,
    t: &ArchivedTld,
    visible: usize,
    ranking: Ranking,
) -> impl Iterator<Item = usize> + 's {
    let first = t.first_offer.to_native() as usize;
    let sellers = t.sellers.to_native() as usize;
    let order: &'s [_] = match ranking {
        Ranking::Register => &[],
        Ranking::Renew => &snap.rankings[0][first..first + sellers],
        Ranking::Total3Year => &snap.rankings[1][first..first + sellers],
        Ranking::Total5Year => &snap.rankings[2][first..first + sellers],
    };
    let stored = ranking == Ranking::Register;
    (first..first + visible).filter(move |_| stored).chain(
        order
            .iter()
            .map(|p| p.to_native() as usize)
            .filter(move |p| *p < first + visible),
    )
}

/// [`tld_offers`] with the offers in the order of `ranking`.
pub fn tld_offers_in<'s>(
    snap: &'s ArchivedSnapshotData,
    tld: &str,
    fresh: Freshness,
    sight: Sight,
    ranking: Ranking,
) -> Option<view::TldOffers<'s>> {
    let t = snap.tld(tld)?;
    let sellers = t.sellers.to_native() as usize;
    let visible = sight.shown(tld, sellers);
    let offers = ranked_positions(snap, t, visible, ranking)
        .map(|p| &snap.offers[p])
        .map(|o| {
            let reg = &snap.registrars[o.registrar.to_native() as usize];
            let ms = o.updated_ms.to_native();
            view::Offered {
                registrar_key: snap.span_str(&reg.key),
                registrar_name: snap.span_str(&reg.name),
                prices: view::Triple::of(
                    o.register.to_native(),
                    o.renew.to_native(),
                    o.transfer.to_native(),
                ),
                updated_ms: ms,
                stale: fresh.is_stale(ms),
                original: view::QuotedPrices::of(snap, o),
                terms: snap.terms(o),
            }
        })
        .collect();
    let listed = if fresh.include_stale {
        sellers
    } else {
        sellers - stale_sellers(snap, t, fresh, sellers)
    };
    let (main, transfer) = averages_shown(snap, t, sight);
    let avg = |shown: bool, c: u32| if shown { cents(c) } else { None };
    Some(view::TldOffers {
        tld: snap.span_str(&t.name),
        registrar_count: sellers,
        offers,
        include_stale: fresh.include_stale,
        listed,
        avg_prices: view::Triple {
            register: avg(main, t.avg_register.to_native()),
            renew: avg(main, t.avg_renew.to_native()),
            transfer: avg(transfer, t.avg_transfer.to_native()),
        },
        stale_count: stale_sellers(snap, t, fresh, visible),
    })
}

/// Whether `sight` may see `t`'s averages: (registration and renewal, transfer). An
/// average is hidden when exactly one of the prices it is made of is hidden
/// ([`Sight::average_of`]); every seller has a registration and a renewal price, not
/// every one a transfer price, so the hidden sellers are looked at (two at most).
fn averages_shown(snap: &ArchivedSnapshotData, t: &ArchivedTld, sight: Sight) -> (bool, bool) {
    let tld = snap.span_str(&t.name);
    let sellers = t.sellers.to_native() as usize;
    let shown = sight.shown(tld, sellers);
    if shown == sellers {
        return (true, true);
    }
    let first = t.first_offer.to_native() as usize;
    let hidden_transfers = snap.offers[first + shown..first + sellers]
        .iter()
        .filter(|o| o.transfer.to_native() != NONE)
        .take(2)
        .count();
    (
        Sight::average_of(sellers - shown),
        Sight::average_of(hidden_transfers),
    )
}

/// The offer of registrar `r` for `t` and its row in the TLD's group (the sellers in
/// rank order first, 0-based), if it has one.
fn row_of<'s>(
    snap: &'s ArchivedSnapshotData,
    t: &ArchivedTld,
    r: usize,
) -> Option<(usize, &'s ArchivedOffer)> {
    let first = t.first_offer.to_native() as usize;
    let group = &snap.by_registrar[first..first + t.rows.to_native() as usize];
    let i = group
        .binary_search_by(|e| e.registrar.to_native().cmp(&(r as u32)))
        .ok()?;
    let offer = group[i].offer.to_native() as usize;
    Some((offer - first, &snap.offers[offer]))
}

/// Whether `sight` shows registrar `r`'s offer of `t`, or `r` has none (a registrar
/// without an offer today hides nothing of today).
pub(crate) fn registrar_seen(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    sight: Sight,
    r: usize,
) -> bool {
    let tld = snap.span_str(&t.name);
    if !sight.price_shown(tld) {
        return false;
    }
    if sight.every_seller() {
        return true;
    }
    match row_of(snap, t, r) {
        None => true,
        Some((row, _)) => sight.row_shown(tld, row, t.sellers.to_native() as usize),
    }
}

/// Whether `sight` shows what a price-change event about `registrars` (the registrar,
/// and a ranking change's previous cheapest) of `tld` tells: the TLD's prices, and each
/// named registrar's offer of today (a registrar without one hides nothing of today).
/// A TLD no longer in the snapshot has nothing of today to hide either.
pub fn event_shown(
    snap: &ArchivedSnapshotData,
    sight: Sight,
    tld: &str,
    registrars: [Option<&str>; 2],
) -> bool {
    if !sight.price_shown(tld) {
        return false;
    }
    let Some(t) = snap.tld(tld) else {
        return true;
    };
    registrars
        .into_iter()
        .flatten()
        .filter_map(|k| snap.registrar_index(k))
        .all(|r| registrar_seen(snap, t, sight, r))
}

/// Whether `sight` shows the offer at position `offer` (in [`ArchivedSnapshotData::offers`])
/// of `t`.
pub(crate) fn offer_shown(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    sight: Sight,
    offer: usize,
) -> bool {
    let first = t.first_offer.to_native() as usize;
    sight.row_shown(
        snap.span_str(&t.name),
        offer - first,
        t.sellers.to_native() as usize,
    )
}

/// The offer a pick stands on: the stored one (`stored`, an offer position or [`NONE`])
/// when the ranking may show it, otherwise the ranked seller with the lowest `order`
/// (ties: registrar key), found by a walk over the TLD's sellers.
fn ranked_pick(
    snap: &ArchivedSnapshotData,
    t: &ArchivedTld,
    stored: u32,
    fresh: Freshness,
    order: impl Fn(&ArchivedOffer) -> u64,
) -> Option<usize> {
    if stored == NONE {
        return None;
    }
    if fresh.ranks(snap.offers[stored as usize].updated_ms.to_native()) {
        return Some(stored as usize);
    }
    let first = t.first_offer.to_native() as usize;
    sellers_of(snap, t)
        .iter()
        .enumerate()
        .filter(|(_, o)| fresh.ranks(o.updated_ms.to_native()))
        .min_by_key(|(_, o)| (order(o), o.registrar.to_native()))
        .map(|(i, _)| first + i)
}

/// Parameters of [`overview`].
#[derive(Debug, Clone)]
pub struct OverviewRequest<'a> {
    /// Canonical TLD name.
    pub tld: &'a str,
    /// Which offers are stale and whether the picks may be stale ones.
    pub fresh: Freshness,
    /// What the caller sees: a pick whose offer it does not see, and an average that
    /// would give a hidden price, are `null` and listed in `members_only`.
    pub sight: Sight,
}

/// The per-TLD overview: the TLD's type, manager and whether it is free,
/// registrar count, average prices, cheapest registration, lowest renewal and lowest
/// 5-year cost, each with its registrar. Answers for every TLD of the catalogue (an
/// unsold one has `registrar_count` 0 and nulls). Written from [`overview_view`].
pub fn overview(
    snap: &ArchivedSnapshotData,
    req: &OverviewRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    overview_in(snap, req, Money::USD, out)
}

/// [`overview`] with the prices in another currency.
pub fn overview_in(
    snap: &ArchivedSnapshotData,
    req: &OverviewRequest<'_>,
    money: Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    let fx = money.fx;
    out.clear();
    let v = overview_view(snap, req)?;
    out.push(b'{');
    v.facts.write(out);
    out.extend_from_slice(b",\"registrar_count\":");
    write_int(v.registrar_count as u64, out);
    out.extend_from_slice(b",\"avg_prices\":");
    v.avg_prices.write(fx, out);
    out.extend_from_slice(b",\"cheapest_register\":");
    view::Pick::write(v.cheapest_register.as_ref(), fx, out);
    out.extend_from_slice(b",\"lowest_renew\":");
    view::Pick::write(v.lowest_renew.as_ref(), fx, out);
    out.extend_from_slice(b",\"lowest_5_year\":");
    view::Pick::write(v.lowest_5_year.as_ref(), fx, out);
    if v.stale_count > 0 {
        out.extend_from_slice(b",\"stale_count\":");
        write_int(v.stale_count as u64, out);
    }
    if !v.members_only.is_empty() {
        view::write_members_only(&v.members_only, out);
    }
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.push(b'}');
    Ok(())
}

/// The overview of [`overview`] as a typed view: a pick whose offer the caller does not
/// see, and an average that would give a hidden price, are `None` and named in
/// `members_only`; when stale offers are left out, a stale stored pick gives way to the
/// best fresh one.
pub fn overview_view<'s>(
    snap: &'s ArchivedSnapshotData,
    req: &OverviewRequest<'_>,
) -> Result<view::Overview<'s>, QueryError> {
    let Some(e) = snap.catalogue_entry(req.tld) else {
        return Err(QueryError::UnknownTlds(vec![req.tld.to_string()]));
    };
    let t = e.tld.to_native();
    let t = (t != NONE).then(|| &snap.tlds[t as usize]);
    let sellers = t.map_or(0, |t| t.sellers.to_native() as usize);
    let fresh = req.fresh;
    let mut hidden: SmallVec<[&'static str; 4]> = SmallVec::new();
    // A pick is shown when the caller sees its offer; `None` when there is none.
    let mut offer = |i: Option<usize>, field: &'static str| {
        let (t, i) = (t?, i?);
        if offer_shown(snap, t, req.sight, i) {
            Some(&snap.offers[i])
        } else {
            hidden.push(field);
            None
        }
    };
    let (average, transfer_average) =
        t.map_or((true, true), |t| averages_shown(snap, t, req.sight));
    let shown = |s: bool, c: u32| if s { c } else { NONE };
    let avg_prices = match t {
        Some(t) => view::Triple::of(
            shown(average, t.avg_register.to_native()),
            shown(average, t.avg_renew.to_native()),
            shown(transfer_average, t.avg_transfer.to_native()),
        ),
        None => view::Triple::default(),
    };
    // The stored pick, or the best fresh one when it is stale and stale ones are left
    // out.
    let pick = |stored: fn(&ArchivedTld) -> u32, order: fn(&ArchivedOffer) -> u64| {
        t.and_then(|t| ranked_pick(snap, t, stored(t), fresh, order))
    };
    let first = |t: &ArchivedTld| {
        if t.sellers.to_native() > 0 {
            t.first_offer.to_native()
        } else {
            NONE
        }
    };
    // The sellers are stored in (register, renew, key) order: the first ranked one.
    let by_rank = |o: &ArchivedOffer| {
        (u64::from(o.register.to_native()) << 32) | u64::from(o.renew.to_native())
    };
    let cheapest_register = offer(pick(first, by_rank), "cheapest_register")
        .map(|o| view::Pick::of(snap, o, |register, _| cents(register), fresh));
    let lowest_renew = offer(
        pick(
            |t| t.lowest_renew_offer.to_native(),
            |o| u64::from(o.renew.to_native()),
        ),
        "lowest_renew",
    )
    .map(|o| view::Pick::of(snap, o, |_, renew| cents(renew), fresh));
    let five = |register: u32, renew: u32| Some(cents(register)? + 4 * cents(renew)?);
    let lowest_5_year = offer(
        pick(
            |t| t.lowest_5y_offer.to_native(),
            // A seller has both prices.
            |o| u64::from(o.register.to_native()) + 4 * u64::from(o.renew.to_native()),
        ),
        "lowest_5_year",
    )
    .map(|o| view::Pick::of(snap, o, five, fresh));
    let stale_count = t.map_or(0, |t| {
        stale_sellers(snap, t, fresh, req.sight.shown(req.tld, sellers))
    });
    if !(average && transfer_average) {
        hidden.insert(0, "avg_prices");
    }
    Ok(view::Overview {
        facts: view::TldFacts::of(snap, e),
        registrar_count: sellers,
        avg_prices,
        cheapest_register,
        lowest_renew,
        lowest_5_year,
        stale_count,
        members_only: hidden,
    })
}

/// Price changes of a TLD per registrar, oldest first:
/// `{"tld":..,"from":..,"to":..,"history":{key:{"coverage":{"first":..,"last":..},"price_at_from":..,"changes":[{"date":..,"register_price":..,"renew_price":..,"transfer_price":..}]}}}`.
///
/// `price_at_from` is the last change before `from` (the price in effect when the
/// window opens; `null` without `from` or when there is none); `coverage` is the first
/// and last dated feed version of the registrar, so that a window without changes can
/// be told apart from a window without data. Every registrar with history for the TLD
/// is listed (or the ones asked for), in key order or request order. A TLD of the
/// catalogue that nobody ever priced has an empty history. Written from
/// [`history_view`].
pub fn history(
    snap: &ArchivedSnapshotData,
    req: &HistoryRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    history_in(snap, req, Money::USD, out)
}

/// [`history`] with the prices in another currency (each converted at the rate of the
/// snapshot's data date, like every other answer: a conversion, not a past rate).
pub fn history_in(
    snap: &ArchivedSnapshotData,
    req: &HistoryRequest<'_>,
    money: Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    let fx = money.fx;
    out.clear();
    let h = history_view(snap, req)?;
    out.extend_from_slice(b"{\"tld\":");
    json::write_str(h.tld, out);
    out.extend_from_slice(b",\"from\":");
    write_opt_date(h.from, out);
    out.extend_from_slice(b",\"to\":");
    write_opt_date(h.to, out);
    out.extend_from_slice(b",\"history\":{");
    for (n, r) in h.registrars.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        json::write_str(r.key, out);
        out.extend_from_slice(b":{");
        view::Coverage::write(r.coverage, out);
        out.extend_from_slice(b",\"price_at_from\":");
        match &r.price_at_from {
            Some(c) => c.write(fx, out),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"changes\":[");
        for (i, c) in r.changes().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            c.write(fx, out);
        }
        out.extend_from_slice(b"]}");
    }
    out.push(b'}');
    if !h.unknown_registrars.is_empty() {
        out.extend_from_slice(b",\"not_found\":{\"registrars\":");
        write_str_list(&h.unknown_registrars, out);
        out.push(b'}');
    }
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.push(b'}');
    Ok(())
}

/// The history of [`history`] as a typed view. A registrar whose offer of today the
/// caller does not see has no history for the TLD (its last change is its price now):
/// it is left out, or listed without changes when it was asked for.
pub fn history_view<'s>(
    snap: &'s ArchivedSnapshotData,
    req: &HistoryRequest<'_>,
) -> Result<view::History<'s>, QueryError> {
    let Some(e) = snap.catalogue_entry(req.tld) else {
        return Err(QueryError::UnknownTlds(vec![req.tld.to_string()]));
    };
    let t = e.tld.to_native();
    let t = (t != NONE).then(|| &snap.tlds[t as usize]);
    let changes = match t {
        None => &snap.history[..0],
        Some(t) => {
            let first = t.first_change.to_native() as usize;
            &snap.history[first..first + t.changes.to_native() as usize]
        }
    };
    let seen = |r: usize| t.is_none_or(|t| registrar_seen(snap, t, req.sight, r));
    let mut wanted: Vec<usize> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    match req.registrars {
        Some(keys) => {
            for k in keys {
                match snap.registrar_index(k) {
                    Some(i) => wanted.push(i),
                    None => unknown.push((*k).to_string()),
                }
            }
        }
        None => {
            for c in changes {
                let r = c.registrar.to_native() as usize;
                if wanted.last() != Some(&r) && seen(r) {
                    wanted.push(r);
                }
            }
        }
    }
    let registrars = wanted
        .into_iter()
        .map(|r| {
            // The registrar's run: changes are ordered by (registrar, date).
            let lo = changes.partition_point(|c| (c.registrar.to_native() as usize) < r);
            let hi = changes.partition_point(|c| (c.registrar.to_native() as usize) <= r);
            let run = if seen(r) {
                &changes[lo..hi]
            } else {
                &changes[..0]
            };
            let start = req.from.map_or(0, |f| {
                run.partition_point(|c| (c.date.to_native() as i64) < f)
            });
            let end = req.to.map_or(run.len(), |t| {
                run.partition_point(|c| (c.date.to_native() as i64) <= t)
            });
            let reg = &snap.registrars[r];
            view::RegistrarHistory {
                key: snap.span_str(&reg.key),
                name: snap.span_str(&reg.name),
                coverage: view::Coverage::of(snap, reg),
                price_at_from: start
                    .checked_sub(1)
                    .filter(|_| req.from.is_some())
                    .map(|k| view::Change::of(&run[k])),
                window: &run[start..end.max(start)],
            }
        })
        .collect();
    Ok(view::History {
        tld: snap.span_str(&e.name),
        from: req.from,
        to: req.to,
        registrars,
        unknown_registrars: unknown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn elapsed(nanos: u64) -> String {
        let mut out = Vec::new();
        write_elapsed(Duration::from_nanos(nanos), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_price_is_stale_from_the_day_after_its_age_limit() {
        let ms = |s: &str| time::parse_rfc3339(s).unwrap();
        let fresh = Freshness::new(ms("2026-12-01T10:00:00Z"), 365, false);
        assert_eq!(fresh.today, time::parse_date("2026-12-01").unwrap());
        // 365 days before 2026-12-01 is 2025-12-01: that whole day is still fresh.
        assert!(!fresh.is_stale(ms("2025-12-01T00:00:00Z")));
        assert!(fresh.is_stale(ms("2025-11-30T23:59:59.999Z")));
        assert!(!fresh.ranks(ms("2024-01-07T06:15:23Z")));
        let asked = Freshness::new(ms("2026-12-01T10:00:00Z"), 365, true);
        assert!(asked.is_stale(ms("2024-01-07T06:15:23Z")));
        assert!(asked.ranks(ms("2024-01-07T06:15:23Z")));
        assert!(!Freshness::ANY_AGE.is_stale(i64::MIN + 1));
    }

    #[test]
    fn elapsed_is_readable_at_every_scale() {
        assert_eq!(elapsed(40_000), "0.04ms");
        assert_eq!(elapsed(1_234_567), "1.23ms");
        assert_eq!(elapsed(12_000_000), "12.00ms");
        assert_eq!(elapsed(5_000), "0.01ms");
        assert_eq!(elapsed(4_499), "0.004ms");
        assert_eq!(elapsed(1_000), "0.001ms");
        assert_eq!(elapsed(0), "0.000ms");
        // The longest value there is fits the room the kept answers leave for it.
        assert_eq!(elapsed(u64::MAX), "18446744073709.55ms");
        let mut out = Vec::new();
        write_elapsed(Duration::MAX, &mut out);
        assert_eq!(out, b"18446744073709.55ms");
        assert!(out.len() <= ELAPSED_ROOM);
    }
}
