//! Domain search: for a wanted name (`bestshop`, or the words `best shop`), the domains
//! it could be registered as across the TLDs tldsnap prices, cheapest first-year price
//! first, each with its renewal, 5-year cost, renewal-trap flag and TLD type.
//!
//! A request sorts nothing: the snapshot holds its catalogue in cheapest-registration
//! order (`catalogue_by_cheapest`: first-year price, then name, unsold last) with each
//! TLD's IANA type, and a search walks that order, skipping TLDs the filters or the plan
//! exclude, until it has `limit` candidates, passes `max_price`, or reaches the unsold.
//!
//! Prices say nothing about whether a name is taken: every candidate carries
//! `"availability":"unknown"` until tldsnap has live availability data.

use std::fmt;

use super::names::Names;
use super::{five_year, is_renewal_trap};
use crate::json;
use crate::price::{Fx, write_cents};
use crate::query::{Money, TYPES};
use crate::sight::Sight;
use crate::snapshot::ArchivedSnapshotData;
use crate::snapshot::schema::{ArchivedOffer, NONE};
use crate::tld;

/// Parameters of [`search`].
#[derive(Debug, Clone)]
pub struct SearchRequest<'a> {
    /// The wanted name: one label, words (joined), or a full domain name.
    pub q: &'a str,
    /// Only candidates whose first-year price is at most this many cents.
    pub max_price: Option<u32>,
    /// Only these IANA types (each one of [`TYPES`]); empty = every type.
    pub types: &'a [&'a str],
    /// Most candidates (1..=100, checked by the caller).
    pub limit: usize,
    /// `meta.tier`; `None` leaves it out.
    pub tier: Option<&'a str>,
    /// Which prices are stale: a candidate's price is its TLD's cheapest ranked one.
    pub fresh: crate::query::Freshness,
}

/// Why a query cannot be searched (HTTP 400 `invalid_parameter`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError(pub String);

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for QueryError {}

/// The label to search for and the suffix the query named, if any.
fn parse_query(
    snap: &ArchivedSnapshotData,
    names: &Names,
    q: &str,
) -> Result<(String, Option<String>), QueryError> {
    // Words are joined: "best shop" searches "bestshop".
    let joined: String = q.split_whitespace().collect();
    if joined.is_empty() {
        return Err(QueryError(
            "q is empty: give a name such as bestshop".into(),
        ));
    }
    if joined.contains('.') {
        let s = names
            .split(&joined, |s| snap.has_tld(s))
            .map_err(|e| QueryError(format!("q is not a domain name: {e}")))?;
        return Ok((s.label().to_string(), Some(s.suffix().to_string())));
    }
    let label = tld::normalize(&joined)
        .map_err(|e| QueryError(format!("q is not a domain name label: {e}")))?;
    Ok((label.into_owned(), None))
}

/// The IANA type of a TLD (its catalogue entry's), empty when unknown.
fn kind_of<'s>(snap: &'s ArchivedSnapshotData, name: &str) -> &'s str {
    snap.catalogue_entry(name)
        .map_or("", |e| snap.span_str(&e.kind))
}

/// How a candidate is written: the request's staleness rule and currency.
#[derive(Clone, Copy)]
struct Shown {
    fresh: crate::query::Freshness,
    fx: Fx,
}

#[allow(clippy::too_many_arguments)]
fn write_candidate(
    snap: &ArchivedSnapshotData,
    label: &str,
    tld_pos: usize,
    o: &ArchivedOffer,
    kind: &str,
    requested: bool,
    shown: Shown,
    out: &mut Vec<u8>,
) {
    let t = &snap.tlds[tld_pos];
    let (register, renew) = (o.register.to_native(), o.renew.to_native());
    // The prices in the answer's currency; the 5-year cost is summed from them, as the
    // API's totals are, and the renewal trap is the USD prices' (a flag, not a price).
    let (shown_register, shown_renew) = (
        shown.fx.amount(u64::from(register)),
        shown.fx.amount(u64::from(renew)),
    );
    let r = &snap.registrars[o.registrar.to_native() as usize];
    out.extend_from_slice(b"{\"domain\":\"");
    out.extend_from_slice(label.as_bytes());
    out.push(b'.');
    out.extend_from_slice(snap.span(&t.name));
    out.extend_from_slice(b"\",\"tld\":");
    out.extend_from_slice(snap.span(&t.key_json));
    out.extend_from_slice(b",\"type\":");
    if kind.is_empty() {
        out.extend_from_slice(b"null");
    } else {
        json::write_str(kind, out);
    }
    out.extend_from_slice(b",\"registrar_key\":");
    json::write_str(snap.span_str(&r.key), out);
    out.extend_from_slice(b",\"registrar_name\":");
    out.extend_from_slice(snap.span(&r.name_json));
    out.extend_from_slice(b",\"register_price\":");
    write_cents(shown_register, out);
    out.extend_from_slice(b",\"renew_price\":");
    write_cents(shown_renew, out);
    out.extend_from_slice(b",\"total_cost_5_year\":");
    if shown.fx.is_usd() {
        write_cents(five_year(register, renew), out);
    } else {
        write_cents(shown_register + 4 * shown_renew, out);
    }
    crate::snapshot::render::terms(snap.terms(o), shown.fx, out);
    out.extend_from_slice(b",\"renewal_trap\":");
    out.extend_from_slice(if is_renewal_trap(register, renew) {
        b"true"
    } else {
        b"false"
    });
    let ms = o.updated_ms.to_native();
    out.extend_from_slice(b",\"last_updated\":\"");
    crate::time::write_iso_millis(ms, out);
    out.push(b'"');
    if shown.fresh.is_stale(ms) {
        out.extend_from_slice(b",\"stale\":true");
    }
    if requested {
        out.extend_from_slice(b",\"requested\":true");
    }
    out.extend_from_slice(b",\"availability\":\"unknown\"}");
}

/// Writes the search answer into `out` (cleared first):
/// `{"query","name","results":[candidate,...],"meta":{"total","availability","tier"?,
/// "requested_suffix"?}}`. A suffix named in `q` comes first (marked `"requested":true`,
/// filters not applied to it: it was asked for by name); when tldsnap cannot price it,
/// `meta.requested_suffix` says why. The label is canonical (`xn--` for Unicode), so the
/// domain strings need no escaping.
pub fn search(
    snap: &ArchivedSnapshotData,
    names: &Names,
    req: &SearchRequest<'_>,
    sight: Sight,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    search_in(snap, names, req, sight, Money::USD, out)
}

/// [`search`] with the candidates' prices in another currency, and `meta.currency`
/// saying so. The candidates and their order are the USD answer's (the walk of the
/// stored order, `max_price` in US dollars): a conversion changes only the prices shown.
pub fn search_in(
    snap: &ArchivedSnapshotData,
    names: &Names,
    req: &SearchRequest<'_>,
    sight: Sight,
    money: Money<'_>,
    out: &mut Vec<u8>,
) -> Result<(), QueryError> {
    let shown = Shown {
        fresh: req.fresh,
        fx: money.fx,
    };
    let (label, suffix) = parse_query(snap, names, req.q)?;
    out.clear();
    out.extend_from_slice(b"{\"query\":");
    json::write_str(req.q, out);
    out.extend_from_slice(b",\"name\":");
    json::write_str(&label, out);
    out.extend_from_slice(b",\"results\":[");
    let mut written = 0usize;
    let mut requested_pos = None;
    let mut requested_error = None;
    if let Some(s) = &suffix {
        match snap.tld_index(s) {
            _ if !sight.price_shown(s) => requested_error = Some("tld_not_in_plan"),
            None => requested_error = Some("unknown_tld"),
            Some(i) => match crate::query::first_ranked(snap, &snap.tlds[i], req.fresh, sight) {
                // No seller, or none with a price recent enough.
                None => requested_error = Some("no_seller"),
                Some(o) => {
                    write_candidate(snap, &label, i, o, kind_of(snap, s), true, shown, out);
                    written += 1;
                    requested_pos = Some(i as u32);
                }
            },
        }
    }
    for pos in snap.catalogue_by_cheapest.iter() {
        if written >= req.limit {
            break;
        }
        let e = &snap.catalogue[pos.to_native() as usize];
        let t_pos = e.tld.to_native();
        if t_pos == NONE {
            break; // names nobody prices come last
        }
        let t = &snap.tlds[t_pos as usize];
        if t.sellers.to_native() == 0 {
            break; // and so do TLDs nobody sells
        }
        let cheapest = &snap.offers[t.first_offer.to_native() as usize];
        if req
            .max_price
            .is_some_and(|m| cheapest.register.to_native() > m)
        {
            break; // the order is by first-year price: nothing after passes either
        }
        // The cheapest price may be stale: then the TLD's cheapest fresh one, if any.
        let Some(o) = crate::query::first_ranked(snap, t, req.fresh, sight) else {
            continue;
        };
        if req.max_price.is_some_and(|m| o.register.to_native() > m) {
            continue;
        }
        let kind = snap.span_str(&e.kind);
        if Some(t_pos) == requested_pos
            || (!req.types.is_empty() && !req.types.contains(&kind))
            || !sight.price_shown(snap.span_str(&t.name))
        {
            continue;
        }
        if written > 0 {
            out.push(b',');
        }
        write_candidate(snap, &label, t_pos as usize, o, kind, false, shown, out);
        written += 1;
    }
    out.extend_from_slice(b"],\"meta\":{\"total\":");
    crate::json::write_int(written as u64, out);
    out.extend_from_slice(
        b",\"availability\":\"unknown: prices say nothing about whether a name is taken\"",
    );
    if let Some(tier) = req.tier {
        out.extend_from_slice(b",\"tier\":");
        json::write_str(tier, out);
    }
    if let (Some(s), Some(e)) = (&suffix, requested_error) {
        out.extend_from_slice(b",\"requested_suffix\":{\"suffix\":");
        json::write_str(s, out);
        out.extend_from_slice(b",\"error\":\"");
        out.extend_from_slice(e.as_bytes());
        out.extend_from_slice(b"\"}");
    }
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.extend_from_slice(b"}}");
    Ok(())
}

/// Parses a `types` list (`generic,country-code`): each one of [`TYPES`]; `Err` names
/// the first other word.
pub fn parse_types(list: &str) -> Result<Vec<&'static str>, String> {
    let mut out: Vec<&'static str> = Vec::new();
    for w in list.split(',') {
        let w = w.trim();
        match TYPES.iter().find(|t| **t == w) {
            Some(t) if !out.contains(t) => out.push(t),
            Some(_) => {}
            None => {
                return Err(format!(
                    "unknown TLD type {w:?} (one of: {})",
                    TYPES.join(", ")
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_lists() {
        assert_eq!(
            parse_types("generic, country-code,generic"),
            Ok(vec!["generic", "country-code"])
        );
        assert!(parse_types("gtld").unwrap_err().contains("one of: generic"));
        assert!(parse_types("generic,,").is_err());
    }
}
