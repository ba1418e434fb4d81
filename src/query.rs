//! Queries: pure functions from an archived snapshot and plain parameters to a complete
//! JSON body. They know nothing of HTTP, keys or plans; the caller decides which TLDs a
//! caller may ask for and passes names already in canonical form
//! ([`crate::tld::normalize`]), de-duplicated, in the order of the request.
//!
//! Each function clears `out` and writes the whole body into it, so a server can reuse
//! one buffer per connection. The cost of a query is a hash probe per TLD, a binary
//! search per (TLD, registrar) and a few `memcpy`s of pre-rendered fragments: no sorting,
//! no scan of the matrix, no allocation beyond growing `out` (and the list of unknown
//! names, when there are any).

use std::fmt;
use std::time::Instant;

use crate::json;
use crate::price::{write_cents, write_opt_cents, write_triple};
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::{ArchivedOffer, ArchivedTld, NONE};
use crate::time;

/// The two response shapes of the cheapest endpoint (seed 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `/api/v1/client/prices/cheapest`: `registrar_key`, `meta`.
    Client,
    /// `/api/v1/prices/cheapest`: `transfer_price`, 1/3/5-year totals, `avg_prices`.
    Public,
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
}

/// Parameters of [`prices`].
#[derive(Debug, Clone)]
pub struct PricesRequest<'a> {
    /// Canonical TLD names, de-duplicated, in request order.
    pub tlds: &'a [&'a str],
    /// Registrar keys, de-duplicated, in request order; `None` = every seller.
    pub registrars: Option<&'a [&'a str]>,
    /// When the request started, for `stats.time_elapsed`.
    pub started: Instant,
}

/// Parameters of [`registrars`].
#[derive(Debug, Clone)]
pub struct RegistrarsRequest<'a> {
    /// Canonical TLD name.
    pub tld: &'a str,
    /// Whether each entry carries `prices`.
    pub include_prices: bool,
    /// The plan's cut (free and basic: 5); `None` lists all.
    pub limit: Option<usize>,
    /// Base of `website_url`; must already be safe inside a JSON string.
    pub public_url: &'a str,
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
}

/// A query that has nothing to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// None of the TLDs asked for is in the snapshot (HTTP 404 `unknown_tld`).
    UnknownTlds(Vec<String>),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::UnknownTlds(t) => write!(f, "unknown TLD(s): {}", t.join(", ")),
        }
    }
}

impl std::error::Error for QueryError {}

/// The default base of `website_url` (`serve --public-url`).
pub const DEFAULT_PUBLIC_URL: &str = "https://tldsnap.dev";

/// The text of the cut registrar listing (contract 4).
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

fn write_int(v: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn cents(c: u32) -> Option<u64> {
    (c != NONE).then_some(c as u64)
}

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
    out.clear();
    out.extend_from_slice(b"{\"results\":{");
    let mut found = 0usize;
    let mut missing: Vec<String> = Vec::new();
    for name in names {
        let Some(t) = snap.tld(name) else {
            missing.push((*name).to_string());
            continue;
        };
        if found > 0 {
            out.push(b',');
        }
        found += 1;
        out.extend_from_slice(snap.span(&t.key_json));
        out.push(b':');
        value(t, out);
    }
    if found == 0 {
        out.clear();
        return Err(QueryError::UnknownTlds(missing));
    }
    Ok((found, missing))
}

/// Cheapest registrars per TLD (seed 4.1), client or public shape.
pub fn cheapest(
    snap: &ArchivedSnapshotData,
    req: &CheapestRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    let (found, missing) = write_results(snap, req.tlds, out, |t, out| {
        out.extend_from_slice(b"{\"cheapest_register\":[");
        let take = req.limit.min(t.sellers.to_native() as usize);
        let first = t.first_offer.to_native() as usize;
        match req.shape {
            Shape::Client => {
                // The entries are stored back to back in rank order: one copy.
                let start = t.client_start.to_native();
                let end = if take == 0 {
                    start
                } else {
                    snap.offers[first + take - 1].client_end.to_native()
                };
                out.extend_from_slice(snap.text_range(start, end));
                out.extend_from_slice(snap.span(&t.client_tail));
            }
            Shape::Public => {
                for (i, o) in snap.offers[first..first + take].iter().enumerate() {
                    write_public_entry(snap, i, o, out);
                }
                out.extend_from_slice(snap.span(&t.public_tail));
            }
        }
    })?;
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
                write_str_list(&missing, out);
                out.push(b'}');
            }
            out.push(b'}');
        }
        Shape::Public => {
            if !missing.is_empty() {
                out.extend_from_slice(b",\"meta\":{\"not_found\":{\"tlds\":");
                write_str_list(&missing, out);
                out.extend_from_slice(b"}}");
            }
        }
    }
    out.push(b'}');
    Ok(())
}

/// One public-shape cheapest entry, written from the integer prices (this shape is not
/// pre-rendered: see the schema docs).
fn write_public_entry(snap: &ArchivedSnapshotData, i: usize, o: &ArchivedOffer, out: &mut Vec<u8>) {
    let (register, renew) = (o.register.to_native() as u64, o.renew.to_native() as u64);
    if i > 0 {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"rank\":");
    write_int(i as u64 + 1, out);
    out.extend_from_slice(b",\"registrar_name\":");
    out.extend_from_slice(snap.span(&snap.registrars[o.registrar.to_native() as usize].name_json));
    out.extend_from_slice(b",\"register_price\":");
    write_cents(register, out);
    out.extend_from_slice(b",\"renew_price\":");
    write_cents(renew, out);
    out.extend_from_slice(b",\"transfer_price\":");
    write_opt_cents(cents(o.transfer.to_native()), out);
    out.extend_from_slice(b",\"total_cost_1_year\":");
    write_cents(register, out);
    out.extend_from_slice(b",\"total_cost_3_year\":");
    write_cents(register + 2 * renew, out);
    out.extend_from_slice(b",\"total_cost_5_year\":");
    write_cents(register + 4 * renew, out);
    out.push(b'}');
}

/// Prices of selected registrars, or of every seller, per TLD (seed 4.2).
pub fn prices(
    snap: &ArchivedSnapshotData,
    req: &PricesRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
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
    let (found, missing) = write_results(snap, req.tlds, out, |t, out| {
        out.push(b'{');
        if req.registrars.is_some() {
            let mut first = true;
            for &r in &regs {
                if let Some(o) = snap.offer_of(t, r) {
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    out.extend_from_slice(snap.span(&o.record));
                }
            }
        } else {
            // Every seller: the records are stored back to back in rank order.
            let sellers = t.sellers.to_native() as usize;
            if sellers > 0 {
                let first = t.first_offer.to_native() as usize;
                let start = t.records_start.to_native();
                let end = snap.offers[first + sellers - 1].record.end.to_native();
                out.extend_from_slice(snap.text_range(start, end));
            }
        }
        out.push(b'}');
    })?;
    out.extend_from_slice(b"},\"stats\":{\"total_tlds\":");
    write_int(found as u64, out);
    out.extend_from_slice(b",\"time_elapsed\":\"");
    write_elapsed(req.started.elapsed(), out);
    out.extend_from_slice(b"\",\"last_updated\":\"");
    time::write_iso_millis(snap.data_updated_ms.to_native(), out);
    out.push(b'"');
    if !missing.is_empty() || !unknown_regs.is_empty() {
        out.extend_from_slice(b",\"not_found\":{");
        if !missing.is_empty() {
            out.extend_from_slice(b"\"tlds\":");
            write_str_list(&missing, out);
        }
        if !unknown_regs.is_empty() {
            if !missing.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(b"\"registrars\":");
            write_str_list(&unknown_regs, out);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"}}");
    Ok(())
}

/// Writes `stats.time_elapsed` (`0.04ms`): milliseconds with two decimals, or three
/// below 0.005 ms so that a fast answer does not read as zero.
pub fn write_elapsed(elapsed: std::time::Duration, out: &mut Vec<u8>) {
    let nanos = elapsed.as_nanos().min(u64::MAX as u128) as u64;
    // Hundredths of a millisecond, rounded; thousandths when that would read as zero.
    let (value, decimals) = if nanos >= 5_000 {
        ((nanos + 5_000) / 10_000, 2)
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

/// Registrars that sell a TLD, cheapest first (seed 4.3).
pub fn registrars(
    snap: &ArchivedSnapshotData,
    req: &RegistrarsRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    out.clear();
    let Some(t) = snap.tld(req.tld) else {
        return Err(QueryError::UnknownTlds(vec![req.tld.to_string()]));
    };
    let sellers = t.sellers.to_native() as usize;
    let shown = req.limit.map_or(sellers, |l| l.min(sellers));
    out.extend_from_slice(b"{\"tld\":");
    out.extend_from_slice(snap.span(&t.key_json));
    out.extend_from_slice(b",\"registrar_count\":");
    write_int(sellers as u64, out);
    out.extend_from_slice(b",\"registrars\":[");
    let first = t.first_offer.to_native() as usize;
    for (i, o) in snap.offers[first..first + shown].iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let reg = &snap.registrars[o.registrar.to_native() as usize];
        out.extend_from_slice(snap.span(&reg.listing_head));
        out.extend_from_slice(req.public_url.as_bytes());
        out.extend_from_slice(snap.span(&reg.listing_path));
        if req.include_prices {
            out.extend_from_slice(snap.span(&o.listing_prices));
        }
        out.push(b'}');
    }
    out.push(b']');
    if shown < sellers {
        out.extend_from_slice(b",\"message\":");
        json::write_str(&listing_message(shown, sellers), out);
    }
    out.push(b'}');
    Ok(())
}

/// `{"price":..,"registrar_key":..,"registrar_name":..}`, with
/// `"original_price":{"currency":..,"price":..,"rate_date":..}` added when the registrar
/// quoted the price in another currency. `price` gets (register, renew) in cents.
fn write_pick(
    snap: &ArchivedSnapshotData,
    o: Option<&ArchivedOffer>,
    price: impl Fn(u32, u32) -> Option<u64>,
    out: &mut Vec<u8>,
) {
    match o {
        None => out.extend_from_slice(b"null"),
        Some(o) => {
            let reg = &snap.registrars[o.registrar.to_native() as usize];
            out.extend_from_slice(b"{\"price\":");
            write_opt_cents(price(o.register.to_native(), o.renew.to_native()), out);
            out.extend_from_slice(b",\"registrar_key\":");
            json::write_str(snap.span_str(&reg.key), out);
            out.extend_from_slice(b",\"registrar_name\":");
            out.extend_from_slice(snap.span(&reg.name_json));
            let currency = snap.span_str(&o.original_currency);
            if !currency.is_empty() {
                out.extend_from_slice(b",\"original_price\":{\"currency\":");
                json::write_str(currency, out);
                out.extend_from_slice(b",\"price\":");
                let original = price(
                    o.original_register.to_native(),
                    o.original_renew.to_native(),
                );
                write_opt_cents(original, out);
                out.extend_from_slice(b",\"rate_date\":\"");
                crate::time::write_date(o.rate_date.to_native() as i64, out);
                out.extend_from_slice(b"\"}");
            }
            out.push(b'}');
        }
    }
}

/// The per-TLD overview of seed 1.7: registrar count, average prices, cheapest
/// registration, lowest renewal and lowest 5-year cost, each with its registrar.
pub fn overview(
    snap: &ArchivedSnapshotData,
    tld: &str,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    out.clear();
    let Some(t) = snap.tld(tld) else {
        return Err(QueryError::UnknownTlds(vec![tld.to_string()]));
    };
    let sellers = t.sellers.to_native() as usize;
    let first = t.first_offer.to_native() as usize;
    let offer = |i: u32| (i != NONE).then(|| &snap.offers[i as usize]);
    out.extend_from_slice(b"{\"tld\":");
    out.extend_from_slice(snap.span(&t.key_json));
    out.extend_from_slice(b",\"registrar_count\":");
    write_int(sellers as u64, out);
    out.extend_from_slice(b",\"avg_prices\":");
    let avg = (
        t.avg_register.to_native(),
        t.avg_renew.to_native(),
        t.avg_transfer.to_native(),
    );
    write_triple(avg.0, avg.1, avg.2, out);
    out.extend_from_slice(b",\"cheapest_register\":");
    write_pick(
        snap,
        (sellers > 0).then(|| &snap.offers[first]),
        |register, _| cents(register),
        out,
    );
    out.extend_from_slice(b",\"lowest_renew\":");
    write_pick(
        snap,
        offer(t.lowest_renew_offer.to_native()),
        |_, renew| cents(renew),
        out,
    );
    out.extend_from_slice(b",\"lowest_5_year\":");
    let five = |register: u32, renew: u32| Some(cents(register)? + 4 * cents(renew)?);
    write_pick(snap, offer(t.lowest_5y_offer.to_native()), five, out);
    out.push(b'}');
    Ok(())
}

/// Price changes of a TLD per registrar, oldest first:
/// `{"tld":..,"history":{key:[{"date":..,"register_price":..,"renew_price":..,"transfer_price":..}]}}`.
pub fn history(
    snap: &ArchivedSnapshotData,
    req: &HistoryRequest<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    out.clear();
    let Some(t) = snap.tld(req.tld) else {
        return Err(QueryError::UnknownTlds(vec![req.tld.to_string()]));
    };
    let first = t.first_change.to_native() as usize;
    let changes = &snap.history[first..first + t.changes.to_native() as usize];
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
                if wanted.last() != Some(&r) {
                    wanted.push(r);
                }
            }
        }
    }
    let in_range = |d: i64| req.from.is_none_or(|f| d >= f) && req.to.is_none_or(|to| d <= to);
    out.extend_from_slice(b"{\"tld\":");
    out.extend_from_slice(snap.span(&t.key_json));
    out.extend_from_slice(b",\"history\":{");
    let mut first_reg = true;
    for r in wanted {
        let lo = changes.partition_point(|c| (c.registrar.to_native() as usize) < r);
        let hi = changes.partition_point(|c| (c.registrar.to_native() as usize) <= r);
        if !first_reg {
            out.push(b',');
        }
        first_reg = false;
        json::write_str(snap.span_str(&snap.registrars[r].key), out);
        out.extend_from_slice(b":[");
        let mut first_change = true;
        for c in changes[lo..hi]
            .iter()
            .filter(|c| in_range(c.date.to_native() as i64))
        {
            if !first_change {
                out.push(b',');
            }
            first_change = false;
            out.extend_from_slice(b"{\"date\":\"");
            time::write_date(c.date.to_native() as i64, out);
            out.extend_from_slice(b"\",\"register_price\":");
            write_opt_cents(cents(c.register.to_native()), out);
            out.extend_from_slice(b",\"renew_price\":");
            write_opt_cents(cents(c.renew.to_native()), out);
            out.extend_from_slice(b",\"transfer_price\":");
            write_opt_cents(cents(c.transfer.to_native()), out);
            out.push(b'}');
        }
        out.push(b']');
    }
    out.push(b'}');
    if !unknown.is_empty() {
        out.extend_from_slice(b",\"not_found\":{\"registrars\":");
        write_str_list(&unknown, out);
        out.push(b'}');
    }
    out.push(b'}');
    Ok(())
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
    fn elapsed_is_readable_at_every_scale() {
        assert_eq!(elapsed(40_000), "0.04ms");
        assert_eq!(elapsed(1_234_567), "1.23ms");
        assert_eq!(elapsed(12_000_000), "12.00ms");
        assert_eq!(elapsed(5_000), "0.01ms");
        assert_eq!(elapsed(4_499), "0.004ms");
        assert_eq!(elapsed(1_000), "0.001ms");
        assert_eq!(elapsed(0), "0.000ms");
    }
}
