//! What the pages show, read from the query layer's own answers.
//!
//! Every number on a page comes from a [`crate::query`] function, the same call the API
//! makes, parsed back into the small typed views below: the web room computes no
//! price, average, rank or total of its own, so a page and the API never disagree.
//! Pages are rendered once per snapshot and viewer plan and then served from memory
//! (see [`super::cache`]), so the parse costs nothing per request.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::query::{
    self, CatalogueRequest, CheapestRequest, Freshness, HistoryRequest, OverviewRequest,
    PricesRequest, QueryError, RegistrarRequest, RegistrarsRequest, Shape,
};
use crate::sight::Sight;
use crate::snapshot::ArchivedSnapshotData;

/// Why a page's data could not be read.
#[derive(Debug)]
pub enum DataError {
    /// The query has nothing to answer (unknown TLD or registrar, stale cursor).
    Query(QueryError),
    /// A query answered something its own shape does not allow (a bug).
    Shape(String),
}

impl From<QueryError> for DataError {
    fn from(e: QueryError) -> DataError {
        DataError::Query(e)
    }
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, body: &[u8]) -> Result<T, DataError> {
    serde_json::from_slice(body).map_err(|e| DataError::Shape(format!("{what}: {e}")))
}

/// Three prices in dollars (`null`: not offered).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Triple {
    /// First-year registration.
    pub register: Option<f64>,
    /// Renewal.
    pub renew: Option<f64>,
    /// Transfer.
    pub transfer: Option<f64>,
}

/// A price quoted in another currency.
#[derive(Debug, Clone, Deserialize)]
pub struct Original {
    /// ISO 4217 code.
    pub currency: String,
    /// The quoted amount.
    pub price: Option<f64>,
    /// Day of the conversion rate.
    pub rate_date: String,
}

/// A registrar picked by an aggregate (cheapest, lowest renewal, lowest 5 years).
#[derive(Debug, Clone, Deserialize)]
pub struct Pick {
    /// The price.
    pub price: Option<f64>,
    /// Registrar key.
    pub registrar_key: String,
    /// Registrar name.
    pub registrar_name: String,
    /// The quoted price, when not quoted in USD.
    pub original_price: Option<Original>,
}

/// The spec 1.7 facts of a TLD ([`query::overview`]).
#[derive(Debug, Clone, Deserialize)]
pub struct Overview {
    /// Canonical name.
    pub tld: String,
    /// Unicode form.
    pub unicode: String,
    /// IANA type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// IANA manager.
    pub manager: Option<String>,
    /// One of the 22 free TLDs.
    pub free: bool,
    /// Selling registrars.
    pub registrar_count: u64,
    /// Averages over the sellers.
    pub avg_prices: Triple,
    /// Cheapest registration (`None` for members only or unsold).
    pub cheapest_register: Option<Pick>,
    /// Lowest renewal.
    pub lowest_renew: Option<Pick>,
    /// Lowest 5-year cost.
    pub lowest_5_year: Option<Pick>,
    /// Fields hidden from this viewer.
    #[serde(default)]
    pub members_only: Vec<String>,
}

/// One row of a TLD's registrar table.
#[derive(Debug, Clone)]
pub struct Row {
    /// Rank by registration price (1 = cheapest).
    pub rank: u64,
    /// Registrar key.
    pub key: String,
    /// Registrar name.
    pub name: String,
    /// Prices.
    pub prices: Triple,
    /// Register + 4 renewals, as the API computes it.
    pub total_5_year: Option<f64>,
    /// When the registrar published these prices (`YYYY-MM-DD`).
    pub date: String,
    /// The prices as quoted, when not in USD.
    pub original: Option<OriginalPrices>,
    /// Whether the price is older than the server's age limit.
    pub stale: bool,
}

/// Prices as the registrar quoted them, in another currency.
#[derive(Debug, Clone, Deserialize)]
pub struct OriginalPrices {
    /// ISO 4217 code.
    pub currency: String,
    /// Registration.
    pub register: Option<f64>,
    /// Renewal.
    pub renew: Option<f64>,
    /// Transfer.
    pub transfer: Option<f64>,
    /// Day of the conversion rate.
    pub rate_date: String,
}

/// One registrar's price history for a TLD.
#[derive(Debug, Clone)]
pub struct Series {
    /// Registrar key.
    pub key: String,
    /// Registrar name.
    pub name: String,
    /// Changes, oldest first.
    pub changes: Vec<Change>,
    /// The day of the registrar's newest prices (days since 1970-01-01): its data ends
    /// there.
    pub last_seen: Option<i64>,
}

/// One price change.
#[derive(Debug, Clone, Deserialize)]
pub struct Change {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// Registration (`None`: stopped selling).
    pub register_price: Option<f64>,
    /// Renewal.
    pub renew_price: Option<f64>,
    /// Transfer.
    pub transfer_price: Option<f64>,
}

/// Everything the page of one TLD shows.
#[derive(Debug, Clone)]
pub struct TldPage {
    /// The facts.
    pub overview: Overview,
    /// Whether this viewer sees the TLD's prices (free TLD, or a plan with all TLDs).
    pub prices_shown: bool,
    /// The sellers this viewer sees, cheapest first.
    pub rows: Vec<Row>,
    /// How many sellers this viewer does not see (their names and prices are for
    /// members of a plan that shows them).
    pub hidden: u64,
    /// Price history per registrar this viewer sees (empty when prices are not shown).
    pub history: Vec<Series>,
    /// The snapshot's data date, `YYYY-MM-DD`.
    pub data_date: String,
}

#[derive(Deserialize)]
struct CheapestBody {
    results: BTreeMap<String, CheapestTld>,
}

#[derive(Deserialize)]
struct CheapestTld {
    cheapest_register: Vec<CheapestEntry>,
}

#[derive(Deserialize)]
struct CheapestEntry {
    rank: u64,
    registrar_name: String,
    register_price: Option<f64>,
    total_cost_5_year: Option<f64>,
}

#[derive(Deserialize)]
struct ListingBody {
    registrars: Vec<ListingEntry>,
}

#[derive(Deserialize)]
struct ListingEntry {
    name: String,
    key: String,
    #[serde(default)]
    prices: Triple,
    original_prices: Option<OriginalPrices>,
    #[serde(default)]
    stale: bool,
}

#[derive(Deserialize)]
struct PricesBody {
    results: BTreeMap<String, BTreeMap<String, PriceRecord>>,
}

#[derive(Deserialize)]
struct PriceRecord {
    last_updated: String,
}

#[derive(Deserialize)]
struct HistoryBody {
    history: BTreeMap<String, HistoryEntry>,
}

#[derive(Deserialize)]
struct HistoryEntry {
    coverage: Option<Coverage>,
    changes: Vec<Change>,
}

/// The data date of a snapshot, `YYYY-MM-DD`.
pub fn data_date(snap: &ArchivedSnapshotData) -> String {
    crate::time::iso_millis(snap.data_updated_ms.to_native())[..10].to_owned()
}

/// The page of `tld` (canonical) as a viewer who sees `sight` sees it: every query
/// asked with the viewer's sight, so that the page shows what the API shows that plan.
pub fn tld_page(
    snap: &ArchivedSnapshotData,
    tld: &str,
    sight: Sight,
    public_url: &str,
    fresh: Freshness,
) -> Result<TldPage, DataError> {
    let mut out = Vec::new();
    query::overview(snap, &OverviewRequest { tld, fresh, sight }, &mut out)?;
    // The table lists every seller the viewer sees, the stale ones marked.
    let every = Freshness {
        include_stale: true,
        ..fresh
    };
    let overview: Overview = parse("overview", &out)?;
    let prices_shown = sight.price_shown(tld);
    let mut rows = Vec::new();
    let mut hidden = overview.registrar_count;
    if overview.registrar_count > 0 && prices_shown {
        // Names, keys and prices in rank order (the listing the viewer sees).
        query::registrars(
            snap,
            &RegistrarsRequest {
                tld,
                include_prices: true,
                sight,
                public_url,
                fresh: every,
            },
            &mut out,
        )?;
        let listing: ListingBody = parse("registrars", &out)?;
        // 5-year totals, in the same rank order.
        let tlds = [tld];
        query::cheapest(
            snap,
            &CheapestRequest {
                tlds: &tlds,
                limit: usize::MAX,
                shape: Shape::Public,
                tier: None,
                fresh: every,
                sight,
            },
            &mut out,
        )?;
        let cheapest: CheapestBody = parse("cheapest", &out)?;
        let entries = cheapest
            .results
            .into_values()
            .next()
            .map(|t| t.cheapest_register)
            .unwrap_or_default();
        // Each price's date.
        query::prices(
            snap,
            &PricesRequest {
                tlds: &tlds,
                registrars: None,
                started: crate::time::Stamp::now(),
                fresh: every,
                sight,
            },
            &mut out,
        )?;
        let mut dates: PricesBody = parse("prices", &out)?;
        let dates = dates.results.remove(tld).unwrap_or_default();
        if entries.len() != listing.registrars.len() {
            return Err(DataError::Shape(format!(
                "{tld}: {} cheapest entries for {} listed registrars",
                entries.len(),
                listing.registrars.len()
            )));
        }
        for (l, c) in listing.registrars.into_iter().zip(entries) {
            if l.name != c.registrar_name || l.prices.register != c.register_price {
                return Err(DataError::Shape(format!(
                    "{tld}: rank {} is {} in one query and {} in the other",
                    c.rank, l.name, c.registrar_name
                )));
            }
            let date = dates
                .get(&l.key)
                .map(|r| r.last_updated.get(..10).unwrap_or_default().to_owned())
                .unwrap_or_default();
            rows.push(Row {
                rank: c.rank,
                key: l.key,
                name: l.name,
                prices: l.prices,
                total_5_year: c.total_cost_5_year,
                date,
                original: l.original_prices,
                stale: l.stale,
            });
        }
        hidden -= rows.len() as u64;
    }
    let mut history = Vec::new();
    if prices_shown {
        query::history(
            snap,
            &HistoryRequest {
                tld,
                registrars: None,
                from: None,
                to: None,
                sight,
            },
            &mut out,
        )?;
        let body: HistoryBody = parse("history", &out)?;
        let names = registrar_names(snap, public_url)?;
        for (key, entry) in body.history {
            let name = names.get(&key).cloned().unwrap_or_else(|| key.clone());
            let last_seen = entry
                .coverage
                .and_then(|c| crate::time::parse_date(&c.last));
            history.push(Series {
                key,
                name,
                changes: entry.changes,
                last_seen,
            });
        }
    }
    Ok(TldPage {
        overview,
        prices_shown,
        rows,
        hidden,
        history,
        data_date: data_date(snap),
    })
}

/// Registrar key → name.
fn registrar_names(
    snap: &ArchivedSnapshotData,
    public_url: &str,
) -> Result<BTreeMap<String, String>, DataError> {
    Ok(registrars(snap, public_url)?
        .registrars
        .into_iter()
        .map(|r| (r.key, r.name))
        .collect())
}

/// A TLD's cheapest registration: price, registrar name, number of registrars.
pub type Cheapest = (Option<f64>, String, u64);

/// The cheapest registration of each of `tlds` ([`query::cheapest`], public shape), as
/// a viewer who sees `sight` sees it (no entry where it sees no price).
pub fn cheapest_of(
    snap: &ArchivedSnapshotData,
    tlds: &[&str],
    fresh: Freshness,
    sight: Sight,
) -> Result<BTreeMap<String, Cheapest>, DataError> {
    #[derive(Deserialize)]
    struct Body {
        results: BTreeMap<String, Tld>,
    }
    #[derive(Deserialize)]
    struct Tld {
        cheapest_register: Vec<CheapestEntry>,
        registrar_count: u64,
    }
    let mut out = Vec::new();
    query::cheapest(
        snap,
        &CheapestRequest {
            tlds,
            limit: 1,
            shape: Shape::Public,
            tier: None,
            fresh,
            sight,
        },
        &mut out,
    )?;
    let body: Body = parse("cheapest", &out)?;
    Ok(body
        .results
        .into_iter()
        .map(|(tld, t)| {
            let first = t.cheapest_register.into_iter().next();
            let (price, name) = first.map_or((None, String::new()), |e| {
                (e.register_price, e.registrar_name)
            });
            (tld, (price, name, t.registrar_count))
        })
        .collect())
}

/// One catalogue entry ([`query::catalogue`]).
#[derive(Debug, Clone, Deserialize)]
pub struct CatalogueEntry {
    /// Canonical name.
    pub tld: String,
    /// Unicode form.
    pub unicode: String,
    /// IANA type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// One of the 22 free TLDs.
    pub free: bool,
    /// Selling registrars.
    pub registrar_count: u64,
    /// Average registration price.
    pub avg_register_price: Option<f64>,
    /// Cheapest registration, when shown.
    pub cheapest_register: Option<Pick>,
    /// Fields hidden from this viewer.
    #[serde(default)]
    pub members_only: Vec<String>,
}

/// The paging facts of a listing.
#[derive(Debug, Clone, Deserialize)]
pub struct PageMeta {
    /// Entries in the whole listing.
    pub total: u64,
    /// Entries per page.
    pub limit: u64,
    /// The next page's cursor.
    pub next_cursor: Option<String>,
}

/// One page of the catalogue.
#[derive(Debug, Clone, Deserialize)]
pub struct Catalogue {
    /// The entries.
    pub tlds: Vec<CatalogueEntry>,
    /// Paging.
    pub meta: PageMeta,
}

/// A page of the catalogue ([`query::catalogue`]).
pub fn catalogue(
    snap: &ArchivedSnapshotData,
    req: &CatalogueRequest<'_>,
) -> Result<Catalogue, DataError> {
    let mut out = Vec::new();
    query::catalogue(snap, req, &mut out)?;
    parse("catalogue", &out)
}

/// First and last dated feed version.
#[derive(Debug, Clone, Deserialize)]
pub struct Coverage {
    /// First day.
    pub first: String,
    /// Last day.
    pub last: String,
}

/// A registrar's listing fields.
#[derive(Debug, Clone, Deserialize)]
pub struct Registrar {
    /// Key.
    pub key: String,
    /// Name.
    pub name: String,
    /// Homepage.
    pub homepage: Option<String>,
    /// TLDs sold.
    pub tlds_sold: u64,
    /// TLDs with only a renewal price.
    pub renewal_only: u64,
    /// TLDs where it is the cheapest.
    pub cheapest_in: u64,
    /// Feed coverage.
    pub coverage: Option<Coverage>,
    /// Latest price date.
    pub last_updated: Option<String>,
}

/// Every registrar.
#[derive(Debug, Clone, Deserialize)]
pub struct Registrars {
    /// By key.
    pub registrars: Vec<Registrar>,
}

/// Every registrar ([`query::registrars_list`]).
pub fn registrars(snap: &ArchivedSnapshotData, public_url: &str) -> Result<Registrars, DataError> {
    let mut out = Vec::new();
    query::registrars_list(snap, public_url, &mut out);
    parse("registrars_list", &out)
}

/// One price of a registrar's list.
#[derive(Debug, Clone, Deserialize)]
pub struct RegistrarPrice {
    /// The TLD.
    pub tld: String,
    /// Registration.
    pub register_price: Option<f64>,
    /// Renewal.
    pub renew_price: Option<f64>,
    /// Transfer.
    pub transfer_price: Option<f64>,
    /// When published.
    pub last_updated: String,
    /// Fields hidden from this viewer.
    #[serde(default)]
    pub members_only: Vec<String>,
}

/// A registrar and a page of its prices.
#[derive(Debug, Clone, Deserialize)]
pub struct RegistrarPage {
    /// Listing fields.
    #[serde(flatten)]
    pub registrar: Registrar,
    /// The prices.
    pub prices: Vec<RegistrarPrice>,
    /// Paging.
    pub meta: PageMeta,
}

/// A registrar's page ([`query::registrar`]).
pub fn registrar(
    snap: &ArchivedSnapshotData,
    req: &RegistrarRequest<'_>,
) -> Result<RegistrarPage, DataError> {
    let mut out = Vec::new();
    query::registrar(snap, req, &mut out)?;
    parse("registrar", &out)
}

/// The overview of `tld` (canonical) as a viewer who sees `sight` sees it, or `None`
/// when the catalogue has no such name.
pub fn overview(
    snap: &ArchivedSnapshotData,
    tld: &str,
    fresh: Freshness,
    sight: Sight,
) -> Option<Overview> {
    let mut out = Vec::new();
    query::overview(snap, &OverviewRequest { tld, fresh, sight }, &mut out).ok()?;
    serde_json::from_slice(&out).ok()
}
