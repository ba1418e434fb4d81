//! What each endpoint takes in its query string: one type per endpoint, the same for
//! the API's handler, `tldsnap query` and the website's pages.
//!
//! Each type names its parameters once ([`CheapestParams::NAMES`], ...): the handler
//! picks those names out of the request's query ([`super::pick`]), the CLI fills them
//! from its flags, a page from its links and form, and then [`from_values`]
//! (`CheapestParams::from_values`, ...) checks every value by the rules of docs/API.md,
//! "Parameters". `COMPONENTS` names each parameter's description in the OpenAPI
//! document (`#/components/parameters/…`), in the same order.
//!
//! The values are borrowed: a parsed list (`tlds`) borrows from the values it was read
//! from, so the request allocates nothing when no value was percent-encoded.
//!
//! [`from_values`]: CheapestParams::from_values

use std::borrow::Cow;

use super::{List, boolean, cursor, day, limit, page_limit, registrars, search, sort, tld_type};
use super::{bounded_int, currency, dns_types, integer, ranking, tlds, window};
use crate::http::problem::Problem;
use crate::http::problem::echo;
use crate::query::{self, CatalogueRequest, CatalogueSort, Cursor, Freshness, Sight};

/// The values of an endpoint's parameters, in the order of its `NAMES`; `None` when
/// absent.
pub type Values<'a, const N: usize> = [Option<Cow<'a, str>>; N];

/// `max_age_days` and `include_stale`: the staleness rule a request asks for
/// (docs/API.md, "Old prices").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FreshnessParams {
    /// Days past which a price is stale; `None`: the server's.
    pub max_age_days: Option<u32>,
    /// Keep stale prices in rankings, marked.
    pub include_stale: bool,
}

impl FreshnessParams {
    /// Reads `max_age_days` (1 to [`query::MAX_AGE_DAYS_LIMIT`]) and `include_stale`.
    pub fn from_values(
        max_age_days: Option<&str>,
        include_stale: Option<&str>,
    ) -> Result<FreshnessParams, Problem> {
        let max_age_days = match max_age_days {
            None => None,
            Some(v) => Some(bounded_int(
                "max_age_days",
                Some(v),
                0,
                query::MAX_AGE_DAYS_LIMIT as usize,
            )? as u32),
        };
        Ok(FreshnessParams {
            max_age_days,
            include_stale: boolean("include_stale", include_stale, false)?,
        })
    }

    /// The rule on the day of `now_ms`, with `default_days` when the request gave none.
    pub fn at(self, default_days: u32, now_ms: i64) -> Freshness {
        Freshness::new(
            now_ms,
            self.max_age_days.unwrap_or(default_days),
            self.include_stale,
        )
    }
}

/// The parameters of the cheapest endpoints (`/api/v1/client/prices/cheapest`, the
/// public variant, `tldsnap query cheapest`).
#[derive(Debug)]
pub struct CheapestParams<'a> {
    /// The TLDs asked for, normalised, duplicates collapsed.
    pub tlds: List<'a>,
    /// Entries per TLD.
    pub limit: usize,
    /// The day the answer is as of (days since 1970-01-01); `None`: now.
    pub at: Option<i64>,
    /// The staleness rule asked for.
    pub fresh: FreshnessParams,
    /// The order of the ranking.
    pub sort: query::Ranking,
    /// The currency of the prices (ISO 4217, capitals); `None`: USD.
    pub currency: Option<String>,
}

impl<'a> CheapestParams<'a> {
    /// The query parameters, in the order [`CheapestParams::from_values`] takes them.
    pub const NAMES: [&'static str; 7] = [
        "tlds",
        "limit",
        "at",
        "max_age_days",
        "include_stale",
        "sort",
        "currency",
    ];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 7] = [
        "tlds",
        "limit",
        "at",
        "max_age_days",
        "include_stale",
        "ranking",
        "currency",
    ];

    /// Checks the values of [`CheapestParams::NAMES`].
    pub fn from_values(values: &'a Values<'_, 7>) -> Result<CheapestParams<'a>, Problem> {
        let [
            tlds_v,
            limit_v,
            at,
            max_age,
            include_stale,
            sort,
            currency_v,
        ] = values;
        let params = CheapestParams {
            tlds: tlds(tlds_v.as_deref())?,
            limit: limit(limit_v.as_deref())?,
            at: day("at", at.as_deref())?,
            fresh: FreshnessParams::from_values(max_age.as_deref(), include_stale.as_deref())?,
            sort: ranking(sort.as_deref())?,
            currency: currency(currency_v.as_deref())?,
        };
        Ok(params)
    }
}

/// The parameters of the price grid export (`/api/v1/client/export`, `tldsnap export`).
#[derive(Debug)]
pub struct ExportParams<'a> {
    /// The TLDs to export; `None`: every TLD the plan shows.
    pub tlds: Option<List<'a>>,
    /// The currency of the amounts; `None`: USD.
    pub currency: Option<String>,
}

impl<'a> ExportParams<'a> {
    /// The query parameters, in the order [`ExportParams::from_values`] takes them.
    pub const NAMES: [&'static str; 2] = ["tlds", "currency"];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 2] = ["export_tlds", "currency"];

    /// Checks the values of [`ExportParams::NAMES`].
    pub fn from_values(values: &'a Values<'_, 2>) -> Result<ExportParams<'a>, Problem> {
        let [tlds_v, currency_v] = values;
        Ok(ExportParams {
            tlds: match tlds_v.as_deref() {
                None => None,
                Some(v) => Some(tlds(Some(v))?),
            },
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The query parameters of the portfolio audit (`POST /api/v1/client/portfolio/audit`;
/// the portfolio comes in the body).
#[derive(Debug)]
pub struct AuditParams {
    /// The currency of the amounts; `None`: USD.
    pub currency: Option<String>,
}

impl AuditParams {
    /// The query parameters, in the order [`AuditParams::from_values`] takes them.
    pub const NAMES: [&'static str; 1] = ["currency"];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 1] = Self::NAMES;

    /// Checks the values of [`AuditParams::NAMES`].
    pub fn from_values(values: &Values<'_, 1>) -> Result<AuditParams, Problem> {
        let [currency_v] = values;
        Ok(AuditParams {
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The parameters of the prices endpoints (`/api/v1/client/prices`, the public
/// variants, `tldsnap query prices`).
#[derive(Debug)]
pub struct PricesParams<'a> {
    /// The TLDs asked for.
    pub tlds: List<'a>,
    /// The registrars asked for; `None`: every seller.
    pub registrars: Option<List<'a>>,
    /// The day the answer is as of; `None`: now.
    pub at: Option<i64>,
    /// The staleness rule asked for (prices are marked, never left out).
    pub fresh: FreshnessParams,
    /// The currency of the prices; `None`: USD.
    pub currency: Option<String>,
}

impl<'a> PricesParams<'a> {
    /// The query parameters, in the order [`PricesParams::from_values`] takes them.
    pub const NAMES: [&'static str; 5] = ["tlds", "registrars", "at", "max_age_days", "currency"];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 5] = Self::NAMES;

    /// Checks the values of [`PricesParams::NAMES`].
    pub fn from_values(values: &'a Values<'_, 5>) -> Result<PricesParams<'a>, Problem> {
        let [tlds_v, registrars_v, at, max_age, currency_v] = values;
        Ok(PricesParams {
            tlds: tlds(tlds_v.as_deref())?,
            registrars: registrars(registrars_v.as_deref())?,
            at: day("at", at.as_deref())?,
            fresh: FreshnessParams::from_values(max_age.as_deref(), None)?,
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The query parameters of the registrars selling a TLD
/// (`/api/v1/client/registrars/tld/{tld}`, `tldsnap query registrars`).
#[derive(Debug)]
pub struct RegistrarsParams {
    /// Each registrar's prices too.
    pub include_prices: bool,
    /// The staleness rule asked for.
    pub fresh: FreshnessParams,
    /// The currency of the prices; `None`: USD.
    pub currency: Option<String>,
}

impl RegistrarsParams {
    /// The query parameters, in the order [`RegistrarsParams::from_values`] takes them.
    pub const NAMES: [&'static str; 4] = [
        "include_prices",
        "max_age_days",
        "include_stale",
        "currency",
    ];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 4] = Self::NAMES;

    /// Checks the values of [`RegistrarsParams::NAMES`].
    pub fn from_values(values: &Values<'_, 4>) -> Result<RegistrarsParams, Problem> {
        let [include_prices, max_age, include_stale, currency_v] = values;
        Ok(RegistrarsParams {
            include_prices: boolean("include_prices", include_prices.as_deref(), false)?,
            fresh: FreshnessParams::from_values(max_age.as_deref(), include_stale.as_deref())?,
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The query parameters of a TLD's price history (`/api/v1/client/history/tld/{tld}`,
/// the public variant, `tldsnap query history`, the TLD's page).
#[derive(Debug)]
pub struct HistoryParams<'a> {
    /// The registrars asked for; `None`: every registrar with history.
    pub registrars: Option<List<'a>>,
    /// The window's first day; `None`: open.
    pub from: Option<i64>,
    /// The window's last day; `None`: open.
    pub to: Option<i64>,
    /// The currency of the prices; `None`: USD.
    pub currency: Option<String>,
}

impl<'a> HistoryParams<'a> {
    /// The query parameters, in the order [`HistoryParams::from_values`] takes them.
    pub const NAMES: [&'static str; 4] = ["registrars", "from", "to", "currency"];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 4] = Self::NAMES;

    /// Checks the values of [`HistoryParams::NAMES`].
    pub fn from_values(values: &'a Values<'_, 4>) -> Result<HistoryParams<'a>, Problem> {
        let [registrars_v, from, to, currency_v] = values;
        let (from, to) = window(from.as_deref(), to.as_deref())?;
        Ok(HistoryParams {
            registrars: registrars(registrars_v.as_deref())?,
            from,
            to,
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The query parameters of a TLD's overview (`/api/v1/client/overview/tld/{tld}`, the
/// public variant, `tldsnap query overview`).
#[derive(Debug)]
pub struct OverviewParams {
    /// The staleness rule asked for.
    pub fresh: FreshnessParams,
    /// The currency of the prices; `None`: USD.
    pub currency: Option<String>,
}

impl OverviewParams {
    /// The query parameters, in the order [`OverviewParams::from_values`] takes them.
    pub const NAMES: [&'static str; 3] = ["max_age_days", "include_stale", "currency"];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 3] = Self::NAMES;

    /// Checks the values of [`OverviewParams::NAMES`].
    pub fn from_values(values: &Values<'_, 3>) -> Result<OverviewParams, Problem> {
        let [max_age, include_stale, currency_v] = values;
        Ok(OverviewParams {
            fresh: FreshnessParams::from_values(max_age.as_deref(), include_stale.as_deref())?,
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The parameters of the TLD catalogue (`/api/v1/client/tlds`, the public variant,
/// `tldsnap query tlds`, the `/tlds` page).
#[derive(Debug)]
pub struct CatalogueParams<'a> {
    /// A piece of a name to keep names that contain it (trimmed, lowercased).
    pub q: Option<String>,
    /// The IANA root zone type to keep.
    pub kind: Option<&'a str>,
    /// The order asked for; `None`: by name.
    pub sort: Option<CatalogueSort>,
    /// Entries per page.
    pub limit: usize,
    /// Where the page starts; `None`: the first page.
    pub cursor: Option<Cursor>,
    /// The currency of the prices; `None`: USD. The order is the same in every one.
    pub currency: Option<String>,
}

impl<'a> CatalogueParams<'a> {
    /// The query parameters, in the order [`CatalogueParams::from_values`] takes them.
    pub const NAMES: [&'static str; 6] = ["q", "type", "sort", "limit", "cursor", "currency"];
    /// Their OpenAPI parameter components (a page's `limit` is `page_limit`).
    pub const COMPONENTS: [&'static str; 6] =
        ["q", "type", "sort", "page_limit", "cursor", "currency"];

    /// Checks the values of [`CatalogueParams::NAMES`].
    pub fn from_values(values: &'a Values<'_, 6>) -> Result<CatalogueParams<'a>, Problem> {
        let [q, kind, sort_v, limit_v, cursor_v, currency_v] = values;
        Ok(CatalogueParams {
            q: search(q.as_deref())?,
            kind: tld_type(kind.as_deref())?,
            sort: match sort_v {
                None => None,
                Some(v) => Some(sort(Some(v.as_ref()))?),
            },
            limit: page_limit(limit_v.as_deref())?,
            cursor: cursor(cursor_v.as_deref())?,
            currency: currency(currency_v.as_deref())?,
        })
    }

    /// The query of these parameters, for a caller who sees `sight`, in the snapshot
    /// whose identity (in cursors) is `snapshot`.
    pub fn request(&self, sight: Sight, snapshot: u64) -> CatalogueRequest<'_> {
        CatalogueRequest {
            q: self.q.as_deref(),
            kind: self.kind,
            sort: self.sort.unwrap_or(CatalogueSort::Name),
            limit: self.limit,
            cursor: self.cursor,
            sight,
            snapshot,
        }
    }
}

/// The query parameters of one registrar's price list (`/api/v1/registrars/{key}`,
/// `tldsnap query registrar`).
#[derive(Debug)]
pub struct RegistrarParams {
    /// Prices per page.
    pub limit: usize,
    /// Where the page starts; `None`: the first page.
    pub cursor: Option<Cursor>,
    /// The currency of the prices; `None`: USD.
    pub currency: Option<String>,
}

impl RegistrarParams {
    /// The query parameters, in the order [`RegistrarParams::from_values`] takes them.
    pub const NAMES: [&'static str; 3] = ["limit", "cursor", "currency"];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 3] = ["page_limit", "cursor", "currency"];

    /// Checks the values of [`RegistrarParams::NAMES`].
    pub fn from_values(values: &Values<'_, 3>) -> Result<RegistrarParams, Problem> {
        let [limit_v, cursor_v, currency_v] = values;
        Ok(RegistrarParams {
            limit: page_limit(limit_v.as_deref())?,
            cursor: cursor(cursor_v.as_deref())?,
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The query parameters of the bulk domain lookup (`POST /api/v1/client/domains/lookup`;
/// the names come in the body).
#[derive(Debug)]
pub struct LookupParams {
    /// Entries per name.
    pub limit: usize,
    /// The staleness rule asked for.
    pub fresh: FreshnessParams,
    /// The currency of the prices; `None`: USD.
    pub currency: Option<String>,
}

impl LookupParams {
    /// The query parameters, in the order [`LookupParams::from_values`] takes them.
    pub const NAMES: [&'static str; 4] = ["limit", "max_age_days", "include_stale", "currency"];
    /// Their OpenAPI parameter components.
    pub const COMPONENTS: [&'static str; 4] = Self::NAMES;

    /// Checks the values of [`LookupParams::NAMES`].
    pub fn from_values(values: &Values<'_, 4>) -> Result<LookupParams, Problem> {
        let [limit_v, max_age, include_stale, currency_v] = values;
        Ok(LookupParams {
            limit: limit(limit_v.as_deref())?,
            fresh: FreshnessParams::from_values(max_age.as_deref(), include_stale.as_deref())?,
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The parameters of the domain search (`/api/v1/client/domains/search`).
#[derive(Debug)]
pub struct SearchParams<'a> {
    /// The wanted name, words or full domain name, as given (the search reads it).
    pub q: &'a str,
    /// Only candidates whose first-year price is at most this, in cents.
    pub max_price: Option<u32>,
    /// The IANA TLD types to keep; empty: every type.
    pub types: Vec<&'static str>,
    /// Candidates in the answer.
    pub limit: usize,
    /// Look each candidate's availability up live.
    pub check_availability: bool,
    /// The staleness rule asked for.
    pub fresh: FreshnessParams,
    /// The currency of the prices shown; `None`: USD (`max_price` is in US dollars
    /// whatever it is).
    pub currency: Option<String>,
}

impl<'a> SearchParams<'a> {
    /// The query parameters, in the order [`SearchParams::from_values`] takes them.
    pub const NAMES: [&'static str; 8] = [
        "q",
        "max_price",
        "types",
        "limit",
        "check_availability",
        "max_age_days",
        "include_stale",
        "currency",
    ];

    /// Checks the values of [`SearchParams::NAMES`]: `q` is required.
    pub fn from_values(values: &'a Values<'_, 8>) -> Result<SearchParams<'a>, Problem> {
        let [
            q,
            max_price,
            types,
            limit_v,
            check,
            max_age,
            include_stale,
            currency_v,
        ] = values;
        let fresh = FreshnessParams::from_values(max_age.as_deref(), include_stale.as_deref())?;
        let q = q
            .as_deref()
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
            Some(t) => crate::audit::search::parse_types(t).map_err(|reason| {
                Problem::InvalidParameter {
                    name: "types",
                    value: Some(echo(t)),
                    reason,
                }
            })?,
        };
        Ok(SearchParams {
            q,
            max_price,
            types,
            check_availability: boolean("check_availability", check.as_deref(), false)?,
            limit: limit(limit_v.as_deref())?,
            fresh,
            currency: currency(currency_v.as_deref())?,
        })
    }
}

/// The query parameters of the DNS lookup (`/api/v1/client/domains/{domain}/dns`).
#[derive(Debug)]
pub struct DnsParams {
    /// The record types asked for; absent: all of them.
    pub types: Vec<crate::live::dns::Type>,
    /// The resolver's DNSSEC verdict too.
    pub dnssec: bool,
}

impl DnsParams {
    /// The query parameters, in the order [`DnsParams::from_values`] takes them.
    pub const NAMES: [&'static str; 2] = ["types", "dnssec"];

    /// Checks the values of [`DnsParams::NAMES`].
    pub fn from_values(values: &Values<'_, 2>) -> Result<DnsParams, Problem> {
        let [types, dnssec] = values;
        Ok(DnsParams {
            types: dns_types(types.as_deref())?,
            dnssec: boolean("dnssec", dnssec.as_deref(), false)?,
        })
    }
}

/// The query parameters of the price-change events, polled and streamed
/// (`/api/v1/client/events`, `/api/v1/client/events/stream`).
#[derive(Debug)]
pub struct EventsParams {
    /// Only events with a larger id (0: every event kept). A stream's `Last-Event-ID`
    /// header takes its place (the handler reads it).
    pub after: u64,
    /// The TLDs, registrars and event types asked for (empty: every one).
    pub filter: crate::events::Filter,
    /// Most events in a page (polling).
    pub limit: usize,
}

impl EventsParams {
    /// The query parameters, in the order [`EventsParams::from_values`] takes them.
    pub const NAMES: [&'static str; 5] = ["after", "tlds", "registrars", "types", "limit"];
    /// `limit` when absent.
    pub const DEFAULT_LIMIT: u64 = 100;
    /// Largest `limit`.
    pub const MAX_LIMIT: u64 = 1000;

    /// Checks the values of [`EventsParams::NAMES`].
    pub fn from_values(values: &Values<'_, 5>) -> Result<EventsParams, Problem> {
        let [after, tlds_v, registrars_v, types, limit_v] = values;
        let after = integer("after", after.as_deref(), 0, u64::MAX, 0)?;
        let limit = integer(
            "limit",
            limit_v.as_deref(),
            1,
            Self::MAX_LIMIT,
            Self::DEFAULT_LIMIT,
        )? as usize;
        let mut filter = crate::events::Filter::default();
        if let Some(value) = tlds_v.as_deref() {
            if value.trim_matches([' ', '\t']).is_empty() {
                return Err(empty_list("tlds", "TLD"));
            }
            filter.tlds = tlds(Some(value))?.iter().map(|t| t.to_string()).collect();
        }
        if let Some(keys) = registrars(registrars_v.as_deref())? {
            filter.registrars = keys.iter().map(|k| k.to_string()).collect();
        }
        if let Some(value) = types.as_deref() {
            if value.trim_matches([' ', '\t']).is_empty() {
                return Err(empty_list("types", "type"));
            }
            for item in value.split(',') {
                let kind = crate::events::Kind::parse(item.trim_matches([' ', '\t'])).ok_or_else(
                    || Problem::InvalidParameter {
                        name: "types",
                        value: Some(echo(item)),
                        reason: format!(
                            "{:?} is not an event type (price.changed, offer.added, \
                             offer.removed, ranking.changed)",
                            echo(item)
                        ),
                    },
                )?;
                filter.kinds |= kind.bit();
            }
        }
        Ok(EventsParams {
            after,
            filter,
            limit,
        })
    }
}

/// 400 for a list parameter given empty.
fn empty_list(name: &'static str, what: &str) -> Problem {
    Problem::InvalidParameter {
        name,
        value: Some(String::new()),
        reason: format!("empty; leave it out for every {what}, or give some"),
    }
}

/// The values of flags or fields, as [`Values`]: `None` stays absent.
pub fn values_of<const N: usize>(given: [Option<&str>; N]) -> Values<'_, N> {
    given.map(|v| v.map(Cow::Borrowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_reads_its_five_values() {
        let v = values_of([
            Some(" .Co "),
            Some("generic"),
            Some("cheapest"),
            Some("7"),
            None,
            Some("eur"),
        ]);
        let p = CatalogueParams::from_values(&v).unwrap();
        assert_eq!(p.currency.as_deref(), Some("EUR"));
        assert_eq!(p.q.as_deref(), Some("co"));
        assert_eq!(p.kind, Some("generic"));
        assert_eq!(p.sort, Some(CatalogueSort::Cheapest));
        assert_eq!(p.limit, 7);
        assert!(p.cursor.is_none());
        let r = p.request(Sight::ALL, 9);
        assert_eq!(
            (r.sort, r.limit, r.snapshot),
            (CatalogueSort::Cheapest, 7, 9)
        );
        let absent = values_of([None; 6]);
        let none = CatalogueParams::from_values(&absent).unwrap();
        assert_eq!(none.request(Sight::ALL, 0).sort, CatalogueSort::Name);
        assert_eq!(none.limit, query::DEFAULT_PAGE);
        assert!(none.currency.is_none());
        let nope = values_of([None, Some("nope"), None, None, None, None]);
        let bad = CatalogueParams::from_values(&nope);
        assert!(matches!(
            bad,
            Err(Problem::InvalidParameter { name: "type", .. })
        ));
    }

    #[test]
    fn freshness_keeps_the_server_default_unless_asked() {
        let f = FreshnessParams::from_values(None, None).unwrap();
        assert_eq!(f, FreshnessParams::default());
        assert_eq!(f.at(30, 0), Freshness::new(0, 30, false));
        let f = FreshnessParams::from_values(Some("400"), Some("true")).unwrap();
        assert_eq!(f.at(30, 5), Freshness::new(5, 400, true));
        assert!(FreshnessParams::from_values(Some("0"), None).is_err());
        assert!(FreshnessParams::from_values(None, Some("yes")).is_err());
    }

    #[test]
    fn names_and_components_line_up() {
        assert_eq!(
            CatalogueParams::NAMES.len(),
            CatalogueParams::COMPONENTS.len()
        );
        for (n, c) in CatalogueParams::NAMES
            .iter()
            .zip(CatalogueParams::COMPONENTS)
        {
            assert!(*n == c || (*n == "limit" && c == "page_limit"));
        }
    }
}
