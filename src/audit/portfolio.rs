//! Portfolio audit: the domains someone owns in, per domain and in total what they cost
//! a year now, what the cheapest way to hold them would cost, and what to watch out for.
//!
//! Three steps, each testable alone: [`parse_json`] / [`parse_csv`] turn a request body
//! into a [`Portfolio`] (refusing a malformed file as a whole, but never a single bad
//! name), [`audit`] answers it from a snapshot, and [`write_json`], [`write_csv`] and
//! [`write_table`] render the answer. `docs/AUDIT.md` documents every field.
//!
//! # The numbers
//!
//! - **current price**: the yearly renewal the owner pays now: the `renew_price` they
//!   state, else the renewal price tldsnap knows at the stated registrar, else unknown.
//! - **cheapest renewal**: the lowest renewal price any registrar charges for the suffix
//!   (sellers and renewal-only registrars; ties: registrar key), among the offers the
//!   caller's plan sees ([`crate::sight::Sight`]), as every comparison here.
//! - **best transfer** (the cheapest transfer-then-renew path): among the other
//!   registrars that publish a transfer price, the one with the lowest 5-year cost of
//!   moving there ([`super::transfer_five_year`]: the transfer, which adds a year, then
//!   four renewals), never one whose renewal is above the current price (a move must not
//!   raise the yearly bill); ties: lower renewal, then registrar key.
//! - **recommendation**: `transfer` when the best transfer's 5-year cost is below five
//!   years of the current price, else `stay`; unknown without a current price.
//! - **optimal price**: the yearly price after following the recommendation (the best
//!   transfer's renewal, or the current price).
//! - **savings**: per year, current minus optimal price; over 5 years, five current
//!   prices minus the best transfer's 5-year cost (0 when staying). Never negative.
//!
//! Cheapest renewal and best transfer are chosen among fresh prices only (the API's
//! staleness rule, [`crate::query::Freshness`]): a registrar's years-old price is never
//! a recommendation. `expires_soon` counts from today, not from the data date.
//!
//! Totals and the per-registrar breakdown add up the domains whose current price is
//! known ("priced"); a duplicate name is one domain (you cannot own it twice), reported
//! once with its `count`, with the first occurrence's registrar, price and date.

use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::names::{NameError, Names};
use super::{echo, is_renewal_trap, transfer_five_year};
use crate::json;
use crate::price::{self, Fx, write_cents, write_opt_cents};
use crate::sight::Sight;
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::{ArchivedOffer, NONE};
use crate::time;
use crate::time::write_opt_date;

/// Days before the snapshot's data date within which an expiry is "soon".
pub const EXPIRES_SOON_DAYS: i64 = 30;

/// One domain as the owner states it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holding {
    /// The name as given (normalised by [`audit`], not here).
    pub name: String,
    /// The registrar key as given, trimmed and lower-cased.
    pub registrar: Option<String>,
    /// The yearly renewal price the owner pays, in cents.
    pub renew_price: Option<u32>,
    /// The expiry date, days since 1970-01-01.
    pub expires: Option<i64>,
}

/// A parsed portfolio.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Portfolio {
    /// The domains in input order (duplicates included).
    pub holdings: Vec<Holding>,
    /// CSV columns that are not audit fields (registrar exports carry many); ignored.
    pub ignored_columns: Vec<String>,
}

/// Why a portfolio body was refused as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// More entries than the caller may audit (the plan's limit); parsing stopped there.
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// Not a portfolio: bad JSON or CSV, a missing field, a bad price or date. The
    /// message says where.
    Invalid(String),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::TooMany { limit } => {
                write!(f, "more than {limit} domains in one audit")
            }
            InputError::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for InputError {}

fn invalid(m: impl Into<String>) -> InputError {
    InputError::Invalid(m.into())
}

/// Longest name field taken, in characters (counted in characters, not bytes, so that
/// the OpenAPI document's `maxLength` states the same limit). Far longer than any
/// domain name can be in any form (253 characters), so such a field is a broken file,
/// refused as a whole, not a name to list as invalid (and never echoed back).
pub const MAX_NAME_FIELD: usize = 4 * crate::tld::MAX_NAME_LEN;

pub(crate) fn check_name_field(name: &str) -> Result<(), String> {
    // Bytes bound characters from above: count only when the bytes pass the limit.
    if name.len() > MAX_NAME_FIELD && name.chars().count() > MAX_NAME_FIELD {
        return Err(format!(
            "a name of {} characters; a domain name has at most {}",
            name.chars().count(),
            crate::tld::MAX_NAME_LEN
        ));
    }
    Ok(())
}

/// A price field: a JSON number or a decimal string, at most two decimals.
fn price_field(raw: &str) -> Result<Option<u32>, String> {
    price::parse_cents(raw).map_err(|e| format!("renew_price {raw:?}: {e}"))
}

/// A date field: `YYYY-MM-DD`, or an RFC 3339 timestamp (its UTC day).
fn date_field(raw: &str) -> Result<Option<i64>, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    time::parse_date(raw)
        .or_else(|| time::parse_rfc3339(raw).map(|ms| ms.div_euclid(time::MS_PER_DAY)))
        .map(Some)
        .ok_or_else(|| format!("expires {raw:?}: not a date (YYYY-MM-DD)"))
}

fn registrar_field(raw: &str) -> Option<String> {
    let r = raw.trim();
    (!r.is_empty()).then(|| r.to_ascii_lowercase())
}

/// Parses `{"domains": [...]}`; each element is a name string or an object
/// `{"name", "registrar"?, "renew_price"?, "expires"?}` (`domain` is accepted for
/// `name`; `null` for an absent field). Unknown fields are refused: a misspelt
/// `renewal_price` would otherwise silently change the answer. Stops with
/// [`InputError::TooMany`] at the `limit + 1`-th entry.
pub fn parse_json(body: &[u8], limit: usize) -> Result<Portfolio, InputError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(invalid("empty body: send {\"domains\": [...]}"));
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let mut over = false;
    let result = BodySeed {
        limit,
        over: &mut over,
    }
    .deserialize(&mut de)
    .and_then(|h| de.end().map(|()| h));
    match result {
        Ok(holdings) if holdings.is_empty() => Err(invalid("the portfolio has no domains")),
        Ok(holdings) => Ok(Portfolio {
            holdings,
            ignored_columns: Vec::new(),
        }),
        Err(_) if over => Err(InputError::TooMany { limit }),
        Err(e) => Err(invalid(format!("not a portfolio: {e}"))),
    }
}

struct BodySeed<'o> {
    limit: usize,
    over: &'o mut bool,
}

impl<'de> DeserializeSeed<'de> for BodySeed<'_> {
    type Value = Vec<Holding>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<Holding>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for BodySeed<'_> {
    type Value = Vec<Holding>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object {\"domains\": [...]}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<Holding>, A::Error> {
        let mut domains = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key != "domains" {
                return Err(de::Error::custom(format!(
                    "unknown field {key:?} (the body is {{\"domains\": [...]}})"
                )));
            }
            if domains.is_some() {
                return Err(de::Error::custom("field \"domains\" given twice"));
            }
            domains = Some(map.next_value_seed(ListSeed {
                limit: self.limit,
                over: &mut *self.over,
            })?);
        }
        domains.ok_or_else(|| de::Error::custom("field \"domains\" is missing"))
    }
}

struct ListSeed<'o> {
    limit: usize,
    over: &'o mut bool,
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = Vec<Holding>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<Holding>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = Vec<Holding>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of domain names or {\"name\": ...} objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Holding>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.limit));
        loop {
            if out.len() == self.limit {
                // One more element than allowed: stop reading, say so.
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    *self.over = true;
                    return Err(de::Error::custom("too many domains"));
                }
                return Ok(out);
            }
            match seq.next_element::<HoldingDe>() {
                Ok(Some(h)) => out.push(h.0),
                Ok(None) => return Ok(out),
                Err(e) => {
                    return Err(de::Error::custom(format_args!(
                        "domains[{}]: {e}",
                        out.len()
                    )));
                }
            }
        }
    }
}

struct HoldingDe(Holding);

impl<'de> de::Deserialize<'de> for HoldingDe {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<HoldingDe, D::Error> {
        d.deserialize_any(HoldingVisitor)
    }
}

struct HoldingVisitor;

impl<'de> Visitor<'de> for HoldingVisitor {
    type Value = HoldingDe;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(
            "a domain name or an object {\"name\", \"registrar\", \"renew_price\", \"expires\"}",
        )
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<HoldingDe, E> {
        check_name_field(v).map_err(E::custom)?;
        Ok(HoldingDe(Holding {
            name: v.to_string(),
            ..Holding::default()
        }))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HoldingDe, A::Error> {
        let mut h = Holding::default();
        let mut name = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "name" | "domain" => {
                    if name.is_some() {
                        return Err(de::Error::custom("the name is given twice"));
                    }
                    let n = map.next_value::<String>()?;
                    check_name_field(&n).map_err(de::Error::custom)?;
                    name = Some(n);
                }
                "registrar" => {
                    h.registrar = map
                        .next_value::<Option<std::borrow::Cow<'de, str>>>()?
                        .and_then(|r| registrar_field(&r));
                }
                "renew_price" => {
                    h.renew_price = match map.next_value::<serde_json::Value>()? {
                        serde_json::Value::Null => None,
                        serde_json::Value::Number(n) => price::json_number_cents(&n)
                            .map_err(|e| de::Error::custom(format!("renew_price {n}: {e}")))?,
                        serde_json::Value::String(s) => {
                            price_field(&s).map_err(de::Error::custom)?
                        }
                        other => {
                            return Err(de::Error::custom(format!(
                                "renew_price must be a number, not {other}"
                            )));
                        }
                    };
                }
                "expires" => {
                    if let Some(s) = map.next_value::<Option<std::borrow::Cow<'de, str>>>()? {
                        h.expires = date_field(&s).map_err(de::Error::custom)?;
                    }
                }
                other => {
                    return Err(de::Error::custom(format!(
                        "unknown field {other:?} (the fields are name, registrar, renew_price, expires)"
                    )));
                }
            }
        }
        h.name = name.ok_or_else(|| de::Error::custom("field \"name\" is missing"))?;
        Ok(HoldingDe(h))
    }
}

/// Parses a CSV portfolio: a header row naming the columns (`domain` required;
/// `registrar`, `renew_price`, `expires` optional; any order, case-insensitive; other
/// columns are ignored and reported), then one row per domain. A UTF-8 byte order mark
/// is skipped. Stops with [`InputError::TooMany`] at the `limit + 1`-th row.
pub fn parse_csv(body: &[u8], limit: usize) -> Result<Portfolio, InputError> {
    let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
    if let Some(at) = body.iter().position(|&b| b == 0) {
        let line = 1 + body[..at].iter().filter(|&&b| b == b'\n').count();
        return Err(invalid(format!(
            "line {line}: a NUL byte; a CSV portfolio is text"
        )));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(invalid(
            "empty body: send a header row domain[,registrar][,renew_price][,expires] and one row per domain",
        ));
    }
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(body);
    let headers = reader
        .headers()
        .map_err(|e| invalid(format!("line 1: {e}")))?
        .clone();
    let mut cols: [Option<usize>; 4] = [None; 4];
    const NAMES: [&str; 4] = ["domain", "registrar", "renew_price", "expires"];
    let mut ignored_columns = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        let h = h.to_ascii_lowercase();
        match NAMES.iter().position(|n| *n == h) {
            Some(k) if cols[k].is_some() => {
                return Err(invalid(format!("line 1: column {h:?} appears twice")));
            }
            Some(k) => cols[k] = Some(i),
            None => ignored_columns.push(h.chars().take(64).collect()),
        }
    }
    let Some(domain_col) = cols[0] else {
        return Err(invalid(
            "line 1: no \"domain\" column (the header is domain[,registrar][,renew_price][,expires])",
        ));
    };
    let mut holdings = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(invalid(format!("not a CSV portfolio: {e}"))),
        }
        let line = record.position().map_or(0, |p| p.line());
        let field = |c: Option<usize>| c.and_then(|c| record.get(c)).unwrap_or("");
        if record.iter().all(str::is_empty) {
            continue; // a blank line
        }
        if holdings.len() == limit {
            return Err(InputError::TooMany { limit });
        }
        let at = |m: String| invalid(format!("line {line}: {m}"));
        check_name_field(field(Some(domain_col))).map_err(at)?;
        holdings.push(Holding {
            name: field(Some(domain_col)).to_string(),
            registrar: registrar_field(field(cols[1])),
            renew_price: price_field(field(cols[2])).map_err(at)?,
            expires: date_field(field(cols[3])).map_err(at)?,
        });
    }
    if holdings.is_empty() {
        return Err(invalid("the portfolio has no domains"));
    }
    Ok(Portfolio {
        holdings,
        ignored_columns,
    })
}

/// A flag of a domain in the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// The renewal is at least 1.5 x and $2 above the first-year price
    /// ([`super::is_renewal_trap`]).
    RenewalTrap,
    /// tldsnap has no price for the suffix.
    UnknownTld,
    /// tldsnap knows the suffix but no registrar sells new registrations of it.
    NoSeller,
    /// The stated registrar has no price for the suffix (or is not a registrar tldsnap knows).
    RegistrarDoesNotSell,
    /// Not a domain name.
    InvalidName,
    /// Expires within [`EXPIRES_SOON_DAYS`] days of the snapshot's data date (or has expired).
    ExpiresSoon,
    /// The caller's plan does not include the suffix: no prices are shown for it.
    TldNotInPlan,
}

impl Flag {
    /// Every flag, in the order they are written.
    pub const ALL: [Flag; 7] = [
        Flag::InvalidName,
        Flag::UnknownTld,
        Flag::TldNotInPlan,
        Flag::NoSeller,
        Flag::RegistrarDoesNotSell,
        Flag::RenewalTrap,
        Flag::ExpiresSoon,
    ];

    /// The flag's name in the answer.
    pub fn as_str(self) -> &'static str {
        match self {
            Flag::RenewalTrap => "renewal_trap",
            Flag::UnknownTld => "unknown_tld",
            Flag::NoSeller => "no_seller",
            Flag::RegistrarDoesNotSell => "registrar_does_not_sell",
            Flag::InvalidName => "invalid_name",
            Flag::ExpiresSoon => "expires_soon",
            Flag::TldNotInPlan => "tld_not_in_plan",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of [`Flag`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    /// Whether `f` is set.
    pub fn has(self, f: Flag) -> bool {
        self.0 & f.bit() != 0
    }
    fn set(&mut self, f: Flag) {
        self.0 |= f.bit();
    }
    /// The flags set, in [`Flag::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Flag> {
        Flag::ALL.into_iter().filter(move |f| self.has(*f))
    }
}

/// Where the current price comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceSource {
    /// The owner's `renew_price`.
    Stated,
    /// tldsnap's renewal price at the stated registrar.
    Registrar,
}

/// What to do with a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recommendation {
    /// Keep it where it is.
    Stay,
    /// Move it to the best transfer's registrar.
    Transfer,
}

/// The audit of one distinct domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainAudit {
    /// The registrable domain, canonical.
    pub domain: String,
    /// Where the suffix starts in `domain`.
    pub suffix_at: usize,
    /// The stated registrar key.
    pub registrar: Option<String>,
    /// The stated expiry, days since 1970-01-01.
    pub expires: Option<i64>,
    /// The yearly price paid now, cents.
    pub current: Option<u32>,
    /// Where `current` comes from.
    pub price_source: Option<PriceSource>,
    /// Offer position of the cheapest renewal.
    pub cheapest_renewal: Option<u32>,
    /// Offer position of the best transfer and its 5-year cost.
    pub best_transfer: Option<(u32, u64)>,
    /// Stay or transfer (known with a current price).
    pub recommendation: Option<Recommendation>,
    /// The yearly price after following the recommendation.
    pub optimal: Option<u32>,
    /// Current minus optimal price.
    pub savings_per_year: Option<u64>,
    /// Five current prices minus the recommended path's 5-year cost.
    pub savings_5_year: Option<u64>,
    /// The flags.
    pub flags: Flags,
}

impl DomainAudit {
    /// The public suffix.
    pub fn suffix(&self) -> &str {
        &self.domain[self.suffix_at..]
    }
}

/// One line of the answer: a distinct domain, or an input that is not a domain name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The input as given (first occurrence), trimmed.
    pub input: String,
    /// How many entries named this domain.
    pub count: u32,
    /// The audit, or why the input is not a domain name.
    pub outcome: Result<DomainAudit, NameError>,
}

/// Sums over the priced domains of a group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sums {
    /// Distinct domains in the group.
    pub domains: u64,
    /// Of those, the ones with a known current price.
    pub priced: u64,
    /// Sum of current prices.
    pub current_yearly: u64,
    /// Sum of optimal prices.
    pub optimal_yearly: u64,
    /// Sum of yearly savings.
    pub savings_per_year: u64,
    /// Sum of 5-year savings.
    pub savings_5_year: u64,
}

impl Sums {
    fn add(&mut self, d: &DomainAudit) {
        self.domains += 1;
        if let (Some(c), Some(o), Some(y), Some(f)) =
            (d.current, d.optimal, d.savings_per_year, d.savings_5_year)
        {
            self.priced += 1;
            self.current_yearly += u64::from(c);
            self.optimal_yearly += u64::from(o);
            self.savings_per_year += y;
            self.savings_5_year += f;
        }
    }
}

/// The answer to a portfolio.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audit {
    /// Distinct domains and invalid inputs, in order of first appearance.
    pub rows: Vec<Row>,
    /// Entries submitted (duplicates included).
    pub entries: usize,
    /// Sums over every distinct domain.
    pub totals: Sums,
    /// Sums per stated registrar (`None`: no registrar stated), by key.
    pub by_registrar: BTreeMap<Option<String>, Sums>,
    /// How many distinct domains carry each flag, in [`Flag::ALL`] order.
    pub flag_counts: [u64; 7],
    /// The snapshot's data date, days since 1970-01-01.
    pub data_day: i64,
    /// CSV columns that were ignored.
    pub ignored_columns: Vec<String>,
}

/// Audits a portfolio. `sight` is the caller's plan: a suffix whose prices it does not
/// show gets [`Flag::TldNotInPlan`] and no tldsnap prices, and only the offers it shows
/// are compared (a stated registrar whose offer it does not show is taken as one that
/// does not sell the TLD). `fresh` is the staleness rule: the cheapest renewal and the
/// best transfer are chosen among fresh prices, and `expires_soon` counts from its today.
pub fn audit(
    snap: &ArchivedSnapshotData,
    names: &Names,
    portfolio: &Portfolio,
    fresh: crate::query::Freshness,
    sight: Sight,
) -> Audit {
    let data_day = snap
        .data_updated_ms
        .to_native()
        .div_euclid(time::MS_PER_DAY);
    let mut rows: Vec<Row> = Vec::new();
    let mut seen: ahash::AHashMap<String, usize> = ahash::AHashMap::new();
    let mut seen_invalid: ahash::AHashMap<&str, usize> = ahash::AHashMap::new();
    for h in &portfolio.holdings {
        let input = h.name.trim_matches(|c: char| c == ' ' || c == '\t');
        match names.split(input, |s| snap.has_tld(s)) {
            Err(e) => match seen_invalid.entry(input) {
                std::collections::hash_map::Entry::Occupied(o) => rows[*o.get()].count += 1,
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(rows.len());
                    rows.push(Row {
                        input: echo(input).into_owned(),
                        count: 1,
                        outcome: Err(e),
                    });
                }
            },
            Ok(split) => match seen.entry(split.domain) {
                Entry::Occupied(o) => rows[*o.get()].count += 1,
                Entry::Vacant(v) => {
                    let d = audit_one(snap, v.key().clone(), split.suffix_at, h, fresh, sight);
                    v.insert(rows.len());
                    rows.push(Row {
                        input: input.to_string(),
                        count: 1,
                        outcome: Ok(d),
                    });
                }
            },
        }
    }
    let mut totals = Sums::default();
    let mut by_registrar: BTreeMap<Option<String>, Sums> = BTreeMap::new();
    let mut flag_counts = [0u64; 7];
    for row in &rows {
        let flags = match &row.outcome {
            Ok(d) => {
                totals.add(d);
                by_registrar.entry(d.registrar.clone()).or_default().add(d);
                d.flags
            }
            Err(_) => {
                let mut f = Flags::default();
                f.set(Flag::InvalidName);
                f
            }
        };
        for (i, f) in Flag::ALL.iter().enumerate() {
            flag_counts[i] += u64::from(flags.has(*f));
        }
    }
    Audit {
        rows,
        entries: portfolio.holdings.len(),
        totals,
        by_registrar,
        flag_counts,
        data_day,
        ignored_columns: portfolio.ignored_columns.clone(),
    }
}

fn audit_one(
    snap: &ArchivedSnapshotData,
    domain: String,
    suffix_at: usize,
    h: &Holding,
    fresh: crate::query::Freshness,
    sight: Sight,
) -> DomainAudit {
    let mut d = DomainAudit {
        domain,
        suffix_at,
        registrar: h.registrar.clone(),
        expires: h.expires,
        current: h.renew_price,
        price_source: h.renew_price.map(|_| PriceSource::Stated),
        cheapest_renewal: None,
        best_transfer: None,
        recommendation: None,
        optimal: None,
        savings_per_year: None,
        savings_5_year: None,
        flags: Flags::default(),
    };
    if h.expires
        .is_some_and(|e| e <= fresh.today + EXPIRES_SOON_DAYS)
    {
        d.flags.set(Flag::ExpiresSoon);
    }
    let suffix = &d.domain[suffix_at..];
    if !sight.price_shown(suffix) {
        d.flags.set(Flag::TldNotInPlan);
        return d;
    }
    let Some(t) = snap.tld(suffix) else {
        d.flags.set(Flag::UnknownTld);
        return d;
    };
    let sellers = t.sellers.to_native();
    if sellers == 0 {
        d.flags.set(Flag::NoSeller);
    }
    let (first, rows) = (
        t.first_offer.to_native() as usize,
        t.rows.to_native() as usize,
    );
    // The offers the caller sees: the first rows of the group.
    let rows = (0..rows)
        .take_while(|&row| sight.row_shown(suffix, row, sellers as usize))
        .count();
    let group = &snap.offers[first..first + rows];
    let reg_index = h.registrar.as_deref().and_then(|k| snap.registrar_index(k));
    let reg_offer =
        reg_index.and_then(|r| group.iter().find(|o| o.registrar.to_native() as usize == r));
    let reg_renew = reg_offer.map_or(NONE, |o| o.renew.to_native());
    if h.registrar.is_some() && reg_renew == NONE {
        d.flags.set(Flag::RegistrarDoesNotSell);
    }
    if d.current.is_none() && reg_renew != NONE {
        d.current = Some(reg_renew);
        d.price_source = Some(PriceSource::Registrar);
    }
    // Cheapest renewal anywhere: lowest (renew, registrar key).
    d.cheapest_renewal = group
        .iter()
        .enumerate()
        .filter(|(_, o)| o.renew != NONE && fresh.ranks(o.updated_ms.to_native()))
        .min_by_key(|(_, o)| (o.renew.to_native(), o.registrar.to_native()))
        .map(|(i, _)| (first + i) as u32);
    // Best transfer: other registrars with a transfer price, renewal not above current.
    d.best_transfer = group
        .iter()
        .enumerate()
        .filter(|(_, o)| {
            let (tr, rn) = (o.transfer.to_native(), o.renew.to_native());
            tr != NONE
                && rn != NONE
                && fresh.ranks(o.updated_ms.to_native())
                && Some(o.registrar.to_native() as usize) != reg_index
                && d.current.is_none_or(|c| rn <= c)
        })
        .map(|(i, o)| {
            let cost = transfer_five_year(o.transfer.to_native(), o.renew.to_native());
            (cost, o.renew.to_native(), o.registrar.to_native(), i)
        })
        .min()
        .map(|(cost, _, _, i)| ((first + i) as u32, cost));
    if let Some(current) = d.current {
        let stay = 5 * u64::from(current);
        match d.best_transfer {
            Some((o, cost)) if cost < stay => {
                let renew = snap.offers[o as usize].renew.to_native();
                d.recommendation = Some(Recommendation::Transfer);
                d.optimal = Some(renew);
                d.savings_per_year = Some(u64::from(current - renew));
                d.savings_5_year = Some(stay - cost);
            }
            _ => {
                d.recommendation = Some(Recommendation::Stay);
                d.optimal = Some(current);
                d.savings_per_year = Some(0);
                d.savings_5_year = Some(0);
            }
        }
    }
    // Renewal trap: the yearly price against the first-year price that sold the name
    // (the stated registrar's, else the TLD's cheapest).
    let cheapest = (sellers > 0).then(|| &snap.offers[first]);
    let first_year = match reg_offer {
        Some(o) if o.register != NONE => Some(o.register.to_native()),
        _ => cheapest.map(|o| o.register.to_native()),
    };
    let yearly = d.current.or(cheapest.map(|o| o.renew.to_native()));
    if let (Some(f), Some(y)) = (first_year, yearly)
        && is_renewal_trap(f, y)
    {
        d.flags.set(Flag::RenewalTrap);
    }
    d
}

fn registrar_of<'s>(snap: &'s ArchivedSnapshotData, o: &ArchivedOffer) -> (&'s str, &'s [u8]) {
    let r = &snap.registrars[o.registrar.to_native() as usize];
    (snap.span_str(&r.key), snap.span(&r.name_json))
}

fn write_sums(s: &Sums, fx: Fx, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\"domains\":");
    json::write_int(s.domains, out);
    out.extend_from_slice(b",\"priced_domains\":");
    json::write_int(s.priced, out);
    out.extend_from_slice(b",\"current_yearly\":");
    write_cents(fx.amount(s.current_yearly), out);
    out.extend_from_slice(b",\"optimal_yearly\":");
    write_cents(fx.amount(s.optimal_yearly), out);
    out.extend_from_slice(b",\"savings_per_year\":");
    write_cents(fx.amount(s.savings_per_year), out);
    out.extend_from_slice(b",\"savings_5_year\":");
    write_cents(fx.amount(s.savings_5_year), out);
}

fn opt_cents(c: Option<u32>) -> Option<u64> {
    c.map(u64::from)
}

fn write_row(snap: &ArchivedSnapshotData, row: &Row, fx: Fx, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"input\":");
    json::write_str(&row.input, out);
    let d = match &row.outcome {
        Err(e) => {
            out.extend_from_slice(b",\"count\":");
            json::write_int(u64::from(row.count), out);
            out.extend_from_slice(b",\"error\":\"invalid_name\",\"detail\":");
            json::write_str(&e.to_string(), out);
            out.extend_from_slice(b",\"flags\":[\"invalid_name\"]}");
            return;
        }
        Ok(d) => d,
    };
    out.extend_from_slice(b",\"domain\":");
    json::write_str(&d.domain, out);
    out.extend_from_slice(b",\"suffix\":");
    json::write_str(d.suffix(), out);
    out.extend_from_slice(b",\"count\":");
    json::write_int(u64::from(row.count), out);
    out.extend_from_slice(b",\"registrar_key\":");
    json::write_opt_str(d.registrar.as_deref(), out);
    out.extend_from_slice(b",\"expires\":");
    write_opt_date(d.expires, out);
    out.extend_from_slice(b",\"current_price\":");
    write_opt_cents(opt_cents(d.current).map(|c| fx.amount(c)), out);
    out.extend_from_slice(b",\"price_source\":");
    json::write_opt_str(
        d.price_source.map(|p| match p {
            PriceSource::Stated => "stated",
            PriceSource::Registrar => "registrar",
        }),
        out,
    );
    out.extend_from_slice(b",\"cheapest_renewal\":");
    match d.cheapest_renewal {
        Some(i) => {
            let o = &snap.offers[i as usize];
            let (key, name) = registrar_of(snap, o);
            out.extend_from_slice(b"{\"registrar_key\":");
            json::write_str(key, out);
            out.extend_from_slice(b",\"registrar_name\":");
            out.extend_from_slice(name);
            out.extend_from_slice(b",\"renew_price\":");
            write_cents(fx.amount(u64::from(o.renew.to_native())), out);
            crate::snapshot::render::terms(snap.terms(o), fx, out);
            out.push(b'}');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"best_transfer\":");
    match d.best_transfer {
        Some((i, cost)) => {
            let o = &snap.offers[i as usize];
            let (key, name) = registrar_of(snap, o);
            out.extend_from_slice(b"{\"registrar_key\":");
            json::write_str(key, out);
            out.extend_from_slice(b",\"registrar_name\":");
            out.extend_from_slice(name);
            out.extend_from_slice(b",\"transfer_price\":");
            write_cents(fx.amount(u64::from(o.transfer.to_native())), out);
            out.extend_from_slice(b",\"renew_price\":");
            write_cents(fx.amount(u64::from(o.renew.to_native())), out);
            out.extend_from_slice(b",\"total_cost_5_year\":");
            write_cents(fx.amount(cost), out);
            crate::snapshot::render::terms(snap.terms(o), fx, out);
            out.push(b'}');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"recommendation\":");
    json::write_opt_str(d.recommendation.map(recommendation_str), out);
    out.extend_from_slice(b",\"optimal_price\":");
    write_opt_cents(opt_cents(d.optimal).map(|c| fx.amount(c)), out);
    out.extend_from_slice(b",\"savings_per_year\":");
    write_opt_cents(d.savings_per_year.map(|c| fx.amount(c)), out);
    out.extend_from_slice(b",\"savings_5_year\":");
    write_opt_cents(d.savings_5_year.map(|c| fx.amount(c)), out);
    out.extend_from_slice(b",\"flags\":[");
    for (i, f) in d.flags.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_str(f.as_str(), out);
    }
    out.extend_from_slice(b"]}");
}

fn recommendation_str(r: Recommendation) -> &'static str {
    match r {
        Recommendation::Stay => "stay",
        Recommendation::Transfer => "transfer",
    }
}

/// Writes the JSON answer (clears `out` first): `domains` (one object per distinct
/// domain or invalid input), `totals`, `by_registrar`, `flags` (counts), `meta`.
pub fn write_json(
    snap: &ArchivedSnapshotData,
    audit: &Audit,
    tier: Option<&str>,
    out: &mut Vec<u8>,
) {
    write_json_in(snap, audit, tier, crate::query::Money::USD, out)
}

/// [`write_json`] with every amount in another currency (converted at the snapshot's
/// rate) and `meta.currency` saying so.
pub fn write_json_in(
    snap: &ArchivedSnapshotData,
    audit: &Audit,
    tier: Option<&str>,
    money: crate::query::Money<'_>,
    out: &mut Vec<u8>,
) {
    let fx = money.fx;
    out.clear();
    out.reserve(audit.rows.len() * 480 + 512);
    out.extend_from_slice(b"{\"domains\":[");
    for (i, row) in audit.rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_row(snap, row, fx, out);
    }
    out.extend_from_slice(b"],\"totals\":{");
    write_sums(&audit.totals, fx, out);
    out.extend_from_slice(b"},\"by_registrar\":[");
    for (i, (key, sums)) in audit.by_registrar.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"registrar_key\":");
        json::write_opt_str(key.as_deref(), out);
        out.extend_from_slice(b",\"registrar_name\":");
        match key.as_deref().and_then(|k| snap.registrar_index(k)) {
            Some(r) => out.extend_from_slice(snap.span(&snap.registrars[r].name_json)),
            None => out.extend_from_slice(b"null"),
        }
        out.push(b',');
        write_sums(sums, fx, out);
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"flags\":{");
    for (i, f) in Flag::ALL.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_str(f.as_str(), out);
        out.push(b':');
        json::write_int(audit.flag_counts[i], out);
    }
    out.extend_from_slice(b"},\"meta\":{\"entries\":");
    json::write_int(audit.entries as u64, out);
    out.extend_from_slice(b",\"distinct\":");
    json::write_int(audit.rows.len() as u64, out);
    out.extend_from_slice(b",\"data_date\":");
    write_opt_date(Some(audit.data_day), out);
    out.extend_from_slice(b",\"expires_soon_days\":");
    json::write_int(EXPIRES_SOON_DAYS as u64, out);
    if let Some(tier) = tier {
        out.extend_from_slice(b",\"tier\":");
        json::write_str(tier, out);
    }
    if !audit.ignored_columns.is_empty() {
        out.extend_from_slice(b",\"ignored_columns\":[");
        for (i, c) in audit.ignored_columns.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            json::write_str(c, out);
        }
        out.push(b']');
    }
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.extend_from_slice(b"}}");
}

/// The header of [`write_csv`].
pub const CSV_HEADER: &str = "input,domain,suffix,count,registrar_key,expires,current_price,price_source,cheapest_renewal_registrar,cheapest_renewal_price,best_transfer_registrar,best_transfer_price,best_transfer_renew_price,best_transfer_5_year,recommendation,optimal_price,savings_per_year,savings_5_year,flags,error";

/// A cell that a spreadsheet would read as a formula (`=`, `+`, `-`, `@` first) gets a
/// leading `'` (OWASP's CSV injection advice); only echoed invalid inputs can start so.
fn csv_safe(s: &str) -> std::borrow::Cow<'_, str> {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}").into()
    } else {
        s.into()
    }
}

/// Writes the per-domain rows as CSV ([`CSV_HEADER`]; `flags` joined by `;`), in the
/// order of the JSON answer. Clears `out` first.
pub fn write_csv(snap: &ArchivedSnapshotData, audit: &Audit, out: &mut Vec<u8>) {
    write_csv_in(snap, audit, Fx::USD, out)
}

/// [`write_csv`] with every amount converted by `fx`.
pub fn write_csv_in(snap: &ArchivedSnapshotData, audit: &Audit, fx: Fx, out: &mut Vec<u8>) {
    out.clear();
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(std::mem::take(out));
    // Writing into a Vec cannot fail; the cells are written one by one from a scratch
    // buffer, so a row allocates nothing once the buffers have grown.
    let mut cell = Vec::with_capacity(64);
    let put = |w: &mut csv::Writer<Vec<u8>>, cell: &mut Vec<u8>| {
        w.write_field(&cell[..]).expect("write to memory");
        cell.clear();
    };
    for h in CSV_HEADER.split(',') {
        cell.extend_from_slice(h.as_bytes());
        put(&mut w, &mut cell);
    }
    w.write_record(None::<&[u8]>).expect("write to memory");
    let decimal = |c: Option<u64>, cell: &mut Vec<u8>| {
        if let Some(c) = c {
            price::write_decimal(fx.amount(c), cell);
        }
    };
    for row in &audit.rows {
        cell.extend_from_slice(csv_safe(&row.input).as_bytes());
        put(&mut w, &mut cell);
        match &row.outcome {
            Err(e) => {
                for _ in 0..2 {
                    put(&mut w, &mut cell);
                }
                cell.extend_from_slice(itoa::Buffer::new().format(row.count).as_bytes());
                put(&mut w, &mut cell);
                for _ in 0..14 {
                    put(&mut w, &mut cell);
                }
                cell.extend_from_slice(b"invalid_name");
                put(&mut w, &mut cell);
                cell.extend_from_slice(format!("invalid_name: {e}").as_bytes());
                put(&mut w, &mut cell);
            }
            Ok(d) => {
                let offer = |i: Option<u32>| i.map(|i| &snap.offers[i as usize]);
                let cr = offer(d.cheapest_renewal);
                let bt = offer(d.best_transfer.map(|b| b.0));
                let mut count = itoa::Buffer::new();
                let fields: [&[u8]; 4] = [
                    d.domain.as_bytes(),
                    d.suffix().as_bytes(),
                    count.format(row.count).as_bytes(),
                    d.registrar.as_deref().unwrap_or("").as_bytes(),
                ];
                for f in fields {
                    cell.extend_from_slice(f);
                    put(&mut w, &mut cell);
                }
                if let Some(e) = d.expires {
                    time::write_date(e, &mut cell);
                }
                put(&mut w, &mut cell);
                decimal(opt_cents(d.current), &mut cell);
                put(&mut w, &mut cell);
                cell.extend_from_slice(match d.price_source {
                    Some(PriceSource::Stated) => b"stated".as_slice(),
                    Some(PriceSource::Registrar) => b"registrar",
                    None => b"",
                });
                put(&mut w, &mut cell);
                for (o, price) in [
                    (cr, cr.map(|o| u64::from(o.renew.to_native()))),
                    (bt, bt.map(|o| u64::from(o.transfer.to_native()))),
                ] {
                    if let Some(o) = o {
                        cell.extend_from_slice(registrar_of(snap, o).0.as_bytes());
                    }
                    put(&mut w, &mut cell);
                    decimal(price, &mut cell);
                    put(&mut w, &mut cell);
                }
                for v in [
                    bt.map(|o| u64::from(o.renew.to_native())),
                    d.best_transfer.map(|b| b.1),
                ] {
                    decimal(v, &mut cell);
                    put(&mut w, &mut cell);
                }
                if let Some(r) = d.recommendation {
                    cell.extend_from_slice(recommendation_str(r).as_bytes());
                }
                put(&mut w, &mut cell);
                for v in [opt_cents(d.optimal), d.savings_per_year, d.savings_5_year] {
                    decimal(v, &mut cell);
                    put(&mut w, &mut cell);
                }
                for (i, f) in d.flags.iter().enumerate() {
                    if i > 0 {
                        cell.push(b';');
                    }
                    cell.extend_from_slice(f.as_str().as_bytes());
                }
                put(&mut w, &mut cell);
                put(&mut w, &mut cell);
            }
        }
        w.write_record(None::<&[u8]>).expect("write to memory");
    }
    *out = w.into_inner().expect("flush to memory");
}

/// Writes a plain-text table for people (the CLI's `--format table`): one line per
/// domain, then the totals and the per-registrar breakdown.
pub fn write_table(snap: &ArchivedSnapshotData, audit: &Audit, out: &mut Vec<u8>) {
    use std::io::Write;
    out.clear();
    let c = |v: Option<u64>| v.map_or_else(|| "-".to_string(), price::cents_to_decimal);
    let reg = |i: Option<u32>| {
        i.map(|i| registrar_of(snap, &snap.offers[i as usize]).0.to_string())
            .unwrap_or_else(|| "-".into())
    };
    // Writing into a Vec cannot fail.
    let _ = writeln!(
        out,
        "{:<32} {:<12} {:>9} {:<12} {:>9} {:>9} {:>9}  flags",
        "domain", "registrar", "current", "best move", "optimal", "save/yr", "save/5y"
    );
    for row in &audit.rows {
        match &row.outcome {
            Err(e) => {
                let _ = writeln!(out, "{:<32} invalid name: {e}", row.input);
            }
            Ok(d) => {
                let best = match d.recommendation {
                    Some(Recommendation::Transfer) => reg(d.best_transfer.map(|b| b.0)),
                    Some(Recommendation::Stay) => "stay".into(),
                    None => "-".into(),
                };
                let flags: Vec<&str> = d.flags.iter().map(Flag::as_str).collect();
                let name = if row.count > 1 {
                    format!("{} (x{})", d.domain, row.count)
                } else {
                    d.domain.clone()
                };
                let _ = writeln!(
                    out,
                    "{:<32} {:<12} {:>9} {:<12} {:>9} {:>9} {:>9}  {}",
                    name,
                    d.registrar.as_deref().unwrap_or("-"),
                    c(opt_cents(d.current)),
                    best,
                    c(opt_cents(d.optimal)),
                    c(d.savings_per_year),
                    c(d.savings_5_year),
                    flags.join(",")
                );
            }
        }
    }
    let t = &audit.totals;
    let _ = writeln!(
        out,
        "\n{} entries, {} distinct, {} priced (data of {})",
        audit.entries,
        audit.rows.len(),
        t.priced,
        time::date_string(audit.data_day)
    );
    let _ = writeln!(
        out,
        "current {} / year, optimal {} / year: saves {} a year, {} over 5 years",
        c(Some(t.current_yearly)),
        c(Some(t.optimal_yearly)),
        c(Some(t.savings_per_year)),
        c(Some(t.savings_5_year))
    );
    for (key, s) in &audit.by_registrar {
        let _ = writeln!(
            out,
            "  {:<14} {:>5} domains, current {:>10} / year, optimal {:>10}, saves {:>10} / year",
            key.as_deref().unwrap_or("(none)"),
            s.domains,
            c(Some(s.current_yearly)),
            c(Some(s.optimal_yearly)),
            c(Some(s.savings_per_year))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_bodies() {
        let p = parse_json(
            br#"{"domains":["a.com",{"name":"b.io","registrar":" Dynadot ","renew_price":12.5,"expires":"2026-09-01"},
                {"domain":"c.de","renew_price":"7","expires":null,"registrar":null}]}"#,
            10,
        )
        .unwrap();
        assert_eq!(p.holdings.len(), 3);
        assert_eq!(p.holdings[0].name, "a.com");
        assert_eq!(p.holdings[1].registrar.as_deref(), Some("dynadot"));
        assert_eq!(p.holdings[1].renew_price, Some(1250));
        assert_eq!(
            p.holdings[1].expires,
            Some(time::days_from_civil(2026, 9, 1))
        );
        assert_eq!(p.holdings[2].renew_price, Some(700));
    }

    #[test]
    fn bad_json_bodies_say_where() {
        let err = |b: &str| match parse_json(b.as_bytes(), 3) {
            Err(InputError::Invalid(m)) => m,
            other => panic!("{b}: {other:?}"),
        };
        assert!(err("").contains("empty body"));
        assert!(err("{").contains("not a portfolio"));
        assert!(err("[]").contains("not a portfolio"));
        assert!(err(r#"{"domains":[]}"#).contains("no domains"));
        assert!(err(r#"{"domain":[]}"#).contains("unknown field"));
        assert!(
            err(r#"{"domains":["a.com",{"name":"b.com","renewal_price":3}]}"#)
                .contains("domains[1]: unknown field \"renewal_price\"")
        );
        assert!(err(r#"{"domains":[{"name":"b.com","renew_price":-3}]}"#).contains("negative"));
        assert!(
            err(r#"{"domains":[{"name":"b.com","renew_price":1.234}]}"#).contains("2 decimals")
        );
        assert!(
            err(r#"{"domains":[{"name":"b.com","renew_price":1e30}]}"#).contains("renew_price")
        );
        assert!(
            err(r#"{"domains":[{"name":"b.com","expires":"2026-02-30"}]}"#).contains("not a date")
        );
        assert!(err(r#"{"domains":[{"registrar":"x"}]}"#).contains("\"name\" is missing"));
        assert!(err(r#"{"domains":[3]}"#).contains("domains[0]"));
        let long = "a".repeat(100_000);
        assert!(
            err(&format!(r#"{{"domains":["a.com","{long}"]}}"#))
                .contains("domains[1]: a name of 100000 characters")
        );
        assert!(
            err(&format!(r#"{{"domains":[{{"name":"{long}"}}]}}"#)).contains("100000 characters")
        );
        assert!(err("{\"domains\":[\"a\u{0}.com\"]}").contains("not a portfolio"));
        // An escaped NUL is a name (an invalid one, listed in the answer).
        assert!(parse_json(br#"{"domains":["a\u0000.com"]}"#, 3).is_ok());
        assert!(err(r#"{"domains":["a.com"]} x"#).contains("not a portfolio"));
        assert_eq!(
            parse_json(br#"{"domains":["a","b","c","d"]}"#, 3),
            Err(InputError::TooMany { limit: 3 })
        );
        assert!(parse_json(br#"{"domains":["a","b","c"]}"#, 3).is_ok());
    }

    #[test]
    fn csv_bodies() {
        let p = parse_csv(
            "\u{feff}Domain,Auto-Renew,Registrar,Renew_Price,Expires\r\nexample.com,yes,namecheap,18.48,2026-09-01T10:00:00Z\r\n\r\nb.io,,,,\n"
                .as_bytes(),
            10,
        )
        .unwrap();
        assert_eq!(p.ignored_columns, ["auto-renew"]);
        assert_eq!(p.holdings.len(), 2);
        assert_eq!(p.holdings[0].registrar.as_deref(), Some("namecheap"));
        assert_eq!(p.holdings[0].renew_price, Some(1848));
        assert_eq!(
            p.holdings[0].expires,
            Some(time::days_from_civil(2026, 9, 1))
        );
        assert_eq!(
            p.holdings[1],
            Holding {
                name: "b.io".into(),
                ..Holding::default()
            }
        );
        let only = parse_csv(b"domain\na.com\n", 10).unwrap();
        assert_eq!(only.holdings[0].name, "a.com");
    }

    #[test]
    fn bad_csv_bodies_say_where() {
        let err = |b: &[u8]| match parse_csv(b, 2) {
            Err(InputError::Invalid(m)) => m,
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(b)),
        };
        assert!(err(b"").contains("empty body"));
        assert!(err(b"name,registrar\na.com,x\n").contains("no \"domain\" column"));
        assert!(err(b"domain,domain\na.com,x\n").contains("twice"));
        assert!(err(b"domain\n").contains("no domains"));
        assert!(err(b"domain,renew_price\na.com,abc\n").contains("line 2: renew_price"));
        assert!(err(b"domain,expires\na.com,x\nb.com,2026-13-01\n").contains("line 2"));
        assert!(err(b"domain\n\xff\xfe.com\n").contains("not a CSV portfolio"));
        assert!(err(b"domain\na.com\nb\0.com\n").contains("line 3: a NUL byte"));
        let long = format!("domain\n{}.com\n", "a".repeat(100_000));
        assert!(err(long.as_bytes()).contains("line 2: a name of 100004 characters"));
        // The limit counts characters (what the OpenAPI document's maxLength says): a name
        // of MAX_NAME_FIELD two-byte letters is read, one more is refused.
        let wide = format!("domain\n{}\n", "é".repeat(MAX_NAME_FIELD));
        assert!(parse_csv(wide.as_bytes(), 10).is_ok());
        let wider = format!("domain\n{}\n", "é".repeat(MAX_NAME_FIELD + 1));
        assert!(err(wider.as_bytes()).contains("a name of 1013 characters"));
        assert_eq!(
            parse_csv(b"domain\na\nb\nc\n", 2),
            Err(InputError::TooMany { limit: 2 })
        );
    }

    #[test]
    fn csv_cells_are_not_formulas() {
        assert_eq!(csv_safe("=cmd()"), "'=cmd()");
        assert_eq!(csv_safe("a.com"), "a.com");
    }
}
