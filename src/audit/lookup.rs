//! Bulk domain lookup: for up to [`super::LOOKUP_MAX`] full domain names, each one's
//! suffix and the cheapest registrars of that suffix, in the entry shape of the client
//! cheapest endpoint (written by the same function, with the same staleness rule, so
//! the two can never disagree). A name that is not a domain, whose suffix tldsnap does not price, or whose
//! suffix the caller's plan excludes is an entry with an `error`, never a failed request.

use super::names::Names;
use super::portfolio::{InputError, check_name_field};
use super::{LOOKUP_MAX, echo};
use crate::json;
use crate::query::{Freshness, Money, Presentation, Ranking, Shape};
use crate::sight::Sight;
use crate::snapshot::ArchivedSnapshotData;

/// Parameters of [`lookup`].
#[derive(Debug, Clone)]
pub struct LookupRequest<'a> {
    /// The names as given, in request order.
    pub names: &'a [String],
    /// Most cheapest-registration entries per name (1..=100, checked by the caller).
    pub limit: usize,
    /// `meta.tier`; `None` leaves it out.
    pub tier: Option<&'a str>,
    /// Which prices are stale and whether they are ranked.
    pub fresh: Freshness,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    domains: Vec<String>,
}

/// Parses `{"domains": ["name", ...]}`. More than [`LOOKUP_MAX`] names is
/// [`InputError::TooMany`]; an empty list, or anything that is not this object, is
/// [`InputError::Invalid`].
pub fn parse_body(body: &[u8]) -> Result<Vec<String>, InputError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(InputError::Invalid(
            "empty body: send {\"domains\": [\"example.com\", ...]}".into(),
        ));
    }
    let b: Body = serde_json::from_slice(body).map_err(|e| {
        InputError::Invalid(format!(
            "not a lookup: {e} (the body is {{\"domains\": [\"example.com\", ...]}})"
        ))
    })?;
    if b.domains.len() > LOOKUP_MAX {
        return Err(InputError::TooMany { limit: LOOKUP_MAX });
    }
    if b.domains.is_empty() {
        return Err(InputError::Invalid("\"domains\" is empty".into()));
    }
    for (i, d) in b.domains.iter().enumerate() {
        check_name_field(d).map_err(|e| InputError::Invalid(format!("domains[{i}]: {e}")))?;
    }
    Ok(b.domains)
}

/// Writes the lookup answer into `out` (cleared first):
/// `{"results":[{"input","domain","suffix","cheapest_register":[...],"registrar_count"}
/// | {"input",...,"error","detail"?}, ...],"meta":{"total","tier"?}}`. A name given twice
/// (after normalisation) is answered once, at its first position.
pub fn lookup(
    snap: &ArchivedSnapshotData,
    names: &Names,
    req: &LookupRequest<'_>,
    sight: Sight,
    out: &mut Vec<u8>,
) {
    lookup_in(snap, names, req, sight, Money::USD, out)
}

/// [`lookup`] with the prices in another currency, and `meta.currency` saying so: each
/// name's entries are the cheapest answer's in that currency (the stored USD ranking,
/// each price converted), its stored fragments as they are in USD.
pub fn lookup_in(
    snap: &ArchivedSnapshotData,
    names: &Names,
    req: &LookupRequest<'_>,
    sight: Sight,
    money: Money<'_>,
    out: &mut Vec<u8>,
) {
    let how = Presentation {
        ranking: Ranking::Register,
        money,
    };
    out.clear();
    out.extend_from_slice(b"{\"results\":[");
    let mut seen: Vec<String> = Vec::with_capacity(req.names.len());
    let mut written = 0u64;
    for input in req.names {
        let split = names.split(input, |s| snap.has_tld(s));
        if let Ok(s) = &split {
            if seen.contains(&s.domain) {
                continue;
            }
            seen.push(s.domain.clone());
        }
        if written > 0 {
            out.push(b',');
        }
        written += 1;
        out.extend_from_slice(b"{\"input\":");
        json::write_str(&echo(input), out);
        let s = match split {
            Err(e) => {
                out.extend_from_slice(b",\"error\":\"invalid_name\",\"detail\":");
                json::write_str(&e.to_string(), out);
                out.push(b'}');
                continue;
            }
            Ok(s) => s,
        };
        out.extend_from_slice(b",\"domain\":");
        json::write_str(&s.domain, out);
        out.extend_from_slice(b",\"suffix\":");
        json::write_str(s.suffix(), out);
        if !sight.price_shown(s.suffix()) {
            out.extend_from_slice(b",\"error\":\"tld_not_in_plan\"}");
            continue;
        }
        let Some(t) = snap.tld(s.suffix()) else {
            out.extend_from_slice(b",\"error\":\"unknown_tld\"}");
            continue;
        };
        out.extend_from_slice(b",\"cheapest_register\":[");
        // The cheapest answer's entries and tail (which closes the array and writes
        // `registrar_count` and the object's `}`).
        crate::query::cheapest_entries_in(
            snap,
            t,
            req.limit,
            Shape::Client,
            req.fresh,
            sight,
            how,
            out,
        );
    }
    out.extend_from_slice(b"],\"meta\":{\"total\":");
    crate::json::write_int(written, out);
    if let Some(tier) = req.tier {
        out.extend_from_slice(b",\"tier\":");
        json::write_str(tier, out);
    }
    if !money.is_usd() {
        out.push(b',');
        money.write_member(out);
    }
    out.extend_from_slice(b"}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies() {
        assert_eq!(
            parse_body(br#"{"domains":["a.com","b.io"]}"#).unwrap(),
            ["a.com", "b.io"]
        );
        let hundred: Vec<String> = (0..100).map(|i| format!("n{i}.com")).collect();
        let body = |v: &[String]| serde_json::to_vec(&serde_json::json!({ "domains": v })).unwrap();
        assert_eq!(parse_body(&body(&hundred)).unwrap().len(), 100);
        let mut over = hundred.clone();
        over.push("x.com".into());
        assert_eq!(
            parse_body(&body(&over)),
            Err(InputError::TooMany { limit: 100 })
        );
        for bad in [
            &b""[..],
            b"{}",
            br#"{"domains":[]}"#,
            br#"{"domains":"a.com"}"#,
            br#"{"domains":["a.com"],"x":1}"#,
            b"\0",
            format!(r#"{{"domains":["{}"]}}"#, "a".repeat(100_000)).as_bytes(),
        ] {
            assert!(
                matches!(parse_body(bad), Err(InputError::Invalid(_))),
                "{bad:?}"
            );
        }
    }
}
