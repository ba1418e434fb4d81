//! The catalogue of TLDs, the registrar list and one registrar's price list: pages of
//! pre-sorted arrays.
//!
//! Every sort order is computed by the builder ([`SnapshotData::catalogue`] is in name
//! order, `catalogue_by_cheapest` and `catalogue_by_registrars` hold the other two), so a
//! page is a walk from the cursor's position that stops after `limit` matches: no sort
//! at request time. Filters (`q`, `type`) are tested entry by entry on the way; with a
//! filter the walk goes on to the end to count `meta.total` (a few thousand short names).
//! Each listing is computed into a typed view (`catalogue_view`, `registrars_view`,
//! `registrar_view`), which its JSON writer writes.
//!
//! A cursor is opaque to clients: it carries the snapshot it was made for, the listing
//! (sort and filters, or the registrar) and the position of the next entry. A cursor of
//! another snapshot or another listing is refused, because a position in another
//! ordering would silently skip or repeat entries.
//!
//! [`SnapshotData::catalogue`]: crate::snapshot::SnapshotData::catalogue

use super::view::{
    CatalogueEntry, CataloguePage, Pick, QuotedPrices, RegistrarFacts, RegistrarPage,
    RegistrarPrice, TldFacts, Triple, write_members_only,
};
use super::{QueryError, Sight, write_int};
use crate::json;
use crate::price::Fx;
use crate::price::write_opt_cents;
use crate::snapshot::schema::{ArchivedCatalogueEntry, NONE};
use crate::snapshot::{ArchivedSnapshotData, name_hash};
use crate::time;

/// The IANA root zone types a catalogue can be filtered by (`type`).
pub const TYPES: [&str; 6] = [
    "generic",
    "country-code",
    "sponsored",
    "infrastructure",
    "generic-restricted",
    "test",
];

/// Most entries a page holds (`limit`).
pub const MAX_PAGE: usize = 500;
/// Entries of a page when `limit` is absent.
pub const DEFAULT_PAGE: usize = 100;

/// The orders of the catalogue (`sort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogueSort {
    /// By canonical name.
    Name,
    /// By cheapest registration price, unsold TLDs last; ties by name. For a viewer
    /// who does not see every TLD's prices: the TLDs whose price it sees by price, then
    /// the sold ones it does not see by name, then the unsold by name.
    Cheapest,
    /// By number of selling registrars, most first; ties by name.
    Registrars,
}

impl CatalogueSort {
    /// The parameter value.
    pub fn as_str(self) -> &'static str {
        match self {
            CatalogueSort::Name => "name",
            CatalogueSort::Cheapest => "cheapest",
            CatalogueSort::Registrars => "registrars",
        }
    }

    /// The order named by a parameter value.
    pub fn parse(s: &str) -> Option<CatalogueSort> {
        [
            CatalogueSort::Name,
            CatalogueSort::Cheapest,
            CatalogueSort::Registrars,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
}

/// Where the next page starts, and which listing of which snapshot it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// The snapshot it was made for (low 64 bits of its content hash).
    pub snapshot: u64,
    /// The listing it pages through (a hash of sort and filters, or of the registrar).
    pub listing: u32,
    /// Position of the next entry in the listing's order.
    pub position: u32,
}

impl std::fmt::Display for Cursor {
    /// The text of [`Cursor::encode`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = Vec::with_capacity(Self::LEN);
        self.encode(&mut text);
        f.write_str(std::str::from_utf8(&text).map_err(|_| std::fmt::Error)?)
    }
}

/// Why a cursor string is not a cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorError;

impl Cursor {
    const PREFIX: &'static str = "c1";
    const LEN: usize = 2 + 16 + 8 + 8;

    /// The opaque text handed to clients (34 characters, URL-safe).
    pub fn encode(&self, out: &mut Vec<u8>) {
        use std::io::Write;
        let _ = write!(
            out,
            "{}{:016x}{:08x}{:08x}",
            Self::PREFIX,
            self.snapshot,
            self.listing,
            self.position
        );
    }

    /// Reads a cursor written by [`Cursor::encode`].
    pub fn decode(s: &str) -> Result<Cursor, CursorError> {
        let hex = |r: std::ops::Range<usize>| {
            let part = s.get(r).ok_or(CursorError)?;
            if !part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return Err(CursorError);
            }
            u64::from_str_radix(part, 16).map_err(|_| CursorError)
        };
        if s.len() != Self::LEN || !s.starts_with(Self::PREFIX) {
            return Err(CursorError);
        }
        Ok(Cursor {
            snapshot: hex(2..18)?,
            listing: hex(18..26)? as u32,
            position: hex(26..34)? as u32,
        })
    }
}

/// Checks a cursor against the listing and snapshot at hand; the start position.
fn start(
    cursor: Option<&Cursor>,
    snapshot: u64,
    listing: u32,
    len: usize,
) -> Result<usize, QueryError> {
    let Some(c) = cursor else {
        return Ok(0);
    };
    let bad = |reason: &str| QueryError::InvalidParameter {
        name: "cursor",
        value: {
            let mut v = Vec::new();
            c.encode(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        },
        reason: reason.to_owned(),
    };
    if c.snapshot != snapshot {
        return Err(bad(
            "this cursor belongs to an earlier price snapshot; the data has changed since, so \
             start again without a cursor",
        ));
    }
    if c.listing != listing {
        return Err(bad(
            "this cursor belongs to another listing; give it with the same sort, q and type \
             (or registrar) as the request that returned it",
        ));
    }
    if c.position as usize > len {
        return Err(bad("this cursor points past the end of the listing"));
    }
    Ok(c.position as usize)
}

fn listing_hash(parts: &[&str]) -> u32 {
    let mut bytes = Vec::new();
    for p in parts {
        bytes.extend_from_slice(p.as_bytes());
        bytes.push(0);
    }
    name_hash(&bytes) as u32
}

/// Parameters of [`catalogue`].
#[derive(Debug, Clone)]
pub struct CatalogueRequest<'a> {
    /// Keep names that contain this (lowercase; matched against the canonical and the
    /// Unicode form of each name).
    pub q: Option<&'a str>,
    /// Keep names of this root zone type (one of [`TYPES`]).
    pub kind: Option<&'a str>,
    /// The order.
    pub sort: CatalogueSort,
    /// Entries per page, 1 to [`MAX_PAGE`].
    pub limit: usize,
    /// Where to start; `None` = the first page.
    pub cursor: Option<Cursor>,
    /// What the caller sees (a hidden price is `null` and named in `members_only`,
    /// and `sort=cheapest` places it after the prices shown).
    pub sight: Sight,
    /// The snapshot's identity (low 64 bits of its content hash), for cursors.
    pub snapshot: u64,
}

/// Whether a catalogue entry passes the filters.
fn matches(
    snap: &ArchivedSnapshotData,
    e: &ArchivedCatalogueEntry,
    req: &CatalogueRequest<'_>,
) -> bool {
    if let Some(kind) = req.kind
        && snap.span(&e.kind) != kind.as_bytes()
    {
        return false;
    }
    if let Some(q) = req.q {
        let q = q.as_bytes();
        // Most names have no Unicode form of their own (the span is the name's).
        let own = e.unicode.start != e.name.start || e.unicode.end != e.name.end;
        let unicode = own.then(|| snap.span(&e.unicode));
        if !(contains(snap.span(&e.name), q) || unicode.is_some_and(|u| contains(u, q))) {
            return false;
        }
    }
    true
}

/// Whether `needle` (not empty) occurs in `hay`: a scan for its first byte, then a
/// compare. Names are short; this is several times faster than `windows().any()`.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let Some(last_start) = hay.len().checked_sub(needle.len()) else {
        return false;
    };
    hay[..=last_start]
        .iter()
        .enumerate()
        .any(|(i, &b)| b == first && hay[i + 1..i + needle.len()] == *rest)
}

/// The facts of a TLD of the catalogue (`None`: not in the catalogue).
pub fn tld_facts<'s>(snap: &'s ArchivedSnapshotData, tld: &str) -> Option<TldFacts<'s>> {
    snap.catalogue_entry(tld).map(|e| TldFacts::of(snap, e))
}

/// The sellers of a catalogue entry (0 for a name nobody prices).
fn sellers_of(snap: &ArchivedSnapshotData, e: &ArchivedCatalogueEntry) -> usize {
    match e.tld.to_native() {
        NONE => 0,
        t => snap.tlds[t as usize].sellers.to_native() as usize,
    }
}

/// One catalogue entry as `sight` sees it.
fn entry_view<'s>(
    snap: &'s ArchivedSnapshotData,
    e: &ArchivedCatalogueEntry,
    sight: Sight,
) -> CatalogueEntry<'s> {
    let facts = TldFacts::of(snap, e);
    let t = e.tld.to_native();
    let t = (t != NONE).then(|| &snap.tlds[t as usize]);
    let sellers = sellers_of(snap, e);
    let average = sight.average_shown(facts.tld, sellers);
    let avg_register_price = t
        .filter(|_| average)
        .map(|t| t.avg_register.to_native())
        .filter(|c| *c != NONE)
        .map(u64::from);
    let shown = sight.shown(facts.tld, sellers) > 0;
    let cheapest_register = t.filter(|_| shown).map(|t| {
        let o = &snap.offers[t.first_offer.to_native() as usize];
        Pick::of(
            snap,
            o,
            |register, _| Some(register as u64),
            super::Freshness::ANY_AGE,
        )
    });
    let members_only: &'static [&'static str] = match (average, shown || sellers == 0) {
        (true, true) => &[],
        (true, false) => &["cheapest_register"],
        (false, true) => &["avg_register_price"],
        (false, false) => &["avg_register_price", "cheapest_register"],
    };
    CatalogueEntry {
        facts,
        registrar_count: sellers,
        avg_register_price,
        cheapest_register,
        members_only,
    }
}

/// One catalogue entry, its prices converted by `fx`.
fn write_entry(e: &CatalogueEntry<'_>, fx: Fx, out: &mut Vec<u8>) {
    out.push(b'{');
    e.facts.write(out);
    out.extend_from_slice(b",\"registrar_count\":");
    write_int(e.registrar_count as u64, out);
    out.extend_from_slice(b",\"avg_register_price\":");
    write_opt_cents(e.avg_register_price.map(|c| fx.amount(c)), out);
    out.extend_from_slice(b",\"cheapest_register\":");
    Pick::write(e.cheapest_register.as_ref(), fx, out);
    if !e.members_only.is_empty() {
        write_members_only(e.members_only, out);
    }
    out.push(b'}');
}

/// The passes of a viewer's `sort=cheapest` over the catalogue: (order, which entries).
/// A viewer who sees every TLD's prices walks the builder's order once; another walks
/// it for the prices it sees, then the name order for the sold names it does not see,
/// then for the unsold, so that no hidden price is placed among the shown ones, nor
/// ordered against another hidden one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Every entry, in the listing's own order.
    Every,
    /// `sort=cheapest`: the sold entries whose price is shown.
    PriceShown,
    /// By name: the sold entries whose price is hidden.
    PriceHidden,
    /// By name: the entries nobody sells.
    Unsold,
}

fn passes(sort: CatalogueSort, sight: Sight) -> &'static [Pass] {
    if sort == CatalogueSort::Cheapest && !sight.all_tlds() {
        &[Pass::PriceShown, Pass::PriceHidden, Pass::Unsold]
    } else {
        &[Pass::Every]
    }
}

/// Writes `"next_cursor":"..."` or `null`.
fn write_next(next: Option<Cursor>, out: &mut Vec<u8>) {
    out.extend_from_slice(b",\"next_cursor\":");
    match next {
        Some(c) => {
            out.push(b'"');
            c.encode(out);
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// One page of the TLD catalogue:
/// `{"tlds":[...],"meta":{"total":N,"sort":..,"limit":L,"next_cursor":..}}`, written
/// from [`catalogue_view`].
pub fn catalogue(
    snap: &ArchivedSnapshotData,
    req: &CatalogueRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    catalogue_in(snap, req, super::Money::USD, out)
}

/// [`catalogue`] with the prices in another currency, and `meta.currency` saying so.
/// The page is the same walk of the same stored order (`sort=cheapest` stays the USD
/// order: a conversion never reorders), so a cursor pages on in any currency.
pub fn catalogue_in(
    snap: &ArchivedSnapshotData,
    req: &CatalogueRequest<'_>,
    money: super::Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    out.clear();
    let page = catalogue_view(snap, req)?;
    out.extend_from_slice(b"{\"tlds\":[");
    for (i, e) in page.tlds.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_entry(e, money.fx, out);
    }
    out.extend_from_slice(b"],\"meta\":{\"total\":");
    write_int(page.total as u64, out);
    out.extend_from_slice(b",\"sort\":\"");
    out.extend_from_slice(page.sort.as_str().as_bytes());
    out.extend_from_slice(b"\",\"limit\":");
    write_int(page.limit as u64, out);
    write_next(page.next_cursor, out);
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.extend_from_slice(b"}}");
    Ok(())
}

/// One page of the TLD catalogue ([`catalogue`]) as a typed view.
pub fn catalogue_view<'s>(
    snap: &'s ArchivedSnapshotData,
    req: &CatalogueRequest<'_>,
) -> Result<CataloguePage<'s>, QueryError> {
    let n = snap.catalogue.len();
    // Positions run through the passes one after the other: pass `p`'s `i`-th entry
    // is at `p * n + i`. The passes are part of the listing a cursor belongs to.
    let passes = passes(req.sort, req.sight);
    let parts = [
        "catalogue",
        req.sort.as_str(),
        req.q.unwrap_or(""),
        req.kind.unwrap_or(""),
        "shown first",
    ];
    let listing = listing_hash(&parts[..if passes.len() > 1 { 5 } else { 4 }]);
    let from = start(req.cursor.as_ref(), req.snapshot, listing, n * passes.len())?;
    let at = |i: usize| {
        let (pass, i) = (passes[i / n], i % n);
        let order = match (pass, req.sort) {
            (Pass::PriceHidden | Pass::Unsold, _) | (_, CatalogueSort::Name) => None,
            (_, CatalogueSort::Cheapest) => Some(&snap.catalogue_by_cheapest),
            (_, CatalogueSort::Registrars) => Some(&snap.catalogue_by_registrars),
        };
        let e = match order {
            None => &snap.catalogue[i],
            Some(o) => &snap.catalogue[o[i].to_native() as usize],
        };
        let sold = sellers_of(snap, e) > 0;
        let member = match pass {
            Pass::Every => true,
            Pass::PriceShown => sold && req.sight.price_shown(snap.span_str(&e.name)),
            Pass::PriceHidden => sold && !req.sight.price_shown(snap.span_str(&e.name)),
            Pass::Unsold => !sold,
        };
        (e, member)
    };
    let n_all = n * passes.len();
    let matches = |e: &ArchivedCatalogueEntry| matches(snap, e, req);
    // Every entry is in exactly one pass: only a filter makes counting a walk.
    let filtered = req.q.is_some() || req.kind.is_some();
    let mut tlds = Vec::with_capacity(req.limit.min(n));
    let (mut total, mut next) = (0usize, None);
    // Matches before the cursor count toward the total too.
    let keep = |i: usize| {
        let (e, member) = at(i);
        (member && matches(e)).then_some(e)
    };
    if filtered {
        total = (0..from).filter(|&i| keep(i).is_some()).count();
    }
    for i in from..n_all {
        let Some(e) = keep(i) else {
            continue;
        };
        if tlds.len() == req.limit {
            if next.is_none() {
                next = Some(Cursor {
                    snapshot: req.snapshot,
                    listing,
                    position: i as u32,
                });
            }
            if !filtered {
                break;
            }
            total += 1;
            continue;
        }
        tlds.push(entry_view(snap, e, req.sight));
        total += 1;
    }
    if !filtered {
        total = n;
    }
    Ok(CataloguePage {
        tlds,
        total,
        sort: req.sort,
        limit: req.limit,
        next_cursor: next,
    })
}

/// Every registrar, by key: `{"registrars":[...],"total":N}`, written from
/// [`registrars_view`]. `public_url` must already be safe inside a JSON string.
pub fn registrars_list(snap: &ArchivedSnapshotData, public_url: &str, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(b"{\"registrars\":[");
    let list = registrars_view(snap);
    let total = list.len();
    for (i, r) in list.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        r.write(public_url, out);
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"total\":");
    write_int(total as u64, out);
    out.push(b'}');
}

/// Every registrar, by key ([`registrars_list`]).
pub fn registrars_view(
    snap: &ArchivedSnapshotData,
) -> impl ExactSizeIterator<Item = RegistrarFacts<'_>> {
    snap.registrars.iter().map(|r| RegistrarFacts::of(snap, r))
}

/// Parameters of [`registrar`].
#[derive(Debug, Clone)]
pub struct RegistrarRequest<'a> {
    /// The registrar key (lowercase).
    pub key: &'a str,
    /// Price entries per page, 1 to [`MAX_PAGE`].
    pub limit: usize,
    /// Where to start; `None` = the first page.
    pub cursor: Option<Cursor>,
    /// What the caller sees: the TLDs whose offer of this registrar it does not see
    /// are left out of the list (and of `meta.total`).
    pub sight: Sight,
    /// Base of `website_url`; must already be safe inside a JSON string.
    pub public_url: &'a str,
    /// The snapshot's identity, for cursors.
    pub snapshot: u64,
}

/// One registrar and a page of its price list, in TLD name order: its listing fields,
/// then `"prices":[{"tld":..,"register_price":..,...}]` and `meta`. The list holds the
/// offers the caller sees; the counts (`tlds_sold`, ...) are the registrar's own.
/// Written from [`registrar_view`].
pub fn registrar(
    snap: &ArchivedSnapshotData,
    req: &RegistrarRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    registrar_in(snap, req, super::Money::USD, out)
}

/// [`registrar`] with the prices in another currency.
pub fn registrar_in(
    snap: &ArchivedSnapshotData,
    req: &RegistrarRequest<'_>,
    money: super::Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    out.clear();
    let page = registrar_view(snap, req)?;
    page.registrar.write(req.public_url, out);
    out.extend_from_slice(b",\"prices\":[");
    for (i, p) in page.prices.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"tld\":");
        json::write_str(p.tld, out);
        out.push(b',');
        p.prices.write_price_fields(money.fx, out);
        out.extend_from_slice(b",\"last_updated\":\"");
        time::write_iso_millis(p.updated_ms, out);
        out.push(b'"');
        if let Some(o) = &p.original {
            o.write(out);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"meta\":{\"total\":");
    write_int(page.total as u64, out);
    out.extend_from_slice(b",\"limit\":");
    write_int(page.limit as u64, out);
    write_next(page.next_cursor, out);
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.extend_from_slice(b"}}");
    Ok(())
}

/// One registrar and a page of its price list ([`registrar`]) as a typed view.
pub fn registrar_view<'s>(
    snap: &'s ArchivedSnapshotData,
    req: &RegistrarRequest<'_>,
) -> Result<RegistrarPage<'s>, QueryError> {
    let Some(ri) = snap.registrar_index(req.key) else {
        return Err(QueryError::UnknownRegistrar(req.key.to_string()));
    };
    let r = &snap.registrars[ri];
    let first = r.first_listed.to_native() as usize;
    let list = &snap.registrar_offers
        [first..first + (r.sells.to_native() + r.renewal_only.to_native()) as usize];
    let listing = listing_hash(&["registrar", req.key]);
    let from = start(req.cursor.as_ref(), req.snapshot, listing, list.len())?;
    // The TLD of an offer: a binary search over the TLD groups (the list stores offer
    // positions only).
    let tld_of = |i: usize| &snap.tlds[snap.offer_tld(list[i].to_native() as usize)];
    let everything = req.sight.all_tlds() && req.sight.every_seller();
    let shown = |i: usize| {
        everything || super::offer_shown(snap, tld_of(i), req.sight, list[i].to_native() as usize)
    };
    let mut prices = Vec::with_capacity(req.limit.min(list.len()));
    let mut end = from;
    while end < list.len() && prices.len() < req.limit {
        let i = end;
        end += 1;
        if !shown(i) {
            continue;
        }
        let o = &snap.offers[list[i].to_native() as usize];
        prices.push(RegistrarPrice {
            tld: snap.span_str(&tld_of(i).name),
            prices: Triple::of(
                o.register.to_native(),
                o.renew.to_native(),
                o.transfer.to_native(),
            ),
            updated_ms: o.updated_ms.to_native(),
            original: QuotedPrices::of(snap, o),
        });
    }
    // The next page starts at the next entry shown, if there is one.
    while end < list.len() && !shown(end) {
        end += 1;
    }
    let total = if everything {
        list.len()
    } else {
        (0..list.len()).filter(|&i| shown(i)).count()
    };
    Ok(RegistrarPage {
        registrar: RegistrarFacts::of(snap, r),
        prices,
        total,
        limit: req.limit,
        next_cursor: (end < list.len()).then_some(Cursor {
            snapshot: req.snapshot,
            listing,
            position: end as u32,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_is_substring_search() {
        for (hay, needle) in [
            ("com", "c"),
            ("com", "om"),
            ("com", "com"),
            ("com", "comm"),
            ("co.uk", ".u"),
            ("xn--p1ai", "p1"),
            ("", "a"),
            ("aaab", "aab"),
            ("abc", "x"),
            ("рф", "ф"),
        ] {
            assert_eq!(
                contains(hay.as_bytes(), needle.as_bytes()),
                hay.contains(needle),
                "{hay:?} {needle:?}"
            );
        }
    }

    #[test]
    fn cursors_read_back_and_refuse_anything_else() {
        let c = Cursor {
            snapshot: u64::MAX,
            listing: 0,
            position: u32::MAX,
        };
        let mut v = Vec::new();
        c.encode(&mut v);
        assert_eq!(Cursor::decode(std::str::from_utf8(&v).unwrap()), Ok(c));
        assert_eq!(
            Cursor::decode("c1+fffffffffffffff0000000000000000"),
            Err(CursorError)
        );
    }
}
