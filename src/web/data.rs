//! What the pages show, read from the query layer's typed views.
//!
//! Every number on a page comes from a [`crate::query`] view, the answer the API gives
//! as a plain value: the overview, catalogue, registrar and history endpoints write
//! their JSON from the same views, and [`query::tld_offers`] reads the stored ranking
//! the price endpoints copy, through the same rules (a test holds the two together).
//! The web room computes no price, average, rank or total of its own, so a page and the
//! API never disagree: a ranking is a stored one ([`query::tld_offers_in`]), and a price
//! in another currency is converted and a total summed by the API's rule
//! ([`super::format::Cash`]). This module puts together what a page needs of several views;
//! the pages that show one view take it from the query layer as it is.

use super::format::Cash;
use crate::query::view::{Change, Offered, Overview, RegistrarPage, Triple};
use crate::query::{self, Freshness, HistoryRequest, OverviewRequest, QueryError, Ranking};
use crate::sight::Sight;
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::OfferTerms;

/// One row of a TLD's registrar table.
#[derive(Debug, Clone)]
pub struct Row<'s> {
    /// Rank in the page's ranking (1 = cheapest).
    pub rank: usize,
    /// The seller and its prices.
    pub offer: Offered<'s>,
}

/// One registrar's price history for a TLD.
#[derive(Debug, Clone)]
pub struct Series<'s> {
    /// Registrar key.
    pub key: &'s str,
    /// Registrar name.
    pub name: &'s str,
    /// Changes, oldest first.
    pub changes: Vec<Change>,
    /// The day of the registrar's newest prices (days since 1970-01-01): its data ends
    /// there.
    pub last_seen: Option<i64>,
}

/// Everything the page of one TLD shows.
#[derive(Debug, Clone)]
pub struct TldPage<'s> {
    /// The facts.
    pub overview: Overview<'s>,
    /// Whether this viewer sees the TLD's prices (free TLD, or a plan with all TLDs).
    pub prices_shown: bool,
    /// The ranking the sellers are listed in.
    pub ranking: Ranking,
    /// The sellers this viewer sees, cheapest first by `ranking`.
    pub rows: Vec<Row<'s>>,
    /// What the cheapest registration's list says beside its price (its promotion).
    pub cheapest_terms: OfferTerms<'s>,
    /// How many sellers this viewer does not see (their names and prices are for
    /// members of a plan that shows them).
    pub hidden: usize,
    /// Price history per registrar this viewer sees (empty when prices are not shown),
    /// in the page's currency.
    pub history: Vec<Series<'s>>,
    /// The snapshot's data date, `YYYY-MM-DD`.
    pub data_date: String,
}

/// The data date of a snapshot, `YYYY-MM-DD`.
pub fn data_date(snap: &ArchivedSnapshotData) -> String {
    crate::time::iso_millis(snap.data_updated_ms.to_native())[..10].to_owned()
}

/// The page of `tld` (canonical) as a viewer who sees `sight` sees it: every view
/// asked with the viewer's sight, so that the page shows what the API shows that plan.
/// The sellers are in the stored order of `ranking` ([`query::tld_offers_in`]); the
/// history's prices are in the currency of `cash`.
pub fn tld_page<'s>(
    snap: &'s ArchivedSnapshotData,
    tld: &str,
    sight: Sight,
    fresh: Freshness,
    ranking: Ranking,
    cash: Cash<'_>,
) -> Result<TldPage<'s>, QueryError> {
    let overview = query::overview_view(snap, &OverviewRequest { tld, fresh, sight })?;
    let prices_shown = sight.price_shown(tld);
    let mut rows = Vec::new();
    if overview.registrar_count > 0 && prices_shown {
        // The table lists every seller the viewer sees, the stale ones marked.
        let every = Freshness {
            include_stale: true,
            ..fresh
        };
        if let Some(offers) = query::tld_offers_in(snap, tld, every, sight, ranking) {
            rows = offers
                .ranked()
                .enumerate()
                .map(|(i, o)| Row {
                    rank: i + 1,
                    offer: *o,
                })
                .collect();
        }
    }
    let hidden = overview.registrar_count - rows.len();
    let mut history = Vec::new();
    if prices_shown {
        let req = HistoryRequest {
            tld,
            registrars: None,
            from: None,
            to: None,
            sight,
        };
        history = query::history_view(snap, &req)?
            .registrars
            .iter()
            .map(|r| Series {
                key: r.key,
                name: r.name,
                changes: r
                    .changes()
                    .map(|c| Change {
                        prices: converted(cash, c.prices),
                        ..c
                    })
                    .collect(),
                last_seen: r.coverage.map(|c| c.last),
            })
            .collect();
    }
    let cheapest_terms = overview
        .cheapest_register
        .as_ref()
        .map_or(OfferTerms::NONE, |p| terms_of(snap, tld, p.registrar_key));
    Ok(TldPage {
        overview,
        prices_shown,
        ranking,
        rows,
        cheapest_terms,
        hidden,
        history,
        data_date: data_date(snap),
    })
}

/// Prices in the currency of `cash`.
fn converted(cash: Cash<'_>, p: Triple) -> Triple {
    Triple {
        register: p.register.map(|c| cash.convert(c)),
        renew: p.renew.map(|c| cash.convert(c)),
        transfer: p.transfer.map(|c| cash.convert(c)),
    }
}

/// What the list of `registrar_key` says beside its price of `tld` (a promotion's
/// regular first-year price, the ICANN fee), as stored with the offer; nothing when it
/// has no offer.
pub fn terms_of<'s>(
    snap: &'s ArchivedSnapshotData,
    tld: &str,
    registrar_key: &str,
) -> OfferTerms<'s> {
    snap.tld(tld)
        .zip(snap.registrar_index(registrar_key))
        .and_then(|(t, r)| snap.offer_of(t, r))
        .map_or(OfferTerms::NONE, |o| snap.terms(o))
}

/// The terms of each price of a registrar's page, in its order.
pub fn registrar_terms<'s>(
    snap: &'s ArchivedSnapshotData,
    page: &RegistrarPage<'_>,
) -> Vec<OfferTerms<'s>> {
    page.prices
        .iter()
        .map(|p| terms_of(snap, p.tld, page.registrar.key))
        .collect()
}

/// A TLD's cheapest registration and cheapest three years as a viewer sees them.
#[derive(Debug, Clone)]
pub struct Cheapest<'s> {
    /// The TLD.
    pub tld: &'s str,
    /// The price (`None` when the viewer sees no seller).
    pub price: Option<u64>,
    /// Its registrar's name (empty when there is none).
    pub registrar_name: &'s str,
    /// Selling registrars.
    pub registrar_count: usize,
    /// What the cheapest registration's list says beside its price (its promotion).
    pub terms: OfferTerms<'s>,
    /// The first seller of the three-year ranking (first year and two renewals).
    pub three_year: Option<Offered<'s>>,
}

/// The cheapest registration of each of `tlds` that the snapshot prices, in their
/// order, as the cheapest ranking shows a viewer who sees `sight` (the first ranked
/// seller), with the first seller of the stored three-year ranking. None of them
/// priced is the cheapest query's unknown TLDs.
pub fn cheapest_of<'s>(
    snap: &'s ArchivedSnapshotData,
    tlds: &[&str],
    fresh: Freshness,
    sight: Sight,
) -> Result<Vec<Cheapest<'s>>, QueryError> {
    let found: Vec<Cheapest<'s>> = tlds
        .iter()
        .filter_map(|tld| query::tld_offers(snap, tld, fresh, sight))
        .map(|offers| {
            let first = offers.ranked().next();
            let three_year =
                query::tld_offers_in(snap, offers.tld, fresh, sight, Ranking::Total3Year)
                    .and_then(|o| o.ranked().next().copied());
            Cheapest {
                tld: offers.tld,
                price: first.and_then(|o| o.prices.register),
                registrar_name: first.map_or("", |o| o.registrar_name),
                registrar_count: offers.registrar_count,
                terms: first.map_or(OfferTerms::NONE, |o| o.terms),
                three_year,
            }
        })
        .collect();
    if found.is_empty() {
        return Err(QueryError::UnknownTlds(
            tlds.iter().map(|t| (*t).to_owned()).collect(),
        ));
    }
    Ok(found)
}
