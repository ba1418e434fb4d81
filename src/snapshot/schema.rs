//! The archived data: what the builder writes and every request reads in place.
//!
//! Everything is flat: arrays of small integer structs plus one byte array, `text`,
//! that holds names and pre-rendered JSON fragments. A [`Span`] points into `text`.
//! Offers of one TLD are contiguous and pre-sorted; their JSON fragments are laid out
//! contiguously in the same order, so the answer for "the `n` cheapest" is one slice.
//!
//! What is pre-rendered is chosen by traffic: the client cheapest entries (the hot
//! path of Enterprise bursts), the price records and the listing prices are stored as
//! JSON; the public overview entries, served to rate-limited anonymous callers, are
//! written at query time from the integer prices, which keeps the file ~40% smaller.
//!
//! Prices are whole cents; [`NONE`] marks "not offered".

use rkyv::{Archive, Serialize};

/// Marks a price that is not offered (cents are otherwise at most `u32::MAX - 1`).
pub const NONE: u32 = crate::price::NOT_OFFERED;

/// What a seller's 5-year cost is ranked by for a TLD's [`Tld::lowest_5y_offer`]: the
/// first year plus four renewals, cents, a price not offered counting 0. The builder
/// picks the stored offer with it and the snapshot's open checks that choice with it.
pub fn five_year_order(register: u32, renew: u32) -> u64 {
    let cents = |c: u32| if c == NONE { 0 } else { u64::from(c) };
    cents(register) + 4 * cents(renew)
}

/// The orders a TLD's sellers are ranked in (`sort=` of the cheapest endpoints). Each
/// ranks by its key, then the first-year price, then the registrar key; `Register`,
/// the stored order of the offers, by (register, renew, registrar key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    /// First-year price (the stored order).
    Register,
    /// Renewal price.
    Renew,
    /// First year plus two renewals.
    Total3Year,
    /// First year plus four renewals.
    Total5Year,
}

impl Ranking {
    /// Every ranking, in the order of their `sort=` names.
    pub const ALL: [Ranking; 4] = [
        Ranking::Register,
        Ranking::Renew,
        Ranking::Total3Year,
        Ranking::Total5Year,
    ];

    /// The name `sort=` takes.
    pub fn name(self) -> &'static str {
        match self {
            Ranking::Register => "register",
            Ranking::Renew => "renew",
            Ranking::Total3Year => "total_3_year",
            Ranking::Total5Year => "total_5_year",
        }
    }

    /// The ranking `sort=` names.
    pub fn from_name(name: &str) -> Option<Ranking> {
        Ranking::ALL.into_iter().find(|r| r.name() == name)
    }

    /// What a seller (`register` not [`NONE`]) is ranked by first, cents; ties go by
    /// `(register, registrar key)` after it.
    pub fn key(self, register: u32, renew: u32) -> u64 {
        let cents = |c: u32| if c == NONE { 0 } else { u64::from(c) };
        match self {
            Ranking::Register => cents(register),
            Ranking::Renew => cents(renew),
            Ranking::Total3Year => cents(register) + 2 * cents(renew),
            Ranking::Total5Year => five_year_order(register, renew),
        }
    }
}

/// What a registrar's list says of an offer beside its prices (cents or [`NONE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfferTerms<'a> {
    /// The first-year price is a promotion (with or without `regular_register`).
    pub promotion: bool,
    /// The regular first-year price when the first-year price is a promotion below it.
    pub regular_register: u32,
    /// The ICANN fee of a year, where the list states it apart.
    pub icann_fee: u32,
    /// Whether the prices include `icann_fee`.
    pub icann_fee_included: bool,
    /// A coupon code the registrar publishes (empty: none) and the first-year price
    /// with it.
    pub coupon_code: &'a str,
    /// The first-year price with `coupon_code`, or [`NONE`].
    pub coupon_register: u32,
    /// The prices of the registrar's paid membership (register, renew, transfer), each
    /// [`NONE`] where its list gives none.
    pub member: (u32, u32, u32),
}

impl OfferTerms<'_> {
    /// Nothing stated beside the prices.
    pub const NONE: OfferTerms<'static> = OfferTerms {
        promotion: false,
        regular_register: NONE,
        icann_fee: NONE,
        icann_fee_included: false,
        coupon_code: "",
        coupon_register: NONE,
        member: (NONE, NONE, NONE),
    };

    /// Whether the first-year price is a promotion.
    pub fn promotion(&self) -> bool {
        self.promotion
    }

    /// Whether the list gives member prices.
    pub fn has_member_prices(&self) -> bool {
        self.member != (NONE, NONE, NONE)
    }
}

/// A byte range of [`SnapshotData::text`].
#[derive(Archive, Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

/// The root of the archive.
#[derive(Archive, Serialize, Debug, Default)]
pub struct SnapshotData {
    /// Latest `updated_at` of any price, milliseconds since the Unix epoch.
    pub data_updated_ms: i64,
    /// Registrars sorted by key; offers refer to them by position.
    pub registrars: Vec<Registrar>,
    /// TLDs sorted by canonical name.
    pub tlds: Vec<Tld>,
    /// Open-addressing hash table over `tlds` ([`crate::snapshot::name_hash`], linear
    /// probing): 0 = empty, otherwise TLD position + 1. Always has an empty slot.
    pub tld_table: Vec<u32>,
    /// Offers grouped by TLD. Within a group: sellers ordered by (register, renew,
    /// registrar key), then renewal-only rows ordered by (renew, registrar key).
    pub offers: Vec<Offer>,
    /// For each TLD group, (registrar, offer) pairs ordered by registrar position: a
    /// binary search by registrar stays inside one small contiguous run.
    pub by_registrar: Vec<RegistrarOffer>,
    /// Price history grouped by TLD, ordered by (registrar position, date).
    pub history: Vec<Change>,
    /// Names and pre-rendered JSON fragments.
    pub text: Vec<u8>,
    /// The TLD catalogue: every TLD of the IANA list and every TLD with prices or
    /// history, sorted by canonical name (the `sort=name` order).
    pub catalogue: Vec<CatalogueEntry>,
    /// Catalogue positions by cheapest registration price (unsold last), then name.
    pub catalogue_by_cheapest: Vec<u32>,
    /// Catalogue positions by number of selling registrars (most first), then name.
    pub catalogue_by_registrars: Vec<u32>,
    /// Dated feed versions grouped by registrar, oldest first (see [`Version`]).
    pub versions: Vec<Version>,
    /// Offer positions grouped by registrar, each group in TLD name order: a
    /// registrar's price list.
    pub registrar_offers: Vec<u32>,
    /// The other rankings of every TLD's sellers, one array per [`Ranking`] after
    /// `Register` (renew, 3-year, 5-year): at a TLD's `first_offer .. first_offer +
    /// sellers`, its sellers' offer positions in that ranking's order; a renewal-only
    /// row's slot holds its own position.
    pub rankings: [Vec<u32>; 3],
    /// What registering for 2 to 10 years at once costs, where a list gives it: nine
    /// cents-or-[`NONE`] values per offer that has them ([`Offer::years`]).
    pub register_years: Vec<u32>,
    /// The ECB euro reference rates answers in other currencies are converted at, by
    /// currency code; `USD` and `EUR` among them (empty: answers only in USD).
    pub rates: Vec<ExchangeRate>,
}

/// One currency's ECB euro reference rate: `mantissa / 10^scale` units per euro.
#[derive(Archive, Serialize, Debug, Default)]
pub struct ExchangeRate {
    /// ISO 4217 code, bare.
    pub code: Span,
    /// The rate's digits.
    pub mantissa: u64,
    /// How many of them are decimals.
    pub scale: u32,
    /// Decimals of the currency's minor unit (ISO 4217: 2; JPY, KRW, ISK: 0).
    pub minor_unit: u32,
    /// Day of the rate, days since 1970-01-01.
    pub date: i32,
}

/// One registrar.
#[derive(Archive, Serialize, Debug, Default)]
pub struct Registrar {
    /// The key, bare (`dynadot`).
    pub key: Span,
    /// The display name, bare.
    pub name: Span,
    /// The display name as a quoted, escaped JSON string.
    pub name_json: Span,
    /// The homepage, bare (may be empty).
    pub homepage: Span,
    /// How many TLDs it sells (has a register price for).
    pub sells: u32,
    /// How many TLDs it has only a renewal price for.
    pub renewal_only: u32,
    /// Latest `updated_at` of its prices (0 when it has none).
    pub updated_ms: i64,
    /// `{"name":..,"key":..,"website_url":"`: the start of its registrar listing entry.
    pub listing_head: Span,
    /// `/registrars/key"`: what follows the public URL in `website_url`.
    pub listing_path: Span,
    /// First of its versions in [`SnapshotData::versions`].
    pub first_version: u32,
    /// How many versions it has.
    pub versions: u32,
    /// First of its offers in [`SnapshotData::registrar_offers`]; it has
    /// `sells + renewal_only` of them.
    pub first_listed: u32,
    /// Number of TLDs where it ranks first for registration.
    pub cheapest_in: u32,
}

/// One TLD with its pre-computed aggregates (over the sellers) and fragment spans.
#[derive(Archive, Serialize, Debug, Default)]
pub struct Tld {
    /// Canonical name, bare (`co.uk`, `xn--p1ai`).
    pub name: Span,
    /// First offer of the group in [`SnapshotData::offers`].
    pub first_offer: u32,
    /// Offers in the group that sell the TLD (they come first).
    pub sellers: u32,
    /// All offers in the group, sellers and renewal-only.
    pub rows: u32,
    /// First change of the TLD in [`SnapshotData::history`].
    pub first_change: u32,
    /// Changes of the TLD.
    pub changes: u32,
    /// Average register price over the sellers, cents rounded half up ([`NONE`] if none).
    pub avg_register: u32,
    /// Average renew price over the sellers.
    pub avg_renew: u32,
    /// Average transfer price over the sellers that publish one.
    pub avg_transfer: u32,
    /// Offer position of the lowest renewal among sellers (ties: registrar key); `NONE` if none.
    pub lowest_renew_offer: u32,
    /// Offer position of the lowest 5-year total among sellers (ties: registrar key).
    pub lowest_5y_offer: u32,
    /// Earliest `updated_ms` among the sellers (`i64::MAX` when none): when it is not
    /// older than a request's cut-off, no seller is stale and the pre-rendered ranking
    /// is served as it is.
    pub oldest_ms: i64,
    /// `"name"` as a JSON string.
    pub key_json: Span,
    /// Where the client-shape cheapest entries start; entry `i` ends at the offer's
    /// `client_end`, entries are separated by commas.
    pub client_start: u32,
    /// `],"registrar_count":N}`.
    pub client_tail: Span,
    /// `],"registrar_count":N,"avg_prices":{...}}`.
    pub public_tail: Span,
    /// Where the price records of the group start (in group order, comma separated).
    pub records_start: u32,
}

/// One (TLD, registrar) price row with its pre-rendered fragments.
#[derive(Archive, Serialize, Debug, Default)]
pub struct Offer {
    /// Registrar position.
    pub registrar: u32,
    /// Cents or [`NONE`].
    pub register: u32,
    /// Cents or [`NONE`].
    pub renew: u32,
    /// Cents or [`NONE`].
    pub transfer: u32,
    /// When the price was published, ms since the Unix epoch.
    pub updated_ms: i64,
    /// End of this offer's client-shape cheapest entry (sellers only).
    pub client_end: u32,
    /// `"key":{"register_price":..,"renew_price":..,"transfer_price":..,"last_updated":".."}`.
    pub record: Span,
    /// `,"prices":{"register":..,"renew":..,"transfer":..}` (sellers only), followed by
    /// `,"original_prices":{"currency":..,"register":..,..,"rate_date":..}` for a price
    /// quoted in another currency.
    pub listing_prices: Span,
    /// ISO 4217 code of the currency the registrar quoted the prices in (`GBP`), bare;
    /// empty when it quoted USD (then the `original_*` fields are [`NONE`]).
    pub original_currency: Span,
    /// The quoted first-year price, hundredths of `original_currency`, or [`NONE`].
    pub original_register: u32,
    /// The quoted renewal price, or [`NONE`].
    pub original_renew: u32,
    /// The quoted transfer price, or [`NONE`].
    pub original_transfer: u32,
    /// Day of the reference rate the prices were converted at (days since 1970-01-01;
    /// 0 when not converted).
    pub rate_date: i32,
    /// The regular first-year price when `register` is a promotion below it, or [`NONE`].
    pub regular_register: u32,
    /// The ICANN fee of a year where the registrar's list states it apart, or [`NONE`].
    pub icann_fee: u32,
    /// Whether the prices include `icann_fee`.
    pub icann_fee_included: bool,
    /// The first-year price is a promotion: always with `regular_register`, and where
    /// the list marks a sale without its regular price.
    pub promotion: bool,
    /// A coupon code the registrar's list publishes, bare (empty: none).
    pub coupon_code: Span,
    /// The first-year price with `coupon_code` (below `register`), or [`NONE`].
    pub coupon_register: u32,
    /// The first-year price of the registrar's paid membership, or [`NONE`].
    pub member_register: u32,
    /// The membership's renewal price, or [`NONE`].
    pub member_renew: u32,
    /// The membership's transfer price, or [`NONE`].
    pub member_transfer: u32,
    /// Where its multi-year registration totals start in
    /// [`SnapshotData::register_years`], or [`NONE`] when its list gives none.
    pub years: u32,
}

/// An entry of the per-TLD by-registrar index.
#[derive(Archive, Serialize, Debug, Default, Clone, Copy)]
pub struct RegistrarOffer {
    /// Registrar position.
    pub registrar: u32,
    /// Offer position.
    pub offer: u32,
}

/// One observed price change.
#[derive(Archive, Serialize, Debug, Default)]
pub struct Change {
    /// Registrar position.
    pub registrar: u32,
    /// Day first seen, days since 1970-01-01.
    pub date: i32,
    /// Cents or [`NONE`].
    pub register: u32,
    /// Cents or [`NONE`].
    pub renew: u32,
    /// Cents or [`NONE`].
    pub transfer: u32,
}

/// One TLD of the catalogue.
#[derive(Archive, Serialize, Debug, Default)]
pub struct CatalogueEntry {
    /// Canonical name, bare.
    pub name: Span,
    /// The name in Unicode, bare (equal to `name` when it has no `xn--` label).
    pub unicode: Span,
    /// The IANA root zone type of its top-level label, bare (empty = unknown).
    pub kind: Span,
    /// The TLD manager from the IANA root zone database, bare (empty = unknown; only
    /// single-label names have one).
    pub manager: Span,
    /// Position in [`SnapshotData::tlds`], or [`NONE`] when nobody prices it.
    pub tld: u32,
}

/// One dated version of a registrar's feed, as the price source shows it: a day with
/// at least one change in its history, or the day of its current prices.
#[derive(Archive, Serialize, Debug, Default)]
pub struct Version {
    /// Days since 1970-01-01.
    pub date: i32,
    /// The version's timestamp: the registrar's latest `updated_at` on the day of its
    /// current prices, otherwise midnight UTC of `date` (history has days only).
    pub ms: i64,
    /// How many TLDs it offered (sold or renewal-only) after this version.
    pub live: u32,
}

impl ArchivedOffer {
    /// What the registrar's list says beside the prices; `text` is the snapshot's text
    /// (the coupon code is a span of it, checked at open).
    #[inline]
    pub fn terms<'a>(&self, text: &'a [u8]) -> OfferTerms<'a> {
        let code = &self.coupon_code;
        let code = text
            .get(code.start.to_native() as usize..code.end.to_native() as usize)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("");
        OfferTerms {
            promotion: self.promotion,
            regular_register: self.regular_register.to_native(),
            icann_fee: self.icann_fee.to_native(),
            icann_fee_included: self.icann_fee_included,
            coupon_code: code,
            coupon_register: self.coupon_register.to_native(),
            member: (
                self.member_register.to_native(),
                self.member_renew.to_native(),
                self.member_transfer.to_native(),
            ),
        }
    }
}
