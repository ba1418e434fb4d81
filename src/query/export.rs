//! The price grid as CSV: one row per (TLD, registrar) the viewer sees, every price
//! column, in the price source's own layout (`prices.csv`, docs/IMPORT.md).
//!
//! With USD (the default) each row is the row of the price source the snapshot was
//! built from, byte for byte; in another currency every USD amount (the three prices,
//! the regular first-year price, the ICANN fee, the multi-year totals, the coupon and
//! member prices) is converted as the JSON answers convert it and `currency` names
//! it, while the `original_*` columns keep what the registrar quoted. Rows come in
//! the price source's order: TLDs by name, registrars by key within a TLD.
//!
//! The writer works in pieces ([`rows`]) so a server can stream a large grid in
//! chunks: each call writes whole TLDs from a position until a byte budget is passed
//! and returns where to go on.

use super::{Money, Sight};
use crate::json::write_int;
use crate::price::Fx;
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::{ArchivedOffer, ArchivedTld, NONE};
use crate::time;

/// The columns, in order: the price source's (`prices.csv`, [`crate::source`]).
pub const COLUMNS: [&str; 22] = price_source_columns();

const fn price_source_columns() -> [&'static str; 22] {
    use crate::source::{PRICES_COLUMNS, PRICES_ORIGINAL_COLUMNS, PRICES_TERMS_COLUMNS};
    let mut out = [""; 22];
    let mut i = 0;
    while i < 22 {
        out[i] = if i < 7 {
            PRICES_COLUMNS[i]
        } else if i < 12 {
            PRICES_ORIGINAL_COLUMNS[i - 7]
        } else {
            PRICES_TERMS_COLUMNS[i - 12]
        };
        i += 1;
    }
    out
}

/// What an export covers and how it writes prices.
#[derive(Debug, Clone, Copy)]
pub struct ExportRequest<'a> {
    /// Canonical TLD names to export, in any order (`None`: every TLD the viewer's
    /// plan shows). Rows come in name order either way.
    pub tlds: Option<&'a [&'a str]>,
    /// What the viewer sees: the rows of the offers it sees, no others.
    pub sight: Sight,
    /// The currency of the amounts.
    pub money: Money<'a>,
}

/// The header line.
pub fn header(out: &mut Vec<u8>) {
    out.extend_from_slice(COLUMNS.join(",").as_bytes());
    out.push(b'\n');
}

/// The TLD positions (in [`ArchivedSnapshotData::tlds`], name order) an export covers:
/// every TLD whose prices the viewer sees, or those of `req.tlds` (unknown names are
/// the caller's to report).
pub fn covered(snap: &ArchivedSnapshotData, req: &ExportRequest<'_>) -> Vec<u32> {
    let mut positions: Vec<u32> = match req.tlds {
        None => (0..snap.tlds.len() as u32).collect(),
        Some(names) => names
            .iter()
            .filter_map(|n| snap.tld_index(n))
            .map(|i| i as u32)
            .collect(),
    };
    positions.sort_unstable();
    positions.dedup();
    positions.retain(|&i| {
        req.sight
            .price_shown(snap.span_str(&snap.tlds[i as usize].name))
    });
    positions
}

/// How many rows the TLDs at `positions` give the viewer (the credit rule counts them).
pub fn row_count(snap: &ArchivedSnapshotData, sight: Sight, positions: &[u32]) -> usize {
    positions
        .iter()
        .map(|&i| {
            let t = &snap.tlds[i as usize];
            let name = snap.span_str(&t.name);
            let (sellers, rows) = (t.sellers.to_native() as usize, t.rows.to_native() as usize);
            (0..rows)
                .filter(|&row| sight.row_shown(name, row, sellers))
                .count()
        })
        .sum()
}

/// Writes the rows of the TLDs `positions[from..]`, whole TLDs at a time, until `out`
/// holds at least `budget` bytes; returns the index in `positions` to go on from, or
/// `None` when every TLD is written.
pub fn rows(
    snap: &ArchivedSnapshotData,
    req: &ExportRequest<'_>,
    positions: &[u32],
    from: usize,
    budget: usize,
    out: &mut Vec<u8>,
) -> Option<usize> {
    for (k, &i) in positions.iter().enumerate().skip(from) {
        if out.len() >= budget {
            return Some(k);
        }
        tld_rows(snap, req, &snap.tlds[i as usize], out);
    }
    None
}

/// One TLD's rows, registrars by key (the by-registrar index's order).
fn tld_rows(
    snap: &ArchivedSnapshotData,
    req: &ExportRequest<'_>,
    t: &ArchivedTld,
    out: &mut Vec<u8>,
) {
    let name = snap.span_str(&t.name);
    let first = t.first_offer.to_native() as usize;
    let (sellers, rows) = (t.sellers.to_native() as usize, t.rows.to_native() as usize);
    for entry in &snap.by_registrar[first..first + rows] {
        let at = entry.offer.to_native() as usize;
        if !req.sight.row_shown(name, at - first, sellers) {
            continue;
        }
        row(snap, req.money, name, &snap.offers[at], out);
    }
}

/// One row.
fn row(
    snap: &ArchivedSnapshotData,
    money: Money<'_>,
    tld: &str,
    o: &ArchivedOffer,
    out: &mut Vec<u8>,
) {
    let fx = money.fx;
    let key = snap.span_str(&snap.registrars[o.registrar.to_native() as usize].key);
    out.extend_from_slice(tld.as_bytes());
    out.push(b',');
    out.extend_from_slice(key.as_bytes());
    for price in [o.register, o.renew, o.transfer] {
        out.push(b',');
        amount(fx, price.to_native(), out);
    }
    out.push(b',');
    out.extend_from_slice(money.code().as_bytes());
    out.push(b',');
    time::write_iso_millis(o.updated_ms.to_native(), out);
    out.push(b',');
    match snap.original_prices(o) {
        Some((currency, (register, renew, transfer), rate_day)) => {
            out.extend_from_slice(currency.as_bytes());
            for quoted in [register, renew, transfer] {
                out.push(b',');
                amount(Fx::USD, quoted, out);
            }
            out.push(b',');
            time::write_date(rate_day, out);
        }
        None => out.extend_from_slice(b",,,,"),
    }
    let terms = snap.terms(o);
    out.push(b',');
    amount(fx, terms.regular_register, out);
    out.push(b',');
    amount(fx, terms.icann_fee, out);
    out.push(b',');
    if terms.icann_fee != NONE {
        out.extend_from_slice(if terms.icann_fee_included {
            b"true"
        } else {
            b"false"
        });
    }
    out.push(b',');
    let years = o.years.to_native();
    if years != NONE {
        let totals = &snap.register_years[years as usize..years as usize + 9];
        let mut first = true;
        for (n, total) in totals.iter().enumerate() {
            let total = total.to_native();
            if total == NONE {
                continue;
            }
            if !std::mem::take(&mut first) {
                out.push(b' ');
            }
            write_int(n as u64 + 2, out);
            out.push(b':');
            amount(fx, total, out);
        }
    }
    out.push(b',');
    out.extend_from_slice(if terms.promotion() { b"true" } else { b"false" });
    out.push(b',');
    out.extend_from_slice(terms.coupon_code.as_bytes());
    out.push(b',');
    amount(fx, terms.coupon_register, out);
    for member in [terms.member.0, terms.member.1, terms.member.2] {
        out.push(b',');
        amount(fx, member, out);
    }
    out.push(b'\n');
}

/// A stored amount (cents or [`NONE`]) converted by `fx` as a decimal with two decimals
/// (`12.50`), as the price source writes prices; nothing for [`NONE`].
fn amount(fx: Fx, cents: u32, out: &mut Vec<u8>) {
    if let Some(c) = fx.offered(cents) {
        crate::price::write_decimal(c, out);
    }
}
