//! Typed views: what the queries answer, as plain values.
//!
//! The overview, the catalogue, the registrar list, a registrar's price list and the
//! history are computed into these views, and their JSON writers write the body from
//! the view, so a page drawn from a view and the API's answer cannot disagree. The price
//! endpoints (cheapest, prices, the registrars of a TLD) copy pre-rendered fragments
//! instead; [`super::tld_offers`] reads the same stored ranking through the same
//! visibility and staleness rules into a [`TldOffers`], and a test holds it to their
//! answers.
//!
//! Prices are whole US cents (`None`: not offered), days are days since 1970-01-01 and
//! times are Unix milliseconds. Text borrows from the snapshot.

use smallvec::SmallVec;

use super::{CatalogueSort, Cursor, Freshness};
use crate::json::{self, write_int};
use crate::price::{Fx, offered, write_opt_cents, write_triple_in};
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::render;
use crate::snapshot::schema::{
    ArchivedCatalogueEntry, ArchivedChange, ArchivedOffer, ArchivedRegistrar, ArchivedSpan, NONE,
};
use crate::time;

/// Registration, renewal and transfer prices (each `None` when not offered or hidden).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Triple {
    /// First-year registration.
    pub register: Option<u64>,
    /// Renewal.
    pub renew: Option<u64>,
    /// Transfer.
    pub transfer: Option<u64>,
}

impl Triple {
    /// The stored prices (cents or [`crate::snapshot::schema::NONE`]).
    pub(crate) fn of(register: u32, renew: u32, transfer: u32) -> Triple {
        Triple {
            register: offered(register),
            renew: offered(renew),
            transfer: offered(transfer),
        }
    }

    /// The prices as stored: cents or [`NONE`] (every price of a view comes from a
    /// stored `u32`).
    fn coded(&self) -> (u32, u32, u32) {
        let coded = |c: Option<u64>| c.and_then(|c| u32::try_from(c).ok()).unwrap_or(NONE);
        (
            coded(self.register),
            coded(self.renew),
            coded(self.transfer),
        )
    }

    /// `{"register":..,"renew":..,"transfer":..}` ([`crate::price::write_triple`]),
    /// converted by `fx`.
    pub(crate) fn write(&self, fx: Fx, out: &mut Vec<u8>) {
        let (register, renew, transfer) = self.coded();
        write_triple_in(fx, register, renew, transfer, out);
    }

    /// `"register_price":..,"renew_price":..,"transfer_price":..`: the fields of a dated
    /// price record (a change, a registrar's price of a TLD), converted by `fx`.
    pub(crate) fn write_price_fields(&self, fx: Fx, out: &mut Vec<u8>) {
        let amount = |c: Option<u64>| c.map(|c| fx.amount(c));
        out.extend_from_slice(b"\"register_price\":");
        write_opt_cents(amount(self.register), out);
        out.extend_from_slice(b",\"renew_price\":");
        write_opt_cents(amount(self.renew), out);
        out.extend_from_slice(b",\"transfer_price\":");
        write_opt_cents(amount(self.transfer), out);
    }
}

/// What every caller sees of a TLD of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TldFacts<'s> {
    /// Canonical name.
    pub tld: &'s str,
    /// The name in Unicode (equal to `tld` when it has no `xn--` label).
    pub unicode: &'s str,
    /// IANA root zone type (`None`: unknown).
    pub kind: Option<&'s str>,
    /// IANA manager (`None`: unknown).
    pub manager: Option<&'s str>,
    /// One of the 22 free TLDs, whose prices are open to everyone.
    pub free: bool,
}

impl<'s> TldFacts<'s> {
    pub(crate) fn of(snap: &'s ArchivedSnapshotData, e: &ArchivedCatalogueEntry) -> TldFacts<'s> {
        let tld = snap.span_str(&e.name);
        TldFacts {
            tld,
            unicode: snap.span_str(&e.unicode),
            kind: non_empty(snap, &e.kind),
            manager: non_empty(snap, &e.manager),
            free: crate::tld::is_free(tld),
        }
    }

    /// `"tld":..,"unicode":..,"type":..,"manager":..,"free":..`.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\"tld\":");
        json::write_str(self.tld, out);
        out.extend_from_slice(b",\"unicode\":");
        json::write_str(self.unicode, out);
        out.extend_from_slice(b",\"type\":");
        write_opt_str(self.kind, out);
        out.extend_from_slice(b",\"manager\":");
        write_opt_str(self.manager, out);
        out.extend_from_slice(b",\"free\":");
        out.extend_from_slice(if self.free { b"true" } else { b"false" });
    }
}

/// A bare span, `None` when it is empty.
fn non_empty<'s>(snap: &'s ArchivedSnapshotData, s: &ArchivedSpan) -> Option<&'s str> {
    Some(snap.span_str(s)).filter(|v| !v.is_empty())
}

/// A JSON string, or `null`.
fn write_opt_str(s: Option<&str>, out: &mut Vec<u8>) {
    match s {
        Some(s) => json::write_str(s, out),
        None => out.extend_from_slice(b"null"),
    }
}

/// A pick's price as the registrar quoted it, in another currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quoted<'s> {
    /// ISO 4217 code.
    pub currency: &'s str,
    /// The amount, in hundredths of the currency.
    pub price: Option<u64>,
    /// Day of the rate it was converted at.
    pub rate_date: i64,
}

/// Prices as a registrar quoted them, in another currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotedPrices<'s> {
    /// ISO 4217 code.
    pub currency: &'s str,
    /// The amounts, in hundredths of the currency.
    pub prices: Triple,
    /// Day of the rate they were converted at.
    pub rate_date: i64,
}

impl<'s> QuotedPrices<'s> {
    /// The quoted prices of an offer, when it was quoted in another currency.
    pub(crate) fn of(snap: &'s ArchivedSnapshotData, o: &ArchivedOffer) -> Option<Self> {
        let currency = snap.span_str(&o.original_currency);
        (!currency.is_empty()).then(|| QuotedPrices {
            currency,
            prices: Triple::of(
                o.original_register.to_native(),
                o.original_renew.to_native(),
                o.original_transfer.to_native(),
            ),
            rate_date: o.rate_date.to_native() as i64,
        })
    }

    /// `,"original_prices":{..}` ([`render::original_prices`]).
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        render::original_prices(self.currency, self.prices.coded(), self.rate_date, out);
    }
}

/// The registrar an aggregate picked (cheapest registration, lowest renewal, lowest
/// 5-year cost) and its price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick<'s> {
    /// The price picked by.
    pub price: Option<u64>,
    /// Registrar key.
    pub registrar_key: &'s str,
    /// Registrar name.
    pub registrar_name: &'s str,
    /// The price as quoted, when not quoted in USD.
    pub original: Option<Quoted<'s>>,
    /// When the registrar published it.
    pub updated_ms: i64,
    /// Whether it is older than the request's age limit.
    pub stale: bool,
}

impl<'s> Pick<'s> {
    /// The pick of offer `o`: `price` gets (register, renew) in cents, of the USD
    /// prices and of the quoted ones.
    pub(crate) fn of(
        snap: &'s ArchivedSnapshotData,
        o: &ArchivedOffer,
        price: impl Fn(u32, u32) -> Option<u64>,
        fresh: Freshness,
    ) -> Pick<'s> {
        let reg = &snap.registrars[o.registrar.to_native() as usize];
        let currency = snap.span_str(&o.original_currency);
        let ms = o.updated_ms.to_native();
        Pick {
            price: price(o.register.to_native(), o.renew.to_native()),
            registrar_key: snap.span_str(&reg.key),
            registrar_name: snap.span_str(&reg.name),
            original: (!currency.is_empty()).then(|| Quoted {
                currency,
                price: price(
                    o.original_register.to_native(),
                    o.original_renew.to_native(),
                ),
                rate_date: o.rate_date.to_native() as i64,
            }),
            updated_ms: ms,
            stale: fresh.is_stale(ms),
        }
    }

    /// `{"price":..,"registrar_key":..,"registrar_name":..}`, with
    /// `"original_price":{"currency":..,"price":..,"rate_date":..}` when quoted in
    /// another currency, closed by [`render::age`]; `null` for no pick.
    pub(crate) fn write(pick: Option<&Pick<'_>>, fx: Fx, out: &mut Vec<u8>) {
        let Some(p) = pick else {
            out.extend_from_slice(b"null");
            return;
        };
        out.extend_from_slice(b"{\"price\":");
        write_opt_cents(p.price.map(|c| fx.amount(c)), out);
        out.extend_from_slice(b",\"registrar_key\":");
        json::write_str(p.registrar_key, out);
        out.extend_from_slice(b",\"registrar_name\":");
        json::write_str(p.registrar_name, out);
        if let Some(o) = &p.original {
            out.extend_from_slice(b",\"original_price\":{\"currency\":");
            json::write_str(o.currency, out);
            out.extend_from_slice(b",\"price\":");
            write_opt_cents(o.price, out);
            out.extend_from_slice(b",\"rate_date\":\"");
            time::write_date(o.rate_date, out);
            out.extend_from_slice(b"\"}");
        }
        render::age(p.updated_ms, p.stale, out);
    }
}

/// The overview of a TLD ([`super::overview_view`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overview<'s> {
    /// The TLD.
    pub facts: TldFacts<'s>,
    /// Selling registrars (0 for a TLD nobody sells).
    pub registrar_count: usize,
    /// Averages over the sellers (`None` where hidden: see `members_only`).
    pub avg_prices: Triple,
    /// Cheapest registration (`None`: nobody sells it, or hidden).
    pub cheapest_register: Option<Pick<'s>>,
    /// Lowest renewal.
    pub lowest_renew: Option<Pick<'s>>,
    /// Lowest 5-year cost (first year and four renewals).
    pub lowest_5_year: Option<Pick<'s>>,
    /// How many of the sellers the caller sees are stale.
    pub stale_count: usize,
    /// The fields hidden from the caller (`avg_prices`, `cheapest_register`, ...).
    pub members_only: SmallVec<[&'static str; 4]>,
}

impl Overview<'_> {
    /// Whether `field` is hidden from the caller.
    pub fn hides(&self, field: &str) -> bool {
        self.members_only.contains(&field)
    }
}

/// `,"members_only":[...]` of the hidden field names.
pub(crate) fn write_members_only(fields: &[&str], out: &mut Vec<u8>) {
    out.extend_from_slice(b",\"members_only\":[");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_str(f, out);
    }
    out.push(b']');
}

/// One entry of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueEntry<'s> {
    /// The TLD.
    pub facts: TldFacts<'s>,
    /// Selling registrars.
    pub registrar_count: usize,
    /// Average registration price (`None`: unsold, or hidden).
    pub avg_register_price: Option<u64>,
    /// The cheapest registration (`None`: unsold, or hidden).
    pub cheapest_register: Option<Pick<'s>>,
    /// The fields hidden from the caller.
    pub members_only: &'static [&'static str],
}

impl CatalogueEntry<'_> {
    /// Whether `field` is hidden from the caller.
    pub fn hides(&self, field: &str) -> bool {
        self.members_only.contains(&field)
    }
}

/// One page of the catalogue ([`super::catalogue_view`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CataloguePage<'s> {
    /// The entries of this page.
    pub tlds: Vec<CatalogueEntry<'s>>,
    /// Entries of the whole listing (after the filters).
    pub total: usize,
    /// The order.
    pub sort: CatalogueSort,
    /// Entries per page.
    pub limit: usize,
    /// Where the next page starts, if there is one.
    pub next_cursor: Option<Cursor>,
}

/// The first and last day of a registrar's dated feed versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coverage {
    /// First day.
    pub first: i64,
    /// Last day.
    pub last: i64,
}

impl Coverage {
    pub(crate) fn of(snap: &ArchivedSnapshotData, r: &ArchivedRegistrar) -> Option<Coverage> {
        let first = r.first_version.to_native() as usize;
        let versions = &snap.versions[first..first + r.versions.to_native() as usize];
        Some(Coverage {
            first: versions.first()?.date.to_native() as i64,
            last: versions.last()?.date.to_native() as i64,
        })
    }

    /// `"coverage":{"first":"YYYY-MM-DD","last":"YYYY-MM-DD"}`, or `null`.
    pub(crate) fn write(c: Option<Coverage>, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\"coverage\":");
        match c {
            Some(c) => {
                out.extend_from_slice(b"{\"first\":\"");
                time::write_date(c.first, out);
                out.extend_from_slice(b"\",\"last\":\"");
                time::write_date(c.last, out);
                out.extend_from_slice(b"\"}");
            }
            None => out.extend_from_slice(b"null"),
        }
    }
}

/// A registrar's facts, as the registrar list shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistrarFacts<'s> {
    /// Key.
    pub key: &'s str,
    /// Name.
    pub name: &'s str,
    /// Homepage (`None`: unknown).
    pub homepage: Option<&'s str>,
    /// TLDs it sells.
    pub tlds_sold: u64,
    /// TLDs it has only a renewal price for.
    pub renewal_only: u64,
    /// TLDs where it is the cheapest.
    pub cheapest_in: u64,
    /// Its feed's dated versions.
    pub coverage: Option<Coverage>,
    /// When its newest prices were published (`None`: it prices nothing).
    pub last_updated_ms: Option<i64>,
}

impl<'s> RegistrarFacts<'s> {
    pub(crate) fn of(snap: &'s ArchivedSnapshotData, r: &ArchivedRegistrar) -> Self {
        let (sells, renewal_only) = (r.sells.to_native(), r.renewal_only.to_native());
        RegistrarFacts {
            key: snap.span_str(&r.key),
            name: snap.span_str(&r.name),
            homepage: non_empty(snap, &r.homepage),
            tlds_sold: sells.into(),
            renewal_only: renewal_only.into(),
            cheapest_in: r.cheapest_in.to_native().into(),
            coverage: Coverage::of(snap, r),
            last_updated_ms: (sells + renewal_only > 0).then(|| r.updated_ms.to_native()),
        }
    }

    /// The fields shared by the list and the detail, from `{"key":` to `last_updated`,
    /// the object left open. `public_url` must already be safe inside a JSON string.
    pub(crate) fn write(&self, public_url: &str, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"key\":");
        json::write_str(self.key, out);
        out.extend_from_slice(b",\"name\":");
        json::write_str(self.name, out);
        out.extend_from_slice(b",\"homepage\":");
        write_opt_str(self.homepage, out);
        out.extend_from_slice(b",\"website_url\":\"");
        out.extend_from_slice(public_url.as_bytes());
        render::listing_path(self.key, out);
        out.extend_from_slice(b",\"tlds_sold\":");
        write_int(self.tlds_sold, out);
        out.extend_from_slice(b",\"renewal_only\":");
        write_int(self.renewal_only, out);
        out.extend_from_slice(b",\"cheapest_in\":");
        write_int(self.cheapest_in, out);
        out.push(b',');
        Coverage::write(self.coverage, out);
        out.extend_from_slice(b",\"last_updated\":");
        match self.last_updated_ms {
            Some(ms) => {
                out.push(b'"');
                time::write_iso_millis(ms, out);
                out.push(b'"');
            }
            None => out.extend_from_slice(b"null"),
        }
    }
}

/// One price of a registrar's price list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistrarPrice<'s> {
    /// The TLD.
    pub tld: &'s str,
    /// The prices.
    pub prices: Triple,
    /// When the registrar published them.
    pub updated_ms: i64,
    /// The prices as quoted, when not quoted in USD.
    pub original: Option<QuotedPrices<'s>>,
}

/// A registrar and one page of its price list ([`super::registrar_view`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrarPage<'s> {
    /// The registrar (its counts are its own, not the caller's).
    pub registrar: RegistrarFacts<'s>,
    /// The prices of this page, in TLD name order: the offers the caller sees.
    pub prices: Vec<RegistrarPrice<'s>>,
    /// Prices of the whole list the caller sees.
    pub total: usize,
    /// Entries per page.
    pub limit: usize,
    /// Where the next page starts, if there is one.
    pub next_cursor: Option<Cursor>,
}

/// One price change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// The day it was first seen.
    pub date: i64,
    /// The prices from that day (a registration of `None`: it stopped selling).
    pub prices: Triple,
}

impl Change {
    pub(crate) fn of(c: &ArchivedChange) -> Change {
        Change {
            date: c.date.to_native() as i64,
            prices: Triple::of(
                c.register.to_native(),
                c.renew.to_native(),
                c.transfer.to_native(),
            ),
        }
    }

    /// `{"date":"YYYY-MM-DD","register_price":..,"renew_price":..,"transfer_price":..}`.
    pub(crate) fn write(&self, fx: Fx, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"date\":\"");
        time::write_date(self.date, out);
        out.extend_from_slice(b"\",");
        self.prices.write_price_fields(fx, out);
        out.push(b'}');
    }
}

/// One registrar's price history of a TLD.
#[derive(Clone)]
pub struct RegistrarHistory<'s> {
    /// Registrar key.
    pub key: &'s str,
    /// Registrar name.
    pub name: &'s str,
    /// Its feed's dated versions: its data ends on the last.
    pub coverage: Option<Coverage>,
    /// The price in effect when the window opens (the last change before `from`).
    pub price_at_from: Option<Change>,
    /// The changes inside the window.
    pub(crate) window: &'s [ArchivedChange],
}

impl RegistrarHistory<'_> {
    /// The changes inside the window, oldest first.
    pub fn changes(&self) -> impl ExactSizeIterator<Item = Change> + '_ {
        self.window.iter().map(Change::of)
    }
}

impl std::fmt::Debug for RegistrarHistory<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrarHistory")
            .field("key", &self.key)
            .field("name", &self.name)
            .field("coverage", &self.coverage)
            .field("price_at_from", &self.price_at_from)
            .field("changes", &self.changes().collect::<Vec<_>>())
            .finish()
    }
}

/// The price history of a TLD ([`super::history_view`]).
#[derive(Debug, Clone)]
pub struct History<'s> {
    /// The TLD.
    pub tld: &'s str,
    /// First day of the window.
    pub from: Option<i64>,
    /// Last day of the window.
    pub to: Option<i64>,
    /// Per registrar, in key order (or the order asked for).
    pub registrars: Vec<RegistrarHistory<'s>>,
    /// Registrar keys asked for that the snapshot does not know.
    pub unknown_registrars: Vec<String>,
}

/// One seller of a TLD that the caller sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offered<'s> {
    /// Registrar key.
    pub registrar_key: &'s str,
    /// Registrar name.
    pub registrar_name: &'s str,
    /// The prices (a seller has a registration and a renewal price).
    pub prices: Triple,
    /// When the registrar published them.
    pub updated_ms: i64,
    /// Whether they are older than the request's age limit.
    pub stale: bool,
    /// The prices as quoted, when not quoted in USD.
    pub original: Option<QuotedPrices<'s>>,
    /// What the registrar's list says beside the prices: a promotion's regular
    /// first-year price, the ICANN fee.
    pub terms: crate::snapshot::schema::OfferTerms<'s>,
}

impl Offered<'_> {
    /// The first year and four renewals.
    pub fn total_5_year(&self) -> Option<u64> {
        Some(self.prices.register? + 4 * self.prices.renew?)
    }

    /// The first year and two renewals.
    pub fn total_3_year(&self) -> Option<u64> {
        Some(self.prices.register? + 2 * self.prices.renew?)
    }
}

/// The sellers of a TLD that the caller sees, in rank order ([`super::tld_offers`]):
/// what the cheapest ranking, the registrar listing and the price records of the TLD
/// show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TldOffers<'s> {
    /// The TLD.
    pub tld: &'s str,
    /// Selling registrars (a public fact).
    pub registrar_count: usize,
    /// The sellers the caller's plan shows (the first of the ranking), stale ones
    /// marked: the price records.
    pub offers: Vec<Offered<'s>>,
    /// Whether rankings keep the stale offers.
    pub include_stale: bool,
    /// How many sellers a listing of every seller would rank.
    pub listed: usize,
    /// Averages over every seller (`None` where they would give a hidden price).
    pub avg_prices: Triple,
    /// How many of `offers` are stale.
    pub stale_count: usize,
}

impl<'s> TldOffers<'s> {
    /// The ranking: the offers a ranking shows (all of them, or the fresh ones), rank 1
    /// first.
    pub fn ranked(&self) -> impl Iterator<Item = &Offered<'s>> + '_ {
        let keep = !self.include_stale;
        self.offers.iter().filter(move |o| !(keep && o.stale))
    }
}
